"""The Chinese name-likeness model (graphmem/zh_name_likeness.py, data/zh_name_likeness.json): reproducible
from the hand-labelled block items and the written stance sets, plain weights, reading where a name stood in
the text (its marks), and used by the block's specificity judgement only where nothing else says the item is
the user's."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from graphmem import zh_name_likeness as nl
from graphmem.bulk_rows import mention_row
from graphmem.extraction.extractor import ConceptExtractor
from graphmem.models import ConceptNode
from graphmem.specificity import SpecificityConfig, language_reason, node_reason

CFG = SpecificityConfig()
QUOTED = frozenset({"lc=《", "rc=》"})
GLUED = frozenset({"lc=H", "rc=H"})
AFTER_GO = frozenset({"lc=去", "rc=，"})  # a place suggested: "可以去X，"


def _shipped() -> dict:
    return json.loads(resources.files("graphmem").joinpath("data", nl.MODEL_FILE).read_text(encoding="utf-8"))


# -- marks: what stands around a mention (hand-derived) ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name", "marks"),
    [
        ("我很喜欢《卧虎藏龙》这部电影。", "卧虎藏龙", ("lc=《", "rc=》")),
        ("乾清宫很大", "清宫", ("lc=H", "rc=很")),  # cut out of 乾清宫: glued on its left
        ("故宫", "故宫", ("lc=^", "rc=$")),  # the whole text
        ("去过Tokyo塔吗", "塔", ("lc=o", "rc=吗")),  # a Latin letter on the left
        ("我学线性代数，特征值总是搞不懂", "特征值", ("lc=，", "rc=H")),
    ],
)
def test_context_marks_read_the_character_on_each_side(text: str, name: str, marks: tuple[str, str]) -> None:
    start = text.index(name)
    assert nl.context_marks(text, start, start + len(name)) == marks


def test_mention_marks_only_for_a_chinese_name_at_its_span() -> None:
    text = "我喜欢《三体》"
    start = text.index("三体")
    assert nl.mention_marks(text, start, start + 2, "三体", "zh") == ("lc=《", "rc=》")
    assert nl.mention_marks(text, start, start + 2, "三体", "en") == ()  # English mentions keep none
    # A mention named through a reference (这部电影 -> the film the assistant named) has no name at its span.
    assert nl.mention_marks("这部电影很好看", 0, 4, "流浪地球", "zh") == ()


def test_the_stored_mention_row_carries_its_marks() -> None:
    text = "我最近在看《三体》，太好看了"
    (ex,) = ConceptExtractor().extract([text], ["user"])
    (m,) = [m for m in ex.concepts if m.key == "三体"]
    row = mention_row("t1", m, "user", "2026-01-01T00:00:00+00:00", text)
    assert row["marks"] == ["u:lc=《", "u:rc=》"]  # a user's mention: its marks under u:
    assert mention_row("t1", m, "assistant", "2026-01-01T00:00:00+00:00", text)["marks"] == ["lc=《", "rc=》"]
    english = ConceptExtractor().extract(["I love Python"], ["user"])[0].concepts[0]
    assert mention_row("t2", english, "user", "2026-01-01T00:00:00+00:00", "I love Python")["marks"] is None


# -- the model file ----------------------------------------------------------------------------------------


def test_model_file_holds_two_models_with_thresholds_chosen_out_of_fold() -> None:
    data = _shipped()
    for part in (data, data["without_marks"]):
        assert 0.0 < part["threshold"] < 0.5  # a filter of the clearly phrase-like, not a coin toss
        assert all(len(v) == 2 and all(isinstance(w, float) for w in v) for v in part["weights"].values())
        # An item only the assistant said needs more of a name's look than one the user said.
        assert part["threshold"] < part["threshold_assistant_only"] <= 0.7
        cv = part["cv"]
        # At most 5 % of the labelled good items and of the written topics are lost out of fold, and it helps.
        assert cv["oof_good_lost"] <= 0.05 * cv["good"]
        assert cv["oof_written_lost"] <= 0.05
        assert cv["oof_precision_kept"] > cv["oof_precision_before"]
    # Where the name stood tells more than its make-up alone.
    assert data["cv"]["oof_auc"] > data["without_marks"]["cv"]["oof_auc"]
    assert data["cv"]["oof_bad_removed"] > data["without_marks"]["cv"]["oof_bad_removed"]


def test_training_reproduces_the_shipped_model() -> None:
    """eval/train_zh_name_likeness.py on the label files in the repository (references only), the KdConv
    conversations of the shared data and the written stance sets gives the shipped weights and thresholds;
    the held-out samples fresh9 and fresh10 are not among its inputs."""
    from eval import block_sample as bs
    from eval import train_zh_name_likeness as tr

    assert bs.FRESH9_LABELS not in tr.LABEL_FILES and bs.FRESH10_LABELS not in tr.LABEL_FILES
    out = tr.train(tr.rows())
    shipped = _shipped()
    for got, want in ((out, shipped), (out["without_marks"], shipped["without_marks"])):
        assert got["threshold"] == want["threshold"]
        assert got["threshold_assistant_only"] == want["threshold_assistant_only"]
        assert got["weights"].keys() == want["weights"].keys()
        assert max(abs(got["weights"][k][1] - want["weights"][k][1]) for k in got["weights"]) < 1e-4


# -- what the marks change -----------------------------------------------------------------------------------


def test_a_title_in_book_quotes_is_a_name_where_the_same_characters_glued_in_a_sentence_are_not() -> None:
    # Hand-picked: 夺命岛 is the tail of the film 勇闯夺命岛 (glued on its left in KdConv's text), 成本高达 a piece of
    # "成本高达一亿" (a cost); in 《》 either would be a title.
    for key in ("夺命岛", "成本高达"):
        assert nl.probability(key, QUOTED) >= nl.threshold(QUOTED)
        assert nl.probability(key, GLUED) < nl.threshold(GLUED)


def test_a_users_own_topics_in_a_natural_sentence_look_like_names() -> None:
    """A model fitted on KdConv alone read a learner's topics as recited details (it dropped 34 % of the written
    sets' topics); fitted with them it keeps these, said once by the user, from the extractor's own marks."""
    text = "我最近在学线性代数，特征值总是搞不懂。"
    (ex,) = ConceptExtractor().extract([text], ["user"])
    found = {
        m.key: frozenset(nl.mention_marks(text, m.start, m.end, m.surface, m.language, "user")) for m in ex.concepts
    }
    assert {"线性代数", "特征值"} <= found.keys()
    for key, marks in found.items():
        # The user's threshold applies (their marks are under u:); 特征值 before 总是 is at 0.53 (session 33).
        assert nl.probability(key, marks) >= nl.threshold(marks), key
        assert node_reason(ConceptNode(key=key, name=key, user_mentions=1, context_marks=marks), CFG) is None, key


def test_a_phrase_like_item_said_once_stays_out_unless_the_conversation_makes_it_its_own() -> None:
    key = "极具人气"
    assert nl.probability(key) < nl.threshold()
    assert language_reason(key, 1, CFG) == "unlike_a_name"
    assert language_reason(key, CFG.repeat_mentions, CFG) is None  # the conversation keeps coming back to it
    once = ConceptNode(key=key, name=key, assistant_mentions=1)
    both = ConceptNode(key=key, name=key, user_mentions=1, assistant_mentions=1)
    assert node_reason(once, CFG) == "unlike_a_name"
    assert node_reason(both, CFG) is None  # both sides name it: the topic they share
    # Glued on both sides it stays out too; in 《》 it is a title.
    assert node_reason(ConceptNode(key=key, name=key, user_mentions=1, context_marks=GLUED), CFG) == "unlike_a_name"
    assert node_reason(ConceptNode(key=key, name=key, user_mentions=1, context_marks=QUOTED), CFG) is None


def test_english_and_catalog_items_are_not_judged_by_it() -> None:
    assert language_reason("jump scares", 1, CFG) is None
    catalog = ConceptNode(key="流浪地球", name="流浪地球", assistant_mentions=1, in_catalog=True)
    assert node_reason(catalog, CFG) is None


def test_an_item_only_the_assistant_said_needs_more_of_a_names_look() -> None:
    # Items between the two thresholds of their model: kept when the user says them, out when only the assistant
    # said them once, back when the conversation keeps coming back to them.
    between = [
        (key, marks)
        for key in (
            "白羊座",
            "香港南丫岛",
            "美国洛杉矶",
            "吉他",
            "上海浦东",
            "北海公园",
            "天安门广场",
        )  # 狮子座: a dictionary noun
        for marks in (frozenset(), GLUED, AFTER_GO)
        if nl.threshold(marks) <= nl.probability(key, marks) < nl.threshold_assistant_only(marks)
    ]
    assert len(between) >= 3
    for key, marks in between:
        assert node_reason(ConceptNode(key=key, name=key, user_mentions=1, context_marks=marks), CFG) is None
        alone = ConceptNode(key=key, name=key, assistant_mentions=1, context_marks=marks)
        assert node_reason(alone, CFG) == "unlike_a_name_of_assistant"
        again = ConceptNode(key=key, name=key, assistant_mentions=CFG.repeat_mentions, context_marks=marks)
        assert node_reason(again, CFG) is None
    # A well-known name the assistant suggests keeps its place.
    # (天安门广场 no longer does once the labels of KdConv dev 30-89 joined: 0.29 after 去, under the assistant-only 0.65;
    # nor 故宫 once the marks told a user's mention from the assistant's, session 33: 0.62 before a comma.)
    for key in ("颐和园", "圆明园"):
        assert node_reason(ConceptNode(key=key, name=key, assistant_mentions=1), CFG) is None
        assert node_reason(ConceptNode(key=key, name=key, assistant_mentions=1, context_marks=AFTER_GO), CFG) is None


# -- what the user said they learn, like, know or dislike (hand-written) --------------------------------------------


@pytest.mark.parametrize(
    "text,key", [("我想学吉他。", "吉他"), ("我想学德语。", "德语"), ("我下个月想去长城。", "长城")]
)
def test_a_users_topic_object_is_kept_however_everyday_the_word(text: str, key: str) -> None:
    start = text.index(key)
    marks = frozenset(nl.mention_marks(text, start, start + len(key), key, "zh", "user"))
    assert nl.TOPIC_OBJECT_MARK in marks
    assert node_reason(ConceptNode(key=key, name=key, user_mentions=1, context_marks=marks), CFG) is None
    # The same word at the end of the assistant's sentence is judged as before: no mark, a word-level reason.
    said = frozenset(nl.mention_marks(text, start, start + len(key), key, "zh", "assistant"))
    assert nl.TOPIC_OBJECT_MARK not in said
    assert node_reason(ConceptNode(key=key, name=key, assistant_mentions=1, context_marks=said), CFG) is not None


def test_a_stance_alone_does_not_keep_an_everyday_word() -> None:
    # In KdConv a user's stance reaches every name of the sentence (中国, 觉得, 玩玩 came back with a stance waiver,
    # labelled KdConv precision -4 points, session 33): only the verb-object frame keeps an everyday word.
    from graphmem.models import Stance

    marks = frozenset({"u:lc=H", "u:rc=H"})
    stanced = ConceptNode(key="京剧", name="京剧", user_mentions=1, context_marks=marks, stance=Stance.interested)
    assert node_reason(stanced, CFG) == "common_noun_zh"
    framed = ConceptNode(key="京剧", name="京剧", user_mentions=1, context_marks=marks | {nl.TOPIC_OBJECT_MARK})
    assert node_reason(framed, CFG) is None
