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
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from graphmem.extraction import preference, stance_model
from graphmem.extraction.stance_cues import CueClass, CueSet, cues
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
# 么 ends a question (要么, 干么), but not in 什么/怎么 ending a statement: "不知道作者在讲什么".
_QUESTION_END = re.compile(r"(?:[?？]|吗|(?<![什怎])么|呢)\s*[\"”')）]*\s*$")


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


@dataclass
class _TurnState:
    """What the clause loop carries from one clause to the next (one turn)."""

    current: dict[str, tuple[ConceptMention, Decision, bool]] = field(default_factory=dict)  # key -> (m, d, past)
    targets: list[ConceptMention] = field(default_factory=list)
    named: bool = False  # has the turn named something of its own yet (a catalog or name-like mention)?
    previous: Decision | None = None
    pending: Decision | None = None  # a cue before any mention: "One of my favourites is ..., called X"
    reply: ReplyStance | None = None
    cue_mentions: list[tuple[int, int]] = field(default_factory=list)
    other: bool = False  # the subject carried from the clause before, within a sentence
    waiting: list[ConceptMention] = field(default_factory=list)  # this sentence's catalog names, no stance yet
    sentence_start: int = -1
    spoken_by_other: set[str] = field(default_factory=set)  # names in a clause whose subject is someone else
    aside: dict[str, bool] = field(default_factory=dict)  # key -> named last in a question/hypothetical/other's


def analyse_turn(
    text: str, language: str, sentences: list[tuple[int, int]], mentions: list[ConceptMention]
) -> TurnStances:
    """Clause by clause, the newest clause winning: the turn's stances, reply stance and cue-like mentions."""
    cs = cues(language)
    src = _norm_quotes(text)  # same length: spans stay valid
    st = _TurnState()
    for cl in split_clauses(src, cs, sentences, mentions):
        _clause_step(st, text, src, cs, cl, mentions)
    if cs.language == "zh":
        _add_zh_guesses(st, src, sentences, mentions, cs)
    out = _kept_stances(st.current, text)
    if cs.language == "en":
        out = _revise_en(st, text, mentions, out)
    return TurnStances(out, st.reply, st.cue_mentions)


def _clause_step(st: _TurnState, text: str, src: str, cs: CueSet, cl: Clause, mentions: list[ConceptMention]) -> None:
    """One clause: decide its stance, pick whom it speaks about, record it (the newest clause wins)."""
    if cl.sentence_start != st.sentence_start:
        st.sentence_start, st.other, st.waiting = cl.sentence_start, False, []
    inside = [m for m in mentions if m.start >= cl.start and m.end <= cl.end]
    d, st.other = decide(src, cs, cl, inside, st.other)
    if st.other:
        st.spoken_by_other.update(m.key for m in inside)
    inside = _drop_cue_mentions(st, src, cs, cl, inside, d)
    if d is None and inside and not st.other:
        d = _elliptic_negation(st, src, cs, cl, inside)
    if d is None and _wants_sentiment(st, cs, cl, inside):
        d = _reread(_sentiment(src, cs, cl, inside), src, cs, cl)
    st.named = st.named or any(_name_like(m) for m in inside)
    _note_reply(st, text, d)
    d = _choose_targets(st, src, cl, inside, d)
    for m in inside:  # the newest clause naming it: is it the user's own statement at all?
        st.aside[m.key] = d is None and (cl.question or st.other or cl.hypothetical)
    if d is None:
        st.waiting.extend(m for m in inside if m.in_catalog and m not in st.waiting)
    else:
        _apply_decision(st, cl, inside, d, _points_ahead(src, cs, cl, inside, d))
    _mark_lesser(st, src, cs, cl, inside)


def _elliptic_negation(
    st: _TurnState, src: str, cs: CueSet, cl: Clause, inside: list[ConceptMention]
) -> Decision | None:
    """ "I've seen Heat but not Tenet": the clause before's cue, negated (seen -> no stance, like -> dislikes)."""
    prev = st.previous
    if cs.elliptic_negation is None or prev is None or prev.stance is None or cl.question:
        return None
    rest, pos = [], cl.start
    for m in inside:
        rest.append(src[pos : m.start])
        pos = m.end
    rest.append(src[pos : cl.end])
    if not cs.elliptic_negation.match(" ".join(rest)):
        return None
    negated = next(cc.negated for cc in cs.classes if cc.stance is prev.stance)
    return Decision(negated, cl.start, cl.end, CONF_NEGATED)


def _points_ahead(src: str, cs: CueSet, cl: Clause, inside: list[ConceptMention], d: Decision) -> bool:
    """Is the clause's cue one that speaks only of the name right after it ("but not stuff like X")?"""
    return any(
        cc.before is not None
        and cc.stance is d.stance
        and any((h := cc.before.search(src, cl.start, m.start)) is not None and h.start() == d.start for m in inside)
        for cc in cs.classes
    )


def _mark_lesser(st: _TurnState, src: str, cs: CueSet, cl: Clause, inside: list[ConceptMention]) -> None:
    """The name right after the user's own "better than" is the one liked less ("I liked it better than X")."""
    if cs.lesser_than is None or cl.question or cl.hypothetical or st.other:
        return
    for m in inside:
        if not _name_like(m):
            continue
        hit = cs.lesser_than.search(src, cl.start, m.start)
        if hit is None or (cs.comparison_negated and cs.comparison_negated.search(src, cl.start, hit.start())):
            continue
        _record(st.current, m, Decision(Stance.dislikes, hit.start(), m.end, CONF_STANCE), False, False)
        st.waiting = [w for w in st.waiting if w is not m]


def _note_reply(st: _TurnState, text: str, d: Decision | None) -> None:
    """A stance before the turn named anything of its own is its reply to what the other speaker named."""
    if d is not None and d.stance is not None and not st.named:
        # The newest such clause is the reply ("那部我看过，挺无聊的": seen it, and it was boring).
        st.reply = ReplyStance(d.stance, d.start, d.end, text[d.start : d.end], d.confidence)


def _drop_cue_mentions(
    st: _TurnState, src: str, cs: CueSet, cl: Clause, inside: list[ConceptMention], d: Decision | None
) -> list[ConceptMention]:
    """An open-vocabulary "concept" that is a cue itself ("Meh", "second nature") is how, not what about."""
    if not inside:
        return inside
    cued = [m for m in inside if not m.in_catalog and _is_cue_mention(m, src, cs, cl, d)]
    if not cued:
        return inside
    st.cue_mentions.extend((m.start, m.end) for m in cued)
    return [m for m in inside if m not in cued]


def _is_cue_mention(m: ConceptMention, src: str, cs: CueSet, cl: Clause, d: Decision | None) -> bool:
    """The mention is a whole cue, or overlaps the clause's cue that is shorter than the clause."""
    if any(cc.fullmatch(src[m.start : m.end]) for cc in cs.classes):
        return True
    return d is not None and m.start < d.end and d.start < m.end and d.end - d.start < cl.end - cl.start


def _wants_sentiment(st: _TurnState, cs: CueSet, cl: Clause, inside: list[ConceptMention]) -> bool:
    """A cue-less English statement of the user's own, about something: the sentiment reading may speak."""
    if cs.language != "en" or cl.question or st.other:
        return False
    return bool(inside or st.targets or not st.named)


def _choose_targets(
    st: _TurnState, src: str, cl: Clause, inside: list[ConceptMention], d: Decision | None
) -> Decision | None:
    """Whom the clause speaks about: its own mentions, a list sharing the stance before, or a pending cue."""
    if inside:
        if d is None and st.previous is not None and st.previous.stance is not None and _is_list_rest(src, cl, inside):
            d = st.previous  # "I want to learn Python, Django and Flask": the list shares the stance
            st.targets = [*st.targets, *inside]
        else:
            if d is None and st.pending is not None and not cl.question:
                d = st.pending  # "知道，鸟巢的门票…", "One of my favourites is a comedy, called X"
            st.targets = inside
        st.pending = None
    elif d is not None and d.stance is not None and not st.targets:
        st.pending = d
    return d


def _apply_decision(st: _TurnState, cl: Clause, inside: list[ConceptMention], d: Decision, ahead: bool = False) -> None:
    """Give the clause's decision to its targets (and to catalog names still waiting), then update waiting.
    `ahead`: the cue speaks only of the name after it, never of a name waiting from before."""
    st.previous = d
    past = cl.past and not cl.now
    apply = st.targets
    spill = not ahead and not any(m.in_catalog for m in inside)
    if d.stance is not None and not st.other and not past and st.waiting and spill:
        # "SQL used to scare me but after that internship I can write joins in my sleep", "linear
        # regression is old news for me, I teach it to undergrads": a later clause that names only
        # common nouns still speaks about the catalog name before it.
        apply = [*st.targets, *(m for m in st.waiting if m not in st.targets)]
    for m in apply:
        _record(st.current, m, d, past, cl.concessive)
    if past and d.stance is not None:
        st.waiting = [*st.waiting, *(m for m in st.targets if m.in_catalog and m not in st.waiting)]
    else:
        st.waiting = []


def _record(
    current: dict[str, tuple[ConceptMention, Decision, bool]],
    m: ConceptMention,
    d: Decision,
    past: bool,
    concessive: bool,
) -> None:
    """The newer clause's decision replaces the older, unless it is a blocked cue or a concession."""
    old = current.get(m.key)
    if d.stance is None and old is not None and old[1].stance is not None:
        return  # "I want Rust, I haven't learned it": a blocked cue does not erase a stance
    if concessive and old is not None and old[1].stance is not None and not old[2]:
        return  # "对量子力学特别好奇，虽然不太懂": the concession does not replace the main clause
    current[m.key] = (m, d, past)


def _add_zh_guesses(
    st: _TurnState, src: str, sentences: list[tuple[int, int]], mentions: list[ConceptMention], cs: CueSet
) -> None:
    """Names no cue spoke about: the trained Chinese model's guess (zh/stance_model.py), or nothing."""
    decided = set(st.current) | st.spoken_by_other
    for m, stance, a, b, conf in zh_stance_model.guesses(src, sentences, mentions, decided, cs):
        st.current[m.key] = (m, Decision(stance, a, b, conf), False)


def _kept_stances(current: dict[str, tuple[ConceptMention, Decision, bool]], text: str) -> list[StanceMention]:
    """The decided stances in mention order, minus blocked cues and past-only stances (except knowing)."""
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
    return out


def _revise_en(
    st: _TurnState, text: str, mentions: list[ConceptMention], out: list[StanceMention]
) -> list[StanceMention]:
    """The trained stance model reads each named concept's sentence: confident cue rules stand (combine)."""
    cued_spans = set(st.cue_mentions)
    named_mentions = [m for m in mentions if _name_like(m) and (m.start, m.end) not in cued_spans]
    kept = {s.key: s for s in out}
    rules = {
        key: stance_model.RuleView(
            kept[key].stance.value if key in kept else None,
            kept[key].confidence if key in kept else 0.0,
            key in st.current and key not in kept,
            st.aside.get(key, False),
        )
        for key in {*st.current, *st.aside}
    }
    return stance_model.revise(text, named_mentions, rules, out)


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
    who = _mask_names(text, cs, cl, inside)
    last_other, last_self = _subjects(cs, who, len(who))
    other_here = last_other > last_self if max(last_other, last_self) >= 0 else other
    if cl.hypothetical:
        return Decision(None, cl.start, cl.end, CONF_NEGATED), other_here
    hits = _cue_hits(text, cs, cl, inside)
    if not hits:
        return None, other_here
    best: Decision | None = None
    best_rank: tuple[int, int] | None = None
    blocked: Decision | None = None
    for start, end, idx in _outermost(hits, cl, inside):
        found = _hit_decision(cs, cl, text, who, other, start, end, idx)
        if found.stance is None:
            blocked = blocked or found
            continue
        rank = (idx, -start)
        if best_rank is None or rank < best_rank:
            best, best_rank = found, rank
    return best or blocked, other_here


def _mask_names(text: str, cs: CueSet, cl: Clause, inside: list[ConceptMention]) -> str:
    """Words inside a name are no subject ("Crash Landing on You converted me", "He Got Game")."""
    who = text
    for mention in (m for m in inside if _name_like(m)):
        a, b = mention.start - cl.start, mention.end - cl.start
        if cs.language == "zh" and cs.others.fullmatch(text, a, b):
            continue  # a kinship word found as a name (哥哥, 闺蜜) is still the subject
        who = who[:a] + "x" * (b - a) + who[b:]
    return who


def _cue_hits(text: str, cs: CueSet, cl: Clause, inside: list[ConceptMention]) -> list[tuple[int, int, int]]:
    """Every cue match in the clause as (start, end, class index), offsets in the clause."""
    hits: list[tuple[int, int, int]] = []
    # "Is React hard to learn?" asks the other speaker; "what is recursion?", "why doesn't my loop stop?" show being lost.
    asks_other = cl.question and bool(cs.neutral_question.search(text))
    for idx, cc in enumerate(cs.classes):
        pattern = cc.pattern if not cl.question or (cc.stance is Stance.confused and not asks_other) else cc.question
        # "is it good?" asks; "what is recursion?" shows being lost; "anything like Superbad?" names a taste
        if pattern is not None:
            hits.extend(_pattern_hits(text, cc, pattern, idx))
        if cc.before is not None:
            # Refusing or contrasting ("No X, please", "but not stuff like X") speaks of a name, never of a
            # common noun ("no biggie", "no problem there").
            named = inside if cc.stance is not Stance.dislikes else [m for m in inside if _name_like(m)]
            hits.extend(_before_hits(text, cc.before, cl, named, idx))
    return hits


def _pattern_hits(text: str, cc: CueClass, pattern: re.Pattern[str], idx: int) -> list[tuple[int, int, int]]:
    """A class's cue matches, each stretched to its longest single cue."""
    hits: list[tuple[int, int, int]] = []
    if pattern is cc.pattern:
        scan, parts, folded, folded_parts = pattern, cc.parts, cc.folded_pattern, cc.folded_parts
    else:
        scan, parts, folded, folded_parts = pattern, (), cc.folded_question if pattern is cc.question else None, ()
    if folded is not None and folded_parts is not None and text.isascii():
        # The same matches, case-sensitively in the lowercased text: faster (stance_cues.ascii_folded).
        scan, parts, text = folded, folded_parts, text.lower()
    for m in scan.finditer(text):
        if m.end() > m.start():
            # Alternation takes the first cue that matches here, not the longest ("not my" before
            # "not my vibe"); the class's cues are tried one by one only where the class matched.
            end = m.end()
            if parts:
                end = max([end, *(e for p in parts if (x := p.match(text, m.start())) and (e := x.end()))])
            hits.append((m.start(), end, idx))
    return hits


def _before_hits(
    text: str, before: re.Pattern[str], cl: Clause, inside: list[ConceptMention], idx: int
) -> list[tuple[int, int, int]]:
    """Cues that count only before a mention of the clause."""
    hits: list[tuple[int, int, int]] = []
    for mention in inside:
        hit = before.search(text, 0, mention.start - cl.start)
        if hit is not None and hit.end() > hit.start():
            hits.append((hit.start(), hit.end(), idx))
    return hits


def _outermost(
    hits: list[tuple[int, int, int]], cl: Clause, inside: list[ConceptMention]
) -> list[tuple[int, int, int]]:
    """Cues outside catalog names, longest first, with overlapped shorter cues dropped."""
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
    return kept


def _hit_decision(cs: CueSet, cl: Clause, text: str, who: str, other: bool, start: int, end: int, idx: int) -> Decision:
    """One cue's reading: its stance (None when someone else speaks or a negation blocks it) and confidence."""
    cc = cs.classes[idx]
    a, b = cl.start + start, cl.start + end
    o, s_ = _subjects(cs, who, start, text[start:end])
    someone_else = (o > s_ if max(o, s_) >= 0 else other) and not cs.self_.match(text, start)
    if someone_else:
        # Someone else's taste: no stance here, and no sentiment guess either.
        return Decision(None, a, b, CONF_NEGATED)
    if cs.language == "zh" and _a_not_a(text, start):
        # "不知道好不好玩", "喜不喜欢": the A-not-A form asks whether, it states neither reading.
        return Decision(None, a, b, CONF_NEGATED)
    stance, conf = _negation(cs, cc, text[max(0, start - 24) : start])
    if stance is None:
        return Decision(None, a, b, CONF_NEGATED)
    return Decision(stance, a, b, _cue_confidence(cs, text, start, end, conf))


def _a_not_a(text: str, start: int) -> bool:
    """Is the cue at `start` the second half of a Chinese A-not-A question ("好不好玩", "难不难")?"""
    return start >= 2 and text[start - 1] in "不没" and text[start - 2] == text[start]


def _negation(cs: CueSet, cc: CueClass, lead: str) -> tuple[Stance | None, float]:
    """A negator right before the cue turns the class into its negated reading."""
    if not cs.negators.search(lead):
        return cc.stance, CONF_STANCE
    if cc.stance is Stance.interested and cs.not_yet.search(lead):
        return None, CONF_NEGATED  # "haven't started learning it", 还没开始学: not yet, not a dislike
    return cc.negated, CONF_NEGATED


def _cue_confidence(cs: CueSet, text: str, start: int, end: int, conf: float) -> float:
    """Hedges lower the confidence; an intensifier near an unnegated cue raises it a little."""
    if cs.hedges.search(text):
        return min(conf, CONF_HEDGED)
    if cs.intensifiers.search(text[max(0, start - 12) : end + 6]):
        return max(conf, CONF_INTENSE) if conf == CONF_STANCE else conf
    return conf


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
