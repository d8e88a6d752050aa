"""A small trained model of liking and disliking for English clauses that no cue decides.

stances.py asks it when a user's clause names something (or replies to what the other speaker
named) but holds no stance cue: "was too tedious", "sort of meh", "a little old for my taste". It
is a logistic regression fitted on ReDial's train split (eval/train_preference.py): each seeker
clause about a movie, labelled with the seeker's own post-chat verdict (liked / disliked). Its
inputs are the clause with the names masked as words and word pairs, plus VADER's scores, so
the model learns which words tip a clause to disliking beyond VADER's lexicon, and when a VADER
"positive" is not one ("not nearly as good").

The fitted model is data, not code: data/preference_en.json holds the feature weights (a plain
vocabulary -> weight map, readable without scikit-learn, stable across library versions) and the
decision thresholds chosen on train by grouped cross-validation. Loaded once per process.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

MODEL_FILE = "preference_en.json"

_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|[!?]")
_NOT = re.compile(r"n't\b")
# Contractions split as a reader would: "didn't" -> "did not", "it's" -> "it s" is left alone.
_NEGATION = frozenset({"not", "no", "never", "nothing", "nor", "neither", "none", "cannot", "without"})


@dataclass(frozen=True)
class PreferenceModel:
    weights: dict[str, float]
    bias: float
    dislike_threshold: float  # P(disliked) at or above: dislikes
    veto_threshold: float  # a VADER positive with P(disliked) at or above this is no liking
    negative_threshold: float  # a VADER negative with P(disliked) at or above this: dislikes
    version: str

    def probability(self, feats: dict[str, float]) -> float:
        """P(the user dislikes what the clause is about)."""
        z = self.bias + sum(self.weights.get(f, 0.0) * v for f, v in feats.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def tokens(text: str) -> list[str]:
    """Lower-cased words, "n't" read as "not"; digits dropped (a maths answer is no opinion)."""
    return _TOKEN.findall(_NOT.sub(" not", text.lower().replace("\u2019", "'")))


def features(text: str, vader: dict[str, float], reply: bool) -> dict[str, float]:
    """The model's inputs for one masked clause: words, word pairs, VADER's scores, structure.

    `vader` is VADER's polarity_scores of the same text; `reply` says the clause names nothing of
    its own (it speaks about what came before: a reply, or a clause after a name)."""
    toks = tokens(text)
    out: dict[str, float] = {}
    for t in toks:
        out["w:" + t] = 1.0
    for a, b in zip(toks, toks[1:]):
        out["b:" + a + "_" + b] = 1.0
    compound = vader.get("compound", 0.0)
    out["v:compound"] = compound
    out["v:pos"] = vader.get("pos", 0.0)
    out["v:neg"] = vader.get("neg", 0.0)
    out["v:positive"] = 1.0 if compound >= 0.3 else 0.0
    out["v:negative"] = 1.0 if compound <= -0.3 else 0.0
    negated = any(t in _NEGATION for t in toks)
    out["s:negation"] = 1.0 if negated else 0.0
    if negated and compound > 0:
        out["s:negated_positive"] = 1.0  # "not nearly as good": VADER's own negation is short-sighted
    out["s:reply"] = 1.0 if reply else 0.0
    out["s:short"] = 1.0 if len(toks) <= 3 else 0.0
    return out


def model_from_json(data: dict) -> PreferenceModel:
    return PreferenceModel(
        weights={str(k): float(v) for k, v in data["weights"].items()},
        bias=float(data["bias"]),
        dislike_threshold=float(data["dislike_threshold"]),
        veto_threshold=float(data["veto_threshold"]),
        negative_threshold=float(data["negative_threshold"]),
        version=str(data.get("version", "")),
    )


_installed: list[PreferenceModel] = []


def install(m: PreferenceModel | None) -> None:
    """Use `m` instead of the shipped model in this process (training and its checks); None: back."""
    _installed[:] = [m] if m is not None else []


def model() -> PreferenceModel:
    """The model in use: the shipped one unless training installed another."""
    return _installed[0] if _installed else shipped()


@cache
def shipped() -> PreferenceModel:
    """The shipped model (graphmem/extraction/data/preference_en.json), read once per process."""
    raw = resources.files("graphmem.extraction").joinpath("data", MODEL_FILE).read_text(encoding="utf-8")
    return model_from_json(json.loads(raw))


__all__ = ["PreferenceModel", "features", "install", "model", "shipped", "model_from_json", "tokens", "MODEL_FILE"]
