"""Compaction time per user and peak RSS of the process doing it.

Each size runs in its own subprocess (``python -m bench.compaction_bench TENANT USER REPEATS``),
a fresh "service process" holding one GraphMemory, so peak RSS is the compaction's
and not the benchmark driver's. Times: GraphMemory.compact end to end, plus the
same path split into load (Neo4j → UserGraph), rank, plan and write.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from typing import Any

import psutil

from .common import REPO, log, summary_ms


def _worker(tenant: str, user_id: str, repeats: int) -> dict[str, Any]:
    from graphmem.compaction import plan_compaction
    from graphmem.ranking import rank
    from graphmem.service import GraphMemory
    from graphmem.settings import Settings
    from graphmem.store import UserRef

    proc = psutil.Process()
    mem = GraphMemory(Settings())
    mem.counter.count("warm up")
    user = UserRef(tenant, user_id)
    mem.store.user_version(user)  # open a connection
    base = proc.memory_info().rss
    peak = [base]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    total, load, ranking, plan, write = [], [], [], [], []
    record: dict[str, Any] = {}
    for _ in range(repeats):
        t0 = time.perf_counter()
        run = mem.compact(tenant, user_id)
        total.append(time.perf_counter() - t0)
        record = {
            k: run.get(k)
            for k in (
                "concepts_total",
                "concepts_before",
                "concepts_after",
                "compacted",
                "history_tokens",
                "block_tokens",
                "ratio",
            )
        }
        # The same path, phase by phase.
        t0 = time.perf_counter()
        graph = mem.store.load_user_graph(user)
        t1 = time.perf_counter()
        rk = rank(graph, mem.ranking_config)
        t2 = time.perf_counter()
        plan_compaction(graph, rk, mem.compaction_config, counter=mem.counter)
        t3 = time.perf_counter()
        load.append(t1 - t0)
        ranking.append(t2 - t1)
        plan.append(t3 - t2)
        write.append(max(0.0, total[-1] - (t3 - t2)))  # warm runs: cached graph, so compact ≈ plan + write
    stop.set()
    sampler.join()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "total": summary_ms(total[1:] or total),
        "cold_first_ms": round(total[0] * 1000, 1),
        "load_ms_p50": summary_ms(load)["p50_ms"],
        "rank_ms_p50": summary_ms(ranking)["p50_ms"],
        "plan_ms_p50": summary_ms(plan)["p50_ms"],
        "write_ms_p50_est": summary_ms(write[1:] or write)["p50_ms"],
        "rss_before_mib": round(base / 2**20, 1),
        "peak_rss_mib": round(max(peak[0], maxrss) / 2**20, 1),
        "peak_rss_delta_mib": round((max(peak[0], maxrss) - base) / 2**20, 1),
        "run": record,
        "edges": len(graph.edges),
        "graph_concepts": len(graph.concepts),
    }


def measure(tenant: str, user_id: str, concepts: int, repeats: int, timeout: float = 900) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-m", "bench.compaction_bench", tenant, user_id, str(repeats)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if out.returncode != 0:
        raise RuntimeError(f"compaction worker failed: {out.stderr[-2000:]}")
    row = {"concepts": concepts, "repeats": repeats, **json.loads(out.stdout.strip().splitlines()[-1])}
    log(
        f"compaction n={concepts:7d}: cold {row['cold_first_ms']} ms, warm p50 {row['total']['p50_ms']} ms p99 {row['total']['p99_ms']} ms "
        f"(load {row['load_ms_p50']}, rank {row['rank_ms_p50']}, plan {row['plan_ms_p50']}, "
        f"write~{row['write_ms_p50_est']}); peak RSS {row['peak_rss_mib']} MiB (+{row['peak_rss_delta_mib']})"
    )
    return row


if __name__ == "__main__":
    print(json.dumps(_worker(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
