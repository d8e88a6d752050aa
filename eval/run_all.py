"""Run every quality protocol, print the table, save eval/results/quality.json and QUALITY.md.

    python -m eval.run_all            # full: every learner / chat / conversation (~3-4 min)
    python -m eval.run_all --quick    # deterministic subsets (< 2 min)

Protocols (each module's docstring defines its metrics precisely):
  1. eval.gaps_eval    knowledge gaps vs Metacademy's human prerequisites (catalog loaded)
  2. eval.prereq_eval  prerequisite edges extracted from Metacademy text, no catalog
  3. eval.bridge_eval  core topics of real tutoring chats vs the lesson topic (Bridge)
  4. eval.kdconv_eval  Chinese entity recall / precision (KdConv)
  5. eval.redial_block_eval  recommendation blocks on ReDial valid: entity share, generic items, recall
  6. eval.block_sample  hand-labelled block items (ReDial, Bridge, KdConv): item precision
  7. eval.stance_eval  stance accuracy on the hand-labelled dev set of real turns (no Neo4j)
  8. eval.redial_stance_eval  the seeker's stored stance per movie vs the seeker's verdict (ReDial)
quality.json keeps the last full and the last quick run side by side; it holds
numbers and ids only, never data text.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from eval import (
    block_sample,
    bridge_eval,
    gaps_eval,
    kdconv_eval,
    prereq_eval,
    redial_block_eval,
    redial_stance_eval,
    stance_eval,
)
from eval.common import REPO

RESULTS = REPO / "eval" / "results"

# (label, protocol, path into its result, target or None, higher is better)
ROWS: list[tuple[str, str, tuple[str, ...], float | None]] = [
    ("Gap F1, depth 1 (Metacademy, catalog)", "gaps", ("depth1", "f1"), 0.9),
    ("Gap F1, depth 2 (default)", "gaps", ("depth2", "f1"), 0.9),
    ("Gap precision / recall, depth 2", "gaps", ("depth2", "precision|recall"), None),
    ("Reported gaps not ancestors of T", "gaps", ("depth2", "not_ancestor_share"), None),
    ("Prerequisite-edge precision, no catalog", "prereq", ("precision",), 0.7),
    ("Prerequisite-edge ancestor precision", "prereq", ("ancestor_precision",), None),
    ("Prerequisite-edge recall (judgeable gold edges)", "prereq", ("recall_judgeable",), None),
    ("Judged extracted edges (count)", "prereq", ("judged_edges",), None),
    ("Concept recall from Metacademy text", "prereq", ("concept_recall",), None),
    ("Bridge core-topic Hit@3 (c_h+c_r)", "bridge", ("c_h+c_r", "hit_at_3"), 0.6),
    ("Bridge core-topic MRR (c_h+c_r)", "bridge", ("c_h+c_r", "mrr"), None),
    ("Bridge ceiling: topic lemma occurs in chat", "bridge", ("c_h+c_r", "topic_in_chat"), None),
    ("Bridge Hit@3 where topic occurs in chat", "bridge", ("c_h+c_r", "hit_at_3_when_topic_in_chat"), None),
    ("Bridge Hit@3 / MRR (c_h only)", "bridge", ("c_h", "hit_at_3|mrr"), None),
    (
        "Bridge topic in the student's own turns / Hit@3 there",
        "bridge",
        ("c_h+c_r", "topic_in_student_turns|hit_at_3_when_topic_in_student_turns"),
        None,
    ),
    ("Bridge junk concepts per turn", "bridge", ("c_h+c_r", "junk_per_turn"), None),
    ("KdConv entity recall (core + related)", "kdconv", ("entity_recall",), 0.8),
    ("KdConv precision of stored concepts vs triples", "kdconv", ("precision",), None),
    ("KdConv entity recall, travel", "kdconv", ("per_domain", "travel", "entity_recall"), None),
    ("ReDial blocks: core topics that are chat entities", "redial_blocks", ("core_entity_share",), None),
    ("ReDial blocks: generic-item share (≤ 0.05 wanted)", "redial_blocks", ("generic_item_share",), None),
    ("ReDial blocks: recall of the seeker's own entities", "redial_blocks", ("seeker_entity_recall",), None),
    ("Labelled block items: item precision", "block_sample", ("item_precision",), 0.85),
    ("Labelled block items present / labelled", "block_sample", ("present_labelled|labelled_items",), None),
    ("Labelled item precision, ReDial", "block_sample", ("per_dataset", "redial/valid", "precision"), None),
    ("Labelled item precision, Bridge", "block_sample", ("per_dataset", "bridge/validation", "precision"), None),
    ("Labelled item precision, KdConv", "block_sample", ("per_dataset", "kdconv/dev", "precision"), None),
    ("Stance dev-set accuracy, English (check / all)", "stance", ("en", "check|all"), None),
    ("Stance dev-set accuracy, Chinese (check / all)", "stance", ("zh", "check|all"), None),
    ("ReDial valid dislike F1", "redial_stance", ("valid", "dislike_f1"), 0.6),
    ("ReDial valid liked movies with a positive stance", "redial_stance", ("valid", "liked_positive"), 0.6),
    ("ReDial valid liked movies marked disliked (target ≤ 0.05)", "redial_stance", ("valid", "liked_disliked"), None),
]


def _get(res: dict[str, Any], path: tuple[str, ...]) -> str:
    cur: Any = res
    for p in path[:-1]:
        cur = cur.get(p, {}) if isinstance(cur, dict) else {}
    vals = [cur.get(k) for k in path[-1].split("|")] if isinstance(cur, dict) else [None]
    return " / ".join("—" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v)) for v in vals)


def _status(res: dict[str, Any], path: tuple[str, ...], target: float | None) -> str:
    if target is None:
        return ""
    try:
        v = float(_get(res, path))
    except ValueError:
        return ""
    return "met" if v >= target else "**below**"


def table(results: dict[str, Any]) -> str:
    modes = [m for m in ("full", "quick") if m in results]
    head = "| metric | target | " + " | ".join(f"{m}" for m in modes) + " |"
    lines = [head, "|---|---|" + "---|" * len(modes)]
    for label, proto, path, target in ROWS:
        cells = []
        for m in modes:
            res = results[m]["protocols"].get(proto, {})
            st = _status(res, path, target)
            cells.append(_get(res, path) + (f" ({st})" if st else ""))
        lines.append(f"| {label} | {'≥ ' + str(target) if target is not None else ''} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
    except Exception:
        return "unknown"


def write_markdown(results: dict[str, Any]) -> Path:
    parts = [
        "# graphmem quality on real data",
        "",
        "Measured by `python -m eval.run_all` (`make eval`; `--quick` / `make eval-quick` runs deterministic "
        "subsets in under two minutes) against a real Neo4j 5.26, on the shared Metacademy, Bridge and KdConv "
        "data (read at run time from `../shared/data` or `$GRAPHMEM_SHARED_DATA`). Definitions: the docstrings "
        "of `eval/gaps_eval.py`, `eval/prereq_eval.py`, `eval/bridge_eval.py`, `eval/kdconv_eval.py`, "
        "`eval/redial_block_eval.py`, `eval/block_sample.py`; raw "
        "figures: `eval/results/quality.json`.",
        "",
    ]
    for m in ("full", "quick"):
        if m in results:
            r = results[m]
            sizes = r.get("sizes", {})
            parts.append(
                f"- **{m}** run: commit {r.get('commit')}, {r.get('seconds')} s; "
                + ", ".join(f"{k}: {v}" for k, v in sizes.items())
            )
    parts += ["", table(results), ""]
    dest = RESULTS / "QUALITY.md"
    dest.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="deterministic subsets, < 2 minutes")
    ap.add_argument(
        "--only",
        choices=("gaps", "prereq", "bridge", "kdconv", "redial_blocks", "block_sample", "stance", "redial_stance"),
        action="append",
    )
    ap.add_argument("--verbose", action="store_true", help="print the worst cases of every protocol")
    a = ap.parse_args(argv)
    mode = "quick" if a.quick else "full"
    runners = {
        "gaps": gaps_eval.run,
        "prereq": prereq_eval.run,
        "bridge": bridge_eval.run,
        "kdconv": kdconv_eval.run,
        "redial_blocks": redial_block_eval.run,
        "block_sample": block_sample.run,
        "stance": stance_eval.protocol,
        "redial_stance": redial_stance_eval.protocol,
    }
    started = time.perf_counter()
    protocols: dict[str, Any] = {}
    for name, fn in runners.items():
        if a.only and name not in a.only:
            continue
        t0 = time.perf_counter()
        protocols[name] = fn(quick=a.quick, verbose=a.verbose)
        print(f"{name}: done in {time.perf_counter() - t0:.1f} s", flush=True)
    # Worst-case lists name data ids only (Metacademy tags); Bridge/KdConv misses are printed, not kept.
    sizes = {
        "learners": protocols.get("gaps", {}).get("learners"),
        "Metacademy concepts fed": protocols.get("prereq", {}).get("concepts_fed"),
        "Bridge chats": protocols.get("bridge", {}).get("chats"),
        "KdConv conversations": protocols.get("kdconv", {}).get("conversations"),
        "ReDial chats": protocols.get("redial_blocks", {}).get("blocks"),
        "labelled block items": protocols.get("block_sample", {}).get("labelled_items"),
    }
    run = {
        "mode": mode,
        "commit": _commit(),
        "seconds": round(time.perf_counter() - started, 1),
        "sizes": {k: v for k, v in sizes.items() if v is not None},
        "protocols": protocols,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "quality.json"
    results: dict[str, Any] = {}
    if path.exists():
        try:
            results = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            results = {}
    if a.only and mode in results:
        results[mode]["protocols"].update(protocols)
        results[mode]["seconds"] = run["seconds"]
        # The commit names the code of the newest protocols; "partial" says older ones may remain.
        results[mode]["commit"] = run["commit"] + " (partial: " + ", ".join(sorted(protocols)) + ")"
        results[mode].setdefault("sizes", {}).update(run["sizes"])
    else:
        results[mode] = run
    path.write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    md = write_markdown(results)
    print()
    print(table({mode: results[mode]}))
    print(f"\n{mode} run: {run['seconds']} s; wrote {path.relative_to(REPO)} and {md.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
