"""Protocol 1 — knowledge gaps against human prerequisites (Metacademy).

The Metacademy concepts and prerequisite edges are loaded as the tenant's
catalog through GraphMemory.put_catalog (name = title, alias = tag with "_" ->
" ", relation prereq -prerequisite-> concept). For every concept T with at
least three direct prerequisites, a simulated learner (one user) writes turns
from fixed templates and the concept *titles* only (never the summaries):
interest in T, and "already know" for a seeded random subset K of T's
prerequisites (1 <= |K| <= n-1, so every learner has something known and
something missing). The learner then asks a question about T, and
`knowledge_gaps` of GraphMemory.context(focus=question, scope="learning",
max_tokens=20000) is scored.

Gold gaps (the catalog's human edges, P(x) = direct prerequisites of x,
A(K) = K and every ancestor of a concept in K — a learner who knows k is
presumed to know what k builds on):
  depth 1: P(T) - A(K);
  depth 2: depth 1, plus P(g) for g in depth 1, minus T and A(K).
Depth 1 is scored on a GraphMemory with GRAPHMEM_GAP_DEPTH=1, depth 2 on the
default (2). Precision, recall and F1 are micro-averaged over learners (every
reported / gold gap counts once); "not ancestors" is the share of reported gaps
that are not ancestors of T at any depth in the catalog.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

from eval.common import eval_tenant, make_memory, prf, protocol_cli, r4, shared_data_dir
from graphmem.extraction.normalize import concept_key
from graphmem.models import Catalog, CatalogConcept, CatalogRelation, TurnIn

SEED = 20240917
INTEREST = (
    "I want to learn {t}.",
    "I'm interested in {t}.",
    "I'd like to understand {t}.",
    "I'm planning to study {t} next.",
)
KNOWS = (
    "I already know {k}.",
    "I have studied {k} before.",
    "I'm comfortable with {k}.",
    "I learned {k} last year.",
    "I'm familiar with {k}.",
)
QUESTIONS = (
    "How does {t} work?",
    "Can you explain {t}?",
    "What should I read about {t}?",
)


def load_metacademy(data: Path) -> list[dict[str, Any]]:
    with open(data / "metacademy" / "concepts.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def build_catalog(rows: list[dict[str, Any]]) -> Catalog:
    concepts = []
    for r in rows:
        alias = r["tag"].replace("_", " ").strip()
        aliases = [alias] if concept_key(alias) != concept_key(r["title"]) else []
        concepts.append(CatalogConcept(name=r["title"], aliases=aliases, id=r["tag"]))
    by_tag = {r["tag"]: r["title"] for r in rows}
    relations = [
        CatalogRelation(source=by_tag[p["tag"]], type="prerequisite", target=r["title"])
        for r in rows
        for p in r["prerequisites"]
        if p["tag"] in by_tag and p["tag"] != r["tag"]
    ]
    return Catalog(concepts=concepts, relations=relations)


def ancestors(tag: str, parents: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(parents.get(tag, ()))
    while stack:
        p = stack.pop()
        if p not in seen:
            seen.add(p)
            stack.extend(parents.get(p, ()))
    return seen


def make_learner(row: dict[str, Any], titles: dict[str, str], rng: random.Random) -> tuple[list[str], list[str], str]:
    """(turns, known tags, focus question) for target `row`."""
    prereqs = [p["tag"] for p in row["prerequisites"]]
    n_known = rng.randint(1, len(prereqs) - 1)
    known = sorted(rng.sample(prereqs, n_known))
    t = titles[row["tag"]]
    turns = [rng.choice(INTEREST).format(t=t)]
    for k in known:
        turns.append(rng.choice(KNOWS).format(k=titles[k]))
    question = rng.choice(QUESTIONS).format(t=t)
    return turns, known, question


def run(quick: bool = False, limit: int | None = None, verbose: bool = True, seed: int = SEED) -> dict[str, Any]:
    data = shared_data_dir()
    rows = load_metacademy(data)
    titles = {r["tag"]: r["title"] for r in rows}
    parents = {r["tag"]: [p["tag"] for p in r["prerequisites"] if p["tag"] != r["tag"]] for r in rows}
    targets = [r for r in rows if len(parents[r["tag"]]) >= 3]
    if limit is None and quick:
        limit = 40
    if limit is not None:
        targets = random.Random(seed).sample(targets, min(limit, len(targets)))
        targets.sort(key=lambda r: r["tag"])
    key_to_tag = {concept_key(r["title"]): r["tag"] for r in rows}
    started = time.perf_counter()
    mem2 = make_memory()
    mem1 = make_memory(gap_depth=1)
    tally = {d: {"tp": 0, "pred": 0, "gold": 0, "not_anc": 0} for d in (1, 2)}
    per_learner: list[dict[str, Any]] = []
    try:
        with eval_tenant(mem2, "gaps") as tenant:
            catalog = build_catalog(rows)
            mem2.put_catalog(tenant, catalog)
            for i, row in enumerate(targets):
                tag = row["tag"]
                rng = random.Random(f"{seed}:{tag}")
                turns, known, question = make_learner(row, titles, rng)
                user = f"learner-{i:03d}"
                mem2.ingest(
                    tenant, user, "s1", [TurnIn(turn_id=f"t{j}", role="user", text=t) for j, t in enumerate(turns)]
                )
                presumed = set(known).union(*(ancestors(k, parents) for k in known))
                gold1 = set(parents[tag]) - presumed
                gold2 = (gold1 | {p for g in gold1 for p in parents.get(g, ())}) - presumed - {tag}
                anc = ancestors(tag, parents)
                rec: dict[str, Any] = {"target": tag, "prereqs": len(parents[tag]), "known": len(known)}
                for depth, mem, gold in ((1, mem1, gold1), (2, mem2, gold2)):
                    ctx = mem.context(tenant, user, focus=question, scope="learning", max_tokens=20000)
                    pred = {key_to_tag.get(concept_key(n), "?" + concept_key(n)) for n in ctx.knowledge_gaps}
                    tp = len(pred & gold)
                    t = tally[depth]
                    t["tp"] += tp
                    t["pred"] += len(pred)
                    t["gold"] += len(gold)
                    t["not_anc"] += len(pred - anc)
                    p, r_, f = prf(tp, len(pred), len(gold))
                    rec[f"d{depth}"] = {
                        "f1": r4(f),
                        "precision": r4(p),
                        "recall": r4(r_),
                        "missed": sorted(gold - pred),
                        "extra": sorted(pred - gold),
                        "current_topic": [concept_key(n) for n in ctx.current_topic],
                    }
                per_learner.append(rec)
    finally:
        mem1.close()
        mem2.close()
    out: dict[str, Any] = {"learners": len(per_learner), "seed": seed}
    for depth in (1, 2):
        t = tally[depth]
        p, r_, f = prf(t["tp"], t["pred"], t["gold"])
        out[f"depth{depth}"] = {
            "precision": r4(p),
            "recall": r4(r_),
            "f1": r4(f),
            "reported": t["pred"],
            "gold": t["gold"],
            "not_ancestor_share": r4(t["not_anc"] / t["pred"]) if t["pred"] else 0.0,
        }
    out["seconds"] = round(time.perf_counter() - started, 1)
    worst = sorted(per_learner, key=lambda r: (min(r["d1"]["f1"], r["d2"]["f1"]), r["target"]))[:8]
    out["worst"] = [
        {
            "target": w["target"],
            "d1_f1": w["d1"]["f1"],
            "d2_f1": w["d2"]["f1"],
            "missed": w["d2"]["missed"][:6],
            "extra": w["d2"]["extra"][:6],
            "current_topic": w["d2"]["current_topic"],
        }
        for w in worst
    ]
    if verbose:
        print(f"[gaps] {out['learners']} learners, {out['seconds']} s")
        for depth in (1, 2):
            print(f"  depth {depth}: {out[f'depth{depth}']}")
        for w in out["worst"]:
            print("  worst:", w)
    return out


if __name__ == "__main__":
    protocol_cli(run)
