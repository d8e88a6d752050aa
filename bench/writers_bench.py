"""Concurrent writers at the store: 8 writers on 8 users of one tenant vs 8 writers on 8 tenants.

    python -m bench.writers_bench                    # 8 writers, 3 alternated rounds
    cd /work/main && python /path/to/bench/writers_bench.py --label main   # the same run on other code

Extraction is done beforehand (the generator's ground-truth extractions, no spaCy), so the timed part is
only :meth:`Neo4jStore.write_ingest` calls: what a tenant-wide lock, or its absence, costs. Each writer
owns one fresh user and writes ``--calls`` calls of ``--turns`` turns (learners of the real Metacademy
catalog, so users of one tenant share dense catalog concept nodes). Both layouts run alternately in each
round; reported: turns/s per round and their median, the ratio one tenant / spread, and the write
re-runs counted by the store (``graphmem.store.write_retries``; 0 where the code has no counter).
Results: ``bench/results/writers.json`` (``--label`` names the run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file from another checkout: that checkout's code is measured
    sys.path.insert(0, os.getcwd())

from bench import fixtures, generator
from bench.common import log, machine
from graphmem import store as store_module
from graphmem.service import GraphMemory
from graphmem.store import StoredTurn, UserRef

# This file's results folder, whichever checkout's code is measured.
RESULTS = Path(__file__).resolve().parent / "results"


def _retries() -> int:
    counter = getattr(store_module, "write_retries", None)
    return counter.total() if counter is not None else 0


def prepared_calls(mem: GraphMemory, uid: str, seed: int, calls: int, turns: int) -> list[list[StoredTurn]]:
    """One writer's calls, extracted beforehand."""
    user = generator.conversation_user(
        uid, language="en", n_turns=calls * turns, seed=seed, key_facts_per_stance=1, pool_size=40
    )
    stored = [
        StoredTurn(f"{uid}-t{i}", t.role, t.text, t.ts, t.language, mem.counter.count(t.text), t.extraction())
        for i, t in enumerate(user.turns)
    ]
    return [stored[i : i + turns] for i in range(0, len(stored), turns)]


def run_layout(mem: GraphMemory, refs: list[UserRef], work: list[list[list[StoredTurn]]]) -> dict[str, Any]:
    def writer(ix: int) -> int:
        written = 0
        for j, call in enumerate(work[ix]):
            written += len(mem.store.write_ingest(refs[ix], f"s{j // 5}", call).accepted)
        return written

    before = _retries()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(len(refs)) as pool:
        written = sum(pool.map(writer, range(len(refs))))
    wall = time.perf_counter() - t0
    return {
        "turns": written,
        "seconds": round(wall, 3),
        "turns_per_s": round(written / wall, 1),
        "retries": _retries() - before,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="graphmem concurrent writers at the store")
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--calls", type=int, default=20, help="write calls per writer and round")
    ap.add_argument("--turns", type=int, default=4, help="turns per call")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--label", default="this")
    args = ap.parse_args(argv)
    mem = GraphMemory(fixtures.bench_settings())
    mem.start()
    shared = "bench-writers-shared"
    spread = [f"bench-writers-t{i}" for i in range(args.writers)]
    for tenant in [shared, *spread]:
        fixtures.ensure_catalog(mem, tenant, generator.real_concept_count())
    rounds: list[dict[str, Any]] = []
    try:
        for r in range(args.rounds):
            run = uuid.uuid4().hex[:6]
            row: dict[str, Any] = {}
            # Alternate which layout goes first, so drift on the shared machine does not favour one.
            layouts = [("one_tenant", True), ("spread", False)]
            for name, one in layouts if r % 2 == 0 else layouts[::-1]:
                refs = [UserRef(shared if one else spread[i], f"w-{run}-{name}-{i}") for i in range(args.writers)]
                work = [
                    prepared_calls(mem, refs[i].user_id, 500 + i, args.calls, args.turns) for i in range(args.writers)
                ]
                row[name] = run_layout(mem, refs, work)
            row["ratio"] = round(row["one_tenant"]["turns_per_s"] / row["spread"]["turns_per_s"], 3)
            log(f"round {r + 1}: {row}")
            rounds.append(row)
    finally:
        mem.close()
    out = {
        "label": args.label,
        "code": os.getcwd(),
        "machine": machine(),
        "load_average": os.getloadavg(),
        "writers": args.writers,
        "calls_per_writer": args.calls,
        "turns_per_call": args.turns,
        "rounds": rounds,
        "median": {
            "one_tenant_turns_per_s": statistics.median(r["one_tenant"]["turns_per_s"] for r in rounds),
            "spread_turns_per_s": statistics.median(r["spread"]["turns_per_s"] for r in rounds),
            "ratio": statistics.median(r["ratio"] for r in rounds),
            "retries_one_tenant": sum(r["one_tenant"]["retries"] for r in rounds),
            "retries_spread": sum(r["spread"]["retries"] for r in rounds),
        },
    }
    log(f"median: {out['median']}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "writers.json"
    runs = json.loads(path.read_text()) if path.exists() else {}
    runs[args.label] = out
    path.write_text(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
