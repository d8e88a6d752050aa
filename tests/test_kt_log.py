"""The knowledge-tracing evaluation on a real log's format (issue 18): ``eval.kt_eval --log FILE``.

No public tutoring log is reachable here, so the log is written by the test in the ASSISTments
skill-builder layout (one attempt per row, extra columns, rows out of order, rows pyBKT skips) from a
simulated population, and the loader must give back exactly the simulated answer sequences.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

from eval.kt_eval import evaluate, load_log, simulate


def _write_log(path: Path, seed: int = 5) -> dict[str, dict[str, list[bool]]]:
    pop = simulate("log", 2, 60, False, seed)
    rows = []
    order = 0
    for learner, by_concept in pop.answers.items():
        for concept, seq in by_concept.items():
            for correct in seq:
                order += 1
                rows.append({"order_id": order, "user_id": learner, "skill_name": concept, "correct": int(correct)})
    random.Random(seed).shuffle(rows)  # a log is not sorted by learner; order_id carries the time order
    rows.append({"order_id": order + 1, "user_id": "x", "skill_name": "", "correct": 1})  # no skill: skipped
    rows.append({"order_id": order + 2, "user_id": "x", "skill_name": "log-c00", "correct": 2})  # not 0/1: skipped
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.DictWriter(fh, fieldnames=["order_id", "assignment_id", "user_id", "skill_name", "correct"])
        out.writeheader()
        for r in rows:
            out.writerow({**r, "assignment_id": 7})
    return pop.answers


def test_a_log_is_read_back_in_time_order_per_learner_and_skill(tmp_path: Path) -> None:
    answers = _write_log(tmp_path / "skill_builder.csv")
    pop = load_log(tmp_path / "skill_builder.csv")
    assert not pop.simulated and set(pop.concepts) == {"log-c00", "log-c01"}
    assert pop.answers == answers  # learner "x" had only skipped rows


def test_fitted_bkt_beats_the_majority_baseline_on_held_back_learners(tmp_path: Path) -> None:
    _write_log(tmp_path / "skill_builder.csv")
    report = evaluate(load_log(tmp_path / "skill_builder.csv"), num_fits=1, seed=3)
    rows = report["rows"]
    assert "bkt_true_params" not in rows and report["parameter_mae"] == {}  # unknown on a real log
    assert rows["bkt_fitted"]["auc"] > rows["majority"]["auc"] + 0.05, rows
