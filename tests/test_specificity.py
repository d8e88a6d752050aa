"""graphmem/specificity.py: which concepts are specific to a user. Pure, no database.

Golden cases are derived by hand from the rules' definitions (wordfreq Zipf values quoted in
specificity.py); the words come from the kinds of noise seen in real blocks (issue 13).
"""

from __future__ import annotations

import pytest

from graphmem.extraction.lexical import category_words, fragment_reason, meta_reason
from graphmem.models import ConceptNode
from graphmem.specificity import (
    SpecificityConfig,
    chat_reply_reason,
    demoted,
    df_reason,
    language_reason,
    node_reason,
    own_word_reason,
    written_as_title,
)

CFG = SpecificityConfig()


@pytest.mark.parametrize(
    "surface,reason",
    [
        ("hs", "too_short"),
        ("si", "too_short"),
        ("x+a)(x+b", "code_fragment"),
        ("variable 'b", "unbalanced"),
        ("f(x", "unbalanced"),
        ("a=b", "code_fragment"),
        ("WelI", "typo"),
        ("recomendashun", "not_a_word"),
        ("thigns", "typo"),  # wordfreq knows the slip (Zipf 1.15): two letters swapped in "things"
        ("youtoo", "typo"),  # "you too" typed together
        ("goood", "typo"),  # a letter typed twice
        ("ooh", "interjection"),  # vowels drawn out before an h: wordfreq knows them (blocks helper, issue 13)
        ("Oooh", "interjection"),
        ("ahh", "interjection"),
    ],
)
def test_fragments(surface: str, reason: str) -> None:
    assert fragment_reason(surface) == reason


@pytest.mark.parametrize(
    "surface",
    [
        "AI",
        "C++",
        "C#",
        "CI/CD",
        "scikit-learn",
        "JavaScript",
        "PyTorch",
        "LaTeX",
        "jump scares",
        "80s films",
        "Python基础",
        "don't",
        "numpy",
        "pytorch",  # rare, but no slip of a common word
        "scala",  # one substituted letter from "scale": substitutions are not tried
        "addend",  # "add" + "end" are not common enough to be two words typed together
        "pictograph",
        "Utah",  # a vowel and an h end it, but a consonant starts it
        "oath",
    ],
)
def test_names_are_not_fragments(surface: str) -> None:
    assert fragment_reason(surface) is None


@pytest.mark.parametrize(
    "key",
    [
        "recommendation",
        "accept",
        "opinion",
        "chatting",
        "like",
        "movie",
        "film",
        "previous step",
        "best shot",
        "good movie",
        "推荐",
    ],
)
def test_meta_words(key: str) -> None:
    assert meta_reason(key) == "meta_word"


@pytest.mark.parametrize("key", ["christmas movie", "horror", "django", "buddy cop movie", "机器学习"])
def test_not_meta(key: str) -> None:
    assert meta_reason(key) is None


@pytest.mark.parametrize(
    "key", ["process", "return", "feel", "shot", "summer course", "previous step", "portfolio site"]
)
def test_common_words_and_phrases_said_once(key: str) -> None:
    assert language_reason(key, mentions=1, config=CFG) in ("common_word", "common_phrase")


@pytest.mark.parametrize(
    "key",
    [
        "christmas movie",
        "jump scare",
        "80s film",
        "buddy cop movie",
        "fraction",
        "machine learning",
        "data science",
        "todo app",
        "python",
        "故宫",
        "周杰伦",
    ],
)
def test_specific_words_and_phrases_stay(key: str) -> None:
    assert language_reason(key, mentions=1, config=CFG) is None


def test_a_common_word_the_conversation_keeps_coming_back_to_stays() -> None:
    # "area" (Zipf 5.46) said once is noise; ten times in a lesson on area it is the topic.
    assert language_reason("area", 1, CFG) == "common_word"
    assert language_reason("area", CFG.repeat_mentions, CFG) is None


def test_chinese_common_words() -> None:
    assert language_reason("过程", 1, CFG) == "common_word"  # Zipf 5.5
    assert language_reason("八达岭", 1, CFG) is None


def test_category_words_are_heads_of_several_catalog_names() -> None:
    names = [
        "Django framework",
        "Flask framework",
        "REST API",
        "RESTful API",
        "REST APIs",
        "Python basics",
        "Scary Movie",
        "Bee Movie",
        "neural network",
        "neural networks",
        "deploy Django",
        "Django",
    ]
    cats = category_words(names)
    assert {"framework", "api", "movie"} <= cats
    assert "network" not in cats  # two spellings of one name
    assert "django" not in cats  # a name itself
    assert language_reason("framework", 1, CFG, cats) == "category_word"
    assert language_reason("apis", 1, CFG, cats) == "category_word"
    # A kind of the tenant's thing is a preference, not noise.
    assert language_reason("christmas movie", 1, CFG, cats) is None


def test_catalog_concepts_are_judged_by_share_only() -> None:
    node = ConceptNode(key="it", name="It", in_catalog=True, user_mentions=1)
    assert node_reason(node, CFG) is None


def test_document_frequency_needs_enough_users() -> None:
    assert df_reason(19, 19, CFG) is None  # fewer than df_min_users: a share means nothing
    assert df_reason(10, 40, CFG) == "common_in_tenant"  # 25 % > 20 %
    assert df_reason(8, 40, CFG) is None  # exactly 20 % is not above


def test_demoted_combines_the_checks() -> None:
    concepts = {
        "movie": ConceptNode(key="movie", name="movie", user_mentions=3),
        "christmas movie": ConceptNode(key="christmas movie", name="christmas movies", user_mentions=1),
        "taste": ConceptNode(key="taste", name="taste", user_mentions=1),
        "comedy": ConceptNode(key="comedy", name="comedy", in_catalog=True, user_mentions=1),
        "cheese": ConceptNode(key="cheese", name="cheese", user_mentions=1),
        "told": ConceptNode(key="told", name="told", in_catalog=True, user_mentions=0, assistant_mentions=2),
    }
    df = {"christmas movie": 1, "comedy": 30, "cheese": 25, "told": 30}
    out = demoted(concepts, list(concepts), CFG, df=df, tenant_users=100)
    assert out == {"movie": "meta_word", "taste": "meta_word", "cheese": "common_in_tenant", "told": "common_in_tenant"}
    # The user named the genre: a share of the tenant does not demote it unless asked.
    assert demoted(concepts, ["comedy"], CFG, df=df, tenant_users=100, df_catalog=True) == {
        "comedy": "common_in_tenant"
    }


def test_a_curriculum_neighbour_is_not_demoted_by_share() -> None:
    """DESIGN.md's worked example in a tenant where every learner studies Django: SQLAlchemy reaches each
    learner's graph through the catalog (no mention at all) and stays their related concept."""
    concepts = {"sqlalchemy": ConceptNode(key="sqlalchemy", name="SQLAlchemy", in_catalog=True)}
    assert demoted(concepts, ["sqlalchemy"], CFG, df={"sqlalchemy": 90}, tenant_users=100) == {}
    assert demoted(concepts, ["sqlalchemy"], CFG, df={"sqlalchemy": 90}, tenant_users=100, df_catalog=True) == {
        "sqlalchemy": "common_in_tenant"
    }


def test_chinese_everyday_dictionary_nouns_said_in_passing() -> None:
    # Hand-derived from jieba's dictionary tags and wordfreq: 作曲家 (n, Zipf 3.77), 食堂 (n, 3.95)
    # are kinds of things; 周杰伦 (nr) is a name; 圆明园 (n) ends like a place; 神武门 (n, 2.06) too.
    assert language_reason("作曲家", 1, CFG) == "common_noun_zh"
    assert language_reason("食堂", 2, CFG) == "common_noun_zh"
    assert language_reason("食堂", CFG.repeat_mentions, CFG) is None  # the conversation's topic
    assert language_reason("周杰伦", 1, CFG) is None
    assert language_reason("圆明园", 1, CFG) is None
    assert language_reason("博物馆", 1, CFG) == "common_noun_zh"  # the ending alone is no place name


def test_a_chinese_dictionary_noun_both_sides_name_stays() -> None:
    said_by_user = ConceptNode(key="配音", name="配音", user_mentions=1)
    both = ConceptNode(key="配音", name="配音", user_mentions=1, assistant_mentions=1)
    assert node_reason(said_by_user, CFG) == "common_noun_zh"
    assert node_reason(both, CFG) is None


def test_a_single_common_word_in_passing_is_small_talk_in_own_words_scopes() -> None:
    """Recommendation blocks: "in a mood for" (Zipf 4.44), "I don't get snow" (4.66) said once are small
    talk; a rarer word ("zombies" 3.5), a phrase, a catalog genre or a word said again stays."""
    mood = ConceptNode(key="mood", name="mood", user_mentions=1)
    zombies = ConceptNode(key="zombie", name="zombies", user_mentions=1)
    again = ConceptNode(key="snow", name="snow", user_mentions=CFG.repeat_mentions)
    phrase = ConceptNode(key="christmas movie", name="christmas movies", user_mentions=1)
    genre = ConceptNode(key="drama", name="drama", in_catalog=True, user_mentions=1)
    assert own_word_reason(mood, CFG) == "common_word"
    assert own_word_reason(zombies, CFG) is None and own_word_reason(again, CFG) is None
    assert own_word_reason(phrase, CFG) is None
    concepts = {n.key: n for n in (mood, zombies, again, phrase, genre)}
    assert demoted(concepts, list(concepts), CFG, own_words_only=True) == {"mood": "common_word"}
    assert demoted(concepts, list(concepts), CFG) == {}  # learning and general blocks: not judged so


@pytest.mark.parametrize(
    "key,name",
    [
        ("yea kinda", "yea kinda"),  # "yea kinda." answering "Did you get it?"
        ("maam", "maam"),  # "yes maam": the form of address is what is left of the reply
        ("sir", "sir"),
        ("yay", "yay"),
        ("yeah okay", "yeah okay"),
    ],
)
def test_a_chat_reply_is_no_block_item(key: str, name: str) -> None:
    """Hand-derived from chat_replies_en.txt and latin_interjections.txt: every word is a reply word."""
    node = ConceptNode(key=key, name=name, user_mentions=1)
    assert node_reason(node, CFG) == "chat_reply"
    assert demoted({key: node}, [key], CFG) == {key: "chat_reply"}


@pytest.mark.parametrize("key", ["kite", "sir ian mckellen", "yes man", "horror", "maam 好"])
def test_a_phrase_with_one_content_word_is_no_chat_reply(key: str) -> None:
    # "yes man" (a film): "man" is no reply word; "sir ian mckellen": a name after the title.
    assert chat_reply_reason(key) is None


def test_a_very_common_chinese_word_only_the_assistant_said_does_not_fill_the_core() -> None:
    # 中国 (Zipf 6.4) in "北京大学是中国的最高学府": said in passing, out of core too; the English tutor's
    # "value" (Zipf 5.2) from a place-value lesson may still fill the core (CENTRAL_ONLY).
    china = ConceptNode(key="中国", name="中国", assistant_mentions=1)
    value = ConceptNode(key="value", name="value", assistant_mentions=1)
    assert node_reason(china, CFG) == "common_word"
    assert node_reason(value, CFG) == "common_word_of_assistant"


@pytest.mark.parametrize("key", ["white board", "home work", "score board"])
def test_a_generic_word_spelled_open_is_generic(key: str) -> None:
    # whiteboard, homework, scoreboard are in generic_en.txt; written as two words they are the same word.
    assert language_reason(key, 1, CFG) == "common_phrase"


def test_two_specific_words_that_also_join_are_kept() -> None:
    assert language_reason("black hole", 1, CFG) is None  # "blackhole" is not a generic word


@pytest.mark.parametrize(
    "name",
    ["The Last of Us", "Ready Player One", "Everything Everywhere All at Once", "Among Us", "Past Lives"],
)
def test_common_words_written_as_a_title_are_a_name(name: str) -> None:
    # Hand-picked titles (a game, novels and films) made of common words: a phrase of common words in lower case
    # is generic, the same words in title case name one thing.
    assert written_as_title(name)
    node = ConceptNode(key=name.lower(), name=name, user_mentions=1)
    assert node_reason(node, CFG) is None


@pytest.mark.parametrize("name", ["summer course", "white board", "German cases", "Happy birthday", "Jennifer A"])
def test_a_phrase_that_is_not_in_title_case_is_judged_as_before(name: str) -> None:
    assert not written_as_title(name)
    if name.islower():
        assert node_reason(ConceptNode(key=name, name=name, user_mentions=1), CFG) == "common_phrase"
