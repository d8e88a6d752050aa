"""Explanations: mentions, stance, weights with their propagation edges, tier, compaction."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from graphmem.compaction import CompactionConfig, plan_compaction
from graphmem.errors import NotFound
from graphmem.explain import explain_concept
from graphmem.models import RelationType, Stance, Tier
from graphmem.ranking import RankingConfig, rank
from tests.pure_graphs import graph, node, worked_example

REF = RankingConfig(method="reference")


def test_explains_weight_path_and_tier() -> None:
    g = worked_example()
    r = rank(g, REF)
    plan = plan_compaction(g, r, CompactionConfig())
    e = explain_concept(g, r, plan.tiers, "SQLAlchemy")
    assert (e.initial, e.propagated, e.final) == (0, 6, 6)
    assert e.ranker == "reference" and e.rank == 3 and e.tier is Tier.related and not e.compacted
    # 6 came from Django框架 along Django框架 -uses-> SQLAlchemy (pointing at SQLAlchemy: "in").
    top = e.contributions[0]
    assert (top.neighbour, top.relation, top.direction, top.amount) == ("Django框架", RelationType.uses, "in", 6.0)
    d = e.to_dict()
    assert d["contributions"][0] == {"neighbour": "Django框架", "relation": "uses", "direction": "in", "amount": 6.0}
    assert d["tier"] == "related"


def test_compacted_concept_reports_when() -> None:
    when = datetime(2024, 12, 1, tzinfo=UTC)
    g = graph([node("a", 1), node("old", tier=Tier.compacted, compacted_at=when)], [])
    r = rank(g, REF)
    e = explain_concept(g, r, None, "old")  # no plan: the stored tier is reported
    assert e.compacted and e.compacted_at == when and e.tier is Tier.compacted
    assert e.to_dict()["compacted_at"] == when.isoformat()


def test_mentions_stance_evidence() -> None:
    g = graph([node("a", 2, 1, stance=Stance.confused, evidence=("t1", "t4"), sessions=("s1",))], [])
    r = rank(g, REF)
    e = explain_concept(g, r, plan_compaction(g, r, CompactionConfig()).tiers, "a")
    assert (e.user_mentions, e.assistant_mentions, e.sessions, e.evidence) == (2, 1, ("s1",), ("t1", "t4"))
    assert e.stance is Stance.confused
    # (2 + 0.3) × 10 × 1.3 = 29.9
    assert e.initial == pytest.approx(29.9)
    assert e.tier is Tier.core
    # The store adds spans and stance history.
    e2 = dataclasses.replace(e, spans=({"turn_id": "t1", "start": 0, "end": 1},))
    assert e2.to_dict()["spans"][0]["turn_id"] == "t1"


def test_pagerank_explanation_and_unknown_key() -> None:
    g = worked_example()
    r = rank(g, RankingConfig())
    e = explain_concept(g, r, None, "SQL基础")
    assert e.ranker == "pagerank"
    assert e.contributions[0].neighbour == "SQLAlchemy"
    assert e.initial + e.propagated == pytest.approx(e.final)
    with pytest.raises(NotFound):
        explain_concept(g, r, None, "nope")
