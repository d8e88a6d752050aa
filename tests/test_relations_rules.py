"""extract_relations on hand-placed mentions (no spaCy): the order of its per-sentence steps.

Expected relations are hand-derived from the cue patterns in graphmem/extraction/relations.py.
"""

from __future__ import annotations

from graphmem.extraction.relations import (
    CONF_COOCCURRENCE,
    CONF_PATTERN,
    CONF_PRONOUN,
    MAX_COOCCURRENCE_SPAN,
    extract_relations,
)
from graphmem.models import ConceptMention, ExtractorName, RelationType


def mentions(text: str, *names: str) -> list[ConceptMention]:
    out = []
    pos = 0
    for name in names:
        start = text.index(name, pos)
        pos = start + len(name)
        out.append(
            ConceptMention(
                key=name.lower(),
                name=name,
                start=start,
                end=pos,
                surface=name,
                extractor=ExtractorName.catalog,
                confidence=1.0,
                in_catalog=True,
            )
        )
    return out


def triples(text: str, sentences: list[tuple[int, int]], ms: list[ConceptMention]) -> list[tuple]:
    return [
        (r.source_key, r.type, r.target_key, r.cue, r.extractor, r.confidence)
        for r in extract_relations(text, "en", sentences, ms)
    ]


def test_a_cue_reaches_every_coordinated_mention_and_the_rest_cooccur() -> None:
    text = "Django uses SQLAlchemy and Jinja."
    got = triples(text, [(0, len(text))], mentions(text, "Django", "SQLAlchemy", "Jinja"))
    assert got == [
        ("django", RelationType.uses, "sqlalchemy", "uses", ExtractorName.pattern, CONF_PATTERN),
        ("django", RelationType.uses, "jinja", "uses", ExtractorName.pattern, CONF_PATTERN),
        # The one pair no cue linked.
        (
            "sqlalchemy",
            RelationType.related_to,
            "jinja",
            "SQLAlchemy and Jinja",
            ExtractorName.cooccurrence,
            CONF_COOCCURRENCE,
        ),
    ]


def test_a_sentence_opening_with_a_pronoun_speaks_of_the_turns_topic() -> None:
    text = "Bayes nets are graphs. It is a generalization of Markov chains."
    s2 = text.index("It")
    got = triples(text, [(0, s2 - 1), (s2, len(text))], mentions(text, "Bayes nets", "Markov chains"))
    # "Y is a generalization of X": X (Markov chains) is learned first, Y is the topic.
    assert got == [
        (
            "markov chains",
            RelationType.prerequisite,
            "bayes nets",
            "generalization",
            ExtractorName.pattern,
            CONF_PRONOUN,
        )
    ]


def test_a_relation_found_twice_in_a_turn_is_kept_once_and_pairs_far_apart_do_not_cooccur() -> None:
    text = "Django uses SQLAlchemy. Django uses SQLAlchemy. Flask " + "x" * MAX_COOCCURRENCE_SPAN + " React."
    s2 = text.index("Django", 1)
    s3 = text.index("Flask")
    ms = mentions(text, "Django", "SQLAlchemy", "Django", "SQLAlchemy", "Flask", "React")
    got = triples(text, [(0, s2 - 1), (s2, s3 - 1), (s3, len(text))], ms)
    assert got == [("django", RelationType.uses, "sqlalchemy", "uses", ExtractorName.pattern, CONF_PATTERN)]
