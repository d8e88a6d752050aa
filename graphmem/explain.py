"""Why a concept has the weight and tier it has (pure part of "explain").

The store adds what only it knows — mention spans and the stance history —
with :func:`dataclasses.replace` on the returned :class:`Explanation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from graphmem.errors import NotFound
from graphmem.models import Stance, Tier, UserGraph
from graphmem.ranking import Contribution, Ranking, sort_keys


@dataclass(frozen=True)
class Explanation:
    key: str
    name: str
    type: str | None
    in_catalog: bool
    critical: bool
    user_mentions: int
    assistant_mentions: int
    sessions: tuple[str, ...]
    evidence: tuple[str, ...]
    first_seen: datetime | None
    last_seen: datetime | None
    stance: Stance | None
    ranker: str
    initial: float
    propagated: float
    final: float
    rank: int  # 1-based position among all concepts by (weight, name, key)
    # Edges the propagated weight came through, largest first.
    contributions: tuple[Contribution, ...]
    tier: Tier | None
    compacted: bool
    compacted_at: datetime | None
    # Filled in by the store.
    spans: tuple[dict[str, Any], ...] = ()
    stance_history: tuple[dict[str, Any], ...] = ()
    # The graph's (catalog's) name; ``name`` is the name shown to this user (graphmem.names).
    canonical_name: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["contributions"] = [
            {"neighbour": c.neighbour, "relation": c.relation.value, "direction": c.direction, "amount": c.amount}
            for c in self.contributions
        ]
        d["stance"] = self.stance.value if self.stance else None
        d["tier"] = self.tier.value if self.tier else None
        for k in ("first_seen", "last_seen", "compacted_at"):
            d[k] = d[k].isoformat() if d[k] else None
        d["sessions"] = list(self.sessions)
        d["evidence"] = list(self.evidence)
        return d


def explain_concept(
    graph: UserGraph,
    ranking: Ranking,
    tiers: Mapping[str, Tier] | None,
    key: str,
    *,
    max_contributions: int | None = 20,
    names: Mapping[str, str] | None = None,
) -> Explanation:
    """Mentions, stance, weights with the propagation edges, tier and compaction state.

    ``tiers`` is the latest plan's tiers; when ``None`` or missing the key, the
    stored ``ConceptNode.tier`` is reported. Contributions with zero amount
    are kept (an edge that carried nothing is still a path), largest first,
    at most ``max_contributions`` of them. ``names`` maps keys to the names shown
    to this user (:mod:`graphmem.names`); ``canonical_name`` keeps the graph's.

    Raises
    ------
    NotFound
        When ``key`` is not a concept of ``graph``.
    """
    node = graph.concepts.get(key)
    if node is None:
        raise NotFound(f"concept {key!r} is not in the graph of user {graph.user_id!r}")
    rc = ranking.get(key)
    tier = (tiers or {}).get(key, node.tier)
    position = sort_keys(graph.concepts, graph, ranking).index(key) + 1
    contributions = rc.contributions if rc else ()
    if max_contributions is not None:
        contributions = contributions[:max_contributions]
    return Explanation(
        key=key,
        name=(names or {}).get(key, node.name),
        canonical_name=node.name,
        type=node.type,
        in_catalog=node.in_catalog,
        critical=node.critical,
        user_mentions=node.user_mentions,
        assistant_mentions=node.assistant_mentions,
        sessions=tuple(node.sessions),
        evidence=tuple(node.evidence),
        first_seen=node.first_seen,
        last_seen=node.last_seen,
        stance=node.stance,
        ranker=ranking.method,
        initial=rc.initial if rc else 0.0,
        propagated=rc.propagated if rc else 0.0,
        final=rc.final if rc else 0.0,
        rank=position,
        contributions=tuple(contributions),
        tier=tier,
        compacted=tier is Tier.compacted,
        compacted_at=node.compacted_at,
    )
