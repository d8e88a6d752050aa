"""An ingest's reads before its write, and the round trips of the agent loop (issue 16, item 3).

Each Neo4j transaction costs round trips of its own (begin with the first statement, one per further
statement, commit). An ingest used to open three read transactions before its write and a fourth after it
(the consistency token's versions); the graph load ran five statements. These tests pin what replaced
them: one read transaction before the write, the token's versions from the write's own transaction, and
the load's mastery, own relations and history size in one statement. The in-memory store keeps in step.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest

from graphmem import consistency
from graphmem.errors import NotFound, TurnIdConflict
from graphmem.memory_store import InMemoryStore
from graphmem.models import TurnIn
from graphmem.service import GraphMemory
from graphmem.settings import Settings
from graphmem.store import Neo4jStore, PendingTurn, UserRef
from tests.test_store import reference_turns


@pytest.fixture(params=["memory", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def any_store(request, settings):
    return InMemoryStore(settings) if request.param == "memory" else request.getfixturevalue("store")


def _pending(turn_id: str, role: str, text: str, minutes: int) -> PendingTurn:
    return PendingTurn(turn_id, role, text, reference_turns()[0].ts + timedelta(minutes=minutes))


def test_ingest_reads_give_known_ids_catalog_version_and_the_prior_turn(any_store, tenant) -> None:
    user = UserRef(tenant, "reader")
    stored = reference_turns()  # t1, t2 (user), t3 (assistant) in session s1, minutes 0-2
    any_store.write_ingest(user, "s1", stored)
    resent = PendingTurn(stored[2].turn_id, stored[2].role, stored[2].text, stored[2].ts)

    reads = any_store.ingest_reads(user, "s1", [resent, _pending("t4", "user", "那SQLAlchemy呢？", 3)])
    assert reads.known == {"t3"}
    assert reads.catalog_version == any_store.catalog_version(tenant)
    # The first new turn is a user turn: the session's turn before it (t3, the assistant's) comes along.
    assert reads.prior is not None and reads.prior.role == "assistant"
    assert sorted(m.key for m in reads.prior.concepts) == ["django框架", "sqlalchemy"]

    # Before t2 (the prior is the turn just before the first new one, not the session's last).
    reads = any_store.ingest_reads(user, "s1", [_pending("t5", "user", "还有呢", 1)])
    assert reads.prior is not None and reads.prior.role == "user"
    assert sorted(m.key for m in reads.prior.concepts) == ["python基础"]
    # The first turn sent is stored already: the prior turn is the one before the first new turn (t8).
    resent_user = PendingTurn(stored[1].turn_id, stored[1].role, stored[1].text, stored[1].ts)
    reads = any_store.ingest_reads(user, "s1", [resent_user, _pending("t8", "user", "那Flask呢？", 3)])
    assert reads.known == {"t2"}
    assert reads.prior is not None and reads.prior.role == "assistant"
    # An assistant turn heading the new ones, or another session: no prior turn.
    assert any_store.ingest_reads(user, "s1", [_pending("t6", "assistant", "好的", 3)]).prior is None
    assert any_store.ingest_reads(user, "s2", [_pending("t7", "user", "你好", 3)]).prior is None
    # A stored id with other text is a conflict, as in the write.
    with pytest.raises(TurnIdConflict):
        any_store.ingest_reads(user, "s1", [PendingTurn("t1", "user", "other text", stored[0].ts)])


def test_an_ingest_reports_the_versions_it_left(any_store, tenant) -> None:
    user = UserRef(tenant, "versions")
    first = any_store.write_ingest(user, "s1", reference_turns())
    assert first.catalog_version == any_store.catalog_version(tenant)
    assert first.version_after == any_store.user_version(user)[0] == first.version + 1
    again = any_store.write_ingest(user, "s1", reference_turns())  # all duplicates: nothing changes
    assert again.accepted == [] and again.version_after == any_store.user_version(user)[0]


@contextmanager
def _counting(store: Neo4jStore) -> Iterator[list[str]]:
    """Records the store's sessions ("read"/"write") and statements (by name) while inside."""
    seen: list[str] = []
    session, run, run_flat, read_one = store._session, store._run, store._run_flat, store._read_one

    @contextmanager
    def counted_session(write: bool) -> Iterator[Any]:
        seen.append("write" if write else "read")
        with session(write) as s:
            yield s

    def counted(inner: Any) -> Any:
        def wrapper(tx: Any, name: str, *args: Any, **params: Any) -> Any:
            seen.append(name)
            return inner(tx, name, *args, **params)

        return wrapper

    def counted_auto(name: str, **params: Any) -> Any:
        rows = read_one(name, **params)  # its session ("read") is recorded inside, then the statement
        seen.append(f"{name} (auto-commit)")
        return rows

    store._session, store._run, store._run_flat = counted_session, counted(run), counted(run_flat)  # type: ignore[method-assign]
    store._read_one = counted_auto  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        del store._session, store._run, store._run_flat, store._read_one


@pytest.mark.neo4j
def test_agent_loop_round_trips(store, settings, tenant) -> None:
    mem = GraphMemory(settings.model_copy(update={"rerank_in_background": False}), store=store)
    user = UserRef(tenant, "loop")
    mem.ingest(tenant, "loop", "s1", [TurnIn(role="user", text="I want to learn Python and Django.")])
    turn = [TurnIn(role="user", text="How does Django use Python?")]
    with _counting(store) as seen, consistency.chain() as chain:
        mem.ingest(tenant, "loop", "s1", turn)
        written = chain.written(tenant, "loop")
    before_write = seen[: seen.index("ingest_lock_user")]
    # One auto-commit statement before the write (known ids, catalog version, prior turn: one round trip, no
    # COMMIT), then the concepts' own short write (a tenant without a catalog: its concepts come from conversation).
    assert before_write == ["read", "ingest_reads (auto-commit)", "write", "ingest_merge_concepts", "write"], (
        before_write
    )
    # The lock statement says which ids are stored too: no separate read of them in the write.
    assert "ingest_existing_turns" not in seen
    # The write itself: the lock, the relations (one statement per type; "use" gives one), then turns, mentions,
    # stances and the refreshed interests in one statement — three round trips where six were.
    write = seen[seen.index("ingest_lock_user") : seen.index("ingest_write_all") + 1]
    assert write == ["ingest_lock_user", "ingest_relations", "ingest_write_all"], write
    # The token's versions came from the write's transaction; the synchronous re-rank wrote after it.
    assert written is not None and written[0] < store.user_version(user)[0]

    catalog_version = store.user_version(user)[1]
    with _counting(store) as seen:
        store.load_user_graph(user, catalog_version=catalog_version)  # the catalog's relations are cached
    # Interests, mastery, own relations and history size in one auto-commit statement: one round trip.
    assert seen == ["read", "user_graph_load (auto-commit)"]
    # The same with the versions it was read at (a read with nothing cached skips the version check).
    with _counting(store) as seen:
        loaded = store.load_current_graph(user)
    assert seen == ["read", "user_graph_load (auto-commit)"]
    assert loaded is not None and loaded[:2] == store.user_version(user)
    assert loaded[2] == store.load_user_graph(user)
    assert store.load_current_graph(UserRef(tenant, "nobody")) is None


def _user_statements(seen: list[str]) -> list[str]:
    """The statements about the user's graph (the tenant's document-frequency counts are cached apart)."""
    return [s for s in seen if s.startswith("user_")]


@pytest.mark.neo4j
def test_a_block_for_a_user_nothing_cached_is_one_round_trip(store, settings, tenant) -> None:
    """A read of a user this process holds no graph of reads the graph with its versions in one statement (no
    version check first); a read of a cached graph asks only the version; a stale one, the version then the graph."""
    mem = GraphMemory(settings.model_copy(update={"rerank_in_background": False}), store=store)
    mem.ingest(tenant, "cold", "s1", [TurnIn(role="user", text="I want to learn Python and Django.")])
    user = UserRef(tenant, "cold")
    mem.core.ranked_graphs.drop(user)
    with _counting(store) as seen, consistency.chain() as chain:
        first = mem.context(tenant, "cold")
    assert _user_statements(seen) == ["user_graph_load (auto-commit)"], seen
    assert chain.answered_version == store.user_version(user)[0]
    ranked = mem.core.ranked_graphs.peek(user)
    assert ranked is not None and (ranked.version, ranked.catalog_version) == store.user_version(user)
    with _counting(store) as seen:
        assert mem.context(tenant, "cold") == first
    assert _user_statements(seen) == ["user_version (auto-commit)"], seen
    # Another process writes: the cached graph is stale, the read loads the graph again.
    other = GraphMemory(settings.model_copy(update={"rerank_in_background": False}), store=store)
    other.ingest(tenant, "cold", "s1", [TurnIn(role="user", text="Is NumPy hard?")])
    with _counting(store) as seen:
        mem.context(tenant, "cold")
    assert _user_statements(seen) == ["user_version (auto-commit)", "user_graph_load (auto-commit)"], seen
    assert mem.core.ranked_graphs.peek(user).version == store.user_version(user)[0]
    # Erased (by another process: nothing cached here): the one statement says there is no such user.
    other.erase(tenant, "cold")
    mem.core.ranked_graphs.drop(user)
    with pytest.raises(NotFound) as erased:
        mem.context(tenant, "cold")
    assert erased.value.code == "USER_NOT_FOUND"


@pytest.mark.neo4j
def test_the_packed_interests_are_user_interests_rows(store, tenant) -> None:
    """The graph load reads the interests packed in one record: the same columns and values, row for row."""
    mem = GraphMemory(Settings(rerank_in_background=False, gc_freeze=False), store=store)
    mem.ingest(tenant, "packed", "s1", [TurnIn(role="user", text="I want to learn Python and Django.")])
    mem.ingest(tenant, "packed", "s1", [TurnIn(role="assistant", text="Django is a Python web framework.")])
    params = {"tenant": tenant, "user_id": "packed", "owner": "u:packed"}
    rows = store.read_statement("user_interests", **params)
    packed = store.read_statement("user_graph_load", interests=True, **params)[0]
    assert packed["columns"] == list(rows[0])
    unpacked = [dict(zip(packed["columns"], r, strict=True)) for r in packed["rows"]]
    assert sorted(unpacked, key=lambda r: r["key"]) == sorted(rows, key=lambda r: r["key"])
    assert len(rows) >= 2
    # Without interests (a load that updates a cached graph) they are not read; the rest is the same.
    rest = store.read_statement("user_graph_load", interests=False, **params)[0]
    assert rest["rows"] == [] and {k: v for k, v in rest.items() if k != "rows"} == {
        k: v for k, v in packed.items() if k != "rows"
    }
    # A user without interests (or none at all) still gets the one record: an empty graph, not an error.
    nobody = store.read_statement(
        "user_graph_load", interests=True, **{**params, "user_id": "nobody", "owner": "u:nobody"}
    )
    assert nobody[0]["rows"] == [] and nobody[0]["exists"] is False and nobody[0]["columns"] == packed["columns"]
    assert store.load_user_graph(UserRef(tenant, "nobody")).concepts == {}


def _demo_catalog() -> Any:
    from graphmem.extraction.catalog_io import load_catalog
    from graphmem.settings import PROJECT_ROOT

    return load_catalog(PROJECT_ROOT / "demo" / "catalog.yaml")


@pytest.mark.neo4j
def test_an_ingest_naming_only_catalog_concepts_skips_the_concept_transaction(store, settings, tenant) -> None:
    mem = GraphMemory(settings.model_copy(update={"rerank_in_background": False}), store=store)
    mem.put_catalog(tenant, _demo_catalog())
    # The first ingest's re-rank loads a graph: the store has read the tenant's catalog concepts.
    mem.ingest(tenant, "cat", "s1", [TurnIn(role="user", text="I want to learn Django.")])
    with _counting(store) as seen:
        result = mem.ingest(tenant, "cat", "s1", [TurnIn(role="user", text="How does Django use SQLAlchemy?")])
    assert result.accepted
    # Reads, then the write itself: the catalog concepts exist, so no transaction creates them first.
    assert seen[: seen.index("ingest_lock_user")] == ["read", "ingest_reads (auto-commit)", "write"], seen
    assert "ingest_merge_concepts" not in seen
    graph = store.load_user_graph(UserRef(tenant, "cat"))
    assert {"django框架", "sqlalchemy"} <= set(graph.concepts)


@pytest.mark.neo4j
def test_a_catalog_concept_gone_since_it_was_read_is_created_by_the_write(store, settings, tenant) -> None:
    """The store's catalog cache may be stale (the node deleted since): the write's link counts catch it
    and its re-run creates the concept in the write's own transaction."""
    mem = GraphMemory(settings.model_copy(update={"rerank_in_background": False}), store=store)
    mem.put_catalog(tenant, _demo_catalog())
    mem.ingest(tenant, "gone", "s1", [TurnIn(role="user", text="I want to learn Django.")])
    assert "sqlalchemy" in store._known_catalog_keys(tenant)
    with store._driver.session(database=store.database) as session:
        session.run("MATCH (c:Concept {tenant: $tenant, key: 'sqlalchemy'}) DETACH DELETE c", tenant=tenant).consume()
    with _counting(store) as seen:
        result = mem.ingest(tenant, "gone", "s1", [TurnIn(role="user", text="Is SQLAlchemy hard?")])
    assert result.accepted
    assert seen.count("ingest_lock_user") == 2  # the first run found the concept gone and rolled back
    graph = store.load_user_graph(UserRef(tenant, "gone"))
    assert "sqlalchemy" in graph.concepts


@pytest.mark.neo4j
def test_the_background_rerank_takes_the_versions_from_the_write(store, settings, tenant) -> None:
    """After an ingest, the queued re-rank ranks the version the write's transaction reported: it does not
    ask Neo4j for the user's version first (a read right after the ingest waits for that re-rank)."""
    mem = GraphMemory(settings.model_copy(update={"rerank_in_background": True}), store=store)
    try:
        mem.ingest(tenant, "bg", "s1", [TurnIn(role="user", text="I want to learn Python and Django.")])
        assert mem.wait_reranked()
        with _counting(store) as seen:
            mem.ingest(tenant, "bg", "s1", [TurnIn(role="user", text="How does Django use Python?")])
            assert mem.wait_reranked()
        # The ingest's one read, then its write; the re-rank's load (from the cached graph) and write-back.
        assert seen.count("read") == 2, seen
        after_write = seen[seen.index("ingest_lock_user") :]
        load = after_write.index("user_graph_load (auto-commit)")
        # The write-back: the version bump and the rows in one statement.
        assert after_write.index("read") < load < after_write.index("user_write_weights")
        assert "user_bump_version" not in after_write
        assert "user_interests" not in after_write  # the cached graph was updated with the write's rows
        user = UserRef(tenant, "bg")
        ranked = mem.core.ranked_graphs.peek(user)
        assert ranked is not None and ranked.version == store.user_version(user)[0] and not ranked.unwritten
    finally:
        # Only the background thread: the store is the session's shared one (closing it here left every
        # later test on a closed driver).
        if mem.core.background is not None:
            mem.core.background.close(mem.settings.rerank_drain_s)


@pytest.mark.neo4j
def test_a_weights_only_row_stores_what_the_full_row_stores(store, settings, tenant) -> None:
    """A re-rank's rows for interests that keep their stored tier go by index seek without MERGEs or label
    rewrites (WeightRow.weights_only): the stored interests, tiers and labels are the same as the full path
    leaves them, the version moves by one, and a weights-only row never creates an interest."""
    from graphmem.store import WeightRow

    mem = GraphMemory(settings.model_copy(update={"rerank_in_background": False}), store=store)
    text = "I want to learn Python and Django. Django uses SQL."
    for uid in ("full", "fast"):
        mem.ingest(tenant, uid, "s1", [TurnIn(turn_id="t1", role="user", text=text)])
    graphs = {uid: store.load_user_graph(UserRef(tenant, uid)) for uid in ("full", "fast")}
    assert graphs["full"].concepts.keys() == graphs["fast"].concepts.keys()
    stored = sorted(k for k, n in graphs["full"].concepts.items() if n.tier is not None)
    assert len(stored) >= 3
    for uid, fast in (("full", False), ("fast", True)):
        user = UserRef(tenant, uid)
        before = store.user_version(user)[0]
        rows = [WeightRow(k, 1.0 + i, 0.5, 1.5 + i, None, fast) for i, k in enumerate(stored)]
        if fast:  # a key with no interest: nothing is created for it
            rows.append(WeightRow("no-such-interest", 1.0, 1.0, 2.0, None, True))
        with _counting(store) as seen:
            version = store.write_weights(user, rows)
        assert [s for s in seen if s not in ("read", "write")] == ["user_write_weights"], seen
        assert version == before + 1 == store.user_version(user)[0]

    def interests(uid: str) -> list[dict[str, Any]]:
        params = {"tenant": tenant, "user_id": uid, "owner": "u:" + uid}
        rows = store.read_statement("user_interests", **params)
        # The two users' turns were said a moment apart: their times differ, nothing else may.
        times = ("first_seen_us", "last_seen_us", "mention_ts")
        return sorted(({k: v for k, v in r.items() if k not in times} for r in rows), key=lambda r: r["key"])

    assert interests("full") == interests("fast")
    with store._driver.session(database=store.database) as session:
        labels = {
            r["uid"]: r["labels"]
            for r in session.run(
                "MATCH (i:Interest {tenant: $tenant}) WHERE i.user_id IN ['full', 'fast'] "
                "WITH i.user_id AS uid, i ORDER BY i.key RETURN uid, collect([i.key, labels(i)]) AS labels",
                tenant=tenant,
            )
        }
    assert labels["full"] == labels["fast"]


def test_a_node_stored_as_is_the_node_replaced() -> None:
    """ConceptNode.stored_as (the re-rank's copy of a written row) equals dataclasses.replace, field for field."""
    from dataclasses import fields, replace

    from graphmem.models import ConceptNode, Stance, Tier, utc_now

    node = ConceptNode(
        key="k", name="K", type="topic", user_mentions=2, stance=Stance.confused, first_seen=utc_now(),
        sessions=("s1",), tier=Tier.compacted, evidence=("t1", "t2"), mention_times=(1.0, 2.0),
        mention_roles=("user", "assistant"), weight=3.5, mastery=0.4, mastery_attempts=3,
    )  # fmt: skip
    for tier, weight in ((Tier.core, 9.25), (None, None), (Tier.related, 0.0)):
        copied, replaced = node.stored_as(tier, weight), replace(node, tier=tier, weight=weight)
        assert type(copied) is ConceptNode and copied == replaced and hash(copied) == hash(replaced)
        assert all(getattr(copied, f.name) == getattr(replaced, f.name) for f in fields(ConceptNode))
    assert node.tier is Tier.compacted and node.weight == 3.5  # the original is untouched
    # ConceptNode.of_fields: the node __init__ builds, from any subset of its fields.
    values = {f.name: getattr(node, f.name) for f in fields(ConceptNode)}
    assert ConceptNode.of_fields(values) == ConceptNode(**values) == node
    assert ConceptNode.of_fields({"key": "k", "name": "K"}) == ConceptNode("k", "K")


@pytest.mark.neo4j
def test_interest_rows_become_the_nodes_init_builds(store, tenant) -> None:
    from graphmem.models import ConceptNode
    from graphmem.store import _interest_node

    mem = GraphMemory(Settings(rerank_in_background=False, gc_freeze=False), store=store)
    mem.ingest(tenant, "rows", "s1", [TurnIn(role="user", text="I struggle with Python and Django.")])
    params = {"tenant": tenant, "user_id": "rows", "owner": "u:rows"}
    rows = store.read_statement("user_interests", **params)
    assert rows
    for row in rows:
        node = _interest_node(row)
        # Only field names (a misspelt one would be refused here), and the values __init__ would hold.
        assert ConceptNode(**node.__dict__) == node


@pytest.mark.neo4j
def test_an_ingest_returning_its_block_asks_no_version_and_ranks_before_the_write_back(store, settings, tenant) -> None:
    """The agent loop in one call (`GraphMemory.ingest(..., context=...)`): the block's read takes the versions
    the write left (no `user_version`), ranks the graph the ingest updated from the cached one (no full load),
    and the background writes the weights back once, in its own statement."""
    mem = GraphMemory(settings.model_copy(update={"rerank_in_background": True}), store=store)
    try:
        mem.ingest(tenant, "one", "s1", [TurnIn(role="user", text="I want to learn Python and Django.")])
        assert mem.wait_reranked()
        settled = mem.core.background.settled if mem.core.background is not None else 0
        with _counting(store) as seen:
            result = mem.ingest(
                tenant, "one", "s1", [TurnIn(role="user", text="How does Django use Python?")], context={}
            )
            in_call = list(seen)
            assert mem.wait_reranked()
        assert mem.core.background is not None and mem.core.background.settled == settled + 1
        assert result.context is not None and result.context == mem.context(tenant, "one")
        after_write = in_call[in_call.index("ingest_lock_user") :]
        assert "user_version (auto-commit)" not in after_write, after_write
        assert "user_interests" not in after_write  # the cached graph updated with the write's rows
        # One write-back, by the background thread (the call ranked, the background only wrote what it ranked).
        assert seen.count("user_write_weights") == 1, seen
        user = UserRef(tenant, "one")
        ranked = mem.core.ranked_graphs.peek(user)
        assert ranked is not None and ranked.version == store.user_version(user)[0] and not ranked.unwritten
        assert not mem.core.background._answering  # nothing left holding a write-back
        # Without the option the result has no block.
        assert mem.ingest(tenant, "one", "s1", [TurnIn(role="user", text="Thanks!")]).context is None
    finally:
        if mem.core.background is not None:
            mem.core.background.close(mem.settings.rerank_drain_s)


def test_an_interest_keeps_the_marks_of_its_chinese_mentions(any_store, settings, tenant) -> None:
    """Each Chinese mention stores the characters on its two sides (MENTIONS.marks) and the interest their set
    (graphmem/zh_name_likeness.py reads it); an English mention stores none. Hand-derived: 《三体》 gives 《 and 》,
    a turn opening with 三体 and going on with 的 gives ^ and 的; a user's mention keeps its marks under u:."""
    mem = GraphMemory(settings, store=any_store)  # not closed: the store is the session's
    mem.ingest(
        tenant,
        "marks",
        "s1",
        [
            TurnIn(turn_id="t1", role="user", text="我最近在看《三体》，太好看了"),
            TurnIn(turn_id="t2", role="assistant", text="三体的作者是刘慈欣。"),
            TurnIn(turn_id="t3", role="user", text="I also like Python"),
        ],
    )
    concepts = any_store.load_user_graph(UserRef(tenant, "marks")).concepts
    assert concepts["三体"].context_marks == {"u:lc=《", "u:rc=》", "lc=^", "rc=的"}  # the user's under u:
    assert concepts["python"].context_marks == frozenset()
