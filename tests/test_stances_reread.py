"""Clauses no cue decides, re-read for what they say about a learner (stances.py `_reread`).

Hand-written sentences (the lead's, not from any dev or check set): a negative clause with words of
struggle is `confused`, not `dislikes`; words of experience make `knows`; plain facts, other people
and negative taste without struggle words keep their reading.
"""

from __future__ import annotations

import pytest

from graphmem.extraction.extractor import ConceptExtractor
from graphmem.extraction.normalize import concept_key
from graphmem.models import Catalog, CatalogConcept, Stance

NAMES = ["physics", "pandas", "Linux", "German", "SQL", "Excel", "Angular", "Java", "Python"]
CASES = [
    ("physics homework took me 4 hours and I still got half of it wrong", "physics", Stance.confused),
    ("every pandas error message sends me down a rabbit hole", "pandas", Stance.confused),
    ("I've been running Linux on all my machines since college", "Linux", Stance.knows),
    ("I grew up speaking German", "German", Stance.knows),
    ("I write SQL queries all day long at my job", "SQL", Stance.knows),
    ("honestly I build Excel dashboards for a living", "Excel", Stance.knows),
    # negative taste with no struggle words stays a dislike; facts and other people stay without stance
    ("Angular is ugly and bloated, what a miserable framework", "Angular", Stance.dislikes),
    ("Java is used by lots of banks", "Java", None),
    ("my professor has used Python at work for years", "Python", None),
]


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    return ConceptExtractor(Catalog(concepts=[CatalogConcept(name=n) for n in NAMES]))


@pytest.mark.parametrize(("text", "name", "expected"), CASES)
def test_reread(ex: ConceptExtractor, text: str, name: str, expected: Stance | None) -> None:
    found = [s.stance for s in ex.extract([text], ["user"])[0].stances if s.key == concept_key(name)]
    assert (found[-1] if found else None) == expected, (text, found)
