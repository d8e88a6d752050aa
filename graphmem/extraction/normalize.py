"""Text normalisation shared by every extraction step, and `concept_key`.

One rule set, used for catalog patterns, for the text they are matched
against and for concept keys, so a catalog name, an alias typed in full-width
characters and a plural in a chat turn all land on the same string.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Characters treated as a word gap: "scikit-learn" == "scikit learn" == "scikit_learn".
_GAP_CHARS = frozenset("-_\u2010\u2011\u2012\u2013\u2014\u00b7\u30fb")
# Punctuation trimmed from the ends of a key (never from the inside: C++, C#, CI/CD keep theirs).
_TRIM = " \t\n\"'`.,;:!?()[]{}<>«»“”‘’「」『』《》【】〈〉（）！？。，、；：…~*"
_LATIN_WORD = re.compile(r"[a-z\u00df-\u024f]+")
_HAS_LATIN = re.compile(r"[a-z]")

# Irregular plurals and words that merely end in "s": both matter because the
# singular form is a key, and keys must not mangle names ("pandas", "kubernetes").
_IRREGULAR = {
    "matrices": "matrix",
    "vertices": "vertex",
    "indices": "index",
    "appendices": "appendix",
    "analyses": "analysis",
    "hypotheses": "hypothesis",
    "theses": "thesis",
    "axes": "axis",
    "parentheses": "parenthesis",
    "diagnoses": "diagnosis",
    "syntheses": "synthesis",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "radii": "radius",
    "foci": "focus",
    "nuclei": "nucleus",
    "formulae": "formula",
    "children": "child",
    "people": "person",
    "men": "man",
    "women": "woman",
    "mice": "mouse",
    "geese": "goose",
    "feet": "foot",
    "teeth": "tooth",
    "leaves": "leaf",
    "halves": "half",
    "knives": "knife",
    "lives": "life",
    "wolves": "wolf",
    "shelves": "shelf",
    "selves": "self",
    "quizzes": "quiz",
    "bases": "basis",
}
_KEEP = frozenset(
    """
    pandas kubernetes jenkins redis postgres windows rails keras numpy scipy sympy mathematics
    physics statistics economics analytics linguistics genetics electronics robotics graphics
    semantics dynamics thermodynamics mechanics ethics logistics kinetics optics acoustics
    news series species bayes gauss class glass gas bus plus minus lens chaos kudos ethos
    macos ios atlas canvas alias bias corpus status virus focus campus bonus census radius
    axis basis analysis thesis hypothesis synthesis diagnosis emphasis parenthesis nexus
    express less process access success address always perhaps this his its has was is us yes
    tennis christmas texas paris athens lexis pythagoras euclides archimedes descartes
    """.split()
)
# Words whose singular ends in "ie": "movies" -> "movie", not "movy".
_IE_WORDS = frozenset(
    "movie cookie zombie rookie calorie genie selfie hippie prairie freebie goalie brownie "
    "newbie techie smoothie pixie sortie lassie auntie".split()
)
# Words whose singular ends in "e" before -ches/-shes/-xes: "caches" -> "cache".
_E_WORDS = frozenset("cache niche ache headache moustache avalanche cliche creche axe".split())


@lru_cache(maxsize=65536)
def singularize(word: str) -> str:
    """Rule-based singular of one lower-case Latin word. Deterministic, no model needed."""
    if len(word) <= 3 or not word.endswith(("s", "i", "a", "n", "e", "t", "h")):
        return word
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word in _KEEP or not word.endswith("s"):
        return word
    if word.endswith(("ss", "us", "is", "ics")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-1] if word[:-1] in _IE_WORDS else word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-1] if word[:-1] in _E_WORDS else word[:-2]
    return word[:-1]


@lru_cache(maxsize=8192)
def _norm_char(ch: str) -> str:
    if ch in _GAP_CHARS or ch.isspace():
        return " "
    out = unicodedata.normalize("NFKC", ch).casefold()
    return " " if out in _GAP_CHARS or out.isspace() else out


# Each ASCII character's _norm_char (one character each: tests/test_normalize_ascii.py).
_ASCII_NORMAL = {i: _norm_char(chr(i)) for i in range(128)}


def sanitize(text: str) -> str:
    """Same-length copy of `text` with control characters, lone surrogates and unassigned code
    points (noncharacters such as U+FFFF, which XML cannot carry) made spaces.

    Keeping the length means every span computed on the copy is a valid span of
    the caller's original text.
    """
    if text.isprintable() and text.isascii():
        return text
    out = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
            continue
        cat = unicodedata.category(ch)
        out.append(" " if cat in ("Cc", "Cs", "Cf", "Cn") and ch not in "\u200d" else ch)
    return "".join(out)


# A web address or an e-mail address: its pieces (https, www, edu, a user name) are never concepts.
# ASCII only, so a Chinese sentence running on after an address is not swallowed; trailing
# sentence punctuation is left to the sentence.
_LINK = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:https?|ftp)://|www\.)[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+"
    r"|(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+"
)
_LINK_TAIL = ".,;:!?)'"


def blank_links(text: str) -> str:
    """Same-length copy of `text` with web and e-mail addresses made spaces (spans stay valid)."""
    if "@" not in text and "://" not in text and "www." not in text.lower():
        return text
    out = list(text)
    for m in _LINK.finditer(text):
        end = m.end()
        while end > m.start() and text[end - 1] in _LINK_TAIL:
            end -= 1
        out[m.start() : end] = " " * (end - m.start())
    return "".join(out)


def normalize_with_map(text: str, singular: str = "all") -> tuple[str, list[int], list[int]]:
    """Normalise `text` and keep, for each output char, the original [start, end) it came from.

    NFKC (full/half width), casefold, word gaps and whitespace collapsed to one
    space, Latin words singularised (`singular`: "all" words, the "last" one, or
    "none"). A match norm[i:j] maps back to the
    original span (starts[i], ends[j-1]).
    """
    norm, starts, ends = _normal_chars(text)
    if singular == "none" or not _HAS_LATIN.search(norm):
        return norm, starts, ends
    words = list(_LATIN_WORD.finditer(norm))
    if singular == "last":
        words = words[-1:]
    # Singularise word by word; replacement chars inherit the word's original range.
    out_c: list[str] = []
    out_s: list[int] = []
    out_e: list[int] = []
    pos = 0
    for m in words:
        a, b = m.span()
        if a > pos:
            out_c.extend(norm[pos:a])
            out_s.extend(starts[pos:a])
            out_e.extend(ends[pos:a])
        word = m.group()
        sing = singularize(word)
        if sing == word:
            out_c.extend(word)
            out_s.extend(starts[a:b])
            out_e.extend(ends[a:b])
        else:
            for k, c in enumerate(sing):
                src = a + min(k, len(word) - 1)
                out_c.append(c)
                out_s.append(starts[src])
                out_e.append(ends[src])
            out_e[-1] = ends[b - 1]
        pos = b
    if pos < len(norm):
        out_c.extend(norm[pos:])
        out_s.extend(starts[pos:])
        out_e.extend(ends[pos:])
    return "".join(out_c), out_s, out_e


def _normal_chars(text: str) -> tuple[str, list[int], list[int]]:
    """NFKC, casefold, gaps and whitespace runs made one space, no space at the ends; with each output
    char's original [start, end)."""
    return _ascii_normal_chars(text) if text.isascii() else _any_normal_chars(text)


def _ascii_normal_chars(text: str) -> tuple[str, list[int], list[int]]:
    """_any_normal_chars for ASCII text, faster: each character normalises to one (a table), and a
    space is kept when the character before it is no space."""
    t = text.translate(_ASCII_NORMAL)
    keep = [i for i, c in enumerate(t) if c != " " or (i > 0 and t[i - 1] != " ")]
    if keep and t[keep[-1]] == " ":
        keep.pop()
    return "".join([t[i] for i in keep]), keep, [i + 1 for i in keep]


def _any_normal_chars(text: str) -> tuple[str, list[int], list[int]]:
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    prev_space = True
    for i, ch in enumerate(text):
        n = _norm_char(ch) if not ("a" <= ch <= "z") else ch
        if n == " ":
            if prev_space:
                continue
            prev_space = True
        else:
            prev_space = False
        for c in n:
            chars.append(c)
            starts.append(i)
            ends.append(i + 1)
    while chars and chars[-1] == " ":
        chars.pop(), starts.pop(), ends.pop()
    return "".join(chars), starts, ends


def normalize(text: str) -> str:
    """The normalised form used for matching (see normalize_with_map)."""
    return normalize_with_map(text)[0]


@lru_cache(maxsize=65536)
def concept_key(text: str) -> str:
    """The one canonical key of a concept name: NFKC, casefold, gaps and whitespace
    collapsed, end punctuation trimmed, the last English word singularised.

    Pure and deterministic; the store uses it for catalog concepts and `forget X`.
    """
    cleaned = "".join(" " if unicodedata.category(ch) in ("Cc", "Cs", "Cf") else ch for ch in text)
    # Trim first so that the "last word" is a word, not trailing punctuation.
    trimmed = normalize_with_map(cleaned, singular="none")[0].strip(_TRIM)
    return normalize_with_map(trimmed, singular="last")[0]


def is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (
        0x4E00 <= o <= 0x9FFF
        or 0x3400 <= o <= 0x4DBF
        or 0x20000 <= o <= 0x2A6DF
        or 0xF900 <= o <= 0xFAFF
        or 0x3040 <= o <= 0x30FF  # kana: treated like CJK for segmentation purposes
    )
