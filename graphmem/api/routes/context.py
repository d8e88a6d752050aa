"""GET and POST /v1/users/{user_id}/context: the block for the next LLM call.

A scope or format the caller leaves out is the server's (``GRAPHMEM_DEFAULT_SCOPE``,
``GRAPHMEM_DEFAULT_FORMAT``), as in the library.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from graphmem.models import ContextResult
from graphmem.service import GraphMemory
from graphmem.vocabulary import Format, Scope

from ..consistency import ConsistencyQuery, reading
from ..deps import NOT_JSON, AppMetrics, AsOf, Memory, Tenant, UserId, conflict
from ..limits import require_json
from ..metrics import Metrics
from ..schemas import ContextRequest

router = APIRouter(tags=["context"])
RESPONSES = conflict("CONTEXT_LOOP_DETECTED")


def _context(mem: GraphMemory, metrics: Metrics, tenant: str, user_id: str, req: ContextRequest) -> Response:
    headers: dict[str, str] = {}
    with reading(tenant, req.consistency, headers):
        result = mem.context(tenant, user_id, **req.options())
    metrics.block_tokens.observe(result.tokens)
    # Encoded once by pydantic; response_model documents the body.
    return Response(result.model_dump_json(), media_type="application/json", headers=headers)


@router.get(
    "/v1/users/{user_id}/context",
    response_model=ContextResult,
    responses=RESPONSES,
    summary="The user's context block for the next LLM call",
)
def get_context(
    user_id: UserId,
    tenant: Tenant,
    mem: Memory,
    metrics: AppMetrics,
    focus: Annotated[str | None, Query(max_length=20_000)] = None,
    scope: Annotated[Scope | None, Query(description="default: GRAPHMEM_DEFAULT_SCOPE (learning)")] = None,
    max_tokens: Annotated[int | None, Query(ge=1, le=100_000)] = None,
    format: Annotated[Format | None, Query(description="default: GRAPHMEM_DEFAULT_FORMAT (xml)")] = None,
    evidence: bool = False,
    tag: Annotated[str | None, Query(max_length=64)] = None,
    as_of: AsOf = None,
    consistency: ConsistencyQuery = None,
) -> Response:
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
    return _context(mem, metrics, tenant, user_id, req)


@router.post(
    "/v1/users/{user_id}/context",
    response_model=ContextResult,
    dependencies=[Depends(require_json)],
    responses={**RESPONSES, **NOT_JSON},
    summary="The context block, with the prompt being assembled (loop detection)",
)
def post_context(user_id: UserId, body: ContextRequest, tenant: Tenant, mem: Memory, metrics: AppMetrics) -> Response:
    return _context(mem, metrics, tenant, user_id, body)
