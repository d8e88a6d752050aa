"""POST /v1/users/{user_id}/turns: ingest a batch of turns."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from graphmem.models import IngestResult

from ..consistency import writing
from ..deps import ERRORS, NOT_JSON, AppMetrics, Memory, Tenant, UserId
from ..limits import require_json
from ..schemas import ErrorResponse, IngestRequest

router = APIRouter(tags=["memory"])

EditsFlag = Annotated[
    bool,
    Query(
        description=(
            "return the per-turn edit log (`edits`: what each turn yielded: concepts, relations, stances, "
            "skipped candidates). Default true; `false` returns `edits: []`, which is smaller and faster."
        )
    ),
]


@router.post(
    "/v1/users/{user_id}/turns",
    dependencies=[Depends(require_json)],
    response_model=IngestResult,
    responses={
        **ERRORS,
        **NOT_JSON,
        409: {"model": ErrorResponse, "description": "TURN_ID_CONFLICT / USER_ERASED / CONTEXT_LOOP_DETECTED"},
    },
    summary="Ingest turns (idempotent by turn id)",
)
def post_turns(
    user_id: UserId, body: IngestRequest, tenant: Tenant, mem: Memory, metrics: AppMetrics, edits: EditsFlag = True
) -> Response:
    headers: dict[str, str] = {}
    wanted = None if body.context is None else body.context.options()
    with writing(mem, tenant, headers, user_id) as stamp:
        result = mem.ingest(tenant, user_id, body.session_id, body.turns, edit_log=edits, context=wanted)
    result = result.model_copy(update={"consistency": stamp.token})
    metrics.ingest_turns.labels("accepted").inc(len(result.accepted))
    metrics.ingest_turns.labels("duplicate").inc(len(result.duplicates))
    metrics.extraction_seconds.observe(mem.last_extraction_seconds)
    if result.context is not None:
        metrics.block_tokens.observe(result.context.tokens)
    # The model is already valid: encoded once by pydantic, not dumped to a dict, re-validated against
    # the response model and json.dumps'd (1.4 vs 0.2 ms for a 40-turn batch's 57 KB edit log).
    return Response(result.model_dump_json(), media_type="application/json", headers=headers)
