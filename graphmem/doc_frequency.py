"""Document frequency of concepts across a tenant's users, cached per tenant with a short TTL.

Used by block selection (graphmem/specificity.py): a concept most of the tenant's users have says
nothing about one of them. Cost is bounded: nothing is asked until the tenant has enough users for a
share to mean anything, only the candidate concepts of a block are counted (one UNWIND query for the
keys not cached yet), and counts are reused for ``ttl_s`` seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from graphmem.graph_store import GraphStore

_MAX_KEYS = 50_000  # per tenant: a cache bound, not a limit on the tenant


@dataclass
class _Entry:
    at: float
    users: int
    counts: dict[str, int] = field(default_factory=dict)


class DocumentFrequency:
    def __init__(self, store: GraphStore, ttl_s: float, min_users: int) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.min_users = min_users
        self._tenants: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def counts(self, tenant: str, keys: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(users in the tenant, users having each key). Empty counts below ``min_users`` users."""
        now = time.monotonic()
        with self._lock:
            entry = self._tenants.get(tenant)
        if entry is None or now - entry.at > self.ttl_s or len(entry.counts) > _MAX_KEYS:
            entry = _Entry(now, self.store.tenant_user_count(tenant))
            with self._lock:
                self._tenants[tenant] = entry
        if entry.users < self.min_users:
            return entry.users, {}
        missing = [k for k in keys if k not in entry.counts]
        if missing:
            fresh = self.store.concept_user_counts(tenant, missing)
            with self._lock:
                entry.counts.update(fresh)
        return entry.users, {k: entry.counts[k] for k in keys if k in entry.counts}

    def forget(self, tenant: str) -> None:
        with self._lock:
            self._tenants.pop(tenant, None)
