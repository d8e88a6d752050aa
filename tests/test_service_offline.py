"""The services through the in-memory store (graphmem/memory_store.py): no Neo4j, real spaCy extraction.

Caching, re-rank after ingest, cache invalidation on a catalog change, races (an erasure committing
between an ingest's write and its re-rank, a concurrent write between an ingest and its weights),
as_of, idempotent turn ids and conflicts, compaction, forgetting, erasure. Each race is made to happen
for real by a store whose write commits the other call's write right after its own (a subclass, not a
mock: the interleaving is the one two threads produce when the other transaction lands in between).
The last test checks that the in-memory store and Neo4j give the same graph for the same turns.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem.errors import GraphmemError, InvalidInput, NotFound, TurnIdConflict
from graphmem.extraction.catalog_io import load_catalog
from graphmem.memory_store import InMemoryStore
from graphmem.models import Catalog, TurnIn, UserGraph
from graphmem.ranked_cache import LRU, RankedCache, RankedGraph
from graphmem.ranking import RankingConfig, rank
from graphmem.service import GraphMemory
from graphmem.settings import PROJECT_ROOT, Settings
from graphmem.store import IngestWrite, UserRef
from graphmem.subgraph import adjacency, kept_edges, missing_endpoints, walk

TENANT = "offline"
TEXTS = [
    "I want to learn Python before Django",
    "Django uses SQL databases and an ORM",
    "I already know linear algebra",
    "Explain gradient descent please",
]


class CountingStore(InMemoryStore):
    """Counts full graph loads (no ``base``) and incremental ones: what the cache saves is observable."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.full_loads = 0
        self.incremental_loads = 0

    def load_user_graph(self, user: UserRef, *args: Any, **kwargs: Any) -> UserGraph:
        if kwargs.get("base") is None and not args and not kwargs.get("extra_keys"):
            self.full_loads += 1
        elif kwargs.get("base") is not None:
            self.incremental_loads += 1
        return super().load_user_graph(user, *args, **kwargs)


@pytest.fixture
def mem(settings: Settings) -> GraphMemory:
    return GraphMemory(settings, store=CountingStore(settings))


def turns(*texts: str, prefix: str = "t", ts: datetime | None = None) -> list[TurnIn]:
    return [
        TurnIn(turn_id=f"{prefix}{i}", role="user", text=text, ts=ts + timedelta(seconds=i) if ts else None)
        for i, text in enumerate(texts)
    ]


def keys_of(mem: GraphMemory, user_id: str) -> set[str]:
    return {n["key"] for n in mem.graph(TENANT, user_id)["nodes"]}


def test_context_of_an_unchanged_graph_is_served_from_the_cache(mem: GraphMemory) -> None:
    store = mem.store
    assert isinstance(store, CountingStore)
    mem.ingest(TENANT, "ann", "s1", turns(*TEXTS))
    loads = store.full_loads
    first = mem.context(TENANT, "ann")
    again = mem.context(TENANT, "ann")
    assert first == again and "python" in first.block.lower()
    assert store.full_loads == loads  # the ingest's re-rank cached the graph: no read reloaded it
    ranked = mem.ranked(mem.user(TENANT, "ann"))
    assert ranked is mem.ranked(mem.user(TENANT, "ann"))  # the same cached RankedGraph
    assert len(ranked.memo) > 0  # selection and gaps memoized what does not depend on the focus
    # A returned block is a copy: changing it does not change what the cache serves.
    first.core_topics.append("tampered")
    assert "tampered" not in mem.context(TENANT, "ann").core_topics


def test_ingest_reranks_incrementally_and_the_cache_equals_a_reload(mem: GraphMemory) -> None:
    store = mem.store
    assert isinstance(store, CountingStore)
    user = mem.user(TENANT, "bob")
    mem.ingest(TENANT, "bob", "s1", turns(TEXTS[0], prefix="a"))
    before = mem.ranked(user)
    loads = store.full_loads
    result = mem.ingest(TENANT, "bob", "s2", turns(TEXTS[3], prefix="b"))
    assert result.accepted == ["b0"]
    assert store.full_loads == loads and store.incremental_loads == 2  # the base graph was updated, not reloaded
    after = mem.ranked(user)
    # Two writes per ingest (turns, then weights): the cached graph is at the stored version.
    assert after.version == before.version + 2 == store.user_version(user)[0]
    reloaded = InMemoryStore.load_user_graph(store, user)
    assert after.graph.concepts == reloaded.concepts and after.graph.edges == reloaded.edges
    assert set(after.graph.concepts) > set(before.graph.concepts)  # gradient descent joined
    assert dict(rank(reloaded, mem.ranking_config).items()).keys() == dict(after.ranking.items()).keys()


def test_a_catalog_change_invalidates_the_cached_graph(mem: GraphMemory) -> None:
    store = mem.store
    assert isinstance(store, CountingStore)
    mem.ingest(TENANT, "cat", "s1", turns(TEXTS[0]))
    user = mem.user(TENANT, "cat")
    cached = mem.ranked(user)
    assert not any(e.scope == "catalog" for e in cached.graph.edges)
    catalog = Catalog.model_validate(
        {
            "concepts": [{"name": "Python"}, {"name": "Django"}, {"name": "Flask"}],
            "relations": [{"source": "Python", "type": "prerequisite", "target": "Flask"}],
        }
    )
    assert mem.put_catalog(TENANT, catalog)["catalog_version"] == 1
    loads = store.full_loads
    fresh = mem.ranked(user)
    assert fresh is not cached and store.full_loads == loads + 1  # reloaded under the new catalog version
    assert fresh.catalog_version == 1
    assert ("python", "flask") in {(e.source, e.target) for e in fresh.graph.edges}
    assert mem.ranked(user) is fresh


def test_an_erasure_between_write_and_rerank_is_user_erased(settings: Settings) -> None:
    class EraseAfterWrite(InMemoryStore):
        """A DELETE of the user commits right after this ingest's write, before its re-rank."""

        def write_ingest(self, user: UserRef, session_id: str, turns: Any) -> IngestWrite:
            write = super().write_ingest(user, session_id, turns)
            self.erase_user(user)
            return write

    mem = GraphMemory(settings, store=EraseAfterWrite(settings))
    with pytest.raises(GraphmemError) as caught:
        mem.ingest(TENANT, "eve", "s1", turns(TEXTS[0]))
    assert (caught.value.code, caught.value.status) == ("USER_ERASED", 409)
    with pytest.raises(NotFound):
        mem.graph(TENANT, "eve")


def test_a_write_racing_the_rerank_drops_the_cached_graph(settings: Settings) -> None:
    class WriteInBetween(InMemoryStore):
        """Another call's write (a forget, say) commits between this ingest's turns and its weights."""

        race = False

        def write_ingest(self, user: UserRef, session_id: str, turns: Any) -> IngestWrite:
            write = super().write_ingest(user, session_id, turns)
            if self.race:
                self.forget_concept(user, "nothing-of-this")
            return write

    store = WriteInBetween(settings)
    mem = GraphMemory(settings, store=store)
    user = mem.user(TENANT, "ray")
    mem.ingest(TENANT, "ray", "s1", turns(TEXTS[0], prefix="a"))
    assert mem.core.ranked_graphs.peek(user) is not None
    store.race = True
    mem.ingest(TENANT, "ray", "s1", turns(TEXTS[1], prefix="b"))
    # Built from the pre-write cache, the graph would miss the other write: it is dropped, not cached.
    assert mem.core.ranked_graphs.peek(user) is None
    ranked = mem.ranked(user)
    assert ranked.version == store.user_version(user)[0]
    assert {"django", "orm"} <= set(ranked.graph.concepts)


def test_turn_ids_are_idempotent_and_a_changed_turn_conflicts(mem: GraphMemory) -> None:
    first = mem.ingest(TENANT, "ida", "s1", turns(TEXTS[0]))
    version = mem.store.user_version(mem.user(TENANT, "ida"))[0]
    again = mem.ingest(TENANT, "ida", "s1", turns(TEXTS[0]))
    assert first.accepted == ["t0"] and again.accepted == [] and again.duplicates == ["t0"]
    assert mem.store.user_version(mem.user(TENANT, "ida"))[0] == version  # a retry writes nothing
    with pytest.raises(TurnIdConflict) as caught:
        mem.ingest(TENANT, "ida", "s1", turns("Something else entirely"))
    assert caught.value.code == "TURN_ID_CONFLICT"
    with pytest.raises(InvalidInput) as bad:
        mem.ingest(
            TENANT,
            "ida",
            "s1",
            [TurnIn(turn_id="x", role="user", text="a"), TurnIn(turn_id="x", role="user", text="b")],
        )
    assert bad.value.code == "DUPLICATE_TURN_ID"
    assert mem.store.user_version(mem.user(TENANT, "ida"))[0] == version  # bad input stored nothing


def test_as_of_reads_the_graph_as_it_stood(mem: GraphMemory) -> None:
    day = datetime(2026, 1, 1, tzinfo=UTC)
    mem.ingest(TENANT, "asa", "s1", turns(TEXTS[0], ts=day))
    mem.ingest(TENANT, "asa", "s2", turns(TEXTS[3], prefix="b", ts=day + timedelta(days=10)))
    now = keys_of(mem, "asa")
    then = {n["key"] for n in mem.graph(TENANT, "asa", as_of=day + timedelta(days=5))["nodes"]}
    assert {"python", "django"} <= then and "gradient descent" in now and "gradient descent" not in then
    past = mem.context(TENANT, "asa", as_of=day + timedelta(days=5))
    assert "gradient" not in past.block.lower() and "python" in past.block.lower()
    assert mem.graph(TENANT, "asa", as_of=day + timedelta(days=5))["version"] == -1  # ranked afresh, not cached


def test_compaction_records_a_run_and_the_summary(settings: Settings) -> None:
    # A threshold above every weight: everything outside the core folds into the summary.
    high = settings.model_copy(update={"threshold": 1e9})
    mem = GraphMemory(high, store=InMemoryStore(high))
    mem.ingest(TENANT, "cid", "s1", turns(*TEXTS))
    run = mem.compact(TENANT, "cid")
    assert run["trigger"] == "request" and run["newly_compacted"] > 0
    assert [r["id"] for r in mem.compaction_runs(TENANT, "cid")] == [run["id"]]
    summary = mem.graph(TENANT, "cid")["summary"]
    assert summary["count"] == run["newly_compacted"] == len(summary["items"])
    tiers = {n["key"]: n["stored_tier"] for n in mem.graph(TENANT, "cid")["nodes"]}
    assert sum(t == "compacted" for t in tiers.values()) == run["newly_compacted"]


def test_forget_and_erase(mem: GraphMemory) -> None:
    mem.ingest(TENANT, "fay", "s1", turns(*TEXTS))
    mem.ingest(TENANT, "gus", "s1", turns(TEXTS[0]))
    assert "django" in keys_of(mem, "fay")
    out = mem.forget(TENANT, "fay", "Django")
    assert out["concept"] == "django" and out["removed"]["interests"] == 1
    assert "django" not in keys_of(mem, "fay")
    assert mem.erase(TENANT, "fay")["removed"]["turns"] == len(TEXTS)
    with pytest.raises(NotFound):
        mem.context(TENANT, "fay")
    with pytest.raises(NotFound):
        mem.erase(TENANT, "fay")
    assert "django" in keys_of(mem, "gus")  # the other user is untouched
    assert mem.export(TENANT, "gus")["turns"][0]["text"] == TEXTS[0]


def test_concurrent_ingests_of_one_user_equal_sequential_ones(settings: Settings) -> None:
    """Real threads: whatever order the writes land in, the cached graph is the stored one and the
    answers equal those of the same turns sent one by one."""
    day = datetime(2026, 1, 1, tzinfo=UTC)

    def send(mem: GraphMemory, i: int) -> None:
        mem.ingest(TENANT, "con", f"s{i}", [TurnIn(turn_id=f"c{i}", role="user", text=TEXTS[i], ts=day + timedelta(i))])

    for _ in range(3):
        parallel = GraphMemory(settings, store=InMemoryStore(settings))
        with ThreadPoolExecutor(len(TEXTS)) as pool:
            list(pool.map(lambda i: send(parallel, i), range(len(TEXTS))))
        sequential = GraphMemory(settings, store=InMemoryStore(settings))
        for i in range(len(TEXTS)):
            send(sequential, i)
        user = parallel.user(TENANT, "con")
        cached = parallel.ranked(user)
        reloaded = parallel.store.load_user_graph(user)
        assert cached.version == parallel.store.user_version(user)[0] == 2 * len(TEXTS)
        assert cached.graph.concepts.keys() == reloaded.concepts.keys() and cached.graph.edges == reloaded.edges
        assert parallel.graph(TENANT, "con") == sequential.graph(TENANT, "con")
        assert parallel.context(TENANT, "con") == sequential.context(TENANT, "con")


# -- the pure parts -----------------------------------------------------------------------------


def test_the_ranked_cache_checks_versions_and_evicts_the_oldest() -> None:
    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # refreshed: "b" is now the oldest
    lru.put("c", 3)
    assert (lru.get("a"), lru.get("b"), lru.get("c")) == (1, None, 3)

    cache = RankedCache(2)
    user = UserRef("t", "u")
    graph = UserGraph("t", "u", {}, (), datetime(2026, 1, 1, tzinfo=UTC), 0, 0)
    ranked = RankedGraph(3, 1, graph, rank(graph, RankingConfig()), {})
    cache.put(user, ranked)
    assert cache.current(user, 3, 1) is ranked
    assert cache.current(user, 4, 1) is None and cache.current(user, 3, 2) is None
    cache.carry_over(user, 3, 4, lambda g: g)
    assert cache.current(user, 4, 1) is not None and cache.current(user, 4, 1).memo is ranked.memo
    cache.drop_unless(user, 5)
    assert cache.peek(user) is None


def test_the_subgraph_walk_stops_at_depth() -> None:
    # A chain a -> b -> c -> d, by hand: two hops from a reach the edges a-b and b-c, not c-d.
    rows = [
        {"source": s, "type": "RELATED_TO", "target": t, "scope": "catalog", "confidence": 1.0}
        for s, t in (("a", "b"), ("b", "c"), ("c", "d"))
    ]
    edges = walk({"a"}, [adjacency(rows)], 2)
    assert sorted((e.source, e.target) for e in edges.values()) == [("a", "b"), ("b", "c")]
    assert missing_endpoints(edges, ["x"], {"a": None}) == {"b", "c", "x"}
    assert [(e.source, e.target) for e in kept_edges(edges, {"a": 1, "b": 1})] == [("a", "b")]
    assert walk({"a"}, [adjacency(rows)], 0) == {}


def test_the_in_memory_store_gives_neo4j_s_graph(settings: Settings, store: Any, tenant: str) -> None:
    """The same catalog and turns through both stores give the same graph and the same service answers
    (graph, block, explanation), before and after a forget. This is what makes the offline tests mean
    something for the product."""
    memory = InMemoryStore(settings)
    real = GraphMemory(settings, store=store)
    fake = GraphMemory(settings, store=memory)
    day = datetime(2026, 1, 1, tzinfo=UTC)
    batch = [
        TurnIn(turn_id="p0", role="user", text="I want to learn Django deployment with Docker and Nginx", ts=day),
        TurnIn(turn_id="p1", role="assistant", text="Start with Linux server administration and Git.", ts=day),
        TurnIn(turn_id="p2", role="user", text="I already know Python basics, but SQL confuses me", ts=day),
        TurnIn(turn_id="p3", role="user", text="React uses JavaScript, and I like Flask", ts=day),
    ]
    user = UserRef(tenant, "pat")

    def same() -> None:
        a, b = store.load_user_graph(user), memory.load_user_graph(user)
        assert a.concepts == b.concepts
        assert a.edges == b.edges
        assert (a.now, a.history_tokens, a.turn_count, a.language, a.catalog_deps) == (
            b.now,
            b.history_tokens,
            b.turn_count,
            b.language,
            b.catalog_deps,
        )
        assert store.user_version(user) == memory.user_version(user)
        assert real.graph(tenant, "pat") == fake.graph(tenant, "pat")
        assert real.context(tenant, "pat", focus="Django deployment") == fake.context(
            tenant, "pat", focus="Django deployment"
        )
        for concept in ("Docker", "SQL"):
            assert real.explain(tenant, "pat", concept) == fake.explain(tenant, "pat", concept)

    catalog = load_catalog(PROJECT_ROOT / "demo" / "catalog.yaml")
    for mem in (real, fake):
        mem.put_catalog(tenant, catalog)
        mem.ingest(tenant, "pat", "s1", batch)
    same()
    assert real.forget(tenant, "pat", "Nginx") == fake.forget(tenant, "pat", "Nginx")
    same()


def test_edit_log_false_stores_the_same_and_returns_no_edits(settings: Settings) -> None:
    with_log = GraphMemory(settings, store=InMemoryStore(settings))
    without = GraphMemory(settings, store=InMemoryStore(settings))
    # Fixed times: turns without one are stamped at arrival (1 µs apart), and the recency decay of such
    # gaps, taken from epoch times as floats, rounds differently at different arrival times (a CI run saw
    # 20.0 against 19.99...): the two graphs must be compared on the same clock.
    day = datetime(2026, 1, 1, tzinfo=UTC)
    full = with_log.ingest(TENANT, "eve", "s1", turns(*TEXTS, ts=day))
    lean = without.ingest(TENANT, "eve", "s1", turns(*TEXTS, ts=day), edit_log=False)
    assert [e.turn_id for e in full.edits] == [f"t{i}" for i in range(len(TEXTS))] and lean.edits == []
    assert (lean.accepted, lean.duplicates) == (full.accepted, full.duplicates)
    assert with_log.context(TENANT, "eve") == without.context(TENANT, "eve")
    assert with_log.graph(TENANT, "eve")["nodes"] == without.graph(TENANT, "eve")["nodes"]
