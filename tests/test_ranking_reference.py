"""The reference ranker: golden numbers derived by hand in the comments."""

from __future__ import annotations

import pytest

from graphmem.compaction import CompactionConfig, assign_tiers, plan_compaction
from graphmem.models import ConceptNode, RelationType, Stance, Tier
from graphmem.ranking import Contribution, RankingConfig, rank, typed_pairs
from graphmem.settings import Settings
from tests.pure_graphs import NOW, PART, REL, P, R, U, graph, node, worked_example

REF = RankingConfig(method="reference")


def test_worked_example_reproduces_exactly() -> None:
    r = rank(worked_example(), REF)
    # initial = mentions × 10: Python基础 1×10 = 10, Django框架 1×10 = 10, the others 0.
    assert [r[k].initial for k in ("Python基础", "Django框架", "SQLAlchemy", "SQL基础")] == [10, 10, 0, 0]
    # Python基础: neighbour Django框架 (10) over prerequisite 0.8 -> 8; final 10 + 8 = 18.
    assert (r["Python基础"].propagated, r["Python基础"].final) == (8, 18)
    # Django框架: Python基础 10 × 0.8 = 8, plus SQLAlchemy 0 × 0.6 = 0 -> 8; final 18.
    assert (r["Django框架"].propagated, r["Django框架"].final) == (8, 18)
    # SQLAlchemy: Django框架 10 × 0.6 = 6, plus SQL基础 0 × 0.7 = 0 -> 6; final 6 (>= 5: survives).
    assert (r["SQLAlchemy"].propagated, r["SQLAlchemy"].final) == (6, 6)
    # SQL基础: SQLAlchemy's *initial* 0 × 0.7 = 0 (one step, initial weights) -> 0 (< 5: compacted).
    assert (r["SQL基础"].propagated, r["SQL基础"].final) == (0, 0)

    plan = plan_compaction(worked_example(), r, CompactionConfig())
    assert plan.core == ("Django框架", "Python基础")  # tie at 18 broken by name
    assert plan.related == ("SQLAlchemy",)
    assert plan.compacted == ("SQL基础",)
    [folded] = plan.related_to_core_topics
    assert (folded.key, folded.weight, folded.attached_to) == ("SQL基础", 0, ("Django框架",))


def test_contributions_name_the_propagation_path() -> None:
    r = rank(worked_example(), REF)
    assert r["Django框架"].contributions == (
        Contribution("Python基础", RelationType.prerequisite, "in", 8.0),
        Contribution("SQLAlchemy", RelationType.uses, "out", 0.0),
    )
    assert r["SQLAlchemy"].contributions[0] == Contribution("Django框架", RelationType.uses, "in", 6.0)


def test_direction_does_not_matter() -> None:
    forward = graph([node("a", 1), node("b")], [("a", U, "b")])
    backward = graph([node("a", 1), node("b")], [("b", U, "a")])
    f, b = rank(forward, REF), rank(backward, REF)
    # b receives 10 × 0.6 = 6 whichever way the edge points.
    assert f["b"].final == b["b"].final == 6
    assert f["a"].final == b["a"].final == 10


def test_parallel_edges_same_type_count_once_distinct_types_each_count() -> None:
    g = graph(
        [node("a", 1), node("b")],
        # a-related_to-b twice (once each way: related_to is symmetric, one fact) and a-part_of-b:
        # related_to counted once (0.3), part_of once (0.5).
        [("a", REL, "b"), ("b", REL, "a"), ("a", PART, "b")],
    )
    assert len(typed_pairs(g)) == 2
    assert rank(g, REF)["b"].final == pytest.approx(10 * 0.3 + 10 * 0.5)  # 8


def test_mutual_directed_pairs_are_two_facts_and_both_count() -> None:
    # a -prerequisite-> b and b -prerequisite-> a: the data says each is learned before the other
    # (a 2-cycle). Two channels, not one: b receives 10 × 0.8 twice (hand-computed: 16).
    g = graph([node("a", 1), node("b")], [("a", P, "b"), ("b", P, "a")])
    assert sorted(typed_pairs(g)) == [("a", "b", P), ("b", "a", P)]
    assert rank(g, REF)["b"].final == pytest.approx(16)
    # The same for uses: a-uses-b and b-uses-a are two channels (2 × 6 = 12).
    g = graph([node("a", 1), node("b")], [("a", U, "b"), ("b", U, "a")])
    assert len(typed_pairs(g)) == 2 and rank(g, REF)["b"].final == pytest.approx(12)


def test_catalog_and_user_copies_of_one_edge_count_once() -> None:
    from graphmem.models import ConceptEdge, UserGraph

    base = graph([node("a", 1), node("b")], [])
    g = UserGraph(
        "t", "u", base.concepts, (ConceptEdge("a", "b", U, "catalog"), ConceptEdge("a", "b", U, "user")), now=NOW
    )
    assert rank(g, REF)["b"].final == 6


def test_one_fresh_mention_is_exactly_ten() -> None:
    g = graph([node("a", 1)], [])
    assert rank(g, REF)["a"].initial == 10.0
    with_times = graph([node("a", mention_times=(NOW.timestamp(),), mention_roles=("user",))], [])
    assert rank(with_times, REF)["a"].initial == 10.0


def test_assistant_mentions_count_at_the_configured_fraction() -> None:
    # 2 assistant mentions × 0.3 × 10 = 6; system/tool mentions count 0.
    g = graph([node("a", 0, 2)], [])
    assert rank(g, REF)["a"].initial == pytest.approx(6.0)
    t = NOW.timestamp()
    g2 = graph([node("a", mention_times=(t, t, t, t), mention_roles=("user", "assistant", "system", "tool"))], [])
    assert rank(g2, REF)["a"].initial == pytest.approx(10 + 3)
    assert rank(g2, REF)["a"].user_initial == pytest.approx(10)
    cfg = RankingConfig(method="reference", assistant_mention_fraction=0.5)
    assert rank(g, cfg)["a"].initial == pytest.approx(10.0)


@pytest.mark.parametrize(
    ("stance", "expected"),
    [(None, 10.0), (Stance.interested, 15.0), (Stance.confused, 13.0), (Stance.knows, 7.0), (Stance.dislikes, 5.0)],
)
def test_stance_multipliers(stance: Stance | None, expected: float) -> None:
    # One mention (10) × the default multiplier: interested 1.5, confused 1.3, knows 0.7, dislikes 0.5.
    r = rank(graph([node("a", 1, stance=stance)], []), REF)
    assert r["a"].initial == pytest.approx(expected)
    assert r["a"].user_initial == 10.0  # "has the user shown it" ignores stance


def test_recency_half_life() -> None:
    half_life_s = 30 * 86_400
    # A mention exactly one half-life (30 days) old counts 10 × 0.5 = 5.
    one = graph([node("a", mention_times=(NOW.timestamp() - half_life_s,), mention_roles=("user",))], [])
    assert rank(one, REF)["a"].initial == 5.0
    # Two half-lives: 2.5; mixed: fresh 10 + old 5 = 15.
    two = graph([node("a", mention_times=(NOW.timestamp() - 2 * half_life_s,), mention_roles=("user",))], [])
    assert rank(two, REF)["a"].initial == 2.5
    mixed = graph(
        [node("a", mention_times=(NOW.timestamp(), NOW.timestamp() - half_life_s), mention_roles=("user", "user"))], []
    )
    assert rank(mixed, REF)["a"].initial == 15.0
    # Fallback without mention_times: counts decayed by the age of last_seen.
    from datetime import timedelta

    counted = graph([ConceptNode("a", "a", user_mentions=2, last_seen=NOW - timedelta(days=30))], [])
    assert rank(counted, REF)["a"].initial == 10.0
    # Decay disabled.
    assert rank(one, RankingConfig(method="reference", recency_half_life_days=None))["a"].initial == 10.0


def test_disliked_concept_is_never_core_and_is_avoided() -> None:
    g = graph([node("a", 5, stance=Stance.dislikes), node("b", 1)], [("a", REL, "b")])
    r = rank(g, REF)
    # a: 5 mentions × 10 × 0.5 = 25 (+ 10 × 0.3 = 3) -> 28, the heaviest, but disliked.
    assert r["a"].final == pytest.approx(28)
    plan = plan_compaction(g, r, CompactionConfig())
    assert plan.tiers["a"] is Tier.related
    assert plan.core == ("b",)
    assert plan.avoid == ("a",)


def test_core_needs_a_user_mention_but_is_never_empty() -> None:
    # Only assistant mentions: 4 × 0.3 × 10 = 12 and 2 × 0.3 × 10 = 6 both survive; no
    # user-mentioned survivor -> the heaviest survivors (up to core_size) become core.
    g = graph([node("a", 0, 4), node("b", 0, 2), node("c", 0, 1)], [])
    tiers = assign_tiers(g, rank(g, REF), CompactionConfig())
    assert tiers == {"a": Tier.core, "b": Tier.core, "c": Tier.compacted}  # c: 3 < 5
    assert assign_tiers(g, rank(g, REF), CompactionConfig(core_size=1)) == {
        "a": Tier.core,
        "b": Tier.related,
        "c": Tier.compacted,
    }


def test_unknown_endpoints_and_self_loops_are_ignored() -> None:
    g = graph([node("a", 1)], [("a", U, "a"), ("a", U, "ghost")])
    assert typed_pairs(g) == []
    assert rank(g, REF)["a"].final == 10


def test_config_from_settings() -> None:
    s = Settings(ranker="reference", threshold=5, edge_weights={"prerequisite": 1.0, "uses": 0.6})
    cfg = RankingConfig.from_settings(s)
    assert cfg.method == "reference"
    assert cfg.edge_weight(RelationType.prerequisite) == 1.0
    assert cfg.edge_weight(RelationType.requires) == 0.0
    with pytest.raises(ValueError):
        RankingConfig(method="bogus")  # type: ignore[arg-type]


def test_no_edges_or_mentions() -> None:
    g = graph([node("a"), node("b")], [("a", R, "b")])
    for method in ("reference", "pagerank"):
        r = rank(g, RankingConfig(method=method))  # type: ignore[arg-type]
        assert r.weight("a") == r.weight("b") == 0.0
