"""Open-vocabulary concept candidates: what the catalog does not list.

English: named entities of useful labels, then noun chunks and proper nouns
from the parser, trimmed of determiners and filler adjectives. Chinese:
jieba's dictionary part-of-speech for the tokens spaCy's jieba segmenter
produced, book-title marks 《…》, Latin-script words, and Latin+Chinese
compounds such as `Django框架`.

Candidates are plain spans; extractor.py turns them into ConceptMentions
(resolving to catalog concepts where a key matches) and records rejects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Doc

from graphmem.extraction.normalize import concept_key, is_cjk
from graphmem.models import ExtractorName

# Entity labels kept as concepts. PRODUCT / ORG / WORK_OF_ART / LANGUAGE / EVENT / LAW
# name things a learner studies, uses or recommends (Django, Coursera, "Deep Learning",
# Python, PyCon, GDPR). Left out on purpose: PERSON, GPE, LOC, FAC and NORP — in
# tutoring and agent chats these are mostly the user's own life (names, cities) and
# would put personal data into an interest graph; and the numeric labels (DATE, TIME,
# MONEY, QUANTITY, PERCENT, ORDINAL, CARDINAL), which are never concepts.
NER_LABELS = frozenset({"PRODUCT", "ORG", "WORK_OF_ART", "LANGUAGE", "EVENT", "LAW"})

CONF_NER = 0.7
CONF_BOOK_TITLE = 0.8
CONF_PROPER = 0.6
CONF_CHUNK = 0.5
CONF_COMMON_NOUN_ZH = 0.4

# Words that never name a concept on their own: chat filler, greetings, generic
# nouns of conversation and of school exercises. Compared against concept keys.
GENERIC_EN = frozenset(
    """
    thing things stuff something anything everything nothing someone anyone everyone nobody
    question questions problem problems answer answers way ways lot lots bit kind sort type
    one ones time times day days week weeks month year years today tomorrow yesterday moment
    minute minutes hour hours second seconds morning night tonight weekend
    idea example examples fact case reason result point part side end start beginning
    place people person guy guys man woman kid kids friend friends teacher student students tutor
    help sense work job step steps try attempt chance hint hints tip tips clue
    number numbers word words sentence page line letter name names thing lesson class homework
    session chat message text question quiz test exam score grade mark point points
    ok okay k kk yes yeah yep yup no nope nah sure fine good great cool nice awesome right wrong
    idk dunno lol lmao haha hmm hm um umm uh uhh oh ah wow hi hello hey bye goodbye thanks thank
    thx ty please pls sorry soory sry welcome np alright done correct incorrect true false
    student tutor mr mrs ms sir madam miss dear everybody lot bunch couple half rest
    stuff matter issue issues deal hand mind life world home school today week
    prerequisite prerequisites prereq prereqs foundation foundations basis groundwork requirement
    requirements dependency dependencies component components subfield branch chapter section
    subject concept concepts field topic topics building block blocks
    effort approach look piece pieces whiteboard screen
    """.split()
)
# Leading words dropped from a noun chunk: they carry no concept ("my first Python project").
_LEADING_FILLER = frozenset(
    """good new old other same whole first next last final current big little few many much some
    any every each all own certain particular different various main basic simple real actual
    entire great nice bad best better more most less such several this that these those
    how excellent just overall total final""".split()
)

GENERIC_ZH = frozenset(
    """
    东西 问题 时候 事情 感觉 朋友 大家 样子 地方 部分 方面 情况 时间 今天 明天 昨天 现在 以后 之前
    谢谢 好的 知道 什么 怎么 为什么 这个 那个 一下 一些 有点 有些 方法 办法 意思 答案 题目 问题
    人 人们 别人 自己 我们 你们 他们 她们 老师 同学 学生 东东 哈哈 嗯嗯 好吧 好啊 对吧 可以 不错
    电影 歌曲 歌 音乐 作品 影片 专辑 景点 地址 门票 时长 上映 类型 导演 演员 主演 歌手 地点 城市
    国家 时间段 口碑 评分 评价 成本 票房 年代 角色 故事 剧情 内容 名字 名称 消息 信息 方式 原因
    结果 过程 经验 能力 水平 机会 印象 关系 心情 感情 生活 世界 社会 工作 公司 人物 风格
    基础 前提 一部分 部分 组成部分 分支 章节 前置知识 先修课 知识 课程 概念 领域
    明白 想学 学会 下一步 一步 步骤 代码 例子 练习 作业 难点 重点 入门 好难
    """.split()
)
# jieba dictionary tags kept as concept heads (nouns, names, places, organisations,
# other proper nouns, Latin words). "vn" (verbal nouns: 管理, 学习) only inside compounds.
_ZH_HEAD_TAGS = frozenset({"n", "nr", "nrfg", "nrt", "ns", "nt", "nz", "eng"})
_ZH_PROPER_TAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz", "eng"})
_ZH_COMPOUND_TAGS = _ZH_HEAD_TAGS | {"vn"}
_ZH_RUN_TAGS = frozenset({"n", "nr", "nrfg", "nrt", "ns", "nt", "nz"})
# Measurement units: "2 cm" is an answer, not a concept.
_UNITS = frozenset("cm mm km m g kg mg ml l ft in yd mi lb lbs oz sec secs min mins hr hrs am pm sq cu deg".split())
# Out-of-dictionary words holding these characters are verb phrases (没学过, 想学), not names.
_UNK_STOP_CHARS = frozenset("没不想要会过了的是在我你他她它这那有就都也还很吗呢吧啊学能得")
_NAME_DOTS = frozenset({"·", "•", "・", "‧"})
# Characters that end a name: particles, copulas, conjunctions.
_NOT_NAME = frozenset("的了是在和与及或也都就还很吗呢吧啊")


def _name_like(tok: tuple[int, int, str, str, str]) -> bool:
    word, tag = tok[2], tok[3]
    if not word or not all(is_cjk(c) for c in word) or word[0] in _NOT_NAME:
        return False
    return tag in ("unk", "x") or tag.startswith("n") or len(word) == 1 or tag in ("rg", "ng", "d", "v") and len(word) == 1


_BOOK_TITLE = re.compile(r"《([^《》\n]{1,60})》")
_LATIN = re.compile(r"[A-Za-z]")
_NUMERIC = re.compile(r"^[\d\s.,:/%+\-×x*^=()]+[a-z]{0,2}$")


@dataclass
class Candidate:
    start: int
    end: int
    extractor: ExtractorName
    confidence: float
    label: str = ""


@dataclass
class Reject:
    text: str
    reason: str


def reject_reason(surface: str, key: str, max_len: int) -> str | None:
    """Why a candidate is not a concept, or None when it may be one."""
    if not key:
        return "empty"
    if len(surface) > max_len:
        return "too_long"
    if len(key.replace(" ", "")) < 2:
        return "too_short"
    if _NUMERIC.match(key):
        return "numeric"
    if key in _UNITS:
        return "unit"
    if not any(ch.isalpha() for ch in key):
        return "no_letters"
    words = key.split()
    if all(w in STOP_WORDS or w in GENERIC_EN for w in words):
        return "stopword" if all(w in STOP_WORDS for w in words) else "generic"
    if key in GENERIC_ZH:
        return "generic"
    latin_only = key.isascii()
    if latin_only and len(key.replace(" ", "")) < 2:
        return "too_short"
    if not latin_only and len(key) < 2:
        return "too_short"
    return None


# ---------------------------------------------------------------------------
# English
# ---------------------------------------------------------------------------


def _trim_tokens(span) -> tuple[int, int] | None:  # type: ignore[no-untyped-def]
    """Token range of a noun chunk without leading determiners/filler and trailing punctuation."""
    toks = list(span)
    i, j = 0, len(toks)
    while i < j and (
        toks[i].pos_ in ("DET", "PRON", "PUNCT", "NUM", "ADP", "CCONJ", "PART", "SYM", "INTJ", "AUX")
        or toks[i].lower_ in _LEADING_FILLER
        or toks[i].tag_ in ("PRP$", "WP$", "WDT", "POS")
    ):
        i += 1
    while j > i and toks[j - 1].pos_ in ("PUNCT", "PART", "SYM") and toks[j - 1].text not in ("++", "#"):
        j -= 1
    if i >= j:
        return None
    if toks[j - 1].pos_ not in ("NOUN", "PROPN", "X") and not _looks_technical(toks[j - 1].text):
        return None
    return toks[i].idx, toks[j - 1].idx + len(toks[j - 1].text)


def _looks_technical(word: str) -> bool:
    """Mixed case, digits inside letters or code punctuation: SQLAlchemy, PyTorch, Python3, C++, C#."""
    if len(word) < 2 or not _LATIN.search(word):
        return False
    inner_upper = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
    has_digit = any(c.isdigit() for c in word) and word[0].isalpha()
    return inner_upper or has_digit or word.endswith(("++", "#")) or word.startswith(".")


def _split_coordination(chunk):  # type: ignore[no-untyped-def]
    """'SQLAlchemy and Jinja templates' -> 'SQLAlchemy', 'Jinja templates'."""
    parts, start = [], chunk.start
    for tok in chunk:
        if tok.pos_ == "CCONJ" or tok.text in (",", ";", "/", "&"):
            if tok.i > start:
                parts.append(chunk.doc[start : tok.i])
            start = tok.i + 1
    if start < chunk.end:
        parts.append(chunk.doc[start : chunk.end])
    return parts


def english_candidates(doc: Doc) -> list[Candidate]:
    out: list[Candidate] = []
    if doc.has_annotation("ENT_IOB"):
        for ent in doc.ents:
            if ent.label_ in NER_LABELS:
                span = _trim_tokens(ent) or (ent.start_char, ent.end_char)
                out.append(Candidate(span[0], span[1], ExtractorName.ner, CONF_NER, ent.label_))
    if doc.has_annotation("DEP"):
        for chunk in doc.noun_chunks:
            for part in _split_coordination(chunk):
                if len(part) > 6:
                    continue  # long chunks are descriptions, not names
                span = _trim_tokens(part)
                if span is None:
                    continue
                proper = any(t.pos_ == "PROPN" for t in part)
                out.append(Candidate(span[0], span[1], ExtractorName.noun_chunk, CONF_PROPER if proper else CONF_CHUNK))
    # Proper nouns and technical-looking words the chunker missed (tagger errors on chat text).
    for tok in doc:
        if tok.pos_ == "PROPN" or _looks_technical(tok.text):
            if tok.is_stop or tok.like_num:
                continue
            out.append(Candidate(tok.idx, tok.idx + len(tok.text), ExtractorName.noun_chunk, CONF_PROPER))
    return out


# ---------------------------------------------------------------------------
# Chinese (and Latin words inside Chinese turns)
# ---------------------------------------------------------------------------


def _zh_tag(word: str, tags: dict[str, str]) -> str:
    tag = tags.get(word)
    if tag is not None:
        return tag
    if _LATIN.search(word) and word.replace("+", "").replace("#", "").replace(".", "").isalnum() and word.isascii():
        return "eng"
    if len(word) >= 2 and all(is_cjk(c) for c in word):
        return "unk"  # out-of-dictionary word found by jieba's HMM: often a name
    return "x"


def chinese_candidates(doc: Doc, tags: dict[str, str]) -> list[Candidate]:
    text = doc.text
    out: list[Candidate] = []
    for m in _BOOK_TITLE.finditer(text):
        inner = m.group(1).strip()
        if inner:
            s = m.start(1) + m.group(1).index(inner)
            out.append(Candidate(s, s + len(inner), ExtractorName.pattern, CONF_BOOK_TITLE, "book_title"))
    toks = [(t.idx, t.idx + len(t.text), t.text, _zh_tag(t.text, tags), t.whitespace_) for t in doc]
    i = 0
    n = len(toks)
    while i < n:
        s, e, word, tag, ws = toks[i]
        if tag == "eng":
            # A Latin run ("machine learning", "Django") plus a Chinese head noun ("框架").
            j = i + 1
            while j < n and toks[j][3] == "eng" and toks[j - 1][4] in ("", " ") and toks[j][2].lower() not in STOP_WORDS:
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
        if tag in _ZH_RUN_TAGS or (tag == "unk" and len(word) >= 3 and not _UNK_STOP_CHARS.intersection(word)):
            # A run of nouns is one compound name: 北京|汽车|博物馆, 红砖|美术馆.
            k = i + 1
            while k < n and k - i < 5 and toks[k - 1][4] == "" and (toks[k][3] in _ZH_RUN_TAGS or toks[k][3] == "unk") and toks[k][2] not in GENERIC_ZH:
                if k + 1 < n and toks[k + 1][2] in _NAME_DOTS:
                    break  # the next token starts a dotted name: leave it to the name rule
                k += 1
            if k - i > 1:
                out.append(Candidate(s, toks[k - 1][1], ExtractorName.noun_chunk, CONF_PROPER, "compound"))
                i = k
                continue
            conf = CONF_PROPER if tag in _ZH_PROPER_TAGS or tag == "unk" else CONF_COMMON_NOUN_ZH
            if len(word) >= 2:
                out.append(Candidate(s, e, ExtractorName.noun_chunk, conf, tag))
        i += 1
    return out


def overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    return a_start < b_end and b_start < a_end


__all__ = ["Candidate", "Reject", "english_candidates", "chinese_candidates", "reject_reason", "concept_key"]
