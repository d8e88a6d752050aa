"""English extraction speed with and without the trained stance model (stance_model.py), alternated in one
run so both sides see the same machine load. Bridge student turns (as bench/extraction_throughput.py) with
and without the Metacademy catalog, plus the English natural-stance sentences (every one names a concept,
so every turn reaches the model). Prints medians and the on/off ratio, and the share of the model-side
extraction time spent inside the model (stance_model.revise): on a shared, loaded machine the ratio of two
timings is noisy, the share is not (both parts slow down together).

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
    spent = [0.0]
    revise = stance_model.revise

    def timed(*a):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        result = revise(*a)
        spent[0] += time.perf_counter() - t0
        return result

    stance_model.revise = timed
    out = {}
    for name, (extractor, texts) in cases.items():
        shares: list[float] = []
        roles = ["user"] * len(texts)
        extractor.extract(texts[:64], roles[:64])
        times: dict[str, list[float]] = {"rules": [], "rules+model": []}
        for n in range(args.rounds):
            # ABBA order; the model's VADER cache emptied so repeated texts are no free lunch.
            for side in ("rules", "rules+model") if n % 2 == 0 else ("rules+model", "rules"):
                stance_model.install(None, off=side == "rules")
                stance_model._vader_scores.cache_clear()
                spent[0] = 0.0
                t0 = time.perf_counter()
                extractor.extract(texts, roles)
                times[side].append(time.perf_counter() - t0)
                if side == "rules+model":
                    shares.append(spent[0] / times[side][-1])
        stance_model.install(None)
        med = {k: statistics.median(v) for k, v in times.items()}
        out[name] = {
            "turns": len(texts),
            "rules_turns_per_s": round(len(texts) / med["rules"]),
            "rules_model_turns_per_s": round(len(texts) / med["rules+model"]),
            "time_ratio_model_vs_rules": round(med["rules+model"] / med["rules"], 3),
            "model_share_of_time": round(statistics.median(shares), 4),
        }
        print(name, out[name], flush=True)
    stance_model.revise = revise
    print(json.dumps(out, indent=2))
    (REPO / "bench" / "results").mkdir(exist_ok=True)
    (REPO / "bench" / "results" / "stance_model_speed.json").write_text(json.dumps(out, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
