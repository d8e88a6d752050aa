"""graphmem.client against the real API (uvicorn on loopback, real Neo4j, real spaCy), plus the
agreement check between the client's endpoint table and the served openapi.json (issue 17)."""

from __future__ import annotations

import asyncio
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from graphmem.api.schemas import ContextRequest
from graphmem.client import ENDPOINTS, ApiError, AsyncGraphMemClient, Endpoint, GraphMemClient
from graphmem.models import ContextResult, IngestResult
from graphmem.settings import PROJECT_ROOT
from tests.http_server import free_port, start_api
from tests.readme import localised, readme_block

pytestmark = pytest.mark.neo4j

CATALOG_YAML = (PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes()
REFERENCE = ["我想学Python基础", "我对Django框架很感兴趣"]

# /v1 operations the client deliberately does not call. Any other new API operation makes
# test_every_api_operation_has_a_client_method fail until the client gains it (or it is listed here).
NOT_IN_CLIENT: set[tuple[str, str]] = {
    # A query-string form of forget (`?name=`) the API may also offer; `forget` uses the path form.
    ("DELETE", "/v1/users/{user_id}/concepts"),
}


@pytest.fixture(scope="module")
def catalog_loaded(api, api_tenants) -> None:
    with api.client(api_tenants.key_a) as raw:
        assert (
            raw.put("/v1/catalog", content=CATALOG_YAML, headers={"content-type": "application/yaml"}).status_code
            == 200
        )


@pytest.fixture
def mem(api, api_tenants, catalog_loaded) -> Iterator[GraphMemClient]:
    with GraphMemClient(api.base_url, api_key=api_tenants.key_a) as client:
        yield client


# -- the OpenAPI document is the source of truth ------------------------------------------------------


@pytest.fixture(scope="module")
def openapi(api) -> dict:
    with api.client() as raw:
        return raw.get("/openapi.json").json()


def _resolve(doc: dict, schema: dict) -> dict:
    ref = schema.get("$ref")
    return doc["components"]["schemas"][ref.rsplit("/", 1)[1]] if ref else schema


def disagreements(openapi: dict, endpoints: dict[str, Endpoint]) -> list[str]:
    """Where the client's endpoint table and the API's OpenAPI document disagree."""
    problems = []
    for name, ep in endpoints.items():
        op = openapi["paths"].get(ep.path, {}).get(ep.method.lower())
        if op is None:
            problems.append(f"{name}: {ep.method} {ep.path} is not in openapi.json")
            continue
        params = op.get("parameters", [])
        path_params = {p["name"] for p in params if p["in"] == "path"}
        if path_params != set(re.findall(r"{(\w+)}", ep.path)):
            problems.append(f"{name}: path parameters {sorted(path_params)} vs the client's path {ep.path}")
        query = {p["name"]: p for p in params if p["in"] == "query"}
        if unknown := set(ep.query) - set(query):
            problems.append(f"{name}: the client sends query parameters the API does not take: {sorted(unknown)}")
        if missing := {n for n, p in query.items() if p.get("required")} - set(ep.query):
            problems.append(f"{name}: the API requires query parameters the client never sends: {sorted(missing)}")
        body = op.get("requestBody")
        if (body is None) != (ep.body is None):
            problems.append(f"{name}: the API {'takes' if body else 'takes no'} body, the client disagrees")
        elif body is not None and ep.body is not None:
            content = body["content"].get("application/json")
            if content is None:
                problems.append(f"{name}: the API takes no application/json body")
            elif "$ref" in content["schema"]:
                api_schema = _resolve(openapi, content["schema"])
                ours = ep.body.model_json_schema(ref_template="#/components/schemas/{model}")
                if set(api_schema.get("properties", {})) != set(ours.get("properties", {})) or set(
                    api_schema.get("required", [])
                ) != set(ours.get("required", [])):
                    problems.append(
                        f"{name}: body {ep.body.__name__} differs from the API's {content['schema']['$ref']}"
                    )
        if ep.response is not None:
            schema = op["responses"]["200"]["content"]["application/json"]["schema"]
            if "$ref" in schema:
                api_schema = _resolve(openapi, schema)
                ours = ep.response.model_json_schema(mode="serialization")
                if set(api_schema.get("properties", {})) != set(ours.get("properties", {})):
                    problems.append(f"{name}: response {ep.response.__name__} differs from {schema['$ref']}")
    return problems


def test_every_client_endpoint_agrees_with_openapi(openapi):
    problems = disagreements(openapi, ENDPOINTS)
    assert not problems, "\n".join(problems)


def test_the_agreement_check_catches_drift(openapi):
    # Each entry is one kind of drift the check must name.
    drifted = {
        "renamed_path": replace(ENDPOINTS["graph"], path="/v1/users/{user_id}/subgraph"),
        "wrong_method": replace(ENDPOINTS["compact"], method="PUT"),
        "unknown_query": replace(ENDPOINTS["context"], query=(*ENDPOINTS["context"].query, "language")),
        "missing_required_query": replace(ENDPOINTS["explain"], query=()),
        "wrong_body": replace(ENDPOINTS["ingest"], body=ContextRequest),
        "wrong_response": replace(ENDPOINTS["context"], response=IngestResult),
    }
    problems = disagreements(openapi, drifted)
    assert sorted(p.split(":")[0] for p in problems) == sorted(drifted), problems


def test_every_api_operation_has_a_client_method(openapi):
    covered = {(ep.method, ep.path) for ep in ENDPOINTS.values()}
    missing = [
        f"{m.upper()} {p}"
        for p, ops in openapi["paths"].items()
        if p.startswith("/v1/")
        for m in ops
        if (m.upper(), p) not in covered | NOT_IN_CLIENT
    ]
    assert not missing, f"API operations without a client method (add them to graphmem/client.py): {missing}"


def test_error_shape_in_openapi_is_what_the_client_reads(openapi):
    err = openapi["components"]["schemas"]["ErrorResponse"]
    body = _resolve(openapi, err["properties"]["error"])
    assert {"code", "message"} <= set(body["properties"]) and {"code", "message"} <= set(body["required"])


# -- against the real API ------------------------------------------------------------------------------


def test_three_lines_from_readme(api, api_tenants, catalog_loaded, user_id, capsys):
    code = localised(readme_block("tests/test_client.py"), api.base_url, api_tenants.key_a, user_id)
    assert len([ln for ln in code.splitlines() if ln.strip() and not ln.startswith("from ")]) == 3
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out
    assert printed.startswith('<user_knowledge_context scope="learning">') and "Django框架" in printed
    block = namespace["mem"].context(user_id, focus="how do I deploy Django?")
    assert "Django框架" in block.core_topics and block.current_topic == ["Django部署"]
    namespace["mem"].close()


def test_typed_round_trip(mem, user_id):
    result = mem.ingest(
        user_id,
        "s1",
        [{"turn_id": f"t{i}", "text": t, "ts": f"2026-11-2{i}T10:00:00Z"} for i, t in enumerate(REFERENCE)],
    )
    assert isinstance(result, IngestResult) and result.accepted == ["t0", "t1"]
    again = mem.ingest(user_id, "s1", {"turn_id": "t0", "text": REFERENCE[0], "ts": "2026-11-20T10:00:00Z"})
    assert again.accepted == [] and again.duplicates == ["t0"]  # idempotent by turn id

    ctx = mem.context(user_id)
    assert isinstance(ctx, ContextResult)
    assert set(ctx.core_topics[:2]) == {"Python基础", "Django框架"}
    assert "SQLAlchemy" in ctx.related_concepts  # DESIGN.md worked example: 10 x 0.6 = 6 > 5
    md = mem.context(user_id, format="markdown", scope="general", max_tokens=200)
    assert md.format == "markdown" and md.scope == "general" and md.tokens <= 200

    graph = mem.graph(user_id)
    assert {"python基础", "django框架"} <= {n["key"] for n in graph["nodes"]}
    assert mem.explain(user_id, "Django框架")["name"] == "Django框架"
    run = mem.compact(user_id)
    assert run["concepts_before"] >= 2
    assert mem.forget(user_id, "Python基础")["concept"] == "python基础"
    assert "Python基础" not in mem.context(user_id).core_topics
    assert mem.catalog()["catalog"]["concepts"]
    assert mem.erase(user_id)["user_id"] == user_id
    assert mem.ready() is True


def test_ingest_with_its_block_in_one_call(mem, user_id):
    first = mem.ingest(user_id, "s1", REFERENCE[0], context=True)
    assert first.context is not None and first.context == mem.context(user_id)
    # With options (the context call's own names): the block a context call right after returns.
    options = {"focus": "how do I deploy Django?", "max_tokens": 60, "format": "markdown"}
    second = mem.ingest(user_id, "s1", REFERENCE[1], context=options)
    assert second.context is not None and second.context.format == "markdown" and second.context.tokens <= 60
    assert second.context == mem.context(user_id, **options)
    assert mem.ingest(user_id, "s1", "Thanks!").context is None  # only when asked
    with pytest.raises(ApiError) as bad:
        mem.ingest(user_id, "s1", "Hello again", context={"max_tokens": 0})
    assert bad.value.code == "INVALID_INPUT" and bad.value.status == 422  # refused before sending


def test_prompt_loop_detection_and_error_codes(mem, user_id):
    mem.ingest(user_id, "s1", REFERENCE)
    block = mem.context(user_id).block
    with pytest.raises(ApiError) as loop:
        mem.context(user_id, prompt=f"system: {block}\nuser: hi")
    assert loop.value.code == "CONTEXT_LOOP_DETECTED" and loop.value.status == 409

    with pytest.raises(ApiError) as missing:
        mem.explain(user_id, "Haskell")
    assert missing.value.code == "CONCEPT_NOT_FOUND" and missing.value.status == 404
    with pytest.raises(ApiError) as nobody:
        mem.erase("nobody-" + user_id)
    assert nobody.value.code == "USER_NOT_FOUND" and nobody.value.status == 404


def test_bad_input_is_refused_with_the_api_code_before_sending(mem, user_id, api, api_tenants):
    for turns, code in [
        ([], "INVALID_INPUT"),
        ([{"text": "hi", "role": "robot"}], "INVALID_ROLE"),
        ([{"text": ""}], "INVALID_INPUT"),
    ]:
        with pytest.raises(ApiError) as local:
            mem.ingest(user_id, "s1", turns)
        assert (local.value.code, local.value.status) == (code, 422)
        # The server gives the same code for the same body.
        with api.client(api_tenants.key_a) as raw:
            r = raw.post(f"/v1/users/{user_id}/turns", json={"session_id": "s1", "turns": turns})
        assert (r.json()["error"]["code"], r.status_code) == (code, 422)
    with pytest.raises(ApiError) as bad_budget:
        mem.context(user_id, max_tokens=0)
    assert bad_budget.value.code == "INVALID_INPUT"
    with pytest.raises(ApiError) as nothing:
        mem.graph(user_id)  # nothing was stored by the refused calls
    assert nothing.value.code == "USER_NOT_FOUND"
    with pytest.raises(ApiError) as bad_catalog:
        mem.put_catalog({"concepts": [{"name": "A"}], "relations": [{"source": "A", "type": "uses", "target": "B"}]})
    assert bad_catalog.value.code == "INVALID_INPUT"


def test_keys_decide_the_tenant(api, api_tenants, catalog_loaded, user_id):
    with (
        GraphMemClient(api.base_url, api_key=api_tenants.key_a) as a,
        GraphMemClient(api.base_url, api_key=api_tenants.key_b) as b,
    ):
        a.ingest(user_id, "s1", REFERENCE)
        assert "Django框架" in a.context(user_id).core_topics
        with pytest.raises(ApiError) as other:
            b.context(user_id)  # key B's tenant has no such user
        assert (other.value.code, other.value.status) == ("USER_NOT_FOUND", 404)
    # Two keys over one shared connection pool (as `graphmem mcp --http --api` does): each call its own key.
    with httpx.Client(base_url=api.base_url, timeout=60) as pool:
        a, b = (GraphMemClient(api_key=k, http=pool) for k in (api_tenants.key_a, api_tenants.key_b))
        assert "Django框架" in a.context(user_id).core_topics
        with pytest.raises(ApiError) as shared:
            b.context(user_id)
        assert shared.value.code == "USER_NOT_FOUND"
        assert "Django框架" in a.context(user_id).core_topics
    with GraphMemClient(api.base_url, api_key="not-a-key") as stranger, pytest.raises(ApiError) as denied:
        stranger.context(user_id)
    assert (denied.value.code, denied.value.status) == ("INVALID_API_KEY", 403)
    with GraphMemClient(api.base_url) as anonymous, pytest.raises(ApiError) as anon:
        anonymous.context(user_id)
    assert (anon.value.code, anon.value.status) == ("MISSING_API_KEY", 401)


def test_async_client_round_trip(api, api_tenants, catalog_loaded, user_id):
    async def main() -> tuple[IngestResult, ContextResult, dict]:
        async with AsyncGraphMemClient(api.base_url, api_key=api_tenants.key_a) as mem:
            stored = await mem.ingest(user_id, "s1", REFERENCE, context={"focus": "how do I deploy Django?"})
            ctx = await mem.context(user_id, focus="how do I deploy Django?")
            assert stored.context == ctx
            with pytest.raises(ApiError) as err:
                await mem.explain(user_id, "Haskell")
            assert err.value.code == "CONCEPT_NOT_FOUND"
            return stored, ctx, await mem.graph(user_id)

    stored, ctx, graph = asyncio.run(main())
    assert len(stored.accepted) == 2
    assert ctx.current_topic == ["Django部署"] and "Django框架" in ctx.core_topics
    assert graph["user_id"] == user_id


# -- retries on 503, with a real fault: Neo4j behind a loopback proxy that stops answering -----------


class BoltProxy:
    """A TCP proxy on loopback in front of the shared Neo4j's Bolt port. `cut()` closes every
    connection and refuses new ones (the API then answers 503 STORE_UNAVAILABLE); `heal()` forwards again."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self.open = threading.Event()
        self.open.set()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            if not self.open.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._conns += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        self.open.clear()
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass

    def heal(self) -> None:
        self.open.set()

    def close(self) -> None:
        self._stop = True
        self.cut()
        self._server.close()


def test_retries_503_honouring_retry_after_then_succeeds(settings, store, user_id):
    proxy = BoltProxy(("127.0.0.1", settings.neo4j_bolt_port))
    tenant = "client-retry-" + user_id
    running = start_api(
        settings.model_copy(update={"neo4j_uri": f"bolt://127.0.0.1:{proxy.port}", "api_keys": f"k-{user_id}:{tenant}"})
    )
    waits: list[float] = []

    def heal_after_first_wait(seconds: float) -> None:
        # Records the wait instead of sleeping it; Neo4j comes back during the second wait.
        waits.append(seconds)
        if len(waits) == 2:
            proxy.heal()

    try:
        proxy.cut()
        with GraphMemClient(
            running.base_url, api_key=f"k-{user_id}", sleep=heal_after_first_wait, max_retries=3
        ) as mem:
            result = mem.ingest(user_id, "s1", [{"turn_id": "r1", "text": "I want to learn Django."}])
            assert result.accepted == ["r1"]
            # Retry-After: 5 from the API (graphmem/api/app.py), taken as given rather than the 0.5 s backoff.
            assert waits == [5.0, 5.0]
            assert "Django" in mem.context(user_id).core_topics
            assert mem.ingest(user_id, "s1", [{"turn_id": "r1", "text": "I want to learn Django."}]).duplicates == [
                "r1"
            ]

            proxy.cut()
            waits.clear()
            with GraphMemClient(running.base_url, api_key=f"k-{user_id}", sleep=waits.append, max_retries=2) as once:
                with pytest.raises(ApiError) as down:
                    once.context(user_id)
            assert (down.value.code, down.value.status, down.value.retry_after) == ("STORE_UNAVAILABLE", 503, 5.0)
            assert waits == [5.0, 5.0]  # two retries, then the error
    finally:
        running.stop()
        proxy.close()
        from tests.demo_like import drop_tenant

        drop_tenant(store, tenant)


def test_connection_refused_is_retried_then_raised_as_api_error():
    waits: list[float] = []
    with GraphMemClient(f"http://127.0.0.1:{free_port()}", sleep=waits.append, max_retries=2, backoff=0.25) as mem:
        with pytest.raises(ApiError) as refused:
            mem.graph("u1")
    assert (refused.value.code, refused.value.status) == ("CONNECTION_FAILED", 0)
    assert waits == [0.25, 0.5]  # backoff x 2^attempt without a Retry-After
