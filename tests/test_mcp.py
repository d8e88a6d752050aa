"""`graphmem mcp` driven by the MCP SDK's own ClientSession, over stdio and over streamable HTTP,
in-process (the default) and with --api against the real API (issue 17). Real subprocesses, real
Neo4j, real spaCy; no mocks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult

from graphmem.settings import PROJECT_ROOT
from graphmem.store import UserRef
from tests.demo_like import drop_tenant
from tests.http_server import free_port

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

TOOLS = {"ingest_turns", "get_context_block", "explain_concept", "forget_concept", "compact_memory"}
REFERENCE = ["我想学Python基础", "我对Django框架很感兴趣"]
# Generous: a subprocess loads the spaCy pipelines on a loaded 2-core machine before its first call.
CALL_TIMEOUT_S = 300.0


def child_env(**extra: str) -> dict[str, str]:
    """The subprocess runs this worktree's code with this run's Neo4j and GRAPHMEM_ settings."""
    env = {k: v for k, v in os.environ.items() if k.startswith(("GRAPHMEM_", "NEO4J_"))}
    env.update(
        {
            "PYTHONPATH": str(PROJECT_ROOT),
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", "/root"),
            "PYTHONUNBUFFERED": "1",
        },
        **extra,
    )
    return env


def mcp_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "graphmem.cli", "mcp", *args]


@asynccontextmanager
async def stdio_session(*args: str, env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    cmd = mcp_command(*args)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env or child_env(), cwd=str(PROJECT_ROOT))
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str, key: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session,
    ):
        await session.initialize()
        yield session


def error_of(result: CallToolResult) -> dict:
    assert result.is_error, result
    body = json.loads(result.content[0].text)
    assert result.structured_content == body
    assert set(body["error"]) == {"code", "message"} and len(body["error"]["message"]) > 5
    return body["error"]


def turns(prefix: str) -> list[dict]:
    return [{"turn_id": f"{prefix}{i}", "text": t, "ts": f"2026-11-2{i}T10:00:00Z"} for i, t in enumerate(REFERENCE)]


async def ingest_and_check_block(session: ClientSession, user: str, prefix: str = "t") -> None:
    stored = await session.call_tool("ingest_turns", {"user_id": user, "session_id": "s1", "turns": turns(prefix)})
    assert not stored.is_error, stored
    assert stored.structured_content["accepted"] == [f"{prefix}0", f"{prefix}1"]
    assert "Django框架" in stored.structured_content["concepts"][f"{prefix}1"]
    again = await session.call_tool("ingest_turns", {"user_id": user, "session_id": "s1", "turns": turns(prefix)})
    assert again.structured_content["duplicates"] == [f"{prefix}0", f"{prefix}1"]  # idempotent by turn id

    block = await session.call_tool("get_context_block", {"user_id": user, "focus": "how do I deploy Django?"})
    assert not block.is_error, block
    text = block.content[0].text
    assert text.startswith('<user_knowledge_context scope="learning">') and "Django框架" in text
    assert block.structured_content["block"] == text
    assert block.structured_content["current_topic"] == ["Django部署"]

    # The loop in one call: the turn stored and the block a get_context_block right after returns.
    turn = {"turn_id": f"{prefix}-one", "text": "我想学SQLAlchemy。", "ts": "2026-11-25T10:00:00Z"}
    one = await session.call_tool(
        "ingest_turns", {"user_id": user, "session_id": "s1", "turns": [turn], "return_context": True}
    )
    assert not one.is_error, one
    assert one.structured_content["accepted"] == [f"{prefix}-one"]
    after = await session.call_tool("get_context_block", {"user_id": user})
    assert one.structured_content["context"] == after.structured_content
    assert "context" not in stored.structured_content  # only when asked


async def check_errors(session: ClientSession, user: str) -> None:
    # Same machine codes as the REST API for the same mistakes.
    assert (
        error_of(await session.call_tool("ingest_turns", {"user_id": user, "session_id": "s1", "turns": []}))["code"]
        == "INVALID_INPUT"
    )
    assert (
        error_of(
            await session.call_tool(
                "ingest_turns", {"user_id": user, "session_id": "s1", "turns": [{"text": "hi", "role": "robot"}]}
            )
        )["code"]
        == "INVALID_ROLE"
    )
    assert (
        error_of(await session.call_tool("get_context_block", {"user_id": user, "max_tokens": 0}))["code"]
        == "INVALID_INPUT"
    )
    assert (
        error_of(await session.call_tool("get_context_block", {"user_id": user, "scope": "astrology"}))["code"]
        == "INVALID_INPUT"
    )
    assert (
        error_of(await session.call_tool("explain_concept", {"user_id": user, "concept": "Haskell"}))["code"]
        == "CONCEPT_NOT_FOUND"
    )
    assert (
        error_of(await session.call_tool("get_context_block", {"user_id": "nobody-" + user}))["code"]
        == "USER_NOT_FOUND"
    )


def load_demo_catalog(settings, store, tenant: str) -> None:
    """The demo catalog (demo/catalog.yaml) for a tenant, written through the library (no spaCy needed)."""
    from graphmem.extraction.catalog_io import load_catalog
    from graphmem.service import GraphMemory

    GraphMemory(settings, store=store).put_catalog(tenant, load_catalog(PROJECT_ROOT / "demo" / "catalog.yaml"))


def run(fn, *args):
    return anyio.run(fn, *args)


@pytest.fixture
def api_tenant_a_catalog(settings, store, api_tenants) -> None:
    """The demo catalog in the shared API's tenant A, which the API-mode tests' blocks name. Another test
    may have loaded it there already (these tests passed only after one did); loaded once."""
    if store.catalog_version(api_tenants.tenant_a) == 0:
        load_demo_catalog(settings, store, api_tenants.tenant_a)


# -- stdio, in-process (the default) ----------------------------------------------------------------------


def test_stdio_in_process(settings, store, user_id):
    tenant = "mcp-stdio-" + uuid.uuid4().hex[:8]
    load_demo_catalog(settings, store, tenant)

    async def main() -> None:
        async with stdio_session("--tenant", tenant) as session:
            listed = await session.list_tools()
            assert {t.name for t in listed.tools} == TOOLS
            for tool in listed.tools:
                # Written for a model that has never seen graphmem: a sentence or more, every argument described.
                assert len(tool.description) > 120, tool.name
                assert all(p.get("description") for p in tool.input_schema["properties"].values()), tool.name
            templates = await session.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["graphmem://users/{user_id}/graph"]

            await ingest_and_check_block(session, user_id)
            await check_errors(session, user_id)

            explained = await session.call_tool("explain_concept", {"user_id": user_id, "concept": "Django框架"})
            assert explained.structured_content["name"] == "Django框架"
            graph = await session.read_resource(f"graphmem://users/{user_id}/graph")
            keys = {n["key"] for n in json.loads(graph.contents[0].text)["nodes"]}
            assert {"python基础", "django框架"} <= keys
            run_record = await session.call_tool("compact_memory", {"user_id": user_id})
            assert run_record.structured_content["concepts_before"] >= 2
            forgot = await session.call_tool("forget_concept", {"user_id": user_id, "concept": "Python基础"})
            assert forgot.structured_content["concept"] == "python基础"

    try:
        run(main)
        # The turns landed in --tenant's graph and in no other tenant's.
        assert store.user_version(UserRef(tenant, user_id))[0] is not None
        assert store.user_version(UserRef("default", user_id))[0] is None
    finally:
        drop_tenant(store, tenant)


# -- stdio with --api: two keys, two tenants ----------------------------------------------------------------


def test_stdio_api_mode_two_keys_cannot_see_each_other(api, api_tenants, api_tenant_a_catalog, user_id):
    async def main() -> None:
        async with (
            stdio_session("--api", api.base_url, env=child_env(GRAPHMEM_API_KEY=api_tenants.key_a)) as a,
            stdio_session("--api", api.base_url, env=child_env(GRAPHMEM_API_KEY=api_tenants.key_b)) as b,
        ):
            assert {t.name for t in (await a.list_tools()).tools} == TOOLS
            stored = await a.call_tool("ingest_turns", {"user_id": user_id, "session_id": "s1", "turns": turns("k")})
            assert stored.structured_content["accepted"] == ["k0", "k1"]
            seen = await a.call_tool("get_context_block", {"user_id": user_id})
            assert "Python基础" in seen.structured_content["core_topics"]
            # Key B's tenant has no such user: same id, other tenant.
            assert error_of(await b.call_tool("get_context_block", {"user_id": user_id}))["code"] == "USER_NOT_FOUND"
            assert (
                error_of(await b.call_tool("explain_concept", {"user_id": user_id, "concept": "Python基础"}))["code"]
                == "USER_NOT_FOUND"
            )
            with pytest.raises(Exception, match="USER_NOT_FOUND"):
                await b.read_resource(f"graphmem://users/{user_id}/graph")
            await check_errors(a, user_id)

        async with stdio_session("--api", api.base_url, env=child_env(GRAPHMEM_API_KEY="not-a-key")) as stranger:
            assert (
                error_of(await stranger.call_tool("get_context_block", {"user_id": user_id}))["code"]
                == "INVALID_API_KEY"
            )

    run(main)


# -- streamable HTTP, in-process, the REST API's bearer keys --------------------------------------------------


def wait_for_port(port: int, proc: subprocess.Popen, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"graphmem mcp --http exited with {proc.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise RuntimeError("graphmem mcp --http did not listen in time")


@contextmanager
def mcp_http_process(args: list[str], env: dict[str, str], log_path: Path) -> Iterator[str]:
    """`graphmem mcp --http` in a subprocess on a free port; yields its /mcp URL."""
    port = free_port()
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            mcp_command("--http", "--port", str(port), *args),
            cwd=PROJECT_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        try:
            wait_for_port(port, proc)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


@pytest.fixture
def mcp_http(settings, store, tmp_path: Path):
    run_id = uuid.uuid4().hex[:8]
    keys = {"a": (f"mk-a-{run_id}", f"mcp-a-{run_id}"), "b": (f"mk-b-{run_id}", f"mcp-b-{run_id}")}
    load_demo_catalog(settings, store, keys["a"][1])
    env = child_env(GRAPHMEM_API_KEYS=",".join(f"{k}:{t}" for k, t in keys.values()))
    try:
        with mcp_http_process([], env, tmp_path / "mcp-http.log") as url:
            yield url, keys
    finally:
        for _, tenant in keys.values():
            drop_tenant(store, tenant)


def test_http_in_process_keys_are_tenants(mcp_http, store, user_id):
    url, keys = mcp_http

    async def main() -> None:
        async with http_session(url, keys["a"][0]) as a, http_session(url, keys["b"][0]) as b:
            assert {t.name for t in (await a.list_tools()).tools} == TOOLS
            await ingest_and_check_block(a, user_id, prefix="h")
            await check_errors(a, user_id)
            # The same user id under key B: nothing of A's.
            assert error_of(await b.call_tool("get_context_block", {"user_id": user_id}))["code"] == "USER_NOT_FOUND"
            stored_b = await b.call_tool(
                "ingest_turns",
                {
                    "user_id": user_id,
                    "session_id": "s1",
                    "turns": [{"turn_id": "h0", "text": "I want to learn Kubernetes.", "ts": "2026-11-20T10:00:00Z"}],
                },
            )
            assert stored_b.structured_content["accepted"] == ["h0"]  # same turn id, other tenant: stored anew
            block_b = (await b.call_tool("get_context_block", {"user_id": user_id})).structured_content
            assert "Django框架" not in block_b["block"] and "Python基础" not in block_b["block"]
            block_a = (await a.call_tool("get_context_block", {"user_id": user_id})).structured_content
            assert "Kubernetes" not in block_a["block"]

    run(main)
    assert store.user_version(UserRef(keys["a"][1], user_id))[0] is not None
    assert store.user_version(UserRef(keys["b"][1], user_id))[0] is not None

    # No key, or an unknown one, is refused at the door with the REST API's codes.
    with httpx.Client(timeout=30) as raw:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
        hdrs = {"accept": "application/json, text/event-stream"}
        anon = raw.post(url, json=init, headers=hdrs)
        assert anon.status_code == 401 and anon.json()["error"]["code"] == "MISSING_API_KEY"
        wrong = raw.post(url, json=init, headers={**hdrs, "authorization": "Bearer nope"})
        assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "INVALID_API_KEY"


def test_http_api_mode_forwards_each_callers_key(api, api_tenants, api_tenant_a_catalog, user_id, tmp_path):
    # The process has a key of its own (GRAPHMEM_API_KEY); over HTTP it must never lend it to a caller.
    env = child_env(GRAPHMEM_API_KEY=api_tenants.key_a)
    with mcp_http_process(["--api", api.base_url], env, tmp_path / "mcp-http-api.log") as url:

        async def main() -> None:
            async with (
                http_session(url, api_tenants.key_a) as a,
                http_session(url, api_tenants.key_b) as b,
                http_session(url, None) as anonymous,
            ):
                stored = await a.call_tool(
                    "ingest_turns", {"user_id": user_id, "session_id": "s1", "turns": turns("f")}
                )
                assert stored.structured_content["accepted"] == ["f0", "f1"]
                assert (
                    error_of(await b.call_tool("get_context_block", {"user_id": user_id}))["code"] == "USER_NOT_FOUND"
                )
                assert (
                    error_of(await anonymous.call_tool("get_context_block", {"user_id": user_id}))["code"]
                    == "MISSING_API_KEY"
                )
                block = await a.call_tool("get_context_block", {"user_id": user_id})
                assert "Python基础" in block.structured_content["core_topics"]

        run(main)


# -- the configs people copy: README's and the demo's ------------------------------------------------------


def test_readme_mcp_configs_parse_and_name_real_arguments():
    import re

    from graphmem.cli import build_parser
    from graphmem.settings import PROJECT_ROOT as ROOT

    blocks = re.findall(r"```json\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    configs = [json.loads(b)["mcpServers"]["graphmem"] for b in blocks if "mcpServers" in b]
    assert len(configs) == 2
    for server in configs:
        assert server["command"].endswith("/bin/graphmem")
        args = build_parser().parse_args(server["args"])  # exits (SystemExit) on an unknown flag
        assert args.command == "mcp"
    assert configs[1]["args"][1:] == ["--api", "http://127.0.0.1:8000"] and "GRAPHMEM_API_KEY" in configs[1]["env"]


def test_the_demo_printed_config_connects(api, api_tenants, user_id):
    from graphmem.demo import mcp_instructions
    from graphmem.settings import Settings

    text = mcp_instructions(api.base_url, api_tenants.key_a, Settings())
    config = json.loads(text[text.index("{") : text.index("\n}\n") + 2])["mcpServers"]["graphmem"]
    assert config["args"] == ["mcp", "--api", api.base_url]

    async def main() -> None:
        cmd = config["command"]
        # The venv's own `graphmem` script (this worktree's code first on PYTHONPATH), the key the demo says to set.
        params = StdioServerParameters(
            command=cmd, args=config["args"], cwd=str(PROJECT_ROOT), env=child_env(GRAPHMEM_API_KEY=api_tenants.key_a)
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session,
        ):
            await session.initialize()
            stored = await session.call_tool(
                "ingest_turns", {"user_id": user_id, "session_id": "s1", "turns": turns("d")}
            )
            assert stored.structured_content["accepted"] == ["d0", "d1"]

    run(main)
