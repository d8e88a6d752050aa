"""Isolation (issue 8.1): nothing user A does changes user B's block, graph or explanations;
an API key sees only its tenant; a user's subgraph cannot be loaded without a user id.

Differential tests against the real HTTP API and the real Neo4j: B's answers are captured
in a tenant where B is alone, then compared with B's answers in a tenant where A talks
about the same concepts (other spellings, relations about B's concepts, stances,
compaction, forgetting, erasure) and with B's answers after a user with B's very id did
all of that in a third tenant.
"""

from __future__ import annotations

import ast
import inspect
import re

import httpx
import pytest

from graphmem.cypher import load_library
from graphmem.errors import InvalidInput
from graphmem.settings import PROJECT_ROOT
from graphmem.store import Neo4jStore, UserRef
from tests.reliability import FUTURE, keys_spec, run_id

pytestmark = pytest.mark.neo4j

CATALOG_YAML = (PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes()

B_TURNS = [
    "I want to learn Django and Kubernetes.",
    "我对Django框架很感兴趣，也想学Python基础",
    "I struggle with Docker Compose",
    "React looks useful for my frontend.",
]
# A mentions B's concepts with other spellings, states relations between B's concepts and
# new ones, and has stances of its own.
A_BEFORE = [
    "I really love KUBERNETES and redux toolkit.",
    "Django requires Linux server administration.",
    "I hate React. React uses Redux.",
    "Docker Compose uses Kubernetes, and Kubernetes requires Linux server administration.",
    "Python基础是Django框架的前提，Django框架用到PostgreSQL",
]
A_AFTER = [
    "Redux requires JavaScript. I am confused by Django.",
    "Kubernetes is part of Docker. Compose is related to Nginx.",
    "我已经学过Django框架和React了",
]
FOCUSES = [
    None,
    "How do I deploy Django?",
    "Tell me about Redux",
    "kubernetes",
    "KUBERNETES and redux toolkit",
    "Linux server administration",
    "Compose",
]


def body(texts: list[str], prefix: str, session: str = "s1") -> dict:
    return {
        "session_id": session,
        "turns": [
            {"turn_id": f"{prefix}{i}", "role": "user", "text": t, "ts": FUTURE.format(i + 1)}
            for i, t in enumerate(texts)
        ],
    }


@pytest.fixture(scope="module")
def iso(settings, store):
    from tests.http_server import start_api

    run = run_id()
    tenants = {"solo": f"iso-solo-{run}", "shared": f"iso-shared-{run}", "other": f"iso-other-{run}"}
    keys = {name: f"iso-key-{name}-{run}" for name in tenants}
    api = start_api(settings.model_copy(update={"api_keys": keys_spec({keys[n]: tenants[n] for n in tenants})}))
    clients = {n: api.client(keys[n]) for n in tenants}
    for c in clients.values():
        r = c.put("/v1/catalog", content=CATALOG_YAML, headers={"content-type": "application/yaml"})
        assert r.status_code == 200, r.text
    yield clients, tenants
    for c in clients.values():
        c.close()
    api.stop()


def ok(resp: httpx.Response) -> dict:
    assert resp.status_code == 200, resp.text
    return resp.json()


def snapshot(c: httpx.Client, uid: str) -> dict:
    """Everything B can be asked: blocks (all formats, several focuses), graph, explanations."""
    snap: dict = {"graph": ok(c.get(f"/v1/users/{uid}/graph"))}
    for focus in FOCUSES:
        for fmt in ("xml", "json", "markdown"):
            params = {"format": fmt, "evidence": "true"}
            if focus:
                params["focus"] = focus
            snap[f"context[{focus}|{fmt}]"] = ok(c.get(f"/v1/users/{uid}/context", params=params))
    for node in snap["graph"]["nodes"]:
        snap[f"explain[{node['key']}]"] = ok(c.get(f"/v1/users/{uid}/explain", params={"concept": node["key"]}))
    for concept in ("redux", "redux toolkit", "Nginx", "Linux服务器管理"):
        r = c.get(f"/v1/users/{uid}/explain", params={"concept": concept})
        snap[f"explain[{concept}]"] = (r.status_code, r.json())
    return snap


def assert_same(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == want[k], f"B's {k} changed because of someone else's activity:\n{_diff(got[k], want[k])}"


def _diff(got: object, want: object, path: str = "") -> str:
    if isinstance(got, dict) and isinstance(want, dict):
        return "".join(
            _diff(got.get(k), want.get(k), f"{path}.{k}")
            for k in sorted(set(got) | set(want), key=str)
            if got.get(k) != want.get(k)
        )
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return "".join(_diff(g, w, f"{path}[{i}]") for i, (g, w) in enumerate(zip(got, want)) if g != w)
    return f"  {path}: {got!r} != {want!r} (expected)\n"


def test_user_b_is_unaffected_by_user_a_same_tenant_and_across_tenants(iso):
    clients, _ = iso
    solo, shared, other = clients["solo"], clients["shared"], clients["other"]
    b, a = "learner-b", "learner-a"

    # B alone in its tenant: the reference answers.
    ok(solo.post(f"/v1/users/{b}/turns", json=body(B_TURNS, "b")))
    reference = snapshot(solo, b)
    graph = reference["graph"]
    names = {n["key"]: n["name"] for n in graph["nodes"]}
    assert names["kubernetes"] == "Kubernetes" and "django框架" in names

    # A user with B's very id (and A) in another tenant says all of A's things.
    ok(other.post(f"/v1/users/{b}/turns", json=body(A_BEFORE + A_AFTER, "b")))
    ok(other.post(f"/v1/users/{a}/turns", json=body(A_BEFORE, "a")))
    ok(other.post(f"/v1/users/{b}/compact"))
    ok(other.delete(f"/v1/users/{b}/concepts/React"))

    # Same tenant: A speaks first (creates the concepts B will use, in other spellings) ...
    ok(shared.post(f"/v1/users/{a}/turns", json=body(A_BEFORE, "a")))
    ok(shared.post(f"/v1/users/{b}/turns", json=body(B_TURNS, "b")))
    # ... and goes on after B, in B's session and turn ids too (they are per user).
    ok(shared.post(f"/v1/users/{a}/turns", json=body(A_AFTER, "b", session="s1")))
    ok(shared.post(f"/v1/users/{a}/compact"))
    ok(shared.delete(f"/v1/users/{a}/concepts/React"))

    assert_same(snapshot(solo, b), reference)  # across tenants (same user id)
    assert_same(snapshot(shared, b), reference)  # same tenant

    # A's relation about B's concepts exists for A, and is not an edge of B's graph.
    a_edges = {
        (e["source"], e["type"], e["target"], e["scope"]) for e in ok(shared.get(f"/v1/users/{a}/graph"))["edges"]
    }
    assert ("django框架", "requires", "linux服务器管理", "user") in a_edges
    b_edges = {(e["source"], e["type"], e["target"]) for e in reference["graph"]["edges"]}
    assert ("django框架", "requires", "linux服务器管理") not in b_edges
    assert all(e["scope"] in ("catalog", "user") for e in reference["graph"]["edges"])

    # A is erased: B is still exactly the same.
    ok(shared.delete(f"/v1/users/{a}"))
    ok(other.delete(f"/v1/users/{b}"))
    assert_same(snapshot(shared, b), reference)
    assert_same(snapshot(solo, b), reference)


def test_api_key_of_one_tenant_reaches_nothing_of_another(iso):
    clients, tenants = iso
    t1, t2 = clients["solo"], clients["other"]
    uid = "victim-" + run_id()
    ok(t2.post(f"/v1/users/{uid}/turns", json=body(B_TURNS, "v")))
    graph_before = ok(t2.get(f"/v1/users/{uid}/graph"))
    catalog_before = ok(t2.get("/v1/catalog"))

    def denied(resp: httpx.Response) -> None:
        assert resp.status_code in (403, 404), resp.text
        assert resp.json()["error"]["code"] in ("USER_NOT_FOUND", "CONCEPT_NOT_FOUND", "FORBIDDEN")

    denied(t1.get(f"/v1/users/{uid}/graph"))
    denied(t1.get(f"/v1/users/{uid}/context"))
    denied(t1.post(f"/v1/users/{uid}/context", json={"focus": "Django"}))
    denied(t1.get(f"/v1/users/{uid}/explain", params={"concept": "Django框架"}))
    denied(t1.post(f"/v1/users/{uid}/compact"))
    denied(t1.delete(f"/v1/users/{uid}/concepts/Django框架"))
    denied(t1.delete(f"/v1/users/{uid}"))
    # A tenant name or id in the path or query does not switch tenants.
    denied(t1.get(f"/v1/users/{uid}/graph", params={"tenant": tenants["other"]}))
    denied(t1.get(f"/v1/users/{uid}/graph", headers={"X-Tenant": tenants["other"]}))
    # Writing "the same" user with T1's key creates T1's own user, not T2's.
    ok(t1.post(f"/v1/users/{uid}/turns", json=body(["I hate Django"], "x")))
    ok(t1.delete(f"/v1/users/{uid}"))
    # T1's catalog writes never reach T2's catalog.
    ok(t1.put("/v1/catalog", json={"concepts": [{"name": "Only in T1"}]}))
    assert all(c["name"] != "Only in T1" for c in ok(t2.get("/v1/catalog"))["catalog"]["concepts"])
    ok(t1.put("/v1/catalog", content=CATALOG_YAML, headers={"content-type": "application/yaml"}))

    assert ok(t2.get(f"/v1/users/{uid}/graph")) == graph_before
    assert ok(t2.get("/v1/catalog")) == catalog_before
    ok(t2.delete(f"/v1/users/{uid}"))


# -- by construction -----------------------------------------------------------------------------------

USER_LABELS = ("User", "Session", "Turn", "Interest", "Summary", "CompactionRun", "Attempt", "Mastery")
# user_/ingest_ statements that read no user's subgraph, and why.
TENANT_LEVEL = {
    "user_list": "lists a tenant's user ids (Browser guide, `graphmem export --all`); reads no subgraph",
    "ingest_merge_concepts": "creates the tenant's shared concept nodes (key, name); reads nothing back",
    "attempts_merge_concepts": "creates the tenant's shared concept nodes named by attempts; reads nothing back",
    "kt_params_of_keys": "reads the tenant's fitted BKT parameters of concepts (catalog-level data)",
    "kt_store_fit": "stores fitted BKT parameters on the tenant's concepts; reads no user's subgraph",
    "kt_params": "lists the tenant's fitted BKT parameters (catalog-level data)",
    "kt_fits": "lists the tenant's BKT fit records",
    "kt_attempts": "a BKT fit is tenant-wide: it reads every user's answers (concept, user id, correct) of one tenant",
    "tenant_user_count": "how many users a tenant has (document frequency, graphmem/specificity.py); returns a number",
    "concept_user_counts": "how many of a tenant's users have each given concept; returns counts per key, no user data",
    # The scale benchmark's bulk loader (Neo4jStore.bulk_load_users; bench/scale_bench.py only) writes many
    # new users of one tenant per transaction, each row pinned to $tenant and its own row.user_id.
    "bulk_existing_users": "which of the given user ids a tenant holds (the bulk loader's resume check)",
    "bulk_users": "creates new users and their sessions (bulk loader)",
    "bulk_turns": "creates the new users' turns (bulk loader)",
    "bulk_mentions": "creates the new users' mentions (bulk loader)",
    "bulk_stances": "creates the new users' stances (bulk loader)",
    "bulk_relations": "creates the new users' own relations (bulk loader)",
    "bulk_interests": "creates the new users' interests (bulk loader)",
    "bulk_tenant_size": "counts a tenant's users and interests (benchmark report); returns two numbers",
}
NODE = re.compile(r"\((\w*):(" + "|".join(USER_LABELS) + r")\b(?:\s*\{([^}]*)\})?\)")
# Database-wide maintenance, run once by apply_schema before any request: it copies a turn's own
# tenant and user onto that turn's mentions, reads nothing back and returns nothing.
DATABASE_LEVEL = {
    "migrate_mention_owner": "one-time backfill of (tenant, user_id, key) on mentions stored before they carried them",
}
LIBRARY = load_library(PROJECT_ROOT / "cypher")
STORE_SOURCE = (PROJECT_ROOT / "graphmem" / "store.py").read_text()
# Every statement the service can run (the Browser's saved explore_* queries are for people).
RUN_BY_STORE = sorted(n for n in LIBRARY.names() if f'"{n}"' in STORE_SOURCE)


def _unbound_user_nodes(name: str) -> list[str]:
    """Per-user node patterns in a statement that are not pinned to $tenant and $user_id."""
    text = LIBRARY.statement(name).text
    problems = []
    for match in NODE.finditer(text):
        var, label, props = match.groups()
        if not props:
            # Allowed only for a node CREATEd here whose key is set right after.
            if not (
                f"CREATE ({var}:{label})" in text
                and f"{var}.tenant = $tenant" in text
                and f"{var}.user_id = $user_id" in text
            ):
                problems.append(match.group(0))
            continue
        user_key = "id: $user_id" if label == "User" else "user_id: $user_id"
        if "tenant: $tenant" not in props or user_key not in props:
            problems.append(match.group(0))
    return problems


def test_every_user_statement_is_bound_to_tenant_and_user():
    statements = [n for n in LIBRARY.names() if n.startswith(("user_", "ingest_"))]
    assert len(statements) >= 20
    for name in statements:
        text = LIBRARY.statement(name).text
        assert "$tenant" in text, name
        if name in TENANT_LEVEL:
            assert not NODE.search(text.replace("(u:User {tenant: $tenant})", "")), name
            continue
        assert "$user_id" in text or "$owner" in text, name
        # Relations extracted from conversation are only read or changed through their owner.
        for line in text.splitlines():
            if re.search(r"\)-\[r(:[A-Z_|]+)?\]-", line):
                window = text[text.index(line) : text.index(line) + len(line) + 200]
                assert "$owner" in window or "owner: 'catalog'" in window, (
                    f"{name}: relation pattern without an owner filter: {line.strip()}"
                )
    # Every per-user node, in every statement the service runs, is pinned to a tenant and a user.
    assert len(RUN_BY_STORE) >= 30
    for name in RUN_BY_STORE:
        if name in TENANT_LEVEL or name in DATABASE_LEVEL:
            continue
        assert _unbound_user_nodes(name) == [], name


def _statement_names(node: ast.AST) -> set[str]:
    return {
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and n.value in RUN_BY_STORE
        and NODE.search(LIBRARY.statement(n.value).text)
    }


def test_store_methods_that_read_user_data_require_a_user_ref():
    tree = ast.parse(inspect.getsource(Neo4jStore))
    cls = tree.body[0]
    checked = 0
    for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
        names = _statement_names(fn) - set(TENANT_LEVEL) - set(DATABASE_LEVEL)
        if not names:
            continue
        checked += 1
        args = {a.arg: ast.unparse(a.annotation) if a.annotation else "" for a in fn.args.args + fn.args.kwonlyargs}
        assert any(ann.startswith("UserRef") for ann in args.values()), (
            f"Neo4jStore.{fn.name} runs {sorted(names)} without a UserRef"
        )
        # Parameters come from the UserRef (tenant, user_id, owner), directly or through a local.
        from_user = {
            t.id
            for n in ast.walk(fn)
            if isinstance(n, ast.Assign) and "user.params" in ast.unparse(n.value)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            named = [a.value for a in call.args if isinstance(a, ast.Constant) and a.value in names]
            if not named:
                continue
            star = [ast.unparse(k.value) for k in call.keywords if k.arg is None]
            explicit = {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg}
            assert (star and ("user.params" in star[0] or star[0] in from_user)) or explicit.get(
                "user_id", ""
            ).startswith("user."), f"Neo4jStore.{fn.name}: {ast.unparse(call)} does not take its user from the UserRef"
    assert checked >= 15
    # And a UserRef cannot exist without both ids.
    for tenant, user in (("", "u"), ("t", ""), ("t", "  "), (None, "u")):
        with pytest.raises(InvalidInput):
            UserRef(tenant, user)  # type: ignore[arg-type]


def test_user_statements_with_a_null_user_match_nobody(store, tenant):
    """Even run by hand with no user id, a user statement matches nobody (null never equals)."""
    from tests.test_store import reference_turns

    store.write_ingest(UserRef(tenant, "someone"), "s1", reference_turns())
    params = {
        "tenant": tenant,
        "user_id": None,
        "owner": None,
        "key": "python基础",
        "keys": ["python基础"],
        "turn_ids": ["t1", "t2"],
        "limit": 100,
        "query": "python*",
        "session_id": "s1",
        "before": "2100-01-01T00:00:00+00:00",
        "attempt_ids": ["a1"],
        "as_of": "2100-01-01T00:00:00+00:00",
        "interests": True,
    }
    checked = 0
    for name in RUN_BY_STORE:
        text = LIBRARY.statement(name).text
        if name in TENANT_LEVEL or not NODE.search(text) or re.search(r"\b(CREATE|MERGE|DELETE|SET)\b", text):
            continue
        checked += 1
        for row in store.read_statement(name, **params):
            leaked = {k: v for k, v in row.items() if v not in (None, 0, False, [], "")}
            # user_version also reports the tenant's catalog version, which is not user data.
            leaked.pop("catalog_version", None)
            # user_graph_load names its columns (constants) beside the user's rows.
            leaked.pop("columns", None)
            assert not leaked, f"{name} returned {row} for a null user"
    assert checked >= 10
