"""CatalogMatcher.scan on its own (no spaCy): leftmost-longest matching, word boundaries and the
evidence rules for names that are everyday words. Expected spans are hand-derived."""

from __future__ import annotations

import pytest

from graphmem.extraction.catalog_matcher import CatalogMatcher
from graphmem.models import Catalog, CatalogConcept

# A topic is the word itself and needs no evidence; a movie called "Hero" does.
TYPES = {"Machine Learning": "topic", "Machine": "topic", "Go": "topic", "Python基础": "topic", "Django": "tool"}
TYPES |= {"Scary Movie": "movie", "Hero": "movie", "It": "movie", "Set It Off": "movie"}
NAMES = list(TYPES)
MATCHER = CatalogMatcher(Catalog(concepts=[CatalogConcept(name=n, type=t) for n, t in TYPES.items()]))


def names(text: str) -> list[tuple[str, str]]:
    return [(text[m.start : m.end], NAMES[m.concept]) for m in MATCHER.scan(text)]


@pytest.mark.parametrize(
    "text,expected",
    [
        # the longest name wins, then the scan goes on after it
        ("machine learning and a machine", [("machine learning", "Machine Learning"), ("machine", "Machine")]),
        # never inside a Latin word; a Chinese name needs no boundary
        ("djangonaut, Django", [("Django", "Django")]),
        ("学Python基础课", [("Python基础", "Python基础")]),
        # a short name is matched only as the catalog spells it (or all capitals)
        ("I go home. Go is fast. GO!", [("Go", "Go"), ("GO", "Go")]),
        # a capitalised name of common words: in lower case only after a strong cue
        ("a good scary movie tonight", []),
        ("Scary Movie was silly", [("Scary Movie", "Scary Movie")]),
        # an everyday word: quoted, or capitalised mid-sentence, or next to a cue in its sentence
        ("Hero. Hero's end", []),
        ("I liked 'hero' a lot", [("hero", "Hero")]),
        ("we saw Hero", [("Hero", "Hero")]),
        # a title of common words opening a sentence, its later words capitalised: the whole title,
        # not the "It" inside it (ReDial valid 2390)
        ("Set It Off  is a great movie", [("Set It Off", "Set It Off")]),
        ("Set it off. It was fun", []),
        # a run of spaces ends an unpunctuated chat sentence: the capital after it opens the next one
        # (ReDial valid 6712: "the documentary Cosmos  It was really good")
        ("I loved Cosmos  It was really good", []),
        ("I loved It", [("It", "It")]),
    ],
)
def test_scan(text: str, expected: list[tuple[str, str]]) -> None:
    assert names(text) == expected
