"""Rows for bulk-loading whole users (cypher/bulk.cypher): pure, no Cypher.

Used only by the scale benchmark's loader (bench/scale_bench.py) through
:meth:`graphmem.store.Neo4jStore.bulk_load_users`. Interest rows are derived from
the turns exactly as ``ingest_refresh_interests`` derives them from stored
mentions and stances, so a bulk-loaded user reads like one written turn by turn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .models import ConceptMention, RelationType

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


def mention_row(turn_id: str, m: ConceptMention, role: str, ts: Any) -> dict[str, Any]:
    """One MENTIONS row as the ingest and bulk statements take it (ingest and the bulk loader share it)."""
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
    }


def _epoch_s(ts: datetime) -> float:
    # As ingest_refresh_interests stores it: epochMillis / 1000.0.
    return int(ts.timestamp() * 1000) / 1000.0


def bulk_rows(users: Sequence[BulkUser]) -> BulkRows:
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
        names: dict[str, str] = {}
        # key -> turn -> (ts, role): a turn naming a concept several times counts once.
        mentioned: dict[str, dict[str, tuple[datetime, str]]] = defaultdict(dict)
        stance_of: dict[str, tuple[datetime, int, str]] = {}
        pairs: dict[tuple[RelationType, str, str], dict[str, Any]] = {}
        seq = 0
        for t in turns:
            out.turns.append(
                {
                    "user_id": bu.user_id,
                    "session_id": bu.session_id,
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
                names.setdefault(m.key, m.name)
                out.concepts.setdefault(m.key, {"key": m.key, "name": m.name, "type": m.type, "language": m.language})
                mentioned[m.key].setdefault(t.turn_id, (t.ts, t.role))
                out.mentions.append({"user_id": bu.user_id, **mention_row(t.turn_id, m, t.role, t.ts)})
            for s in ex.stances:
                names.setdefault(s.key, s.name)
                out.concepts.setdefault(s.key, {"key": s.key, "name": s.name, "type": None, "language": ex.language})
                seq += 1
                stance_of[s.key] = max(stance_of.get(s.key, (t.ts, -1, "")), (t.ts, seq, s.stance.value))
                out.stances.append(
                    {
                        "user_id": bu.user_id,
                        "turn_id": t.turn_id,
                        "key": s.key,
                        "stance": s.stance.value,
                        "start": s.start,
                        "end": s.end,
                        "cue": s.cue,
                        "confidence": s.confidence,
                        "ts": t.ts,
                        "seq": seq,
                    }
                )
            for r in ex.relations:
                for key, name in ((r.source_key, r.source_name), (r.target_key, r.target_name)):
                    names.setdefault(key, name)
                    out.concepts.setdefault(key, {"key": key, "name": name, "type": None, "language": ex.language})
                pair = pairs.setdefault(
                    (r.type, r.source_key, r.target_key),
                    {
                        "user_id": bu.user_id,
                        "owner": f"u:{bu.user_id}",
                        "source_key": r.source_key,
                        "target_key": r.target_key,
                        "pair": f"{r.source_key}\t{r.target_key}",
                        "turn_ids": [],
                        "extractors": [],
                        "cues": [],
                        "confidence": 0.0,
                    },
                )
                pair["turn_ids"].append(t.turn_id)
                if r.extractor.value not in pair["extractors"]:
                    pair["extractors"].append(r.extractor.value)
                if r.cue not in pair["cues"]:
                    pair["cues"].append(r.cue)
                pair["confidence"] = max(pair["confidence"], r.confidence)
        for (rel_type, _, _), row in sorted(pairs.items(), key=lambda kv: (kv[0][0].value, kv[0][1], kv[0][2])):
            out.relations[rel_type].append(row)
        for key in sorted(names):
            seen = sorted((ts, tid, role) for tid, (ts, role) in mentioned.get(key, {}).items())
            stance = stance_of.get(key)
            out.interests.append(
                {
                    "user_id": bu.user_id,
                    "key": key,
                    "own_name": names[key],
                    "mentions": len(seen),
                    "user_mentions": sum(1 for _, _, role in seen if role == "user"),
                    "assistant_mentions": sum(1 for _, _, role in seen if role == "assistant"),
                    "first_seen": seen[0][0] if seen else None,
                    "last_seen": seen[-1][0] if seen else None,
                    "mention_ts": [_epoch_s(ts) for ts, _, _ in seen],
                    "mention_roles": [role for _, _, role in seen],
                    "sessions": [bu.session_id] if seen else [],
                    "evidence": [tid for _, tid, _ in seen][-20:],
                    "stance": stance[2] if stance else None,
                    "stance_at": stance[0] if stance else None,
                }
            )
    return out
