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
from graphmem.errors import TurnIdConflict
from graphmem.memory_store import InMemoryStore
from graphmem.models import TurnIn
from graphmem.service import GraphMemory
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
    session, run, run_flat = store._session, store._run, store._run_flat

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

    store._session, store._run, store._run_flat = counted_session, counted(run), counted(run_flat)  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        del store._session, store._run, store._run_flat


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
    # One read transaction before the write (then the concepts' own short write, then the write).
    assert before_write.count("read") == 1, before_write
    assert {"ingest_existing_turns", "catalog_version", "ingest_prior_turn"} <= set(before_write)
    # The token's versions came from the write's transaction; the synchronous re-rank wrote after it.
    assert written is not None and written[0] < store.user_version(user)[0]

    catalog_version = store.user_version(user)[1]
    with _counting(store) as seen:
        store.load_user_graph(user, catalog_version=catalog_version)  # the catalog's relations are cached
    assert seen == ["read", "user_interests", "user_graph_rest"]
