"""Chinese concept candidates (and Latin words inside Chinese turns).

jieba's dictionary part-of-speech for the tokens spaCy's jieba segmenter produced, book-title marks
《…》 and short bracketed or quoted names (【…】 “…”), Latin-script words, Latin+Chinese compounds such
as `Django框架`, and names jieba cuts into pieces: personal names of a common surname plus one or two
characters (齐|秦, 林|宥|嘉, 彭坦), out-of-dictionary pieces joined to the next noun (观复|博物馆), noun
runs closed by a place suffix (…|世界), names pointed back to by a cue (恋恋|笔记本 + 这部电影), role
words dropped from the front (主演|中谷美纪). `ZhLexicon` collects such names over a batch of turns (one
conversation) plus adjacent pieces that always occur together there (超凡|蜘蛛侠), and every turn of the
batch is scanned for them.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Doc

from graphmem.extraction.candidates import (
    CONF_BOOK_TITLE,
    CONF_COMMON_NOUN_ZH,
    CONF_PROPER,
    GENERIC_ZH,
    LATIN,
    NUMERIC,
    ROLE_ZH,
    Candidate,
)
from graphmem.extraction.lexical import zipf
from graphmem.extraction.normalize import is_cjk
from graphmem.extraction.zh.frames import dotted_names, frame_names
from graphmem.models import ExtractorName

# A word jieba's dictionary tags as a common noun (n) and wordfreq finds at least this common is an
# everyday noun of talk (观众 4.93, 阵容 4.02, 食堂 3.95), not a name: names are tagged nr/ns/nt/nz or
# are out of the dictionary. Measured on KdConv dev (extraction only, gold present in the text):
# precision of stored concepts 0.31/0.31/0.21 -> 0.34/0.34/0.24 (film/music/travel), recall of
# present gold 0.896/0.890/0.922 -> 0.896/0.887/0.922 (at 3.5: 故宫 3.82 is lost).
COMMON_NOUN_ZIPF_ZH = 4.0
# Pieces of a run of plain nouns (电影|短片) at least this common: the run describes (film/music/travel
# precision of stored concepts +1 point, recall of present gold -0.002 on film, unchanged elsewhere).
COMMON_NOUN_ZIPF_ZH_RUN = 4.0
CONF_NAME = 0.7  # Chinese names found by a cue, a surname or recurrence across the batch


# jieba dictionary tags kept as concept heads (nouns, names, places, organisations,
# other proper nouns, Latin words). "vn" (verbal nouns: 管理, 学习) only inside compounds.
_ZH_HEAD_TAGS = frozenset({"n", "nr", "nrfg", "nrt", "ns", "nt", "nz", "eng"})
_ZH_PROPER_TAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz", "eng"})
_ZH_COMPOUND_TAGS = _ZH_HEAD_TAGS | {"vn"}
_ZH_RUN_TAGS = frozenset({"n", "nr", "nrfg", "nrt", "ns", "nt", "nz"})
# Out-of-dictionary words holding these characters are verb phrases (没学过, 想学), not names.
_UNK_STOP_CHARS = frozenset("没不想要会过了的是在我你他她它这那有就都也还很吗呢吧啊学能得")
_NAME_DOTS = frozenset({"·", "•", "・", "‧"})
# Characters that end a name: particles, copulas, conjunctions.
_NOT_NAME = frozenset("的了是在和与及或也都就还很吗呢吧啊")
# Common single-character surnames (characters that are mostly function words left out: 和 于 向 高 ...).
_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程苏魏吕丁任沈姚卢姜"
    "崔钟谭陆汪范金石廖贾夏韦付方邹熊孟秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔汤庞樊兰殷施"
    "翟倪欧齐柯甄郎鲍尤祝颜包詹柳艾鲁葛奚岳柴宁仇栾滕常伍易蒲邢梅巩凌庄牛"
)
# Characters that never end or continue a given name: particles, pronouns, copulas, common verbs.
_GIVEN_STOP = frozenset(
    "的了是在和与及或也都就还很吗呢吧啊我你他她它这那有没不想要会过说唱演看听到去来给让把被对为从个们吗么呀哦嗯么"
)
_GIVEN_TAGS = frozenset({"nr", "nrfg", "nrt", "ng", "g", "n", "a", "ag", "v", "vg", "x", "unk", "tg", "zg", "b", "s"})
# A character right before a surname that makes it a classifier or part of a word: 这张, 一位.
_CLASSIFIER_LEFT = frozenset("这那一两几每某哪第多")
# A name before one of these is what the cue points back to.
_RIGHT_CUES = (
    "这部电影",
    "这部影片",
    "这部片",
    "这部剧",
    "这部作品",
    "这首歌",
    "这首曲",
    "这支歌",
    "这张专辑",
    "这本书",
    "这个景点",
    "这个地方",
    "这个公园",
    "这座",
    "这家",
    "这所",
    "是一部",
    "是一首",
    "这部",
    "这首",
)
# Words a name never starts with (verbs of knowing and telling, pronouns, particles) ...
_LEAD_STOP = frozenset(
    """知道 看过 听过 听说 说到 说起 关于 喜欢 推荐 觉得 认为 还有 以及 就是 还是 也是 都是 而且 不过 但是
    那么 所以 因为 有 是 去 在 看 听 演 唱 叫 到 过 对 给 和 与 跟 及 或 我 你 他 她 它 这 那 就 也 都 还 很 吗 呢
    吧 啊 哦 嗯 呀 了 的 得 地 之 把 被 让 想 要 会 能 可以 一部 一首 一个 代表作 代表作品 作品 电影 歌曲 主演
    导演 演唱 原唱 歌手 演员 首歌 首 部""".split()
)
_CUE_STOP_TAGS = frozenset({"r", "p", "c", "uj", "ul", "uz", "ug", "uv", "ud", "y", "d", "m", "q", "e", "zg", "x"})
# Suffixes that close a place or organisation name even though they are generic alone.
_NAME_SUFFIX = frozenset(
    """世界 公园 乐园 景区 风景区 博物馆 美术馆 艺术馆 纪念馆 艺术区 艺术中心 大峡谷 峡谷 公司 有限公司 影业 唱片
    庄园 山庄 度假村 动物园 植物园 游乐园 水族馆 寺 宫 府 园 村 镇 湖 山 岛 塔 桥 街 路 胡同 大学 学院""".split()
)
# Endings of place and institution names for the leftward longest match (suffix_names): the
# _NAME_SUFFIX words plus endings jieba leaves as separate pieces (溶洞, 瀑, 嘉年华, 陈列馆).
_PLACE_ENDINGS = tuple(
    sorted(
        _NAME_SUFFIX
        | frozenset(
            """溶洞 洞 瀑 瀑布 陈列馆 展览馆 体验馆 书馆 古城 古寨 温泉 嘉年华 艺术空间 艺术中心 体验中心 电视塔 陵 楼 戏楼
    采摘园 牡丹园 艺术区 欧洲区 海底世界 博览馆""".split()
        ),
        key=len,
        reverse=True,
    )
)
_ENDING_SET = frozenset(_PLACE_ENDINGS)
_ENDING_LENGTHS = sorted({len(x) for x in _PLACE_ENDINGS}, reverse=True)  # longest ending first
# A piece never inside a place name: pronouns, prepositions, conjunctions, particles, interjections.
_EXTEND_STOP_TAGS = frozenset({"r", "p", "c", "uj", "ul", "uz", "ug", "uv", "ud", "y", "e", "o"})
_EXTEND_STOP_CHARS = frozenset("没不想要过了的是在我你他她它这那有就都也还很吗呢吧啊")

# Tags of a left piece that may fuse with the noun after it when the pair recurs (超凡|蜘蛛侠, 荒蛮|故事).
_MERGE_LEFT_TAGS = frozenset({"v", "a", "ag", "an", "ng", "nr", "nz", "n", "ns", "vn", "unk", "b", "l", "i", "j"})


def _name_like(tok: tuple[int, int, str, str, str]) -> bool:
    word, tag = tok[2], tok[3]
    if not word or not all(is_cjk(c) for c in word) or word[0] in _NOT_NAME:
        return False
    if len(word) == 1 and word in _GIVEN_STOP or word in ROLE_ZH or word in GENERIC_ZH:
        return False
    return tag in ("unk", "x") or tag.startswith("n") or len(word) == 1


_BOOK_TITLE = re.compile(r"《([^《》\n]{1,60})》")
# Bracketed or quoted short names: 【阿凡达】, “凡人歌”, 「千与千寻」 (short, no sentence punctuation).
_QUOTED = re.compile(r"[【“「『]([^【】“”「」『』\n，。！？,.!?；;：:]{2,14})[】”」』]")


def _zh_tag(word: str, tags: dict[str, str]) -> str:
    tag = tags.get(word)
    if tag is not None:
        return tag
    if LATIN.search(word) and word.replace("+", "").replace("#", "").replace(".", "").isalnum() and word.isascii():
        return "eng"
    if len(word) >= 2 and all(is_cjk(c) for c in word):
        return "unk"  # out-of-dictionary word found by jieba's HMM: often a name
    return "x"


Tok = tuple[int, int, str, str, str]  # start, end, word, jieba tag, trailing whitespace


def _zh_tokens(doc: Doc, tags: dict[str, str]) -> list[Tok]:
    return [(t.idx, t.idx + len(t.text), t.text, _zh_tag(t.text, tags), t.whitespace_) for t in doc]


def _cjk_word(word: str) -> bool:
    return bool(word) and all(is_cjk(c) for c in word)


def _person_name(toks: list[Tok], i: int) -> int:
    """End index (exclusive) of a 2–3 character personal name starting at token i, or i.

    jieba's dictionary splits names it does not know: 齐|秦, 林|宥|嘉, 彭坦 (out of
    dictionary), 田馥|甄. A name is a common surname character followed by one or
    two given-name characters, as one out-of-dictionary word or as single-character
    tokens, and then a word boundary (not another single character).
    """
    n = len(toks)
    word, tag = toks[i][2], toks[i][3]
    if not word or word[0] not in _SURNAMES:
        return i
    if (
        i > 0
        and toks[i - 1][4] == ""
        and (toks[i - 1][3] in ("r", "m", "q") or toks[i - 1][2][-1:] in _CLASSIFIER_LEFT)
    ):
        return i  # 这张图, 一位, 三张: a classifier, not a surname
    if len(word) == 2 and tag == "unk":
        if word[1] in _GIVEN_STOP:
            return i
        k = i + 1
        # 林宥|嘉, 田馥|甄: an out-of-dictionary pair plus one more single given-name character.
        if k < n and (
            toks[k][2] in _NAME_DOTS or toks[i][4] == "" and toks[k][3] in _ZH_RUN_TAGS and len(toks[k][2]) >= 2
        ):
            return i  # 马特·达蒙: the dotted-name rule takes it; 宋庄|艺术区: a place, the noun run takes it
        if (
            k < n
            and toks[i][4] == ""
            and len(toks[k][2]) == 1
            and is_cjk(toks[k][2])
            and toks[k][3] in _GIVEN_TAGS
            and toks[k][2] not in _GIVEN_STOP
            and (
                k + 1 >= n or len(toks[k + 1][2]) != 1 or not _cjk_word(toks[k + 1][2]) or toks[k + 1][2] in _GIVEN_STOP
            )
        ):
            return k + 1
        return i + 1
    if len(word) != 1:
        return i
    k = i + 1
    while (
        k < n
        and k - i <= 2
        and toks[k - 1][4] == ""
        and len(toks[k][2]) == 1
        and is_cjk(toks[k][2])
        and toks[k][2] not in _GIVEN_STOP
        and toks[k][3] in _GIVEN_TAGS
    ):
        k += 1
    if k == i + 1:
        return i
    if k < n and len(toks[k][2]) == 1 and is_cjk(toks[k][2]) and toks[k][2] not in _GIVEN_STOP and toks[k - 1][4] == "":
        return i  # a longer run of single characters: not a name we can delimit
    if not any(toks[j][3] in ("nr", "nrfg", "nrt", "ng", "g") for j in range(i + 1, k)):
        return i
    if k < n and toks[k][2] in _NAME_DOTS:
        return i
    return k


def _cue_name(toks: list[Tok], text: str, i: int) -> int:
    """Start index of a name ending right before token i when token i opens a cue
    such as 这部电影 / 这首歌 / 是一部 (the name is what the cue points back to), else i."""
    rest = text[toks[i][0] : toks[i][0] + 5]
    if not rest.startswith(_RIGHT_CUES):
        return i
    j = i
    chars = 0
    while j > 0 and i - j < 4:
        pw, ptag, pws = toks[j - 1][2], toks[j - 1][3], toks[j - 1][4]
        if pws or not _cjk_word(pw) or pw in _LEAD_STOP or ptag in _CUE_STOP_TAGS or pw[0] in _NOT_NAME:
            break
        if chars + len(pw) > 10:
            break
        chars += len(pw)
        j -= 1
    if j < i and chars >= 2 and not (i - j == 1 and toks[j][2] in GENERIC_ZH):
        return j
    return i


@dataclass
class ZhLexicon:
    """Names found across a batch of Chinese turns (usually one conversation).

    ``names``: strings established by strong evidence in some turn (《》 or quoted
    titles, a cue such as 这部电影, a personal name) or a merge of adjacent pieces
    that always occur together in the batch (超凡|蜘蛛侠); every turn of the batch
    then gets them as candidates, so a name spelled without its cue elsewhere is
    still found whole. ``first``: first character -> names, longest first.
    """

    names: set[str]
    first: dict[str, list[str]]

    @classmethod
    def build(cls, docs: list[Doc], tags: dict[str, str]) -> ZhLexicon:
        names: set[str] = set()
        pair_count: dict[str, int] = {}
        head_count: dict[str, int] = {}
        for doc in docs:
            text = doc.text
            for m in _BOOK_TITLE.finditer(text):
                inner = m.group(1).strip()
                if 2 <= len(inner) <= 20:
                    names.add(inner)
            for m in _QUOTED.finditer(text):
                names.add(m.group(1).strip())
            toks = _zh_tokens(doc, tags)
            for s, e in _framed(text, toks):
                names.add(text[s:e])
            n = len(toks)
            for i in range(n):
                word, tag = toks[i][2], toks[i][3]
                j = _cue_name(toks, text, i)
                if j < i:
                    names.add(text[toks[j][0] : toks[i - 1][1]])
                k = _person_name(toks, i)
                if k > i:
                    names.add(text[toks[i][0] : toks[k - 1][1]])
                if (tag in _ZH_RUN_TAGS or tag == "unk") and len(word) >= 2:
                    head_count[word] = head_count.get(word, 0) + 1
                    if i > 0 and toks[i - 1][4] == "":
                        pw, ptag = toks[i - 1][2], toks[i - 1][3]
                        if (
                            _cjk_word(pw)
                            and len(pw) == 2
                            and ptag in _MERGE_LEFT_TAGS
                            and pw not in _LEAD_STOP
                            and not _UNK_STOP_CHARS.intersection(pw)
                            and pw not in GENERIC_ZH
                        ):
                            key = pw + "\t" + word
                            pair_count[key] = pair_count.get(key, 0) + 1
        for key, c in pair_count.items():
            pw, word = key.split("\t")
            if c >= 2 and c * 4 >= head_count.get(word, c) * 3:
                names.add(pw + word)
        names = {x for x in names if len(x) >= 2 and not NUMERIC.match(x) and x not in GENERIC_ZH}
        first: dict[str, list[str]] = {}
        for x in sorted(names, key=len, reverse=True):
            first.setdefault(x[0], []).append(x)
        return cls(names, first)

    def scan(self, text: str) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        if not self.first:
            return out
        i, n = 0, len(text)
        while i < n:
            cands = self.first.get(text[i])
            if cands:
                for x in cands:
                    if text.startswith(x, i):
                        out.append((i, i + len(x)))
                        i += len(x) - 1
                        break
            i += 1
        return out


def chinese_candidates(doc: Doc, tags: dict[str, str], lexicon: ZhLexicon | None = None) -> list[Candidate]:
    text = doc.text
    out: list[Candidate] = []
    for m in _BOOK_TITLE.finditer(text):
        inner = m.group(1).strip()
        if inner:
            s = m.start(1) + m.group(1).index(inner)
            out.append(Candidate(s, s + len(inner), ExtractorName.pattern, CONF_BOOK_TITLE, "book_title"))
    for m in _QUOTED.finditer(text):
        out.append(Candidate(m.start(1), m.end(1), ExtractorName.pattern, CONF_BOOK_TITLE, "quoted"))
    if lexicon is not None:
        for s, e in lexicon.scan(text):
            out.append(Candidate(s, e, ExtractorName.pattern, CONF_NAME, "lexicon"))
    toks = _zh_tokens(doc, tags)
    framed = _framed(text, toks)
    # Positions inside some framed span, and the spans by start: the checks below stay linear.
    covered = bytearray(len(text) + 1)
    for fs, fe in framed:
        covered[fs:fe] = b"\x01" * (fe - fs)
    framed_by_start = sorted(framed)
    framed_starts = [fs for fs, _ in framed_by_start]
    longest = max((fe - fs for fs, fe in framed), default=0)
    for s, e in framed:
        out.append(Candidate(s, e, ExtractorName.pattern, CONF_NAME, "frame"))
    for s, e in suffix_names(text, toks):
        out.append(Candidate(s, e, ExtractorName.noun_chunk, CONF_PROPER, "suffix"))
    i = 0
    n = len(toks)
    while i < n:
        s, e, word, tag, ws = toks[i]
        j = _cue_name(toks, text, i)
        if j < i:
            out.append(Candidate(toks[j][0], toks[i - 1][1], ExtractorName.pattern, CONF_NAME, "cue"))
        k = _person_name(toks, i)
        if k > i:
            out.append(Candidate(s, toks[k - 1][1], ExtractorName.pattern, CONF_NAME, "person"))
            i = k
            continue
        if tag == "eng":
            # A Latin run ("machine learning", "Django") plus a Chinese head noun ("框架").
            j = i + 1
            while (
                j < n and toks[j][3] == "eng" and toks[j - 1][4] in ("", " ") and toks[j][2].lower() not in STOP_WORDS
            ):
                j += 1
            k = j
            while k < n and toks[k - 1][4] == "" and toks[k][3] in _ZH_COMPOUND_TAGS and toks[k][3] != "eng":
                k += 1
            if k > j:
                out.append(Candidate(s, toks[k - 1][1], ExtractorName.noun_chunk, CONF_PROPER, "compound"))
            elif word.lower() not in STOP_WORDS:
                out.append(Candidate(s, toks[j - 1][1], ExtractorName.noun_chunk, CONF_PROPER, "eng"))
            i = max(j, k)
            continue
        if i + 1 < n and toks[i + 1][2] in _NAME_DOTS and covered[toks[i + 1][0]]:
            i += 2  # a transliterated name the dotted-name frame delimits exactly
            continue
        if i + 1 < n and toks[i + 1][2] in _NAME_DOTS and _name_like(toks[i]):
            # Transliterated foreign names, split arbitrarily by jieba: 莱昂纳多·迪卡|普里|奥
            k = i + 2
            while k < n and _name_like(toks[k]) and toks[k - 1][4] == "" and toks[k][1] - toks[i + 2][0] < 10:
                k += 1
                if k < n and toks[k][2] in _NAME_DOTS and k + 1 < n and _name_like(toks[k + 1]):
                    k += 1
            if k > i + 2:
                out.append(Candidate(s, toks[k - 1][1], ExtractorName.noun_chunk, CONF_PROPER, "name"))
                i = k
                continue
        if tag == "unk" and len(word) == 2 and not _UNK_STOP_CHARS.intersection(word) and i + 1 < n and ws == "":
            nw, _ntag = toks[i + 1][2], toks[i + 1][3]
            if (
                len(nw) == 1
                and is_cjk(nw)
                and nw not in _GIVEN_STOP
                and (i + 2 >= n or len(toks[i + 2][2]) != 1 or not _cjk_word(toks[i + 2][2]))
            ):
                # An out-of-dictionary piece plus a noun or one character: 观复|博物馆, 盗梦|空间, 阿凡|达.
                out.append(Candidate(s, toks[i + 1][1], ExtractorName.noun_chunk, CONF_PROPER, "compound"))
                i += 2
                continue
        if word in ROLE_ZH:
            i += 1  # 主演|中谷美纪, 原唱|梁静茹: the role word is not part of the name
            continue
        unk_head = (
            tag == "unk"
            and not _UNK_STOP_CHARS.intersection(word)
            and (
                len(word) >= 3
                or i + 1 < n
                and ws == ""
                and toks[i + 1][3] in _ZH_RUN_TAGS
                and len(toks[i + 1][2]) >= 2
                and toks[i + 1][2] not in GENERIC_ZH
                and toks[i + 1][2] not in ROLE_ZH
            )
        )
        if tag in _ZH_RUN_TAGS or unk_head:
            # A run of nouns is one compound name: 北京|汽车|博物馆, 红砖|美术馆, 观复|博物馆; a place
            # or organisation suffix closes it even when generic alone (八达岭野生动物|世界).
            k = i + 1
            while k < n and k - i < 5 and toks[k - 1][4] == "":
                kw, kt = toks[k][2], toks[k][3]
                if kw in _NAME_SUFFIX:
                    if (
                        len(kw) == 1
                        and k + 1 < n
                        and toks[k][4] == ""
                        and _cjk_word(toks[k + 1][2])
                        and toks[k + 1][3].startswith("n")
                    ):
                        break  # 北京|园|博园: a one-character suffix glued to the next noun is a cut error
                    k += 1
                    break
                if (
                    not (kt in _ZH_RUN_TAGS or kt == "unk" and not _UNK_STOP_CHARS.intersection(kw))
                    or kw in GENERIC_ZH
                    or kw in ROLE_ZH
                ):
                    break
                if k + 1 < n and toks[k + 1][2] in _NAME_DOTS:
                    break  # the next token starts a dotted name: leave it to the name rule
                k += 1
            if k - i > 1:
                # Everyday dictionary nouns in a row (电影|短片, 音乐|录影带) describe, they do not name: a
                # name has a proper or unknown piece (观复|博物馆, 北京|汽车|博物馆) or a name ending.
                descriptive = (
                    all(toks[x][3] == "n" and zipf(toks[x][2], "zh") >= COMMON_NOUN_ZIPF_ZH_RUN for x in range(i, k))
                    and toks[k - 1][2] not in _NAME_SUFFIX
                )
                if not descriptive:
                    out.append(Candidate(s, toks[k - 1][1], ExtractorName.noun_chunk, CONF_PROPER, "compound"))
                i = k
                continue
            conf = CONF_PROPER if tag in _ZH_PROPER_TAGS or tag == "unk" else CONF_COMMON_NOUN_ZH
            if conf == CONF_COMMON_NOUN_ZH and zipf(word, "zh") >= COMMON_NOUN_ZIPF_ZH:
                i += 1  # a dictionary common noun in everyday use (观众, 阵容, 礼堂): not a name
                continue
            if len(word) >= 2:
                out.append(Candidate(s, e, ExtractorName.noun_chunk, conf, tag))
        i += 1

    # A frame fixes both ends of its name: segmenter-based candidates that overlap one
    # and reach past it (过程|小东 against 听说过|程小东) are cut errors.
    def reaches_past_a_frame(c: Candidate) -> bool:
        # Framed spans that overlap c start before c.end and no earlier than c.start - longest.
        k = bisect_left(framed_starts, c.end)
        while k > 0 and framed_by_start[k - 1][0] >= c.start - longest:
            k -= 1
            fs, fe = framed_by_start[k]
            if c.start < fe and fs < c.end and not (fs <= c.start and c.end <= fe):
                return True
        return False

    return [c for c in out if c.label == "frame" or not reaches_past_a_frame(c)]


def suffix_names(text: str, toks: list[Tok]) -> list[tuple[int, int]]:
    """Place and institution names found by their ending and a leftward longest match.

    jieba cuts names it does not know into pieces (上|上|国际|美术馆, 桃源|仙谷|自然|风景区,
    云佛山|大|溶洞), and the noun-run rule stops at the first piece that is not a noun. Here a
    known ending (美术馆, 风景区, 溶洞, 园) takes every piece before it, up to 10 characters, until a
    particle, pronoun, preposition, punctuation, a common verb (wordfreq, 去过 参观) or a generic
    word: "你去过上上国际美术馆吗" gives 上上国际美术馆.
    """
    out: list[tuple[int, int]] = []
    n = len(toks)
    starts = {t[0]: k for k, t in enumerate(toks)}
    for k in range(n):
        if not _cjk_word(toks[k][2]):
            continue
        end = toks[k][1]
        ending = next((text[end - n : end] for n in _ENDING_LENGTHS if text[end - n : end] in _ENDING_SET), None)
        i = starts.get(end - len(ending)) if ending else None
        if i is None:
            continue
        j, chars = i, 0
        while j > 0:
            pw, ptag, pws = toks[j - 1][2], toks[j - 1][3], toks[j - 1][4]
            if pws or not (_cjk_word(pw) or pw.isascii() and pw.isalnum()) or ptag in _EXTEND_STOP_TAGS:
                break
            if pw in _LEAD_STOP or pw in GENERIC_ZH or pw in ROLE_ZH or _EXTEND_STOP_CHARS.intersection(pw):
                break
            if ptag.startswith("v") and zipf(pw, "zh") >= 4.0:
                break
            if chars + len(pw) > 10:
                break
            chars += len(pw)
            j -= 1
        if (
            j < i
            and chars >= 2
            and not (
                k + 1 < n
                and toks[k][4] == ""
                and toks[k + 1][3] in _ZH_RUN_TAGS
                and _cjk_word(toks[k + 1][2])
                and toks[k + 1][2] not in GENERIC_ZH
            )
        ):
            out.append((toks[j][0], end))
    return out


def _framed(text: str, toks: list[Tok]) -> list[tuple[int, int]]:
    """Names delimited by their sentence frame or by transliteration characters (zh.frames)."""
    tagged = [(s, e, w, t) for s, e, w, t, _ in toks]
    spans = list(dotted_names(text, tagged))
    spans += frame_names(text, tagged, GENERIC_ZH | ROLE_ZH)
    return spans
