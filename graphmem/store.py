"""The graph store: the only module that speaks Cypher.

Every statement comes from ``cypher/*.cypher`` by name and takes parameters;
relationship types are filled in only from the allow-list in
:mod:`graphmem.models`. Every user-level method takes a :class:`UserRef`, so a
user's subgraph cannot be loaded without a tenant and a user id: there is no
code path that reads "all users".
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from neo4j import READ_ACCESS, WRITE_ACCESS, Bookmarks, Driver, GraphDatabase, ManagedTransaction, Session
from neo4j import exceptions as neo4j_errors
from pydantic import ValidationError

from . import consistency
from .attempt_plan import AttemptPlan, NewAttempt, StoredAttempt, StoredState, needs_replay, plan_attempts
from .bkt import BKTParams
from .bulk_rows import BulkUser, bulk_rows, mention_row
from .cypher import CypherLibrary, load_library
from .errors import InvalidInput, StoreUnavailable, TurnIdConflict
from .fair_slots import FairSlots
from .gaps import catalog_dependency_map
from .models import (
    ConceptEdge,
    ConceptMention,
    ConceptNode,
    PriorTurn,
    RelationType,
    Stance,
    Tier,
    TurnExtraction,
    UserGraph,
    utc_now,
)
from .names import dominant_language
from .settings import Settings
from .subgraph import adjacency, kept_edges, missing_endpoints, seed_keys, walk

log = logging.getLogger(__name__)

# Whole-transaction attempts of a write that Neo4j aborted for a reason a re-run cures (each with the
# driver's own retries of transient errors); see Neo4jStore._write.
_WRITE_ATTEMPTS = 8


class ConceptGone(Exception):
    """A concept a write links to was deleted meanwhile (another user's erase or forget removed it as an
    orphan): the write's statements matched fewer rows than they were given, so it is rolled back and re-run."""


class RetryCounts:
    """Re-runs of write transactions by reason, for the whole process (the API's /metrics shows them)."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, reason: str) -> None:
        with self._lock:
            self._counts[reason] = self._counts.get(reason, 0) + 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())


write_retries = RetryCounts()


class _Rerun(Exception):
    """Carries a write's failure out of the driver's retry loop to the store's own (see Neo4jStore._write)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _retry_reason(exc: BaseException, constraint_retry: bool) -> str | None:
    """Why a rolled-back write may be re-run (the /metrics label), or None when it must not be."""
    if isinstance(exc, ConceptGone):
        return "concept_gone"
    if isinstance(exc, neo4j_errors.ResultFailedError):
        exc = exc.__cause__ if isinstance(exc.__cause__, neo4j_errors.Neo4jError) else exc
    if isinstance(exc, neo4j_errors.TransientError):
        return "deadlock" if "Deadlock" in (getattr(exc, "code", None) or "") else "transient"
    code = getattr(exc, "code", None) or ""
    if code == "Neo.ClientError.Statement.EntityNotFound":
        return "concept_gone"  # a node this write matched was deleted before it could link to it
    if constraint_retry and isinstance(exc, neo4j_errors.ConstraintError):
        return "constraint"
    return None


def _backoff(attempt: int) -> float:
    """Seconds before re-running an aborted write: exponential with full jitter (10 ms, 20 ms, ... capped at
    0.5 s), so writers that deadlocked together do not all come back at the same moment and deadlock again."""
    return random.uniform(0.0, min(0.5, 0.01 * 2**attempt))


# A hook the tests use to make a write fail part-way, inside the transaction.
FaultHook = Callable[[str], None]


@dataclass(frozen=True)
class UserRef:
    """A user inside a tenant. Both parts are required: this is the isolation boundary."""

    tenant: str
    user_id: str

    def __post_init__(self) -> None:
        if not isinstance(self.tenant, str) or not self.tenant.strip():
            raise InvalidInput("tenant must be a non-empty string", code="INVALID_TENANT")
        if not isinstance(self.user_id, str) or not self.user_id.strip():
            raise InvalidInput("user_id must be a non-empty string", code="INVALID_USER_ID")

    @property
    def owner(self) -> str:
        """Owner tag of relations extracted from this user's conversation."""
        return "u:" + self.user_id

    def params(self, **extra: Any) -> dict[str, Any]:
        return {"tenant": self.tenant, "user_id": self.user_id, "owner": self.owner, **extra}


@dataclass(frozen=True)
class StoredTurn:
    turn_id: str
    role: str
    text: str
    ts: datetime
    language: str
    tokens: int
    extraction: TurnExtraction


@dataclass(frozen=True)
class IngestWrite:
    accepted: list[str]
    duplicates: list[str]
    version: int  # the user's graph version before this write (the write makes it version + 1)
    # The refreshed interest rows of the concepts this write touched (user_interests' shape).
    interests: tuple[dict[str, Any], ...] = ()
    # The tenant's catalog version as the write's transaction saw it (None from stores that do not say).
    catalog_version: int | None = None

    @property
    def version_after(self) -> int:
        """The user's graph version this write left (its consistency token's floor): version + 1 when it
        stored turns, else the version it found."""
        return self.version + 1 if self.accepted else self.version


@dataclass(frozen=True)
class PendingTurn:
    """A turn of an ingest call before extraction: what the pre-write reads need of it."""

    turn_id: str
    role: str
    text: str
    ts: datetime


@dataclass(frozen=True)
class IngestReads:
    """What an ingest reads before it extracts (Neo4jStore.ingest_reads)."""

    known: set[str]  # ids of the call's turns already stored
    catalog_version: int
    prior: PriorTurn | None  # the session's turn before the first new one, when that is a user turn


@dataclass(frozen=True)
class WeightRow:
    key: str
    initial: float
    propagated: float
    final: float
    tier: Tier | None  # None keeps the stored tier
    # The interest is stored with the tier this row keeps (as the ranked graph was read): only its weights
    # are written (user_write_weights' $updates, by index seek, no MERGE or label rewrite).
    weights_only: bool = False


@dataclass(frozen=True)
class CompactionRecord:
    """A compaction run to record together with the tiers it produced.

    With ``replace`` (the default) the summary's FOLDS links are rebuilt from ``folded_keys``.
    Without it, ``folded_keys`` are only the newly compacted concepts: links are added for them,
    and restored concepts lose theirs when their row is written (``user_write_weights``), so a run
    costs what changed, not the graph's size. ``folded_names`` are display items and may be capped;
    the summary's ``count`` is always the exact number of FOLDS links.
    """

    run: dict[str, Any]
    folded_keys: list[str]
    folded_names: list[str]
    replace: bool = True


@dataclass(frozen=True)
class _CatalogCache:
    """A tenant's catalog at one version, as every user's graph load needs it."""

    version: int
    adj: dict[str, list[tuple[Any, ConceptEdge]]]
    deps: dict[str, tuple[str, ...]]
    facts: dict[str, ConceptNode]  # catalog concepts by key (key, name, type, critical)


@dataclass(frozen=True)
class CatalogRows:
    catalog_json: str
    concepts: list[dict[str, Any]]
    relations: dict[RelationType, list[dict[str, str]]] = field(default_factory=dict)


def _native(value: Any) -> Any:
    """Neo4j temporal values to Python datetimes (UTC)."""
    if value is None:
        return None
    to_native = getattr(value, "to_native", None)
    if to_native is not None:
        native = to_native()
        if isinstance(native, datetime) and native.tzinfo is None:
            native = native.replace(tzinfo=UTC)
        return native
    return value


def _from_epoch_us(value: int | None) -> datetime | None:
    """Epoch microseconds (as user_interests returns times) to a UTC datetime."""
    return None if value is None else _EPOCH + timedelta(microseconds=int(value))


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _activity_clock(last_ms: int | None) -> datetime:
    """ "Now" for recency decay: the user's latest turn, so interest drifts as sessions pass and
    does not fade while the user is away (a learner back after three months finds their graph)."""
    if last_ms is None:
        return utc_now()
    return datetime.fromtimestamp(last_ms / 1000.0, tz=UTC)


def _interest_node(r: dict[str, Any]) -> ConceptNode:
    """A user_interests (or ingest_refresh_interests) row to a graph node."""
    return ConceptNode.of_fields(
        {
            "key": r["key"],
            "name": r["name"],
            "type": r["type"],
            "user_mentions": int(r["user_mentions"]),
            "assistant_mentions": int(r["assistant_mentions"]),
            "stance": Stance(r["stance"]) if r["stance"] else None,
            "first_seen": _from_epoch_us(r["first_seen_us"]),
            "last_seen": _from_epoch_us(r["last_seen_us"]),
            "sessions": tuple(r["sessions"]),
            "in_catalog": bool(r["in_catalog"]),
            "critical": bool(r["critical"]),
            "tier": Tier(r["tier"]) if r["tier"] else None,
            "compacted_at": _from_epoch_us(r["compacted_at_us"]),
            "evidence": tuple(r["evidence"]),
            "mention_times": tuple(float(x) for x in r["mention_ts"]),
            "mention_roles": tuple(r["mention_roles"]),
            "context_marks": frozenset(r["context_marks"]),
            "weight": float(r["weight"]) if r["weight"] is not None else None,
        }
    )


def bkt_params(stored: str | None, defaults: BKTParams) -> BKTParams:
    """A concept's stored (fitted) BKT parameters, JSON on the concept node; the defaults without a fit."""
    if not stored:
        return defaults
    try:
        return BKTParams.from_mapping(json.loads(stored), defaults)
    except (ValueError, TypeError):
        log.warning("ignoring invalid stored BKT parameters %r", stored)
        return defaults


def _apply_mastery(concepts: dict[str, ConceptNode], rows: Iterable[dict[str, Any]]) -> list[str]:
    """Puts each attempted concept's mastery on its graph node (adding the node when the user never
    named the concept); returns the keys."""
    keys = []
    for r in rows:
        node = concepts.get(r["key"]) or ConceptNode(
            key=r["key"], name=r["name"], type=r["type"], in_catalog=bool(r["in_catalog"]), critical=bool(r["critical"])
        )
        concepts[r["key"]] = replace(
            node,
            mastery=float(r["mastery"]),
            mastery_attempts=int(r["attempts"] or 0),
            mastery_correct=int(r["correct"] or 0),
            mastery_at=_from_ms(r["last_ms"]),
            stance_at=_from_ms(r.get("stance_ms")) if r.get("stance_ms") is not None else node.stance_at,
        )
        keys.append(r["key"])
    return keys


def _from_ms(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + timedelta(milliseconds=int(value))


def _iso(value: Any) -> str | None:
    native = _native(value)
    return native.isoformat() if isinstance(native, datetime) else native


class Neo4jStore:
    def __init__(self, settings: Settings, driver: Driver | None = None) -> None:
        self.settings = settings
        self.cypher: CypherLibrary = load_library(settings.cypher_dir)
        self.database = settings.neo4j_database
        # tenant -> the catalog's relations, dependency map and concept facts at one catalog version;
        # see _catalog_adjacency.
        self._catalog_edges: dict[str, _CatalogCache] = {}
        # One reader builds a tenant's catalog cache, the others wait for it (single flight): 20 first
        # reads at once each ran the catalog query, 3-6 s apiece on a cold, loaded server (tests/test_load.py).
        self._catalog_build_locks: dict[str, threading.Lock] = {}
        self._catalog_guard = threading.Lock()
        # Admission of write transactions (settings.neo4j_max_concurrent_writes), first come first served;
        # see _write and fair_slots.
        self._write_slots = FairSlots(settings.neo4j_max_concurrent_writes)
        # Set when a call (or ping) found Neo4j unreachable, cleared by the next one that reaches it. While
        # set, a call makes one attempt without the driver's retries (max_transaction_retry_time with
        # back-off: 3-7 s per call before its 503), so clients get their 503 at once while Neo4j is gone.
        self.unreachable = False
        self._driver = driver or GraphDatabase.driver(
            settings.neo4j_uri or f"bolt://127.0.0.1:{settings.neo4j_bolt_port}",
            auth=(settings.neo4j_user, settings.neo4j_password),
            # Fail fast when Neo4j is down: the API answers 503 instead of hanging.
            connection_timeout=3.0,
            connection_acquisition_timeout=settings.neo4j_acquisition_timeout_s,
            max_transaction_retry_time=3.0,
            liveness_check_timeout=settings.neo4j_liveness_check_s,
            # Schema-related warnings ("unknown relationship type" on an empty graph) are noise here.
            notifications_min_severity="OFF",
        )

    # -- plumbing ------------------------------------------------------------

    def close(self) -> None:
        self._driver.close()

    def _run(
        self, tx: ManagedTransaction, name: str, rel_type: RelationType | None = None, **params: Any
    ) -> list[dict[str, Any]]:
        result = tx.run(self.cypher.text(name, rel_type), params)
        return [record.data() for record in result]

    def _run_flat(self, tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
        """As `_run`, for statements that return only scalars and lists of scalars (no nodes, paths or
        maps): rows are zipped with the keys instead of `record.data()`'s recursive export, which cost a
        third of the client CPU of loading a user's graph (~150 interest rows: 6.4 -> 4.6 ms)."""
        result = tx.run(self.cypher.text(name), params)
        keys = result.keys()
        return [dict(zip(keys, record)) for record in result]

    def _execute(self, session: Any, work: Callable[[ManagedTransaction], Any], write: bool) -> Any:
        if self.unreachable:
            with session.begin_transaction() as tx:  # one attempt: the last call found Neo4j gone
                result = work(tx)
                tx.commit()
        else:
            with _pipelined_begin(session) if self.settings.neo4j_pipelined_begin else nullcontext():
                result = (session.execute_write if write else session.execute_read)(work)
        self.unreachable = False
        return result

    @contextmanager
    def _reaching(self, then: str = "") -> Iterator[None]:
        """Neo4j gone (refused, dropped, timed out) -> StoreUnavailable (a 503), and the next call makes
        one attempt only (see ``unreachable``). ``then``: what the message adds (e.g. nothing was written)."""
        try:
            yield
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, OSError) as exc:
            self.unreachable = True
            raise StoreUnavailable(f"Neo4j is unreachable ({type(exc).__name__}){then}") from exc

    @contextmanager
    def _session(self, write: bool) -> Iterator[Session]:
        """Every session of the store (the one place one is opened): on this store's database, from the
        request's bookmarks (if any); an unreachable server is StoreUnavailable (`_reaching`).

        On a cluster (``neo4j://`` routing driver) a session that starts from bookmarks runs only once the
        serving member has applied them (read-your-writes across API replicas); the session's new bookmarks
        go back into the request's chain (graphmem/consistency.py). Bookmarks Neo4j cannot parse came from
        a client's token: a 422, not a 500. The access mode routes the session's explicit transactions
        (the one-attempt path of `_execute`, which bypasses execute_read) to a secondary when reading.
        """
        chain = consistency.current()
        bookmarks = Bookmarks.from_raw_values(chain.bookmarks) if chain is not None and chain.bookmarks else None
        then = "; nothing was written, retry shortly." if write else "; retry shortly."
        try:
            with (
                self._reaching(then),
                self._driver.session(
                    database=self.database,
                    bookmarks=bookmarks,
                    default_access_mode=WRITE_ACCESS if write else READ_ACCESS,
                ) as session,
            ):
                yield session
                if chain is not None:
                    chain.record(session.last_bookmarks().raw_values)
        except neo4j_errors.ClientError as exc:
            if exc.code is None and "obtain a connection from the pool" in str(exc):
                # The driver's pool gave no connection within neo4j_acquisition_timeout_s (it raises a code-less
                # ClientError): Neo4j or this process is overloaded, not the request wrong — a 503, not a 500.
                raise StoreUnavailable(
                    f"no Neo4j connection free within {self.settings.neo4j_acquisition_timeout_s:g} s{then}"
                ) from exc
            if exc.code and exc.code.startswith("Neo.ClientError.Transaction.InvalidBookmark"):
                raise InvalidInput(
                    "consistency token holds bookmarks this Neo4j does not know; send the token a write returned",
                    code="INVALID_CONSISTENCY_TOKEN",
                ) from exc
            raise

    def _read(self, work: Callable[[ManagedTransaction], Any]) -> Any:
        with self._session(write=False) as session:
            return self._execute(session, work, write=False)

    def _read_one(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """One read statement in an auto-commit transaction: one round trip where a managed transaction
        takes two (the statement, then COMMIT). Asked before every read of a user (``user_version``).
        A failure that the driver's managed retries would cure (Neo4j busy or briefly gone) falls back to
        them (:meth:`_read`), so a call fails no more often than before."""
        if not self.unreachable:
            try:
                with self._session(write=False) as session:
                    result = session.run(self.cypher.text(name), params)
                    keys = result.keys()
                    return [dict(zip(keys, record, strict=True)) for record in result]
            except StoreUnavailable as exc:
                if not isinstance(exc.__cause__, neo4j_errors.SessionExpired | neo4j_errors.ServiceUnavailable):
                    raise
                self.unreachable = False  # the managed retries below decide whether Neo4j is gone
            except neo4j_errors.TransientError:
                pass
        return self._read(lambda tx: self._run_flat(tx, name, **params))

    def _write(self, work: Callable[[ManagedTransaction], Any], constraint_retry: bool = False) -> Any:
        """Runs ``work`` in one write transaction; a transaction aborted for a reason a re-run cures is
        re-run (``work`` is idempotent and the transaction was rolled back), and every re-run is counted
        (:data:`write_retries`, shown by the API's /metrics).

        Writes of different users share no lock but the concept nodes they link to. Concepts are created
        beforehand in a short transaction of their own (:meth:`_ensure_concepts`), so a user's write only
        links to nodes that exist; these re-runs are the safety net for what can still happen: a deadlock on
        a (not yet dense) concept node, a conversation-only concept deleted by another user's erase or
        forget in between (``ConceptGone``), and with ``constraint_retry`` a uniqueness constraint hit by a
        concurrent call that stored the same id first (the re-run sees it as a duplicate), or an orphan
        check that another writer's new link made stale.
        """

        def rerun_here(tx: ManagedTransaction) -> Any:
            # A deadlock or race raised inside the work leaves the driver as _Rerun: the driver would
            # re-run it after a back-off of 1 s and more (made for a server that went away), which cost a
            # second per deadlock between writers of one tenant. Connection errors keep the driver's retries.
            try:
                return work(tx)
            except (neo4j_errors.Neo4jError, ConceptGone) as exc:
                reason = _retry_reason(exc, constraint_retry)
                if reason is None:
                    raise
                raise _Rerun(reason) from exc

        for attempt in range(_WRITE_ATTEMPTS):
            try:
                # A bounded number of writers at once (neo4j_max_concurrent_writes): no write ever waits for
                # a slot while it holds a transaction, so the slots cannot close a cycle with Neo4j's locks.
                with self._write_slots, self._session(write=True) as session:
                    return self._execute(session, rerun_here, write=True)
            except _Rerun as rerun:
                if attempt == _WRITE_ATTEMPTS - 1:
                    raise rerun.__cause__ from None  # type: ignore[misc]
                write_retries.add(rerun.reason)
                log.info("write aborted (%s, attempt %d); re-running", rerun.reason, attempt + 1)
                time.sleep(_backoff(attempt))
            except (neo4j_errors.TransientError, neo4j_errors.ResultFailedError) as exc:
                # Failed at commit (or after the driver's own retries): re-run it here as well.
                reason = _retry_reason(exc, constraint_retry)
                if reason is None or attempt == _WRITE_ATTEMPTS - 1:
                    raise
                write_retries.add(reason)
                time.sleep(_backoff(attempt))
        raise AssertionError("unreachable")

    def _ensure_concepts(self, tenant: str, statement: str, concepts: Sequence[dict[str, Any]]) -> None:
        """Creates the tenant's concept nodes a write is about to link to, in their own short transaction
        and in key order. MERGE is idempotent and an existing concept is only read, so concurrent writers
        of one tenant never wait on each other here for long, and never in a cycle (one order)."""
        if concepts:
            rows = sorted(concepts, key=lambda c: c["key"])
            self._write(lambda tx: self._run(tx, statement, tenant=tenant, concepts=rows))

    def _known_catalog_keys(self, tenant: str) -> Mapping[str, ConceptNode]:
        """The tenant's catalog concepts as last read from Neo4j (the graph loads' catalog cache; empty
        until a load has read it)."""
        cached = self._catalog_edges.get(tenant)
        return cached.facts if cached is not None else {}

    def read_statement(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Runs a named read statement as is (saved exploration queries, checks)."""
        return self._read(lambda tx: self._run(tx, name, **params))

    def ping(self) -> bool:
        try:
            self._driver.verify_connectivity()
            self.unreachable = False
            return True
        except Exception:
            self.unreachable = True
            return False

    # -- schema ------------------------------------------------------------------

    def apply_schema(self) -> list[str]:
        """Creates constraints and indexes if missing, then runs pending data migrations
        (cypher/migrate.cypher); safe to run any number of times."""
        names = [s.name for s in self.cypher.in_file("schema.cypher") if not s.name.startswith("schema_list")]
        # One chain: on a cluster the listing (a read, on a secondary) starts after the schema writes.
        with consistency.chain():
            with self._session(write=True) as session:
                for name in names:
                    session.run(self.cypher.text(name)).consume()
                session.run("CALL db.awaitIndexes(60)").consume()
                self._migrate(session)
            return sorted(row["name"] for row in self.read_statement("schema_list_constraints"))

    def _migrate(self, session: Any) -> None:
        # Auto-commit runs: the migrations batch themselves with CALL … IN TRANSACTIONS.
        for migration, rel_types in (("migrate_mention_owner", [None]), ("migrate_rel_pair", list(RelationType))):
            if session.run(self.cypher.text("migration_done"), id=migration).single() is not None:
                continue
            for rel_type in rel_types:
                session.run(self.cypher.text(migration, rel_type)).consume()
            session.run(self.cypher.text("migration_mark"), id=migration).consume()

    def schema_state(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "constraints": self.read_statement("schema_list_constraints"),
            "indexes": self.read_statement("schema_list_indexes"),
        }

    # -- ingest ----------------------------------------------------------------

    def existing_turn_ids(
        self, user: UserRef, turn_ids: Sequence[str], expected: dict[str, tuple[str, str, str]] | None = None
    ) -> set[str]:
        """The ids already stored; with ``expected`` ({id: (session, role, text)}), a stored turn that
        differs raises TurnIdConflict."""
        rows = self._read(lambda tx: self._run(tx, "ingest_existing_turns", **user.params(turn_ids=list(turn_ids))))
        if expected is not None:
            _check_conflicts(rows, expected)
        return {r["turn_id"] for r in rows}

    def prior_turn(self, user: UserRef, session_id: str, before: datetime) -> PriorTurn | None:
        """The session's last stored turn before ``before``, with its mentions (None if there is none)."""
        return _prior_turn(
            self._read(
                lambda tx: self._run(
                    tx, "ingest_prior_turn", **user.params(session_id=session_id, before=before.isoformat())
                )
            )
        )

    def ingest_reads(self, user: UserRef, session_id: str, turns: Sequence[PendingTurn]) -> IngestReads:
        """What an ingest reads before extracting, in one auto-commit statement (one round trip; a managed
        read transaction adds its COMMIT's, and each costs ~1 ms on this machine's loopback): the stored
        turns among ``turns`` (a stored id with other text, role or session raises TurnIdConflict), the
        tenant's catalog version, and the session's turn before the first new one when that is a user turn
        (its antecedents for coreference). Nothing here needs one snapshot: the write re-checks the ids under
        the user's lock, and the catalog version only picks the extractor."""

        first = turns[0] if turns else None
        # The first turn usually heads the new ones: its prior turn is read along (ingest_reads, cypher/ingest.cypher).
        guess = first.ts.isoformat() if first is not None and first.role == "user" else None
        row = self._read_one(
            "ingest_reads", **user.params(turn_ids=[t.turn_id for t in turns], session_id=session_id, before=guess)
        )[0]
        rows = row["existing"]
        _check_conflicts(rows, {t.turn_id: (session_id, t.role, t.text) for t in turns})
        known = {r["turn_id"] for r in rows}
        head = next((t for t in turns if t.turn_id not in known), None)
        prior = None
        if head is not None and head is first and guess is not None:
            prior_rows = [] if row["prior_role"] is None else [_prior_row(row)]
            prior = _prior_turn(prior_rows)
        elif head is not None and head.role == "user":
            # The first turn was stored already: the prior turn is the one before the first new turn.
            before = head.ts.isoformat()
            prior = _prior_turn(
                self._read_one("ingest_prior_turn", **user.params(session_id=session_id, before=before))
            )
        return IngestReads(known, int(row["catalog_version"]), prior)

    def write_ingest(
        self, user: UserRef, session_id: str, turns: Sequence[StoredTurn], fault: FaultHook | None = None
    ) -> IngestWrite:
        """Writes a batch of turns and their extractions in one transaction.

        Turns whose id is already stored are skipped (counted as duplicates), so a
        retried call changes nothing. Interest counts are recomputed from the stored
        mentions rather than incremented, which keeps them exact under retries.

        The user's node is the only lock taken on purpose (one writer per user); the concepts the turns
        name are created first in their own short transaction (:meth:`_ensure_concepts`), so writes of
        different users of one tenant run in parallel.
        """
        # Catalog concepts this process has read from Neo4j exist already: only the others need the short
        # transaction (most turns name only catalog concepts, and then it is skipped). A catalog concept gone
        # since (a catalog replaced, then an erase that removed it as an orphan) fails the write's link
        # counts (ConceptGone): the re-run creates it in the write's own transaction (``recreate``).
        known = self._known_catalog_keys(user.tenant)
        new_concepts = [c for k, c in _turn_concepts(turns).items() if k not in known]
        self._ensure_concepts(user.tenant, "ingest_merge_concepts", new_concepts)
        runs = 0

        def work(tx: ManagedTransaction) -> IngestWrite:
            nonlocal runs
            runs += 1
            # The lock and the stored turns among these ids in one statement (one round trip).
            locked = self._run(tx, "ingest_lock_user", **user.params(turn_ids=[t.turn_id for t in turns]))[0]
            version, catalog_version = locked["version"], int(locked["catalog_version"])
            rows = locked["existing"]
            # Re-checked here, under the lock: a concurrent call may have stored one of these ids meanwhile.
            _check_conflicts(rows, {t.turn_id: (session_id, t.role, t.text) for t in turns})
            existing = {r["turn_id"] for r in rows}
            seen: set[str] = set()
            new_turns: list[StoredTurn] = []
            duplicates: list[str] = []
            for turn in turns:
                if turn.turn_id in existing or turn.turn_id in seen:
                    duplicates.append(turn.turn_id)
                else:
                    seen.add(turn.turn_id)
                    new_turns.append(turn)
            if duplicates:
                # Concepts created beforehand only for turns that were already stored (say, re-sent after
                # a "forget" removed the concept) must not outlive this call.
                unused = sorted(set(_turn_concepts(turns)) - set(_turn_concepts(new_turns)))
                if unused:
                    self._delete_orphan_concepts(tx, user, unused)
            if not new_turns:
                written = IngestWrite([], duplicates, version, catalog_version=catalog_version)
            else:
                interests = self._write_turn_rows(tx, user, session_id, new_turns, fault, recreate=runs > 1)
                accepted = [t.turn_id for t in new_turns]
                written = IngestWrite(accepted, duplicates, version, tuple(interests), catalog_version)
            if locked["unlinked"]:
                # Last, so the tenant node's lock is held only from here to the commit (ingest_link_user).
                self._run(tx, "ingest_link_user", **user.params())
            return written

        return self._write(work, constraint_retry=True)

    def _delete_orphan_concepts(self, tx: ManagedTransaction, user: UserRef, keys: Sequence[str]) -> None:
        """Deletes conversation-only concepts among ``keys`` that nothing links to any more. Each is locked
        first and checked after: a concurrent write that linked to it has committed by then (and it stays),
        or it waits and, finding the node gone, re-runs and creates it afresh (ConceptGone)."""
        self._run(tx, "concepts_lock_orphans", keys=sorted(keys), **user.params())
        self._run(tx, "concepts_delete_orphans", keys=sorted(keys), **user.params())

    def _write_turn_rows(
        self,
        tx: ManagedTransaction,
        user: UserRef,
        session_id: str,
        turns: Sequence[StoredTurn],
        fault: FaultHook | None,
        recreate: bool = False,
    ) -> list[dict[str, Any]]:
        turn_rows = [
            {
                "turn_id": t.turn_id,
                "role": t.role,
                "text": t.text,
                "ts": t.ts.isoformat(),
                "language": t.language,
                "tokens": t.tokens,
            }
            for t in turns
        ]
        concepts = _turn_concepts(turns)
        mentions: list[dict[str, Any]] = []
        stances: list[dict[str, Any]] = []
        relations: dict[RelationType, list[dict[str, Any]]] = defaultdict(list)
        seq = 0
        for t in turns:
            ts = t.ts.isoformat()
            ex = t.extraction
            for m in ex.concepts:
                mentions.append(mention_row(t.turn_id, m, t.role, ts, t.text))
            for s in ex.stances:
                seq += 1
                stances.append(
                    {
                        "turn_id": t.turn_id,
                        "key": s.key,
                        "stance": s.stance.value,
                        "start": s.start,
                        "end": s.end,
                        "cue": s.cue,
                        "confidence": s.confidence,
                        "ts": ts,
                        "seq": seq,
                    }
                )
            for r in ex.relations:
                relations[r.type].append(
                    {
                        "turn_id": t.turn_id,
                        "source_key": r.source_key,
                        "target_key": r.target_key,
                        "extractor": r.extractor.value,
                        "confidence": r.confidence,
                        "cue": r.cue,
                    }
                )
        # Rows in concept-key order: concurrent ingests for different users that touch the same
        # concepts then lock those nodes in the same order, which makes deadlocks rare.
        mentions.sort(key=lambda m: (m["key"], m["turn_id"], m["start"]))
        stances.sort(key=lambda m: (m["key"], m["seq"]))
        relation_rows = {rel_type: _relation_pairs(rows) for rel_type, rows in relations.items()}
        p = user.params(session_id=session_id)
        if concepts and recreate:
            # A re-run after a concept vanished (another user's erase removed it as an orphan after
            # _ensure_concepts): create it again in this transaction. Normally the concepts exist.
            self._run(tx, "ingest_merge_concepts", concepts=list(concepts.values()), **p)
        # Relations need only the concepts; one statement per type (a relationship type is not a parameter).
        for rel_type in sorted(relation_rows, key=lambda r: r.value):
            rows = relation_rows[rel_type]
            _expect(self._run(tx, "ingest_relations", rel_type, relations=rows, **p), "relations", len(rows))
        if fault:
            fault("relations")
        # Turns, mentions, stances and the refreshed interests in one statement: one round trip.
        written = self._run_flat(
            tx,
            "ingest_write_all",
            turns=turn_rows,
            mentions=mentions,
            stances=stances,
            keys=sorted(concepts),
            names={k: c["name"] for k, c in concepts.items()},
            **p,
        )[0]
        if fault:
            fault("turns")
            fault("mentions")
        _expect([written], "mentions", len(mentions))
        _expect([written], "stances", len(stances))
        refreshed: list[dict[str, Any]] = written["refreshed"]
        if len(refreshed) != len(concepts):
            raise ConceptGone(f"{len(concepts) - len(refreshed)} concept(s) vanished during the write")
        return refreshed

    # -- reading a user's graph ------------------------------------------------

    def user_version(self, user: UserRef) -> tuple[int | None, int]:
        """(user graph version or None if the user does not exist, tenant catalog version)."""
        row = self._read_one("user_version", **user.params())[0]
        return (row["version"] if row["exists"] else None, row["catalog_version"])

    def load_user_graph(
        self,
        user: UserRef,
        extra_keys: Iterable[str] = (),
        depth: int | None = None,
        now: datetime | None = None,
        base: UserGraph | None = None,
        refreshed: Sequence[dict[str, Any]] = (),
        catalog_version: int | None = None,
    ) -> UserGraph:
        """The user's interests plus visible relations up to `depth` hops around them.

        Visible relations are the tenant's catalog relations and the user's own;
        relations extracted from other users' conversations are never loaded.

        With `base` (the graph as it was before an ingest, which the caller knows is current but for
        that ingest) and `refreshed` (the interest rows the ingest rewrote), the interests are not
        re-read: the base's concepts are updated with the refreshed rows and only the relations,
        neighbours and history size are read.
        """
        return self._load(user, extra_keys, depth, now, base, refreshed, catalog_version)[1]

    def load_current_graph(self, user: UserRef, depth: int | None = None) -> tuple[int, int, UserGraph] | None:
        """(graph version, catalog version, the user's graph as read at them), or None for no such user.

        One auto-commit round trip reads the versions with the graph (``user_graph_load``): a read that
        has no cached graph for the user needs no version check first, and the graph is cached under the
        versions it was read at."""
        version, graph = self._load(user, (), depth, None, None, (), None)
        if version is None:
            return None
        return version[0], version[1], graph

    def _load(
        self,
        user: UserRef,
        extra_keys: Iterable[str],
        depth: int | None,
        now: datetime | None,
        base: UserGraph | None,
        refreshed: Sequence[dict[str, Any]],
        catalog_version: int | None,
    ) -> tuple[tuple[int, int] | None, UserGraph]:
        """((graph version, catalog version) or None when the user does not exist, the graph).

        One statement in an auto-commit transaction (``user_graph_load``: one round trip; a managed read
        adds BEGIN's and COMMIT's, ~1 ms each on this machine's loopback): nothing here needs more than
        that statement's own snapshot. Rarely more: the tenant's catalog relations when the catalog
        changed since they were cached, concept facts of neighbours outside the catalog."""
        depth = self.settings.subgraph_depth if depth is None else depth
        extra = [k for k in extra_keys if k]
        row = self._read_one("user_graph_load", **user.params(interests=base is None))[0]
        concepts: dict[str, ConceptNode]
        if base is not None:
            concepts = dict(base.concepts)
            rows: Iterable[dict[str, Any]] = refreshed
        else:
            concepts = {}
            columns = row["columns"]
            rows = (dict(zip(columns, r, strict=True)) for r in row["rows"])
            # The versions this graph was read at (a base comes from the caller, who knows its own).
            catalog_version = int(row["catalog_version"])
        for r in rows:
            concepts[r["key"]] = _interest_node(r)
        # Graded attempts: mastery joins the user model (an attempted concept is in the graph
        # even when the user never named it).
        attempted = _apply_mastery(concepts, row["mastery"])
        seeds = seed_keys(concepts, extra, attempted)
        # Visible relations: the tenant's catalog (cached per catalog version) and the user's own,
        # both by index seek. Expanding the user's concepts in Neo4j also walked every other user's
        # relations on the shared concept nodes (~30-50 ms per hop in a busy tenant).
        catalog = self._catalog_edges.get(user.tenant)
        if catalog is None or catalog_version is None or catalog.version != catalog_version:
            known = catalog_version
            catalog = self._read(lambda tx: self._catalog_adjacency(tx, user.tenant, known))
        own_adj = adjacency(row["own_edges"])
        edges = walk(seeds, (catalog.adj, own_adj), depth)
        missing = missing_endpoints(edges, extra, concepts)
        # Catalog neighbours the user never named come from the per-version cache; only others
        # (rare: the user's own concepts are interests already) are read.
        for k in [k for k in missing if k in catalog.facts]:
            concepts[k] = catalog.facts[k]
            missing.discard(k)
        if missing:
            for r in self._read_one("user_concepts_by_key", **user.params(keys=sorted(missing))):
                concepts[r["key"]] = ConceptNode(
                    key=r["key"],
                    name=r["name"],
                    type=r["type"],
                    in_catalog=bool(r["in_catalog"]),
                    critical=bool(r["critical"]),
                )
        kept = kept_edges(edges, concepts)
        # Key order, so the same graph always gives the same ranking down to the last float bit.
        concepts = {k: concepts[k] for k in sorted(concepts)}
        graph = UserGraph(
            tenant=user.tenant,
            user_id=user.user_id,
            concepts=concepts,
            edges=kept,
            now=now or _activity_clock(row["last_ms"]),
            history_tokens=int(row["tokens"]),
            turn_count=int(row["turns"]),
            catalog_deps=catalog.deps,
            language=dominant_language(row["user_languages"]),
        )
        versions = (int(row["version"]), int(row["catalog_version"])) if row["exists"] else None
        return versions, graph

    def _catalog_adjacency(
        self, tx: ManagedTransaction, tenant: str, known_version: int | None = None
    ) -> _CatalogCache:
        """The tenant's catalog relations by concept key, its whole dependency map and its concepts'
        facts, read and built once per catalog version (in `tx`). ``known_version``: the catalog version
        the caller just read (user_version); when it is the cached one, no round trip is made."""
        cached = self._catalog_edges.get(tenant)
        if cached is not None and known_version is not None and cached.version == known_version:
            return cached
        version = int(self._run(tx, "catalog_version", tenant=tenant)[0]["catalog_version"])
        if cached is not None and cached.version == version:
            return cached
        with self._catalog_guard:
            build_lock = self._catalog_build_locks.setdefault(tenant, threading.Lock())
        with build_lock:
            cached = self._catalog_edges.get(tenant)
            if cached is not None and cached.version == version:
                return cached  # built by the reader this one waited for
            return self._build_catalog_cache(tx, tenant, version)

    def _build_catalog_cache(self, tx: ManagedTransaction, tenant: str, version: int) -> _CatalogCache:
        adj = adjacency(self._run_flat(tx, "edges_by_owner", tenant=tenant, edge_owner="catalog"))
        deps = catalog_dependency_map(e for items in adj.values() for _, e in items)
        facts = {
            r["key"]: ConceptNode(
                key=r["key"], name=r["name"], type=r["type"], in_catalog=True, critical=bool(r["critical"])
            )
            for r in self._run_flat(tx, "catalog_concepts", tenant=tenant)
        }
        entry = _CatalogCache(version, adj, deps, facts)
        self._catalog_edges[tenant] = entry
        while len(self._catalog_edges) > 64:
            self._catalog_edges.pop(next(iter(self._catalog_edges)))
        return entry

    # -- weights, tiers, compaction ---------------------------------------------

    def write_weights(
        self,
        user: UserRef,
        rows: Sequence[WeightRow],
        compaction: CompactionRecord | None = None,
        fault: FaultHook | None = None,
    ) -> int:
        """Writes weights and tiers, and records a compaction run, in one transaction."""
        payload = [
            {
                "key": r.key,
                "initial": float(r.initial),
                "propagated": float(r.propagated),
                "final": float(r.final),
                "tier": r.tier.value if r.tier else None,
                "weights_only": r.weights_only,
            }
            for r in rows
        ]

        def work(tx: ManagedTransaction) -> int:
            version: int | None = None
            restored = 0
            # The version bump comes with the first rows (one statement: the user's lock, then the rows).
            for start in range(0, max(1, len(payload)), 5000):
                chunk = payload[start : start + 5000]
                written = self._run(
                    tx,
                    "user_write_weights",
                    bump=1 if version is None else 0,
                    updates=[r for r in chunk if r["weights_only"]],
                    rows=[r for r in chunk if not r["weights_only"]],
                    **user.params(),
                )
                if not written:
                    raise InvalidInput(f"user {user.user_id!r} does not exist", code="USER_NOT_FOUND", status=404)
                version = version if version is not None else int(written[0]["version"])
                restored += written[0]["restored"]
            if fault:
                fault("weights")
            if compaction is not None:
                self._run(
                    tx,
                    "user_record_compaction",
                    run=compaction.run,
                    folded_keys=compaction.folded_keys,
                    folded_names=compaction.folded_names,
                    replace=compaction.replace,
                    **user.params(),
                )
            elif restored:
                # Restored concepts left the summary (their FOLDS links went with the row write).
                self._run(tx, "user_summary_recount", **user.params())
            if fault:
                fault("compaction")
            assert version is not None
            return version

        return self._write(work)

    def compaction_runs(self, user: UserRef, limit: int = 20) -> list[dict[str, Any]]:
        rows = self.read_statement("user_compaction_runs", limit=limit, **user.params())
        return [{k: _iso(v) if k == "at" else v for k, v in r["run"].items()} for r in rows]

    def summary(self, user: UserRef) -> dict[str, Any] | None:
        rows = self.read_statement("user_summary", **user.params())
        if not rows:
            return None
        row = rows[0]
        return {
            "count": row["count"],
            "items": row["items"],
            "last_run": row["last_run"],
            "updated_at": _iso(row["updated_at"]),
        }

    # -- provenance -------------------------------------------------------------

    def concept_mentions(self, user: UserRef, key: str) -> list[dict[str, Any]]:
        rows = self.read_statement("user_concept_mentions", key=key, **user.params())
        return [{**r, "ts": _iso(r["ts"])} for r in rows]

    def concept_stances(self, user: UserRef, key: str) -> list[dict[str, Any]]:
        rows = self.read_statement("user_concept_stances", key=key, **user.params())
        return [{**r, "ts": _iso(r["ts"])} for r in rows]

    def concept_relations(self, user: UserRef, key: str) -> list[dict[str, Any]]:
        return self.read_statement("user_concept_relations", key=key, **user.params())

    def turns(self, user: UserRef) -> list[dict[str, Any]]:
        return [{**r, "ts": _iso(r["ts"])} for r in self.read_statement("user_turns", **user.params())]

    def counts(self, user: UserRef) -> dict[str, Any]:
        return self.read_statement("user_counts", **user.params())[0]

    def list_users(self, tenant: str, limit: int = 1000) -> list[str]:
        return [r["user_id"] for r in self.read_statement("user_list", tenant=tenant, limit=limit)]

    def search_concepts(
        self, tenant: str, query: str, limit: int = 5, user: UserRef | None = None
    ) -> list[dict[str, Any]]:
        """Catalog concepts matching `query`, plus the user's own when a user is given."""
        lucene = _lucene_escape(query)
        if not lucene.strip():
            return []
        return self.read_statement(
            "concepts_search", tenant=tenant, query=lucene, limit=limit, user_id=user.user_id if user else None
        )

    def tenant_user_count(self, tenant: str) -> int:
        return int(self.read_statement("tenant_user_count", tenant=tenant)[0]["users"])

    def concept_user_counts(self, tenant: str, keys: Sequence[str]) -> dict[str, int]:
        """How many of the tenant's users have each concept (document frequency); absent keys: 0."""
        rows = self.read_statement("concept_user_counts", tenant=tenant, keys=list(keys))
        counts = dict.fromkeys(keys, 0)
        counts.update({r["key"]: int(r["users"]) for r in rows})
        return counts

    def existing_concepts(self, tenant: str, keys: Sequence[str], catalog_only: bool = False) -> dict[str, str]:
        rows = self.read_statement("concepts_by_keys", tenant=tenant, keys=list(keys))
        return {r["key"]: r["name"] for r in rows if r["in_catalog"] or not catalog_only}

    # -- forgetting ------------------------------------------------------------------

    def forget_concept(self, user: UserRef, key: str, names: Sequence[str] = ()) -> dict[str, int]:
        """Removes the user's data about one concept, and the concept from the compaction summary
        (``names``: how the summary lists it)."""

        def work(tx: ManagedTransaction) -> dict[str, int]:
            if not self._run(tx, "user_bump_version", **user.params()):
                return {"provenance": 0, "relations": 0, "interests": 0}
            rows = self._run(tx, "user_forget_concept", key=key, **user.params())
            self._run(tx, "attempts_forget_concept", key=key, **user.params())
            self._run(tx, "user_summary_forget", names=sorted({key, *names}), **user.params())
            self._delete_orphan_concepts(tx, user, [key])
            return rows[0] if rows else {"provenance": 0, "relations": 0, "interests": 0}

        return self._write(work, constraint_retry=True)

    def erase_user(self, user: UserRef) -> dict[str, int]:
        """Removes every node and relationship that belongs to the user; catalog data stays."""

        def work(tx: ManagedTransaction) -> dict[str, int]:
            # The user's node first: the user's own writes wait for the erase (or it for them).
            self._run(tx, "user_bump_version", **user.params())
            keys = [r["key"] for r in self._run(tx, "user_interests", **user.params())]
            keys += [r["key"] for r in self._run(tx, "attempts_user_mastery", **user.params())]
            attempts = self._run(tx, "attempts_erase_user", **user.params())[0]
            turns = self._run(tx, "user_erase_turns", **user.params())[0]["turns"]
            rest = self._run(tx, "user_erase_rest", **user.params())[0]
            if keys:
                self._delete_orphan_concepts(tx, user, keys)
            return {"turns": turns, **rest, **attempts}

        return self._write(work, constraint_retry=True)

    # -- graded attempts and BKT (cypher/attempts.cypher; planning in attempt_plan.py) ------------

    def write_attempts(
        self, user: UserRef, attempts: Sequence[NewAttempt], defaults: BKTParams, seq_base: int
    ) -> AttemptPlan:
        """Stores a batch of graded attempts and the mastery they produce, in one transaction.

        Planned under the user's lock from what is stored at that moment: re-sent ids are duplicates,
        a re-sent id with other content rolls everything back (409), late attempts replay their concept.
        """

        self._ensure_concepts(user.tenant, "attempts_merge_concepts", _attempt_concepts(attempts))

        def work(tx: ManagedTransaction) -> AttemptPlan:
            version = int(self._run(tx, "ingest_lock_user", **user.params(turn_ids=[]))[0]["version"])
            ids = sorted({a.attempt_id for a in attempts})
            existing = {
                r["attempt_id"]: r for r in self._run(tx, "attempts_existing", attempt_ids=ids, **user.params())
            }
            keys = sorted({a.key for a in attempts})
            params = dict.fromkeys(keys, defaults)
            for r in self._run(tx, "kt_params_of_keys", keys=keys, tenant=user.tenant):
                params[r["key"]] = bkt_params(r["bkt"], defaults)
            states = {
                r["key"]: StoredState(
                    float(r["mastery"]),
                    int(r["attempts"] or 0),
                    int(r["correct"] or 0),
                    r["last_ms"],
                    r["last_attempt"],
                )
                for r in self._run(tx, "attempts_state", keys=keys, **user.params())
            }
            replay = needs_replay([a for a in attempts if a.attempt_id not in existing], states)
            history: dict[str, list[StoredAttempt]] = {}
            if replay:
                for r in self._run(tx, "attempts_history", keys=replay, **user.params()):
                    history.setdefault(r["key"], []).append(
                        StoredAttempt(r["attempt_id"], r["key"], bool(r["correct"]), int(r["ts_ms"]))
                    )
            plan = plan_attempts(attempts, existing, states, params, history, seq_base)
            plan.version_before = plan.version_after = version
            unused = sorted({a.key for a in attempts} - {c["key"] for c in plan.concepts})
            if unused:  # concepts created beforehand only for re-sent attempts must not outlive the call
                self._delete_orphan_concepts(tx, user, unused)
            if plan.new_rows:
                plan.version_after = version + 1  # attempts_write bumps it
                self._run(tx, "attempts_merge_concepts", concepts=plan.concepts, **user.params())
                self._run(tx, "attempts_write", masteries=plan.mastery_rows, attempts=plan.new_rows, **user.params())
                if plan.rewrite_rows:
                    self._run(tx, "attempts_rewrite", rows=plan.rewrite_rows, **user.params())
            return plan

        return self._write(work, constraint_retry=True)

    def concept_attempts(self, user: UserRef, key: str) -> list[dict[str, Any]]:
        rows = self.read_statement("attempts_of_concept", key=key, **user.params())
        return [
            {**r, "ts": _iso(r["ts"]), "valid_from": _iso(r["valid_from"]), "valid_to": _iso(r["valid_to"])}
            for r in rows
        ]

    def user_attempts(self, user: UserRef) -> list[dict[str, Any]]:
        rows = self.read_statement("attempts_of_user", **user.params())
        return [{**r, "ts": _iso(r["ts"]), "valid_to": _iso(r["valid_to"])} for r in rows]

    def attempt_counts(self, user: UserRef) -> dict[str, int]:
        return self.read_statement("attempts_count_user", **user.params())[0]

    def mastery_as_of(self, user: UserRef, as_of: datetime) -> list[dict[str, Any]]:
        return self.read_statement("attempts_mastery_as_of", as_of=as_of.isoformat(), **user.params())

    def stances_as_of(self, user: UserRef, as_of: datetime) -> list[dict[str, Any]]:
        return self.read_statement("attempts_stances_as_of", as_of=as_of.isoformat(), **user.params())

    def kt_attempts(self, tenant: str) -> list[dict[str, Any]]:
        return self.read_statement("kt_attempts", tenant=tenant)

    def store_kt_fit(self, tenant: str, rows: list[dict[str, Any]], report: dict[str, Any], method: str) -> int:
        """Stores fitted parameters on the tenant's concepts; returns the new fit version."""
        payload = [
            {"key": r["key"], "bkt": json.dumps(r["bkt"], sort_keys=True), "attempts": r["attempts"]} for r in rows
        ]

        def work(tx: ManagedTransaction) -> int:
            self._run(tx, "tenant_write_lock", tenant=tenant)
            out = self._run(
                tx,
                "kt_store_fit",
                tenant=tenant,
                rows=payload,
                method=method,
                report=json.dumps(report, sort_keys=True),
                attempts=sum(r["attempts"] for r in rows),
            )
            return int(out[0]["version"]) if out else 0

        return self._write(work)

    def kt_params(self, tenant: str) -> list[dict[str, Any]]:
        return [{**r, "bkt": json.loads(r["bkt"])} for r in self.read_statement("kt_params", tenant=tenant)]

    def kt_fits(self, tenant: str, limit: int = 20) -> list[dict[str, Any]]:
        return [
            {**r, "at": _iso(r["at"]), "report": json.loads(r["report"]) if r["report"] else None}
            for r in self.read_statement("kt_fits", tenant=tenant, limit=limit)
        ]

    # -- catalog ------------------------------------------------------------------------

    def replace_catalog(self, tenant: str, rows: CatalogRows) -> int:
        """Replaces a tenant's catalog in one transaction; returns the new catalog version."""

        def work(tx: ManagedTransaction) -> int:
            version = self._run(tx, "catalog_begin_replace", tenant=tenant, catalog_json=rows.catalog_json)[0]
            for start in range(0, len(rows.concepts), 5000):
                self._run(tx, "catalog_merge_concepts", tenant=tenant, concepts=rows.concepts[start : start + 5000])
            for rel_type in sorted(rows.relations, key=lambda r: r.value):
                self._run(tx, "catalog_merge_relations", rel_type, tenant=tenant, relations=rows.relations[rel_type])
            self._run(tx, "catalog_delete_orphans", tenant=tenant)
            return int(version["catalog_version"])

        return self._write(work)

    def get_catalog(self, tenant: str) -> tuple[dict[str, Any] | None, int]:
        rows = self.read_statement("catalog_get", tenant=tenant)
        if not rows or not rows[0]["catalog_json"]:
            return None, int(rows[0]["catalog_version"]) if rows else 0
        return json.loads(rows[0]["catalog_json"]), int(rows[0]["catalog_version"])

    def catalog_version(self, tenant: str) -> int:
        return int(self.read_statement("catalog_version", tenant=tenant)[0]["catalog_version"])

    def catalog_concepts(self, tenant: str) -> list[dict[str, Any]]:
        return self.read_statement("catalog_concepts", tenant=tenant)

    # -- bulk loading (the scale benchmark's fixture only) ------------------------

    def bulk_existing_users(self, tenant: str, user_ids: Sequence[str]) -> set[str]:
        rows = self.read_statement("bulk_existing_users", tenant=tenant, user_ids=list(user_ids))
        return {r["user_id"] for r in rows}

    def bulk_load_users(self, tenant: str, users: Sequence[BulkUser]) -> dict[str, int]:
        """Writes whole new users in one transaction (cypher/bulk.cypher), for the scale benchmark.

        Not an ingest path: no tenant or user lock, no duplicate checks (the caller passes only users
        that do not exist: :meth:`bulk_existing_users`); a user id that exists fails the batch on the
        user_key constraint and nothing of it is written.
        """
        rows = bulk_rows(users)

        def work(tx: ManagedTransaction) -> dict[str, int]:
            if rows.concepts:
                concepts = [rows.concepts[k] for k in sorted(rows.concepts)]
                self._run(tx, "ingest_merge_concepts", tenant=tenant, concepts=concepts)
            self._run(tx, "bulk_users", tenant=tenant, users=rows.users)
            self._run(tx, "bulk_turns", tenant=tenant, turns=rows.turns)
            self._run(tx, "bulk_mentions", tenant=tenant, mentions=rows.mentions)
            if rows.stances:
                self._run(tx, "bulk_stances", tenant=tenant, stances=rows.stances)
            for rel_type in sorted(rows.relations, key=lambda r: r.value):
                self._run(tx, "bulk_relations", rel_type, tenant=tenant, relations=rows.relations[rel_type])
            self._run(tx, "bulk_interests", tenant=tenant, interests=rows.interests)
            return {
                "users": len(rows.users),
                "turns": len(rows.turns),
                "mentions": len(rows.mentions),
                "interests": len(rows.interests),
                "relations": sum(len(v) for v in rows.relations.values()),
            }

        return self._write(work)

    def bulk_tenant_size(self, tenant: str) -> dict[str, int]:
        return self.read_statement("bulk_tenant_size", tenant=tenant)[0]

    def profile_statement(self, name: str, rel_type: RelationType | None = None, **params: Any) -> dict[str, Any]:
        """PROFILEs a named statement in a transaction that is rolled back (writes leave nothing behind):
        total db hits, rows, and the operators that cost the most (the scale benchmark's report)."""

        def flatten(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
            yield plan
            for child in plan.get("children", []):
                yield from flatten(child)

        with self._driver.session(database=self.database) as session, session.begin_transaction() as tx:
            result = tx.run("PROFILE " + self.cypher.text(name, rel_type), params)
            rows = len(list(result))
            profile = result.consume().profile or {}
            tx.rollback()
        ops = [(op.get("operatorType", "?"), int(op.get("dbHits", 0))) for op in flatten(profile)]
        top = sorted(ops, key=lambda o: -o[1])[:3]
        return {"db_hits": sum(h for _, h in ops), "rows": rows, "top_operators": [f"{o} {h}" for o, h in top]}


def _pipelined_begin(session: Session) -> AbstractContextManager[Any]:
    """The driver's managed transactions wait for BEGIN's answer before the first statement: a round trip
    of its own in every transaction (3 for a one-statement read: BEGIN, RUN+PULL, COMMIT; on this loaded
    2-core machine each costs 2-5 ms). Inside this context the driver sends BEGIN with the first statement,
    as its own ``Driver.execute_query`` does (same retries, errors raised from the statement instead). A
    driver without the switch (a private attribute) runs as before."""
    switch = getattr(session, "_pipelined_begin", None)
    return switch if isinstance(switch, AbstractContextManager) else nullcontext()


def _prior_row(row: dict[str, Any]) -> dict[str, Any]:
    """ingest_reads' prior_* columns as an ingest_prior_turn row."""
    return {"role": row["prior_role"], "language": row["prior_language"], "mentions": row["prior_mentions"]}


def _prior_turn(rows: list[dict[str, Any]]) -> PriorTurn | None:
    """An ingest_prior_turn row as a PriorTurn (None without a row)."""
    if not rows:
        return None
    row = rows[0]
    mentions = []
    for m in row["mentions"]:
        try:
            mentions.append(
                ConceptMention(
                    key=m["key"],
                    name=m["name"],
                    type=m["type"],
                    language=row["language"] or "en",
                    start=m["start"],
                    end=m["end"],
                    surface=m["surface"] or "",
                    extractor=m["extractor"],
                    confidence=m["confidence"],
                    in_catalog=bool(m["in_catalog"]),
                )
            )
        except ValidationError:
            continue  # a mention stored by an older version: not an antecedent
    return PriorTurn(row["role"], tuple(mentions))


def _check_conflicts(rows: Iterable[dict[str, Any]], expected: dict[str, tuple[str, str, str]]) -> None:
    """Stored turns (ingest_existing_turns rows) whose session, role or text differ from what is sent."""
    clashes = [
        r
        for r in rows
        if r["turn_id"] in expected and (r["session_id"], r["role"], r["text"]) != expected[r["turn_id"]]
    ]
    if clashes:
        shown = "; ".join(
            f"{r['turn_id']!r} (stored in session {r['session_id']!r} as role {r['role']!r})" for r in clashes[:5]
        )
        raise TurnIdConflict(
            f"turn id(s) already stored for this user with other text, role or session: {shown}. "
            "Turn ids are unique per user: send a new id, or the identical turn to retry. "
            "Nothing of this call was stored."
        )


_LUCENE_SPECIAL = set('+-&|!(){}[]^"~*?:\\/')


def _lucene_escape(text: str) -> str:
    """Escapes Lucene query syntax so focus text is searched literally.

    Lower-cased too: the analyzer lower-cases anyway, and AND / OR / NOT / TO are operators
    only in capitals (a focus of "AND" was a Lucene parse error, a 500).
    """
    return "".join("\\" + ch if ch in _LUCENE_SPECIAL else ch for ch in text.lower())


def _relation_pairs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (source, target) pair: its turns in order, distinct extractors and cues, best confidence.

    Sorted by pair, so concurrent writers lock concept nodes in the same order.
    """
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: (r["source_key"], r["target_key"], r["turn_id"])):
        pair = pairs.setdefault(
            (r["source_key"], r["target_key"]),
            {
                "source_key": r["source_key"],
                "target_key": r["target_key"],
                "pair": f"{r['source_key']}\t{r['target_key']}",
                "turn_ids": [],
                "extractors": [],
                "cues": [],
                "confidence": 0.0,
            },
        )
        pair["turn_ids"].append(r["turn_id"])
        if r["extractor"] not in pair["extractors"]:
            pair["extractors"].append(r["extractor"])
        if r["cue"] not in pair["cues"]:
            pair["cues"].append(r["cue"])
        pair["confidence"] = max(pair["confidence"], r["confidence"])
    return list(pairs.values())


def _turn_concepts(turns: Sequence[StoredTurn]) -> dict[str, dict[str, Any]]:
    """The concept rows (key, name, type, language) a batch of turns names, in key order."""
    concepts: dict[str, dict[str, Any]] = {}
    for t in turns:
        ex = t.extraction
        for m in ex.concepts:
            concepts.setdefault(m.key, {"key": m.key, "name": m.name, "type": m.type, "language": m.language})
        for s in ex.stances:
            concepts.setdefault(s.key, {"key": s.key, "name": s.name, "type": None, "language": ex.language})
        for r in ex.relations:
            concepts.setdefault(
                r.source_key, {"key": r.source_key, "name": r.source_name, "type": None, "language": ex.language}
            )
            concepts.setdefault(
                r.target_key, {"key": r.target_key, "name": r.target_name, "type": None, "language": ex.language}
            )
    return {k: concepts[k] for k in sorted(concepts)}


def _expect(rows: list[dict[str, Any]], column: str, wanted: int) -> None:
    """A linking statement matched every row it was given; fewer means a concept was deleted meanwhile."""
    got = int(rows[0][column]) if rows else 0
    if got != wanted:
        raise ConceptGone(f"{column}: {got} of {wanted} rows linked (a concept vanished during the write)")


def _attempt_concepts(attempts: Sequence[NewAttempt]) -> list[dict[str, Any]]:
    """The concept rows (key, name, language) a batch of graded attempts names, first naming wins."""
    concepts: dict[str, dict[str, Any]] = {}
    for a in attempts:
        concepts.setdefault(a.key, {"key": a.key, "name": a.name, "language": a.language})
    return list(concepts.values())
