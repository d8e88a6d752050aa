"""Quality floors of the user model on real data (eval/ protocols, small deterministic subsets).

Each test runs one protocol of eval/run_all.py on a fixed, seeded subset against
the real Neo4j (the `store` fixture makes sure it is up) and the shared data
(`shared_data`). The protocols write only into their own `eval-*` tenants and
drop them afterwards. Floors sit slightly below the figures measured on these
subsets, so a regression in extraction, ranking or selection fails the suite.
Full figures: `python -m eval.run_all` (eval/results/QUALITY.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eval import bridge_eval, gaps_eval, kdconv_eval, prereq_eval

# Measured on these subsets when the floors were set: gaps d1/d2 F1 1.0/1.0;
# prereq precision 0.89 (200 concepts); Bridge Hit@3 0.175 (c_h+c_r) / 0.225 (c_h) (0.125 / 0.175
# before arithmetic operations became skills);
# KdConv recall 0.875, precision 0.32 (0.70 / 0.24 before the Chinese name rules, 0.80 before the
# sentence frames and coreference).
FLOORS = {
    "gap_f1_depth1": 0.95,
    "gap_f1_depth2": 0.95,
    "prereq_precision": 0.7,
    "prereq_judged_edges": 8,
    "bridge_hit3": 0.15,
    "bridge_hit3_ch": 0.2,
    "kdconv_recall": 0.84,
    "kdconv_precision": 0.28,
}


# The data first: without it the test is skipped before anything starts Neo4j.
@pytest.fixture(autouse=True)
def _data(shared_data: Path, store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_SHARED_DATA", str(shared_data))


def test_knowledge_gaps_against_metacademy_prerequisites() -> None:
    res = gaps_eval.run(limit=15, verbose=False)
    assert res["learners"] == 15
    assert res["depth1"]["f1"] >= FLOORS["gap_f1_depth1"], res
    assert res["depth2"]["f1"] >= FLOORS["gap_f1_depth2"], res
    assert res["depth2"]["not_ancestor_share"] == 0.0, res


def test_prerequisite_edges_without_catalog() -> None:
    res = prereq_eval.run(limit=200, verbose=False)
    assert res["judged_edges"] >= FLOORS["prereq_judged_edges"], res
    assert res["precision"] >= FLOORS["prereq_precision"], res
    assert res["concept_recall"] >= 0.6, res


def test_bridge_core_topics() -> None:
    res = bridge_eval.run(limit=40, verbose=False, splits=("validation",))
    assert res["c_h+c_r"]["scored"] == 40
    assert res["c_h+c_r"]["hit_at_3"] >= FLOORS["bridge_hit3"], res
    assert res["c_h"]["hit_at_3"] >= FLOORS["bridge_hit3_ch"], res
    assert res["c_h+c_r"]["junk_per_turn"] <= 0.03, res


def test_kdconv_entity_recall_and_precision() -> None:
    res = kdconv_eval.run(per_domain=8, verbose=False)
    assert res["gold_entities"] >= 50
    assert res["entity_recall"] >= FLOORS["kdconv_recall"], res
    assert res["precision"] >= FLOORS["kdconv_precision"], res
