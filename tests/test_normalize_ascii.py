"""normalize._ascii_normal_chars (the fast path for ASCII text) equals the general per-character path."""

from __future__ import annotations

import random
import string

from graphmem.extraction import normalize
from graphmem.extraction.normalize import _any_normal_chars, _ascii_normal_chars, normalize_with_map

CASES = [
    "",
    " ",
    "   leading and trailing   ",
    "scikit-learn vs scikit_learn -- and  __dunder__",
    "I LOVE Python's list-comprehensions!!\n\tNew line\x0b\x0c\x1c done",
    "\x00\x01 control \x7f chars",
    "CamelCase HTTPServer C++ C# CI/CD e.g. U.S.A.",
    "matrices, indices and the movies' criteria",
]


def test_every_ascii_character_normalises_to_one() -> None:
    assert all(len(v) == 1 for v in normalize._ASCII_NORMAL.values())
    assert len(normalize._ASCII_NORMAL) == 128


def test_fast_path_equals_general_path() -> None:
    rng = random.Random(13)
    alphabet = string.printable + "\x00\x1c\x1f\x7f-_"
    texts = CASES + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    for text in texts:
        assert _ascii_normal_chars(text) == _any_normal_chars(text), repr(text)


def test_normalize_with_map_spans() -> None:
    norm, starts, ends = normalize_with_map("  Big   Matrices-and_Movies ")
    assert norm == "big matrix and movie"
    assert len(norm) == len(starts) == len(ends)
    assert starts[0] == 2  # "B"
