"""Chinese names delimited by their sentence frame (zh/frames.py), not by jieba's cuts.

Every sentence here was written for this test; the expected spans are read off
the frame rules in graphmem/extraction/zh/frames.py by hand (the frame's verb or
cue on each side, the span between them, the filters on its first token).
"""

from __future__ import annotations

import pytest

from graphmem.extraction.extractor import ConceptExtractor


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    return ConceptExtractor()


def surfaces(ex: ConceptExtractor, text: str) -> list[str]:
    return [m.surface for m in ex.extract([text])[0].concepts]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # 看过 … 吗: the verb and the question particle bound the title; jieba cuts 疯狂|原始人.
        ("你看过疯狂原始人吗？", "疯狂原始人"),
        # A title holding 的, bounded by a back-pointing cue after the clause start.
        ("被遗忘的时光旅人这部电影你看过没？", "被遗忘的时光旅人"),
        # 听说过 … 这个人: the verb is 听说过, not 听说 + 过程 (jieba reads 过程小东 as "process").
        ("听说过程小东这个人吗？", "程小东"),
        # Naming: 代表作叫 …, closed by the sentence end.
        ("她有一部代表作叫荒野来信。", "荒野来信"),
        # The kind of thing is stripped from the front: 电影 | 星河往事2：归途.
        ("看过电影星河往事2：归途吗？", "星河往事2：归途"),
        # 对 … 了解: 对 is not part of the name.
        ("你对林深见鹿了解吗？", "林深见鹿"),
    ],
)
def test_frames_delimit_names(ex: ConceptExtractor, text: str, name: str) -> None:
    assert name in surfaces(ex, text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # 道 transcribes foreign names too, but 知道 is a dictionary word: the name starts after it.
        ("你好，知道梅尔文·勒罗伊吗？", "梅尔文·勒罗伊"),
        # jieba glues 对 to the first name (对马修); only transliteration characters are kept.
        ("对马修·比尔德有了解吗？", "马修·比尔德"),
        # The name ends where transliteration characters end: 是哪国人 stays outside.
        ("裘德·洛是哪国人啊？", "裘德·洛"),
    ],
)
def test_dotted_foreign_names_keep_only_their_characters(ex: ConceptExtractor, text: str, name: str) -> None:
    assert name in surfaces(ex, text)


def test_coordinated_dotted_names_are_separate(ex: ConceptExtractor) -> None:
    found = surfaces(ex, "主演有艾伦·鲍斯汀和杰瑞德·莱托及詹妮弗·康纳利。")
    assert {"艾伦·鲍斯汀", "杰瑞德·莱托", "詹妮弗·康纳利"} <= set(found)


@pytest.mark.parametrize(
    "text",
    [
        "知道怎么做吗？",  # a question word inside
        "你知道他是谁吗？",  # a pronoun first
        "喜欢吃辣吗？",  # a verb first, no cue
        "看过这部电影吗？",  # a demonstrative, not a name
        "你知道中国的首都吗？",  # 的 after 知道 is a description
    ],
)
def test_frames_do_not_take_clauses(ex: ConceptExtractor, text: str) -> None:
    found = surfaces(ex, text)
    assert not any(len(s) >= 4 for s in found), found
    assert "他是谁" not in found and "吃辣" not in found and "中国的首都" not in found


def test_a_framed_name_is_found_again_without_its_frame(ex: ConceptExtractor) -> None:
    # The batch lexicon carries the name from the framed turn to a bare mention in another turn.
    turns = ["你看过疯狂原始人吗？", "看过，疯狂原始人挺好笑的。"]
    results = ex.extract(turns, ["user", "assistant"])
    assert "疯狂原始人" in [m.surface for m in results[1].concepts]
