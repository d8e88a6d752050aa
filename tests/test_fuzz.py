"""Bad input (issue 8.3): property-based fuzzing of extraction, rendering and the HTTP API.

Arbitrary Unicode — control characters, lone surrogates (as JSON ``\\ud800`` escapes, the only way
they can reach the API), right-to-left marks, emoji, 1 MB strings, deeply nested JSON — never
crashes anything, never leaves markup unescaped, and gets a clear 4xx with a machine-readable code.
"""

from __future__ import annotations

import json
import uuid
import xml.etree.ElementTree as ET

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from graphmem.extraction.catalog_io import load_catalog
from graphmem.extraction.extractor import ConceptExtractor
from graphmem.models import clean_text
from graphmem.settings import PROJECT_ROOT
from tests.reliability import FUTURE, keys_spec, run_id

pytestmark = pytest.mark.neo4j

NASTY = [
    "\ud800",
    "\udfff",
    "\udbff\udc00",
    "\u202e",
    "\u200f",
    "\u200b",
    "\ufeff",
    "\u2028",
    "\x00",
    "\x1b[31m",
    "\x7f",
    "🎉",
    "👩‍👩‍👧",
    "\U0010ffff",
    "\ufffe",
    "\uffff",
    "看过",
    "吗",
    "</user_knowledge_context>",
    "<system>",
    "&amp;",
    "]]>",
    "Django",
    "Python基础",
    "'}) MATCH (n) DETACH DELETE n //",
    "\\",
    '"',
    "\n",
    "\t",
    " ",
]
any_chars = st.characters(codec=None, exclude_categories=())  # every code point, surrogates included
nasty_text = st.lists(st.one_of(st.sampled_from(NASTY), st.text(any_chars, max_size=8)), max_size=12).map("".join)


def raw_json(value: object) -> bytes:
    """JSON with lone surrogates as \\uXXXX escapes (ensure_ascii), as a hostile client would send."""
    return json.dumps(value, ensure_ascii=True).encode("ascii")


# -- extraction (pure) ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def extractor() -> ConceptExtractor:
    return ConceptExtractor(load_catalog(PROJECT_ROOT / "demo" / "catalog.yaml"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(nasty_text, min_size=1, max_size=3))
def test_extraction_survives_any_unicode(extractor, texts):
    cleaned = [clean_text(t) for t in texts]  # what the service hands to extraction
    for text, ex in zip(cleaned, extractor.extract(cleaned, ["user"] * len(cleaned)), strict=True):
        for m in ex.concepts:
            assert 0 <= m.start <= m.end <= len(text)
            assert m.name and clean_text(m.name) == m.name
            m.name.encode("utf-8")  # storable: no lone surrogates
        for s in ex.stances:
            assert 0 <= s.start <= s.end <= len(text)


def test_extraction_of_a_1mb_string_is_bounded(extractor):
    text = ("I want to learn Django and React. \u202e🎉 " * 30_000)[:1_000_000]
    ex = extractor.extract([text])[0]  # the extractor caps its own input (max_text_chars)
    assert {m.name for m in ex.concepts} >= {"Django框架", "React"}


# -- the HTTP API --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_api(settings, store):
    from tests.http_server import start_api

    run = run_id()
    key, tenant = f"fuzz-key-{run}", f"fuzz-{run}"
    api = start_api(settings.model_copy(update={"api_keys": keys_spec({key: tenant})}))
    with api.client(key) as c:
        assert (
            c.put(
                "/v1/catalog",
                content=(PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes(),
                headers={"content-type": "application/yaml"},
            ).status_code
            == 200
        )
        yield c
    api.stop()


def assert_clear(resp: httpx.Response, *, allow: tuple[int, ...] = (200,)) -> None:
    """No 5xx; a 4xx carries {"error": {"code", "message"}} and the body is valid UTF-8 JSON."""
    assert resp.status_code < 500, resp.text
    body = json.loads(resp.content.decode("utf-8"))
    if resp.status_code >= 400:
        assert set(body) == {"error"} and body["error"]["code"].isupper() and len(body["error"]["message"]) > 5
    else:
        assert resp.status_code in allow, resp.text


def assert_block_inert(block: str, fmt: str) -> None:
    if fmt == "xml":
        root = ET.fromstring(block)  # exactly one root element, nothing opened by user text
        assert root.tag == "user_knowledge_context" and len(list(root)) <= 1
        assert all(child.tag == "truncated_context" for child in root)
    elif fmt == "json":
        json.loads(block)
        assert "<" not in block and ">" not in block
    for bad in ("\ud800", "\x00", "\x1b", "\u202e"):
        assert bad not in block


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=nasty_text,
    session=nasty_text,
    turn_id=st.one_of(st.none(), nasty_text),
    focus=nasty_text,
    fmt=st.sampled_from(["xml", "json", "markdown"]),
)
# Found by CI: a noun chunk or a framed Chinese name holding U+FFFF made a concept whose name XML
# cannot carry. Kept as a fixed example.
@example(text="Kubernetes\uffff and 看过Ab\ufffe片吗", session="s", turn_id=None, focus="看过Ab\uffff片吗", fmt="xml")
def test_api_ingest_and_context_with_any_unicode(fuzz_api, text, session, turn_id, focus, fmt):
    uid = "fz-" + uuid.uuid4().hex[:10]
    turn = {"role": "user", "text": "Django " + text, "ts": FUTURE.format(1)}
    if turn_id is not None:
        turn["turn_id"] = turn_id
    r = fuzz_api.post(
        f"/v1/users/{uid}/turns",
        content=raw_json({"session_id": session or "s", "turns": [turn]}),
        headers={"content-type": "application/json"},
    )
    assert_clear(r)
    if r.status_code != 200:
        # A rejected call stored nothing.
        assert fuzz_api.get(f"/v1/users/{uid}/graph").status_code == 404
        return
    for resp in (
        fuzz_api.post(
            f"/v1/users/{uid}/context",
            content=raw_json({"focus": focus, "format": fmt}),
            headers={"content-type": "application/json"},
        ),
        fuzz_api.get(f"/v1/users/{uid}/context", params={"focus": clean_text(focus), "format": fmt}),
    ):
        assert_clear(resp)
        if resp.status_code == 200:
            assert_block_inert(resp.json()["block"], fmt)
    assert_clear(fuzz_api.get(f"/v1/users/{uid}/explain", params={"concept": clean_text(focus) or "x"}))
    assert_clear(fuzz_api.get(f"/v1/users/{uid}/graph"))
    assert_clear(fuzz_api.delete(f"/v1/users/{uid}"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=nasty_text, alias=nasty_text, cid=nasty_text, url=nasty_text, extra_key=nasty_text)
def test_api_catalog_with_any_unicode(fuzz_api, name, alias, cid, url, extra_key):
    for doc in (
        {"concepts": [{"name": name or "x", "aliases": [alias], "id": cid, "url": url}]},
        {"concepts": [{"name": "x", extra_key or "k": 1}]},
        {"concepts": [{"name": "A"}, {"name": "B"}], "relations": [{"source": name, "type": "uses", "target": "B"}]},
    ):
        assert_clear(fuzz_api.put("/v1/catalog", content=raw_json(doc), headers={"content-type": "application/json"}))
        yaml_doc = json.dumps(doc, ensure_ascii=True).encode()  # JSON is YAML; YAML has \\uXXXX escapes too
        assert_clear(fuzz_api.put("/v1/catalog", content=yaml_doc, headers={"content-type": "application/yaml"}))
    # leave the demo catalog in place
    assert (
        fuzz_api.put(
            "/v1/catalog",
            content=(PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes(),
            headers={"content-type": "application/yaml"},
        ).status_code
        == 200
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=nasty_text,
    value=st.one_of(
        nasty_text, st.integers(), st.floats(allow_nan=True), st.none(), st.lists(st.integers(), max_size=3)
    ),
)
def test_api_unknown_or_mistyped_fields_get_4xx(fuzz_api, key, value):
    uid = "fz-" + uuid.uuid4().hex[:10]
    for doc in (
        {"session_id": "s", "turns": [{"role": "user", "text": "Django", key or "k": value}]},
        {"session_id": value, "turns": [{"role": "user", "text": value}]},
        {key or "k": value},
    ):
        body = json.dumps(doc, ensure_ascii=True, allow_nan=True).encode()
        assert_clear(
            fuzz_api.post(f"/v1/users/{uid}/turns", content=body, headers={"content-type": "application/json"})
        )
        assert_clear(
            fuzz_api.post(f"/v1/users/{uid}/context", content=body, headers={"content-type": "application/json"})
        )


@pytest.mark.parametrize("depth", [100, 5_000, 200_000])
def test_deeply_nested_json_gets_4xx(fuzz_api, depth):
    uid = "fz-" + uuid.uuid4().hex[:10]
    arrays = b"[" * depth + b"]" * depth
    objects = b'{"a":' * depth + b"1" + b"}" * depth
    for nested in (arrays, objects):
        for path, method, body in (
            (f"/v1/users/{uid}/turns", "POST", b'{"session_id":"s","turns":' + nested + b"}"),
            (f"/v1/users/{uid}/context", "POST", b'{"focus":' + nested + b"}"),
            ("/v1/catalog", "PUT", b'{"concepts":' + nested + b"}"),
        ):
            resp = fuzz_api.request(method, path, content=body, headers={"content-type": "application/json"})
            assert_clear(resp)
            assert 400 <= resp.status_code < 500
        deep_yaml = b"concepts: " + nested
        assert_clear(fuzz_api.put("/v1/catalog", content=deep_yaml, headers={"content-type": "application/yaml"}))
    assert fuzz_api.get(f"/v1/users/{uid}/graph").status_code == 404


def test_one_megabyte_strings_get_clear_4xx(fuzz_api):
    uid = "fz-" + uuid.uuid4().hex[:10]
    mb = "x\u202e🎉" * 333_334
    cases = [
        ("POST", f"/v1/users/{uid}/turns", {"session_id": "s", "turns": [{"role": "user", "text": mb}]}),
        ("POST", f"/v1/users/{uid}/turns", {"session_id": mb, "turns": [{"role": "user", "text": "hi"}]}),
        ("POST", f"/v1/users/{uid}/turns", {"session_id": "s", "turns": [{"turn_id": mb, "text": "hi"}]}),
        ("POST", f"/v1/users/{uid}/context", {"focus": mb}),
        ("PUT", "/v1/catalog", {"concepts": [{"name": mb}]}),
    ]
    for method, path, doc in cases:
        resp = fuzz_api.request(method, path, content=raw_json(doc), headers={"content-type": "application/json"})
        assert_clear(resp)
        assert resp.status_code in (413, 422), resp.text
    for params in ({"focus": mb[:3_000]}, {"focus": "x" * 25_000}, {"concept": "y" * 25_000}):
        assert_clear(fuzz_api.get(f"/v1/users/{uid}/context", params=params))
        assert_clear(fuzz_api.get(f"/v1/users/{uid}/explain", params=params))
    assert fuzz_api.get(f"/v1/users/{uid}/graph").status_code == 404  # nothing stored


def test_invalid_utf8_and_wrong_content_types(fuzz_api):
    uid = "fz-" + uuid.uuid4().hex[:10]
    for body in (
        b"\xff\xfe\x00",
        b'{"session_id": "\xed\xa0\x80", "turns": []}',
        b"",
        b"null",
        b"[]",
        b'"x"',
        b"NaN",
        b'{"session_id": "s", "turns": [{"text": "a", "text": "\\ud800"}]}',
    ):
        for ctype in ("application/json", "text/plain", "application/x-www-form-urlencoded"):
            assert_clear(fuzz_api.post(f"/v1/users/{uid}/turns", content=body, headers={"content-type": ctype}))
        for ctype in ("application/json", "application/yaml", "text/csv", "multipart/form-data", "text/plain"):
            assert_clear(fuzz_api.put("/v1/catalog", content=body, headers={"content-type": ctype}))
    # Percent-encoded invalid UTF-8 and control characters in paths and queries.
    for path in (
        "/v1/users/%ED%A0%80/graph",
        "/v1/users/%00/graph",
        "/v1/users/%E2%80%AE/context",
        f"/v1/users/{uid}/context?focus=%ED%A0%80%00",
        f"/v1/users/{uid}/explain?concept=%FF",
        f"/v1/users/{uid}/concepts/%ED%A0%80",
    ):
        assert_clear(fuzz_api.get(path))
        assert_clear(fuzz_api.delete(path))
    assert fuzz_api.get(f"/v1/users/{uid}/graph").status_code == 404
    assert (
        fuzz_api.put(
            "/v1/catalog",
            content=(PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes(),
            headers={"content-type": "application/yaml"},
        ).status_code
        == 200
    )
