"""Runs every graphmem benchmark and writes bench/results/{latest.json, REPORT.md, *.png}.

    python -m bench.run_all            # full mode (~10-15 min on 2 cores)
    python -m bench.run_all --quick    # quick mode (< 2 min once the fixtures exist)

Needs the Neo4j server (``graphmem neo4j start``; NEO4J_URI / GRAPHMEM_NEO4J_* are honoured)
and the shared data directory (../shared/data, or GRAPHMEM_SHARED_DATA). Writes only to
tenants whose id starts with ``bench-``. Large fixtures (the 10,000-concept tenant and its
users, and in full mode the 100,000-concept ones) are built once and reused by later runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from typing import Any

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from graphmem.models import Catalog
from graphmem.service import GraphMemory
from graphmem.settings import Settings

from . import compaction_bench, context_bench, conversation_bench, fixtures, generator, ingest_bench
from .common import RESULTS, log, machine, start_server
from .report import write_report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="graphmem benchmarks")
    ap.add_argument("--quick", action="store_true", help="smaller matrices, no 100,000-concept user (< 2 min)")
    ap.add_argument(
        "--only", nargs="*", default=None, help="sections to run: extraction ingest context compaction conversation"
    )
    args = ap.parse_args(argv)
    quick = args.quick
    want = set(args.only or ["extraction", "ingest", "context", "compaction", "conversation"])
    RESULTS.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    command = (
        "python -m bench.run_all"
        + (" --quick" if quick else "")
        + (f" --only {' '.join(sorted(want))}" if args.only else "")
    )
    results: dict[str, Any] = {
        "mode": "quick" if quick else "full",
        "command": command,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "setup": {},
        "timings_s": {},
    }
    log(f"{command} on {results['machine']['cpu_model']} x{results['machine']['logical_cores']}")

    def section(name: str):
        class _T:
            def __enter__(self):
                self.t0 = time.perf_counter()
                log(f"== {name}")

            def __exit__(self, *exc):
                results["timings_s"][name] = round(time.perf_counter() - self.t0, 1)

        return _T()

    mem = GraphMemory(Settings())
    with section("setup"):
        mem.start()
        real = Catalog.model_validate(generator.catalog_document(generator.real_concept_count()))
        for tenant in (ingest_bench.TENANT, conversation_bench.TENANT):
            results["setup"][tenant] = fixtures.ensure_catalog(mem, tenant, generator.real_concept_count())
        need_scale = want & {"context", "compaction"}
        if need_scale:
            results["setup"][context_bench.TENANT] = fixtures.ensure_catalog(
                mem, context_bench.TENANT, context_bench.CATALOG_SIZE
            )
            for n in context_bench.SIZES:
                results["setup"][f"scale-{n}"] = fixtures.ensure_scale_user(
                    mem,
                    context_bench.TENANT,
                    context_bench.user_id(n),
                    n,
                    context_bench.CATALOG_SIZE,
                    seed=context_bench.SEED,
                )
        if not quick and "compaction" in want:
            results["setup"]["bench-scale-100000"] = fixtures.ensure_catalog(mem, "bench-scale-100000", 100_000)
            results["setup"]["scale-100000"] = fixtures.ensure_scale_user(
                mem, "bench-scale-100000", "scale-100000", 100_000, 100_000, seed=context_bench.SEED
            )
        log(f"setup: {json.dumps(results['setup'])}")

    if "extraction" in want:
        with section("extraction"):
            results["extraction"] = ingest_bench.extraction_speed(real, quick)

    if want & {"ingest", "context"}:
        server = start_server({ingest_bench.KEY: ingest_bench.TENANT, context_bench.KEY: context_bench.TENANT})
        try:
            results["server_rss_mib_start"] = round(server.rss_mib(), 1)
            if "ingest" in want:
                with section("ingest"):
                    results["ingest"] = ingest_bench.ingest_matrix(mem, server, quick)
            if "context" in want:
                with section("context"):
                    results["context"] = context_bench.context_latency(server, quick)
                    results["context_after_write"] = context_bench.after_write(server, mem, quick)
                    results["context_rps"] = context_bench.rps_sweep(server, quick)
            results["server_rss_mib_end"] = round(server.rss_mib(), 1)
        finally:
            server.stop()
        if "ingest" in want:
            # The same cells against `graphmem serve --workers 2`: English extraction is CPU-bound
            # Python, so one API process uses one core for it.
            server = start_server({ingest_bench.KEY: ingest_bench.TENANT}, workers=2)
            try:
                with section("ingest_workers"):
                    results["ingest"] += ingest_bench.ingest_workers(server, 2, quick)
            finally:
                server.stop()

    if "compaction" in want:
        with section("compaction"):
            rows = []
            for n in (1_000, 10_000) if quick else (1_000, 10_000, 100_000):
                tenant = context_bench.TENANT if n <= context_bench.CATALOG_SIZE else "bench-scale-100000"
                rows.append(
                    compaction_bench.measure(tenant, f"scale-{n}", n, repeats=(3 if quick else 7) if n < 100_000 else 3)
                )
            results["compaction"] = rows

    if "conversation" in want:
        with section("conversation"):
            results["conversation"] = conversation_bench.run_users(mem, quick)

    mem.close()
    results["total_s"] = round(time.perf_counter() - started, 1)
    (RESULTS / "latest.json").write_text(
        json.dumps(results, indent=2, ensure_ascii=False, default=str), encoding="utf-8"
    )
    write_report(results, RESULTS)
    log(f"done in {results['total_s']} s: {RESULTS / 'REPORT.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
