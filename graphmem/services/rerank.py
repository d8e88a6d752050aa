"""After a write: rank the user's graph, write weights and tiers back, compact when due or asked.

Only what changed is written (rows whose tier changed or whose weight moved by more than 1 %), and the
ranked graph is cached carrying exactly what a reload would read, so the next read does not re-rank.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ..compaction import CompactionPlan, assign_tiers, compaction_due, plan_compaction
from ..errors import CriticalCompressionFailure, GraphmemError
from ..models import ConceptNode, Tier, UserGraph, utc_now
from ..ranked_cache import RankedGraph
from ..ranking import Ranking, rank
from ..store import CompactionRecord, IngestWrite, UserRef, WeightRow
from .core import Core, user_not_found

T = TypeVar("T")

# The user whose running re-rank handed this request's read its graph (BackgroundReranker.wait_while_running):
# the re-rank's write-back waits for the read's answer (BackgroundReranker.answered).
_answer_of: ContextVar[tuple[str, str] | None] = ContextVar("graphmem_rerank_answer_of", default=None)

log = logging.getLogger(__name__)

# How many folded names the related_to_core_topics summary keeps (heaviest first); its count is exact.
SUMMARY_ITEMS = 200


class Reranker:
    def __init__(self, core: Core) -> None:
        self.core = core

    def after_write(self, user: UserRef, write: IngestWrite | None = None, catalog_version: int | None = None) -> None:
        """Ranks the user's graph and writes weights back; compacts when the graph grew too big.

        Survivors get their tier (core/related; a compacted concept that is back above
        the threshold is restored); concepts below the threshold keep their stored tier
        until a compaction run folds them.

        After an ingest (`write`), when the cached graph is the one just before that write (same
        graph and catalog version), only the interests the ingest refreshed change: the graph is
        updated with them instead of reloading every interest (10,000 rows for a big user).
        """
        graph, ranking, raced_write = self._load_and_rank(user, write, catalog_version)
        if self._compacted_if_due(user, graph, ranking):
            self._forget_if_raced(user, raced_write)
            return
        tiers = assign_tiers(graph, ranking, self.core.compaction_config)
        rows = _weight_rows(graph, ranking, tiers)
        version = self.core.store.write_weights(user, rows)
        # The cached graph carries the tiers just written, as a reload would.
        ranked = RankedGraph(version, self._catalog_version(user), _with_rows(graph, rows), ranking, tiers)
        self.core.ranked_graphs.put(user, ranked)
        self._forget_if_raced(user, raced_write)

    def rank_for_read(
        self, user: UserRef, version: int, catalog_version: int, write: IngestWrite | None
    ) -> RankedGraph:
        """A read found the user's graph changed and its re-rank still queued (read-your-writes): rank it
        here, cache it, and leave the weights write-back to the background (``unwritten``). The graph
        shows the tiers and weights that write-back will store, so nothing a read sees changes when it
        lands. A graph due for automatic compaction is compacted here, as the ingest would have."""
        core = self.core
        if write is not None and write.version + 1 != version:
            write = None  # other writes came after it: its refreshed rows are not the whole change
        graph, ranking, raced_write = self._load_and_rank(user, write, catalog_version)
        if self._compacted_if_due(user, graph, ranking):
            self._forget_if_raced(user, raced_write)
            cached = core.ranked_graphs.peek(user)
            if cached is not None:
                return cached
            # Another write raced the compaction (its graph was dropped): rank what is stored now.
            now_version, catalog_version = core.store.user_version(user)
            if now_version is None:
                raise user_not_found(user.user_id)
            version = now_version
            graph, ranking, _ = self._load_and_rank(user, None, None)
        tiers = assign_tiers(graph, ranking, core.compaction_config)
        rows = _weight_rows(graph, ranking, tiers)
        ranked = RankedGraph(version, catalog_version, _with_rows(graph, rows), ranking, tiers, unwritten=tuple(rows))
        core.ranked_graphs.put(user, ranked)
        return ranked

    def rank_written(self, user: UserRef, write: IngestWrite, extractor_version: int) -> None:
        """Right after ``write`` (under the user's lock, its re-rank queued): rank the graph it left and cache
        it as a read would (:meth:`rank_for_read`), for an ingest that returns its block. The queued re-rank
        then only writes the weights back, after that block has answered."""
        if write.catalog_version is None or self.core.ranked_since(user, write.version_after, write.catalog_version):
            return
        incremental = write if extractor_version == write.catalog_version else None
        self.rank_for_read(user, write.version_after, write.catalog_version, incremental)

    def settle(
        self,
        user: UserRef,
        write: IngestWrite | None,
        catalog_version: int | None,
        on_ranked: Callable[[], None] | None = None,
        write_is_last: bool = False,
    ) -> None:
        """The queued re-rank of a user (under the user's lock): write back what a read already ranked,
        or rank and write back as the ingest used to. ``on_ranked``: called once the ranked graph is cached,
        before the write-back (a read waiting for it answers then). ``write_is_last``: no write of this
        process came after ``write`` (they hold the user's lock, which the caller holds)."""
        core = self.core
        if write_is_last and write is not None and write.catalog_version is not None:
            # The write's own transaction said which versions it left: no round trip to ask (the first
            # step of the read right after an ingest waits for). Another process's write since then only
            # makes the graph cached here stale: readers compare it with the stored version and reload,
            # and its write-back below finds the version moved and drops it.
            version, current_catalog = write.version_after, write.catalog_version
        else:
            stored, current_catalog = core.store.user_version(user)
            if stored is None:
                return  # erased meanwhile: nothing to rank
            version = stored
        cached = core.ranked_graphs.current(user, version, current_catalog)
        if cached is None:
            # Ranked here as a read would rank it, and cached before the write-back: a read that comes
            # meanwhile answers from the cache instead of waiting for the weights write.
            incremental = write if catalog_version == current_catalog else None
            cached = self.rank_for_read(user, version, current_catalog, incremental)
        if on_ranked is not None:
            on_ranked()
        if not cached.unwritten:
            return  # a read ranked it and nothing changed, another settle wrote it, or it was compacted
        try:
            new_version = core.store.write_weights(user, cached.unwritten)
        except GraphmemError as exc:
            if exc.code != "USER_NOT_FOUND":
                raise
            core.ranked_graphs.drop(user)  # erased by another process since its write: nothing to store
            return
        if new_version == version + 1:
            core.ranked_graphs.mark_written(user, version, new_version)
        else:
            core.ranked_graphs.drop(user)  # another process wrote in between: the next read reloads

    def _load_and_rank(
        self, user: UserRef, write: IngestWrite | None, catalog_version: int | None
    ) -> tuple[UserGraph, Ranking, IngestWrite | None]:
        core, store = self.core, self.core.store
        base = None
        if write is not None and catalog_version is not None:
            if write.version == 0:
                # The user's first turns: there was nothing before this write.
                base = UserGraph(user.tenant, user.user_id, {}, (), utc_now(), 0, 0)
            else:
                cached = core.ranked_graphs.current(user, write.version, catalog_version)
                base = cached.graph if cached is not None and not cached.unwritten else None
        if base is not None and write is not None:
            graph = store.load_user_graph(user, base=base, refreshed=write.interests, catalog_version=catalog_version)
        else:
            graph = store.load_user_graph(user, catalog_version=catalog_version)
        return graph, rank(graph, core.ranking_config), write if base is not None else None

    def _compacted_if_due(self, user: UserRef, graph: UserGraph, ranking: Ranking) -> bool:
        if not self._auto_compaction_due(graph, ranking):
            return False
        try:
            self.compact(user, graph, ranking, trigger="auto")
            return True
        except CriticalCompressionFailure as exc:
            log.warning("automatic compaction of %s/%s refused: %s", user.tenant, user.user_id, exc.message)
            return False

    def _forget_if_raced(self, user: UserRef, write: IngestWrite | None) -> None:
        """A graph built from the pre-write cache is exact only if nobody else wrote in between: the
        ingest (+1) and the weights write (+1) must be the only bumps. Otherwise drop it (next read reloads)."""
        if write is not None:
            self.core.ranked_graphs.drop_unless(user, write.version + 2)

    def _catalog_version(self, user: UserRef) -> int:
        """The catalog version to cache a just-written graph under, without a round trip when possible.

        The graph was loaded under the extractor's catalog version (checked at the start of the call);
        a catalog replaced meanwhile only means the next request reloads, which is always safe.
        """
        cached = self.core.extractors.get(user.tenant)
        if cached is not None:
            return cached[0]
        return self.core.store.user_version(user)[1]

    def _auto_compaction_due(self, graph: UserGraph, ranking: Ranking) -> bool:
        """Compact when the graph is past its size limit *and* enough has fallen below the threshold
        since the last run; otherwise a big graph would be re-compacted on every ingest."""
        config = self.core.compaction_config
        if not compaction_due(graph, config):
            return False
        pending = sum(
            1
            for k, n in graph.concepts.items()
            if n.tier is not Tier.compacted and ranking.weight(k) < config.threshold
        )
        return pending >= max(1, config.auto_compact_concepts // 10)

    def compact(
        self, user: UserRef, graph: UserGraph, ranking: Ranking, *, trigger: str, critical_keys: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Plans and writes a compaction run; returns the run record with the concepts it moved."""
        # Planning a 10,000-concept user allocates ~50,000 short-lived objects; with the cached graphs
        # on the heap that set off a full cyclic collection in every other run (~170 ms of a ~150 ms
        # compaction). The collection is deferred to after the run, not skipped.
        with gc_deferred():
            return self._compact(user, graph, ranking, trigger=trigger, critical_keys=critical_keys)

    def _compact(
        self, user: UserRef, graph: UserGraph, ranking: Ranking, *, trigger: str, critical_keys: Sequence[str] = ()
    ) -> dict[str, Any]:
        core = self.core
        plan: CompactionPlan = plan_compaction(
            graph, ranking, core.compaction_config, critical_keys=critical_keys, counter=core.counter
        )
        run = {
            "id": "run-" + uuid.uuid4().hex[:16],
            "at": utc_now().isoformat(),
            "ranker": ranking.method,
            "trigger": trigger,
            **{k: v for k, v in plan.run_record().items() if v is not None},
        }
        # Only what changed is written (as on ingest): rows whose tier changed or whose weight moved by
        # more than 1 %, FOLDS links of newly compacted concepts (restored ones lose theirs with their
        # row). A run over an unchanged graph writes only its run record. At 10,000 concepts the full
        # rewrite (every row and every link) cost ~1.3 s of a ~1.6 s compaction.
        rows = [
            WeightRow(k, rc.initial, rc.propagated, rc.final, plan.tiers[k])
            for k, rc in ranking.items()
            if _row_changed(graph.concepts[k], rc.final, plan.tiers[k])
        ]
        newly = set(plan.newly_compacted)
        folded = [c.key for c in plan.related_to_core_topics if c.key in newly]
        # Summary items: the heaviest SUMMARY_ITEMS names (related_to_core_topics is heaviest first);
        # the summary's count stays exact (the number of FOLDS links).
        folded_names = [c.name for c in plan.related_to_core_topics[:SUMMARY_ITEMS]]
        version = core.store.write_weights(user, rows, CompactionRecord(run, folded, folded_names, replace=False))
        catalog_version = self._catalog_version(user)
        # The cached graph carries what was just stored, as a reload would (only changed nodes are copied).
        written = {r.key: r.final for r in rows}
        concepts = dict(graph.concepts)
        for k, n in concepts.items():
            tier = plan.tiers.get(k, n.tier)
            if k in written or tier is not n.tier:
                concepts[k] = n.stored_as(tier, written.get(k, n.weight))
        graph = replace(graph, concepts=concepts)
        core.ranked_graphs.put(user, RankedGraph(version, catalog_version, graph, ranking, dict(plan.tiers)))
        return {
            **run,
            "related_to_core_topics": [c.to_dict() for c in plan.related_to_core_topics],
            "core": [graph.concepts[k].name for k in plan.core],
            "related": [graph.concepts[k].name for k in plan.related],
            "restored": [graph.concepts[k].name for k in plan.restored],
        }


def _drop_one(counts: dict[tuple[str, str], int], key: tuple[str, str]) -> None:
    if counts.get(key, 0) > 1:
        counts[key] -= 1
    else:
        counts.pop(key, None)


def _weight_rows(graph: UserGraph, ranking: Ranking, tiers: dict[str, Tier]) -> list[WeightRow]:
    """The rows a re-rank writes back: survivors get their tier, the rest keep the stored one (None)."""
    rows = []
    for k, rc in ranking.items():
        tier = tiers[k] if tiers[k] is not Tier.compacted else None
        # PageRank shifts every weight a little on each write: rewrite a row only when its
        # weight moved by more than 1 % or its tier changed, so ingest cost follows the change,
        # not the graph's size. Blocks use the in-memory ranking, never the stored weights.
        node = graph.concepts[k]
        if _row_changed(node, rc.final, tier):
            # Stored with the tier it keeps (a loaded interest always has one): only its weights move.
            weights_only = node.tier is not None and (tier is None or tier is node.tier)
            rows.append(WeightRow(k, rc.initial, rc.propagated, rc.final, tier, weights_only))
    return rows


def _with_rows(graph: UserGraph, rows: Sequence[WeightRow]) -> UserGraph:
    """The graph as a reload would read it once ``rows`` are written (only changed nodes are copied)."""
    if not rows:
        return graph
    concepts = dict(graph.concepts)
    for r in rows:
        n = concepts[r.key]
        concepts[r.key] = n.stored_as(r.tier or n.tier or Tier.related, r.final)
    return replace(graph, concepts=concepts)


def _row_changed(node: ConceptNode, final: float, tier: Tier | None) -> bool:
    """A weight row must be written: its tier changes, or its weight moved by more than 1 %."""
    if node.weight is None or abs(final - node.weight) > 0.01 * max(1.0, abs(node.weight)):
        return True
    return tier is not None and tier is not node.tier


_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = True


@contextmanager
def gc_deferred() -> Iterator[None]:
    """Pauses the cyclic garbage collector for a bounded burst of allocations (nesting- and thread-safe:
    it is re-enabled when the last holder leaves, and only if it was enabled to begin with)."""
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()


@dataclass
class _Pending:
    user: UserRef
    write: IngestWrite | None  # None: several writes coalesced (no incremental base)
    catalog_version: int | None


class BackgroundReranker:
    """Re-ranks after ingests off the request path: one daemon thread, coalesced per user.

    An ingest commits its turns and queues the user (a user queued twice is re-ranked once). A read
    of a queued user ranks on read (:meth:`Reranker.rank_for_read`, under the user's lock) and leaves
    only the weights write-back here. Everything here is derived data: a re-rank dropped on shutdown
    or after an error is redone by the next write or read.
    """

    def __init__(self, core: Core, reranker: Reranker) -> None:
        self.core = core
        self.reranker = reranker
        self._pending: OrderedDict[tuple[str, str], _Pending] = OrderedDict()
        self._running: tuple[str, str] | None = None  # the user being re-ranked right now
        # Reads waiting for the running re-rank's graph, and reads it handed the graph that have not answered.
        self._waiting: dict[tuple[str, str], int] = {}
        self._answering: dict[tuple[str, str], int] = {}
        self._read_first_s = core.settings.rerank_read_first_ms / 1000.0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.settled = 0  # re-ranks done here (tests, metrics)
        self.dropped = 0  # left undone at shutdown

    def submit(self, user: UserRef, write: IngestWrite, catalog_version: int) -> None:
        key = (user.tenant, user.user_id)
        with self._cond:
            if self._stopping:
                return
            if key in self._pending:
                self._pending[key] = _Pending(user, None, None)
            else:
                self._pending[key] = _Pending(user, write, catalog_version)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="graphmem-rerank", daemon=True)
                self._thread.start()
            self._cond.notify()

    def pending(self, user: UserRef) -> _Pending | None:
        with self._cond:
            return self._pending.get((user.tenant, user.user_id))

    def busy(self, user: UserRef) -> bool:
        """The user's re-rank is queued or running: a read should wait for the user's lock, not rank too."""
        key = (user.tenant, user.user_id)
        with self._cond:
            return key in self._pending or self._running == key

    def discard(self, user: UserRef) -> None:
        with self._cond:
            self._pending.pop((user.tenant, user.user_id), None)

    def settle_now(self, user: UserRef) -> None:
        """Runs the user's queued re-rank in the caller (which holds the user's lock): before a
        compaction, a forget or an erase, so they start from stored weights that are current."""
        with self._cond:
            item = self._pending.pop((user.tenant, user.user_id), None)
        if item is not None:
            self._settle(item)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if not self._pending:
                    return
                key, picked = next(iter(self._pending.items()))
                self._running = key
            try:
                with self.core.user_lock(picked.user):
                    # Taken off the queue only under the user's lock: every write of this process to the
                    # user is then either in this item or waiting for the lock (settle's write_is_last).
                    with self._cond:
                        item = self._pending.pop(key, None)
                    if item is not None:  # else settled meanwhile by settle_now (a compaction, an erase)
                        self._settle(item)
            finally:
                with self._cond:
                    self._running = None
                    self._cond.notify_all()  # readers in wait_while_running

    def wait_while_running(self, user: UserRef, ready: Callable[[], T | None], timeout: float = 10.0) -> T | None:
        """While the user's re-rank runs here, wait until ``ready()`` gives something (it checks the ranked
        cache): a read right after an ingest then answers once the graph is ranked, not after the weights
        write-back that follows under the user's lock (~a third of the agent loop's pair). None: the
        re-rank is not running (still queued, or done without what ``ready`` wants)."""
        key = (user.tenant, user.user_id)
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiting[key] = self._waiting.get(key, 0) + 1
            try:
                while True:
                    found = ready()
                    if found is not None or self._running != key:
                        if found is not None and self._running == key and _answer_of.get() is None:
                            # Handed the graph while its re-rank runs: the write-back waits for this answer.
                            self._answering[key] = self._answering.get(key, 0) + 1
                            _answer_of.set(key)
                        return found
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return None
                    self._cond.wait(left)
            finally:
                _drop_one(self._waiting, key)
                self._cond.notify_all()

    def hold(self, user: UserRef) -> None:
        """The calling request will answer from the user's ranked graph (an ingest returning its block): the
        user's queued re-rank writes its weights back after that answer (:meth:`answered`), or after
        ``rerank_read_first_ms`` at most, as for a read it handed the graph."""
        if _answer_of.get() is not None:
            return
        key = (user.tenant, user.user_id)
        with self._cond:
            self._answering[key] = self._answering.get(key, 0) + 1
        _answer_of.set(key)

    def answered(self) -> None:
        """The calling request's read has answered (or failed): a re-rank that handed it its graph may write
        its weights back now. A no-op for a read that was handed nothing."""
        key = _answer_of.get()
        if key is None:
            return
        _answer_of.set(None)
        with self._cond:
            _drop_one(self._answering, key)
            self._cond.notify_all()

    def _ranked(self, key: tuple[str, str]) -> None:
        """The running re-rank has cached its graph: wake the reads waiting for it, then let them answer
        before the weights write-back (at most ``rerank_read_first_ms``). Deadlock-free: a read handed the
        graph needs no lock the re-rank holds to answer; one still waiting for something else is waited for
        only until the bound."""
        with self._cond:
            self._cond.notify_all()
            deadline = time.monotonic() + self._read_first_s
            while self._waiting.get(key) or self._answering.get(key):
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(left)

    def _settle(self, item: _Pending) -> None:
        """``item`` was taken off the queue under the user's lock, which the caller holds."""
        try:
            self.reranker.settle(
                item.user,
                item.write,
                item.catalog_version,
                on_ranked=lambda: self._ranked((item.user.tenant, item.user.user_id)),
                write_is_last=True,
            )
            self.settled += 1
        except Exception:  # derived data: the next write or read re-ranks; never kill the thread
            log.exception("background re-rank of %s/%s failed", item.user.tenant, item.user.user_id)
            self.core.ranked_graphs.drop(item.user)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Until nothing is queued (tests and benchmarks); False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._cond:
                # _running too: an item just popped holds no user lock yet for a moment.
                if (
                    not self._pending
                    and self._running is None
                    and not any(lock.locked() for lock in self.core.locks_snapshot())
                ):
                    return True
            time.sleep(0.005)
        return False

    def close(self, drain_s: float) -> None:
        """Stops taking work, lets the thread finish what is queued for up to ``drain_s`` seconds, then
        drops the rest (the turns are committed; weights are derived and redone by the next re-rank)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(drain_s)
        with self._cond:
            self.dropped += len(self._pending)
            if self._pending:
                log.warning("shutdown: %d background re-rank(s) dropped", len(self._pending))
            self._pending.clear()
