"""graphmem/zh_cuts.py: Chinese keys cut across words. Pure, no database.

Cases are hand-written from the rules' definitions (not copied from any dataset): each rule has keys
it must take and names of the same shape it must leave alone.
"""

from __future__ import annotations

import pytest

from graphmem.models import ConceptNode
from graphmem.specificity import SpecificityConfig, demoted
from graphmem.zh_cuts import cut_reason


@pytest.mark.parametrize(
    "key,why",
    [
        # a numeral or measure word starts the run, then a function word or verb
        ("一为学校", "counted_phrase"),
        ("八零后", "counted_phrase"),
        ("片作首映", "counted_phrase"),
        # a numeral with its classifier counts an everyday noun ("two companies")
        ("三家医院", "counted_phrase"),
        ("两家公司", "counted_phrase"),
        # an English abbreviation fused onto everyday words: the tail of a longer chart or award name
        ("TOP排行榜", "latin_and_common"),
        ("MTV中国", "latin_and_common"),
        # three or more everyday nouns: the subject of a recited sentence
        ("医院病人家属", "noun_run"),
        # a phrase jieba's dictionary tags as a name: 太 (adverb) + 漂亮 (adjective)
        ("太漂亮", "phrase_entry"),
        # a dictionary phrase entry that is a common modifier + a kind of work
        ("个人专辑", "dictionary_phrase"),
        # the same with the language the work is in (国语 nz, a language name): a Mandarin album
        ("国语专辑", "dictionary_phrase"),
    ],
)
def test_cut_keys(key: str, why: str) -> None:
    assert cut_reason(key) == why


@pytest.mark.parametrize(
    "key",
    [
        "张悬",  # 张 is a measure word and a surname
        "半个尼尔森",  # a counted personal name
        "七武士",  # a bare numeral starts many titles
        "100种生活",  # digits
        "四十岁的老处男",
        "live in ticc现场录音专辑",  # several English words: an album's own name
        "MTV音乐盛典",  # the abbreviation with a rare word: a name
        "CCTV",  # Latin only: not judged here
        "故宫",
        "记忆碎片",  # two common nouns: a title's shape
        "中影基地旅游城",  # a noun run led by a rare word: a place's name
        "北京电影学院",  # one dictionary name (nt)
        "我爱你",  # a dictionary phrase (l) that is a title, not a description
    ],
)
def test_names_stay(key: str) -> None:
    assert cut_reason(key) is None


def test_a_cut_phrase_is_demoted_however_often_it_recurs() -> None:
    # both sides say it many times: a common word would stay as a shared topic, a cut phrase does not
    nodes = {
        "两家公司": ConceptNode(key="两家公司", name="两家公司", user_mentions=3, assistant_mentions=3),
        "周杰伦": ConceptNode(key="周杰伦", name="周杰伦", user_mentions=1, assistant_mentions=1),
    }
    assert demoted(nodes, nodes, SpecificityConfig()) == {"两家公司": "counted_phrase"}
