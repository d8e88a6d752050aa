"""Replies about what the other speaker just named (replies.py), the newest stance being the current
one in the store (real Neo4j), and the whole path through the HTTP API.

The dialogues are WRITTEN BY HAND for these tests; expectations follow the rules in
graphmem/extraction/replies.py and stances.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphmem.extraction.extractor import ConceptExtractor
from graphmem.models import Catalog, CatalogConcept, Stance, TurnIn
from graphmem.settings import PROJECT_ROOT

MOVIES = Catalog(
    concepts=[
        CatalogConcept(name=n, type="product")
        for n in ("Spanglish", "Heat", "Arrival", "Paddington", "Inception", "Tenet", "功夫", "大话西游")
    ]
)


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    return ConceptExtractor(MOVIES)


def stances(ex: ConceptExtractor, turns: list[tuple[str, str]]) -> list[dict[str, str]]:
    out = ex.extract([t for _, t in turns], [r for r, _ in turns])
    return [{s.name: s.stance.value for s in e.stances} for e in out]


def test_reply_evaluates_what_the_assistant_named(ex: ConceptExtractor) -> None:
    got = stances(ex, [("assistant", "Have you seen Spanglish?"), ("user", "I didn't like that one at all.")])
    assert got[1] == {"Spanglish": "dislikes"}
    got = stances(ex, [("assistant", "How about Arrival? It is great."), ("user", "Sounds good, I'll check it out!")])
    assert got[1] == {"Arrival": "interested"}


def test_reply_keeps_its_evidence_span(ex: ConceptExtractor) -> None:
    text = "Meh, too slow for my taste."
    out = ex.extract(["What about Tenet?", text], ["assistant", "user"])[1]
    (s,) = out.stances
    assert s.name == "Tenet" and s.stance is Stance.dislikes and text[s.start : s.end] == s.cue


def test_reply_to_several_names_and_follow_up_turns(ex: ConceptExtractor) -> None:
    got = stances(ex, [("assistant", "Maybe Heat or Inception?"), ("user", "No I haven't and I don't want to.")])
    assert got[1] == {"Heat": "dislikes", "Inception": "dislikes"}
    # "Haven't seen it" says nothing; the follow-up turn still speaks about the same film.
    got = stances(
        ex,
        [
            ("assistant", "Have you seen Paddington?"),
            ("user", "Haven't seen it."),
            ("user", "But it sounds fun, I'll add it to my list."),
        ],
    )
    assert got[1] == {} and got[2] == {"Paddington": "interested"}


def test_agreeing_takes_the_assistants_opinion(ex: ConceptExtractor) -> None:
    got = stances(ex, [("assistant", "Inception was really good."), ("user", "It was!")])
    assert got[1] == {"Inception": "interested"}
    # Agreeing with a question is no opinion.
    assert stances(ex, [("assistant", "Have you seen Inception?"), ("user", "Yes.")])[1] == {}


def test_no_reply_stance_without_an_assistant_turn_or_after_own_names(ex: ConceptExtractor) -> None:
    assert stances(ex, [("user", "I didn't like that one at all.")]) == [{}]
    got = stances(ex, [("assistant", "Have you seen Spanglish?"), ("user", "Arrival is great.")])
    assert got[1] == {"Arrival": "interested"}


def test_chinese_reply(ex: ConceptExtractor) -> None:
    got = stances(ex, [("assistant", "你看过功夫吗？"), ("user", "那部我看过，挺无聊的。")])
    assert got[1] == {"功夫": "dislikes"}
    got = stances(ex, [("assistant", "推荐你看大话西游。"), ("user", "好呀，我很想看！")])
    assert got[1] == {"大话西游": "interested"}


# -- the store: newest evidence is the current stance, history stays ---------------------------------


@pytest.mark.neo4j
def test_newest_evidence_wins_and_history_stays(store, tenant, settings) -> None:
    from graphmem.service import GraphMemory

    mem = GraphMemory(settings, store=store)  # the session's store: not closed here
    mem.start()
    mem.put_catalog(tenant, Catalog(concepts=[CatalogConcept(name="PHP")]))
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    # Delivered out of order: the later call carries the older turn; its time decides, not arrival.
    mem.ingest(
        tenant, "u1", "s2", [TurnIn(turn_id="new", text="I can't stand PHP anymore.", ts=t0 + timedelta(days=30))]
    )
    mem.ingest(tenant, "u1", "s1", [TurnIn(turn_id="old", text="I really love PHP.", ts=t0)])
    node = next(n for n in mem.graph(tenant, "u1")["nodes"] if n["name"] == "PHP")
    assert node["stance"] == "dislikes"
    history = mem.store.concept_stances(mem.user(tenant, "u1"), "php")
    assert [(h["turn_id"], h["stance"]) for h in history] == [("old", "interested"), ("new", "dislikes")]
    # Newer still: the user came back to it.
    mem.ingest(
        tenant, "u1", "s3", [TurnIn(turn_id="newer", text="PHP finally clicked for me.", ts=t0 + timedelta(days=60))]
    )
    node = next(n for n in mem.graph(tenant, "u1")["nodes"] if n["name"] == "PHP")
    assert node["stance"] == "knows"


# -- the public API end to end ---------------------------------------------------------------------------


@pytest.mark.neo4j
def test_stances_through_the_http_api(api, api_tenants, user_id) -> None:
    catalog = (PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes()
    with api.client(api_tenants.key_a) as a:
        assert a.put("/v1/catalog", content=catalog, headers={"content-type": "application/yaml"}).status_code == 200
        turns = [
            {"turn_id": "t0", "role": "user", "text": "My brother loves PHP.", "ts": "2026-11-20T10:00:00Z"},
            {"turn_id": "t1", "role": "user", "text": "NumPy keeps tripping me up.", "ts": "2026-11-20T10:01:00Z"},
            {"turn_id": "t2", "role": "user", "text": "以前我不会SQL，现在已经会了。", "ts": "2026-11-20T10:02:00Z"},
            {
                "turn_id": "t3",
                "role": "assistant",
                "text": "Flask is a small web framework.",
                "ts": "2026-11-20T10:03:00Z",
            },
            {"turn_id": "t4", "role": "user", "text": "Sounds good, I'd like to try it.", "ts": "2026-11-20T10:04:00Z"},
        ]
        r = a.post(f"/v1/users/{user_id}/turns", json={"session_id": "s1", "turns": turns})
        assert r.status_code == 200, r.text
        # Canonical names: /graph shows names in the user's language (English here), e.g. SQL基础 as its alias.
        nodes = {n["canonical_name"]: n["stance"] for n in a.get(f"/v1/users/{user_id}/graph").json()["nodes"]}
        assert nodes.get("PHP") is None  # someone else's taste
        assert nodes["NumPy"] == "confused"
        assert nodes["SQL基础"] == "knows"
        assert nodes["Flask"] == "interested"
        a.delete(f"/v1/users/{user_id}")


# -- dislike phrasings and replies that mix a dislike with a concession (cases WRITTEN BY HAND) --------


def test_a_liking_after_a_dislike_in_one_reply_does_not_take_it_back(ex: ConceptExtractor) -> None:
    got = stances(
        ex,
        [
            ("assistant", "Have you seen Spanglish?"),
            ("user", "I'm not really a fan of that one. I like the first half hour but then it drags."),
        ],
    )
    assert got[1].get("Spanglish") == "dislikes"
    got = stances(
        ex,
        [
            ("assistant", "How about Tenet?"),
            ("user", "That's a bit too long for my taste. I was hoping for something older."),
        ],
    )
    assert got[1].get("Tenet") == "dislikes"


def test_a_follow_up_turn_extends_a_reply_without_reversing_it(ex: ConceptExtractor) -> None:
    # Without a reference to the film the follow-up is a general taste, not a new verdict on it.
    got = stances(
        ex,
        [
            ("assistant", "How about Inception?"),
            ("user", "I didn't like it much."),
            ("user", "I like his funnier ones."),
        ],
    )
    assert got[1] == {"Inception": "dislikes"} and "Inception" not in got[2]
    # With one ("it"), the user changes their mind and the newest evidence wins.
    got = stances(
        ex,
        [
            ("assistant", "How about Inception?"),
            ("user", "I didn't like it much at first."),
            ("user", "But I loved it the second time."),
        ],
    )
    assert got[1] == {"Inception": "dislikes"} and got[2] == {"Inception": "interested"}


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        ([("user", "Tenet was way too tedious.")], {"Tenet": "dislikes"}),
        ([("user", "Didn't really care too much for Tenet.")], {"Tenet": "dislikes"}),
        ([("user", "Arrival was not nearly as good.")], {"Arrival": "dislikes"}),
        ([("assistant", "What about Paddington?"), ("user", "sort of meh")], {"Paddington": "dislikes"}),
        ([("assistant", "What about Paddington?"), ("user", "I didn't like it so much")], {"Paddington": "dislikes"}),
        ([("user", "Arrival was pretty good.")], {"Arrival": "interested"}),
        ([("user", "Inception is a great movie!")], {"Inception": "interested"}),
    ],
)
def test_natural_liking_and_disliking(ex: ConceptExtractor, turns: list[tuple[str, str]], expected: dict) -> None:
    assert stances(ex, turns)[-1] == expected


def test_plain_answers_get_no_stance(ex: ConceptExtractor) -> None:
    # Tutoring answers: numbers and short corrections are no opinion of anything.
    for question, answer in [
        ("What is 3 times 4?", "12, I think."),
        ("Can you simplify x+2x?", "no, it is 3x"),
        ("What do you get for the first one?", "I got 5 for the first one"),
    ]:
        assert stances(ex, [("assistant", question), ("user", answer)])[1] == {}


# -- which antecedent a reply speaks about, and kinds and follow-ups (cases WRITTEN BY HAND) ----------


def test_an_ordinal_reference_picks_the_antecedent_in_reading_order(ex: ConceptExtractor) -> None:
    turns = [
        ("assistant", "How about Paddington or Tenet?"),
        ("user", "Loved the first one."),
        ("user", "Meh on the second one."),
    ]
    got = stances(ex, turns)
    assert got[1] == {"Paddington": "interested"} and got[2] == {"Tenet": "dislikes"}
    got = stances(ex, [("assistant", "Try Arrival, or maybe Spanglish."), ("user", "Not a fan of the latter.")])
    assert got[1] == {"Spanglish": "dislikes"}


def test_an_ordinal_past_the_names_on_the_table_is_about_something_else(ex: ConceptExtractor) -> None:
    # One title suggested: "the second one" / "the third one" is a sequel, not the suggestion.
    got = stances(
        ex, [("assistant", "Have you seen Heat?"), ("user", "Loved it. I did not like the second one though.")]
    )
    assert got[1] == {"Heat": "interested"}
    assert (
        stances(ex, [("assistant", "Have you seen Paddington?"), ("user", "I did not care for the third one.")])[1]
        == {}
    )
    # With two titles on the table it points at the second.
    got = stances(ex, [("assistant", "How about Paddington or Tenet?"), ("user", "I did not like the second one.")])
    assert got[1] == {"Tenet": "dislikes"}


def test_a_dislike_is_the_verdict_over_a_later_word_of_confusion(ex: ConceptExtractor) -> None:
    turns = [
        ("assistant", "Spanglish is one of my favourites."),
        ("user", "I didn't like that one much but I can't remember why."),
    ]
    assert stances(ex, turns)[1] == {"Spanglish": "dislikes"}


def test_the_words_before_a_cue_are_not_read_as_a_clause_of_their_own(ex: ConceptExtractor) -> None:
    # Looking for an earlier dislike in the reply, the text before "was great" is cut at its clause's
    # start: "The first part" alone is no clause (the preference model had read it as a dislike).
    turns = [
        ("assistant", "Have you seen Paddington?"),
        ("user", "The first part was great. I look forward to the next one."),
    ]
    assert stances(ex, turns)[1] == {"Paddington": "interested"}


def test_a_person_named_in_between_keeps_the_suggested_title(ex: ConceptExtractor) -> None:
    turns = [
        ("assistant", "Have you seen Arrival?"),
        ("user", "Another fine piece of work by Denis Villeneuve."),
        ("user", "I don't really like it though."),
    ]
    assert stances(ex, turns)[2].get("Arrival") == "dislikes"


def test_disliking_a_kind_in_a_reply_dislikes_the_suggestion(ex: ConceptExtractor) -> None:
    got = stances(
        ex, [("assistant", "Have you seen Tenet?"), ("user", "I haven't seen Tenet. I'm not into spy movies.")]
    )
    assert got[1].get("Tenet") == "dislikes"
    got = stances(ex, [("assistant", "What about Paddington?"), ("user", "I don't really like those kinds of films.")])
    assert got[1].get("Paddington") == "dislikes"
    # The user moved on to a title of their own: the kind is not said of the suggestion.
    got = stances(ex, [("assistant", "Have you seen Tenet?"), ("user", "I loved Arrival. I'm not into spy movies.")])
    assert "Tenet" not in got[1]


def test_a_follow_up_turn_does_not_reverse_a_liking(ex: ConceptExtractor) -> None:
    turns = [
        ("assistant", "How about Paddington or Arrival?"),
        ("user", "Oh those sound really nice."),
        ("user", "Sorry, I am not easy today."),
    ]
    got = stances(ex, turns)
    assert got[1]["Paddington"] == got[1]["Arrival"] == "interested"
    assert "Paddington" not in got[2] and "Arrival" not in got[2]
