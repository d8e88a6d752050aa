"""The store against the real Neo4j server (issue: foundation)."""

from __future__ import annotations

import json
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest

from graphmem.models import (
    ConceptMention,
    ExtractorName,
    RelationMention,
    RelationType,
    Stance,
    StanceMention,
    Tier,
    TurnExtraction,
)
from graphmem.store import CatalogRows, StoredTurn, UserRef, WeightRow

pytestmark = pytest.mark.neo4j

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def mention(
    text: str, name: str, key: str | None = None, extractor: ExtractorName = ExtractorName.catalog
) -> ConceptMention:
    start = text.index(name)
    return ConceptMention(
        key=key or name.casefold(),
        name=name,
        start=start,
        end=start + len(name),
        surface=name,
        extractor=extractor,
        confidence=0.9,
        in_catalog=extractor is ExtractorName.catalog,
    )


def turn(
    turn_id: str,
    text: str,
    names: list[str],
    minutes: int = 0,
    role: str = "user",
    relations: list[tuple[str, RelationType, str]] = (),
    stances: list[tuple[str, Stance]] = (),
) -> StoredTurn:
    ex = TurnExtraction(
        language="zh",
        concepts=[mention(text, n) for n in names],
        relations=[
            RelationMention(
                source_key=a.casefold(),
                source_name=a,
                type=t,
                target_key=b.casefold(),
                target_name=b,
                start=0,
                end=len(text),
                extractor=ExtractorName.pattern,
                confidence=0.8,
                cue="cue",
            )
            for a, t, b in relations
        ],
        stances=[
            StanceMention(key=n.casefold(), name=n, stance=s, start=0, end=2, cue="cue", confidence=0.9)
            for n, s in stances
        ],
    )
    return StoredTurn(turn_id, role, text, T0 + timedelta(minutes=minutes), "zh", len(text), ex)


def reference_turns() -> list[StoredTurn]:
    return [
        turn("t1", "我学过Python基础", ["Python基础"], 0, stances=[("Python基础", Stance.knows)]),
        turn(
            "t2",
            "学Django框架之前要先学Python基础",
            ["Django框架", "Python基础"],
            1,
            relations=[("Python基础", RelationType.prerequisite, "Django框架")],
        ),
        turn(
            "t3",
            "Django框架用到SQLAlchemy",
            ["Django框架", "SQLAlchemy"],
            2,
            role="assistant",
            relations=[("Django框架", RelationType.uses, "SQLAlchemy")],
        ),
    ]


def test_schema_is_idempotent(store):
    first = store.apply_schema()
    second = store.apply_schema()
    assert first == second
    assert {"turn_key", "concept_key", "user_key", "interest_key"} <= set(first)
    index_names = {i["name"] for i in store.schema_state()["indexes"]}
    assert "concept_names" in index_names  # the full-text index


def test_batch_round_trips(store, tenant):
    user = UserRef(tenant, "alice")
    result = store.write_ingest(user, "s1", reference_turns())
    assert result.accepted == ["t1", "t2", "t3"] and result.duplicates == []

    turns = store.turns(user)
    assert [t["turn_id"] for t in turns] == ["t1", "t2", "t3"]
    assert turns[1]["text"] == "学Django框架之前要先学Python基础"
    assert {t["session_id"] for t in turns} == {"s1"}
    assert turns[2]["role"] == "assistant"

    graph = store.load_user_graph(user)
    assert set(graph.concepts) == {"python基础", "django框架", "sqlalchemy"}
    py = graph.concepts["python基础"]
    assert py.user_mentions == 2 and py.assistant_mentions == 0 and py.stance is Stance.knows
    assert graph.concepts["sqlalchemy"].assistant_mentions == 1
    assert py.sessions == ("s1",)
    edges = {(e.source, e.type, e.target, e.scope) for e in graph.edges}
    assert edges == {
        ("python基础", RelationType.prerequisite, "django框架", "user"),
        ("django框架", RelationType.uses, "sqlalchemy", "user"),
    }
    assert graph.turn_count == 3

    mentions = store.concept_mentions(user, "django框架")
    assert [(m["turn_id"], m["surface"]) for m in mentions] == [("t2", "Django框架"), ("t3", "Django框架")]
    text = turns[1]["text"]
    assert text[mentions[0]["start"] : mentions[0]["end"]] == "Django框架"


def _user_relations(store, user: UserRef) -> list[dict]:
    records, _, _ = store._driver.execute_query(
        "MATCH (a:Concept)-[r:PREREQUISITE_OF {tenant: $tenant, owner: $owner}]->(b:Concept) "
        "RETURN a.key AS a, b.key AS b, r.turn_ids AS turn_ids, r.count AS count, r.cues AS cues, r.pair AS pair",
        tenant=user.tenant,
        owner=user.owner,
        database_=store.database,
    )
    return [dict(r) for r in records]


def test_a_relation_stated_again_accumulates_on_one_edge(store, tenant):
    user = UserRef(tenant, "alice")
    rel = [("Python基础", RelationType.prerequisite, "Django框架")]
    text = "学Django框架之前要先学Python基础"
    # Twice in one batch (aggregated into one row) and once more in a later batch (found by index seek).
    store.write_ingest(
        user,
        "s1",
        [
            turn("t1", text, ["Django框架", "Python基础"], 0, relations=rel),
            turn("t2", text, ["Django框架", "Python基础"], 1, relations=rel),
        ],
    )
    store.write_ingest(user, "s1", [turn("t3", text, ["Django框架", "Python基础"], 2, relations=rel)])
    rows = _user_relations(store, user)
    assert len(rows) == 1, rows
    assert rows[0]["turn_ids"] == ["t1", "t2", "t3"] and rows[0]["count"] == 3 and rows[0]["cues"] == ["cue"]
    assert rows[0]["pair"] == "python基础\tdjango框架"
    # Another user's identical relation is a separate edge (owner-scoped), not an addition to this one.
    store.write_ingest(UserRef(tenant, "bob"), "s1", [turn("b1", text, ["Django框架", "Python基础"], 0, relations=rel)])
    assert _user_relations(store, user)[0]["turn_ids"] == ["t1", "t2", "t3"]
    assert [r["turn_ids"] for r in _user_relations(store, UserRef(tenant, "bob"))] == [["b1"]]


def test_migration_gives_old_mentions_and_relations_their_owner(store, tenant):
    """Data written before mentions carried (tenant, user_id, key) and relations their pair is
    backfilled once by apply_schema, and then counts and relation lookups see it."""
    user = UserRef(tenant, "old")
    store.write_ingest(user, "s1", reference_turns())
    run = lambda q: store._driver.execute_query(q, tenant=tenant, database_=store.database)  # noqa: E731
    run("MATCH (:Turn {tenant: $tenant})-[m:MENTIONS]->() REMOVE m.tenant, m.user_id, m.key")
    run("MATCH ()-[r:PREREQUISITE_OF {tenant: $tenant}]->() REMOVE r.pair")
    run("MATCH (m:Migration) DELETE m")
    store.apply_schema()
    records, _, _ = store._driver.execute_query(
        "MATCH (t:Turn {tenant: $tenant})-[m:MENTIONS]->(c) RETURN m.tenant = t.tenant AND m.user_id = t.user_id "
        "AND m.key = c.key AS ok",
        tenant=tenant,
        database_=store.database,
    )
    assert records and all(r["ok"] for r in records)
    assert [r["pair"] for r in _user_relations(store, user)] == ["python基础\tdjango框架"]
    # The next write finds the backfilled edge instead of creating a second one, and counts stay exact.
    store.write_ingest(
        user,
        "s1",
        [
            turn(
                "t4",
                "学Django框架之前要先学Python基础",
                ["Django框架", "Python基础"],
                3,
                relations=[("Python基础", RelationType.prerequisite, "Django框架")],
            )
        ],
    )
    assert [r["turn_ids"] for r in _user_relations(store, user)] == [["t2", "t4"]]
    assert store.load_user_graph(user).concepts["python基础"].user_mentions == 3


def test_resend_changes_nothing(store, tenant):
    user = UserRef(tenant, "alice")
    store.write_ingest(user, "s1", reference_turns())
    store.write_weights(user, [WeightRow("python基础", 20, 8, 28, Tier.core)])
    before = store.counts(user)
    graph_before = store.load_user_graph(user)

    again = store.write_ingest(user, "s1", reference_turns())
    assert again.accepted == [] and again.duplicates == ["t1", "t2", "t3"]
    after = store.counts(user)
    graph_after = store.load_user_graph(user)
    assert after == before
    assert {k: (c.user_mentions, c.assistant_mentions, c.stance) for k, c in graph_after.concepts.items()} == {
        k: (c.user_mentions, c.assistant_mentions, c.stance) for k, c in graph_before.concepts.items()
    }
    assert graph_after.edges == graph_before.edges
    rows = store.read_statement("user_interests", tenant=tenant, user_id="alice", owner="u:alice")
    assert {r["key"]: r["weight"] for r in rows}["python基础"] == 28


class InjectedFault(RuntimeError):
    pass


@pytest.mark.parametrize("step", ["turns", "mentions", "relations"])
def test_failure_part_way_leaves_nothing(store, tenant, step):
    user = UserRef(tenant, "bob")

    def fault(at: str) -> None:
        if at == step:
            raise InjectedFault(at)  # a fault we cannot cause on demand in a real server mid-transaction

    with pytest.raises(InjectedFault):
        store.write_ingest(user, "s1", reference_turns(), fault=fault)
    counts = store.counts(user)
    assert counts["exists"] is False
    assert counts["turns"] == counts["mentions"] == counts["interests"] == counts["relations"] == 0
    # and the same batch then goes through whole
    assert store.write_ingest(user, "s1", reference_turns()).accepted == ["t1", "t2", "t3"]


def test_failed_weight_write_changes_nothing(store, tenant):
    user = UserRef(tenant, "carol")
    store.write_ingest(user, "s1", reference_turns())
    before = store.read_statement("user_interests", tenant=tenant, user_id="carol", owner="u:carol")

    def fault(at: str) -> None:
        if at == "weights":
            raise InjectedFault(at)

    with pytest.raises(InjectedFault):
        store.write_weights(user, [WeightRow("python基础", 1, 1, 2, Tier.compacted)], fault=fault)
    after = store.read_statement("user_interests", tenant=tenant, user_id="carol", owner="u:carol")
    assert after == before


def catalog_rows() -> CatalogRows:
    concepts = [
        {
            "key": k.casefold(),
            "name": k,
            "aliases": [],
            "aliases_text": "",
            "type": "topic",
            "id": None,
            "url": None,
            "critical": False,
            "language": "zh",
        }
        for k in ["Python基础", "Django框架", "SQLAlchemy", "SQL基础"]
    ]
    relations = {RelationType.requires: [{"source_key": "sqlalchemy", "target_key": "sql基础"}]}
    return CatalogRows(json.dumps({"concepts": [c["name"] for c in concepts]}), concepts, relations)


def test_erase_removes_only_that_user(store, tenant):
    store.replace_catalog(tenant, catalog_rows())
    alice, bob = UserRef(tenant, "alice"), UserRef(tenant, "bob")
    store.write_ingest(alice, "s1", reference_turns() + [turn("t9", "我喜欢Haskell", ["Haskell"], 9)])
    store.write_ingest(bob, "s1", reference_turns())
    bob_before = store.counts(bob)

    erased = store.erase_user(alice)
    assert erased["turns"] == 4 and erased["users"] == 1
    leftovers = store.read_statement("concepts_by_keys", tenant=tenant, keys=["haskell"])
    assert leftovers == []  # a concept only alice ever mentioned goes with her
    counts = store.counts(alice)
    assert counts == {
        "exists": False,
        "turns": 0,
        "sessions": 0,
        "interests": 0,
        "mentions": 0,
        "stances": 0,
        "relations": 0,
        "compaction_runs": 0,
    }
    assert store.counts(bob) == bob_before
    catalog_keys = {c["key"] for c in store.catalog_concepts(tenant)}
    assert catalog_keys == {"python基础", "django框架", "sqlalchemy", "sql基础"}


def test_relations_of_one_user_are_invisible_to_another(store, tenant):
    store.replace_catalog(tenant, catalog_rows())
    alice, bob = UserRef(tenant, "alice"), UserRef(tenant, "bob")
    store.write_ingest(alice, "s1", reference_turns())
    store.write_ingest(bob, "s1", [turn("b1", "Django框架和SQLAlchemy", ["Django框架", "SQLAlchemy"])])
    bob_graph = store.load_user_graph(bob)
    scopes = {(e.source, e.type, e.target, e.scope) for e in bob_graph.edges}
    # only the catalog relation is visible to bob; alice's prerequisite/uses relations are not
    assert scopes == {("sqlalchemy", RelationType.requires, "sql基础", "catalog")}
    alice_graph = store.load_user_graph(alice)
    assert ("django框架", RelationType.uses, "sqlalchemy", "user") in {
        (e.source, e.type, e.target, e.scope) for e in alice_graph.edges
    }


def test_user_ref_requires_ids():
    from graphmem.errors import InvalidInput

    with pytest.raises(InvalidInput):
        UserRef("t", "")
    with pytest.raises(InvalidInput):
        UserRef("", "u")


def test_forget_concept_removes_derived_data_but_keeps_turns(store, tenant):
    user = UserRef(tenant, "dana")
    store.write_ingest(user, "s1", reference_turns())
    result = store.forget_concept(user, "django框架")
    assert result["interests"] == 1 and result["provenance"] >= 2
    graph = store.load_user_graph(user)
    assert "django框架" not in graph.concepts
    assert all("django框架" not in (e.source, e.target) for e in graph.edges)
    assert len(store.turns(user)) == 3  # history is kept


def test_catalog_replace_round_trips(store, tenant):
    version = store.replace_catalog(tenant, catalog_rows())
    doc, got_version = store.get_catalog(tenant)
    assert got_version == version and doc == {"concepts": ["Python基础", "Django框架", "SQLAlchemy", "SQL基础"]}
    smaller = CatalogRows("{}", catalog_rows().concepts[:2], {})
    assert store.replace_catalog(tenant, smaller) == version + 1
    assert {c["key"] for c in store.catalog_concepts(tenant)} == {"python基础", "django框架"}


def test_browser_is_served(neo4j_server, settings):
    if settings.neo4j_uri:
        pytest.skip("NEO4J_URI points at an external server; its Browser is not ours to test")
    with urllib.request.urlopen(f"http://127.0.0.1:{settings.neo4j_http_port}/browser/", timeout=10) as resp:
        body = resp.read().decode("utf-8", "replace")
        assert resp.status == 200
    assert "Neo4j Browser" in body or "neo4j" in body.lower()


def test_no_pooled_connection_in_time_is_a_503_not_a_500(settings, store, tenant):
    """A pool that gives no connection within neo4j_acquisition_timeout_s (the driver raises a code-less
    ClientError) is StoreUnavailable (503 "retry"), not a store failure (500). Caused for real: a pool of one
    connection, held by an open transaction."""
    import time

    from neo4j import GraphDatabase

    from graphmem.errors import StoreUnavailable
    from graphmem.store import Neo4jStore

    tight = settings.model_copy(update={"neo4j_acquisition_timeout_s": 0.5})
    driver = GraphDatabase.driver(
        settings.neo4j_uri or f"bolt://127.0.0.1:{settings.neo4j_bolt_port}",
        auth=(settings.neo4j_user, settings.neo4j_password),
        max_connection_pool_size=1,
        connection_acquisition_timeout=tight.neo4j_acquisition_timeout_s,
    )
    small = Neo4jStore(tight, driver=driver)
    try:
        with driver.session(database=small.database) as holder, holder.begin_transaction() as tx:
            tx.run("RETURN 1").consume()  # the pool's only connection is now in use
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match="no Neo4j connection free"):
                small.user_version(UserRef(tenant, "nobody"))
            assert time.monotonic() - started < 10
        assert small.user_version(UserRef(tenant, "nobody"))[0] is None  # and it works once the pool frees
    finally:
        small.close()
