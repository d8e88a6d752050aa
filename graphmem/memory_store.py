"""A pure-Python graph store with the semantics the services observe (graphmem/graph_store.py).

For fast tests of the services without Neo4j (caching, re-rank after ingest, cache invalidation on a
catalog change, races, as_of). It follows the named statements in cypher/*.cypher: versions bump on
every write, re-sent turn ids are duplicates and a re-sent id with other content is TURN_ID_CONFLICT,
interests are recomputed from the stored mentions (per turn) and stances (latest wins), compaction runs
and the related_to_core_topics summary, forgetting and erasure, the tenant's catalog. One lock makes
every call one transaction. Not covered: graded attempts and knowledge-tracing fits (they raise or
return nothing), and full-text search is a word match, not Lucene's scoring.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from .attempt_plan import AttemptPlan, NewAttempt
from .bkt import BKTParams
from .errors import InvalidInput
from .extraction.normalize import concept_key
from .gaps import catalog_dependency_map
from .models import NEO4J_REL_TYPES, ConceptMention, ConceptNode, PriorTurn, UserGraph, utc_now
from .names import dominant_language
from .settings import Settings
from .store import (
    CatalogRows,
    CompactionRecord,
    IngestReads,
    IngestWrite,
    PendingTurn,
    StoredTurn,
    UserRef,
    WeightRow,
    _activity_clock,
    _apply_mastery,
    _check_conflicts,
    _interest_node,
)
from .subgraph import adjacency, kept_edges, missing_endpoints, seed_keys, walk
from .zh_name_likeness import mention_marks

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# (relationship type as stored, source key, target key): one relation per owner and pair.
RelKey = tuple[str, str, str]


def _us(ts: datetime | None) -> int | None:
    return None if ts is None else (ts - _EPOCH) // timedelta(microseconds=1)


def _ms(ts: datetime) -> int:
    return (ts - _EPOCH) // timedelta(milliseconds=1)


@dataclass
class _Concept:
    key: str
    name: str
    type: str | None
    language: str | None
    in_catalog: bool = False
    critical: bool = False
    aliases: tuple[str, ...] = ()


@dataclass
class _Interest:
    key: str
    own_name: str | None
    tier: str = "related"
    weight: float | None = 0.0
    compacted_at: datetime | None = None
    row: dict[str, Any] = field(default_factory=dict)  # the counts, as ingest_write_all sets them


@dataclass
class _User:
    version: int = 0
    turns: dict[str, dict[str, Any]] = field(default_factory=dict)
    mentions: list[dict[str, Any]] = field(default_factory=list)
    stances: list[dict[str, Any]] = field(default_factory=list)
    relations: dict[RelKey, dict[str, Any]] = field(default_factory=dict)
    interests: dict[str, _Interest] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    folds: set[str] = field(default_factory=set)
    seq: int = 0


@dataclass
class _Tenant:
    catalog_json: str | None = None
    catalog_version: int = 0
    concepts: dict[str, _Concept] = field(default_factory=dict)
    catalog_relations: set[RelKey] = field(default_factory=set)
    users: dict[str, _User] = field(default_factory=dict)


class InMemoryStore:
    """All tenants in dicts; every method holds one lock (a transaction)."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._tenants: dict[str, _Tenant] = {}
        self._lock = threading.RLock()

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        pass

    def ping(self) -> bool:
        return True

    def apply_schema(self) -> list[str]:
        return []

    def _tenant(self, tenant: str) -> _Tenant:
        return self._tenants.setdefault(tenant, _Tenant())

    def _user(self, user: UserRef) -> _User | None:
        t = self._tenants.get(user.tenant)
        return t.users.get(user.user_id) if t else None

    # -- catalog --------------------------------------------------------------------------------

    def replace_catalog(self, tenant: str, rows: CatalogRows) -> int:
        with self._lock:
            t = self._tenant(tenant)
            t.catalog_json = rows.catalog_json
            t.catalog_version += 1
            t.catalog_relations.clear()
            for c in t.concepts.values():
                c.in_catalog = c.critical = False
            for row in rows.concepts:
                t.concepts[row["key"]] = _Concept(
                    row["key"],
                    row["name"],
                    row["type"],
                    row["language"],
                    True,
                    bool(row["critical"]),
                    tuple(row["aliases"]),
                )
            for rel_type, pairs in rows.relations.items():
                for p in pairs:
                    if p["source_key"] in t.concepts and p["target_key"] in t.concepts:
                        t.catalog_relations.add((NEO4J_REL_TYPES[rel_type], p["source_key"], p["target_key"]))
            self._delete_orphans(t, list(t.concepts))
            return t.catalog_version

    def get_catalog(self, tenant: str) -> tuple[dict[str, Any] | None, int]:
        with self._lock:
            t = self._tenants.get(tenant)
            if t is None or not t.catalog_json:
                return None, t.catalog_version if t else 0
            return json.loads(t.catalog_json), t.catalog_version

    def catalog_version(self, tenant: str) -> int:
        with self._lock:
            t = self._tenants.get(tenant)
            return t.catalog_version if t else 0

    # -- ingest ---------------------------------------------------------------------------------

    def existing_turn_ids(
        self, user: UserRef, turn_ids: Sequence[str], expected: dict[str, tuple[str, str, str]] | None = None
    ) -> set[str]:
        with self._lock:
            u = self._user(user)
            rows = [u.turns[i] for i in dict.fromkeys(turn_ids) if u and i in u.turns]
            if expected is not None:
                _check_conflicts(rows, expected)
            return {r["turn_id"] for r in rows}

    def ingest_reads(self, user: UserRef, session_id: str, turns: Sequence[PendingTurn]) -> IngestReads:
        with self._lock:  # one snapshot, as Neo4jStore's one read transaction
            known = self.existing_turn_ids(
                user, [t.turn_id for t in turns], {t.turn_id: (session_id, t.role, t.text) for t in turns}
            )
            head = next((t for t in turns if t.turn_id not in known), None)
            prior = self.prior_turn(user, session_id, head.ts) if head is not None and head.role == "user" else None
            return IngestReads(known, self.catalog_version(user.tenant), prior)

    def prior_turn(self, user: UserRef, session_id: str, before: datetime) -> PriorTurn | None:
        with self._lock:
            u = self._user(user)
            earlier = [t for t in (u.turns.values() if u else ()) if t["session_id"] == session_id and t["ts"] < before]
            if not u or not earlier:
                return None
            last = max(earlier, key=lambda t: (t["ts"], t["turn_id"]))
            concepts = self._tenants[user.tenant].concepts
            mentions = tuple(
                ConceptMention(
                    key=m["key"],
                    name=concepts[m["key"]].name,
                    type=concepts[m["key"]].type,
                    language=last["language"] or "en",
                    start=m["start"],
                    end=m["end"],
                    surface=m["surface"] or "",
                    extractor=m["extractor"],
                    confidence=m["confidence"],
                    in_catalog=concepts[m["key"]].in_catalog,
                )
                for m in u.mentions
                if m["turn_id"] == last["turn_id"]
            )
            return PriorTurn(last["role"], mentions)

    def write_ingest(self, user: UserRef, session_id: str, turns: Sequence[StoredTurn]) -> IngestWrite:
        with self._lock:
            t = self._tenant(user.tenant)
            u = t.users.setdefault(user.user_id, _User())
            version = u.version
            stored = [u.turns[x.turn_id] for x in turns if x.turn_id in u.turns]
            _check_conflicts(stored, {x.turn_id: (session_id, x.role, x.text) for x in turns})
            new: list[StoredTurn] = []
            duplicates: list[str] = []
            for x in turns:
                if x.turn_id in u.turns or any(n.turn_id == x.turn_id for n in new):
                    duplicates.append(x.turn_id)
                else:
                    new.append(x)
            if not new:
                return IngestWrite([], duplicates, version, catalog_version=t.catalog_version)
            u.version += 1
            names: dict[str, str] = {}
            for x in new:
                u.turns[x.turn_id] = {
                    "turn_id": x.turn_id,
                    "session_id": session_id,
                    "role": x.role,
                    "text": x.text,
                    "ts": x.ts,
                    "language": x.language,
                    "tokens": x.tokens,
                }
                ex = x.extraction
                for m in ex.concepts:
                    names.setdefault(m.key, m.name)
                    self._merge_concept(t, m.key, m.name, m.type, m.language)
                    u.mentions.append(
                        {
                            "turn_id": x.turn_id,
                            "key": m.key,
                            "start": m.start,
                            "end": m.end,
                            "surface": m.surface,
                            "extractor": m.extractor.value,
                            "confidence": m.confidence,
                            "role": x.role,
                            "ts": x.ts,
                            "session_id": session_id,
                            "marks": mention_marks(x.text, m.start, m.end, m.surface, m.language, x.role),
                        }
                    )
                for s in ex.stances:
                    names.setdefault(s.key, s.name)
                    self._merge_concept(t, s.key, s.name, None, ex.language)
                    u.seq += 1
                    u.stances.append(
                        {
                            "turn_id": x.turn_id,
                            "key": s.key,
                            "stance": s.stance.value,
                            "start": s.start,
                            "end": s.end,
                            "cue": s.cue,
                            "confidence": s.confidence,
                            "ts": x.ts,
                            "seq": u.seq,
                        }
                    )
                for r in ex.relations:
                    for key, name in ((r.source_key, r.source_name), (r.target_key, r.target_name)):
                        names.setdefault(key, name)
                        self._merge_concept(t, key, name, None, ex.language)
                    rel = u.relations.setdefault(
                        (NEO4J_REL_TYPES[r.type], r.source_key, r.target_key),
                        {"turn_ids": [], "extractors": [], "cues": [], "confidence": 0.0},
                    )
                    rel["turn_ids"].append(x.turn_id)
                    for k, v in (("extractors", r.extractor.value), ("cues", r.cue)):
                        if v not in rel[k]:
                            rel[k].append(v)
                    rel["confidence"] = max(rel["confidence"], r.confidence)
            refreshed = [self._refresh_interest(t, u, k, names[k]) for k in sorted(names)]
            return IngestWrite([x.turn_id for x in new], duplicates, version, tuple(refreshed), t.catalog_version)

    @staticmethod
    def _merge_concept(t: _Tenant, key: str, name: str, type_: str | None, language: str | None) -> None:
        # A concept first seen in conversation; a catalog concept keeps its catalog data.
        t.concepts.setdefault(key, _Concept(key, name, type_, language))

    def _refresh_interest(self, t: _Tenant, u: _User, key: str, name: str | None) -> dict[str, Any]:
        """The user's interest in one concept recomputed from the stored mentions (ingest_write_all)."""
        i = u.interests.get(key)
        if i is None:
            i = u.interests[key] = _Interest(key, name)
        elif i.own_name is None:
            i.own_name = name
        per_turn: dict[str, dict[str, Any]] = {}
        for m in u.mentions:
            if m["key"] == key:
                seen = per_turn.setdefault(m["turn_id"], {"ts": m["ts"], "role": m["role"], "turn_id": m["turn_id"]})
                seen["ts"] = min(seen["ts"], m["ts"])
        turns = sorted(per_turn.values(), key=lambda r: (r["ts"], r["turn_id"]))
        stances = sorted((s for s in u.stances if s["key"] == key), key=lambda s: (s["ts"], s["seq"]))
        i.row = {
            "user_mentions": sum(1 for r in turns if r["role"] == "user"),
            "assistant_mentions": sum(1 for r in turns if r["role"] == "assistant"),
            "first_seen": turns[0]["ts"] if turns else None,
            "last_seen": turns[-1]["ts"] if turns else None,
            "mention_ts": [_ms(r["ts"]) / 1000.0 for r in turns],
            "mention_roles": [r["role"] for r in turns],
            "sessions": list(dict.fromkeys(u.turns[r["turn_id"]]["session_id"] for r in turns)),
            "evidence": [r["turn_id"] for r in turns][-20:],
            "context_marks": list(dict.fromkeys(x for m in u.mentions if m["key"] == key for x in m.get("marks", ()))),
            "stance": stances[-1]["stance"] if stances else None,
        }
        return self._interest_row(t, i)

    @staticmethod
    def _shown_name(c: _Concept, i: _Interest | None) -> str:
        return c.name if c.in_catalog or i is None or i.own_name is None else i.own_name

    def _interest_row(self, t: _Tenant, i: _Interest) -> dict[str, Any]:
        """An interest shaped as user_interests returns it."""
        c = t.concepts[i.key]
        row = i.row
        return {
            "key": i.key,
            "name": self._shown_name(c, i),
            "type": c.type,
            "in_catalog": c.in_catalog,
            "critical": c.critical,
            "user_mentions": row.get("user_mentions", 0),
            "assistant_mentions": row.get("assistant_mentions", 0),
            "stance": row.get("stance"),
            "first_seen_us": _us(row.get("first_seen")),
            "last_seen_us": _us(row.get("last_seen")),
            "sessions": list(row.get("sessions", [])),
            "tier": i.tier,
            "compacted_at_us": _us(i.compacted_at),
            "evidence": list(row.get("evidence", [])),
            "mention_ts": list(row.get("mention_ts", [])),
            "mention_roles": list(row.get("mention_roles", [])),
            "context_marks": list(row.get("context_marks", [])),
            "weight": i.weight,
        }

    # -- a user's graph ---------------------------------------------------------------------------

    def user_version(self, user: UserRef) -> tuple[int | None, int]:
        with self._lock:
            u = self._user(user)
            return (u.version if u else None, self.catalog_version(user.tenant))

    def load_user_graph(
        self,
        user: UserRef,
        extra_keys: Iterable[str] = (),
        depth: int | None = None,
        now: datetime | None = None,
        base: UserGraph | None = None,
        refreshed: Sequence[dict[str, Any]] = (),
        catalog_version: int | None = None,  # Neo4jStore skips a round trip with it; nothing to skip here
    ) -> UserGraph:
        depth = self.settings.subgraph_depth if depth is None else depth
        extra = [k for k in extra_keys if k]
        with self._lock:
            t = self._tenant(user.tenant)
            u = t.users.get(user.user_id) or _User()
            concepts: dict[str, ConceptNode] = dict(base.concepts) if base is not None else {}
            rows = refreshed if base is not None else [self._interest_row(t, i) for i in u.interests.values()]
            for r in rows:
                concepts[r["key"]] = _interest_node(r)
            attempted = _apply_mastery(concepts, ())  # graded attempts are not kept here
            catalog_adj = adjacency(self._relation_rows(t.catalog_relations, "catalog"))
            own_adj = adjacency(self._relation_rows(u.relations, "user", u.relations))
            edges = walk(seed_keys(concepts, extra, attempted), (catalog_adj, own_adj), depth)
            for k in sorted(missing_endpoints(edges, extra, concepts)):
                c = t.concepts.get(k)
                i = u.interests.get(k)
                if c is not None and (c.in_catalog or i is not None):
                    concepts[k] = ConceptNode(
                        key=k, name=self._shown_name(c, i), type=c.type, in_catalog=c.in_catalog, critical=c.critical
                    )
            kept = kept_edges(edges, concepts)
            turns = list(u.turns.values())
            languages: dict[str, int] = {}
            for x in turns:
                if x["role"] == "user":
                    languages[x["language"]] = languages.get(x["language"], 0) + 1
            catalog_edges = (e for items in catalog_adj.values() for _, e in items)
            return UserGraph(
                tenant=user.tenant,
                user_id=user.user_id,
                concepts={k: concepts[k] for k in sorted(concepts)},
                edges=kept,
                now=now or _activity_clock(max((_ms(x["ts"]) for x in turns), default=None)),
                history_tokens=sum(int(x["tokens"]) for x in turns),
                turn_count=len(turns),
                catalog_deps=catalog_dependency_map(catalog_edges),
                language=dominant_language([[lang, n] for lang, n in languages.items()]),
            )

    def load_current_graph(self, user: UserRef, depth: int | None = None) -> tuple[int, int, UserGraph] | None:
        with self._lock:
            version, catalog_version = self.user_version(user)
            if version is None:
                return None
            return version, catalog_version, self.load_user_graph(user, depth=depth)

    @staticmethod
    def _relation_rows(
        keys: Iterable[RelKey], scope: str, props: dict[RelKey, dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        return [
            {
                "source": s,
                "type": rel,
                "target": o,
                "scope": scope,
                "confidence": props[(rel, s, o)]["confidence"] if props else 1.0,
            }
            for rel, s, o in sorted(keys)
        ]

    # -- weights, compaction --------------------------------------------------------------------------

    def write_weights(
        self, user: UserRef, rows: Sequence[WeightRow], compaction: CompactionRecord | None = None
    ) -> int:
        with self._lock:
            t = self._tenant(user.tenant)
            u = t.users.get(user.user_id)
            if u is None:
                raise InvalidInput(f"user {user.user_id!r} does not exist", code="USER_NOT_FOUND", status=404)
            u.version += 1
            restored = 0
            for r in rows:
                if r.key not in t.concepts:
                    continue
                i = u.interests.setdefault(r.key, _Interest(r.key, None))
                tier = r.tier.value if r.tier else i.tier or "related"
                was_compacted = i.tier == "compacted"
                i.weight = float(r.final)
                i.compacted_at = (i.compacted_at or utc_now()) if tier == "compacted" else None
                i.tier = tier
                if was_compacted and tier != "compacted":
                    restored += 1
                    u.folds.discard(r.key)
            if compaction is not None:
                run = {**compaction.run, "at": datetime.fromisoformat(compaction.run["at"])}
                u.runs.append({**run, "tenant": user.tenant, "user_id": user.user_id})
                if compaction.replace:
                    u.folds.clear()
                u.folds.update(k for k in compaction.folded_keys if k in u.interests)
                u.summary = {"items": list(compaction.folded_names), "last_run": run["id"], "updated_at": utc_now()}
            if u.summary is not None:
                u.summary["count"] = len(u.folds)
            return u.version

    def compaction_runs(self, user: UserRef, limit: int = 20) -> list[dict[str, Any]]:
        with self._lock:
            u = self._user(user)
            runs = sorted(u.runs if u else [], key=lambda r: r["at"], reverse=True)[:limit]
            return [{**r, "at": r["at"].isoformat()} for r in runs]

    def summary(self, user: UserRef) -> dict[str, Any] | None:
        with self._lock:
            u = self._user(user)
            if u is None or u.summary is None:
                return None
            s = u.summary
            return {
                "count": s["count"],
                "items": s["items"],
                "last_run": s["last_run"],
                "updated_at": s["updated_at"].isoformat(),
            }

    # -- provenance and search ------------------------------------------------------------------------

    def concept_mentions(self, user: UserRef, key: str) -> list[dict[str, Any]]:
        with self._lock:
            u = self._user(user) or _User()
            rows = sorted((m for m in u.mentions if m["key"] == key), key=lambda m: (m["ts"], m["turn_id"], m["start"]))
            return [
                {
                    "turn_id": m["turn_id"],
                    "session_id": m["session_id"],
                    "role": m["role"],
                    "start": m["start"],
                    "end": m["end"],
                    "surface": m["surface"],
                    "extractor": m["extractor"],
                    "confidence": m["confidence"],
                    "ts": m["ts"].isoformat(),
                }
                for m in rows
            ]

    def concept_stances(self, user: UserRef, key: str) -> list[dict[str, Any]]:
        with self._lock:
            u = self._user(user) or _User()
            rows = sorted((s for s in u.stances if s["key"] == key), key=lambda s: (s["ts"], s["seq"]))
            return [
                {
                    "turn_id": s["turn_id"],
                    "session_id": u.turns[s["turn_id"]]["session_id"],
                    "stance": s["stance"],
                    "cue": s["cue"],
                    "start": s["start"],
                    "end": s["end"],
                    "ts": s["ts"].isoformat(),
                }
                for s in rows
            ]

    def concept_relations(self, user: UserRef, key: str) -> list[dict[str, Any]]:
        with self._lock:
            t = self._tenant(user.tenant)
            u = t.users.get(user.user_id) or _User()
            rows = [
                {
                    "source": s,
                    "type": rel,
                    "target": o,
                    "scope": "catalog",
                    "turn_ids": [],
                    "extractors": ["catalog"],
                    "confidence": 1.0,
                }
                for rel, s, o in t.catalog_relations
                if key in (s, o)
            ] + [
                {
                    "source": s,
                    "type": rel,
                    "target": o,
                    "scope": "user",
                    "turn_ids": list(p["turn_ids"]),
                    "extractors": list(p["extractors"]),
                    "confidence": p["confidence"],
                }
                for (rel, s, o), p in u.relations.items()
                if key in (s, o)
            ]
            return sorted(rows, key=lambda r: (r["scope"], r["type"], r["source"], r["target"]))

    def turns(self, user: UserRef) -> list[dict[str, Any]]:
        with self._lock:
            u = self._user(user) or _User()
            keep = ("turn_id", "session_id", "role", "text", "ts", "language")
            rows = sorted(u.turns.values(), key=lambda x: (x["ts"], x["turn_id"]))
            return [{k: x[k].isoformat() if k == "ts" else x[k] for k in keep} for x in rows]

    def list_users(self, tenant: str, limit: int = 1000) -> list[str]:
        with self._lock:
            return sorted(self._tenant(tenant).users)[:limit]

    def search_concepts(
        self, tenant: str, query: str, limit: int = 5, user: UserRef | None = None
    ) -> list[dict[str, Any]]:
        """Catalog concepts (and the user's own) whose name or an alias shares words with ``query``;
        score: the share of the name's words found (Lucene's scoring is not reproduced)."""
        words = set(concept_key(query).split())
        if not words:
            return []
        with self._lock:
            t = self._tenant(tenant)
            u = t.users.get(user.user_id) if user else None
            found: list[dict[str, Any]] = []
            for c in t.concepts.values():
                if not (c.in_catalog or (u is not None and c.key in u.interests)):
                    continue
                best = 0.0
                for name in (c.name, *c.aliases):
                    name_words = set(concept_key(name).split())
                    if name_words:
                        best = max(best, len(words & name_words) / len(name_words))
                if best > 0:
                    found.append({"key": c.key, "name": c.name, "score": best})
            return sorted(found, key=lambda r: (-r["score"], r["key"]))[:limit]

    def tenant_user_count(self, tenant: str) -> int:
        with self._lock:
            return len(self._tenant(tenant).users)

    def concept_user_counts(self, tenant: str, keys: Sequence[str]) -> dict[str, int]:
        with self._lock:
            users = self._tenant(tenant).users.values()
            return {k: sum(1 for u in users if k in u.interests) for k in keys}

    def existing_concepts(self, tenant: str, keys: Sequence[str], catalog_only: bool = False) -> dict[str, str]:
        with self._lock:
            concepts = self._tenant(tenant).concepts
            return {k: concepts[k].name for k in keys if k in concepts and (concepts[k].in_catalog or not catalog_only)}

    # -- forgetting -----------------------------------------------------------------------------------

    def forget_concept(self, user: UserRef, key: str, names: Sequence[str] = ()) -> dict[str, int]:
        with self._lock:
            t = self._tenant(user.tenant)
            u = t.users.get(user.user_id)
            if u is None:
                return {"provenance": 0, "relations": 0, "interests": 0}
            u.version += 1
            before = len(u.mentions) + len(u.stances)
            u.mentions = [m for m in u.mentions if m["key"] != key]
            u.stances = [s for s in u.stances if s["key"] != key]
            rels = [rk for rk in u.relations if key in rk[1:]]
            for rk in rels:
                del u.relations[rk]
            interests = 1 if u.interests.pop(key, None) is not None else 0
            u.folds.discard(key)
            if u.summary is not None:
                drop = {key, *names}
                u.summary["items"] = [x for x in u.summary["items"] if x not in drop]
                u.summary["count"] = len(u.folds)
            self._delete_orphans(t, [key])
            return {
                "provenance": before - len(u.mentions) - len(u.stances),
                "relations": len(rels),
                "interests": interests,
            }

    def erase_user(self, user: UserRef) -> dict[str, int]:
        with self._lock:
            t = self._tenant(user.tenant)
            existed = t.users.pop(user.user_id, None)
            u = existed or _User()
            self._delete_orphans(t, list(u.interests))
            return {
                "turns": len(u.turns),
                "sessions": len({x["session_id"] for x in u.turns.values()}),
                "interests": len(u.interests),
                "runs": len(u.runs),
                "summaries": int(u.summary is not None),
                "relations": len(u.relations),
                "users": int(existed is not None),
                "attempts": 0,
                "masteries": 0,
            }

    def _delete_orphans(self, t: _Tenant, keys: Iterable[str]) -> None:
        """Conversation-only concepts no one refers to any more (concepts_delete_orphans)."""
        used = {k for _, s, o in t.catalog_relations for k in (s, o)}
        for u in t.users.values():
            used.update(u.interests)
            used.update(m["key"] for m in u.mentions)
            used.update(s["key"] for s in u.stances)
            used.update(k for _, s, o in u.relations for k in (s, o))
        for k in list(keys):
            c = t.concepts.get(k)
            if c is not None and not c.in_catalog and k not in used:
                del t.concepts[k]

    # -- graded attempts, knowledge tracing, the past --------------------------------------------------

    def write_attempts(
        self, user: UserRef, attempts: Sequence[NewAttempt], defaults: BKTParams, seq_base: int
    ) -> AttemptPlan:
        raise NotImplementedError("graded attempts are stored by Neo4jStore only (tests/test_attempts.py)")

    def concept_attempts(self, user: UserRef, key: str) -> list[dict[str, Any]]:
        return []

    def user_attempts(self, user: UserRef) -> list[dict[str, Any]]:
        return []

    def mastery_as_of(self, user: UserRef, as_of: datetime) -> list[dict[str, Any]]:
        return []

    def stances_as_of(self, user: UserRef, as_of: datetime) -> list[dict[str, Any]]:
        """Each concept's latest stance stated at or before ``as_of`` (attempts_stances_as_of)."""
        with self._lock:
            u = self._user(user) or _User()
            last: dict[str, dict[str, Any]] = {}
            for s in sorted(u.stances, key=lambda s: (s["ts"], s["seq"])):
                if s["ts"] <= as_of:
                    last[s["key"]] = s
            return [{"key": k, "stance": s["stance"], "stance_ms": _ms(s["ts"])} for k, s in last.items()]

    def kt_attempts(self, tenant: str) -> list[dict[str, Any]]:
        return []

    def store_kt_fit(self, tenant: str, rows: list[dict[str, Any]], report: dict[str, Any], method: str) -> int:
        raise NotImplementedError("knowledge-tracing fits are stored by Neo4jStore only")

    def kt_params(self, tenant: str) -> list[dict[str, Any]]:
        return []

    def kt_fits(self, tenant: str, limit: int = 20) -> list[dict[str, Any]]:
        return []
