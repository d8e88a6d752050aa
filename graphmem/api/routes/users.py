"""A user's memory: the graph, explanations, compaction, forgetting a concept, erasure."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from graphmem.errors import GraphmemError
from graphmem.service import GraphMemory

from ..consistency import ConsistencyQuery, reading, writing
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
def get_graph(
    user_id: UserId,
    tenant: Tenant,
    mem: Memory,
    response: Response,
    as_of: AsOf = None,
    consistency: ConsistencyQuery = None,
) -> dict[str, Any]:
    with reading(tenant, consistency, response.headers):
        return mem.graph(tenant, user_id, as_of=as_of)


@router.get(
    "/v1/users/{user_id}/explain",
    response_model=Explanation,
    responses=ERRORS,
    summary="Why a concept is (or is not) in the block",
)
def get_explain(
    user_id: UserId,
    tenant: Tenant,
    mem: Memory,
    concept: ConceptName,
    response: Response,
    as_of: AsOf = None,
    consistency: ConsistencyQuery = None,
) -> dict[str, Any]:
    with reading(tenant, consistency, response.headers):
        return mem.explain(tenant, user_id, concept, as_of=as_of)


@router.post(
    "/v1/users/{user_id}/compact",
    response_model=CompactionRun,
    responses=conflict("CRITICAL_COMPRESSION_FAILURE"),
    summary="Run compaction now; returns the run record",
)
def post_compact(
    user_id: UserId, tenant: Tenant, mem: Memory, metrics: AppMetrics, response: Response
) -> dict[str, Any]:
    try:
        with writing(mem, tenant, response.headers, user_id) as stamp:
            run = mem.compact(tenant, user_id)
    except GraphmemError as exc:
        metrics.compaction_runs.labels("failed" if exc.status == 409 else "error").inc()
        raise
    metrics.compaction_runs.labels("ok").inc()
    return stamp.on(run)


@router.delete(
    "/v1/users/{user_id}/concepts",
    response_model=Forgotten,
    responses=ERRORS,
    summary="Forget one concept for this user, named in the query (no path encoding needed)",
)
def delete_concept_by_query(
    user_id: UserId, tenant: Tenant, mem: Memory, name: ConceptName, response: Response
) -> dict[str, Any]:
    return _forget(mem, tenant, user_id, name, response)


def _forget(mem: GraphMemory, tenant: str, user_id: str, concept: str, response: Response) -> dict[str, Any]:
    with writing(mem, tenant, response.headers, user_id) as stamp:
        forgot = mem.forget(tenant, user_id, concept)
    return stamp.on(forgot)


@router.delete(
    "/v1/users/{user_id}/concepts/{concept:path}",
    response_model=Forgotten,
    responses=ERRORS,
    summary="Forget one concept for this user (turns are kept)",
)
def delete_concept(user_id: UserId, concept: str, tenant: Tenant, mem: Memory, response: Response) -> dict[str, Any]:
    return _forget(mem, tenant, user_id, concept, response)


@router.delete(
    "/v1/users/{user_id}",
    response_model=Erased,
    responses=ERRORS,
    summary="Erase everything about the user (right to be forgotten)",
)
def delete_user(user_id: UserId, tenant: Tenant, mem: Memory, response: Response) -> dict[str, Any]:
    with writing(mem, tenant, response.headers, user_id) as stamp:
        erased = mem.erase(tenant, user_id)
    return stamp.on(erased)
