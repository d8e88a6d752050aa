"""Speed of the pure query path: rank + compaction plan + context selection + render.

Synthetic user graphs of 100 / 1,000 / 10,000 / 100,000 concepts with ~3 typed
edges per concept, 20 % of concepts mentioned by the user (1-5 mentions over
the last 90 days), some assistant mentions and stances. Prints the median of
several runs per stage, for both rankers.

    .venv/bin/python bench/ranking_speed.py [--sizes 100 1000 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from datetime import UTC, datetime

from graphmem.compaction import CompactionConfig, plan_compaction
from graphmem.context import ContextConfig, select_context
from graphmem.models import ConceptEdge, ConceptNode, RelationType, Stance, UserGraph
from graphmem.ranking import RankingConfig, rank
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rankers", nargs="+", default=["pagerank", "reference"])
    args = ap.parse_args()
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
