"""The pure compaction decision."""

from __future__ import annotations

import pytest

from graphmem.compaction import CompactionConfig, compaction_due, compaction_ratio, plan_compaction
from graphmem.errors import CriticalCompressionFailure
from graphmem.models import Stance, Tier
from graphmem.ranking import RankingConfig, rank
from graphmem.settings import Settings
from graphmem.tokens import TokenCounter
from tests.pure_graphs import REL, U, graph, node, worked_example

REF = RankingConfig(method="reference")
CFG = CompactionConfig()


def _edge_weight_graph(weight_of_b: float):
    # b has no mentions; it receives exactly a's 10 × edge weight.
    cfg = RankingConfig(method="reference", edge_weights={"related_to": weight_of_b})
    g = graph([node("a", 1), node("b")], [("a", REL, "b")])
    return g, rank(g, cfg)


def test_threshold_is_at_or_above() -> None:
    g, r = _edge_weight_graph(0.5)  # b = 10 × 0.5 = 5.0 exactly
    assert r.weight("b") == 5.0
    assert plan_compaction(g, r, CFG).tiers["b"] is Tier.related
    g, r = _edge_weight_graph(0.4999)  # 4.999 < 5
    assert plan_compaction(g, r, CFG).tiers["b"] is Tier.compacted


def test_folding_into_related_to_core_topics() -> None:
    # core a -uses-> x -uses-> y; z is isolated. x = 6 survives; y and z fold.
    g = graph([node("a", 1), node("x"), node("y"), node("z")], [("a", U, "x"), ("x", U, "y")])
    plan = plan_compaction(g, rank(g, REF), CFG)
    assert plan.core == ("a",) and plan.related == ("x",)
    assert plan.compacted == ("y", "z")
    summary = {c.key: c for c in plan.related_to_core_topics}
    assert summary["y"].attached_to == ("a",)  # two hops from core a
    assert summary["z"].attached_to == ()  # not connected to any core topic
    assert summary["y"].to_dict() == {"key": "y", "name": "y", "weight": 0.0, "attached_to": ["a"]}
    assert (plan.concepts_total, plan.concepts_before, plan.concepts_after) == (4, 4, 2)
    assert plan.newly_compacted == ("y", "z")


def test_attached_to_lists_every_nearest_core_topic() -> None:
    g = graph(
        [node("a", 1), node("b", 1), node("m"), node("far")], [("a", REL, "m"), ("b", REL, "m"), ("m", REL, "far")]
    )
    plan = plan_compaction(g, rank(g, REF), CFG)
    # m: 3 + 3 = 6 survives; far: 0 -> folded, attached to both a and b (two hops each).
    assert plan.compacted == ("far",)
    assert set(plan.related_to_core_topics[0].attached_to) == {"a", "b"}


def test_restore_when_back_above_threshold() -> None:
    g = graph([node("a", 1, tier=Tier.compacted), node("b", tier=Tier.compacted), node("c", tier=Tier.related)], [])
    plan = plan_compaction(g, rank(g, REF), CFG)
    assert plan.restored == {"a": Tier.core}  # a (10) is back; b (0) stays compacted
    assert plan.newly_compacted == ("c",)  # c was related, now 0
    assert plan.concepts_before == 1  # only c was active before the run


def test_critical_concept_raises() -> None:
    g = graph([node("a", 1), node("must", critical=True)], [])
    with pytest.raises(CriticalCompressionFailure) as err:
        plan_compaction(g, rank(g, REF), CFG)
    assert err.value.code == "CRITICAL_COMPRESSION_FAILURE" and "must" in err.value.message
    g2 = graph([node("a", 1), node("must")], [])
    with pytest.raises(CriticalCompressionFailure):
        plan_compaction(g2, rank(g2, REF), CFG, critical_keys=["must"])
    # A surviving critical concept is fine.
    g3 = graph([node("a", 1, critical=True)], [])
    assert plan_compaction(g3, rank(g3, REF), CFG).core == ("a",)


def test_critical_stance_raises() -> None:
    # An assistant-only mention of a confusing topic: 1 × 0.3 × 10 × 1.3 = 3.9 < 5.
    g = graph([node("a", 1), node("hard", 0, 1, stance=Stance.confused)], [])
    r = rank(g, REF)
    assert r.weight("hard") == pytest.approx(3.9)
    plan_compaction(g, r, CFG)  # no policy: folds quietly
    with pytest.raises(CriticalCompressionFailure):
        plan_compaction(g, r, CFG, critical_stances=["confused"])
    with pytest.raises(CriticalCompressionFailure):
        plan_compaction(g, r, CompactionConfig(critical_stances=frozenset({Stance.confused})))


@pytest.mark.parametrize(
    ("history", "block", "warn"),
    [(1000, 150, None), (1000, 250, None), (1000, 149, "below"), (1000, 251, "above"), (0, 10, None)],
)
def test_ratio_warning_outside_window(history: int, block: int, warn: str | None) -> None:
    ratio, warning = compaction_ratio(history, block, CFG)
    if history == 0:
        assert ratio is None and warning is None
        return
    assert ratio == block / history
    assert (warning is None) if warn is None else (warn in (warning or ""))


def test_plan_measures_block_tokens_with_counter() -> None:
    g = worked_example(history_tokens=1000)
    plan = plan_compaction(g, rank(g, REF), CFG, counter=TokenCounter())
    assert plan.block_tokens is not None and plan.block_tokens > 0
    assert plan.ratio == plan.block_tokens / 1000
    assert plan.warning is not None and "below" in plan.warning  # a 4-concept block is tiny vs 1000 tokens
    record = plan.run_record()
    assert record["concepts_after"] == 3 and record["compacted"] == 1
    explicit = plan_compaction(g, rank(g, REF), CFG, block_tokens=200)
    assert explicit.ratio == 0.2 and explicit.warning is None


def test_auto_compaction_due() -> None:
    cfg = CompactionConfig(auto_compact_concepts=3)
    small = graph([node(f"c{i}") for i in range(3)], [])
    big = graph([node(f"c{i}") for i in range(4)], [])
    folded = graph([node(f"c{i}", tier=Tier.compacted if i else None) for i in range(4)], [])
    assert not compaction_due(small, cfg)
    assert compaction_due(big, cfg)
    assert not compaction_due(folded, cfg)  # compacted concepts do not count
    assert plan_compaction(big, rank(big, REF), cfg).auto_due


def test_core_size_limits_core() -> None:
    g = graph([node(f"c{i}", i + 1) for i in range(7)], [])
    plan = plan_compaction(g, rank(g, REF), CompactionConfig(core_size=5))
    assert plan.core == ("c6", "c5", "c4", "c3", "c2")
    assert plan.related == ("c1", "c0")


def test_from_settings() -> None:
    cfg = CompactionConfig.from_settings(Settings(threshold=7, core_size=2), critical_stances=["confused"])
    assert (cfg.threshold, cfg.core_size, cfg.critical_stances) == (7, 2, frozenset({Stance.confused}))
