"""The FastAPI application: `create_app()` builds it, `graphmem serve` runs it.

Handlers are plain `def`s, so FastAPI runs them in its thread pool: extraction
(CPU) and Neo4j calls (I/O) never block the event loop.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from neo4j import exceptions as neo4j_errors
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphmem.errors import GraphmemError, InvalidCatalog, StoreUnavailable
from graphmem.extraction.catalog_io import Format as CatalogFormat
from graphmem.extraction.catalog_io import parse_catalog
from graphmem.models import ContextResult
from graphmem.service import GraphMemory
from graphmem.settings import Settings, get_settings

from .attempts import build_router as learner_router
from .auth import KeyRing, load_keyring
from .consistency import ConsistencyQuery, reading, writing
from .limits import RequestLimits, require_json
from .metrics import Metrics
from .schemas import ContextRequest, ErrorResponse, Format, IngestRequest
from .schemas import Scope as ScopeName

log = logging.getLogger("graphmem.api")

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Malformed request"},
    401: {"model": ErrorResponse, "description": "Missing or malformed API key"},
    403: {"model": ErrorResponse, "description": "Unknown API key"},
    404: {"model": ErrorResponse, "description": "Unknown user or concept"},
    413: {"model": ErrorResponse, "description": "Body or text too large"},
    422: {"model": ErrorResponse, "description": "Invalid input"},
    503: {"model": ErrorResponse, "description": "Neo4j unreachable; retry after Retry-After seconds"},
}

UserId = Annotated[str, Path(min_length=1, max_length=128, description="the user's id within the tenant")]
# The user model as it stood at a past moment (ISO 8601; no zone means UTC): mentions, stances, mastery.
AsOf = Annotated[datetime | None, Query(description="answer as the user model stood at this time (ISO 8601)")]


def current_tenant(request: Request, authorization: Annotated[str | None, Header()] = None) -> str:
    """The tenant of the caller's API key (or the default tenant when auth is off)."""
    return request.app.state.keyring.tenant_for(authorization)


def current_memory(request: Request) -> GraphMemory:
    mem = request.app.state.graphmem["memory"]
    if mem is None:
        raise StoreUnavailable("graphmem is still starting; retry shortly")
    return mem


Tenant = Annotated[str, Depends(current_tenant)]
Memory = Annotated[GraphMemory, Depends(current_memory)]


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def create_app(settings: Settings | None = None, memory: GraphMemory | None = None) -> FastAPI:
    settings = settings or get_settings()
    keyring: KeyRing = load_keyring(settings)
    metrics = Metrics.create()
    state: dict[str, Any] = {"memory": memory}

    def start_in_background(mem: GraphMemory) -> None:
        # Neo4j may come up after the API: keep trying, /readyz says when it is ready.
        def loop() -> None:
            while not state.get("stopping"):
                try:
                    mem.start()
                    log.info("graphmem ready: schema applied, pipelines loaded")
                    return
                except Exception as exc:
                    log.warning("start-up not complete yet (%s); retrying in 2 s", exc)
                    time.sleep(2)

        threading.Thread(target=loop, name="graphmem-start", daemon=True).start()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if state["memory"] is None:
            state["memory"] = GraphMemory(settings)
        mem: GraphMemory = state["memory"]
        if not (mem.schema_applied and mem.models_loaded):
            start_in_background(mem)
        yield
        state["stopping"] = True
        if memory is None:
            mem.close()

    app = FastAPI(
        title="graphmem",
        version="0.1.0",
        description="Graph memory for AI agents: send turns, get a scoped, token-budgeted context block.",
        lifespan=lifespan,
        # A redirect of a mutating request lands on another resource (DELETE /v1/users/a/concepts/..
        # normalised to DELETE /v1/users/a/ and redirected to DELETE /v1/users/a): no redirects at all,
        # a path that does not match is a 404 in the error shape.
        redirect_slashes=False,
    )
    app.state.metrics = metrics
    app.state.keyring = keyring
    app.state.graphmem = state
    app.add_middleware(
        CORSMiddleware,
        # The Neo4j Browser fetches the guide from here.
        allow_origins=[f"http://{host}:{settings.neo4j_http_port}" for host in ("127.0.0.1", "localhost")],
        allow_methods=["GET"],
        # The Browser's fetch of a guide sends these and needs the preflight answered.
        allow_headers=["cache-control", "pragma"],
    )

    # Added before `observe`, so it runs inside it: refusals are counted and carry the worker header.
    app.add_middleware(RequestLimits, max_body_bytes=settings.max_body_bytes, max_url_bytes=settings.max_url_bytes)

    worker_id = str(os.getpid())

    @app.middleware("http")
    async def observe(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", "unmatched")
        metrics.requests.labels(path, request.method, str(response.status_code)).inc()
        metrics.latency.labels(path, request.method).observe(time.perf_counter() - started)
        # Which API process answered: with `graphmem serve --workers N`, tells the workers apart in logs.
        response.headers["X-Graphmem-Worker"] = worker_id
        return response

    # -- errors: one shape everywhere ---------------------------------------------------

    @app.exception_handler(GraphmemError)
    async def graphmem_error(request: Request, exc: GraphmemError) -> JSONResponse:
        headers = None
        if isinstance(exc, StoreUnavailable):
            metrics.neo4j_errors.inc()
            headers = {"Retry-After": "5"}
        return error_response(exc.status, exc.code, exc.message, headers)

    @app.exception_handler(neo4j_errors.DriverError)
    async def driver_error(request: Request, exc: neo4j_errors.DriverError) -> JSONResponse:
        metrics.neo4j_errors.inc()
        return error_response(
            503,
            "STORE_UNAVAILABLE",
            f"Neo4j is unreachable ({type(exc).__name__}); retry shortly",
            {"Retry-After": "5"},
        )

    @app.exception_handler(neo4j_errors.Neo4jError)
    async def neo4j_error(request: Request, exc: neo4j_errors.Neo4jError) -> JSONResponse:
        metrics.neo4j_errors.inc()
        if isinstance(exc, (neo4j_errors.TransientError, neo4j_errors.DatabaseUnavailable)):
            return error_response(
                503, "STORE_UNAVAILABLE", "Neo4j is busy or unavailable; retry shortly", {"Retry-After": "5"}
            )
        log.exception("Neo4j error")
        return error_response(500, "STORE_ERROR", "the graph store failed; nothing was changed")

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request", "type": ""}
        if first.get("type") == "json_invalid":
            return error_response(400, "INVALID_JSON", "the body is not valid JSON (or not UTF-8)")
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "request"
        code = "INVALID_ROLE" if where.endswith("role") else "INVALID_INPUT"
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        return error_response(422, code, f"{where}: {first.get('msg')}{more}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:
            # FastAPI's own "error parsing the body": bytes that are not UTF-8 JSON.
            return error_response(400, "INVALID_BODY", "the body could not be decoded as UTF-8 JSON")
        codes = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "BODY_TOO_LARGE"}
        return error_response(exc.status_code, codes.get(exc.status_code, "HTTP_ERROR"), str(exc.detail))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "INTERNAL_ERROR", "an unexpected error occurred; it has been logged")

    # -- probes -----------------------------------------------------------------------

    @app.get("/healthz", tags=["ops"], summary="The process is up")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/readyz",
        tags=["ops"],
        summary="Neo4j reachable, schema applied, models loaded",
        responses={503: {"description": "not ready"}},
    )
    def readyz() -> JSONResponse:
        mem = state["memory"]
        body = mem.ready() if mem else {"neo4j": False, "schema": False, "models": False, "ready": False}
        if body["ready"]:
            return JSONResponse(body)
        return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})

    @app.get("/metrics", tags=["ops"], summary="Prometheus metrics", response_class=PlainTextResponse)
    def metrics_endpoint() -> Response:
        return Response(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    # -- turns ----------------------------------------------------------------------------

    @app.post(
        "/v1/users/{user_id}/turns",
        tags=["memory"],
        dependencies=[Depends(require_json)],
        responses={
            **ERRORS,
            409: {"model": ErrorResponse, "description": "TURN_ID_CONFLICT / USER_ERASED"},
            415: {"model": ErrorResponse, "description": "Not a JSON body"},
        },
        summary="Ingest turns (idempotent by turn id)",
    )
    def post_turns(
        user_id: UserId, body: IngestRequest, tenant: Tenant, mem: Memory, response: Response
    ) -> dict[str, Any]:
        with writing(mem, tenant, response, user_id) as stamp:
            result = mem.ingest(tenant, user_id, body.session_id, body.turns)
        metrics.ingest_turns.labels("accepted").inc(len(result.accepted))
        metrics.ingest_turns.labels("duplicate").inc(len(result.duplicates))
        metrics.extraction_seconds.observe(mem.last_extraction_seconds)
        return stamp.on(result.model_dump(mode="json"))

    # -- context -----------------------------------------------------------------------------

    def _context(
        mem: GraphMemory, tenant: str, user_id: str, req: ContextRequest, response: Response
    ) -> dict[str, Any]:
        with reading(tenant, req.consistency, response):
            result = mem.context(
                tenant,
                user_id,
                focus=req.focus,
                scope=req.scope,
                max_tokens=req.max_tokens,
                fmt=req.format,
                evidence=req.evidence,
                prompt=req.prompt,
                tag=req.tag,
                as_of=req.as_of,
            )
        metrics.block_tokens.observe(result.tokens)
        return result.to_dict()

    @app.get(
        "/v1/users/{user_id}/context",
        tags=["context"],
        response_model=ContextResult,
        responses={**ERRORS, 409: {"model": ErrorResponse, "description": "CONTEXT_LOOP_DETECTED"}},
        summary="The user's context block for the next LLM call",
    )
    def get_context(
        user_id: UserId,
        tenant: Tenant,
        mem: Memory,
        focus: Annotated[str | None, Query(max_length=20_000)] = None,
        scope: ScopeName = "learning",
        max_tokens: Annotated[int | None, Query(ge=1, le=100_000)] = None,
        format: Format = "xml",
        evidence: bool = False,
        tag: Annotated[str | None, Query(max_length=64)] = None,
        as_of: AsOf = None,
        consistency: ConsistencyQuery = None,
        *,
        response: Response,
    ) -> dict[str, Any]:
        req = ContextRequest(
            focus=focus,
            scope=scope,
            max_tokens=max_tokens,
            format=format,
            evidence=evidence,
            tag=tag,
            as_of=as_of,
            consistency=consistency,
        )
        return _context(mem, tenant, user_id, req, response)

    @app.post(
        "/v1/users/{user_id}/context",
        tags=["context"],
        response_model=ContextResult,
        dependencies=[Depends(require_json)],
        responses={
            **ERRORS,
            409: {"model": ErrorResponse, "description": "CONTEXT_LOOP_DETECTED"},
            415: {"model": ErrorResponse, "description": "Not a JSON body"},
        },
        summary="The context block, with the prompt being assembled (loop detection)",
    )
    def post_context(
        user_id: UserId, body: ContextRequest, tenant: Tenant, mem: Memory, response: Response
    ) -> dict[str, Any]:
        return _context(mem, tenant, user_id, body, response)

    # -- graph, explain, compaction, forgetting --------------------------------------------------

    @app.get(
        "/v1/users/{user_id}/graph",
        tags=["memory"],
        responses=ERRORS,
        summary="The user's graph: nodes and edges with weights, tiers and stances",
    )
    def get_graph(
        user_id: UserId,
        tenant: Tenant,
        mem: Memory,
        response: Response,
        as_of: AsOf = None,
        consistency: ConsistencyQuery = None,
    ) -> dict[str, Any]:
        with reading(tenant, consistency, response):
            return mem.graph(tenant, user_id, as_of=as_of)

    @app.get(
        "/v1/users/{user_id}/explain",
        tags=["memory"],
        responses=ERRORS,
        summary="Why a concept is (or is not) in the block",
    )
    def get_explain(
        user_id: UserId,
        tenant: Tenant,
        mem: Memory,
        concept: Annotated[str, Query(min_length=1, max_length=200)],
        response: Response,
        as_of: AsOf = None,
        consistency: ConsistencyQuery = None,
    ) -> dict[str, Any]:
        with reading(tenant, consistency, response):
            return mem.explain(tenant, user_id, concept, as_of=as_of)

    @app.post(
        "/v1/users/{user_id}/compact",
        tags=["memory"],
        responses={**ERRORS, 409: {"model": ErrorResponse, "description": "CRITICAL_COMPRESSION_FAILURE"}},
        summary="Run compaction now; returns the run record",
    )
    def post_compact(user_id: UserId, tenant: Tenant, mem: Memory, response: Response) -> dict[str, Any]:
        try:
            with writing(mem, tenant, response, user_id) as stamp:
                run = mem.compact(tenant, user_id)
        except GraphmemError as exc:
            metrics.compaction_runs.labels("failed" if exc.status == 409 else "error").inc()
            raise
        metrics.compaction_runs.labels("ok").inc()
        return stamp.on(run)

    @app.delete(
        "/v1/users/{user_id}/concepts",
        tags=["memory"],
        responses=ERRORS,
        summary="Forget one concept for this user, named in the query (no path encoding needed)",
    )
    def delete_concept_by_query(
        user_id: UserId,
        tenant: Tenant,
        mem: Memory,
        name: Annotated[str, Query(min_length=1, max_length=200)],
        response: Response,
    ) -> dict[str, Any]:
        with writing(mem, tenant, response, user_id) as stamp:
            forgot = mem.forget(tenant, user_id, name)
        return stamp.on(forgot)

    @app.delete(
        "/v1/users/{user_id}/concepts/{concept:path}",
        tags=["memory"],
        responses=ERRORS,
        summary="Forget one concept for this user (turns are kept)",
    )
    def delete_concept(
        user_id: UserId, concept: str, tenant: Tenant, mem: Memory, response: Response
    ) -> dict[str, Any]:
        with writing(mem, tenant, response, user_id) as stamp:
            forgot = mem.forget(tenant, user_id, concept)
        return stamp.on(forgot)

    @app.delete(
        "/v1/users/{user_id}",
        tags=["memory"],
        responses=ERRORS,
        summary="Erase everything about the user (right to be forgotten)",
    )
    def delete_user(user_id: UserId, tenant: Tenant, mem: Memory, response: Response) -> dict[str, Any]:
        with writing(mem, tenant, response, user_id) as stamp:
            erased = mem.erase(tenant, user_id)
        return stamp.on(erased)

    # Graded attempts and BKT fits (graphmem/api/attempts.py).
    app.include_router(learner_router(Tenant, Memory, ERRORS))

    # -- catalog ---------------------------------------------------------------------------------

    @app.put(
        "/v1/catalog",
        tags=["catalog"],
        responses=ERRORS,
        summary="Replace the tenant's concept catalog",
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": {"type": "object"}},
                    "application/yaml": {"schema": {"type": "string"}},
                    "text/csv": {"schema": {"type": "string"}},
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                "concepts": {"type": "string", "format": "binary"},
                                "edges": {"type": "string", "format": "binary"},
                            },
                        }
                    },
                },
            }
        },
    )
    async def put_catalog(request: Request, tenant: Tenant, mem: Memory, response: Response) -> dict[str, Any]:
        content_type = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if content_type == "multipart/form-data":
            form = await request.form()
            concepts = form.get("concepts")
            edges = form.get("edges")
            if concepts is None or isinstance(concepts, str):
                raise InvalidCatalog("upload the concepts CSV as the form field `concepts`")
            concepts_bytes = await concepts.read()
            edges_bytes = await edges.read() if edges is not None and not isinstance(edges, str) else None
            # Parsing is CPU work on untrusted input: never on the event loop (every tenant waits on it).
            catalog = await run_in_threadpool(parse_catalog, concepts_bytes, "csv", edges_csv=edges_bytes)
        else:
            formats: dict[str, CatalogFormat] = {
                "application/json": "json",
                "application/yaml": "yaml",
                "application/x-yaml": "yaml",
                "text/yaml": "yaml",
                "text/csv": "csv",
            }
            fmt = formats.get(content_type)
            if fmt is None:
                raise InvalidCatalog(
                    f"unsupported content type {content_type!r}; send JSON, YAML, CSV or a multipart upload",
                    code="UNSUPPORTED_MEDIA_TYPE",
                    status=415,
                )
            catalog = await run_in_threadpool(parse_catalog, await request.body(), fmt)
        # The chain is set on this task's context; run_in_threadpool runs the write in a copy of it.
        with writing(mem, tenant, response) as stamp:
            stored = await run_in_threadpool(mem.put_catalog, tenant, catalog)
        return stamp.on(stored)

    @app.get("/v1/catalog", tags=["catalog"], responses=ERRORS, summary="The tenant's catalog")
    def get_catalog(tenant: Tenant, mem: Memory) -> dict[str, Any]:
        return mem.get_catalog(tenant)

    # -- Neo4j Browser guide ----------------------------------------------------------------------

    @app.get(
        "/browser/guide",
        tags=["browser"],
        response_class=HTMLResponse,
        summary="A Neo4j Browser guide (`:play` this URL) over the demo learners",
    )
    def browser_guide(
        request: Request,
        tenant: Annotated[str | None, Query(max_length=128)] = None,
        user: Annotated[list[str] | None, Query(max_length=128)] = None,
    ) -> HTMLResponse:
        # No API key here: the Browser cannot send one. The guide holds only query text with the
        # tenant and user ids the caller asked for (the demo learners by default); it reads no data.
        from graphmem.cypher import load_library
        from graphmem.guide import DEMO_FOCUS, DEMO_USERS, render_guide

        users = user or DEMO_USERS
        library = load_library(settings.cypher_dir)
        return HTMLResponse(render_guide(library, tenant or settings.default_tenant, users, DEMO_FOCUS))

    return app
