"""Short, real-style student turns (as in the Bridge tutoring chats) yield no concepts."""

from __future__ import annotations

import pytest

from graphmem.extraction import ConceptExtractor

NOISE = [
    "36",
    "ok",
    "idk",
    "4 m",
    "yes",
    "i dont know",
    "12",
    "?",
    "OK!",
    "Yes.",
    "no",
    "k",
    "lol",
    "hmm",
    "thanks",
    "sorry",
    "I don't know",
    "0.8",
    "3/4",
    "x = 5",
    "2 cm",
    "soory",
    "ok thank you",
    "yes i am done",
    "好的",
    "嗯嗯",
    "谢谢",
    "不知道",
    "?? ",
    "...",
]


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    return ConceptExtractor()


def test_noise_turns_create_no_concepts(ex: ConceptExtractor) -> None:
    out = ex.extract(NOISE, ["user"] * len(NOISE))
    found = {t: [c.surface for c in r.concepts] for t, r in zip(NOISE, out) if r.concepts}
    assert found == {}
    assert all(r.relations == [] and r.stances == [] for r in out)


def test_generic_words_are_skipped_with_a_reason(ex: ConceptExtractor) -> None:
    r = ex.extract(["That is a good question, thanks for the answer"], ["user"])[0]
    assert r.concepts == []
    assert {s.reason for s in r.skipped} <= {"generic", "stopword", "numeric", "too_short", "no_letters"}


def test_no_concept_holds_a_noncharacter(ex: ConceptExtractor) -> None:
    # U+FFFE / U+FFFF cannot be carried by XML (the block) and name nothing: sanitize() blanks them.
    for text in ("Kubernetes\uffff is great", "看过Ab\ufffe片吗？", "I like \uffffReact\ufffe."):
        for m in ex.extract([text])[0].concepts:
            assert "\ufffe" not in m.name + m.surface and "\uffff" not in m.name + m.surface, m


@pytest.mark.parametrize(
    "text,kept",
    [
        # Hand-written: the pieces of an address (https, visitor, edu, a mail user) name nothing, and the
        # sentence around it keeps its own concepts and its spans.
        ("资料在https://visitor.pku.edu.cn/网站上", set()),
        ("I found it at https://www.example.com/docs/numpy, and I love Python.", {"Python"}),
        ("Mail me at jane.doe@uni.edu about Django (see http://x.org/a_(b)).", {"Django"}),
    ],
)
def test_web_and_mail_addresses_name_nothing(ex: ConceptExtractor, text: str, kept: set[str]) -> None:
    r = ex.extract([text], ["user"])[0]
    assert {c.surface for c in r.concepts} == kept
    for c in r.concepts:
        assert text[c.start : c.end] == c.surface


def test_no_piece_of_an_address_in_a_chinese_turn(ex: ConceptExtractor) -> None:
    text = "门票可以在www.bjzoo.com上买，有问题发邮件到zoo@bj.gov.cn。"
    surfaces = [c.surface for c in ex.extract([text], ["assistant"])[0].concepts]
    assert surfaces and not [s for s in surfaces if any("a" <= ch <= "z" for ch in s.lower())]


def test_blank_links_keeps_the_length_and_the_text_around() -> None:
    from graphmem.extraction.normalize import blank_links

    text = "see https://a.b/c?d=1, or www.x.cn。mail a+b@c.io!"
    out = blank_links(text)
    assert len(out) == len(text)
    assert out.split() == ["see", ",", "or", "。mail", "!"]
    assert blank_links("C++ and C# at 3:00") == "C++ and C# at 3:00"


@pytest.mark.parametrize(
    "text,role",
    [
        ("Give it a shot.", "assistant"),
        ("No worries.", "assistant"),
    ],
)
def test_nothing_inside_a_chat_set_phrase_is_a_concept(ex: ConceptExtractor, text: str, role: str) -> None:
    # The nouns of "give it a shot", "no worries", "my bad" (graphmem/data/chat_idioms_en.txt) encourage or
    # excuse; they are not what the chat is about.
    r = ex.extract([text], [role])[0]
    assert [c.surface for c in r.concepts] == []


def test_a_set_phrase_noun_used_on_its_own_is_still_a_concept(ex: ConceptExtractor) -> None:
    # "shot" outside the set phrase (a flu shot, a shot in basketball) is an ordinary noun.
    assert "flu shot" in {c.key for c in ex.extract(["I got a flu shot yesterday"], ["user"])[0].concepts}
    # A concept after the set phrase in the same sentence is still taken.
    r = ex.extract(["Give it a shot with the quadratic formula"], ["user"])[0]
    assert {c.key for c in r.concepts} == {"quadratic formula"}


# Hand-written sentences in the shape of tutoring exercises (not copied from any chat): a place in the
# exercise, a quantity asked for, a hyphenated numeral modifier. Expected sets derived by hand.
@pytest.mark.parametrize(
    ("text", "absent", "present"),
    [
        ("Is the right pick Option D or Option A?", {"option d", "option a", "option"}, set()),
        ("Check Step 3 before you go on to Question 5.", {"step 3", "question 5", "step", "question"}, set()),
        ("Work out the result of 7 times 8 first.", {"result"}, set()),
        # "value" asked of a digit in a number is the place-value lesson, named so; of an expression it is the
        # quantity asked for (graphmem/data/relational_heads_en.txt, is_place_value_question).
        ("What is the value of 2 in 2,453?", {"value"}, {"place value"}),
        ("What is the value of the underlined digit?", {"value"}, {"place value"}),
        ("What is the value of 13 times 3?", {"value"}, set()),
        ("Now find the value of the length.", {"value"}, {"length"}),
        ("So the result of 12 + 30 is 42?", {"result"}, set()),
        ("We still need the total of the heights.", {"total"}, {"height"}),
        ("Hi Marcus! Shall we start with fractions?", {"marcus", "hi marcus"}, {"fraction"}),
        ("Thanks Priya, see you next week.", {"priya", "thanks priya"}, set()),
        ("Goodbye Tom, and please fill out the feedback form.", {"goodbye tom", "tom", "feedback form"}, set()),
        ("Thanks, Django is exactly what I needed.", set(), {"django"}),
        ("Today we review place value with the class.", set(), {"place value"}),
        ("Can you add three-digit numbers in your head?", {"digit number"}, {"three digit number"}),
        ("I take Vitamin C and I'm reading about Plan B.", set(), {"vitamin c", "plan b"}),
    ],
)
def test_exercise_labels_and_quantities_are_not_concepts(
    ex: ConceptExtractor, text: str, absent: set[str], present: set[str]
) -> None:
    keys = {c.key for c in ex.extract([text], ["assistant"])[0].concepts}
    assert not keys & absent, keys
    assert present <= keys, keys
