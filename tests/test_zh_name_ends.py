"""Golden tests of the Chinese cut-name rules of the blocks helper's issue-13 round 2:
graphmem/extraction/zh/name_ends.py (award and school names completed at a cut end) and
graphmem/extraction/zh/quotations.py (a quoted sentence's words are no names).

Every sentence and token list here was written for this test. The hand-made token lists give the
pieces and tags so the expected spans follow from the rules' conditions alone (no jieba dictionary);
the through-the-walk cases use jieba and were checked against its pieces shown in the comments.
"""

from __future__ import annotations

import pytest

from graphmem.extraction import pipelines
from graphmem.extraction.candidates import Candidate
from graphmem.extraction.zh.candidates import chinese_candidates
from graphmem.extraction.zh.name_ends import complete_award_and_school_names, complete_backs, complete_fronts
from graphmem.extraction.zh.quotations import drop_pieces_of_quotations, quoted_sentences
from graphmem.extraction.zh.tokens import Tok
from graphmem.models import ExtractorName

LABELS = frozenset({"compound", "n", "ns", "nz", "unk"})


def toks_of(pieces: list[tuple[str, str]]) -> tuple[str, list[Tok]]:
    out, pos = [], 0
    for word, tag in pieces:
        out.append(Tok(pos, pos + len(word), word, tag, ""))
        pos += len(word)
    return "".join(w for w, _ in pieces), out


def cand(text: str, surface: str, label: str = "compound") -> Candidate:
    s = text.index(surface)
    return Candidate(s, s + len(surface), ExtractorName.pattern, 0.6, label)


def surfaces(text: str, cands: list[Candidate]) -> list[str]:
    return [text[c.start : c.end] for c in cands]


# -- complete_fronts: a place or attribute glued before an award or school name -----------------


def test_a_place_before_an_award_is_its_front() -> None:
    text, toks = toks_of([("获得", "v"), ("法国", "ns"), ("戏剧", "n"), ("学会奖", "n"), ("。", "x")])
    got = complete_fronts(text, toks, [cand(text, "戏剧学会奖")], LABELS)
    assert surfaces(text, got) == ["法国戏剧学会奖"]


def test_an_attribute_before_a_school_is_its_front() -> None:
    text, toks = toks_of([("毕业", "v"), ("私立", "b"), ("海滨", "n"), ("大学", "n")])
    assert surfaces(text, complete_fronts(text, toks, [cand(text, "海滨大学")], LABELS)) == ["私立海滨大学"]


@pytest.mark.parametrize(
    "pieces,name,why",
    [
        ([("获得", "v"), ("戏剧", "n"), ("学会奖", "n")], "戏剧学会奖", "a verb before it is no front"),
        ([("法国", "ns"), ("海滨", "n"), ("公园", "n")], "海滨公园", "a park is no award or school"),
        ([("法国", "ns"), ("学会奖", "n")], "学会奖", "one piece: not read off a run"),
    ],
)
def test_no_front_is_taken(pieces: list[tuple[str, str]], name: str, why: str) -> None:
    text, toks = toks_of(pieces)
    assert surfaces(text, complete_fronts(text, toks, [cand(text, name)], LABELS)) == [name], why


def test_a_front_after_a_space_is_not_glued() -> None:
    text = "法国 戏剧学会奖"
    toks = [Tok(0, 2, "法国", "ns", " "), Tok(3, 5, "戏剧", "n", ""), Tok(5, 8, "学会奖", "n", "")]
    assert surfaces(text, complete_fronts(text, toks, [cand(text, "戏剧学会奖")], LABELS)) == ["戏剧学会奖"]


# -- complete_backs: the front of an award name followed by the rest of it --------------------


def test_the_front_of_an_award_takes_the_run_ending_in_award() -> None:
    text, toks = toks_of([("海滨", "ns"), ("青鸟", "nz"), ("杰出", "a"), ("歌手", "n"), ("奖", "n"), ("。", "x")])
    got = complete_backs(text, toks, [cand(text, "海滨青鸟")], LABELS)
    assert surfaces(text, got) == ["海滨青鸟杰出歌手奖"]


def test_a_festival_followed_by_its_category_stays_the_festival() -> None:
    text, toks = toks_of([("海滨", "ns"), ("电影节", "n"), ("最佳", "z"), ("导演奖", "n")])
    assert surfaces(text, complete_backs(text, toks, [cand(text, "海滨电影节")], LABELS)) == ["海滨电影节"]


@pytest.mark.parametrize(
    "pieces,why",
    [
        ([("海滨", "ns"), ("青鸟", "nz"), ("，", "x"), ("歌手", "n"), ("奖", "n")], "punctuation ends the run"),
        ([("海滨", "ns"), ("青鸟", "nz"), ("获得", "v"), ("奖", "n")], "a verb is no part of an award"),
        (
            [("海滨", "ns"), ("青鸟", "nz"), ("春季", "n"), ("海岸", "n"), ("杰出", "a"), ("歌手", "n"), ("奖", "n")],
            "far",
        ),
    ],
)
def test_no_back_is_taken(pieces: list[tuple[str, str]], why: str) -> None:
    text, toks = toks_of(pieces)
    assert surfaces(text, complete_backs(text, toks, [cand(text, "海滨青鸟")], LABELS)) == ["海滨青鸟"], why


def test_pieces_inside_a_completed_name_are_dropped() -> None:
    text, toks = toks_of([("法国", "ns"), ("戏剧", "n"), ("学会奖", "n")])
    got = complete_award_and_school_names(text, toks, [cand(text, "法国", "ns"), cand(text, "戏剧学会奖")], LABELS)
    assert surfaces(text, got) == ["法国戏剧学会奖"]


def test_a_latin_word_hyphened_before_a_run_is_its_front() -> None:
    text = "获得ABC-XYZ音乐盛典奖"
    toks = [
        Tok(0, 2, "获得", "v", ""),
        Tok(2, 5, "ABC", "eng", ""),
        Tok(5, 6, "-", "x", ""),
        Tok(6, 9, "XYZ", "eng", ""),
        Tok(9, 13, "音乐盛典", "n", ""),
        Tok(13, 14, "奖", "n", ""),
    ]
    cands = [cand(text, "ABC", "lone_latin"), cand(text, "XYZ音乐盛典奖")]
    got = complete_award_and_school_names(text, toks, cands, LABELS)
    assert surfaces(text, got) == ["ABC-XYZ音乐盛典奖"]


def test_names_outside_the_labels_are_left_alone() -> None:
    text, toks = toks_of([("法国", "ns"), ("戏剧", "n"), ("学会奖", "n")])
    got = complete_fronts(text, toks, [cand(text, "戏剧学会奖", "book_title")], LABELS)
    assert surfaces(text, got) == ["戏剧学会奖"]


# -- quotations ----------------------------------------------------------------------------------


def test_a_quoted_sentence_is_found_and_a_quoted_name_is_not() -> None:
    text = '他写过"春风吹过河岸，明月照着石桥"这样的句子，也唱过“石桥谣”。'
    assert [text[s:e] for s, e in quoted_sentences(text)] == ['"春风吹过河岸，明月照着石桥"']


def test_common_word_pieces_inside_a_quoted_sentence_are_dropped() -> None:
    text = '他写过"春风吹过河岸，明月照着石桥"这样的句子，住在石桥镇。'
    cands = [
        cand(text, "春风", "n"),
        cand(text, "明月", "nz"),
        cand(text, "石桥", "nr"),
        cand(text, "石桥镇", "suffix"),
    ]
    assert surfaces(text, drop_pieces_of_quotations(text, cands)) == ["石桥", "石桥镇"]


@pytest.fixture(scope="module")
def nlp():  # type: ignore[no-untyped-def]
    return pipelines.chinese()


def test_through_the_walk(nlp) -> None:  # type: ignore[no-untyped-def]
    tags = pipelines.jieba_tags()

    def names(text: str) -> list[str]:
        return [text[c.start : c.end] for c in chinese_candidates(nlp(text), tags)]

    # 英国/ns 电影/n 学院奖/n 最佳/z 女主角/n: the run started after the place name
    assert names("她获得了英国电影学院奖最佳女主角") == ["英国电影学院奖"]
    # 美国电影协会/nt 亚洲/ns 杰出/a 演员/n 奖/n: the run stopped before the category
    assert "美国电影协会亚洲杰出演员奖" in names("他获得了美国电影协会亚洲杰出演员奖。")
    # 威尼斯/nrt 国际/n 电影节/n 最佳/z 导演奖/n: the festival stays itself
    assert names("获过威尼斯国际电影节最佳导演奖") == ["威尼斯国际电影节"]
