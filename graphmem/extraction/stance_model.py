"""A small trained classifier of the user's stance toward a named concept, for English turns.

The cue lists (stances.py) are precise where they fire but miss phrasings nobody wrote down; this
model reads the sentence around the concept instead and generalises to other writers' English. It is
a multinomial logistic regression (interested / confused / knows / dislikes / none) fitted by
eval/train_stance_model.py on every English labelled natural-sentence set of eval/devsets (several
writers) and the real user turns of the stance dev set's tune part. Its inputs, all from the sentence
that holds the concept, with the concept masked as ``X``:

* lemmas and lemma pairs (a light suffix lemmatiser: "learning", "learned" -> "learn");
* negation-marked lemmas: from a negator ("not", "n't", "never", "no longer" …) to the clause end;
* the lemmas of the concept's own clause and the three lemmas right before and after ``X``;
* whose sentence it is (a first-person subject, another person: the cue lists' own patterns),
  tense and aspect (past markers, "now", "used to", "no longer"), a question mark;
* VADER's scores of the masked sentence, politeness words ("thanks", "lol") left out;
* the words and VADER compound of the sentences after it, up to the end of the turn or the first later
  sentence that names another concept ("We did a cruise once. Once was quite enough.").

The fitted model is data, not code: data/stance_model_en.json holds the per-class weights of each
feature (readable without scikit-learn), the class order, and the thresholds of the decision rule
in :func:`combine` chosen by cross-validation. Inference is plain Python. Loaded once per process.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from graphmem.extraction.linear import softmax
from graphmem.extraction.stance_cues import cues
from graphmem.models import ConceptMention, Stance, StanceMention

MODEL_FILE = "stance_model_en.json"
CLASSES = ("interested", "confused", "knows", "dislikes", "none")
CONF_MODEL_MAX = 0.8  # a stance the model decided: its probability, at most a plain cue's confidence

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|[!?,;]")
# A question that has lost its "?" in chat: "have you seen the new movie X", "is it anything like X".
_ASKS = re.compile(
    r"^\W*(?:(?:haha|ok|okay|so|and|but|hey|hi|well|oh|hmm|lol|also)\W+)?(?:have|has|did|do|does|is|are|was|were|can|could|would|will|should|how about|what about)\s+"
    r"(?:you|it|that|this|there|anyone|he|she|they)\b"
)
_CLAUSE_END = frozenset({",", ";", "but", "though", "although", "however", "yet", "while", "whereas", "so", "because"})
_NEGATORS = frozenset(
    {"not", "no", "never", "nothing", "nor", "neither", "none", "cannot", "without", "hardly", "barely", "nobody"}
)
_IRREGULAR = {
    "am": "be",
    "is": "be",
    "are": "be",
    "was": "be",
    "were": "be",
    "been": "be",
    "being": "be",
    "'m": "be",
    "'re": "be",
    "has": "have",
    "had": "have",
    "having": "have",
    "'ve": "have",
    "did": "do",
    "does": "do",
    "done": "do",
    "doing": "do",
    "got": "get",
    "gotten": "get",
    "went": "go",
    "gone": "go",
    "goes": "go",
    "knew": "know",
    "known": "know",
    "took": "take",
    "taken": "take",
    "made": "make",
    "saw": "see",
    "seen": "see",
    "felt": "feel",
    "thought": "think",
    "taught": "teach",
    "bought": "buy",
    "caught": "catch",
    "wrote": "write",
    "written": "write",
    "read": "read",
    "learnt": "learn",
    "spent": "spend",
    "lost": "lose",
    "kept": "keep",
    "left": "leave",
    "understood": "understand",
    "gave": "give",
    "given": "give",
    "ran": "run",
    "won": "win",
    "'d": "would",
    "'ll": "will",
    "wanna": "want",
    "gonna": "go",
    "kinda": "kind",
    "sorta": "sort",
    "im": "i",
    "ive": "i",
    "me": "i",
    "my": "i",
    "mine": "i",
    "myself": "i",
}


@lru_cache(maxsize=8192)
def lemma(word: str) -> str:
    """A light lemma: irregular forms from a short table, then -ies/-ing/-ed/-s stripped."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    n = len(word)
    if n > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if n > 5 and word.endswith("ing"):
        stem = word[:-3]
        return stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "ls" else stem
    if n > 4 and word.endswith("ed"):
        stem = word[:-2]
        return stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "ls" else stem
    if n > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


_CANT = re.compile(r"\bcan't\b")
_WONT = re.compile(r"\bwon't\b")
_NT = re.compile(r"n't\b")
_GLUED_NOT = re.compile(r"\b(dont|doesnt|didnt|cant|wont|isnt|wasnt|arent|havent|hasnt|wouldnt|couldnt)\b")
_CLITIC = re.compile(r"'(m|re|ve|d|ll|s)\b")


def _tokens(text: str) -> list[str]:
    """Lower-cased words with contractions split ("don't" -> "do not", "I'm" -> "i 'm")."""
    t = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    if "'" in t:
        t = _NT.sub(" not", _WONT.sub("will not", _CANT.sub("can not", t)))
        t = _CLITIC.sub(r" '\1", t)
    t = _GLUED_NOT.sub(r"\1 not", t)
    return [w for w in _TOKEN.findall(t) if w != "'s"]


def _lemmas(tokens: Sequence[str]) -> list[str]:
    """Lemmas of ``tokens``; "have to" / "has to" / "had to" is an obligation ("I have to take X next term": no
    stance) and "have not" a negated perfect ("I haven't studied X": not known), both kept apart from the perfect's
    "have" ("I have studied X before": knowing), which would share its lemma otherwise."""
    out = [lemma(w) for w in tokens]
    for i, w in enumerate(out[:-1]):
        if w == "have" and tokens[i + 1] in ("to", "not"):
            out[i] = "have_" + tokens[i + 1]
    return out


def sentence_of(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the sentence that holds [start, end) (a concept's name never ends a sentence)."""
    for m in _SENTENCE.finditer(text):
        if m.start() <= start < m.end() or (m.start() < end <= m.end()):
            # A name with a dot inside ("Node.js") spans two regex sentences: keep extending.
            s, e = m.start(), m.end()
            while e < end:
                nxt = _SENTENCE.match(text, e)
                if nxt is None or nxt.end() == e:
                    break
                e = nxt.end()
            return s, e
    return 0, len(text)


def features(
    text: str,
    start: int,
    end: int,
    vader: Mapping[str, float] | None = None,
    rule: RuleView | None = None,
    others: Sequence[tuple[int, int]] = (),
) -> dict[str, float]:
    """The model's inputs for the concept at text[start:end], from the sentence that holds it and the
    sentences after it, and what the cue rules said about it (`rule`), so the model learns where the
    rules are right. ``others``: the spans of the turn's other named concepts; in the concept's own
    sentence each reads as ``Y`` (what is said next to another name is told apart from what is said
    next to this one: "numpy clicks for me, it's matplotlib that makes me want to scream"), and a later
    sentence that names one of them speaks about that one, and it ends what is read (as the Chinese
    model reads)."""
    cs = cues("en")
    s, e = sentence_of(text, start, end)
    left, right = _masked(text, s, start, others), _masked(text, end, e, others)
    sent = left + " X " + right
    toks_l, toks_r = _tokens(left), _tokens(right)
    lem = _lemmas(toks_l) + ["X"] + _lemmas(toks_r)
    x = len(toks_l)
    out: dict[str, float] = {}
    for w in lem:
        out["w:" + w] = 1.0
    for a, b in zip(lem, lem[1:]):
        out["b:" + a + "_" + b] = 1.0
    # Negation scope: from a negator to the end of its clause.
    negated = False
    for w, raw in zip(lem, toks_l + ["X"] + toks_r):
        if raw in _CLAUSE_END:
            negated = False
        if negated and w != "X":
            out["n:" + w] = 1.0
        if raw in _NEGATORS:
            negated = True
    # The concept's own clause, and its close neighbours.
    lo = x
    while lo > 0 and toks_l[lo - 1] not in _CLAUSE_END:
        lo -= 1
    hi = x + 1
    while hi < len(lem) and lem[hi] not in _CLAUSE_END:
        hi += 1
    for w in lem[lo:hi]:
        if w != "X":
            out["c:" + w] = 1.0
    for w in lem[max(0, x - 3) : x]:
        out["l:" + w] = 1.0
    for w in lem[x + 1 : x + 4]:
        out["r:" + w] = 1.0
    # Whose sentence, when, asked or said.
    if cs.self_.search(sent):
        out["s:self"] = 1.0
    if cs.others.search(sent):
        out["s:other"] = 1.0
    if cs.past.search(sent):
        out["t:past"] = 1.0
    if cs.now.search(sent):
        out["t:now"] = 1.0
    if cs.others_or_things.search(sent):
        out["s:they"] = 1.0
    if "?" in sent or _ASKS.match(left.lower()):
        out["q"] = 1.0
    if len(lem) > 20:
        out["long"] = 1.0
    # VADER reads the sentence without politeness ("thanks", "lol" are no opinion), as stances.py does.
    scores = vader if vader is not None else _vader_scores(sent.replace(" X ", " it "))
    out["v:compound"] = float(scores.get("compound", 0.0))
    out["v:pos"] = float(scores.get("pos", 0.0))
    out["v:neg"] = float(scores.get("neg", 0.0))
    # The sentences after it: a stance often shows in the one after the one naming the thing ("We did a
    # cruise once. Once was quite enough."). Their words count apart from the concept's own sentence.
    rest = text[e : following_end(text, e, others)].strip()
    if rest:
        for w in _lemmas(_tokens(rest)[:40]):
            out["m:" + w] = 1.0
        out["mv:compound"] = float(_vader_scores(rest).get("compound", 0.0))
    out["bias"] = 1.0
    if rule is not None:
        out.update(rule_features(rule))
    return out


def _masked(text: str, a: int, b: int, others: Sequence[tuple[int, int]]) -> str:
    """text[a:b] with each other concept's span inside it replaced by ``Y``. Out of fold over the 63 writers
    (eval/results/NOTES.md, session 32): the written sets' mean did not move (0.849), the writer of messages
    naming two or three things rose 0.680 -> 0.715 and the real user turns 0.845 -> 0.864."""
    inside = sorted((x, y) for x, y in others if a <= x and y <= b)
    if not inside:
        return text[a:b]
    out, pos = [], a
    for x, y in inside:
        if x < pos:
            continue  # overlapping spans: the first one stands
        out += [text[pos:x], "Y"]
        pos = y
    out.append(text[pos:b])
    return "".join(out)


def following_end(text: str, end: int, others: Sequence[tuple[int, int]]) -> int:
    """Where the sentences after ``end`` stop speaking about the concept: the end of the turn, or the start
    of the first later sentence that names another concept (its span in ``others``)."""
    stop = end
    for m in _SENTENCE.finditer(text, end):
        if any(m.start() <= a < m.end() for a, _ in others):
            break
        stop = m.end()
    return stop


def rule_features(rule: RuleView) -> dict[str, float]:
    """The cue rules' reading as inputs: their stance and its confidence, blocked, aside or silent."""
    if rule.stance is not None:
        return {"rv:" + rule.stance: 1.0, "rv:conf": rule.confidence}
    if rule.blocked:
        return {"rv:blocked": 1.0}
    return {"rv:aside": 1.0} if rule.aside else {"rv:silent": 1.0}


@lru_cache(maxsize=1024)
def _vader_scores(text: str) -> dict[str, float]:
    """VADER's scores of the text without politeness words ("thanks", "lol": no opinion), as stances.py reads it."""
    from graphmem.extraction.stances import _vader

    return dict(_vader().polarity_scores(cues("en").sentiment_ignore.sub(" ", text)))


@dataclass(frozen=True)
class StanceModel:
    classes: tuple[str, ...]
    weights: dict[str, tuple[float, ...]]  # feature -> one weight per class
    # The decision rule (combine): thresholds chosen by leave-one-writer-out cross-validation.
    trust_rule: float  # a rule stance at or above this confidence stands unless the model is sure against it
    overrule: float  # the model's probability needed to replace a confident rule stance
    decide: float  # the model's probability needed to decide where the rules are unsure or silent
    unblock: float  # the model's probability needed to give a stance the rules blocked (negation, another person)
    version: str
    # A rule `dislikes` at or above this confidence stands unless the model is `overrule` sure against it (2.0:
    # like any other rule stance). Dislikes are rare in chats and their cues specific ("a letdown", "corny"),
    # while the model's words lean to liking; chosen on ReDial train's seeker verdicts (eval/train_stance_model.py).
    trust_dislikes: float = 2.0
    # Likewise for a rule `interested`: a plain "X is a classic" in a real chat is a liking the written sets'
    # idioms and irony ("X is a nightmare", "oh great, another X") taught the model to doubt; chosen on ReDial
    # train's seeker verdicts too (eval/train_stance_model.py).
    trust_interested: float = 2.0
    # A `dislikes` the model gives where the rules gave none (decided, unblocked or overruled) needs at least this
    # probability (0.0: no more than any other class). The written sets hold a dislike in every fifth sentence,
    # real chats in far fewer, so the model's weak dislikes of a plain "sounds okay" or "is the sequel" were mostly
    # false there; chosen on ReDial train's seeker verdicts (eval/train_stance_model.py).
    decide_dislikes: float = 0.0

    def trust(self, stance: str | None) -> float:
        """The confidence at which the rules' `stance` stands unless the model is sure against it."""
        if stance == "dislikes":
            return self.trust_dislikes
        return self.trust_interested if stance == "interested" else self.trust_rule

    def probabilities(self, feats: Mapping[str, float]) -> dict[str, float]:
        return dict(zip(self.classes, softmax(self.weights, feats, [0.0] * len(self.classes))))


def model_from_json(data: Mapping[str, Any]) -> StanceModel:
    classes = tuple(str(c) for c in data["classes"])
    return StanceModel(
        classes=classes,
        weights={str(k): tuple(float(x) for x in v) for k, v in data["weights"].items()},
        trust_rule=float(data["trust_rule"]),
        overrule=float(data["overrule"]),
        decide=float(data["decide"]),
        unblock=float(data["unblock"]),
        version=str(data.get("version", "")),
        trust_dislikes=float(data.get("trust_dislikes", 2.0)),
        trust_interested=float(data.get("trust_interested", 2.0)),
        decide_dislikes=float(data.get("decide_dislikes", 0.0)),
    )


_installed: list[StanceModel | None] = []


def install(m: StanceModel | None, off: bool = False) -> None:
    """Use `m` instead of the shipped model in this process (training and its checks); `off`: rules
    only; install(None) goes back to the shipped model."""
    _installed[:] = [None] if off else ([m] if m is not None else [])


def model() -> StanceModel | None:
    """The model in use (None: rules only, as training asks for)."""
    return _installed[0] if _installed else shipped()


@cache
def shipped() -> StanceModel:
    raw = resources.files("graphmem.extraction").joinpath("data", MODEL_FILE).read_text(encoding="utf-8")
    return model_from_json(json.loads(raw))


@dataclass(frozen=True)
class RuleView:
    """What the cue rules said about one concept: a stance with its confidence, blocked (a cue the rules
    read as no stance: negated knowing, another person's taste, a past-only stance), aside (no cue, in
    a clause that is not the user's own statement), or silent."""

    stance: str | None
    confidence: float
    blocked: bool
    aside: bool = False  # no cue, and the clause is a question, a hypothetical or another person's


def combine(m: StanceModel, rule: RuleView, probs: Mapping[str, float]) -> tuple[str | None, bool]:
    """The final stance (None: no stance) and whether the model decided it.

    A rule stance at or above `trust_rule` (`trust_dislikes` for a dislike) stands unless the model gives another class at least
    `overrule`; a blocked concept gets a stance only when the model is at least `unblock` sure of one
    (so is a concept named only in a question, a hypothetical or another person's clause); otherwise (a weak rule stance, or silence) the model's class wins when it is at least `decide`
    sure, ``none`` included, and the rule reading stands when the model is unsure. A dislike the model gives against
    the rules' reading needs at least ``decide_dislikes`` in any of these cases."""
    stance, by_model = _combined(m, rule, probs)
    if by_model and stance == "dislikes" and probs["dislikes"] < m.decide_dislikes:
        return rule.stance, False  # a weak dislike of the model's own: the rules' reading stands
    return stance, by_model


def _combined(m: StanceModel, rule: RuleView, probs: Mapping[str, float]) -> tuple[str | None, bool]:
    best = max(probs, key=lambda c: probs[c])
    p = probs[best]
    if rule.stance is not None and rule.confidence >= m.trust(rule.stance):
        if best != rule.stance and p >= m.overrule:
            return (None if best == "none" else best), True
        return rule.stance, False
    if rule.stance is None and (rule.blocked or rule.aside):
        if best != "none" and p >= m.unblock:
            return best, True
        return None, False
    if p >= m.decide:
        return (None if best == "none" else best), best != rule.stance
    return rule.stance, False


def _may_change(m: StanceModel, rule: RuleView) -> bool:
    """Can combine() give anything but the rule reading, whatever the model says?"""
    if rule.stance is not None and rule.confidence >= m.trust(rule.stance):
        return m.overrule <= 1.0
    if rule.stance is None and (rule.blocked or rule.aside):
        return m.unblock <= 1.0
    return m.decide <= 1.0


def revise(
    text: str,
    mentions: Sequence[ConceptMention],
    rules: Mapping[str, RuleView],
    stances: Sequence[StanceMention],
) -> list[StanceMention]:
    """The turn's stances after the model has read each named concept (`mentions`: the name-like ones,
    sorted; `rules`: what the cue rules said per key; `stances`: the rules' stances)."""
    m = model()
    if m is None or not mentions:
        return list(stances)
    by_key = {s.key: s for s in stances}
    newest: dict[str, ConceptMention] = {}
    for mention in mentions:
        newest[mention.key] = mention  # the newest mention of a concept speaks for it
    out: list[StanceMention] = []
    done: set[str] = set()
    for key, mention in newest.items():
        done.add(key)
        rule = rules.get(key, RuleView(None, 0.0, False))
        if not _may_change(m, rule):  # the model cannot change this reading: not read at all (speed)
            if key in by_key:
                out.append(by_key[key])
            continue
        others = [(x.start, x.end) for x in mentions if x.key != key]
        probs = m.probabilities(features(text, mention.start, mention.end, rule=rule, others=others))
        stance, by_model = combine(m, rule, probs)
        if stance is None:
            continue
        if not by_model and key in by_key:
            out.append(by_key[key])
            continue
        s, e = sentence_of(text, mention.start, mention.end)
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        out.append(
            StanceMention(
                key=key,
                name=mention.name,
                stance=Stance(stance),
                start=s,
                end=e,
                cue=text[s:e],
                confidence=round(min(probs[stance], CONF_MODEL_MAX), 3),
            )
        )
    out.extend(st for st in stances if st.key not in done)
    return sorted(out, key=lambda st: min((x.start for x in mentions if x.key == st.key), default=st.start))


__all__ = [
    "CLASSES",
    "MODEL_FILE",
    "RuleView",
    "StanceModel",
    "combine",
    "features",
    "install",
    "lemma",
    "revise",
    "model",
    "rule_features",
    "model_from_json",
    "sentence_of",
    "shipped",
]
