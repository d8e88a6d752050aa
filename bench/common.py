"""Shared helpers: statistics, machine description, the API server in its own process."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"


def pct(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, int(round(q / 100 * len(s) + 0.5)) - 1))
    return s[k]


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    ms = [x * 1000 for x in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(pct(ms, 50), 2),
        "p95_ms": round(pct(ms, 95), 2),
        "p99_ms": round(pct(ms, 99), 2),
        "max_ms": round(max(ms), 2) if ms else float("nan"),
    }


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import neo4j
    import spacy

    info: dict[str, Any] = {
        "cpu_model": cpu,
        "logical_cores": os.cpu_count(),
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "spacy": spacy.__version__,
        "neo4j_python_driver": neo4j.__version__,
        "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    try:
        from neo4j import GraphDatabase

        from graphmem.settings import Settings

        s = Settings()
        with GraphDatabase.driver(
            s.neo4j_uri or f"bolt://127.0.0.1:{s.neo4j_bolt_port}", auth=(s.neo4j_user, s.neo4j_password)
        ) as d:
            rec = d.execute_query(
                "CALL dbms.components() YIELD name, versions, edition RETURN name, versions[0] AS version, edition"
            ).records[0]
            info["neo4j_server"] = f"{rec['name']} {rec['version']} {rec['edition']}"
    except Exception as exc:
        info["neo4j_server"] = f"unknown ({exc})"
    try:
        import neo4j._codec.packstream._rust  # type: ignore

        info["neo4j_rust_ext"] = True
    except Exception:
        info["neo4j_rust_ext"] = False
    return info


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """The real API (uvicorn, one worker) in its own process, so that client load does not share its GIL."""

    proc: subprocess.Popen
    base_url: str

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_mib(self) -> float:
        return psutil.Process(self.proc.pid).memory_info().rss / 2**20

    def client(self, key: str, timeout: float = 120.0) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=timeout)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def start_server(keys: dict[str, str], ready_timeout_s: float = 180.0, workers: int = 1, repo: Path = REPO) -> Server:
    """keys: api key -> tenant. ``workers`` > 1 runs that many API processes (`graphmem serve --workers`).
    ``repo``: the checkout whose code the API runs (another one for before/after runs)."""
    port = free_port()
    env = {**os.environ, "GRAPHMEM_API_KEYS": ",".join(f"{k}:{t}" for k, t in keys.items()), "PYTHONPATH": str(repo)}
    if workers > 1:
        cmd = [
            sys.executable,
            "-m",
            "uvicorn",
            "graphmem.api.app:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning",
        ]
    else:
        code = (
            "import uvicorn; from graphmem.api.app import create_app; from graphmem.settings import Settings; "
            f"uvicorn.run(create_app(Settings()), host='127.0.0.1', port={port}, log_level='warning')"
        )
        cmd = [sys.executable, "-c", code]
    log = open(RESULTS / "server.log", "ab")
    proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=log, stderr=log)
    server = Server(proc, f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + ready_timeout_s
    with httpx.Client(base_url=server.base_url, timeout=5) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the API process exited with {proc.returncode}; see {RESULTS / 'server.log'}")
            try:
                if client.get("/readyz").status_code == 200:
                    return server
            except httpx.TransportError:
                pass
            time.sleep(0.3)
    server.stop()
    raise RuntimeError("the API did not become ready")


def run_clients(n_clients: int, work: Callable[[int], list[float]]) -> tuple[list[float], float]:
    """Runs work(client_index) in n threads; returns (all per-call latencies, wall seconds)."""
    t0 = time.perf_counter()
    with ThreadPoolExecutor(n_clients) as pool:
        parts = list(pool.map(work, range(n_clients)))
    wall = time.perf_counter() - t0
    return [x for p in parts for x in p], wall


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
