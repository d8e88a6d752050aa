"""Extraction throughput: turns/s and words/s, English and Chinese, with and without
a catalog (the Metacademy concept graph, converted at run time from
../shared/data/metacademy/concepts.jsonl). Prints medians of several runs.

    python bench/extraction_throughput.py [--runs 5] [--turns 2000]

Extraction only (no store); single process. Not asserted in tests.
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
sys.path.insert(0, str(REPO / "eval"))

from extraction_eval import load_bridge, load_kdconv, shared_data_dir  # noqa: E402

from graphmem.extraction import ConceptExtractor  # noqa: E402
from graphmem.models import Catalog  # noqa: E402


def metacademy_catalog(data: Path) -> Catalog:
    concepts, relations, names = [], [], {}
    for line in (data / "metacademy" / "concepts.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        names[item["tag"]] = item["title"]
    seen: set[str] = set()
    for line in (data / "metacademy" / "concepts.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        title = item["title"].strip()
        if title.casefold() in seen:
            continue
        seen.add(title.casefold())
        concepts.append({"name": title, "id": item["tag"], "type": "topic"})
        for pre in item.get("prerequisites", []):
            if pre["tag"] in names and pre["tag"] != item["tag"]:
                relations.append({"source": pre["tag"], "type": "prerequisite", "target": item["tag"]})
    from graphmem.extraction.catalog_io import _validate

    return _validate({"concepts": concepts, "relations": relations})


def english_turns(data: Path, n: int) -> list[str]:
    turns = [t for c in load_bridge(data, "train") for t in c.turns if len(t.split()) >= 3]
    extra = [
        "I want to learn linear regression before neural networks.",
        "What is the difference between gradient descent and Newton's method?",
        "I already know Python basics but SQLAlchemy confuses me.",
        "Bayesian networks build on conditional probability, right?",
    ]
    turns = extra + turns
    return (turns * (n // len(turns) + 1))[:n]


def chinese_turns(data: Path, n: int) -> list[str]:
    turns = [t for c in load_kdconv(data) for t in c.turns if len(t) >= 4]
    return (turns * (n // len(turns) + 1))[:n]


def bench(extractor: ConceptExtractor, texts: list[str], runs: int, words: int) -> dict[str, float]:
    extractor.extract(texts[:64])  # warm-up: loads pipelines and caches
    times, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        extractor.extract(texts)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    med = statistics.median(times)
    return {
        "turns_per_s": round(len(texts) / med),
        "words_per_s": round(words / med),
        "median_s": round(med, 3),
        # CPU time is what the shared machine's load does not inflate (wall time does).
        "cpu_s_per_1k_turns": round(statistics.median(cpu) * 1000 / len(texts), 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--turns", type=int, default=2000)
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, as the target is stated
    data = shared_data_dir()
    catalog = metacademy_catalog(data)
    en, zh = english_turns(data, args.turns), chinese_turns(data, args.turns)
    en_words = sum(len(t.split()) for t in en)
    # Chinese has no spaces: count jieba tokens as words.
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    zh_words = sum(len(list(jieba.cut(t))) for t in zh)
    plain, with_cat = ConceptExtractor(), ConceptExtractor(catalog)
    t0 = time.perf_counter()
    ConceptExtractor(catalog)
    build_ms = (time.perf_counter() - t0) * 1000
    results = {
        "catalog": {
            "concepts": len(catalog.concepts),
            "relations": len(catalog.relations),
            "build_ms": round(build_ms, 1),
        },
        "en_no_catalog": bench(plain, en, args.runs, en_words),
        "en_metacademy": bench(with_cat, en, args.runs, en_words),
        "zh_no_catalog": bench(plain, zh, args.runs, zh_words),
        "zh_metacademy": bench(with_cat, zh, args.runs, zh_words),
        "turns": args.turns,
        "load_1min_after": round(os.getloadavg()[0], 2),
        "avg_words_en": round(en_words / len(en), 1),
        "avg_chars_zh": round(sum(map(len, zh)) / len(zh), 1),
    }
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
