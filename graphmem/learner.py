"""The learner model's service side: graded attempts in, BKT mastery stored; BKT fits per concept;
the user model "as of" a past moment.

Wired into :class:`graphmem.service.GraphMemory` as ``memory.learner``. Attempts need no NLP: a
request is validated, its concepts resolved (catalog name, alias or id, else a new concept), and the
store plans and writes it in one transaction (:mod:`graphmem.attempt_plan`). Mastery then joins the
user's graph on the next read (the user's version was bumped), where gaps and explain use it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from .attempt_plan import NewAttempt
from .bkt import BKTParams
from .errors import InvalidInput
from .evidence import LEVELS, evidence
from .extraction.catalog_matcher import catalog_keys
from .extraction.normalize import concept_key
from .ids import check_id
from .kt_fit import ConceptFit, fit_concept
from .models import Catalog, ConceptNode, Stance, UserGraph, clean_name, clean_text, utc_now

if TYPE_CHECKING:
    from .service import GraphMemory
    from .store import UserRef


class AttemptIn(BaseModel):
    """One graded attempt as a client sends it."""

    model_config = ConfigDict(extra="forbid")

    attempt_id: StrictStr = Field(min_length=1, max_length=128, description="idempotency key, unique per user")
    concept: StrictStr = Field(min_length=1, max_length=120, description="concept name, alias, catalog id or key")
    correct: StrictBool
    ts: datetime = Field(description="when the learner answered (ISO 8601; no zone means UTC)")
    item_id: StrictStr | None = Field(default=None, min_length=1, max_length=128)


class AttemptsRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "attempts": [
                        {
                            "attempt_id": "q1-ana",
                            "concept": "SQL基础",
                            "correct": False,
                            "ts": "2026-11-23T10:00:00Z",
                            "item_id": "sql-join-1",
                        }
                    ]
                }
            ]
        },
    )

    attempts: list[AttemptIn] = Field(min_length=1, max_length=5000)


class KTFitRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    concepts: list[StrictStr] | None = Field(
        default=None, max_length=10_000, description="concepts to fit (name, alias or key); all by default"
    )
    forgets: StrictBool = Field(default=False, description="fit BKT with forgetting")
    num_fits: int | None = Field(default=None, ge=1, le=20, description="EM restarts per concept")
    min_attempts: int | None = Field(default=None, ge=1, description="skip concepts with fewer attempts")
    seed: int = Field(default=0, ge=0, le=2**31 - 1)


def as_utc(value: datetime, what: str) -> datetime:
    """A timestamp in UTC (naive means UTC). Neo4j refuses zone offsets beyond ±18:00 (Python allows
    ±24 h), and a time near year 1 or 9999 may not exist in UTC: both are the client's error, not a 500."""
    try:
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
    except (OverflowError, ValueError):
        raise InvalidInput(
            f"{what} {value.isoformat()} is outside the range of representable times", code="INVALID_TIMESTAMP"
        ) from None


def _check(value: str, what: str) -> str:
    if not value.strip() or clean_text(value) != value or "\n" in value or "\t" in value:
        raise InvalidInput(
            f"{what} must be a non-empty string without control characters or invalid code points",
            code=f"INVALID_{what.upper().split('[')[0].split('.')[-1]}",
        )
    return value


class Learner:
    def __init__(self, memory: GraphMemory) -> None:
        self.memory = memory
        self.settings = memory.settings
        self.store = memory.store
        self._catalog_keys: dict[str, tuple[int, dict[str, str], dict[str, str]]] = {}
        self._seq_lock = threading.Lock()
        self._last_seq = 0

    # -- defaults and resolution ------------------------------------------------------------

    @property
    def defaults(self) -> BKTParams:
        s = self.settings
        return BKTParams(prior=s.kt_prior, learn=s.kt_learn, guess=s.kt_guess, slip=s.kt_slip, forget=s.kt_forget)

    def _catalog(self, tenant: str) -> tuple[dict[str, str], dict[str, str]]:
        """(concept_key of every catalog name / alias / id -> key, key -> catalog name), per catalog version."""
        version = self.store.catalog_version(tenant)
        cached = self._catalog_keys.get(tenant)
        if cached and cached[0] == version:
            return cached[1], cached[2]
        doc, version = self.store.get_catalog(tenant)
        keys: dict[str, str] = {}
        names: dict[str, str] = {}
        if doc:
            catalog = Catalog.model_validate(doc)
            keys = catalog_keys(catalog)
            names = {concept_key(c.name): c.name for c in catalog.concepts}
        self._catalog_keys[tenant] = (version, keys, names)
        return keys, names

    def resolve(
        self, tenant: str, concept: str, catalog: tuple[dict[str, str], dict[str, str]] | None = None
    ) -> tuple[str, str]:
        """A concept named by catalog name, alias or id (else taken as a new concept) -> (key, name).
        ``catalog``: the tenant's (keys, names) already read for this request."""
        keys, names = catalog or self._catalog(tenant)
        name = clean_name(concept, self.settings.max_name_length)
        key = concept_key(name)
        if not key:
            raise InvalidInput(f"concept {concept!r} is empty after normalisation", code="INVALID_CONCEPT")
        canon = keys.get(key, key)
        return canon, names.get(canon, name)

    def _seq_base(self) -> int:
        """Increases across requests of this process (and, being time-based, across processes):
        orders attempts with equal timestamps by arrival. Room for 10,000 attempts per request."""
        with self._seq_lock:
            seq = max(int(time.time() * 1000) * 10_000, self._last_seq + 10_000)
            self._last_seq = seq
            return seq

    # -- attempts -----------------------------------------------------------------------------

    def record(self, tenant: str, user_id: str, attempts: Sequence[AttemptIn]) -> dict[str, Any]:
        user = self.memory.user(tenant, user_id)
        if not attempts:
            raise InvalidInput("attempts must hold at least one attempt", code="EMPTY_BATCH")
        if len(attempts) > self.settings.max_attempts_per_call:
            raise InvalidInput(
                f"at most {self.settings.max_attempts_per_call} attempts per call", code="BATCH_TOO_LARGE"
            )
        latest = utc_now() + timedelta(seconds=self.settings.max_clock_skew_s)
        # One catalog read per request and one resolution per distinct concept text: a per-attempt
        # catalog-version round trip held ingest to ~500 attempts/s.
        catalog = self._catalog(tenant)
        resolved: dict[str, tuple[str, str]] = {}
        prepared: list[NewAttempt] = []
        for i, a in enumerate(attempts):
            # Ids follow the project's id policy (graphmem/ids.py); a concept is text, resolved below.
            check_id(a.attempt_id, "attempt_id", self.settings.max_id_length)
            _check(a.concept, "concept")
            if a.item_id is not None:
                check_id(a.item_id, "item_id", self.settings.max_id_length)
            ts = as_utc(a.ts, f"attempts[{i}].ts")
            if ts > latest:
                raise InvalidInput(
                    f"attempts[{i}].ts {ts.isoformat()} is in the future (more than "
                    f"{self.settings.max_clock_skew_s:.0f} s ahead of the server clock)",
                    code="TS_IN_FUTURE",
                )
            if a.concept not in resolved:
                resolved[a.concept] = self.resolve(tenant, a.concept, catalog)
            key, name = resolved[a.concept]
            language = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in name) else "en"
            prepared.append(NewAttempt(a.attempt_id, key, name, language, a.correct, ts, a.item_id, i))
        plan = self.store.write_attempts(user, prepared, self.defaults, self._seq_base())
        if plan.new_rows:
            # Mastery changes no weight: the cached ranked graph carries over (a tutor's loop is
            # "grade an answer, then ask for the block"; a reload costs seconds for a big user).
            rows = {r["key"]: r for r in plan.mastery_rows}
            self.memory.update_cached_graph(
                user, plan.version_before, plan.version_after, lambda graph: with_mastery(graph, rows)
            )
        return {
            "user_id": user_id,
            "accepted": plan.accepted,
            "duplicates": plan.duplicates,
            "replayed": plan.replayed,
            "attempts": plan.results,
        }

    def attempts(self, tenant: str, user_id: str, concept: str) -> list[dict[str, Any]]:
        user = self.memory.user(tenant, user_id)
        key, _ = self.resolve(tenant, concept)
        return self.store.concept_attempts(user, key)

    # -- fitting -----------------------------------------------------------------------------------

    def fit(self, tenant: str, req: KTFitRequest | None = None) -> dict[str, Any]:
        """Fits BKT parameters per concept from the tenant's stored attempts (pyBKT EM), stores them on
        the concepts (versioned) and reports what was fitted and what was skipped."""
        self.memory.user(tenant, "kt-fit")  # validates the tenant id
        req = req or KTFitRequest()
        wanted = {self.resolve(tenant, c)[0] for c in req.concepts} if req.concepts else None
        min_attempts = req.min_attempts or self.settings.kt_min_attempts
        num_fits = req.num_fits or self.settings.kt_num_fits
        sequences = attempt_sequences(self.store.kt_attempts(tenant), wanted)
        started = time.perf_counter()
        fitted, skipped = fit_sequences(
            sequences,
            wanted,
            min_attempts,
            lambda seqs: fit_concept(seqs, forgets=req.forgets, num_fits=num_fits, seed=req.seed),
        )
        report = {
            "method": "pyBKT EM" + (" with forgetting" if req.forgets else ""),
            "num_fits": num_fits,
            "min_attempts": min_attempts,
            "seed": req.seed,
            "seconds": round(time.perf_counter() - started, 3),
            "concepts_fitted": len(fitted),
            "concepts_skipped": len(skipped),
            "attempts": sum(f["attempts"] for f in fitted),
        }
        version = self.store.store_kt_fit(tenant, fitted, report, report["method"]) if fitted else None
        return {
            "tenant": tenant,
            "version": version,
            **report,
            "fitted": fitted,
            "skipped": skipped,
            "defaults": self.defaults.to_dict(),
        }

    def params(self, tenant: str) -> dict[str, Any]:
        self.memory.user(tenant, "kt-params")
        return {
            "tenant": tenant,
            "defaults": self.defaults.to_dict(),
            "concepts": self.store.kt_params(tenant),
            "fits": self.store.kt_fits(tenant),
        }

    # -- as of -------------------------------------------------------------------------------------

    def graph_as_of(self, user: UserRef, as_of: datetime, extra_keys: Sequence[str] = ()) -> UserGraph:
        """The user's graph as it stood at ``as_of``: mentions, stances and mastery up to then
        (``extra_keys``: concepts to load with their neighbourhood, e.g. a focus new to the user)."""
        if as_of.tzinfo is None:
            as_of = as_of.replace(tzinfo=UTC)
        graph = self.store.load_user_graph(user, extra_keys=extra_keys)
        stances = {r["key"]: r for r in self.store.stances_as_of(user, as_of)}
        mastery = {r["key"]: r for r in self.store.mastery_as_of(user, as_of)}
        return graph_as_of(graph, as_of, stances, mastery)


def with_mastery(graph: UserGraph, rows: dict[str, dict[str, Any]]) -> UserGraph | None:
    """Pure: ``graph`` with the mastery rows of a write applied, or None when a reload is needed —
    a concept new to the graph (its relations are not loaded), or one whose stance time is unknown
    here (loaded only with mastery; needed to tell which evidence is newer)."""
    concepts = dict(graph.concepts)
    for key, r in rows.items():
        node = concepts.get(key)
        if node is None:
            return None
        if node.mastery is None and node.stance in (Stance.knows, Stance.confused):
            return None
        concepts[key] = replace(
            node,
            mastery=float(r["mastery"]),
            mastery_attempts=int(r["attempts"]),
            mastery_correct=int(r["correct"]),
            mastery_at=datetime.fromisoformat(r["last_ts"]),
        )
    return replace(graph, concepts=concepts)


def attempt_sequences(rows: Sequence[dict[str, Any]], wanted: set[str] | None) -> dict[str, dict[str, list[bool]]]:
    """Pure: the stored attempts (key, user_id, correct; in time order) as key -> user -> answers,
    only for the ``wanted`` keys when given."""
    sequences: dict[str, dict[str, list[bool]]] = {}
    for r in rows:
        if wanted is None or r["key"] in wanted:
            sequences.setdefault(r["key"], {}).setdefault(r["user_id"], []).append(bool(r["correct"]))
    return sequences


def skip_reason(seqs: list[list[bool]], min_attempts: int) -> str | None:
    """Pure: why a concept's answer sequences cannot be fitted (None: they can)."""
    if sum(len(s) for s in seqs) < min_attempts:
        return f"fewer than {min_attempts} attempts"
    if len({x for s in seqs for x in s}) < 2:
        return "all answers are right, or all wrong"
    return None


def fit_sequences(
    sequences: dict[str, dict[str, list[bool]]],
    wanted: set[str] | None,
    min_attempts: int,
    fit: Callable[[list[list[bool]]], ConceptFit],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Fits each concept's sequences with ``fit``, in key order: (fitted rows, skipped rows with their
    reason; the ``wanted`` concepts without attempts last)."""
    fitted: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for key in sorted(sequences):
        seqs = list(sequences[key].values())
        n = sum(len(s) for s in seqs)
        reason = skip_reason(seqs, min_attempts)
        if reason is None:
            fitted.append(_fitted_row(key, n, fit(seqs)))
        else:
            skipped.append({"concept": key, "attempts": n, "reason": reason})
    skipped += [
        {"concept": k, "attempts": 0, "reason": "no attempts"} for k in sorted(wanted or ()) if k not in sequences
    ]
    return fitted, skipped


def _fitted_row(key: str, attempts: int, f: ConceptFit) -> dict[str, Any]:
    return {
        "concept": key,
        "key": key,
        "attempts": attempts,
        "learners": f.sequences,
        "log_likelihood": round(f.log_likelihood, 4),
        "iterations": f.iterations,
        "bkt": {k: round(v, 6) for k, v in f.params.to_dict().items()},
    }


def _ms(value: int | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value / 1000.0, tz=UTC)


def _mentions_until(node: ConceptNode, cutoff: float) -> tuple[tuple[float, ...], tuple[str, ...]]:
    """The node's mention times and roles up to ``cutoff`` (seconds); no roles when the node does not
    carry one per mention."""
    keep = [i for i, t in enumerate(node.mention_times) if t <= cutoff]
    times = tuple(node.mention_times[i] for i in keep)
    with_roles = len(node.mention_roles) == len(node.mention_times)
    return times, tuple(node.mention_roles[i] for i in keep) if with_roles else ()


def _stance_then(row: dict[str, Any] | None) -> dict[str, Any]:
    """ConceptNode fields of the latest stance up to the cut (``row``: stance, stance_ms)."""
    if not row:
        return {"stance": None, "stance_at": None}
    return {"stance": Stance(row["stance"]) if row.get("stance") else None, "stance_at": _ms(row["stance_ms"])}


def _mastery_then(row: dict[str, Any] | None) -> dict[str, Any]:
    """ConceptNode fields of the latest mastery up to the cut (``row``: mastery, attempts, correct, last_ms)."""
    if not row:
        return {"mastery": None, "mastery_attempts": 0, "mastery_correct": 0, "mastery_at": None}
    return {
        "mastery": float(row["mastery"]) if row.get("mastery") is not None else None,
        "mastery_attempts": int(row["attempts"]),
        "mastery_correct": int(row["correct"]),
        "mastery_at": _ms(row["last_ms"]),
    }


def _node_as_of(
    n: ConceptNode, as_of: datetime, stance: dict[str, Any] | None, mastery: dict[str, Any] | None
) -> ConceptNode:
    times, roles = _mentions_until(n, as_of.timestamp())
    return replace(
        n,
        mention_times=times,
        mention_roles=roles,
        user_mentions=roles.count("user"),
        assistant_mentions=roles.count("assistant"),
        **_stance_then(stance),
        **_mastery_then(mastery),
        first_seen=n.first_seen if n.first_seen and n.first_seen <= as_of else None,
        last_seen=datetime.fromtimestamp(max(times), tz=UTC) if times else None,
    )


def graph_as_of(
    graph: UserGraph, as_of: datetime, stances: dict[str, dict[str, Any]], mastery: dict[str, dict[str, Any]]
) -> UserGraph:
    """Pure: ``graph`` cut back to ``as_of``.

    A concept keeps only the mentions made up to then (so its weight is what it was, decayed to
    then), the latest stance stated up to then (``stances``: key -> stance, stance_ms) and the
    mastery of its latest attempt up to then (``mastery``: key -> mastery, attempts, correct,
    last_ms). Concepts with none of those by then leave the user's own concepts; catalog neighbours
    stay as neighbours. Relations are kept as they are now (a relation's turns are not cut).
    """
    concepts: dict[str, ConceptNode] = {}
    for k, n in graph.concepts.items():
        node = _node_as_of(n, as_of, stances.get(k), mastery.get(k))
        if node.mention_times or node.stance is not None or node.mastery is not None or n.in_catalog:
            # A catalog concept stays even when not the user's yet (it may be a neighbour or a focus).
            concepts[k] = node
    edges = tuple(e for e in graph.edges if e.source in concepts and e.target in concepts)
    return replace(graph, concepts=concepts, edges=edges, now=as_of)


def mastery_view(node: ConceptNode) -> dict[str, Any]:
    """A node's mastery and what the user model concludes from it, for /graph."""
    ev = evidence(node)
    return {
        "mastery": round(node.mastery, 6) if node.mastery is not None else None,
        "mastery_attempts": node.mastery_attempts,
        "mastery_correct": node.mastery_correct,
        "mastery_at": node.mastery_at.isoformat() if node.mastery_at else None,
        "mastery_level": LEVELS.level(node.mastery, node.mastery_attempts),
        "knowledge": ev.state,
        "knowledge_reason": ev.reason or None,
    }


def _at(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


def _rows_until(rows: Sequence[dict[str, Any]], as_of: datetime | None) -> list[dict[str, Any]]:
    """Copies of the rows made up to ``as_of`` (all without it)."""
    return [dict(r) for r in rows if as_of is None or (_at(r["ts"]) or as_of) <= as_of]


def _stance_spans(hist: list[dict[str, Any]]) -> None:
    """Each stance holds from its turn until the next stance's turn; the last one is open."""
    for cur, nxt in zip(hist, hist[1:]):
        cur["valid_from"] = {"turn_id": cur["turn_id"], "ts": cur["ts"]}
        cur["valid_to"] = {"turn_id": nxt["turn_id"], "ts": nxt["ts"]}
    if hist:
        hist[-1]["valid_from"] = {"turn_id": hist[-1]["turn_id"], "ts": hist[-1]["ts"]}
        hist[-1]["valid_to"] = None


def _overruling_attempt(
    stance: dict[str, Any], tried: Sequence[dict[str, Any]], level: str | None
) -> dict[str, Any] | None:
    """The first attempt after ``stance`` was stated whose mastery reached ``level`` (the level that
    overrules it now), if any."""
    stated = _at(stance["ts"])
    for a in tried:
        if stated is not None and (_at(a["ts"]) or stated) <= stated:
            continue
        if LEVELS.level(a["mastery"], 1) == level:
            return a
    return None


def stance_timeline(
    node: ConceptNode,
    stances: Sequence[dict[str, Any]],
    attempts: Sequence[dict[str, Any]],
    as_of: datetime | None = None,
) -> dict[str, Any]:
    """Pure: explain's history of one concept with validity spans.

    Each stance holds from the turn that stated it (``valid_from``) until the next stance on the
    concept, or until graded attempts overruled it (``valid_to``: that turn or attempt; None while it
    holds). Attempts carry the spans the store keeps. ``as_of`` cuts both back to that moment.
    """
    if as_of is not None and as_of.tzinfo is None:
        as_of = as_of.replace(tzinfo=UTC)
    hist = _rows_until(stances, as_of)
    tried = _rows_until(attempts, as_of)
    if as_of is not None and tried:
        # The last attempt before as_of was still open then.
        last = tried[-1]
        if last.get("valid_to") and (_at(last["valid_to"]) or as_of) > as_of:
            last["valid_to"], last["closed_by"] = None, None
    ev = evidence(node)
    _stance_spans(hist)
    if hist and ev.overruled is not None and ev.overruled.value == hist[-1]["stance"]:
        closing = _overruling_attempt(hist[-1], tried, LEVELS.level(node.mastery, node.mastery_attempts))
        if closing is not None:
            hist[-1]["valid_to"] = {"attempt_id": closing["attempt_id"], "ts": closing["ts"]}
            hist[-1]["closed_because"] = ev.reason
    return {
        "stance_history": hist,
        "mastery": {**mastery_view(node), "attempts": tried},
        "knowledge": {
            "state": ev.state,
            "source": ev.source,
            "reason": ev.reason or None,
            "overruled_stance": ev.overruled.value if ev.overruled else None,
        },
    }
