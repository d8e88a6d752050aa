"""Server-side defaults over HTTP (GRAPHMEM_DEFAULT_SCOPE / _FORMAT) and the ingest edit-log flag.

Real uvicorn on loopback, real Neo4j, real spaCy: a second API whose settings name other defaults
than the shipped ones (recommendation, markdown), next to the session's API with the shipped ones.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from graphmem.settings import PROJECT_ROOT, Settings
from graphmem.vocabulary import Format, Scope

pytestmark = pytest.mark.neo4j

CATALOG_YAML = (PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes()
TURNS = [
    {"turn_id": "t0", "text": "我想学Python基础", "ts": "2026-11-20T10:00:00Z"},
    {"turn_id": "t1", "text": "我对Django框架很感兴趣", "ts": "2026-11-21T10:00:00Z"},
]


def _put_catalog(client: httpx.Client) -> None:
    r = client.put("/v1/catalog", content=CATALOG_YAML, headers={"content-type": "application/yaml"})
    assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
def other_defaults(settings: Settings, store) -> Iterator[httpx.Client]:
    """An API configured with default_scope=recommendation and default_format=markdown."""
    from tests.demo_like import drop_tenant
    from tests.http_server import start_api

    key, tenant = f"key-def-{uuid.uuid4().hex[:8]}", f"api-def-{uuid.uuid4().hex[:8]}"
    running = start_api(
        settings.model_copy(
            update={
                "api_keys": f"{key}:{tenant}",
                "default_scope": Scope.recommendation,
                "default_format": Format.markdown,
            }
        )
    )
    try:
        with running.client(key) as client:
            _put_catalog(client)
            yield client
    finally:
        running.stop()
        drop_tenant(store, tenant)


@pytest.fixture(scope="module")
def shipped(api, api_tenants) -> Iterator[httpx.Client]:
    with api.client(api_tenants.key_a) as client:
        _put_catalog(client)
        yield client


def _ingest(client: httpx.Client, user_id: str, **params: str) -> dict:
    r = client.post(f"/v1/users/{user_id}/turns", params=params, json={"session_id": "s1", "turns": TURNS})
    assert r.status_code == 200, r.text
    return r.json()


def test_context_without_scope_or_format_uses_the_servers_settings(other_defaults, user_id):
    _ingest(other_defaults, user_id)
    got = other_defaults.get(f"/v1/users/{user_id}/context").json()
    assert got["scope"] == "recommendation" and got["format"] == "markdown"
    assert got["block"].startswith("## user_preference_context (scope: recommendation)")
    posted = other_defaults.post(f"/v1/users/{user_id}/context", json={"prompt": "hello"}).json()
    assert posted["scope"] == "recommendation" and posted["format"] == "markdown"
    assert posted["block"] == got["block"]


def test_a_named_scope_or_format_overrides_the_settings(other_defaults, user_id):
    _ingest(other_defaults, user_id)
    got = other_defaults.get(f"/v1/users/{user_id}/context", params={"scope": "learning", "format": "xml"}).json()
    assert got["scope"] == "learning" and got["format"] == "xml"
    assert got["block"].startswith('<user_knowledge_context scope="learning">')
    posted = other_defaults.post(f"/v1/users/{user_id}/context", json={"format": "json"}).json()
    assert posted["scope"] == "recommendation" and posted["format"] == "json"


def test_shipped_defaults_are_learning_and_xml(shipped, user_id):
    _ingest(shipped, user_id)
    got = shipped.get(f"/v1/users/{user_id}/context").json()
    assert got["scope"] == "learning" and got["format"] == "xml"


def test_edit_log_by_default_and_only_when_asked(shipped, user_id):
    full = _ingest(shipped, user_id)
    assert [e["turn_id"] for e in full["edits"]] == ["t0", "t1"]
    names = {c["name"] for e in full["edits"] for c in e["extraction"]["concepts"]}
    assert {"Python基础", "Django框架"} <= names

    other = "u-" + uuid.uuid4().hex[:10]
    lean = _ingest(shipped, other, edits="false")
    assert lean["edits"] == [] and lean["accepted"] == ["t0", "t1"] and lean["duplicates"] == []
    # The turns were stored and ranked all the same: the block is the same as with the edit log.
    blocks = [shipped.get(f"/v1/users/{u}/context").json()["block"] for u in (user_id, other)]
    assert blocks[0] == blocks[1]
    again = _ingest(shipped, other, edits="false")
    assert again["accepted"] == [] and again["duplicates"] == ["t0", "t1"] and again["edits"] == []
    explicit = _ingest(shipped, other, edits="true")
    assert [e["duplicate"] for e in explicit["edits"]] == [True, True]

    bad = shipped.post(f"/v1/users/{other}/turns", params={"edits": "maybe"}, json={"session_id": "s1", "turns": TURNS})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "INVALID_INPUT"


def test_openapi_documents_every_response_and_the_flag(shipped):
    doc = shipped.get("/openapi.json").json()
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            content = op["responses"]["200"]["content"]
            schema = next(iter(content.values()))["schema"]
            assert "$ref" in schema or schema.get("type") == "string", f"{method.upper()} {path}: {schema}"
    params = {p["name"]: p for p in doc["paths"]["/v1/users/{user_id}/turns"]["post"]["parameters"]}
    assert params["edits"]["schema"]["default"] is True and "edit log" in params["edits"]["description"]
