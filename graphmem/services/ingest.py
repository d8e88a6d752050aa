"""Ingest: validate a batch of turns, extract what is new, store it, then queue the re-rank.

Validation (:func:`prepare_turns`) is pure and runs before anything is read or written, so bad input
stores nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from .. import consistency
from ..errors import GraphmemError, InvalidInput
from ..models import IngestResult, TurnEditLog, TurnExtraction, TurnIn, clean_text, derive_turn_id, utc_now
from ..settings import Settings
from ..store import IngestWrite, PendingTurn, StoredTurn, UserRef
from .core import Core, check_service_id
from .rerank import Reranker


@dataclass(frozen=True)
class PreparedTurn:
    turn_id: str
    role: str
    text: str
    ts: datetime


def prepare_turns(settings: Settings, session_id: str, turns: Sequence[TurnIn], now: datetime) -> list[PreparedTurn]:
    """Checks a batch and gives each turn its id, clean text and timestamp; raises InvalidInput (4xx)."""
    check_service_id(session_id, "session_id", settings.max_id_length)
    if not turns:
        raise InvalidInput("turns must hold at least one turn", code="EMPTY_BATCH")
    if len(turns) > settings.max_turns_per_call:
        raise InvalidInput(f"at most {settings.max_turns_per_call} turns per call", code="BATCH_TOO_LARGE")
    latest = now + timedelta(seconds=settings.max_clock_skew_s)
    prepared: list[PreparedTurn] = []
    for i, t in enumerate(turns):
        text = clean_text(t.text)
        if not text.strip():
            raise InvalidInput(f"turns[{i}].text is empty", code="EMPTY_TEXT")
        if len(text) > settings.max_text_chars:
            raise InvalidInput(
                f"turns[{i}].text has {len(text)} characters; the limit is {settings.max_text_chars}",
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
                f"{settings.max_clock_skew_s:g} s ahead of the server clock "
                f"{now.isoformat(timespec='seconds')})",
                code="TS_IN_FUTURE",
            )
        turn_id = t.turn_id if t.turn_id is not None else derive_turn_id(session_id, t.role, text, t.ts)
        check_service_id(turn_id, "turn_id", settings.max_id_length)
        prepared.append(PreparedTurn(turn_id, t.role, text, ts))
    given = [t.turn_id for t in turns if t.turn_id is not None]
    repeated = sorted({i for i in given if given.count(i) > 1}) if len(set(given)) < len(given) else []
    if repeated:
        # Ids derived from content may repeat (the same text twice is one turn); a client's may not.
        raise InvalidInput(
            f"the batch holds turn id(s) {', '.join(map(repr, repeated[:5]))} more than once",
            code="DUPLICATE_TURN_ID",
        )
    return prepared


class IngestService:
    def __init__(self, core: Core, reranker: Reranker) -> None:
        self.core = core
        self.reranker = reranker
        # Timings of the last ingest, read by the API's metrics.
        self.last_extraction_seconds = 0.0

    def ingest(
        self,
        tenant: str,
        user_id: str,
        session_id: str,
        turns: Sequence[TurnIn],
        *,
        edit_log: bool = True,
        rank_now: bool = False,
    ) -> IngestResult:
        """Extract → validate → store a batch of turns for one user, then re-rank.

        Duplicate turn ids (already stored, or repeated in the batch) are no-ops.
        When the call returns, the turns are committed. ``edit_log=False`` leaves ``edits`` empty. With
        ``rerank_in_background`` (the default) the re-rank runs after the answer (services/rerank.py,
        BackgroundReranker); a read before it ranks on read, so it reflects these turns. ``rank_now``: the
        caller reads the user's block next (an ingest returning it): the graph is ranked here, under the lock
        the write took, and the background's weights write-back waits for that read's answer.
        """
        core, store = self.core, self.core.store
        user = core.user(tenant, user_id)
        prepared = prepare_turns(core.settings, session_id, turns, utc_now())

        # One read transaction: skip extraction for turns already stored (the store re-checks inside its
        # write transaction; a stored turn with this id but other text, role or session is a 409,
        # TURN_ID_CONFLICT), the catalog version (which extractor), and, when a user turn heads the new
        # ones, the session's last stored turn (what it may refer back to).
        reads = store.ingest_reads(user, session_id, [PendingTurn(p.turn_id, p.role, p.text, p.ts) for p in prepared])
        fresh = [p for p in prepared if p.turn_id not in reads.known]
        prior = reads.prior if fresh else None
        extractor_version, extractor = core.extractor_entry(tenant, reads.catalog_version)
        started = time.perf_counter()
        extractions = extractor.extract([p.text for p in fresh], [p.role for p in fresh], prior) if fresh else []
        self.last_extraction_seconds = time.perf_counter() - started
        by_id: dict[str, TurnExtraction] = {}
        stored: list[StoredTurn] = []
        for p, ex in zip(fresh, extractions, strict=True):
            by_id[p.turn_id] = ex
            stored.append(StoredTurn(p.turn_id, p.role, p.text, p.ts, ex.language, core.counter.count(p.text), ex))

        with core.user_lock(user):
            write = store.write_ingest(user, session_id, stored)
            chain = consistency.current()
            if chain is not None and write.catalog_version is not None:
                # The token's versions come from the write's own transaction: no read after it.
                chain.wrote(tenant, user_id, (write.version_after, write.catalog_version))
            if write.accepted:
                if core.background is not None:
                    # Committed: answer now; ranking follows in the background (or on the next read).
                    core.background.submit(user, write, extractor_version)
                    if rank_now:
                        # Before the background can take the user (it needs this lock): no wait for its
                        # thread, no rank-on-read race, and its write-back after the block (hold).
                        core.background.hold(user)
                        self.reranker.rank_written(user, write, extractor_version)
                else:
                    self._rerank(user, write, extractor_version)
        accepted = set(write.accepted)
        edits = (
            [
                TurnEditLog(
                    turn_id=p.turn_id,
                    session_id=session_id,
                    role=p.role,
                    duplicate=p.turn_id not in accepted,
                    extraction=by_id.get(p.turn_id) if p.turn_id in accepted else None,
                )
                for p in prepared
            ]
            if edit_log
            else []
        )
        return IngestResult(
            user_id=user_id,
            session_id=session_id,
            accepted=write.accepted,
            duplicates=[p.turn_id for p in prepared if p.turn_id not in accepted],
            edits=edits,
        )

    def _rerank(self, user: UserRef, write: IngestWrite, extractor_version: int) -> None:
        try:
            self.reranker.after_write(user, write, extractor_version)
        except GraphmemError as exc:
            if exc.code != "USER_NOT_FOUND":
                raise
            # A DELETE of the user committed between this call's write and its re-rank: the
            # turns just written were erased with the user. Say so rather than a bare 404.
            raise GraphmemError(
                f"user {user.user_id!r} was erased while this call was being processed; "
                "its turns were erased too (send them again to start afresh)",
                code="USER_ERASED",
                status=409,
            ) from exc
