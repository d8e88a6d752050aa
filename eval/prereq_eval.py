"""Protocol 2 — prerequisite relations learned without a catalog (Metacademy text).

No catalog is loaded. Every concept's summary, then each of its non-empty
prerequisite reasons, is ingested as assistant turns of one user (one session
per concept, 25 concepts per ingest call). The relations graphmem extracted
and stored are read back with GraphMemory.graph.

Mapping gold concepts to extracted keys: a gold concept answers to the
concept_key of its title, of its tag with "_" -> " ", and of the title without
a trailing parenthetical or the part after a colon ("maximum likelihood:
multivariate gaussians" -> "maximum likelihood" is NOT used: a colon title
names a different, narrower concept; only the parenthetical is dropped).
When two gold concepts share a key, both answer to it.

* concept recall: share of gold concepts with a key among the extracted concepts;
* predicted prerequisite edges: `A -prerequisite-> B`, plus `B -requires-> A`
  (requires states the same dependency from the other side), between two
  extracted concepts that both map to gold concepts (other edges cannot be
  judged), self-pairs after mapping dropped;
* precision: predicted edges that are gold edges (direct prerequisite);
  "ancestor precision" also accepts an edge whose source is any ancestor of
  its target in the gold graph; recall: gold edges predicted, over the gold
  edges whose both ends were extracted as concepts.
"""

from __future__ import annotations

import random
import re
import time
from typing import Any

from eval.common import eval_tenant, make_memory, prf, protocol_cli, r4, shared_data_dir
from eval.gaps_eval import ancestors, load_metacademy
from graphmem.extraction.normalize import concept_key
from graphmem.models import TurnIn

SEED = 20240917
_PAREN = re.compile(r"\s*\([^()]*\)\s*$")


def gold_keys(row: dict[str, Any]) -> set[str]:
    keys = {concept_key(row["title"]), concept_key(row["tag"].replace("_", " "))}
    keys.add(concept_key(_PAREN.sub("", row["title"])))
    return {k for k in keys if k}


def run(quick: bool = False, limit: int | None = None, verbose: bool = True, seed: int = SEED) -> dict[str, Any]:
    data = shared_data_dir()
    rows = load_metacademy(data)
    tags = {r["tag"] for r in rows}
    parents = {
        r["tag"]: [p["tag"] for p in r["prerequisites"] if p["tag"] in tags and p["tag"] != r["tag"]] for r in rows
    }
    gold_edges = {(p, t) for t, ps in parents.items() for p in ps}
    chosen = rows
    if limit is None and quick:
        limit = 120
    if limit is not None:
        chosen = sorted(random.Random(seed).sample(rows, min(limit, len(rows))), key=lambda r: r["tag"])
    key_to_tags: dict[str, set[str]] = {}
    for r in rows:
        for k in gold_keys(r):
            key_to_tags.setdefault(k, set()).add(r["tag"])
    started = time.perf_counter()
    mem = make_memory()
    turns_fed = 0
    try:
        with eval_tenant(mem, "prereq") as tenant:
            user = "reader"
            for b in range(0, len(chosen), 25):
                batch: list[TurnIn] = []
                for r in chosen[b : b + 25]:
                    texts = [r["summary"]] + [p["reason"] for p in r["prerequisites"] if p["reason"].strip()]
                    for j, text in enumerate(texts):
                        if text.strip():
                            batch.append(TurnIn(turn_id=f"{r['tag']}-{j}", role="assistant", text=text))
                turns_fed += len(batch)
                mem.ingest(tenant, user, f"s{b // 25}", batch)
            g = mem.graph(tenant, user)
    finally:
        mem.close()
    node_keys = {n["key"] for n in g["nodes"]}
    extracted_tags = {t for k in node_keys for t in key_to_tags.get(k, ())}
    # Evaluate only over the gold concepts whose text was fed.
    fed = {r["tag"] for r in chosen}
    gold_fed = {t for t in tags if t in fed}
    pred: set[tuple[str, str]] = set()
    raw = 0
    by_type = {"prerequisite": 0, "requires": 0}
    for e in g["edges"]:
        if e["type"] == "prerequisite":
            src, tgt = e["source"], e["target"]
        elif e["type"] == "requires":
            src, tgt = e["target"], e["source"]
        else:
            continue
        raw += 1
        s_tags, t_tags = key_to_tags.get(src), key_to_tags.get(tgt)
        if not s_tags or not t_tags:
            continue
        by_type[e["type"]] += 1
        for s in s_tags:
            for t in t_tags:
                if s != t:
                    pred.add((s, t))
    tp = len(pred & gold_edges)
    tp_anc = sum(1 for s, t in pred if s in ancestors(t, parents))
    judgeable_gold = {
        (s, t) for s, t in gold_edges if s in extracted_tags and t in extracted_tags and (s in fed or t in fed)
    }
    p, _, _ = prf(tp, len(pred), len(judgeable_gold))
    rec = len(pred & judgeable_gold) / len(judgeable_gold) if judgeable_gold else 0.0
    out = {
        "concepts_fed": len(chosen),
        "turns": turns_fed,
        "seconds": round(time.perf_counter() - started, 1),
        "concept_recall": r4(len(extracted_tags & gold_fed) / len(gold_fed)) if gold_fed else 0.0,
        "extracted_concepts": len(node_keys),
        "dependency_edges_extracted": raw,
        "judged_edges": len(pred),
        "judged_by_type": by_type,
        "precision": r4(p),
        "ancestor_precision": r4(tp_anc / len(pred)) if pred else 0.0,
        "recall_judgeable": r4(rec),
        "judgeable_gold_edges": len(judgeable_gold),
        "recall_all_gold": r4(tp / len(gold_edges)),
    }
    wrong = sorted(pred - gold_edges)
    out["wrong_examples"] = [f"{s} -> {t}" for s, t in wrong[:12]]
    out["right_examples"] = [f"{s} -> {t}" for s, t in sorted(pred & gold_edges)[:12]]
    if verbose:
        print(f"[prereq] {out['concepts_fed']} concepts, {turns_fed} turns, {out['seconds']} s")
        print("  ", {k: v for k, v in out.items() if not k.endswith("examples")})
        print("   wrong:", out["wrong_examples"])
        print("   right:", out["right_examples"])
    return out


if __name__ == "__main__":
    protocol_cli(run)
