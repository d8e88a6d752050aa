"""How people say a film did not work for them: cue families (data/stance_en.yaml), the lesser side of a
comparison (stances.py `_mark_lesser`) and disliking a series in reply to one of its instalments
(replies.py `_series_dislike`).

Every sentence is WRITTEN BY HAND for these tests (none is taken from a data set); the comment above
each group names the family it tests.
"""

from __future__ import annotations

import pytest

from graphmem.extraction.extractor import ConceptExtractor
from graphmem.models import Catalog, CatalogConcept

FILMS = Catalog(
    concepts=[
        CatalogConcept(name=n, type="product")
        for n in ("Paddington", "Paddington 2", "Heat", "Tenet", "Arrival", "Halloween", "Halloween II", "The Mummy")
    ]
)


@pytest.fixture(scope="module")
def ex() -> ConceptExtractor:
    return ConceptExtractor(FILMS)


def said(ex: ConceptExtractor, turns: list[tuple[str, str]]) -> dict[str, str]:
    """The newest stance per film name over the dialogue (what the store keeps as current)."""
    out: dict[str, str] = {}
    for e in ex.extract([t for _, t in turns], [r for r, _ in turns]):
        out.update({s.name: s.stance.value for s in e.stances})
    return out


def user(text: str) -> list[tuple[str, str]]:
    return [("user", text)]


@pytest.mark.parametrize(
    ("text", "film"),
    [
        # "never liked / enjoyed": a cue of its own, as sure as "never cared for" (session 32).
        ("Never really enjoyed Tenet.", "Tenet"),
        ("I never liked Heat.", "Heat"),
        # "not such a fan of": the plain fan cue allows nothing between "not" and "a fan".
        ("I was not such a fan of Tenet.", "Tenet"),
        ("Honestly I'm not so much a fan of Heat.", "Heat"),
        # A weaker-than comparison with nothing after it: "not nearly as good".
        ("Paddington 2 was not nearly as good.", "Paddington 2"),
        ("I watched Tenet last week, not half as good, sadly.", "Tenet"),
        # Disappointment, spelt right or commonly misspelt.
        ("I was dissapointed by Arrival.", "Arrival"),
        ("Tenet was kind of disapointing.", "Tenet"),
        # A film that failed: fell flat, a letdown, a dud, dragged on.
        ("The jokes in Heat fell flat for me.", "Heat"),
        ("Arrival was a bit of a letdown.", "Arrival"),
        ("Tenet was a total dud.", "Tenet"),
        ("Tenet dragged on forever.", "Tenet"),
        # "It didn't <grab> me" with more verbs: impress, hook, work for (enthuse: a known miss below).
        ("Tenet never hooked me.", "Tenet"),
        ("Honestly Heat didn't work for me.", "Heat"),
        # Mild negative verdicts after "was a little / rather": corny, cheesy, mediocre, forgettable.
        ("The Mummy was rather forgettable.", "The Mummy"),
        # The verdict in the next sentence, through "it": read since the English model reads the sentences after
        # the name (a known miss before that).
        ("I saw Arrival. It didn't really enthuse me.", "Arrival"),
    ],
)
def test_disliking_a_film_in_common_phrasings(ex: ConceptExtractor, text: str, film: str) -> None:
    assert said(ex, user(text))[film] == "dislikes"


# A known miss since the English model decides every name (2026-12-04): a mild verdict is a weak rule
# dislike, below `trust_dislikes`, and the model reads "saw … thought" as liking. Kept visible, not hidden.
@pytest.mark.xfail(reason="known limit: weak rule dislike overruled by the model", strict=False)
@pytest.mark.parametrize(
    ("text", "film"),
    [
        ("I saw Tenet but thought it was a little corny.", "Tenet"),
        # Written for session 32's "never liked" cue: the perfect "have never <done> X" is read as never having
        # met it (no stance), before any cue.
        ("I have never liked Heat.", "Heat"),
    ],
)
def test_known_miss_a_mild_verdict(ex: ConceptExtractor, text: str, film: str) -> None:
    assert said(ex, user(text))[film] == "dislikes"


def test_but_not_stuff_like_dislikes_only_the_name_after_it(ex: ConceptExtractor) -> None:
    # Family: "I like A but not (in) stuff like B".
    got = said(ex, user("I enjoyed Heat a lot but not stuff like Tenet."))
    assert got == {"Heat": "interested", "Tenet": "dislikes"}
    # With no name after it, the cue does not reach back to the liked film.
    assert said(ex, user("I enjoyed Heat but not in stuff like that."))["Heat"] == "interested"


def test_but_not_repeats_the_verb_before_it_negated(ex: ConceptExtractor) -> None:
    # Family: an elliptic "A but not B" takes the clause before's verb, negated.
    # Seen A but not B: B is not seen, which is no opinion of it.
    assert said(ex, user("I have seen Arrival but not Tenet.")) == {"Arrival": "knows"}
    # Like A but not B: B is disliked.
    assert said(ex, user("I like Arrival but not Tenet.")) == {"Arrival": "interested", "Tenet": "dislikes"}


def test_the_lesser_side_of_a_comparison_is_disliked(ex: ConceptExtractor) -> None:
    # Family: "X was better than Y" said by the user: Y is the one liked less.
    assert said(ex, user("I liked Paddington way better than Arrival.")) == {
        "Paddington": "interested",
        "Arrival": "dislikes",
    }
    assert said(ex, user("Honestly it was better than the original Halloween."))["Halloween"] == "dislikes"
    # A negated comparison praises the name after it; a question or someone else's view says nothing.
    assert said(ex, user("Nothing is better than Heat."))["Heat"] == "interested"
    assert said(ex, user("It doesn't get better than Heat."))["Heat"] == "interested"
    assert "Heat" not in said(ex, user("Is it better than Heat?"))
    assert "Heat" not in said(ex, user("My sister says it is better than Heat."))


def test_disliking_a_series_in_reply_dislikes_the_suggested_instalment(ex: ConceptExtractor) -> None:
    # Family: a reply about the title the other speaker just named, by the name of its series.
    got = said(ex, [("assistant", "Have you seen Halloween II?"), ("user", "Not a Halloween fan, sorry.")])
    assert got["Halloween II"] == "dislikes"
    got = said(ex, [("assistant", "Try Paddington 2, it's lovely."), ("user", "I never liked Paddington.")])
    assert got["Paddington 2"] == "dislikes"
    # Liking the series says nothing new about the instalment; another film's name is no series.
    got = said(ex, [("assistant", "Have you seen Halloween II?"), ("user", "I loved Halloween!")])
    assert "Halloween II" not in got
    got = said(ex, [("assistant", "Have you seen Halloween II?"), ("user", "I can't stand Heat.")])
    assert "Halloween II" not in got


# A partner's taste is someone else's: "my fiancée doesn't want to" is no dislike of the user's.
def test_a_fiancees_taste_is_not_the_users(ex: ConceptExtractor) -> None:
    got = said(
        ex, [("assistant", "Have you seen Paddington?"), ("user", "Not yet. I want to but my fiancee doesn't want to.")]
    )
    assert got.get("Paddington") == "interested"
    assert said(ex, user("My fiancé hates Tenet but I love it."))["Tenet"] == "interested"


# "I hate to rush off / to say goodbye" is a courtesy before leaving, not a dislike of the film just
# praised; "I hate to watch X alone", "I hated X" still dislike.
def test_a_courtesy_with_hate_to_is_no_dislike(ex: ConceptExtractor) -> None:
    assert said(ex, user("I loved Arrival. I hate to rush off but I have to go now."))["Arrival"] == "interested"
    got = said(
        ex,
        [("assistant", "Did you like Arrival?"), ("user", "Loved it! Well, I hate to say goodbye but dinner is ready")],
    )
    assert got["Arrival"] == "interested"
    assert said(ex, user("I hate to watch Tenet alone."))["Tenet"] == "dislikes"
    assert said(ex, user("I hated Heat."))["Heat"] == "dislikes"


# A request that opens by refusing a name dislikes it; "the likes (of)" is a noun ("such films"), not
# liking, so it does not turn the refusal into a liking.
def test_a_refused_name_is_disliked(ex: ConceptExtractor) -> None:
    assert said(ex, user("No Halloween or the likes, please."))["Halloween"] == "dislikes"
    assert said(ex, user("nope Tenet"))["Tenet"] == "dislikes"
    # "No," answering a question is its own clause: what follows decides.
    assert said(ex, user("No, Tenet is great."))["Tenet"] == "interested"
    assert "Arrival" not in said(ex, user("I have no time for Arrival this week"))


def test_the_likes_of_is_no_liking(ex: ConceptExtractor) -> None:
    assert "Heat" not in said(ex, user("Something with explosions, the likes of Heat."))


# A refusal cue speaks of a name only: "no biggie" gives the common noun no dislike.
def test_no_biggie_refuses_no_name(ex: ConceptExtractor) -> None:
    got = said(ex, user("I have seen Arrival three times, no biggie."))
    assert got.get("Arrival") == "knows" and "biggie" not in got
