"""Small hand-built graphs shared by the pure ranking/compaction/render tests."""

from __future__ import annotations

from datetime import UTC, datetime

from graphmem.models import ConceptEdge, ConceptNode, RelationType, Stance, Tier, UserGraph

NOW = datetime(2025, 1, 1, tzinfo=UTC)
P, U, R, PART, REL = (
    RelationType.prerequisite,
    RelationType.uses,
    RelationType.requires,
    RelationType.part_of,
    RelationType.related_to,
)


def node(
    key: str,
    user: int = 0,
    assistant: int = 0,
    *,
    name: str | None = None,
    stance: Stance | None = None,
    critical: bool = False,
    tier: Tier | None = None,
    evidence: tuple[str, ...] = (),
    **kw: object,
) -> ConceptNode:
    """A concept whose mentions are all fresh (last_seen = NOW, so no decay)."""
    return ConceptNode(
        key=key,
        name=name if name is not None else key,
        user_mentions=user,
        assistant_mentions=assistant,
        stance=stance,
        critical=critical,
        tier=tier,
        evidence=evidence,
        last_seen=NOW if (user or assistant) else None,
        **kw,  # type: ignore[arg-type]
    )


def graph(nodes: list[ConceptNode], edges: list[tuple[str, RelationType, str]], **kw: object) -> UserGraph:
    return UserGraph(
        tenant="t",
        user_id="u",
        concepts={n.key: n for n in nodes},
        edges=tuple(ConceptEdge(s, t, rel) for s, rel, t in edges),
        now=NOW,
        **kw,  # type: ignore[arg-type]
    )


def worked_example(**kw: object) -> UserGraph:
    """DESIGN.md's worked example: Python基础 -prerequisite-> Django框架 -uses-> SQLAlchemy -requires-> SQL基础."""
    return graph(
        [node("Python基础", 1), node("Django框架", 1), node("SQLAlchemy"), node("SQL基础")],
        [("Python基础", P, "Django框架"), ("Django框架", U, "SQLAlchemy"), ("SQLAlchemy", R, "SQL基础")],
        **kw,
    )
