"""Chinese block items cut across words (used by graphmem/specificity.py).

The Chinese extractor takes runs of characters between sentence frames; when a frame is missed, the
run starts or ends in the middle of a sentence and the key is a piece of it, not a name:

* a counted phrase (``counted_phrase``): the run starts with a numeral or a measure word and goes on
  with a function word or a verb (一|为|校园 from "一为校园，一为…", 片|作|全球 from "该片作全球首映",
  八|零|后), or a numeral with its classifier counts an everyday noun (两家|公司: "two companies");
* an English abbreviation fused onto everyday words (``latin_and_common``): TOP|排行榜, CCTV|音乐盛典
  are the tail of a longer chart or award name whose beginning the run lost;
* a run of three or more everyday nouns (``noun_run``): 学校|教师|寒暑假, 核心|景观|建筑|组群 are the
  subject of a recited sentence; titles made of common nouns have two (记忆|碎片), and a run ending
  like a place (…|旅游城) is a place name;
* a phrase jieba's dictionary tags as a name (``phrase_entry``): 太强大 (nz), 考考你 (nr), 改编自 (nz)
  are two words that are neither nouns nor names (太|强大, 考考|你, 改编|自);
* a dictionary phrase that describes (``dictionary_phrase``): jieba's dictionary lists some phrases
  as one word (个人专辑, tagged l); split into its two dictionary words they are a common modifier and
  a kind of work (graphmem/zh_descriptors.py's descriptor heads), like 同名|小说.

A piece that is a personal name, a place name or another proper noun keeps the key a name (半个|尼尔森,
张|悬: 张 is a measure word and a surname), and so do digits and mixed scripts other than the ones
above (100种生活, live in ticc现场录音专辑). ``cut_reason(key)`` returns a machine-readable reason or None.
"""

from __future__ import annotations

import re

from graphmem.extraction.lexical import zipf
from graphmem.zh_descriptors import MODIFIER_ZIPF, NAME_TAGS, describing, descriptor_heads, pieces, word_tag

# Tags of the piece after a leading numeral or measure word that show the run started mid-sentence:
# a preposition (为), a verb (作), another numeral (八|零), a locative (后).
_CUT_AFTER_COUNT = frozenset({"p", "v", "m", "f"})
# A numeral character starts a counted phrase (两家, 三部, 几位); other words jieba tags m (少年) do not.
_NUMERALS = frozenset("一二两三四五六七八九十百千万几半数每")
# An everyday noun counted by a numeral-classifier (两家|公司) is at least this common (公司 6.02).
COUNTED_NOUN_ZIPF = 4.5
# Words after an English abbreviation at least this common (排行榜 3.9, 中国 6.44) are a name's tail.
TAIL_ZIPF = 3.5
# Tags of words that are neither nouns nor names: verbs, adverbs, adjectives, pronouns, prepositions,
# conjunctions, particles, locatives.
_PHRASE_TAGS = frozenset({"v", "vd", "d", "a", "ad", "r", "p", "c", "u", "uj", "y", "f"})
# jieba dictionary tags of names that its dictionary also gives to some phrases.
_NAME_ENTRY_TAGS = frozenset({"nr", "nrt", "nz"})
# A run of at least this many nouns, all but the last everyday words (Zipf >= MODIFIER_ZIPF: 学校, 教师,
# 核心; a name's own first word is rarer: 中影 in 中影|基地|旅游城), is a description.
NOUN_RUN = 3
_LATIN_HEAD = re.compile(r"^[A-Za-z]+(?=[\u4e00-\u9fff])")
_HAN = re.compile(r"^[\u4e00-\u9fff]+$")


def _surnames() -> frozenset[str]:
    from graphmem.extraction.zh.tokens import SURNAMES

    return SURNAMES


def cut_reason(key: str) -> str | None:
    """Why a Chinese ``key`` is a piece of a sentence rather than a name (None: it may be a name)."""
    m = _LATIN_HEAD.match(key)
    if m:
        return _latin_and_common(key[m.end() :])
    if not _HAN.match(key):
        return None
    return _counted_phrase(key) or _noun_run(key) or _phrase_entry(key) or _dictionary_phrase(key)


def _counted_phrase(key: str) -> str | None:
    ps = pieces(key)
    if len(ps) < 2 or any(t in NAME_TAGS for _, t in ps):
        return None
    (first, tag), (second, tag2) = ps[0], ps[1]
    if tag == "q" and len(first) == 1 and first not in _surnames() and tag2 in _CUT_AFTER_COUNT | {"n"}:
        return "counted_phrase"  # 片|作|全球: a measure word starts the run
    if tag == "m" and len(first) == 1 and first in _NUMERALS and len(second) == 1 and tag2 in _CUT_AFTER_COUNT:
        return "counted_phrase"  # 一|为|校园, 八|零|后
    if (
        len(ps) == 2
        and tag == "m"
        and len(first) == 2
        and first[0] in _NUMERALS
        and tag2 == "n"
        and zipf(second, "zh") >= COUNTED_NOUN_ZIPF
    ):
        return "counted_phrase"  # 两家|公司
    return None


def _latin_and_common(rest: str) -> str | None:
    if not _HAN.match(rest):
        return None
    ps = pieces(rest)
    if ps and all(t in ("n", "ns", "vn") and len(w) > 1 and zipf(w, "zh") >= TAIL_ZIPF for w, t in ps):
        return "latin_and_common"
    return None


def _dictionary_phrase(key: str) -> str | None:
    """个人专辑 (one dictionary word, tagged l) = 个人 + 专辑: a common modifier and a kind of work."""
    ps = pieces(key)
    if len(ps) != 1 or ps[0][1] != "l":
        return None
    for i in range(2, len(key) - 1):
        mod, head = key[:i], key[i:]
        mod_tag = word_tag(mod)
        if head in descriptor_heads() and mod_tag is not None and describing(mod, mod_tag):
            return "dictionary_phrase"
    return None


def _noun_run(key: str) -> str | None:
    ps = pieces(key)
    if (
        len(ps) >= NOUN_RUN
        and all(t == "n" and len(w) > 1 for w, t in ps)
        and all(zipf(w, "zh") >= MODIFIER_ZIPF for w, _ in ps[:-1])
        and not _place_like(key)
    ):
        return "noun_run"
    return None


def _phrase_entry(key: str) -> str | None:
    if word_tag(key) not in _NAME_ENTRY_TAGS:
        return None
    for i in range(1, len(key)):
        if word_tag(key[:i]) in _PHRASE_TAGS and word_tag(key[i:]) in _PHRASE_TAGS:
            return "phrase_entry"
    return None


def _place_like(key: str) -> bool:
    from graphmem.extraction.zh.tokens import PLACE_ENDINGS

    return any(key.endswith(e) and len(key) > len(e) for e in PLACE_ENDINGS)
