"""Graded-attempt ingest: attempts/s through the library and over HTTP (issue 18: ≥ 2,000 attempts/s).

Each cell sends ``total`` attempts for fresh users in batches of ``batch`` (one POST per batch), on a pool
of 40 concept names (half of them catalog concepts of demo/catalog.yaml, resolved by alias; half new),
with strictly increasing timestamps per user (the usual case; a late attempt replays its concept) and
a simulated learner's answers. One user per client, ``clients`` clients in parallel. Tenant
``bench-attempts`` (its catalog reloaded at the start; every cell writes fresh users).

    PYTHONPATH=. .venv/bin/python -m bench.attempts_bench [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from graphmem.extraction.catalog_io import parse_catalog
from graphmem.learner import AttemptIn
from graphmem.service import GraphMemory

from .common import RESULTS, log, machine, run_clients, start_server, summary_ms

TENANT = "bench-attempts"
KEY = "bench-key-attempts"
CATALOG = (RESULTS.parent.parent / "demo" / "catalog.yaml").read_bytes()
CONCEPTS = [
    "linear algebra",
    "probability",
    "SQL basics",
    "Docker",
    "Git",
    "HTTP",
    "REST API",
    "JavaScript",
    "React",
    "Flask",
    "unit testing",
    "data structures",
    "algorithms",
    "machine learning",
    "NumPy",
    "Pandas",
    "neural networks",
    "deep learning",
    "PHP",
    "Nginx",
] + [f"skill {i}" for i in range(20)]
T0 = datetime(2026, 9, 1, tzinfo=UTC)


def rows(user_seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(user_seed)
    known: dict[str, bool] = {}
    out = []
    for i in range(n):
        c = rng.choice(CONCEPTS)
        k = known.setdefault(c, rng.random() < 0.3)
        out.append(
            {
                "attempt_id": f"a{i}",
                "concept": c,
                "correct": rng.random() < (0.9 if k else 0.2),
                "ts": (T0 + timedelta(seconds=30 * i)).isoformat(),
            }
        )
        known[c] = k or rng.random() < 0.1
    return out


def cell(kind: str, batch: int, clients: int, total: int, mem: GraphMemory | None, server: Any) -> dict[str, Any]:
    run = uuid.uuid4().hex[:8]
    per_client = total // clients
    data = [rows(int(run, 16) + ci, per_client) for ci in range(clients)]

    def work(ci: int) -> list[float]:
        user_id = f"att-{kind}-b{batch}-c{clients}-{run}-{ci}"
        lat: list[float] = []
        http = server.client(KEY) if server else None
        try:
            for start in range(0, per_client, batch):
                chunk = data[ci][start : start + batch]
                t0 = time.perf_counter()
                if http is not None:
                    r = http.post(f"/v1/users/{user_id}/attempts", json={"attempts": chunk})
                    r.raise_for_status()
                else:
                    assert mem is not None
                    mem.learner.record(TENANT, user_id, [AttemptIn(**a) for a in chunk])
                lat.append(time.perf_counter() - t0)
        finally:
            if http is not None:
                http.close()
        return lat

    lat, wall = run_clients(clients, work)
    rate = per_client * clients / wall
    log(
        f"{kind:7s} batch={batch:5d} clients={clients}: {rate:8.0f} attempts/s ({per_client * clients} in {wall:.2f} s)"
    )
    return {
        "kind": kind,
        "batch": batch,
        "clients": clients,
        "attempts": per_client * clients,
        "seconds": round(wall, 3),
        "attempts_per_s": round(rate, 1),
        "request_latency": summary_ms(lat),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer attempts per cell")
    args = ap.parse_args()
    total = 4000 if args.quick else 20000
    mem = GraphMemory()
    mem.store.apply_schema()
    mem.put_catalog(TENANT, parse_catalog(CATALOG, "yaml"))
    results: list[dict[str, Any]] = []
    for batch in (100, 500, 2000):
        results.append(cell("library", batch, 1, total, mem, None))
    results.append(cell("library", 500, 2, total, mem, None))
    server = start_server({KEY: TENANT})
    try:
        for batch in (100, 500, 2000):
            results.append(cell("http", batch, 1, total, None, server))
        results.append(cell("http", 500, 2, total, None, server))
    finally:
        server.stop()
        mem.close()
    out = {"machine": machine(), "at": datetime.now(UTC).isoformat(), "quick": args.quick, "cells": results}
    (RESULTS / "attempts.json").write_text(json.dumps(out, indent=2) + "\n")
    log(f"wrote {RESULTS / 'attempts.json'}")


if __name__ == "__main__":
    main()
