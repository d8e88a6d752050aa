"""The HTTP API end to end: real uvicorn on loopback, real Neo4j, real spaCy (issue: the service)."""

from __future__ import annotations

import concurrent.futures
import json
import xml.etree.ElementTree as ET

import httpx
import pytest
from openapi_spec_validator import validate

from graphmem.settings import PROJECT_ROOT

pytestmark = pytest.mark.neo4j

CATALOG_YAML = (PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes()


@pytest.fixture(scope="module")
def a(api, api_tenants):
    with api.client(api_tenants.key_a) as client:
        assert (
            client.put("/v1/catalog", content=CATALOG_YAML, headers={"content-type": "application/yaml"}).status_code
            == 200
        )
        yield client


@pytest.fixture(scope="module")
def b(api, api_tenants):
    with api.client(api_tenants.key_b) as client:
        yield client


def turns(*texts: str, prefix: str = "t", role: str = "user") -> list[dict]:
    return [
        {"turn_id": f"{prefix}{i}", "role": role, "text": t, "ts": f"2026-11-2{i % 10}T10:00:00Z"}
        for i, t in enumerate(texts)
    ]


REFERENCE = [
    "我想学Python基础",
    "我对Django框架很感兴趣",
]


def assert_error(resp: httpx.Response, status: int, code: str) -> None:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and len(body["error"]["message"]) > 5


# -- success paths ------------------------------------------------------------------------------


def test_ingest_then_context_reference_example(a, user_id):
    r = a.post(f"/v1/users/{user_id}/turns", json={"session_id": "s1", "turns": turns(*REFERENCE)})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["accepted"] == ["t0", "t1"] and body["duplicates"] == []
    names = {c["name"] for e in body["edits"] for c in e["extraction"]["concepts"]}
    assert {"Python基础", "Django框架"} <= names

    ctx = a.get(f"/v1/users/{user_id}/context").json()
    assert set(ctx["core_topics"][:2]) == {"Python基础", "Django框架"}
    assert "SQLAlchemy" in ctx["related_concepts"]  # 10 x 0.6 = 6 >= 5 (DESIGN.md worked example)
    assert "SQL基础" not in ctx["related_concepts"] + ctx["core_topics"]
    root = ET.fromstring(ctx["block"])
    assert root.tag == "user_knowledge_context" and root.get("scope") == "learning"
    assert ctx["tokens"] <= 400 and ctx["format"] == "xml"

    focused = a.get(f"/v1/users/{user_id}/context", params={"focus": "how do I deploy Django?"}).json()
    assert focused["current_topic"] == ["Django部署"]
    assert {"Linux服务器管理", "CI/CD流程"} <= set(focused["knowledge_gaps"])


def test_context_post_formats_and_scopes(a, user_id):
    a.post(f"/v1/users/{user_id}/turns", json={"session_id": "s1", "turns": turns(*REFERENCE)})
    md = a.post(f"/v1/users/{user_id}/context", json={"format": "markdown", "scope": "general"}).json()
    assert md["format"] == "markdown" and "Python基础" in md["block"]
    js = a.post(f"/v1/users/{user_id}/context", json={"format": "json", "scope": "recommendation"}).json()
    parsed = json.loads(js["block"])
    assert js["scope"] == "recommendation" and isinstance(parsed, dict)
    ev = a.get(f"/v1/users/{user_id}/context", params={"evidence": "true"}).json()
    assert "t0" in ev["block"] and ev["evidence"]["Python基础"] == ["t0"]
    tiny = a.get(f"/v1/users/{user_id}/context", params={"max_tokens": 30}).json()
    assert tiny["tokens"] <= 30 and tiny["truncated"] is True
    assert "<truncated_context" in tiny["block"] and "..." not in tiny["block"]


def test_graph_explain_compact_forget_erase(a, user_id):
    a.post(f"/v1/users/{user_id}/turns", json={"session_id": "s1", "turns": turns(*REFERENCE)})
    graph = a.get(f"/v1/users/{user_id}/graph").json()
    nodes = {n["name"]: n for n in graph["nodes"]}
    assert nodes["Python基础"]["user_mentions"] == 1 and nodes["Python基础"]["tier"] == "core"
    assert any(e["type"] == "prerequisite" and e["scope"] == "catalog" for e in graph["edges"])

    exp = a.get(f"/v1/users/{user_id}/explain", params={"concept": "SQLAlchemy"}).json()
    assert exp["weights"]["initial"] == 0 and exp["weights"]["propagated"] > 0
    assert any(p["from_name"] == "Django框架" and p["relation"] == "uses" for p in exp["propagation"])
    exp_py = a.get(f"/v1/users/{user_id}/explain", params={"concept": "python基础"}).json()
    assert exp_py["mentions"]["spans"][0]["turn_id"] == "t0"

    run = a.post(f"/v1/users/{user_id}/compact").json()
    assert run["id"].startswith("run-") and run["concepts_after"] <= run["concepts_total"]
    assert "SQL基础" in [c["name"] for c in run["related_to_core_topics"]]

    forgot = a.delete(f"/v1/users/{user_id}/concepts/Django框架")
    assert forgot.status_code == 200 and forgot.json()["concept"] == "django框架"
    after = a.get(f"/v1/users/{user_id}/graph").json()
    assert all(not (n["name"] == "Django框架" and n["user_mentions"]) for n in after["nodes"])

    erased = a.delete(f"/v1/users/{user_id}")
    assert erased.status_code == 200 and erased.json()["removed"]["turns"] == 2
    assert_error(a.get(f"/v1/users/{user_id}/graph"), 404, "USER_NOT_FOUND")


def test_catalog_formats(api, a):
    got = a.get("/v1/catalog").json()
    assert got["catalog_version"] >= 1 and any(c["name"] == "Django框架" for c in got["catalog"]["concepts"])
    with api.client(a.headers["Authorization"].split()[1]) as client:
        doc = {
            "concepts": [{"name": "Graph theory", "type": "topic"}, {"name": "PageRank", "type": "topic"}],
            "relations": [{"source": "Graph theory", "type": "prerequisite", "target": "PageRank"}],
        }
        r = client.put("/v1/catalog", json=doc)
        assert r.status_code == 200 and r.json()["relations"] == 1
        csv_concepts = b"name,aliases,type\nGraph theory,graphs,topic\nPageRank,page rank,topic\n"
        csv_edges = b"source,type,target\nGraph theory,prerequisite,PageRank\n"
        r = client.put("/v1/catalog", files={"concepts": ("c.csv", csv_concepts), "edges": ("e.csv", csv_edges)})
        assert r.status_code == 200 and r.json()["concepts"] == 2
        r = client.put("/v1/catalog", content=csv_concepts, headers={"content-type": "text/csv"})
        assert r.status_code == 200 and r.json()["relations"] == 0
        # restore the demo catalog for the other tests of this module
        assert (
            client.put("/v1/catalog", content=CATALOG_YAML, headers={"content-type": "application/yaml"}).status_code
            == 200
        )


def test_ops_endpoints(api, a):
    with api.client() as anon:
        assert anon.get("/healthz").json() == {"status": "ok"}
        ready = anon.get("/readyz").json()
        assert ready == {"neo4j": True, "schema": True, "models": True, "ready": True}
        metrics = anon.get("/metrics").text
        assert "graphmem_http_requests_total" in metrics and "graphmem_ingest_turns_total" in metrics
        spec = anon.get("/openapi.json").json()
        validate(spec)  # the OpenAPI document validates
        assert "/v1/users/{user_id}/context" in spec["paths"]
        assert anon.get("/docs").status_code == 200


# -- idempotency, isolation, concurrency ----------------------------------------------------------------


def test_resend_is_a_noop(a, user_id):
    body = {"session_id": "s1", "turns": turns(*REFERENCE)}
    a.post(f"/v1/users/{user_id}/turns", json=body)
    before = a.get(f"/v1/users/{user_id}/graph").json()
    again = a.post(f"/v1/users/{user_id}/turns", json=body).json()
    assert again["accepted"] == [] and again["duplicates"] == ["t0", "t1"]
    after = a.get(f"/v1/users/{user_id}/graph").json()
    assert after["nodes"] == before["nodes"] and after["edges"] == before["edges"]


def test_turn_id_derived_from_content_makes_retries_safe(a, user_id):
    body = {"session_id": "s1", "turns": [{"role": "user", "text": "I want to learn React"}]}
    first = a.post(f"/v1/users/{user_id}/turns", json=body).json()
    second = a.post(f"/v1/users/{user_id}/turns", json=body).json()
    assert len(first["accepted"]) == 1 and second["duplicates"] == first["accepted"]


def test_tenant_isolation_with_two_keys(a, b, user_id):
    a.post(f"/v1/users/{user_id}/turns", json={"session_id": "s1", "turns": turns(*REFERENCE)})
    # tenant B has no such user, no catalog of A, cannot explain or erase A's user
    assert_error(b.get(f"/v1/users/{user_id}/context"), 404, "USER_NOT_FOUND")
    assert_error(b.get(f"/v1/users/{user_id}/graph"), 404, "USER_NOT_FOUND")
    assert_error(b.get(f"/v1/users/{user_id}/explain", params={"concept": "Python基础"}), 404, "USER_NOT_FOUND")
    assert_error(b.delete(f"/v1/users/{user_id}"), 404, "USER_NOT_FOUND")
    assert b.get("/v1/catalog").json()["catalog"] == {"concepts": [], "relations": []}
    # and A's user is untouched
    assert a.get(f"/v1/users/{user_id}/graph").status_code == 200


def test_concurrent_ingest_equals_sequential(a, user_id):
    texts = [f"I want to learn React and Django, part {i}" for i in range(12)]
    batches = [
        {"session_id": f"s{i % 3}", "turns": [{"turn_id": f"c{i}", "role": "user", "text": t}]}
        for i, t in enumerate(texts)
    ]
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda body: a.post(f"/v1/users/{user_id}/turns", json=body), batches))
    assert all(r.status_code == 200 for r in results), [r.text for r in results if r.status_code != 200]
    concurrent_graph = {n["name"]: n["user_mentions"] for n in a.get(f"/v1/users/{user_id}/graph").json()["nodes"]}

    sequential_user = user_id + "-seq"
    for body in batches:
        assert a.post(f"/v1/users/{sequential_user}/turns", json=body).status_code == 200
    sequential_graph = {
        n["name"]: n["user_mentions"] for n in a.get(f"/v1/users/{sequential_user}/graph").json()["nodes"]
    }
    assert concurrent_graph == sequential_graph
    assert concurrent_graph["React"] == 12


# -- errors ------------------------------------------------------------------------------------------------


def test_auth_errors(api, user_id):
    with api.client() as anon:
        assert_error(anon.get(f"/v1/users/{user_id}/context"), 401, "MISSING_API_KEY")
    with api.client("not-a-key") as wrong:
        assert_error(wrong.get(f"/v1/users/{user_id}/context"), 403, "INVALID_API_KEY")
    with httpx.Client(base_url=api.base_url, headers={"Authorization": "Basic abc"}) as basic:
        assert_error(basic.get("/v1/catalog"), 401, "MALFORMED_API_KEY")


@pytest.mark.parametrize(
    "body,code",
    [
        ({"session_id": "", "turns": [{"role": "user", "text": "hi"}]}, "INVALID_INPUT"),
        ({"session_id": "s" * 129, "turns": [{"role": "user", "text": "hi"}]}, "INVALID_INPUT"),
        ({"session_id": "s1", "turns": []}, "INVALID_INPUT"),
        ({"session_id": "s1", "turns": [{"role": "robot", "text": "hi"}]}, "INVALID_ROLE"),
        ({"session_id": "s1", "turns": [{"role": "user", "text": ""}]}, "INVALID_INPUT"),
        ({"session_id": "s1", "turns": [{"role": "user", "text": "\x00\x01"}]}, "EMPTY_TEXT"),
        ({"session_id": "s1", "turns": [{"role": "user", "text": "x" * 20_001}]}, "TEXT_TOO_LONG"),
        ({"session_id": "s1", "turns": [{"turn_id": "", "role": "user", "text": "hi"}]}, "INVALID_INPUT"),
        ({"session_id": "s1\n", "turns": [{"role": "user", "text": "hi"}]}, "INVALID_SESSION_ID"),
        ({"session_id": "s1", "turns": [{"role": "user", "text": "hi", "extra": 1}]}, "INVALID_INPUT"),
    ],
)
def test_bad_turns_get_422_and_store_nothing(a, user_id, body, code):
    assert_error(a.post(f"/v1/users/{user_id}/turns", json=body), 422, code)
    assert_error(a.get(f"/v1/users/{user_id}/graph"), 404, "USER_NOT_FOUND")


def test_bad_user_ids(a):
    assert_error(
        a.post("/v1/users/" + "u" * 129 + "/turns", json={"session_id": "s", "turns": turns("hi")}),
        422,
        "INVALID_INPUT",
    )
    assert_error(a.get("/v1/users/%01bad/graph"), 422, "INVALID_USER_ID")


def test_invalid_json_and_encoding(a, user_id):
    r = a.post(
        f"/v1/users/{user_id}/turns",
        content=b'{"session_id": "s1", "turns": [',
        headers={"content-type": "application/json"},
    )
    assert_error(r, 400, "INVALID_JSON")
    r = a.post(
        f"/v1/users/{user_id}/turns",
        content=b'{"session_id": "\xff\xfe", "turns": []}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 400 and r.json()["error"]["code"] in ("INVALID_JSON", "INVALID_BODY")
    assert_error(a.get(f"/v1/users/{user_id}/graph"), 404, "USER_NOT_FOUND")  # nothing stored


def test_bad_catalogs(a):
    r = a.put(
        "/v1/catalog",
        json={
            "concepts": [{"name": "A"}, {"name": "B"}],
            "relations": [{"source": "A", "type": "teaches", "target": "B"}],
        },
    )
    assert_error(r, 422, "INVALID_CATALOG")
    assert "relations[0]" in r.json()["error"]["message"]
    r = a.put(
        "/v1/catalog", json={"concepts": [{"name": "A"}], "relations": [{"source": "A", "type": "uses", "target": "Z"}]}
    )
    assert_error(r, 422, "INVALID_CATALOG")
    r = a.put("/v1/catalog", content=b"concepts: [unclosed", headers={"content-type": "application/yaml"})
    assert_error(r, 422, "INVALID_CATALOG")
    r = a.put("/v1/catalog", content=b"<xml/>", headers={"content-type": "application/xml"})
    assert_error(r, 415, "UNSUPPORTED_MEDIA_TYPE")
    # nothing was stored: the demo catalog is still there
    assert any(c["name"] == "Django框架" for c in a.get("/v1/catalog").json()["catalog"]["concepts"])


def test_context_errors(a, user_id):
    assert_error(a.get(f"/v1/users/{user_id}/context"), 404, "USER_NOT_FOUND")
    a.post(f"/v1/users/{user_id}/turns", json={"session_id": "s1", "turns": turns(*REFERENCE)})
    prompt = (
        'You are a tutor.\n<user_knowledge_context scope="learning">\n- core_topics: [x]\n</user_knowledge_context>'
    )
    assert_error(a.post(f"/v1/users/{user_id}/context", json={"prompt": prompt}), 409, "CONTEXT_LOOP_DETECTED")
    assert_error(a.get(f"/v1/users/{user_id}/context", params={"scope": "everything"}), 422, "INVALID_INPUT")
    assert_error(a.get(f"/v1/users/{user_id}/context", params={"max_tokens": 0}), 422, "INVALID_INPUT")
    assert_error(a.get(f"/v1/users/{user_id}/context", params={"tag": "1bad tag"}), 422, "INVALID_INPUT")
    assert_error(
        a.get(f"/v1/users/{user_id}/explain", params={"concept": "Quantum chromodynamics"}), 404, "CONCEPT_NOT_FOUND"
    )
    assert_error(a.delete(f"/v1/users/{user_id}/concepts/Quantum chromodynamics"), 404, "CONCEPT_NOT_FOUND")


def test_oversized_body_gets_413(a, user_id):
    big = json.dumps({"session_id": "s1", "turns": [{"role": "user", "text": "x" * 6_000_000}]})
    assert_error(
        a.post(f"/v1/users/{user_id}/turns", content=big, headers={"content-type": "application/json"}),
        413,
        "BODY_TOO_LARGE",
    )


def test_unknown_route_and_method(api):
    with api.client() as anon:
        assert_error(anon.get("/v1/nothing-here"), 404, "NOT_FOUND")
        assert_error(anon.patch("/healthz"), 405, "METHOD_NOT_ALLOWED")
