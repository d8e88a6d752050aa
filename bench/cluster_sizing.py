"""Measurements behind docs/deploy.md's sizing table (issue 16 item 5), until the 1k -> 100k scale benchmark.

    # a Neo4j of its own, so sizes are not mixed with other data (see COMMON.md / docs/deploy.md)
    export NEO4J_URI=bolt://127.0.0.1:7697
    python -m bench.cluster_sizing load --profile loop --users 2000     # agent-loop learners, 5 turns each
    python -m bench.cluster_sizing load --profile scale50 --users 2000  # ~50 concepts each (the scale profile)
    python -m bench.cluster_sizing size --home /work/neo4j-cluster --label after-loop   # after a clean stop
    python -m bench.cluster_sizing rps --profile loop --users 2000 --clients 8 --seconds 20

``load`` writes learners through the store with ground-truth extraction (:mod:`bench.fixtures`, no spaCy),
on the Metacademy catalog (read at run time from ../shared/data). ``size`` reads the store's files on disk
(``data/databases/neo4j``; transaction logs apart): run it after a clean stop of the server, which
checkpoints, so the store files hold everything. ``rps`` starts one API process and measures context
requests/s and latency with N concurrent clients over loopback HTTP: warm (each user's block asked
before: the repeated agent read) and cold (users nobody asked about since the process started).
Everything goes to ``bench/results/cluster_sizing.json`` (one entry per step, appended).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path
from typing import Any

from graphmem.service import GraphMemory
from graphmem.settings import Settings
from graphmem.store import UserRef

from . import fixtures, generator
from .agent_loop_bench import _turn_text
from .common import RESULTS, log, machine, run_clients, start_server, summary_ms

OUT = RESULTS / "cluster_sizing.json"
TENANTS = {"loop": "bench-sizing-loop", "scale50": "bench-sizing-s50"}


def _turns(profile: str, i: int) -> list[generator.GenTurn]:
    if profile == "loop":
        return generator.conversation_user(
            f"learner-{i:06d}", language="en", n_turns=5, seed=1000 + i, key_facts_per_stance=1, pool_size=20
        ).turns
    return generator.scale_turns(50, seed=7000 + i, catalog_size=generator.real_concept_count())


def load(profile: str, n_users: int) -> dict[str, Any]:
    mem = GraphMemory(Settings())
    tenant = TENANTS[profile]
    mem.store.apply_schema()
    fixtures.ensure_catalog(mem, tenant, generator.real_concept_count())
    have = set(mem.store.list_users(tenant, limit=n_users + 10))
    t0, built, turns = time.perf_counter(), 0, 0
    for i in range(n_users):
        uid = f"learner-{i:06d}"
        if uid in have:
            continue
        user_turns = _turns(profile, i)
        fixtures.write_turns(mem, UserRef(tenant, uid), user_turns, prefix=f"{uid}-t")
        built, turns = built + 1, turns + len(user_turns)
        if built % 500 == 0:
            log(f"  {profile}: {built} learners ({time.perf_counter() - t0:.0f} s)")
    sample = [mem.store.counts(UserRef(tenant, f"learner-{i:06d}")) for i in range(0, n_users, max(1, n_users // 50))]
    mem.close()
    keys = ("turns", "interests", "mentions", "stances", "relations")
    return {
        "profile": profile,
        "tenant": tenant,
        "users": n_users,
        "built": built,
        "turns_written": turns,
        "seconds": round(time.perf_counter() - t0, 1),
        "per_user_sample_mean": {k: round(sum(int(s.get(k) or 0) for s in sample) / len(sample), 1) for k in keys},
    }


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def size(home: Path, label: str) -> dict[str, Any]:
    data = home / "data"
    return {
        "label": label,
        "store_bytes": _du(data / "databases" / "neo4j"),
        "tx_log_bytes": _du(data / "transactions" / "neo4j"),
    }


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/<pid>/stat; Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _per_request(latencies: list[float], wall: float, cpu: dict[str, float]) -> dict[str, Any]:
    n = max(1, len(latencies))
    return {
        "requests": len(latencies),
        "rps": round(len(latencies) / wall, 1),
        **summary_ms(latencies),
        # CPU time per request (ms), by process: what a core's worth of each tier serves, load or not.
        "cpu_ms_per_request": {k: round(1000 * v / n, 3) for k, v in cpu.items()},
    }


def rps(profile: str, n_users: int, n_clients: int, seconds: float, neo4j_pid: int) -> dict[str, Any]:
    tenant = TENANTS[profile]
    key = f"sizing-{profile}"
    server = start_server({key: tenant})
    try:
        users = [f"learner-{i:06d}" for i in range(n_users)]
        rnd = random.Random(5)
        cold_users = rnd.sample(users, min(len(users), 400))
        warm_users = [u for u in users if u not in set(cold_users)][:200]

        def cold(ix: int) -> list[float]:
            mine = cold_users[ix::n_clients]
            out = []
            with server.client(key) as http:
                for uid in mine:
                    t0 = time.perf_counter()
                    http.get(f"/v1/users/{uid}/context").raise_for_status()
                    out.append(time.perf_counter() - t0)
            return out

        def cpu() -> dict[str, float]:
            return {"api": _cpu_seconds(server.pid), "neo4j": _cpu_seconds(neo4j_pid)}

        before = cpu()
        cold_lat, cold_wall = run_clients(n_clients, cold)
        cold_cpu = {k: v - before[k] for k, v in cpu().items()}
        with server.client(key) as http:  # every warm user's block once
            for uid in warm_users:
                http.get(f"/v1/users/{uid}/context").raise_for_status()

        def warm(ix: int) -> list[float]:
            r = random.Random(ix)
            out = []
            deadline = time.perf_counter() + seconds
            with server.client(key) as http:
                while time.perf_counter() < deadline:
                    uid = r.choice(warm_users)
                    t0 = time.perf_counter()
                    http.get(f"/v1/users/{uid}/context").raise_for_status()
                    out.append(time.perf_counter() - t0)
            return out

        before = cpu()
        warm_lat, warm_wall = run_clients(n_clients, warm)
        warm_cpu = {k: v - before[k] for k, v in cpu().items()}

        def loop(ix: int) -> list[float]:
            # The agent loop: one new turn (real spaCy extraction), then the block right after.
            r = random.Random(100 + ix)
            out = []
            with server.client(key) as http:
                for n in range(pairs_per_client):
                    uid = r.choice(users)
                    turn = {"turn_id": f"sizing-{ix}-{n}-{r.random():.9f}", "role": "user", "text": _turn_text(r)}
                    t0 = time.perf_counter()
                    http.post(
                        f"/v1/users/{uid}/turns", json={"session_id": "sizing", "turns": [turn]}
                    ).raise_for_status()
                    http.get(f"/v1/users/{uid}/context").raise_for_status()
                    out.append(time.perf_counter() - t0)
            return out

        pairs_per_client = 25
        before = cpu()
        loop_lat, loop_wall = run_clients(n_clients, loop)
        loop_cpu = {k: v - before[k] for k, v in cpu().items()}
        rss = server.rss_mib()
    finally:
        server.stop()
    return {
        "profile": profile,
        "clients": n_clients,
        "cold": _per_request(cold_lat, cold_wall, cold_cpu),
        "warm": _per_request(warm_lat, warm_wall, warm_cpu),
        "loop_pair": _per_request(loop_lat, loop_wall, loop_cpu),
        "api_rss_mib": round(rss, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.cluster_sizing")
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("load")
    p.add_argument("--profile", choices=sorted(TENANTS), default="loop")
    p.add_argument("--users", type=int, default=2000)
    s = sub.add_parser("size")
    s.add_argument("--home", type=Path, required=True)
    s.add_argument("--label", required=True)
    r = sub.add_parser("rps")
    r.add_argument("--profile", choices=sorted(TENANTS), default="loop")
    r.add_argument("--users", type=int, default=2000)
    r.add_argument("--clients", type=int, default=8)
    r.add_argument("--seconds", type=float, default=20.0)
    r.add_argument("--neo4j-pid", type=int, required=True, help="the Neo4j server's pid (its CPU time is read)")
    args = parser.parse_args(argv)
    if args.step == "load":
        result = load(args.profile, args.users)
    elif args.step == "size":
        result = size(args.home, args.label)
    else:
        result = rps(args.profile, args.users, args.clients, args.seconds, args.neo4j_pid)
    entries = json.loads(OUT.read_text()) if OUT.exists() else []
    entries.append({"step": args.step, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **result})
    if args.step != "size":
        entries[-1]["machine"] = machine()
    OUT.write_text(json.dumps(entries, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
