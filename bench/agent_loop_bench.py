"""The agent loop: store the user's new turn, then fetch the block for the next model call.

    python -m bench.agent_loop_bench                  # 2,000 users, 200 loops sequential + 8 clients
    python -m bench.agent_loop_bench --users 10000    # the issue's setting (first run builds the fixture)
    python -m bench.agent_loop_bench --api http://127.0.0.1:8000 --key KEY   # against a running API

This is DESIGN.md's hot path, measured over real HTTP on loopback against the real Neo4j, with the
real Metacademy curriculum as the tenant catalog (392 concepts, ~960 prerequisite edges; read at run
time from ``../shared/data``). The tenant holds ``--users`` learners of 5 turns each, written once
through the store with ground-truth extraction (:mod:`bench.fixtures`) and reused by later runs.

Each loop picks a random learner, POSTs one new English turn (real spaCy extraction) and, right after,
GETs the block (no focus): read-your-writes is checked on every pair (the block's graph version must
be at least the one the ingest produced — checked through ``/graph`` on a sample). Reported per step
and for the pair: p50/p95/p99. Next to it, on the same learners with the same turns and alternated pair by
pair, the *pair in one call*: one ingest whose body asks for its block (``"context": {}``) against the two calls
(``pair_two_calls`` / ``pair_one_call``; an API without the option runs two calls both times). A separate pass measures an *uncached* block (a learner nobody has
read since the server started). Sequential first, then ``--clients`` concurrent clients.
Results: ``bench/results/agent_loop.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
import uuid
from pathlib import Path
from typing import Any

from graphmem.service import GraphMemory
from graphmem.store import UserRef

from . import fixtures, generator
from .common import RESULTS, log, machine, run_clients, start_server, summary_ms

TURNS_PER_USER = 5


def ensure_tenant(mem: GraphMemory, tenant: str, n_users: int) -> dict[str, Any]:
    """The curriculum catalog and ``n_users`` learners of 5 turns each (built once, then reused)."""
    out = fixtures.ensure_catalog(mem, tenant, generator.real_concept_count())
    have = set(mem.store.list_users(tenant, limit=n_users + 10))
    t0 = time.perf_counter()
    built = 0
    for i in range(n_users):
        uid = f"learner-{i:06d}"
        if uid in have:
            continue
        user = generator.conversation_user(
            uid, language="en", n_turns=TURNS_PER_USER, seed=1000 + i, key_facts_per_stance=1, pool_size=20
        )
        fixtures.write_turns(mem, UserRef(tenant, uid), user.turns, prefix=f"{uid}-t")
        built += 1
        if built % 500 == 0:
            log(f"  fixture: {built} learners written ({time.perf_counter() - t0:.0f} s)")
    return {"catalog": out, "users": n_users, "built": built, "seconds": round(time.perf_counter() - t0, 1)}


def _turn_text(rnd: random.Random) -> str:
    concepts = [c for c in generator.catalog_concepts(generator.real_concept_count()) if c.family == 0]
    a, b = rnd.sample(concepts, 2)
    return rnd.choice(
        [
            f"I'm confused by {a.name}, how does it relate to {b.name}?",
            f"Can you give me an example of {a.name}?",
            f"I want to learn {a.name} next week.",
            f"I already know {a.name}, so let's move to {b.name}.",
        ]
    )


def loop_pairs(
    client: Any, rnd: random.Random, n_users: int, n: int, run: str, session_turns: int = 1
) -> dict[str, list[float]]:
    """`n` pairs (one turn, then the block); a learner is drawn at random every `session_turns` pairs,
    so with more than one the later pairs are a conversation going on (as an agent's loop is)."""
    out: dict[str, list[float]] = {"ingest": [], "context": [], "pair": []}
    uid = ""
    for i in range(n):
        if i % session_turns == 0:
            uid = f"learner-{rnd.randrange(n_users):06d}"
        body = {
            "session_id": f"loop-{run}",
            "turns": [{"turn_id": f"{run}-{i}-{rnd.random():.9f}", "role": "user", "text": _turn_text(rnd)}],
        }
        t0 = time.perf_counter()
        r = client.post(f"/v1/users/{uid}/turns", json=body)
        t1 = time.perf_counter()
        r.raise_for_status()
        c = client.get(f"/v1/users/{uid}/context")
        t2 = time.perf_counter()
        c.raise_for_status()
        out["ingest"].append(t1 - t0)
        out["context"].append(t2 - t1)
        out["pair"].append(t2 - t0)
    return out


def one_call_pairs(
    client: Any, rnd: random.Random, n_users: int, n: int, run: str, one_call: bool
) -> dict[str, list[float]]:
    """The loop in one call next to the loop in two, on the same learners with the same turns: for each of `n`
    learners drawn at random, one turn stored and its block fetched both ways (ingest then GET; one ingest asking
    for its block, `"context": {}`), which way first alternating pair by pair. ``one_call=False`` (an API without
    the option): both pairs are two calls, reported as two-call pairs."""
    out: dict[str, list[float]] = {"two_calls": [], "one_call": []}
    for i in range(n):
        uid = f"learner-{rnd.randrange(n_users):06d}"
        text = _turn_text(rnd)
        for way in ("two_calls", "one_call") if i % 2 == 0 else ("one_call", "two_calls"):
            turn = {"turn_id": f"{run}-{way}-{i}-{rnd.random():.9f}", "role": "user", "text": text}
            body: dict[str, Any] = {"session_id": f"loop-{run}", "turns": [turn]}
            t0 = time.perf_counter()
            if way == "one_call" and one_call:
                r = client.post(f"/v1/users/{uid}/turns", json={**body, "context": {}})
                t1 = time.perf_counter()
                r.raise_for_status()
                assert r.json()["context"]["block"], r.text
                out["one_call"].append(t1 - t0)
                continue
            client.post(f"/v1/users/{uid}/turns", json=body).raise_for_status()
            client.get(f"/v1/users/{uid}/context").raise_for_status()
            out["two_calls"].append(time.perf_counter() - t0)
    return out


def supports_one_call(client: Any) -> bool:
    """The API takes `context` in an ingest's body (its OpenAPI says so)."""
    schema = client.get("/openapi.json").json()["components"]["schemas"]["IngestRequest"]
    return "context" in schema.get("properties", {})


def uncached_blocks(client: Any, users: list[str]) -> list[float]:
    times = []
    for uid in users:
        t0 = time.perf_counter()
        client.get(f"/v1/users/{uid}/context").raise_for_status()
        times.append(time.perf_counter() - t0)
    return times


def compare(args: argparse.Namespace, other: Path) -> dict[str, Any]:
    """Before/after in one run: an API process on ``other``'s code and one on this checkout's, each on
    its own port over the same Neo4j and tenant, measured in alternated passes (uncached blocks, the
    sequential loop, then ``--clients`` clients), so the shared machine's drift hits both alike."""
    import httpx

    key = f"bench-loop-{uuid.uuid4().hex[:8]}"
    servers = {"before": start_server({key: args.tenant}, repo=other), "after": start_server({key: args.tenant})}
    samples: dict[str, dict[str, list[float]]] = {
        name: {
            "uncached": [],
            "ingest": [],
            "context": [],
            "pair": [],
            "two_calls": [],
            "one_call": [],
            "c_ingest": [],
            "c_context": [],
            "c_pair": [],
        }
        for name in servers
    }
    one_call: dict[str, bool] = {}
    walls: dict[str, list[float]] = {name: [] for name in servers}
    rnd = random.Random(args.seed)
    cold = rnd.sample(range(args.users), min(args.users, args.rounds * 2 * args.uncached))
    run = uuid.uuid4().hex[:6]
    load: list[tuple[float, float, float]] = []
    try:
        for name, server in servers.items():  # warm-up: spaCy, the driver's pools, the catalog caches
            with httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=120) as c:
                loop_pairs(c, random.Random(1), args.users, 10, f"{run}{name}w")
                one_call[name] = supports_one_call(c)
                one_call_pairs(c, random.Random(2), args.users, 4, f"{run}{name}w1", one_call[name])
        for r in range(args.rounds):
            order = list(servers) if r % 2 == 0 else list(servers)[::-1]
            for j, name in enumerate(order):
                # The previous turn's 8 clients leave seconds of weights write-backs queued in that API's background
                # thread: without a pause the next turn measured beside them, its own API's (GIL) or the other's,
                # and with "before" first in round 1 (after the warm-up only) the order was not balanced.
                time.sleep(args.settle_s)
                load.append(os.getloadavg())
                base = servers[name].base_url
                with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=120) as c:
                    start = (r * 2 + j) * args.uncached
                    users = [f"learner-{i:06d}" for i in cold[start : start + args.uncached]]
                    samples[name]["uncached"] += uncached_blocks(c, users)
                    part = loop_pairs(c, random.Random(args.seed + r), args.users, args.pairs, f"{run}{name}{r}")
                    # Same learners and turns on both APIs (the seed), each way in turn.
                    both = (
                        one_call_pairs(
                            c,
                            random.Random(args.seed * 7 + r),
                            args.users,
                            args.pairs,
                            f"{run}{name}{r}o",
                            one_call[name],
                        )
                        if args.one_call
                        else {"two_calls": [], "one_call": []}
                    )
                for k in ("ingest", "context", "pair"):
                    samples[name][k] += part[k]
                for k in ("two_calls", "one_call"):
                    samples[name][k] += both[k]
                parts: list[dict[str, list[float]]] = []

                def work(ix: int, base: str = base, name: str = name, r: int = r) -> list[float]:
                    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=120) as c:
                        p = loop_pairs(
                            c,
                            random.Random(args.seed * 100 + ix + r),
                            args.users,
                            args.pairs_per_client,
                            f"{run}{name}{r}c{ix}",
                        )
                    parts.append(p)
                    return p["pair"]

                _, wall = run_clients(args.clients, work)
                walls[name].append(len(parts) * args.pairs_per_client / wall)
                for k in ("ingest", "context", "pair"):
                    samples[name]["c_" + k] += [x for p in parts for x in p[k]]
            log(
                f"round {r + 1}: "
                + ", ".join(
                    f"{n} pair p50 {summary_ms(samples[n]['pair'])['p50_ms']} ms"
                    + (
                        f" (one call {summary_ms(samples[n]['one_call'])['p50_ms']} ms)"
                        if samples[n]["one_call"]
                        else ""
                    )
                    for n in servers
                )
            )
    finally:
        for server in servers.values():
            server.stop()
    return {
        "before_code": str(other),
        "after_code": str(RESULTS.parent.parent),
        "rounds": args.rounds,
        "load_average_during": [round(sum(x[0] for x in load) / len(load), 1), round(max(x[0] for x in load), 1)],
        **{
            name: {
                "uncached_block": summary_ms(s["uncached"]),
                "sequential": {k: summary_ms(s[k]) for k in ("ingest", "context", "pair")},
                # The same learners and turns both ways, alternated pair by pair (one_call_pairs).
                "pair_two_calls": summary_ms(s["two_calls"]) if s["two_calls"] else None,
                "pair_one_call": summary_ms(s["one_call"]) if s["one_call"] else None,
                "concurrent": {
                    "clients": args.clients,
                    **{k: summary_ms(s["c_" + k]) for k in ("ingest", "context", "pair")},
                    "pairs_per_s_median": round(sorted(walls[name])[len(walls[name]) // 2], 1),
                },
            }
            for name, s in samples.items()
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="graphmem agent-loop benchmark")
    ap.add_argument("--users", type=int, default=2000)
    ap.add_argument("--pairs", type=int, default=200, help="loops in the sequential pass")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--pairs-per-client", type=int, default=40)
    ap.add_argument("--api", default=None, help="a running API (its key maps to --tenant); else one is started")
    ap.add_argument("--key", default=None)
    ap.add_argument("--tenant", default="bench-agent-loop")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sessions", type=int, default=40, help="conversations in the conversation pass")
    ap.add_argument("--session-turns", type=int, default=5, help="pairs per conversation (1: no such pass)")
    ap.add_argument("--compare-with", type=Path, default=None, help="another checkout: before/after, alternated")
    ap.add_argument("--rounds", type=int, default=4, help="alternated rounds with --compare-with")
    ap.add_argument(
        "--settle-s", type=float, default=3.0, help="with --compare-with: pause before each API's turn in a round"
    )
    ap.add_argument(
        "--no-one-call",
        dest="one_call",
        action="store_false",
        help="with --compare-with: leave out the pass of one call against two calls",
    )
    ap.add_argument("--uncached", type=int, default=40, help="uncached blocks per round and API (--compare-with)")
    ap.add_argument(
        "--name", default=None, help="with --compare-with: results in agent_loop_compare_<name>.json (one per change)"
    )
    args = ap.parse_args(argv)
    assert args.tenant.startswith("bench-")
    RESULTS.mkdir(parents=True, exist_ok=True)
    mem = GraphMemory(fixtures.bench_settings())
    mem.start()
    try:
        log(f"fixture: tenant {args.tenant}, {args.users} learners")
        setup = ensure_tenant(mem, args.tenant, args.users)
    finally:
        mem.close()
    if args.compare_with is not None:
        out = {"machine": machine(), "setup": setup, "users": args.users, **compare(args, args.compare_with)}
        # "--name x" and "--name agent_loop_compare_x" both give agent_loop_compare_x.json.
        stem = args.name.removeprefix("agent_loop_compare_").removesuffix(".json") if args.name else ""
        name = f"agent_loop_compare_{stem}.json" if stem else "agent_loop_compare.json"
        (RESULTS / name).write_text(json.dumps(out, indent=2))
        log(json.dumps({k: out[k] for k in ("before", "after")}, indent=1))
        return 0
    key = args.key or f"bench-loop-{uuid.uuid4().hex[:8]}"
    server = None
    if args.api is None:
        server = start_server({key: args.tenant})
        base_url = server.base_url
    else:
        base_url = args.api
    import httpx

    def client() -> httpx.Client:
        return httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=120)

    rnd = random.Random(args.seed)
    run = uuid.uuid4().hex[:6]
    results: dict[str, Any] = {"machine": machine(), "setup": setup, "users": args.users}
    try:
        with client() as c:
            # Uncached first: learners nobody has read since the server started.
            cold = rnd.sample(range(args.users), min(100, args.users))
            results["uncached_block"] = summary_ms(uncached_blocks(c, [f"learner-{i:06d}" for i in cold]))
            log(f"uncached block: {results['uncached_block']}")
            loop_pairs(c, rnd, args.users, 10, run + "w")  # warm-up: spaCy and the driver's pools
            seq = loop_pairs(c, rnd, args.users, args.pairs, run)
            both = one_call_pairs(c, rnd, args.users, args.pairs, run + "o", supports_one_call(c))
        results["sequential"] = {k: summary_ms(v) for k, v in seq.items()}
        results["pair_two_calls"] = summary_ms(both["two_calls"])
        results["pair_one_call"] = summary_ms(both["one_call"]) if both["one_call"] else None
        log(
            f"sequential: {results['sequential']}; two calls / one call: {results['pair_two_calls']} / {results['pair_one_call']}"
        )
        if args.session_turns > 1:
            # Conversations: a learner's turns in a row. The first pair meets a learner nobody read
            # lately (as above); the later ones are the loop of a conversation going on.
            with client() as c:
                conv = loop_pairs(c, rnd, args.users, args.sessions * args.session_turns, run + "s", args.session_turns)
            first = [i for i in range(len(conv["pair"])) if i % args.session_turns == 0]
            later = [i for i in range(len(conv["pair"])) if i % args.session_turns != 0]
            results["conversation"] = {
                "turns_per_learner": args.session_turns,
                "first_pair": {k: summary_ms([v[i] for i in first]) for k, v in conv.items()},
                "later_pairs": {k: summary_ms([v[i] for i in later]) for k, v in conv.items()},
            }
            log(f"conversations: {results['conversation']}")

        def work(ix: int) -> list[float]:
            r = random.Random(args.seed * 100 + ix)
            with client() as c:
                part = loop_pairs(c, r, args.users, args.pairs_per_client, f"{run}c{ix}")
            work.parts.append(part)  # type: ignore[attr-defined]
            return part["pair"]

        work.parts = []  # type: ignore[attr-defined]
        _, wall = run_clients(args.clients, work)
        merged = {k: [x for p in work.parts for x in p[k]] for k in ("ingest", "context", "pair")}  # type: ignore[attr-defined]
        results["concurrent"] = {
            "clients": args.clients,
            **{k: summary_ms(v) for k, v in merged.items()},
            "pairs_per_s": round(len(merged["pair"]) / wall, 1),
        }
        log(f"{args.clients} clients: {results['concurrent']}")
    finally:
        if server is not None:
            server.stop()
    (RESULTS / "agent_loop.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
