"""`graphmem demo`: start Neo4j and the API, load the demo through HTTP, print each learner's block.

The demo data lives in ``demo/`` (a bilingual programming catalog and four
learners with several sessions each), written for this project.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from .guide import DEMO_FOCUS as GUIDE_FOCUS
from .neo4j_server import LocalNeo4j
from .settings import PROJECT_ROOT, Settings, get_settings

DEMO_DIR = PROJECT_ROOT / "demo"
# What each demo learner asks next: the focus of the printed block.
DEMO_FOCUS = {
    "xiaoming": "我想学怎么部署Django",
    "emma": "How do I call a REST API from React?",
    "li_wei": "神经网络怎么入门？",
    "sam": None,
}
DEMO_SCOPE = {"sam": "recommendation"}


def _say(message: str) -> None:
    print(f"[graphmem demo] {message}", file=sys.stderr, flush=True)


def demo_learners(demo_dir: Path = DEMO_DIR) -> list[dict[str, Any]]:
    return json.loads((demo_dir / "learners.json").read_text(encoding="utf-8"))["learners"]


def demo_turn_batches(learner: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(session_id, turns) with stable turn ids, so loading the demo twice changes nothing."""
    batches = []
    for session in learner["sessions"]:
        start = datetime.fromisoformat(session["ts"].replace("Z", "+00:00"))
        turns = [
            {
                "turn_id": f"{learner['user_id']}-{session['session_id']}-{i + 1}",
                "role": t["role"],
                "text": t["text"],
                "ts": (start + timedelta(minutes=2 * i)).isoformat(),
            }
            for i, t in enumerate(session["turns"])
        ]
        batches.append((session["session_id"], turns))
    return batches


def load_demo(client: httpx.Client, demo_dir: Path = DEMO_DIR) -> dict[str, Any]:
    """Loads the catalog and every learner through the HTTP API; returns counts."""
    resp = client.put(
        "/v1/catalog", content=(demo_dir / "catalog.yaml").read_bytes(), headers={"content-type": "application/yaml"}
    )
    resp.raise_for_status()
    stored = duplicates = 0
    for learner in demo_learners(demo_dir):
        for session_id, turns in demo_turn_batches(learner):
            r = client.post(f"/v1/users/{learner['user_id']}/turns", json={"session_id": session_id, "turns": turns})
            r.raise_for_status()
            stored += len(r.json()["accepted"])
            duplicates += len(r.json()["duplicates"])
        # Fold what matters little, so the Browser shows core, related and compacted tiers.
        client.post(f"/v1/users/{learner['user_id']}/compact").raise_for_status()
    return {"catalog": resp.json(), "stored": stored, "duplicates": duplicates}


def _wait_ready(client: httpx.Client, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    noted = 0.0
    while time.monotonic() < deadline:
        try:
            if client.get("/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() - noted > 10:
            _say("waiting for the API to be ready (loading spaCy pipelines, applying the schema) ...")
            noted = time.monotonic()
        time.sleep(0.5)
    raise RuntimeError("the API did not become ready in time; see the log above")


def mcp_instructions(base: str, key: str | None, settings: Settings) -> str:
    """How to point an MCP host (Claude Desktop, Cursor, ...) at this running service."""
    graphmem_cmd = str(Path(sys.executable).with_name("graphmem"))
    server: dict[str, Any] = {"command": graphmem_cmd, "args": ["mcp", "--api", base]}
    if key:
        server["env"] = {"GRAPHMEM_API_KEY": "<your key>"}
    config = json.dumps({"mcpServers": {"graphmem": server}}, indent=2)
    return f"""Point an MCP host at it (stdio; the host starts this command). Add to the host's config:
{config}
  (or without the API: "args": ["mcp", "--tenant", "{settings.default_tenant}"] runs graphmem in-process)
  Over HTTP instead: {graphmem_cmd} mcp --http --port {settings.mcp_port}   then connect the host to
  http://127.0.0.1:{settings.mcp_port}/mcp{" with Authorization: Bearer <key>" if key else ""}
  Python: from graphmem.client import GraphMemClient; GraphMemClient("{base}"{', api_key="<key>"' if key else ""})
"""


def run_demo(
    serve: bool = False, host: str | None = None, port: int | None = None, settings: Settings | None = None
) -> int:
    import uvicorn

    from graphmem.api.app import create_app

    settings = settings or get_settings()
    host = host or settings.host
    port = port or settings.port
    LocalNeo4j(settings).start()

    app = create_app(settings)
    from graphmem.api.http_protocol import JsonErrorHttpProtocol

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", http=JsonErrorHttpProtocol))
    thread = threading.Thread(target=server.run, name="graphmem-api", daemon=True)
    thread.start()
    base = f"http://{host}:{port}"
    headers = {}
    keys = app.state.keyring.keys
    if keys:
        headers["Authorization"] = f"Bearer {next(iter(keys))}"
    with httpx.Client(base_url=base, headers=headers, timeout=60.0) as client:
        _wait_ready(client)
        _say(f"API ready at {base} (OpenAPI: {base}/docs)")
        counts = load_demo(client)
        _say(
            f"demo loaded: {counts['catalog']['concepts']} catalog concepts, {counts['stored']} new turns, "
            f"{counts['duplicates']} already stored"
        )
        for learner in demo_learners():
            user = learner["user_id"]
            params = {"scope": DEMO_SCOPE.get(user, "learning")}
            focus = DEMO_FOCUS.get(user)
            if focus:
                params["focus"] = focus
            block = client.get(f"/v1/users/{user}/context", params=params)
            block.raise_for_status()
            print(f"\n# {user}: {learner['description']}")
            if "focus" in params:
                print(f"# focus: {params['focus']}")
            print(block.json()["block"])
    user = "xiaoming"
    print(f"""
Try it yourself:
  curl -s '{base}/v1/users/{user}/context?focus=how+do+I+deploy+Django' {"-H 'Authorization: Bearer <key>'" if keys else ""}

Explore the graph in the Neo4j Browser: http://127.0.0.1:{settings.neo4j_http_port}/browser/
  (user neo4j, password from NEO4J_PASSWORD; default {settings.neo4j_password!r} for local use), then run
  :play {base}/browser/guide
  or print the saved Browser queries for a learner, parameters filled in, ready to paste:
  graphmem explore {user} --tenant {settings.default_tenant} --focus {GUIDE_FOCUS[user]}
""")
    print(mcp_instructions(base, next(iter(keys)) if keys else None, settings))
    if serve:
        _say(f"serving on {base}; press Ctrl-C to stop (Neo4j keeps running: `graphmem neo4j stop`)")
        try:
            while thread.is_alive():
                thread.join(1.0)
        except KeyboardInterrupt:
            pass
    server.should_exit = True
    thread.join(10)
    return 0
