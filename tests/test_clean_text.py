"""clean_text's regex equals the definition it replaces: drop Unicode Cc and Cs, keep \\n and \\t."""

from __future__ import annotations

import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from graphmem.models import clean_text


def by_category(value: str) -> str:
    return "".join(ch for ch in value if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cs"))


def test_every_code_point_is_kept_or_dropped_as_its_category_says() -> None:
    every = "".join(chr(c) for c in range(sys.maxunicode + 1))
    assert clean_text(every) == by_category(every)


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=200))
def test_random_text(value: str) -> None:
    assert clean_text(value) == by_category(value)


def test_clean_text_returns_the_same_object_when_nothing_is_dropped() -> None:
    text = "我想学Python基础\n\tok"
    assert clean_text(text) is text and clean_text("a\x00b\x7f\ud800c") == "abc"
