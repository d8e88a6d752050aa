"""The scale benchmark's bulk loader (Neo4jStore.bulk_load_users) against the real Neo4j.

A bulk-loaded user must read exactly like the same turns written through the ingest path, or the
scale benchmark would measure a different graph from the one production builds.
"""

from __future__ import annotations

import pytest
from neo4j import exceptions as neo4j_errors

from bench import generator
from graphmem.bulk_rows import BulkUser
from graphmem.models import Catalog
from graphmem.service import GraphMemory
from graphmem.store import StoredTurn, UserRef

pytestmark = [pytest.mark.neo4j]


@pytest.fixture
def mem(settings, store):
    m = GraphMemory(settings)
    m.start()
    yield m
    m.close()


def _turns(uid: str, catalog_size: int) -> list[StoredTurn]:
    gen = generator.scale_turns(30, seed=5, catalog_size=catalog_size)
    return [
        StoredTurn(f"t{j}", t.role, t.text, t.ts, t.language, len(t.text) // 4, t.extraction())
        for j, t in enumerate(gen)
    ]


def _rows(store, user: UserRef, name: str, **extra) -> list[dict]:
    rows = store.read_statement(name, **user.params(**extra))
    return sorted(rows, key=lambda r: tuple(str(v) for v in r.values()))


def test_bulk_loaded_user_reads_like_an_ingested_one(mem, tenant):
    size = generator.real_concept_count()
    mem.put_catalog(tenant, Catalog.model_validate(generator.catalog_document(size)))
    bulk, ingested = UserRef(tenant, "bulk"), UserRef(tenant, "ingested")
    turns = _turns("x", size)
    assert any(t.extraction.stances for t in turns) and any(t.extraction.relations for t in turns)

    out = mem.store.bulk_load_users(tenant, [BulkUser("bulk", "s00000", turns)])
    mem.store.write_ingest(ingested, "s00000", turns)

    assert out["users"] == 1 and out["turns"] == len(turns)
    assert mem.store.bulk_existing_users(tenant, ["bulk", "ingested", "nobody"]) == {"bulk", "ingested"}
    a, b = _rows(mem.store, bulk, "user_interests"), _rows(mem.store, ingested, "user_interests")
    assert len(a) == 30
    assert a == b
    ca, cb = mem.store.counts(bulk), mem.store.counts(ingested)
    assert {k: v for k, v in ca.items() if k != "users"} == {k: v for k, v in cb.items() if k != "users"}
    ea = _rows(mem.store, bulk, "edges_by_owner", edge_owner=bulk.owner)
    eb = _rows(mem.store, ingested, "edges_by_owner", edge_owner=ingested.owner)
    assert ea and ea == eb
    assert _rows(mem.store, bulk, "user_history_size") == _rows(mem.store, ingested, "user_history_size")
    # The block the API would serve is the same for both users.
    assert mem.context(tenant, "bulk").block == mem.context(tenant, "ingested").block


def test_bulk_load_of_an_existing_user_writes_nothing(mem, tenant):
    size = generator.real_concept_count()
    mem.put_catalog(tenant, Catalog.model_validate(generator.catalog_document(size)))
    turns = _turns("x", size)
    mem.store.bulk_load_users(tenant, [BulkUser("one", "s00000", turns)])
    with pytest.raises(neo4j_errors.ConstraintError):
        mem.store.bulk_load_users(tenant, [BulkUser("two", "s00000", turns), BulkUser("one", "s00000", turns)])
    assert mem.store.bulk_existing_users(tenant, ["one", "two"]) == {"one"}
    assert mem.store.counts(UserRef(tenant, "one"))["turns"] == len(turns)
