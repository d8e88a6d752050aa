"""Chinese concept candidates (and Latin words inside Chinese turns), as ordered rules.

jieba's dictionary part-of-speech for the tokens spaCy's jieba segmenter produced, book-title marks
《…》 and short bracketed or quoted names (【…】 “…”), Latin-script words, Latin+Chinese compounds such
as `Django框架`, and names jieba cuts into pieces: personal names of a common surname plus one or two
characters (齐|秦, 林|宥|嘉, 彭坦), out-of-dictionary pieces joined to the next noun (观复|博物馆), noun
runs closed by a place suffix (…|世界), names pointed back to by a cue (恋恋|笔记本 + 这部电影), role
words dropped from the front (主演|中谷美纪). `ZhLexicon` (zh.lexicon) collects such names over a
batch of turns (one conversation) plus adjacent pieces that always occur together there
(超凡|蜘蛛侠), and every turn of the batch is scanned for them.

The rules run in a fixed order. ``SPAN_RULES`` read the whole text (titles, quotes, the batch's
names, sentence frames, place endings). ``TOKEN_RULES`` walk jieba's pieces left to right: at
each position the first rule that applies emits its candidates and says where the walk goes on;
``cue_rule`` runs before them at every position and never moves the walk. Last, a frame fixes both
ends of its name, so segmenter-based candidates that cut across one are dropped.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Doc

from graphmem.extraction import pipelines
from graphmem.extraction.candidates import (
    CONF_BOOK_TITLE,
    CONF_COMMON_NOUN_ZH,
    CONF_PROPER,
    GENERIC_ZH,
    LONE_LATIN_NAME,
    ROLE_ZH,
    Candidate,
)
from graphmem.extraction.lexical import zipf
from graphmem.extraction.normalize import is_cjk
from graphmem.extraction.zh.biography import drop_biography_details
from graphmem.extraction.zh.lexicon import BOOK_TITLE, QUOTED, ZhLexicon
from graphmem.extraction.zh.name_ends import complete_award_and_school_names
from graphmem.extraction.zh.names import cue_name, framed, name_like, person_name, suffix_names
from graphmem.extraction.zh.quotations import drop_pieces_of_quotations
from graphmem.extraction.zh.tokens import (
    COMPOUND_TAGS,
    GIVEN_STOP_CHARS,
    NAME_DOTS,
    NAME_SUFFIX,
    PROPER_TAGS,
    RUN_TAGS,
    UNK_STOP_CHARS,
    ZHI_PHRASE_HEADS,
    Tok,
    cjk_word,
    zh_tokens,
)
from graphmem.models import ExtractorName

__all__ = ["SPAN_RULES", "TOKEN_RULES", "Tok", "ZhLexicon", "ZhTurn", "chinese_candidates", "suffix_names"]

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
_MAX_RUN = 5  # pieces in one noun run
_MAX_DOTTED_CHARS = 10  # characters after the first dot of a transliterated name


@dataclass
class ZhTurn:
    """One Chinese turn as the rules read it: text, jieba pieces, the batch's names, framed spans."""

    text: str
    toks: list[Tok]
    lexicon: ZhLexicon | None = None
    framed: list[tuple[int, int]] = field(default_factory=list)
    covered: bytearray = field(default_factory=bytearray)  # 1 at positions inside a framed span

    @classmethod
    def read(cls, doc: Doc, tags: dict[str, str], lexicon: ZhLexicon | None = None) -> ZhTurn:
        text = doc.text
        toks = zh_tokens(doc, tags)
        spans = framed(text, toks)
        covered = bytearray(len(text) + 1)
        for fs, fe in spans:
            covered[fs:fe] = b"\x01" * (fe - fs)
        return cls(text, toks, lexicon, spans, covered)


class Step(NamedTuple):
    """What a token rule found at a position and where the walk goes on."""

    found: list[Candidate]
    next: int


def _cand(s: int, e: int, extractor: ExtractorName, conf: float, label: str) -> Candidate:
    return Candidate(s, e, extractor, conf, label)


# -- span rules: over the whole text -------------------------------------------------------------


def book_title_rule(t: ZhTurn) -> list[Candidate]:
    """《恋恋笔记本》: the title inside book-title marks, trimmed."""
    out = []
    for m in BOOK_TITLE.finditer(t.text):
        inner = m.group(1).strip()
        if inner:
            s = m.start(1) + m.group(1).index(inner)
            out.append(_cand(s, s + len(inner), ExtractorName.pattern, CONF_BOOK_TITLE, "book_title"))
    return out


def quoted_rule(t: ZhTurn) -> list[Candidate]:
    """【阿凡达】, “凡人歌”: a short bracketed or quoted name."""
    return [
        _cand(m.start(1), m.end(1), ExtractorName.pattern, CONF_BOOK_TITLE, "quoted") for m in QUOTED.finditer(t.text)
    ]


def lexicon_rule(t: ZhTurn) -> list[Candidate]:
    """Names the batch established elsewhere (a cue, a title, a recurring merge), found again here."""
    if t.lexicon is None:
        return []
    return [_cand(s, e, ExtractorName.pattern, CONF_NAME, "lexicon") for s, e in t.lexicon.scan(t.text)]


def frame_rule(t: ZhTurn) -> list[Candidate]:
    """Names delimited by the sentence frame or by transliteration characters (zh.frames)."""
    return [_cand(s, e, ExtractorName.pattern, CONF_NAME, "frame") for s, e in t.framed]


def suffix_rule(t: ZhTurn) -> list[Candidate]:
    """Place and institution names by their ending and a leftward longest match (names.suffix_names)."""
    return [_cand(s, e, ExtractorName.noun_chunk, CONF_PROPER, "suffix") for s, e in suffix_names(t.text, t.toks)]


SPAN_RULES: tuple[Callable[[ZhTurn], list[Candidate]], ...] = (
    book_title_rule,
    quoted_rule,
    lexicon_rule,
    frame_rule,
    suffix_rule,
)


# -- token rules: left to right over jieba's pieces -----------------------------------------------


def cue_rule(t: ZhTurn, i: int) -> list[Candidate]:
    """恋恋|笔记本 + 这部电影: the name a cue at token i points back to (the walk does not move)."""
    j = cue_name(t.toks, t.text, i)
    if j < i:
        return [_cand(t.toks[j].start, t.toks[i - 1].end, ExtractorName.pattern, CONF_NAME, "cue")]
    return []


def person_rule(t: ZhTurn, i: int) -> Step | None:
    """齐|秦, 林|宥|嘉, 彭坦: a surname plus one or two given-name characters (names.person_name)."""
    k = person_name(t.toks, i)
    if k > i:
        return Step([_cand(t.toks[i].start, t.toks[k - 1].end, ExtractorName.pattern, CONF_NAME, "person")], k)
    return None


def latin_rule(t: ZhTurn, i: int) -> Step | None:
    """A Latin run ("machine learning", "Django"), with a Chinese head noun after it when there is
    one (Django框架); a lone English stop word gives nothing."""
    toks, n = t.toks, len(t.toks)
    if toks[i].tag != "eng":
        return None
    j = i + 1
    while j < n and toks[j].tag == "eng" and toks[j - 1].ws in ("", " ") and toks[j].word.lower() not in STOP_WORDS:
        j += 1
    k = j
    while k < n and toks[k - 1].ws == "" and toks[k].tag in COMPOUND_TAGS and toks[k].tag != "eng":
        k += 1
    s = toks[i].start
    if k > j:
        found = [_cand(s, toks[k - 1].end, ExtractorName.noun_chunk, CONF_PROPER, "compound")]
    elif _lone_capitalised(toks, i, j):
        found = [_cand(s, toks[j - 1].end, ExtractorName.noun_chunk, CONF_PROPER, LONE_LATIN_NAME)]
    elif toks[i].word.lower() not in STOP_WORDS:
        found = [_cand(s, toks[j - 1].end, ExtractorName.noun_chunk, CONF_PROPER, "eng")]
    else:
        found = []
    return Step(found, max(j, k))


def _lone_capitalised(toks: list[Tok], i: int, j: int) -> bool:
    """A single capitalised Latin word of 2+ letters alone among Chinese (我特别想学Go, 用Qt写界面) is a
    name even when its lower case is an English stop word: English sentences come as runs of words."""
    word = toks[i].word
    return j == i + 1 and len(word) >= 2 and word[0].isupper() and (i == 0 or toks[i - 1].tag != "eng")


# Pieces that open and close a term jieba keeps whole as a fixed expression (tag l): 量子|力学,
# 线性|代数, 方差|分析 are subjects; idioms (一般|来说, 眼前|一亮, 结构|紧凑) open or close otherwise.
_TERM_HEAD_TAGS = frozenset({"n", "nz", "vn", "b"})
_TERM_TAIL_TAGS = frozenset({"n", "nz", "vn", "ng"})


def _term_halves(word: str, tags: dict[str, str]) -> tuple[str, str] | None:
    """The most even split of ``word`` into two dictionary words, if any."""
    cuts = sorted(range(1, len(word)), key=lambda k: abs(len(word) - 2 * k))
    return next(((word[:k], word[k:]) for k in cuts if word[:k] in tags and word[k:] in tags), None)


def term_rule(t: ZhTurn, i: int) -> Step | None:
    """A technical term jieba's dictionary lists as a fixed expression (tag l: 量子力学, 线性代数): a
    candidate when it splits into a noun-like head and a noun tail and is not an everyday phrase."""
    tok = t.toks[i]
    if tok.tag != "l" or len(tok.word) < 3:
        return None
    tags = pipelines.jieba_tags()
    halves = _term_halves(tok.word, tags)
    if halves is None or zipf(tok.word, "zh") >= COMMON_NOUN_ZIPF_ZH:
        return None
    if tags.get(halves[0]) not in _TERM_HEAD_TAGS or tags.get(halves[1]) not in _TERM_TAIL_TAGS:
        return None
    return Step([_cand(tok.start, tok.end, ExtractorName.noun_chunk, CONF_COMMON_NOUN_ZH, "term")], i + 1)


def framed_dotted_rule(t: ZhTurn, i: int) -> Step | None:
    """A transliterated name the dotted-name frame already delimits exactly: skip its first piece
    and the dot."""
    if i + 1 < len(t.toks) and t.toks[i + 1].word in NAME_DOTS and t.covered[t.toks[i + 1].start]:
        return Step([], i + 2)
    return None


def dotted_name_rule(t: ZhTurn, i: int) -> Step | None:
    """Transliterated foreign names split arbitrarily by jieba: 莱昂纳多·迪卡|普里|奥."""
    toks, n = t.toks, len(t.toks)
    if not (i + 1 < n and toks[i + 1].word in NAME_DOTS and name_like(toks[i])):
        return None
    k = i + 2
    while k < n and name_like(toks[k]) and toks[k - 1].ws == "" and toks[k].end - toks[i + 2].start < _MAX_DOTTED_CHARS:
        k += 1
        if k < n and toks[k].word in NAME_DOTS and k + 1 < n and name_like(toks[k + 1]):
            k += 1
    if k > i + 2:
        return Step([_cand(toks[i].start, toks[k - 1].end, ExtractorName.noun_chunk, CONF_PROPER, "name")], k)
    return None


def unk_pair_rule(t: ZhTurn, i: int) -> Step | None:
    """An out-of-dictionary pair plus one character: 盗梦|空间's cousins 阿凡|达 (then a boundary)."""
    toks, n = t.toks, len(t.toks)
    tok = toks[i]
    if not (tok.tag == "unk" and len(tok.word) == 2 and not UNK_STOP_CHARS.intersection(tok.word)):
        return None
    if not (i + 1 < n and tok.ws == ""):
        return None
    nw = toks[i + 1].word
    boundary = i + 2 >= n or len(toks[i + 2].word) != 1 or not cjk_word(toks[i + 2].word)
    if len(nw) == 1 and is_cjk(nw) and nw not in GIVEN_STOP_CHARS and boundary:
        return Step([_cand(tok.start, toks[i + 1].end, ExtractorName.noun_chunk, CONF_PROPER, "compound")], i + 2)
    return None


def role_rule(t: ZhTurn, i: int) -> Step | None:
    """主演|中谷美纪, 原唱|梁静茹: the role word is not part of the name and not a concept."""
    return Step([], i + 1) if t.toks[i].word in ROLE_ZH else None


def _unk_head(toks: list[Tok], i: int) -> bool:
    """An out-of-dictionary word that heads a name: 3+ characters, or glued to a specific noun."""
    tok = toks[i]
    if tok.tag != "unk" or UNK_STOP_CHARS.intersection(tok.word):
        return False
    if len(tok.word) >= 3:
        return True
    if not (i + 1 < len(toks) and tok.ws == ""):
        return False
    nxt = toks[i + 1]
    return nxt.tag in RUN_TAGS and len(nxt.word) >= 2 and nxt.word not in GENERIC_ZH and nxt.word not in ROLE_ZH


def _continues_run(tok: Tok) -> bool:
    """A piece that may continue a noun run: a noun-like or out-of-dictionary piece, not generic."""
    if tok.word in GENERIC_ZH or tok.word in ROLE_ZH:
        return False
    return tok.tag in RUN_TAGS or tok.tag == "unk" and not UNK_STOP_CHARS.intersection(tok.word)


def _title_of_form_x_zhi_y(toks: list[Tok], k: int) -> bool:
    """爱乐|之|城: 之 at k between a name piece (proper or out of dictionary) and a one-character noun."""
    if k + 1 >= len(toks) or toks[k - 1].ws != "" or toks[k].ws != "":
        return False
    before, after = toks[k - 1], toks[k + 1]
    if len(after.word) != 1 or after.word in ZHI_PHRASE_HEADS or after.word in ROLE_ZH:
        return False  # 开山鼻祖之地位, 奇特之处, 领军之人: a phrase, not a title
    return (before.tag in PROPER_TAGS or before.tag == "unk") and after.tag in RUN_TAGS


def noun_run_end(toks: list[Tok], i: int) -> int:
    """End (exclusive) of the run of nouns starting at i; a place or organisation suffix closes it
    even when generic alone (八达岭野生动物|世界)."""
    n = len(toks)
    k = i + 1
    while k < n and k - i < _MAX_RUN and toks[k - 1].ws == "":
        kw = toks[k].word
        if kw in NAME_SUFFIX:
            # 北京|园|博园: a one-character suffix glued to the next noun is a cut error.
            nxt = toks[k + 1] if k + 1 < n else None
            if len(kw) == 1 and nxt is not None and toks[k].ws == "" and cjk_word(nxt.word) and nxt.tag.startswith("n"):
                return k
            return k + 1
        if kw == "之" and _title_of_form_x_zhi_y(toks, k) and k + 1 - i < _MAX_RUN:
            k += 2  # 爱乐|之|城: a title of the form X之Y is one name, not X
            continue
        if not _continues_run(toks[k]):
            return k
        if k + 1 < n and toks[k + 1].word in NAME_DOTS:
            return k  # the next token starts a dotted name: leave it to the name rule
        k += 1
    return k


def _descriptive(toks: list[Tok], i: int, k: int) -> bool:
    """Everyday dictionary nouns in a row (电影|短片, 音乐|录影带) describe, they do not name: a name
    has a proper or unknown piece (观复|博物馆, 北京|汽车|博物馆) or a name ending."""
    if toks[k - 1].word in NAME_SUFFIX:
        return False
    return all(toks[x].tag == "n" and zipf(toks[x].word, "zh") >= COMMON_NOUN_ZIPF_ZH_RUN for x in range(i, k))


def _single_noun(tok: Tok) -> list[Candidate]:
    """One noun piece of 2+ characters; an everyday dictionary noun (观众, 阵容, 礼堂) is no name."""
    conf = CONF_PROPER if tok.tag in PROPER_TAGS or tok.tag == "unk" else CONF_COMMON_NOUN_ZH
    if conf == CONF_COMMON_NOUN_ZH and zipf(tok.word, "zh") >= COMMON_NOUN_ZIPF_ZH:
        return []
    if len(tok.word) < 2:
        return []
    return [_cand(tok.start, tok.end, ExtractorName.noun_chunk, conf, tok.tag)]


def noun_rule(t: ZhTurn, i: int) -> Step | None:
    """A run of nouns is one compound name (北京|汽车|博物馆, 红砖|美术馆); a lone noun is a candidate."""
    toks = t.toks
    if not (toks[i].tag in RUN_TAGS or _unk_head(toks, i)):
        return None
    k = noun_run_end(toks, i)
    if k - i > 1:
        found = (
            []
            if _descriptive(toks, i, k)
            else [_cand(toks[i].start, toks[k - 1].end, ExtractorName.noun_chunk, CONF_PROPER, "compound")]
        )
        return Step(found, k)
    return Step(_single_noun(toks[i]), i + 1)


TOKEN_RULES: tuple[Callable[[ZhTurn, int], Step | None], ...] = (
    person_rule,
    latin_rule,
    framed_dotted_rule,
    dotted_name_rule,
    unk_pair_rule,
    role_rule,
    term_rule,
    noun_rule,
)


def _walk(t: ZhTurn) -> list[Candidate]:
    out: list[Candidate] = []
    i, n = 0, len(t.toks)
    while i < n:
        out += cue_rule(t, i)
        step = next((s for s in (rule(t, i) for rule in TOKEN_RULES) if s is not None), None)
        if step is None:
            i += 1
        else:
            out += step.found
            i = step.next
    return out


def _drop_cuts_across_frames(t: ZhTurn, cands: list[Candidate]) -> list[Candidate]:
    """A frame fixes both ends of its name: segmenter-based candidates that overlap one and reach
    past it (过程|小东 against 听说过|程小东) are cut errors."""
    by_start = sorted(t.framed)
    starts = [fs for fs, _ in by_start]
    longest = max((fe - fs for fs, fe in t.framed), default=0)

    def reaches_past_a_frame(c: Candidate) -> bool:
        # Framed spans that overlap c start before c.end and no earlier than c.start - longest.
        k = bisect_left(starts, c.end)
        while k > 0 and by_start[k - 1][0] >= c.start - longest:
            k -= 1
            fs, fe = by_start[k]
            if c.start < fe and fs < c.end and not (fs <= c.start and c.end <= fe):
                return True
        return False

    return [c for c in cands if c.label == "frame" or not reaches_past_a_frame(c)]


def _drop_pieces_of_batch_names(t: ZhTurn, cands: list[Candidate]) -> list[Candidate]:
    """A single common-noun piece that ends a title the conversation names elsewhere is that title
    cut short or its common word (原始人 of 疯狂原始人, 蜘蛛侠 of 超凡蜘蛛侠), not a name of its own.
    Dotted foreign names are left alone: 凯奇 is how people call 尼古拉斯·凯奇."""
    if t.lexicon is None or not t.lexicon.names:
        return cands
    names, title_ends = t.lexicon.names, t.lexicon.title_ends

    def piece_of_title(c: Candidate) -> bool:
        if c.label != "n":  # a common-noun piece: proper names (美国, 张惠妹) stand on their own
            return False
        x = t.text[c.start : c.end]
        return x not in names and x in title_ends  # a longer dot-less name ends with x

    return [c for c in cands if not piece_of_title(c)]


# Tags of a piece that, glued before a name ending in 奖, makes the name a cut of a longer award
# (最佳|导演奖, 特殊|贡献奖, 新进|演员奖): modifiers and common words, not names or boundaries (届, 的).
_AWARD_MODIFIER_TAGS = frozenset({"a", "ad", "an", "b", "z"})
_AWARD_END = "奖"
# Labels of candidates read off jieba's pieces (the noun rule labels single pieces by their tag).
_SEGMENTER_LABELS = frozenset(RUN_TAGS | {"unk", "compound", "suffix"})


def _drop_cut_awards(t: ZhTurn, cands: list[Candidate]) -> list[Candidate]:
    """An award name read off jieba's pieces with a modifier glued before it is the tail of a longer
    award (第12届奥斯卡金像奖最佳|导演奖): the tail alone (导演奖, 贡献奖) names a category, no award."""
    before = {tok.end: tok for tok in t.toks}

    def cut(c: Candidate) -> bool:
        if c.label not in _SEGMENTER_LABELS or not t.text[c.start : c.end].endswith(_AWARD_END):
            return False
        prev = before.get(c.start)
        return prev is not None and prev.ws == "" and cjk_word(prev.word) and prev.tag in _AWARD_MODIFIER_TAGS

    return [c for c in cands if not cut(c)]


def chinese_candidates(doc: Doc, tags: dict[str, str], lexicon: ZhLexicon | None = None) -> list[Candidate]:
    t = ZhTurn.read(doc, tags, lexicon)
    out = [c for rule in SPAN_RULES for c in rule(t)]
    out += _walk(t)
    out = _drop_cut_awards(t, _drop_pieces_of_batch_names(t, _drop_cuts_across_frames(t, out)))
    out = drop_pieces_of_quotations(t.text, out)  # a quoted sentence's words (zh/quotations.py)
    # Award and school names cut at one end, completed from the text (zh/name_ends.py).
    out = complete_award_and_school_names(t.text, t.toks, out, _SEGMENTER_LABELS)
    return drop_biography_details(t.text, out)  # 毕业于|北京电影学院, 生于|…: a person's record (zh/biography.py)
