"""The library entry point: ingest turns, answer context requests, explain, compact, forget.

`GraphMemory` is a thin facade over the services in :mod:`graphmem.services` (ingest, rerank, read,
admin), which share one :class:`graphmem.services.core.Core`: the store, the extractors and the cache
of ranked user graphs, keyed by the graph version that every write bumps, so a context request for an
unchanged graph never re-ranks. The facade's methods are the library's API (the HTTP API, the MCP
server, the client tests, benchmarks and evaluations call them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from datetime import datetime
from typing import Any

from . import consistency
from .compaction import CompactionConfig
from .context import ContextConfig
from .doc_frequency import DocumentFrequency
from .extraction.extractor import ConceptExtractor
from .graph_store import GraphStore
from .learner import Learner
from .models import Catalog, ContextResult, IngestResult, TurnIn, UserGraph
from .ranked_cache import RankedGraph
from .ranking import RankingConfig
from .services.admin import AdminService
from .services.core import Core
from .services.ingest import IngestService
from .services.read import ReadService
from .services.rerank import BackgroundReranker, Reranker
from .settings import Settings, get_settings
from .specificity import SpecificityConfig
from .store import UserRef
from .tenant_stores import open_store
from .tokens import TokenCounter
from .vocabulary import ContextOptions

__all__ = ["GraphMemory", "RankedGraph"]


class GraphMemory:
    """graphmem as a library: one instance per process."""

    def __init__(self, settings: Settings | None = None, store: GraphStore | None = None) -> None:
        self.settings = settings or get_settings()
        # One Neo4jStore, or one per tenant target when a tenant map is set (graphmem/tenant_stores.py).
        self.store: GraphStore = store or open_store(self.settings)
        self.core = Core(self.settings, self.store)
        self.reranker = Reranker(self.core)
        self.core.reranker = self.reranker
        if self.settings.rerank_in_background:
            self.core.background = BackgroundReranker(self.core, self.reranker)
        self.ingestion = IngestService(self.core, self.reranker)
        self.reader = ReadService(self.core)
        self.admin = AdminService(self.core, self.reranker, self.reader)
        # Graded attempts, BKT mastery and fits, the model "as of" a past moment (graphmem/learner.py).
        self.learner = Learner(self)
        self.core.learner = self.learner

    # -- shared state, as attributes (read by the API, the CLI and the benchmarks) ----------

    @property
    def ranking_config(self) -> RankingConfig:
        return self.core.ranking_config

    @property
    def compaction_config(self) -> CompactionConfig:
        return self.core.compaction_config

    @property
    def context_config(self) -> ContextConfig:
        return self.core.context_config

    @property
    def specificity_config(self) -> SpecificityConfig:
        return self.core.specificity_config

    @property
    def doc_frequency(self) -> DocumentFrequency:
        return self.core.doc_frequency

    @property
    def counter(self) -> TokenCounter:
        return self.core.counter

    @property
    def schema_applied(self) -> bool:
        return self.core.schema_applied

    @property
    def models_loaded(self) -> bool:
        return self.core.models_loaded

    @property
    def last_extraction_seconds(self) -> float:
        """Extraction time of the last ingest, read by the API's metrics."""
        return self.ingestion.last_extraction_seconds

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Applies the schema and loads the spaCy pipelines (once per process)."""
        self.admin.start()

    def close(self) -> None:
        # Queued re-ranks first (bounded): the turns are committed, the weights are derived data.
        if self.core.background is not None:
            self.core.background.close(self.settings.rerank_drain_s)
        self.store.close()

    def wait_reranked(self, timeout: float = 10.0) -> bool:
        """Until the background re-ranks queued so far are done (tests, benchmarks)."""
        return self.core.background.wait_idle(timeout) if self.core.background is not None else True

    def ready(self) -> dict[str, Any]:
        return self.admin.ready()

    def user(self, tenant: str, user_id: str) -> UserRef:
        return self.core.user(tenant, user_id)

    # -- catalog --------------------------------------------------------------------------

    def extractor(self, tenant: str) -> ConceptExtractor:
        return self.core.extractor(tenant)

    def put_catalog(self, tenant: str, catalog: Catalog) -> dict[str, Any]:
        return self.admin.put_catalog(tenant, catalog)

    def get_catalog(self, tenant: str) -> dict[str, Any]:
        return self.admin.get_catalog(tenant)

    # -- ingest ---------------------------------------------------------------------------

    def ingest(
        self,
        tenant: str,
        user_id: str,
        session_id: str,
        turns: Sequence[TurnIn],
        *,
        edit_log: bool = True,
        context: ContextOptions | None = None,
    ) -> IngestResult:
        """Extract → validate → store a batch of turns for one user, then re-rank.

        Duplicate turn ids (already stored, or repeated in the batch) are no-ops.
        When the call returns, the turns are committed. ``edit_log=False`` leaves ``edits`` empty.
        ``context``: the options of :meth:`context` (``{}`` for the defaults); the result's ``context`` is then
        the block a context call right after this ingest returns (the agent loop in one call). Its options are
        checked before anything is stored.
        """
        if context is None:
            return self.ingestion.ingest(tenant, user_id, session_id, turns, edit_log=edit_log)
        self.reader.checked(
            scope=context.get("scope"),
            max_tokens=context.get("max_tokens"),
            fmt=context.get("fmt"),
            prompt=context.get("prompt"),
            tag=context.get("tag"),
            write_follows=True,
        )
        # One consistency chain for the write and the read (the API's, else one of its own): the read takes the
        # versions the write's transaction left (Chain.written) instead of querying them.
        chain = consistency.current()
        try:
            with nullcontext(chain) if chain is not None else consistency.chain():
                result = self.ingestion.ingest(tenant, user_id, session_id, turns, edit_log=edit_log, rank_now=True)
                block = self.reader.context(tenant, user_id, **context)
        finally:
            if self.core.background is not None:
                self.core.background.answered()  # also when the write or the block failed: never hold the write-back
        return result.model_copy(update={"context": block})

    # -- ranked graphs --------------------------------------------------------------------

    def ranked(self, user: UserRef) -> RankedGraph:
        """The user's ranked graph, from cache when nothing changed since it was ranked."""
        return self.core.ranked(user)

    def ranked_as_of(self, user: UserRef, as_of: datetime) -> RankedGraph:
        """The user's graph ranked as it stood at ``as_of`` (never cached)."""
        return self.core.ranked_as_of(user, as_of)

    def update_cached_graph(
        self, user: UserRef, version_before: int, version_after: int, update: Callable[[UserGraph], UserGraph | None]
    ) -> None:
        """After a write that moved the user from ``version_before`` to ``version_after`` without changing
        what ranking reads (mentions, stances, relations), carries the cached ranked graph over with
        ``update(graph)`` instead of reloading it on the next read; ``update`` returning None drops it."""
        self.core.ranked_graphs.carry_over(user, version_before, version_after, update)

    def display_names(self, tenant: str, catalog_version: int, language: str | None) -> dict[str, str]:
        return self.core.display_names(tenant, catalog_version, language)

    # -- reads ----------------------------------------------------------------------------

    def focus_keys(self, tenant: str, focus: str | None, graph: UserGraph) -> list[str]:
        return self.reader.focus_keys(tenant, focus, graph)

    def context(
        self,
        tenant: str,
        user_id: str,
        *,
        focus: str | None = None,
        scope: str | None = None,
        max_tokens: int | None = None,
        fmt: str | None = None,
        evidence: bool = False,
        prompt: str | None = None,
        tag: str | None = None,
        as_of: datetime | None = None,
    ) -> ContextResult:
        return self.reader.context(
            tenant,
            user_id,
            focus=focus,
            scope=scope,
            max_tokens=max_tokens,
            fmt=fmt,
            evidence=evidence,
            prompt=prompt,
            tag=tag,
            as_of=as_of,
        )

    def graph(self, tenant: str, user_id: str, as_of: datetime | None = None) -> dict[str, Any]:
        return self.reader.graph(tenant, user_id, as_of)

    def resolve_concept(self, tenant: str, graph: UserGraph, concept: str) -> str:
        """A concept named by key, name or alias → its key in the user's graph."""
        return self.reader.resolve_concept(tenant, graph, concept)

    def explain(self, tenant: str, user_id: str, concept: str, as_of: datetime | None = None) -> dict[str, Any]:
        return self.reader.explain(tenant, user_id, concept, as_of)

    def export(self, tenant: str, user_id: str) -> dict[str, Any]:
        return self.reader.export(tenant, user_id)

    # -- compaction, forgetting, erasure --------------------------------------------------

    def compact(self, tenant: str, user_id: str, critical_keys: Sequence[str] = ()) -> dict[str, Any]:
        return self.admin.compact(tenant, user_id, critical_keys)

    def compaction_runs(self, tenant: str, user_id: str) -> list[dict[str, Any]]:
        return self.admin.compaction_runs(tenant, user_id)

    def forget(self, tenant: str, user_id: str, concept: str) -> dict[str, Any]:
        return self.admin.forget(tenant, user_id, concept)

    def erase(self, tenant: str, user_id: str) -> dict[str, Any]:
        return self.admin.erase(tenant, user_id)
