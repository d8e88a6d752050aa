"""The 2-hop walk that picks a user's visible relations: pure, shared by every store.

A user's graph is their interests plus the relations up to ``depth`` hops around them, taken from
two adjacency maps: the tenant catalog's relations and the user's own (relations extracted from
other users' conversations are never offered to the walk, which is the isolation rule).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .models import REL_TYPE_FROM_NEO4J, ConceptEdge, ConceptNode

# (source, target, relationship type as stored, scope): one edge, however many turns stated it.
EdgeKey = tuple[str, str, str, str]
Adjacency = dict[str, list[tuple[Any, ConceptEdge]]]


def adjacency(rows: Iterable[Mapping[str, Any]]) -> Adjacency:
    """Relation rows (source, type, target, scope, confidence) -> both endpoints' (edge key, edge) lists."""
    adj: Adjacency = {}
    for r in rows:
        edge = ConceptEdge(
            r["source"], r["target"], REL_TYPE_FROM_NEO4J[r["type"]], r["scope"] or "catalog", float(r["confidence"])
        )
        item = ((edge.source, edge.target, r["type"], edge.scope), edge)
        adj.setdefault(edge.source, []).append(item)
        if edge.target != edge.source:
            adj.setdefault(edge.target, []).append(item)
    return adj


def seed_keys(concepts: Mapping[str, ConceptNode], *more: Iterable[str]) -> set[str]:
    """Where the walk starts: concepts the user mentioned or took a stance on, plus ``more`` (focus
    keys new to the user, attempted concepts)."""
    seeds = {k for k, c in concepts.items() if c.user_mentions + c.assistant_mentions > 0 or c.stance}
    for keys in more:
        seeds.update(keys)
    return seeds


def walk(
    seeds: Iterable[str], adjacencies: Sequence[Mapping[str, Sequence[tuple[Any, ConceptEdge]]]], depth: int
) -> dict[Any, ConceptEdge]:
    """Every edge within ``depth`` hops of ``seeds`` in any of ``adjacencies``, by edge key."""
    edges: dict[Any, ConceptEdge] = {}
    frontier = set(seeds)
    visited: set[str] = set()
    for _ in range(max(depth, 0)):
        if not frontier:
            break
        visited |= frontier
        next_frontier: set[str] = set()
        for key in frontier:
            for adj in adjacencies:
                for ek, edge in adj.get(key, ()):
                    edges[ek] = edge
                    for k in (edge.source, edge.target):
                        if k not in visited:
                            next_frontier.add(k)
        frontier = next_frontier
    return edges


def missing_endpoints(edges: Mapping[Any, ConceptEdge], extra: Iterable[str], concepts: Mapping[str, Any]) -> set[str]:
    """Concept keys the walk reached (or the caller asked for) that are not loaded yet."""
    missing = {k for e in edges.values() for k in (e.source, e.target)} | set(extra)
    return missing - set(concepts)


def kept_edges(edges: Mapping[Any, ConceptEdge], concepts: Mapping[str, Any]) -> tuple[ConceptEdge, ...]:
    """The walk's edges in key order, without those to keys that no longer exist (deleted concurrently)."""
    return tuple(e for _, e in sorted(edges.items()) if e.source in concepts and e.target in concepts)
