"""Extraction quality on shared real data (never copied into the repo).

KdConv (Chinese, knowledge-grounded chats): entity recall. Gold entities of a
conversation are the `name` fields of the knowledge triples attached to its
turns, with the disambiguation suffix stripped (`恋恋笔记本（美国2004年…）` ->
`恋恋笔记本`). A gold entity is found when some concept extracted from the
conversation's turns has the same concept_key ("exact"); "overlap" also counts
a found key that contains the gold key or is contained in it (≥ 2 chars).
Many gold entities never appear literally in the chat (the triples are
knowledge, not mentions), so recall is also reported over the gold entities
whose key occurs in the normalised conversation text ("present").

Bridge (English maths tutoring chats): junk-concept rate. A concept is junk when
  (a) its key has no alphabetic word of 3+ letters ("4 m", "x", "36"), or
  (b) all its words are in EVAL_GENERIC below (chat filler, people, school
      logistics) — a list written for this evaluation, independent of the
      extractor's own stop list, or
  (c) it contains an anonymisation placeholder ("[STUDENT]").
A stricter, heuristic "off-topic" rate also counts concepts with no word in a
small maths vocabulary (MATH_WORDS) or in the lesson topic's words.

Run:  python eval/extraction_eval.py   (writes eval/results/extraction.json)
Data: ../shared/data relative to the repo root, or $GRAPHMEM_SHARED_DATA.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from graphmem.extraction import ConceptExtractor, concept_key  # noqa: E402
from graphmem.extraction.normalize import normalize  # noqa: E402

KDCONV_DOMAINS = ("film", "music", "travel")
_DISAMBIG = re.compile(r"\s*[（(][^（）()]*[)）]\s*$")

EVAL_GENERIC = frozenset(
    """
    ok okay yes yeah yep no nope sure hi hello hey thanks thank bye sorry idk lol please
    thing things stuff question questions answer answers problem problems way lot time times
    minute minutes second seconds day days week today point points job work try turn
    student students tutor teacher friend friends mom dad class lesson homework chat session
    number numbers one ones kind sort part bit something anything everything nothing
    """.split()
)
MATH_WORDS = frozenset(
    """
    add addition sum subtract subtraction difference multiply multiplication product divide division
    quotient remainder fraction fractions numerator denominator decimal decimals percent percentage
    ratio rate proportion area perimeter volume length width height base side sides angle angles
    triangle rectangle square circle radius diameter polygon shape shapes figure figures cube prism
    pyramid cylinder cone sphere face faces edge edges vertex vertices dimension dimensional
    graph graphs chart table data pictograph bar line plot axis coordinate point equation expression
    variable value place digit digits tens ones hundreds thousands round rounding estimate number
    integer whole even odd factor factors multiple multiples prime composite exponent power unit
    units measure measurement meter centimeter inch foot feet yard mile gram kilogram liter money
    dollar cent cents time hour minute clock pattern sequence mean median mode range probability
    symmetry congruent parallel perpendicular formula algebra geometry operation operations
    """.split()
)


@dataclass
class Conversation:
    turns: list[str]
    roles: list[str]
    gold: list[str]  # KdConv gold entity names (empty for Bridge)
    topic: str = ""  # Bridge lesson topic


def shared_data_dir() -> Path:
    env = os.environ.get("GRAPHMEM_SHARED_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    if not (path / "kdconv").is_dir() or not (path / "bridge").is_dir():
        raise FileNotFoundError(
            f"shared evaluation data not found at {path} (expected kdconv/ and bridge/); "
            "set GRAPHMEM_SHARED_DATA to the folder holding them"
        )
    return path


def strip_disambiguation(name: str) -> str:
    return _DISAMBIG.sub("", name).strip()


def load_kdconv(data: Path, per_domain: int | None = None) -> list[Conversation]:
    convs = []
    for domain in KDCONV_DOMAINS:
        items = json.loads((data / "kdconv" / domain / "dev.json").read_text(encoding="utf-8"))
        for item in items[:per_domain]:
            turns, gold = [], []
            for msg in item["messages"]:
                turns.append(msg["message"])
                for attr in msg.get("attrs", []):
                    name = strip_disambiguation(attr.get("name", ""))
                    if name and name not in gold:
                        gold.append(name)
            roles = ["user" if i % 2 == 0 else "assistant" for i in range(len(turns))]
            convs.append(Conversation(turns, roles, gold))
    return convs


def load_bridge(data: Path, split: str = "validation", limit: int | None = None) -> list[Conversation]:
    import ast

    items = json.loads((data / "bridge" / f"{split}.json").read_text(encoding="utf-8"))
    convs = []
    for item in items[:limit]:
        hist = item["c_h"]
        if isinstance(hist, str):
            hist = ast.literal_eval(hist)
        turns = [h["text"] for h in hist]
        roles = ["user" if h["user"] == "student" else "assistant" for h in hist]
        convs.append(Conversation(turns, roles, [], item.get("lesson_topic", "")))
    return convs


def kdconv_recall(extractor: ConceptExtractor, convs: list[Conversation]) -> dict[str, Any]:
    total = present = exact = exact_present = overlap = 0
    for conv in convs:
        results = extractor.extract(conv.turns, conv.roles)
        found = {c.key for r in results for c in r.concepts}
        text_norm = normalize("\n".join(conv.turns))
        for name in conv.gold:
            g = concept_key(name)
            if not g:
                continue
            total += 1
            is_present = g in text_norm
            present += is_present
            if g in found:
                exact += 1
                exact_present += is_present
                overlap += 1
            elif any(len(k) >= 2 and (g in k or k in g) for k in found):
                overlap += 1
    return {
        "conversations": len(convs),
        "gold_entities": total,
        "gold_present_in_text": present,
        "recall_exact": round(exact / total, 4) if total else 0.0,
        "recall_overlap": round(overlap / total, 4) if total else 0.0,
        "recall_exact_present": round(exact_present / present, 4) if present else 0.0,
    }


def junk_reason(key: str, topic: str) -> tuple[str | None, bool]:
    """(junk reason or None, off_topic) for one concept key — see the module doc."""
    words = re.findall(r"[a-z]+", key)
    off_topic = not any(w in MATH_WORDS or w.rstrip("s") in MATH_WORDS for w in words) and not any(
        w in concept_key(topic).split() or w in topic.lower() for w in words if len(w) >= 4
    )
    if "[" in key or "student]" in key or "tutor]" in key:
        return "placeholder", off_topic
    if not any(len(w) >= 3 for w in words) and not re.search(r"[\u4e00-\u9fff]{2}", key):
        return "no_word", off_topic
    if words and all(w in EVAL_GENERIC for w in words):
        return "generic", off_topic
    return None, off_topic


def bridge_junk(extractor: ConceptExtractor, convs: list[Conversation]) -> dict[str, Any]:
    turns = concepts = junk = off = student_turns = student_concepts = student_junk = 0
    turns_with_junk = 0
    reasons: dict[str, int] = {}
    examples: dict[str, int] = {}
    for conv in convs:
        for _text, role, res in zip(conv.turns, conv.roles, extractor.extract(conv.turns, conv.roles)):
            turns += 1
            n_junk = 0
            for c in res.concepts:
                concepts += 1
                reason, off_topic = junk_reason(c.key, conv.topic)
                off += off_topic
                if reason:
                    n_junk += 1
                    reasons[reason] = reasons.get(reason, 0) + 1
                    examples[c.key] = examples.get(c.key, 0) + 1
            junk += n_junk
            turns_with_junk += n_junk > 0
            if role == "user":
                student_turns += 1
                student_concepts += len(res.concepts)
                student_junk += n_junk
    return {
        "conversations": len(convs),
        "turns": turns,
        "concepts": concepts,
        "concepts_per_turn": round(concepts / turns, 4) if turns else 0.0,
        "junk_per_turn": round(junk / turns, 4) if turns else 0.0,
        "junk_share_of_concepts": round(junk / concepts, 4) if concepts else 0.0,
        "turns_with_junk": round(turns_with_junk / turns, 4) if turns else 0.0,
        "offtopic_share_of_concepts": round(off / concepts, 4) if concepts else 0.0,
        "student_turns": student_turns,
        "student_concepts_per_turn": round(student_concepts / student_turns, 4) if student_turns else 0.0,
        "student_junk_per_turn": round(student_junk / student_turns, 4) if student_turns else 0.0,
        "junk_reasons": reasons,
        "top_junk": sorted(examples.items(), key=lambda kv: -kv[1])[:15],
    }


def main() -> int:
    try:
        data = shared_data_dir()
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    extractor = ConceptExtractor()
    t0 = time.perf_counter()
    kd = kdconv_recall(extractor, load_kdconv(data))
    t1 = time.perf_counter()
    br = {split: bridge_junk(extractor, load_bridge(data, split)) for split in ("validation", "train")}
    t2 = time.perf_counter()
    # Example junk strings come from the data: printed for the reader, never written to the repo.
    examples = {split: r.pop("top_junk") for split, r in br.items()}
    out = {
        "kdconv_entity_recall": kd,
        "bridge_junk": br,
        "seconds": {"kdconv": round(t1 - t0, 2), "bridge": round(t2 - t1, 2)},
        "definitions": (__doc__ or "").strip().split("\n\nRun:")[0],
    }
    dest = REPO / "eval" / "results" / "extraction.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"kdconv_entity_recall": kd, "bridge_junk": br}, ensure_ascii=False, indent=2))
    print("most frequent junk keys:", json.dumps(examples, ensure_ascii=False))
    print(f"wrote {dest.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
