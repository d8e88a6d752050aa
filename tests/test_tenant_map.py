"""The tenant -> server/database map (Settings.tenant_uris / tenant_databases), issue 16 item 5.

Neo4j Community hosts one user database, so the server map is tested with two Community servers: the
shared one and a second one of this test's own (GRAPHMEM_SECOND_NEO4J_URI points at a running one
instead, e.g. bolt://127.0.0.1:7697). One API serves two tenants, one mapped to each server: each
tenant's data lands only on its server, the schema is applied on both, and both tenants work.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import exceptions as neo4j_errors

from graphmem.neo4j_server import LocalNeo4j
from graphmem.settings import Settings
from graphmem.store import Neo4jStore, UserRef
from graphmem.tenant_stores import TenantRoutedStore, open_store, tenant_target
from tests.demo_like import drop_tenant
from tests.http_server import free_port, start_api
from tests.reliability import keys_spec

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def second_uri(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    given = os.environ.get("GRAPHMEM_SECOND_NEO4J_URI")
    if given:
        yield given
        return
    own = settings.model_copy(
        update={
            "neo4j_uri": None,
            "neo4j_home": Path(tmp_path_factory.mktemp("neo4j-second")),
            "neo4j_bolt_port": free_port(),
            "neo4j_http_port": free_port(),
            "neo4j_heap": "512m",
            "neo4j_pagecache": "128m",
        }
    )
    server = LocalNeo4j(own)
    server.start()
    try:
        yield server.bolt_uri
    finally:
        server.stop()


def _on(settings: Settings, uri: str) -> Neo4jStore:
    return Neo4jStore(settings.model_copy(update={"neo4j_uri": uri, "tenant_uris": {}, "tenant_databases": {}}))


def test_each_tenant_lives_on_its_own_server_behind_one_api(settings: Settings, store, second_uri: str) -> None:
    here, there = f"map-a-{uuid.uuid4().hex[:6]}", f"map-b-{uuid.uuid4().hex[:6]}"
    keys = {here: f"k-{here}", there: f"k-{there}"}
    first_uri = settings.neo4j_uri or f"bolt://127.0.0.1:{settings.neo4j_bolt_port}"
    mapped = settings.model_copy(
        update={"tenant_uris": {there: second_uri}, "api_keys": keys_spec({k: t for t, k in keys.items()})}
    )
    assert tenant_target(mapped, there) == (second_uri, "neo4j")
    assert tenant_target(mapped, here) == (first_uri, "neo4j")
    api = start_api(mapped)  # /readyz only once the schema is applied on both servers
    first, second = _on(settings, first_uri), _on(settings, second_uri)
    try:
        assert isinstance(api.app.state.graphmem["memory"].store, TenantRoutedStore)
        # The schema (constraints) is on the second server too.
        assert {c["name"] for c in second.schema_state()["constraints"]} >= {
            c["name"] for c in first.schema_state()["constraints"]
        }
        blocks = {}
        for tenant, concept in ((here, "Kubernetes"), (there, "Terraform")):
            with api.client(keys[tenant]) as http:
                put = http.put("/v1/catalog", json={"concepts": [{"name": "Linux", "type": "skill"}]})
                assert put.status_code == 200, put.text
                r = http.post(
                    "/v1/users/ana/turns",
                    json={"session_id": "s", "turns": [{"turn_id": "t1", "text": f"I want to learn {concept}."}]},
                )
                assert r.status_code == 200, r.text
                c = http.get("/v1/users/ana/context", params={"scope": "general"})
                assert c.status_code == 200, c.text
                blocks[tenant] = c.json()["block"]
        assert "Kubernetes" in blocks[here] and "Terraform" not in blocks[here]
        assert "Terraform" in blocks[there] and "Kubernetes" not in blocks[there]
        # Each tenant's users, turns and catalog are on its own server only.
        assert first.list_users(here) == ["ana"] and second.list_users(here) == []
        assert second.list_users(there) == ["ana"] and first.list_users(there) == []
        assert second.counts(UserRef(there, "ana"))["turns"] == 1
        assert first.counts(UserRef(there, "ana"))["turns"] == 0
        assert second.get_catalog(there)[0] is not None and first.get_catalog(there)[0] is None
        assert first.get_catalog(here)[0] is not None and second.get_catalog(here)[0] is None
        # A token of the mapped tenant carries its server's bookmarks and works on the read after it.
        with api.client(keys[there]) as http:
            w = http.post("/v1/users/ana/turns", json={"session_id": "s", "turns": [{"text": "I use Ansible."}]})
            token = w.json()["consistency"]
            r = http.get("/v1/users/ana/context", params={"scope": "general", "consistency": token})
            assert r.status_code == 200 and "Ansible" in r.json()["block"], r.text
    finally:
        api.stop()
        drop_tenant(first, here)
        drop_tenant(second, there)
        first.close()
        second.close()


def test_a_tenant_mapped_to_a_database_the_server_lacks_fails_at_the_store(settings: Settings, store) -> None:
    # Community has one user database: the map routes the tenant there, and Neo4j says it does not exist.
    mapped = settings.model_copy(update={"tenant_databases": {"big-school": "bigschool"}})
    routed = open_store(mapped)
    try:
        assert isinstance(routed, TenantRoutedStore)
        assert routed.store_for("big-school").database == "bigschool"
        assert routed.store_for("anyone-else").database == settings.neo4j_database
        # One driver for the two databases of one server.
        assert routed.store_for("big-school")._driver is routed.store_for("anyone-else")._driver
        with pytest.raises(neo4j_errors.ClientError) as err:
            routed.user_version(UserRef("big-school", "ana"))
        assert "DatabaseNotFound" in (err.value.code or "")
        assert routed.user_version(UserRef("anyone-else", "nobody"))[0] is None
    finally:
        routed.close()


def test_settings_refuse_bad_maps() -> None:
    with pytest.raises(ValueError, match="not a Neo4j user database name"):
        Settings(tenant_databases={"t": "system"})
    with pytest.raises(ValueError, match="not a bolt:// or neo4j:// URI"):
        Settings(tenant_uris={"t": "http://db2:7474"})
