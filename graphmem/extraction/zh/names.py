"""Where a Chinese name starts and ends over jieba's pieces: personal names, names a cue points
back to, place names by their ending, and names framed by the sentence (zh.frames).

Each function reads a token list (`zh.tokens.Tok`) and returns indices or spans; zh.candidates
turns them into candidates and zh.lexicon collects them over a conversation.
"""

from __future__ import annotations

from graphmem.extraction.candidates import GENERIC_ZH, ROLE_ZH
from graphmem.extraction.lexical import zipf
from graphmem.extraction.normalize import is_cjk
from graphmem.extraction.zh.frames import dotted_names, frame_names, topic_objects
from graphmem.extraction.zh.tokens import (
    CLASSIFIER_LEFT,
    CUE_STOP_TAGS,
    ENDING_LENGTHS,
    EXTEND_STOP_CHARS,
    EXTEND_STOP_TAGS,
    GIVEN_STOP_CHARS,
    GIVEN_TAGS,
    LEAD_STOP,
    NAME_DOTS,
    NOT_NAME_CHARS,
    PERSON_TAGS,
    PLACE_ENDINGS,
    RIGHT_CUES,
    RUN_TAGS,
    SURNAMES,
    Tok,
    cjk_word,
)

# A verb this common (wordfreq Zipf) ends the leftward walk of a place name: 去过, 参观.
_COMMON_VERB_ZIPF = 4.0


def name_like(tok: Tok) -> bool:
    """A piece of a transliterated name: Chinese characters, noun-tagged or unknown, not generic."""
    word, tag = tok.word, tok.tag
    if not word or not all(is_cjk(c) for c in word) or word[0] in NOT_NAME_CHARS:
        return False
    if len(word) == 1 and word in GIVEN_STOP_CHARS or word in ROLE_ZH or word in GENERIC_ZH:
        return False
    return tag in ("unk", "x") or tag.startswith("n") or len(word) == 1


def _given_char(tok: Tok) -> bool:
    """One Chinese character that may be part of a given name."""
    return len(tok.word) == 1 and is_cjk(tok.word) and tok.word not in GIVEN_STOP_CHARS and tok.tag in GIVEN_TAGS


def _after_classifier(toks: list[Tok], i: int) -> bool:
    """这张图, 一位, 三张: the surname character at i is a classifier or part of the word before."""
    if i == 0 or toks[i - 1].ws != "":
        return False
    prev = toks[i - 1]
    return prev.tag in ("r", "m", "q") or prev.word[-1:] in CLASSIFIER_LEFT


def _person_from_unk_pair(toks: list[Tok], i: int) -> int:
    """彭坦 (one out-of-dictionary pair), 林宥|嘉 and 田馥|甄 (a pair plus one given character)."""
    n = len(toks)
    if toks[i].word[1] in GIVEN_STOP_CHARS:
        return i
    k = i + 1
    if k < n and (toks[k].word in NAME_DOTS or toks[i].ws == "" and toks[k].tag in RUN_TAGS and len(toks[k].word) >= 2):
        return i  # 马特·达蒙: the dotted-name rule takes it; 宋庄|艺术区: a place, the noun run takes it
    boundary_after = k + 1 >= n or (
        len(toks[k + 1].word) != 1 or not cjk_word(toks[k + 1].word) or toks[k + 1].word in GIVEN_STOP_CHARS
    )
    if k < n and toks[i].ws == "" and _given_char(toks[k]) and boundary_after:
        return k + 1
    return i + 1


def _person_from_singles(toks: list[Tok], i: int) -> int:
    """齐|秦: a surname character plus one or two single given-name characters, one of them
    tagged as a name, then a word boundary (not another single character, not a name dot)."""
    n = len(toks)
    k = i + 1
    while k < n and k - i <= 2 and toks[k - 1].ws == "" and _given_char(toks[k]):
        k += 1
    if k == i + 1:
        return i
    nxt = toks[k] if k < n else None
    if nxt is not None and len(nxt.word) == 1 and is_cjk(nxt.word) and nxt.word not in GIVEN_STOP_CHARS:
        if toks[k - 1].ws == "":
            return i  # a longer run of single characters: not a name we can delimit
    if not any(toks[j].tag in PERSON_TAGS for j in range(i + 1, k)):
        return i
    if nxt is not None and nxt.word in NAME_DOTS:
        return i
    return k


def person_name(toks: list[Tok], i: int) -> int:
    """End index (exclusive) of a 2–3 character personal name starting at token i, or i.

    jieba's dictionary splits names it does not know: 齐|秦, 林|宥|嘉, 彭坦 (out of
    dictionary), 田馥|甄. A name is a common surname character followed by one or
    two given-name characters, as one out-of-dictionary word or as single-character
    tokens, and then a word boundary (not another single character).
    """
    tok = toks[i]
    if not tok.word or tok.word[0] not in SURNAMES or _after_classifier(toks, i):
        return i
    if len(tok.word) == 2 and tok.tag == "unk":
        return _person_from_unk_pair(toks, i)
    if len(tok.word) == 1:
        return _person_from_singles(toks, i)
    return i


def _cue_stops(tok: Tok) -> bool:
    """A piece that cannot be part of the name before a cue."""
    w = tok.word
    return bool(tok.ws) or not cjk_word(w) or w in LEAD_STOP or tok.tag in CUE_STOP_TAGS or w[0] in NOT_NAME_CHARS


def cue_name(toks: list[Tok], text: str, i: int) -> int:
    """Start index of a name ending right before token i when token i opens a cue
    such as 这部电影 / 这首歌 / 是一部 (the name is what the cue points back to), else i."""
    if not text[toks[i].start : toks[i].start + 5].startswith(RIGHT_CUES):
        return i
    j = i
    chars = 0
    while j > 0 and i - j < 4:
        prev = toks[j - 1]
        if _cue_stops(prev) or chars + len(prev.word) > 10:
            break
        chars += len(prev.word)
        j -= 1
    if j < i and chars >= 2 and not (i - j == 1 and toks[j].word in GENERIC_ZH):
        return j
    return i


def _place_ending_start(text: str, toks: list[Tok], k: int, starts: dict[int, int]) -> int | None:
    """Index of the token where a known place ending that closes token k starts, or None."""
    end = toks[k].end
    ending = next((text[end - m : end] for m in ENDING_LENGTHS if text[end - m : end] in PLACE_ENDINGS), None)
    return starts.get(end - len(ending)) if ending else None


def _extends_place(tok: Tok) -> bool:
    """A piece that may stand before a place ending inside the name."""
    w, tag = tok.word, tok.tag
    if tok.ws or not (cjk_word(w) or w.isascii() and w.isalnum()) or tag in EXTEND_STOP_TAGS:
        return False
    if w in LEAD_STOP or w in GENERIC_ZH or w in ROLE_ZH or EXTEND_STOP_CHARS.intersection(w):
        return False
    return not (tag.startswith("v") and zipf(w, "zh") >= _COMMON_VERB_ZIPF)


def _glued_to_noun(toks: list[Tok], k: int) -> bool:
    """Token k runs on into a specific noun: the name goes on and the noun-run rule takes it."""
    if k + 1 >= len(toks) or toks[k].ws != "":
        return False
    nxt = toks[k + 1]
    return nxt.tag in RUN_TAGS and cjk_word(nxt.word) and nxt.word not in GENERIC_ZH


def suffix_names(text: str, toks: list[Tok]) -> list[tuple[int, int]]:
    """Place and institution names found by their ending and a leftward longest match.

    jieba cuts names it does not know into pieces (上|上|国际|美术馆, 桃源|仙谷|自然|风景区,
    云佛山|大|溶洞), and the noun-run rule stops at the first piece that is not a noun. Here a
    known ending (美术馆, 风景区, 溶洞, 园) takes every piece before it, up to 10 characters, until a
    particle, pronoun, preposition, punctuation, a common verb (wordfreq, 去过 参观) or a generic
    word: "你去过上上国际美术馆吗" gives 上上国际美术馆.
    """
    out: list[tuple[int, int]] = []
    starts = {t.start: k for k, t in enumerate(toks)}
    for k, tok in enumerate(toks):
        if not cjk_word(tok.word):
            continue
        i = _place_ending_start(text, toks, k, starts)
        if i is None:
            continue
        j, chars = i, 0
        while j > 0 and _extends_place(toks[j - 1]) and chars + len(toks[j - 1].word) <= 10:
            chars += len(toks[j - 1].word)
            j -= 1
        if j < i and chars >= 2 and not _glued_to_noun(toks, k):
            out.append((toks[j].start, tok.end))
    return out


def framed(text: str, toks: list[Tok]) -> list[tuple[int, int]]:
    """Names delimited by their sentence frame or by transliteration characters (zh.frames)."""
    tagged = [(t.start, t.end, t.word, t.tag) for t in toks]
    spans = list(dotted_names(text, tagged))
    spans += frame_names(text, tagged, GENERIC_ZH | ROLE_ZH)
    spans += [sp for sp in topic_objects(text, tagged, GENERIC_ZH | ROLE_ZH) if sp not in spans]
    return spans
