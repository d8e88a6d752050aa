"""Learner.fit's bookkeeping and the as-of cut, with hand-derived expectations (no database).

``fit`` runs against a stand-in for the store: the attempts it reads and the fit it stores are
plain lists, so what is fitted, what is skipped and why, and the report are checked by hand.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from graphmem.learner import KTFitRequest, Learner, graph_as_of
from graphmem.models import ConceptEdge, ConceptNode, RelationType, Stance, UserGraph
from graphmem.settings import Settings

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


class FitStore:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.stored: list[tuple[list[dict[str, Any]], dict[str, Any], str]] = []

    def catalog_version(self, tenant: str) -> int:
        return 0

    def get_catalog(self, tenant: str) -> tuple[None, int]:
        return None, 0

    def kt_attempts(self, tenant: str) -> list[dict[str, Any]]:
        return self.rows

    def store_kt_fit(self, tenant: str, rows: list[dict[str, Any]], report: dict[str, Any], method: str) -> int:
        self.stored.append((rows, report, method))
        return 7


def learner(rows: list[dict[str, Any]]) -> tuple[Learner, FitStore]:
    store = FitStore(rows)
    memory = SimpleNamespace(settings=Settings(kt_min_attempts=4), store=store, user=lambda tenant, uid: None)
    return Learner(memory), store  # type: ignore[arg-type]


def answers(key: str, user: str, seq: str) -> list[dict[str, Any]]:
    return [{"key": key, "user_id": user, "correct": ch == "1"} for ch in seq]


ROWS = (
    answers("mixed", "u1", "0011")
    + answers("mixed", "u2", "011")  # 7 answers over 2 learners, both kinds: fitted
    + answers("right", "u1", "11111")  # 5 answers, all right: skipped
    + answers("few", "u1", "01")  # 2 < min_attempts 4: skipped
)


def test_fit_reports_fitted_and_skipped_concepts_in_key_order() -> None:
    ln, store = learner(ROWS)
    out = ln.fit("t", KTFitRequest(num_fits=1))
    assert [f["concept"] for f in out["fitted"]] == ["mixed"]
    fitted = out["fitted"][0]
    assert fitted["key"] == "mixed" and fitted["attempts"] == 7 and fitted["learners"] == 2
    assert set(fitted["bkt"]) == {"prior", "learn", "guess", "slip", "forget"}
    assert out["skipped"] == [
        {"concept": "few", "attempts": 2, "reason": "fewer than 4 attempts"},
        {"concept": "right", "attempts": 5, "reason": "all answers are right, or all wrong"},
    ]
    assert {k: out[k] for k in ("tenant", "version", "method", "num_fits", "min_attempts", "seed")} == {
        "tenant": "t",
        "version": 7,
        "method": "pyBKT EM",
        "num_fits": 1,
        "min_attempts": 4,
        "seed": 0,
    }
    assert (out["concepts_fitted"], out["concepts_skipped"], out["attempts"]) == (1, 2, 7)
    assert set(out["defaults"]) == {"prior", "learn", "guess", "slip", "forget"}
    (rows, report, method) = store.stored[0]
    assert rows == out["fitted"] and method == "pyBKT EM"
    assert report == {k: out[k] for k in report} and "fitted" not in report


def test_fit_of_named_concepts_reports_the_unattempted_and_stores_nothing_without_a_fit() -> None:
    ln, store = learner(ROWS)
    out = ln.fit("t", KTFitRequest(concepts=["few", "zeta", "alpha"], min_attempts=3, forgets=True, seed=5))
    assert out["fitted"] == [] and out["version"] is None and store.stored == []
    assert out["method"] == "pyBKT EM with forgetting" and out["num_fits"] == 3 and out["seed"] == 5
    assert out["skipped"] == [
        {"concept": "few", "attempts": 2, "reason": "fewer than 3 attempts"},
        {"concept": "alpha", "attempts": 0, "reason": "no attempts"},
        {"concept": "zeta", "attempts": 0, "reason": "no attempts"},
    ]
    assert (out["concepts_fitted"], out["concepts_skipped"], out["attempts"]) == (0, 3, 0)


def ms(t: datetime) -> int:
    return int(t.timestamp() * 1000)


def test_graph_as_of_keeps_what_was_known_then() -> None:
    day = timedelta(days=1)
    graph = UserGraph(
        "t",
        "u",
        {
            # user, assistant, user mentions on days 0, 1, 3; cut on day 2
            "a": ConceptNode(
                "a",
                "A",
                user_mentions=2,
                assistant_mentions=1,
                mention_times=(T0.timestamp(), (T0 + day).timestamp(), (T0 + 3 * day).timestamp()),
                mention_roles=("user", "assistant", "user"),
                first_seen=T0,
                last_seen=T0 + 3 * day,
                stance=Stance.dislikes,
                mastery=0.9,
                mastery_attempts=5,
            ),
            # roles not stored for every mention: none are kept
            "b": ConceptNode("b", "B", user_mentions=1, mention_times=(T0.timestamp(),), mention_roles=()),
            # first seen after the cut, only a stance from before it
            "c": ConceptNode(
                "c", "C", user_mentions=1, mention_times=((T0 + 3 * day).timestamp(),), first_seen=T0 + 3 * day
            ),
            # a catalog concept nobody mentioned stays as a neighbour; a user concept of later leaves
            "cat": ConceptNode("cat", "Cat", in_catalog=True, mastery=0.5),
            "late": ConceptNode("late", "Late", mention_times=((T0 + 3 * day).timestamp(),), mention_roles=("user",)),
        },
        (
            ConceptEdge("a", "cat", RelationType.prerequisite),
            ConceptEdge("a", "late", RelationType.related_to, "user"),
        ),
        now=T0 + 4 * day,
    )
    as_of = T0 + 2 * day
    stances = {"a": {"stance": "knows", "stance_ms": ms(T0)}, "c": {"stance": None, "stance_ms": ms(T0)}}
    mastery = {
        "a": {"mastery": 0.4, "attempts": 2, "correct": 1, "last_ms": ms(T0 + day)},
        "c": {"mastery": 0.2, "attempts": 1, "correct": 0, "last_ms": ms(T0)},
        "cat": {"mastery": None, "attempts": 1, "correct": 1, "last_ms": ms(T0)},
    }
    cut = graph_as_of(graph, as_of, stances, mastery)
    assert list(cut.concepts) == ["a", "b", "c", "cat"] and cut.now == as_of
    assert cut.edges == (ConceptEdge("a", "cat", RelationType.prerequisite),)
    a, b, c, cat = (cut.concepts[k] for k in ("a", "b", "c", "cat"))
    assert a == replace(
        graph.concepts["a"],
        mention_times=(T0.timestamp(), (T0 + day).timestamp()),
        mention_roles=("user", "assistant"),
        user_mentions=1,
        assistant_mentions=1,
        stance=Stance.knows,
        stance_at=T0,
        mastery=0.4,
        mastery_attempts=2,
        mastery_correct=1,
        mastery_at=T0 + day,
        first_seen=T0,
        last_seen=T0 + day,
    )
    assert b.mention_times == (T0.timestamp(),) and b.mention_roles == () and b.user_mentions == 0
    assert b.last_seen == T0 and b.first_seen is None and b.stance is None and b.mastery is None
    assert c.mention_times == () and c.last_seen is None and c.first_seen is None
    assert c.stance is None and c.stance_at == T0 and c.mastery == pytest.approx(0.2) and c.mastery_at == T0
    assert cat.mastery is None and cat.mastery_attempts == 1 and cat.mastery_correct == 1 and cat.mastery_at == T0
