"""The hand-kept stance cue lists (data/stance_en.yaml, data/stance_zh.yaml), loaded and compiled once.

The lists are data, not code: each class holds regular-expression fragments; this module only joins
them into one pattern per class (longest fragment first, so alternation prefers the longer reading)
and compiles the context patterns (subjects, negators, past/now markers, hedges, clause breaks).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from graphmem.models import Stance

LANGUAGES = ("en", "zh")
CONTEXT_KEYS = (
    "others",
    "others_or_things",
    "self",
    "past",
    "now",
    "negators",
    "hedges",
    "intensifiers",
    "clause_breaks",
    "hypothetical",
    "thing_subject",
    "sentiment_ignore",
    "agreement",
    "neutral_question",
    "not_yet",
    "concessive",
)


@dataclass(frozen=True)
class CueClass:
    stance: Stance
    negated: Stance | None
    pattern: re.Pattern[str]  # anywhere in the clause
    parts: tuple[re.Pattern[str], ...]  # each cue on its own: the longest one at a match position wins
    before: re.Pattern[str] | None  # only right before the mention (anchored at the end)
    question: re.Pattern[str] | None  # what still counts inside a question
    # pattern, parts and question for ASCII text lowercased (ascii_folded); None where one cannot be folded.
    folded_pattern: re.Pattern[str] | None = None
    folded_parts: tuple[re.Pattern[str], ...] | None = None
    folded_question: re.Pattern[str] | None = None

    def fullmatch(self, text: str) -> bool:
        """Is ``text`` one of the class's cues, whole? (The folded pattern where it gives the same answer.)"""
        if self.folded_pattern is not None and text.isascii():
            return self.folded_pattern.fullmatch(text.lower()) is not None
        return self.pattern.fullmatch(text) is not None


@dataclass(frozen=True)
class CueSet:
    language: str
    classes: tuple[CueClass, ...]  # in priority order
    others: re.Pattern[str]
    others_or_things: re.Pattern[str]
    self_: re.Pattern[str]
    past: re.Pattern[str]
    now: re.Pattern[str]
    negators: re.Pattern[str]  # anchored at the end: a negation right before a cue
    hedges: re.Pattern[str]
    intensifiers: re.Pattern[str]
    clause_breaks: re.Pattern[str]
    hypothetical: re.Pattern[str]
    thing_subject: re.Pattern[str]
    sentiment_ignore: re.Pattern[str]
    agreement: re.Pattern[str]
    neutral_question: re.Pattern[str]  # a question to the other speaker: only before_mention cues show being lost
    not_yet: re.Pattern[str]  # anchored at the end: "haven't"/没 before a wish is "not yet", no dislike
    concessive: re.Pattern[str]  # a clause opening "although"/虽然 yields to the main clause
    subject_lead: re.Pattern[str] | None  # what may stand before a subject (anchored at the end); None: anything
    # Re-reading a clause only polarity decided (English): struggle words make a negative clause a struggle,
    # experience words make a cue-less or positive one knowing. None: the language has no such list.
    difficulty: re.Pattern[str] | None = None
    competence: re.Pattern[str] | None = None
    # The lesser side of the user's own comparison ("better than X": X disliked), anchored right before a
    # name, and the negations that make it praise ("nothing is better than X"). None: no such rule.
    lesser_than: re.Pattern[str] | None = None
    # A clause that is only "but not" and names: the clause before's cue, negated. None: no such rule.
    elliptic_negation: re.Pattern[str] | None = None
    comparison_negated: re.Pattern[str] | None = None


def _parse_tree(body: str, flags: int) -> Any:
    """``re``'s own parse of a pattern (re._parser has no public API: None when it is missing or fails)."""
    try:
        return importlib.import_module("re._parser").parse(body, flags)
    except (ImportError, AttributeError, re.error):
        return None


def _foldable(node: Any) -> bool:
    """Does the parsed pattern match lowercased ASCII text as it matches the text case-insensitively?
    Every literal must be ASCII and not upper case, every range ASCII and clear of A-Z ("[9-b]" holds
    "C"), and no group may change the flags ("(?-i:...)")."""
    if type(node).__name__ == "SubPattern":
        node = node.data
    if not isinstance(node, (list, tuple)):
        return True  # a number, None or an opcode
    if len(node) == 2 and str(node[0]) in _CHECKED_OPS:  # (opcode, argument)
        op, av = str(node[0]), node[1]
        if op in ("LITERAL", "NOT_LITERAL"):
            return bool(av < 128 and not chr(av).isupper())
        if op == "RANGE":
            lo, hi = av
            return bool(hi < 128 and (hi < ord("A") or lo > ord("Z")))
        _group, add_flags, del_flags, sub = av  # SUBPATTERN
        return not add_flags and not del_flags and _foldable(sub)
    return all(_foldable(x) for x in node)


_CHECKED_OPS = frozenset({"LITERAL", "NOT_LITERAL", "RANGE", "SUBPATTERN"})


def ascii_folded(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """The case-insensitive ``pattern`` as a case-sensitive one that finds the same matches, at the same
    offsets, in ``text.lower()`` for any ASCII ``text`` (None when that cannot be promised).

    Python's ``re`` cannot skip a case-insensitive alternative by its first letter, so the cue lists'
    alternations (70 cues a class) are tried whole at every word start; case-sensitive, they run about
    2.5 times faster. For ASCII text, lower() changes only A-Z, one letter for one letter, and a pattern
    whose letters are all ASCII lower case (_foldable) matches a letter in either case exactly when it
    matches its lower case."""
    if not pattern.flags & re.IGNORECASE:
        return None
    tree = _parse_tree(pattern.pattern, pattern.flags)
    if tree is None or not _foldable(tree):
        return None
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


def raw(language: str) -> dict[str, Any]:
    """The parsed YAML of one language (for tests and tools)."""
    text = resources.files("graphmem.extraction").joinpath("data", f"stance_{language}.yaml").read_text("utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError(f"stance_{language}.yaml: expected a mapping")
    return data


def _words(fragment: str, en: bool) -> str:
    # English cues sit on word boundaries; Chinese has none to sit on.
    # ("'m", "'d like" start glued to the word before them.)
    return rf"(?:(?<![\w'])|(?=')){fragment}(?!\w)" if en else fragment


def _alt(fragments: list[str], en: bool) -> str:
    ordered = sorted(dict.fromkeys(fragments), key=len, reverse=True)
    # One boundary around the whole alternation: positions inside a word fail before any alternative is tried.
    return _words("(?:" + "|".join(f"(?:{f})" for f in ordered) + ")", en)


@cache
def cues(language: str) -> CueSet:
    lang = "zh" if language == "zh" else "en"
    data = raw(lang)
    en = lang == "en"
    flags = re.IGNORECASE
    before = data.get("before_mention") or {}
    in_q = data.get("in_questions") or {}
    classes = []
    for name in data["order"]:
        spec = data["classes"][name]
        neg = spec.get("negated")
        bm = before.get(name)
        q = in_q.get(name)
        pattern = re.compile(_alt(spec["cues"], en), flags)
        parts = tuple(re.compile(_words(f"(?:{f})", en), flags) for f in dict.fromkeys(spec["cues"]))
        question = re.compile(_alt(q, en), flags) if q else None
        folded_parts = [ascii_folded(p) for p in parts]
        classes.append(
            CueClass(
                stance=Stance(name),
                negated=Stance(neg) if neg else None,
                pattern=pattern,
                parts=parts,
                before=re.compile(rf"(?:{_alt(bm, en)})\s*$", flags) if bm else None,
                question=question,
                folded_pattern=ascii_folded(pattern),
                folded_parts=tuple(p for p in folded_parts if p is not None) if None not in folded_parts else None,
                folded_question=ascii_folded(question) if question is not None else None,
            )
        )

    def ctx(key: str, anchored: bool = False, glued: bool = True) -> re.Pattern[str]:
        body = (
            _words(data[key], en)
            if key not in ("hypothetical", "thing_subject", "neutral_question", "concessive")
            else data[key]
        )
        if anchored and en and glued:
            # "haven't", "dont": the negation is glued to its verb (and "want", "Rent" are no negation)
            body = rf"(?:(?<![\w'])(?:do|does|did|is|was|are|were|have|has|had|ca|can|could|would|should|wo|ai|must|need)n'?t(?!\w)|{body})"
        if anchored:  # negation right before a cue: up to two adverbs between ("not really", 不太)
            gap = (
                (
                    r"(?:\s+(?:really|actually|even|ever|quite|that|too|very|so|particularly|much|exactly|necessarily|always"
                    r"|all|at|want|wanna|to|be|been|gonna|going|yet|think|feel|seem|a|big|huge|fan|of|the))*\s*$"
                )
                if en
                else r"(?:太|怎么|是很|是|再|还|一直|真的|完全|一点也|一点都)?$"
            )
            body = body + gap
        return re.compile(body, flags)

    return CueSet(
        language=lang,
        classes=tuple(classes),
        others=ctx("others"),
        others_or_things=ctx("others_or_things"),
        self_=ctx("self"),
        past=ctx("past"),
        now=ctx("now"),
        negators=ctx("negators", anchored=True),
        hedges=ctx("hedges"),
        intensifiers=ctx("intensifiers"),
        clause_breaks=ctx("clause_breaks"),
        hypothetical=ctx("hypothetical"),
        thing_subject=ctx("thing_subject"),
        sentiment_ignore=ctx("sentiment_ignore"),
        agreement=re.compile(data["agreement"], flags),
        neutral_question=ctx("neutral_question"),
        not_yet=ctx("not_yet", anchored=True, glued=False),
        concessive=ctx("concessive"),
        subject_lead=re.compile(data["subject_lead"] + r"\s*$", flags) if data.get("subject_lead") else None,
        difficulty=re.compile(_words(data["difficulty"], en), flags) if data.get("difficulty") else None,
        competence=re.compile(_words(data["competence"], en), flags) if data.get("competence") else None,
        lesser_than=re.compile(_words(data["lesser_than"], en) + r"\s*$", flags) if data.get("lesser_than") else None,
        elliptic_negation=re.compile(data["elliptic_negation"], flags) if data.get("elliptic_negation") else None,
        comparison_negated=(
            re.compile(_words(data["comparison_negated"], en), flags) if data.get("comparison_negated") else None
        ),
    )


__all__ = ["CueClass", "CueSet", "cues", "raw", "ascii_folded", "LANGUAGES", "CONTEXT_KEYS"]
