"""Knowledge gaps: what the user's topics depend on that the user has not shown."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from graphmem.evidence import evidence, mastery_phrase
from graphmem.memo import Memo
from graphmem.models import DEPENDENCY_TYPES, ConceptEdge, RelationType, UserGraph
from graphmem.ranking import Ranking, TypedPair

# How a dependency A relates to the concept B that depends on it, read from A.
_PHRASE = {
    RelationType.prerequisite: "prerequisite of",
    RelationType.requires: "required by",
    RelationType.uses: "used by",
}


@dataclass(frozen=True)
class GapConfig:
    threshold: float = 5.0
    depth: int = 2


@dataclass(frozen=True)
class Gap:
    key: str
    # Dependency hops from the nearest root; 0 for a root the user is confused
    # about; None for a confusing concept no root depends on.
    depth: int | None
    # (dependent key, relation) pairs one hop closer to the roots.
    dependents: tuple[tuple[str, RelationType], ...]
    confused: bool
    reason: str


def dependency_map(pairs: Iterable[TypedPair]) -> dict[str, list[tuple[str, RelationType]]]:
    """``deps[B]`` = the concepts B depends on, with the relation that says so.

    ``A -prerequisite-> B``: A is a dependency of B. ``B -requires-> A``: A is
    a dependency of B. ``uses`` is not a dependency (what a topic uses is related). ``pairs`` are the ranking's
    channels (:func:`graphmem.ranking.typed_pairs`): catalog and user edges
    both count, already deduplicated, without self-loops or unknown concepts.
    """
    deps: dict[str, list[tuple[str, RelationType]]] = {}
    for p in pairs:
        if p.relation not in DEPENDENCY_TYPES:
            continue
        if p.relation is RelationType.prerequisite:
            deps.setdefault(p.target, []).append((p.source, p.relation))
        else:
            deps.setdefault(p.source, []).append((p.target, p.relation))
    return deps


def catalog_dependency_map(edges: Iterable[ConceptEdge]) -> dict[str, tuple[str, ...]]:
    """``deps[B]`` = the keys B depends on, over a whole catalog's relations (no graph needed).

    The same rule as :func:`dependency_map`; built once per catalog version by the store and
    attached to every user graph as ``UserGraph.catalog_deps``, so that "presumed known" follows
    a known concept's ancestors past the loaded 2-hop subgraph.
    """
    deps: dict[str, dict[str, None]] = {}
    for e in edges:
        if e.source == e.target or e.type not in DEPENDENCY_TYPES:
            continue
        if e.type is RelationType.prerequisite:
            deps.setdefault(e.target, {})[e.source] = None
        else:
            deps.setdefault(e.source, {})[e.target] = None
    return {b: tuple(sorted(a)) for b, a in deps.items()}


def _cached_dependency_map(ranking: Ranking, memo: Memo) -> dict[str, list[tuple[str, RelationType]]]:
    """The dependency map of a ranking, built once: a ranked graph serves many context requests."""
    return memo.get("dependency_map", lambda: dependency_map(ranking.pairs), of=ranking)


def _stance_keys(graph: UserGraph, memo: Memo) -> tuple[tuple[str, ...], frozenset[str]]:
    """(concepts the user knows, concepts the user struggles with), once per ranked graph.

    Knowing and struggling come from the newer of stance and graded-attempt mastery
    (:func:`graphmem.evidence.evidence`): low mastery counts as struggling, mastery as knowing.
    """

    def build() -> tuple[tuple[str, ...], frozenset[str]]:
        states = {k: evidence(n).state for k, n in graph.concepts.items()}
        knows = tuple(k for k, s in states.items() if s == "knows")
        return knows, frozenset(k for k, s in states.items() if s == "struggles")

    return memo.get("stance_keys", build, of=graph)


def is_shown(graph: UserGraph, ranking: Ranking, key: str, threshold: float) -> bool:
    """Has the user shown this concept?

    Knowing it (a ``knows`` stance, or mastery from graded attempts, whichever is newer — see
    :func:`graphmem.evidence.evidence`) counts as shown; struggling (``confused``, or low mastery)
    never does; otherwise the
    user's own (decayed) mention weight must reach the threshold — so a
    concept only the assistant talked about is not shown.
    """
    state = evidence(graph.concepts[key]).state
    if state == "knows":
        return True
    if state == "struggles":
        return False
    return ranking.user_initial(key) >= threshold


def find_gaps(
    graph: UserGraph,
    ranking: Ranking,
    roots: Sequence[str],
    config: GapConfig,
    memo: Memo | None = None,
) -> list[Gap]:
    """Knowledge gaps below ``roots``, in learning order.

    Parameters
    ----------
    graph : UserGraph
    ranking : the graph's ranking (its channels and ``user_initial`` are read).
    roots : the topics whose dependencies matter (focus topics, else core topics).
    config : GapConfig (``threshold``, ``depth``).
    memo : the ranked graph's memo (:class:`graphmem.memo.Memo`) for what does not depend on
        ``roots``; None computes everything afresh.

    Returns
    -------
    list of Gap
        Breadth-first search from all roots along the *dependency* direction
        (:func:`dependency_map`) to ``config.depth`` hops. A concept reached is a
        gap when the user has not shown it (:func:`is_shown`). The walk goes on
        through gaps but stops at shown concepts: a learner who shows a
        prerequisite is presumed to have its own prerequisites. Likewise, what
        a concept the user says they *know* (stance ``knows``) depends on, at
        any depth, is presumed known and is no gap ("I know linear regression"
        implies its prerequisites): the walk starts at every known concept,
        a known root included, never passes through another root, and follows
        the loaded subgraph's dependencies and the tenant catalog's whole
        dependency map (``graph.catalog_deps``), so an ancestor three or more
        hops above a known concept is presumed known too. Roots are not
        gaps unless the user is confused by them (depth 0). Every concept the
        user is confused by is a gap; those no root depends on come last.

        Order: depth ascending; within one depth, dependency (learning) order —
        a gap that another gap of the same depth depends on comes first
        (Kahn's algorithm, ties and cycle breaks by (name, key)).
    """
    memo = Memo() if memo is None else memo
    deps = _cached_dependency_map(ranking, memo)
    root_list = [r for r in dict.fromkeys(roots) if r in graph.concepts]
    root_set = set(root_list)
    knows, confused = _stance_keys(graph, memo)
    presumed = _PresumedKnown(graph, memo, deps, knows, root_set)
    depth, dependents = _walk_dependencies(
        deps,
        root_list,
        lambda a: a in presumed or is_shown(graph, ranking, a, config.threshold),
        config.depth,
    )
    gap_depth = _gap_depths(depth, root_set, confused)
    out: list[Gap] = []
    for k in _gaps_in_order(gap_depth, deps, graph):
        ds = tuple(dependents.get(k, ()))
        out.append(Gap(k, gap_depth[k], ds, k in confused, _reason(graph, gap_depth[k], ds, k in confused, k)))
    return out


def _walk_dependencies(
    deps: Mapping[str, list[tuple[str, RelationType]]],
    roots: list[str],
    shown: Callable[[str], bool],
    max_depth: int,
) -> tuple[dict[str, int], dict[str, list[tuple[str, RelationType]]]]:
    """Breadth-first search from ``roots`` along the dependency direction.

    Parameters
    ----------
    deps : the dependency map (:func:`dependency_map`).
    roots : distinct start keys (depth 0); the walk never enters a root.
    shown : does the user show this concept (or is it presumed known)? The walk stops there.
    max_depth : hops from the roots.

    Returns
    -------
    depth : dict
        key -> hops from the nearest root, for the roots (0) and every concept reached that is not shown.
    dependents : dict
        key -> the (dependent, relation) pairs one hop closer to the roots, in the order met.
    """
    root_set = set(roots)
    depth: dict[str, int] = dict.fromkeys(roots, 0)
    dependents: dict[str, list[tuple[str, RelationType]]] = {}
    frontier = list(roots)
    for d in range(1, max(0, max_depth) + 1):
        nxt: list[str] = []
        for b in frontier:
            for a, rel in deps.get(b, ()):
                if a in root_set:
                    continue
                if a not in depth:
                    if shown(a):
                        continue
                    depth[a] = d
                    nxt.append(a)
                if depth[a] == d and (b, rel) not in dependents.setdefault(a, []):
                    dependents[a].append((b, rel))
        frontier = nxt
    return depth, dependents


def _gap_depths(depth: Mapping[str, int], roots: set[str], confused: frozenset[str]) -> dict[str, int | None]:
    """Gap key -> depth: the concepts the walk reached (roots excluded), a root the user is confused by
    at 0, and any other confusing concept at None (no root depends on it)."""
    gap_depth: dict[str, int | None] = {k: v for k, v in depth.items() if k not in roots}
    for k in sorted(confused):
        if k in roots:
            gap_depth[k] = 0
        else:
            gap_depth.setdefault(k, None)
    return gap_depth


def _gaps_in_order(
    gap_depth: Mapping[str, int | None], deps: Mapping[str, list[tuple[str, RelationType]]], graph: UserGraph
) -> list[str]:
    """Depth ascending (None last); within a depth, learning order (:func:`_learning_order`)."""
    groups: dict[int | None, list[str]] = {}
    for k, gd in gap_depth.items():
        groups.setdefault(gd, []).append(k)
    order: list[str] = []
    for level in sorted(g for g in groups if g is not None):
        order.extend(_learning_order(groups[level], deps, graph))
    if None in groups:
        order.extend(_learning_order(groups[None], deps, graph))
    return order


class _PresumedKnown:
    """Membership in :func:`_presumed_known` for the given roots, without walking the whole closure.

    The closure without roots is derived once per ranked graph. A concept outside it is never
    presumed known; when the roots touch neither it nor the known concepts it is the answer;
    otherwise one concept is checked by walking up its dependents (not through a non-known root)
    until a known concept is met — a few nodes, where recomputing the closure for every focus took
    ~12 ms on a 10,000-concept user. The walk up stays inside the closure: a dependent that leads
    to a known concept is itself in the closure (or known), so the catalog's other concepts are
    never visited.
    """

    def __init__(
        self,
        graph: UserGraph,
        memo: Memo,
        deps: Mapping[str, list[tuple[str, RelationType]]],
        knows: tuple[str, ...],
        roots: set[str],
    ) -> None:
        # The walk passes through confused concepts although they are never presumed known: the
        # roots must miss everything it reached, not only what it kept, for the closure to be exact.
        reached = memo.get("known_reach", lambda: _reach(deps, knows, set(), graph.catalog_deps), of=(graph, deps))
        self.closure = memo.get("presumed_known", lambda: _keep_presumable(graph, reached), of=(graph, deps))
        self.roots = roots
        self.knows = frozenset(knows)
        self.exact = roots.isdisjoint(reached) and roots.isdisjoint(self.knows)
        self.up = (
            {}
            if self.exact
            else memo.get(
                "dependents_map",
                lambda: _dependents_map(deps, graph.catalog_deps, reached, self.knows),
                of=(graph, deps),
            )
        )

    def __contains__(self, key: object) -> bool:
        if key not in self.closure:
            return False
        if self.exact:
            return True
        seen: set[object] = set()  # not the key itself: a known key on a cycle reaches itself
        stack = [key]
        while stack:
            a = stack.pop()
            for b in self.up.get(a, ()):  # b depends on a
                if b in seen:
                    continue
                if b in self.knows:
                    return True
                if b in self.roots:
                    continue
                seen.add(b)
                stack.append(b)
        return False


def _dependents_map(
    deps: Mapping[str, list[tuple[str, RelationType]]],
    catalog_deps: Mapping[str, tuple[str, ...]] | None,
    reached: set[str],
    knows: frozenset[str],
) -> dict[str, list[str]]:
    """``up[A]`` = the concepts that depend on A, among the known-reach closure and the known concepts."""
    up: dict[str, dict[str, None]] = {}
    for b, items in deps.items():
        for a, _ in items:
            up.setdefault(a, {})[b] = None
    if catalog_deps:
        for b in (*reached, *knows):
            for a in catalog_deps.get(b, ()):
                up.setdefault(a, {})[b] = None
    return {a: list(bs) for a, bs in up.items()}


def _presumed_known(
    graph: UserGraph, deps: Mapping[str, list[tuple[str, RelationType]]], roots: set[str], knows: Iterable[str]
) -> frozenset[str]:
    """Every dependency, at any depth, of a concept the user says they know (``knows``, a root
    included), reached without passing through a root that is not known, over the subgraph's
    dependencies and the catalog's (``graph.catalog_deps``). Concepts the user is confused by are
    never presumed known.
    """
    return _keep_presumable(graph, _reach(deps, knows, roots, graph.catalog_deps))


def _reach(
    deps: Mapping[str, list[tuple[str, RelationType]]],
    knows: Iterable[str],
    roots: set[str],
    catalog_deps: Mapping[str, tuple[str, ...]] | None = None,
) -> set[str]:
    known = set(knows)
    stack = list(known)
    seen: set[str] = set()
    empty: tuple[str, ...] = ()
    while stack:
        b = stack.pop()
        for a in (*(a for a, _ in deps.get(b, ())), *(catalog_deps.get(b, empty) if catalog_deps else empty)):
            if a not in seen and (a not in roots or a in known):
                seen.add(a)
                if a not in known:  # a known concept was a start already
                    stack.append(a)
    return seen


def _keep_presumable(graph: UserGraph, reached: Iterable[str]) -> frozenset[str]:
    return frozenset(k for k in reached if k in graph.concepts and evidence(graph.concepts[k]).state != "struggles")


def _learning_order(
    keys: Iterable[str], deps: Mapping[str, list[tuple[str, RelationType]]], graph: UserGraph
) -> list[str]:
    """Topological order (dependencies first) of ``keys``; ties by (name, key).

    A cycle (possible in user-stated relations) is broken by emitting the
    smallest remaining concept by (name, key), so the result is still total
    and deterministic.
    """
    members = set(keys)
    before, after = _edges_within(members, deps)

    def tie(k: str) -> tuple[str, str]:
        return (graph.concepts[k].name, k)

    remaining = {k: len(v) for k, v in before.items()}
    ready = [tie(k) for k, c in remaining.items() if c == 0]
    heapq.heapify(ready)
    done: set[str] = set()
    out: list[str] = []
    while len(out) < len(members):
        if not ready:
            # Cycle: release the smallest concept still waiting.
            k = min((k for k in members if k not in done), key=tie)
            heapq.heappush(ready, tie(k))
            remaining[k] = 0
        _, k = heapq.heappop(ready)
        if k in done:
            continue
        done.add(k)
        out.append(k)
        for b in sorted(after[k]):
            if b in done:
                continue
            remaining[b] -= 1
            if remaining[b] == 0:
                heapq.heappush(ready, tie(b))
    return out


def _edges_within(
    members: set[str], deps: Mapping[str, list[tuple[str, RelationType]]]
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The dependencies among ``members``, without self-loops: (k -> what k depends on,
    k -> what depends on k)."""
    before: dict[str, set[str]] = {k: set() for k in members}
    after: dict[str, set[str]] = {k: set() for k in members}
    for b in members:
        for a, _ in deps.get(b, ()):
            if a in members and a != b:
                before[b].add(a)
                after[a].add(b)
    return before, after


def _reason(
    graph: UserGraph,
    depth: int | None,
    dependents: Sequence[tuple[str, RelationType]],
    confused: bool,
    key: str | None = None,
) -> str:
    parts: list[str] = []
    if dependents:
        by_phrase: dict[str, list[str]] = {}
        for b, rel in dependents:
            by_phrase.setdefault(_PHRASE[rel], []).append(graph.concepts[b].name)
        rel_text = "; ".join(f"{p} {', '.join(names)}" for p, names in by_phrase.items())
        parts.append(f"{rel_text} (depth {depth})")
    ev = evidence(graph.concepts[key]) if key is not None else None
    if ev is not None and ev.source == "mastery":
        # Graded answers, stated in the reason either way (low mastery, or not yet decisive).
        parts.append(ev.reason)
    elif confused:
        parts.append(ev.reason if ev is not None and ev.reason else "user said it confuses them")
    elif key is not None and graph.concepts[key].mastery is not None:
        parts.append(mastery_phrase(graph.concepts[key]))
    return "; ".join(parts)
