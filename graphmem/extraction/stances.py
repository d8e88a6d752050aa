"""The user's stance toward a concept: interested, confused, knows, dislikes — decided per clause.

A user's sentence is cut into clauses (punctuation, and words that open a clause: "but", "now",
但是, 现在 …). In each clause the cue lists of data/stance_<lang>.yaml are matched (stance_cues.py);
the longest cue wins an overlap, then the class order (dislikes, confused, interested, knows). A cue
is then checked against its clause:

* **Negation** right before the cue ("not", "n't", "never", "no longer"; 不/没/从没 …) turns the
  class into its ``negated`` reading: wanting/liking -> dislikes, confusion -> knows ("no longer
  confused"), knowing -> no stance at all ("I never touched Docker", 没学过: not known, never
  `knows`, and no struggle either — gaps.py treats an unshown concept as a gap candidate).
* **Whose stance**: the subject nearest before the cue decides; another person ("my brother
  loves Haskell", 我女朋友喜欢Swift, "have you seen X?") gives the user no stance.
* **Questions** carry only confusion ("what is recursion?"), never taste ("is X good?").
* **Hedges** ("maybe", "I think", 可能) lower the confidence; intensifiers raise it a little.

Every mention in the clause gets the clause's stance. A clause without a mention of its own ("…, but
now they make sense", 现在已经会了) speaks about the mentions of the clause before it, and being later it
wins: the newest evidence in a turn is the current one, as across turns (ingest_refresh_interests
keeps the newest stance, history stays). A stance from a clause marked as past ("used to", 以前, 曾经)
that nothing later replaces is dropped, except knowing (以前学过X still means knows). A clause with a
mention and no cue at all gets, in English, the decision of the trained preference model
(preference.py: ReDial-fitted weights over the masked clause and VADER's scores): dislikes when it
says so, interested when VADER is clearly positive and the model does not veto it.

A cue-bearing clause before any mention of the turn ("I didn't like it so much", 挺无聊的) is the
turn's *reply stance*: replies.py gives it to what the other speaker just named.
The caller passes only role=user turns here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from graphmem.extraction import preference, stance_model
from graphmem.extraction.stance_cues import CueSet, cues
from graphmem.extraction.zh import stance_model as zh_stance_model
from graphmem.models import ConceptMention, Stance, StanceMention

CONF_STANCE = 0.8
CONF_HEDGED = 0.5
CONF_NEGATED = 0.6
CONF_SENTIMENT = 0.6
CONF_INTENSE = 0.9
NAME_CONFIDENCE = 0.6  # open-vocabulary noun chunks score 0.5, names and entities more
VADER_THRESHOLD = 0.3  # |compound| at or above this counts; VADER's own "neutral" band is ±0.05

_EN_SPLIT = re.compile(r"[,;:()\"“”]|\s[-–—]+\s|\.\.+")
_ZH_SPLIT = re.compile(r"[，,；;：:、（）()“”\"]|\.\.+|…+")
_LIST_REST = re.compile(
    r"^[\s,，、&/]*(?:(?:and|or|also|the|as well as|plus|和|跟|与|及|以及|还有|或者?|或)[\s,，、]*)*$", re.IGNORECASE
)
_QUESTION_END = re.compile(r"(?:[?？]|吗|么|呢)\s*[\"”')）]*\s*$")


@dataclass(frozen=True)
class Clause:
    start: int
    end: int
    question: bool
    past: bool
    now: bool
    sentence_start: int = 0
    hypothetical: bool = False
    concessive: bool = False  # "although …", 虽然…: what the main clause says wins


@dataclass(frozen=True)
class Decision:
    """A clause's stance (None when a negated cue says "no stance": never used, haven't seen)."""

    stance: Stance | None
    start: int
    end: int
    confidence: float


@dataclass(frozen=True)
class ReplyStance:
    """A stance in a turn that names nothing before it: about what the other speaker named."""

    stance: Stance
    start: int
    end: int
    cue: str
    confidence: float


@dataclass
class TurnStances:
    stances: list[StanceMention]
    reply: ReplyStance | None
    # Open-vocabulary mentions that are a stance cue themselves ("second nature", "my thing"): not concepts.
    cue_mentions: list[tuple[int, int]]


def _norm_quotes(s: str) -> str:
    return s.replace("\u2019", "'").replace("\u2018", "'")


def extract_stances(
    text: str, language: str, sentences: list[tuple[int, int]], mentions: list[ConceptMention]
) -> list[StanceMention]:
    """One StanceMention per concept the user takes a stance on. `mentions` sorted by start."""
    return analyse_turn(text, language, sentences, mentions).stances


def analyse_turn(
    text: str, language: str, sentences: list[tuple[int, int]], mentions: list[ConceptMention]
) -> TurnStances:
    cs = cues(language)
    src = _norm_quotes(text)  # same length: spans stay valid
    clauses = split_clauses(src, cs, sentences, mentions)
    current: dict[str, tuple[ConceptMention, Decision, bool]] = {}  # key -> (mention, decision, past)
    targets: list[ConceptMention] = []
    named = False  # has the turn named something of its own yet (a catalog or name-like mention)?
    previous: Decision | None = None
    pending: Decision | None = None  # a cue before any mention: "One of my favourites is ..., called X"
    reply: ReplyStance | None = None
    cue_mentions: list[tuple[int, int]] = []
    other = False  # the subject carried from the clause before, within a sentence
    waiting: list[ConceptMention] = []  # catalog names of this sentence with no current stance yet
    sentence_start = -1
    spoken_by_other: set[str] = set()  # names in a clause whose subject is someone else
    aside: dict[str, bool] = {}  # key -> named last in a question, a hypothetical or another person's clause
    for cl in clauses:
        if cl.sentence_start != sentence_start:
            sentence_start, other, waiting = cl.sentence_start, False, []
        inside = [m for m in mentions if m.start >= cl.start and m.end <= cl.end]
        d, other = decide(src, cs, cl, inside, other)
        if other:
            spoken_by_other.update(m.key for m in inside)
        if inside:
            # An open-vocabulary "concept" that is a cue itself ("Meh", "second nature") is how the user
            # said it, not what about.
            cued = [
                m
                for m in inside
                if not m.in_catalog
                and (
                    any(cc.pattern.fullmatch(src[m.start : m.end]) for cc in cs.classes)
                    or d is not None
                    and m.start < d.end
                    and d.start < m.end
                    and d.end - d.start < cl.end - cl.start
                )
            ]
            if cued:
                cue_mentions.extend((m.start, m.end) for m in cued)
                inside = [m for m in inside if m not in cued]
        if d is None and cs.language == "en" and not cl.question and not other and (inside or targets or not named):
            d = _reread(_sentiment(src, cs, cl, inside), src, cs, cl)
        named = named or any(_name_like(m) for m in inside)
        if d is not None and d.stance is not None and not named:
            # The newest such clause is the reply ("那部我看过，挺无聊的": seen it, and it was boring).
            reply = ReplyStance(d.stance, d.start, d.end, text[d.start : d.end], d.confidence)
        if inside:
            if d is None and previous is not None and previous.stance is not None and _is_list_rest(src, cl, inside):
                d = previous  # "I want to learn Python, Django and Flask": the list shares the stance
                targets = [*targets, *inside]
            else:
                if d is None and pending is not None and not cl.question:
                    d = pending  # "知道，鸟巢的门票…", "One of my favourites is a comedy, called X"
                targets = inside
            pending = None
        elif d is not None and d.stance is not None and not targets:
            pending = d
        for m in inside:  # the newest clause naming it: is it the user's own statement at all?
            aside[m.key] = d is None and (cl.question or other or cl.hypothetical)
        if d is None:
            waiting.extend(m for m in inside if m.in_catalog and m not in waiting)
            continue
        previous = d
        past = cl.past and not cl.now
        apply = targets
        if d.stance is not None and not other and not past and waiting and not any(m.in_catalog for m in inside):
            # "SQL used to scare me but after that internship I can write joins in my sleep", "linear
            # regression is old news for me, I teach it to undergrads": a later clause that names only
            # common nouns still speaks about the catalog name before it.
            apply = [*targets, *(m for m in waiting if m not in targets)]
        for m in apply:
            old = current.get(m.key)
            if d.stance is None and old is not None and old[1].stance is not None:
                continue  # "I want Rust, I haven't learned it": a blocked cue does not erase a stance
            if cl.concessive and old is not None and old[1].stance is not None and not old[2]:
                continue  # "对量子力学特别好奇，虽然不太懂": the concession does not replace the main clause
            current[m.key] = (m, d, past)
        if past and d.stance is not None:
            waiting = [*waiting, *(m for m in targets if m.in_catalog and m not in waiting)]
        else:
            waiting = []
    if cs.language == "zh":
        # Names no cue spoke about: the trained Chinese model's guess (zh/stance_model.py), or nothing.
        decided = set(current) | spoken_by_other
        for m, stance, a, b, conf in zh_stance_model.guesses(src, sentences, mentions, decided, cs):
            current[m.key] = (m, Decision(stance, a, b, conf), False)
    out: list[StanceMention] = []
    for m, d, past in sorted(current.values(), key=lambda x: x[0].start):
        if d.stance is None or (past and d.stance is not Stance.knows):
            continue  # "used to love X" with nothing after it: not a current stance
        out.append(
            StanceMention(
                key=m.key,
                name=m.name,
                stance=d.stance,
                start=d.start,
                end=d.end,
                cue=text[d.start : d.end],
                confidence=d.confidence,
            )
        )
    if cs.language == "en":
        # The trained stance model reads each named concept's sentence (stance_model.combine: confident
        # cue rules stand, the model decides where the rules are unsure or silent).
        cued_spans = set(cue_mentions)
        named_mentions = [m for m in mentions if _name_like(m) and (m.start, m.end) not in cued_spans]
        kept = {s.key: s for s in out}
        rules = {
            key: stance_model.RuleView(
                kept[key].stance.value if key in kept else None,
                kept[key].confidence if key in kept else 0.0,
                key in current and key not in kept,
                aside.get(key, False),
            )
            for key in {*current, *aside}
        }
        out = stance_model.revise(text, named_mentions, rules, out)
    return TurnStances(out, reply, cue_mentions)


def _name_like(m: ConceptMention) -> bool:
    """A name the user chose (catalog, entity, title), not a common noun like "movies" or "suggestions"."""
    return m.in_catalog or m.confidence >= NAME_CONFIDENCE


def split_clauses(
    src: str, cs: CueSet, sentences: list[tuple[int, int]], mentions: Sequence[ConceptMention] = ()
) -> list[Clause]:
    """Clauses of each sentence; never cut inside a mention ("Kill Bill: Volume 2", "Crazy, Stupid, Love")."""
    out: list[Clause] = []
    splitter = _ZH_SPLIT if cs.language == "zh" else _EN_SPLIT
    for s_start, s_end in sentences or [(0, len(src))]:
        sent = src[s_start:s_end]
        asks = bool(_QUESTION_END.search(sent))
        cuts = {0, len(sent)}
        for m in splitter.finditer(sent):
            cuts.update((m.start(), m.end()))
        for m in cs.clause_breaks.finditer(sent):
            cuts.add(m.start())
        bounds = sorted(c for c in cuts if not any(m.start < s_start + c < m.end for m in mentions))
        pieces = [(a, b) for a, b in zip(bounds, bounds[1:]) if sent[a:b].strip(" \t\n,.;:，。；：、")]
        condition = False  # the clause before opened with "if"/如果: this one is its consequent
        for n, (a, b) in enumerate(pieces):
            piece = sent[a:b]
            # A question is the clause that ends in "?"/吗, or the last clause of a sentence that does.
            question = bool(_QUESTION_END.search(piece)) or (asks and n == len(pieces) - 1)
            opens_if = bool(cs.hypothetical.search(piece))
            out.append(
                Clause(
                    s_start + a,
                    s_start + b,
                    question,
                    bool(cs.past.search(piece)),
                    bool(cs.now.search(piece)),
                    s_start,
                    opens_if or condition,
                    bool(cs.concessive.search(piece)),
                )
            )
            # "如果以后去读研，可能要学一下R语言": the consequent of a condition is no stance either.
            condition = opens_if and n == 0
    return out


def decide(
    src: str, cs: CueSet, cl: Clause, inside: list[ConceptMention], other: bool = False
) -> tuple[Decision | None, bool]:
    """The clause's stance from its cues (None: no cue speaks for the user here) and whether its
    subject is someone other than the user (carried to the next clause of the sentence)."""
    text = src[cl.start : cl.end]
    # Words inside a name are no subject ("Crash Landing on You converted me", "He Got Game").
    who = text
    for mention in (m for m in inside if _name_like(m)):
        a, b = mention.start - cl.start, mention.end - cl.start
        if cs.language == "zh" and cs.others.fullmatch(text, a, b):
            continue  # a kinship word found as a name (哥哥, 闺蜜) is still the subject
        who = who[:a] + "x" * (b - a) + who[b:]
    last_other, last_self = _subjects(cs, who, len(who))
    other_here = last_other > last_self if max(last_other, last_self) >= 0 else other
    if cl.hypothetical:
        return Decision(None, cl.start, cl.end, CONF_NEGATED), other_here
    hits: list[tuple[int, int, int]] = []  # (start, end, class index), offsets in the clause
    # "Is React hard to learn?" asks the other speaker; "what is recursion?", "why doesn't my loop stop?" show being lost.
    asks_other = cl.question and bool(cs.neutral_question.search(text))
    for idx, cc in enumerate(cs.classes):
        pattern = cc.pattern if not cl.question or (cc.stance is Stance.confused and not asks_other) else cc.question
        # "is it good?" asks; "what is recursion?" shows being lost; "anything like Superbad?" names a taste
        if pattern is not None:
            for m in pattern.finditer(text):
                if m.end() > m.start():
                    # Alternation takes the first cue that matches here, not the longest ("not my" before
                    # "not my vibe"); the class's cues are tried one by one only where the class matched.
                    end = m.end()
                    if pattern is cc.pattern:
                        end = max([end, *(e for p in cc.parts if (x := p.match(text, m.start())) and (e := x.end()))])
                    hits.append((m.start(), end, idx))
        if cc.before is not None:
            for mention in inside:
                hit = cc.before.search(text, 0, mention.start - cl.start)
                if hit is not None and hit.end() > hit.start():
                    hits.append((hit.start(), hit.end(), idx))
    if not hits:
        return None, other_here
    # Inside a catalog name a cue is part of the name (a cue around a name, "passed the SQL exam", counts) ("Love Actually", 《喜欢你》), not a stance.
    hits = [
        h
        for h in hits
        if not any(m.in_catalog and m.start - cl.start <= h[0] and h[1] <= m.end - cl.start for m in inside)
    ]
    # Longest first: an overlapping shorter cue is part of a longer one ("not a fan" holds "fan").
    hits.sort(key=lambda h: (-(h[1] - h[0]), h[2], h[0]))
    kept: list[tuple[int, int, int]] = []
    for h in hits:
        if not any(h[0] < k[1] and k[0] < h[1] for k in kept):
            kept.append(h)
    best: Decision | None = None
    best_rank: tuple[int, int] | None = None
    blocked: Decision | None = None
    for start, end, idx in kept:
        cc = cs.classes[idx]
        a, b = cl.start + start, cl.start + end
        o, s_ = _subjects(cs, who, start, text[start:end])
        someone_else = (o > s_ if max(o, s_) >= 0 else other) and not cs.self_.match(text, start)
        if someone_else:
            # Someone else's taste: no stance here, and no sentiment guess either.
            blocked = blocked or Decision(None, a, b, CONF_NEGATED)
            continue
        stance: Stance | None = cc.stance
        conf = CONF_STANCE
        lead = text[max(0, start - 24) : start]
        if cs.negators.search(lead):
            stance, conf = cc.negated, CONF_NEGATED
            if cc.stance is Stance.interested and cs.not_yet.search(lead):
                stance = None  # "haven't started learning it", 还没开始学: not yet, not a dislike
        if stance is None:
            blocked = blocked or Decision(None, a, b, CONF_NEGATED)
            continue
        if cs.hedges.search(text):
            conf = min(conf, CONF_HEDGED)
        elif cs.intensifiers.search(text[max(0, start - 12) : end + 6]):
            conf = max(conf, CONF_INTENSE) if conf == CONF_STANCE else conf
        rank = (idx, -start)
        if best_rank is None or rank < best_rank:
            best, best_rank = Decision(stance, a, b, conf), rank
    return best or blocked, other_here


def _subjects(cs: CueSet, text: str, at: int, cue: str = "") -> tuple[int, int]:
    """End offsets of the last other-person and the last first-person subject word before `at`;
    "they" counts as another person unless the cue's subject is a thing ("they make sense")."""
    lead = text[:at]
    # Searched in the whole clause: "you" before "explain"/"recommend" is asked to act, not a subject.
    other = max(
        (m.end() for m in cs.others.finditer(text) if m.end() <= at and _subject_position(cs, text, m.start())),
        default=-1,
    )
    if not cs.thing_subject.search(cue):
        other = max(other, max((m.end() for m in cs.others_or_things.finditer(lead)), default=-1))
    own = max((m.end() for m in cs.self_.finditer(lead)), default=-1)
    return other, own


def _subject_position(cs: CueSet, text: str, at: int) -> bool:
    """Can a person named at `at` be a subject? Not after a verb or preposition ("I can beat my dad",
    "I told my friend"): only at the start or after a conjunction, a verb of saying or an auxiliary."""
    return cs.subject_lead is None or bool(cs.subject_lead.search(text, 0, at))


def _is_list_rest(src: str, cl: Clause, inside: list[ConceptMention]) -> bool:
    """Is the clause only names joined by commas and "and" (the tail of a list)?"""
    rest, pos = [], cl.start
    for m in inside:
        rest.append(src[pos : m.start])
        pos = m.end
    rest.append(src[pos : cl.end])
    return bool(_LIST_REST.match(" ".join(rest).strip(" .!。！")))


@lru_cache(maxsize=1)
def _vader() -> Any:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


def masked_clause(src: str, cl: Clause, inside: Sequence[ConceptMention]) -> str:
    """The clause with the names masked as "it": a title like "Bad Moms" is no opinion."""
    parts, pos = [], cl.start
    for m in (x for x in inside if _name_like(x)):
        parts.append(src[pos : m.start])
        parts.append("it")
        pos = m.end
    parts.append(src[pos : cl.end])
    return "".join(parts)


def _sentiment(src: str, cs: CueSet, cl: Clause, inside: list[ConceptMention]) -> Decision | None:
    """The polarity of a clause no cue decides: the trained preference model (preference.py) over
    the masked clause, with VADER's scores among its inputs. VADER reads the clause without
    politeness ("thanks", "lol" are no opinion of a concept); the model reads it all and has
    learnt what "ok" or "thanks" say. Disliking when the model says so (or VADER is clearly negative
    and the model agrees enough); liking when VADER is clearly positive and the model does not veto
    it ("not nearly as good")."""
    if cl.hypothetical:
        return None
    masked = masked_clause(src, cl, inside)
    polite = str(cs.sentiment_ignore.sub(" ", masked))
    if sum(ch.isalpha() for ch in masked) < 6:
        return None
    scores = _vader().polarity_scores(polite)
    pm = preference.model()
    p = pm.probability(preference.features(masked, scores, reply=not inside))
    if p >= pm.dislike_threshold or (scores["compound"] <= -VADER_THRESHOLD and p >= pm.negative_threshold):
        return Decision(Stance.dislikes, cl.start, cl.end, CONF_SENTIMENT)
    if scores["compound"] >= VADER_THRESHOLD and p < pm.veto_threshold and sum(ch.isalpha() for ch in polite) >= 6:
        return Decision(Stance.interested, cl.start, cl.end, CONF_SENTIMENT)
    return None


def _reread(d: Decision | None, src: str, cs: CueSet, cl: Clause) -> Decision | None:
    """What a clause that no cue decided says about the learner, beyond its polarity: negative with words
    of struggle ("still got half of it wrong", "keeps messing me up") is a struggle, not a dislike; words
    of experience ("at my job", "since college", "in my sleep", "a breeze") are knowing, whether the
    clause is positive or has no polarity at all. Past-only clauses keep their reading (dropped later)."""
    text = src[cl.start : cl.end]
    if d is not None and d.stance is Stance.dislikes and cs.difficulty is not None and cs.difficulty.search(text):
        return Decision(Stance.confused, d.start, d.end, d.confidence)
    if (d is None or d.stance is Stance.interested) and cs.competence is not None:
        found = cs.competence.search(text)
        if found and not (cl.past and not cl.now):
            return Decision(Stance.knows, cl.start, cl.end, CONF_SENTIMENT)
    return d


__all__ = ["extract_stances", "analyse_turn", "split_clauses", "decide", "TurnStances", "ReplyStance", "Clause"]
