"""graphmem/zh_descriptors.py: Chinese block items that describe instead of name. Pure, no database.

Golden cases are hand-written (not copied from any dataset) from the rules' definitions; the Zipf
values quoted in zh_descriptors.py decide the borderline ones. Each rule has cases it must take and
names of the same shape it must leave alone.
"""

from __future__ import annotations

import pytest

from graphmem.models import ConceptNode
from graphmem.specificity import SpecificityConfig, demoted, zh_place_like
from graphmem.wordlists import yaml_data
from graphmem.zh_descriptors import describing, descriptor_reason

CFG = SpecificityConfig()


def reason(key: str) -> str | None:
    return descriptor_reason(key, zh_place_like(key))


@pytest.mark.parametrize(
    "key,why",
    [
        # a nationality or region said as a descriptor ("她是英国演员")
        ("英国", "common_place"),
        ("加拿大", "common_place"),
        ("亚洲", "common_place"),
        # common modifiers + a kind of person or work
        ("美国小说家", "descriptor_phrase"),
        ("同名小说", "descriptor_phrase"),
        ("同名专辑", "descriptor_phrase"),
        ("最佳女主角", "descriptor_phrase"),
        ("日本歌手", "descriptor_phrase"),
        ("著名导演", "descriptor_phrase"),
        ("亚洲男子乐队", "descriptor_phrase"),
        # an award's category with its name cut off
        ("导演奖", "award_category"),
        ("新人奖", "award_category"),
        ("成就奖", "award_category"),
        # addresses and birthplaces
        ("北京市朝阳区建国路", "address"),
        ("台湾台南县", "address"),
        ("广州市天河区体育西路", "address"),
        ("美国加州洛杉矶市", "address"),
        # read from the characters: jieba cuts 密云区 into 密云|区, and a house number is no Han character
        ("北京市密云区古北水镇", "address"),
        ("北京市东城区景山前街4号", "address"),
        ("重庆市渝中区解放碑", "address"),
        # a language said in passing
        ("德语", "language_name"),
        ("英文", "language_name"),
        # a person's people said in passing (blocks helper, issue 13 round 2)
        ("高山族", "people_name"),
        ("汉族", "people_name"),
        # a role noun fused onto a personal name
        ("收藏家王建国", "role_and_name"),
        ("诗人李白", "role_and_name"),
        # a sentence's recitation verb or role word fused onto a name
        ("饰演管家", "lead_word"),
        ("参观故宫博物院", "lead_word"),
        ("主演张三丰", "lead_word"),
        # an award's name and what followed it in the sentence
        ("金鸡奖最佳影片", "cut_award"),
        ("金马奖评委", "cut_award"),
        # a kind of place with only attributes before it
        ("公立博物馆", "descriptor_place"),
    ],
)
def test_descriptions_are_recognised(key: str, why: str) -> None:
    assert reason(key) == why


@pytest.mark.parametrize(
    "key",
    [
        "威尼斯",  # a place a chat is about (Zipf 4.09, below COMMON_PLACE_ZIPF)
        "三里屯",
        "北京民俗博物馆",  # a museum's name: a place and a subject before the ending
        "红砖美术馆",  # a rare modifier
        "美国爱情歌舞片",  # a genre: 歌舞片 is no kind of person or work listed
        "疯狂原始人",  # a film title of common words: 原始人 is not a descriptor head
        "奥斯卡影帝",  # a name piece (奥斯卡) keeps it a name
        "大小说家",  # a one-character modifier makes a title as often as not
        "金旋奖",  # an award with a rare stem
        "金曲奖",  # a dictionary name
        "金像奖",  # 金像 (Zipf 4.08) is below AWARD_STEM_ZIPF
        "奥斯卡金像奖",
        "北京三里屯",  # ends in a place name, not an address unit
        "湖南省博物馆",  # one division and a place's name: a museum, not an address
        "香港特别行政区",  # one division
        "荒岛余生",  # a film title: 荒岛 is no role noun (Zipf 3.23 < ROLE_ZIPF)
        "周杰伦",
        "奥斯卡金像奖荣誉奖",  # an award and its category, ending in 奖
        "离开拉斯维加斯",  # a title that starts with a verb not listed as a lead word
        "获得",  # a lead word alone is no fusion
        "恋爱物语",  # a title ending in 语 is no dictionary word
        "瑞恩·高斯林",  # not all Han characters: never judged here
        "Python基础",
        "少数民族",  # four characters: the people rule reads dictionary words of two or three only
    ],
)
def test_names_of_the_same_shape_stay(key: str) -> None:
    assert reason(key) is None


def test_a_place_both_sides_talk_about_stays_and_one_said_in_passing_goes() -> None:
    both = ConceptNode(key="法国", name="法国", user_mentions=1, assistant_mentions=1)
    passing = ConceptNode(key="英国", name="英国", user_mentions=0, assistant_mentions=1)
    again = ConceptNode(key="德国", name="德国", user_mentions=3, assistant_mentions=0)
    phrase = ConceptNode(key="同名小说", name="同名小说", user_mentions=1, assistant_mentions=1)
    concepts = {n.key: n for n in (both, passing, again, phrase)}
    out = demoted(concepts, list(concepts), CFG)
    assert out == {"英国": "common_place", "同名小说": "descriptor_phrase"}


def test_data_file_lists_are_distinct_and_non_empty() -> None:
    data = yaml_data("zh_descriptors.yaml")
    for name in ("descriptor_heads", "award_endings", "admin_units", "address_units"):
        entries = data[name]
        assert entries and len(entries) == len(set(entries)), name
        assert all(isinstance(e, str) and e.strip() for e in entries), name
    assert set(data["admin_units"]) <= set(data["address_units"])


def test_a_language_describes_like_a_common_modifier() -> None:
    # 国语 (jieba nz) and 英文 (n) end in 语/文 and are two characters long: the language a work is in.
    assert describing("国语", "nz") and describing("英文", "n")
    assert not describing("国", "n")  # one character: no
    assert not describing("周杰伦", "nr")  # a name does not describe


@pytest.mark.parametrize("key", ["全英文", "纯英文", "全中文"])
def test_a_language_with_its_extent_is_a_language(key: str) -> None:
    # 全 / 纯 (jieba a) + 英文 / 中文 (nz, a language name; 纯中文 is a dictionary word of its own): "all in English", as a singer's album is described.
    assert descriptor_reason(key) == "language_name"


def test_a_title_ending_in_a_language_word_is_not_taken() -> None:
    assert descriptor_reason("全英文歌") is None  # longer than the language: not judged by this rule


@pytest.mark.parametrize("key", ["主题公园", "商业街", "步行街"])
def test_a_dictionary_noun_of_an_everyday_word_and_a_place_ending_is_a_kind_of_place(key: str) -> None:
    # One jieba dictionary noun (n) whose front (主题 / 商业 / 步行) is an everyday word on its own: a theme
    # park, a shopping street, a pedestrian street — what the chat says a place is, not its name.
    assert reason(key) == "kind_of_place"


@pytest.mark.parametrize(
    "key",
    [
        "世界公园",  # no dictionary word: 世界|公园 is a park's name
        "圆明园",  # a dictionary noun whose front (圆明) is no everyday word
        "中山公园",  # the dictionary calls it a place name (ns)
        "北京汽车博物馆",  # a name built of several words
        "游乐场",  # front 游乐 (Zipf 3.48) rarer than KIND_FRONT_ZIPF: left to the noun rules
    ],
)
def test_names_with_a_place_ending_are_no_kind_of_place(key: str) -> None:
    assert reason(key) != "kind_of_place"
