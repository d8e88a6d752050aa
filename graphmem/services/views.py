"""The JSON shapes the read services return (pure): a selection as a ContextResult, graph nodes and
edges, an explanation. The API declares them as its response models."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..context import ContextSelection
from ..explain import Explanation
from ..learner import mastery_view
from ..models import ContextResult, UserGraph
from ..names import localized
from ..ranked_cache import RankedGraph
from ..render import RenderedBlock


def context_result(selection: ContextSelection, rendered: RenderedBlock, evidence: bool) -> ContextResult:
    """A rendered block with the names of what it kept, section by section (dropped items are absent)."""
    kept = {name: set(keys) for name, keys in rendered.sections.items()}

    def names(section: str) -> list[str]:
        return [i.name for i in selection.section(section) if i.key in kept.get(section, set())]

    reasons = {
        i.name: i.marker
        for section, items in selection.sections.items()
        for i in items
        if i.marker and i.key in kept.get(section, set())
    }
    ev: dict[str, list[str]] = {}
    if evidence:
        for items in selection.sections.values():
            for item in items:
                ev.setdefault(item.name, list(item.evidence))
    return ContextResult(
        block=rendered.block,
        tokens=rendered.tokens,
        format=rendered.format,
        scope=rendered.scope,
        tag=rendered.tag,
        core_topics=names("core_topics"),
        related_concepts=names("related_concepts"),
        knowledge_gaps=names("knowledge_gaps"),
        current_topic=names("current_topic"),
        avoid=names("avoid"),
        truncated=rendered.truncated,
        dropped=rendered.dropped,
        evidence=ev,
        reasons=reasons,
    )


def graph_nodes(ranked: RankedGraph, names: dict[str, str]) -> list[dict[str, Any]]:
    """Every concept of the ranked graph with its weights, tiers and mastery, in key order."""
    nodes = []
    for key in sorted(ranked.graph.concepts):
        node = ranked.graph.concepts[key]
        rc = ranked.ranking.get(key)
        nodes.append(
            {
                "key": key,
                "name": names.get(key, node.name),
                "canonical_name": node.name,
                "type": node.type,
                "in_catalog": node.in_catalog,
                "user_mentions": node.user_mentions,
                "assistant_mentions": node.assistant_mentions,
                "stance": node.stance.value if node.stance else None,
                "initial_weight": rc.initial if rc else 0.0,
                "propagated_weight": rc.propagated if rc else 0.0,
                "weight": rc.final if rc else 0.0,
                "tier": ranked.tiers[key].value,
                "stored_tier": node.tier.value if node.tier else None,
                "sessions": list(node.sessions),
                **mastery_view(node),
            }
        )
    return nodes


def graph_edges(graph: UserGraph) -> list[dict[str, Any]]:
    return [
        {"source": e.source, "type": e.type.value, "target": e.target, "scope": e.scope, "confidence": e.confidence}
        for e in graph.edges
    ]


def explanation(
    exp: Explanation, ranked: RankedGraph, names: dict[str, str], threshold: float, spans: list[dict[str, Any]]
) -> dict[str, Any]:
    """An explanation's fields as JSON (the caller adds the stance timeline and relations)."""
    stored_tier = ranked.graph.concepts[exp.key].tier
    return {
        "key": exp.key,
        "name": exp.name,
        "canonical_name": exp.canonical_name,
        "type": exp.type,
        "in_catalog": exp.in_catalog,
        "critical": exp.critical,
        "tier": exp.tier.value if exp.tier else None,
        "stored_tier": stored_tier.value if stored_tier else None,
        "compacted": exp.compacted,
        "compacted_at": _iso(exp.compacted_at),
        "stance": exp.stance.value if exp.stance else None,
        "ranker": exp.ranker,
        "rank": exp.rank,
        "weights": {
            "initial": exp.initial,
            "propagated": exp.propagated,
            "final": exp.final,
            "threshold": threshold,
        },
        "propagation": [
            {
                "from": c.neighbour,
                "from_name": localized(ranked.graph, names, c.neighbour),
                "relation": c.relation.value,
                "direction": c.direction,
                "amount": c.amount,
            }
            for c in exp.contributions
        ],
        "mentions": {
            "user": exp.user_mentions,
            "assistant": exp.assistant_mentions,
            "sessions": list(exp.sessions),
            "first_seen": _iso(exp.first_seen),
            "last_seen": _iso(exp.last_seen),
            "spans": spans,
        },
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
