"""Mixed load with Locust (issue 16, item 6): context p99 under 24 clients mixing ingest and context.

    python -m bench.load_bench                        # 24 users, 60 s (make bench-load)
    python -m bench.load_bench --users 32 --seconds 30 --workers 2

Starts the real API in its own process on loopback (bench/common.py), puts the demo catalog into a fresh
tenant (``bench-load-<run>``), runs bench/locustfile.py headless (its own process: Locust's gevent loop
does not share the API's GIL), samples the CPU of the API, of Neo4j and of Locust and the load average
while it runs, erases the run's users through the API, and writes bench/results/load.json and load.md
(``--think S``: each user waits S seconds between requests on average; load_think<S>s.json and .md).
The last line printed is the summary (target: context p99 ≤ 100 ms).

The machine's cores are shared: Locust, the API and Neo4j all run here, so the figures hold for "this
machine under this load"; the load average in the report says how busy it was.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
import psutil

from graphmem.settings import PROJECT_ROOT, Settings

from .common import REPO, RESULTS, log, machine, start_server

TARGET_P99_MS = 100.0
# Not imported from the locustfile: importing locust monkey-patches this process (gevent).
WARMUP_TEXT = "I want to learn Django and Kubernetes."


def _neo4j_pid(settings: Settings) -> int | None:
    """The Neo4j process listening on the bolt port the API uses (local servers only)."""
    port = settings.neo4j_bolt_port
    for conn in psutil.net_connections("tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
            return conn.pid
    return None


class CpuSampler(threading.Thread):
    """CPU % (of one core) of named processes and the 1-minute load average, every second."""

    def __init__(self, pids: dict[str, int | None]) -> None:
        super().__init__(daemon=True)
        self.procs = {k: psutil.Process(p) for k, p in pids.items() if p}
        self.samples: dict[str, list[float]] = {k: [] for k in self.procs}
        self.load: list[float] = []
        self.stop = threading.Event()

    def add(self, name: str, pid: int) -> None:
        self.procs[name] = psutil.Process(pid)
        self.samples[name] = []

    def run(self) -> None:
        for p in self.procs.values():
            p.cpu_percent(None)
        while not self.stop.wait(1.0):
            self.load.append(os.getloadavg()[0])
            for k, p in list(self.procs.items()):
                try:
                    self.samples[k].append(p.cpu_percent(None))
                except psutil.Error:
                    pass

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            f"{k}_cpu_pct_mean": round(sum(v) / len(v), 1) if v else None for k, v in self.samples.items()
        }
        out["load_avg_1m_mean"] = round(sum(self.load) / len(self.load), 2) if self.load else None
        out["load_avg_1m_max"] = round(max(self.load), 2) if self.load else None
        return out


def _stats(csv_path: Path) -> dict[str, dict[str, Any]]:
    """Locust's *_stats.csv -> request name -> counts and percentiles (ms)."""
    out: dict[str, dict[str, Any]] = {}
    with csv_path.open() as fh:
        for row in csv.DictReader(fh):
            name = row["Name"]
            if row["50%"] == "N/A":  # no requests of this name
                continue
            out[name] = {
                "requests": int(row["Request Count"]),
                "failures": int(row["Failure Count"]),
                "p50_ms": float(row["50%"]),
                "p95_ms": float(row["95%"]),
                "p99_ms": float(row["99%"]),
                "max_ms": float(row["Max Response Time"]),
                "mean_ms": round(float(row["Average Response Time"]), 1),
                "rps": round(float(row["Requests/s"]), 1),
            }
    return out


def run(
    users: int, seconds: int, workers: int, context_weight: int, ingest_weight: int, think_s: float = 0.0
) -> dict[str, Any]:
    settings = Settings()
    run_tag = uuid.uuid4().hex[:6]
    tenant, key = f"bench-load-{run_tag}", f"bench-load-{run_tag}"
    server = start_server({key: tenant}, workers=workers)
    result: dict[str, Any] = {
        "users": users,
        "seconds": seconds,
        "api_workers": workers,
        "mix": {"context": context_weight, "ingest": ingest_weight},
        "think_s": think_s,
        "tenant": tenant,
        "machine": machine(),
    }
    try:
        with server.client(key) as c:
            c.put(
                "/v1/catalog",
                content=(PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes(),
                headers={"content-type": "application/yaml"},
            ).raise_for_status()
            # Warm-up outside the measurement: spaCy's first calls, the driver's pool, the catalog cache.
            for i in range(3):
                c.post(
                    f"/v1/users/warmup-{run_tag}/turns",
                    json={"session_id": "w", "turns": [{"turn_id": f"w{i}", "role": "user", "text": WARMUP_TEXT}]},
                ).raise_for_status()
                c.get(f"/v1/users/warmup-{run_tag}/context").raise_for_status()
            c.delete(f"/v1/users/warmup-{run_tag}")
        out_dir = RESULTS / "locust"
        out_dir.mkdir(parents=True, exist_ok=True)
        prefix = out_dir / "load"
        env = {
            **os.environ,
            "GRAPHMEM_BENCH_KEY": key,
            "GRAPHMEM_BENCH_RUN": run_tag,
            "GRAPHMEM_BENCH_CONTEXT_WEIGHT": str(context_weight),
            "GRAPHMEM_BENCH_INGEST_WEIGHT": str(ingest_weight),
            "GRAPHMEM_BENCH_THINK_S": str(think_s),
            "PYTHONPATH": str(REPO),
        }
        cmd = [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(REPO / "bench" / "locustfile.py"),
            "--headless",
            "-u",
            str(users),
            "-r",
            str(users),
            "-t",
            f"{seconds}s",
            "--host",
            server.base_url,
            "--csv",
            str(prefix),
            "--only-summary",
            "--loglevel",
            "WARNING",
        ]
        sampler = CpuSampler({"api": server.pid, "neo4j": _neo4j_pid(settings)})
        log(f"locust: {users} users for {seconds} s against {server.base_url} (tenant {tenant})")
        locust = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sampler.add("locust", locust.pid)
        sampler.start()
        rss_before = server.rss_mib()
        stdout, _ = locust.communicate(timeout=seconds + 120)
        sampler.stop.set()
        result["rss_mib"] = {"before": round(rss_before, 1), "after": round(server.rss_mib(), 1)}
        result["cpu"] = sampler.summary()
        result["locust_exit_code"] = locust.returncode
        (out_dir / "locust.log").write_text(stdout)
        stats = _stats(Path(f"{prefix}_stats.csv"))
        result["requests"] = stats
        failures = Path(f"{prefix}_failures.csv")
        result["failure_kinds"] = list(csv.DictReader(failures.open()))[:10] if failures.exists() else []
        # The run's users are erased again (the tenant's catalog stays: it is small).
        with server.client(key) as c:
            for i in range(users):
                try:
                    c.delete(f"/v1/users/load-{run_tag}-{i}")
                except httpx.HTTPError:
                    pass
    finally:
        server.stop()
    return result


def summary_line(r: dict[str, Any]) -> str:
    ctx, ing = r["requests"].get("context", {}), r["requests"].get("ingest", {})
    errors = sum(v["failures"] for v in r["requests"].values() if isinstance(v, dict))
    ok = ctx.get("p99_ms", float("inf")) <= TARGET_P99_MS
    return (
        f"bench-load: {r['users']} clients {r['seconds']} s, {_loop(r)}, context p50 {ctx.get('p50_ms')} ms p99 "
        f"{ctx.get('p99_ms')} ms (target p99 ≤ {TARGET_P99_MS:.0f} ms: {'MET' if ok else 'NOT MET'}), ingest p50 "
        f"{ing.get('p50_ms')} ms p99 {ing.get('p99_ms')} ms, {errors} errors, "
        f"load avg {r['cpu'].get('load_avg_1m_mean')} on {r['machine'].get('logical_cores')} cores"
    )


def _loop(r: dict[str, Any]) -> str:
    think = r.get("think_s") or 0.0
    if not think:
        return "closed loop without think time"
    return f"closed loop with {think:g} s think time on average (uniform {0.5 * think:g}-{1.5 * think:g} s)"


def _stem(think_s: float) -> str:
    """load.json / load.md without think time (the earlier figures), load_think<S>s.* with it."""
    return f"load_think{think_s:g}s" if think_s else "load"


def write_md(r: dict[str, Any]) -> None:
    lines = [
        "# Mixed load (Locust)",
        "",
        "`make bench-load` (`python -m bench.load_bench`): Locust (bench/locustfile.py) headless, "
        f"{r['users']} users for {r['seconds']} s, {_loop(r)}, each user its own graphmem user "
        f"(seeded with 4 turns), requests mixed context : ingest = {r['mix']['context']} : {r['mix']['ingest']}, "
        f"demo catalog; one API process ({r['api_workers']} worker(s)) on loopback; Neo4j "
        f"{r['machine'].get('neo4j_server')}.",
        "",
        "| request | n | failures | p50 ms | p95 ms | p99 ms | max ms | req/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    if not r["requests"]:
        lines.append("| (no requests: see bench/results/locust/locust.log) |  |  |  |  |  |  |  |")
    for name, s in r["requests"].items():
        lines.append(
            f"| {name} | {s['requests']} | {s['failures']} | {s['p50_ms']} | {s['p95_ms']} | {s['p99_ms']} "
            f"| {s['max_ms']} | {s['rps']} |"
        )
    cpu = r["cpu"]
    lines += [
        "",
        f"Machine: {r['machine'].get('cpu_model')}, {r['machine'].get('logical_cores')} cores shared with other "
        f"engineers; 1-minute load average during the run {cpu.get('load_avg_1m_mean')} (max "
        f"{cpu.get('load_avg_1m_max')}). CPU (% of one core, mean): API {cpu.get('api_cpu_pct_mean')}, Neo4j "
        f"{cpu.get('neo4j_cpu_pct_mean')}, Locust {cpu.get('locust_cpu_pct_mean')}. API RSS "
        f"{r['rss_mib']['before']} → {r['rss_mib']['after']} MiB.",
        "",
        "Summary: " + summary_line(r),
        "",
    ]
    (RESULTS / f"{_stem(r.get('think_s') or 0.0)}.md").write_text("\n".join(lines))


def compare_env(args: argparse.Namespace) -> int:
    """A/B of one setting in one sitting: runs alternate A, B, A, B... so the machine's load drifts over
    both sides alike (this machine is shared); each side's figures are the medians of its runs."""
    name, _, values = args.compare_env.partition("=")
    sides = values.split(",")
    if not name or len(sides) != 2:
        raise SystemExit("--compare-env wants NAME=A,B")
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in sides}
    for i in range(args.rounds):
        for value in sides:
            os.environ[name] = value
            log(f"round {i + 1}/{args.rounds}: {name}={value}")
            r = run(args.users, args.seconds, args.workers, args.context_weight, args.ingest_weight)
            runs[value].append(r)
            print(summary_line(r), flush=True)
    os.environ.pop(name, None)

    def med(rs: list[dict[str, Any]], req: str, field: str) -> float | None:
        xs = [r["requests"][req][field] for r in rs if req in r["requests"]]
        return round(statistics.median(xs), 1) if xs else None

    table = {
        v: {
            f"{req}_{field}": med(rs, req, field)
            for req in ("context", "ingest")
            for field in ("p50_ms", "p99_ms", "rps", "failures")
        }
        | {"load_avg": round(statistics.median(r["cpu"]["load_avg_1m_mean"] for r in rs), 1)}
        for v, rs in runs.items()
    }
    out = {"setting": name, "rounds": args.rounds, "users": args.users, "seconds": args.seconds, "medians": table}
    out["runs"] = {v: [{"requests": r["requests"], "cpu": r["cpu"]} for r in rs] for v, rs in runs.items()}
    slug = name.lower().removeprefix("graphmem_")
    (RESULTS / f"load_compare_{slug}.json").write_text(json.dumps(out, indent=2))
    for v, row in table.items():
        print(f"{name}={v}: " + ", ".join(f"{k} {x}" for k, x in row.items()), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="graphmem mixed load with Locust (issue 16, item 6)")
    ap.add_argument("--users", type=int, default=24)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--workers", type=int, default=1, help="API worker processes")
    ap.add_argument("--context-weight", type=int, default=7)
    ap.add_argument("--ingest-weight", type=int, default=3)
    ap.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean seconds each user waits between requests (uniform 0.5-1.5x; default 0: no think time); "
        "writes load_think<S>s.json/.md instead of load.json/.md",
    )
    ap.add_argument(
        "--compare-env",
        metavar="NAME=A,B",
        help="alternate runs with the API's environment variable NAME set to A, then B (--rounds pairs); "
        "writes load_compare_<name>.json with the median of each side",
    )
    ap.add_argument("--rounds", type=int, default=3, help="alternated pairs for --compare-env")
    args = ap.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.compare_env:
        return compare_env(args)
    r = run(args.users, args.seconds, args.workers, args.context_weight, args.ingest_weight, args.think)
    (RESULTS / f"{_stem(args.think)}.json").write_text(json.dumps(r, indent=2))
    write_md(r)
    print(summary_line(r), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
