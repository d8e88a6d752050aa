"""BKT, attempt planning, evidence (stance vs mastery) and the as-of cut: pure, no database."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from graphmem.attempt_plan import AttemptConflict, NewAttempt, StoredAttempt, StoredState, needs_replay, plan_attempts
from graphmem.bkt import BKTParams, MasteryLevels, step, trace
from graphmem.compaction import CompactionConfig, assign_tiers
from graphmem.context import ContextConfig, select_context
from graphmem.evidence import evidence
from graphmem.learner import graph_as_of, stance_timeline
from graphmem.models import ConceptEdge, ConceptNode, RelationType, Stance, UserGraph
from graphmem.ranking import RankingConfig, rank

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
P = BKTParams()


# -- the model --------------------------------------------------------------------------------


def test_one_step_matches_hand_computation():
    # Derived by hand with prior 0.3, learn 0.1, guess 0.2, slip 0.1:
    # P(correct) = 0.3·0.9 + 0.7·0.2 = 0.41.
    # wrong: posterior = 0.3·0.1 / (0.03 + 0.7·0.8) = 0.0508475; then + (1 − 0.0508475)·0.1 = 0.1457627.
    # right: posterior = 0.27 / 0.41 = 0.6585366; then + 0.3414634·0.1 = 0.6926829.
    wrong = step(0.3, False, P)
    right = step(0.3, True, P)
    assert wrong.predicted == pytest.approx(0.41)
    assert wrong.mastery == pytest.approx(0.1457627, abs=1e-6)
    assert right.mastery == pytest.approx(0.6926829, abs=1e-6)
    # With forgetting 0.05: 0.6585366·0.95 + 0.3414634·0.1 = 0.6597561.
    assert step(0.3, True, BKTParams(forget=0.05)).mastery == pytest.approx(0.6597561, abs=1e-6)


def test_trace_four_wrong_is_low_and_eight_right_after_is_mastered():
    levels = MasteryLevels()
    steps = trace([False] * 4, P)
    assert levels.level(steps[-1].mastery, 4) == "low"
    # predicted is P(correct) *before* each attempt: it falls with each wrong answer.
    assert [s.predicted for s in steps] == sorted((s.predicted for s in steps), reverse=True)
    after = trace([True] * 8, P, start=steps[-1].mastery)
    assert levels.level(after[-1].mastery, 12) == "mastered"


@pytest.mark.parametrize("bad", [{"prior": 1.5}, {"learn": -0.1}, {"guess": 0.6, "slip": 0.5}])
def test_invalid_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        BKTParams(**bad)


# -- planning a write ---------------------------------------------------------------------------


def att(i: int, correct: bool, key: str = "la", minutes: int | None = None, item: str | None = None) -> NewAttempt:
    ts = T0 + timedelta(minutes=i if minutes is None else minutes)
    return NewAttempt(f"a{i}", key, key.upper(), "en", correct, ts, item, i)


def test_plan_new_attempts_chain_their_spans_and_close_the_stored_latest():
    stored = StoredState(
        mastery=0.5,
        attempts=3,
        correct=2,
        last_ms=int((T0 - timedelta(hours=1)).timestamp() * 1000),
        last_attempt="old",
    )
    plan = plan_attempts([att(1, True), att(2, False)], {}, {"la": stored}, {"la": P}, {}, 10_000)
    first, second = plan.new_rows
    assert first["predicted"] == pytest.approx(step(0.5, True, P).predicted)
    assert second["predicted"] == pytest.approx(step(first["mastery"], False, P).predicted)
    assert first["closed_by"] == "a2" and second["valid_to"] is None
    assert plan.rewrite_rows == [
        {"attempt_id": "old", "predicted": None, "mastery": None, "valid_to": first["ts"], "closed_by": "a1"}
    ]
    assert plan.mastery_rows[0]["attempts"] == 5 and plan.mastery_rows[0]["correct"] == 3
    assert plan.accepted == ["a1", "a2"] and plan.duplicates == []


def test_duplicate_is_a_noop_and_a_conflict_is_refused():
    existing = {
        "a1": {
            "key": "la",
            "correct": True,
            "ts_ms": att(1, True).ts_ms,
            "item_id": None,
            "predicted": 0.41,
            "mastery": 0.69,
        }
    }
    plan = plan_attempts([att(1, True)], existing, {}, {"la": P}, {}, 0)
    assert plan.duplicates == ["a1"] and plan.new_rows == []
    assert plan.results[0]["predicted"] == 0.41
    with pytest.raises(AttemptConflict) as exc:
        plan_attempts([att(1, False)], existing, {}, {"la": P}, {}, 0)
    assert exc.value.status == 409 and exc.value.code == "ATTEMPT_ID_CONFLICT"
    # Same id twice in one request with different content is a conflict too; same content is one attempt.
    with pytest.raises(AttemptConflict):
        plan_attempts([att(1, True), att(1, False)], {}, {}, {"la": P}, {}, 0)
    twice = plan_attempts([att(1, True), att(1, True)], {}, {}, {"la": P}, {}, 0)
    assert twice.accepted == ["a1"] and twice.duplicates == ["a1"] and len(twice.new_rows) == 1


def test_a_late_attempt_replays_the_concept_in_time_order():
    # Stored: right at +10 min. New: wrong at +5 min. The replay applies wrong, then right.
    last_ms = att(10, True).ts_ms
    states = {
        "la": StoredState(
            mastery=step(0.3, True, P).mastery, attempts=1, correct=1, last_ms=last_ms, last_attempt="a10"
        )
    }
    new = [att(5, False)]
    assert needs_replay(new, states) == ["la"]
    plan = plan_attempts(new, {}, states, {"la": P}, {"la": [StoredAttempt("a10", "la", True, last_ms)]}, 0)
    expected = trace([False, True], P)
    assert plan.replayed == ["la"]
    assert plan.new_rows[0]["mastery"] == pytest.approx(expected[0].mastery)
    assert plan.new_rows[0]["closed_by"] == "a10"
    assert plan.rewrite_rows[0]["attempt_id"] == "a10"
    assert plan.rewrite_rows[0]["predicted"] == pytest.approx(expected[1].predicted)
    assert plan.mastery_rows[0]["mastery"] == pytest.approx(expected[1].mastery)
    assert plan.mastery_rows[0]["last_attempt"] == "a10" and plan.mastery_rows[0]["attempts"] == 2


# -- evidence: the newer of stance and mastery wins ---------------------------------------------------


def node(**kw) -> ConceptNode:
    return ConceptNode(key=kw.pop("key", "la"), name=kw.pop("name", "Linear algebra"), **kw)


def test_mastery_newer_than_confused_stance_wins_and_says_so():
    n = node(
        stance=Stance.confused,
        stance_at=T0,
        mastery=0.97,
        mastery_attempts=12,
        mastery_correct=8,
        mastery_at=T0 + timedelta(days=1),
    )
    ev = evidence(n)
    assert ev.state == "knows" and ev.source == "mastery" and ev.overruled is Stance.confused
    assert "newer than the user saying it confused them" in ev.reason


def test_stance_newer_than_mastery_wins():
    n = node(
        stance=Stance.confused,
        stance_at=T0 + timedelta(days=2),
        mastery=0.97,
        mastery_attempts=12,
        mastery_correct=8,
        mastery_at=T0,
    )
    ev = evidence(n)
    assert ev.state == "struggles" and ev.source == "stance" and "newer than mastery 0.97" in ev.reason


def test_middle_mastery_decides_nothing():
    assert evidence(node(mastery=0.6, mastery_attempts=3, mastery_at=T0)).state is None
    assert evidence(node(mastery=0.1, mastery_attempts=2, mastery_at=T0)).state == "struggles"


# -- gaps with mastery (pure selection) ----------------------------------------------------------


def ml_graph(la: ConceptNode) -> UserGraph:
    ml = ConceptNode(
        key="ml",
        name="Machine learning",
        in_catalog=True,
        user_mentions=1,
        mention_times=(T0.timestamp(),),
        mention_roles=("user",),
    )
    return UserGraph(
        "t",
        "u",
        {"la": la, "ml": ml},
        (ConceptEdge("la", "ml", RelationType.prerequisite),),
        now=T0 + timedelta(days=3),
    )


def gaps_of(graph: UserGraph) -> dict[str, str]:
    ranking = rank(graph, RankingConfig())
    tiers = assign_tiers(graph, ranking, CompactionConfig())
    sel = select_context(graph, ranking, tiers, ["ml"], "learning", ContextConfig())
    return {i.key: i.reason for i in sel.knowledge_gaps}


def test_low_mastery_prerequisite_is_a_gap_with_its_reason_and_mastered_is_not():
    low = node(in_catalog=True, mastery=trace([False] * 4, P)[-1].mastery, mastery_attempts=4, mastery_at=T0)
    gaps = gaps_of(ml_graph(low))
    assert "la" in gaps and "prerequisite of Machine learning" in gaps["la"] and "after 4 graded attempts" in gaps["la"]
    # A user who said "linear algebra confuses me" and then answered eight in a row right: not a gap.
    mastered = node(
        in_catalog=True,
        stance=Stance.confused,
        stance_at=T0,
        user_mentions=1,
        mention_times=(T0.timestamp(),),
        mention_roles=("user",),
        mastery=0.99,
        mastery_attempts=12,
        mastery_correct=8,
        mastery_at=T0 + timedelta(hours=1),
    )
    assert "la" not in gaps_of(ml_graph(mastered))


def test_low_mastery_of_an_unrelated_concept_is_still_a_gap():
    g = ml_graph(node(in_catalog=True))
    other = node(key="stats", name="Statistics", mastery=0.05, mastery_attempts=3, mastery_at=T0)
    g = UserGraph(g.tenant, g.user_id, {**g.concepts, "stats": other}, g.edges, now=g.now)
    assert "mastery 0.05" in gaps_of(g)["stats"]


# -- as of --------------------------------------------------------------------------------------


def test_graph_as_of_cuts_mentions_stances_and_mastery():
    n = node(
        user_mentions=2,
        mention_times=(T0.timestamp(), (T0 + timedelta(days=2)).timestamp()),
        mention_roles=("user", "user"),
        stance=Stance.knows,
        stance_at=T0 + timedelta(days=2),
        mastery=0.99,
        mastery_attempts=12,
        mastery_at=T0 + timedelta(days=2),
    )
    later = node(
        key="late",
        name="Late",
        user_mentions=1,
        mention_times=((T0 + timedelta(days=5)).timestamp(),),
        mention_roles=("user",),
    )
    g = UserGraph("t", "u", {"la": n, "late": later}, (), now=T0 + timedelta(days=6))
    as_of = T0 + timedelta(days=1)
    cut = graph_as_of(
        g,
        as_of,
        {"la": {"stance": "confused", "stance_ms": int(T0.timestamp() * 1000)}},
        {"la": {"mastery": 0.1, "attempts": 4, "correct": 0, "last_ms": int(T0.timestamp() * 1000)}},
    )
    assert set(cut.concepts) == {"la"} and cut.now == as_of
    la = cut.concepts["la"]
    assert la.user_mentions == 1 and la.stance is Stance.confused and la.mastery == 0.1 and la.mastery_attempts == 4


def test_stance_timeline_closes_an_overruled_stance_with_the_attempt():
    n = node(
        stance=Stance.confused,
        stance_at=T0,
        mastery=0.99,
        mastery_attempts=9,
        mastery_correct=8,
        mastery_at=T0 + timedelta(minutes=9),
    )
    stances = [{"turn_id": "t1", "stance": "confused", "ts": T0.isoformat()}]
    masteries = trace([False] + [True] * 8, P)
    attempts = [
        {
            "attempt_id": f"a{i}",
            "ts": (T0 + timedelta(minutes=i + 1)).isoformat(),
            "mastery": s.mastery,
            "valid_to": None,
        }
        for i, s in enumerate(masteries)
    ]
    out = stance_timeline(n, stances, attempts)
    first_mastered = next(a for a in attempts if a["mastery"] >= 0.95)
    assert out["stance_history"][0]["valid_from"] == {"turn_id": "t1", "ts": T0.isoformat()}
    assert out["stance_history"][0]["valid_to"]["attempt_id"] == first_mastered["attempt_id"]
    assert out["knowledge"]["overruled_stance"] == "confused"


# -- fitting with pyBKT ---------------------------------------------------------------------------


def simulate(params: BKTParams, learners: int, length: int, seed: int) -> list[list[bool]]:
    rng = random.Random(seed)
    out = []
    for _ in range(learners):
        known = rng.random() < params.prior
        seq = []
        for _ in range(length):
            seq.append(rng.random() < ((1 - params.slip) if known else params.guess))
            known = (rng.random() >= params.forget) if known else (rng.random() < params.learn)
        out.append(seq)
    return out


def test_pybkt_fit_recovers_simulated_parameters():
    from graphmem.kt_fit import fit_concept

    true = BKTParams(prior=0.2, learn=0.15, guess=0.25, slip=0.1)
    fit = fit_concept(simulate(true, 150, 12, seed=3), num_fits=2, seed=0)
    assert fit.attempts == 1800 and fit.sequences == 150
    # Loose bounds: 1,800 attempts identify learn, guess and slip to a few points.
    assert abs(fit.params.learn - true.learn) < 0.08
    assert abs(fit.params.guess - true.guess) < 0.08
    assert abs(fit.params.slip - true.slip) < 0.08


def test_with_mastery_patches_known_nodes_and_asks_for_a_reload_otherwise():
    from graphmem.learner import with_mastery

    row = {"mastery": 0.97, "attempts": 9, "correct": 8, "last_ts": (T0 + timedelta(days=1)).isoformat()}
    g = ml_graph(node(in_catalog=True, mastery=0.1, mastery_attempts=1, mastery_at=T0))
    patched = with_mastery(g, {"la": row})
    assert patched is not None and patched.concepts["la"].mastery == 0.97
    assert patched.concepts["la"].mastery_at == T0 + timedelta(days=1) and patched.edges == g.edges
    assert with_mastery(g, {"new": row}) is None  # its relations were never loaded
    # A stance whose time this graph does not hold: which evidence is newer is unknown here.
    assert with_mastery(ml_graph(node(stance=Stance.confused)), {"la": row}) is None


def test_block_markers_follow_the_newer_evidence():
    from graphmem.evidence import knowledge_stance

    assert knowledge_stance(node(mastery=0.05, mastery_attempts=3, mastery_at=T0)) is Stance.confused
    overruled = node(
        stance=Stance.confused, stance_at=T0, mastery=0.99, mastery_attempts=9, mastery_at=T0 + timedelta(hours=1)
    )
    assert knowledge_stance(overruled) is None
    assert knowledge_stance(node(stance=Stance.dislikes)) is Stance.dislikes
