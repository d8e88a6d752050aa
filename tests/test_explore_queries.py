"""The saved exploration queries (cypher/explore) against the real Neo4j server (issue 6).

Every `explore_*` statement runs on demo-like data (tests/demo_like.py) and is
checked for what its comment promises. Records are read with the driver's own
types (Node, Relationship, Path) because that is what the Browser draws.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest
from neo4j import Driver, GraphDatabase
from neo4j.graph import Node, Path, Relationship

from graphmem.explore import (
    cypher_literal,
    explore_params,
    explore_queries,
    inline_params,
    param_line,
    render_explore,
    statement_params,
)
from graphmem.guide import DEMO_USERS, render_guide, style_command
from tests.demo_like import XIAOMING, drop_tenant, key_of, load_demo_like, xiaoming_turns

pytestmark = pytest.mark.neo4j

EXPECTED_QUERIES = {
    "explore_user_graph",
    "explore_tiers",
    "explore_gaps",
    "explore_provenance",
    "explore_timeline",
    "explore_shared_interests",
    "explore_compaction",
    "explore_mastery",
}


@pytest.fixture(scope="module")
def demo_tenant(store) -> Iterator[str]:
    tenant = "explore-test-" + uuid.uuid4().hex[:10]
    load_demo_like(store, tenant)
    yield tenant
    drop_tenant(store, tenant)


@pytest.fixture(scope="module")
def driver(settings) -> Iterator[Driver]:
    drv = GraphDatabase.driver(
        settings.neo4j_uri or f"bolt://127.0.0.1:{settings.neo4j_bolt_port}",
        auth=(settings.neo4j_user, settings.neo4j_password),
        notifications_min_severity="OFF",
    )
    yield drv
    drv.close()


def run(driver: Driver, text: str, params: dict[str, Any] | None = None) -> list[Any]:
    with driver.session(database="neo4j") as session:
        return session.execute_read(lambda tx: list(tx.run(text, params or {})))


def run_saved(store, driver: Driver, name: str, tenant: str, user_id: str = "xiaoming", **kw: Any) -> list[Any]:
    query = next(q for q in explore_queries(store.cypher, tenant, user_id, **kw) if q.name == name)
    return run(driver, query.text, query.params)


def test_the_saved_queries_are_named_and_described(store):
    names = set(store.cypher.names("explore_"))
    assert names == EXPECTED_QUERIES
    for name in names:
        stmt = store.cypher.statement(name)
        assert stmt.source.parent.name == "explore"
        assert len(stmt.description) > 20 and "\n" not in stmt.description
        # Read-only: the Browser user should be able to click them without fear.
        assert not re.search(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|DETACH)\b", stmt.text), name
        assert {"tenant"} <= set(statement_params(stmt.text))


def test_every_saved_query_answers_for_the_demo_learner(store, driver, demo_tenant):
    for q in explore_queries(store.cypher, demo_tenant, "xiaoming", focus="Django部署"):
        assert run(driver, q.text, q.params), f"{q.name} returned no rows"
        # The inlined form (what the guide shows) returns exactly the same records.
        assert _canon(run(driver, q.inlined())) == _canon(run(driver, q.text, q.params)), q.name


def _canon(value: Any) -> Any:
    """Records compared by content: graph entities by element id, collected lists as sorted lists."""
    if isinstance(value, (Node, Relationship)):
        return (type(value).__name__, value.element_id)
    if isinstance(value, Path):
        return ("Path", tuple(r.element_id for r in value.relationships))
    if isinstance(value, dict):
        return {k: _canon(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_canon(v) for v in value), key=repr)
    if hasattr(value, "values") and hasattr(value, "keys"):  # a Record
        return {k: _canon(v) for k, v in zip(value.keys(), value.values())}
    return value


def test_user_graph_returns_the_user_tiers_concepts_and_only_visible_relations(store, driver, demo_tenant):
    [record] = run_saved(store, driver, "explore_user_graph", demo_tenant)
    user: Node = record["user"]
    assert "User" in user.labels and user["id"] == "xiaoming" and user["name"] == "xiaoming"
    tiers = {i["name"]: set(i.labels) - {"Interest"} for i in record["interests"]}
    assert tiers == {
        "Django框架": {"Core"},
        "Python基础": {"Core"},
        "Django部署": {"Related"},
        "SQLAlchemy": {"Related"},
        "SQL基础": {"Compacted"},
    }
    assert all("Interest" in i.labels for i in record["interests"])
    assert {c["name"] for c in record["concepts"]} == set(tiers)
    assert {r.type for r in record["links"]} == {"HAS_INTEREST", "ABOUT"}
    rels: list[Relationship] = record["relations"]
    drawn = {(r.start_node["name"], r.type, r.end_node["name"]) for r in rels}
    assert ("Python基础", "PREREQUISITE_OF", "Django框架") in drawn
    assert ("Django框架", "USES", "SQLAlchemy") in drawn
    assert ("SQLAlchemy", "REQUIRES", "SQL基础") in drawn
    assert ("Django框架", "PREREQUISITE_OF", "Django部署") in drawn  # a catalog relation
    # One edge per (source, type, target) even where catalog and learner both state it.
    assert len(drawn) == len(rels)
    # sam stated Python基础 RELATED_TO SQLAlchemy; it is his, never drawn for xiaoming.
    assert all(r["owner"] in ("catalog", "u:xiaoming") for r in rels)
    assert "RELATED_TO" not in {r.type for r in rels}


def test_user_graph_for_another_learner_hides_xiaomings_relations(store, driver, demo_tenant):
    [record] = run_saved(store, driver, "explore_user_graph", demo_tenant, user_id="sam")
    assert all(r["owner"] in ("catalog", "u:sam") for r in record["relations"])
    assert ("Python基础", "RELATED_TO", "SQLAlchemy") in {
        (r.start_node["name"], r.type, r.end_node["name"]) for r in record["relations"]
    }


def test_tiers_table_orders_core_related_compacted(store, driver, demo_tenant):
    rows = run_saved(store, driver, "explore_tiers", demo_tenant)
    assert [(r["tier"], r["concept"]) for r in rows] == [
        ("core", "Django框架"),
        ("core", "Python基础"),
        ("related", "Django部署"),
        ("related", "SQLAlchemy"),
        ("compacted", "SQL基础"),
    ]
    by_name = {r["concept"]: r for r in rows}
    assert by_name["Django框架"]["weight"] == 48.0 and by_name["Django框架"]["initial_weight"] == 40.0
    assert by_name["Python基础"]["stance"] == "knows"  # confused in week 1, knows in week 2
    assert by_name["SQL基础"]["folded_into"] == "related_to_core_topics"
    assert by_name["SQL基础"]["compacted_at"] is not None and by_name["Django框架"]["compacted_at"] is None
    assert all(not isinstance(v, (Node, Relationship, Path)) for r in rows for v in r.values())


def _gaps(rows: list[Any]) -> dict[str, Any]:
    return {r["gap"]: r for r in rows}


def test_gaps_for_django_deployment_come_with_their_prerequisite_paths(store, driver, demo_tenant):
    rows = run_saved(store, driver, "explore_gaps", demo_tenant, focus="Django部署")
    gaps = _gaps(rows)
    assert {"Linux服务器管理", "CI/CD流程"} <= set(gaps)
    for name in ("Linux服务器管理", "CI/CD流程"):
        row = gaps[name]
        path: Path = row["path"]
        assert row["focus"] == "Django部署" and row["depth"] == 1 and row["via"] == ["PREREQUISITE_OF"]
        assert path.start_node["name"] == "Django部署" and path.end_node["name"] == name
        [rel] = path.relationships
        assert rel.type == "PREREQUISITE_OF" and rel.start_node["name"] == name and rel.end_node["name"] == "Django部署"
        assert row["reason"] == "never mentioned"
    # Depth 2 through a gap: Git版本控制 -PREREQUISITE_OF-> CI/CD流程 -PREREQUISITE_OF-> Django部署.
    assert gaps["Git版本控制"]["depth"] == 2
    assert [n["name"] for n in gaps["Git版本控制"]["path"].nodes] == ["Django部署", "CI/CD流程", "Git版本控制"]
    # SQL基础 only came up in an assistant turn, so it is still a gap (via PostgreSQL, which it precedes).
    assert gaps["SQL基础"]["reason"] == "only the assistant mentioned it"
    # Shown concepts are never gaps, and the walk does not go through them.
    assert not {"Django框架", "Python基础"} & set(gaps)
    # sam's own "Docker PREREQUISITE_OF Django部署" is not xiaoming's; Docker is no gap for him.
    assert "Docker" not in gaps
    assert all(r["owner"] == "catalog" for row in rows for r in row["path"].relationships)


def test_gaps_accept_an_alias_and_default_to_the_core_topics(store, driver, demo_tenant):
    by_name = _gaps(run_saved(store, driver, "explore_gaps", demo_tenant, focus="Django部署"))
    by_alias = _gaps(run_saved(store, driver, "explore_gaps", demo_tenant, focus="deploy django"))
    assert set(by_alias) == set(by_name)
    core = run_saved(store, driver, "explore_gaps", demo_tenant, focus=None)
    assert {r["focus"] for r in core} == {"Django框架"}  # Python基础 (known) depends on nothing here
    assert {"SQLAlchemy", "HTTP协议", "SQL基础"} <= set(_gaps(core))
    assert "Python基础" not in _gaps(core)


def test_provenance_paths_end_at_the_turns_that_mention_the_concept(store, driver, demo_tenant):
    rows = run_saved(store, driver, "explore_provenance", demo_tenant, concept="Django框架")
    expected_mentions = {
        t.turn_id
        for turns in xiaoming_turns().values()
        for t in turns
        if any(m.key == key_of("Django框架") for m in t.extraction.concepts)
    }
    expected_stances = {
        t.turn_id
        for turns in xiaoming_turns().values()
        for t in turns
        if any(s.key == key_of("Django框架") for s in t.extraction.stances)
    }
    assert {r["turn"] for r in rows if r["evidence"] == "MENTIONS"} == expected_mentions
    assert {r["turn"] for r in rows if r["evidence"] == "EXPRESSES"} == expected_stances
    for r in rows:
        path: Path = r["path"]
        labels = [next(iter(n.labels)) for n in path.nodes]
        assert labels == ["User", "Session", "Turn", "Concept"]
        assert [rel.type for rel in path.relationships][:2] == ["HAD_SESSION", "HAS_TURN"]
        turn = path.nodes[-2]
        assert turn["id"] == r["turn"] and turn["user_id"] == "xiaoming"
        assert path.end_node["name"] == "Django框架"
        if r["evidence"] == "MENTIONS":
            assert turn["text"][path.relationships[-1]["start"] : path.relationships[-1]["end"]] == r["said"]
    assert [r["ts"] for r in rows] == sorted(r["ts"] for r in rows)


def test_provenance_never_crosses_to_another_learner(store, driver, demo_tenant):
    rows = run_saved(store, driver, "explore_provenance", demo_tenant, concept="Django部署")
    assert [r["turn"] for r in rows] == ["xiaoming-week2-4"]
    assert rows[0]["said"] == "部署Django"


def test_timeline_counts_mentions_per_session(store, driver, demo_tenant):
    rows = run_saved(store, driver, "explore_timeline", demo_tenant)
    assert [r["session"] for r in rows] == list(XIAOMING)
    assert rows[0]["started_at"] < rows[1]["started_at"]
    for row, turns in zip(rows, xiaoming_turns().values(), strict=True):
        expected = Counter(m.name for t in turns for m in t.extraction.concepts)
        assert {c["concept"]: c["mentions"] for c in row["concepts"]} == dict(expected)
        assert row["mentions"] == sum(expected.values())
        counts = [c["mentions"] for c in row["concepts"]]
        assert counts == sorted(counts, reverse=True)
    week1 = {c["concept"]: c for c in rows[0]["concepts"]}
    assert week1["Python基础"]["by_user"] == 2 and week1["Python基础"]["mentions"] == 3


def test_shared_interests_are_names_and_counts_only(store, driver, demo_tenant):
    rows = run_saved(store, driver, "explore_shared_interests", demo_tenant)
    assert all(r.keys() == ["concept", "users", "core_for_users"] for r in rows)
    assert all(isinstance(r["concept"], str) and isinstance(r["users"], int) for r in rows)
    counts = {r["concept"]: r["users"] for r in rows}
    assert counts["Python基础"] == 2 and counts["Django部署"] == 2
    assert counts["Django框架"] == 1
    assert "SQL基础" not in counts  # only the assistant ever mentioned it
    assert "Flask app" not in counts  # sam's own words (not in the catalog), shared by nobody
    texts = {t.text for turns in xiaoming_turns().values() for t in turns}
    assert not any(v in texts or v in ("xiaoming", "sam") for r in rows for v in r.values())
    shared = run_saved(store, driver, "explore_shared_interests", demo_tenant, min_users=2)
    assert {r["concept"] for r in shared} == {"Python基础", "Django部署"}


def test_compaction_shows_the_summary_and_the_run(store, driver, demo_tenant):
    [record] = run_saved(store, driver, "explore_compaction", demo_tenant)
    [folded] = record["summary"]
    assert [next(iter(n.labels - {"Compacted"})) for n in folded.nodes] == ["User", "Summary", "Interest", "Concept"]
    assert folded.nodes[1]["name"] == "related_to_core_topics" and folded.end_node["name"] == "SQL基础"
    [ran] = record["runs"]
    assert ran.end_node["ranker"] == "reference"


# -- the text for the Browser -------------------------------------------------------------------


HOSTILE_IDS = [
    "x'}) MATCH (n) DETACH DELETE n //",
    "back\\slash\\'",
    "new\nline;\n:param tenant => 'evil'",
    "控制\u0000字符\u2028",
    "\\u0027 quote",
    "😀 emoji",
]


@pytest.mark.parametrize("value", HOSTILE_IDS)
def test_literals_round_trip_through_the_server(driver, value):
    literal = cypher_literal(value)
    assert "\n" not in literal and "\r" not in literal
    [record] = run(driver, f"RETURN {literal} AS v")
    assert record["v"] == value


def test_param_lines_are_one_line_and_evaluate_to_the_value(driver):
    for value in HOSTILE_IDS:
        line = param_line("user_id", value)
        assert line.startswith(":param user_id => ") and line.endswith(";") and "\n" not in line
        expr = line[len(":param user_id => ") : -1]
        assert run(driver, f"RETURN {expr} AS v")[0]["v"] == value
    assert param_line("focus", None) == ":param focus => null;"
    assert param_line("min_users", 2) == ":param min_users => 2;"


def test_render_explore_prints_every_query_with_its_params(store):
    text = render_explore(store.cypher, "default", "xiaoming", focus="Django部署")
    blocks = text.strip().split("\n\n")
    assert [b.splitlines()[0].split(":")[0] for b in blocks] == [f"// {n}" for n in store.cypher.names("explore_")]
    gaps = next(b for b in blocks if b.startswith("// explore_gaps"))
    assert ":param tenant => 'default';" in gaps and ":param user_id => 'xiaoming';" in gaps
    assert ":param focus => 'Django部署';" in gaps and gaps.endswith(";")
    shared = next(b for b in blocks if b.startswith("// explore_shared_interests"))
    assert ":param user_id" not in shared  # a tenant-wide query gets no user parameter
    hostile = render_explore(store.cypher, "default", HOSTILE_IDS[0])
    assert ":param user_id => 'x\\'}) MATCH (n) DETACH DELETE n //';" in hostile


def test_inlining_replaces_whole_parameter_names_only():
    text = "MATCH (u {id: $user_id, t: $tenant}) WHERE $user IS NULL RETURN $user_id"
    out = inline_params(text, {"user_id": "a'b", "tenant": "t", "user": None})
    assert out == "MATCH (u {id: 'a\\'b', t: 't'}) WHERE null IS NULL RETURN 'a\\'b'"
    with pytest.raises(KeyError):
        inline_params("RETURN $nope", {})


def test_explore_params_default_the_concept_to_the_focus():
    assert explore_params("t", "u", focus="Django部署")["concept"] == "Django部署"
    assert explore_params("t", "u", focus="A", concept="B")["concept"] == "B"


# -- the Browser guide ---------------------------------------------------------------------------


class _Guide(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.runnable: list[str] = []
        self._in_pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "script":
            raise AssertionError("a script tag in the guide")
        cls = dict(attrs).get("class") or ""
        if tag == "pre" and "runnable" in cls.split():
            self._in_pre = True
            self.runnable.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._in_pre = False

    def handle_data(self, data: str) -> None:
        if self._in_pre:
            self.runnable[-1] += data


def test_guide_runs_every_block_against_the_server(store, driver, demo_tenant):
    html = render_guide(store.cypher, demo_tenant, ["xiaoming", "sam"], {"xiaoming": "Django部署"})
    assert html.startswith('<article class="guide">\n<carousel class="deck container">')
    parser = _Guide()
    parser.feed(html)
    assert parser.tags.count("slide") == 4  # set-up, xiaoming, sam, tenant
    blocks = parser.runnable
    assert blocks[0] == ":config autoComplete: false"
    assert blocks[1] == style_command((store.cypher.folder / "graphmem.grass").read_text(encoding="utf-8"))
    cypher = blocks[2:]
    # xiaoming: every query (8, one tenant-wide on its own slide); sam: no focus, so no provenance.
    assert len(cypher) == 7 + 6 + 1
    for block in cypher:
        assert "$" not in block  # parameters are inlined: one click, nothing to set first
        run(driver, block)
    xiaoming = [b for b in cypher if "'xiaoming'" in b]
    assert len(xiaoming) == 7 and any("'Django部署'" in b for b in xiaoming)


def test_guide_escapes_what_users_supply(store):
    evil = "<script>alert(1)</script>'&"
    html = render_guide(store.cypher, "t<b>", [evil], {evil: "</pre><img src=x onerror=alert(1)>"}, grass="node {}")
    assert "<script>" not in html and "<img" not in html and "t<b>" not in html
    parser = _Guide()
    parser.feed(html)
    # Unescaped by the parser, the code is the exact Cypher with the id as one string literal.
    assert any(cypher_literal(evil) in block for block in parser.runnable)


def test_demo_guide_covers_the_four_demo_learners(store):
    html = render_guide(store.cypher, "default", DEMO_USERS, None)
    for user in ("xiaoming", "emma", "li_wei", "sam"):
        assert f"Learner <code>{user}</code>" in html


# -- the GraSS sheet and the CLI -------------------------------------------------------------------


def _grass_rules(text: str) -> dict[str, dict[str, str]]:
    """Reads GraSS the way the Browser's parser does: `selector { key: value; ... }`, quotes stripped."""
    rules: dict[str, dict[str, str]] = {}
    for selector, body in re.findall(r"([^{}\s]+)\s*\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", text):
        props = {}
        for prop in body.split(";"):
            if prop.strip():
                key, sep, value = prop.partition(":")
                assert sep and ":" not in value, f"{selector}: {prop!r} must be one `key: value` (no ':' in values)"
                props[key.strip()] = value.strip()
        assert selector not in rules, f"{selector} twice: the Browser keeps only the last one"
        rules[selector] = props
    return rules


def test_grass_sheet_reads_at_a_glance(store):
    text = (store.cypher.folder / "graphmem.grass").read_text(encoding="utf-8")
    # The Browser's GraSS parser has no comments, and an unbalanced quote swallows the rest of the sheet.
    assert "/*" not in text and "//" not in text and text.count("'") % 2 == 0 and '"' not in text
    rules = _grass_rules(text)
    order = list(rules)
    for label in ("Concept", "Interest", "User", "Session", "Turn"):
        caption = rules[f"node.{label}"]["caption"]
        assert re.fullmatch(r"'\{\w+\}'", caption) and caption != "'{id}'", label
    assert rules["node.Concept"]["caption"] == rules["node.Interest"]["caption"] == "'{name}'"
    # Tier rules come after node.Interest, so an Interest:Core node takes the Core size and colour.
    assert order.index("node.Interest") < min(order.index(f"node.{t}") for t in ("Core", "Related", "Compacted"))
    size = {t: int(rules[f"node.{t}"]["diameter"].removesuffix("px")) for t in ("Core", "Related", "Compacted")}
    assert size["Core"] > size["Related"] > size["Compacted"]
    colours = {rules[f"node.{t}"]["color"] for t in ("Core", "Related", "Compacted", "Concept")}
    assert len(colours) == 4  # core, related, compacted and gap/neutral are told apart by colour
    for rel in ("PREREQUISITE_OF", "REQUIRES", "USES", "PART_OF", "RELATED_TO", "MENTIONS", "EXPRESSES"):
        assert rules[f"relationship.{rel}"]["caption"] == "'<type>'"
    assert rules["relationship"]["caption"] == "'<type>'"


def test_cli_explore_prints_setup_and_queries(capsys):
    from graphmem.cli import main

    assert main(["explore", "xiaoming", "--tenant", "demo", "--focus", "Django部署"]) == 0
    out = capsys.readouterr().out
    assert ":config autoComplete: false\n:style node {" in out
    assert ":param tenant => 'demo';" in out and ":param focus => 'Django部署';" in out
    assert ":param concept => 'Django部署';" in out  # provenance follows the focus by default
    assert out.count("// explore_") == len(EXPECTED_QUERIES)


# -- the same saved queries on the real demo (demo/ loaded through the HTTP API with spaCy) ----------


def test_saved_queries_on_the_real_demo(store, driver, real_demo_tenant):
    tenant = real_demo_tenant
    rows = {
        q.name: run(driver, q.text, q.params)
        for q in explore_queries(store.cypher, tenant, "xiaoming", focus="Django部署", concept="Django框架")
    }
    assert all(rows[name] for name in EXPECTED_QUERIES), [n for n in EXPECTED_QUERIES if not rows[n]]

    graph = rows["explore_user_graph"][0]
    interest_names = {i["name"] for i in graph["interests"]}
    assert {"Python基础", "Django框架"} <= interest_names
    assert all(r["owner"] in ("catalog", "u:xiaoming") for r in graph["relations"])

    tiers = [r["tier"] for r in rows["explore_tiers"]]
    assert tiers == sorted(tiers, key=["core", "related", "compacted", "unranked"].index)  # core, related, compacted
    assert {"core", "compacted"} <= set(tiers)  # the demo runs compaction after loading

    gap_names = {r["gap"] for r in rows["explore_gaps"]} if "gap" in rows["explore_gaps"][0].keys() else set()
    assert {"Linux服务器管理", "CI/CD流程"} <= gap_names, rows["explore_gaps"][0].keys()

    provenance = rows["explore_provenance"]
    assert {r["session"] for r in provenance} == {"week1", "week2"}
    for r in provenance:  # each row is a turn that said the concept, with the words it used
        assert r["said"] in r["text"] and "Django" in r["text"]
        assert r["path"].start_node["id"] == "xiaoming"

    sessions = [r["session"] for r in rows["explore_timeline"]]
    assert sessions == ["week1", "week2"]

    shared = {r["concept"]: r["users"] for r in rows["explore_shared_interests"]}
    assert shared.get("Python基础", 0) >= 2  # xiaoming and sam both talk about Python basics
    # aggregate only: names and counts, never a user id or a turn
    assert all(list(r.keys()) == ["concept", "users", "core_for_users"] for r in rows["explore_shared_interests"])
