"""en.attribute_rules.FastAttributeRuler gives every token what spaCy's AttributeRuler gives it."""

from __future__ import annotations

import pytest
from spacy.language import Language
from spacy.pipeline import AttributeRuler
from spacy.tokens import Doc

from graphmem.extraction import pipelines
from graphmem.extraction.en.attribute_rules import FastAttributeRuler

# Hand-written chat-like turns: contractions, slang the model's rules of two tokens cover ("gonna",
# "gotta", "let's", "y'all", "ain't", "c'mon"), "there is", irregular verbs, whitespace tokens.
SENTENCES = [
    "I'm gonna learn Python, y'all, and I ain't scared of SQLAlchemy.",
    "Let's go! C'mon, we gotta finish the fractions first.",
    "There is a cat. There's two. There were many.",
    "He gets it; she got it; they've been getting it since 2019.",
    "What's the difference between gradient descent and Newton's method?",
    "  \n  lots   of\tspace  ",
    "I don't know, maybe 3/4 of it? lol",
    "She'd have liked Crazy, Stupid, Love if she'd seen it.",
    "Whose book is this? It's hers, not theirs.",
    "Gonna watch Toy Story 3 tonight, ain't nobody stopping me.",
]


def _tagged(nlp: Language, texts: list[str]) -> list[Doc]:
    docs = [nlp.make_doc(t) for t in texts]
    for name in ("tok2vec", "tagger", "parser"):
        docs = list(nlp.get_pipe(name).pipe(docs))  # type: ignore[attr-defined]
    return docs


def _attributes(doc: Doc) -> list[tuple[str, str, str, str]]:
    return [(t.text, t.pos_, str(t.morph), t.lemma_) for t in doc]


@pytest.fixture(scope="module")
def nlp() -> Language:
    return pipelines.english()


def test_same_attributes_as_spacy_ruler(nlp: Language) -> None:
    ruler = nlp.get_pipe("attribute_ruler")
    fast = pipelines.attribute_ruler(nlp)
    assert isinstance(ruler, AttributeRuler) and fast is not None
    slow_docs = _tagged(nlp, SENTENCES)
    fast_docs = [d.copy() for d in slow_docs]
    for slow, quick in zip(slow_docs, fast_docs, strict=True):
        assert _attributes(fast(quick)) == _attributes(ruler(slow))
        assert any(t.pos_ for t in quick)  # the ruler did set something


def test_rules_of_two_tokens_fire(nlp: Language) -> None:
    """The sample reaches the model's rules of several tokens, not only the one-token ones."""
    fast = pipelines.attribute_ruler(nlp)
    assert fast is not None
    longer = {idx for rules in (*fast.filed.values(), fast.everywhere) for idx, tests in rules if len(tests) > 1}
    assert longer, "the English model has rules of two tokens"
    hit = {idx for doc in _tagged(nlp, SENTENCES) for idx, start, end in fast.matches(doc) if end - start > 1}
    assert hit & longer


def test_rules_it_cannot_read_go_through_a_matcher(nlp: Language) -> None:
    """A rule with a quantifier ("OP") is matched by spaCy's Matcher, and ordering by rule index holds."""
    blank = Language(nlp.vocab)
    ruler = AttributeRuler(blank.vocab)
    ruler.add([[{"LOWER": "very", "OP": "+"}, {"LOWER": "good"}]], {"LEMMA": "VERY-GOOD"}, index=-1)
    ruler.add([[{"LOWER": "good"}]], {"LEMMA": "GOOD"})  # later rule: overrides the first on "good"
    ruler.add([[{"LOWER": {"REGEX": "^ba+d$"}}]], {"LEMMA": "BAD"})
    fast = FastAttributeRuler(ruler)
    assert fast.has_rest
    texts = ["very very good", "baaad and bad", "good"]
    slow_docs, fast_docs = [blank.make_doc(t) for t in texts], [blank.make_doc(t) for t in texts]
    for slow, quick in zip(slow_docs, fast_docs, strict=True):
        assert [t.lemma_ for t in fast(quick)] == [t.lemma_ for t in ruler(slow)]
    assert [t.lemma_ for t in fast_docs[0]][-1] == "GOOD"
    assert [t.lemma_ for t in fast_docs[1]] == ["BAD", "", "BAD"]
