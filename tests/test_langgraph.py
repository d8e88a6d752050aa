"""The LangGraph integration end to end: real LangGraph graphs, langchain-core's fake chat model (no LLM),
graphmem.client against the real API over the real Neo4j (issue 17)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from graphmem.client import AsyncGraphMemClient, GraphMemClient
from graphmem.integrations.langgraph import GraphMemMemory, MemoryState
from graphmem.settings import PROJECT_ROOT
from graphmem.store import UserRef
from tests.readme import localised, readme_block

pytestmark = pytest.mark.neo4j

CATALOG_YAML = (PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes()


@pytest.fixture(scope="module")
def catalog_loaded(api, api_tenants) -> None:
    with api.client(api_tenants.key_a) as raw:
        assert (
            raw.put("/v1/catalog", content=CATALOG_YAML, headers={"content-type": "application/yaml"}).status_code
            == 200
        )


class PromptRecorder(BaseCallbackHandler):
    """Records what the chat model was called with (langchain-core's own callback machinery)."""

    def __init__(self) -> None:
        self.prompts: list[list[BaseMessage]] = []

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kw: Any) -> None:
        self.prompts.extend(messages)


def tutor_graph(memory: GraphMemMemory, llm: GenericFakeChatModel, recorder: PromptRecorder, *, use_async: bool):
    def model(state: MemoryState) -> dict:
        return {"messages": [llm.invoke(memory.prompt(state), config={"callbacks": [recorder]})]}

    async def amodel(state: MemoryState) -> dict:
        return {"messages": [await llm.ainvoke(memory.prompt(state), config={"callbacks": [recorder]})]}

    graph = StateGraph(MemoryState)
    graph.add_node("recall", memory.recall)
    graph.add_node("model", amodel if use_async else model)
    graph.add_node("remember", memory.remember)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "model")
    graph.add_edge("model", "remember")
    graph.add_edge("remember", END)
    return graph.compile(checkpointer=InMemorySaver())


def stored(store, tenant: str, user_id: str) -> list[tuple[str, str, str]]:
    return sorted((t["turn_id"], t["role"], t["text"]) for t in store.turns(UserRef(tenant, user_id)))


def test_readme_example_runs(api, api_tenants, catalog_loaded, store, user_id, capsys):
    code = localised(readme_block("tests/test_langgraph.py"), api.base_url, api_tenants.key_a, user_id)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    out = namespace["out"]
    printed = capsys.readouterr().out
    assert printed.startswith('<user_knowledge_context scope="learning">')
    assert "Django部署" in out["memory_block"] and "Python基础" in out["memory_block"]
    assert [m.type for m in out["messages"]] == ["human", "ai"]
    turns = stored(store, api_tenants.tenant_a, user_id)
    assert {(r, t) for _, r, t in turns} == {
        ("user", "我已经学过Python基础了，我想学怎么部署Django"),
        ("assistant", "Deploying Django needs Linux and Nginx first."),
    }
    assert {i for i, _, _ in turns} == {m.id for m in out["messages"]}  # message ids are the turn ids


def test_block_reaches_the_model_and_turns_are_stored_once(api, api_tenants, catalog_loaded, store, user_id):
    recorder = PromptRecorder()
    llm = GenericFakeChatModel(
        messages=iter(
            [AIMessage("Start with views and models."), AIMessage("Use Nginx and gunicorn on a Linux server.")]
        )
    )
    with GraphMemClient(api.base_url, api_key=api_tenants.key_a) as client:
        app = tutor_graph(GraphMemMemory(client), llm, recorder, use_async=False)
        config = {"configurable": {"user_id": user_id, "thread_id": "week2"}}
        app.invoke({"messages": [HumanMessage("我已经学过Python基础了，现在想学Django框架。")]}, config)
        second = app.invoke({"messages": [HumanMessage("How do I deploy Django?")]}, config)

        # The model saw the block first, as a system message, then the whole conversation.
        first_prompt, second_prompt = recorder.prompts
        assert isinstance(first_prompt[0], SystemMessage) and "Django框架" in first_prompt[0].content
        assert isinstance(second_prompt[0], SystemMessage)
        assert "current_topic: [Django部署]" in second_prompt[0].content  # focus = the user's latest message
        assert [m.type for m in second_prompt[1:]] == ["human", "ai", "human"]
        assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]  # no block in the history

        # Four turns, each stored once, under the thread's session, with the messages' ids.
        turns = stored(store, api_tenants.tenant_a, user_id)
        assert sorted(i for i, _, _ in turns) == sorted(m.id for m in second["messages"])
        assert sorted(r for _, r, _ in turns) == ["assistant", "assistant", "user", "user"]
        assert {t["session_id"] for t in store.turns(UserRef(api_tenants.tenant_a, user_id))} == {"week2"}
        assert "Django框架" in client.context(user_id).core_topics


def test_async_graph(api, api_tenants, catalog_loaded, store, user_id):
    recorder = PromptRecorder()
    llm = GenericFakeChatModel(messages=iter([AIMessage("Learn SQL first.")]))

    async def main() -> dict:
        async with AsyncGraphMemClient(api.base_url, api_key=api_tenants.key_a) as aclient:
            app = tutor_graph(GraphMemMemory(aclient=aclient), llm, recorder, use_async=True)
            return await app.ainvoke(
                {"messages": [HumanMessage("我对Django框架很感兴趣")]},
                {"configurable": {"user_id": user_id, "thread_id": "t1"}},
            )

    out = asyncio.run(main())
    assert "Django框架" in out["memory_block"] and "Django框架" in recorder.prompts[0][0].content
    assert len(stored(store, api_tenants.tenant_a, user_id)) == 2


def test_create_react_agent_hooks(api, api_tenants, catalog_loaded, store, user_id):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of langchain.agents
        from langgraph.prebuilt import create_react_agent

    recorder = PromptRecorder()
    llm = GenericFakeChatModel(messages=iter([AIMessage("Try Flask first.")]), callbacks=[recorder])
    with GraphMemClient(api.base_url, api_key=api_tenants.key_a) as client:
        memory = GraphMemMemory(client)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agent = create_react_agent(
                llm, tools=[], pre_model_hook=memory.pre_model_hook, post_model_hook=memory.post_model_hook
            )
        out = agent.invoke(
            {"messages": [HumanMessage("I want to learn Django")]},
            {"configurable": {"user_id": user_id, "thread_id": "r1"}},
        )
    # An English-writing learner sees the catalog's English name (names follow the user's language).
    block = recorder.prompts[0][0]
    assert isinstance(block, SystemMessage) and "[Django]" in block.content and "Django框架" not in block.content
    assert [m.type for m in out["messages"]] == ["human", "ai"]
    assert sorted(r for _, r, _ in stored(store, api_tenants.tenant_a, user_id)) == ["assistant", "user"]


def test_missing_user_is_a_clear_error(api, api_tenants):
    with GraphMemClient(api.base_url, api_key=api_tenants.key_a) as client:
        app = tutor_graph(
            GraphMemMemory(client), GenericFakeChatModel(messages=iter([])), PromptRecorder(), use_async=False
        )
        with pytest.raises(ValueError, match="configurable"):
            app.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "x"}})


def test_fail_open_answers_without_a_block(user_id):
    # graphmem unreachable (a closed port): with fail_open the model still answers, without a block.
    from tests.http_server import free_port

    recorder = PromptRecorder()
    llm = GenericFakeChatModel(messages=iter([AIMessage("ok")]))
    with GraphMemClient(f"http://127.0.0.1:{free_port()}", max_retries=0) as client:
        app = tutor_graph(GraphMemMemory(client, fail_open=True), llm, recorder, use_async=False)
        out = app.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"user_id": user_id, "thread_id": "x"}})
    assert out["memory_block"] == "" and [m.type for m in recorder.prompts[0]] == ["human"]


def test_recall_stores_and_reads_in_one_call(api, api_tenants, catalog_loaded, user_id, monkeypatch):
    """With turns to store, the recall step stores them and gets the block in one request (the ingest returns
    it); a separate context request is made only when there is nothing new to store."""
    with GraphMemClient(api.base_url, api_key=api_tenants.key_a) as client:
        memory = GraphMemMemory(client)
        config = {"configurable": {"user_id": user_id, "thread_id": "one"}}
        calls: list[str] = []
        real_context = client.context

        def counted_context(*args: Any, **kw: Any) -> Any:
            calls.append("context")
            return real_context(*args, **kw)

        monkeypatch.setattr(client, "context", counted_context)
        block = memory.recall.invoke({"messages": [HumanMessage("I want to learn Django and Kubernetes.")]}, config)
        assert "Django" in block["memory_block"] and calls == []  # stored and read in the ingest call
        again = memory.recall.invoke({"messages": [HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")]}, config)
        assert calls == ["context"] and "Django" in again["memory_block"]  # nothing new from the user: a plain read
