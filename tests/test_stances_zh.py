"""Chinese stances per phenomenon, through the real jieba pipeline (no Neo4j).

The sentences are in tests/stance_cases.py, WRITTEN BY HAND for these tests; the expected stance
is the author's reading of each sentence.
"""

from __future__ import annotations

import pytest

from graphmem.extraction.extractor import ConceptExtractor
from graphmem.models import Stance
from tests.stance_cases import CATALOG, ZH, ZH_MORE
from tests.test_stances_en import stance_of


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    return ConceptExtractor(CATALOG)


@pytest.mark.parametrize(("text", "name", "expected", "phenomenon"), ZH, ids=[f"{c[3]}: {c[0][:20]}" for c in ZH])
def test_written_sentences(
    ex: ConceptExtractor, text: str, name: str, expected: Stance | None, phenomenon: str
) -> None:
    assert stance_of(ex, text, name) == expected


@pytest.mark.parametrize(
    ("text", "name", "expected", "phenomenon"), ZH_MORE, ids=[f"{c[3]}: {c[0][:20]}" for c in ZH_MORE]
)
def test_natural_phrasings(
    ex: ConceptExtractor, text: str, name: str, expected: Stance | None, phenomenon: str
) -> None:
    assert stance_of(ex, text, name) == expected


def test_negation_scope_is_the_clause(ex: ConceptExtractor) -> None:
    assert stance_of(ex, "我不喜欢Java，但是很喜欢Python。", "Python") is Stance.interested
    assert stance_of(ex, "我不喜欢Java，但是很喜欢Python。", "Java") is Stance.dislikes


def test_past_then_now(ex: ConceptExtractor) -> None:
    assert stance_of(ex, "以前我很喜欢钢琴，现在不想学了。", "钢琴") is Stance.dislikes
    assert stance_of(ex, "曾经觉得SQL很难，现在已经会了。", "SQL") is Stance.knows


def test_someone_else_then_the_user(ex: ConceptExtractor) -> None:
    assert stance_of(ex, "我同学很喜欢Git，我也想学Git。", "Git") is Stance.interested
    assert stance_of(ex, "你看过科幻片吗？", "科幻片") is None


def test_a_cue_word_inside_another_word_is_no_cue(ex: ConceptExtractor) -> None:
    # 特别 holds 别 (a negation on its own): no flip.
    assert stance_of(ex, "我特别喜欢爵士乐。", "爵士乐") is Stance.interested
