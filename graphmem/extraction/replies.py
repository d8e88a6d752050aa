"""A user's reply about what the other speaker just named is a stance toward it.

"Have you seen Spanglish?" — "I didn't like that one at all." / "Sounds good, I'll check it out." /
"那部我看过，挺无聊的". The user turn names nothing before its cue; stances.py reports that cue as the
turn's ReplyStance, and this module gives it to the concepts of the assistant turns since the user
last spoke (the reply's antecedents; ReDial recommenders often split one suggestion over several
messages), or, for a user's follow-up turns that still name nothing ("I haven't seen it." — "But it
sounds good."), to the same antecedents as the reply before.

* Only name-like antecedents (the confidence floor of coreference.py), never the user's own names.
  The user moves on (the antecedents end) when they name something of their own — but a name of
  another kind than catalog titles (an actor, a director) keeps catalog antecedents: "Another fine
  piece of work by Denis Villeneuve." — "I don't really like it though." is about the film.
* A reply with a singular reference ("it", "that one", 这部) goes to the first named antecedent
  (subject position, as in coreference.py); an ordinal one ("the first one", "the second one", "the
  latter") to the antecedent at that place in reading order; otherwise to every antecedent of that
  assistant turn ("those sound good", "No I haven't and I don't want to" after "Girls Trip, Friday?").
* Disliking a kind in the reply ("I'm not into spy movies", "I don't really like those kinds of
  films"), with no name of the user's own except the suggested title itself, dislikes the suggestion.
* In one reply a dislike followed by a liking, a word of knowing or of confusion ("I didn't like that
  one much but I can't remember why") keeps the dislike as the verdict; a follow-up turn without a
  reference extends the reply before and does not reverse its verdict, either way.
* The stance keeps the reply's evidence span (the cue in the user's turn), with a lower confidence.
Pure: inputs are not modified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from graphmem.extraction.coreference import MIN_ANTECEDENT_CONFIDENCE
from graphmem.extraction.stance_cues import cues
from graphmem.extraction.stances import ReplyStance, _name_like, analyse_turn, split_clauses
from graphmem.models import ConceptMention, ExtractorName, PriorTurn, Stance, StanceMention, TurnExtraction

CONFIDENCE_FACTOR = 0.8
CONF_AGREE = 0.6
MAX_TARGETS = 4

# "loved the first one" / "meh on the second one" after "Heat or Inception?": the named antecedent
# at that place in reading order.
_ORDINAL = re.compile(
    r"\bthe (?:(first|1st)|(second|2nd)|(third|3rd)|(last)) (?:one|movie|film)\b|\bthe (?:(former)|(latter))\b",
    re.IGNORECASE,
)
_ORDINAL_INDEX = (0, 1, 2, -1, 0, -1)  # by the group that matched

_SENTENCE_END = re.compile(r"[.!?。！？]+\s*")

_SINGULAR = re.compile(
    r"\b(?:it|that one|this one|that movie|this movie|that film|this film|that book|that course)\b|这部|那部|这个|那个|这本|那本|它",
    re.IGNORECASE,
)


@dataclass
class _Thread:
    """What the assistant last put on the table and what the user's replies said about it so far."""

    targets: list[ConceptMention]
    in_order: list[ConceptMention]  # the same antecedents in reading order, for "the first one", "the latter"
    last_role: str | None
    opinions: dict[str, StanceMention] = field(default_factory=dict)  # the assistant's own stance to its names
    given: dict[str, Stance] = field(default_factory=dict)  # what the user's replies said about the targets


def attach_replies(
    texts: Sequence[str],
    roles: Sequence[str],
    extractions: Sequence[TurnExtraction],
    replies: Sequence[ReplyStance | None],
    prior: PriorTurn | None = None,
) -> list[TurnExtraction]:
    """The extractions with each user reply's stance added for what the assistant just named."""
    out: list[TurnExtraction] = []
    targets: list[ConceptMention] = (
        _named(prior.concepts, "en") if prior is not None and prior.role == "assistant" else []
    )
    th = _Thread(targets, list(targets), prior.role if prior is not None else None)
    for text, role, ex, reply in zip(texts, roles, extractions, replies, strict=True):
        if role != "user":
            _assistant_turn(th, text, ex)
        else:
            ex = _user_turn(th, text, ex, reply)
        out.append(ex)
        th.last_role = role
    return out


def _assistant_turn(th: _Thread, text: str, ex: TurnExtraction) -> None:
    """The assistant's names become the reply's antecedents (added to them within one assistant run)."""
    named = _named(ex.concepts, ex.language)
    if not named:
        return
    if th.last_role == "user" or not th.targets:
        th.targets, th.in_order, th.opinions, th.given = named, named, {}, {}
    else:
        th.targets = _merge(th.targets, named)
        have_keys = {m.key for m in th.in_order}
        th.in_order = [*th.in_order, *(m for m in named if m.key not in have_keys)]
    said = analyse_turn(text, ex.language, [(0, len(text))], named).stances
    th.opinions.update({s.key: s for s in said if s.stance in (Stance.interested, Stance.dislikes)})


def _user_turn(th: _Thread, text: str, ex: TurnExtraction, reply: ReplyStance | None) -> TurnExtraction:
    """A user turn: find its reply stance (cue, kind dislike or agreement) and give it to the antecedents."""
    own = [m for m in ex.concepts if m.extractor is not ExtractorName.coreference and _name_like(m)]
    if reply is None:
        reply = _kind_reply(th, ex, own)
    # The reply stance was said before the turn named anything of its own ("I don't like ghost
    # stories. I hated Poltergeist!"): it is about what the assistant named.
    agreed: list[ConceptMention] = []
    if reply is None and th.targets and th.opinions and not own and cues(ex.language).agreement.match(text):
        reply, agreed = _agreement(th, text)
    if reply is not None and th.targets and not agreed and _points_past(text, ex, reply, th.in_order):
        # "It was pretty good. I wasn't a fan of the second one." after one title: "the second one" is
        # not on the table (a sequel); the reply about the title is the clause before, if any.
        reply = _earlier_reply(text, ex, reply)
    if reply is not None and reply.stance is not Stance.dislikes and th.targets and not agreed:
        # "Not really a fan of that one. I like the first half hour but …", "Too old for my taste. I was
        # hoping for something from the 80s", "I didn't like that one much but I can't remember why":
        # a liking (or a word of knowing or confusion) after a dislike in one reply is about something
        # else or a concession; the dislike is the verdict.
        reply = _earlier_dislike(text, ex, reply)
    if reply is not None and th.targets:
        ex = _give_reply(th, text, ex, reply, agreed)
    if th.targets:
        ex = _series_dislike(th, ex)
    if _moved_on(th, own):
        th.targets, th.in_order = [], []
    return ex


def _moved_on(th: _Thread, own: list[ConceptMention]) -> bool:
    """The user named things of their own, so later replies no longer point at the assistant's names."""
    # A name of another kind than the catalog's titles ("Another nice piece of work by Steven
    # Spielberg." after "Have you seen King Kong?") still speaks about them: the next reply ("I don't
    # really like it though.") is about the film.
    return bool(own) and (any(m.in_catalog for m in own) or not any(m.in_catalog for m in th.targets))


def _kind_reply(th: _Thread, ex: TurnExtraction, own: list[ConceptMention]) -> ReplyStance | None:
    """Disliking a kind in a turn with no name of its own is disliking what was just suggested."""
    on_table = {m.key for m in th.targets}
    # Repeating the title just named ("I haven't seen It.") is no move to a name of one's own here.
    if th.targets and all(m.key in on_table for m in own) and not any(s.key in on_table for s in ex.stances):
        # "I haven't seen that one. I'm not into horror movies.", "I don't really like those kinds of
        # movies": disliking a kind in the reply is disliking what was just suggested.
        kind = next((s for s in ex.stances if s.stance is Stance.dislikes and _kind(s.key, ex.concepts)), None)
        if kind is not None:
            return ReplyStance(Stance.dislikes, kind.start, kind.end, kind.cue, kind.confidence)
    return None


def _agreement(th: _Thread, text: str) -> tuple[ReplyStance | None, list[ConceptMention]]:
    """ "Anchorman was really good." — "It was.": the user agrees with the assistant's opinion."""
    agreed = [m for m in th.targets if m.key in th.opinions]
    if not agreed:
        return None, agreed
    reply = ReplyStance(th.opinions[agreed[0].key].stance, 0, len(text), text, CONF_AGREE)
    return reply, [m for m in agreed if th.opinions[m.key].stance is reply.stance]


def _give_reply(
    th: _Thread, text: str, ex: TurnExtraction, reply: ReplyStance, agreed: list[ConceptMention]
) -> TurnExtraction:
    """The reply's stance for the antecedents it points at (one, an ordinal one, or all), as new stances."""
    ordinal = _ordinal(text, reply, th.in_order)
    single = ordinal is not None or bool(_SINGULAR.search(text))
    chosen = agreed or ([ordinal] if ordinal is not None else th.targets[:1] if single else th.targets[:MAX_TARGETS])
    if not single:
        # A follow-up turn extends the reply, it does not take back its verdict ("… but I do not
        # like much." — "I like his more out there funny ones."; "that one sounds really nice" —
        # "sorry, I'm not easy").
        chosen = [m for m in chosen if th.given.get(m.key) in (None, reply.stance)]
    th.given.update({m.key: reply.stance for m in chosen})
    added = [
        StanceMention(
            key=m.key,
            name=m.name,
            stance=reply.stance,
            start=reply.start,
            end=reply.end,
            cue=reply.cue,
            confidence=round(reply.confidence * CONFIDENCE_FACTOR, 3),
        )
        for m in chosen
    ]
    have = {s.key for s in ex.stances}
    return ex.model_copy(update={"stances": [*ex.stances, *(a for a in added if a.key not in have)]})


def _series_dislike(th: _Thread, ex: TurnExtraction) -> TurnExtraction:
    """Disliking a series in reply is disliking the instalment just suggested: "Have you seen Star Wars:
    The Last Jedi?" — "Not a Star Wars fan."; "How about Halloween II?" — "I never liked Halloween"."""
    have = {s.key for s in ex.stances}
    on_table = {m.key for m in th.targets}
    added: list[StanceMention] = []
    for s in ex.stances:
        if s.stance is not Stance.dislikes or s.key in on_table:
            continue  # only a name of the user's own: the reply to a suggested title is _give_reply's
        head = _title_words(s.name)
        for m in th.targets:
            words = _title_words(m.name)
            if m.key not in have and head and len(words) > len(head) and words[: len(head)] == head:
                have.add(m.key)
                added.append(s.model_copy(update={"key": m.key, "name": m.name}))
    if not added:
        return ex
    th.given.update({a.key: Stance.dislikes for a in added})
    return ex.model_copy(update={"stances": [*ex.stances, *added]})


def _title_words(name: str) -> list[str]:
    """A title's words without a leading article, for "is the series' name the start of this title"."""
    words = re.findall(r"\w+", name.lower())
    return words[1:] if words[:1] == ["the"] else words


def _earlier_dislike(text: str, ex: TurnExtraction, reply: ReplyStance) -> ReplyStance:
    """The newest dislike among the reply clauses before `reply` in its turn, else `reply`."""
    head = text[: _clause_start(text, ex, reply.start)]
    for _ in range(4):  # a reply holds a few clauses; bounded for very long turns
        if not head.strip():
            break
        # Without the coreference mentions ("that one" -> the film): the reply is about those targets.
        own = [m for m in ex.concepts if m.end <= len(head) and m.extractor is not ExtractorName.coreference]
        earlier = analyse_turn(head, ex.language, [(0, len(head))], own)
        if earlier.reply is None:
            break
        if earlier.reply.stance is Stance.dislikes:
            return earlier.reply
        head = head[: _clause_start(head, ex, earlier.reply.start)]
    return reply


def _earlier_reply(text: str, ex: TurnExtraction, reply: ReplyStance) -> ReplyStance | None:
    """The reply stance of the turn's clauses before `reply`'s clause (None: nothing before it)."""
    head = text[: _clause_start(text, ex, reply.start)]
    if not head.strip():
        return None
    own = [m for m in ex.concepts if m.end <= len(head) and m.extractor is not ExtractorName.coreference]
    return analyse_turn(head, ex.language, [(0, len(head))], own).reply


def _points_past(text: str, ex: TurnExtraction, reply: ReplyStance, in_order: Sequence[ConceptMention]) -> bool:
    """Does the reply's clause hold an ordinal reference past the names on the table ("the second one"
    after one title)? Then it speaks about something else, and guessing the title would be wrong."""
    start, end = _clause_bounds(text, ex, reply.start)
    for m in _ORDINAL.finditer(text, start, end):
        index = _ORDINAL_INDEX[next(i for i, g in enumerate(m.groups()) if g)]
        if not -len(in_order) <= index < len(in_order):
            return True
    return False


def _clause_start(text: str, ex: TurnExtraction, at: int) -> int:
    """Where the clause holding offset `at` begins. The text before a cue is cut there, never inside
    the clause: its opening words alone ("The first" of "The first was great.") are no clause, and
    the preference model would read them as one."""
    return _clause_bounds(text, ex, at)[0]


def _clause_bounds(text: str, ex: TurnExtraction, at: int) -> tuple[int, int]:
    """The clause holding offset `at` as (start, end); (at, end of text) when none holds it."""
    src = text.replace("\u2019", "'").replace("\u2018", "'")
    own = [m for m in ex.concepts if m.end <= len(text) and m.extractor is not ExtractorName.coreference]
    # Sentence ends, except inside a name ("Airplane!"): clauses never run across them.
    ends = [e.end() for e in _SENTENCE_END.finditer(src) if not any(m.start < e.end() < m.end for m in own)]
    sentences = [(a, b) for a, b in zip([0, *ends], [*ends, len(src)]) if b > a]
    for cl in split_clauses(src, cues(ex.language), sentences, own):
        if cl.start <= at < cl.end:
            return cl.start, cl.end
    return at, len(text)


def _ordinal(text: str, reply: ReplyStance, in_order: Sequence[ConceptMention]) -> ConceptMention | None:
    """The antecedent an ordinal reference nearest to the reply's cue points at ("meh on the second
    one" -> the second title named), None without one or when it points past the names."""
    found = [(min(abs(m.start() - reply.end), abs(reply.start - m.end())), m) for m in _ORDINAL.finditer(text)]
    if not found or len(in_order) < 2:
        return None
    _, m = min(found, key=lambda x: x[0])
    index = _ORDINAL_INDEX[next(i for i, g in enumerate(m.groups()) if g)]
    return in_order[index] if -len(in_order) <= index < len(in_order) else None


def _kind(key: str, concepts: Sequence[ConceptMention]) -> bool:
    """Is `key` a common noun of the turn ("horror movies", "those kind of movies"), not a name?"""
    return any(m.key == key and not _name_like(m) and m.extractor is not ExtractorName.coreference for m in concepts)


def _named(concepts: Sequence[ConceptMention], language: str) -> list[ConceptMention]:
    floor = MIN_ANTECEDENT_CONFIDENCE.get(language, 0.5)
    seen: dict[str, ConceptMention] = {}
    for m in concepts:
        if m.confidence >= max(floor, 0.6) and m.extractor is not ExtractorName.coreference and m.key not in seen:
            seen[m.key] = m
    return list(seen.values())


def _merge(a: list[ConceptMention], b: list[ConceptMention]) -> list[ConceptMention]:
    # Several assistant messages in a row: the newest names first.
    keys = {m.key for m in b}
    return [*b, *(m for m in a if m.key not in keys)]


__all__ = ["attach_replies"]
