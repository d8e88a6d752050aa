"""Rows for bulk-loading whole users (cypher/bulk.cypher): pure, no Cypher.

Used only by the scale benchmark's loader (bench/scale_bench.py) through
:meth:`graphmem.store.Neo4jStore.bulk_load_users`. Interest rows are derived from
the turns exactly as ``ingest_write_all`` derives them from stored
mentions and stances, so a bulk-loaded user reads like one written turn by turn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .models import ConceptMention, RelationMention, RelationType, StanceMention
from .zh_name_likeness import mention_marks

if TYPE_CHECKING:
    from .store import StoredTurn


@dataclass(frozen=True)
class BulkUser:
    """A new user with one session of turns (their ground-truth extraction attached)."""

    user_id: str
    session_id: str
    turns: Sequence[StoredTurn]


@dataclass
class BulkRows:
    users: list[dict[str, Any]]
    turns: list[dict[str, Any]]
    concepts: dict[str, dict[str, Any]]
    mentions: list[dict[str, Any]]
    stances: list[dict[str, Any]]
    relations: dict[RelationType, list[dict[str, Any]]]
    interests: list[dict[str, Any]]


def mention_row(turn_id: str, m: ConceptMention, role: str, ts: Any, text: str) -> dict[str, Any]:
    """One MENTIONS row as the ingest and bulk statements take it (ingest and the bulk loader share it); ``text`` is
    the turn's, for the marks around a Chinese name (graphmem/zh_name_likeness.py)."""
    return {
        "turn_id": turn_id,
        "key": m.key,
        "start": m.start,
        "end": m.end,
        "surface": m.surface,
        "extractor": m.extractor.value,
        "confidence": m.confidence,
        "role": role,
        "ts": ts,
        # None (no property) for all but Chinese names, whose marks graphmem/zh_name_likeness.py reads.
        "marks": list(mention_marks(text, m.start, m.end, m.surface, m.language, role)) or None,
    }


def _epoch_s(ts: datetime) -> float:
    # As ingest_write_all stores it: epochMillis / 1000.0.
    return int(ts.timestamp() * 1000) / 1000.0


def bulk_rows(users: Sequence[BulkUser]) -> BulkRows:
    """All rows for ``users``; a user without turns is left out."""
    out = BulkRows([], [], {}, [], [], defaultdict(list), [])
    for bu in users:
        turns = sorted(bu.turns, key=lambda t: (t.ts, t.turn_id))
        if not turns:
            continue
        out.users.append(
            {
                "user_id": bu.user_id,
                "sessions": [{"session_id": bu.session_id, "started_at": turns[0].ts, "last_at": turns[-1].ts}],
            }
        )
        user = _UserRows(bu, out)
        for t in turns:
            user.read(t)
        user.finish()
    return out


class _UserRows:
    """One user's rows, added to ``out`` while its turns are read in time order; relations and
    interests, which sum over the turns, at :meth:`finish`."""

    def __init__(self, bu: BulkUser, out: BulkRows) -> None:
        self.bu = bu
        self.out = out
        self.names: dict[str, str] = {}  # key -> the name it was first seen under
        # key -> turn -> (ts, role): a turn naming a concept several times counts once.
        self.mentioned: dict[str, dict[str, tuple[datetime, str]]] = defaultdict(dict)
        self.stance_of: dict[str, tuple[datetime, int, str]] = {}  # key -> newest (ts, seq, stance)
        self.marks: dict[str, set[str]] = defaultdict(set)  # key -> its mentions' marks
        self.pairs: dict[tuple[RelationType, str, str], dict[str, Any]] = {}
        self.seq = 0

    def read(self, t: StoredTurn) -> None:
        self.out.turns.append(
            {
                "user_id": self.bu.user_id,
                "session_id": self.bu.session_id,
                "turn_id": t.turn_id,
                "role": t.role,
                "text": t.text,
                "ts": t.ts,
                "language": t.language,
                "tokens": t.tokens,
            }
        )
        ex = t.extraction
        for m in ex.concepts:
            self._concept(m.key, m.name, m.type, m.language)
            self.mentioned[m.key].setdefault(t.turn_id, (t.ts, t.role))
            row = mention_row(t.turn_id, m, t.role, t.ts, t.text)
            self.marks[m.key].update(row["marks"] or ())
            self.out.mentions.append({"user_id": self.bu.user_id, **row})
        for s in ex.stances:
            self._concept(s.key, s.name, None, ex.language)
            self._stance(t, s)
        for r in ex.relations:
            self._concept(r.source_key, r.source_name, None, ex.language)
            self._concept(r.target_key, r.target_name, None, ex.language)
            self._relation(t.turn_id, r)

    def _concept(self, key: str, name: str, type_: str | None, language: str) -> None:
        self.names.setdefault(key, name)
        self.out.concepts.setdefault(key, {"key": key, "name": name, "type": type_, "language": language})

    def _stance(self, t: StoredTurn, s: StanceMention) -> None:
        self.seq += 1
        self.stance_of[s.key] = max(self.stance_of.get(s.key, (t.ts, -1, "")), (t.ts, self.seq, s.stance.value))
        self.out.stances.append(
            {
                "user_id": self.bu.user_id,
                "turn_id": t.turn_id,
                "key": s.key,
                "stance": s.stance.value,
                "start": s.start,
                "end": s.end,
                "cue": s.cue,
                "confidence": s.confidence,
                "ts": t.ts,
                "seq": self.seq,
            }
        )

    def _relation(self, turn_id: str, r: RelationMention) -> None:
        """One relation row per (type, source, target): the turns, extractors and cues that state it,
        and the highest confidence."""
        pair = self.pairs.setdefault(
            (r.type, r.source_key, r.target_key),
            {
                "user_id": self.bu.user_id,
                "owner": f"u:{self.bu.user_id}",
                "source_key": r.source_key,
                "target_key": r.target_key,
                "pair": f"{r.source_key}\t{r.target_key}",
                "turn_ids": [],
                "extractors": [],
                "cues": [],
                "confidence": 0.0,
            },
        )
        pair["turn_ids"].append(turn_id)
        if r.extractor.value not in pair["extractors"]:
            pair["extractors"].append(r.extractor.value)
        if r.cue not in pair["cues"]:
            pair["cues"].append(r.cue)
        pair["confidence"] = max(pair["confidence"], r.confidence)

    def finish(self) -> None:
        for (rel_type, _, _), row in sorted(self.pairs.items(), key=lambda kv: (kv[0][0].value, kv[0][1], kv[0][2])):
            self.out.relations[rel_type].append(row)
        for key in sorted(self.names):
            self.out.interests.append(self._interest(key))

    def _interest(self, key: str) -> dict[str, Any]:
        """The concept's interest row as ``ingest_write_all`` computes it."""
        seen = sorted((ts, tid, role) for tid, (ts, role) in self.mentioned.get(key, {}).items())
        stance = self.stance_of.get(key)
        return {
            "user_id": self.bu.user_id,
            "key": key,
            "own_name": self.names[key],
            "mentions": len(seen),
            "user_mentions": sum(1 for _, _, role in seen if role == "user"),
            "assistant_mentions": sum(1 for _, _, role in seen if role == "assistant"),
            "first_seen": seen[0][0] if seen else None,
            "last_seen": seen[-1][0] if seen else None,
            "mention_ts": [_epoch_s(ts) for ts, _, _ in seen],
            "mention_roles": [role for _, _, role in seen],
            "sessions": [self.bu.session_id] if seen else [],
            "evidence": [tid for _, tid, _ in seen][-20:],
            "context_marks": sorted(self.marks.get(key, ())),
            "stance": stance[2] if stance else None,
            "stance_at": stance[0] if stance else None,
        }
