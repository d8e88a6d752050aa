"""Reading a user's memory: the context block, the graph, an explanation, an export.

Every read works on a :class:`graphmem.ranked_cache.RankedGraph` (cached per graph version, or ranked
as of a past moment); rendered blocks are cached too, keyed by everything they depend on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any, ParamSpec, TypeVar

from ..context import parse_scope, resolve_tag, select_context
from ..errors import InvalidInput, NotFound
from ..explain import explain_concept
from ..extraction.normalize import concept_key
from ..learner import as_utc, stance_timeline
from ..models import ContextResult, Tier, UserGraph, clean_text
from ..ranked_cache import LRU, RankedGraph
from ..render import BudgetTooSmall, check_loop, render_block, truncated_frame_tokens
from ..specificity import CENTRAL_ONLY, demoted
from ..store import UserRef
from ..vocabulary import Format, Scope
from . import views
from .core import Core

_FORMATS = frozenset(Format)
P = ParamSpec("P")
R = TypeVar("R")


def _answers(method: Callable[P, R]) -> Callable[P, R]:
    """A read of a user's graph: when it is done (answered or failed), a background re-rank that handed it the
    graph may write its weights back (BackgroundReranker.answered)."""

    @functools.wraps(method)
    def read(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        finally:
            service = args[0]
            assert isinstance(service, ReadService)
            if service.core.background is not None:
                service.core.background.answered()

    return read


def _as_of(as_of: datetime | None) -> datetime | None:
    return as_utc(as_of, "as_of") if as_of is not None else None


class ReadService:
    def __init__(self, core: Core) -> None:
        self.core = core
        # Rendered blocks keyed by everything they depend on, graph version included (so a write
        # invalidates them): selection (gaps over the whole graph) cost ~40 ms per request at 8,600 concepts.
        self._blocks: LRU[tuple[Any, ...], ContextResult] = LRU(1024)

    # -- context -----------------------------------------------------------------------

    def focus_keys(self, tenant: str, focus: str | None, graph: UserGraph) -> list[str]:
        """Concepts the focus text is about: extracted with the same pipeline, else full-text search."""
        if not focus or not focus.strip():
            return []
        store = self.core.store
        text = clean_text(focus)[: self.core.settings.max_text_chars]
        ex = self.core.extractor(tenant).extract([text], ["user"])[0]
        keys = list(dict.fromkeys(m.key for m in ex.concepts))
        # Only the user's own concepts and the catalog's: other users' concepts must not show here.
        outside = [k for k in keys if k not in graph.concepts]
        known = set(store.existing_concepts(tenant, outside, catalog_only=True)) if outside else set()
        keys = [k for k in keys if k in graph.concepts or k in known]
        if not keys:
            user = UserRef(graph.tenant, graph.user_id)
            found = store.search_concepts(tenant, text, limit=3, user=user)
            keys = [r["key"] for r in found if r["score"] > 0.5][:1]
        return keys

    def checked(
        self,
        *,
        scope: str | None = None,
        max_tokens: int | None = None,
        fmt: str | None = None,
        prompt: str | None = None,
        tag: str | None = None,
        write_follows: bool = False,
    ) -> tuple[Scope, str, str, int]:
        """The request's scope, tag, format and budget, checked (4xx) before anything is read. With
        ``write_follows`` (an ingest that returns its block checks before its write, so a refusal stores
        nothing) a budget some selection could not fit is refused too (``truncated_frame_tokens``)."""
        settings = self.core.settings
        sc = parse_scope(scope or settings.default_scope)
        tag_name = resolve_tag(sc, tag)
        fmt = fmt or settings.default_format
        if fmt not in _FORMATS:
            raise InvalidInput(f"unknown format {fmt!r}; expected one of {', '.join(Format)}", code="INVALID_FORMAT")
        budget = settings.default_max_tokens if max_tokens is None else max_tokens
        if budget < 1 or budget > 100_000:
            raise InvalidInput("max_tokens must be between 1 and 100000", code="INVALID_MAX_TOKENS")
        check_loop(prompt, tag_name)
        if write_follows:
            minimum = truncated_frame_tokens(fmt, sc, tag_name, self.core.counter)
            if budget < minimum:
                raise BudgetTooSmall(
                    minimum,
                    f"max_tokens={budget} is too small for a {fmt} block with the tag {tag_name!r} returned "
                    f"with an ingest: it needs at least {minimum} tokens (the frame and the truncation marker)",
                )
        return sc, tag_name, fmt, budget

    @_answers
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
        core = self.core
        user = core.user(tenant, user_id)
        as_of = _as_of(as_of)
        sc, tag_name, fmt, budget = self.checked(scope=scope, max_tokens=max_tokens, fmt=fmt, prompt=prompt, tag=tag)

        ranked = core.ranked_at(user, as_of)
        graph, tiers = ranked.graph, ranked.tiers
        keys = self.focus_keys(tenant, focus, graph)
        missing = [k for k in keys if k not in graph.concepts]
        if missing:
            # The focus is new to this user: add it and its neighbourhood, keep the cached weights.
            graph, tiers = self._with_focus(user, graph, tiers, missing, as_of)
        not_specific = self._not_specific(
            tenant, ranked, graph, tiers, own_words_only=sc.value in core.own_words_scopes
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
        cacheable = not missing and as_of is None
        hit = self._blocks.get(block_key) if cacheable else None
        if hit is not None:
            return hit.model_copy(deep=True)
        names = core.display_names(tenant, ranked.catalog_version, graph.language)
        selection = select_context(
            graph,
            ranked.ranking,
            tiers,
            keys,
            sc,
            core.context_config,
            names,
            demoted_keys,
            passing_keys,
            memo=ranked.memo,
        )
        rendered = render_block(
            selection, fmt=fmt, scope=sc, tag=tag_name, max_tokens=budget, counter=core.counter, evidence=evidence
        )
        result = views.context_result(selection, rendered, evidence)
        if cacheable:
            self._blocks.put(block_key, result)
        return result.model_copy(deep=True)

    def _with_focus(
        self, user: UserRef, graph: UserGraph, tiers: dict[str, Tier], missing: list[str], as_of: datetime | None
    ) -> tuple[UserGraph, dict[str, Tier]]:
        """The graph with focus concepts new to the user and their neighbourhood (tier compacted)."""
        extended = (
            self.core.store.load_user_graph(user, extra_keys=missing)
            if as_of is None
            else self.core.learner.graph_as_of(user, as_of, extra_keys=missing)
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
        return graph, {**dict.fromkeys(extended.concepts, Tier.compacted), **tiers}

    def _not_specific(
        self, tenant: str, ranked: RankedGraph, graph: UserGraph, tiers: dict[str, Tier], own_words_only: bool = False
    ) -> dict[str, str]:
        """Concepts of the user's heaviest candidates that are not specific to the user (specificity.py):
        the language and list checks once per ranked graph, the tenant's document frequency per request
        (cached counts)."""
        core, ranking = self.core, ranked.ranking
        cfg, limit = core.specificity_config, core.settings.specificity_df_candidates
        # The extractor of the catalog version just read with the user's version: no extra query.
        categories = core.extractor_at(tenant, ranked.catalog_version).categories

        def judged() -> tuple[tuple[str, ...], dict[str, str]]:
            cands = sorted(graph.concepts, key=lambda k: (-ranking.weight(k), k))[:limit]
            return tuple(cands), demoted(graph.concepts, cands, cfg, categories, own_words_only=own_words_only)

        cands, out = ranked.memo.get(("specificity", limit, categories, own_words_only), judged, of=graph)
        rest = [k for k in cands if k not in out]
        users, df = core.doc_frequency.counts(tenant, rest) if rest else (0, {})
        if df:
            out = {
                **out,
                **demoted(graph.concepts, rest, cfg, categories, df, users, core.settings.specificity_df_catalog),
            }
        return out

    # -- graph, explain, export ---------------------------------------------------------

    @_answers
    def graph(self, tenant: str, user_id: str, as_of: datetime | None = None) -> dict[str, Any]:
        core = self.core
        user = core.user(tenant, user_id)
        as_of = _as_of(as_of)
        ranked = core.ranked_at(user, as_of)
        names = core.display_names(tenant, ranked.catalog_version, ranked.graph.language)
        return {
            "user_id": user_id,
            "version": ranked.version,
            "language": ranked.graph.language,
            "ranker": ranked.ranking.method,
            "threshold": core.settings.threshold,
            "nodes": views.graph_nodes(ranked, names),
            "edges": views.graph_edges(ranked.graph),
            "summary": core.store.summary(user),
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
        for m in self.core.extractor(tenant).extract([text], ["user"])[0].concepts:
            if m.key in graph.concepts:
                return m.key
        raise NotFound(f"concept {concept!r} is not in this user's graph", code="CONCEPT_NOT_FOUND")

    @_answers
    def explain(self, tenant: str, user_id: str, concept: str, as_of: datetime | None = None) -> dict[str, Any]:
        core, store = self.core, self.core.store
        user = core.user(tenant, user_id)
        as_of = _as_of(as_of)
        ranked = core.ranked_at(user, as_of)
        key = self.resolve_concept(tenant, ranked.graph, concept)
        names = core.display_names(tenant, ranked.catalog_version, ranked.graph.language)
        exp = explain_concept(ranked.graph, ranked.ranking, ranked.tiers, key, names=names)
        return {
            **views.explanation(exp, ranked, names, core.settings.threshold, store.concept_mentions(user, key)),
            # Each stance with the turn (or graded attempt) that opened and closed it; mastery with its attempts.
            **stance_timeline(
                ranked.graph.concepts[key],
                store.concept_stances(user, key),
                store.concept_attempts(user, key),
                as_of,
            ),
            "relations": store.concept_relations(user, key),
        }

    def export(self, tenant: str, user_id: str) -> dict[str, Any]:
        store = self.core.store
        user = self.core.user(tenant, user_id)
        graph = self.graph(tenant, user_id)
        return {
            "tenant": tenant,
            "user_id": user_id,
            "turns": store.turns(user),
            "graph": graph,
            "compaction_runs": store.compaction_runs(user, limit=1000),
            "attempts": store.user_attempts(user),
        }
