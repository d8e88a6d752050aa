"""The store's per-tenant catalog cache is read once however many readers need it at once (single flight).

20 clients' first reads after a catalog upload each ran the catalog's relations query, 3-6 s apiece on a
cold, loaded server (tests/test_load.py). Here the query is made slow on purpose and counted: one run for
eight concurrent graph loads, and every load sees the catalog's relations.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from graphmem.extraction.catalog_io import load_catalog
from graphmem.services.admin import catalog_rows
from graphmem.settings import PROJECT_ROOT
from graphmem.store import Neo4jStore, UserRef
from tests.test_store import reference_turns

pytestmark = pytest.mark.neo4j
READERS = 8


def test_concurrent_loads_after_a_catalog_change_read_the_catalog_once(store: Neo4jStore, tenant: str) -> None:
    store.replace_catalog(tenant, catalog_rows(load_catalog(PROJECT_ROOT / "demo" / "catalog.yaml")))
    users = [UserRef(tenant, f"reader-{i}") for i in range(READERS)]
    for user in users:
        store.write_ingest(user, "s1", reference_turns())
    runs: list[str] = []
    real_run_flat = store._run_flat

    def counted(tx: Any, name: str, **params: Any) -> list[dict[str, Any]]:
        if name == "edges_by_owner" and params.get("edge_owner") == "catalog":
            runs.append(name)
            time.sleep(0.5)  # every reader arrives while the first one reads
        return real_run_flat(tx, name, **params)

    store._catalog_edges.clear()  # as after an upload by another process: the cache is stale
    store._run_flat = counted  # type: ignore[method-assign]
    try:
        start = threading.Barrier(READERS)

        def load(user: UserRef) -> int:
            start.wait(10)
            return len(store.load_user_graph(user).edges)

        with ThreadPoolExecutor(READERS) as pool:
            edges = list(pool.map(load, users))
    finally:
        del store._run_flat
    assert len(runs) == 1
    assert len(set(edges)) == 1 and edges[0] > 0  # the same catalog relations for every reader
