"""A block holds what is specific to its user: end to end through the real Neo4j, and the
common-word catalog names of catalog_matcher.py in both languages.

Golden cases are written by hand for these tests (the turns and the expected items).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmem.extraction import ConceptExtractor
from graphmem.models import Catalog, TurnIn
from graphmem.service import GraphMemory
from tests.demo_like import drop_tenant

# One distinct, specific interest per user; every user also talks about cheese.
OWN = [
    "Haskell",
    "Erlang",
    "Elixir",
    "Clojure",
    "Scala",
    "Kotlin",
    "Fortran",
    "COBOL",
    "Prolog",
    "OCaml",
    "Smalltalk",
    "Lisp",
    "Pascal",
    "Perl",
    "Lua",
    "Dart",
    "Groovy",
    "Crystal",
    "Nim",
    "Zig",
    "Racket",
]


def _names(ctx) -> set[str]:
    return set(ctx.core_topics) | set(ctx.related_concepts)


@pytest.mark.neo4j
def test_a_concept_most_users_share_leaves_core_and_related(settings, store, tenant) -> None:
    mem = GraphMemory(
        settings.model_copy(update={"specificity_df_min_users": 20, "specificity_df_max_share": 0.2}), store=store
    )
    few = GraphMemory(settings.model_copy(update={"specificity_df_min_users": 1000}), store=store)
    try:
        for i, own in enumerate(OWN):
            mem.ingest(
                tenant,
                f"u{i}",
                "s1",
                [
                    TurnIn(turn_id="t1", role="user", text=f"I really like {own} and I eat cheese every day."),
                    TurnIn(turn_id="t2", role="user", text=f"{own} is great, cheese too."),
                ],
            )
        ctx = mem.context(tenant, "u0", scope="general")
        assert "Haskell" in _names(ctx)
        assert "cheese" not in _names(ctx), ctx.block  # 21 of 21 users: not specific to u0
        # Ranking still counts it: it is in the graph, with its weight.
        assert any(n["key"] == "cheese" for n in mem.graph(tenant, "u0")["nodes"])
        # Below the tenant size where a share means anything, nothing is demoted by share.
        assert "cheese" in _names(few.context(tenant, "u0", scope="general"))
    finally:
        drop_tenant(store, tenant)


@pytest.mark.neo4j
def test_noise_words_stay_out_of_a_block(settings, store, tenant) -> None:
    mem = GraphMemory(settings, store=store)
    turns = [
        "Accept my recommendation: what is your opinion on christmas movies?",
        "I love jump scares and 80s films, and a good buddy cop movie.",
        "Give it your best shot on the previous step, factor x+a)(x+b for variable 'b.",
        "The process was plenty of fun, I feel my taste is a return to 80s films.",
    ]
    try:
        mem.ingest(tenant, "u", "s1", [TurnIn(turn_id=f"t{i}", role="user", text=t) for i, t in enumerate(turns)])
        names = {n.casefold() for n in _names(mem.context(tenant, "u", scope="recommendation", max_tokens=4000))}
        for noise in (
            "accept",
            "recommendation",
            "opinion",
            "shot",
            "previous step",
            "x+a)(x+b",
            "variable 'b",
            "process",
            "feel",
            "taste",
            "return",
            "plenty",
        ):
            assert noise not in names, (noise, names)
        for kept in ("christmas movies", "80s films", "buddy cop movie"):
            assert kept in names, (kept, names)
    finally:
        drop_tenant(store, tenant)


@pytest.mark.neo4j
def test_the_demo_blocks_hold_no_generic_words(settings, store, tenant) -> None:
    from graphmem.demo import DEMO_DIR, DEMO_SCOPE, demo_learners, demo_turn_batches
    from graphmem.extraction.catalog_io import load_catalog

    mem = GraphMemory(settings, store=store)
    try:
        mem.put_catalog(tenant, load_catalog(DEMO_DIR / "catalog.yaml"))
        seen: set[str] = set()
        for learner in demo_learners():
            for sid, turns in demo_turn_batches(learner):
                mem.ingest(tenant, learner["user_id"], sid, [TurnIn(**t) for t in turns])
            ctx = mem.context(tenant, learner["user_id"], scope=DEMO_SCOPE.get(learner["user_id"], "learning"))
            seen |= {n.casefold() for n in _names(ctx) | set(ctx.knowledge_gaps)}
        assert not seen & {"summer course", "portfolio site", "framework", "apis", "api"}, seen
        assert {"react", "flask", "docker"} <= seen
    finally:
        drop_tenant(store, tenant)


# --- common-word catalog names (pure: extraction only) ---------------------------------------------


def _catalog(*names: str, **kinds: str) -> ConceptExtractor:
    concepts = [{"name": n, "type": kinds.get(n, "product")} for n in names]
    return ConceptExtractor(Catalog.model_validate({"concepts": concepts}))


def _matched(ex: ConceptExtractor, text: str) -> list[str]:
    return [c.name for c in ex.extract([text])[0].concepts if c.in_catalog]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("It was fun, I loved Up.", ["Up"]),  # sentence-initial "It" is the pronoun; "Up" mid-sentence is a title
        ("Have you seen Life?", ["Life"]),
        ("life is hard", []),
        ('I watched "Hero" last night', ["Hero"]),
        ("Hero was good", []),  # sentence start, no cue
        ("It's a good one", []),  # a contraction
        ("I saw that movie. It looks good", []),  # the cue is in another sentence
        ("There is also It", ["It"]),
        ("Inception was great", ["Inception"]),  # not a common word: no evidence needed
    ],
)
def test_common_word_titles_need_evidence_en(text: str, expected: list[str]) -> None:
    assert _matched(_catalog("It", "Up", "Life", "Hero", "Inception"), text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("我看过英雄这部电影", ["英雄"]),
        ("《英雄》很好看", ["英雄"]),
        ("英雄难过美人关", []),
    ],
)
def test_common_word_titles_need_evidence_zh(text: str, expected: list[str]) -> None:
    assert _matched(_catalog("英雄"), text) == expected


def test_kind_concepts_and_unambiguous_names_match_without_evidence() -> None:
    # A genre called comedy IS the word; a tenant may declare a title unambiguous.
    ex = ConceptExtractor(
        Catalog.model_validate(
            {
                "concepts": [
                    {"name": "comedy", "type": "category"},
                    {"name": "Life", "type": "product", "unambiguous": True},
                ]
            }
        )
    )
    assert _matched(ex, "Life is what I like, and comedy.") == ["Life", "comedy"]


def test_category_words_of_the_catalog_are_not_open_concepts() -> None:
    ex = ConceptExtractor(
        Catalog.model_validate(
            {
                "concepts": [
                    {"name": "Django", "aliases": ["Django framework"]},
                    {"name": "Flask", "aliases": ["Flask framework"]},
                    {"name": "REST API", "aliases": ["RESTful API"]},
                ]
            }
        )
    )
    res = ex.extract(["I'm into Flask for small APIs, a light framework."])[0]
    assert [c.name for c in res.concepts] == ["Flask"]
    assert {s.reason for s in res.skipped} >= {"category_word"}


@pytest.mark.slow
@pytest.mark.neo4j
def test_redial_blocks_floors(shared_data: Path, store, monkeypatch) -> None:
    """ReDial valid, first 50 chats (eval/redial_block_eval.py). Measured when set: generic-item share
    0.039 / core-entity share 0.773 / seeker recall 0.977 on all 100 valid chats (0.137 / 0.583 / 0.986
    before this work)."""
    from eval import redial_block_eval

    monkeypatch.setenv("GRAPHMEM_SHARED_DATA", str(shared_data))
    res = redial_block_eval.run(limit=50, verbose=False)
    assert res["blocks"] == 50
    assert res["generic_item_share"] <= 0.06, res
    assert res["core_entity_share"] >= 0.65, res
    assert res["seeker_entity_recall"] >= 0.93, res


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Blair Witch is a good scary movie", []),  # the words, not the film
        ("I love ghost movies like Paranormal Activity", ["Paranormal Activity"]),
        ("I loved Scary Movie", ["Scary Movie"]),  # capitalised: the name
        ("have you seen home alone", ["Home Alone"]),  # lower case after a viewing cue
    ],
)
def test_titles_of_common_words_in_lower_case_need_a_viewing_cue(text: str, expected: list[str]) -> None:
    assert _matched(_catalog("Scary Movie", "Ghost", "Home Alone", "Paranormal Activity"), text) == expected


@pytest.mark.slow
@pytest.mark.neo4j
def test_labelled_block_items_precision_floor(shared_data: Path, store, monkeypatch) -> None:
    """eval/block_sample.py over the hand labels. Measured when first set: 0.664 over 217 present labelled
    items (ReDial 0.839, Bridge 0.615, KdConv 0.529); main's blocks scored 0.545 on the same labels.
    Raised on 2026-12-03, measured 0.854 over 267 (ReDial 0.959, Bridge 0.786, KdConv 0.796): floors a
    little below, so a regression fails CI."""
    from eval import block_sample

    monkeypatch.setenv("GRAPHMEM_SHARED_DATA", str(shared_data))
    res = block_sample.run(verbose=False)
    assert res["present_labelled"] >= 200, res
    assert res["item_precision"] >= 0.83, res
    assert res["per_dataset"]["redial/valid"]["precision"] >= 0.93, res
    assert res["per_dataset"]["kdconv/dev"]["precision"] >= 0.77, res


@pytest.mark.neo4j
def test_recommendation_blocks_keep_the_users_own_words(settings, store, tenant) -> None:
    # Hand-written: the assistant describes a film ("frat house"); the user names a preference.
    mem = GraphMemory(settings, store=store)
    try:
        mem.ingest(
            tenant,
            "u",
            "s1",
            [
                TurnIn(turn_id="t1", role="user", text="I want a comedy with jump scares and zombies."),
                TurnIn(turn_id="t2", role="assistant", text="Old School is about a frat house, with adult humor."),
                TurnIn(turn_id="t3", role="user", text="Zombies again, please."),
            ],
        )
        rec = {n.casefold() for n in _names(mem.context(tenant, "u", scope="recommendation", max_tokens=4000))}
        gen = {n.casefold() for n in _names(mem.context(tenant, "u", scope="general", max_tokens=4000))}
        assert "zombies" in rec and "frat house" not in rec and "adult humor" not in rec, rec
        assert "frat house" in gen or "adult humor" in gen, gen  # general scope: not restricted by default
    finally:
        drop_tenant(store, tenant)


@pytest.mark.parametrize(
    "text,absent,present",
    [
        # What a word problem counts, and who counts it, are not what the lesson is about.
        ("Figure out how many glasses Ayako drank each day.", ["glasses", "Ayako"], []),
        ("How many bags does Max have?", ["bags", "Max"], []),
        ("Sarah has 12 pencils.", ["pencils", "Sarah"], []),
        ("The answer is 86 feet.", ["feet"], []),
        # Maths objects counted are the lesson; a number after a name is a title; a name stays a name.
        ("We add 3 fractions with 5 digits.", [], ["fractions", "digits"]),
        ("I loved Toy Story 3.", [], ["Toy Story"]),
        ("How many Python courses did you take?", [], ["Python courses"]),
        ("Add together all the glasses in the pictograph.", [], ["pictograph"]),
    ],
)
def test_counted_things_of_an_exercise_are_no_concepts(text: str, absent: list[str], present: list[str]) -> None:
    names = [c.name for c in ConceptExtractor().extract([text])[0].concepts]
    assert not set(absent) & set(names), names
    assert set(present) <= set(names), names


@pytest.mark.parametrize(
    "text,absent,present",
    [
        # What someone is like, said in a chat (ReDial valid 2736, 8899, 17193), is no topic of theirs.
        ("Adam Sandler is a riot", ["riot"], ["Adam Sandler"]),
        ("He's a cutie...", ["cutie"], []),
        ("i know such a heart breaker", ["heart breaker"], []),
        ("what a heart breaker", ["heart breaker"], []),
        # A thing's kind, or a predicate with a modifier, stays.
        ("This is a right triangle.", [], ["right triangle"]),
        ("it's a heist film", [], ["heist film"]),
    ],
)
def test_evaluations_of_someone_are_no_concepts(text: str, absent: list[str], present: list[str]) -> None:
    names = [c.name for c in ConceptExtractor().extract([text])[0].concepts]
    assert not set(absent) & set(names), names
    assert set(present) <= set(names), names


def test_what_a_session_counts_is_no_concept_of_the_tutors_other_turns() -> None:
    # Bridge validation 6315993_39 and 4055603_15, in the tutor's manner: the thing a word problem counts
    # ("how many glasses", "how many bags") is the exercise's object in the tutor's other turns too; the
    # lesson's own words stay, and so does a student's naming of it.
    turns = [
        "Add together all the glasses in the pictograph.",
        "Figure out how many glasses Ayako drank each day.",
        "We need to find how many total legos are in the bag.",
        "How many bags does max have?",
        "I think the glasses are 12",
    ]
    out = ConceptExtractor().extract(turns, ["assistant", "assistant", "assistant", "assistant", "user"])
    tutor = {c.key for ex in out[:4] for c in ex.concepts}
    assert "pictograph" in tutor and not {"glass", "bag", "lego"} & tutor, tutor
    assert [c.key for c in out[4].concepts] == ["glass"]


@pytest.mark.neo4j
def test_small_talk_and_typos_stay_out_of_a_recommendation_block(settings, store, tenant) -> None:
    # Hand-written seeker turns in the manner of a movie chat: weather, mood and typos around a preference.
    mem = GraphMemory(settings, store=store)
    try:
        mem.ingest(
            tenant,
            "u",
            "s1",
            [
                TurnIn(turn_id="t1", role="user", text="I'm in a mood for something with zombies tonight."),
                TurnIn(turn_id="t2", role="assistant", text="Have you seen Shaun of the Dead?"),
                TurnIn(turn_id="t3", role="user", text="I heard good thigns about it, youtoo. No snow here."),
            ],
        )
        names = {n.casefold() for n in _names(mem.context(tenant, "u", scope="recommendation", max_tokens=4000))}
        assert "zombies" in names, names
        assert not names & {"mood", "thigns", "youtoo", "snow"}, names
    finally:
        drop_tenant(store, tenant)


@pytest.mark.neo4j
def test_the_demo_blocks_read_like_notes_each_concept_once_in_the_users_language(settings, store, tenant) -> None:
    """Every demo user (the three learners and sam, the recommendation user), with and without the
    demo's focus, through the real pipeline: a concept is shown in one section only (a confused one
    with its marker), and English users see no Chinese name."""
    import re

    from graphmem.demo import DEMO_DIR, DEMO_FOCUS, DEMO_SCOPE, demo_learners, demo_turn_batches
    from graphmem.extraction.catalog_io import load_catalog

    mem = GraphMemory(settings, store=store)
    try:
        mem.put_catalog(tenant, load_catalog(DEMO_DIR / "catalog.yaml"))
        learners = demo_learners()
        for learner in learners:
            for sid, turns in demo_turn_batches(learner):
                mem.ingest(tenant, learner["user_id"], sid, [TurnIn(**t) for t in turns])
        assert {lr["user_id"] for lr in learners} >= {"emma", "sam", "xiaoming", "li_wei"}
        for learner in learners:
            user = learner["user_id"]
            for focus in (DEMO_FOCUS.get(user), None):
                ctx = mem.context(tenant, user, focus=focus, scope=DEMO_SCOPE.get(user, "learning"))
                shown = [
                    n
                    for s in ("current_topic", "core_topics", "related_concepts", "knowledge_gaps", "avoid")
                    for n in getattr(ctx, s, ())
                ]
                assert len(shown) == len(set(shown)), (user, focus, ctx.block)
                if user in ("emma", "sam"):
                    assert not any(re.search(r"[\u4e00-\u9fff]", n) for n in shown), (user, shown)
    finally:
        drop_tenant(store, tenant)


def test_the_second_held_out_sample_is_the_seeded_pick_and_new() -> None:
    """eval/block_sample.py's FRESH2 is the documented seeded rule, and no earlier sample covers its chats."""
    import random

    from eval import block_sample as bs

    assert bs.FRESH2["bridge"] == tuple(sorted(random.Random(13).sample(range(20, 71), 16)))
    assert bs.FRESH2["kdconv"] == tuple(sorted(random.Random(13).sample(range(7, 30), 2)))
    earlier = bs._picks("main")["bridge"] | bs._picks("fresh")["bridge"]
    assert not earlier & set(bs.FRESH2["bridge"])
    assert not (bs._picks("main")["kdconv"] | bs._picks("fresh")["kdconv"]) & set(bs.FRESH2["kdconv"])


def test_the_third_held_out_sample_is_the_seeded_pick_and_new() -> None:
    """eval/block_sample.py's FRESH3 is the documented seeded rule over the chats no earlier sample covers."""
    import random

    from eval import block_sample as bs

    earlier = {s: set().union(*(bs._picks(x)[s] for x in ("main", "fresh", "fresh2"))) for s in ("bridge", "kdconv")}
    left_bridge = [i for i in range(20, 71) if i not in earlier["bridge"]]
    left_kdconv = [i for i in range(7, 30) if i not in earlier["kdconv"]]
    assert bs.FRESH3["bridge"] == tuple(sorted(random.Random(14).sample(left_bridge, 16)))
    assert bs.FRESH3["kdconv"] == tuple(sorted(random.Random(14).sample(left_kdconv, 2)))
    assert not (earlier["bridge"] & set(bs.FRESH3["bridge"])) and not (earlier["kdconv"] & set(bs.FRESH3["kdconv"]))
