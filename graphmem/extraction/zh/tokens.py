"""Chinese tokens as the name rules read them, and the word lists those rules use.

A turn is read as jieba's pieces (spaCy's jieba segmenter) each with jieba's dictionary part of
speech: `Tok`. The hand-kept character and word lists live in ``graphmem/data/zh_names.yaml``.
"""

from __future__ import annotations

from typing import NamedTuple

from spacy.tokens import Doc

from graphmem.extraction.candidates import LATIN
from graphmem.extraction.normalize import is_cjk
from graphmem.wordlists import yaml_data


class Tok(NamedTuple):
    start: int
    end: int
    word: str
    tag: str  # jieba's dictionary tag, or "eng" (Latin word), "unk" (out of dictionary), "x"
    ws: str  # trailing whitespace


_DATA = yaml_data("zh_names.yaml")

UNK_STOP_CHARS = frozenset(_DATA["unk_stop_chars"])  # an out-of-dictionary word holding one is a verb phrase
NOT_NAME_CHARS = frozenset(_DATA["not_name_chars"])  # never the first character of a name
SURNAMES = frozenset(_DATA["surnames"])
GIVEN_STOP_CHARS = frozenset(_DATA["given_stop_chars"])  # never part of a given name
CLASSIFIER_LEFT = frozenset(_DATA["classifier_left_chars"])  # 这张, 一位: a classifier, not a surname
EXTEND_STOP_CHARS = frozenset(_DATA["extend_stop_chars"])  # never inside a place name
RIGHT_CUES: tuple[str, ...] = tuple(_DATA["right_cues"])  # str.startswith takes a tuple
LEAD_STOP = frozenset(_DATA["lead_stop"])  # never the first word of a name
NAME_SUFFIX = frozenset(_DATA["name_suffix"])
# Endings for the leftward longest match of place names: the suffixes plus endings jieba leaves alone.
PLACE_ENDINGS = NAME_SUFFIX | frozenset(_DATA["place_endings"])
ENDING_LENGTHS = sorted({len(x) for x in PLACE_ENDINGS}, reverse=True)  # longest ending first
NAME_DOTS = frozenset({"·", "•", "・", "‧"})
ZHI_PHRASE_HEADS = frozenset(_DATA["zhi_phrase_heads"])  # 之处, 之际: X之Y is a phrase, not a title

# jieba dictionary tags kept as concept heads (nouns, names, places, organisations, other proper
# nouns, Latin words). "vn" (verbal nouns: 管理, 学习) only inside compounds.
HEAD_TAGS = frozenset({"n", "nr", "nrfg", "nrt", "ns", "nt", "nz", "eng"})
PROPER_TAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz", "eng"})
COMPOUND_TAGS = HEAD_TAGS | {"vn"}
RUN_TAGS = frozenset({"n", "nr", "nrfg", "nrt", "ns", "nt", "nz"})
PERSON_TAGS = frozenset({"nr", "nrfg", "nrt", "ng", "g"})  # one of them makes single characters a name
GIVEN_TAGS = frozenset({"nr", "nrfg", "nrt", "ng", "g", "n", "a", "ag", "v", "vg", "x", "unk", "tg", "zg", "b", "s"})
# Tags that stop a leftward walk: pronouns, prepositions, conjunctions, particles, interjections ...
CUE_STOP_TAGS = frozenset({"r", "p", "c", "uj", "ul", "uz", "ug", "uv", "ud", "y", "d", "m", "q", "e", "zg", "x"})
EXTEND_STOP_TAGS = frozenset({"r", "p", "c", "uj", "ul", "uz", "ug", "uv", "ud", "y", "e", "o"})
# Tags of a left piece that may fuse with the noun after it when the pair recurs (超凡|蜘蛛侠, 荒蛮|故事).
MERGE_LEFT_TAGS = frozenset({"v", "a", "ag", "an", "ng", "nr", "nz", "n", "ns", "vn", "unk", "b", "l", "i", "j"})


def zh_tag(word: str, tags: dict[str, str]) -> str:
    tag = tags.get(word)
    if tag is not None:
        return tag
    if LATIN.search(word) and word.replace("+", "").replace("#", "").replace(".", "").isalnum() and word.isascii():
        return "eng"
    if len(word) >= 2 and all(is_cjk(c) for c in word):
        return "unk"  # out-of-dictionary word found by jieba's HMM: often a name
    return "x"


def zh_tokens(doc: Doc, tags: dict[str, str]) -> list[Tok]:
    return [Tok(t.idx, t.idx + len(t.text), t.text, zh_tag(t.text, tags), t.whitespace_) for t in doc]


def cjk_word(word: str) -> bool:
    return bool(word) and all(is_cjk(c) for c in word)
