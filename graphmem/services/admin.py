"""Administration: lifecycle, the tenant catalog, compaction on request, forgetting, erasure, readiness."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..extraction.catalog_matcher import catalog_keys
from ..extraction.extractor import ConceptExtractor
from ..extraction.lexical import zipf
from ..extraction.normalize import concept_key
from ..models import Catalog
from ..ranking import rank
from ..store import CatalogRows
from .core import Core, check_service_id, user_not_found
from .read import ReadService
from .rerank import Reranker


def catalog_rows(catalog: Catalog) -> CatalogRows:
    """A validated catalog as the rows the store writes (concepts by key, relations by type)."""
    keys = catalog_keys(catalog)

    def key_of(ref: str) -> str:
        return keys.get(concept_key(ref)) or concept_key(ref)

    concepts = [
        {
            "key": concept_key(c.name),
            "name": c.name,
            "aliases": c.aliases,
            "aliases_text": " | ".join(c.aliases),
            "type": c.type,
            "id": c.id,
            "url": c.url,
            "critical": c.critical,
            "language": "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in c.name) else "en",
        }
        for c in catalog.concepts
    ]
    relations: dict[Any, list[dict[str, str]]] = {}
    for r in catalog.relations:
        relations.setdefault(r.type, []).append({"source_key": key_of(r.source), "target_key": key_of(r.target)})
    return CatalogRows(catalog.model_dump_json(), concepts, relations)


class AdminService:
    def __init__(self, core: Core, reranker: Reranker, reader: ReadService) -> None:
        self.core = core
        self.reranker = reranker
        self.reader = reader

    # -- lifecycle ----------------------------------------------------------------

    def start(self) -> None:
        """Applies the schema and loads the spaCy pipelines (once per process)."""
        self.core.store.apply_schema()
        self.core.schema_applied = True
        ConceptExtractor(None, self.core.settings).extract(["warm up the English pipeline", "预热中文分词"])
        # wordfreq's frequency lists (and its own jieba dictionary), which the first catalog's extractor
        # needs: ~1.6 s of CPU that the first requests after a catalog PUT paid, each its own.
        zipf("warm", "en"), zipf("预热", "zh")
        self.core.models_loaded = True

    def ready(self) -> dict[str, Any]:
        core = self.core
        reachable = core.store.ping()
        return {
            "neo4j": reachable,
            "schema": core.schema_applied,
            "models": core.models_loaded,
            "ready": reachable and core.schema_applied and core.models_loaded,
        }

    # -- catalog ---------------------------------------------------------------------

    def put_catalog(self, tenant: str, catalog: Catalog) -> dict[str, Any]:
        check_service_id(tenant, "tenant", self.core.settings.max_id_length)
        rows = catalog_rows(catalog)
        version = self.core.store.replace_catalog(tenant, rows)
        self.core.extractors.pop(tenant, None)
        # Build the new catalog's extractor now (~1.6 s of CPU, far more on a cold, loaded machine): the
        # upload pays for it, not the first turns of every user at once (tests/test_load.py).
        self.core.extractor_entry(tenant, version)
        return {
            "tenant": tenant,
            "catalog_version": version,
            "concepts": len(rows.concepts),
            "relations": sum(len(v) for v in rows.relations.values()),
        }

    def get_catalog(self, tenant: str) -> dict[str, Any]:
        doc, version = self.core.store.get_catalog(tenant)
        return {"catalog_version": version, "catalog": doc or {"concepts": [], "relations": []}}

    # -- compaction ----------------------------------------------------------------------

    def compact(self, tenant: str, user_id: str, critical_keys: Sequence[str] = ()) -> dict[str, Any]:
        core = self.core
        user = core.user(tenant, user_id)
        with core.user_lock(user):
            if core.background is not None:
                core.background.settle_now(user)  # plan from stored weights that are current
            version, catalog_version = core.store.user_version(user)
            if version is None:
                raise user_not_found(user_id)
            cached = core.ranked_graphs.current(user, version, catalog_version)
            if cached is not None:
                # This version is already loaded and ranked in memory (ranking is a pure function of
                # the graph): reloading it cost ~2 s of a 10,000-concept user's ~4 s compaction.
                graph, ranking = cached.graph, cached.ranking
            else:
                graph = core.store.load_user_graph(user)
                ranking = rank(graph, core.ranking_config)
            return self.reranker.compact(user, graph, ranking, trigger="request", critical_keys=critical_keys)

    def compaction_runs(self, tenant: str, user_id: str) -> list[dict[str, Any]]:
        return self.core.store.compaction_runs(self.core.user(tenant, user_id))

    # -- forgetting -----------------------------------------------------------------------

    def forget(self, tenant: str, user_id: str, concept: str) -> dict[str, Any]:
        core = self.core
        user = core.user(tenant, user_id)
        with core.user_lock(user):
            if core.background is not None:
                core.background.settle_now(user)
            ranked = core.ranked(user)
            key = self.reader.resolve_concept(tenant, ranked.graph, concept)
            removed = core.store.forget_concept(user, key, names=[ranked.graph.concepts[key].name])
            self.reranker.after_write(user)
        return {"concept": key, "removed": removed}

    def erase(self, tenant: str, user_id: str) -> dict[str, Any]:
        core = self.core
        user = core.user(tenant, user_id)
        with core.user_lock(user):
            if core.store.user_version(user)[0] is None:
                raise user_not_found(user_id)
            if core.background is not None:
                core.background.discard(user)
            removed = core.store.erase_user(user)
            core.ranked_graphs.drop(user)
        return {"user_id": user_id, "removed": removed}
