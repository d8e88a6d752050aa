"""Seeded sample of real Chinese user turns for hand stance labels (eval/devsets/stances_real2_zh.jsonl).

Turns: the first speaker (even message indexes) of KdConv film / music / travel. The shared data holds only
the dev split (``kdconv/<domain>/dev.json``; no train.json), so the sample is drawn from dev conversations
that no earlier hand-labelled file touches: not the conversations of ``stances.jsonl`` and not the first 30 of
each domain (the block-label samples of eval/block_sample.py draw from those).

Concept of a turn: the longest knowledge-base entity of its conversation occurring verbatim in the turn
(ties: the earliest). Entities are the triples' head names (disambiguation suffix stripped) and the tails of
the relations naming works, people, companies, schools and nearby sights (``ENTITY_RELATIONS``; list tails
split at 、 and 》《), without names holding a digit.

Per domain, two seeded draws, one item per turn: ``PER_POOL`` turns among the turns holding a negation or
doubt marker (so dislikes, "没看过", questions and lukewarm replies are represented), then ``PER_POOL``
uniformly among every other turn naming an entity (marked or not). Each draw is a shuffled order, so turns skipped while labelling
are replaced by the next ones in that order.

    python -m eval.devsets.sample_real2_zh              # candidates with 2 turns of context (for labelling)
    python -m eval.devsets.sample_real2_zh --check      # every item's span against the shared data
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from eval.common import REPO, shared_data_dir
from eval.stance_eval import LABELS, load_items, turn_text

OUT = REPO / "eval" / "devsets" / "stances_real2_zh.jsonl"
EARLIER = REPO / "eval" / "devsets" / "stances.jsonl"
DOMAINS = ("film", "music", "travel")
SPLIT = "dev.json"  # the only KdConv split in the shared data
FIRST_FREE = 30  # conversations below this index are in the block-label samples
SEED = 20261204
PER_POOL = 60  # candidates per pool and domain (about 43 are kept; the rest replace skipped turns)
MARKERS = ("不", "没", "别", "吗", "？", "什么", "怎么", "一般", "还行")
_DISAMBIG = re.compile(r"\s*[（(][^（）()]*[)）]\s*$")
_LIST_SPLIT = re.compile(r"[、，,;；/]|》\s*《")
# Relations whose tail names a work, a person, a company, a school or a place to visit. The others hold
# categories (职业 演员, 类型 爱情, 国籍 美国, 星座), awards, dates, prices and addresses: not what a user
# has a taste for, and they would make most concepts generic words.
ENTITY_RELATIONS = frozenset(
    """主演 代表作品 代表作 主要作品 导演 编剧 制片人 出品公司 发行公司 原著 特别客串 创办人 创建人 创始人 董事长
    其它译名 别名 中文名 中文名称 外文名称 本名 毕业院校 专辑歌手 制作人 歌曲原唱 谱曲 填词 编曲 所属专辑 唱片公司
    华语旗下歌手 旗下艺人 公司艺人 经纪公司 MV导演 主唱 演唱者 翻唱 乐队成员 配偶 华语子公司 周边景点""".split()
)


@cache
def _conversations(data: Path, source: str) -> list[dict[str, Any]]:
    return json.loads((data / source).read_text(encoding="utf-8"))


def entities(conversation: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for msg in conversation["messages"]:
        for a in msg.get("attrs", []):
            out.add(_DISAMBIG.sub("", a["name"]).strip())
            if a.get("attrname") in ENTITY_RELATIONS:
                for piece in _LIST_SPLIT.split(str(a.get("attrvalue", ""))):
                    out.add(_DISAMBIG.sub("", piece.strip(" 《》")).strip())
    return {e for e in out if len(e) >= 2 and not re.search(r"\d", e)}


def concept_of(text: str, names: set[str]) -> tuple[str, int] | None:
    found = [(n, text.find(n)) for n in names if n in text]
    if not found:
        return None
    return min(found, key=lambda f: (-len(f[0]), f[1]))


def used_conversations() -> set[tuple[str, int]]:
    return {(it["source"], int(it["conversation"])) for it in load_items(EARLIER) if it["source"].startswith("kdconv/")}


def candidates(data: Path) -> list[dict[str, Any]]:
    used = used_conversations()
    rng = random.Random(SEED)
    out: list[dict[str, Any]] = []
    for domain in DOMAINS:
        source = f"kdconv/{domain}/{SPLIT}"
        convs = _conversations(data, source)
        every, marked = [], []
        for ci, conv in enumerate(convs):
            if ci < FIRST_FREE or (source, ci) in used:
                continue
            names = entities(conv)
            for mi in range(0, len(conv["messages"]), 2):
                text = conv["messages"][mi]["message"]
                hit = concept_of(text, names)
                if hit is None:
                    continue
                ref = {"source": source, "conversation": ci, "message": mi, "concept": hit[0], "start": hit[1]}
                every.append(ref)
                if any(m in text for m in MARKERS):
                    marked.append(ref)
        drawn = rng.sample(marked, min(PER_POOL, len(marked)))
        out += [{**ref, "pool": "marked"} for ref in drawn]
        rest = [ref for ref in every if ref not in drawn]
        out += [{**ref, "pool": "uniform"} for ref in rng.sample(rest, min(PER_POOL, len(rest)))]
    return out


def part_of(item_id: str) -> str:
    return "check" if int(hashlib.sha1(item_id.encode("utf-8")).hexdigest(), 16) % 3 == 0 else "tune"


def check(path: Path, data: Path) -> Counter[tuple[str, str, str]]:
    """Assert every item's span, id, label and part; return counts per (domain, label, part)."""
    items = load_items(path)
    ids = [it["id"] for it in items]
    assert len(ids) == len(set(ids)), "duplicate ids"
    turns = [(it["source"], it["conversation"], it["message"]) for it in items]
    assert len(turns) == len(set(turns)), "two items on one turn"
    counts: Counter[tuple[str, str, str]] = Counter()
    for it in items:
        text = turn_text(it, data)
        assert text[it["start"] : it["end"]] == it["concept"], f"{it['id']}: span does not hold the concept"
        assert it["id"] == f"{it['source']}#{it['conversation']}#{it['message']}#{it['concept']}", it["id"]
        assert it["message"] % 2 == 0, f"{it['id']}: not a first-speaker turn"
        assert it["label"] in LABELS and it["language"] == "zh", it["id"]
        assert it["part"] == part_of(it["id"]), f"{it['id']}: part"
        counts[(it["source"].split("/")[1], it["label"], it["part"])] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="assert the spans of the labelled file")
    args = parser.parse_args()
    data = shared_data_dir()
    if args.check:
        counts = check(OUT, data)
        print(f"{sum(counts.values())} items, every span holds its concept")
        for key in sorted(counts):
            print(*key, counts[key])
        return
    for i, ref in enumerate(candidates(data)):
        conv = _conversations(data, ref["source"])[ref["conversation"]]
        context = [m["message"] for m in conv["messages"][max(0, ref["message"] - 2) : ref["message"]]]
        print(
            json.dumps(
                {"n": i, **ref, "context": context, "text": conv["messages"][ref["message"]]["message"]},
                ensure_ascii=False,
            )
        )


if __name__ == "__main__":
    main()
