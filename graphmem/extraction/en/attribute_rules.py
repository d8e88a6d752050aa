"""The English pipeline's attribute ruler, with its one-token rules looked up instead of matched.

en_core_web_sm's ``attribute_ruler`` turns the tagger's fine tags into coarse POS, morphology and a
few lemmas (``root.head.lemma_ == "be"`` in en.candidates reads one). It holds ~180 rules, nearly
all of one token ("TAG is VBZ", "LOWER is 'ai' and TAG is VBP"), and runs them through spaCy's
generic Matcher, which tests every rule at every token: on chat turns it cost more than the tagger
and the parser together (bench/results/NOTES.md, "Extraction speed").

``FastAttributeRuler`` reads the loaded ruler's own rules (nothing is copied into this repository) and
tests them in plain Python: a rule's first token is filed under its TAG or LOWER value, so at a token
only the rules filed under that token's values are tried (plus the few filed under neither), and the
answer is remembered per (tag, word, dependency, …) values. Rules it cannot read (quantifier operators,
other predicates) still go through a Matcher of their own. Matches are applied as the ruler applies
them — sorted by rule index, later rules overriding earlier ones — with spaCy's ``set_token_attrs``,
so every token gets the same POS, MORPH and LEMMA (tests/test_attribute_rules.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from spacy.matcher import Matcher
from spacy.pipeline import AttributeRuler
from spacy.tokens import Doc, Token
from spacy.tokens._retokenize import set_token_attrs

# Token attributes a rule may test, as the Matcher reads them (string attributes compare as strings).
_READERS: dict[str, Callable[[Token], Any]] = {
    "TAG": lambda t: t.tag_,
    "LOWER": lambda t: t.lower_,
    "DEP": lambda t: t.dep_,
    "ORTH": lambda t: t.text,
    "TEXT": lambda t: t.text,
    "POS": lambda t: t.pos_,
    "NORM": lambda t: t.norm_,
    "IS_SPACE": lambda t: t.is_space,
    "IS_PUNCT": lambda t: t.is_punct,
    "IS_ALPHA": lambda t: t.is_alpha,
    "IS_DIGIT": lambda t: t.is_digit,
}
_STRING_ATTRS = frozenset({"TAG", "LOWER", "DEP", "ORTH", "TEXT", "POS", "NORM"})
_INDEXED = ("TAG", "LOWER")  # every token has one value of each: a rule testing one is filed under it
_MEMO_LIMIT = 200_000

# One predicate: (reader, kind, value), kind "==", "IN", "NOT_IN" or "REGEX" (re.search, as the Matcher).
Test = tuple[Callable[[Token], Any], str, Any]


def _tests(token_pattern: dict[str, Any]) -> list[Test] | None:
    """The predicates of one token of a pattern, or None if one of them is not a plain comparison."""
    tests: list[Test] = []
    for attr, value in token_pattern.items():
        reader = _READERS.get(attr.upper())
        if reader is None:
            return None
        if isinstance(value, dict):
            if len(value) != 1:
                return None
            ((kind, arg),) = value.items()
            if kind in ("IN", "NOT_IN") and isinstance(arg, list):
                tests.append((reader, kind, frozenset(arg)))
            elif kind == "REGEX" and isinstance(arg, str) and attr.upper() in _STRING_ATTRS:
                tests.append((reader, kind, re.compile(arg)))
            else:
                return None
        elif isinstance(value, (str, bool)):
            tests.append((reader, "==", value))
        else:
            return None
    return tests


def _passes(tok: Token, tests: list[Test]) -> bool:
    for reader, kind, value in tests:
        got = reader(tok)
        if kind == "==":
            if got != value:
                return False
        elif kind == "REGEX":
            if not value.search(got):
                return False
        elif (got in value) != (kind == "IN"):
            return False
    return True


class FastAttributeRuler:
    """Same output as the given AttributeRuler, rules looked up by the token's TAG / LOWER."""

    def __init__(self, ruler: AttributeRuler) -> None:
        self.attrs = ruler.attrs
        self.indices = ruler.indices
        # (attribute, value) -> [(rule index, predicates per token)]; rules filed under no value are tried everywhere.
        self.filed: dict[tuple[str, str], list[tuple[int, list[list[Test]]]]] = {}
        self.everywhere: list[tuple[int, list[list[Test]]]] = []
        self.rest = Matcher(ruler.vocab)
        self.has_rest = False
        used: set[str] = set()
        for idx in range(len(ruler.attrs)):
            _, patterns = ruler.matcher.get(str(idx))
            for pattern in patterns:
                per_token = [_tests(tp) for tp in pattern]
                if not pattern or any(t is None for t in per_token):
                    self.rest.add(str(idx), [pattern])
                    self.has_rest = True
                    continue
                self._file(idx, pattern[0], [t for t in per_token if t is not None])
                used.update(attr.upper() for attr in pattern[0])
        self.readers = [_READERS[a] for a in sorted(used | set(_INDEXED))]
        # A token's values of self.readers -> (one-token rules matching it, longer rules whose first token
        # it matches); _MEMO_LIMIT entries at most.
        self.memo: dict[tuple[Any, ...], tuple[tuple[int, ...], tuple[tuple[int, list[list[Test]]], ...]]] = {}

    def _file(self, idx: int, first: dict[str, Any], tests: list[list[Test]]) -> None:
        for attr in _INDEXED:
            value = first.get(attr)
            if isinstance(value, str):
                self.filed.setdefault((attr, value), []).append((idx, tests))
                return
            if isinstance(value, dict) and list(value) == ["IN"]:
                for v in value["IN"]:
                    self.filed.setdefault((attr, v), []).append((idx, tests))
                return
        self.everywhere.append((idx, tests))

    def _rules_from(self, tok: Token) -> tuple[tuple[int, ...], tuple[tuple[int, list[list[Test]]], ...]]:
        """Rules whose first token the token matches: the one-token ones, and the longer ones."""
        single: set[int] = set()
        longer: list[tuple[int, list[list[Test]]]] = []
        for rules in (
            self.filed.get(("TAG", tok.tag_), ()),
            self.filed.get(("LOWER", tok.lower_), ()),
            self.everywhere,
        ):
            for idx, tests in rules:
                if _passes(tok, tests[0]):
                    if len(tests) == 1:
                        single.add(idx)
                    else:
                        longer.append((idx, tests))
        return tuple(sorted(single)), tuple(longer)

    def matches(self, doc: Doc) -> list[tuple[int, int, int]]:
        """(rule index, start, end) of every match, in the order the AttributeRuler applies them."""
        found: set[tuple[int, int, int]] = set()
        readers, memo, n = self.readers, self.memo, len(doc)
        for tok in doc:
            # Which rules start here depends only on the attributes their first token reads.
            key = tuple(read(tok) for read in readers)
            rules = memo.get(key)
            if rules is None:
                if len(memo) >= _MEMO_LIMIT:
                    memo.clear()  # a long-lived process meets new words without end
                rules = memo[key] = self._rules_from(tok)
            i = tok.i
            found.update((idx, i, i + 1) for idx in rules[0])
            for idx, tests in rules[1]:
                end = i + len(tests)
                if end <= n and all(_passes(doc[j], tests[j - i]) for j in range(i + 1, end)):
                    found.add((idx, i, end))
        if self.has_rest:
            strings = doc.vocab.strings
            for key_, start, end in self.rest(doc, allow_missing=True):
                found.add((int(strings[key_]), start, end))
        return sorted(found)

    def __call__(self, doc: Doc) -> Doc:
        for idx, start, end in self.matches(doc):
            index = self.indices[idx]
            target = start + index if index >= 0 else end + index
            if not start <= target < end:
                raise ValueError(f"attribute rule {idx}: index {index} outside its {end - start}-token match")
            set_token_attrs(doc[target], self.attrs[idx])
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 0) -> Iterator[Doc]:
        for doc in docs:
            yield self(doc)
