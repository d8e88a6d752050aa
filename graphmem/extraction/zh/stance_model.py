"""A small trained stance classifier for Chinese names that no cue of stance_zh.yaml speaks about.

The cue rules (stances.py) decide most clauses and keep what rules do well: whose stance (我朋友喜欢X
is no stance of the user's), negation scope, 以前…现在, questions. A sentence in a phrasing no cue
list holds ("宋词我倒背如流", "牛顿第三定律我总是理解错") gets no stance from them at all. For such a
name — in the catalog or name-like, with no cue decision about it in the turn, said by the user
(no other person as the subject before it) — this model reads the *context*: the sentence holding
the name to the end of the turn (stopping at a sentence that names something else), with every name
masked as "X". Its inputs (`features`): characters and character bigrams, the last clause's bigrams
(the newest evidence), what follows a negator (不/没/别/不再: "n:学过"), who speaks (我 / another
person), 以前/现在/已经/还 markers, question particles, hedges and intensifiers, and which cue classes
of stance_zh.yaml occur anywhere in the context (negated or not, and in the last clause): the hand
lists as soft evidence where the rules set a cue aside. (jieba words were tried: no better held out,
and a second segmentation per name cost more time; bigrams in a negator's whole clause ("ns:") were
tried: no better held out than the two characters after it.)

It is a multinomial logistic regression (interested, confused, knows, dislikes, none) fitted by
eval/train_stance_zh.py on the hand-labelled Chinese natural sentences of several writers and the
tune part of the real KdConv turns; the weights are data (data/stance_zh_model.json: feature ->
one weight per class), read without scikit-learn. It abstains to no stance unless the best stance
class is at least `threshold` likely (chosen by cross-validation grouped by writer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from graphmem.extraction.linear import softmax
from graphmem.extraction.normalize import is_cjk
from graphmem.extraction.stance_cues import CueSet
from graphmem.models import ConceptMention, Stance

MODEL_FILE = "stance_zh_model.json"
CLASSES = ("interested", "confused", "knows", "dislikes", "none")
MASK = "X"
# Every other name of the context: told apart from the one asked about ("数学还行，X真的看不懂" says nothing of 数学).
OTHER = "Y"
CONF_MODEL = 0.55  # below a cue's 0.8: a learnt guess
MIN_WORDS_CHARS = 2  # Chinese characters besides the names a context needs

_NEGATOR = re.compile(r"(?:从来没有|从来没|从没有|从没|从未|没有|不再|并不|并没有|不|没|别|未)")
_CLAUSE = re.compile(r"[，,；;：:。！!？?…]+")
_QUESTION = re.compile(r"(?:[?？]|吗|(?<![什怎])么|呢|吧)\s*$")
_HEARSAY = re.compile(r"(?:听说(?!过)|据说|网上|都说|号称|传说)")
_ASKS = re.compile(r"(?:怎么|为什么|为啥|什么|啥|哪|如何|到底|咋)")


@dataclass(frozen=True)
class StanceModel:
    weights: dict[str, tuple[float, ...]]  # feature -> one weight per class of CLASSES
    bias: tuple[float, ...]
    threshold: float  # the best stance class needs at least this probability, else no stance
    version: str

    def probabilities(self, feats: dict[str, float]) -> list[float]:
        return softmax(self.weights, feats, self.bias)

    def decide(self, feats: dict[str, float]) -> tuple[Stance | None, float]:
        """The stance (None: abstain) and its probability."""
        p = self.probabilities(feats)
        k = max(range(len(CLASSES) - 1), key=lambda i: p[i])  # the best stance class
        if p[k] >= self.threshold and p[k] >= p[-1]:
            return Stance(CLASSES[k]), p[k]
        return None, p[-1]


def _bigrams(text: str) -> list[str]:
    chars = [c if is_cjk(c) else (c if c in (MASK, OTHER) else "") for c in text]
    return [a + b for a, b in zip(chars, chars[1:]) if a and b]


def features(context: str, cs: CueSet) -> dict[str, float]:
    """The model's inputs for one masked context (every name replaced by MASK)."""
    out: dict[str, float] = {}
    for c in context:
        if is_cjk(c):
            out["u:" + c] = 1.0
    for bg in _bigrams(context):
        out["c:" + bg] = 1.0
    # The last clause (the newest evidence): its bigrams again, marked.
    clauses = [c for c in _CLAUSE.split(context) if c.strip()]
    for bg in _bigrams(clauses[-1] if clauses else context):
        out["l:" + bg] = 1.0
    # What follows a negator: "没学过" -> n:学, n:学过
    for m in _NEGATOR.finditer(context):
        nxt = context[m.end() : m.end() + 2]
        if nxt:
            out["n:" + nxt[:1]] = 1.0
            out["n:" + nxt] = 1.0
    _cue_hits(context, clauses, cs, out)
    if cs.hedges.search(context):
        out["h:hedge"] = 1.0
    if cs.intensifiers.search(context):
        out["h:intense"] = 1.0
    first_mask = context.find(MASK)
    lead = context[: max(first_mask, 0)]
    if cs.others.search(lead):
        out["s:other_before"] = 1.0
    if cs.others.search(context):
        out["s:other"] = 1.0
    if cs.self_.search(context):
        out["s:self"] = 1.0
    else:
        out["s:no_self"] = 1.0
    if _HEARSAY.search(context):
        out["s:hearsay"] = 1.0
    if first_mask == 0 or (first_mask > 0 and not context[:first_mask].strip('《“"「 ')):
        out["s:topic_first"] = 1.0
    past, now = cs.past.search(context), cs.now.search(context)
    if past:
        out["m:past"] = 1.0
    if now:
        out["m:now"] = 1.0
    if past and now and now.start() > past.start():
        out["m:past_then_now"] = 1.0
    if "还" in context:
        out["m:still"] = 1.0
    stripped = context.rstrip(" 。.!！~～")
    if _QUESTION.search(stripped):
        out["q:question"] = 1.0
        if _ASKS.search(stripped):
            out["q:wh"] = 1.0
        if "我" in stripped:
            out["q:self"] = 1.0
    return out


def asks_the_other(context: str) -> bool:
    """A question without 我 ("X都有什么好玩的呢？", "X门票贵不啊？") asks the other speaker: as the rules
    read questions, it may show being lost but states no taste or knowledge of the user's."""
    stripped = context.rstrip(" 。.!！~～")
    return bool(_QUESTION.search(stripped)) and "我" not in stripped


def _cue_hits(context: str, clauses: Sequence[str], cs: CueSet, out: dict[str, float]) -> None:
    """Which cue classes of stance_zh.yaml appear in the context at all (a cue the rules set aside,
    e.g. one in another clause than the name's), negated or not, and in the last clause: the hand
    lists as soft evidence, so the model learns words it has seen in no training sentence."""
    last = clauses[-1] if clauses else context
    for cc in cs.classes:
        for hit in cc.pattern.finditer(context):
            neg = cs.negators.search(context[max(0, hit.start() - 4) : hit.start()]) is not None
            out[f"k:{cc.stance.value}{':neg' if neg else ''}"] = 1.0
        if cc.pattern.search(last):
            out[f"kl:{cc.stance.value}"] = 1.0


def context_of(
    src: str, sentences: Sequence[tuple[int, int]], mentions: Sequence[ConceptMention], m: ConceptMention
) -> str:
    """The sentence holding `m` up to the end of the turn (or a later sentence naming something
    else), the name asked about masked as MASK and every other name-like mention as OTHER."""
    sents = list(sentences) or [(0, len(src))]
    first = next((i for i, (a, b) in enumerate(sents) if a <= m.start < b), 0)
    start, end = sents[first][0], sents[first][1]
    for a, b in sents[first + 1 :]:
        if any(a <= x.start < b for x in mentions if x.key != m.key and named(x)):
            break
        end = b
    parts, pos = [], start
    for x in sorted(mentions, key=lambda x: x.start):
        if x.start >= pos and x.end <= end and named(x):
            parts.append(src[pos : x.start])
            parts.append(MASK if x.key == m.key else OTHER)
            pos = x.end
    parts.append(src[pos:end])
    return "".join(parts).strip()


def named(m: ConceptMention) -> bool:
    return m.in_catalog or m.confidence >= 0.6


def model_from_json(data: dict) -> StanceModel:
    return StanceModel(
        weights={str(k): tuple(float(x) for x in v) for k, v in data["weights"].items()},
        bias=tuple(float(x) for x in data["bias"]),
        threshold=float(data["threshold"]),
        version=str(data.get("version", "")),
    )


_installed: list[StanceModel | None] = []


def install(m: StanceModel | None, active: bool = True) -> None:
    """Use `m` instead of the shipped model in this process (training and its checks); `active=False`:
    no model at all (the rules alone); install(None) with active=True: back to the shipped one."""
    _installed[:] = [m] if (m is not None or not active) else []


def model() -> StanceModel | None:
    return _installed[0] if _installed else shipped()


@cache
def shipped() -> StanceModel | None:
    path = resources.files("graphmem.extraction").joinpath("data", MODEL_FILE)
    if not path.is_file():
        return None
    return model_from_json(json.loads(path.read_text(encoding="utf-8")))


def asked(
    src: str,
    sentences: Sequence[tuple[int, int]],
    mentions: Sequence[ConceptMention],
    decided: set[str],
    cs: CueSet,
) -> list[tuple[ConceptMention, str]]:
    """(mention, masked context) for each name the model is asked about: name-like, no cue decided
    about it (nor spoke for someone else), a context with words of its own besides names, and the
    user's own voice — no question put to the other speaker (X难吗？), no hearsay (听说, 网上都说) and
    no other person without 我 beside them."""
    out: list[tuple[ConceptMention, str]] = []
    seen: set[str] = set(decided)
    for m in mentions:
        if m.key in seen or not named(m):
            continue
        seen.add(m.key)
        context = context_of(src, sentences, mentions, m)
        cjk = sum(is_cjk(c) for c in context)
        masks = context.count(MASK) + context.count(OTHER)
        if cjk < MIN_WORDS_CHARS or (masks >= 2 and 2 * masks > cjk):
            continue  # a list of names ("有刘嘉玲，叶玉卿，…") or a bare title says nothing about the user
        if cs.neutral_question.search(context):
            continue  # "X难吗？", "你知道X吗": a question to the other speaker, as the rules read it
        if _HEARSAY.search(context) or (cs.others.search(context) and not cs.self_.search(cs.others.sub("", context))):
            continue  # "听说X很有名", "我爸妈都知道X": someone else's word, not the user's
        out.append((m, context))
    return out


def guesses(
    src: str,
    sentences: Sequence[tuple[int, int]],
    mentions: Sequence[ConceptMention],
    decided: set[str],
    cs: CueSet,
) -> list[tuple[ConceptMention, Stance, int, int, float]]:
    """(mention, stance, start, end, confidence) for each name no cue decided about, where the
    model is sure enough. The evidence span is the mention's sentence."""
    sm = model()
    if sm is None:
        return []
    out: list[tuple[ConceptMention, Stance, int, int, float]] = []
    for m, context in asked(src, sentences, mentions, decided, cs):
        stance, p = sm.decide(features(context, cs))
        if stance is None or (stance is not Stance.confused and asks_the_other(context)):
            continue
        a, b = next(((a, b) for a, b in (sentences or [(0, len(src))]) if a <= m.start < b), (0, len(src)))
        out.append((m, stance, a, b, round(min(CONF_MODEL, p), 3)))
    return out


__all__ = [
    "StanceModel",
    "features",
    "context_of",
    "asked",
    "asks_the_other",
    "guesses",
    "install",
    "model",
    "shipped",
    "CLASSES",
    "MODEL_FILE",
]
