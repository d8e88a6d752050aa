"""What the routes share: the caller's tenant, the GraphMemory, the metrics, path and query types,
and the error responses every route documents.

The dependencies are ``async def`` on purpose: they do no I/O, and a plain ``def`` dependency costs
a hop to the thread pool and back per request (three of them per ingest call before).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, Header, Path, Query, Request

from graphmem.errors import StoreUnavailable
from graphmem.service import GraphMemory

from .metrics import Metrics
from .schemas import ErrorResponse

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Malformed request"},
    401: {"model": ErrorResponse, "description": "Missing or malformed API key"},
    403: {"model": ErrorResponse, "description": "Unknown API key"},
    404: {"model": ErrorResponse, "description": "Unknown user or concept"},
    413: {"model": ErrorResponse, "description": "Body or text too large"},
    422: {"model": ErrorResponse, "description": "Invalid input"},
    503: {"model": ErrorResponse, "description": "Neo4j unreachable; retry after Retry-After seconds"},
}
NOT_JSON: dict[int | str, dict[str, Any]] = {415: {"model": ErrorResponse, "description": "Not a JSON body"}}


def conflict(description: str) -> dict[int | str, dict[str, Any]]:
    """ERRORS plus the route's own 409."""
    return {**ERRORS, 409: {"model": ErrorResponse, "description": description}}


UserId = Annotated[str, Path(min_length=1, max_length=128, description="the user's id within the tenant")]
# The user model as it stood at a past moment (ISO 8601; no zone means UTC): mentions, stances, mastery.
AsOf = Annotated[datetime | None, Query(description="answer as the user model stood at this time (ISO 8601)")]


async def current_tenant(request: Request, authorization: Annotated[str | None, Header()] = None) -> str:
    """The tenant of the caller's API key (or the default tenant when auth is off)."""
    return request.app.state.keyring.tenant_for(authorization)


async def current_memory(request: Request) -> GraphMemory:
    mem = request.app.state.graphmem["memory"]
    if mem is None:
        raise StoreUnavailable("graphmem is still starting; retry shortly")
    return mem


async def app_metrics(request: Request) -> Metrics:
    return request.app.state.metrics


Tenant = Annotated[str, Depends(current_tenant)]
Memory = Annotated[GraphMemory, Depends(current_memory)]
AppMetrics = Annotated[Metrics, Depends(app_metrics)]
