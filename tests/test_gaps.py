"""Knowledge gaps on hand graphs and on the shared Metacademy prerequisite graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphmem.gaps import GapConfig, find_gaps
from graphmem.memo import Memo
from graphmem.models import ConceptEdge, ConceptNode, RelationType, Stance, UserGraph
from graphmem.ranking import RankingConfig, rank
from tests.pure_graphs import NOW, PART, REL, P, R, U, graph, node
from tests.requires import REQUIRE_SHARED_DATA, missing

REF = RankingConfig(method="reference")


def gaps(g: UserGraph, roots: list[str], depth: int = 2) -> list[tuple[str, int | None]]:
    return [(x.key, x.depth) for x in find_gaps(g, rank(g, REF), roots, GapConfig(5.0, depth))]


def test_depth_one_and_two_along_all_dependency_directions() -> None:
    #   basics -prerequisite-> django        (basics is a dependency of django)
    #   django -requires-> http              (http is a dependency of django)
    #   django -uses-> orm                   (orm is used, not a dependency: related, no gap)
    #   sql -prerequisite-> orm              (not reached: orm is no gap)
    #   orm -part_of-> django, chat -related_to-> django: not dependencies
    #   django -prerequisite-> deploy        (deploy depends on django, not the other way)
    g = graph(
        [node("django", 1)] + [node(k) for k in ("basics", "http", "orm", "sql", "chat", "deploy", "tcp")],
        [
            ("basics", P, "django"),
            ("django", R, "http"),
            ("django", U, "orm"),
            ("sql", P, "orm"),
            ("orm", PART, "django"),
            ("chat", REL, "django"),
            ("django", P, "deploy"),
            ("http", R, "tcp"),
        ],
    )
    assert gaps(g, ["django"], depth=1) == [("basics", 1), ("http", 1)]
    assert gaps(g, ["django"], depth=2) == [("basics", 1), ("http", 1), ("tcp", 2)]
    reasons = {x.key: x.reason for x in find_gaps(g, rank(g, REF), ["django"], GapConfig())}
    assert reasons["basics"] == "prerequisite of django (depth 1)"
    assert reasons["http"] == "required by django (depth 1)"
    assert reasons["tcp"] == "required by http (depth 2)"
    assert "orm" not in reasons and "sql" not in reasons


def test_shown_concepts_are_not_gaps_and_stop_the_walk() -> None:
    # a <- b <- c <- d (prerequisite chain); the user mentioned b (10 >= 5): b is shown,
    # and the walk does not continue through it to c.
    g = graph([node("d", 1), node("c"), node("b", 1), node("a")], [("a", P, "b"), ("b", P, "c"), ("c", P, "d")])
    assert gaps(g, ["d"], depth=3) == [("c", 1)]


def test_knows_counts_as_shown_even_without_mentions() -> None:
    g = graph([node("t", 1), node("k", stance=Stance.knows), node("x")], [("k", P, "t"), ("x", P, "t")])
    assert gaps(g, ["t"]) == [("x", 1)]


def test_assistant_only_or_old_mentions_are_not_shown() -> None:
    old = NOW.timestamp() - 90 * 86_400  # 3 half-lives: 10 × 0.125 = 1.25 < 5
    g = graph(
        [node("t", 1), node("assist", 0, 5), node("old", mention_times=(old,), mention_roles=("user",))],
        [("assist", P, "t"), ("old", P, "t")],
    )
    assert gaps(g, ["t"]) == [("assist", 1), ("old", 1)]


def test_confused_concepts_are_gaps() -> None:
    g = graph(
        [
            node("t", 1),
            node("p", 3, stance=Stance.confused),
            node("root2", 2, stance=Stance.confused),
            node("elsewhere", 1, stance=Stance.confused),
        ],
        [("p", P, "t")],
    )
    found = find_gaps(g, rank(g, REF), ["t", "root2"], GapConfig())
    # A confused root comes first (depth 0), then dependencies, then unrelated confusions.
    assert [(x.key, x.depth) for x in found] == [("root2", 0), ("p", 1), ("elsewhere", None)]
    assert all(x.confused for x in found)
    assert found[1].reason == "prerequisite of t (depth 1); user said it confuses them"


def test_learning_order_within_a_depth() -> None:
    # t has prerequisites zeta, alpha, mid; zeta is itself a prerequisite of mid and alpha.
    # Same depth, so dependency order: zeta first, then alpha, mid by name.
    g = graph(
        [node("t", 1), node("alpha"), node("mid"), node("zeta")],
        [("zeta", P, "t"), ("alpha", P, "t"), ("mid", P, "t"), ("zeta", P, "mid"), ("zeta", P, "alpha")],
    )
    assert gaps(g, ["t"]) == [("zeta", 1), ("alpha", 1), ("mid", 1)]


def test_cycles_do_not_hang_and_are_deterministic() -> None:
    g = graph(
        [node("t", 1), node("a"), node("b"), node("c")],
        [("a", P, "t"), ("b", P, "t"), ("c", P, "t"), ("a", R, "b"), ("b", R, "c"), ("c", R, "a")],
    )
    # a requires b requires c requires a: a cycle. Broken at the smallest name, a; then
    # c (which requires a) is free, then b (which requires c).
    assert gaps(g, ["t"]) == [("a", 1), ("c", 1), ("b", 1)]


def test_mutual_prerequisites_are_dependencies_both_ways() -> None:
    # a -prerequisite-> b and b -prerequisite-> a (a 2-cycle the data states): each is a
    # dependency of the other, whichever is the root and whichever name sorts first.
    g = graph(
        [node("a", 1), node("b", 1), node("x"), node("y")], [("x", P, "a"), ("a", P, "x"), ("y", P, "b"), ("b", P, "y")]
    )
    assert gaps(g, ["a"]) == [("x", 1)]
    assert gaps(g, ["b"]) == [("y", 1)]
    # requires works the same way: t requires u and u requires t.
    g = graph([node("t", 1), node("u")], [("t", R, "u"), ("u", R, "t")])
    assert gaps(g, ["t"]) == [("u", 1)]
    g = graph([node("t"), node("u", 1)], [("t", R, "u"), ("u", R, "t")])
    assert gaps(g, ["u"]) == [("t", 1)]


def test_ancestors_of_a_known_concept_beyond_the_subgraph_are_presumed_known() -> None:
    # Catalog chain p4 -> p3 -> p2 -> p1 -> k (prerequisites), and p4 -> r. The user knows k and
    # asks about r. The store loads 2 hops around k and r: k-p1, p1-p2, r-p4, p4-p3, but not p3-p2,
    # so in the loaded subgraph p4 does not look like an ancestor of k. The catalog's dependency
    # map (UserGraph.catalog_deps) says it is: p4 is presumed known, r has no gap.
    from graphmem.gaps import catalog_dependency_map

    chain = [("p4", P, "p3"), ("p3", P, "p2"), ("p2", P, "p1"), ("p1", P, "k"), ("p4", P, "r")]
    loaded = [("p1", P, "k"), ("p2", P, "p1"), ("p4", P, "r"), ("p4", P, "p3")]
    nodes = [node("k", 1, stance=Stance.knows), node("r", 1), node("p1"), node("p2"), node("p3"), node("p4")]
    subgraph_only = graph(nodes, loaded)
    assert gaps(subgraph_only, ["r"]) == [("p4", 1)]  # the 2-hop view alone: the old answer
    deps = catalog_dependency_map(ConceptEdge(a, b, t) for a, t, b in chain)
    assert deps == {"p3": ("p4",), "p2": ("p3",), "p1": ("p2",), "k": ("p1",), "r": ("p4",)}
    with_catalog = graph(nodes, loaded, catalog_deps=deps)
    assert gaps(with_catalog, ["r"]) == []
    # Through a concept the graph did not even load (p3 missing): still presumed known.
    without_p3 = graph(
        [n for n in nodes if n.key != "p3"], [e for e in loaded if "p3" not in (e[0], e[2])], catalog_deps=deps
    )
    assert gaps(without_p3, ["r"]) == []
    # A confused ancestor is never presumed known; a non-known root still blocks the walk.
    confused = graph(
        [*(n for n in nodes if n.key != "p4"), node("p4", stance=Stance.confused)], loaded, catalog_deps=deps
    )
    assert [k for k, _ in gaps(confused, ["r"])] == ["p4"]
    assert gaps(with_catalog, ["r", "p2"]) == [("p4", 1)]


def test_a_known_root_presumes_its_dependencies_known() -> None:
    # "I have used NumPy for two years" (knows) and NumPy is a core topic (a root): its
    # prerequisite is no gap. Another root's own prerequisites still are.
    g = graph(
        [node("numpy", 2, stance=Stance.knows), node("ml", 1), node("python"), node("prob")],
        [("python", P, "numpy"), ("numpy", P, "ml"), ("prob", P, "ml")],
    )
    assert gaps(g, ["numpy", "ml"]) == [("prob", 1)]
    # python is a prerequisite of ml too: known through numpy, so still no gap.
    g2 = graph(list(g.concepts.values()), [("python", P, "numpy"), ("python", P, "ml"), ("prob", P, "ml")])
    assert gaps(g2, ["numpy", "ml"]) == [("prob", 1)]
    assert gaps(g2, ["ml"]) == [("prob", 1)]


def test_unknown_roots_are_ignored() -> None:
    g = graph([node("t", 1), node("x")], [("x", P, "t")])
    assert gaps(g, ["nope", "t"]) == [("x", 1)]
    assert gaps(g, []) == []


# ---------------------------------------------------------------------------
# Metacademy: "prerequisites" lists what must be learned BEFORE a concept,
# so each entry gives the edge prereq_tag -prerequisite-> concept_tag.
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def metacademy(shared_data: Path) -> dict[str, list[str]]:
    """tag -> prerequisite tags (only tags that exist), read at test time."""
    concepts = shared_data / "metacademy" / "concepts.jsonl"
    if not concepts.exists():
        missing(f"shared Metacademy data missing at {concepts} (set GRAPHMEM_SHARED_DATA)", REQUIRE_SHARED_DATA)
    rows = [json.loads(line) for line in concepts.read_text(encoding="utf-8").splitlines() if line.strip()]
    tags = {r["tag"] for r in rows}
    return {r["tag"]: list(dict.fromkeys(p["tag"] for p in r["prerequisites"] if p["tag"] in tags)) for r in rows}


def _learner(prereqs: dict[str, list[str]], mentioned: set[str]) -> UserGraph:
    nodes = [ConceptNode(t, t, user_mentions=1 if t in mentioned else 0) for t in prereqs]
    edges = tuple(ConceptEdge(p, t, RelationType.prerequisite) for t, ps in prereqs.items() for p in ps)
    return UserGraph("t", "learner", {x.key: x for x in nodes}, edges, now=NOW)


def _targets(prereqs: dict[str, list[str]]) -> list[str]:
    # Concepts with >= 2 prerequisites of which at least one has prerequisites of its own.
    return sorted(t for t, ps in prereqs.items() if len(ps) >= 2 and any(prereqs[p] for p in ps))[:25]


def test_metacademy_has_no_two_cycles(metacademy: dict[str, list[str]]) -> None:
    # The expectation below assumes no A<->B prerequisite pairs (each direction would add a dependency).
    assert not [(t, p) for t, ps in metacademy.items() for p in ps if t in metacademy.get(p, [])]


def test_metacademy_gaps_depth_one_and_two(metacademy: dict[str, list[str]]) -> None:
    targets = _targets(metacademy)
    assert len(targets) >= 10
    for t in targets:
        ps = metacademy[t]
        mentioned = {t} | set(ps[::2])  # the learner mentions T and every other prerequisite
        g = _learner(metacademy, mentioned)
        r = rank(g, REF)

        depth1 = [p for p in ps if p not in mentioned]
        found1 = find_gaps(g, r, [t], GapConfig(5.0, 1))
        assert {x.key for x in found1} == set(depth1), t

        depth2 = {a for p in depth1 for a in metacademy[p]} - mentioned - set(depth1)
        found2 = find_gaps(g, r, [t], GapConfig(5.0, 2))
        assert {x.key for x in found2} == set(depth1) | depth2, t
        assert {x.key for x in found2 if x.depth == 2} == depth2, t

        # Dependency order: depths ascending; within a depth, a prerequisite before what needs it.
        order = [x.key for x in found2]
        depths = [x.depth for x in found2]
        assert depths == sorted(depths), t
        pos = {k: i for i, k in enumerate(order)}
        for x in found2:
            for a in metacademy[x.key]:
                if a in pos and next(y.depth for y in found2 if y.key == a) == x.depth:
                    assert pos[a] < pos[x.key], (t, a, x.key)
        for x in found2:
            assert x.reason.startswith("prerequisite of "), x.reason


def test_presumed_known_membership_matches_the_full_walk_for_any_roots() -> None:
    """find_gaps asks _PresumedKnown (closure once per ranking, a local walk up when roots touch it)
    instead of recomputing _presumed_known for every focus: on random dependency graphs with random
    known / confused concepts and roots, both give the same answer for every concept."""
    import random

    from graphmem.gaps import (
        _cached_dependency_map,
        _presumed_known,
        _PresumedKnown,
        _stance_keys,
        catalog_dependency_map,
    )

    rnd = random.Random(7)
    for case in range(300):
        n = rnd.randint(3, 14)
        keys = [f"c{i}" for i in range(n)]
        stances = [rnd.choice([None, None, Stance.knows, Stance.confused]) for _ in keys]
        nodes = [node(k, rnd.randint(0, 1), stance=s) for k, s in zip(keys, stances, strict=True)]
        edges = [(rnd.choice(keys), rnd.choice([P, R, U]), rnd.choice(keys)) for _ in range(rnd.randint(0, 2 * n))]
        edges = [e for e in edges if e[0] != e[2]]
        catalog_deps = None
        if case % 2:
            # Half the cases: a tenant catalog larger than the loaded subgraph. Its relations span
            # the graph's concepts and concepts the graph never loaded (x*), and the graph holds
            # only some of them (the 2-hop view), as the store builds it.
            outside = [f"x{i}" for i in range(rnd.randint(0, 6))]
            everything = keys + outside
            catalog = [
                (rnd.choice(everything), rnd.choice([P, R, U]), rnd.choice(everything))
                for _ in range(rnd.randint(0, 3 * n))
            ]
            catalog = [e for e in catalog if e[0] != e[2]]
            catalog_deps = catalog_dependency_map(ConceptEdge(a, b, t) for a, t, b in catalog)
            edges += [e for e in catalog if e[0] in keys and e[2] in keys and rnd.random() < 0.5]
        g = graph(nodes, edges, catalog_deps=catalog_deps)
        r = rank(g, REF)
        memo = Memo()  # one ranked graph's memo, shared by the foci below
        deps = _cached_dependency_map(r, memo)
        knows, _ = _stance_keys(g, memo)
        for _ in range(4):  # several foci on one ranking, as the service serves them
            roots = set(rnd.sample(keys, rnd.randint(0, min(3, n))))
            expected = _presumed_known(g, deps, roots, knows)
            fast = _PresumedKnown(g, memo, deps, knows, roots)
            assert {k for k in keys if k not in roots and k in fast} == expected - roots, (case, roots)
