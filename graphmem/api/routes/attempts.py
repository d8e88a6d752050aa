"""Learner-model endpoints: graded attempts (BKT mastery) and per-concept BKT fits."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query, Response
from starlette.concurrency import run_in_threadpool

from graphmem.learner import AttemptsRequest, KTFitRequest

from ..consistency import writing
from ..deps import ERRORS, NOT_JSON, Memory, Tenant, UserId, conflict
from ..limits import require_json
from ..schemas import AttemptsRecorded, ConceptAttempts, KTFitReport, KTParams

router = APIRouter(tags=["learner"])


@router.post(
    "/v1/users/{user_id}/attempts",
    response_model=AttemptsRecorded,
    responses={**conflict("ATTEMPT_ID_CONFLICT"), **NOT_JSON},
    dependencies=[Depends(require_json)],
    summary="Record graded attempts (idempotent by attempt_id); returns predicted and mastery",
)
def post_attempts(
    user_id: UserId, body: AttemptsRequest, tenant: Tenant, mem: Memory, response: Response
) -> dict[str, Any]:
    """For each attempt: `predicted`, P(correct) before it was applied (BKT), and `mastery` after it.
    A re-sent attempt_id with the same content is a duplicate (its stored figures are returned); with
    other content the whole request is refused with 409 ATTEMPT_ID_CONFLICT and nothing is stored."""
    with writing(mem, tenant, response.headers, user_id) as stamp:
        recorded = mem.learner.record(tenant, user_id, body.attempts)
    return stamp.on(recorded)


@router.get(
    "/v1/users/{user_id}/attempts",
    response_model=ConceptAttempts,
    responses=ERRORS,
    summary="A user's attempts on one concept, with BKT figures and validity spans",
)
def get_attempts(
    user_id: UserId, tenant: Tenant, mem: Memory, concept: Annotated[str, Query(min_length=1, max_length=200)]
) -> dict[str, Any]:
    return {"user_id": user_id, "concept": concept, "attempts": mem.learner.attempts(tenant, user_id, concept)}


@router.post(
    "/v1/kt/fit",
    response_model=KTFitReport,
    responses={**ERRORS, **NOT_JSON},
    dependencies=[Depends(require_json)],
    summary="Fit BKT parameters per concept from the tenant's attempts (pyBKT EM); stored, versioned",
)
async def post_fit(tenant: Tenant, mem: Memory, body: Annotated[KTFitRequest | None, Body()] = None) -> dict[str, Any]:
    # EM is CPU work for seconds: off the event loop.
    return await run_in_threadpool(mem.learner.fit, tenant, body)


@router.get(
    "/v1/kt/params",
    response_model=KTParams,
    responses=ERRORS,
    summary="The tenant's BKT parameters: defaults, fitted values per concept, fit history",
)
def get_params(tenant: Tenant, mem: Memory) -> dict[str, Any]:
    return mem.learner.params(tenant)
