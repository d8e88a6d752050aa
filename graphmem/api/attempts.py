# mypy: disable-error-code="valid-type,attr-defined"
# (Tenant and Memory are the app's Annotated dependencies passed in at run time; mypy cannot see them as types.)
"""Learner-model endpoints: graded attempts (BKT mastery) and per-concept BKT fits.

Included by :func:`api.app.create_app` with the app's own tenant and memory dependencies, so
authentication, tenants and the error shape are the same as everywhere else.
"""

# No `from __future__ import annotations`: the endpoints' annotations use this factory's arguments
# (the app's dependencies), which must be evaluated when the functions are defined.
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Response
from starlette.concurrency import run_in_threadpool

from graphmem.learner import AttemptsRequest, KTFitRequest

from .consistency import writing
from .limits import require_json
from .schemas import ErrorResponse


def build_router(tenant_dep: Any, memory_dep: Any, errors: dict[Any, dict[str, Any]]) -> APIRouter:
    router = APIRouter()
    Tenant = tenant_dep
    Memory = memory_dep
    UserId = Annotated[str, Path(min_length=1, max_length=128, description="the user's id within the tenant")]
    conflict = {**errors, 409: {"model": ErrorResponse, "description": "ATTEMPT_ID_CONFLICT"}}

    @router.post(
        "/v1/users/{user_id}/attempts",
        tags=["learner"],
        responses=conflict,
        dependencies=[Depends(require_json)],
        summary="Record graded attempts (idempotent by attempt_id); returns predicted and mastery",
    )
    def post_attempts(
        user_id: UserId,
        body: AttemptsRequest,
        tenant: Tenant,
        mem: Memory,
        response: Response,
    ) -> dict[str, Any]:
        """For each attempt: `predicted`, P(correct) before it was applied (BKT), and `mastery` after it.
        A re-sent attempt_id with the same content is a duplicate (its stored figures are returned); with
        other content the whole request is refused with 409 ATTEMPT_ID_CONFLICT and nothing is stored."""
        with writing(mem, tenant, response, user_id) as stamp:
            recorded = mem.learner.record(tenant, user_id, body.attempts)
        return stamp.on(recorded)

    @router.get(
        "/v1/users/{user_id}/attempts",
        tags=["learner"],
        responses=errors,
        summary="A user's attempts on one concept, with BKT figures and validity spans",
    )
    def get_attempts(
        user_id: UserId,
        tenant: Tenant,
        mem: Memory,
        concept: Annotated[str, Query(min_length=1, max_length=200)],
    ) -> dict[str, Any]:
        return {"user_id": user_id, "concept": concept, "attempts": mem.learner.attempts(tenant, user_id, concept)}

    @router.post(
        "/v1/kt/fit",
        tags=["learner"],
        responses=errors,
        dependencies=[Depends(require_json)],
        summary="Fit BKT parameters per concept from the tenant's attempts (pyBKT EM); stored, versioned",
    )
    async def post_fit(
        tenant: Tenant,
        mem: Memory,
        response: Response,
        body: Annotated[KTFitRequest | None, Body()] = None,
    ) -> dict[str, Any]:
        # EM is CPU work for seconds: off the event loop (in a copy of this context: the write's chain).
        with writing(mem, tenant, response) as stamp:
            fitted = await run_in_threadpool(mem.learner.fit, tenant, body)
        return stamp.on(fitted)

    @router.get(
        "/v1/kt/params",
        tags=["learner"],
        responses=errors,
        summary="The tenant's BKT parameters: defaults, fitted values per concept, fit history",
    )
    def get_params(tenant: Tenant, mem: Memory) -> dict[str, Any]:
        return mem.learner.params(tenant)

    return router
