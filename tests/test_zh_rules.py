"""Golden tests of the ordered Chinese candidate rules (graphmem/extraction/zh/candidates.py).

Every sentence and token list here was written for this test. Expected spans are hand-derived by
reading each rule: the token list (jieba's pieces and tags, shown in the comment, or built by hand
as `Tok`s so that the case does not depend on jieba's dictionary) and the rule's conditions give
the span and where the walk goes on. A rule is tested on its own, then the whole ordered walk.
"""

from __future__ import annotations

import pytest

from graphmem.extraction import pipelines
from graphmem.extraction.candidates import GENERIC_ZH, ROLE_ZH
from graphmem.extraction.zh import frames
from graphmem.extraction.zh.candidates import (
    SPAN_RULES,
    TOKEN_RULES,
    Step,
    ZhLexicon,
    ZhTurn,
    book_title_rule,
    chinese_candidates,
    cue_rule,
    dotted_name_rule,
    frame_rule,
    framed_dotted_rule,
    latin_rule,
    lexicon_rule,
    noun_rule,
    person_rule,
    quoted_rule,
    role_rule,
    suffix_rule,
    term_rule,
    unk_pair_rule,
)
from graphmem.extraction.zh.names import person_name
from graphmem.extraction.zh.tokens import Tok, zh_tokens


@pytest.fixture(scope="module")
def nlp():  # type: ignore[no-untyped-def]
    return pipelines.chinese()


def turn(nlp, text: str, lexicon: ZhLexicon | None = None) -> ZhTurn:  # type: ignore[no-untyped-def]
    return ZhTurn.read(nlp(text), pipelines.jieba_tags(), lexicon)


def hand(pieces: list[tuple[str, str]]) -> ZhTurn:
    """A turn from hand-made (word, tag) pieces with no spaces and no framed spans."""
    toks, pos = [], 0
    for word, tag in pieces:
        toks.append(Tok(pos, pos + len(word), word, tag, ""))
        pos += len(word)
    text = "".join(w for w, _ in pieces)
    return ZhTurn(text, toks, None, [], bytearray(len(text) + 1))


def spans(t: ZhTurn, found: list) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(t.text[c.start : c.end], c.label) for c in found]


def step(t: ZhTurn, s: Step | None) -> tuple[list[tuple[str, str]], int] | None:
    return None if s is None else (spans(t, s.found), s.next)


def test_rule_order_is_the_documented_one() -> None:
    assert [r.__name__ for r in SPAN_RULES] == [
        "book_title_rule",
        "quoted_rule",
        "lexicon_rule",
        "frame_rule",
        "suffix_rule",
    ]
    assert [r.__name__ for r in TOKEN_RULES] == [
        "person_rule",
        "latin_rule",
        "framed_dotted_rule",
        "dotted_name_rule",
        "unk_pair_rule",
        "role_rule",
        "term_rule",
        "noun_rule",
    ]


# -- span rules ---------------------------------------------------------------------------------


def test_book_title_rule_takes_the_title_inside_the_marks(nlp) -> None:  # type: ignore[no-untyped-def]
    t = turn(nlp, "我看过《 恋恋笔记本 》")  # the spaces inside the marks are trimmed
    assert spans(t, book_title_rule(t)) == [("恋恋笔记本", "book_title")]


def test_quoted_rule_takes_a_short_quoted_name(nlp) -> None:  # type: ignore[no-untyped-def]
    t = turn(nlp, "推荐“凡人歌”给你，“我觉得，很好”")  # the second holds a comma: a sentence, not a name
    assert spans(t, quoted_rule(t)) == [("凡人歌", "quoted")]


def test_lexicon_rule_finds_the_batch_names_again(nlp) -> None:  # type: ignore[no-untyped-def]
    lex = ZhLexicon.build([nlp("你看过《爱乐之城》吗")], pipelines.jieba_tags())
    t = turn(nlp, "爱乐之城的音乐很好听", lex)
    assert spans(t, lexicon_rule(t)) == [("爱乐之城", "lexicon")]
    assert lexicon_rule(turn(nlp, "爱乐之城的音乐很好听")) == []  # no batch, no lexicon names


def test_frame_rule_takes_the_name_before_a_back_pointing_cue(nlp) -> None:  # type: ignore[no-untyped-def]
    # 恋恋/v 笔记本/n 这部/r 电影/n ...: the cue 这部电影 after the clause start bounds the name.
    t = turn(nlp, "恋恋笔记本这部电影很好看")
    assert spans(t, frame_rule(t)) == [("恋恋笔记本", "frame")]


def test_suffix_rule_extends_left_from_a_place_ending(nlp) -> None:  # type: ignore[no-untyped-def]
    # 你/r 去过/vq 上/f 上/f 国际/n 美术馆/nt 吗/y: 美术馆 takes 国际, 上, 上 and stops at the verb 去过.
    t = turn(nlp, "你去过上上国际美术馆吗")
    assert spans(t, suffix_rule(t)) == [("上上国际美术馆", "suffix")]


# -- token rules ---------------------------------------------------------------------------------


def test_cue_rule_points_back_and_does_not_move_the_walk(nlp) -> None:  # type: ignore[no-untyped-def]
    t = turn(nlp, "恋恋笔记本这部电影很好看")
    i = next(k for k, tok in enumerate(t.toks) if tok.word == "这部")
    assert spans(t, cue_rule(t, i)) == [("恋恋笔记本", "cue")]
    assert cue_rule(t, 0) == []


def test_person_rule_out_of_dictionary_pair(nlp) -> None:  # type: ignore[no-untyped-def]
    # 我/r 喜欢/v 齐秦/unk 的/uj 歌/n: a surname-led unknown pair followed by a particle.
    t = turn(nlp, "我喜欢齐秦的歌")
    assert step(t, person_rule(t, 2)) == ([("齐秦", "person")], 3)


def test_person_name_single_characters() -> None:
    # 林/nr 宥/ng 嘉/nr 唱/v: surname + two given characters, one tagged as a name; 唱 ends the name.
    t = hand([("林", "nr"), ("宥", "ng"), ("嘉", "nr"), ("唱", "v")])
    assert person_name(t.toks, 0) == 3
    # No piece tagged as a name: 林 | 大/a 好/a is no personal name.
    assert person_name(hand([("林", "nr"), ("大", "a"), ("好", "a")]).toks, 0) == 0
    # A longer run of single characters cannot be delimited.
    assert person_name(hand([("林", "nr"), ("宥", "ng"), ("嘉", "nr"), ("宁", "nr")]).toks, 0) == 0


def test_person_name_unk_pair_plus_one_character() -> None:
    # 田馥/unk 甄/nr then a two-character word: the pair takes one more given character.
    assert person_name(hand([("田馥", "unk"), ("甄", "nr"), ("唱歌", "v")]).toks, 0) == 2
    # Before a noun of 2+ characters the pair is the start of a place (宋庄|艺术区): no person.
    assert person_name(hand([("宋庄", "unk"), ("艺术区", "n")]).toks, 0) == 0


def test_person_name_not_after_a_classifier() -> None:
    # 这/r 张/q 图/n: 张 is the classifier, not the surname.
    assert person_name(hand([("这", "r"), ("张", "q"), ("图", "n")]).toks, 1) == 1


def test_latin_rule_latin_run_with_chinese_head(nlp) -> None:  # type: ignore[no-untyped-def]
    # 我/r 在/p 学/n Django/eng 框架/n
    t = turn(nlp, "我在学Django框架")
    assert step(t, latin_rule(t, 3)) == ([("Django框架", "compound")], 5)
    assert latin_rule(t, 0) is None
    t = hand([("the", "eng")])
    assert step(t, latin_rule(t, 0)) == ([], 1)  # a lone stop word gives nothing


def test_latin_rule_a_lone_capitalised_word_is_a_name_even_if_a_stop_word(nlp) -> None:  # type: ignore[no-untyped-def]
    # Hand-derived: 我/r 特别/d 想学/n Go/eng — "go" is an English stop word, but Go alone among Chinese,
    # capitalised, is the language; lower case or inside an English run it stays a stop word.
    t = turn(nlp, "我特别想学Go")
    i = next(k for k, tok in enumerate(t.toks) if tok.word == "Go")
    assert step(t, latin_rule(t, i)) == ([("Go", "lone_latin")], i + 1)
    t = hand([("go", "eng")])
    assert step(t, latin_rule(t, 0)) == ([], 1)


def test_lone_latin_names_through_the_extractor() -> None:
    from graphmem.extraction.extractor import ConceptExtractor

    ex = ConceptExtractor(None)
    texts = ["我特别想学Go", "我用Qt写界面", "OK我知道了", "Hi，我想问一下"]
    got = [[c.name for c in r.concepts] for r in ex.extract(texts, roles=["user"] * len(texts))]
    assert "Go" in got[0] and "Qt" in got[1]
    assert got[2] == [] and got[3] == []  # chat interjections (data/latin_interjections.txt) are no names


def test_term_rule_takes_subject_terms_jieba_lists_as_fixed_expressions(nlp) -> None:  # type: ignore[no-untyped-def]
    # Hand-derived: jieba tags 量子力学 and 线性代数 "l" (fixed expression); each splits into two nouns
    # (量子|力学, 线性|代数). Idioms of the same tag split otherwise (一般/a 来说/u; 眼前/t …) and give nothing.
    for text, term in (("我对量子力学一窍不通", "量子力学"), ("线性代数好难", "线性代数")):
        t = turn(nlp, text)
        i = next(k for k, tok in enumerate(t.toks) if tok.word == term)
        assert step(t, term_rule(t, i)) == ([(term, "term")], i + 1)
    t = turn(nlp, "一般来说还行")
    i = next(k for k, tok in enumerate(t.toks) if tok.word == "一般来说")
    assert term_rule(t, i) is None
    assert term_rule(hand([("故宫", "ns")]), 0) is None  # not a fixed expression: other rules decide


def test_framed_dotted_rule_skips_a_name_the_frame_delimits(nlp) -> None:  # type: ignore[no-untyped-def]
    # 莱昂纳多/nrt ·/x 迪卡/unk 普里/nrt 奥演/unk ...: the dotted frame covers the dot.
    t = turn(nlp, "莱昂纳多·迪卡普里奥演得好")
    assert step(t, framed_dotted_rule(t, 0)) == ([], 2)


def test_dotted_name_rule_joins_pieces_after_the_dot() -> None:
    t = hand([("莱昂纳多", "nrt"), ("·", "x"), ("迪卡", "unk"), ("普里", "nrt"), ("奥", "x")])
    assert step(t, dotted_name_rule(t, 0)) == ([("莱昂纳多·迪卡普里奥", "name")], 5)
    assert framed_dotted_rule(t, 0) is None  # nothing framed in a hand-made turn


def test_unk_pair_rule_joins_one_more_character() -> None:
    t = hand([("阿凡", "unk"), ("达", "nr")])
    assert step(t, unk_pair_rule(t, 0)) == ([("阿凡达", "compound")], 2)
    # A verb-phrase character inside the pair (没学): no name.
    assert unk_pair_rule(hand([("没学", "unk"), ("达", "nr")]), 0) is None


def test_role_rule_drops_the_role_word() -> None:
    t = hand([("主演", "n"), ("中谷美纪", "unk")])
    assert step(t, role_rule(t, 0)) == ([], 1)
    assert role_rule(t, 1) is None


def test_noun_rule_runs_and_single_nouns(nlp) -> None:  # type: ignore[no-untyped-def]
    # 北京/ns 汽车/n 博物馆/n 在/p 哪/r: a run closed by the suffix 博物馆.
    t = turn(nlp, "北京汽车博物馆在哪")
    assert step(t, noun_rule(t, 0)) == ([("北京汽车博物馆", "compound")], 3)
    # 电影/n 短片/n: everyday dictionary nouns in a row describe, they do not name.
    t = turn(nlp, "电影短片很多")
    assert step(t, noun_rule(t, 0)) == ([], 2)
    # A lone everyday common noun (观众, Zipf 4.93) is no name; a lone place name (故宫/ns) is one.
    t = hand([("观众", "n")])
    assert step(t, noun_rule(t, 0)) == ([], 1)
    t = hand([("故宫", "ns")])
    assert step(t, noun_rule(t, 0)) == ([("故宫", "ns")], 1)
    assert noun_rule(hand([("喜欢", "v")]), 0) is None


def test_the_walk_drops_cuts_across_a_frame(nlp) -> None:  # type: ignore[no-untyped-def]
    # The noun rule would read 迪卡|普里|奥演 as a compound; it reaches past the framed name.
    doc = nlp("莱昂纳多·迪卡普里奥演得好")
    got = [(doc.text[c.start : c.end], c.label) for c in chinese_candidates(doc, pipelines.jieba_tags())]
    assert ("莱昂纳多·迪卡普里奥", "frame") in got
    assert not any(s.startswith("迪卡") for s, _ in got)


def test_the_walk_skips_the_role_word_then_reads_the_name(nlp) -> None:  # type: ignore[no-untyped-def]
    # 主演/n 中谷/ns 美纪/unk ...: the role rule moves past 主演, so no candidate starts with it.
    doc = nlp("主演中谷美纪")
    got = [doc.text[c.start : c.end] for c in chinese_candidates(doc, pipelines.jieba_tags())]
    assert "中谷美纪" in got and not any(s.startswith("主演") for s in got)


@pytest.mark.parametrize(
    "text,name", [("乐队的吉他手陈磊", "陈磊"), ("贝斯手张三也很厉害", "张三"), ("主唱汪峰", "汪峰")]
)
def test_a_band_members_instrument_is_not_part_of_the_name(nlp, text: str, name: str) -> None:  # type: ignore[no-untyped-def]
    # Hand-written: the player's word (吉他手, 贝斯手, 主唱) is a role word, the name after it stands alone.
    doc = nlp(text)
    got = [doc.text[c.start : c.end] for c in chinese_candidates(doc, pipelines.jieba_tags())]
    assert name in got and not any(s.endswith(name) and s != name for s in got)


def test_noun_rule_keeps_a_title_of_the_form_x_zhi_y() -> None:
    # 爱乐/nr 之/u 城/n: a name piece, 之, a one-character noun: one title, not 爱乐.
    t = hand([("爱乐", "nr"), ("之", "u"), ("城", "n"), ("，", "x")])
    assert step(t, noun_rule(t, 0)) == ([("爱乐之城", "compound")], 3)
    # 奇特/nz 之/u 处/n: 之处 makes a phrase ("what is special"), the run stops before 之.
    t = hand([("奇特", "nz"), ("之", "u"), ("处", "n")])
    assert step(t, noun_rule(t, 0)) == ([("奇特", "nz")], 1)


def test_a_common_noun_ending_a_title_of_the_batch_is_dropped(nlp) -> None:  # type: ignore[no-untyped-def]
    # The batch names 疯狂原始人 (frame 看过 … 吗); 原始人/n alone later is that title cut short.
    # 美国/ns is a proper name: kept even though a batch title could hold it.
    docs = [nlp("你看过疯狂原始人吗？"), nlp("讲述的是原始人一家离开美国的故事")]
    lex = ZhLexicon.build(docs, pipelines.jieba_tags())
    assert "疯狂原始人" in lex.names
    got = [docs[1].text[c.start : c.end] for c in chinese_candidates(docs[1], pipelines.jieba_tags(), lex)]
    assert "原始人" not in got and "美国" in got
    got = [docs[1].text[c.start : c.end] for c in chinese_candidates(docs[1], pipelines.jieba_tags())]
    assert "原始人" in got  # without the batch's title it stays


def test_the_tail_of_a_longer_award_is_dropped(nlp) -> None:  # type: ignore[no-untyped-def]
    # 获得/v 过/ug 第/m 12/x 届/d 奥斯卡金像奖/… 最佳/z 导演奖/…: 最佳 (jieba z, a modifier) is glued
    # before 导演奖, so 导演奖 is the tail of the award, not an award; 奥斯卡金像奖 after 届 stays.
    doc = nlp("他获得过第12届奥斯卡金像奖最佳导演奖。")
    got = [doc.text[c.start : c.end] for c in chinese_candidates(doc, pipelines.jieba_tags())]
    assert "导演奖" not in got
    assert "奥斯卡金像奖" in got


@pytest.mark.parametrize(
    "text,name,glued",
    [
        # Hand-written; each glued word is in jieba's dictionary (由威廉/nr, 电影吧/n, 全名是/n, 和保罗/nr).
        ("我最喜欢的是由威廉·戴维斯主演的。", "威廉·戴维斯", "由威廉"),
        ("你看过漫威电影吧？", "漫威电影", "电影吧"),
        ("它的全名是滚石国际音乐股份有限公司。", "滚石国际", "全名是"),
        ("我和保罗一起去的", "保罗", "和保罗"),
    ],
)
def test_a_function_character_glued_to_a_word_in_the_dictionary_is_cut_off(
    nlp,
    text: str,
    name: str,
    glued: str,  # type: ignore[no-untyped-def]
) -> None:
    doc = nlp(text)
    assert glued not in [t.text for t in doc]
    got = [doc.text[c.start : c.end] for c in chinese_candidates(doc, pipelines.jieba_tags())]
    assert name in got and not any(glued in s for s in got)


def test_glued_words_reads_the_rule_not_a_list() -> None:
    tags = {
        "由威廉": "nr",
        "威廉": "nr",
        "向华强": "nr",
        "华强": "nr",
        "电影吧": "n",
        "电影": "n",
        "酒吧": "n",
        "由于": "c",
    }
    assert pipelines.glued_words(tags, "由和", "吧是") == ["由威廉", "电影吧"]


@pytest.mark.parametrize(
    "text,topic",
    [
        # Written by hand: what a verb of learning, liking, knowing or disliking takes up to the end of its clause is
        # the speaker's topic, everyday word or not.
        ("我想学吉他。", "吉他"),
        ("我讨厌数学", "数学"),
        ("我在学心理学", "心理学"),
        ("最近迷上了露营", "露营"),
        ("我特别喜欢看三体。", "三体"),
        ("我特别想学Go", "Go"),
        ("我会C++", "C++"),
        # ... or opens its clause before one.
        ("我最近在学线性代数，特征值总是搞不懂。", "特征值"),
        ("咖啡我已经戒了", "咖啡"),
    ],
)
def test_the_object_of_a_verb_of_learning_or_liking_is_a_topic(nlp, text: str, topic: str) -> None:  # type: ignore[no-untyped-def]
    doc = nlp(text)
    got = [doc.text[c.start : c.end] for c in chinese_candidates(doc, pipelines.jieba_tags())]
    assert topic in got
    assert frames.after_topic_verb(text, text.index(topic), text.index(topic) + len(topic))


@pytest.mark.parametrize(
    "text", ["我要去上班了", "我喜欢他", "我也喜欢这首歌", "我会尽快", "大学生活很无聊", "他总是搞不懂"]
)
def test_no_topic_object_without_a_noun_after_the_verb(nlp, text: str) -> None:  # type: ignore[no-untyped-def]
    tagged = [(t.start, t.end, t.word, t.tag) for t in zh_tokens(nlp(text), pipelines.jieba_tags())]
    assert list(frames.topic_objects(text, tagged, GENERIC_ZH | ROLE_ZH)) == []
