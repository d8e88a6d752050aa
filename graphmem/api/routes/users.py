"""A user's memory: the graph, explanations, compaction, forgetting a concept, erasure."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from graphmem.errors import GraphmemError

from ..deps import ERRORS, AppMetrics, AsOf, Memory, Tenant, UserId, conflict
from ..schemas import CompactionRun, Erased, Explanation, Forgotten, UserGraphResponse

router = APIRouter(tags=["memory"])
ConceptName = Annotated[str, Query(min_length=1, max_length=200)]


@router.get(
    "/v1/users/{user_id}/graph",
    response_model=UserGraphResponse,
    responses=ERRORS,
    summary="The user's graph: nodes and edges with weights, tiers and stances",
)
def get_graph(user_id: UserId, tenant: Tenant, mem: Memory, as_of: AsOf = None) -> dict[str, Any]:
    return mem.graph(tenant, user_id, as_of=as_of)


@router.get(
    "/v1/users/{user_id}/explain",
    response_model=Explanation,
    responses=ERRORS,
    summary="Why a concept is (or is not) in the block",
)
def get_explain(
    user_id: UserId, tenant: Tenant, mem: Memory, concept: ConceptName, as_of: AsOf = None
) -> dict[str, Any]:
    return mem.explain(tenant, user_id, concept, as_of=as_of)


@router.post(
    "/v1/users/{user_id}/compact",
    response_model=CompactionRun,
    responses=conflict("CRITICAL_COMPRESSION_FAILURE"),
    summary="Run compaction now; returns the run record",
)
def post_compact(user_id: UserId, tenant: Tenant, mem: Memory, metrics: AppMetrics) -> dict[str, Any]:
    try:
        run = mem.compact(tenant, user_id)
    except GraphmemError as exc:
        metrics.compaction_runs.labels("failed" if exc.status == 409 else "error").inc()
        raise
    metrics.compaction_runs.labels("ok").inc()
    return run


@router.delete(
    "/v1/users/{user_id}/concepts",
    response_model=Forgotten,
    responses=ERRORS,
    summary="Forget one concept for this user, named in the query (no path encoding needed)",
)
def delete_concept_by_query(user_id: UserId, tenant: Tenant, mem: Memory, name: ConceptName) -> dict[str, Any]:
    return mem.forget(tenant, user_id, name)


@router.delete(
    "/v1/users/{user_id}/concepts/{concept:path}",
    response_model=Forgotten,
    responses=ERRORS,
    summary="Forget one concept for this user (turns are kept)",
)
def delete_concept(user_id: UserId, concept: str, tenant: Tenant, mem: Memory) -> dict[str, Any]:
    return mem.forget(tenant, user_id, concept)


@router.delete(
    "/v1/users/{user_id}",
    response_model=Erased,
    responses=ERRORS,
    summary="Erase everything about the user (right to be forgotten)",
)
def delete_user(user_id: UserId, tenant: Tenant, mem: Memory) -> dict[str, Any]:
    return mem.erase(tenant, user_id)
