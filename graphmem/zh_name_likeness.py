"""How much a Chinese block item looks like a name worth showing, from its characters and jieba's dictionary.

The rules of graphmem/zh_cuts.py and graphmem/zh_descriptors.py catch the shapes someone wrote down; many other items of a
Chinese block are details a speaker recited (东四环路红领巾桥, 4D影院, 北京年轻人) or pieces of a phrase
(成本高达, 钢材编织成), and they differ from names in their make-up: what the last piece is (a verb, a common
noun, a place ending), how many dictionary pieces they have, how common the pieces are. This module holds a
logistic regression over such features, fitted by ``eval/train_zh_name_likeness.py`` on the hand-labelled
KdConv block items of ``eval/data/block_labels*.csv`` (never the held-out fresh7 sample); its weights are data
(``graphmem/data/zh_name_likeness.json``), read without scikit-learn.

``probability(key)`` is the model's probability that the item is about the user (a name of their topic);
graphmem/specificity.py keeps an item out of a block below the file's ``threshold`` unless the conversation
keeps coming back to it, and an item only the assistant said below ``threshold_assistant_only``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from graphmem.extraction.lexical import zipf
from graphmem.extraction.linear import softmax
from graphmem.zh_descriptors import pieces

__all__ = ["NameLikeness", "features", "model", "probability"]

MODEL_FILE = "zh_name_likeness.json"


def features(key: str) -> dict[str, float]:
    """The item's make-up: its length, its jieba pieces' tags (first, last, any), its first and last
    characters, and how common the whole and its end pieces are (wordfreq)."""
    parts = pieces(key) or ((key, None),)
    tag = [t or "unk" for _, t in parts]
    out: dict[str, float] = {"bias": 1.0}
    out[f"pieces={min(len(parts), 4)}"] = 1.0
    out[f"len={min(len(key), 8)}"] = 1.0
    out["first_tag=" + tag[0]] = 1.0
    out["last_tag=" + tag[-1]] = 1.0
    for t in set(tag):
        out["tag=" + t] = 1.0
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
    return out


@dataclass(frozen=True)
class NameLikeness:
    weights: dict[str, tuple[float, float]]  # feature -> (weight of "not about the user", weight of "about")
    threshold: float  # below this probability an item stays out of the block
    version: str
    threshold_assistant_only: float = 0.0  # likewise for an item the user never said (higher: no uptake by the user)

    def probability(self, feats: dict[str, float]) -> float:
        return softmax(self.weights, feats, [0.0, 0.0])[1]


@cache
def model() -> NameLikeness:
    raw = json.loads(resources.files("graphmem").joinpath("data", MODEL_FILE).read_text(encoding="utf-8"))
    return NameLikeness(
        weights={str(k): (float(v[0]), float(v[1])) for k, v in raw["weights"].items()},
        threshold=float(raw["threshold"]),
        version=str(raw.get("version", "")),
        threshold_assistant_only=float(raw.get("threshold_assistant_only", raw["threshold"])),
    )


@lru_cache(maxsize=65536)  # asked for every Chinese candidate of every block
def probability(key: str) -> float:
    """The probability that a Chinese block item is a name about the user's topic."""
    return model().probability(features(key))
