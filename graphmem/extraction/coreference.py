"""References back to what the assistant just named.

A learner who answers the assistant's "It was directed by Marc Webb" with
"what else has he made?", or "知道呀，是马克·韦布" with "那你对他了解吗？", is
talking about Marc Webb without naming him. Counting only named mentions
leaves such a concept as the assistant's alone (weight 3, below the
threshold), although the user asked about it.

The rule is a salience heuristic in the spirit of Lappin and Leass (1994),
kept deliberately narrow:

* only a **user** turn whose previous turn in the session is an **assistant**
  turn is read;
* the user turn holds a third-person reference (他/她/它/此片/这部电影/这个人…,
  or "he", "she", "him", "her", "it", "this one", "that one", "they", "them");
* English turns that name a concept of their own are left alone ("it" then
  mostly points inside the turn);
* the antecedent is the assistant turn's *first* name-like mention
  (confidence at least ``MIN_ANTECEDENT_CONFIDENCE``) that the user turn does
  not name itself: subject and topic come first in English and Chinese
  sentences, and Lappin and Leass rank the subject highest. (On KdConv the
  first and the last mention score alike: 0.816 vs 0.815 entity recall.)

The result is an ordinary user-role ConceptMention on the pronoun's span, with
extractor ``coreference`` and a confidence below the antecedent's, so
provenance shows exactly which words carried it. Relations and stances are
not derived from it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graphmem.extraction.language import ZH
from graphmem.models import ConceptMention, ExtractorName, PriorTurn, TurnExtraction

# Name-like mentions only: catalog hits, entities, names and titles; Chinese common nouns (0.4) are
# not antecedents. English noun chunks (0.5) are, since the tutor's topic is often one.
MIN_ANTECEDENT_CONFIDENCE = {ZH: 0.6, "en": 0.5}
CONFIDENCE_FACTOR = 0.8

_ZH_REFERENCE = re.compile(
    "此片|该片|此人|这部电影|这部影片|这部片子|这部片|这部剧|这部作品|这首歌|这张专辑|这个人|这位|这家公司|这个组合|这支乐队|"
    "这个乐队|这所学校|这个地方|这个景点|这座|他|她|它"
)
_PERSONAL = re.compile(r"he|she|him|her|his", re.IGNORECASE)
_EN_REFERENCE = re.compile(r"\b(?:he|she|him|her|his|it|its|they|them|this one|that one)\b", re.IGNORECASE)


def carry_references(
    texts: Sequence[str], roles: Sequence[str], extractions: Sequence[TurnExtraction], prior: PriorTurn | None = None
) -> list[TurnExtraction]:
    """``extractions`` with a coreference mention added to each user turn that refers back.

    ``texts``/``roles``/``extractions`` are one session's turns in order; ``prior`` is
    the stored turn before them (or None). Pure: inputs are not modified.
    """
    out: list[TurnExtraction] = []
    previous = prior
    previous_text = ""  # the stored prior turn's text is not at hand: its chain is not judged
    for text, role, ex in zip(texts, roles, extractions, strict=True):
        added = None
        if role == "user" and previous is not None and previous.role == "assistant":
            added = _reference(text, ex, previous.concepts, previous_text)
        if added is not None:
            out.append(ex.model_copy(update={"concepts": sorted([*ex.concepts, added], key=lambda m: m.start)}))
        else:
            out.append(ex)
        previous = PriorTurn(role, tuple(ex.concepts))
        previous_text = text
    return out


def _reference(
    text: str, ex: TurnExtraction, antecedents: Sequence[ConceptMention], previous_text: str = ""
) -> ConceptMention | None:
    lang = ex.language
    if lang != ZH and ex.concepts:
        return None
    match = (_ZH_REFERENCE if lang == ZH else _EN_REFERENCE).search(text)
    if match is None:
        return None
    own = {m.key for m in ex.concepts}
    floor = MIN_ANTECEDENT_CONFIDENCE.get(lang, 0.5)
    candidates = [
        m
        for m in antecedents
        if m.confidence >= floor and m.key not in own and m.extractor is not ExtractorName.coreference
    ]
    if lang != ZH and _PERSONAL.fullmatch(match.group(0)):
        # "he" / "she" point at a person, and a person is named: the assistant's "He's a cutie" has
        # no antecedent for the user's "yea he is" (the lower-case "cutie" says what he is).
        candidates = [m for m in candidates if m.in_catalog or m.name[:1].isupper()]
    if not candidates:
        return None
    target = min(candidates, key=lambda m: m.start)  # subject / topic position
    named = target.in_catalog or target.name[:1].isupper()  # "It's called A Cure for Wellness" names it
    if lang != ZH and not named and _continues_chain(match.group(0), previous_text, target.start):
        return None
    return ConceptMention(
        key=target.key,
        name=target.name,
        type=target.type,
        language=lang,
        start=match.start(),
        end=match.end(),
        surface=match.group(0),
        extractor=ExtractorName.coreference,
        confidence=round(target.confidence * CONFIDENCE_FACTOR, 3),
        in_catalog=target.in_catalog,
    )


_PRONOUN_KIND = {"he": "he", "him": "he", "his": "he", "she": "she", "her": "she", "they": "they", "them": "they"}


def _continues_chain(reference: str, previous_text: str, antecedent_start: int) -> bool:
    """Does the user's pronoun continue the assistant's own? The assistant's "It topped the box office"
    already refers back before its lower-case words, and the user's "It's good!" points where that "It"
    does, not at "box office"; "It was directed by Marc Webb" / "what else has he made?" changes referent,
    and a name after the pronoun ("It's called A Cure for Wellness") is what the pronoun introduces
    (the caller skips the rule for names)."""
    kind = _PRONOUN_KIND.get(reference.casefold(), "it")
    return any(
        m.start() < antecedent_start and _PRONOUN_KIND.get(m.group(0).casefold(), "it") == kind
        for m in _EN_REFERENCE.finditer(previous_text)
    )


__all__ = ["PriorTurn", "carry_references", "MIN_ANTECEDENT_CONFIDENCE"]
