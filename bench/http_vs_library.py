"""Ingest over HTTP against the library on the same turns, alternated in one run (issue 16, item 2).

One client, batches of ``--batch`` turns, a tenant catalog of ``--catalog`` concepts. Each round runs
one cell of each kind (library first or HTTP first, alternating) on fresh users, so the two kinds see
the same machine load; the report gives medians and the HTTP/library ratio. The API runs in its own
process (bench/common.py), as in production.

    python -m bench.http_vs_library --rounds 5 --out bench/results/http_vs_library.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from graphmem.models import TurnIn
from graphmem.service import GraphMemory

from . import fixtures
from .common import RESULTS, Server, log, machine, start_server
from .ingest_bench import turn_texts

TENANT = "bench-httplib"
KEY = "bench-key-httplib"


def _batches(texts: list[tuple[str, str]], batch: int) -> list[list[dict[str, Any]]]:
    return [
        [{"turn_id": f"t{start + j}", "role": r, "text": t} for j, (r, t) in enumerate(texts[start : start + batch])]
        for start in range(0, len(texts), batch)
    ]


def run_cell(
    kind: str, texts: list[tuple[str, str]], batch: int, mem: GraphMemory, server: Server, edits: bool
) -> dict[str, Any]:
    user_id = f"hl-{kind}-{uuid.uuid4().hex[:10]}"
    batches = _batches(texts, batch)
    calls: list[float] = []
    http = server.client(KEY) if kind == "http" else None
    params = {"edits": "true"} if edits else {}
    try:
        t0 = time.perf_counter()
        for i, turns in enumerate(batches):
            c0 = time.perf_counter()
            if http is not None:
                r = http.post(f"/v1/users/{user_id}/turns", params=params, json={"session_id": f"s{i}", "turns": turns})
                r.raise_for_status()
            else:
                mem.ingest(TENANT, user_id, f"s{i}", [TurnIn(**t) for t in turns])
            calls.append(time.perf_counter() - c0)
        wall = time.perf_counter() - t0
    finally:
        if http is not None:
            http.close()
    return {
        "kind": kind,
        "turns": len(texts),
        "wall_s": round(wall, 3),
        "turns_per_s": round(len(texts) / wall, 1),
        "call_ms_p50": round(statistics.median(calls) * 1000, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--turns", type=int, default=200, help="turns per cell (one fresh user)")
    ap.add_argument("--batch", type=int, default=40)
    ap.add_argument("--catalog", type=int, default=1500, help="concepts in the tenant catalog")
    ap.add_argument("--language", default="en", choices=["en", "zh"])
    ap.add_argument("--edits", action="store_true", help="ask the API for the per-turn edit log (?edits=true)")
    ap.add_argument("--label", default="", help="a name for this run in the output (e.g. before, after)")
    ap.add_argument("--out", type=Path, default=RESULTS / "http_vs_library.json")
    args = ap.parse_args(argv)

    mem = GraphMemory()
    mem.start()
    setup = fixtures.ensure_catalog(mem, TENANT, args.catalog)
    server = start_server({KEY: TENANT})
    rows: list[dict[str, Any]] = []
    try:
        warm = turn_texts(args.language, args.batch * 2, 1)
        for kind in ("library", "http"):
            run_cell(kind, warm, args.batch, mem, server, args.edits)  # warm-up: pipelines, caches, JIT paths
        for r in range(args.rounds):
            texts = turn_texts(args.language, args.turns, 100 + r)  # same turns for both kinds in a round
            order = ("library", "http") if r % 2 == 0 else ("http", "library")
            for kind in order:
                row = {"round": r, **run_cell(kind, texts, args.batch, mem, server, args.edits)}
                rows.append(row)
                log(f"round {r} {kind:7s}: {row['turns_per_s']:7.1f} turns/s, call p50 {row['call_ms_p50']} ms")
    finally:
        server.stop()
        mem.close()

    def med(kind: str, field: str) -> float:
        return round(statistics.median(x[field] for x in rows if x["kind"] == kind), 1)

    summary = {
        "library_turns_per_s": med("library", "turns_per_s"),
        "http_turns_per_s": med("http", "turns_per_s"),
        "library_call_ms_p50": med("library", "call_ms_p50"),
        "http_call_ms_p50": med("http", "call_ms_p50"),
    }
    summary["http_over_library"] = round(summary["http_turns_per_s"] / summary["library_turns_per_s"], 3)
    out = {
        "label": args.label,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "setup": setup,
        "machine": machine(),
        "summary": summary,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    log(f"summary {summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
