"""Erasure (issue 8.5): after DELETE /v1/users/{id} nothing of the user remains in Neo4j, exports no
longer include them, and other users are untouched."""

from __future__ import annotations

import subprocess
import sys

import pytest

from graphmem.errors import NotFound
from graphmem.service import GraphMemory
from graphmem.settings import PROJECT_ROOT
from graphmem.store import UserRef
from tests.reliability import FUTURE, keys_spec, run_id, settings_env

pytestmark = pytest.mark.neo4j


def nodes_or_rels_holding(store, needles: list[str], tenant: str | None = None, limit: int = 20) -> list[dict]:
    """Every node and relationship — in the whole database unless `tenant` narrows it — with a string
    property, or a string in a list property, that contains one of `needles`.

    Tenants' catalog documents (Tenant.catalog_json, megabytes in benchmark tenants) are checked
    separately for our tenant, to keep the whole-database scan within seconds.
    """
    hit = """any(k IN [k IN keys(x) WHERE k <> 'catalog_json'] WHERE
               any(v IN CASE WHEN x[k] IS :: LIST<ANY> THEN x[k] ELSE [x[k]] END WHERE
                   v IS :: STRING AND any(needle IN $needles WHERE v CONTAINS needle)))"""
    scope = "WHERE x.tenant = $tenant AND " if tenant else "WHERE "
    nodes = f"MATCH (x) {scope}{hit} RETURN labels(x) AS what, properties(x) AS props LIMIT {limit}"
    rels = f"MATCH ()-[x]->() {scope}{hit} RETURN [type(x)] AS what, properties(x) AS props LIMIT {limit}"
    return store._read(lambda tx: [r.data() for q in (nodes, rels) for r in tx.run(q, needles=needles, tenant=tenant)])


def test_erase_removes_everything_of_the_user_and_nothing_else(settings, store):
    from tests.http_server import start_api

    run = run_id()
    key, tenant = f"er-key-{run}", f"er-{run}"
    gone, kept = f"erase-me-{run}", f"keep-me-{run}"
    marker = f"zorblax{run}"  # an open-vocabulary concept only the erased user ever mentions
    gone_texts = [
        f"I want to learn Django and {marker} frameworks.",
        "我对Django框架很感兴趣，也想学Python基础",
        f"Django requires Linux server administration. I hate React. {marker} uses Kubernetes.",
        # The scan below searches the whole database: every needle text must be this run's own.
        f"I struggle with Docker Compose and SQLAlchemy (ticket {run}).",
    ]
    kept_texts = ["I want to learn Django and Kubernetes.", "I struggle with Docker Compose."]
    api = start_api(settings.model_copy(update={"api_keys": keys_spec({key: tenant})}))
    try:
        with api.client(key) as c:
            assert (
                c.put(
                    "/v1/catalog",
                    content=(PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes(),
                    headers={"content-type": "application/yaml"},
                ).status_code
                == 200
            )
            for uid, texts in ((gone, gone_texts), (kept, kept_texts)):
                for session in ("s1", "s2"):
                    r = c.post(
                        f"/v1/users/{uid}/turns",
                        json={
                            "session_id": f"{session}-{uid}",
                            "turns": [
                                {
                                    "turn_id": f"{uid}-{session}-{i}",
                                    "role": "user" if i % 3 else "assistant",
                                    "text": t,
                                    "ts": FUTURE.format(i + 1),
                                }
                                for i, t in enumerate(texts)
                            ],
                        },
                    )
                    assert r.status_code == 200, r.text
            assert c.post(f"/v1/users/{gone}/compact").status_code == 200
            assert c.delete(f"/v1/users/{gone}/concepts/React").status_code == 200
            needles = [gone, marker, *gone_texts[2:]]
            before = repr(nodes_or_rels_holding(store, needles, tenant=tenant, limit=500))
            for needle in needles:  # the probe does find each of them before the erase
                assert repr(needle)[1:-1] in before, needle
            kept_graph = c.get(f"/v1/users/{kept}/graph").json()
            kept_block = c.get(f"/v1/users/{kept}/context", params={"evidence": "true"}).json()
            kept_counts = store.counts(UserRef(tenant, kept))
            catalog = c.get("/v1/catalog").json()

            r = c.delete(f"/v1/users/{gone}")
            assert r.status_code == 200 and r.json()["removed"]["turns"] == 8 and r.json()["removed"]["users"] == 1

            # Nothing in the database holds the user's id, a turn text, a session or turn id, or the
            # concept only this user brought in.
            assert nodes_or_rels_holding(store, needles) == []
            doc = store._read(
                lambda tx: tx.run("MATCH (t:Tenant {id: $t}) RETURN t.catalog_json AS j", t=tenant).single()
            )
            assert all(n not in doc["j"] for n in needles)
            assert store.counts(UserRef(tenant, gone)) == {
                "exists": False,
                "turns": 0,
                "sessions": 0,
                "interests": 0,
                "mentions": 0,
                "stances": 0,
                "relations": 0,
                "compaction_runs": 0,
            }
            # The API knows nothing of them any more; a second erase is a clear 404.
            for resp in (
                c.get(f"/v1/users/{gone}/graph"),
                c.get(f"/v1/users/{gone}/context"),
                c.get(f"/v1/users/{gone}/explain", params={"concept": "Django"}),
                c.delete(f"/v1/users/{gone}"),
            ):
                assert resp.status_code == 404 and resp.json()["error"]["code"] == "USER_NOT_FOUND"
            # Exports no longer include them: the library, and the CLI.
            with pytest.raises(NotFound):
                GraphMemory(settings, store=store).export(tenant, gone)
            assert gone not in store.list_users(tenant)
            cli = subprocess.run(
                [sys.executable, "-m", "graphmem.cli", "export", "--tenant", tenant, gone],
                env=settings_env(settings),
                cwd=PROJECT_ROOT,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert cli.returncode != 0 and "USER_NOT_FOUND" in cli.stdout + cli.stderr, cli.stdout + cli.stderr
            assert gone not in cli.stdout

            # Everyone else is untouched: the other user, and the tenant's catalog.
            assert c.get(f"/v1/users/{kept}/graph").json() == kept_graph
            assert c.get(f"/v1/users/{kept}/context", params={"evidence": "true"}).json() == kept_block
            assert store.counts(UserRef(tenant, kept)) == kept_counts
            assert c.get("/v1/catalog").json() == catalog
            exported = GraphMemory(settings, store=store).export(tenant, kept)
            assert len(exported["turns"]) == 4
            assert c.delete(f"/v1/users/{kept}").status_code == 200
    finally:
        api.stop()
