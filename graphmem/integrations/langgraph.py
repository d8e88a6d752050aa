"""LangGraph memory for graphmem (optional extra: `pip install graphmem[langgraph]`).

`GraphMemMemory` gives a graph two steps around the model call, sync and async:

- `recall` (before the model): stores the user's new turns, then fetches the block for the thread's
  user with the latest user message as focus, and puts it in the state's `memory_block`;
- `remember` (after the model): sends the turns the model (and tools) added since that user message.

The user is `config["configurable"]["user_id"]` (the key is configurable), the session is the
thread id. Turns are sent with the LangGraph message ids as turn ids, so replays, retries and
re-sends store nothing twice. For `create_react_agent`, `pre_model_hook` / `post_model_hook` are the
same two steps in that API's shape (the block goes in front of `llm_input_messages`, the stored
history is left as it is).

    memory = GraphMemMemory(GraphMemClient("http://127.0.0.1:8000", api_key="..."))
    graph = StateGraph(MemoryState)
    graph.add_node("recall", memory.recall)
    graph.add_node("model", lambda state: {"messages": [llm.invoke(memory.prompt(state))]})
    graph.add_node("remember", memory.remember)
    ...
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import MessagesState

from graphmem.client import ApiError, AsyncGraphMemClient, GraphMemClient
from graphmem.models import TurnIn

__all__ = ["GraphMemMemory", "MemoryState"]

log = logging.getLogger("graphmem.langgraph")

# LangChain message types → graphmem turn roles. Other types (e.g. "remove") are not turns.
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


class MemoryState(MessagesState):
    """Messages plus the block `recall` fetched for this step."""

    memory_block: str


def _text(message: BaseMessage) -> str:
    # `.text` is the message's plain text whatever the content shape (a string or a list of blocks).
    return str(message.text).strip()


def _turns(messages: Sequence[BaseMessage]) -> list[TurnIn]:
    return [TurnIn(turn_id=m.id, role=ROLES[m.type], text=_text(m)) for m in messages if m.type in ROLES and _text(m)]


def _last_human(messages: Sequence[BaseMessage]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return i
    return None


def _since_last_model_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The turns after the model's last answer: what the user said since."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], AIMessage):
            return list(messages[i + 1 :])
    return list(messages)


class GraphMemMemory:
    """graphmem as a LangGraph memory: give it a sync client, an async client, or both."""

    def __init__(
        self,
        client: GraphMemClient | None = None,
        aclient: AsyncGraphMemClient | None = None,
        *,
        user_key: str = "user_id",
        scope: str = "learning",
        max_tokens: int | None = None,
        format: str = "xml",
        fail_open: bool = False,
    ) -> None:
        if client is None and aclient is None:
            raise ValueError("GraphMemMemory needs a GraphMemClient, an AsyncGraphMemClient, or both")
        self.client = client
        self.aclient = aclient
        self.user_key = user_key
        self.scope = scope
        self.max_tokens = max_tokens
        self.format = format
        # fail_open: a graphmem outage leaves the model without a block instead of failing the step.
        self.fail_open = fail_open
        self.recall = RunnableLambda(self._recall, afunc=self._arecall, name="graphmem_recall")
        self.remember = RunnableLambda(self._remember, afunc=self._aremember, name="graphmem_remember")
        self.pre_model_hook = RunnableLambda(self._pre_hook, afunc=self._apre_hook, name="graphmem_pre_model_hook")
        self.post_model_hook = RunnableLambda(self._remember, afunc=self._aremember, name="graphmem_post_model_hook")

    # -- what the steps need from the config and the messages ------------------------------------------

    def ids(self, config: RunnableConfig | None) -> tuple[str, str]:
        configurable = (config or {}).get("configurable", {})
        user_id = configurable.get(self.user_key)
        if not user_id:
            raise ValueError(
                f"graphmem needs the user: invoke the graph with "
                f"config={{'configurable': {{'{self.user_key}': ..., 'thread_id': ...}}}}"
            )
        return str(user_id), str(configurable.get("thread_id") or "default")

    @staticmethod
    def prompt(state: dict[str, Any]) -> list[AnyMessage]:
        """The model's input: the block as a system message in front of the conversation."""
        block = state.get("memory_block") or ""
        return ([SystemMessage(block)] if block else []) + list(state["messages"])

    def _context_kwargs(self, messages: Sequence[BaseMessage]) -> dict[str, Any]:
        last = _last_human(messages)
        focus = _text(messages[last]) if last is not None else None
        return {
            "focus": focus[:20_000] if focus else None,
            "scope": self.scope,
            "max_tokens": self.max_tokens,
            "format": self.format,
        }

    def _sync(self) -> GraphMemClient:
        if self.client is None:
            raise RuntimeError("this graph runs synchronously: give GraphMemMemory a GraphMemClient")
        return self.client

    def _async(self) -> AsyncGraphMemClient:
        if self.aclient is None:
            raise RuntimeError("this graph runs asynchronously: give GraphMemMemory an AsyncGraphMemClient")
        return self.aclient

    def _failed(self, exc: ApiError, what: str) -> None:
        if not self.fail_open:
            raise exc
        log.warning("graphmem %s failed (%s); going on without it", what, exc)

    # -- sync -----------------------------------------------------------------------------------------

    def _block(self, messages: Sequence[BaseMessage], config: RunnableConfig | None) -> str:
        user_id, session_id = self.ids(config)
        client = self._sync()
        try:
            # Store first, then read: the block reflects the message being answered (read-your-writes). With
            # turns to store, one call does both (the ingest returns the block a read right after would).
            options = self._context_kwargs(messages)
            if pending := _turns(_since_last_model_turn(messages)):
                stored = client.ingest(user_id, session_id, pending, context=options)
                if stored.context is not None:
                    return stored.context.block
            return client.context(user_id, **options).block
        except ApiError as exc:
            self._failed(exc, "recall")
            return ""

    def _recall(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return {"memory_block": self._block(state["messages"], config)}

    def _pre_hook(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        block = self._block(state["messages"], config)
        return {"llm_input_messages": self.prompt({"memory_block": block, "messages": state["messages"]})}

    def _remember(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        user_id, session_id = self.ids(config)
        messages = state["messages"]
        last = _last_human(messages)
        if new := _turns(messages[last + 1 :] if last is not None else messages):
            try:
                self._sync().ingest(user_id, session_id, new)
            except ApiError as exc:
                self._failed(exc, "remember")
        return {}

    # -- async ----------------------------------------------------------------------------------------

    async def _ablock(self, messages: Sequence[BaseMessage], config: RunnableConfig | None) -> str:
        user_id, session_id = self.ids(config)
        client = self._async()
        try:
            options = self._context_kwargs(messages)
            if pending := _turns(_since_last_model_turn(messages)):
                stored = await client.ingest(user_id, session_id, pending, context=options)
                if stored.context is not None:
                    return stored.context.block
            return (await client.context(user_id, **options)).block
        except ApiError as exc:
            self._failed(exc, "recall")
            return ""

    async def _arecall(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return {"memory_block": await self._ablock(state["messages"], config)}

    async def _apre_hook(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        block = await self._ablock(state["messages"], config)
        return {"llm_input_messages": self.prompt({"memory_block": block, "messages": state["messages"]})}

    async def _aremember(self, state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        user_id, session_id = self.ids(config)
        messages = state["messages"]
        last = _last_human(messages)
        if new := _turns(messages[last + 1 :] if last is not None else messages):
            try:
                await self._async().ingest(user_id, session_id, new)
            except ApiError as exc:
                self._failed(exc, "remember")
        return {}
