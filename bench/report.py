"""REPORT.md and PNG plots from a results dict (bench/results/latest.json)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

TARGETS = {
    "ingest_tps": 400.0,
    "ctx_p50_ms": 5.0,
    "ctx_p99_ms": 20.0,
    "compact_10k_ms": 300.0,
    "block_ratio_1000": 0.05,
}


def _ok(met: bool | None) -> str:
    return "n/a" if met is None else ("**met**" if met else "**missed**")


def _ingest_row(label: str, cell: dict[str, Any]) -> tuple[str, str, str, str]:
    return (
        label,
        f"{cell['turns_per_s']} turns/s (call p50 {cell['call_latency']['p50_ms']} ms, "
        f"p99 {cell['call_latency']['p99_ms']} ms)",
        f"≥ {TARGETS['ingest_tps']:.0f} turns/s",
        _ok(cell["turns_per_s"] >= TARGETS["ingest_tps"]),
    )


def headline(r: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    for lang in ("en", "zh"):
        cells = [x for x in r.get("ingest", []) if x["kind"] == "http" and x["language"] == lang and x["batch"] == 128]
        if cells:
            best = max(cells, key=lambda x: x["turns_per_s"])
            rows.append(
                _ingest_row(
                    f"Ingestion {lang.upper()}, HTTP end to end, batch 128 (best of 1/4 clients: {best['clients']})",
                    best,
                )
            )
        for x in r.get("ingest", []):
            if x["language"] == lang and x.get("workers", 1) > 1:
                rows.append(
                    _ingest_row(
                        f"Ingestion {lang.upper()}, HTTP, batch 128, 4 clients, `graphmem serve "
                        f"--workers {x['workers']}`",
                        x,
                    )
                )
    for x in r.get("extraction", []):
        rows.append(
            (
                f"Extraction alone {x['language'].upper()} (1 thread)",
                f"{x['words_per_s']} words/s ({x['turns_per_s']} turns/s)",
                "—",
                "n/a",
            )
        )
    for focus in (False, True):
        c = [x for x in r.get("context", []) if x["concepts"] == 10_000 and x["clients"] == 1 and x["focus"] == focus]
        if c:
            x = c[0]
            rows.append(
                (
                    f"Context block, 10,000 concepts, warm, 1 client, {'with' if focus else 'no'} focus",
                    f"p50 {x['p50_ms']} ms / p95 {x['p95_ms']} / p99 {x['p99_ms']} ms",
                    f"p50 ≤ {TARGETS['ctx_p50_ms']:.0f} ms, p99 ≤ {TARGETS['ctx_p99_ms']:.0f} ms",
                    _ok(x["p50_ms"] <= TARGETS["ctx_p50_ms"] and x["p99_ms"] <= TARGETS["ctx_p99_ms"]),
                )
            )
    for x in r.get("context_after_write", []):
        if x["concepts"] == 10_000:
            rows.append(
                (
                    "Context block, 10,000 concepts, first request after a write by another process (cold)",
                    f"p50 {x['cold_after_external_write']['p50_ms']} ms / max "
                    f"{x['cold_after_external_write']['max_ms']} ms",
                    "—",
                    "n/a",
                )
            )
    rps = r.get("context_rps")
    if rps:
        for k, label in (("best_no_focus", "no focus"), ("best_focus", "with focus")):
            b = rps.get(k)
            rows.append(
                (
                    f"Context requests/s at p99 < 50 ms, 10,000 concepts, {label}",
                    f"{b['rps']} req/s ({b['clients']} clients, p99 {b['p99_ms']} ms)" if b else "none under 50 ms",
                    "—",
                    "n/a",
                )
            )
    for x in r.get("compaction", []):
        target = TARGETS["compact_10k_ms"] if x["concepts"] == 10_000 else None
        rows.append(
            (
                f"Compaction, {x['concepts']:,} concepts",
                f"warm p50 {x['total']['p50_ms']} ms / p99 {x['total']['p99_ms']} ms; cold (first in process) {x['cold_first_ms']} ms; peak RSS {x['peak_rss_mib']} MiB "
                f"(+{x['peak_rss_delta_mib']})",
                f"≤ {target:.0f} ms" if target else "—",
                _ok(x["total"]["p50_ms"] <= target) if target else "n/a",
            )
        )
    conv = r.get("conversation")
    if conv:
        last = conv["curve"][-1]
        rows.append(
            (
                f"Block vs full history tokens at {last['turns']} turns ({last['users']} users)",
                f"{last['ratio_p50']:.2%} median (max {last['ratio_max']:.2%}); block {last['block_tokens_p50']} "
                f"vs history {last['history_tokens_p50']} tokens",
                f"≤ {TARGETS['block_ratio_1000']:.0%}",
                _ok(last["ratio_max"] <= TARGETS["block_ratio_1000"]),
            )
        )
        rows.append(
            (
                f"Key facts from session 1 retained at {last['turns']} turns (budget {conv['budget_tokens']} tokens)",
                f"graphmem block {last['retention_block_mean']:.0%} vs last-N-turns window "
                f"{last['retention_window_mean']:.0%}",
                "block > window",
                _ok(last["retention_block_mean"] > last["retention_window_mean"]),
            )
        )
    return rows


def _log_log(ax: Any, target: float, target_label: str, xlabel: str, ylabel: str, title: str, legend_size: int) -> None:
    """Log-log axes with a dotted red target line: the latency and compaction plots."""
    ax.axhline(target, color="red", linewidth=0.8, linestyle=":", label=target_label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=legend_size)


def _save(plt: Any, fig: Any, out: Path, name: str) -> str:
    fig.tight_layout()
    fig.savefig(out / name, dpi=120)
    plt.close(fig)
    return name


def plots(r: dict[str, Any], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    ctx = r.get("context", [])
    if ctx:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for focus in (False, True):
            for clients in (1, 8):
                pts = sorted(
                    (x["concepts"], x["p50_ms"], x["p99_ms"])
                    for x in ctx
                    if x["focus"] == focus and x["clients"] == clients
                )
                if not pts:
                    continue
                label = f"{'focus' if focus else 'no focus'}, {clients} client{'s' if clients > 1 else ''}"
                (line,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"p50 {label}")
                ax.plot(
                    [p[0] for p in pts],
                    [p[2] for p in pts],
                    marker="x",
                    linestyle="--",
                    color=line.get_color(),
                    label=f"p99 {label}",
                )
        aw = sorted((x["concepts"], x["cold_after_external_write"]["p50_ms"]) for x in r.get("context_after_write", []))
        if aw:
            ax.plot(
                [p[0] for p in aw],
                [p[1] for p in aw],
                marker="s",
                color="black",
                label="cold (after external write) p50",
            )
        _log_log(
            ax,
            20,
            "p99 target 20 ms",
            "concepts in the user's graph",
            "latency over HTTP (ms)",
            "Context block latency vs graph size",
            legend_size=7,
        )
        made.append(_save(plt, fig, out, "context_latency.png"))
    conv = r.get("conversation")
    if conv:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
        xs = [c["turns"] for c in conv["curve"]]
        ax1.plot(xs, [c["history_tokens_p50"] for c in conv["curve"]], marker="o", label="full raw history")
        ax1.plot(xs, [c["block_tokens_p50"] for c in conv["curve"]], marker="o", label="graphmem block")
        ax1.set_xlabel("turns")
        ax1.set_ylabel("tokens (median over users)")
        ax1.set_yscale("log")
        ax1.set_title("Prompt tokens vs conversation length")
        ax1.legend()
        ax2.plot(xs, [c["retention_block_mean"] * 100 for c in conv["curve"]], marker="o", label="graphmem block")
        ax2.plot(
            xs, [c["retention_window_mean"] * 100 for c in conv["curve"]], marker="o", label="last N turns, same budget"
        )
        ax2.set_xlabel("turns")
        ax2.set_ylabel("session-1 key facts present (%)")
        ax2.set_ylim(-5, 105)
        ax2.set_title("Retention of early key facts")
        ax2.legend()
        made.append(_save(plt, fig, out, "tokens_retention.png"))
    comp = r.get("compaction", [])
    if comp:
        fig, ax = plt.subplots(figsize=(6, 4))
        xs = [c["concepts"] for c in comp]
        for k, label in (
            ("load_ms_p50", "load from Neo4j"),
            ("rank_ms_p50", "rank"),
            ("plan_ms_p50", "plan"),
            ("write_ms_p50_est", "write"),
        ):
            ax.plot(xs, [c[k] for c in comp], marker="o", label=label)
        ax.plot(xs, [c["total"]["p50_ms"] for c in comp], marker="o", color="black", label="total p50")
        _log_log(ax, 300, "target at 10k: 300 ms", "concepts", "ms", "Compaction time per user", legend_size=8)
        made.append(_save(plt, fig, out, "compaction.png"))
    return made


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_report(r: dict[str, Any], out: Path, notes: str | None = None) -> None:
    made = plots(r, out)
    m = r["machine"]
    parts = [
        "# graphmem benchmarks",
        "",
        f"Produced by `{r['command']}` (mode **{r['mode']}**) at {r['started_at']} in {r.get('total_s')} s. "
        "Rerun the same command to compare; the raw figures are in `bench/results/latest.json`.",
        "",
        f"**Machine:** {m['cpu_model']}, {m['logical_cores']} logical cores, {m['ram_gib']} GiB RAM, "
        f"{m['platform']}; Python {m['python']}, spaCy {m['spacy']}, {m.get('neo4j_server')}, "
        f"neo4j Python driver {m['neo4j_python_driver']} (rust extension: {m.get('neo4j_rust_ext')}); "
        f"load average at start {m['load_avg_at_start']}. Shared and noisy: the API server, Neo4j and the "
        "load generator share the same 2 cores, so absolute figures are pessimistic; ratios are measured side "
        "by side in one run.",
        "",
        "## Headline",
        "",
        _table(["figure", "measured", "target", "status"], [list(x) for x in headline(r)]),
        "",
    ]
    if notes:
        parts += [notes, ""]
    if "ingest" in r:
        parts += [
            "## Ingestion (turns/s; median of repeats, call latency p50 / worst p99)",
            "",
            _table(
                ["path", "lang", "batch", "clients", "turns", "turns/s", "call p50 ms", "call p99 ms"],
                [
                    [
                        x["kind"],
                        x["language"],
                        x["batch"],
                        x["clients"],
                        x["turns"],
                        x["turns_per_s"],
                        x["call_latency"]["p50_ms"],
                        x["call_latency"]["p99_ms"],
                    ]
                    for x in r["ingest"]
                ],
            ),
            "",
        ]
    if "extraction" in r:
        parts += [
            "## Extraction alone",
            "",
            _table(
                ["lang", "turns", "words", "words/s (median)", "words/s (worst)", "turns/s", "ms/turn"],
                [
                    [
                        x["language"],
                        x["turns"],
                        x["words"],
                        x["words_per_s"],
                        x["words_per_s_worst"],
                        x["turns_per_s"],
                        x["ms_per_turn_p50"],
                    ]
                    for x in r["extraction"]
                ],
            ),
            "",
            "Chinese words are jieba tokens.",
            "",
        ]
    if "context" in r:
        parts += [
            "## Context block latency over HTTP (warm cache)",
            "",
            _table(
                ["concepts", "focus", "clients", "n", "p50 ms", "p95 ms", "p99 ms", "max ms", "req/s"],
                [
                    [
                        x["concepts"],
                        x["focus"],
                        x["clients"],
                        x["n"],
                        x["p50_ms"],
                        x["p95_ms"],
                        x["p99_ms"],
                        x["max_ms"],
                        x["rps"],
                    ]
                    for x in r["context"]
                ],
            ),
            "",
        ]
    if "context_after_write" in r:
        parts += [
            "### After a write",
            "",
            _table(
                [
                    "concepts",
                    "ingest 1 turn p50 / max ms",
                    "first context after own write p50 / max ms",
                    "cold (external write) p50 / max ms",
                ],
                [
                    [
                        x["concepts"],
                        f"{x['ingest_one_turn']['p50_ms']} / {x['ingest_one_turn']['max_ms']}",
                        f"{x['first_after_own_write']['p50_ms']} / {x['first_after_own_write']['max_ms']}",
                        f"{x['cold_after_external_write']['p50_ms']} / {x['cold_after_external_write']['max_ms']}",
                    ]
                    for x in r["context_after_write"]
                ],
            ),
            "",
        ]
    if "context_rps" in r:
        parts += [
            "### Throughput sweep, 10,000 concepts (closed loop)",
            "",
            _table(
                ["focus", "clients", "req/s", "p50 ms", "p99 ms"],
                [[x["focus"], x["clients"], x["rps"], x["p50_ms"], x["p99_ms"]] for x in r["context_rps"]["levels"]],
            ),
            "",
        ]
    if "compaction" in r:
        parts += [
            "## Compaction (GraphMemory.compact in a fresh service process)",
            "",
            _table(
                [
                    "concepts",
                    "repeats",
                    "cold ms",
                    "warm p50 ms",
                    "warm p99 ms",
                    "load ms",
                    "rank ms",
                    "plan ms",
                    "write ms (est)",
                    "peak RSS MiB",
                    "RSS delta MiB",
                    "edges",
                    "after / before",
                ],
                [
                    [
                        x["concepts"],
                        x["repeats"],
                        x["cold_first_ms"],
                        x["total"]["p50_ms"],
                        x["total"]["p99_ms"],
                        x["load_ms_p50"],
                        x["rank_ms_p50"],
                        x["plan_ms_p50"],
                        x["write_ms_p50_est"],
                        x["peak_rss_mib"],
                        x["peak_rss_delta_mib"],
                        x["edges"],
                        f"{x['run'].get('concepts_after')} / {x['run'].get('concepts_before')}",
                    ]
                    for x in r["compaction"]
                ],
            ),
            "",
        ]
    if "conversation" in r:
        c = r["conversation"]
        parts += [
            "## Prompt cost and retention (real extraction, multi-session learners)",
            "",
            f"Budget {c['budget_tokens']} tokens for both the block and the last-N-turns window "
            "(cl100k tokens, `role: text` lines for history and window).",
            "",
            _table(
                [
                    "turns",
                    "users",
                    "block tokens p50",
                    "history tokens p50",
                    "ratio p50",
                    "ratio max",
                    "retention block",
                    "retention window",
                ],
                [
                    [
                        x["turns"],
                        x["users"],
                        x["block_tokens_p50"],
                        x["history_tokens_p50"],
                        f"{x['ratio_p50']:.2%}",
                        f"{x['ratio_max']:.2%}",
                        f"{x['retention_block_mean']:.0%}",
                        f"{x['retention_window_mean']:.0%}",
                    ]
                    for x in c["curve"]
                ],
            ),
            "",
            "Retention by stance at the last checkpoint: "
            + ", ".join(
                f"{k}: block {v['block']:.0%} / window {v['window']:.0%}" for k, v in c["by_stance_at_last"].items()
            ),
            "",
        ]
    if made:
        parts += ["## Plots", ""] + [f"![{p}]({p})" for p in made] + [""]
    parts += [
        "## Section times (s)",
        "",
        _table(["section", "seconds"], [[k, v] for k, v in r["timings_s"].items()]),
        "",
        "## Setup",
        "",
        "```json",
        json.dumps(r.get("setup", {}), indent=1, ensure_ascii=False),
        "```",
        "",
    ]
    extra = out / "NOTES.md"
    if extra.exists():
        parts += [extra.read_text(encoding="utf-8")]
    (out / "REPORT.md").write_text("\n".join(parts), encoding="utf-8")


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "results" / "latest.json"
    write_report(json.loads(path.read_text(encoding="utf-8")), path.parent)
