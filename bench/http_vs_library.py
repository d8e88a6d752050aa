"""Ingest over HTTP against the library on the same turns, alternated in one run (issue 16, item 2).

One client, batches of ``--batch`` turns, a tenant catalog of ``--catalog`` concepts. Each round runs
one cell of each kind on fresh users, in an order that rotates from round to round, so every kind sees
the same machine load; the report gives medians and the ratio of each HTTP kind to the library. The
kinds: ``library`` (GraphMemory.ingest in this process), ``http`` (the API in its own process, as in
production, with the default edit log), ``http-noedits`` (``?edits=false``) and, with ``--before
DIR``, ``http-before``: the API of another checkout (e.g. the commit before a change) on the same turns.

    python -m bench.http_vs_library --rounds 5 --before /tmp/before --out bench/results/http_vs_library.json
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
    kind: str, texts: list[tuple[str, str]], batch: int, mem: GraphMemory, servers: dict[str, Server]
) -> dict[str, Any]:
    user_id = f"hl-{kind}-{uuid.uuid4().hex[:10]}"
    batches = _batches(texts, batch)
    calls: list[float] = []
    server = servers.get("http-before" if kind == "http-before" else "http")
    http = server.client(KEY) if kind != "library" and server is not None else None
    params = {"edits": "false"} if kind == "http-noedits" else {}
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
    ap.add_argument("--before", type=Path, default=None, help="another checkout whose API to run as http-before")
    ap.add_argument("--label", default="", help="a name for this run in the output (e.g. before, after)")
    ap.add_argument("--out", type=Path, default=RESULTS / "http_vs_library.json")
    args = ap.parse_args(argv)

    mem = GraphMemory()
    mem.start()
    setup = fixtures.ensure_catalog(mem, TENANT, args.catalog)
    servers = {"http": start_server({KEY: TENANT})}
    kinds = ["library", "http", "http-noedits"]
    if args.before is not None:
        servers["http-before"] = start_server({KEY: TENANT}, repo=args.before.resolve())
        kinds.append("http-before")
    rows: list[dict[str, Any]] = []
    try:
        warm = turn_texts(args.language, args.batch * 2, 1)
        for kind in kinds:
            run_cell(kind, warm, args.batch, mem, servers)  # warm-up: pipelines, caches, connections
        for r in range(args.rounds):
            texts = turn_texts(args.language, args.turns, 100 + r)  # the same turns for every kind in a round
            order = kinds[r % len(kinds) :] + kinds[: r % len(kinds)]
            for kind in order:
                row = {"round": r, **run_cell(kind, texts, args.batch, mem, servers)}
                rows.append(row)
                log(f"round {r} {kind:12s}: {row['turns_per_s']:7.1f} turns/s, call p50 {row['call_ms_p50']} ms")
    finally:
        for server in servers.values():
            server.stop()
        mem.close()

    def med(kind: str, field: str) -> float:
        return round(statistics.median(x[field] for x in rows if x["kind"] == kind), 1)

    summary: dict[str, Any] = {}
    for kind in kinds:
        summary[kind] = {"turns_per_s": med(kind, "turns_per_s"), "call_ms_p50": med(kind, "call_ms_p50")}
    for kind in kinds[1:]:
        # Per round, then the median: each ratio compares cells that ran back to back.
        ratios = [
            h["turns_per_s"] / lib["turns_per_s"]
            for h in rows
            if h["kind"] == kind
            for lib in rows
            if lib["kind"] == "library" and lib["round"] == h["round"]
        ]
        summary[kind]["over_library"] = round(statistics.median(ratios), 3)
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
