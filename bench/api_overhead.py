"""The API layer's own cost per ingest call: everything between GraphMemory.ingest and the bytes.

End-to-end ingest runs are dominated by extraction and Neo4j (and on a shared machine by its load),
so the HTTP layer's cost is measured apart: a real 40-turn batch is ingested once through the library
(real spaCy, real Neo4j, the tenant's 1,500-concept catalog) and its real IngestResult recorded; then
API servers (real uvicorn, real FastAPI app, in their own processes) whose GraphMemory only replays
that result answer the same request body, alternated call by call. What a call costs there is the
API's layer: HTTP parsing, middleware, body validation, dependencies, thread-pool hops, response
encoding (bench/replay_server.py). ``--before DIR`` adds the API of another checkout, so before and after run side by side.

    python -m bench.api_overhead --calls 200 --before /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from .common import REPO, RESULTS, free_port, log, machine

BATCH = 40


def record(result_path: Path, catalog: int) -> dict[str, Any]:
    """One real ingest of a 40-turn batch; returns the request body, writes the result."""
    from graphmem.models import TurnIn
    from graphmem.service import GraphMemory

    from . import fixtures
    from .http_vs_library import TENANT
    from .ingest_bench import turn_texts

    mem = GraphMemory()
    mem.start()
    try:
        fixtures.ensure_catalog(mem, TENANT, catalog)
        turns = [{"turn_id": f"t{j}", "role": r, "text": t} for j, (r, t) in enumerate(turn_texts("en", BATCH, 100))]
        mem.ingest(TENANT, "ovh-" + uuid.uuid4().hex[:10], "s0", [TurnIn(**t) for t in turns])  # warm-up
        t0 = time.perf_counter()
        result = mem.ingest(TENANT, "ovh-" + uuid.uuid4().hex[:10], "s0", [TurnIn(**t) for t in turns])
        service_s = time.perf_counter() - t0
    finally:
        mem.close()
    result_path.write_text(result.model_dump_json())
    return {"body": {"session_id": "s0", "turns": turns}, "service_ms": round(service_s * 1000, 1)}


def start(tree: Path, result_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """bench/replay_server.py serving the API of the checkout ``tree``."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(REPO / "bench" / "replay_server.py"), str(result_path), str(port)]
    proc = subprocess.Popen(cmd, cwd=tree, env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.3)
    proc.terminate()
    raise RuntimeError(f"the API of {tree} did not start")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=200, help="calls per kind (alternated)")
    ap.add_argument("--catalog", type=int, default=1500)
    ap.add_argument("--before", type=Path, default=None, help="another checkout whose API runs as `before`")
    ap.add_argument("--result", type=Path, default=Path(tempfile.gettempdir()) / "graphmem_api_overhead_result.json")
    ap.add_argument("--out", type=Path, default=RESULTS / "api_overhead.json")
    args = ap.parse_args(argv)
    recorded = record(args.result, args.catalog)
    body = json.dumps(recorded["body"]).encode()
    servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {"after": start(REPO, args.result)}
    if args.before is not None:
        servers["before"] = start(args.before.resolve(), args.result)
    kinds = {"after": ("after", {}), "after-noedits": ("after", {"edits": "false"})}
    if "before" in servers:
        kinds["before"] = ("before", {})
    lat: dict[str, list[float]] = {k: [] for k in kinds}
    sizes: dict[str, int] = {}
    try:
        clients = {name: httpx.Client(base_url=base, timeout=30) for name, (_, base) in servers.items()}
        headers = {"content-type": "application/json"}
        for i in range(args.calls + 10):
            for kind, (server, params) in kinds.items():
                t0 = time.perf_counter()
                r = clients[server].post("/v1/users/u1/turns", params=params, content=body, headers=headers)
                elapsed = time.perf_counter() - t0
                r.raise_for_status()
                sizes[kind] = len(r.content)
                if i >= 10:  # the first calls warm connections and caches
                    lat[kind].append(elapsed)
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(15)
    summary = {
        kind: {
            "call_ms_p50": round(statistics.median(v) * 1000, 2),
            "call_ms_p90": round(sorted(v)[int(len(v) * 0.9)] * 1000, 2),
            "response_bytes": sizes[kind],
        }
        for kind, v in lat.items()
    }
    out = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": {"calls": args.calls, "batch": BATCH, "catalog": args.catalog, "before": str(args.before)},
        "library_ms_one_real_ingest_warm": recorded["service_ms"],
        "machine": machine(),
        "summary": summary,
    }
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    log(f"api overhead per {BATCH}-turn call: {summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
