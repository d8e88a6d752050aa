"""Benchmark fixtures: tenant catalogs and large users, built fast and reused across runs.

Large users are written straight through :meth:`Neo4jStore.write_ingest` with the
generator's ground-truth extractions (no spaCy), in batches, so setup does not
dominate the run. A fixture that is already complete (same concept count) is
reused; a partial one (an interrupted run) is erased and rebuilt. Only tenants
whose id starts with ``bench-`` are ever touched.
"""

from __future__ import annotations

import time
from typing import Any

from graphmem.models import Catalog
from graphmem.service import GraphMemory
from graphmem.settings import Settings
from graphmem.store import StoredTurn, UserRef

from . import generator

BATCH = 500


def bench_settings(**overrides: Any) -> Settings:
    return Settings(**overrides)


def ensure_catalog(mem: GraphMemory, tenant: str, size: int) -> dict[str, Any]:
    assert tenant.startswith("bench-")
    doc, version = mem.store.get_catalog(tenant)
    if doc and len(doc.get("concepts", [])) == size:
        return {"tenant": tenant, "concepts": size, "catalog_version": version, "reused": True, "seconds": 0.0}
    t0 = time.perf_counter()
    catalog = Catalog.model_validate(generator.catalog_document(size))
    out = mem.put_catalog(tenant, catalog)
    return {**out, "reused": False, "seconds": round(time.perf_counter() - t0, 2)}


def write_turns(
    mem: GraphMemory, user: UserRef, turns: list[generator.GenTurn], prefix: str, session_size: int = 50
) -> float:
    """Writes ground-truth turns through the store in batches; returns seconds."""
    t0 = time.perf_counter()
    for start in range(0, len(turns), BATCH):
        chunk = turns[start : start + BATCH]
        stored = [
            StoredTurn(
                f"{prefix}-{start + i}", t.role, t.text, t.ts, t.language, mem.counter.count(t.text), t.extraction()
            )
            for i, t in enumerate(chunk)
        ]
        # Sessions of `session_size` turns: one write per session slice.
        for s in range(0, len(stored), session_size):
            mem.store.write_ingest(user, f"s{(start + s) // session_size:05d}", stored[s : s + session_size])
    return time.perf_counter() - t0


def ensure_scale_user(
    mem: GraphMemory, tenant: str, user_id: str, n_concepts: int, catalog_size: int, seed: int = 11
) -> dict[str, Any]:
    """A user with exactly ``n_concepts`` mentioned concepts in ``tenant`` (built once, then reused)."""
    assert tenant.startswith("bench-")
    user = UserRef(tenant, user_id)
    turns = generator.scale_turns(n_concepts, seed=seed + n_concepts, catalog_size=catalog_size)
    counts = mem.store.counts(user)
    # Interests also cover ranked 2-hop neighbours, so completeness is judged by turns and a compaction run.
    if counts["exists"] and counts["turns"] >= len(turns) and counts["compaction_runs"] >= 1:
        return {
            "user_id": user_id,
            "concepts": n_concepts,
            "reused": True,
            "turns": counts["turns"],
            "interests": counts["interests"],
            "seconds": 0.0,
        }
    if counts["exists"]:
        mem.store.erase_user(user)
    t0 = time.perf_counter()
    write_turns(mem, user, turns, prefix=f"{user_id}-t")
    # One compaction run leaves the user as production would (weights and tiers written).
    mem.compact(tenant, user_id)
    return {
        "user_id": user_id,
        "concepts": n_concepts,
        "reused": False,
        "turns": len(turns),
        "seconds": round(time.perf_counter() - t0, 2),
    }
