"""Finding a tenant's catalog concepts in a turn.

A character-level longest-match scan over the normalised text (normalize.py:
NFKC, casefold, word gaps, singular English words), mapped back to original
character offsets. Working on characters rather than tokens makes Chinese
names (`Python基础`, `Django框架`) match whatever jieba's segmentation is, and
makes plurals and full-width forms match for free, because patterns and text
are normalised by the same function.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from spacy.lang.en.stop_words import STOP_WORDS

from graphmem.extraction.lexical import zipf
from graphmem.extraction.normalize import concept_key, is_cjk, normalize_with_map
from graphmem.models import Catalog, CatalogConcept
from graphmem.wordlists import yaml_data

_END = ""  # trie terminal marker: never a real character
# Catalog names that are also everyday English words: matched only when the
# turn spells them with the catalog's capitalisation ("Go", not "go to bed").
_COMMON_WORD_NAMES = frozenset(
    """go rust swift spark flask react express node ruby julia dart elm pig hive storm chef puppet
    salt excel word access outlook teams pandas keras make ant maven gradle unity alpha beta
    delta sigma gamma python java scheme lisp basic logo matlab sage""".split()
) - {"python", "java", "pandas", "keras", "matlab"}


# A catalog name whose content is one word this common (wordfreq Zipf: "Hero" 4.68, "Life" 5.89,
# "Split" 4.65, 英雄 4.97; "React" 4.39, "Inception" 3.3, 模型 4.69) or only stop words ("It", "Up",
# "Her") names the thing only with evidence: capitalised mid-sentence, quoted, or next to a cue word
# (data/title_evidence.yaml). Chinese terms of a course catalog (模型, 函数) are everyday words more
# often than English ones, hence the higher bar.
COMMON_NAME_ZIPF = 4.5
COMMON_NAME_ZIPF_ZH = 4.8
# Every content word at least this common: the name in lower case needs evidence too.
COMMON_LOWER_ZIPF = 4.0
_SENTENCE_END = frozenset(".!?。！？\n:;…")
_QUOTES_OPEN = frozenset("\"'“‘「『《【*")


def is_common_name(name: str, threshold: float = COMMON_NAME_ZIPF, threshold_zh: float = COMMON_NAME_ZIPF_ZH) -> bool:
    """Is this catalog name also an everyday word or phrase of its language?"""
    pattern = normalize_with_map(name, singular="none")[0].strip()
    if not pattern:
        return False
    if pattern.isascii():
        content = [w for w in pattern.split() if w not in STOP_WORDS]
        if not any(ch.isalpha() for ch in pattern) or len(content) > 1:
            return False
        return not content or zipf(content[0], "en") >= threshold
    if all(is_cjk(ch) for ch in pattern) and len(pattern) <= 3:
        return zipf(pattern, "zh") >= threshold_zh
    return False


def is_common_phrase_name(name: str, threshold: float = COMMON_LOWER_ZIPF) -> bool:
    """A capitalised English name made only of common words ("Scary Movie", "Ghost", "Home Alone"):
    written in lower case in a chat it is the words ("a good scary movie", "ghost movies")."""
    if not name.isascii() or name == name.lower():
        return False
    words = [w for w in normalize_with_map(name, singular="none")[0].split() if w not in STOP_WORDS]
    return bool(words) and all(w.isalpha() and zipf(w, "en") >= threshold for w in words)


def _evidence_cues() -> dict[str, tuple[int, frozenset[str], frozenset[str]]]:
    data = yaml_data("title_evidence.yaml")
    return {
        lang: (int(data[lang]["window"]), frozenset(data[lang]["before"]), frozenset(data[lang]["after"]))
        for lang in ("en", "zh")
    }


def _kind_types() -> frozenset[str]:
    return frozenset(yaml_data("title_evidence.yaml")["kind_types"])


def _is_word_char(c: str) -> bool:
    # Latin letters and digits form words; CJK characters do not need boundaries.
    return ("a" <= c <= "z") or ("0" <= c <= "9") or ("\u00df" <= c <= "\u024f")


@dataclass(frozen=True)
class CatalogMatch:
    start: int
    end: int
    concept: int  # index into the matcher's concept list


@dataclass(frozen=True)
class _Entry:
    concept: int
    exact: str | None  # when set, the original text must equal this (NFKC) or its upper case
    common: bool = False  # also an everyday word: matched only with evidence (is_common_name)
    common_lower: bool = False  # common words in a capitalised name: lower case needs evidence


def catalog_keys(catalog: Catalog) -> dict[str, str]:
    """Every concept name, alias and id (as concept_key) -> the concept's canonical key.

    Names win over aliases and aliases over ids when two concepts share a string,
    so a name always resolves to its own concept.
    """
    out: dict[str, str] = {}
    canon = [concept_key(c.name) for c in catalog.concepts]
    for key in canon:
        out.setdefault(key, key)
    for c, key in zip(catalog.concepts, canon):
        for alias in c.aliases:
            k = concept_key(alias)
            if k:
                out.setdefault(k, key)
    for c, key in zip(catalog.concepts, canon):
        if c.id:
            k = concept_key(c.id)
            if k:
                out.setdefault(k, key)
    return out


class CatalogMatcher:
    """Longest-match scanner for one catalog. Building it is cheap (a trie of aliases)."""

    def __init__(self, catalog: Catalog, common_name_zipf: float = COMMON_NAME_ZIPF) -> None:
        self.common_name_zipf = common_name_zipf
        self._cues = _evidence_cues()
        self._kinds = _kind_types()
        self._strong_before = frozenset(yaml_data("title_evidence.yaml")["en"]["strong_before"])
        # Keys of names that are also everyday words: an open-vocabulary candidate with such a key
        # ("Hero" opening a sentence) must not be resolved to the catalog concept without evidence.
        self.common_keys: set[str] = set()
        self.common_lower_keys: set[str] = set()
        self.concepts: list[CatalogConcept] = list(catalog.concepts)
        self.keys: list[str] = [concept_key(c.name) for c in self.concepts]
        self.key_index: dict[str, int] = {}
        for i, k in enumerate(self.keys):
            self.key_index.setdefault(k, i)
        self.alias_keys: dict[str, str] = catalog_keys(catalog)
        self._trie: dict[str, Any] = {}
        # Names first, then aliases, then ids: the first pattern to claim a string keeps it.
        for i, c in enumerate(self.concepts):
            self._add(c.name, i)
        for i, c in enumerate(self.concepts):
            for alias in c.aliases:
                self._add(alias, i)
        for i, c in enumerate(self.concepts):
            if c.id and not c.id.strip().isdigit():
                self._add(c.id, i)

    def __len__(self) -> int:
        return len(self.concepts)

    def _add(self, surface: str, concept: int) -> None:
        pattern = normalize_with_map(surface)[0].strip()
        if not pattern:
            return
        if len(pattern) == 1 and is_cjk(pattern):
            return  # one Chinese character is a morpheme, not a name: too many false hits
        c = self.concepts[concept]
        # A kind of thing (genre, topic…) is the word itself; a tenant may declare a name unambiguous.
        may_be_word = str(getattr(c.type, "value", c.type)) not in self._kinds and not getattr(c, "unambiguous", False)
        common = may_be_word and is_common_name(surface, self.common_name_zipf)
        if common:
            self.common_keys.add(concept_key(surface))
        node = self._trie
        for ch in pattern:
            node = node.setdefault(ch, {})
        common_lower = may_be_word and is_common_phrase_name(surface)
        if common_lower:
            self.common_lower_keys.add(concept_key(surface))
        node.setdefault(_END, _Entry(concept, _exact_spelling(pattern, surface), common, common_lower))

    def resolve(self, key: str) -> int | None:
        """The concept index a concept key (of a name, alias or id) refers to, if any."""
        canon = self.alias_keys.get(key)
        return None if canon is None else self.key_index.get(canon)

    def scan(self, text: str) -> list[CatalogMatch]:
        """Leftmost-longest, non-overlapping catalog matches with spans into `text`.

        At each position where a word may start, the trie gives every catalog name ending there
        (``_names_from``); the longest one ``_accepts`` is the match, and the scan goes on after it.
        """
        if not self._trie or not text:
            return []
        norm, starts, ends = normalize_with_map(text)
        out: list[CatalogMatch] = []
        first = self._trie
        i = 0  # where the next match may start
        for at in _WORD_STARTS.finditer(norm):  # the positions _starts_word allows, found by re (faster)
            p = at.start()
            if p < i or p >= len(norm) or norm[p] not in first:
                continue  # inside the last match, past the end, or no name starts with this character
            found = self._longest_accepted(text, norm, starts, ends, p)
            if found is not None:
                end, entry = found
                out.append(CatalogMatch(starts[p], ends[end - 1], entry.concept))
                i = end
        return out

    def _longest_accepted(
        self, text: str, norm: str, starts: list[int], ends: list[int], i: int
    ) -> tuple[int, _Entry] | None:
        """The longest name starting at ``norm[i]`` that ``_accepts``: (its end in ``norm``, entry)."""
        for j, entry in reversed(self._names_from(norm, i)):
            if self._accepts(text, starts[i], ends[j - 1], entry):
                return j, entry
        return None

    def _names_from(self, norm: str, i: int) -> list[tuple[int, _Entry]]:
        """The catalog names that start at ``norm[i]`` and end at a word boundary, shortest first:
        (end in ``norm``, entry)."""
        node = self._trie.get(norm[i])
        found: list[tuple[int, _Entry]] = []
        j = i + 1
        while node is not None:
            entry = node.get(_END)
            if entry is not None and _ends_word(norm, j):
                found.append((j, entry))
            if j >= len(norm):
                break
            node = node.get(norm[j])
            j += 1
        return found

    def _accepts(self, text: str, start: int, end: int, entry: _Entry) -> bool:
        """Does ``text[start:end]`` name ``entry``'s concept? An exact-case name must be spelled so;
        an everyday word needs evidence; common words in lower case need strong evidence."""
        if entry.exact is not None:
            surface = unicodedata.normalize("NFKC", text[start:end])
            if surface != entry.exact and surface != entry.exact.upper():
                return False
        if entry.common and not self._evidence(text, start, end):
            return False
        return not (
            entry.common_lower and text[start:end].islower() and not self._evidence(text, start, end, strict=True)
        )

    def _evidence(self, text: str, start: int, end: int, strict: bool = False) -> bool:
        """Is text[start:end], a catalog name that is also a common word, used as the name?

        First rule that applies: a contraction ("It's") is not; quoted ("It", 《英雄》) is; a
        Chinese name is when a cue of ``title_evidence.yaml`` touches it; an English one when it is
        capitalised mid-sentence ("I loved Up") or a cue word is next to it in its sentence
        (``strict``: only the strong cues before it).
        """
        before = text[max(0, start - 40) : start]
        after = text[end : end + 20]
        prev = before.rstrip()
        if after[:1] in "'’" and after[1:2].isalpha():
            return False  # a contraction: "It's", "It'll"
        if prev[-1:] in _QUOTES_OPEN or (after[:1] in _QUOTES_OPEN and after[:1] not in "《【"):
            return True  # quoted: "It", 《英雄》
        surface = text[start:end]
        if any(is_cjk(ch) for ch in surface):
            _, cues_before, cues_after = self._cues["zh"]
            return any(prev.endswith(c) for c in cues_before) or any(after.lstrip().startswith(c) for c in cues_after)
        if _capitalised_inside(surface):
            return True  # "Set It Off": its later words keep the title's capitals mid-sentence
        if _gap_break(before):
            prev = ""  # the name opens its sentence: no capital mid-sentence, no cue before it
        if surface[:1].isupper() and prev and prev[-1] not in _SENTENCE_END:
            return True  # capitalised mid-sentence: "I loved Up"
        return self._english_cue(prev, after, strict)

    def _english_cue(self, prev: str, after: str, strict: bool) -> bool:
        """Is a cue word of ``title_evidence.yaml`` among the words before the name in its sentence
        or the word right after it? (``strict``: only the strong cues before it.)"""
        window, cues_before, cues_after = self._cues["en"]
        if strict:
            cues_before, cues_after = self._strong_before, frozenset()
        next_words = [w.strip(".,!?;:'\"").lower() for w in after.split()[:1]]
        return any(w in cues_before for w in _sentence_words_before(prev, window)) or any(
            w in cues_after for w in next_words
        )


def _capitalised_inside(surface: str) -> bool:
    """A name of several words whose every later word is capitalised ("Set It Off", not "Set it off"
    nor "SET IT OFF"): capitals a sentence start cannot explain."""
    words = surface.split()
    return len(words) > 1 and not surface.isupper() and all(w[:1].isupper() for w in words[1:])


def _gap_break(before: str) -> bool:
    """Chat lines often mark a sentence break by a run of spaces instead of a stop ("I loved Cosmos  It
    was really good"): a capital right after two or more spaces opens a sentence."""
    return before.endswith("  ")


def _exact_spelling(pattern: str, surface: str) -> str | None:
    """The spelling a short or everyday Latin name must be written in ("Go", not "go"), else None."""
    if (
        pattern.isascii()
        and pattern.isalpha()
        and (len(pattern) <= 2 or pattern in STOP_WORDS or pattern in _COMMON_WORD_NAMES)
    ):
        return unicodedata.normalize("NFKC", surface.strip())
    return None


# Every position where _starts_word is true: no word character before it, or none at it.
_WORD_STARTS = re.compile("(?<![a-z0-9\u00df-\u024f])|(?![a-z0-9\u00df-\u024f])")


def _starts_word(norm: str, i: int) -> bool:
    """May a name start at ``norm[i]``? Not inside a Latin word or number."""
    return i == 0 or not (_is_word_char(norm[i]) and _is_word_char(norm[i - 1]))


def _ends_word(norm: str, j: int) -> bool:
    """May a name end before ``norm[j]``? Not inside a Latin word or number."""
    return j == len(norm) or not (_is_word_char(norm[j - 1]) and _is_word_char(norm[j]))


def _sentence_words_before(prev: str, window: int) -> list[str]:
    """The last ``window`` words of ``prev`` that are in the name's own sentence, lower case
    ("seen that movie. It looks good": none)."""
    if prev[-1:] in _SENTENCE_END:
        return []
    words = [w.strip(",;:'\"").lower() for w in prev.split()[-window:]]
    first = next((k + 1 for k in range(len(words) - 1, -1, -1) if words[k][-1:] in _SENTENCE_END), 0)
    return words[first:]
