"""Ingestion: turns/s end to end over HTTP and through the library, and extraction words/s.

Every (language, batch size, clients) cell uses fresh users (one per client), so
each run starts from the same state; a cell's turns come from the generator's
multi-session learners on the Metacademy catalog (tenant ``bench-ingest``).
"""

from __future__ import annotations

import logging
import statistics
import time
import uuid
from typing import Any

from graphmem.models import Catalog, TurnIn
from graphmem.service import GraphMemory

from . import generator
from .common import Server, log, run_clients, summary_ms

TENANT = "bench-ingest"
KEY = "bench-key-ingest"


def turn_texts(language: str, n: int, seed: int) -> list[tuple[str, str]]:
    """(role, text) pairs of a learner's conversation."""
    user = generator.conversation_user("x", language=language, n_turns=n, seed=seed)
    return [(t.role, t.text) for t in user.turns]


def _cell(
    kind: str,
    language: str,
    batch: int,
    clients: int,
    per_client: int,
    seed: int,
    mem: GraphMemory | None,
    server: Server | None,
) -> dict[str, Any]:
    run_id = uuid.uuid4().hex[:8]
    texts = [turn_texts(language, per_client, seed + i) for i in range(clients)]

    def work(ci: int) -> list[float]:
        user_id = f"ing-{kind}-{language}-b{batch}-c{clients}-{run_id}-{ci}"
        lat: list[float] = []
        http = server.client(KEY) if server else None
        try:
            for start in range(0, per_client, batch):
                chunk = texts[ci][start : start + batch]
                session = f"s{start // 50}"
                t0 = time.perf_counter()
                if http is not None:
                    r = http.post(
                        f"/v1/users/{user_id}/turns",
                        json={
                            "session_id": session,
                            "turns": [
                                {"turn_id": f"t{start + j}", "role": role, "text": text}
                                for j, (role, text) in enumerate(chunk)
                            ],
                        },
                    )
                    r.raise_for_status()
                else:
                    assert mem is not None
                    mem.ingest(
                        TENANT,
                        user_id,
                        session,
                        [TurnIn(turn_id=f"t{start + j}", role=role, text=text) for j, (role, text) in enumerate(chunk)],
                    )
                lat.append(time.perf_counter() - t0)
        finally:
            if http is not None:
                http.close()
        return lat

    lat, wall = run_clients(clients, work)
    total = clients * per_client
    return {
        "kind": kind,
        "language": language,
        "batch": batch,
        "clients": clients,
        "turns": total,
        "wall_s": round(wall, 3),
        "turns_per_s": round(total / wall, 1),
        "call_latency": summary_ms(lat),
    }


def _repeated(runs: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """One row for repeats of a cell: median turns/s, median call p50 and worst call p99."""
    tps = [r["turns_per_s"] for r in runs]
    lat = [r["call_latency"] for r in runs]
    return {
        **runs[-1],
        **extra,
        "repeats": len(runs),
        "turns_per_s": round(statistics.median(tps), 1),
        "turns_per_s_runs": tps,
        "call_latency": {
            "p50_ms": round(statistics.median(x["p50_ms"] for x in lat), 1),
            "p99_ms": round(max(x["p99_ms"] for x in lat), 1),
            "n": sum(x["n"] for x in lat),
        },
    }


def ingest_matrix(mem: GraphMemory, server: Server, quick: bool) -> list[dict[str, Any]]:
    per_client = {1: 16, 16: 64, 128: 128} if quick else {1: 64, 16: 256, 128: 512}
    repeats = 1 if quick else 3
    rows = []
    for kind in ("http", "library"):
        for language in ("en", "zh"):
            for batch in (1, 16, 128) if kind == "http" or not quick else (128,):
                for clients in (1, 4) if not (quick and batch == 1) else (1,):
                    row = _repeated(
                        [
                            _cell(
                                kind,
                                language,
                                batch,
                                clients,
                                per_client[batch],
                                100 + r,
                                mem if kind == "library" else None,
                                server if kind == "http" else None,
                            )
                            for r in range(repeats)
                        ]
                    )
                    rows.append(row)
                    log(
                        f"ingest {kind:7s} {language} batch={batch:3d} clients={clients}: "
                        f"{row['turns_per_s']:7.1f} turns/s  call p50 {row['call_latency']['p50_ms']} ms "
                        f"p99 {row['call_latency']['p99_ms']} ms"
                    )
    return rows


def ingest_workers(server: Server, workers: int, quick: bool) -> list[dict[str, Any]]:
    """Batch 128, 4 clients over HTTP against an API run with several worker processes."""
    per_client = 128 if quick else 512
    repeats = 1 if quick else 3
    rows = []
    for language in ("en", "zh"):
        row = _repeated(
            [_cell("http", language, 128, 4, per_client, 200 + r, None, server) for r in range(repeats)],
            kind=f"http, {workers} workers",
            workers=workers,
        )
        rows.append(row)
        log(
            f"ingest http {workers} workers {language} batch=128 clients=4: {row['turns_per_s']:7.1f} turns/s  "
            f"call p50 {row['call_latency']['p50_ms']} ms p99 {row['call_latency']['p99_ms']} ms"
        )
    return rows


def extraction_speed(catalog: Catalog, quick: bool) -> list[dict[str, Any]]:
    """Extraction alone (spaCy + catalog matcher + relations + stances), single thread."""
    import jieba

    from graphmem.extraction import ConceptExtractor

    jieba.setLogLevel(logging.WARNING)
    ex = ConceptExtractor(catalog)
    n = 400 if quick else 2000
    repeats = 3 if quick else 5
    out = []
    for language in ("en", "zh"):
        pairs = turn_texts(language, n, 7)
        texts, roles = [t for _, t in pairs], [r for r, _ in pairs]
        words = (
            sum(len(t.split()) for t in texts)
            if language == "en"
            else sum(len([w for w in jieba.cut(t) if w.strip()]) for t in texts)
        )
        ex.extract(texts[:64], roles[:64])
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            ex.extract(texts, roles)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        row = {
            "language": language,
            "turns": n,
            "words": words,
            "repeats": repeats,
            "words_per_s": round(words / med),
            "turns_per_s": round(n / med, 1),
            "words_per_s_worst": round(words / max(times)),
            "ms_per_turn_p50": round(med / n * 1000, 3),
        }
        out.append(row)
        log(f"extraction {language}: {row['words_per_s']} words/s, {row['turns_per_s']} turns/s")
    return out
