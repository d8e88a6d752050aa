"""networkx.pagerank against graphmem's own power iteration, on the synthetic graphs of ranking_speed.

Both paths start from the same UserGraph and the same initial weights (personalisation) and typed
edges (a pair's channels add their weights, as in graphmem.ranking); the networkx path builds its
Graph and calls ``nx.pagerank(alpha=damping, personalization=initial, tol=1e-12)``. Reports median
milliseconds and the largest difference between the two normalised stationary vectors.

    python -m bench.pagerank_networkx [--sizes 150 1000 10000] [--out bench/results/pagerank_networkx.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx

from graphmem.models import UserGraph
from graphmem.ranking import RankingConfig, _weights, rank_pagerank, typed_pairs

from .common import RESULTS, log, machine
from .ranking_speed import synthetic_graph


def _median_s(f: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def via_networkx(g: UserGraph, cfg: RankingConfig) -> dict[str, float]:
    init, _ = _weights(g, cfg)
    graph = nx.Graph()
    graph.add_nodes_from(g.concepts)
    for p in typed_pairs(g):
        w = cfg.edge_weight(p.relation)
        if graph.has_edge(p.source, p.target):
            graph[p.source][p.target]["weight"] += w
        else:
            graph.add_edge(p.source, p.target, weight=w)
    return nx.pagerank(graph, alpha=cfg.damping, personalization=init, weight="weight", tol=1e-12, max_iter=1000)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[150, 1000, 10000])
    ap.add_argument("--out", type=Path, default=RESULTS / "pagerank_networkx.json")
    args = ap.parse_args(argv)
    cfg = RankingConfig()
    rows = []
    for n in args.sizes:
        g = synthetic_graph(n)
        repeat = 7 if n <= 10_000 else 3
        ours_s, ours = _median_s(lambda: rank_pagerank(g, cfg), repeat)
        nx_s, theirs = _median_s(lambda: via_networkx(g, cfg), repeat)
        final = {k: rc.final for k, rc in ours.items()}
        total = sum(final.values())
        row = {
            "concepts": n,
            "graphmem_ms": round(ours_s * 1000, 2),
            "networkx_ms": round(nx_s * 1000, 2),
            "networkx_over_graphmem": round(nx_s / ours_s, 2),
            "max_abs_diff": max(abs(final[k] / total - theirs[k]) for k in g.concepts),
        }
        rows.append(row)
        log(f"pagerank {row}")
    args.out.write_text(json.dumps({"machine": machine(), "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
