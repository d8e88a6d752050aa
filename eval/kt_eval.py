"""Knowledge tracing: next-attempt AUC and parameter recovery on simulated learners (issue 18).

No public knowledge-tracing log is reachable here through a package registry (checked: pyBKT's wheel
ships no data and its ``fetch_dataset`` downloads from a web server; edudata4ai, kt-audit,
masterytrace-cli and ktbench on PyPI ship no tutoring logs), so the evaluation uses simulated
populations whose true BKT parameters are known, drawn per concept:

* ``standard``: prior U(0.05, 0.5), learn U(0.05, 0.3), guess U(0.05, 0.3), slip U(0.03, 0.2), no forgetting;
* ``forgetting``: the same plus forget U(0.05, 0.2) (what "BKT with forgetting" is for).

Every learner answers every concept a U(4, 20) number of times. Learners are split 70 / 30 by learner
(held-back learners): parameters are fitted on the training learners only (pyBKT EM via
:mod:`graphmem.kt_fit`, the code ``POST /v1/kt/fit`` runs), and ``predicted`` — P(correct) before each
attempt, computed by :mod:`graphmem.bkt`, the code ``POST /v1/users/{id}/attempts`` runs — is scored on
every attempt of the held-back learners. Compared: the per-concept majority baseline (the training
correct rate of the concept, as a probability), BKT with graphmem's default parameters (no fit), fitted
BKT, fitted BKT with forgetting, and the true parameters (the ceiling). Parameter recovery: mean
absolute error of the fitted parameters against the true ones.

``--store`` (on by default, off with ``--quick``) repeats the fitted-BKT row end to end through the
service and the real Neo4j: training attempts are recorded with ``learner.record``, fitted with
``learner.fit`` (stored on the concepts), and the held-back learners' attempts are recorded, scoring
the ``predicted`` the service returned.

``--log FILE`` runs the same split, fits and baselines on a real tutoring log instead (CSV, one attempt per
row, the ASSISTments skill-builder columns ``user_id, skill_name, correct, order_id`` by default,
``--columns`` for others; no true parameters, so no recovery row) and writes ``eval/results/kt_log.{json,md}``:
drop a public log into ``../shared/data`` and the held-out AUC of issue 18 is one command.

    PYTHONPATH=. .venv/bin/python -m eval.kt_eval [--quick] [--no-store]
    PYTHONPATH=. .venv/bin/python -m eval.kt_eval --log ../shared/data/assistments/skill_builder.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from eval.common import REPO, eval_tenant, make_memory, r4
from graphmem.bkt import BKTParams, trace
from graphmem.kt_fit import fit_concept

RESULTS = REPO / "eval" / "results"
T0 = datetime(2026, 6, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Population:
    name: str
    concepts: dict[str, BKTParams | None]  # true parameters (None: a real log, where they are unknown)
    # learner -> concept -> answers (in time order); a learner of a real log answers only some concepts
    answers: dict[str, dict[str, list[bool]]]

    @property
    def simulated(self) -> bool:
        return all(p is not None for p in self.concepts.values())


# The column names of the ASSISTments skill-builder logs (and of pyBKT's examples): one row per attempt.
LOG_COLUMNS = ("user_id", "skill_name", "correct", "order_id")


def load_log(path: Path, columns: tuple[str, str, str, str] = LOG_COLUMNS, min_learners: int = 10) -> Population:
    """A real tutoring log (CSV, one attempt per row) as a population without known parameters.

    Rows without a skill or with a ``correct`` other than 0/1 are skipped (as pyBKT does); each learner's
    attempts on a skill are put in ``order`` order; skills answered by fewer than ``min_learners``
    learners are dropped (too little to fit).
    """
    user_col, skill_col, correct_col, order_col = columns
    rows: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    with path.open(encoding="utf-8", errors="replace", newline="") as fh:
        for row in csv.DictReader(fh):
            skill, correct = (row.get(skill_col) or "").strip(), (row.get(correct_col) or "").strip()
            if not skill or correct not in ("0", "1", "0.0", "1.0"):
                continue
            order = float(row.get(order_col) or 0)
            rows.setdefault((row[user_col], skill), []).append((order, correct.startswith("1")))
    learners_of: dict[str, int] = {}
    for _, skill in rows:
        learners_of[skill] = learners_of.get(skill, 0) + 1
    kept = {s for s, n in learners_of.items() if n >= min_learners}
    answers: dict[str, dict[str, list[bool]]] = {}
    for (user, skill), seq in rows.items():
        if skill in kept:
            answers.setdefault(user, {})[skill] = [c for _, c in sorted(seq, key=lambda t: t[0])]
    return Population(path.stem, dict.fromkeys(sorted(kept)), answers)


def draw_params(rng: random.Random, forgetting: bool) -> BKTParams:
    return BKTParams(
        prior=rng.uniform(0.05, 0.5),
        learn=rng.uniform(0.05, 0.3),
        guess=rng.uniform(0.05, 0.3),
        slip=rng.uniform(0.03, 0.2),
        forget=rng.uniform(0.05, 0.2) if forgetting else 0.0,
    )


def simulate(name: str, n_concepts: int, n_learners: int, forgetting: bool, seed: int) -> Population:
    rng = random.Random(seed)
    truth = {f"{name}-c{i:02d}": draw_params(rng, forgetting) for i in range(n_concepts)}
    answers: dict[str, dict[str, list[bool]]] = {}
    for li in range(n_learners):
        learner = f"{name}-l{li:04d}"
        answers[learner] = {}
        for c, p in truth.items():
            known = rng.random() < p.prior
            seq = []
            for _ in range(rng.randint(4, 20)):
                seq.append(rng.random() < ((1 - p.slip) if known else p.guess))
                known = (rng.random() >= p.forget) if known else (rng.random() < p.learn)
            answers[learner][c] = seq
    concepts: dict[str, BKTParams | None] = dict(truth)
    return Population(name, concepts, answers)


def split(pop: Population, seed: int) -> tuple[list[str], list[str]]:
    learners = sorted(pop.answers)
    random.Random(seed).shuffle(learners)
    cut = int(len(learners) * 0.7)
    return sorted(learners[:cut]), sorted(learners[cut:])


def auc(y: list[bool], p: list[float]) -> float:
    return float(roc_auc_score(np.array(y, dtype=int), np.array(p)))


def score(pop: Population, test: list[str], params: dict[str, BKTParams]) -> tuple[list[bool], list[float]]:
    """Every held-back attempt with ``predicted`` (P(correct) before it) under ``params``."""
    y: list[bool] = []
    p: list[float] = []
    for learner in test:
        for c, seq in pop.answers[learner].items():
            y.extend(seq)
            p.extend(s.predicted for s in trace(seq, params[c]))
    return y, p


def evaluate(pop: Population, num_fits: int, seed: int) -> dict[str, Any]:
    train, test = split(pop, seed)
    rows: dict[str, dict[str, Any]] = {}
    # Per-concept majority baseline: the concept's training correct rate as the prediction.
    seen = {c: [float(x) for l in train for x in pop.answers[l].get(c, [])] for c in pop.concepts}
    rate = {c: float(np.mean(xs)) if xs else 0.5 for c, xs in seen.items()}
    y: list[bool] = []
    base: list[float] = []
    for learner in test:
        for c, seq in pop.answers[learner].items():
            y.extend(seq)
            base.extend([rate[c]] * len(seq))
    rows["majority"] = {"auc": r4(auc(y, base)), "accuracy": r4(np.mean([(b >= 0.5) == t for b, t in zip(base, y)]))}

    def bkt_row(params: dict[str, BKTParams]) -> dict[str, Any]:
        yy, pp = score(pop, test, params)
        return {"auc": r4(auc(yy, pp)), "accuracy": r4(np.mean([(q >= 0.5) == t for q, t in zip(pp, yy)]))}

    rows["bkt_defaults"] = bkt_row({c: BKTParams() for c in pop.concepts})
    fitted: dict[str, dict[str, BKTParams]] = {}
    timings: dict[str, float] = {}
    for variant, forgets in (("bkt_fitted", False), ("bkt_forgetting", True)):
        started = time.perf_counter()
        fitted[variant] = {
            c: fit_concept(
                [pop.answers[l][c] for l in train if c in pop.answers[l]], forgets=forgets, num_fits=num_fits, seed=seed
            ).params
            for c in pop.concepts
        }
        timings[variant] = time.perf_counter() - started
        rows[variant] = {**bkt_row(fitted[variant]), "fit_seconds": round(timings[variant], 2)}
    truth = {c: p for c, p in pop.concepts.items() if p is not None}
    if pop.simulated:
        rows["bkt_true_params"] = bkt_row(truth)
    n_train = sum(len(s) for l in train for s in pop.answers[l].values())
    recovery = {}
    for variant, params in fitted.items() if pop.simulated else ():
        recovery[variant] = {
            k: r4(np.mean([abs(getattr(params[c], k) - getattr(truth[c], k)) for c in truth]))
            for k in ("prior", "learn", "guess", "slip", "forget")
        }
    return {
        "population": pop.name,
        "concepts": len(pop.concepts),
        "learners_train": len(train),
        "learners_test": len(test),
        "attempts_train": n_train,
        "attempts_test": len(y),
        "fit_attempts_per_s": round(n_train * 2 / (timings["bkt_fitted"] + timings["bkt_forgetting"]), 1),
        "rows": rows,
        "parameter_mae": recovery,
        "true_params": {c: p.to_dict() for c, p in truth.items()},
        "fitted_params": {
            v: {c: {k: r4(x) for k, x in p.to_dict().items()} for c, p in ps.items()} for v, ps in fitted.items()
        },
    }


def through_store(pop: Population, num_fits: int, seed: int) -> dict[str, Any]:
    """The fitted-BKT row end to end: record → fit (stored) → record held-back learners, score `predicted`."""
    from graphmem.learner import AttemptIn, KTFitRequest

    train, test = split(pop, seed)
    mem = make_memory()
    try:
        with eval_tenant(mem, "kt") as tenant:

            def record(learner: str) -> list[tuple[bool, float]]:
                # A learner's concepts interleaved in time: attempt i of every concept, then i + 1, …
                seqs = pop.answers[learner]
                batch = []
                step = 0
                for i in range(max(len(s) for s in seqs.values())):
                    for c in sorted(seqs):
                        if i < len(seqs[c]):
                            batch.append(
                                AttemptIn(
                                    attempt_id=f"{c}-{i}",
                                    concept=c,
                                    correct=seqs[c][i],
                                    ts=T0 + timedelta(minutes=step),
                                )
                            )
                            step += 1
                out = mem.learner.record(tenant, learner, batch)
                return [(a.correct, r["predicted"]) for a, r in zip(batch, out["attempts"], strict=True)]

            started = time.perf_counter()
            for learner in train:
                record(learner)
            ingest_s = time.perf_counter() - started
            n_train = sum(len(s) for l in train for s in pop.answers[l].values())
            fit = mem.learner.fit(tenant, KTFitRequest(num_fits=num_fits, seed=seed, min_attempts=1))
            scored = [x for learner in test for x in record(learner)]
            y = [c for c, _ in scored]
            p = [q for _, q in scored]
            return {
                "population": pop.name,
                "auc": r4(auc(y, p)),
                "attempts_scored": len(y),
                "fit_version": fit["version"],
                "concepts_fitted": fit["concepts_fitted"],
                "fit_seconds": fit["seconds"],
                "train_ingest_attempts_per_s": round(n_train / ingest_s, 1),
            }
    finally:
        mem.close()


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Knowledge tracing: next-attempt AUC on simulated learners",
        "",
        f"Run {report['at']} (`python -m eval.kt_eval{' --quick' if report['quick'] else ''}`); "
        "protocol in eval/kt_eval.py. No public tutoring log is reachable through a package registry here, "
        "so these are simulated populations with known parameters — not comparable to the published "
        "figures on ASSISTments skill-builder logs (BKT ≈ 0.73, pyBKT 0.76, BKT with forgetting 0.83).",
        "",
    ]
    for r in report["populations"]:
        lines += [
            f"## {r['population']}: {r['concepts']} concepts, {r['learners_train']} training / "
            f"{r['learners_test']} held-back learners, {r['attempts_test']} scored attempts",
            "",
            "| model | AUC | accuracy |",
            "|---|---|---|",
        ]
        for name, row in r["rows"].items():
            lines.append(f"| {name} | {row['auc']:.4f} | {row['accuracy']:.4f} |")
        if not r["parameter_mae"]:
            lines.append("")
            continue
        lines += [
            "",
            "Parameter recovery (mean absolute error over concepts):",
            "",
            "| fit | prior | learn | guess | slip | forget |",
            "|---|---|---|---|---|---|",
        ]
        for v, mae in r["parameter_mae"].items():
            lines.append(
                f"| {v} | " + " | ".join(f"{mae[k]:.4f}" for k in ("prior", "learn", "guess", "slip", "forget")) + " |"
            )
        lines += [
            "",
            f"pyBKT EM (pure Python wheel): {r['fit_attempts_per_s']:.0f} training attempts/s per fit "
            f"variant ({r['rows']['bkt_fitted']['fit_seconds']} s standard, "
            f"{r['rows']['bkt_forgetting']['fit_seconds']} s with forgetting).",
            "",
        ]
    if report.get("store"):
        s = report["store"]
        lines += [
            "## Through the service and Neo4j",
            "",
            f"Fitted BKT, population {s['population']}: AUC {s['auc']:.4f} on {s['attempts_scored']} "
            f"`predicted` values returned by the attempts endpoint's code path after `learner.fit` stored "
            f"{s['concepts_fitted']} concepts' parameters (fit version {s['fit_version']}, "
            f"{s['fit_seconds']} s); training attempts recorded at {s['train_ingest_attempts_per_s']:.0f}/s.",
            "",
        ]
    return "\n".join(lines) + "\n"


def run(quick: bool = False, store: bool = True, seed: int = 11) -> dict[str, Any]:
    n_concepts, n_learners, num_fits = (4, 120, 1) if quick else (8, 200, 2)
    pops = [
        simulate("standard", n_concepts, n_learners, False, seed),
        simulate("forgetting", n_concepts, n_learners, True, seed + 1),
    ]
    report: dict[str, Any] = {
        "at": datetime.now(UTC).isoformat(),
        "quick": quick,
        "seed": seed,
        "populations": [evaluate(p, num_fits, seed) for p in pops],
    }
    if store and not quick:
        report["store"] = through_store(pops[0], num_fits, seed)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = "kt_quick" if quick else "kt"
    (RESULTS / f"{stem}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    (RESULTS / f"{stem}.md").write_text(markdown(report))
    return report


def run_log(path: Path, columns: tuple[str, str, str, str], num_fits: int, seed: int = 11) -> dict[str, Any]:
    """The same protocol on a real log: learners split 70 / 30, fit on the training learners only."""
    report: dict[str, Any] = {
        "at": datetime.now(UTC).isoformat(),
        "quick": False,
        "seed": seed,
        "log": str(path),
        "populations": [evaluate(load_log(path, columns), num_fits, seed)],
    }
    (RESULTS / "kt_log.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    (RESULTS / "kt_log.md").write_text(markdown(report).replace("on simulated learners", f"on {path.name}", 1))
    return report


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-store", action="store_true", help="skip the run through the service and Neo4j")
    ap.add_argument("--log", type=Path, help="a real tutoring log (CSV, one attempt per row) instead of simulation")
    ap.add_argument("--columns", default=",".join(LOG_COLUMNS), help="user,skill,correct,order column names")
    ap.add_argument("--num-fits", type=int, default=2)
    args = ap.parse_args()
    if args.log:
        cols = tuple(args.columns.split(","))
        if len(cols) != 4:
            ap.error("--columns takes four names: user,skill,correct,order")
        report = run_log(args.log, (cols[0], cols[1], cols[2], cols[3]), args.num_fits)
    else:
        report = run(args.quick, not args.no_store)
    for r in report["populations"]:
        print(r["population"], {k: v["auc"] for k, v in r["rows"].items()})
    if report.get("store"):
        print("store", report["store"])


if __name__ == "__main__":
    main()
