"""Cost against tenant size (issue 16, item 4): one tenant grown to 1k, 10k, 100k users, measured at each size.

    python -m bench.scale_bench                          # 1,000 → 10,000 → 100,000 users (make bench-scale)
    python -m bench.scale_bench --sizes 1000,10000       # stop earlier
    python -m bench.scale_bench --report-only            # re-write SCALE.md / scale.png from scale.json

The tenant (``bench-scale``) has the real Metacademy curriculum as its catalog (392 concepts, read at run
time from the shared data) and users of ≈ 50 concepts each drawn from it (:func:`bench.generator.scale_turns`:
≈ 22 turns, 80 mentions, 6 stances, 6 own relations per user), so every concept node is shared by
thousands of users, as in a real tenant. Users are written by :meth:`Neo4jStore.bulk_load_users`
(cypher/bulk.cypher, UNWIND batches) with their ground-truth extraction; the load prints progress and
resumes: a tenant already holding N users is grown from N, never rebuilt.

At each size, against a fresh API process (bench/common.py) on loopback:
  * context (GET /v1/users/{id}/context, no focus) for random users nobody has read since the process
    started (uncached), then the same users again (cached);
  * ingest of one real English turn per call (spaCy extraction): turns/s with 1 and 8 clients;
  * compaction of one user (POST /v1/users/{id}/compact);
  * the API process's RSS, Neo4j's store size on disk;
  * PROFILE of the statements of the read and ingest paths on a random user: db hits per statement.

Results: bench/results/scale.json, scale.png, SCALE.md. Use a Neo4j server of its own (the Makefile
target starts one in /work/neo4j-scale-style folders via GRAPHMEM_NEO4J_HOME and ports).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import time
import uuid
from datetime import timedelta
from pathlib import Path
from statistics import median
from typing import Any

import httpx

from graphmem.bulk_rows import BulkUser
from graphmem.models import (
    ConceptMention,
    ConceptType,
    ExtractorName,
    RelationMention,
    StanceMention,
    TurnExtraction,
)
from graphmem.service import GraphMemory
from graphmem.settings import Settings
from graphmem.store import StoredTurn, UserRef

from . import fixtures, generator, scale_import
from .agent_loop_bench import _turn_text
from .common import RESULTS, log, machine, run_clients, start_server, summary_ms

TENANT = "bench-scale"
CONCEPTS_PER_USER = 50
BATCH = 250
SAMPLE = 200  # users read per size (uncached, then cached)
NOTES_MARKER = "<!-- findings: kept across runs -->"


def user_id(i: int) -> str:
    return f"scale-{i:07d}"


def _extraction(t: generator.GenTurn) -> TurnExtraction:
    """GenTurn.extraction() without pydantic validation (16 ms a user validated, most of the load time)."""
    spans = {c.key: (s, e) for c, s, e in t.mentions}
    mc = ConceptMention.model_construct
    return TurnExtraction.model_construct(
        language=t.language,
        concepts=[
            mc(
                key=c.key,
                name=c.name,
                type=ConceptType.topic,
                language=t.language,
                start=s,
                end=e,
                surface=t.text[s:e],
                extractor=ExtractorName.catalog,
                confidence=0.95,
                in_catalog=True,
            )
            for c, s, e in t.mentions
        ],
        stances=[
            StanceMention.model_construct(
                key=c.key,
                name=c.name,
                stance=st,
                start=spans[c.key][0],
                end=spans[c.key][1],
                cue="template",
                confidence=0.9,
            )
            for c, st in t.stances
        ],
        relations=[
            RelationMention.model_construct(
                source_key=a.key,
                source_name=a.name,
                type=rt,
                target_key=b.key,
                target_name=b.name,
                start=spans[a.key][0],
                end=spans[b.key][1],
                extractor=ExtractorName.pattern,
                confidence=0.8,
                cue="template",
            )
            for a, rt, b in t.relations
        ],
    )


def bulk_user(i: int, catalog_size: int) -> BulkUser:
    uid = user_id(i)
    turns = generator.scale_turns(CONCEPTS_PER_USER, seed=100_000 + i, catalog_size=catalog_size)
    # Users start on different days, so "now" (their latest turn) differs across the tenant.
    shift = timedelta(hours=i % 2000)
    return BulkUser(
        uid,
        "s00000",
        [
            StoredTurn(f"{uid}-t{j}", t.role, t.text, t.ts + shift, t.language, len(t.text) // 4, _extraction(t))
            for j, t in enumerate(turns)
        ],
    )


def ensure_users(mem: GraphMemory, tenant: str, target: int, catalog_size: int) -> dict[str, Any]:
    """Grows the tenant to ``target`` users (scale-0000000 …), resuming from what is stored."""
    store = mem.store
    have = store.tenant_user_count(tenant)
    if have >= target:
        log(f"tenant {tenant} already holds {have} users (≥ {target}): reused")
        return {"target": target, "had": have, "written": 0, "seconds": 0.0}
    # Batches are all or nothing and written in order, so users below the last full batch exist.
    start = (have // BATCH) * BATCH
    t0 = time.perf_counter()
    written = 0
    totals = {"turns": 0, "mentions": 0, "interests": 0, "relations": 0}
    for lo in range(start, target, BATCH):
        ids = range(lo, min(target, lo + BATCH))
        existing = store.bulk_existing_users(tenant, [user_id(i) for i in ids])
        users = [bulk_user(i, catalog_size) for i in ids if user_id(i) not in existing]
        if users:
            out = store.bulk_load_users(tenant, users)
            written += out["users"]
            for k in totals:
                totals[k] += out[k]
        done = lo + len(ids)
        el = time.perf_counter() - t0
        rate = written / el if el else 0.0
        if (done // BATCH) % 8 == 0 or done >= target:
            eta = (target - done) / rate if rate else float("nan")
            log(f"  load: {done}/{target} users ({rate:.0f} users/s, {el:.0f} s, ETA {eta:.0f} s)")
    return {
        "target": target,
        "had": have,
        "written": written,
        **totals,
        "seconds": round(time.perf_counter() - t0, 1),
    }


# -- PROFILE: db hits per statement on one user --------------------------------------------------------


def profile_user(mem: GraphMemory, tenant: str, uid: str) -> dict[str, Any]:
    store = mem.store
    user = UserRef(tenant, uid)
    p = user.params()
    keys = sorted(n.key for n in store.load_user_graph(user).concepts.values())
    interest_keys = [r["key"] for r in store.read_statement("user_interests", **p)]
    names = {k: k for k in interest_keys[:5]}
    concept = store.read_statement("concepts_by_keys", tenant=tenant, keys=interest_keys[:1])[0]
    out: dict[str, Any] = {"user": uid, "interests": len(interest_keys)}
    plans: list[tuple[str, dict[str, Any]]] = [
        ("user_version", p),
        ("user_interests", p),
        ("attempts_user_mastery", p),
        ("catalog_version", {"tenant": tenant}),
        ("edges_by_owner", {**p, "edge_owner": user.owner}),
        ("edges_by_owner (catalog)", {**p, "edge_owner": "catalog"}),
        ("user_concepts_by_key", {**p, "keys": keys}),
        ("user_history_size", p),
        ("tenant_user_count", {"tenant": tenant}),
        ("concept_user_counts", {"tenant": tenant, "keys": keys}),
        ("concepts_search", {**p, "query": concept["name"].split()[0].lower(), "limit": 5}),
        ("ingest_lock_user", {**p, "turn_ids": [f"{uid}-t0", f"{uid}-t1"]}),
        ("ingest_existing_turns", {**p, "turn_ids": [f"{uid}-t0", f"{uid}-t1"]}),
        (
            "ingest_write_all",
            {
                **p,
                "session_id": "profile",
                "turns": [
                    {
                        "turn_id": f"{uid}-profile",
                        "role": "user",
                        "text": "x",
                        "ts": "2026-01-01T00:00:00+00:00",
                        "language": "en",
                        "tokens": 1,
                    }
                ],
                "mentions": [],
                "stances": [],
                "keys": interest_keys[:5],
                "names": names,
            },
        ),
        ("user_list", {"tenant": tenant, "limit": 1000}),
        (
            "user_write_weights",
            {**p, "rows": [{"key": k, "initial": 0.1, "propagated": 0.1, "final": 0.2, "tier": None} for k in keys]},
        ),
        ("user_counts", {**p, "owner": user.owner}),
        ("user_erase_rest", {**p, "owner": user.owner}),
    ]
    for label, params in plans:
        name = label.split(" ")[0]
        try:
            out[label] = store.profile_statement(name, **params)
        except Exception as exc:  # a statement whose parameters changed on another branch: say so, go on
            out[label] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    return out


# -- HTTP measurements -------------------------------------------------------------------------------


def _ingest(client: httpx.Client, rnd: random.Random, n_users: int, n: int, run: str) -> list[float]:
    times = []
    for i in range(n):
        uid = user_id(rnd.randrange(n_users))
        body = {
            "session_id": f"scale-{run}",
            "turns": [{"turn_id": f"{run}-{i}-{rnd.random():.9f}", "role": "user", "text": _turn_text(rnd)}],
        }
        t0 = time.perf_counter()
        client.post(f"/v1/users/{uid}/turns", json=body).raise_for_status()
        times.append(time.perf_counter() - t0)
    return times


def _neo4j_store_bytes(settings: Settings) -> dict[str, int]:
    data = Path(settings.neo4j_home) / "data"

    def du(path: Path) -> int:
        if not path.exists():
            return 0
        out = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=False).stdout
        return int(out.split()[0]) if out else 0

    return {
        "store_bytes": du(data / "databases" / settings.neo4j_database),
        "tx_log_bytes": du(data / "transactions" / settings.neo4j_database),
    }


def measure(mem: GraphMemory, tenant: str, n_users: int, args: argparse.Namespace) -> dict[str, Any]:
    rnd = random.Random(args.seed + n_users)
    res: dict[str, Any] = {"users": n_users, "load_avg_before": [round(x, 2) for x in os.getloadavg()]}
    res["tenant_size"] = mem.store.bulk_tenant_size(tenant)
    res["disk"] = _neo4j_store_bytes(mem.settings)
    log(f"[{n_users}] tenant {res['tenant_size']}, disk {res['disk']}")
    res["profile"] = profile_user(mem, tenant, user_id(rnd.randrange(n_users)))
    key = f"bench-scale-{uuid.uuid4().hex[:8]}"
    server = start_server({key: tenant})
    run = uuid.uuid4().hex[:6]
    try:
        res["rss_mib_start"] = round(server.rss_mib(), 1)
        with server.client(key) as c:
            # Warm-up on users outside the sample: spaCy, the driver's pool, the catalog cache.
            for i in range(5):
                c.get(f"/v1/users/{user_id(i)}/context").raise_for_status()
            _ingest(c, rnd, n_users, 5, run + "w")
            sample = rnd.sample(range(10, n_users), min(SAMPLE, n_users - 10))
            for label in ("uncached", "cached"):
                times = []
                for i in sample:
                    t0 = time.perf_counter()
                    c.get(f"/v1/users/{user_id(i)}/context").raise_for_status()
                    times.append(time.perf_counter() - t0)
                res[f"context_{label}"] = summary_ms(times)
                log(f"[{n_users}] context {label}: {res[f'context_{label}']}")
            one = _ingest(c, rnd, n_users, args.ingest_turns, run)
            res["ingest_1"] = {**summary_ms(one), "turns_per_s": round(len(one) / sum(one), 1)}
            log(f"[{n_users}] ingest 1 client: {res['ingest_1']}")

        def work(ix: int) -> list[float]:
            r = random.Random(args.seed * 1000 + n_users + ix)
            with server.client(key) as cc:
                return _ingest(cc, r, n_users, args.ingest_turns // 4, f"{run}c{ix}")

        times, wall = run_clients(8, work)
        res["ingest_8"] = {**summary_ms(times), "turns_per_s": round(len(times) / wall, 1)}
        log(f"[{n_users}] ingest 8 clients: {res['ingest_8']}")
        comp = []
        with server.client(key) as c:
            for i in rnd.sample(range(10, n_users), 5):
                t0 = time.perf_counter()
                c.post(f"/v1/users/{user_id(i)}/compact").raise_for_status()
                comp.append(time.perf_counter() - t0)
        res["compaction"] = {**summary_ms(comp), "median_ms": round(median(comp) * 1000, 1)}
        log(f"[{n_users}] compaction: {res['compaction']}")
        res["rss_mib_end"] = round(server.rss_mib(), 1)
    finally:
        server.stop()
    res["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    return res


def alternated(mem: GraphMemory, small: str, big: str, args: argparse.Namespace) -> dict[str, Any]:
    """Context and ingest alternated request by request between a small and a big tenant of the same
    database, through one API process: the machine's load (shared, noisy) falls on both alike, so the
    ratio isolates what grows with the tenant."""
    rnd = random.Random(args.seed)
    sizes = {t: mem.store.tenant_user_count(t) for t in (small, big)}
    keys = {t: f"bench-scale-alt-{i}-{uuid.uuid4().hex[:6]}" for i, t in enumerate((small, big))}
    server = start_server({k: t for t, k in keys.items()})
    run = uuid.uuid4().hex[:6]
    out: dict[str, Any] = {"tenants": sizes, "load_avg_before": [round(x, 2) for x in os.getloadavg()]}
    try:
        clients = {t: server.client(k) for t, k in keys.items()}
        for t, c in clients.items():
            for i in range(3):
                c.get(f"/v1/users/{user_id(i)}/context").raise_for_status()
            _ingest(c, rnd, sizes[t], 3, run + "w")
        samples = {t: rnd.sample(range(10, sizes[t]), min(150, sizes[t] - 10)) for t in clients}
        times: dict[str, dict[str, list[float]]] = {t: {"uncached": [], "cached": [], "ingest": []} for t in clients}
        for label in ("uncached", "cached"):
            for j in range(min(len(v) for v in samples.values())):
                for t, c in clients.items():
                    t0 = time.perf_counter()
                    c.get(f"/v1/users/{user_id(samples[t][j])}/context").raise_for_status()
                    times[t][label].append(time.perf_counter() - t0)
        for _ in range(args.ingest_turns):
            for t, c in clients.items():
                times[t]["ingest"] += _ingest(c, rnd, sizes[t], 1, run)
        for c in clients.values():
            c.close()
        for t in clients:
            out[t] = {k: summary_ms(v) for k, v in times[t].items()}
        out["ratio_p50_big_over_small"] = {
            k: round(out[big][k]["p50_ms"] / out[small][k]["p50_ms"], 2) for k in ("uncached", "cached", "ingest")
        }
        out["rss_mib_end"] = round(server.rss_mib(), 1)
    finally:
        server.stop()
    out["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


# -- report ----------------------------------------------------------------------------------------


def _mb(b: int) -> float:
    return round(b / 2**20, 1)


def write_report(results: dict[str, Any]) -> None:
    sizes = results["sizes"]
    if not sizes:
        return
    rows = sorted(sizes.values(), key=lambda r: r["users"])
    lo, hi = rows[0], rows[-1]

    def ratio(key: str, stat: str = "p50_ms") -> str:
        a, b = lo[key][stat], hi[key][stat]
        return f"{b / a:.2f}×" if a else "n/a"

    lines = [
        "# Scale benchmark: cost against tenant size",
        "",
        "`make bench-scale` (`python -m bench.scale_bench`). One tenant, the Metacademy catalog (392 concepts),",
        f"users of ≈ {CONCEPTS_PER_USER} concepts each drawn from it (dense concept nodes); real API process on",
        "loopback, its own Neo4j 5.26 (heap 2g, page cache as set by the run). Machine: "
        f"{results['machine'].get('cpu_model')}, {results['machine'].get('logical_cores')} cores shared with other "
        "engineers — read the load averages below before trusting any figure.",
        "",
        "| users | interests | store MiB | tx logs MiB | context uncached p50 / p99 ms | cached p50 / p99 ms "
        "| ingest 1 client turns/s (p50 ms) | ingest 8 clients turns/s | compaction ms | API RSS MiB | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['users']:,} | {r['tenant_size']['interests']:,} | {_mb(r['disk']['store_bytes'])} "
            f"| {_mb(r['disk']['tx_log_bytes'])} "
            f"| {r['context_uncached']['p50_ms']} / {r['context_uncached']['p99_ms']} "
            f"| {r['context_cached']['p50_ms']} / {r['context_cached']['p99_ms']} "
            f"| {r['ingest_1']['turns_per_s']} ({r['ingest_1']['p50_ms']}) | {r['ingest_8']['turns_per_s']} "
            f"| {r['compaction']['median_ms']} | {r['rss_mib_end']} | {r['load_avg_before'][0]} → "
            f"{r['load_avg_after'][0]} |"
        )
    lines += [
        "",
        f"## Flatness ({lo['users']:,} → {hi['users']:,} users; goal: p50 within 1.5×)",
        "",
        f"- context, uncached: p50 ×{ratio('context_uncached')}, p99 ×{ratio('context_uncached', 'p99_ms')}",
        f"- context, cached: p50 ×{ratio('context_cached')}",
        f"- ingest of one turn, 1 client: p50 ×{ratio('ingest_1')}",
        f"- ingest, 8 clients: p50 ×{ratio('ingest_8')}",
        f"- compaction of one user: p50 ×{ratio('compaction')}",
        "",
        "## db hits per statement (PROFILE on one random user, rolled back)",
        "",
        "| statement | " + " | ".join(f"{r['users']:,} users" for r in rows) + " | top operators at the largest size |",
        "|---|" + "---|" * len(rows) + "---|",
    ]
    names = [k for k, v in hi["profile"].items() if isinstance(v, dict)]
    for name in names:
        cells = []
        for r in rows:
            v = r["profile"].get(name, {})
            cells.append(str(v.get("db_hits", v.get("error", "—"))))
        top = ", ".join(hi["profile"][name].get("top_operators", []))
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {top} |")
    alt = results.get("alternated")
    if alt:
        (small, ns), (big, nb) = list(alt["tenants"].items())
        lines += [
            "",
            f"## Alternated in one run: {small} ({ns:,} users) vs {big} ({nb:,} users), same database and API process",
            "",
            "Requests alternate between the two tenants, so the machine's load falls on both alike.",
            "",
            "| | small p50 / p99 ms | big p50 / p99 ms | big ÷ small at p50 |",
            "|---|---|---|---|",
        ]
        for k in ("uncached", "cached", "ingest"):
            lines.append(
                f"| {'context ' + k if k != 'ingest' else 'ingest (1 turn)'} | {alt[small][k]['p50_ms']} / "
                f"{alt[small][k]['p99_ms']} | {alt[big][k]['p50_ms']} / {alt[big][k]['p99_ms']} "
                f"| {alt['ratio_p50_big_over_small'][k]}× |"
            )
        lines.append(f"\nLoad average {alt['load_avg_before'][0]} → {alt['load_avg_after'][0]}.")
    extra = results.get("profiles", {})
    if extra:
        labels = list(extra)
        lines += [
            "",
            "### Re-profiled with the statements as fixed on this branch (`--profile-only TENANT`)",
            "",
            "| statement | " + " | ".join(labels) + " |",
            "|---|" + "---|" * len(labels),
        ]
        for name in [k for k, v in extra[labels[-1]].items() if isinstance(v, dict)]:
            cells = [str(extra[lb].get(name, {}).get("db_hits", "—")) for lb in labels]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    # Hand-written findings below the marker survive a re-run.
    md = RESULTS / "SCALE.md"
    kept = md.read_text().split(NOTES_MARKER, 1)[1] if md.exists() and NOTES_MARKER in md.read_text() else "\n"
    md.write_text("\n".join(lines) + "\n\n" + NOTES_MARKER + kept)
    _plot(rows)


def _plot(rows: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["users"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for key, stat, label in [
        ("context_uncached", "p50_ms", "context uncached p50"),
        ("context_uncached", "p99_ms", "context uncached p99"),
        ("context_cached", "p50_ms", "context cached p50"),
        ("ingest_1", "p50_ms", "ingest 1 turn p50 (1 client)"),
        ("ingest_8", "p50_ms", "ingest 1 turn p50 (8 clients)"),
        ("compaction", "p50_ms", "compaction of one user p50"),
    ]:
        a.plot(xs, [r[key][stat] for r in rows], marker="o", label=label)
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("users in the tenant")
    a.set_ylabel("ms per request")
    a.set_title("Per-request cost vs tenant size")
    a.legend(fontsize=7)
    b.plot(xs, [r["disk"]["store_bytes"] / 2**20 for r in rows], marker="o", label="Neo4j store (MiB)")
    b.plot(xs, [r["rss_mib_end"] for r in rows], marker="o", label="API process RSS (MiB)")
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("users in the tenant")
    b.set_title("Size vs tenant size")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "scale.png", dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="graphmem scale benchmark (issue 16, item 4)")
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--tenant", default=TENANT)
    ap.add_argument("--ingest-turns", type=int, default=80, help="turns of the 1-client pass (8 clients: 8 × n/4)")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--load-only", action="store_true", help="grow the tenant, measure nothing")
    ap.add_argument(
        "--import-above",
        type=int,
        default=2000,
        help="sizes above this are imported as copies of the first N users (bench/scale_import.py)",
    )
    ap.add_argument(
        "--alternate",
        default=None,
        metavar="SMALL,BIG",
        help="alternate context and ingest requests between two loaded tenants (one API process)",
    )
    ap.add_argument(
        "--profile-only",
        default=None,
        metavar="TENANT",
        help="PROFILE the statements on a random user of TENANT (as it is now) into scale.json's 'profiles'",
    )
    args = ap.parse_args(argv)
    assert args.tenant.startswith("bench-")
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "scale.json"
    results: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {"sizes": {}}
    if args.report_only:
        write_report(results)
        return 0
    if args.alternate:
        small, big = args.alternate.split(",")
        mem = GraphMemory(fixtures.bench_settings())
        mem.start()
        try:
            results["alternated"] = alternated(mem, small, big, args)
        finally:
            mem.close()
        log(f"alternated: {results['alternated']['ratio_p50_big_over_small']}")
        path.write_text(json.dumps(results, indent=2, default=str))
        write_report(results)
        return 0
    if args.profile_only:
        mem = GraphMemory(fixtures.bench_settings())
        mem.start()
        try:
            n = mem.store.tenant_user_count(args.profile_only)
            prof = profile_user(mem, args.profile_only, user_id(random.Random(args.seed).randrange(n)))
        finally:
            mem.close()
        results.setdefault("profiles", {})[f"{args.profile_only} ({n} users)"] = prof
        path.write_text(json.dumps(results, indent=2, default=str))
        write_report(results)
        return 0
    results["machine"] = machine()
    mem = GraphMemory(fixtures.bench_settings())
    mem.start()
    try:
        catalog_size = generator.real_concept_count()
        results["catalog"] = fixtures.ensure_catalog(mem, args.tenant, catalog_size)
        for n in [int(s) for s in args.sizes.split(",")]:
            log(f"size {n}: loading")
            if n > args.import_above and mem.store.tenant_user_count(args.tenant) < n:
                # Beyond what the transactional loader writes in reasonable time: copies of its users
                # through neo4j-admin import (bench/scale_import.py), the server restarted around it.
                ensure_users(mem, args.tenant, args.import_above, catalog_size)
                mem.close()
                t0 = time.perf_counter()
                scale_import.main(["--users", str(n), "--source-users", str(args.import_above)])
                load = {"target": n, "imported": True, "seconds": round(time.perf_counter() - t0, 1)}
                mem = GraphMemory(fixtures.bench_settings())
                mem.start()
            else:
                load = ensure_users(mem, args.tenant, n, catalog_size)
            if args.load_only:
                continue
            res = measure(mem, args.tenant, n, args)
            res["load"] = load
            results["sizes"][str(n)] = res
            path.write_text(json.dumps(results, indent=2, default=str))
            write_report(results)
            log(f"size {n}: done, written to {path}")
    finally:
        mem.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
