"""The cache of ranked user graphs: one validity check, one LRU.

A ranked graph (:class:`RankedGraph`) is valid while the user's graph version and the tenant's catalog
version are the ones it was ranked under; every write bumps the graph version, so a context request
for an unchanged graph never re-ranks. All access goes through the cache's lock: ingests, reads and
erasures of one user run on different threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

from .memo import Memo
from .models import Tier, UserGraph
from .ranking import Ranking
from .store import UserRef, WeightRow

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True)
class RankedGraph:
    """A user's graph as loaded and ranked: the unit the cache holds and every read uses.

    ``version`` is the user's graph version it was ranked under (-1: a past moment, never cached).
    """

    version: int
    catalog_version: int
    graph: UserGraph
    ranking: Ranking
    tiers: dict[str, Tier]
    # What selection and gap search derive without the request's focus (graphmem/memo.py).
    memo: Memo = field(default_factory=Memo, compare=False, repr=False)
    # Ranked on read while its weights write-back is still pending (services/rerank.py): the rows the
    # background will write. The graph already carries them (tiers, weights), so /graph shows the same
    # stored tiers before and after the write lands.
    unwritten: tuple[WeightRow, ...] = ()

    def is_current(self, version: int | None, catalog_version: int) -> bool:
        """Ranked under exactly these versions (the one validity check)."""
        return self.version == version and self.catalog_version == catalog_version


class LRU(Generic[K, V]):
    """A small thread-safe least-recently-used map (get refreshes, put evicts the oldest)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def pop(self, key: K) -> V | None:
        with self._lock:
            return self._items.pop(key, None)

    def update(self, key: K, change: Callable[[V | None], V | None]) -> None:
        """Replaces the value with ``change(value)`` (None removes it), atomically; order unchanged."""
        with self._lock:
            value = change(self._items.get(key))
            if value is None:
                self._items.pop(key, None)
            else:
                self._items[key] = value

    def __len__(self) -> int:
        return len(self._items)


class RankedCache:
    """Ranked graphs by user, valid while the versions they were ranked under are current."""

    def __init__(self, size: int = 256) -> None:
        self._lru: LRU[tuple[str, str], RankedGraph] = LRU(size)

    def peek(self, user: UserRef) -> RankedGraph | None:
        """The cached graph whatever its version (callers that compare versions themselves)."""
        return self._lru.get((user.tenant, user.user_id))

    def current(self, user: UserRef, version: int | None, catalog_version: int) -> RankedGraph | None:
        """The cached graph if it was ranked under exactly these versions, else None."""
        cached = self.peek(user)
        return cached if cached is not None and cached.is_current(version, catalog_version) else None

    def put(self, user: UserRef, ranked: RankedGraph) -> None:
        self._lru.put((user.tenant, user.user_id), ranked)

    def drop(self, user: UserRef) -> None:
        self._lru.pop((user.tenant, user.user_id))

    def drop_unless(self, user: UserRef, version: int) -> None:
        """Drops the user's graph unless it is at ``version`` (a write raced ours: the next read reloads)."""
        self._lru.update(
            (user.tenant, user.user_id), lambda cached: None if cached is None or cached.version != version else cached
        )

    def mark_written(self, user: UserRef, version_before: int, version_after: int) -> None:
        """The pending write-back of the graph ranked at ``version_before`` landed as ``version_after``."""
        self._lru.update(
            (user.tenant, user.user_id),
            lambda cached: (
                cached
                if cached is None or cached.version != version_before
                else replace(cached, version=version_after, unwritten=())
            ),
        )

    def carry_over(
        self, user: UserRef, version_before: int, version_after: int, update: Callable[[UserGraph], UserGraph | None]
    ) -> None:
        """After a write from ``version_before`` to ``version_after`` that changed nothing ranking reads,
        the cached graph moves to the new version with ``update(graph)``; None from ``update`` drops it."""

        def change(cached: RankedGraph | None) -> RankedGraph | None:
            if cached is None or cached.version != version_before:
                return cached
            graph = update(cached.graph)
            return None if graph is None else replace(cached, version=version_after, graph=graph)

        self._lru.update((user.tenant, user.user_id), change)

    def __len__(self) -> int:
        return len(self._lru)
