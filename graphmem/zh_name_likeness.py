"""How much a Chinese block item looks like a name worth showing, from its characters, jieba's dictionary and
where the conversation put it.

The rules of graphmem/zh_cuts.py and graphmem/zh_descriptors.py catch the shapes someone wrote down; many other items of a
Chinese block are details a speaker recited (东四环路红领巾桥, 4D影院, 北京年轻人) or pieces of a phrase
(成本高达, 钢材编织成), and they differ from names in two ways:

* their make-up: what the last piece is (a verb, a common noun, a place ending), how many dictionary pieces they
  have, how common the pieces are (``features``);
* their place in the text (``context_marks``): a name stands between punctuation and function words, or in 《》;
  a piece cut out of a longer word (清宫 of 乾清宫, 领巾公园 of 红领巾公园) is glued to another Han character on a
  side. Each stored mention keeps the marks of its two sides and an interest the set of its mentions' marks.

This module holds two logistic regressions, fitted by ``eval/train_zh_name_likeness.py`` on the hand-labelled KdConv
block items of ``eval/data/block_labels*.csv`` (never the held-out fresh9 and fresh10 samples) and, as names to keep, the Chinese
topics of the written stance sets (a model of KdConv alone read a learner's 线性代数 and 特征值 as recited details):
one over make-up and marks, and one over make-up alone for an item without marks (stored before marks were kept, or
named only through a reference). Out of fold on the KdConv items the marks lift the AUC from 0.83 to 0.90
(eval/results/NOTES.md). The weights are data (``graphmem/data/zh_name_likeness.json``), read without scikit-learn.

``probability(key, marks)`` is the model's probability that the item is about the user (a name of their topic);
graphmem/specificity.py keeps an item out of a block below ``threshold(marks)`` unless the conversation keeps coming
back to it, and an item only the assistant said below ``threshold_assistant_only(marks)``.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from graphmem.extraction.lexical import zipf
from graphmem.extraction.linear import softmax
from graphmem.extraction.zh.frames import after_topic_verb
from graphmem.wordlists import words
from graphmem.zh_descriptors import pieces

__all__ = [
    "NameLikeness",
    "context_marks",
    "features",
    "mention_marks",
    "model",
    "probability",
    "threshold",
    "threshold_assistant_only",
    "USER_MARK",
    "TOPIC_OBJECT_MARK",
]

MODEL_FILE = "zh_name_likeness.json"


def _side(ch: str, edge: str) -> str:
    if not ch:
        return edge  # the text's start or end
    if ch in words("zh_boundary_chars.txt"):
        return ch
    if "\u4e00" <= ch <= "\u9fff":
        return "H"  # glued to another Han character: a piece of a longer word?
    return "o"  # a Latin letter, a digit, another script


def context_marks(text: str, start: int, end: int) -> tuple[str, str]:
    """The marks of one mention at ``text[start:end]``: what stands on its left and on its right (``lc=`` / ``rc=``
    and a boundary character of graphmem/data/zh_boundary_chars.txt, ``H`` for any other Han character, ``o`` for
    anything else, ``^`` / ``$`` for the text's start and end)."""
    left = text[start - 1] if start > 0 else ""
    right = text[end] if end < len(text) else ""
    return "lc=" + _side(left, "^"), "rc=" + _side(right, "$")


USER_MARK = "u:"
TOPIC_OBJECT_MARK = "u:obj"  # a user's mention right after a verb of learning, liking, knowing or disliking


def mention_marks(
    text: str, start: int, end: int, surface: str, language: str, role: str = "assistant"
) -> tuple[str, ...]:
    """The marks a stored mention keeps: :func:`context_marks` of a Chinese mention whose span holds its surface
    (none for another language, or for a mention named through a reference such as 这部电影). A user's mention
    keeps them under ``u:`` (``u:rc=。``): a name at the end of a user's sentence (我想学吉他。) is the user's
    topic, where one at the end of an assistant's is most often a detail it recited (…出生于岩手県。)."""
    if language != "zh" or text[start:end] != surface:
        return ()
    marks = context_marks(text, start, end)
    if role != "user":
        return marks
    if after_topic_verb(text, start, end):
        # What the user learns, likes, knows or dislikes (我想学|吉他。): their topic, however everyday the word
        # (graphmem/specificity.py waives the word-level reasons for it).
        return (*(USER_MARK + m for m in marks), TOPIC_OBJECT_MARK)
    return tuple(USER_MARK + m for m in marks)


def _mark_features(marks: Collection[str]) -> dict[str, float]:
    out = dict.fromkeys(marks, 1.0)
    sides = {m.removeprefix(USER_MARK) for m in marks if m != TOPIC_OBJECT_MARK}  # glued or quoted, whoever said it
    left = {m for m in sides if m.startswith("lc=")}
    right = {m for m in sides if m.startswith("rc=")}
    if left == {"lc=H"}:
        out["glued_left"] = 1.0  # every mention was glued on its left
    if right == {"rc=H"}:
        out["glued_right"] = 1.0
    if "lc=《" in left and "rc=》" in right:
        out["quoted"] = 1.0  # a title in 《》
    return out


def features(key: str, marks: Collection[str] = ()) -> dict[str, float]:
    """The item's make-up: its length, its jieba pieces' tags (first, last, any), its first and last
    characters, and how common the whole and its end pieces are (wordfreq); with ``marks``
    (:func:`context_marks` of its mentions, as a set), each mark and whether every mention was glued on a side."""
    parts = pieces(key) or ((key, None),)
    tag = [t or "unk" for _, t in parts]
    out: dict[str, float] = {"bias": 1.0}
    out[f"pieces={min(len(parts), 4)}"] = 1.0
    out[f"len={min(len(key), 8)}"] = 1.0
    out["first_tag=" + tag[0]] = 1.0
    out["last_tag=" + tag[-1]] = 1.0
    for t in set(tag):
        out["tag=" + t] = 1.0
    if len(tag) > 1:
        # The first two and the last two tags together: a fragment opens with a verb or an adverb before a noun
        # (有|斯坦, 原来|香山) or ends in a verb after one (免费|参观); a name rarely does (out of fold AUC 0.883 -> 0.896).
        out[f"first2_tags={tag[0]}_{tag[1]}"] = 1.0
        out[f"last2_tags={tag[-2]}_{tag[-1]}"] = 1.0
    out["last_char=" + key[-1]] = 1.0
    out["first_char=" + key[0]] = 1.0
    out["last2=" + key[-2:]] = 1.0
    out["zipf_whole"] = zipf(key, "zh") / 8
    out["zipf_last"] = zipf(parts[-1][0], "zh") / 8
    out["zipf_first"] = zipf(parts[0][0], "zh") / 8
    if any(c.isascii() and c.isalpha() for c in key):
        out["latin"] = 1.0
    if any(c.isdigit() for c in key):
        out["digit"] = 1.0
    if marks:
        out.update(_mark_features(marks))
    return out


@dataclass(frozen=True)
class NameLikeness:
    weights: dict[str, tuple[float, float]]  # feature -> (weight of "not about the user", weight of "about")
    threshold: float  # below this probability an item stays out of the block
    version: str
    threshold_assistant_only: float = 0.0  # likewise for an item the user never said (higher: no uptake by the user)

    def probability(self, feats: dict[str, float]) -> float:
        return softmax(self.weights, feats, [0.0, 0.0])[1]


def _read(raw: dict[str, Any], version: str) -> NameLikeness:
    return NameLikeness(
        weights={str(k): (float(v[0]), float(v[1])) for k, v in raw["weights"].items()},
        threshold=float(raw["threshold"]),
        version=version,
        threshold_assistant_only=float(raw.get("threshold_assistant_only", raw["threshold"])),
    )


@cache
def _models() -> tuple[NameLikeness, NameLikeness]:
    raw = json.loads(resources.files("graphmem").joinpath("data", MODEL_FILE).read_text(encoding="utf-8"))
    version = str(raw.get("version", ""))
    return _read(raw, version), _read(raw["without_marks"], version + "-without-marks")


def model(marks: Collection[str] = ()) -> NameLikeness:
    """The model for an item with ``marks`` (make-up and marks), or without any (make-up alone)."""
    with_marks, without = _models()
    return with_marks if marks else without


@lru_cache(maxsize=65536)  # asked for every Chinese candidate of every block
def _probability(key: str, marks: frozenset[str]) -> float:
    return model(marks).probability(features(key, marks))


def probability(key: str, marks: Collection[str] = ()) -> float:
    """The probability that a Chinese block item is a name about the user's topic (``marks``: the set of
    :func:`context_marks` of its mentions; none: judged by its make-up alone)."""
    return _probability(key, marks if isinstance(marks, frozenset) else frozenset(marks))


def threshold(marks: Collection[str] = ()) -> float:
    """Below this probability an item stays out of a block."""
    return model(marks).threshold


def threshold_assistant_only(marks: Collection[str] = ()) -> float:
    """Likewise for an item only the assistant said (higher: the user never took it up)."""
    return model(marks).threshold_assistant_only
