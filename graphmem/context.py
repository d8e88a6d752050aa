"""Context selection: which concepts go into a user's block, per scope.

Pure: graph + ranking + tiers (from :mod:`graphmem.compaction`) + focus keys in,
a :class:`ContextSelection` of ordered sections out. Rendering and token
budgeting happen in :mod:`graphmem.render`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphmem.errors import InvalidInput
from graphmem.evidence import evidence, knowledge_stance
from graphmem.gaps import GapConfig, find_gaps
from graphmem.memo import Memo
from graphmem.models import Stance, Tier, UserGraph
from graphmem.ranking import Ranking, sort_keys, top_keys
from graphmem.vocabulary import Scope, Section

if TYPE_CHECKING:
    from graphmem.settings import Settings


SCOPE_TAGS: dict[Scope, str] = {
    Scope.learning: "user_knowledge_context",
    Scope.recommendation: "user_preference_context",
    Scope.general: "user_context",
}

# Sections per scope, in the order they are rendered.
SCOPE_SECTIONS: dict[Scope, tuple[Section, ...]] = {
    Scope.learning: (Section.current_topic, Section.core_topics, Section.related_concepts, Section.knowledge_gaps),
    Scope.recommendation: (Section.core_topics, Section.related_concepts, Section.avoid),
    Scope.general: (Section.core_topics, Section.related_concepts),
}

# XML NCName (an XML Name without ':' — a prefix would need a namespace
# declaration and break parsers): letters, digits, '_', '-', '.', and the
# Unicode ranges of the XML 1.0 (5th ed.) NameStartChar / NameChar productions.
_NAME_START = (
    "A-Z_a-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
    "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff"
)
_NAME_CHAR = _NAME_START + r"\-.0-9\u00b7\u0300-\u036f\u203f-\u2040"
_NCNAME = re.compile(f"[{_NAME_START}][{_NAME_CHAR}]*")


def parse_scope(scope: Scope | str) -> Scope:
    try:
        return Scope(scope)
    except ValueError:
        raise InvalidInput(f"unknown scope {scope!r}; expected one of: {', '.join(s.value for s in Scope)}") from None


def resolve_tag(scope: Scope | str, tag: str | None = None) -> str:
    """The block's tag: the scope's default, or a custom tag validated as an XML NCName."""
    if tag is None:
        return SCOPE_TAGS[parse_scope(scope)]
    if len(tag) > 64 or not _NCNAME.fullmatch(tag) or tag.lower().startswith("xml"):
        raise InvalidInput(
            f"tag {tag!r} is not a valid XML name (letters, digits, '_', '-', '.'; "
            "not starting with a digit, '-', '.' or 'xml'; at most 64 characters)"
        )
    return tag


@dataclass(frozen=True)
class ContextConfig:
    threshold: float = 5.0
    gap_depth: int = 2
    # Upper bound per section before token budgeting; None means no bound.
    # A prompt block never needs thousands of items, and the bound keeps
    # rendering cost independent of graph size.
    max_items_per_section: int | None = 50
    # How many conversation topics stand in for core topics when no concept is core
    # (see select_context); 0 turns the fallback off.
    core_size: int = 5

    @classmethod
    def from_settings(cls, settings: Settings) -> ContextConfig:
        return cls(threshold=settings.threshold, gap_depth=settings.gap_depth, core_size=settings.core_size)


# Reason markers: a concept the user has a stance about is shown once, where it helps most, with
# the marker saying why (rendered "JavaScript (struggling)"; JSON {"name": ..., "reason": ...}).
STRUGGLING = "struggling"  # a current or core topic the user said confuses them
CONFUSED = "confused"  # a gap (or related concept) the user said confuses them
DISLIKES = "dislikes"  # a disliked concept shown outside `avoid` (a focus, a gap)
# Where a concept goes when several sections want it, first wins (see select_context).
PLACEMENT_ORDER: tuple[Section, ...] = (
    Section.current_topic,
    Section.core_topics,
    Section.knowledge_gaps,
    Section.related_concepts,
    Section.avoid,
)


@dataclass(frozen=True)
class ContextItem:
    key: str
    name: str
    weight: float
    tier: Tier | None
    reason: str
    evidence: tuple[str, ...] = ()
    # One of STRUGGLING / CONFUSED / DISLIKES, or None: the short reason the block shows.
    marker: str | None = None


@dataclass(frozen=True)
class ContextSelection:
    scope: Scope
    # Section name -> items, only the sections of the scope, in render order.
    sections: dict[str, tuple[ContextItem, ...]]

    def section(self, name: str) -> tuple[ContextItem, ...]:
        return self.sections.get(name, ())

    @property
    def core_topics(self) -> tuple[ContextItem, ...]:
        return self.section("core_topics")

    @property
    def related_concepts(self) -> tuple[ContextItem, ...]:
        return self.section("related_concepts")

    @property
    def knowledge_gaps(self) -> tuple[ContextItem, ...]:
        return self.section("knowledge_gaps")

    @property
    def current_topic(self) -> tuple[ContextItem, ...]:
        return self.section("current_topic")

    @property
    def avoid(self) -> tuple[ContextItem, ...]:
        return self.section("avoid")


@dataclass(frozen=True)
class _Pools:
    """The focus-independent part of a selection, in final order."""

    core: tuple[str, ...]  # core topics, then the below-threshold fill
    below: frozenset[str]  # the fill
    related: tuple[tuple[str, str], ...]  # (key, reason): neighbours of a core topic first
    disliked: tuple[str, ...]


def _pools(
    graph: UserGraph,
    ranking: Ranking,
    tiers: Mapping[str, Tier],
    sc: Scope,
    config: ContextConfig,
    demoted: frozenset[str] = frozenset(),
    passing: frozenset[str] = frozenset(),
) -> _Pools:
    concepts = graph.concepts

    def tier_of(k: str) -> Tier | None:
        # Not specific to this user (graphmem/specificity.py): out of core, fill and related.
        return None if k in demoted else tiers.get(k, concepts[k].tier)

    core = sort_keys((k for k in concepts if tier_of(k) is Tier.core), graph, ranking)
    below: set[str] = set()
    if sc is not Scope.recommendation and len(core) < config.core_size:
        # Fewer core topics than core_size (a learner who only answered "36" and "ok" while the
        # tutor named the topic once or twice): the conversation's heaviest other concepts are
        # still what this learner is working on, so they fill the core topics up to core_size,
        # after the real ones and marked as below the threshold.
        taken = set(core)
        fill = top_keys(
            (
                k
                for k, n in concepts.items()
                if k not in taken and k not in demoted and n.stance is not Stance.dislikes and ranking.initial(k) > 0
            ),
            graph,
            ranking,
            config.core_size - len(core),
        )
        below = set(fill)
        core = core + fill
    adjacency = ranking.neighbours()
    near = {nb for c in core for nb in adjacency.get(c, ())}
    related = [
        k
        for k in concepts
        if tier_of(k) is Tier.related
        and concepts[k].stance is not Stance.dislikes
        and k not in below
        and k not in passing
    ]
    first = sort_keys((k for k in related if k in near), graph, ranking)
    # Beyond a core topic's neighbours, only what the conversation itself named: a catalog concept that
    # PageRank reached two or more hops away (emma, a React learner: Django through HTTP, CI/CD through
    # Django deployment) is the curriculum's, not this user's.
    rest = sort_keys((k for k in related if k not in near and ranking.initial(k) > 0), graph, ranking)
    disliked = sort_keys((k for k, n in concepts.items() if n.stance is Stance.dislikes), graph, ranking)
    return _Pools(
        tuple(core),
        frozenset(below),
        tuple([(k, "neighbour of a core topic") for k in first] + [(k, "related concept") for k in rest]),
        tuple(disliked),
    )


def marker_for(section: str, stance: Stance | None) -> str | None:
    """The reason marker of a concept with ``stance`` shown in ``section`` (None: no marker)."""
    if stance is Stance.confused:
        return STRUGGLING if section in ("current_topic", "core_topics") else CONFUSED
    if stance is Stance.dislikes and section != "avoid":
        return DISLIKES
    return None


def select_context(
    graph: UserGraph,
    ranking: Ranking,
    tiers: Mapping[str, Tier],
    focus_keys: Sequence[str],
    scope: Scope | str,
    config: ContextConfig,
    names: Mapping[str, str] | None = None,
    demoted: Collection[str] = (),
    passing: Collection[str] = (),
    memo: Memo | None = None,
) -> ContextSelection:
    """Pick and order the concepts of a block.

    * ``current_topic`` (learning): the focus keys, in the given order;
    * ``core_topics``: tier ``core``, heaviest first; when there are fewer
      than ``config.core_size`` (learning and general scopes), the heaviest
      other mentioned, not disliked concepts follow, up to ``core_size`` (the
      conversation's topics, below the threshold or not the user's own);
    * ``knowledge_gaps`` (learning): :func:`graphmem.gaps.find_gaps` from the
      focus topics, or the core topics when there is no focus;
    * ``related_concepts``: tier ``related``, not disliked; neighbours of a
      core topic first, then other concepts the conversation named (one only
      reached through the catalog, two or more hops away, is left out), each
      group heaviest first;
    * ``avoid`` (recommendation): disliked concepts, heaviest first.

    ``demoted``: keys that are not specific to this user (graphmem/specificity.py); they stay
    out of core (and its fill) and related, and still count in ranking and gaps. ``passing``:
    keys that are specific only when central (a common word: core if heavy enough, never related).
    ``memo``: the ranked graph's :class:`graphmem.memo.Memo`, so what does not depend on the focus
    is computed once per ranked graph (None: computed afresh).

    One concept, one place: a concept several sections want is shown only in
    the first of :data:`PLACEMENT_ORDER` (current topic, core topics, gaps,
    related, avoid), with a reason marker when the user's stance explains it
    (:func:`marker_for`): a current or core topic the user is confused by is
    ``struggling`` there and is not repeated as a gap; a gap the user is
    confused by is ``confused``. A core topic that is a gap the user is *not*
    confused by (the user never showed it: the tutor named it) goes to the
    gaps only. A name already shown (two keys with one display name) is not
    shown again.

    ``names`` maps keys to display names (:mod:`graphmem.names`: the user's
    language); other concepts show their graph name. Order ties are broken by
    (name, key) of the graph, so the same input always gives the same
    selection. Focus keys that are not in the graph are ignored (the caller
    resolves focus text to keys).
    """
    sc = parse_scope(scope)
    wanted = SCOPE_SECTIONS[sc]
    cap = config.max_items_per_section
    concepts = graph.concepts
    shown_names = names or {}
    # Everything but gaps and the current topic is the same for every focus: ordered once per
    # ranked graph (a 10,000-concept user otherwise re-sorts its related concepts per request).
    out, side = frozenset(demoted), frozenset(passing)
    memo = Memo() if memo is None else memo
    pools = memo.get(
        ("context_pools", sc, config.core_size, out, side),
        lambda: _pools(graph, ranking, tiers, sc, config, out, side),
        of=(graph, ranking, tiers),
    )
    limit = None if cap is None else max(0, cap)
    placed: set[str] = set()  # keys shown so far, in placement order
    placed_names: set[str] = set()  # their display names, casefolded

    def take(section: str, candidates: Iterable[tuple[str, str]]) -> tuple[ContextItem, ...]:
        out: list[ContextItem] = []
        for k, reason in candidates:
            if limit is not None and len(out) >= limit:
                break
            node = concepts[k]
            name = shown_names.get(k, node.name)
            folded = name.casefold()
            if k in placed or folded in placed_names:
                continue
            placed.add(k)
            placed_names.add(folded)
            # Struggling / confused follows the newer of stance and graded-attempt mastery (evidence.py).
            marker = marker_for(section, knowledge_stance(node))
            if marker in (STRUGGLING, CONFUSED) and "confuses them" not in reason and "graded attempt" not in reason:
                reason = f"{reason}; {evidence(node).reason or 'user said it confuses them'}"
            elif marker == DISLIKES:
                reason = f"{reason}; user said they dislike it"
            out.append(
                ContextItem(k, name, ranking.weight(k), tiers.get(k, node.tier), reason, tuple(node.evidence), marker)
            )
        return tuple(out)

    core, below = list(pools.core), pools.below
    core_reason = "interest" if sc is Scope.recommendation else "core topic"
    sections: dict[str, tuple[ContextItem, ...]] = {}

    focus = [k for k in dict.fromkeys(focus_keys) if k in concepts]
    if "current_topic" in wanted:
        sections["current_topic"] = take("current_topic", ((k, "focus of the current question") for k in focus))

    gaps = []
    if "knowledge_gaps" in wanted:
        roots = focus if focus else core
        gaps = find_gaps(graph, ranking, roots, GapConfig(config.threshold, config.gap_depth), memo)
    # A gap the user has not said confuses them was never shown by the user (only the assistant
    # named it, or long ago): it is a gap, not one of their topics. A confused one stays a topic,
    # marked struggling, and is not repeated as a gap.
    plain_gaps = {g.key for g in gaps if not g.confused}

    if "core_topics" in wanted:
        ranked_core = [k for k in core if k not in placed and k not in plain_gaps]
        sections["core_topics"] = take(
            "core_topics",
            (
                (k, f"{'topic of the conversation, below the threshold' if k in below else core_reason} (rank {i + 1})")
                for i, k in enumerate(ranked_core)
            ),
        )

    if "knowledge_gaps" in wanted:
        sections["knowledge_gaps"] = take("knowledge_gaps", ((g.key, g.reason) for g in gaps))

    if "related_concepts" in wanted:
        sections["related_concepts"] = take("related_concepts", pools.related)

    if "avoid" in wanted:
        sections["avoid"] = take("avoid", ((k, "user said they dislike it") for k in pools.disliked))

    return ContextSelection(sc, {name: sections[name] for name in wanted})
