"""`graphmem serve --workers 2`: two API processes over one Neo4j stay consistent.

Each worker caches ranked graphs and blocks per user, keyed by the graph and catalog
versions it reads from Neo4j. A write through one worker must show in the very next
block, whichever worker serves it: every request here opens a new connection, so the
kernel hands requests to both processes, and both have cached the user's block before
each write.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from graphmem.settings import PROJECT_ROOT, Settings
from tests.demo_like import drop_tenant
from tests.http_server import free_port
from tests.reliability import keys_spec, settings_env, wait_ready

pytestmark = pytest.mark.neo4j

CONCEPTS = ["Kubernetes", "Terraform", "GraphQL", "Redis", "Kafka", "Elasticsearch"]


def _fresh(base_url: str, key: str) -> httpx.Client:
    # No keep-alive: each request is a new connection, accepted by whichever worker is free.
    return httpx.Client(
        base_url=base_url,
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
        limits=httpx.Limits(max_keepalive_connections=0),
    )


def test_two_workers_serve_each_write_in_the_next_block(settings: Settings, store) -> None:
    tenant, key, user = f"workers-{uuid.uuid4().hex[:8]}", f"wk-{uuid.uuid4().hex[:8]}", "ana"
    port = free_port()
    env = {
        **settings_env(settings),
        "GRAPHMEM_API_KEYS": keys_spec({key: tenant}),
        "NEO4J_URI": f"bolt://127.0.0.1:{settings.neo4j_bolt_port}",
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from graphmem.cli import main; raise SystemExit(main())",
            "serve",
            "--workers",
            "2",
            "--port",
            str(port),
        ],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, timeout_s=180, proc=proc)
        with _fresh(base, key) as http, ThreadPoolExecutor(8) as pool:

            def blocks(n: int) -> list[httpx.Response]:
                # Concurrent requests on fresh connections: while one worker is busy the other accepts.
                return list(
                    pool.map(lambda _: http.get(f"/v1/users/{user}/context", params={"scope": "general"}), range(n))
                )

            pids: set[str] = set()
            for i, name in enumerate(CONCEPTS):
                for r in blocks(8):  # both workers cache the user's current block (or its absence)
                    assert r.status_code in (200, 404), r.text
                    pids.add(r.headers["x-graphmem-worker"])
                w = http.post(
                    f"/v1/users/{user}/turns",
                    json={
                        "session_id": "s1",
                        "turns": [{"turn_id": f"t{i}", "role": "user", "text": f"I want to learn {name}."}],
                    },
                )
                assert w.status_code == 200, w.text
                for r in blocks(8):
                    pids.add(r.headers["x-graphmem-worker"])
                    block = r.json()["block"]
                    assert all(n in block for n in CONCEPTS[: i + 1]), (name, r.headers["x-graphmem-worker"], block)
            assert len(pids) == 2, pids  # both processes answered
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        drop_tenant(store, tenant)
