"""What every service shares: settings, the store, id checks, locks, extractors and the ranked graphs."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import TYPE_CHECKING

from .. import consistency
from ..compaction import CompactionConfig, assign_tiers
from ..context import ContextConfig
from ..doc_frequency import DocumentFrequency
from ..errors import NotFound
from ..extraction.extractor import ConceptExtractor
from ..graph_store import GraphStore
from ..ids import check_id
from ..models import Catalog
from ..names import display_names
from ..ranked_cache import LRU, RankedCache, RankedGraph
from ..ranking import RankingConfig, rank
from ..settings import Settings
from ..specificity import SpecificityConfig
from ..store import UserRef
from ..tokens import TokenCounter

if TYPE_CHECKING:
    from ..learner import Learner
    from .rerank import BackgroundReranker, Reranker


# The longest a read waits for the user's background re-rank before it ranks on its own.
READ_WAIT_S = 2.0


def check_service_id(value: str, what: str, max_length: int) -> str:
    # The id policy (NFC, no invisible/bidi characters, no '/' in user ids) is graphmem/ids.py.
    return check_id(value, what, max_length, path_segment=what == "user_id")


def user_not_found(user_id: str) -> NotFound:
    return NotFound(f"user {user_id!r} has no memory in this tenant", code="USER_NOT_FOUND")


class Core:
    """Shared state of one :class:`graphmem.service.GraphMemory` (one per process)."""

    # Set by GraphMemory once the learner (which needs the facade) exists.
    learner: Learner
    # Set by GraphMemory: the re-ranker, and the background queue (None: re-rank inside the request).
    reranker: Reranker
    background: BackgroundReranker | None = None

    def __init__(self, settings: Settings, store: GraphStore) -> None:
        self.settings = settings
        self.store = store
        self.ranking_config = RankingConfig.from_settings(settings)
        self.compaction_config = CompactionConfig.from_settings(settings)
        self.context_config = ContextConfig.from_settings(settings)
        self.specificity_config = SpecificityConfig.from_settings(settings)
        self.own_words_scopes = {x.strip() for x in settings.specificity_own_words_scopes.split(",") if x.strip()}
        self.doc_frequency = DocumentFrequency(store, settings.specificity_df_ttl_s, settings.specificity_df_min_users)
        self.counter = TokenCounter(settings.token_encoding)
        # tenant -> (catalog version, its extractor): one spaCy-backed extractor per catalog version.
        self.extractors: dict[str, tuple[int, ConceptExtractor]] = {}
        self.ranked_graphs = RankedCache(256)
        # (tenant, catalog version, language) -> concept key -> display name (graphmem.names).
        self._names: LRU[tuple[str, int, str], dict[str, str]] = LRU(256)
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._build_locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.schema_applied = False
        self.models_loaded = False

    # -- ids and locks --------------------------------------------------------------------

    def user(self, tenant: str, user_id: str) -> UserRef:
        check_service_id(tenant, "tenant", self.settings.max_id_length)
        check_service_id(user_id, "user_id", self.settings.max_id_length)
        return UserRef(tenant, user_id)

    def check_id(self, value: str, what: str) -> str:
        return check_service_id(value, what, self.settings.max_id_length)

    def user_lock(self, user: UserRef) -> threading.Lock:
        """Serializes this process's writes of one user (write, then re-rank and cache)."""
        with self._guard:
            return self._locks.setdefault((user.tenant, user.user_id), threading.Lock())

    def locks_snapshot(self) -> list[threading.Lock]:
        with self._guard:
            return list(self._locks.values())

    # -- extractors and names -------------------------------------------------------------

    def extractor_entry(self, tenant: str, catalog_version: int | None = None) -> tuple[int, ConceptExtractor]:
        """(catalog version, the extractor built from that catalog), rebuilt when the catalog changed.

        One thread builds a tenant's extractor; the others wait for it (single flight). Each request used
        to build its own: after a catalog change, 20 clients' first requests built 20 extractors at once
        (~1.6 s of CPU each on a cold process), and on a loaded 2-core machine the last one answered after
        more than a minute (tests/test_load.py; tests/test_extractor_build.py). ``catalog_version``: the
        version the caller just read (ingest reads it with its other pre-write reads), else read here.
        """
        if catalog_version is None:
            catalog_version = self.store.catalog_version(tenant)
        cached = self.extractors.get(tenant)
        if cached and cached[0] == catalog_version:
            return cached
        with self._build_lock(tenant):
            cached = self.extractors.get(tenant)
            if cached and cached[0] >= catalog_version:
                return cached  # built by the thread this one waited for
            doc, version = self.store.get_catalog(tenant)
            catalog = Catalog.model_validate(doc) if doc else None
            entry = (version, ConceptExtractor(catalog, self.settings))
            self.extractors[tenant] = entry
            return entry

    def _build_lock(self, tenant: str) -> threading.Lock:
        with self._guard:
            return self._build_locks.setdefault(tenant, threading.Lock())

    def extractor(self, tenant: str) -> ConceptExtractor:
        return self.extractor_entry(tenant)[1]

    def extractor_at(self, tenant: str, catalog_version: int | None) -> ConceptExtractor:
        """The extractor of ``catalog_version`` when it is the one cached (no query), else the current one."""
        cached = self.extractors.get(tenant)
        return cached[1] if cached and cached[0] == catalog_version else self.extractor(tenant)

    def display_names(self, tenant: str, catalog_version: int, language: str | None) -> dict[str, str]:
        """Concept key -> its name in ``language`` (:mod:`graphmem.names`), once per catalog version."""
        if language is None:
            return {}
        cached = self.extractors.get(tenant)
        if cached is None or cached[0] != catalog_version:
            cached = self.extractor_entry(tenant)
        key = (tenant, cached[0], language)
        hit = self._names.get(key)
        if hit is None:
            hit = display_names(cached[1].catalog, language)
            self._names.put(key, hit)
        return hit

    # -- ranked graphs --------------------------------------------------------------------

    def ranked(self, user: UserRef) -> RankedGraph:
        """The user's ranked graph, from cache when nothing changed since it was ranked."""
        chain = consistency.current()
        floor = chain.floor(user.tenant, user.user_id) if chain is not None else None
        if chain is not None and floor is not None:
            # A consistency token names the versions its write left: a cached graph at or past them
            # already holds that write, so it answers without asking Neo4j (graphmem/consistency.py).
            cached = self.ranked_graphs.peek(user)
            if cached is not None and cached.version >= floor[0] and cached.catalog_version >= (floor[1] or 0):
                chain.answered(cached.version, "cache")
                return cached
        written = chain.written(user.tenant, user.user_id) if chain is not None else None
        if chain is not None and written is not None:
            # A read in the request that wrote (an ingest returning its block): the write's own transaction
            # said which versions it left, so no version query; a graph cached at or past them holds it.
            cached = self.ranked_since(user, *written)
            if cached is not None:
                chain.answered(cached.version, "cache")
                return cached
        if self.ranked_graphs.peek(user) is None and not (self.background is not None and self.background.busy(user)):
            # Nothing cached to compare a version with, and no write of this process waiting to be ranked:
            # the graph is read with the versions it is at (one round trip where the version check and
            # the load took five: an uncached block's largest cost).
            return self._load_and_rank(user, chain)
        if written is not None:
            version, catalog_version = written
        else:
            stored, catalog_version = self.store.user_version(user)
            if stored is None:
                raise user_not_found(user.user_id)
            version = stored
        cached = self.ranked_graphs.current(user, version, catalog_version)
        if chain is not None:
            chain.answered(version, "cache" if cached is not None else "store")
        if cached is not None:
            return cached
        if self.background is not None and self.background.busy(user):
            # Written, not yet re-ranked (queued, or being ranked right now): wait for the user's lock. A
            # re-rank that ranked meanwhile has cached the graph (before its weights write-back), at this
            # version or at the one its write-back made (which holds this version's writes too); loading and
            # ranking here as well doubled an agent loop's work. Still queued: rank on read
            # (read-your-writes); the write-back stays queued.
            cached = self.ranked_since(user, version, catalog_version)
            if cached is not None:
                return cached
            # Being ranked right now: answer as soon as it is cached, not after its weights write-back.
            cached = self.background.wait_while_running(
                user, lambda: self.ranked_since(user, version, catalog_version), timeout=READ_WAIT_S
            )
            if cached is not None:
                return cached
            lock = self.user_lock(user)
            if lock.acquire(timeout=READ_WAIT_S):
                try:
                    cached = self.ranked_since(user, version, catalog_version)
                    if cached is not None:
                        return cached
                    pending = self.background.pending(user)
                    if pending is not None:
                        return self.reranker.rank_for_read(user, version, catalog_version, pending.write)
                finally:
                    lock.release()
            else:
                # The background holds the user longer than a read may wait (a starved thread on a loaded
                # machine held a block for a minute, tests/test_load.py): rank what is stored here, and do
                # not cache it, so the background's write-back of this version still happens.
                graph = self.store.load_user_graph(user, catalog_version=catalog_version)
                ranking = rank(graph, self.ranking_config)
                return RankedGraph(
                    version, catalog_version, graph, ranking, assign_tiers(graph, ranking, self.compaction_config)
                )
        return self._load_and_rank(user, chain)

    def _load_and_rank(self, user: UserRef, chain: consistency.Chain | None) -> RankedGraph:
        """Reads the user's graph with the versions it is at, ranks it and caches it under them."""
        loaded = self.store.load_current_graph(user)
        if loaded is None:
            raise user_not_found(user.user_id)
        version, catalog_version, graph = loaded
        if chain is not None:
            chain.answered(version, "store")
        ranking = rank(graph, self.ranking_config)
        ranked = RankedGraph(
            version, catalog_version, graph, ranking, assign_tiers(graph, ranking, self.compaction_config)
        )
        self.ranked_graphs.put(user, ranked)
        return ranked

    def ranked_since(self, user: UserRef, version: int, catalog_version: int) -> RankedGraph | None:
        """The cached graph if it was ranked at ``version`` or later, under this catalog version."""
        cached = self.ranked_graphs.peek(user)
        if cached is not None and cached.version >= version and cached.catalog_version == catalog_version:
            return cached
        return None

    def ranked_as_of(self, user: UserRef, as_of: datetime) -> RankedGraph:
        """The user's graph ranked as it stood at ``as_of`` (never cached: a past moment is asked rarely)."""
        version, catalog_version = self.store.user_version(user)
        if version is None:
            raise user_not_found(user.user_id)
        graph = self.learner.graph_as_of(user, as_of)
        ranking = rank(graph, self.ranking_config)
        return RankedGraph(-1, catalog_version, graph, ranking, assign_tiers(graph, ranking, self.compaction_config))

    def ranked_at(self, user: UserRef, as_of: datetime | None) -> RankedGraph:
        return self.ranked(user) if as_of is None else self.ranked_as_of(user, as_of)
