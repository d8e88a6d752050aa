"""`graphmem mcp`: graphmem as an MCP server (the official `mcp` SDK's MCPServer, FastMCP's name in mcp 2).

Transports: stdio (default; what desktop MCP hosts spawn) and streamable HTTP (`--http`, path /mcp).

Backends — the default is in-process:
- in-process (default): the server holds its own `GraphMemory`. One command and nothing else to run,
  like every other `graphmem` command; the costs are the library's: it loads the spaCy pipelines
  (~300 MB, some seconds, done in the background after start-up so the host's handshake is not kept
  waiting) and connects to Neo4j itself (starting the project's local Neo4j when NEO4J_URI is unset).
- `--api URL`: a thin layer over `graphmem.client` talking to a running API. Use it when the API
  already runs (one copy of the pipelines and caches, the API's keys decide the tenant) or when the
  MCP host's machine cannot reach Neo4j.

Tenancy: over stdio the tenant is `--tenant` (GRAPHMEM_DEFAULT_TENANT) in-process, or the tenant of
`--api-key` (GRAPHMEM_API_KEY) with `--api`. Over HTTP every request carries `Authorization: Bearer
<key>`: in-process the key is mapped to its tenant by the REST API's own key ring (graphmem/api/auth.py,
GRAPHMEM_API_KEYS), with `--api` it is forwarded and the API decides. Nothing falls back to a default key.

Inputs are validated with the HTTP API's models (graphmem/api/schemas.py, graphmem/models.py) inside the tools,
so a bad argument comes back as a tool error carrying the API's machine code:
`{"error": {"code": "...", "message": "..."}}` as text and as structured content.
"""

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Protocol

import httpx
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from neo4j import exceptions as neo4j_errors
from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema

from graphmem.api.auth import AuthError, KeyRing, load_keyring
from graphmem.api.schemas import ContextRequest, IngestRequest
from graphmem.client import ApiError, GraphMemClient, TokenBook, invalid_input
from graphmem.errors import GraphmemError, StoreUnavailable
from graphmem.settings import Settings

if TYPE_CHECKING:
    from graphmem.service import GraphMemory

log = logging.getLogger("graphmem.mcp")

INSTRUCTIONS = """\
graphmem is a long-term memory of what each user knows, wants to learn, struggles with and dislikes,
kept as a graph of concepts (topics, courses, tools, skills, products) built from the conversation.
Typical loop, for every user message: 1) call `ingest_turns` with the new turns (the user's message and
your previous answer), 2) call `get_context_block` with the user's question as `focus` and put the
returned block into your system prompt before answering. Use the same stable `user_id` for a person
across conversations, and one `session_id` per conversation. `explain_concept` says why a concept is in
the block; `forget_concept` removes one concept when the user asks you to forget it. Errors come back as
{"error": {"code": "...", "message": "..."}}."""

USER_ID_DESCRIPTION = (
    "Stable id of the person the memory is about (the same id in every conversation, "
    "e.g. your app's user id). 1-128 characters."
)


class UserArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # The REST API's path parameter has the same bounds (graphmem/api/app.py UserId).
    user_id: str = Field(min_length=1, max_length=128, description=USER_ID_DESCRIPTION)


class IngestArgs(UserArgs, IngestRequest):
    """POST /v1/users/{user_id}/turns: the path id plus the API's own body model."""


class ContextArgs(UserArgs, ContextRequest):
    """GET /v1/users/{user_id}/context: the path id plus the API's own request model."""


class ConceptArgs(UserArgs):
    # The REST API's `concept` query parameter has the same bounds.
    concept: str = Field(
        min_length=1, max_length=200, description="The concept as the user or the block names it (name, alias or key)."
    )


def _inline_refs(schema: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline_refs(defs[ref.rsplit("/", 1)[1]], defs)
        return {k: _inline_refs(v, defs) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_inline_refs(v, defs) for v in schema]
    return schema


def arg_schema(model: type[BaseModel], name: str, description: str | None = None) -> WithJsonSchema:
    """The JSON schema of one field of an API model, shown to the MCP host as the tool's argument.

    The SDK only checks the argument's plain type; the API model validates it inside the tool, so a
    bad value gets the API's machine code instead of the SDK's generic message."""
    full = model.model_json_schema()
    schema = _inline_refs(full["properties"][name], full.get("$defs", {}))
    if description:
        schema = {**schema, "description": description}
    return WithJsonSchema(schema)


UserIdArg = Annotated[str, arg_schema(UserArgs, "user_id")]
SessionIdArg = Annotated[
    str, arg_schema(IngestArgs, "session_id", "Id of the current conversation (one per chat thread), 1-128 characters.")
]
TurnsArg = Annotated[
    list[dict[str, Any]],
    arg_schema(
        IngestArgs,
        "turns",
        "The new turns of the conversation, oldest first: each {text, role ('user', 'assistant', 'system' or "
        "'tool'; default 'user'), turn_id (optional; give a stable id such as the message id so that sending a "
        "turn twice stores it once), ts (optional ISO 8601 time)}. 1-512 turns.",
    ),
]
FocusArg = Annotated[
    str | None,
    arg_schema(
        ContextArgs,
        "focus",
        "The user's current question or topic; the block then names it as the current "
        "topic and lists what the user still lacks for it. Optional.",
    ),
]
ScopeArg = Annotated[
    str | None,
    arg_schema(
        ContextArgs,
        "scope",
        "'learning' (a tutor: topics, related concepts, knowledge gaps), 'recommendation' "
        "(interests and dislikes) or 'general'. Default: the server's setting ('learning').",
    ),
]
MaxTokensArg = Annotated[
    int | None,
    arg_schema(
        ContextArgs,
        "max_tokens",
        "Token budget of the block (1-100000; default 400). Lowest-weight items are "
        "dropped first and the block says so.",
    ),
]
FormatArg = Annotated[
    str | None,
    arg_schema(ContextArgs, "format", "'xml', 'markdown' or 'json'. Default: the server's setting ('xml')."),
]
ConceptArg = Annotated[str, arg_schema(ConceptArgs, "concept")]
ReturnContextArg = Annotated[
    bool,
    WithJsonSchema(
        {
            "type": "boolean",
            "default": False,
            "description": "Also return the user's context block (server defaults) as get_context_block would "
            "right after these turns: the agent loop in one call. Optional.",
        }
    ),
]


# -- backends ------------------------------------------------------------------------------------------


class Backend(Protocol):
    """What the tools call. `who` is the caller as the backend knows it (a tenant, or an API key)."""

    def caller(self, headers: Mapping[str, str] | None) -> Any: ...
    def ingest(self, who: Any, args: IngestArgs) -> dict[str, Any]: ...
    def context(self, who: Any, args: ContextArgs) -> dict[str, Any]: ...
    def explain(self, who: Any, args: ConceptArgs) -> dict[str, Any]: ...
    def forget(self, who: Any, args: ConceptArgs) -> dict[str, Any]: ...
    def compact(self, who: Any, args: UserArgs) -> dict[str, Any]: ...
    def graph(self, who: Any, args: UserArgs) -> dict[str, Any]: ...


def _ingest_summary(result: Any) -> dict[str, Any]:
    # What a model needs back: what was stored, and what was understood (names only, per turn).
    return {
        "user_id": result.user_id,
        "session_id": result.session_id,
        "accepted": result.accepted,
        "duplicates": result.duplicates,
        "concepts": {
            e.turn_id: sorted({c.name for c in e.extraction.concepts}) for e in result.edits if e.extraction is not None
        },
        # Asked with return_context: the block, as get_context_block would return it right after.
        **({"context": result.context.model_dump()} if result.context is not None else {}),
    }


class LocalBackend:
    """graphmem in this process (the default)."""

    def __init__(
        self,
        settings: Settings,
        tenant: str,
        *,
        http: bool,
        memory: "GraphMemory | None" = None,
        ready_timeout_s: float = 180.0,
    ) -> None:
        self.settings = settings
        self.tenant = tenant
        self.http = http
        # Over HTTP, the REST API's keys; with none configured (auth off) every caller is `tenant`.
        self.keyring = KeyRing(load_keyring(settings).keys if http else {}, tenant)
        # Built by the start-up thread: importing the library (spaCy) alone takes seconds.
        self.memory = memory
        self.ready = threading.Event()
        self.ready_timeout_s = ready_timeout_s
        self._stopping = threading.Event()

    def start_in_background(self) -> None:
        # Loading the pipelines takes seconds: the MCP handshake answers at once, tool calls wait for this.
        def loop() -> None:
            from graphmem.neo4j_server import LocalNeo4j, Neo4jServerError

            try:
                LocalNeo4j(self.settings).start()
            except Neo4jServerError as exc:
                log.warning("could not start the local Neo4j (%s); trying to connect anyway", exc)
            while not self._stopping.is_set():
                try:
                    if self.memory is None:
                        from graphmem.service import GraphMemory

                        self.memory = GraphMemory(self.settings)
                    self.memory.start()
                    self.ready.set()
                    log.info("graphmem ready: schema applied, pipelines loaded")
                    return
                except Exception as exc:
                    log.warning("start-up not complete yet (%s); retrying in 2 s", exc)
                    self._stopping.wait(2)

        threading.Thread(target=loop, name="graphmem-mcp-start", daemon=True).start()

    def close(self) -> None:
        self._stopping.set()
        if self.memory is not None:
            self.memory.close()

    def _mem(self) -> "GraphMemory":
        if not self.ready.wait(self.ready_timeout_s) or self.memory is None:
            raise StoreUnavailable(
                "graphmem is still starting (connecting to Neo4j, loading the spaCy pipelines); retry shortly"
            )
        return self.memory

    def caller(self, headers: Mapping[str, str] | None) -> str:
        if not self.http:
            return self.tenant
        return self.keyring.tenant_for(headers.get("authorization") if headers is not None else None)

    def ingest(self, who: str, args: IngestArgs) -> dict[str, Any]:
        wanted = args.context.options() if args.context is not None else None
        return _ingest_summary(self._mem().ingest(who, args.user_id, args.session_id, args.turns, context=wanted))

    def context(self, who: str, args: ContextArgs) -> dict[str, Any]:
        return (
            self._mem()
            .context(
                who,
                args.user_id,
                focus=args.focus,
                scope=args.scope,
                max_tokens=args.max_tokens,
                fmt=args.format,
                evidence=args.evidence,
                prompt=args.prompt,
                tag=args.tag,
            )
            .to_dict()
        )

    def explain(self, who: str, args: ConceptArgs) -> dict[str, Any]:
        return self._mem().explain(who, args.user_id, args.concept)

    def forget(self, who: str, args: ConceptArgs) -> dict[str, Any]:
        return self._mem().forget(who, args.user_id, args.concept)

    def compact(self, who: str, args: UserArgs) -> dict[str, Any]:
        return self._mem().compact(who, args.user_id)

    def graph(self, who: str, args: UserArgs) -> dict[str, Any]:
        return self._mem().graph(who, args.user_id)


class ApiBackend:
    """A running graphmem API (`--api URL`), through graphmem.client."""

    def __init__(self, base_url: str, api_key: str | None, *, http: bool, timeout: float = 120.0) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.http = http
        # One connection pool for every caller; each call carries its caller's key.
        self._pool = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout)
        # Consistency tokens per key, kept across calls (each call makes its own client): a block asked
        # right after a write includes it whichever API replica answers.
        self._tokens: dict[str | None, TokenBook] = {}

    def caller(self, headers: Mapping[str, str] | None) -> str | None:
        if not self.http:
            return self.api_key
        # The caller's own key, forwarded; never this process's key (an anonymous HTTP caller must not
        # act as the operator).
        auth = (headers or {}).get("authorization", "")
        scheme, _, token = auth.partition(" ")
        return token.strip() if scheme.lower() == "bearer" and token.strip() else None

    def client(self, key: str | None) -> GraphMemClient:
        return GraphMemClient(
            self.base_url, api_key=key, http=self._pool, tokens=self._tokens.setdefault(key, TokenBook())
        )

    def close(self) -> None:
        self._pool.close()

    def ingest(self, who: str | None, args: IngestArgs) -> dict[str, Any]:
        return _ingest_summary(self.client(who).ingest(args.user_id, args.session_id, args.turns, context=args.context))

    def context(self, who: str | None, args: ContextArgs) -> dict[str, Any]:
        return (
            self.client(who)
            .context(
                args.user_id,
                focus=args.focus,
                scope=args.scope,
                max_tokens=args.max_tokens,
                format=args.format,
                evidence=args.evidence,
                tag=args.tag,
                prompt=args.prompt,
            )
            .model_dump()
        )

    def explain(self, who: str | None, args: ConceptArgs) -> dict[str, Any]:
        return self.client(who).explain(args.user_id, args.concept)

    def forget(self, who: str | None, args: ConceptArgs) -> dict[str, Any]:
        return self.client(who).forget(args.user_id, args.concept)

    def compact(self, who: str | None, args: UserArgs) -> dict[str, Any]:
        return self.client(who).compact(args.user_id)

    def graph(self, who: str | None, args: UserArgs) -> dict[str, Any]:
        return self.client(who).graph(args.user_id)


# -- results and errors ----------------------------------------------------------------------------------


def error_result(code: str, message: str) -> CallToolResult:
    body = {"error": {"code": code, "message": message}}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def ok_result(data: dict[str, Any], text: str | None = None) -> CallToolResult:
    return CallToolResult(
        content=[
            TextContent(
                type="text", text=text if text is not None else json.dumps(data, ensure_ascii=False, default=str)
            )
        ],
        structured_content=json.loads(json.dumps(data, default=str)),
    )


def run_tool(backend: Backend, ctx: Context, work: Callable[[Any], CallToolResult]) -> CallToolResult:
    """Resolves the caller, runs the work, and turns every expected failure into a coded tool error."""
    try:
        return work(backend.caller(ctx.headers))
    except ValidationError as exc:
        err = invalid_input(exc)
        return error_result(err.code, err.message)
    except GraphmemError as exc:  # the library's errors, AuthError included
        return error_result(exc.code, exc.message)
    except ApiError as exc:  # the API's answer, through graphmem.client
        return error_result(exc.code, exc.message)
    except neo4j_errors.DriverError as exc:  # as the REST API answers them (graphmem/api/app.py)
        return error_result("STORE_UNAVAILABLE", f"Neo4j is unreachable ({type(exc).__name__}); retry shortly")
    except neo4j_errors.Neo4jError as exc:
        if isinstance(exc, (neo4j_errors.TransientError, neo4j_errors.DatabaseUnavailable)):
            return error_result("STORE_UNAVAILABLE", "Neo4j is busy or unavailable; retry shortly")
        log.exception("Neo4j error")
        return error_result("STORE_ERROR", "the graph store failed; nothing was changed")


# -- the server ------------------------------------------------------------------------------------------


def build_server(backend: Backend) -> MCPServer:
    server: MCPServer = MCPServer(
        "graphmem", title="graphmem memory", instructions=INSTRUCTIONS, version="0.1.0", log_level="WARNING"
    )

    @server.tool(
        name="ingest_turns",
        title="Remember conversation turns",
        description=(
            "Store new conversation turns in the user's long-term memory. graphmem reads them and updates "
            "the user's concept graph: which topics, tools, courses or products they mention, which they "
            "already know, struggle with, are interested in or dislike, and how concepts relate. Call it "
            "after every exchange with just the new turns. Sending a turn again with the same turn_id "
            "changes nothing, so retrying is safe. Returns the stored turn ids and the concepts found; with "
            "return_context, also the user's context block as get_context_block would return it right after "
            "(one call instead of two)."
        ),
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )
    def ingest_turns(
        user_id: UserIdArg,
        session_id: SessionIdArg,
        turns: TurnsArg,
        ctx: Context,
        return_context: ReturnContextArg = False,
    ) -> CallToolResult:
        args: dict[str, Any] = {"user_id": user_id, "session_id": session_id, "turns": turns}
        if return_context:
            args["context"] = {}
        return run_tool(backend, ctx, lambda who: ok_result(backend.ingest(who, IngestArgs.model_validate(args))))

    @server.tool(
        name="get_context_block",
        title="What do I know about this user?",
        description=(
            "Get a short, token-budgeted block describing what matters about this user right now: their "
            "core topics, related concepts, knowledge gaps (prerequisites they have not shown or struggle "
            "with), the current topic, and what to avoid. Paste the returned text as-is into your system "
            "prompt before answering. Pass the user's question as `focus` for a block about that question. "
            "The block's lists are also returned as structured fields."
        ),
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    def get_context_block(
        user_id: UserIdArg,
        ctx: Context,
        focus: FocusArg = None,
        scope: ScopeArg = None,
        max_tokens: MaxTokensArg = None,
        format: FormatArg = None,
    ) -> CallToolResult:
        def work(who: Any) -> CallToolResult:
            args = ContextArgs.model_validate(
                {"user_id": user_id, "focus": focus, "scope": scope, "max_tokens": max_tokens, "format": format}
            )
            result = backend.context(who, args)
            return ok_result(result, text=result["block"])

        return run_tool(backend, ctx, work)

    @server.tool(
        name="explain_concept",
        title="Why is this concept in the user's memory?",
        description=(
            "Explain one concept of the user's memory: its weight and tier (core, related or compacted), the "
            "user's stance and its history, the turns that mention it, and which related concepts passed "
            "weight to it. Use it to justify or check an item of the context block."
        ),
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    def explain_concept(user_id: UserIdArg, concept: ConceptArg, ctx: Context) -> CallToolResult:
        return run_tool(
            backend,
            ctx,
            lambda who: ok_result(
                backend.explain(who, ConceptArgs.model_validate({"user_id": user_id, "concept": concept}))
            ),
        )

    @server.tool(
        name="forget_concept",
        title="Forget a concept",
        description=(
            "Remove one concept from the user's memory (their mentions, stances and relations of it); the "
            "conversation turns themselves are kept. Use it only when the user asks you to forget something."
        ),
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )
    def forget_concept(user_id: UserIdArg, concept: ConceptArg, ctx: Context) -> CallToolResult:
        return run_tool(
            backend,
            ctx,
            lambda who: ok_result(
                backend.forget(who, ConceptArgs.model_validate({"user_id": user_id, "concept": concept}))
            ),
        )

    @server.tool(
        name="compact_memory",
        title="Compact the user's memory",
        description=(
            "Re-rank the user's concepts now and fold the ones that matter little into a summary (nothing is "
            "deleted). graphmem does this by itself in the background; call it only to force a run. Returns "
            "the run record: counts before and after, what stayed core and related."
        ),
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )
    def compact_memory(user_id: UserIdArg, ctx: Context) -> CallToolResult:
        return run_tool(
            backend, ctx, lambda who: ok_result(backend.compact(who, UserArgs.model_validate({"user_id": user_id})))
        )

    @server.resource(
        "graphmem://users/{user_id}/graph",
        name="user_graph",
        mime_type="application/json",
        description="The user's whole concept graph: nodes with weights, tiers and stances, "
        "and the relations between them.",
    )
    def user_graph(user_id: str, ctx: Context) -> str:
        try:
            who = backend.caller(ctx.headers)
            return json.dumps(
                backend.graph(who, UserArgs.model_validate({"user_id": user_id})), ensure_ascii=False, default=str
            )
        except ValidationError as exc:
            err = invalid_input(exc)
            raise ResourceError(json.dumps({"error": {"code": err.code, "message": err.message}})) from None
        except (GraphmemError, ApiError) as exc:
            raise ResourceError(
                json.dumps({"error": {"code": exc.code, "message": exc.message}}, ensure_ascii=False)
            ) from None

    return server


class BearerGate:
    """ASGI middleware for `--http` in-process: refuses a request without a valid key before MCP sees it,
    with the REST API's error body and codes (MISSING_API_KEY 401, INVALID_API_KEY 403, ...)."""

    def __init__(self, app: Any, keyring: KeyRing) -> None:
        self.app = app
        self.keyring = keyring

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.keyring.enabled:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            try:
                self.keyring.tenant_for(headers.get("authorization"))
            except AuthError as exc:
                from starlette.responses import JSONResponse

                response = JSONResponse(exc.to_dict(), status_code=exc.status, headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def serve(
    settings: Settings, *, tenant: str, api_url: str | None, api_key: str | None, http: bool, host: str, port: int
) -> None:
    """Runs the server until the host closes stdin (stdio) or Ctrl-C (HTTP)."""
    backend: LocalBackend | ApiBackend
    if api_url:
        backend = ApiBackend(api_url, api_key, http=http)
    else:
        backend = LocalBackend(settings, tenant, http=http)
        backend.start_in_background()
    server = build_server(backend)
    try:
        if not http:
            server.run("stdio")
            return
        import uvicorn

        app: Any = server.streamable_http_app(host=host)
        if isinstance(backend, LocalBackend):
            if not backend.keyring.enabled:
                log.warning(
                    "*** graphmem mcp --http runs WITHOUT API keys: tenant %r, authentication OFF. "
                    "Set GRAPHMEM_API_KEYS=key:tenant,... before exposing it. ***",
                    tenant,
                )
            app = BearerGate(app, backend.keyring)
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        backend.close()
