"""Concept candidates shared by both languages: the span type, rejects, and why a span is no concept.

Candidates are plain spans found by the language's rules (`en.candidates`, `zh.candidates`);
extractor.py turns them into ConceptMentions (resolving to catalog concepts where a key matches) and
records rejects with :func:`reject_reason`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spacy.lang.en.stop_words import STOP_WORDS

from graphmem.extraction.lexical import fragment_reason, meta_reason
from graphmem.models import ExtractorName
from graphmem.wordlists import words, yaml_data

CONF_NER = 0.7
CONF_BOOK_TITLE = 0.8
CONF_PROPER = 0.6
CONF_CHUNK = 0.5
CONF_COMMON_NOUN_ZH = 0.4

# Words that never name a concept on their own: chat filler, greetings, generic nouns of
# conversation and of school exercises (data file). Compared against concept keys.
GENERIC_EN = words("generic_en.txt")

# The same for Chinese (data file): chat filler, generic nouns of talk about films, music, places, school.
GENERIC_ZH = words("generic_zh.txt")
# Role and attribute nouns of talk about works and people (主演 中谷美纪, 原唱 梁静茹): never
# the start of a name, never a concept on their own.
ROLE_ZH = frozenset(yaml_data("zh_names.yaml")["role_words"])
# Measurement units: "2 cm" is an answer, not a concept.
_UNITS = frozenset("cm mm km m g kg mg ml l ft in yd mi lb lbs oz sec secs min mins hr hrs am pm sq cu deg".split())

LATIN = re.compile(r"[A-Za-z]")
NUMERIC = re.compile(r"^[\d\s.,:/%+\-×x*^=()]+[a-z]{0,2}$")


# Label of a capitalised Latin word alone among Chinese (我特别想学Go): a name even when its lower case
# is an English stop word ("go", "so"), which reject_reason would otherwise refuse.
LONE_LATIN_NAME = "lone_latin"


@dataclass
class Candidate:
    start: int
    end: int
    extractor: ExtractorName
    confidence: float
    label: str = ""
    # The concept's name when it is not the surface: "rounding" for "Round 345 to the nearest ten".
    name: str | None = None


@dataclass
class Reject:
    text: str
    reason: str


def reject_reason(surface: str, key: str, max_len: int, *, latin_name: bool = False) -> str | None:
    """Why a candidate is not a concept, or None when it may be one. ``latin_name``: the candidate
    is a lone capitalised Latin word in a Chinese turn, so an English stop word is no reason."""
    if not key:
        return "empty"
    if len(surface) > max_len:
        return "too_long"
    if latin_name:
        return "interjection" if key in words("latin_interjections.txt") else None
    if len(key.replace(" ", "")) < 2:
        return "too_short"
    if NUMERIC.match(key):
        return "numeric"
    if key in _UNITS:
        return "unit"
    if not any(ch.isalpha() for ch in key):
        return "no_letters"
    # Numbers around a generic word do not make it a concept: "+1 point", "3 steps".
    parts = [w for w in key.split() if not NUMERIC.match(w)] or key.split()
    if all(w in STOP_WORDS or w in GENERIC_EN for w in parts):
        return "stopword" if all(w in STOP_WORDS for w in parts) else "generic"
    if key in GENERIC_ZH or key in ROLE_ZH:
        return "generic"
    latin_only = key.isascii()
    if latin_only and len(key.replace(" ", "")) < 2:
        return "too_short"
    if not latin_only and len(key) < 2:
        return "too_short"
    # Not a word (hs, x+a)(x+b, variable 'b, WelI) or a dialogue/meta word (recommendation, previous step).
    return fragment_reason(surface) or meta_reason(key)


def overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    return a_start < b_end and b_start < a_end
