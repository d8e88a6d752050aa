"""The agent loop in one call over HTTP: an ingest that asks for its block (`"context": {...}` in the body).

Real uvicorn on loopback, real Neo4j, real spaCy, the shipped default (re-rank in the background). Two learners
with the same history get the same turns: one through the one call, the other through the two calls an agent
makes today (ingest, then GET the block with the same options). The blocks must be equal, field by field, with
the default options, with a focus and a budget, and in JSON with evidence; and a GET right after the one call
must return its block too. Without the option the ingest answers as before (no `context` key); a refused
block (too small a budget, a prompt that already holds the block, a consistency token) stores nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from graphmem.consistency import decode
from graphmem.settings import PROJECT_ROOT, Settings
from tests.http_server import RunningAPI

pytestmark = pytest.mark.neo4j

CATALOG_YAML = (PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes()
HISTORY = [
    "I want to learn Django, I already know Python.",
    "I struggle with React and JavaScript promises.",
    "PostgreSQL and Docker are next on my list.",
]
LOOP = [
    "How do I deploy Django with Nginx?",
    "I'm confused by Docker volumes.",
    "Can you explain REST APIs to me?",
    "I already know HTML and CSS.",
]
OPTIONS: list[dict[str, Any]] = [
    {},
    {"focus": "How do I deploy Django with Docker?", "max_tokens": 60},
    {"format": "json", "evidence": True, "scope": "recommendation", "max_tokens": 120},
    {"format": "markdown", "tag": "memo", "focus": "React hooks"},
]
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def api(settings: Settings, store) -> Iterator[tuple[httpx.Client, str]]:
    from tests.demo_like import drop_tenant
    from tests.http_server import start_api

    key, tenant = f"key-one-{uuid.uuid4().hex[:8]}", f"api-one-{uuid.uuid4().hex[:8]}"
    running: RunningAPI = start_api(
        settings.model_copy(update={"api_keys": f"{key}:{tenant}", "rerank_in_background": True})
    )
    try:
        with running.client(key) as client:
            r = client.put("/v1/catalog", content=CATALOG_YAML, headers={"content-type": "application/yaml"})
            assert r.status_code == 200, r.text
            yield client, tenant
    finally:
        running.stop()
        drop_tenant(store, tenant)


def _turn(i: int, text: str) -> dict[str, Any]:
    # Fixed times: twins' recency weights are then identical, so their blocks can be compared exactly.
    return {"turn_id": f"t{i}", "role": "user", "text": text, "ts": (T0 + timedelta(minutes=i)).isoformat()}


def _post(client: httpx.Client, user: str, turns: list[dict[str, Any]], context: dict[str, Any] | None = None):
    body: dict[str, Any] = {"session_id": "s", "turns": turns}
    if context is not None:
        body["context"] = context
    return client.post(f"/v1/users/{user}/turns", json=body)


def _get(client: httpx.Client, user: str, options: dict[str, Any]) -> dict[str, Any]:
    params = {k: str(v).lower() if isinstance(v, bool) else v for k, v in options.items()}
    r = client.get(f"/v1/users/{user}/context", params=params)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("options", OPTIONS, ids=["defaults", "focus+budget", "json+evidence", "markdown+tag"])
def test_one_call_returns_the_block_a_get_right_after_returns(api: tuple[httpx.Client, str], options) -> None:
    client, _ = api
    one, two = f"one-{uuid.uuid4().hex[:6]}", f"two-{uuid.uuid4().hex[:6]}"
    history = [_turn(i, t) for i, t in enumerate(HISTORY)]
    for user in (one, two):
        assert _post(client, user, history).status_code == 200
    for i, text in enumerate(LOOP, start=len(HISTORY)):
        r = _post(client, one, [_turn(i, text)], options)
        assert r.status_code == 200, r.text
        in_one = r.json()["context"]
        assert r.json()["accepted"] == [f"t{i}"]
        assert _post(client, two, [_turn(i, text)]).status_code == 200
        two_calls = _get(client, two, options)
        assert in_one == two_calls, f"turn {i}: one call {in_one['block']!r} vs two calls {two_calls['block']!r}"
        # And on the same learner: a GET right after the one call answers the same block.
        assert _get(client, one, options) == in_one
    assert "Django" in in_one["block"] or "django" in in_one["block"].lower()


def test_without_the_option_the_ingest_answers_as_before(api: tuple[httpx.Client, str]) -> None:
    client, tenant = api
    user = f"plain-{uuid.uuid4().hex[:6]}"
    r = _post(client, user, [_turn(0, HISTORY[0])])
    assert r.status_code == 200
    assert set(r.json()) == {"user_id", "session_id", "accepted", "duplicates", "edits", "consistency"}
    assert decode(r.json()["consistency"], tenant).version is not None


def test_a_resent_turn_still_returns_the_block(api: tuple[httpx.Client, str]) -> None:
    client, _ = api
    user = f"dup-{uuid.uuid4().hex[:6]}"
    first = _post(client, user, [_turn(0, HISTORY[0])], {"focus": "Django"})
    again = _post(client, user, [_turn(0, HISTORY[0])], {"focus": "Django"})
    assert again.status_code == 200 and again.json()["duplicates"] == ["t0"]
    assert again.json()["context"] == first.json()["context"] == _get(client, user, {"focus": "Django"})


@pytest.mark.parametrize(
    ("context", "status", "code"),
    [
        ({"max_tokens": 1}, 422, "BUDGET_TOO_SMALL"),
        ({"prompt": '<user_knowledge_context scope="learning">'}, 409, "CONTEXT_LOOP_DETECTED"),
        ({"consistency": "abc"}, 422, "INVALID_INPUT"),
        ({"format": "yaml"}, 422, "INVALID_INPUT"),
        ({"max_tokens": "100"}, 422, "INVALID_INPUT"),
        ({"unknown": 1}, 422, "INVALID_INPUT"),
    ],
)
def test_a_refused_block_stores_nothing(api: tuple[httpx.Client, str], context, status: int, code: str) -> None:
    client, _ = api
    user = f"refused-{uuid.uuid4().hex[:6]}"
    r = _post(client, user, [_turn(0, HISTORY[0])], context)
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    missing = client.get(f"/v1/users/{user}/graph")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "USER_NOT_FOUND"
