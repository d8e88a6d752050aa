"""Context selection: which concepts go into a user's block, per scope.

Pure: graph + ranking + tiers (from :mod:`graphmem.compaction`) + focus keys in,
a :class:`ContextSelection` of ordered sections out. Rendering and token
budgeting happen in :mod:`graphmem.render`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

from graphmem.errors import InvalidInput
from graphmem.gaps import GapConfig, find_gaps
from graphmem.models import Stance, Tier, UserGraph
from graphmem.ranking import Ranking, sort_keys, top_keys

if TYPE_CHECKING:
    from graphmem.settings import Settings


T = TypeVar("T")


class Scope(str, Enum):
    learning = "learning"
    recommendation = "recommendation"
    general = "general"


SCOPE_TAGS: dict[Scope, str] = {
    Scope.learning: "user_knowledge_context",
    Scope.recommendation: "user_preference_context",
    Scope.general: "user_context",
}

# Sections per scope, in the order they are rendered.
SCOPE_SECTIONS: dict[Scope, tuple[str, ...]] = {
    Scope.learning: ("current_topic", "core_topics", "related_concepts", "knowledge_gaps"),
    Scope.recommendation: ("core_topics", "related_concepts", "avoid"),
    Scope.general: ("core_topics", "related_concepts"),
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
        raise InvalidInput(
            f"unknown scope {scope!r}; expected one of: {', '.join(s.value for s in Scope)}"
        ) from None


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


@dataclass(frozen=True)
class ContextItem:
    key: str
    name: str
    weight: float
    tier: Tier | None
    reason: str
    evidence: tuple[str, ...] = ()


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


def _pools(graph: UserGraph, ranking: Ranking, tiers: Mapping[str, Tier], sc: Scope, config: ContextConfig,
           demoted: frozenset[str] = frozenset(), passing: frozenset[str] = frozenset()) -> _Pools:
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
            (k for k, n in concepts.items()
             if k not in taken and k not in demoted and n.stance is not Stance.dislikes and ranking.initial(k) > 0),
            graph, ranking, config.core_size - len(core),
        )
        below = set(fill)
        core = core + fill
    adjacency = ranking.neighbours()
    near = {nb for c in core for nb in adjacency.get(c, ())}
    related = [k for k in concepts
               if tier_of(k) is Tier.related and concepts[k].stance is not Stance.dislikes and k not in below
               and k not in passing]
    first = sort_keys((k for k in related if k in near), graph, ranking)
    rest = sort_keys((k for k in related if k not in near), graph, ranking)
    disliked = sort_keys((k for k, n in concepts.items() if n.stance is Stance.dislikes), graph, ranking)
    return _Pools(tuple(core), frozenset(below),
                  tuple([(k, "neighbour of a core topic") for k in first] + [(k, "related concept") for k in rest]),
                  tuple(disliked))


def select_context(
    graph: UserGraph,
    ranking: Ranking,
    tiers: Mapping[str, Tier],
    focus_keys: Sequence[str],
    scope: Scope | str,
    config: ContextConfig,
    demoted: Collection[str] = (),
    passing: Collection[str] = (),
) -> ContextSelection:
    """Pick and order the concepts of a block.

    * ``core_topics``: tier ``core``, heaviest first; when there are fewer
      than ``config.core_size`` (learning and general scopes), the heaviest
      other mentioned, not disliked concepts follow, up to ``core_size`` (the
      conversation's topics, below the threshold or not the user's own);
    * ``related_concepts``: tier ``related``, not disliked; neighbours of a
      core topic first, each group heaviest first;
    * ``knowledge_gaps`` (learning): :func:`graphmem.gaps.find_gaps` from the
      focus topics, or the core topics when there is no focus;
    * ``current_topic`` (learning): the focus keys, in the given order;
    * ``avoid`` (recommendation): disliked concepts, heaviest first.

    ``demoted``: keys that are not specific to this user (graphmem/specificity.py); they stay
    out of core (and its fill) and related, and still count in ranking and gaps. ``passing``:
    keys that are specific only when central (a common word: core if heavy enough, never related).

    Order ties are broken by (name, key), so the same input always gives the
    same selection. Focus keys that are not in the graph are ignored (the
    caller resolves focus text to keys).
    """
    sc = parse_scope(scope)
    wanted = SCOPE_SECTIONS[sc]
    cap = config.max_items_per_section
    concepts = graph.concepts
    # Everything but gaps and the current topic is the same for every focus: ordered once per
    # ranked graph (a 10,000-concept user otherwise re-sorts its related concepts per request).
    out, side = frozenset(demoted), frozenset(passing)
    pools = ranking.derived(("context_pools", sc, config.core_size, out, side),
                            lambda: _pools(graph, ranking, tiers, sc, config, out, side), of=(graph, tiers))

    def item(k: str, reason: str) -> ContextItem:
        node = concepts[k]
        return ContextItem(k, node.name, ranking.weight(k), tiers.get(k, node.tier), reason, tuple(node.evidence))

    def capped(xs: list[T]) -> list[T]:
        return xs if cap is None else xs[: max(0, cap)]

    core, below = list(pools.core), pools.below
    core_reason = "interest" if sc is Scope.recommendation else "core topic"
    sections: dict[str, tuple[ContextItem, ...]] = {}

    focus = [k for k in dict.fromkeys(focus_keys) if k in concepts]
    if "current_topic" in wanted:
        sections["current_topic"] = tuple(item(k, "focus of the current question") for k in capped(focus))

    if "core_topics" in wanted:
        sections["core_topics"] = tuple(
            item(k, f"{'topic of the conversation, below the threshold' if k in below else core_reason} (rank {i + 1})")
            for i, k in enumerate(capped(core)))

    # Gaps are found first: a concept listed as a gap (or as the current topic) is not
    # repeated under related_concepts, where it would cost tokens and blur the message.
    gap_keys: list[str] = []
    if "knowledge_gaps" in wanted:
        roots = focus if focus else core
        gaps = find_gaps(graph, ranking, roots, GapConfig(config.threshold, config.gap_depth))
        sections["knowledge_gaps"] = tuple(item(g.key, g.reason) for g in capped(gaps))
        gap_keys = [i.key for i in sections["knowledge_gaps"]]

    if "related_concepts" in wanted:
        shown_elsewhere = set(gap_keys) | (set(focus) if "current_topic" in wanted else set())
        limit = None if cap is None else max(0, cap)
        chosen: list[tuple[str, str]] = []
        for k, why in pools.related:
            if limit is not None and len(chosen) >= limit:
                break
            if k not in shown_elsewhere:
                chosen.append((k, why))
        sections["related_concepts"] = tuple(item(k, why) for k, why in chosen)

    if "avoid" in wanted:
        sections["avoid"] = tuple(item(k, "user said they dislike it") for k in capped(list(pools.disliked)))

    return ContextSelection(sc, {name: sections[name] for name in wanted})
