"""Lead's scorer for the blind natural-stance sets: python blind_eval.py FILE [--misses]. Run from a checkout."""
import json, sys
from collections import Counter, defaultdict
from graphmem.extraction.extractor import ConceptExtractor
from graphmem.extraction.normalize import concept_key
from graphmem.models import Catalog, CatalogConcept
LABELS = ("interested", "confused", "knows", "dislikes", "none")
items = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
by = defaultdict(list)
for it in items: by[it["language"]].append(it)
for lang, its in sorted(by.items()):
    ex = ConceptExtractor(Catalog(concepts=[CatalogConcept(name=n) for n in sorted({i["concept"] for i in its})]))
    gold, pred, miss = [], [], []
    for it in its:
        r = ex.extract([it["text"]], ["user"])[0]
        k = concept_key(it["concept"])
        f = [s.stance.value for s in r.stances if s.key == k]
        p = f[-1] if f else "none"
        gold.append(it["label"]); pred.append(p)
        if p != it["label"]: miss.append((it["label"], p, it["text"], it["concept"]))
    acc = sum(g == p for g, p in zip(gold, pred)) / len(gold)
    cm = Counter(zip(gold, pred))
    print(f"{lang}: accuracy {acc:.3f} ({len(gold)} items)")
    print("  gold\\pred " + " ".join(f"{c[:5]:>6}" for c in LABELS))
    for g in LABELS: print(f"  {g:10}" + " ".join(f"{cm[(g, p)]:6d}" for p in LABELS))
    if "--misses" in sys.argv:
        for m in miss: print("   ", m)
