"""The compaction decision: which concepts stay core, related, or get folded away.

Pure: it reads a graph and its ranking and returns a :class:`CompactionPlan`;
the store applies the plan atomically (or not at all, when this module raises
:class:`~graphmem.errors.CriticalCompressionFailure`). Nothing is deleted:
compacted concepts are listed in ``related_to_core_topics`` and come back
when their weight returns to the threshold.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphmem.errors import CriticalCompressionFailure
from graphmem.models import Stance, Tier, UserGraph
from graphmem.ranking import Ranking, has_user_mention, sort_keys

if TYPE_CHECKING:
    from graphmem.settings import Settings
    from graphmem.tokens import TokenCounter


@dataclass(frozen=True)
class CompactionConfig:
    threshold: float = 5.0
    core_size: int = 5
    auto_compact_concepts: int = 200
    ratio_low: float = 0.15
    ratio_high: float = 0.25
    # Stances whose concepts must survive (a tenant policy), e.g. {confused}.
    critical_stances: frozenset[Stance] = frozenset()

    @classmethod
    def from_settings(cls, settings: Settings, critical_stances: Iterable[Stance | str] = ()) -> CompactionConfig:
        return cls(
            threshold=settings.threshold,
            core_size=settings.core_size,
            auto_compact_concepts=settings.auto_compact_concepts,
            ratio_low=settings.compaction_ratio_low,
            ratio_high=settings.compaction_ratio_high,
            critical_stances=frozenset(Stance(s) for s in critical_stances),
        )


@dataclass(frozen=True)
class CompactedConcept:
    """One entry of the per-user ``related_to_core_topics`` summary."""

    key: str
    name: str
    weight: float
    # Core topic keys at the smallest hop distance (edges in either direction);
    # empty when no core topic is reachable.
    attached_to: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "name": self.name, "weight": self.weight, "attached_to": list(self.attached_to)}


@dataclass(frozen=True)
class CompactionPlan:
    """What a compaction run decides. The store writes ``tiers`` and the summary."""

    tiers: dict[str, Tier]
    core: tuple[str, ...]
    related: tuple[str, ...]
    compacted: tuple[str, ...]
    related_to_core_topics: tuple[CompactedConcept, ...]
    # Concepts whose stored tier was ``compacted`` and that survive now -> new tier.
    restored: dict[str, Tier] = field(default_factory=dict)
    # Concepts compacted by this run that were not compacted before.
    newly_compacted: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()
    # Run record.
    threshold: float = 5.0
    concepts_total: int = 0
    concepts_before: int = 0  # not compacted before the run (stored tier != compacted)
    concepts_after: int = 0  # surviving after the run
    history_tokens: int = 0
    block_tokens: int | None = None
    ratio: float | None = None
    warning: str | None = None
    auto_due: bool = False

    def run_record(self) -> dict[str, Any]:
        """The fields of a compaction run record (the store adds id and time)."""
        return {
            "threshold": self.threshold,
            "concepts_total": self.concepts_total,
            "concepts_before": self.concepts_before,
            "concepts_after": self.concepts_after,
            "compacted": len(self.compacted),
            "newly_compacted": len(self.newly_compacted),
            "restored": len(self.restored),
            "history_tokens": self.history_tokens,
            "block_tokens": self.block_tokens,
            "ratio": self.ratio,
            "warning": self.warning,
        }


def compaction_due(graph: UserGraph, config: CompactionConfig) -> bool:
    """Automatic compaction is due when more concepts are active than allowed.

    Active means not compacted as last stored; already compacted concepts do
    not count, so a graph that was just compacted is not compacted again.
    """
    return _active_count(graph) > config.auto_compact_concepts


def _active_count(graph: UserGraph) -> int:
    return sum(1 for n in graph.concepts.values() if n.tier is not Tier.compacted)


def assign_tiers(graph: UserGraph, ranking: Ranking, config: CompactionConfig) -> dict[str, Tier]:
    """Tier of every concept.

    * survivors: ``final >= threshold`` ("at or above": exactly 5 survives), or
      the user's own decayed mention weight ``>= threshold`` (what the user
      named themself is never folded away by propagation alone);
    * ``core``: the ``core_size`` heaviest survivors that the user mentioned
      themself and does not dislike. If no survivor qualifies, the heaviest
      non-disliked survivors (up to ``core_size``) become core, so core is never empty while any
      non-disliked concept survives. Disliked concepts are never core;
    * ``related``: all other survivors;
    * ``compacted``: everything below the threshold.
    """
    # A concept the user named themself often enough (own decayed mention weight at the
    # threshold: one fresh mention) survives even when PageRank hands most of its weight on
    # to its neighbours: in a long chat with many co-occurrences, a film the user asked about
    # once otherwise fell to ~3 and was folded away while its neighbours survived.
    survivors = [
        k
        for k in graph.concepts
        if ranking.weight(k) >= config.threshold or ranking.user_initial(k) >= config.threshold
    ]
    ordered = sort_keys(survivors, graph, ranking)
    eligible = [k for k in ordered if graph.concepts[k].stance is not Stance.dislikes]
    core = [k for k in eligible if has_user_mention(graph.concepts[k])][: max(0, config.core_size)]
    if not core and eligible and config.core_size > 0:
        # A user who names nothing themself (a student answering "36", "ok"): the
        # conversation's heaviest survivors are their core topics.
        core = eligible[: config.core_size]
    core_set = set(core)
    tiers: dict[str, Tier] = dict.fromkeys(graph.concepts, Tier.compacted)
    for k in survivors:
        tiers[k] = Tier.core if k in core_set else Tier.related
    return tiers


def plan_compaction(
    graph: UserGraph,
    ranking: Ranking,
    config: CompactionConfig,
    *,
    critical_keys: Iterable[str] = (),
    critical_stances: Iterable[Stance | str] | None = None,
    block_tokens: int | None = None,
    counter: TokenCounter | None = None,
) -> CompactionPlan:
    """Decide a compaction run.

    Parameters
    ----------
    graph, ranking : the user's graph and its :func:`graphmem.ranking.rank` result.
    config : CompactionConfig
    critical_keys : concept keys the tenant declared critical (in addition to
        ``ConceptNode.critical``).
    critical_stances : stances whose concepts must survive; ``None`` uses
        ``config.critical_stances``.
    block_tokens : token size of the compacted memory, if the caller measured
        it. Otherwise, when ``counter`` is given, it is measured by rendering
        the surviving concepts (``general`` scope, XML, no budget) plus the
        ``related_to_core_topics`` names.

    Raises
    ------
    CriticalCompressionFailure
        When a critical concept would be compacted. Nothing is decided, so the
        store changes nothing.
    """
    tiers = assign_tiers(graph, ranking, config)
    stances = config.critical_stances if critical_stances is None else frozenset(Stance(s) for s in critical_stances)
    _refuse_critical_loss(graph, ranking, tiers, config.threshold, set(critical_keys), stances)
    core, related, compacted = (tuple(sort_keys(keys, graph, ranking)) for keys in _keys_by_tier(tiers))
    attached = attach_to_core(graph, ranking, core, compacted)
    summary = tuple(
        CompactedConcept(k, graph.concepts[k].name, ranking.weight(k), attached.get(k, ())) for k in compacted
    )
    restored, newly = _tier_changes(graph, tiers, compacted)
    avoid = tuple(sort_keys((k for k, n in graph.concepts.items() if n.stance is Stance.dislikes), graph, ranking))

    if block_tokens is None and counter is not None:
        block_tokens = measure_compacted_tokens(graph, ranking, tiers, summary, counter)
    ratio, warning = compaction_ratio(graph.history_tokens, block_tokens, config)
    return CompactionPlan(
        tiers=tiers,
        core=core,
        related=related,
        compacted=compacted,
        related_to_core_topics=summary,
        restored=restored,
        newly_compacted=newly,
        avoid=avoid,
        threshold=config.threshold,
        concepts_total=len(graph.concepts),
        concepts_before=_active_count(graph),
        concepts_after=len(core) + len(related),
        history_tokens=graph.history_tokens,
        block_tokens=block_tokens,
        ratio=ratio,
        warning=warning,
        auto_due=compaction_due(graph, config),
    )


def _refuse_critical_loss(
    graph: UserGraph,
    ranking: Ranking,
    tiers: Mapping[str, Tier],
    threshold: float,
    declared: set[str],
    stances: frozenset[Stance],
) -> None:
    """Raises :class:`CriticalCompressionFailure` naming (up to 10 of) the critical concepts ``tiers``
    would compact: critical in the catalog, ``declared`` by the caller, or with one of ``stances``."""
    lost = sorted(
        k
        for k, node in graph.concepts.items()
        if tiers[k] is Tier.compacted and (node.critical or k in declared or (node.stance in stances))
    )
    if lost:
        names = ", ".join(f"{graph.concepts[k].name} ({ranking.weight(k):.2f})" for k in lost[:10])
        more = f" and {len(lost) - 10} more" if len(lost) > 10 else ""
        raise CriticalCompressionFailure(
            f"compaction would fold away {len(lost)} critical concept(s) below threshold "
            f"{threshold}: {names}{more}; nothing was changed"
        )


def _tier_changes(
    graph: UserGraph, tiers: Mapping[str, Tier], compacted: Iterable[str]
) -> tuple[dict[str, Tier], tuple[str, ...]]:
    """Against the stored tiers: (concepts stored as compacted that survive now -> their new tier,
    concepts this run compacts that were not compacted before, in ``compacted``'s order)."""
    restored = {
        k: tiers[k] for k, n in graph.concepts.items() if n.tier is Tier.compacted and tiers[k] is not Tier.compacted
    }
    newly = tuple(k for k in compacted if graph.concepts[k].tier is not Tier.compacted)
    return restored, newly


def _keys_by_tier(tiers: Mapping[str, Tier]) -> tuple[list[str], list[str], list[str]]:
    """(core, related, compacted) keys, each in ``tiers``' order."""
    by_tier: dict[Tier, list[str]] = {t: [] for t in Tier}
    for k, t in tiers.items():
        by_tier[t].append(k)
    return by_tier[Tier.core], by_tier[Tier.related], by_tier[Tier.compacted]


def compaction_ratio(
    history_tokens: int, block_tokens: int | None, config: CompactionConfig
) -> tuple[float | None, str | None]:
    """``block_tokens / history_tokens`` and a warning when it leaves [low, high].

    No history (0 tokens) or no measured block gives no ratio and no warning.
    """
    if block_tokens is None or history_tokens <= 0:
        return None, None
    ratio = block_tokens / history_tokens
    if ratio < config.ratio_low:
        return ratio, (
            f"compaction ratio {ratio:.3f} is below {config.ratio_low}: the compacted memory may have lost detail"
        )
    if ratio > config.ratio_high:
        return ratio, (
            f"compaction ratio {ratio:.3f} is above {config.ratio_high}: the compacted memory is barely smaller "
            "than the history"
        )
    return ratio, None


def attach_to_core(
    graph: UserGraph, ranking: Ranking, core: Iterable[str], targets: Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """For each target, the core topics at the smallest hop distance.

    One multi-source breadth-first search from all core topics over the
    undirected graph of the ranking's channels, carrying the set of nearest
    core topics. Sets are shared until two fronts meet (frozensets), so the
    search stays O(V + E) in practice.
    """
    adjacency = ranking.neighbours()
    dist: dict[str, int] = {}
    nearest: dict[str, frozenset[str]] = {}
    queue: deque[str] = deque()
    for c in core:
        dist[c] = 0
        nearest[c] = frozenset((c,))
        queue.append(c)
    while queue:
        cur = queue.popleft()
        nd = dist[cur] + 1
        for nb in adjacency.get(cur, ()):
            if nb not in dist:
                dist[nb] = nd
                nearest[nb] = nearest[cur]
                queue.append(nb)
            elif dist[nb] == nd and not nearest[cur] <= nearest[nb]:
                nearest[nb] = nearest[nb] | nearest[cur]
    core_order = {k: i for i, k in enumerate(core)}
    none: tuple[str, ...] = ()
    out: dict[str, tuple[str, ...]] = {}
    for t in targets:
        near = nearest.get(t)
        # Most targets have one nearest core topic (or none): no sort needed.
        out[t] = (
            none if not near else tuple(near) if len(near) == 1 else tuple(sorted(near, key=lambda k: core_order[k]))
        )
    return out


def measure_compacted_tokens(
    graph: UserGraph,
    ranking: Ranking,
    tiers: Mapping[str, Tier],
    summary: Iterable[CompactedConcept],
    counter: TokenCounter,
) -> int:
    """Tokens of the compacted memory: the unbudgeted general block plus the summary names."""
    # Imported here: rendering builds on compaction's tiers, not the other way round.
    from graphmem.context import ContextConfig, select_context
    from graphmem.render import render_block

    selection = select_context(graph, ranking, tiers, [], "general", ContextConfig(max_items_per_section=None))
    block = render_block(selection, fmt="xml", scope="general", max_tokens=None, counter=counter).block
    names = ", ".join(c.name for c in summary)
    return counter.count(block) + (counter.count(f"related_to_core_topics: [{names}]") if names else 0)
