"""Compaction writes only what changed: tiers/weights that moved, and FOLDS links incrementally."""

from __future__ import annotations

import pytest

from graphmem.service import GraphMemory
from graphmem.store import UserRef

from .test_store import reference_turns

pytestmark = pytest.mark.neo4j

KEYS = {"python基础", "django框架", "sqlalchemy"}


def _state(store, user: UserRef) -> dict:
    records, _, _ = store._driver.execute_query(
        """
        MATCH (i:Interest {tenant: $tenant, user_id: $user_id})
        OPTIONAL MATCH (s:Summary)-[f:FOLDS]->(i)
        RETURN i.key AS key, i.tier AS tier, i.ranked_at AS ranked_at, count(f) AS links
        """,
        tenant=user.tenant,
        user_id=user.user_id,
        database_=store.database,
    )
    summary = store.summary(user)
    return {
        "rows": {r["key"]: (r["tier"], r["ranked_at"], r["links"]) for r in records},
        "count": summary["count"] if summary else None,
        "items": summary["items"] if summary else None,
        "runs": store.counts(user)["compaction_runs"],
    }


def _mem(store, settings, threshold: float) -> GraphMemory:
    return GraphMemory(settings.model_copy(update={"threshold": threshold}), store=store)


def test_incremental_folds_and_a_run_over_an_unchanged_graph_writes_nothing(store, settings, tenant):
    user = UserRef(tenant, "alice")
    store.write_ingest(user, "s1", reference_turns())
    high, low = _mem(store, settings, 1e9), _mem(store, settings, 0.0)

    run = high.compact(tenant, "alice")  # nothing reaches the threshold: everything is folded
    assert run["concepts_after"] == 0 and run["compacted"] == 3 and run["newly_compacted"] == 3
    first = _state(store, user)
    assert {k: (t, n) for k, (t, _, n) in first["rows"].items()} == dict.fromkeys(KEYS, ("compacted", 1))
    assert first["count"] == 3 and len(first["items"]) == 3 and first["runs"] == 1

    # Nothing changed since: the run is recorded, but no weight row, tier or link is rewritten.
    again = high.compact(tenant, "alice")
    assert again["newly_compacted"] == 0 and again["restored"] == [] and again["concepts_before"] == 0
    second = _state(store, user)
    assert second["rows"] == first["rows"]  # ranked_at unchanged: the rows were not written
    assert second["count"] == 3 and second["runs"] == 2

    # Everything is back above the threshold: restored concepts lose their FOLDS link.
    back = low.compact(tenant, "alice")
    assert sorted(back["restored"]) == sorted(store.load_user_graph(user).concepts[k].name for k in KEYS)
    assert back["concepts_before"] == 0 and back["concepts_after"] == 3
    third = _state(store, user)
    assert all(t != "compacted" and n == 0 for t, _, n in third["rows"].values())
    assert third["count"] == 0 and third["items"] == [] and third["runs"] == 3

    # Folded again, then restored by an ingest-time re-rank (not a compaction run): links follow tiers.
    high.compact(tenant, "alice")
    assert _state(store, user)["count"] == 3
    low.reranker.after_write(user)
    fourth = _state(store, user)
    assert all(t != "compacted" and n == 0 for t, _, n in fourth["rows"].values())
    assert fourth["count"] == 0 and fourth["runs"] == 4


def test_ingest_updates_the_cached_graph_as_a_reload_would(store, settings, tenant, monkeypatch):
    """After an ingest the service updates its cached graph from the refreshed interests instead of
    reloading every interest; the result must equal a full reload."""
    from graphmem.models import TurnIn

    mem = GraphMemory(settings, store=store)
    ran: list[str] = []
    run, read_one = store._run, store._read_one
    monkeypatch.setattr(store, "_run", lambda tx, name, *a, **kw: ran.append(name) or run(tx, name, *a, **kw))
    # A graph load that reads every interest is user_graph_load with interests=True.
    monkeypatch.setattr(
        store,
        "_read_one",
        lambda name, **kw: ran.append("user_interests" if kw.get("interests") else name) or read_one(name, **kw),
    )
    texts = [
        "I want to learn Python before Django",
        "Django uses SQL databases and an ORM",
        "Is NumPy needed for pandas?",
        "I already know linear algebra",
        "Explain gradient descent please",
        "What about neural networks and backpropagation?",
    ]
    for n, start in enumerate(range(0, len(texts), 2)):
        mem.ingest(
            tenant,
            "bob",
            f"s{n}",
            [TurnIn(turn_id=f"t{start + j}", role="user", text=t) for j, t in enumerate(texts[start : start + 2])],
        )
        assert "user_interests" not in ran  # the ingest path did not reload the interests
        user = UserRef(tenant, "bob")
        cached = mem.core.ranked_graphs.peek(user)
        assert cached.version == store.user_version(user)[0]
        reloaded = store.load_user_graph(user)
        assert cached.graph.edges == reloaded.edges
        assert cached.graph.concepts == reloaded.concepts
        assert (cached.graph.now, cached.graph.history_tokens, cached.graph.turn_count) == (
            reloaded.now,
            reloaded.history_tokens,
            reloaded.turn_count,
        )
        ran.clear()
