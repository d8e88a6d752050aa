"""Chinese idiom families of stance_zh.yaml, other people's tastes and hearsay, through the real
jieba pipeline (no Neo4j). Every sentence here was WRITTEN BY HAND for this test and is in no
training or tune file of eval/devsets; the expected stance is the author's reading.
"""

from __future__ import annotations

import pytest

from graphmem.extraction.extractor import ConceptExtractor
from graphmem.extraction.stance_cues import raw
from graphmem.models import Stance
from tests.stance_cases import catalog_extractor
from tests.test_stances_en import stance_of

CASES: list[tuple[str, str, Stance | None, str]] = [
    # knowing it well
    ("Excel我早就玩得转了", "Excel", Stance.knows, "玩得转"),
    ("元素周期表我倒背如流", "元素周期表", Stance.knows, "倒背如流"),
    ("Photoshop修图我现在已经拿捏了", "Photoshop", Stance.knows, "拿捏"),
    ("用Python写脚本对我来说跟喝水一样", "Python", Stance.knows, "跟喝水一样"),
    ("北京的胡同我全都门儿清", "胡同", Stance.knows, "都门儿清"),
    # being lost
    ("概率论真把我整不会了", "概率论", Stance.confused, "整不会"),
    ("递归我怎么想都转不过弯来", "递归", Stance.confused, "转不过弯"),
    ("日语假名我学了就忘", "日语假名", Stance.confused, "学了就忘"),
    ("线性代数越学越糊涂", "线性代数", Stance.confused, "越学越糊涂"),
    ("微积分我只是似懂非懂", "微积分", Stance.confused, "似懂非懂"),
    ("化学方程式我老是写反", "化学方程式", Stance.confused, "老是写反"),
    # leaving it / finding it bad
    ("《王者荣耀》我已经弃坑了", "《王者荣耀》", Stance.dislikes, "弃坑"),
    ("韩剧太幼稚了", "韩剧", Stance.dislikes, "幼稚"),
    ("Java我一向敬而远之", "Java", Stance.dislikes, "敬而远之"),
    ("抖音我真是看吐了", "抖音", Stance.dislikes, "看吐了"),
    ("这家店的火锅名不副实", "火锅", Stance.dislikes, "名不副实"),
    ("K歌这种活动我能躲就躲", "K歌", Stance.dislikes, "能躲就躲"),
    ("恐怖片我一部都不看", "恐怖片", Stance.dislikes, "一部都不看"),
    ("这首歌的旋律我一听就想关掉", "旋律", Stance.dislikes, "想关掉"),
    # craving it
    ("摄影我一直跃跃欲试", "摄影", Stance.interested, "跃跃欲试"),
    ("火锅我是离不开了", "火锅", Stance.interested, "离不开"),
    ("乐高的星战系列我都想买", "乐高", Stance.interested, "都想买"),
    ("《百年孤独》已经加进我的书单了", "《百年孤独》", Stance.interested, "加进书单"),
    ("我想多了解一点围棋", "围棋", Stance.interested, "想多了解"),
    ("原来统计学这么好玩", "统计学", Stance.interested, "原来…这么 (no past)"),
    # someone else's taste, hearsay: no stance of the user's
    ("我姥姥特别爱听评书", "评书", None, "姥姥"),
    ("我闺蜜很喜欢《甄嬛传》", "《甄嬛传》", None, "闺蜜"),
    ("网上都说Rust很好学", "Rust", None, "网上都说"),
    # negation of a new cue: 不后悔 is no dislike
    ("一点也不后悔学Go", "Go", None, "不后悔"),
]


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    return catalog_extractor(CASES)


@pytest.mark.parametrize(("text", "name", "expected", "family"), CASES, ids=[c[3] for c in CASES])
def test_idiom_families(ex: ConceptExtractor, text: str, name: str, expected: Stance | None, family: str) -> None:
    assert stance_of(ex, text, name) == expected


def test_idiom_families_are_data() -> None:
    """The families live in stance_zh.yaml, one line per family, each in its class."""
    data = raw("zh")
    joined = {k: "\n".join(v["cues"]) for k, v in data["classes"].items()}
    assert "弃坑" in joined["dislikes"] and "幼稚" in joined["dislikes"]
    assert "玩得转" in joined["knows"] and "倒背如流" in joined["knows"]
    assert "整不会" in joined["confused"] and "学了就忘" in joined["confused"]
    assert "跃跃欲试" in joined["interested"] and "离不开" in joined["interested"]
    assert "闺蜜" in data["others"] and "网上" in data["others"]
