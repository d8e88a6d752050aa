"""English extraction speed with and without the trained stance model (stance_model.py), alternated in one
run so both sides see the same machine load. Bridge student turns (as bench/extraction_throughput.py) with
and without the Metacademy catalog, plus the English natural-stance sentences (every one names a concept,
so every turn reaches the model). Prints medians and the on/off ratio.

    python bench/stance_model_speed.py [--rounds 5] [--turns 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "eval"))

from extraction_throughput import english_turns, metacademy_catalog, shared_data_dir  # noqa: E402

from graphmem.extraction import ConceptExtractor, stance_model  # noqa: E402
from graphmem.models import Catalog, CatalogConcept  # noqa: E402


def natural(n: int) -> tuple[list[str], Catalog]:
    rows = []
    for path in sorted((REPO / "eval" / "devsets").glob("natural_stances_*.jsonl")):
        rows += [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = [r for r in rows if r["language"] == "en"]
    texts = [r["text"] for r in rows]
    catalog = Catalog(concepts=[CatalogConcept(name=c) for c in sorted({r["concept"] for r in rows})])
    return (texts * (n // len(texts) + 1))[:n], catalog


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--turns", type=int, default=1000)
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    data = shared_data_dir()
    bridge = english_turns(data, args.turns)
    sentences, nat_catalog = natural(args.turns)
    cases = {
        "en_no_catalog": (ConceptExtractor(), bridge),
        "en_metacademy": (ConceptExtractor(metacademy_catalog(data)), bridge),
        "en_natural_sentences": (ConceptExtractor(nat_catalog), sentences),
    }
    out = {}
    for name, (extractor, texts) in cases.items():
        roles = ["user"] * len(texts)
        extractor.extract(texts[:64], roles[:64])
        times: dict[str, list[float]] = {"rules": [], "rules+model": []}
        for _ in range(args.rounds):
            for side in ("rules", "rules+model"):
                stance_model.install(None, off=side == "rules")
                t0 = time.perf_counter()
                extractor.extract(texts, roles)
                times[side].append(time.perf_counter() - t0)
        stance_model.install(None)
        med = {k: statistics.median(v) for k, v in times.items()}
        out[name] = {
            "turns": len(texts),
            "rules_turns_per_s": round(len(texts) / med["rules"]),
            "rules_model_turns_per_s": round(len(texts) / med["rules+model"]),
            "time_ratio_model_vs_rules": round(med["rules+model"] / med["rules"], 3),
        }
        print(name, out[name], flush=True)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
