"""Where context latency goes under mixed load (issue 14, item 13): a short, bounded profiling run.

N client threads (this process) each loop "ingest one turn, then ask for the block" against the real API
(its own process, loopback) over the shared Neo4j, for a warm-up and a measured window (≤ 60 s in all).
Measured: client latency per kind; the API's own per-route time (its Prometheus histogram, so the part
spent before the route runs is client minus server); CPU of the API, Neo4j and this process; and,
optionally, py-spy samples of the API process, attributed to the stages of a context call:

  --pyspy wall   every thread, idle ones included (wall time: waiting on Neo4j, a lock or the GIL counts)
  --pyspy gil    only the thread holding the GIL (CPU time in Python and in C code that keeps the GIL)

    python -m bench.load_profile --clients 24 --seconds 30 [--mode mixed|context] [--workers 2] [--pyspy wall]

Every run uses the tenant ``bench-loadprof`` and erases its own users through the API at the end. The
machine's 2 cores are shared: read the load average printed with the results before trusting a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench.common import REPO, log, start_server, summary_ms
from graphmem.settings import Settings

TENANT = "bench-loadprof"
# The load test's traffic (tests/test_load.py): short English and Chinese turns, four focus texts.
TEXTS = [
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
FOCUSES = [None, "How do I deploy Django?", "React", "数据库"]

# Stages of a context call, by the function a sample is in (deepest match wins).
CONTEXT_STAGES = [
    ("user_version", "Neo4j: user version check"),
    ("load_user_graph", "Neo4j: load user graph"),
    ("existing_concepts", "Neo4j: focus lookup"),
    ("search_concepts", "Neo4j: focus lookup"),
    ("focus_keys", "focus extraction (spaCy)"),
    ("select_context", "select (pure)"),
    ("render_block", "render + tiktoken (pure)"),
    ("model_copy", "copy cached result"),
    ("rank", "rank"),
]
INGEST_STAGES = [
    ("extract", "extraction (spaCy)"),
    ("write_ingest", "Neo4j: ingest write"),
    ("load_user_graph", "Neo4j: load user graph"),
    ("write_weights", "Neo4j: write weights"),
    ("rank", "rank"),
    ("acquire", "lock wait"),
]


def _metrics(client: httpx.Client) -> dict[tuple[str, str], tuple[float, float]]:
    """(route, method) -> (sum seconds, count) of graphmem_http_request_seconds."""
    text = client.get("/metrics").text
    # Route templates hold braces ({user_id}), so labels run to the last '} ' of the line.
    out: dict[tuple[str, str], list[float]] = {}
    for m in re.finditer(r"graphmem_http_request_seconds_(sum|count)\{(.*)\} ([0-9.e+-]+)$", text, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        key = (labels.get("route", ""), labels.get("method", ""))
        pair = out.setdefault(key, [0.0, 0.0])
        pair[0 if m.group(1) == "sum" else 1] = float(m.group(3))
    return {k: (v[0], v[1]) for k, v in out.items()}


# A process of its own, one thread, asking Neo4j the context call's first question (the user's version)
# five times a second: Neo4j's answer time under the load, without the API process's threads and GIL.
_PROBE = """
import json, sys, time
from graphmem.settings import Settings
from graphmem.store import Neo4jStore, UserRef
store = Neo4jStore(Settings())
user = UserRef(sys.argv[1], sys.argv[2])
store.user_version(user)
end = time.monotonic() + float(sys.argv[3])
out = []
while time.monotonic() < end:
    t0 = time.perf_counter()
    store.user_version(user)
    out.append(time.perf_counter() - t0)
    time.sleep(0.2)
store.close()
print(json.dumps(out))
"""


def _attribute(raw: Path, anchor: str, stages: list[tuple[str, str]]) -> tuple[Counter[str], int]:
    """py-spy raw stacks -> samples per stage among the stacks passing through ``anchor``."""
    counts: Counter[str] = Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        # "Class.method (file.py:12)" -> "method"
        frames = [f.split(" (", 1)[0].rsplit(".", 1)[-1] for f in stack.split(";")]
        if anchor not in frames:
            continue
        below = frames[frames.index(anchor) + 1 :]
        stage = "other (in the call)"
        for frame in below:  # root to leaf: the deepest known frame names the stage
            for name, label in stages:
                if frame == name:
                    stage = label
                    break
        counts[stage] += int(n)
        total += int(n)
    return counts, total


def run(
    clients: int, seconds: float, warmup: float, mode: str, workers: int, pyspy: str | None, spread: bool = False
) -> dict[str, Any]:
    settings = Settings()
    run_tag = uuid.uuid4().hex[:6]
    # spread: a tenant per client (bench-loadprof-<i>), so no two clients share a tenant's write lock.
    keys = [f"loadprof-{run_tag}-{i if spread else 0}" for i in range(clients)]
    tenants = {k: f"{TENANT}-{i}" if spread else TENANT for i, k in enumerate(keys)}
    key = keys[0]
    server = start_server(tenants, workers=workers)
    users = [f"lp-{run_tag}-{i}" for i in range(clients)]
    result: dict[str, Any] = {
        "clients": clients,
        "seconds": seconds,
        "mode": mode,
        "workers": workers,
        "tenants": len(set(tenants.values())),
        "load_avg_before": [round(x, 2) for x in os.getloadavg()],
    }
    try:
        for k in dict.fromkeys(keys):
            with server.client(k) as c:
                r = c.put(
                    "/v1/catalog",
                    content=(REPO / "demo" / "catalog.yaml").read_bytes(),
                    headers={"content-type": "application/yaml"},
                )
                assert r.status_code == 200, r.text
        for i, u in enumerate(users):  # every user exists before the window (context-only mode needs a graph)
            with server.client(keys[i]) as c:
                c.post(
                    f"/v1/users/{u}/turns",
                    json={
                        "session_id": "s0",
                        "turns": [{"turn_id": "t0", "role": "user", "text": TEXTS[i % len(TEXTS)]}],
                    },
                ).raise_for_status()

        measuring = threading.Event()
        stop = threading.Event()
        lat: dict[str, list[float]] = {"ingest": [], "context": []}
        errors: list[str] = []
        lock = threading.Lock()

        def loop(i: int) -> None:
            uid = users[i]
            with server.client(keys[i], timeout=60) as c:
                n = 0
                while not stop.is_set():
                    n += 1
                    calls = []
                    if mode == "mixed":
                        calls.append(
                            (
                                "ingest",
                                lambda: c.post(
                                    f"/v1/users/{uid}/turns",
                                    json={
                                        "session_id": f"s{n // 10}",
                                        "turns": [
                                            {"turn_id": f"t{n}", "role": "user", "text": TEXTS[(i + n) % len(TEXTS)]}
                                        ],
                                    },
                                ),
                            )
                        )
                    focus = FOCUSES[n % len(FOCUSES)]
                    calls.append(
                        ("context", lambda: c.get(f"/v1/users/{uid}/context", params={"focus": focus} if focus else {}))
                    )
                    for kind, fn in calls:
                        t0 = time.perf_counter()
                        try:
                            ok = fn().status_code == 200
                        except httpx.HTTPError:
                            ok = False
                        dt = time.perf_counter() - t0
                        if measuring.is_set():
                            with lock:
                                lat[kind].append(dt)
                                if not ok:
                                    errors.append(kind)

        threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(clients)]
        for t in threads:
            t.start()
        time.sleep(warmup)

        api_procs = [psutil.Process(server.pid), *psutil.Process(server.pid).children(recursive=True)]
        neo4j_pid = int((Path(settings.neo4j_home).expanduser() / "neo4j.pid").read_text().strip())
        watched = {"api": api_procs, "neo4j": [psutil.Process(neo4j_pid)], "load generator": [psutil.Process()]}
        for procs in watched.values():
            for p in procs:
                p.cpu_percent(None)
        psutil.cpu_percent(None)
        with server.client(key) as c:
            before = _metrics(c)
        spy = None
        raw = Path(tempfile.mkdtemp(prefix="loadprof-")) / "pyspy.txt"
        if pyspy:
            exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
            cmd = [
                exe,
                "record",
                "--pid",
                str(api_procs[-1].pid if workers > 1 else server.pid),
                "--duration",
                str(int(seconds)),
                "--rate",
                "50",
                "--format",
                "raw",
                "--nonblocking",
                "--output",
                str(raw),
            ]
            cmd.append("--idle" if pyspy == "wall" else "--gil")
            spy = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        probe = subprocess.Popen(
            [sys.executable, "-c", _PROBE, tenants[keys[0]], users[0], str(seconds)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        measuring.set()
        time.sleep(seconds)
        measuring.clear()
        probe_out, probe_err = probe.communicate(timeout=60)
        try:
            result["neo4j_probe_user_version"] = summary_ms(json.loads(probe_out))
        except ValueError:
            result["neo4j_probe_user_version"] = f"probe failed: {probe_err[-300:]}"
        cpu = {name: round(sum(p.cpu_percent(None) for p in procs), 1) for name, procs in watched.items()}
        cpu["machine (of 200)"] = round(psutil.cpu_percent(None) * (os.cpu_count() or 1), 1)
        with server.client(key) as c:
            after = _metrics(c)
        stop.set()
        for t in threads:
            t.join(70)
        if spy is not None:
            spy.wait(60)

        for kind, values in lat.items():
            if values:
                result[kind] = summary_ms(values)
                result[kind]["per_s"] = round(len(values) / seconds, 1)
        result["errors"] = len(errors)
        server_ms = {}
        for (route, method), (s, n) in after.items():
            s0, n0 = before.get((route, method), (0.0, 0.0))
            if n - n0 > 0 and route.startswith("/v1/users"):
                server_ms[f"{method} {route}"] = {"n": int(n - n0), "mean_ms": round(1000 * (s - s0) / (n - n0), 1)}
        result["server_mean"] = server_ms
        result["cpu_percent"] = cpu
        result["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
        if pyspy:
            result["pyspy_raw"] = str(raw) if raw.exists() else f"py-spy wrote nothing: {spy.stderr.read()[-500:]!r}"
        if pyspy and raw.exists():
            for anchor, stages, name in (("context", CONTEXT_STAGES, "context"), ("ingest", INGEST_STAGES, "ingest")):
                counts, total = _attribute(raw, anchor, stages)
                n_calls = len(lat.get(name, [])) or 1
                # 50 samples per thread-second: samples / 50 / calls = seconds per call in that stage.
                result[f"pyspy_{pyspy}_{name}"] = {
                    "samples": total,
                    "ms_per_call": {k: round(v / 50 / n_calls * 1000, 1) for k, v in counts.most_common()},
                }
        for i, u in enumerate(users):
            with server.client(keys[i]) as c:
                c.delete(f"/v1/users/{u}")
    finally:
        server.stop()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=24)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=8.0)
    ap.add_argument("--mode", choices=["mixed", "context"], default="mixed")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--pyspy", choices=["wall", "gil"], default=None)
    ap.add_argument("--spread", action="store_true", help="a tenant per client (no shared tenant write lock)")
    args = ap.parse_args()
    if args.pyspy and args.workers > 1:
        ap.error("--pyspy samples one API process: use it with --workers 1")
    if args.seconds + args.warmup > 60:
        ap.error("keep a run within 60 s (warm-up + window): the machine is shared")
    log(
        f"{args.clients} clients, {args.mode}, {args.workers} worker(s), {args.seconds:.0f} s, py-spy {args.pyspy}, "
        f"{'a tenant per client' if args.spread else 'one tenant'}"
    )
    print(
        json.dumps(
            run(args.clients, args.seconds, args.warmup, args.mode, args.workers, args.pyspy, args.spread), indent=1
        )
    )


if __name__ == "__main__":
    main()
