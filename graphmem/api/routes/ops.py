"""Probes, Prometheus metrics and the Neo4j Browser guide."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response

from ..deps import AppMetrics
from ..schemas import Readiness, Status

router = APIRouter()


@router.get("/healthz", tags=["ops"], summary="The process is up", response_model=Status)
async def healthz() -> Status:
    return Status(status="ok")


@router.get(
    "/readyz",
    tags=["ops"],
    summary="Neo4j reachable, schema applied, models loaded",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "not ready"}},
)
def readyz(request: Request) -> JSONResponse:
    # A plain def: `ready()` asks Neo4j, which must not block the event loop.
    mem = request.app.state.graphmem["memory"]
    body = mem.ready() if mem else {"neo4j": False, "schema": False, "models": False, "ready": False}
    if body["ready"]:
        return JSONResponse(body)
    return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})


@router.get("/metrics", tags=["ops"], summary="Prometheus metrics", response_class=PlainTextResponse)
async def metrics_endpoint(metrics: AppMetrics) -> Response:
    return Response(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


@router.get(
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

    settings = request.app.state.settings
    users = user or DEMO_USERS
    library = load_library(settings.cypher_dir)
    return HTMLResponse(render_guide(library, tenant or settings.default_tenant, users, DEMO_FOCUS))
