"""The block reads like a tutor's notes: one concept, one place, with its reason; names in the
user's language; open concept types; presumed-known past the loaded subgraph (issue 13).

Pure tests on hand graphs first, then the real demo (demo/catalog.yaml + demo/learners.json) and
small catalogs through the real HTTP API and the real Neo4j.
"""

from __future__ import annotations

import json
import re
import uuid
import xml.etree.ElementTree as ET

import httpx
import pytest

from graphmem.compaction import CompactionConfig, plan_compaction
from graphmem.context import CONFUSED, DISLIKES, STRUGGLING, ContextConfig, select_context
from graphmem.models import Catalog, Stance, UserGraph
from graphmem.names import display_names, dominant_language, name_language
from graphmem.ranking import RankingConfig, rank
from graphmem.render import render_block
from graphmem.tokens import TokenCounter
from tests.pure_graphs import P, graph, node

REF = RankingConfig(method="reference")
COUNTER = TokenCounter()


def select(g: UserGraph, focus: list[str], scope: str = "learning", names: dict[str, str] | None = None):
    r = rank(g, REF)
    plan = plan_compaction(g, r, CompactionConfig())
    return select_context(g, r, plan.tiers, focus, scope, ContextConfig(), names)


def placed(sel) -> dict[str, tuple[str, str | None]]:
    """key -> (section, marker); fails when a key is in two sections."""
    out: dict[str, tuple[str, str | None]] = {}
    for section, items in sel.sections.items():
        for item in items:
            assert item.key not in out, (item.key, out[item.key][0], section)
            out[item.key] = (section, item.marker)
    return out


# -- placement rule (pure) -----------------------------------------------------------------------


def learner() -> UserGraph:
    # emma's shape, derived by hand: react (focus, interested), js a prerequisite of react that the
    # user talks about a lot and is confused by, html known, http a prerequisite of rest that only the
    # tutor named, rest confused and a current topic, php a prerequisite of rest the tutor named and
    # the user dislikes.
    return graph(
        [
            node("react", 3, stance=Stance.interested),
            node("js", 3, stance=Stance.confused),
            node("html", 1, stance=Stance.knows),
            node("rest", 2, stance=Stance.confused),
            node("http", 0, 1),
            node("php", 0, 1, stance=Stance.dislikes),
        ],
        [("html", P, "js"), ("js", P, "react"), ("http", P, "rest"), ("php", P, "rest")],
    )


def test_a_confused_core_topic_is_struggling_and_not_repeated_as_a_gap() -> None:
    where = placed(select(learner(), []))
    assert where["js"] == ("core_topics", STRUGGLING)
    assert where["rest"] == ("core_topics", STRUGGLING)
    assert where["react"] == ("core_topics", None)
    # A disliked gap says so (learning has no avoid section).
    assert where["php"] == ("knowledge_gaps", DISLIKES)


def test_related_concepts_are_core_neighbours_or_named_in_the_conversation() -> None:
    # Derived by hand (reference ranker, core_size 5): a..e are the five heaviest the user named (core),
    # f named once more lightly (related, not a core neighbour), g never named and linked only to f
    # (0.8 x 10 = 8 >= 5: it survives compaction) — the curriculum's, two hops from any core topic, so
    # it is not shown; h, never named but a prerequisite of core topic a, is shown as its neighbour.
    g = graph(
        [node(k, 3) for k in "abcde"] + [node("f", 1), node("g", 0), node("h", 0)],
        [("g", P, "f"), ("h", P, "a")],
    )
    where = placed(select(g, [], scope="general"))
    assert {k for k, (sec, _) in where.items() if sec == "core_topics"} == set("abcde")
    assert where["f"][0] == "related_concepts" and where["h"][0] == "related_concepts"
    assert "g" not in where


def test_a_focus_is_shown_once_as_the_current_topic() -> None:
    where = placed(select(learner(), ["rest", "react"]))
    assert where["rest"] == ("current_topic", STRUGGLING)
    assert where["react"] == ("current_topic", None)
    assert where["js"] == ("core_topics", STRUGGLING)  # a gap of react, but the user's own struggle
    assert where["http"] == ("knowledge_gaps", None)


def test_a_confused_gap_is_marked_confused() -> None:
    # Five heavier topics fill the core (4 mentions each: 40); t (2 mentions, the focus) depends on
    # p, which the user mentioned once and said confuses them: a gap, marked confused.
    others = [node(f"c{i}", 4) for i in range(5)]
    g = graph([*others, node("t", 2), node("p", 1, stance=Stance.confused)], [("p", P, "t")])
    sel = select(g, ["t"])
    where = placed(sel)
    assert where["p"] == ("knowledge_gaps", CONFUSED)
    assert all(where[c.key] == ("core_topics", None) for c in others)
    assert sel.knowledge_gaps[0].reason == "prerequisite of t (depth 1); user said it confuses them"


def test_a_core_topic_the_user_never_showed_is_a_gap_only() -> None:
    # "basics" is a heavy neighbour only the tutor named (assistant mentions): below the threshold
    # of the user's own weight, so a gap of the focus; it is not also listed as a core topic.
    g = graph([node("t", 2), node("basics", 0, 5), node("other", 1)], [("basics", P, "t")])
    where = placed(select(g, ["t"]))
    assert where["basics"] == ("knowledge_gaps", None)


def test_two_keys_with_one_display_name_are_shown_once() -> None:
    g = graph([node("rest api设计", 2, name="REST API设计"), node("rest api", 1, name="REST API")], [])
    sel = select(g, [], names={"rest api设计": "REST API"})
    shown = [i.name for items in sel.sections.values() for i in items]
    assert shown.count("REST API") == 1


@pytest.mark.parametrize("fmt", ["xml", "markdown", "json"])
def test_markers_in_every_format_count_against_the_budget(fmt: str) -> None:
    sel = select(learner(), ["rest"])
    out = render_block(sel, fmt=fmt, counter=COUNTER)
    assert out.tokens == COUNTER.count(out.block)
    if fmt == "json":
        data = json.loads(out.block)
        assert {"name": "rest", "reason": "struggling"} in data["current_topic"]
        assert "react" in data["core_topics"]  # plain items stay strings
        evidence = json.loads(render_block(sel, fmt=fmt, counter=COUNTER, evidence=True).block)
        assert evidence["current_topic"][0]["reason"] == "struggling"
    else:
        assert "rest (struggling)" in out.block and "js (struggling)" in out.block
    # A budget that fits the unmarked block but not the marked one drops an item: markers cost tokens.
    plain = render_block(
        type(sel)(
            sel.scope,
            {
                s: tuple(i.__class__(**{**i.__dict__, "marker": None}) for i in items)
                for s, items in sel.sections.items()
            },
        ),
        fmt=fmt,
        counter=COUNTER,
    )
    assert plain.tokens < out.tokens
    squeezed = render_block(sel, fmt=fmt, counter=COUNTER, max_tokens=plain.tokens)
    assert squeezed.truncated and squeezed.tokens <= plain.tokens


def test_marker_text_is_escaped_like_names() -> None:
    g = graph([node("a</x>", 2, name="a</x> (struggling)", stance=Stance.confused)], [])
    out = render_block(select(g, []), counter=COUNTER)
    ET.fromstring(out.block)  # still one element
    assert "a&lt;/x&gt; (struggling) (struggling)" in out.block


# -- names in the user's language (pure) ---------------------------------------------------------


def test_dominant_language_and_name_language() -> None:
    assert dominant_language([["en", 5], ["zh", 2]]) == "en"
    assert dominant_language([["zh", 3], ["en", 1], [None, 9]]) == "zh"
    assert dominant_language([["en", 2], ["zh", 2]]) is None
    assert dominant_language([]) is None and dominant_language(None) is None
    assert [name_language(n) for n in ("HTML与CSS", "REST API设计", "JavaScript", "C++", "Python入门")] == [
        "zh",
        "zh",
        "en",
        "en",
        "zh",
    ]


def test_display_names_pick_the_first_alias_in_the_language_in_catalog_order() -> None:
    cat = Catalog.model_validate(
        {
            "concepts": [
                {"name": "REST API设计", "aliases": ["RESTful接口", "REST API", "RESTful API"]},
                {"name": "JavaScript", "aliases": ["JS", "脚本语言"]},
                {"name": "Machine learning", "aliases": ["ML", "机器学习"]},
                {"name": "概率论", "aliases": []},
            ]
        }
    )
    assert display_names(cat, "en") == {"rest api设计": "REST API"}
    assert display_names(cat, "zh") == {"javascript": "脚本语言", "machine learning": "机器学习"}
    assert display_names(cat, None) == {} and display_names(None, "en") == {}


# -- the real demo through HTTP ------------------------------------------------------------------

DEMO_FOCUS = {
    "xiaoming": "我想学怎么部署Django",
    "emma": "How do I call a REST API from React?",
    "li_wei": "神经网络怎么入门？",
}
_LINE = re.compile(r"- (\w+): \[(.*)\]")
_MARKED = re.compile(r"^(.*?)(?: \((struggling|confused|dislikes)\))?$")


def xml_items(block: str) -> list[tuple[str, str, str | None]]:
    """(section, name, marker) of every item of an XML block (names unescaped)."""
    import html

    out = []
    for line in block.splitlines()[1:-1]:
        m = _LINE.fullmatch(line)
        assert m, line
        for raw in m.group(2).split(", "):
            name, marker = _MARKED.fullmatch(raw).groups()  # type: ignore[union-attr]
            out.append((m.group(1), html.unescape(name), marker))
    return out


@pytest.fixture(scope="module")
def demo(api, api_tenants, real_demo_tenant):
    with api.client(api_tenants.key_demo) as client:
        yield client


def context(client: httpx.Client, user: str, focus: str | None, fmt: str = "xml") -> dict:
    r = client.post(f"/v1/users/{user}/context", json={"focus": focus, "format": fmt})
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.neo4j
@pytest.mark.parametrize("user", ["xiaoming", "emma", "li_wei"])
@pytest.mark.parametrize("with_focus", [True, False])
def test_demo_learners_show_each_concept_once(demo, user: str, with_focus: bool) -> None:
    body = context(demo, user, DEMO_FOCUS[user] if with_focus else None)
    items = xml_items(body["block"])
    names = [n for _, n, _ in items]
    assert len(names) == len(set(names)), body["block"]
    lists = [n for s in ("current_topic", "core_topics", "related_concepts", "knowledge_gaps") for n in body[s]]
    assert len(lists) == len(set(lists))
    assert body["reasons"] == {n: m for _, n, m in items if m}


@pytest.mark.neo4j
@pytest.mark.parametrize("with_focus", [True, False])
def test_emma_struggles_with_javascript_and_rest_once_each_in_english(demo, with_focus: bool) -> None:
    body = context(demo, "emma", DEMO_FOCUS["emma"] if with_focus else None)
    items = {n: (s, m) for s, n, m in xml_items(body["block"])}
    # emma: "I don't get JavaScript promises at all", "I'm still confused about REST APIs".
    assert items["JavaScript"] == ("core_topics", "struggling")
    assert items["REST API"] == ("current_topic" if with_focus else "core_topics", "struggling")
    # English names for an English learner (catalog aliases), canonical keys unchanged.
    assert "HTML and CSS" in items and "REST API设计" not in body["block"] and "HTML与CSS" not in body["block"]
    assert not any(re.search(r"[\u4e00-\u9fff]", n) for n in items), body["block"]
    for fmt in ("markdown", "json"):
        other = context(demo, "emma", DEMO_FOCUS["emma"] if with_focus else None, fmt)
        assert other["reasons"] == body["reasons"]
        if fmt == "json":
            data = json.loads(other["block"])
            assert {"name": "JavaScript", "reason": "struggling"} in data["core_topics"]
        else:
            assert "JavaScript (struggling)" in other["block"]


@pytest.mark.neo4j
def test_li_wei_struggles_with_probability_once_and_keeps_chinese_names(demo) -> None:
    for focus in (DEMO_FOCUS["li_wei"], None):
        body = context(demo, "li_wei", focus)
        items = {n: (s, m) for s, n, m in xml_items(body["block"])}
        # "概率论我不懂，好难。": a core topic she struggles with, not also a plain gap.
        assert items["概率论"] == ("core_topics", "struggling")
        assert "概率论" not in body["knowledge_gaps"]
        # "我学过NumPy，用了两年了": NumPy's prerequisite Python基础 is presumed known, no gap.
        assert "Python基础" not in body["knowledge_gaps"]


@pytest.mark.neo4j
def test_names_follow_the_users_language_in_graph_and_explain(demo) -> None:
    emma = demo.get("/v1/users/emma/graph").json()
    assert emma["language"] == "en"
    node = next(n for n in emma["nodes"] if n["key"] == "rest api设计")
    assert (node["name"], node["canonical_name"]) == ("REST API", "REST API设计")
    ex = demo.get("/v1/users/emma/explain", params={"concept": "REST API"}).json()
    assert (ex["key"], ex["name"], ex["canonical_name"]) == ("rest api设计", "REST API", "REST API设计")
    assert all(not re.search(r"[\u4e00-\u9fff]", p["from_name"]) for p in ex["propagation"]), ex["propagation"]

    xiaoming = demo.get("/v1/users/xiaoming/graph").json()
    assert xiaoming["language"] == "zh"
    names = {n["key"]: n["name"] for n in xiaoming["nodes"]}
    assert names["python基础"] == "Python基础" and names["django框架"] == "Django框架"
    block = context(demo, "xiaoming", DEMO_FOCUS["xiaoming"])
    assert "Django框架" in block["block"] and "Python基础" in block["block"]
    assert block["current_topic"] == ["Django部署"]


# -- open concept types, and presumed known past the subgraph, through HTTP -----------------------


@pytest.mark.neo4j
def test_a_recommendation_catalog_may_use_its_own_concept_types(api, api_tenants, store) -> None:
    from tests.demo_like import drop_tenant

    catalog = {
        "concepts": [
            {"name": "Alien", "type": "movie"},
            {"name": "Sigourney Weaver", "type": "person"},
            {"name": "science fiction", "aliases": ["sci-fi"], "type": "genre"},
            {"name": "Dune", "type": "book"},
            {"name": "Bohemian Rhapsody", "type": "song"},
        ],
        "relations": [{"source": "Alien", "type": "part_of", "target": "science fiction"}],
    }
    with api.client(api_tenants.key_b) as client:
        try:
            r = client.put("/v1/catalog", json=catalog)
            assert r.status_code == 200, r.text
            assert [c["type"] for c in client.get("/v1/catalog").json()["catalog"]["concepts"]] == [
                "movie",
                "person",
                "genre",
                "book",
                "song",
            ]
            user = "u-" + uuid.uuid4().hex[:8]
            r = client.post(
                f"/v1/users/{user}/turns",
                json={"session_id": "s", "turns": [{"role": "user", "text": "I loved Alien and I read Dune twice."}]},
            )
            assert r.status_code == 200, r.text
            types = {n["name"]: n["type"] for n in client.get(f"/v1/users/{user}/graph").json()["nodes"]}
            assert types["Alien"] == "movie" and types["Dune"] == "book" and types["science fiction"] == "genre"
            # A type is a property, never a label: no :movie / :Movie label was created.
            labels = store.read_statement("catalog_concepts", tenant=api_tenants.tenant_b)
            assert {row["type"] for row in labels} == {"movie", "person", "genre", "book", "song"}
            bad = client.put("/v1/catalog", json={"concepts": [{"name": "Alien", "type": "movie) DETACH DELETE (n"}]})
            assert bad.status_code == 422 and bad.json()["error"]["code"] == "INVALID_CATALOG"
            assert "concepts[0].type" in bad.json()["error"]["message"]
        finally:
            drop_tenant(store, api_tenants.tenant_b)


@pytest.mark.neo4j
def test_an_ancestor_four_hops_above_a_known_concept_is_no_gap(settings, store, tenant: str) -> None:
    # Catalog (hand-made): calculus -> vectors -> matrices -> least squares -> linear regression, and
    # calculus -> gradient descent (all prerequisites). The learner knows linear regression and asks
    # about gradient descent. The store loads 2 hops around the two: the vectors-matrices edge is not
    # in the subgraph, yet calculus is an ancestor of linear regression: presumed known, no gap.
    from graphmem.models import TurnIn
    from graphmem.service import GraphMemory
    from tests.demo_like import drop_tenant

    names = ["calculus", "vectors", "matrices", "least squares", "linear regression"]
    catalog = Catalog.model_validate(
        {
            "concepts": [{"name": n} for n in [*names, "gradient descent", "optimization"]],
            "relations": [{"source": a, "type": "prerequisite", "target": b} for a, b in zip(names, names[1:])]
            + [
                {"source": "calculus", "type": "prerequisite", "target": "gradient descent"},
                {"source": "optimization", "type": "prerequisite", "target": "gradient descent"},
            ],
        }
    )
    mem = GraphMemory(settings, store=store)
    try:
        mem.put_catalog(tenant, catalog)
        mem.ingest(
            tenant,
            "ada",
            "s1",
            [
                TurnIn(role="user", text="I already know linear regression."),
                TurnIn(role="user", text="I want to learn gradient descent."),
            ],
        )
        graph = store.load_user_graph(mem.user(tenant, "ada"))
        assert graph.concepts["linear regression"].stance is Stance.knows
        assert not any({e.source, e.target} == {"vectors", "matrices"} for e in graph.edges)
        block = mem.context(tenant, "ada", focus="How does gradient descent work?")
        assert block.current_topic == ["gradient descent"]
        assert block.knowledge_gaps == ["optimization"], block.block
    finally:
        drop_tenant(store, tenant)


@pytest.mark.neo4j
def test_the_users_own_turns_decide_the_language_not_the_assistants(settings, store, tenant: str) -> None:
    # An English learner whose tutor answers in Chinese: the user's two English turns outweigh the
    # tutor's three Chinese ones (only the user's turns count), so the block uses English aliases.
    from graphmem.extraction.catalog_io import load_catalog
    from graphmem.models import TurnIn
    from graphmem.service import GraphMemory
    from graphmem.settings import PROJECT_ROOT
    from tests.demo_like import drop_tenant

    mem = GraphMemory(settings, store=store)
    try:
        mem.put_catalog(tenant, load_catalog(PROJECT_ROOT / "demo" / "catalog.yaml"))
        mem.ingest(
            tenant,
            "bo",
            "s1",
            [
                TurnIn(role="user", text="I want to learn machine learning."),
                TurnIn(role="assistant", text="机器学习需要线性代数和概率论。"),
                TurnIn(role="assistant", text="线性代数很重要。"),
                TurnIn(role="assistant", text="概率论也很重要。"),
                TurnIn(role="user", text="I'm still confused about linear algebra."),
            ],
        )
        graph = store.load_user_graph(mem.user(tenant, "bo"))
        assert graph.language == "en"
        block = mem.context(tenant, "bo")
        shown = block.core_topics + block.related_concepts + block.knowledge_gaps
        assert "machine learning" in shown and "linear algebra" in shown, block.block
        assert not any(re.search(r"[\u4e00-\u9fff]", n) for n in shown), block.block
        assert block.reasons.get("linear algebra") in ("struggling", "confused")
        # Three more Chinese turns from the user tip the balance: the same concepts in Chinese.
        mem.ingest(
            tenant,
            "bo",
            "s2",
            [TurnIn(role="user", text=t) for t in ("我想学概率论。", "线性代数好难。", "我对机器学习很感兴趣。")],
        )
        assert store.load_user_graph(mem.user(tenant, "bo")).language == "zh"
        assert "机器学习" in mem.context(tenant, "bo").block
    finally:
        drop_tenant(store, tenant)
