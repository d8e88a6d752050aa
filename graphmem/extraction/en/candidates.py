"""English concept candidates: named entities of useful labels, noun chunks and proper nouns from the
parser (trimmed of determiners and filler adjectives), and arithmetic operations named by their gerund."""

from __future__ import annotations

import re
from functools import cache, lru_cache

from spacy.tokens import Doc, Span, Token

from graphmem.extraction.candidates import CONF_CHUNK, CONF_NER, CONF_PROPER, LATIN, NUMERIC, Candidate
from graphmem.extraction.lexical import meta_reason
from graphmem.extraction.normalize import concept_key
from graphmem.models import ExtractorName
from graphmem.wordlists import words

# Entity labels kept as concepts. PRODUCT / ORG / WORK_OF_ART / LANGUAGE / EVENT / LAW
# name things a learner studies, uses or recommends (Django, Coursera, "Deep Learning",
# Python, PyCon, GDPR). Left out on purpose: PERSON, GPE, LOC, FAC and NORP — in
# tutoring and agent chats these are mostly the user's own life (names, cities) and
# would put personal data into an interest graph; and the numeric labels (DATE, TIME,
# MONEY, QUANTITY, PERCENT, ORDINAL, CARDINAL), which are never concepts.
NER_LABELS = frozenset({"PRODUCT", "ORG", "WORK_OF_ART", "LANGUAGE", "EVENT", "LAW"})

# Leading words dropped from a noun chunk: they carry no concept ("my first Python project").
_LEADING_FILLER = words("leading_filler_en.txt")
# "Option C", "Step 2": a place in an exercise or a list, not a concept (data/enumeration_heads_en.txt).
_ENUMERATION_HEADS = words("enumeration_heads_en.txt")
_ENUMERATION_LABEL = re.compile(r"^(?:[A-Za-z]|\d{1,3})$")
# "the result of 4 + 5": the quantity asked for, not a topic (data/relational_heads_en.txt).
_RELATIONAL_HEADS = words("relational_heads_en.txt")
# "Hi Marcus!", "Bye Sofia": the name after a greeting is the person addressed (data/greetings_en.txt).
_GREETINGS = words("greetings_en.txt")


@cache
def _idiom_pattern() -> re.Pattern[str]:
    phrases = sorted(words("chat_idioms_en.txt"), key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(re.escape(w) for w in p.split()) for p in phrases)
    return re.compile(rf"(?<![\w'])(?:{alternatives})(?![\w'])", re.IGNORECASE)


def idiom_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the chat set phrases of ``chat_idioms_en.txt`` in ``text`` ("Give it a shot",
    "No worries"): their nouns are how a speaker encourages or excuses, not a topic."""
    return [m.span() for m in _idiom_pattern().finditer(text)]


def _trim_tokens(span) -> tuple[int, int] | None:
    """Token range of a noun chunk without leading determiners/filler and trailing punctuation."""
    toks = list(span)
    i, j = 0, len(toks)
    while i < j and (
        toks[i].pos_ in ("DET", "PRON", "PUNCT", "NUM", "ADP", "CCONJ", "PART", "SYM", "INTJ", "AUX")
        or toks[i].lower_ in _LEADING_FILLER
        or toks[i].tag_ in ("PRP$", "WP$", "WDT", "POS")
    ):
        i += 1
    while j > i and toks[j - 1].pos_ in ("PUNCT", "PART", "SYM") and toks[j - 1].text not in ("++", "#"):
        j -= 1
    # "two-digit numbers": a word joined by a hyphen to the first kept one belongs to it; trimming the
    # numeral would leave the fragment "digit numbers".
    while 2 <= i < j and toks[i - 1].text == "-" and not toks[i - 1].whitespace_ and not toks[i - 2].whitespace_:
        i -= 2
    if i >= j:
        return None
    if toks[j - 1].pos_ not in ("NOUN", "PROPN", "X") and not _looks_technical(toks[j - 1].text):
        return None
    return toks[i].idx, toks[j - 1].idx + len(toks[j - 1].text)


@lru_cache(maxsize=65536)  # asked of every token of every turn
def _looks_technical(word: str) -> bool:
    """Mixed case, digits inside letters or code punctuation: SQLAlchemy, PyTorch, Python3, C++, C#."""
    if len(word) < 2 or not LATIN.search(word):
        return False
    inner_upper = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
    has_digit = any(c.isdigit() for c in word) and word[0].isalpha()
    return inner_upper or has_digit or word.endswith(("++", "#")) or word.startswith(".")


def _split_coordination(chunk):
    """'SQLAlchemy and Jinja templates' -> 'SQLAlchemy', 'Jinja templates'."""
    parts, start = [], chunk.start
    for tok in chunk:
        if tok.pos_ == "CCONJ" or tok.text in (",", ";", "/", "&"):
            if tok.i > start:
                parts.append(chunk.doc[start : tok.i])
            start = tok.i + 1
    if start < chunk.end:
        parts.append(chunk.doc[start : chunk.end])
    return parts


# Arithmetic operations a learner practises, named by their gerund ("Round 345 to the nearest ten"
# is practice in rounding). Skills in tutoring are verbs as often as nouns; only these verbs, and
# only applied to numbers or to a mathematical object, so "add a column" stays out.
OPERATION_SKILLS = {
    "round": "rounding",
    "add": "adding",
    "subtract": "subtracting",
    "multiply": "multiplying",
    "divide": "dividing",
    "estimate": "estimating",
    "regroup": "regrouping",
    "simplify": "simplifying",
    "factor": "factoring",
    "decompose": "decomposing",
    "convert": "converting",
}
_MATH_OBJECTS = frozenset(
    """number numbers fraction fractions decimal decimals digit digits integer integers denominator denominators
    numerator numerators remainder remainders product products sum sums difference quotient dividend divisor
    polynomial polynomials expression expressions equation equations unit units figure figures shape shapes
    mixed""".split()
)
CONF_OPERATION = 0.5
# Inflected forms -> gerund (the fast English pipeline runs no lemmatizer).
_OPERATION_FORMS = {
    form: gerund
    for base, gerund in OPERATION_SKILLS.items()
    for form in (base, base + "s", base + "ed", base + "d", gerund, base[:-1] + "ies", base[:-1] + "ied")
}


def operation_candidates(doc: Doc) -> list[Candidate]:
    """Skills named by an arithmetic verb applied to numbers: Round 345 → "rounding"."""
    out: list[Candidate] = []
    if not doc.has_annotation("DEP"):
        return out
    for tok in doc:
        gerund = _OPERATION_FORMS.get(tok.lower_)
        if gerund is None:
            continue  # the tagger often misreads an imperative "Round 345" as ADV: POS is not asked
        # What the operation applies to: its objects and their modifiers, not its subject.
        applied = [
            t
            for child in tok.children
            if child.dep_ not in ("nsubj", "nsubjpass", "aux", "punct")
            for t in child.subtree
        ]
        if any(t.like_num or t.lower_ in _MATH_OBJECTS or NUMERIC.match(t.text) for t in applied):
            out.append(
                Candidate(tok.idx, tok.idx + len(tok.text), ExtractorName.pattern, CONF_OPERATION, "operation", gerund)
            )
    return out


_QUANTIFIERS = frozenset({"many", "much"})


def is_counted(tok: Token) -> bool:
    """A common noun counted by a numeral before it ("5 glasses", "24 feet") or asked "how many" of
    ("how many bags", "how many total legos"): what a word problem counts or measures in, not what it
    teaches. Maths objects stay ("3 fractions", "how many digits": _MATH_OBJECTS are the lesson), and
    so does a number after a name ("Toy Story 3")."""
    if tok.pos_ != "NOUN" or tok.lower_ in _MATH_OBJECTS:
        return False
    doc = tok.doc
    for c in tok.children:
        if c.i < tok.i and (
            (c.like_num and c.dep_ == "nummod")
            or (c.lower_ in _QUANTIFIERS and c.i > 0 and doc[c.i - 1].lower_ == "how")
        ):
            return True
    return False


_PERSONAL_SUBJECTS = frozenset({"i", "you", "he", "she", "we", "they"})
_EXCLAMATIVE = frozenset({"such", "what", "quite"})


def is_evaluation(chunk: Span) -> bool:
    """A noun phrase that says what someone or something is like rather than names a topic: the
    exclamative "such a heart breaker" / "what a heart breaker", and one bare noun predicated of a person
    ("Adam Sandler is a riot", "He's a cutie", "you are a genius"). Predicates of things stay ("This is
    a right triangle", "it's a heist film"), as do phrases with a modifier."""
    root = chunk.root
    dets = [c for c in root.children if c.i < root.i and c.dep_ in ("det", "predet")]
    if not any(d.lower_ in ("a", "an") for d in dets):
        return False
    if any(d.lower_ in _EXCLAMATIVE for d in dets):
        return True
    if (
        root.dep_ != "attr"
        or root.pos_ != "NOUN"
        or any(c.i < root.i and c.dep_ not in ("det",) for c in root.children)
    ):
        return False
    subjects = [c for c in root.head.children if c.dep_ == "nsubj"]
    return root.head.lemma_ == "be" and any(s.pos_ == "PROPN" or s.lower_ in _PERSONAL_SUBJECTS for s in subjects)


def story_object_keys(doc: Doc) -> set[str]:
    """Concept keys of what a word problem's character is counted having ("how many glasses Ayako
    drank", "how many bags does Max have"): the story's objects. A count without a character ("how many
    minutes", "how many times") may be the lesson's own unit, so it is not taken."""
    if not doc.has_annotation("DEP"):
        return set()
    out: set[str] = set()
    for tok in doc:
        if is_counting_subject(tok):
            verb = tok.head
            heads = [verb, *(c for c in verb.children if c.dep_ == "aux")]
            out |= {concept_key(c.text) for h in heads for c in h.children if c.i != tok.i and is_counted(c)}
    return out


def is_counting_subject(tok: Token) -> bool:
    """The proper noun that is the subject of a counting verb ("how many glasses Ayako drank",
    "how many bags does Max have", "Sarah has 12 pencils"): the problem's character."""
    if tok.pos_ != "PROPN" or tok.dep_ != "nsubj":
        return False
    verb = tok.head
    # "how many apples did Sam buy": the parser may hang the counted noun on the auxiliary.
    heads = [verb, *(c for c in verb.children if c.dep_ == "aux")]
    return any(
        c.i != tok.i and c.dep_ in ("dobj", "nsubj", "attr") and is_counted(c) for h in heads for c in h.children
    )


def is_enumeration_label(span: Span) -> bool:
    """ "Option C", "choice B", "Step 2", "Question 3": a listing word and a letter or a number label a place
    in an exercise or a list. "Vitamin C", "Plan B", "Python 3" are not labels (their head is not listed)."""
    toks = [t for t in span if not t.is_punct]
    return len(toks) == 2 and toks[0].lower_ in _ENUMERATION_HEADS and bool(_ENUMERATION_LABEL.match(toks[1].text))


def is_quantity_head(tok: Token) -> bool:
    """A relational noun said of something: "result" in "the result of 4 + 5", "total" in "the total of the
    bill", "value" in "the value of 13 times 3". What it is of is the topic, if anything; the head alone is a
    quantity asked for. A compound ("end result") is not a bare head."""
    if tok.lower_ not in _RELATIONAL_HEADS or any(c.dep_ == "compound" for c in tok.children):
        return False
    return any(prep.dep_ == "prep" and prep.lower_ == "of" for prep in tok.children)


_DIGIT_WORDS = frozenset({"digit", "digits"})


def is_place_value_question(tok: Token) -> bool:
    """ "value" asked of a digit inside a number — "the value of 2 in 2,453", "the value of seven in 37,984",
    "the value of each digit" — is the place-value lesson itself, not a quantity asked for."""
    if tok.lower_ != "value":
        return False
    for prep in tok.children:
        if prep.dep_ != "prep" or prep.lower_ != "of":
            continue
        for obj in prep.children:
            if obj.dep_ != "pobj":
                continue
            if obj.lower_ in _DIGIT_WORDS:
                return True
            after = obj.doc[obj.i + 1 : obj.i + 2]
            if obj.like_num and len(after) == 1 and after[0].lower_ == "in":
                return True
    return False


def is_addressed_name(span: Span) -> bool:
    """A name in a greeting: "Hi Marcus!", "Thanks Aiden", "Bye Sofia" — whom the speaker talks to."""
    toks = [t for t in span if not t.is_punct]
    if not toks:
        return False
    if toks[0].lower_ in _GREETINGS:
        toks = toks[1:]
    elif toks[0].i == 0 or span.doc[toks[0].i - 1].lower_ not in _GREETINGS:
        return False
    return bool(toks) and all(t.pos_ == "PROPN" for t in toks)


def english_candidates(doc: Doc) -> list[Candidate]:
    out: list[Candidate] = []
    if doc.has_annotation("ENT_IOB"):
        for ent in doc.ents:
            if ent.label_ in NER_LABELS:
                ent_span = _trim_tokens(ent) or (ent.start_char, ent.end_char)
                out.append(Candidate(ent_span[0], ent_span[1], ExtractorName.ner, CONF_NER, ent.label_))
    if doc.has_annotation("DEP"):
        for chunk in doc.noun_chunks:
            for part in _split_coordination(chunk):
                if len(part) > 6:
                    continue  # long chunks are descriptions, not names
                span = _trim_tokens(part)
                if span is None:
                    continue
                # Trimming drops fillers: "your best shot" would become "shot"; judge the phrase whole.
                lead = part.start
                while lead < part.end and (doc[lead].pos_ in ("DET", "PRON") or doc[lead].tag_ in ("PRP$", "WP$")):
                    lead += 1
                if lead < part.end - 1 and meta_reason(concept_key(doc[lead : part.end].text)):
                    continue
                if is_evaluation(part):
                    continue  # "Adam Sandler is a riot", "such a heart breaker": how it is, not a topic
                bare_head = span[1] - span[0] == len(part.root)
                if bare_head and is_place_value_question(part.root):
                    # "the value of 2 in 2,453": the lesson is place value, and "value" alone says none of it
                    out.append(Candidate(span[0], span[1], ExtractorName.noun_chunk, CONF_CHUNK, name="place value"))
                    continue
                if is_enumeration_label(part) or (is_quantity_head(part.root) and bare_head):
                    continue  # "Option C", "the result of 4 + 5": a place in the exercise, a quantity asked
                if is_addressed_name(part):
                    continue  # "Hi Marcus!", "Bye Sofia": the person addressed
                root = part.root
                if (is_counted(root) and not any(t.pos_ == "PROPN" for t in part if t.i != root.i)) or (
                    len(part) == 1 and is_counting_subject(root)
                ):
                    continue  # "5 glasses", "how many bags does Max have": what the exercise counts, and who
                proper = any(t.pos_ == "PROPN" for t in part)
                out.append(Candidate(span[0], span[1], ExtractorName.noun_chunk, CONF_PROPER if proper else CONF_CHUNK))
    out.extend(operation_candidates(doc))
    # Proper nouns and technical-looking words the chunker missed (tagger errors on chat text).
    for tok in doc:
        if tok.pos_ == "PROPN" or _looks_technical(tok.text):
            if tok.is_stop or tok.like_num or is_counting_subject(tok):
                continue
            if (tok.i + 1 < len(doc) and is_enumeration_label(doc[tok.i : tok.i + 2])) or is_addressed_name(
                doc[tok.i : tok.i + 1]
            ):
                continue
            out.append(Candidate(tok.idx, tok.idx + len(tok.text), ExtractorName.noun_chunk, CONF_PROPER))
    idioms = idiom_spans(doc.text)
    if idioms:  # "Give it a shot.", "No worries": nothing inside a set phrase is a concept
        out = [c for c in out if not any(a <= c.start and c.end <= b for a, b in idioms)]
    return out
