"""Chinese block items that describe instead of name (used by graphmem/specificity.py).

A knowledge-grounded chat recites facts around the names it is about: a nationality (加拿大 演员),
a description (美国小说家, 同名小说, 最佳女主角, 亚洲男子乐队), an award's category with its name cut
off (导演奖), an address (北京市朝阳区三里屯北路). None of them is about the user. Each judgement is
structural: jieba's dictionary cuts the key into words, wordfreq says how common each is, and a short
data file (``graphmem/data/zh_descriptors.yaml``) lists the kinds of people and works, award and
address endings. Names stay: a piece that is a personal name (nr, nrt), an organisation or other
proper noun (nt, nz), a number or a rare word keeps the phrase a name (奥斯卡影帝, 美国爱情歌舞片,
红砖美术馆, 北京民俗博物馆, 100种生活).

``descriptor_reason(key)`` returns a machine-readable reason or None.
"""

from __future__ import annotations

import re
from functools import lru_cache

from graphmem.extraction.lexical import zipf
from graphmem.wordlists import yaml_data

# A modifier at least this common (wordfreq Zipf, Chinese) is an everyday word: 同名 3.92, 公立 3.96,
# 最佳 4.97, 男子 5.01; name pieces are rarer: 红砖 2.90, 魔法师 3.10, 收藏家 3.41.
MODIFIER_ZIPF = 3.8
# A place name at least this common is a country, region or big city said as a descriptor
# (加拿大 5.13, 英国 5.48, 亚洲 5.22); places a chat is about are rarer (威尼斯 4.09, 三里屯 1.68).
COMMON_PLACE_ZIPF = 4.5
# The stem of "<stem>奖" at least this common is a category (导演 4.87, 新人 4.50, 主角 4.53);
# award names have rarer stems (金像 4.08, 金曲 3.00, 金旋 2.56).
AWARD_STEM_ZIPF = 4.2
# jieba tags of everyday words that may describe (adjectives, distinguishing words, verbs, nouns,
# adverbs, places); names (nr, nrt, nt, nz), numbers (m), Latin (eng) and idioms (i, l) never do.
DESCRIBING_TAGS = frozenset({"a", "ad", "an", "b", "d", "f", "n", "ns", "v", "vn", "z"})
# Words that say what kind of place (公立|博物馆, 私立|学校): adjectives, distinguishing words, verbs.
ATTRIBUTE_TAGS = frozenset({"a", "ad", "b", "d", "v", "z"})
# The front of a dictionary noun with a place ending (主题|公园, 商业|街) at least this common is an
# everyday word: the noun names a kind of place, not one place (世界公园, 圆明园 are not dictionary words).
KIND_FRONT_ZIPF = 3.8
# A role noun fused onto a name is at least this common (收藏家 3.41, 芭蕾舞 3.46); 荒岛 (3.23) in the
# title 荒岛余生 is not a role.
ROLE_ZIPF = 3.4
PERSON_TAGS = frozenset({"nr", "nrfg", "nrt"})
PLACE_OR_NAME_TAGS = frozenset({"ns", "nr", "nrt"})  # jieba tags some foreign places as names (波士顿 nr)
NAME_TAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz"})


def _data() -> dict[str, list[str]]:
    data: dict[str, list[str]] = yaml_data("zh_descriptors.yaml")
    return data


@lru_cache(maxsize=1)
def descriptor_heads() -> frozenset[str]:
    return frozenset(_data()["descriptor_heads"])


@lru_cache(maxsize=1)
def award_endings() -> tuple[str, ...]:
    return tuple(_data()["award_endings"])


@lru_cache(maxsize=1)
def lead_words() -> frozenset[str]:
    from graphmem.extraction.candidates import ROLE_ZH

    return frozenset(_data()["lead_words"]) | ROLE_ZH


@lru_cache(maxsize=1)
def language_endings() -> tuple[str, ...]:
    return tuple(_data()["language_endings"])


@lru_cache(maxsize=1)
def people_endings() -> tuple[str, ...]:
    return tuple(_data()["people_endings"])


@lru_cache(maxsize=1)
def admin_units() -> tuple[str, ...]:
    return tuple(_data()["admin_units"])


@lru_cache(maxsize=1)
def address_units() -> tuple[str, ...]:
    return tuple(_data()["address_units"])


def _tags() -> dict[str, str]:
    from graphmem.extraction import pipelines  # jieba's table is loaded once, on first use

    return pipelines.jieba_tags()


@lru_cache(maxsize=65536)
def pieces(key: str) -> tuple[tuple[str, str | None], ...]:
    """jieba's dictionary words of ``key`` (no guessing of unknown words) with their tags."""
    import jieba

    tags = _tags()
    return tuple((w, tags.get(w)) for w in jieba.lcut(key, HMM=False) if w.strip())


def word_tag(word: str) -> str | None:
    """jieba's dictionary part of speech of ``word`` (None: not a dictionary word)."""
    return _tags().get(word)


def language_name(word: str, tag: str | None) -> bool:
    """A language's name: a dictionary word of two or three characters ending in 语/文 (德语, 国语, 英文)."""
    return 2 <= len(word) <= 3 and word.endswith(language_endings()) and tag in ("n", "nz")


def describing(word: str, tag: str | None) -> bool:
    """An everyday word that may describe (a common modifier, a very common place name, a language)."""
    if len(word) < 2:
        return False  # 大|小说家, 大|戏楼: a one-character modifier makes a name as often as not
    if language_name(word, tag):
        return True  # 国语|专辑, 英文|歌曲: the language a work is in, like 个人|专辑 its kind
    if tag == "ns":
        return zipf(word, "zh") >= COMMON_PLACE_ZIPF
    return tag in DESCRIBING_TAGS and zipf(word, "zh") >= MODIFIER_ZIPF


def common_place_reason(key: str) -> str | None:
    """A very common place name said alone (加拿大, 英国, 亚洲): a descriptor of someone or something."""
    if _tags().get(key) == "ns" and zipf(key, "zh") >= COMMON_PLACE_ZIPF:
        return "common_place"
    return None


def descriptor_reason(key: str, place_like: bool = False) -> str | None:
    """Why a Chinese ``key`` describes rather than names (None: it may be a name).

    ``place_like``: the key ends like a place name (博物馆, 公园; graphmem/extraction/zh/tokens.py),
    which is a description only when every word before the ending is an attribute (公立|博物馆).
    """
    if key and address_chain(key):
        return "address"
    if not key or not all("\u4e00" <= ch <= "\u9fff" for ch in key):
        return None
    single = common_place_reason(key)
    if single:
        return single
    if language_name(key, _tags().get(key)):
        return "language_name"
    if len(key) >= 3 and _tags().get(key[0]) in ("a", "d") and language_name(key[1:], _tags().get(key[1:])):
        return "language_name"  # 全|英文, 纯|中文: the language with its extent (jieba tags 全英文 nr)
    if 2 <= len(key) <= 3 and key.endswith(people_endings()) and _tags().get(key) in ("n", "nz"):
        return "people_name"  # 高山族: a person's people, said of a singer or an actor
    award = _award_category(key)
    if award:
        return award
    if place_like and _kind_of_place(key):
        return "kind_of_place"
    if _tags().get(key) in NAME_TAGS:
        return None
    ps = pieces(key)
    if len(ps) < 2:
        return None
    (head, _), mods = ps[-1], ps[:-1]
    if ps[0][0] in lead_words() and len(key) - len(ps[0][0]) >= 2:
        return "lead_word"
    if not head.endswith(award_endings()) and any(len(w) > 1 and w.endswith(award_endings()) for w, _ in mods):
        return "cut_award"  # 金钟奖|戏剧|节目|男, 金球奖|塞西尔: an award's name and what followed it
    if head in descriptor_heads() and all(describing(w, t) for w, t in mods):
        return "descriptor_phrase"
    if _address(ps):
        return "address"
    if _role_and_name(ps):
        return "role_and_name"
    if place_like and all(len(w) > 1 and t in ATTRIBUTE_TAGS and zipf(w, "zh") >= MODIFIER_ZIPF for w, t in mods):
        return "descriptor_place"
    return None


def _kind_of_place(key: str) -> bool:
    """主题公园, 商业街, 儿童乐园: jieba's dictionary lists the phrase as one common noun (n) and its front,
    without the place ending, is an everyday word of its own — a kind of place the chat describes (a
    theme park, a shopping street), not a place's name (世界公园, 北京汽车博物馆 are no dictionary nouns)."""
    if _tags().get(key) != "n":
        return False
    from graphmem.extraction.zh.tokens import ENDING_LENGTHS, PLACE_ENDINGS

    for n in ENDING_LENGTHS:
        front = key[:-n]
        if key[-n:] in PLACE_ENDINGS and len(front) >= 2:
            return _tags().get(front) in DESCRIBING_TAGS and zipf(front, "zh") >= KIND_FRONT_ZIPF
    return False


def _award_category(key: str) -> str | None:
    """导演奖, 新人奖, 成就奖: an everyday word plus 奖 (jieba's dictionary lists many such words, some
    tagged as names) is an award's category whose name was cut off."""
    for ending in award_endings():
        stem = key[: -len(ending)]
        if key.endswith(ending) and len(stem) > 1 and _tags().get(stem) in DESCRIBING_TAGS:
            if zipf(stem, "zh") >= AWARD_STEM_ZIPF:
                return "award_category"
    return None


@lru_cache(maxsize=1)
def _address_chain_re() -> re.Pattern[str]:
    admin = "|".join(map(re.escape, admin_units()))
    street = "|".join(map(re.escape, [u for u in address_units() if u not in admin_units()]))
    cjk = "[\u4e00-\u9fff]"
    return re.compile(
        rf"(?:{cjk}{{2,}}?(?:{admin})){{2,}}|{cjk}{{2,}}?(?:{admin})[\u4e00-\u9fff0-9]{{2,}}?(?:{street})"
    )


def address_chain(key: str) -> bool:
    """北京市朝阳区三里屯北路, 北京市密云区古北水镇, 北京市东城区景山前街4号: two administrative divisions in a row
    (X市Y区), or one followed by a street-level unit, read from the characters — jieba cuts 密云区 into 密云|区 and a house
    number is no Chinese character, so the piece-wise ``_address`` misses them."""
    return bool(_address_chain_re().search(key))


def _address(ps: tuple[tuple[str, str | None], ...]) -> bool:
    """北京市|东城区|…: two administrative divisions in a row, or place names only that start with a
    division or a very common place and end in an address unit (台湾|台南县, …|三里屯北路,
    美国|马萨诸塞州|波士顿|剑桥市)."""
    if len(ps) >= 3 and all(t == "ns" and w.endswith(admin_units()) for w, t in ps[:2]):
        return True
    if ps[0][1] == "ns" and ps[-1][1] == "ns" and all(t in PLACE_OR_NAME_TAGS for _, t in ps):
        first = ps[0][0]
        return (first.endswith(admin_units()) or zipf(first, "zh") >= COMMON_PLACE_ZIPF) and ps[-1][0].endswith(
            address_units()
        )
    return False


def _role_and_name(ps: tuple[tuple[str, str | None], ...]) -> bool:
    """收藏家|闫士杰, 芭蕾舞|女郎|玛拉, 专辑|蔡依林: a common noun fused onto a personal name (the name
    alone is the concept; the role is the chat's description of the person)."""
    i = 0
    while i < len(ps) and ps[i][1] == "n" and len(ps[i][0]) > 1 and zipf(ps[i][0], "zh") >= ROLE_ZIPF:
        i += 1
    rest = ps[i:]
    if i == 0 or not rest:
        return False
    name = "".join(w for w, _ in rest)
    if len(rest) == 1:
        return rest[0][1] in PERSON_TAGS and len(name) > 1
    return 2 <= len(name) <= 3 and name[0] in _surnames() and all(len(w) == 1 for w, _ in rest)


def _surnames() -> frozenset[str]:
    from graphmem.extraction.zh.tokens import SURNAMES

    return SURNAMES
