"""Speed of the pure query path: rank + compaction plan + context selection + render.

Synthetic user graphs of 100 / 1,000 / 10,000 / 100,000 concepts with ~3 typed
edges per concept, 20 % of concepts mentioned by the user (1-5 mentions over
the last 90 days), some assistant mentions and stances. Prints the median of
several runs per stage, for both rankers.

    .venv/bin/python bench/ranking_speed.py [--sizes 100 1000 10000] [--repeat 5]
    .venv/bin/python -m bench.ranking_speed --compare-pagerank --sizes 150 1000 10000 100000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import networkx as nx
import numpy as np

from graphmem.compaction import CompactionConfig, plan_compaction
from graphmem.context import ContextConfig, select_context
from graphmem.models import ConceptEdge, ConceptNode, RelationType, Stance, UserGraph
from graphmem.ranking import RankingConfig, TypedPair, _power_iteration, _weights, rank, typed_pairs
from graphmem.render import render_block
from graphmem.tokens import TokenCounter

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def synthetic_graph(n: int, seed: int = 7, edges_per_node: float = 3.0) -> UserGraph:
    rnd = random.Random(seed)
    now_ts = NOW.timestamp()
    stances = [None] * 20 + [Stance.interested, Stance.confused, Stance.knows, Stance.dislikes]
    concepts: dict[str, ConceptNode] = {}
    for i in range(n):
        key = f"c{i}"
        times: list[float] = []
        roles: list[str] = []
        if rnd.random() < 0.2:
            for _ in range(rnd.randint(1, 5)):
                times.append(now_ts - rnd.uniform(0, 90) * 86_400)
                roles.append("user" if rnd.random() < 0.8 else "assistant")
        concepts[key] = ConceptNode(
            key=key,
            name=f"concept {i}",
            user_mentions=roles.count("user"),
            assistant_mentions=roles.count("assistant"),
            stance=rnd.choice(stances) if times else None,
            evidence=tuple(f"t{i}-{j}" for j in range(len(times))),
            mention_times=tuple(times),
            mention_roles=tuple(roles),
        )
    types = list(RelationType)
    edges = []
    for _ in range(int(n * edges_per_node)):
        a, b = rnd.randrange(n), rnd.randrange(n)
        if a != b:
            edges.append(ConceptEdge(f"c{a}", f"c{b}", rnd.choice(types), rnd.choice(["catalog", "user"])))
    return UserGraph("bench", "u", concepts, tuple(edges), now=NOW, history_tokens=n * 40)


def run(n: int, method: str, repeat: int, counter: TokenCounter) -> dict[str, float]:
    graph = synthetic_graph(n)
    rcfg = RankingConfig(method=method)  # type: ignore[arg-type]
    ccfg = CompactionConfig()
    xcfg = ContextConfig()
    focus = [next(iter(graph.concepts))]
    times: dict[str, list[float]] = {"rank": [], "plan": [], "select": [], "render": [], "total": []}
    for _ in range(repeat):
        t0 = time.perf_counter()
        ranking = rank(graph, rcfg)
        t1 = time.perf_counter()
        plan = plan_compaction(graph, ranking, ccfg)
        t2 = time.perf_counter()
        sel = select_context(graph, ranking, plan.tiers, focus, "learning", xcfg)
        t3 = time.perf_counter()
        render_block(sel, fmt="xml", max_tokens=400, counter=counter)
        t4 = time.perf_counter()
        for k, v in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
            times[k].append(v * 1000)
    return {k: statistics.median(v) for k, v in times.items()}


def _networkx_graph(keys: list[str], pairs: list[TypedPair], rcfg: RankingConfig) -> nx.Graph:
    """The undirected weighted graph rank_pagerank walks: each typed channel adds its type's weight."""
    g = nx.Graph()
    g.add_nodes_from(keys)
    for p in pairs:
        w = rcfg.edge_weight(p.relation)
        if g.has_edge(p.source, p.target):
            g[p.source][p.target]["weight"] += w
        else:
            g.add_edge(p.source, p.target, weight=w)
    return g


def networkx_stationary(graph: UserGraph, rcfg: RankingConfig) -> dict[str, float]:
    """The same personalised walk through ``networkx.pagerank`` (restart and dangling at the initial weights)."""
    init, _ = _weights(graph, rcfg)
    g = _networkx_graph(sorted(graph.concepts), typed_pairs(graph), rcfg)
    total = sum(init.values())
    pers = {k: v / total for k, v in init.items()}
    return nx.pagerank(
        g,
        alpha=rcfg.damping,
        personalization=pers,
        dangling=pers,
        weight="weight",
        tol=rcfg.pagerank_tol,
        max_iter=rcfg.pagerank_max_iter,
    )


def compare_pagerank(sizes: list[int], repeat: int) -> Iterator[dict[str, float]]:
    """networkx.pagerank against the hand-written power iteration of graphmem.ranking, on the same input
    (initial weights and typed pairs computed once, as both would use them): median ms of the numpy
    iteration (arrays built from the pairs included) and of networkx (graph built, then pagerank), and
    the largest difference between the two stationary vectors."""
    rcfg = RankingConfig(method="pagerank")
    networkx_stationary(synthetic_graph(10), rcfg)  # the first call imports scipy (~0.5 s)
    for n in sizes:
        graph = synthetic_graph(n)
        keys = sorted(graph.concepts)
        idx = {k: i for i, k in enumerate(keys)}
        init, _ = _weights(graph, rcfg)
        pairs = typed_pairs(graph)
        total = sum(init.values())
        pers = {k: v / total for k, v in init.items()}
        own, build, other = [], [], []
        for _ in range(repeat):  # alternated, so drift on a shared machine hits both
            t0 = time.perf_counter()
            personal = np.fromiter((init[k] / total for k in keys), dtype=np.float64, count=n)
            u = np.fromiter((idx[p.source] for p in pairs), dtype=np.int64, count=len(pairs))
            v = np.fromiter((idx[p.target] for p in pairs), dtype=np.int64, count=len(pairs))
            w = np.fromiter((rcfg.edge_weight(p.relation) for p in pairs), dtype=np.float64, count=len(pairs))
            x, _ = _power_iteration(personal, u, v, w, n, rcfg)
            t1 = time.perf_counter()
            g = _networkx_graph(keys, pairs, rcfg)
            t2 = time.perf_counter()
            theirs = nx.pagerank(
                g,
                alpha=rcfg.damping,
                personalization=pers,
                dangling=pers,
                weight="weight",
                tol=rcfg.pagerank_tol,
                max_iter=rcfg.pagerank_max_iter,
            )
            t3 = time.perf_counter()
            own.append((t1 - t0) * 1000)
            build.append((t2 - t1) * 1000)
            other.append((t3 - t2) * 1000)
        yield {
            "concepts": n,
            "pairs": len(pairs),
            "numpy_ms": round(statistics.median(own), 3),
            "networkx_build_ms": round(statistics.median(build), 3),
            "networkx_pagerank_ms": round(statistics.median(other), 3),
            "networkx_ms": round(statistics.median(build) + statistics.median(other), 3),
            "max_abs_diff": float(max(abs(x[idx[k]] - theirs[k]) for k in keys)),
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rankers", nargs="+", default=["pagerank", "reference"])
    ap.add_argument("--compare-pagerank", action="store_true", help="networkx.pagerank vs the power iteration")
    args = ap.parse_args()
    if args.compare_pagerank:
        print(f"{'concepts':>10}{'numpy ms':>12}{'networkx ms':>13}{'(build)':>10}{'ratio':>8}{'max diff':>12}")
        rows = []
        for r in compare_pagerank(args.sizes, args.repeat):
            rows.append(r)
            print(
                f"{r['concepts']:>10}{r['numpy_ms']:>12.2f}{r['networkx_ms']:>13.2f}{r['networkx_build_ms']:>10.2f}"
                f"{r['networkx_ms'] / r['numpy_ms']:>8.1f}{r['max_abs_diff']:>12.1e}",
                flush=True,
            )
        out = Path(__file__).resolve().parent / "results" / "pagerank_speed.json"
        out.write_text(json.dumps({"load_average": os.getloadavg(), "repeat": args.repeat, "rows": rows}, indent=2))
        return
    counter = TokenCounter()
    counter.count("warm up")
    print(
        f"{'ranker':<10}{'concepts':>10}{'rank ms':>10}{'plan ms':>10}{'select ms':>11}{'render ms':>11}{'total ms':>10}"
    )
    for method in args.rankers:
        for n in args.sizes:
            r = run(n, method, args.repeat if n < 100_000 else max(1, args.repeat // 2), counter)
            print(
                f"{method:<10}{n:>10}{r['rank']:>10.1f}{r['plan']:>10.1f}{r['select']:>11.1f}"
                f"{r['render']:>11.1f}{r['total']:>10.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
