"""Stance accuracy on natural sentences: JSONL items {id, language, text, concept, label}.

One user per sentence. Per language, a tiny catalog holding every item's concept is built (as a tenant
catalog would be), so the catalog matcher finds the concept and only the stance is judged. Each
sentence goes through graphmem's real extractor as a user turn with nothing before it — the path the
API takes for a user turn (ConceptExtractor.extract) — offline, no Neo4j. The prediction is the
stance the turn gives that concept's key, or ``none``.

Reported per language: accuracy, per-class precision / recall / F1, the confusion matrix (rows gold,
columns predicted), how many concepts the matcher did not find, and the misses.

    python -m eval.natural_stance_eval FILE.jsonl [FILE2.jsonl ...] [--errors] [--save NAME]

``--save NAME`` writes eval/results/NAME.json (a mapping file -> result). Labels: interested,
confused, knows, dislikes, none.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from eval.stance_eval import LABELS, metrics  # noqa: E402
from graphmem.extraction.extractor import ConceptExtractor  # noqa: E402
from graphmem.extraction.normalize import concept_key  # noqa: E402
from graphmem.models import Catalog, CatalogConcept  # noqa: E402

RESULTS = REPO / "eval" / "results"


def load(path: Path) -> list[dict[str, Any]]:
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for it in items:
        if it["label"] not in LABELS:
            raise ValueError(f"{path}: item {it['id']}: label {it['label']!r} not in {LABELS}")
        if it["language"] not in ("en", "zh"):
            raise ValueError(f"{path}: item {it['id']}: language {it['language']!r}")
    return items


def predict(items: list[dict[str, Any]]) -> tuple[list[str], list[bool]]:
    """Predicted stance per item and whether the concept was found in the sentence at all."""
    preds = [""] * len(items)
    found = [False] * len(items)
    by_lang: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        by_lang[it["language"]].append(i)
    for idxs in by_lang.values():
        names = sorted({items[i]["concept"] for i in idxs})
        extractor = ConceptExtractor(Catalog(concepts=[CatalogConcept(name=n) for n in names]))
        for i in idxs:
            ex = extractor.extract([items[i]["text"]], ["user"])[0]
            key = concept_key(items[i]["concept"])
            found[i] = any(m.key == key for m in ex.concepts)
            hits = [s.stance.value for s in ex.stances if s.key == key]
            preds[i] = hits[-1] if hits else "none"
    return preds, found


def evaluate(items: list[dict[str, Any]]) -> dict[str, Any]:
    preds, found = predict(items)
    out: dict[str, Any] = {}
    for lang in ("en", "zh"):
        sel = [i for i, it in enumerate(items) if it["language"] == lang]
        if not sel:
            continue
        res = metrics([items[i]["label"] for i in sel], [preds[i] for i in sel])
        res["concept_not_found"] = sum(1 for i in sel if not found[i])
        res["misses"] = [
            {
                "id": items[i]["id"],
                "text": items[i]["text"],
                "concept": items[i]["concept"],
                "gold": items[i]["label"],
                "pred": preds[i],
                "found": found[i],
            }
            for i in sel
            if preds[i] != items[i]["label"]
        ]
        out[lang] = res
    return out


def show(name: str, res: dict[str, Any], errors: bool) -> None:
    for lang, r in res.items():
        print(
            f"[natural-stance] {name} {lang}: acc {r['accuracy']:.3f} (n={r['items']}, concept not found {r['concept_not_found']})"
        )
        print("   gold\\pred  " + " ".join(f"{p[:5]:>5}" for p in LABELS))
        for g in LABELS:
            print(f"   {g:10} " + " ".join(f"{r['confusion'][g][p]:5d}" for p in LABELS))
        print("   " + ", ".join(f"{c} F1 {r['per_class'][c]['f1']:.2f}" for c in LABELS))
        if errors:
            for m in r["misses"]:
                flag = "" if m["found"] else " [concept not found]"
                print(f"     gold={m['gold']:10} pred={m['pred']:10} {m['concept']!r}: {m['text']}{flag}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--errors", action="store_true", help="print every miss")
    ap.add_argument("--save", help="write eval/results/<SAVE>.json")
    args = ap.parse_args()
    results: dict[str, Any] = {}
    for path in args.files:
        res = evaluate(load(path))
        show(path.name, res, args.errors)
        results[path.name] = res
    if args.save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{args.save}.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()
