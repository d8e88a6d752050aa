"""graphmem/extraction/zh/biography.py: a school or a birthplace said in a person's record is no concept.

Every sentence here was written for this test (no dataset text); the expected results follow from the frame
words of graphmem/data/zh_descriptors.yaml (biography_before / biography_after) by hand.
"""

from __future__ import annotations

import pytest

from graphmem.extraction.extractor import ConceptExtractor
from graphmem.extraction.zh.biography import in_biography_frame


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    return ConceptExtractor()


def keys(ex: ConceptExtractor, text: str) -> set[str]:
    return {c.key for c in ex.extract([text], ["user"])[0].concepts}


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("这位导演毕业于南京艺术学院。", "南京艺术学院"),  # 毕业于|X: where he studied
        ("她是中央音乐学院毕业的。", "中央音乐学院"),  # X|毕业: the same frame the other way round
        ("那位演员1960年生于意大利西西里岛。", "意大利西西里岛"),  # 生于|X: where she was born
        ("他在加拿大温哥华出生。", "加拿大温哥华"),  # 在X|出生
    ],
)
def test_a_school_or_birthplace_in_a_record_is_no_concept(ex: ConceptExtractor, text: str, detail: str) -> None:
    start = text.index(detail)
    assert in_biography_frame(text, start, start + len(detail))
    assert detail not in keys(ex, text)


def test_the_same_name_outside_the_frame_is_still_a_concept(ex: ConceptExtractor) -> None:
    assert "南京艺术学院" in keys(ex, "我下个月想去南京艺术学院参观一下。")


def test_a_name_between_other_words_is_not_framed() -> None:
    text = "他毕业后去了南京艺术学院教书。"  # 毕业 before the name, not 毕业于; nothing after it frames it
    start = text.index("南京艺术学院")
    assert not in_biography_frame(text, start, start + len("南京艺术学院"))
