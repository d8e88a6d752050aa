"""Award and school names the segmenter cut at one end, completed from the pieces around them.

jieba splits a long award or school name into dictionary pieces, and the noun-run rule starts or
stops a candidate at a place name or a modifier inside it, so the block shows a piece of the name
(电影学院奖, 政治大学, 美国电影协会亚洲). The name is in the text: the candidate is widened to it. The
words of both readings live in ``graphmem/data/zh_names.yaml``.

* ``complete_backs``: a candidate of two or more pieces followed, glued, by a short run of nominal
  pieces that ends in 奖 is the front of that award's name (美国电影协会亚洲|杰出演员奖, 韩国青龙|电影奖,
  戛纳电影节金棕榈|大奖): it takes the run in. A front that ends in the head of an award giver
  (电影节, 协会, 盛典, 大学, 奖) is a name of its own and stays as it is (威尼斯国际电影节|最佳导演奖:
  the festival, then one of its categories).
* ``complete_fronts``: a candidate of two or more pieces ending like an award or a school (奖, 大学,
  学院) with a place name (ns) or a distinguishing attribute (b: 国立, 私立) glued before it is that
  name cut at its front (英国|电影学院奖, 国立|政治大学, 中国|歌曲排行榜…大奖): it takes the front in; so
  does a run that starts with a Latin word hyphened to another one (CCTV-|MTV音乐盛典音乐特殊贡献奖).

Pieces inside a widened name are no candidates of their own there (英国, 亚洲, CCTV). Both
readings apply to candidates read off jieba's pieces only (titles in 《》, quotes and frames fix
their own ends).
"""

from __future__ import annotations

from dataclasses import replace

from graphmem.extraction.candidates import Candidate
from graphmem.extraction.zh.tokens import Tok, cjk_word
from graphmem.wordlists import yaml_data

_DATA = yaml_data("zh_names.yaml")
FRONT_TAKING_ENDS: tuple[str, ...] = tuple(_DATA["front_taking_ends"])
AWARD_GIVER_HEADS: tuple[str, ...] = tuple(_DATA["award_giver_heads"])
FRONT_TAGS = frozenset({"ns", "b"})  # a place name, a distinguishing attribute (国立, 私立)
# Pieces that may stand between a cut front and 奖: nouns, names, modifiers (最佳, 杰出, 优秀, 最).
AWARD_RUN_TAGS = frozenset({"n", "nz", "nr", "nrt", "nrfg", "ns", "nt", "a", "an", "b", "z", "d", "vn", "l", "j"})
MAX_AWARD_RUN = 4  # pieces after the front up to and including the one ending in 奖
AWARD_END = "奖"
HYPHENS = frozenset({"-", "‐", "–"})


def _pieces(toks: list[Tok], c: Candidate) -> int:
    return sum(1 for t in toks if c.start <= t.start and t.end <= c.end)


def _glued_before(toks: list[Tok], start: int) -> Tok | None:
    prev = next((t for t in reversed(toks) if t.end <= start), None)
    return prev if prev is not None and prev.end == start and prev.ws == "" else None


def _award_end_after(toks: list[Tok], end: int) -> int | None:
    """Where a glued run of at most MAX_AWARD_RUN nominal pieces starting at ``end`` ends in 奖."""
    pos = end
    for tok in [t for t in toks if t.start >= end][:MAX_AWARD_RUN]:
        if tok.start != pos or not cjk_word(tok.word) or tok.tag not in AWARD_RUN_TAGS:
            return None
        if tok.word.endswith(AWARD_END):
            return tok.end
        if tok.ws:
            return None
        pos = tok.end
    return None


def complete_backs(text: str, toks: list[Tok], cands: list[Candidate], labels: frozenset[str]) -> list[Candidate]:
    """Widen multi-piece fronts of award names over the run that ends in 奖."""
    out = []
    for c in cands:
        if c.label in labels and _pieces(toks, c) >= 2 and not text[c.start : c.end].endswith(AWARD_GIVER_HEADS):
            last = next((t for t in toks if t.end == c.end), None)
            end = _award_end_after(toks, c.end) if last is not None and last.ws == "" else None
            if end is not None:
                c = replace(c, end=end)
        out.append(c)
    return out


def _hyphen_front(toks: list[Tok], start: int) -> int | None:
    """Where a Latin word joined by a hyphen right before ``start`` begins (CCTV-|MTV…)."""
    hyphen = _glued_before(toks, start)
    if hyphen is None or hyphen.word not in HYPHENS:
        return None
    word = _glued_before(toks, hyphen.start)
    return word.start if word is not None and word.tag == "eng" else None


def complete_fronts(text: str, toks: list[Tok], cands: list[Candidate], labels: frozenset[str]) -> list[Candidate]:
    """Widen award and school names cut at their front over the glued place or attribute, and a
    run that starts with a Latin word over the Latin word hyphened to it (CCTV-|MTV音乐盛典…奖)."""
    out = []
    for c in cands:
        if c.label in labels and _pieces(toks, c) >= 2:
            surface = text[c.start : c.end]
            prev = _glued_before(toks, c.start)
            if (
                surface.endswith(FRONT_TAKING_ENDS)
                and prev is not None
                and prev.tag in FRONT_TAGS
                and cjk_word(prev.word)
            ):
                c = replace(c, start=prev.start)
            elif (
                surface[:1].isascii()
                and surface[:1].isalpha()
                and (hyphened := _hyphen_front(toks, c.start)) is not None
            ):
                c = replace(c, start=hyphened)
        out.append(c)
    return out


def complete_award_and_school_names(
    text: str, toks: list[Tok], cands: list[Candidate], labels: frozenset[str]
) -> list[Candidate]:
    """Both readings, then the jieba-read pieces inside a widened name dropped."""
    widened = complete_fronts(text, toks, complete_backs(text, toks, cands, labels), labels)
    grown = [w for w, c in zip(widened, cands, strict=True) if (w.start, w.end) != (c.start, c.end)]

    def inside_grown(c: Candidate) -> bool:
        # Any piece a name grew over (英国, the hyphened CCTV) is part of it here.
        return any(g.start <= c.start and c.end <= g.end and g != c for g in grown)

    return [c for c in widened if not inside_grown(c)]
