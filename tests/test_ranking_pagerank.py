"""The personalised PageRank ranker: agreement with reference and networkx, invariants."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem.compaction import CompactionConfig, plan_compaction
from graphmem.models import ConceptEdge, ConceptNode, RelationType, UserGraph
from graphmem.ranking import RankingConfig, rank, rank_pagerank, rank_reference, typed_pairs
from tests.pure_graphs import NOW, P, R, U, graph, node, worked_example

PR = RankingConfig(method="pagerank")
REF = RankingConfig(method="reference")


def test_default_ranker_is_pagerank() -> None:
    assert RankingConfig().method == "pagerank"
    assert rank(worked_example(), RankingConfig()).method == "pagerank"


def test_same_survivors_as_reference_on_worked_example() -> None:
    g = worked_example()
    ref = plan_compaction(g, rank(g, REF), CompactionConfig())
    pr_rank = rank(g, PR)
    pr = plan_compaction(g, pr_rank, CompactionConfig())
    assert set(pr.core) == set(ref.core) == {"Python基础", "Django框架"}
    assert pr.related == ref.related == ("SQLAlchemy",)
    assert pr.compacted == ref.compacted == ("SQL基础",)
    # Not a knife-edge: SQLAlchemy ≈ 9.8, SQL基础 ≈ 4.5 (documented in rank_pagerank).
    assert pr_rank["SQLAlchemy"].final == pytest.approx(9.84, abs=0.01)
    assert pr_rank["SQL基础"].final == pytest.approx(4.50, abs=0.01)


def test_scaling_invariant_total_equals_reference_total() -> None:
    g = worked_example()
    ref_total = sum(rc.final for rc in rank(g, REF).values())  # 18 + 18 + 6 + 0 = 42
    assert ref_total == 42
    pr = rank(g, PR)
    assert sum(pr.weight(k) for k in pr) == pytest.approx(42)
    assert pr.scale == pytest.approx(42)
    # initial + propagated = final, propagated may be negative (weight handed on).
    for rc in pr.values():
        assert rc.initial + rc.propagated == pytest.approx(rc.final)


def test_isolated_concept_keeps_its_initial_weight() -> None:
    g = graph([node("a", 1)], [])
    assert rank(g, PR)["a"].final == pytest.approx(10.0)


def _nx_reference(g: UserGraph, cfg: RankingConfig) -> dict[str, float]:
    """Principal eigenvector of networkx's Google matrix for the same undirected weighted graph."""
    ref = rank_reference(g, cfg)
    G = nx.Graph()
    G.add_nodes_from(sorted(g.concepts))
    for p in typed_pairs(g):
        w = cfg.edge_weight(p.relation)
        if G.has_edge(p.source, p.target):
            G[p.source][p.target]["weight"] += w
        else:
            G.add_edge(p.source, p.target, weight=w)
    pers = {k: ref[k].initial for k in G}
    M = nx.google_matrix(G, alpha=cfg.damping, personalization=pers, weight="weight", nodelist=sorted(G))
    vals, vecs = np.linalg.eig(M.T)
    x = np.real(vecs[:, np.argmax(np.real(vals))])
    x = x / x.sum()
    return dict(zip(sorted(G), x))


def test_agrees_with_networkx_google_matrix() -> None:
    g = graph(
        [node("a", 3), node("b", 1), node("c"), node("d", 0, 2), node("e"), node("lonely", 1)],
        [
            ("a", P, "b"),
            ("b", U, "c"),
            ("c", R, "a"),
            ("c", U, "d"),
            ("d", P, "e"),
            ("a", RelationType.related_to, "b"),
        ],
    )
    pr = rank_pagerank(g, PR)
    expected = _nx_reference(g, PR)
    for k, x in expected.items():
        assert pr.weight(k) == pytest.approx(x * pr.scale, rel=1e-8)


def test_contributions_are_the_stationary_inflows() -> None:
    g = worked_example()
    pr = rank(g, PR)
    # SQL基础's only neighbour is SQLAlchemy; with no personalisation, all its weight is inflow.
    [c] = pr["SQL基础"].contributions
    assert (c.neighbour, c.relation, c.direction) == ("SQLAlchemy", RelationType.requires, "in")
    assert c.amount == pytest.approx(pr.weight("SQL基础"))


def test_deterministic_and_independent_of_edge_order() -> None:
    g = worked_example()
    reordered = UserGraph(
        g.tenant, g.user_id, dict(reversed(list(g.concepts.items()))), tuple(reversed(g.edges)), now=NOW
    )
    a, b = rank(g, PR), rank(reordered, PR)
    assert {k: a.weight(k) for k in a} == {k: b.weight(k) for k in b}
    assert [a[k].contributions for k in sorted(a)] == [b[k].contributions for k in sorted(b)]


@st.composite
def small_graphs(draw: st.DrawFn) -> UserGraph:
    n = draw(st.integers(2, 8))
    keys = [f"k{i}" for i in range(n)]
    nodes = [
        ConceptNode(k, k, user_mentions=draw(st.integers(0, 4)), assistant_mentions=draw(st.integers(0, 2)))
        for k in keys
    ]
    pairs = draw(
        st.lists(
            st.tuples(st.sampled_from(keys), st.sampled_from(list(RelationType)), st.sampled_from(keys)), max_size=14
        )
    )
    return UserGraph("t", "u", {x.key: x for x in nodes}, tuple(ConceptEdge(s, t, r) for s, r, t in pairs), now=NOW)


@settings(max_examples=60, deadline=None)
@given(small_graphs(), st.data())
def test_more_mentions_never_lower_a_concepts_weight(g: UserGraph, data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(g.concepts)))
    extra = data.draw(st.integers(1, 5))
    old = g.concepts[key]
    bumped = UserGraph(
        g.tenant,
        g.user_id,
        {
            **g.concepts,
            key: ConceptNode(
                key, key, user_mentions=old.user_mentions + extra, assistant_mentions=old.assistant_mentions
            ),
        },
        g.edges,
        now=NOW,
    )
    for cfg in (PR, REF):
        before, after = rank(g, cfg), rank(bumped, cfg)
        assert after.weight(key) >= before.weight(key) - 1e-9
        # Above the threshold before -> still above after.
        if before.weight(key) >= 5:
            assert after.weight(key) >= 5


@settings(max_examples=40, deadline=None)
@given(small_graphs())
def test_pagerank_total_is_reference_total(g: UserGraph) -> None:
    ref, pr = rank(g, REF), rank(g, PR)
    total = sum(ref.weight(k) for k in ref)
    assert sum(pr.weight(k) for k in pr) == pytest.approx(total, abs=1e-6)
    assert all(pr.weight(k) >= 0 for k in pr)


def _nx_pagerank(g: UserGraph, cfg: RankingConfig) -> dict[str, float]:
    """networkx.pagerank on the same undirected weighted graph, restarting (and leaving dangling
    concepts) at the initial weights: the oracle the hand-written iteration is kept against."""
    ref = rank_reference(g, cfg)
    G = nx.Graph()
    G.add_nodes_from(sorted(g.concepts))
    for p in typed_pairs(g):
        w = cfg.edge_weight(p.relation)
        if G.has_edge(p.source, p.target):
            G[p.source][p.target]["weight"] += w
        else:
            G.add_edge(p.source, p.target, weight=w)
    pers = {k: ref[k].initial for k in G}
    return nx.pagerank(
        G, alpha=cfg.damping, personalization=pers, dangling=pers, weight="weight", tol=1e-12, max_iter=1000
    )


@settings(max_examples=40, deadline=None)
@given(small_graphs())
def test_agrees_with_networkx_pagerank(g: UserGraph) -> None:
    pr = rank_pagerank(g, PR)
    if pr.scale == 0:
        return  # no mentions: every weight is 0 (networkx refuses an all-zero personalisation)
    for k, x in _nx_pagerank(g, PR).items():
        assert pr.weight(k) == pytest.approx(x * pr.scale, rel=1e-7, abs=1e-9)


def test_power_iteration_that_does_not_converge_raises_as_networkx_does() -> None:
    g = worked_example()
    few = RankingConfig(method="pagerank", pagerank_max_iter=3)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        rank_pagerank(g, few)
    # networkx's own pagerank fails the same way on the same graph and budget.
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(nx.path_graph(4), max_iter=3, tol=1e-12)
    # With the default budget the same graph converges.
    assert rank_pagerank(g, PR).scale == pytest.approx(42)
