"""Planning an attempts write (pure): which attempts are new, duplicate or conflicting, and the BKT
figures each new one produces, given what the store holds.

The store runs :func:`plan_attempts` inside the write transaction (after taking the user's lock), so
two concurrent calls never apply attempts to a stale mastery. An attempt that is older than the
concept's latest stored attempt (a client sending a late batch) makes the whole concept replay from
its prior in time order, and the stored attempts' figures are rewritten: mastery never depends on
arrival order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

from graphmem.bkt import BKTParams, step
from graphmem.errors import GraphmemError


class AttemptConflict(GraphmemError):
    code = "ATTEMPT_ID_CONFLICT"
    status = 409


@dataclass(frozen=True)
class NewAttempt:
    attempt_id: str
    key: str
    name: str
    language: str
    correct: bool
    ts: datetime  # timezone-aware
    item_id: str | None
    index: int  # position in the request

    @property
    def ts_ms(self) -> int:
        return to_ms(self.ts)


@dataclass(frozen=True)
class StoredState:
    """A concept's mastery as stored for the user (None fields: never attempted)."""

    mastery: float | None = None
    attempts: int = 0
    correct: int = 0
    last_ms: int | None = None
    last_attempt: str | None = None


@dataclass(frozen=True)
class StoredAttempt:
    attempt_id: str
    key: str
    correct: bool
    ts_ms: int


@dataclass
class AttemptPlan:
    # Response rows, in request order: attempt_id, concept key/name, duplicate, predicted, mastery.
    results: list[dict[str, Any]] = field(default_factory=list)
    new_rows: list[dict[str, Any]] = field(default_factory=list)  # attempts to create
    rewrite_rows: list[dict[str, Any]] = field(default_factory=list)  # stored attempts to update
    mastery_rows: list[dict[str, Any]] = field(default_factory=list)  # one per concept touched
    concepts: list[dict[str, Any]] = field(default_factory=list)  # concepts to merge
    replayed: list[str] = field(default_factory=list)  # concept keys replayed from their prior
    # The user's graph version before and after the write (set by the store).
    version_before: int = 0
    version_after: int = 0

    @property
    def accepted(self) -> list[str]:
        return [r["attempt_id"] for r in self.results if not r["duplicate"]]

    @property
    def duplicates(self) -> list[str]:
        return [r["attempt_id"] for r in self.results if r["duplicate"]]


def to_ms(ts: datetime) -> int:
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return int(ts.timestamp() * 1000)


def from_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000.0, tz=UTC).isoformat()


def _same(a: NewAttempt, stored: Mapping[str, Any]) -> bool:
    return (
        a.key == stored["key"]
        and a.correct == stored["correct"]
        and a.ts_ms == stored["ts_ms"]
        and a.item_id == stored["item_id"]
    )


def split_new(
    attempts: Sequence[NewAttempt],
    existing: Mapping[str, Mapping[str, Any]],
) -> tuple[list[NewAttempt], dict[str, Mapping[str, Any]]]:
    """(attempts to apply, duplicates by id with what was stored). Same id with different content —
    against the store or earlier in the same request — raises :class:`AttemptConflict`."""
    fresh: list[NewAttempt] = []
    seen: dict[str, NewAttempt] = {}
    dups: dict[str, Mapping[str, Any]] = {}
    for a in attempts:
        stored = existing.get(a.attempt_id)
        if stored is not None:
            if not _same(a, stored):
                raise AttemptConflict(
                    f"attempt {a.attempt_id!r} is already stored with different content (concept, correct, ts "
                    "or item_id); send a new attempt_id for a new attempt"
                )
            dups[a.attempt_id] = stored
            continue
        earlier = seen.get(a.attempt_id)
        if earlier is not None:
            if not _same(
                a, {"key": earlier.key, "correct": earlier.correct, "ts_ms": earlier.ts_ms, "item_id": earlier.item_id}
            ):
                raise AttemptConflict(f"attempt {a.attempt_id!r} appears twice in the request with different content")
            continue
        seen[a.attempt_id] = a
        fresh.append(a)
    return fresh, dups


class _Tally(NamedTuple):
    """A concept's mastery after the request and what it rests on."""

    mastery: float
    attempts: int
    correct: int
    last_ms: int
    last_id: str


def plan_attempts(
    attempts: Sequence[NewAttempt],
    existing: Mapping[str, Mapping[str, Any]],
    states: Mapping[str, StoredState],
    params: Mapping[str, BKTParams],
    history: Mapping[str, Sequence[StoredAttempt]],
    seq_base: int,
) -> AttemptPlan:
    """Everything the store writes for one request.

    ``existing``: stored attempts with these ids (``attempts_existing`` rows by id); ``states``: the
    stored mastery per concept key; ``params``: BKT parameters per key; ``history``: the stored
    attempts of concepts that need a replay (see :func:`needs_replay`); ``seq_base``: a number larger
    than any earlier request's (orders attempts with equal timestamps by arrival).

    Per concept (in key order) the new attempts, in time then request order, either continue from
    the stored mastery (:func:`_continue`) or, when one is older than the latest stored attempt,
    the concept is replayed from its prior (:func:`_replay`); then one result per request attempt.
    """
    fresh, dups = split_new(attempts, existing)
    plan = AttemptPlan()
    figures: dict[str, tuple[float, float]] = {}  # attempt id -> (predicted, mastery)
    by_key: dict[str, list[NewAttempt]] = {}
    for a in fresh:
        by_key.setdefault(a.key, []).append(a)
    for key in sorted(by_key):
        group = sorted(by_key[key], key=lambda a: (a.ts_ms, a.index))
        p = params[key]
        st = states.get(key) or StoredState()
        first = group[0]
        plan.concepts.append({"key": key, "name": first.name, "language": first.language})
        seqs = {a.attempt_id: seq_base + a.index for a in group}
        if st.last_ms is not None and first.ts_ms < st.last_ms:
            plan.replayed.append(key)
            tally = _replay(group, history.get(key, ()), p, seqs, plan, figures)
        else:
            tally = _continue(group, st, p, seqs, plan, figures)
        plan.mastery_rows.append(_mastery_row(key, first.name, tally, p))
    plan.results = _results(attempts, dups, figures)
    return plan


def _trace_rows(mastery: float, answers: Sequence[tuple[str, bool, int]], p: BKTParams) -> list[dict[str, Any]]:
    """BKT over (attempt id, correct, ts_ms) from ``mastery``: one row per answer with its
    predicted P(correct), the mastery after it and its validity span (:func:`_close`)."""
    rows: list[dict[str, Any]] = []
    for attempt_id, correct, ts_ms in answers:
        s = step(mastery, correct, p)
        rows.append({"attempt_id": attempt_id, "predicted": s.predicted, "mastery": s.mastery, "ts_ms": ts_ms})
        mastery = s.mastery
    _close(rows)
    return rows


def _replay(
    group: list[NewAttempt],
    stored: Sequence[StoredAttempt],
    p: BKTParams,
    seqs: Mapping[str, int],
    plan: AttemptPlan,
    figures: dict[str, tuple[float, float]],
) -> _Tally:
    """A late attempt: the concept replayed from its prior over stored and new attempts in time
    order (stored ones first on equal times); the stored attempts' figures are rewritten."""
    merged = [(s.attempt_id, s.correct, s.ts_ms, False) for s in stored]
    merged += [(a.attempt_id, a.correct, a.ts_ms, True) for a in group]
    merged.sort(key=lambda x: (x[2], x[3]))  # stable: stored order, then request order
    rows = _trace_rows(p.prior, [(i, c, t) for i, c, t, _ in merged], p)
    news = {a.attempt_id: a for a in group}
    for (_, _, _, is_new), r in zip(merged, rows, strict=True):
        figures[r["attempt_id"]] = (r["predicted"], r["mastery"])
        if is_new:
            plan.new_rows.append(_new_row(news[r["attempt_id"]], r, seqs))
        else:
            plan.rewrite_rows.append({k: r[k] for k in ("attempt_id", "predicted", "mastery", "valid_to", "closed_by")})
    last = rows[-1]
    return _Tally(last["mastery"], len(rows), sum(1 for x in merged if x[1]), last["ts_ms"], last["attempt_id"])


def _continue(
    group: list[NewAttempt],
    st: StoredState,
    p: BKTParams,
    seqs: Mapping[str, int],
    plan: AttemptPlan,
    figures: dict[str, tuple[float, float]],
) -> _Tally:
    """New attempts after the stored ones: BKT goes on from the stored mastery (else the prior), and
    the stored latest attempt's span closes where this group begins."""
    start = st.mastery if st.mastery is not None else p.prior
    rows = _trace_rows(start, [(a.attempt_id, a.correct, a.ts_ms) for a in group], p)
    for a, r in zip(group, rows, strict=True):
        figures[a.attempt_id] = (r["predicted"], r["mastery"])
        plan.new_rows.append(_new_row(a, r, seqs))
    if st.last_attempt is not None:
        plan.rewrite_rows.append(
            {
                "attempt_id": st.last_attempt,
                "predicted": None,
                "mastery": None,
                "valid_to": from_ms(group[0].ts_ms),
                "closed_by": group[0].attempt_id,
            }
        )
    right = st.correct + sum(1 for a in group if a.correct)
    return _Tally(rows[-1]["mastery"], st.attempts + len(group), right, group[-1].ts_ms, group[-1].attempt_id)


def _mastery_row(key: str, name: str, tally: _Tally, p: BKTParams) -> dict[str, Any]:
    return {
        "key": key,
        "name": name,
        "mastery": tally.mastery,
        "attempts": tally.attempts,
        "correct": tally.correct,
        "last_ts": from_ms(tally.last_ms),
        "last_attempt": tally.last_id,
        "params": json.dumps(p.to_dict(), sort_keys=True),
    }


def _results(
    attempts: Sequence[NewAttempt],
    dups: Mapping[str, Mapping[str, Any]],
    figures: Mapping[str, tuple[float, float]],
) -> list[dict[str, Any]]:
    """One response row per request attempt, in request order. An attempt already stored is a
    duplicate with its stored figures, as often as the request repeats it; a new one repeated in the
    request is applied once, and the repeat is a duplicate with the figures it got."""
    out: list[dict[str, Any]] = []
    reported: set[str] = set()
    for a in attempts:
        row: dict[str, Any] = {"attempt_id": a.attempt_id, "concept": a.key, "name": a.name}
        if a.attempt_id in dups:  # stored before this request: every repeat reports the stored figures
            d = dups[a.attempt_id]
            row |= {"duplicate": True, "predicted": _round(d.get("predicted")), "mastery": _round(d.get("mastery"))}
        else:
            predicted, mastery = figures[a.attempt_id]
            row |= {
                "duplicate": a.attempt_id in reported,
                "predicted": round(predicted, 6),
                "mastery": round(mastery, 6),
            }
        reported.add(a.attempt_id)
        out.append(row)
    return out


def needs_replay(attempts: Sequence[NewAttempt], states: Mapping[str, StoredState]) -> list[str]:
    """Concept keys with a new attempt older than the concept's latest stored attempt."""
    out = set()
    for a in attempts:
        st = states.get(a.key)
        if st is not None and st.last_ms is not None and a.ts_ms < st.last_ms:
            out.add(a.key)
    return sorted(out)


def _close(rows: list[dict[str, Any]]) -> None:
    """Each row's span ends where the next attempt on the concept begins (the last one stays open)."""
    for cur, nxt in zip(rows, rows[1:]):
        cur["valid_to"] = from_ms(nxt["ts_ms"])
        cur["closed_by"] = nxt["attempt_id"]
    if rows:
        rows[-1]["valid_to"] = None
        rows[-1]["closed_by"] = None


def _new_row(a: NewAttempt, r: Mapping[str, Any], seqs: Mapping[str, int]) -> dict[str, Any]:
    return {
        "attempt_id": a.attempt_id,
        "key": a.key,
        "name": a.name,
        "correct": a.correct,
        "ts": a.ts.isoformat(),
        "item_id": a.item_id,
        "seq": seqs[a.attempt_id],
        "predicted": r["predicted"],
        "mastery": r["mastery"],
        "valid_to": r["valid_to"],
        "closed_by": r["closed_by"],
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)
