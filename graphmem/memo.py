"""Values derived once per ranked graph (:class:`graphmem.ranked_cache.RankedGraph`).

A ranked graph is cached per user version and serves many context requests; what selection
(graphmem/context.py) and gap search (graphmem/gaps.py) derive from it without the request's focus
(dependency map, stance sets, ordered candidate pools) is computed on the first and kept here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class Memo:
    """Derived values by key, each with the inputs it was built from (compared by identity)."""

    def __init__(self) -> None:
        self._values: dict[Hashable, tuple[object, Any]] = {}
        # Concurrent requests on one cached graph may build the same value twice; never a torn dict.
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], T], of: object = None) -> T:
        """The value under ``key``, built once; ``of``: the inputs it was derived from (the graph, or a
        tuple such as (graph, tiers)). A different ``of`` (an extended graph, other tiers) rebuilds."""
        with self._lock:
            hit = self._values.get(key)
        if hit is None or not _same_objects(hit[0], of):
            hit = (of, build())
            with self._lock:
                self._values[key] = hit
        value: T = hit[1]
        return value

    def __len__(self) -> int:
        return len(self._values)


def _same_objects(a: object, b: object) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
    return a is b
