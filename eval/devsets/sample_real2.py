"""Seeded sampler and span checker of ``stances_real2.jsonl`` (graphmem issue 13: more real English turns).

The sampler writes *candidate references* (no label, no text) to a file outside the repo; each candidate
is then read by hand (``--show``) and labelled or skipped. Only train splits are read:

* ``redial/train.jsonl``, seeker turns (text from ``eval/redial_data.py``: ``@id`` replaced by the title).
  A turn "names something" when it holds a movie title of its chat (an ``@id`` of the seeker's raw text),
  a genre / kind of ``eval/data/movie_genres.txt`` (with a trailing "movies" / "films" when written), or a
  person: a run of two or more capitalised words, not inside a title, found in seeker turns of at least two
  chats (derived from the chats, no outside list).
* ``bridge/train.json``, student turns (``c_h`` and ``c_r``) naming a maths term of
  ``eval/devsets/real2_maths_terms.txt`` (hand-written, with the misspellings students write).

Half the turns of each source are drawn uniformly among the turns naming something, half among "marked"
turns: for ReDial a VADER compound < -0.05 or a negation token (not, n't, never, no), so dislikes, "not
seen" and struggles are well represented; for Bridge a difficulty or knowing cue (``_BRIDGE_MARK``).
A turn gives at most two candidates (two different concepts); a turn already in ``stances.jsonl`` (any
concept) is skipped, so no turn text is shared by the two files.

    python -m eval.devsets.sample_real2 --out /tmp/real2/candidates.jsonl   # sample
    python -m eval.devsets.sample_real2 --show /tmp/real2/candidates.jsonl  # read them, 2 turns before
    python -m eval.devsets.sample_real2 --check                             # assert every span of the file
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from eval.common import REPO, shared_data_dir
from eval.redial_data import load_chats
from eval.stance_eval import LABELS, turn_text

DEVSETS = REPO / "eval" / "devsets"
OUT_FILE = DEVSETS / "stances_real2.jsonl"
OLD_FILE = DEVSETS / "stances.jsonl"
GENRES = REPO / "eval" / "data" / "movie_genres.txt"
MATHS_TERMS = DEVSETS / "real2_maths_terms.txt"
REDIAL = "redial/train.jsonl"
BRIDGE = "bridge/train.json"
SEED = 20261204
PER_TURN = 2

_NEGATION = re.compile(r"\b(?:not|never|no)\b|n't\b|\bnt\b", re.IGNORECASE)
_BRIDGE_MARK = re.compile(
    r"don'?t get|do not get|\bidk\b|confus|\bi know\b|\beasy\b|\bhard\b|\?|don'?t know|understand|help",
    re.IGNORECASE,
)
# Two or more capitalised words in a row: person candidates ("Will Ferrell", "Jim Carrey").
_CAPS_RUN = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z'.]+)+\b")
_KIND_TAIL = r"(?: (?:movies?|films?|flicks?|ones|comedies))?"


def _lines(path: Path) -> list[str]:
    return [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]


def _kind_pattern() -> re.Pattern[str]:
    names = sorted({a.strip() for row in _lines(GENRES) for a in row.split("|") if a.strip()}, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")" + _KIND_TAIL + r"\b", re.IGNORECASE)


def _term_pattern() -> re.Pattern[str]:
    names = sorted(set(_lines(MATHS_TERMS)), key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")(?:e?s)?\b", re.IGNORECASE)


def _old_keys() -> set[tuple[str, str, str]]:
    """(conversation, message, concept) of stances.jsonl, plus (conversation, message, "") per turn."""
    keys = set()
    for line in OLD_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip():
            src, conv, msg, concept = json.loads(line)["id"].split("#", 3)
            keys |= {(conv, msg, concept), (conv, msg, "")}
    return keys


def _overlaps(a: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(a[0] < e and s < a[1] for s, e in spans)


def redial_turns(data: Path) -> list[dict[str, Any]]:
    """Seeker turns of ReDial train with their concept spans (kind: title / phrase)."""
    kinds = _kind_pattern()
    chats = load_chats(data, "train")
    turns: list[dict[str, Any]] = []
    for chat in chats:
        prev: list[str] = []
        for m in chat.messages:
            if m.role == "user":
                spans: list[dict[str, Any]] = []
                for mid in re.findall(r"@(\d+)", m.raw):
                    title = chat.titles.get(mid)
                    at = m.text.find(title) if title else -1
                    if title and at >= 0:
                        spans.append({"concept": title, "start": at, "end": at + len(title), "kind": "title"})
                taken = [(s["start"], s["end"]) for s in spans]
                for hit in kinds.finditer(m.text):
                    if not _overlaps(hit.span(), taken):
                        spans.append(
                            {"concept": hit.group(0), "start": hit.start(), "end": hit.end(), "kind": "phrase"}
                        )
                turns.append(
                    {
                        "source": REDIAL,
                        "conversation": chat.conversation_id,
                        "message": m.message_id,
                        "text": m.text,
                        "spans": spans,
                        "taken": taken,
                        "before": prev[-2:],
                    }
                )
            prev.append(("S: " if m.role == "user" else "R: ") + m.text)
    # Persons: capitalised runs outside titles, in seeker turns of >= 2 chats.
    chats_of: dict[str, set[str]] = defaultdict(set)
    for t in turns:
        for hit in _CAPS_RUN.finditer(t["text"]):
            if hit.start() > 0 and not _overlaps(hit.span(), t["taken"]):
                chats_of[hit.group(0)].add(t["conversation"])
    persons = {n for n, c in chats_of.items() if len(c) >= 2}
    for t in turns:
        for hit in _CAPS_RUN.finditer(t["text"]):
            if hit.group(0) in persons and hit.start() > 0 and not _overlaps(hit.span(), t["taken"]):
                t["spans"].append({"concept": hit.group(0), "start": hit.start(), "end": hit.end(), "kind": "phrase"})
    return turns


def _vader_marked(text: str, analyzer: Any) -> bool:
    return analyzer.polarity_scores(text)["compound"] < -0.05 or bool(_NEGATION.search(text))


def _bridge_student_turns(data: Path) -> list[dict[str, Any]]:
    terms = _term_pattern()
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, int]] = set()
    for item in json.loads((data / BRIDGE).read_text(encoding="utf-8")):
        history: list[dict[str, Any]] = []
        for field in ("c_h", "c_r"):
            history += item[field] if isinstance(item[field], list) else ast.literal_eval(item[field])
        prev: list[str] = []
        for t in history:
            key = (item["c_id"], int(t["id"]))
            if t.get("user") == "student" and key not in seen:
                seen.add(key)
                spans = [
                    {"concept": h.group(0), "start": h.start(), "end": h.end(), "kind": "term"}
                    for h in terms.finditer(t["text"])
                ]
                out.append(
                    {
                        "source": BRIDGE,
                        "conversation": item["c_id"],
                        "message": int(t["id"]),
                        "text": t["text"],
                        "spans": spans,
                        "before": prev[-2:],
                    }
                )
            prev.append(("S: " if t.get("user") == "student" else "T: ") + t["text"])
    return out


def _pick(turns: list[dict[str, Any]], marked: list[bool], rng: random.Random, old: set[tuple[str, str, str]]):
    """Candidates: uniform and marked turns alternately, each pool shuffled once; <= 2 concepts per turn."""
    pools = {
        "uniform": [t for t in turns if t["spans"]],
        "marked": [t for t, m in zip(turns, marked) if m and t["spans"]],
    }
    for p in pools.values():
        rng.shuffle(p)
    used: set[tuple[str, int]] = set()
    out: list[dict[str, Any]] = []
    for i in range(max(len(p) for p in pools.values())):
        for name, pool in pools.items():
            if i >= len(pool) or (pool[i]["conversation"], pool[i]["message"]) in used:
                continue
            t = pool[i]
            if (str(t["conversation"]), str(t["message"]), "") in old:
                continue  # a turn of stances.jsonl: its text must not sit in both files
            used.add((t["conversation"], t["message"]))
            by_concept: dict[str, dict[str, Any]] = {}
            for s in t["spans"]:
                if (str(t["conversation"]), str(t["message"]), s["concept"]) not in old:
                    by_concept.setdefault(s["concept"], s)
            chosen = list(by_concept.values())
            rng.shuffle(chosen)
            # A phrase (genre / person) first when there is one: they are rarer than titles.
            chosen.sort(key=lambda s: s["kind"] == "title")
            for s in chosen[:PER_TURN]:
                out.append(
                    {
                        "id": f"{t['source']}#{t['conversation']}#{t['message']}#{s['concept']}",
                        "source": t["source"],
                        "conversation": t["conversation"],
                        "message": t["message"],
                        "concept": s["concept"],
                        "start": s["start"],
                        "end": s["end"],
                        "pool": name,
                        "kind": s["kind"],
                    }
                )
    return out


def sample(out: Path) -> None:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    data = shared_data_dir()
    old = _old_keys()
    analyzer = SentimentIntensityAnalyzer()
    red = redial_turns(data)
    red_c = _pick(red, [_vader_marked(t["text"], analyzer) for t in red], random.Random(SEED), old)
    bri = _bridge_student_turns(data)
    bri_c = _pick(bri, [bool(_BRIDGE_MARK.search(t["text"])) for t in bri], random.Random(SEED + 1), old)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for k, c in enumerate(red_c + bri_c):
            fh.write(json.dumps({"k": k, **c}, ensure_ascii=False) + "\n")
    print(f"redial {len(red_c)} candidates, bridge {len(bri_c)} -> {out}")
    print(Counter((c["source"], c["pool"], c["kind"]) for c in red_c + bri_c))


def show(path: Path, first: int, last: int) -> None:
    """Print candidates k in [first, last] with the two turns before them (for labelling by hand)."""
    data = shared_data_dir()
    ctx: dict[tuple[str, int], list[str]] = {}
    for t in redial_turns(data) + _bridge_student_turns(data):
        ctx[(str(t["conversation"]), t["message"])] = t["before"]
    for line in path.read_text(encoding="utf-8").splitlines():
        c = json.loads(line)
        if first <= c["k"] <= last:
            text = turn_text(c, data)
            print(f"--- {c['k']} [{c['pool']}/{c['kind']}] <<{c['concept']}>>")
            for b in ctx[(str(c["conversation"]), c["message"])]:
                print("    " + b[:200])
            print("  > " + text)


def part_of(item_id: str) -> str:
    return "check" if int(hashlib.sha1(item_id.encode("utf-8")).hexdigest(), 16) % 3 == 0 else "tune"


def check(path: Path = OUT_FILE) -> None:
    """Every item's span holds its concept in the shared data's text; schema, part and overlap rules hold."""
    data = shared_data_dir()
    old = _old_keys()
    per_turn: Counter[tuple[str, str, int]] = Counter()
    ids: set[str] = set()
    counts: Counter[tuple[str, str, str]] = Counter()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        it = json.loads(line)
        text = turn_text(it, data)
        assert text[it["start"] : it["end"]] == it["concept"], f"line {n}: span does not hold {it['concept']!r}"
        assert it["id"] == f"{it['source']}#{it['conversation']}#{it['message']}#{it['concept']}", f"line {n}: id"
        assert it["id"] not in ids, f"line {n}: duplicate id"
        assert (str(it["conversation"]), str(it["message"]), "") not in old, f"line {n}: turn in stances.jsonl"
        assert it["source"] in (REDIAL, BRIDGE) and it["language"] == "en", f"line {n}: source / language"
        assert it["label"] in LABELS, f"line {n}: label {it['label']!r}"
        assert it["part"] == part_of(it["id"]), f"line {n}: part"
        ids.add(it["id"])
        per_turn[(it["source"], str(it["conversation"]), int(it["message"]))] += 1
        counts[(it["source"].split("/")[0], it["label"], it["part"])] += 1
    assert max(per_turn.values(), default=0) <= PER_TURN, "more than two items from one turn"
    print(f"{path.name}: {len(ids)} items, every span checked")
    for key in sorted(counts):
        print("  ", *key, counts[key])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="write candidates here (outside the repo)")
    ap.add_argument("--show", type=Path, help="print candidates of this file with context")
    ap.add_argument("--range", type=int, nargs=2, default=(0, 10**9), metavar=("FIRST", "LAST"))
    ap.add_argument("--check", action="store_true", help=f"check {OUT_FILE.name}")
    args = ap.parse_args(argv)
    if args.out:
        sample(args.out)
    if args.show:
        show(args.show, *args.range)
    if args.check:
        check()
    if not (args.out or args.show or args.check):
        ap.print_help(sys.stderr)


if __name__ == "__main__":
    main()
