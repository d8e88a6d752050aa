"""stance_cues.ascii_folded: a case-insensitive cue pattern run case-sensitively on lowercased ASCII
text finds the same matches at the same offsets, and patterns where that cannot be promised are refused."""

from __future__ import annotations

import re

import pytest

from graphmem.extraction.stance_cues import ascii_folded, cues

# Mixed-case ASCII chat lines, with cues of every English class in several spellings.
LINES = [
    "I LOVE Python but I Really Don't Get recursion AT ALL",
    "Honestly I'm Not A Fan of horror movies... I Hate Jump Scares!",
    "i already know SQL, I've Used It For Years; I'm Confused By Joins though",
    "Can You Recommend Something Like Superbad? I'd Like To Learn Django",
    "NOT MY THING. It Was Boring, I couldn't follow the plot",
    "What Is A Monad?? i never understood them, they make NO sense to me",
    "Loved it!!! my favourite, I'M INTERESTED in more like that",
]


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def test_every_english_class_folds() -> None:
    for cc in cues("en").classes:
        assert cc.folded_pattern is not None and cc.folded_parts is not None
        assert len(cc.folded_parts) == len(cc.parts)
        if cc.question is not None:
            assert cc.folded_question is not None


def test_folded_patterns_find_the_same_spans() -> None:
    found = 0
    for cc in cues("en").classes:
        pairs = [(cc.pattern, cc.folded_pattern), *zip(cc.parts, cc.folded_parts or (), strict=True)]
        if cc.question is not None:
            pairs.append((cc.question, cc.folded_question))
        for original, folded in pairs:
            assert folded is not None
            for line in LINES:
                spans = _spans(original, line)
                assert _spans(folded, line.lower()) == spans
                found += len(spans)
    assert found > 20  # the lines do hold cues of the classes


def test_fullmatch_agrees_with_the_pattern() -> None:
    for cc in cues("en").classes:
        for surface in ("Not A Fan", "second NATURE", "Python", "meh", "I LOVE"):
            assert cc.fullmatch(surface) == (cc.pattern.fullmatch(surface) is not None)


@pytest.mark.parametrize(
    "pattern",
    [
        re.compile("Foo", re.IGNORECASE),  # an upper-case letter: never in lowercased text
        re.compile(r"\x41b", re.IGNORECASE),  # an escape spelling one
        re.compile(r"(?-i:abc)", re.IGNORECASE),  # an inline flag
        re.compile("ſtar", re.IGNORECASE),  # non-ASCII: ſ matches "s" only case-insensitively
        re.compile(r"\u017ftar", re.IGNORECASE),  # the same, spelt as an escape
        re.compile(r"[9-b]x", re.IGNORECASE),  # a range holding A-Z: matches "c" only case-insensitively
        re.compile(r"[a-\u0200]", re.IGNORECASE),  # a range beyond ASCII
        re.compile("abc"),  # not case-insensitive to begin with
    ],
)
def test_refuses_what_it_cannot_promise(pattern: re.Pattern[str]) -> None:
    assert ascii_folded(pattern) is None


@pytest.mark.parametrize("body", [r"i (?:really )?lo+ve\b", r"[^a-z]+", r"[a-f_]{2}\w*", r"(?<![\w'])don'?t(?!\w)"])
def test_folds_lower_case_patterns_with_the_same_matches(body: str) -> None:
    original = re.compile(body, re.IGNORECASE)
    folded = ascii_folded(original)
    assert folded is not None
    for text in ["I REALLY LOOOVE it", "Don't DON'T dont", "ABC-def_12 ??", "aF_x ÄÖ", *LINES]:
        if text.isascii():
            assert _spans(folded, text.lower()) == _spans(original, text)


def test_chinese_classes_do_not_fold() -> None:
    assert all(cc.folded_pattern is None for cc in cues("zh").classes)
