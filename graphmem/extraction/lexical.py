"""Word-level judgements shared by extraction and block selection (see graphmem/specificity.py).

``fragment_reason``: not a word or a name (a 1–2 letter token, code or maths, unbalanced quotes or
brackets, a typo-shaped or unknown lower-case word). ``meta_reason``: a dialogue-act or meta word
from ``graphmem/data/meta_words.txt``. ``zipf``: wordfreq's frequency of a word in English or Chinese.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from spacy.lang.en.stop_words import STOP_WORDS
from wordfreq import zipf_frequency

from graphmem.extraction.normalize import concept_key, singularize
from graphmem.wordlists import entries, words


@lru_cache(maxsize=1)
def meta_keys() -> frozenset[str]:
    return frozenset(concept_key(w) for w in entries("meta_words.txt"))


def generic_en() -> frozenset[str]:
    return words("generic_en.txt")


def filler_en() -> frozenset[str]:
    return words("leading_filler_en.txt")


@lru_cache(maxsize=65536)
def zipf(word: str, lang: str = "en") -> float:
    """wordfreq's Zipf frequency (log10 of uses per billion words; "the" is 7.7); 0 for unknown words."""
    return zipf_frequency(word, lang)


LATIN_WORD = re.compile(r"^[a-z][a-z']*$")
_OPERATOR = re.compile(r"[=^<>*]|\+(?=[\w(])|[\w)]\((?=\w)|\)\(|\w;\w")
# Laughter and chat noise spelled many ways ("hahaha", "hehe", "lolol", "lmaooo", "omg", "ugh"), and
# vowels drawn out before an h ("ooh", "oooh", "ahh", "uhh": wordfreq knows them, so they pass as words).
_INTERJECTION = re.compile(
    r"^(?:(?:ha|he|hi|ho|ja|xa)h?){2,}h?$|^l+o+l+(?:o+l+)*$|^lm+f?a+o+$|^rofl+$|^omg+$|^o+m+g+$|^u+g+h+$|^h+m+$|^a+rgh+$|^w+t+f+$"
    r"|^[aeou]+h+$"
)
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"), ("“", "”"), ("‘", "’"), ("《", "》"), ("【", "】"))
_OPEN_QUOTE = re.compile(r"(?:^|\s)['\"]\w")
_TYPO_CASE = re.compile(r"^[A-Z][a-z]+[A-Z]$")  # "WelI": one capital after lower case letters, at the end
_ASCII_LETTERS = re.compile(r"^[A-Za-z]+$")


def fragment_reason(surface: str) -> str | None:
    """Why ``surface`` is not a word or a name (a fragment, a typo, code), or None."""
    text = surface.strip()
    if not text:
        return "fragment"
    for a, b in _PAIRS:
        if text.count(a) != text.count(b):
            return "unbalanced"
    if text.count('"') % 2 or _OPEN_QUOTE.search(text):
        return "unbalanced"
    if _OPERATOR.search(text):
        return "code_fragment"
    toks = text.split()
    if any(_INTERJECTION.match(t.lower()) for t in toks):
        return "interjection"
    latin = [t for t in toks if _ASCII_LETTERS.match(t)]
    if (
        latin
        and len(latin) == len(toks)
        and all(len(t) <= 2 for t in toks)
        and not all(t.isupper() and len(t) == 2 for t in toks)
    ):
        return "too_short"  # "hs", "si", "x y"; two capitals stay ("AI", "ML")
    if len(toks) > 1 and all(_ASCII_LETTERS.match(t) for t in toks):
        # Words run together or cut apart by typing: "partsof ti", "alongeach diagonal line", "righ t".
        if any(t.islower() and len(t) > 2 and zipf(t) == 0.0 for t in toks):
            return "not_a_word"
        if len(toks[-1]) == 1 and toks[-1].islower() and toks[-1] not in ("a", "i"):
            return "fragment"
    if len(toks) == 1 and _ASCII_LETTERS.match(text):
        low = text.lower()
        if _TYPO_CASE.match(text) and zipf(low) < 2.5:
            return "typo"
        if text == low and zipf(low) == 0.0 and zipf(singularize(low)) == 0.0:
            return "not_a_word"  # lower case and unknown to wordfreq: a typo or a cut word
        if text == low and typo_of(low) is not None:
            return "typo"
    return None


# A rare lower-case word one slip away from a common one is that word mistyped: wordfreq counts
# frequent typos too ("thigns" 1.15, "youtoo" 1.15), so "unknown" alone misses them.
TYPO_MAX_ZIPF = 2.5  # the typed word is this rare at most ("numpy" 1.91 and "pytorch" 1.26 are too,
TYPO_MIN_LEN = 5  # ... but no slip of theirs is common); shorter words have too many neighbours
TYPO_TARGET_ZIPF = 4.5  # the word it slipped from is this common ("things" 6.0, "just" 6.7)
TYPO_SPLIT_ZIPF = 5.5  # two words typed together are each this common ("you" 7.3 + "too" 6.3; not "addend")


@lru_cache(maxsize=16384)
def typo_of(word: str) -> str | None:
    """The common word(s) a rare lower-case ``word`` is a slip of, or None.

    Only the cheap slips are tried (about 2 × len(word) look-ups): two neighbours swapped
    ("thigns"), a letter typed twice ("goood"), a missing space ("youtoo"). Substituted or
    inserted letters are not: they have too many neighbours, and technical names ("scala",
    "redux") sit one substitution away from common words.
    """
    if len(word) < TYPO_MIN_LEN or not word.isalpha() or zipf(word) > TYPO_MAX_ZIPF:
        return None
    floor = max(TYPO_TARGET_ZIPF, zipf(word) + 2.0)
    for i in range(len(word) - 1):
        swapped = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        if swapped != word and zipf(swapped) >= floor:
            return swapped
    for i in range(1, len(word)):
        if word[i] == word[i - 1] and zipf(word[:i] + word[i + 1 :]) >= floor:
            return word[:i] + word[i + 1 :]
    for i in range(2, len(word) - 1):
        a, b = word[:i], word[i:]
        if zipf(a) >= TYPO_SPLIT_ZIPF and zipf(b) >= TYPO_SPLIT_ZIPF:
            return f"{a} {b}"
    return None


def meta_reason(key: str) -> str | None:
    """A dialogue-act or meta word, or a phrase made only of such words, stop words and fillers."""
    meta = meta_keys()
    if key in meta:
        return "meta_word"
    parts = key.split()
    if (
        len(parts) > 1
        and all(p in meta or p in STOP_WORDS or p in filler_en() for p in parts)
        and any(p in meta for p in parts)
    ):
        return "meta_word"
    return None


def category_words(names: Iterable[str], min_names: int = 2) -> frozenset[str]:
    """Words that head (end) at least ``min_names`` distinct multiword Latin catalog names or aliases
    (by concept key) and are not names themselves: the tenant's kinds of thing ("framework" in
    "Django framework" and "Flask framework", "api", "movie" in "Scary Movie" and "Bee Movie")."""
    keys = {concept_key(n) for n in names} - {""}
    heads: Counter[str] = Counter()
    for key in keys:
        parts = key.split()
        if len(parts) >= 2 and all(LATIN_WORD.match(p) for p in parts[-2:]):
            heads[singularize(parts[-1])] += 1
    return frozenset(w for w, n in heads.items() if n >= min_names and w not in STOP_WORDS and w not in keys)


def is_category(key: str, categories: frozenset[str]) -> bool:
    """``key`` is one of the tenant's kinds of thing, in either number ("apis" keeps its "s" as a key)."""
    return key in categories or (key.endswith("s") and key[:-1] in categories)
