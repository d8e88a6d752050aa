"""The library entry point: ingest turns, answer context requests, explain, compact, forget.

`GraphMemory` wires extraction, the store and the pure ranking / compaction /
rendering functions together. It holds no user data itself except a cache of
ranked user graphs, keyed by the graph version that every write bumps, so a
context request for an unchanged graph never re-ranks.
"""

from __future__ import annotations

import gc
import json
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from .compaction import CompactionConfig, CompactionPlan, assign_tiers, compaction_due, plan_compaction
from .context import ContextConfig, ContextSelection, parse_scope, resolve_tag, select_context
from .doc_frequency import DocumentFrequency
from .errors import CriticalCompressionFailure, GraphmemError, InvalidInput, NotFound
from .explain import explain_concept
from .extraction.catalog_matcher import catalog_keys
from .extraction.extractor import ConceptExtractor
from .extraction.normalize import concept_key
from .ids import check_id
from .learner import Learner, as_utc, mastery_view, stance_timeline
from .models import (
    Catalog,
    ContextResult,
    IngestResult,
    Stance,
    Tier,
    TurnEditLog,
    TurnExtraction,
    TurnIn,
    UserGraph,
    clean_text,
    derive_turn_id,
    utc_now,
)
from .names import display_names, localized
from .ranking import Ranking, RankingConfig, rank
from .render import RenderedBlock, check_loop, render_block
from .settings import Settings, get_settings
from .specificity import CENTRAL_ONLY, SpecificityConfig, demoted
from .store import CatalogRows, CompactionRecord, IngestWrite, Neo4jStore, StoredTurn, UserRef, WeightRow
from .tokens import TokenCounter

log = logging.getLogger(__name__)

FORMATS = ("xml", "markdown", "json")


@dataclass(frozen=True)
class RankedUser:
    """A user's graph as last loaded and ranked, valid while the versions match."""

    version: int
    catalog_version: int
    graph: UserGraph
    ranking: Ranking
    tiers: dict[str, Tier]


def _check_id(value: str, what: str, max_length: int) -> str:
    # The id policy (NFC, no invisible/bidi characters, no '/' in user ids) is graphmem/ids.py.
    return check_id(value, what, max_length, path_segment=what == "user_id")


class GraphMemory:
    """graphmem as a library: one instance per process."""

    def __init__(self, settings: Settings | None = None, store: Neo4jStore | None = None) -> None:
        self.settings = settings or get_settings()
        self.store = store or Neo4jStore(self.settings)
        self.ranking_config = RankingConfig.from_settings(self.settings)
        self.compaction_config = CompactionConfig.from_settings(self.settings)
        self.context_config = ContextConfig.from_settings(self.settings)
        self.specificity_config = SpecificityConfig.from_settings(self.settings)
        self._own_words_scopes = {x.strip() for x in self.settings.specificity_own_words_scopes.split(",") if x.strip()}
        self.doc_frequency = DocumentFrequency(
            self.store, self.settings.specificity_df_ttl_s, self.settings.specificity_df_min_users
        )
        self.counter = TokenCounter(self.settings.token_encoding)
        self._extractors: dict[str, tuple[int, ConceptExtractor]] = {}
        self._ranked: OrderedDict[tuple[str, str], RankedUser] = OrderedDict()
        # Rendered blocks keyed by everything they depend on, graph version included (so a write
        # invalidates them): selection (gaps over the whole graph) cost ~40 ms per request at 8,600 concepts.
        self._blocks: OrderedDict[tuple[Any, ...], ContextResult] = OrderedDict()
        # (tenant, catalog version, language) -> concept key -> display name (graphmem.names).
        self._names: OrderedDict[tuple[str, int, str], dict[str, str]] = OrderedDict()
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()
        self.schema_applied = False
        # Graded attempts, BKT mastery and fits, the model "as of" a past moment (graphmem/learner.py).
        self.learner = Learner(self)
        self.models_loaded = False
        # Timings of the last ingest, read by the API's metrics.
        self.last_extraction_seconds = 0.0

    # -- lifecycle ----------------------------------------------------------------

    def start(self) -> None:
        """Applies the schema and loads the spaCy pipelines (once per process)."""
        self.store.apply_schema()
        self.schema_applied = True
        ConceptExtractor(None, self.settings).extract(["warm up the English pipeline", "预热中文分词"])
        self.models_loaded = True

    def close(self) -> None:
        self.store.close()

    def _user_lock(self, user: UserRef) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault((user.tenant, user.user_id), threading.Lock())

    def user(self, tenant: str, user_id: str) -> UserRef:
        _check_id(tenant, "tenant", self.settings.max_id_length)
        _check_id(user_id, "user_id", self.settings.max_id_length)
        return UserRef(tenant, user_id)

    # -- catalog ---------------------------------------------------------------------

    def extractor(self, tenant: str) -> ConceptExtractor:
        catalog_version = self.store.catalog_version(tenant)
        cached = self._extractors.get(tenant)
        if cached and cached[0] == catalog_version:
            return cached[1]
        doc, version = self.store.get_catalog(tenant)
        catalog = Catalog.model_validate(doc) if doc else None
        extractor = ConceptExtractor(catalog, self.settings)
        self._extractors[tenant] = (version, extractor)
        return extractor

    def put_catalog(self, tenant: str, catalog: Catalog) -> dict[str, Any]:
        _check_id(tenant, "tenant", self.settings.max_id_length)
        keys = catalog_keys(catalog)

        def key_of(ref: str) -> str:
            return keys.get(concept_key(ref)) or concept_key(ref)

        concepts = []
        for c in catalog.concepts:
            concepts.append(
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
            )
        relations: dict[Any, list[dict[str, str]]] = {}
        for r in catalog.relations:
            relations.setdefault(r.type, []).append({"source_key": key_of(r.source), "target_key": key_of(r.target)})
        version = self.store.replace_catalog(tenant, CatalogRows(catalog.model_dump_json(), concepts, relations))
        self._extractors.pop(tenant, None)
        return {
            "tenant": tenant,
            "catalog_version": version,
            "concepts": len(concepts),
            "relations": sum(len(v) for v in relations.values()),
        }

    def get_catalog(self, tenant: str) -> dict[str, Any]:
        doc, version = self.store.get_catalog(tenant)
        return {"catalog_version": version, "catalog": doc or {"concepts": [], "relations": []}}

    # -- ingest ------------------------------------------------------------------------

    def ingest(self, tenant: str, user_id: str, session_id: str, turns: Sequence[TurnIn]) -> IngestResult:
        """Extract → validate → store a batch of turns for one user, then re-rank.

        Duplicate turn ids (already stored, or repeated in the batch) are no-ops.
        When the call returns, the turns are committed.
        """
        user = self.user(tenant, user_id)
        _check_id(session_id, "session_id", self.settings.max_id_length)
        if not turns:
            raise InvalidInput("turns must hold at least one turn", code="EMPTY_BATCH")
        if len(turns) > self.settings.max_turns_per_call:
            raise InvalidInput(f"at most {self.settings.max_turns_per_call} turns per call", code="BATCH_TOO_LARGE")
        now = utc_now()
        latest = now + timedelta(seconds=self.settings.max_clock_skew_s)
        prepared: list[tuple[str, str, str, datetime]] = []
        for i, t in enumerate(turns):
            text = clean_text(t.text)
            if not text.strip():
                raise InvalidInput(f"turns[{i}].text is empty", code="EMPTY_TEXT")
            if len(text) > self.settings.max_text_chars:
                raise InvalidInput(
                    f"turns[{i}].text has {len(text)} characters; the limit is {self.settings.max_text_chars}",
                    code="TEXT_TOO_LONG",
                )
            # Keep batch order for turns without a timestamp.
            ts = t.ts or (now + timedelta(microseconds=i))
            if ts.tzinfo is None:
                ts = ts.replace(tzinfo=now.tzinfo)
            if ts > latest:
                # Recency counts from the user's latest turn: one far-future ts would age every later turn.
                raise InvalidInput(
                    f"turns[{i}].ts {ts.isoformat()} is in the future (more than "
                    f"{self.settings.max_clock_skew_s:g} s ahead of the server clock "
                    f"{now.isoformat(timespec='seconds')})",
                    code="TS_IN_FUTURE",
                )
            turn_id = t.turn_id if t.turn_id is not None else derive_turn_id(session_id, t.role, text, t.ts)
            _check_id(turn_id, "turn_id", self.settings.max_id_length)
            prepared.append((turn_id, t.role, text, ts))
        given = [t.turn_id for t in turns if t.turn_id is not None]
        repeated = sorted({i for i in given if given.count(i) > 1}) if len(set(given)) < len(given) else []
        if repeated:
            # Ids derived from content may repeat (the same text twice is one turn); a client's may not.
            raise InvalidInput(
                f"the batch holds turn id(s) {', '.join(map(repr, repeated[:5]))} more than once",
                code="DUPLICATE_TURN_ID",
            )

        # Skip extraction for turns already stored (the store re-checks inside its transaction); a
        # stored turn with this id but other text, role or session is a 409 (TURN_ID_CONFLICT).
        known = self.store.existing_turn_ids(
            user, [p[0] for p in prepared], {p[0]: (session_id, p[1], p[2]) for p in prepared}
        )
        fresh = [p for p in prepared if p[0] not in known]
        extractor = self.extractor(tenant)
        extractor_version = self._extractors[tenant][0]
        started = time.perf_counter()
        # A user turn heading the batch may refer back to the session's last stored turn.
        prior = self.store.prior_turn(user, session_id, fresh[0][3]) if fresh and fresh[0][1] == "user" else None
        extractions = extractor.extract([p[2] for p in fresh], [p[1] for p in fresh], prior) if fresh else []
        self.last_extraction_seconds = time.perf_counter() - started
        by_id: dict[str, TurnExtraction] = {}
        stored: list[StoredTurn] = []
        for (turn_id, role, text, ts), ex in zip(fresh, extractions, strict=True):
            by_id[turn_id] = ex
            stored.append(StoredTurn(turn_id, role, text, ts, ex.language, self.counter.count(text), ex))

        with self._user_lock(user):
            write = self.store.write_ingest(user, session_id, stored)
            if write.accepted:
                try:
                    self._rerank_after_write(user, write, extractor_version)
                except GraphmemError as exc:
                    if exc.code != "USER_NOT_FOUND":
                        raise
                    # A DELETE of the user committed between this call's write and its re-rank: the
                    # turns just written were erased with the user. Say so rather than a bare 404.
                    raise GraphmemError(
                        f"user {user_id!r} was erased while this call was being processed; "
                        "its turns were erased too (send them again to start afresh)",
                        code="USER_ERASED",
                        status=409,
                    ) from exc
        accepted = set(write.accepted)
        edits = [
            TurnEditLog(
                turn_id=p[0],
                session_id=session_id,
                role=p[1],
                duplicate=p[0] not in accepted,
                extraction=by_id.get(p[0]) if p[0] in accepted else None,
            )
            for p in prepared
        ]
        return IngestResult(
            user_id=user_id,
            session_id=session_id,
            accepted=write.accepted,
            duplicates=[p[0] for p in prepared if p[0] not in accepted],
            edits=edits,
        )

    def _rerank_after_write(
        self, user: UserRef, write: IngestWrite | None = None, catalog_version: int | None = None
    ) -> None:
        """Ranks the user's graph and writes weights back; compacts when the graph grew too big.

        Survivors get their tier (core/related; a compacted concept that is back above
        the threshold is restored); concepts below the threshold keep their stored tier
        until a compaction run folds them.

        After an ingest (`write`), when the cached graph is the one just before that write (same
        graph and catalog version), only the interests the ingest refreshed change: the graph is
        updated with them instead of reloading every interest (10,000 rows for a big user).
        """
        base = None
        if write is not None and catalog_version is not None:
            cached = self._ranked.get((user.tenant, user.user_id))
            if write.version == 0:
                # The user's first turns: there was nothing before this write.
                base = UserGraph(user.tenant, user.user_id, {}, (), utc_now(), 0, 0)
            elif cached and cached.version == write.version and cached.catalog_version == catalog_version:
                base = cached.graph
        if base is not None and write is not None:
            graph = self.store.load_user_graph(user, base=base, refreshed=write.interests)
        else:
            graph = self.store.load_user_graph(user)
        ranking = rank(graph, self.ranking_config)
        if self._auto_compaction_due(graph, ranking):
            try:
                self._compact_graph(user, graph, ranking, trigger="auto")
                self._forget_if_raced(user, write if base is not None else None)
                return
            except CriticalCompressionFailure as exc:
                log.warning("automatic compaction of %s/%s refused: %s", user.tenant, user.user_id, exc.message)
        tiers = assign_tiers(graph, ranking, self.compaction_config)
        rows = []
        for k, rc in ranking.items():
            tier = tiers[k] if tiers[k] is not Tier.compacted else None
            # PageRank shifts every weight a little on each write: rewrite a row only when its
            # weight moved by more than 1 % or its tier changed, so ingest cost follows the change,
            # not the graph's size. Blocks use the in-memory ranking, never the stored weights.
            if _row_changed(graph.concepts[k], rc.final, tier):
                rows.append(WeightRow(k, rc.initial, rc.propagated, rc.final, tier))
        version = self.store.write_weights(user, rows)
        catalog_version = self._catalog_version_after_write(user, graph)
        # The cached graph carries the tiers just written, as a reload would.
        written = {r.key: r for r in rows}
        concepts = {
            k: replace(n, tier=written[k].tier or n.tier or Tier.related, weight=written[k].final)
            if k in written
            else n
            for k, n in graph.concepts.items()
        }
        graph = replace(graph, concepts=concepts)
        self._remember(user, RankedUser(version, catalog_version, graph, ranking, tiers))
        self._forget_if_raced(user, write if base is not None else None)

    def _forget_if_raced(self, user: UserRef, write: IngestWrite | None) -> None:
        """A graph built from the pre-write cache is exact only if nobody else wrote in between: the
        ingest (+1) and the weights write (+1) must be the only bumps. Otherwise drop it (next read reloads)."""
        if write is None:
            return
        key = (user.tenant, user.user_id)
        with self._guard:
            cached = self._ranked.get(key)
            if cached is not None and cached.version != write.version + 2:
                self._ranked.pop(key, None)

    def _catalog_version_after_write(self, user: UserRef, graph: UserGraph) -> int:
        """The catalog version to cache a just-written graph under, without a round trip when possible.

        The graph was loaded under the extractor's catalog version (checked at the start of the call);
        a catalog replaced meanwhile only means the next request reloads, which is always safe.
        """
        cached = self._extractors.get(user.tenant)
        if cached is not None:
            return cached[0]
        return self.store.user_version(user)[1]

    def _auto_compaction_due(self, graph: UserGraph, ranking: Ranking) -> bool:
        """Compact when the graph is past its size limit *and* enough has fallen below the threshold
        since the last run; otherwise a big graph would be re-compacted on every ingest."""
        if not compaction_due(graph, self.compaction_config):
            return False
        threshold = self.compaction_config.threshold
        pending = sum(
            1 for k, n in graph.concepts.items() if n.tier is not Tier.compacted and ranking.weight(k) < threshold
        )
        return pending >= max(1, self.compaction_config.auto_compact_concepts // 10)

    def _remember(self, user: UserRef, ranked: RankedUser) -> None:
        key = (user.tenant, user.user_id)
        with self._guard:
            self._ranked[key] = ranked
            self._ranked.move_to_end(key)
            while len(self._ranked) > 256:
                self._ranked.popitem(last=False)

    def ranked(self, user: UserRef) -> RankedUser:
        """The user's ranked graph, from cache when nothing changed since it was ranked."""
        version, catalog_version = self.store.user_version(user)
        if version is None:
            raise NotFound(f"user {user.user_id!r} has no memory in this tenant", code="USER_NOT_FOUND")
        cached = self._ranked.get((user.tenant, user.user_id))
        if cached and cached.version == version and cached.catalog_version == catalog_version:
            return cached
        graph = self.store.load_user_graph(user)
        ranking = rank(graph, self.ranking_config)
        tiers = assign_tiers(graph, ranking, self.compaction_config)
        ranked = RankedUser(version, catalog_version, graph, ranking, tiers)
        self._remember(user, ranked)
        return ranked

    def update_cached_graph(
        self, user: UserRef, version_before: int, version_after: int, update: Callable[[UserGraph], UserGraph | None]
    ) -> None:
        """After a write that moved the user from ``version_before`` to ``version_after`` without changing
        what ranking reads (mentions, stances, relations), carries the cached ranked graph over with
        ``update(graph)`` instead of reloading it on the next read; ``update`` returning None drops it."""
        key = (user.tenant, user.user_id)
        with self._guard:
            cached = self._ranked.get(key)
            if cached is None or cached.version != version_before:
                return
            graph = update(cached.graph)
            if graph is None:
                self._ranked.pop(key, None)
            else:
                self._ranked[key] = replace(cached, version=version_after, graph=graph)

    def ranked_as_of(self, user: UserRef, as_of: datetime) -> RankedUser:
        """The user's graph ranked as it stood at ``as_of`` (never cached: a past moment is asked rarely)."""
        version, catalog_version = self.store.user_version(user)
        if version is None:
            raise NotFound(f"user {user.user_id!r} has no memory in this tenant", code="USER_NOT_FOUND")
        graph = self.learner.graph_as_of(user, as_of)
        ranking = rank(graph, self.ranking_config)
        return RankedUser(-1, catalog_version, graph, ranking, assign_tiers(graph, ranking, self.compaction_config))

    def display_names(self, tenant: str, catalog_version: int, language: str | None) -> dict[str, str]:
        """Concept key -> its name in ``language`` (:mod:`graphmem.names`), once per catalog version."""
        if language is None:
            return {}
        cached = self._extractors.get(tenant)
        if cached is None or cached[0] != catalog_version:
            self.extractor(tenant)
            cached = self._extractors[tenant]
        key = (tenant, cached[0], language)
        hit = self._names.get(key)
        if hit is None:
            hit = display_names(cached[1].catalog, language)
            with self._guard:
                self._names[key] = hit
                while len(self._names) > 256:
                    self._names.popitem(last=False)
        return hit

    # -- context -----------------------------------------------------------------------

    def focus_keys(self, tenant: str, focus: str | None, graph: UserGraph) -> list[str]:
        """Concepts the focus text is about: extracted with the same pipeline, else full-text search."""
        if not focus or not focus.strip():
            return []
        text = clean_text(focus)[: self.settings.max_text_chars]
        ex = self.extractor(tenant).extract([text], ["user"])[0]
        keys = list(dict.fromkeys(m.key for m in ex.concepts))
        # Only the user's own concepts and the catalog's: other users' concepts must not show here.
        outside = [k for k in keys if k not in graph.concepts]
        known = set(self.store.existing_concepts(tenant, outside, catalog_only=True)) if outside else set()
        keys = [k for k in keys if k in graph.concepts or k in known]
        if not keys:
            user = UserRef(graph.tenant, graph.user_id)
            keys = [r["key"] for r in self.store.search_concepts(tenant, text, limit=3, user=user) if r["score"] > 0.5][
                :1
            ]
        return keys

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
        user = self.user(tenant, user_id)
        as_of = as_utc(as_of, "as_of") if as_of is not None else None
        scope = scope or self.settings.default_scope
        fmt = fmt or self.settings.default_format
        sc = parse_scope(scope)
        tag_name = resolve_tag(sc, tag)
        if fmt not in FORMATS:
            raise InvalidInput(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}", code="INVALID_FORMAT")
        budget = self.settings.default_max_tokens if max_tokens is None else max_tokens
        if budget < 1 or budget > 100_000:
            raise InvalidInput("max_tokens must be between 1 and 100000", code="INVALID_MAX_TOKENS")
        check_loop(prompt, tag_name)

        ranked = self.ranked(user) if as_of is None else self.ranked_as_of(user, as_of)
        graph, ranking, tiers = ranked.graph, ranked.ranking, ranked.tiers
        keys = self.focus_keys(tenant, focus, graph)
        missing = [k for k in keys if k not in graph.concepts]
        if missing:
            # The focus is new to this user: add it and its neighbourhood, keep the cached weights.
            extended = (
                self.store.load_user_graph(user, extra_keys=missing)
                if as_of is None
                else self.learner.graph_as_of(user, as_of, extra_keys=missing)
            )
            graph = replace(
                graph,
                concepts={**extended.concepts, **graph.concepts},
                edges=tuple(
                    sorted(
                        set(graph.edges) | set(extended.edges),
                        key=lambda e: (e.source, e.target, e.type.value, e.scope),
                    )
                ),
            )
            tiers = {**dict.fromkeys(extended.concepts, Tier.compacted), **tiers}
        not_specific = self._not_specific(
            tenant, graph, ranking, tiers, ranked.catalog_version, own_words_only=sc.value in self._own_words_scopes
        )
        demoted_keys = frozenset(k for k, why in not_specific.items() if why not in CENTRAL_ONLY)
        passing_keys = frozenset(k for k, why in not_specific.items() if why in CENTRAL_ONLY)
        block_key = (
            user.tenant,
            user.user_id,
            ranked.version,
            ranked.catalog_version,
            tuple(keys),
            sc,
            fmt,
            budget,
            evidence,
            tag_name,
            as_of,
            demoted_keys,
            passing_keys,
        )
        if not missing and as_of is None:
            with self._guard:
                hit = self._blocks.get(block_key)
            if hit is not None:
                return hit.model_copy(deep=True)
        names = self.display_names(tenant, ranked.catalog_version, graph.language)
        selection = select_context(
            graph, ranking, tiers, keys, sc, self.context_config, names, demoted_keys, passing_keys
        )
        rendered = render_block(
            selection, fmt=fmt, scope=sc, tag=tag_name, max_tokens=budget, counter=self.counter, evidence=evidence
        )
        result = self._result(selection, rendered, evidence)
        if not missing and as_of is None:
            with self._guard:
                self._blocks[block_key] = result
                while len(self._blocks) > 1024:
                    self._blocks.popitem(last=False)
        return result.model_copy(deep=True)

    def _not_specific(
        self,
        tenant: str,
        graph: UserGraph,
        ranking: Ranking,
        tiers: dict[str, Tier],
        catalog_version: int | None = None,
        own_words_only: bool = False,
    ) -> dict[str, str]:
        """Concepts of the user's heaviest candidates that are not specific to the user (specificity.py):
        the language and list checks once per ranked graph, the tenant's document frequency per request
        (cached counts)."""
        cfg, limit = self.specificity_config, self.settings.specificity_df_candidates
        cached = self._extractors.get(tenant)
        # The extractor of the catalog version just read with the user's version: no extra query.
        categories = (cached[1] if cached and cached[0] == catalog_version else self.extractor(tenant)).categories

        def judged() -> tuple[tuple[str, ...], dict[str, str]]:
            cands = sorted(graph.concepts, key=lambda k: (-ranking.weight(k), k))[:limit]
            return tuple(cands), demoted(graph.concepts, cands, cfg, categories, own_words_only=own_words_only)

        cands, out = ranking.derived(("specificity", limit, categories, own_words_only), judged, of=graph)
        rest = [k for k in cands if k not in out]
        users, df = self.doc_frequency.counts(tenant, rest) if rest else (0, {})
        if df:
            out = {
                **out,
                **demoted(graph.concepts, rest, cfg, categories, df, users, self.settings.specificity_df_catalog),
            }
        return out

    @staticmethod
    def _result(selection: ContextSelection, rendered: RenderedBlock, evidence: bool) -> ContextResult:
        kept = {name: set(keys) for name, keys in rendered.sections.items()}

        def names(section: str) -> list[str]:
            return [i.name for i in selection.section(section) if i.key in kept.get(section, set())]

        reasons = {
            i.name: i.marker
            for section, items in selection.sections.items()
            for i in items
            if i.marker and i.key in kept.get(section, set())
        }
        ev: dict[str, list[str]] = {}
        if evidence:
            for items in selection.sections.values():
                for item in items:
                    ev.setdefault(item.name, list(item.evidence))
        return ContextResult(
            block=rendered.block,
            tokens=rendered.tokens,
            format=rendered.format,
            scope=rendered.scope,
            tag=rendered.tag,
            core_topics=names("core_topics"),
            related_concepts=names("related_concepts"),
            knowledge_gaps=names("knowledge_gaps"),
            current_topic=names("current_topic"),
            avoid=names("avoid"),
            truncated=rendered.truncated,
            dropped=rendered.dropped,
            evidence=ev,
            reasons=reasons,
        )

    # -- graph, explain --------------------------------------------------------------

    def graph(self, tenant: str, user_id: str, as_of: datetime | None = None) -> dict[str, Any]:
        user = self.user(tenant, user_id)
        as_of = as_utc(as_of, "as_of") if as_of is not None else None
        ranked = self.ranked(user) if as_of is None else self.ranked_as_of(user, as_of)
        names = self.display_names(tenant, ranked.catalog_version, ranked.graph.language)
        nodes = []
        for key in sorted(ranked.graph.concepts):
            node = ranked.graph.concepts[key]
            rc = ranked.ranking.get(key)
            nodes.append(
                {
                    "key": key,
                    "name": names.get(key, node.name),
                    "canonical_name": node.name,
                    "type": node.type,
                    "in_catalog": node.in_catalog,
                    "user_mentions": node.user_mentions,
                    "assistant_mentions": node.assistant_mentions,
                    "stance": node.stance.value if node.stance else None,
                    "initial_weight": rc.initial if rc else 0.0,
                    "propagated_weight": rc.propagated if rc else 0.0,
                    "weight": rc.final if rc else 0.0,
                    "tier": ranked.tiers[key].value,
                    "stored_tier": node.tier.value if node.tier else None,
                    "sessions": list(node.sessions),
                    **mastery_view(node),
                }
            )
        edges = [
            {"source": e.source, "type": e.type.value, "target": e.target, "scope": e.scope, "confidence": e.confidence}
            for e in ranked.graph.edges
        ]
        return {
            "user_id": user_id,
            "version": ranked.version,
            "language": ranked.graph.language,
            "ranker": ranked.ranking.method,
            "threshold": self.settings.threshold,
            "nodes": nodes,
            "edges": edges,
            "summary": self.store.summary(user),
            "as_of": as_of.isoformat() if as_of else None,
        }

    def resolve_concept(self, tenant: str, graph: UserGraph, concept: str) -> str:
        """A concept named by key, name or alias → its key in the user's graph."""
        text = clean_text(concept).strip()
        if not text:
            raise InvalidInput("concept must be a non-empty string", code="INVALID_CONCEPT")
        if text in graph.concepts:
            return text
        key = concept_key(text)
        if key in graph.concepts:
            return key
        for k, node in graph.concepts.items():
            if concept_key(node.name) == key:
                return k
        for m in self.extractor(tenant).extract([text], ["user"])[0].concepts:
            if m.key in graph.concepts:
                return m.key
        raise NotFound(f"concept {concept!r} is not in this user's graph", code="CONCEPT_NOT_FOUND")

    def explain(self, tenant: str, user_id: str, concept: str, as_of: datetime | None = None) -> dict[str, Any]:
        user = self.user(tenant, user_id)
        as_of = as_utc(as_of, "as_of") if as_of is not None else None
        ranked = self.ranked(user) if as_of is None else self.ranked_as_of(user, as_of)
        key = self.resolve_concept(tenant, ranked.graph, concept)
        names = self.display_names(tenant, ranked.catalog_version, ranked.graph.language)
        exp = explain_concept(ranked.graph, ranked.ranking, ranked.tiers, key, names=names)
        stored_tier = ranked.graph.concepts[key].tier
        return {
            "key": exp.key,
            "name": exp.name,
            "canonical_name": exp.canonical_name,
            "type": exp.type,
            "in_catalog": exp.in_catalog,
            "critical": exp.critical,
            "tier": exp.tier.value if exp.tier else None,
            "stored_tier": stored_tier.value if stored_tier else None,
            "compacted": exp.compacted,
            "compacted_at": exp.compacted_at.isoformat() if exp.compacted_at else None,
            "stance": exp.stance.value if exp.stance else None,
            "ranker": exp.ranker,
            "rank": exp.rank,
            "weights": {
                "initial": exp.initial,
                "propagated": exp.propagated,
                "final": exp.final,
                "threshold": self.settings.threshold,
            },
            "propagation": [
                {
                    "from": c.neighbour,
                    "from_name": localized(ranked.graph, names, c.neighbour),
                    "relation": c.relation.value,
                    "direction": c.direction,
                    "amount": c.amount,
                }
                for c in exp.contributions
            ],
            "mentions": {
                "user": exp.user_mentions,
                "assistant": exp.assistant_mentions,
                "sessions": list(exp.sessions),
                "first_seen": exp.first_seen.isoformat() if exp.first_seen else None,
                "last_seen": exp.last_seen.isoformat() if exp.last_seen else None,
                "spans": self.store.concept_mentions(user, key),
            },
            # Each stance with the turn (or graded attempt) that opened and closed it; mastery with its attempts.
            **stance_timeline(
                ranked.graph.concepts[key],
                self.store.concept_stances(user, key),
                self.store.concept_attempts(user, key),
                as_of,
            ),
            "relations": self.store.concept_relations(user, key),
        }

    # -- compaction ----------------------------------------------------------------------

    def compact(self, tenant: str, user_id: str, critical_keys: Sequence[str] = ()) -> dict[str, Any]:
        user = self.user(tenant, user_id)
        with self._user_lock(user):
            version, catalog_version = self.store.user_version(user)
            if version is None:
                raise NotFound(f"user {user_id!r} has no memory in this tenant", code="USER_NOT_FOUND")
            cached = self._ranked.get((user.tenant, user.user_id))
            if cached and cached.version == version and cached.catalog_version == catalog_version:
                # This version is already loaded and ranked in memory (ranking is a pure function of
                # the graph): reloading it cost ~2 s of a 10,000-concept user's ~4 s compaction.
                graph, ranking = cached.graph, cached.ranking
            else:
                graph = self.store.load_user_graph(user)
                ranking = rank(graph, self.ranking_config)
            return self._compact_graph(user, graph, ranking, trigger="request", critical_keys=critical_keys)

    def _compact_graph(
        self, user: UserRef, graph: UserGraph, ranking: Ranking, *, trigger: str, critical_keys: Sequence[str] = ()
    ) -> dict[str, Any]:
        # Planning a 10,000-concept user allocates ~50,000 short-lived objects; with the cached graphs
        # on the heap that set off a full cyclic collection in every other run (~170 ms of a ~150 ms
        # compaction). The collection is deferred to after the run, not skipped.
        with _gc_deferred():
            return self._compact_graph_inner(user, graph, ranking, trigger=trigger, critical_keys=critical_keys)

    def _compact_graph_inner(
        self, user: UserRef, graph: UserGraph, ranking: Ranking, *, trigger: str, critical_keys: Sequence[str] = ()
    ) -> dict[str, Any]:
        plan: CompactionPlan = plan_compaction(
            graph, ranking, self.compaction_config, critical_keys=critical_keys, counter=self.counter
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
        version = self.store.write_weights(user, rows, CompactionRecord(run, folded, folded_names, replace=False))
        catalog_version = self._catalog_version_after_write(user, graph)
        # The cached graph carries what was just stored, as a reload would (only changed nodes are copied).
        written = {r.key: r.final for r in rows}
        concepts = dict(graph.concepts)
        for k, n in concepts.items():
            tier = plan.tiers.get(k, n.tier)
            if k in written or tier is not n.tier:
                concepts[k] = replace(n, tier=tier, weight=written.get(k, n.weight))
        graph = replace(graph, concepts=concepts)
        self._remember(user, RankedUser(version, catalog_version, graph, ranking, dict(plan.tiers)))
        return {
            **run,
            "related_to_core_topics": [c.to_dict() for c in plan.related_to_core_topics],
            "core": [graph.concepts[k].name for k in plan.core],
            "related": [graph.concepts[k].name for k in plan.related],
            "restored": [graph.concepts[k].name for k in plan.restored],
        }

    def compaction_runs(self, tenant: str, user_id: str) -> list[dict[str, Any]]:
        return self.store.compaction_runs(self.user(tenant, user_id))

    # -- forgetting -----------------------------------------------------------------------

    def forget(self, tenant: str, user_id: str, concept: str) -> dict[str, Any]:
        user = self.user(tenant, user_id)
        with self._user_lock(user):
            ranked = self.ranked(user)
            key = self.resolve_concept(tenant, ranked.graph, concept)
            removed = self.store.forget_concept(user, key, names=[ranked.graph.concepts[key].name])
            self._rerank_after_write(user)
        return {"concept": key, "removed": removed}

    def erase(self, tenant: str, user_id: str) -> dict[str, Any]:
        user = self.user(tenant, user_id)
        with self._user_lock(user):
            if self.store.user_version(user)[0] is None:
                raise NotFound(f"user {user_id!r} has no memory in this tenant", code="USER_NOT_FOUND")
            removed = self.store.erase_user(user)
            with self._guard:
                self._ranked.pop((tenant, user_id), None)
        return {"user_id": user_id, "removed": removed}

    def export(self, tenant: str, user_id: str) -> dict[str, Any]:
        user = self.user(tenant, user_id)
        graph = self.graph(tenant, user_id)
        return {
            "tenant": tenant,
            "user_id": user_id,
            "turns": self.store.turns(user),
            "graph": graph,
            "compaction_runs": self.store.compaction_runs(user, limit=1000),
            "attempts": self.store.user_attempts(user),
        }

    def ready(self) -> dict[str, Any]:
        reachable = self.store.ping()
        return {
            "neo4j": reachable,
            "schema": self.schema_applied,
            "models": self.models_loaded,
            "ready": reachable and self.schema_applied and self.models_loaded,
        }


_gc_lock = threading.Lock()
_gc_depth = 0


@contextmanager
def _gc_deferred() -> Iterator[None]:
    """Pauses the cyclic garbage collector for a bounded burst of allocations (nesting- and thread-safe:
    it is re-enabled when the last holder leaves, and only if it was enabled to begin with)."""
    global _gc_depth
    with _gc_lock:
        if _gc_depth == 0:
            _gc_deferred.was_enabled = gc.isenabled()  # type: ignore[attr-defined]
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_deferred.was_enabled:  # type: ignore[attr-defined]
                gc.enable()


# How many folded names the related_to_core_topics summary keeps (heaviest first); its count is exact.
SUMMARY_ITEMS = 200


def _row_changed(node: Any, final: float, tier: Tier | None) -> bool:
    """A weight row must be written: its tier changes, or its weight moved by more than 1 %."""
    if node.weight is None or abs(final - node.weight) > 0.01 * max(1.0, abs(node.weight)):
        return True
    return tier is not None and tier is not node.tier


def stance_names() -> list[str]:
    return [s.value for s in Stance]


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, default=str)
