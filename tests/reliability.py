"""Helpers for the reliability and security suites (issue 8): own API processes, own Neo4j.

Nothing here touches the shared Neo4j server beyond the tenants a test creates itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from graphmem.settings import PROJECT_ROOT, Settings
from tests.http_server import free_port

# Timestamps in the future: ranking counts them as "now", so recency decay is exactly 1 and
# blocks computed seconds apart are identical down to the last float bit.
FUTURE = "2031-01-0{}T10:00:00Z"


# Short English and Chinese turns with concepts, relations and stances: the load and fault tests' traffic.
MIXED_TEXTS = [
    "I want to learn Django and Kubernetes.",
    "我对Django框架很感兴趣，也想学Python基础",
    "I struggle with Docker Compose and SQLAlchemy.",
    "Django requires Linux server administration.",
    "I hate React. React uses Redux.",
    "PostgreSQL和Nginx都要学",
    "I already know Git and HTML.",
    "How do I deploy Django with Nginx?",
    "Flask or Django for a REST API?",
]


def run_id() -> str:
    return uuid.uuid4().hex[:8]


def keys_spec(pairs: dict[str, str]) -> str:
    """{key: tenant} → GRAPHMEM_API_KEYS."""
    return ",".join(f"{k}:{t}" for k, t in pairs.items())


def wait_ready(base_url: str, timeout_s: float = 120.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=base_url, timeout=5) as client:
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"the API process exited with {proc.returncode}")
            try:
                if client.get("/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
    raise RuntimeError(f"the API at {base_url} did not become ready in {timeout_s:.0f} s")


def settings_env(settings: Settings) -> dict[str, str]:
    """The environment that makes a subprocess see the same Neo4j as `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMEM_", "NEO4J_"))}
    env.update(
        {
            "GRAPHMEM_NEO4J_HOME": str(settings.neo4j_home),
            "GRAPHMEM_NEO4J_BOLT_PORT": str(settings.neo4j_bolt_port),
            "GRAPHMEM_NEO4J_HTTP_PORT": str(settings.neo4j_http_port),
            "GRAPHMEM_NEO4J_PASSWORD": settings.neo4j_password,
            # FUTURE timestamps must be accepted by the subprocess too (see tests/conftest.py).
            "GRAPHMEM_MAX_CLOCK_SKEW_S": str(settings.max_clock_skew_s),
            "PYTHONPATH": str(PROJECT_ROOT),
        }
    )
    if settings.neo4j_uri:
        env["NEO4J_URI"] = settings.neo4j_uri
    return env


@dataclass
class ApiProcess:
    """The real API as a separate OS process (`python -m uvicorn graphmem.api.app:create_app --factory`)."""

    env: dict[str, str]
    port: int = field(default_factory=free_port)
    log_path: Path | None = None
    proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, wait: bool = True) -> ApiProcess:
        cmd = [
            sys.executable,
            "-m",
            "uvicorn",
            "graphmem.api.app:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "warning",
            "--no-access-log",
        ]
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            cmd,
            env=self.env,
            cwd=PROJECT_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        if wait:
            wait_ready(self.base_url, proc=self.proc)
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    def client(self, key: str | None = None, timeout: float = 60.0) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    def log_tail(self, lines: int = 30) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def dedicated_neo4j_settings(base: Settings, home: Path) -> Settings:
    """Settings for a second, private Neo4j server (fault tests kill it; never the shared one)."""
    return base.model_copy(
        update={
            "neo4j_uri": None,
            "neo4j_home": home,
            "neo4j_bolt_port": free_port(),
            "neo4j_http_port": free_port(),
            "neo4j_heap": "768m",
            "neo4j_pagecache": "128m",
        }
    )
