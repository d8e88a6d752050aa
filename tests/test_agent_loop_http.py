"""The agent loop over HTTP with the shipped default (re-rank in the background): read-your-writes.

Real uvicorn on loopback, real Neo4j, real spaCy. An agent stores the user's new turn, then asks for the
block right away, with no consistency token and no pause: the block must be ranked on a graph that holds
the turn (its X-Graphmem-Graph-Version is at least the version the ingest's token names), and the graph
read next counts the mention exactly (nothing lost, nothing counted twice), while other clients run the
same loop for their own users. Once the background is idle the stored weights equal what the reads showed.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import cast

import httpx
import pytest
from fastapi import FastAPI

from graphmem.api.consistency import VERSION_HEADER
from graphmem.consistency import decode
from graphmem.settings import PROJECT_ROOT, Settings
from graphmem.store import Neo4jStore, UserRef
from tests.http_server import RunningAPI

pytestmark = pytest.mark.neo4j

CATALOG_YAML = (PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes()
# (turn text, the catalog concept key it names)
TURNS = [
    ("I want to learn Docker.", "docker"),
    ("I struggle with React.", "react"),
    ("PostgreSQL is next on my list.", "postgresql"),
    ("Can you explain Nginx to me?", "nginx"),
]
CLIENTS = 4
LOOPS = 8


@pytest.fixture(scope="module")
def api(settings: Settings, store) -> Iterator[tuple[RunningAPI, httpx.Client, str, str]]:
    from tests.demo_like import drop_tenant
    from tests.http_server import start_api

    key, tenant = f"key-loop-{uuid.uuid4().hex[:8]}", f"api-loop-{uuid.uuid4().hex[:8]}"
    running = start_api(settings.model_copy(update={"api_keys": f"{key}:{tenant}", "rerank_in_background": True}))
    try:
        with running.client(key) as client:
            r = client.put("/v1/catalog", content=CATALOG_YAML, headers={"content-type": "application/yaml"})
            assert r.status_code == 200, r.text
            yield running, client, key, tenant
    finally:
        running.stop()
        drop_tenant(store, tenant)


def _loop(base_url: str, key: str, tenant: str, user_id: str, failures: list[str]) -> None:
    mentions: dict[str, int] = {}
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
        for i in range(LOOPS):
            text, concept = TURNS[i % len(TURNS)]
            r = c.post(
                f"/v1/users/{user_id}/turns",
                json={"session_id": "s", "turns": [{"turn_id": f"t{i}", "role": "user", "text": text}]},
            )
            if r.status_code != 200:
                failures.append(f"ingest {r.status_code} {r.text[:200]}")
                return
            written = decode(r.json()["consistency"], tenant).version
            mentions[concept] = mentions.get(concept, 0) + 1
            block = c.get(f"/v1/users/{user_id}/context")
            answered = int(block.headers.get(VERSION_HEADER, "-1"))
            if block.status_code != 200 or written is None or answered < written:
                failures.append(f"{user_id} loop {i}: block at version {answered}, the ingest left {written}")
            nodes = {n["key"]: n for n in c.get(f"/v1/users/{user_id}/graph").json()["nodes"]}
            got = nodes.get(concept, {}).get("user_mentions")
            if got != mentions[concept]:
                failures.append(f"{user_id} loop {i}: {concept} has {got} mentions, {mentions[concept]} sent")


def test_a_block_right_after_an_ingest_reflects_the_turn(
    api: tuple[RunningAPI, httpx.Client, str, str], store: Neo4jStore
) -> None:
    running, client, key, tenant = api
    app = cast(FastAPI, running.app)
    failures: list[str] = []
    users = [f"loop-{uuid.uuid4().hex[:6]}-{u}" for u in range(CLIENTS)]
    threads = [threading.Thread(target=_loop, args=(str(client.base_url), key, tenant, u, failures)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert failures == []

    # Once the background is idle, the stored weights are the ones the reads showed (within the 1 % a
    # write-back leaves unwritten).
    assert app.state.graphmem["memory"].wait_reranked(60)
    for u in users:
        shown = {n["key"]: n["weight"] for n in client.get(f"/v1/users/{u}/graph").json()["nodes"]}
        stored = store.load_user_graph(UserRef(tenant, u)).concepts
        for key_ in (k for _, k in TURNS):
            weight = stored[key_].weight
            assert weight is not None and abs(weight - shown[key_]) <= 0.011 * max(1.0, abs(weight)), (u, key_)
