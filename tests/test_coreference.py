"""A user turn that refers back to what the assistant just named mentions it (coreference.py).

Expected antecedents follow the rules in the module docstring by hand: only a
user turn right after an assistant turn, a third-person reference in it, the
assistant turn's first name-like mention that the user turn does not name.
The last tests run the same rule across two ingest calls against the real Neo4j.
"""

from __future__ import annotations

import pytest

from graphmem.extraction.coreference import carry_references
from graphmem.extraction.extractor import ConceptExtractor
from graphmem.models import ConceptMention, ExtractorName, PriorTurn, TurnExtraction, TurnIn
from graphmem.service import GraphMemory
from graphmem.store import UserRef


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    return ConceptExtractor()


def _m(text: str, name: str, confidence: float = 0.7, lang: str = "zh") -> ConceptMention:
    start = text.index(name)
    return ConceptMention(
        key=name.casefold(),
        name=name,
        language=lang,
        start=start,
        end=start + len(name),
        surface=name,
        extractor=ExtractorName.pattern,
        confidence=confidence,
    )


def _refs(ex: TurnExtraction) -> list[tuple[str, str]]:
    return [(m.surface, m.name) for m in ex.concepts if m.extractor is ExtractorName.coreference]


def test_pronoun_after_an_assistant_answer_mentions_its_name(ex: ConceptExtractor) -> None:
    turns = ["这部片的导演是谁？", "是马克·韦布。", "那你对他了解吗？"]
    out = ex.extract(turns, ["user", "assistant", "user"])
    assert _refs(out[2]) == [("他", "马克·韦布")]
    ref = next(m for m in out[2].concepts if m.extractor is ExtractorName.coreference)
    assert turns[2][ref.start : ref.end] == "他"  # provenance points at the words that carried it
    assert ref.confidence < out[1].concepts[0].confidence


def test_english_it_refers_to_the_subject_of_the_assistant_turn(ex: ConceptExtractor) -> None:
    out = ex.extract(["Django is built on Python.", "What else does it need?"], ["assistant", "user"])
    assert _refs(out[1]) == [("it", "Django")]


def test_he_or_she_needs_a_named_antecedent(ex: ConceptExtractor) -> None:
    # ReDial valid 8899: "He's a cutie..." / "yea he is" — "he" is the actor named earlier, never the
    # lower-case word saying what he is; a capitalised name is an antecedent.
    out = ex.extract(["He's a cutie...", "yea he is, still looks the same lol"], ["assistant", "user"])
    assert _refs(out[1]) == []
    out = ex.extract(["Have you seen Rider Strong in that?", "yea he is great"], ["assistant", "user"])
    assert _refs(out[1]) == [("he", "Rider Strong")]


def test_a_pronoun_continuing_the_assistants_own_refers_past_its_words(ex: ConceptExtractor) -> None:
    # ReDial valid 15462: "It topped the box office" already refers back; the user's "It's good!" points
    # where that "It" does, not at "box office". A pronoun of another kind changes referent.
    out = ex.extract(
        ["It topped the box office for the last month.", "I saw that one. It's good!"], ["assistant", "user"]
    )
    assert _refs(out[1]) == []
    out = ex.extract(["It was directed by Marc Webb.", "what else has he made?"], ["assistant", "user"])
    assert _refs(out[1]) == [("he", "Marc Webb")]
    # ReDial valid 12041: a name after the assistant's "It" is what that "It" introduces.
    out = ex.extract(["It's called Cure for Wellness.", "I heard it was really good"], ["assistant", "user"])
    assert _refs(out[1]) == [("it", "Cure for Wellness")]


def test_no_reference_without_a_pronoun_or_after_a_user_turn(ex: ConceptExtractor) -> None:
    out = ex.extract(["是马克·韦布。", "好的，谢谢。"], ["assistant", "user"])
    assert _refs(out[1]) == []
    out = ex.extract(["我喜欢马克·韦布。", "你对他了解吗？"], ["user", "user"])
    assert _refs(out[1]) == []
    # Assistant turns never gain references: the user did not speak there.
    out = ex.extract(["我喜欢马克·韦布。", "他拍过很多电影。"], ["user", "assistant"])
    assert _refs(out[1]) == []


def test_english_turn_naming_its_own_concept_is_left_alone(ex: ConceptExtractor) -> None:
    out = ex.extract(["Django is built on Python.", "Is it like Flask?"], ["assistant", "user"])
    assert _refs(out[1]) == []


def test_common_nouns_and_names_the_user_repeats_are_not_antecedents() -> None:
    a_text, u_text = "这个城市有马克·韦布的电影节。", "他也去过马克·韦布那里吗？"
    assistant = TurnExtraction(language="zh", concepts=[_m(a_text, "城市", 0.4), _m(a_text, "马克·韦布")])
    user = TurnExtraction(language="zh", concepts=[_m(u_text, "马克·韦布")])
    out = carry_references([a_text, u_text], ["assistant", "user"], [assistant, user])
    assert _refs(out[1]) == []  # the only name-like antecedent is one the user names anyway
    assert out[0] is assistant and user.concepts == [_m(u_text, "马克·韦布")]  # inputs untouched


def test_prior_turn_from_an_earlier_batch_is_used() -> None:
    a_text = "导演是大卫·芬奇。"
    prior = PriorTurn("assistant", (_m(a_text, "大卫·芬奇"),))
    user = TurnExtraction(language="zh")
    out = carry_references(["他还拍过什么？"], ["user"], [user], prior)
    assert _refs(out[0]) == [("他", "大卫·芬奇")]


@pytest.mark.neo4j
def test_reference_across_two_ingest_calls_counts_as_a_user_mention(store, settings, tenant) -> None:
    mem = GraphMemory(settings, store=store)
    mem.ingest(tenant, "ana", "s1", [TurnIn(turn_id="a1", role="assistant", text="这部片的导演是马克·韦布。")])
    before = {n["key"]: n for n in mem.graph(tenant, "ana")["nodes"]}
    key = next(k for k, n in before.items() if n["name"] == "马克·韦布")
    assert before[key]["weight"] < settings.threshold  # the assistant alone: 10 × 0.3 = 3

    result = mem.ingest(tenant, "ana", "s1", [TurnIn(turn_id="u1", role="user", text="那你对他了解吗？")])
    ref = [m for m in result.edits[0].extraction.concepts if m.extractor is ExtractorName.coreference]
    assert [(m.surface, m.key) for m in ref] == [("他", key)]
    after = {n["key"]: n for n in mem.graph(tenant, "ana")["nodes"]}
    assert after[key]["weight"] > settings.threshold  # 10 (user) + 3 (assistant) before propagation
    mentions = store.concept_mentions(UserRef(tenant, "ana"), key)
    assert {(m["turn_id"], m["role"], m["extractor"]) for m in mentions} == {
        ("a1", "assistant", "pattern"),
        ("u1", "user", "coreference"),
    }

    # Another session does not see this session's last turn.
    result = mem.ingest(tenant, "ana", "s2", [TurnIn(turn_id="u2", role="user", text="他是谁？")])
    assert not [m for m in result.edits[0].extraction.concepts if m.extractor is ExtractorName.coreference]
