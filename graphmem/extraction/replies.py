"""A user's reply about what the other speaker just named is a stance toward it.

"Have you seen Spanglish?" — "I didn't like that one at all." / "Sounds good, I'll check it out." /
"那部我看过，挺无聊的". The user turn names nothing before its cue; stances.py reports that cue as the
turn's ReplyStance, and this module gives it to the concepts of the assistant turns since the user
last spoke (the reply's antecedents; ReDial recommenders often split one suggestion over several
messages), or, for a user's follow-up turns that still name nothing ("I haven't seen it." — "But it
sounds good."), to the same antecedents as the reply before.

* Only name-like antecedents (the confidence floor of coreference.py), never the user's own names.
* A reply with a singular reference ("it", "that one", 这部) goes to the first named antecedent
  (subject position, as in coreference.py); otherwise to every antecedent of that assistant turn
  ("those sound good", "No I haven't and I don't want to" after "Girls Trip, Friday?").
* The stance keeps the reply's evidence span (the cue in the user's turn), with a lower confidence.
Pure: inputs are not modified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graphmem.extraction.coreference import MIN_ANTECEDENT_CONFIDENCE
from graphmem.extraction.stance_cues import cues
from graphmem.extraction.stances import ReplyStance, _name_like, analyse_turn
from graphmem.models import ConceptMention, ExtractorName, PriorTurn, Stance, StanceMention, TurnExtraction

CONFIDENCE_FACTOR = 0.8
CONF_AGREE = 0.6
MAX_TARGETS = 4

_SINGULAR = re.compile(
    r"\b(?:it|that one|this one|that movie|this movie|that film|this film|that book|that course)\b|这部|那部|这个|那个|这本|那本|它",
    re.IGNORECASE,
)


def attach_replies(
    texts: Sequence[str],
    roles: Sequence[str],
    extractions: Sequence[TurnExtraction],
    replies: Sequence[ReplyStance | None],
    prior: PriorTurn | None = None,
) -> list[TurnExtraction]:
    out: list[TurnExtraction] = []
    opinions: dict[str, StanceMention] = {}  # the assistant's own stance toward what it just named
    targets: list[ConceptMention] = (
        _named(prior.concepts, "en") if prior is not None and prior.role == "assistant" else []
    )
    last_role = prior.role if prior is not None else None
    given: dict[str, Stance] = {}  # what the user's replies said so far about the current targets
    for text, role, ex, reply in zip(texts, roles, extractions, replies, strict=True):
        if role != "user":
            named = _named(ex.concepts, ex.language)
            if named:
                if last_role == "user" or not targets:
                    targets, opinions, given = named, {}, {}
                else:
                    targets = _merge(targets, named)
                said = analyse_turn(text, ex.language, [(0, len(text))], named).stances
                opinions.update({s.key: s for s in said if s.stance in (Stance.interested, Stance.dislikes)})
            out.append(ex)
            last_role = role
            continue
        own = [m for m in ex.concepts if m.extractor is not ExtractorName.coreference and _name_like(m)]
        # The reply stance was said before the turn named anything of its own ("I don't like ghost
        # stories. I hated Poltergeist!"): it is about what the assistant named.
        agreed: list[ConceptMention] = []
        if reply is None and targets and opinions and not own and cues(ex.language).agreement.match(text):
            # "Anchorman was really good." — "It was.": the user agrees with the assistant's opinion.
            agreed = [m for m in targets if m.key in opinions]
            if agreed:
                reply = ReplyStance(opinions[agreed[0].key].stance, 0, len(text), text, CONF_AGREE)
                agreed = [m for m in agreed if opinions[m.key].stance is reply.stance]
        if reply is not None and reply.stance is Stance.interested and targets and not agreed:
            # "Not really a fan of that one. I like the first half hour but …", "Too old for my taste. I was
            # hoping for something from the 80s": a liking after a dislike in one reply is about
            # something else or a concession; the dislike is the verdict.
            reply = _earlier_dislike(text, ex, reply)
        if reply is not None and targets:
            chosen = agreed or (targets[:1] if _SINGULAR.search(text) else targets[:MAX_TARGETS])
            if reply.stance is Stance.interested and not _SINGULAR.search(text):
                # A follow-up turn extends the reply, it does not take back its dislike ("… but I do not
                # like much." — "I like his more out there funny ones.").
                chosen = [m for m in chosen if given.get(m.key) is not Stance.dislikes]
            given.update({m.key: reply.stance for m in chosen})
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
            ex = ex.model_copy(update={"stances": [*ex.stances, *(a for a in added if a.key not in have)]})
        if own:
            targets = []  # the user moved on to names of their own
        out.append(ex)
        last_role = role
    return out


def _earlier_dislike(text: str, ex: TurnExtraction, reply: ReplyStance) -> ReplyStance:
    """The newest dislike among the reply clauses before `reply` in its turn, else `reply`."""
    head = text[: reply.start]
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
        head = head[: earlier.reply.start]
    return reply


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
