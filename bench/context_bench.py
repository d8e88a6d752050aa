"""Context block latency over HTTP on loopback, for users of 100 / 1,000 / 10,000 concepts.

* warm path: the ranked graph is cached for the user's version (the normal case);
* first request after a write through the same API process (the write re-ranks and
  fills the cache);
* cold path: first request after a write by another process (version bumped in
  Neo4j directly), which reloads and re-ranks the whole user graph;
* requests/s while p99 stays under 50 ms (closed-loop sweep over concurrency).
"""

from __future__ import annotations

import random
import time
from typing import Any

from graphmem.service import GraphMemory
from graphmem.store import UserRef

from . import generator
from .common import Server, log, run_clients, summary_ms

CATALOG_SIZE = 10_000
TENANT = f"bench-scale-{CATALOG_SIZE}"
KEY = "bench-key-scale"
SIZES = (100, 1_000, 10_000)
SEED = 11

FOCUS_EN = ["How do I get started with {a}?", "Can you explain {a} with an example?", "What should I learn before {a}?"]


def user_id(n: int) -> str:
    return f"scale-{n}"


def focus_texts(n: int, count: int) -> list[str]:
    rnd = random.Random(n)
    names = [c.name for c in generator.scale_user_concepts(n, seed=SEED + n, catalog_size=CATALOG_SIZE)]
    return [rnd.choice(FOCUS_EN).format(a=rnd.choice(names)) for _ in range(count)]


def _latencies(server: Server, n: int, clients: int, requests: int, focus: bool) -> tuple[list[float], float]:
    texts = focus_texts(n, requests) if focus else []
    per = max(1, requests // clients)

    def work(ci: int) -> list[float]:
        out = []
        with server.client(KEY) as http:
            for i in range(per):
                params = {"focus": texts[(ci * per + i) % len(texts)]} if focus else None
                t0 = time.perf_counter()
                r = http.get(f"/v1/users/{user_id(n)}/context", params=params)
                out.append(time.perf_counter() - t0)
                r.raise_for_status()
        return out

    return run_clients(clients, work)


def context_latency(server: Server, quick: bool) -> list[dict[str, Any]]:
    requests = 60 if quick else 400
    rows = []
    for n in SIZES:
        _latencies(server, n, 1, 10, False)  # warm the cache and the connection pool
        _latencies(server, n, 1, 5, True)
        for focus in (False, True):
            for clients in (1, 8):
                lat, wall = _latencies(server, n, clients, requests, focus)
                row = {
                    "concepts": n,
                    "focus": focus,
                    "clients": clients,
                    **summary_ms(lat),
                    "rps": round(len(lat) / wall, 1),
                }
                rows.append(row)
                log(
                    f"context n={n:6d} focus={focus!s:5s} clients={clients}: p50 {row['p50_ms']} ms "
                    f"p95 {row['p95_ms']} p99 {row['p99_ms']} ms, {row['rps']} req/s"
                )
    return rows


def after_write(server: Server, mem: GraphMemory, quick: bool) -> list[dict[str, Any]]:
    """First request after an HTTP write (same process) and after an external write (cold)."""
    repeats = 1 if quick else 5
    rows = []
    for n in SIZES:
        names = [c.name for c in generator.scale_user_concepts(n, seed=SEED + n, catalog_size=CATALOG_SIZE)]
        ingest, first, cold = [], [], []
        with server.client(KEY) as http:
            for r in range(repeats):
                stamp = time.time_ns()
                t0 = time.perf_counter()
                resp = http.post(
                    f"/v1/users/{user_id(n)}/turns",
                    json={
                        "session_id": "after-write",
                        "turns": [
                            {
                                "turn_id": f"aw-{stamp}",
                                "role": "user",
                                "text": f"Let's review {names[r % len(names)]} today.",
                            }
                        ],
                    },
                )
                ingest.append(time.perf_counter() - t0)
                resp.raise_for_status()
                t0 = time.perf_counter()
                http.get(f"/v1/users/{user_id(n)}/context").raise_for_status()
                first.append(time.perf_counter() - t0)
                # A write by another process: bumps the version, the API's cache is stale.
                mem.store.write_weights(UserRef(TENANT, user_id(n)), [])
                t0 = time.perf_counter()
                http.get(f"/v1/users/{user_id(n)}/context").raise_for_status()
                cold.append(time.perf_counter() - t0)
        row = {
            "concepts": n,
            "repeats": repeats,
            "ingest_one_turn": summary_ms(ingest),
            "first_after_own_write": summary_ms(first),
            "cold_after_external_write": summary_ms(cold),
        }
        rows.append(row)
        log(
            f"after write n={n:6d}: ingest 1 turn p50 {row['ingest_one_turn']['p50_ms']} ms; first context "
            f"{row['first_after_own_write']['p50_ms']} ms; cold {row['cold_after_external_write']['p50_ms']} ms"
        )
    return rows


def rps_sweep(server: Server, quick: bool, n: int = 10_000) -> dict[str, Any]:
    levels = (1, 4) if quick else (1, 2, 4, 8, 16)
    out: dict[str, Any] = {"concepts": n, "levels": []}
    for focus in (False, True):
        best = None
        for c in levels:
            lat, wall = _latencies(server, n, c, max(60, 20 * c) if quick else max(300, 60 * c), focus)
            s = summary_ms(lat)
            level = {"focus": focus, "clients": c, "rps": round(len(lat) / wall, 1), **s}
            out["levels"].append(level)
            if s["p99_ms"] < 50 and (best is None or level["rps"] > best["rps"]):
                best = level
        out["best_focus" if focus else "best_no_focus"] = best
        log(
            f"rps sweep focus={focus}: best under p99<50ms = {best and best['rps']} req/s "
            f"({best and best['clients']} clients)"
        )
    return out
