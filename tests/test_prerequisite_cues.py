"""Prerequisite cues (graphmem/extraction/relations.py), no catalog: the later concept named first
("before Y you need X", "to do Y, first learn X") and cues whose own nouns the chunker reads as
concepts ("in terms of", "a generalization of"). Pure: the real English spaCy pipeline, no database.

Hand-derived golden cases: each sentence states one dependency; the expected edge is read off it.
"""

from __future__ import annotations

import pytest

from graphmem.extraction.extractor import ConceptExtractor


@pytest.fixture(scope="module")
def extractor() -> ConceptExtractor:
    return ConceptExtractor()


def _prereqs(ex: ConceptExtractor, text: str) -> set[tuple[str, str]]:
    out = ex.extract([text])[0]
    return {(r.source_key, r.target_key) for r in out.relations if r.type.value == "prerequisite"}


@pytest.mark.parametrize(
    "text,edge",
    [
        ("Before you learn Django you need Python.", ("python", "django")),
        ("Before calculus you need algebra.", ("algebra", "calculus")),
        ("To do calculus, first learn algebra.", ("algebra", "calculus")),
        ("Before you learn Django, learn Python first.", ("python", "django")),
        ("Before starting Django, you should know Python.", ("python", "django")),
        ("Multiplication builds on addition.", ("addition", "multiplication")),
        ("Boolean algebras are defined in terms of order relations.", ("order relation", "boolean algebra")),
        ("Covariance is a generalization of variance.", ("variance", "covariance")),
    ],
)
def test_prerequisite_cues(extractor: ConceptExtractor, text: str, edge: tuple[str, str]) -> None:
    assert edge in _prereqs(extractor, text)


@pytest.mark.parametrize(
    "text",
    [
        "Before lunch I learned Python.",  # a time, not an order of learning
        "Before Django I used Flask.",  # what came before, not what is needed
        "I went to Paris and I need Python.",  # "to" is no purpose here
        "Django and Flask are both web frameworks.",
    ],
)
def test_no_prerequisite_without_a_cue(extractor: ConceptExtractor, text: str) -> None:
    assert _prereqs(extractor, text) == set()
