"""English stances per phenomenon, through the real spaCy pipeline (no Neo4j).

The sentences are in tests/stance_cases.py, WRITTEN BY HAND for these tests (first-person learner
statements about a catalog concept); the expected stance is the author's reading of each sentence.
"""

from __future__ import annotations

import pytest

from graphmem.extraction.extractor import ConceptExtractor
from graphmem.extraction.normalize import concept_key
from graphmem.models import Stance
from tests.stance_cases import CATALOG, EN, EN_KNOWN_MISSES, EN_MORE


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    return ConceptExtractor(CATALOG)


def stance_of(ex: ConceptExtractor, text: str, name: str, roles: list[str] | None = None) -> Stance | None:
    out = ex.extract([text], roles or ["user"])[0]
    found = [s for s in out.stances if s.key == concept_key(name)]
    for s in found:  # a stance keeps its evidence span: the cue's own characters
        assert text[s.start : s.end] == s.cue and s.cue
    return found[-1].stance if found else None


@pytest.mark.parametrize(("text", "name", "expected", "phenomenon"), EN, ids=[f"{c[3]}: {c[0][:40]}" for c in EN])
def test_written_sentences(
    ex: ConceptExtractor, text: str, name: str, expected: Stance | None, phenomenon: str
) -> None:
    assert stance_of(ex, text, name) == expected


@pytest.mark.xfail(reason="known limits of the shipped model (stance_cases.EN_KNOWN_MISSES)", strict=False)
@pytest.mark.parametrize(
    ("text", "name", "expected", "phenomenon"), EN_KNOWN_MISSES, ids=[c[0][:40] for c in EN_KNOWN_MISSES]
)
def test_known_misses(ex: ConceptExtractor, text: str, name: str, expected: Stance | None, phenomenon: str) -> None:
    assert stance_of(ex, text, name) == expected


@pytest.mark.parametrize(
    ("text", "name", "expected", "phenomenon"), EN_MORE, ids=[f"{c[3]}: {c[0][:40]}" for c in EN_MORE]
)
def test_natural_phrasings(
    ex: ConceptExtractor, text: str, name: str, expected: Stance | None, phenomenon: str
) -> None:
    assert stance_of(ex, text, name) == expected


def test_negation_scope_is_the_clause(ex: ConceptExtractor) -> None:
    # The negation of the first clause does not reach the second one.
    assert stance_of(ex, "I don't like Java, but I love Python.", "Python") is Stance.interested
    assert stance_of(ex, "I don't like Java, but I love Python.", "Java") is Stance.dislikes
    # A negation three content words away is not this cue's.
    assert stance_of(ex, "I have not seen Docker but Rust looks interesting.", "Rust") is Stance.interested


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        # Written by hand: "and I" / "and my" open a clause with its own subject; the cue of one does not reach
        # the other (before, "I love Python and I hate math." gave Python a dislike).
        ("I hate math and I love Python.", "Python", Stance.interested),
        ("I hate math and I love Python.", "math", Stance.dislikes),
        ("I love Python and I hate math.", "Python", Stance.interested),
        ("I love Python and I hate math.", "math", Stance.dislikes),
        ("I love Python and my brother loves Java.", "Java", None),
    ],
)
def test_a_coordinated_clause_with_its_own_subject_has_its_own_stance(
    ex: ConceptExtractor, text: str, name: str, expected: Stance | None
) -> None:
    assert stance_of(ex, text, name) is expected


def test_newest_clause_wins_within_a_turn(ex: ConceptExtractor) -> None:
    assert stance_of(ex, "SQL used to confuse me. Now it makes sense.", "SQL") is Stance.knows
    assert stance_of(ex, "I loved calculus at first, but now I can't stand it.", "calculus") is Stance.dislikes


def test_other_people_give_no_stance_but_the_user_after_them_does(ex: ConceptExtractor) -> None:
    assert stance_of(ex, "My brother loves Rust.", "Rust") is None
    assert stance_of(ex, "My brother loves Rust and so do I, I want to learn Rust.", "Rust") is Stance.interested
    assert stance_of(ex, "Have you used Docker?", "Docker") is None


def test_indifference_is_a_dislike(ex: ConceptExtractor) -> None:
    # Written for this test; the labelling rule counts indifference as a dislike (eval/devsets/README.md).
    assert stance_of(ex, "I'm pretty indifferent to Docker, sorry.", "Docker") is Stance.dislikes
    assert stance_of(ex, "Honestly I'm lukewarm on React.", "React") is Stance.dislikes
    assert stance_of(ex, "I can take or leave SQL.", "SQL") is Stance.dislikes


def test_the_people_a_tutor_or_worker_speaks_for_are_others(ex: ConceptExtractor) -> None:
    # Written for this test: a teacher's students, a team's intern (stance_en.yaml `others`).
    assert stance_of(ex, "My students are struggling with Python this week.", "Python") is None
    assert stance_of(ex, "Our intern is totally lost in SQL.", "SQL") is None
    # Only with a possessive: the speaker describing themself keeps the stance.
    assert stance_of(ex, "I'm a student and I love Python.", "Python") is Stance.interested


def test_hedges_lower_confidence(ex: ConceptExtractor) -> None:
    sure = ex.extract(["I want to learn Rust."])[0].stances[0]
    hedged = ex.extract(["Maybe I want to learn Rust."])[0].stances[0]
    assert sure.stance is hedged.stance is Stance.interested
    assert hedged.confidence < sure.confidence


def test_a_cue_phrase_is_not_a_concept(ex: ConceptExtractor) -> None:
    out = ex.extract(["Python is second nature to me now."])[0]
    assert [m.name for m in out.concepts] == ["Python"]
    assert [(s.name, s.stance) for s in out.stances] == [("Python", Stance.knows)]


def test_a_cue_inside_a_title_is_part_of_the_title() -> None:
    from graphmem.models import Catalog, CatalogConcept

    ex = ConceptExtractor(Catalog(concepts=[CatalogConcept(name="Love Actually", type="product")]))
    assert ex.extract(["Have you seen Love Actually?"])[0].stances == []


def test_sentiment_decides_an_evaluation_without_a_cue_word(ex: ConceptExtractor) -> None:
    # No cue word in the lists; VADER's polarity of the clause decides.
    assert stance_of(ex, "Honestly pandas is delightful.", "pandas") is Stance.interested
    assert stance_of(ex, "Honestly pandas is a horrible mess.", "pandas") is Stance.dislikes


def test_politeness_is_no_opinion(ex: ConceptExtractor) -> None:
    # "thanks" alone gives nothing.
    assert stance_of(ex, "Thanks, I will look at pandas.", "pandas") in (None, Stance.interested)


def test_only_user_turns_carry_stances(ex: ConceptExtractor) -> None:
    out = ex.extract(["I love Python."], ["assistant"])[0]
    assert out.stances == []
