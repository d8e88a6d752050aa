"""Read-your-writes across API replicas with consistency tokens (Neo4j bookmarks), issue 16 item 5.

Two API processes (separate OS processes, each with its own caches and Neo4j driver) over one Neo4j,
behind a round-robin client: every request goes to the other process than the one before. Writes go
through one replica, the next read through the other; the read must carry the write's token, reach
at least the version the token names, and include the write. On one Community server a commit is
visible everywhere at once, so the tests assert the token path itself (the read's
``X-Graphmem-Consistency-Applied`` header, Neo4j refusing a bookmark it does not know, the cache
answering from the token's version without asking Neo4j), not only that the data is there.
"""

from __future__ import annotations

import base64
import itertools
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest

from graphmem.client import ENDPOINTS, GraphMemClient, TokenBook, build, build_context
from graphmem.consistency import Chain, Token, decode
from graphmem.errors import InvalidInput
from graphmem.settings import Settings
from tests.demo_like import drop_tenant
from tests.reliability import ApiProcess, keys_spec, settings_env, wait_ready

# Tests that reach Neo4j are marked `neo4j` by tests/conftest.py (through their fixtures); the token and
# TokenBook tests at the end are pure.


@dataclass
class RoundRobin(httpx.BaseTransport):
    """Sends each request to the next replica in turn (a load balancer without stickiness)."""

    ports: list[int]
    responses: list[httpx.Response] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._next = itertools.cycle(self.ports)
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(port=next(self._next))
        response = self._inner.handle_request(request)
        self.responses.append(response)
        return response

    def close(self) -> None:
        self._inner.close()


@dataclass
class Replicas:
    a: ApiProcess
    b: ApiProcess
    keys: dict[str, str]  # tenant -> key

    def client(self, tenant: str) -> tuple[GraphMemClient, RoundRobin]:
        rr = RoundRobin([self.a.port, self.b.port])
        http = httpx.Client(base_url="http://127.0.0.1", transport=rr, timeout=60)
        return GraphMemClient("http://127.0.0.1", api_key=self.keys[tenant], http=http), rr


@pytest.fixture(scope="module")
def replicas(settings: Settings, store) -> Iterator[Replicas]:
    tenants = [f"rr-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    keys = {t: f"key-{t}" for t in tenants}
    env = {**settings_env(settings), "GRAPHMEM_API_KEYS": keys_spec({k: t for t, k in keys.items()})}
    a, b = ApiProcess(env).start(wait=False), ApiProcess(env).start(wait=False)
    try:
        wait_ready(a.base_url, timeout_s=240, proc=a.proc)
        wait_ready(b.base_url, timeout_s=240, proc=b.proc)
        yield Replicas(a, b, keys)
    finally:
        a.stop()
        b.stop()
        for t in tenants:
            drop_tenant(store, t)


def _applied(response: httpx.Response) -> dict[str, str]:
    header = response.headers["x-graphmem-consistency-applied"]
    return dict(part.strip().split("=", 1) for part in header.split(";"))


def _token(text: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def test_a_write_through_one_replica_is_read_through_the_other(replicas: Replicas) -> None:
    tenant = next(iter(replicas.keys))
    mem, rr = replicas.client(tenant)
    user = f"u-{uuid.uuid4().hex[:6]}"
    versions = []
    for i, name in enumerate(["Kubernetes", "Terraform", "GraphQL"]):
        written = mem.ingest(user, "s1", {"turn_id": f"t{i}", "text": f"I want to learn {name}."})
        assert written.accepted == [f"t{i}"]
        w = rr.responses[-1]
        token = w.headers["x-graphmem-consistency"]
        assert w.json()["consistency"] == token
        doc = _token(token)
        assert doc["t"] == tenant and doc["u"] == user and doc["b"], doc
        versions.append(doc["v"])

        block = mem.context(user, scope="general").block
        r = rr.responses[-1]
        # The other process answered, with this write's token, at (or past) the version it left.
        assert r.headers["x-graphmem-worker"] != w.headers["x-graphmem-worker"]
        applied = _applied(r)
        assert applied["bookmarks"] == str(len(doc["b"])) and applied["min_version"] == str(doc["v"])
        assert int(r.headers["x-graphmem-graph-version"]) >= doc["v"]
        assert name in block, block
    assert versions == sorted(versions) and len(set(versions)) == 3

    # Graph and explain take the token too (sent by the client, per user).
    graph = mem.graph(user)
    assert graph["version"] >= versions[-1] and "x-graphmem-consistency-applied" in rr.responses[-1].headers
    mem.explain(user, "Terraform")
    assert _applied(rr.responses[-1])["min_version"] == str(versions[-1])


def test_the_tokens_version_lets_a_warm_replica_answer_from_its_cache(replicas: Replicas) -> None:
    tenant = next(iter(replicas.keys))
    mem, rr = replicas.client(tenant)
    user = f"u-{uuid.uuid4().hex[:6]}"
    mem.ingest(user, "s1", {"turn_id": "t0", "text": "I want to learn Kafka."})  # replica A (ranks, caches)
    mem.context(user, scope="general")  # B: loads the version the token names
    assert _applied(rr.responses[-1])["source"] == "store"
    mem.context(user, scope="general")  # A: its cache is at the token's version already
    assert _applied(rr.responses[-1])["source"] == "cache"
    mem.context(user, scope="general")  # B: cached by its first read
    assert _applied(rr.responses[-1])["source"] == "cache"
    # Without a token the replica asks Neo4j for the version first, as before (no applied header).
    plain = httpx.get(
        f"{replicas.b.base_url}/v1/users/{user}/context",
        params={"scope": "general"},
        headers={"Authorization": f"Bearer {replicas.keys[tenant]}"},
    )
    assert plain.status_code == 200 and "x-graphmem-consistency-applied" not in plain.headers
    assert "x-graphmem-graph-version" in plain.headers

    # A forget through one replica moves the version on; the other, warm at the old one, must not serve it.
    before = int(rr.responses[-1].headers["x-graphmem-graph-version"])
    mem.forget(user, "Kafka")
    forgot = _token(rr.responses[-1].headers["x-graphmem-consistency"])
    assert forgot["v"] > before
    block = mem.context(user, scope="general").block
    r = rr.responses[-1]
    assert _applied(r)["source"] == "store" and int(r.headers["x-graphmem-graph-version"]) >= forgot["v"]
    assert "Kafka" not in block


def test_tenant_level_writes_return_tokens_the_client_then_uses(replicas: Replicas) -> None:
    tenant = next(iter(replicas.keys))
    mem, rr = replicas.client(tenant)
    user = f"u-{uuid.uuid4().hex[:6]}"
    mem.ingest(user, "s1", {"turn_id": "t0", "text": "I want to learn Redis."})
    mem.put_catalog({"concepts": [{"name": "Redis", "type": "tool"}]})
    catalog_token = rr.responses[-1].headers["x-graphmem-consistency"]
    assert _token(catalog_token).get("u") is None
    assert mem.tokens.get(user) == catalog_token  # newer than the user's ingest token: it replaces it
    mem.context(user, scope="general")
    applied = _applied(rr.responses[-1])
    assert applied["min_version"] == "" and applied["source"] == "store"
    erased = mem.erase(user)
    assert erased and _token(rr.responses[-1].headers["x-graphmem-consistency"]).get("u") is None


def _b64(doc: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode()


def bad_tokens(tenant: str, other: str) -> dict[str, tuple[str, str]]:
    """Case -> (token, the machine code its read must get)."""
    return {
        "not base64": ("%%%not-a-token%%%", "INVALID_CONSISTENCY_TOKEN"),
        "not json": (base64.urlsafe_b64encode(b"\xff\xfe").decode(), "INVALID_CONSISTENCY_TOKEN"),
        "unknown format": (_b64({"f": 9, "t": tenant, "b": []}), "INVALID_CONSISTENCY_TOKEN"),
        "bookmarks not strings": (_b64({"f": 1, "t": tenant, "b": [1]}), "INVALID_CONSISTENCY_TOKEN"),
        "negative version": (_b64({"f": 1, "t": tenant, "b": [], "u": "x", "v": -1}), "INVALID_CONSISTENCY_TOKEN"),
        # Well-formed, but Neo4j cannot parse the bookmark: it reached the session and was refused there.
        "bookmark Neo4j does not know": (Token(tenant, ("garbage",)).encode(), "INVALID_CONSISTENCY_TOKEN"),
        "another tenant's": (Token(other, ()).encode(), "CONSISTENCY_TOKEN_MISMATCH"),
    }


@pytest.mark.parametrize("case", sorted(bad_tokens("t", "o")))
def test_bad_tokens_are_422_with_a_machine_code(replicas: Replicas, case: str) -> None:
    tenant, other = list(replicas.keys)
    token, code = bad_tokens(tenant, other)[case]
    user = f"u-{uuid.uuid4().hex[:6]}"
    with httpx.Client(
        base_url=replicas.a.base_url, headers={"Authorization": f"Bearer {replicas.keys[tenant]}"}, timeout=60
    ) as http:
        ok = http.post(f"/v1/users/{user}/turns", json={"session_id": "s", "turns": [{"text": "I use Docker."}]})
        assert ok.status_code == 200, ok.text
        answers = [
            http.get(f"/v1/users/{user}/context", params={"consistency": token}),
            http.post(f"/v1/users/{user}/context", json={"consistency": token}),
            http.get(f"/v1/users/{user}/graph", params={"consistency": token}),
            http.get(f"/v1/users/{user}/explain", params={"concept": "Docker", "consistency": token}),
        ]
    for r in answers:
        assert r.status_code == 422, (case, r.request.url, r.text)
        assert r.json()["error"]["code"] == code, (case, r.text)


# -- pure: the token format and the client's book ------------------------------------------------


def test_a_token_round_trips_and_names_its_floor() -> None:
    token = Token("school", ("FB:abc", "FB:def"), "ana", 7, 2)
    back = decode(token.encode(), "school")
    assert back == Token("school", ("FB:abc", "FB:def"), "ana", 7, 2)
    chain = Chain(back, frozenset(back.bookmarks))
    assert chain.floor("school", "ana") == (7, 2)
    assert chain.floor("school", "bob") is None  # another user's version promises nothing about this one
    with pytest.raises(InvalidInput) as err:
        decode(token.encode(), "other-school")
    assert err.value.code == "CONSISTENCY_TOKEN_MISMATCH"
    with pytest.raises(InvalidInput) as err:
        decode("x" * 5000, "school")
    assert err.value.code == "INVALID_CONSISTENCY_TOKEN"


def test_a_chain_without_a_version_gives_a_tenant_level_token() -> None:
    chain = Chain()
    chain.record(["FB:1"])
    chain.record([])  # a read without bookmarks keeps the chain's
    assert chain.token("t", "ana", (None, 3)) == Token("t", ("FB:1",), None, None, None)  # erased user
    assert chain.token("t", "ana", (4, 3)) == Token("t", ("FB:1",), "ana", 4, 3)


def test_the_book_sends_each_users_last_token_and_a_tenant_write_supersedes_them() -> None:
    book = TokenBook()
    ctx = build_context(
        "ana", focus=None, scope="general", max_tokens=None, format="xml", evidence=False, tag=None, prompt=None
    )
    assert book.attach(ctx) is ctx  # nothing seen yet: nothing sent
    book.seen("ana", "tok-ana-1")
    book.seen("ana", "tok-ana-2")
    book.seen("bob", "tok-bob")
    assert book.attach(ctx).params["consistency"] == "tok-ana-2"
    assert book.attach(build("graph", user_id="bob")).params == {"consistency": "tok-bob"}
    with_prompt = build_context(
        "ana", focus=None, scope="general", max_tokens=None, format="xml", evidence=False, tag=None, prompt="p"
    )
    assert with_prompt.endpoint is ENDPOINTS["context_with_prompt"]
    assert book.attach(with_prompt).json["consistency"] == "tok-ana-2"
    book.seen(None, "tok-catalog")
    assert book.get("ana") == book.get("bob") == "tok-catalog"
    book.seen("ana", "tok-ana-3")
    assert book.get("ana") == "tok-ana-3" and book.get("bob") == "tok-catalog"
    # Writes carry no token (they run on the leader, which has every commit).
    assert book.attach(build("compact", user_id="ana")).params is None


def test_the_mcp_api_backend_keeps_one_book_per_key_across_calls() -> None:
    from graphmem.mcp_server import ApiBackend

    backend = ApiBackend("http://127.0.0.1:9", None, http=True)
    try:
        # Each MCP call makes its own client: the book must outlive them, or the token is lost between calls.
        assert backend.client("k1").tokens is backend.client("k1").tokens
        assert backend.client("k1").tokens is not backend.client("k2").tokens
    finally:
        backend.close()
