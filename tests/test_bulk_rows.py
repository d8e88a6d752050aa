"""bulk_rows on a hand-built user (no database): interest rows summed over turns as the ingest
statement sums them, one relation row per (type, source, target). Expected rows are hand-derived."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graphmem.bulk_rows import BulkUser, bulk_rows
from graphmem.models import (
    ConceptMention,
    ExtractorName,
    RelationMention,
    RelationType,
    Stance,
    StanceMention,
    TurnExtraction,
)
from graphmem.store import StoredTurn

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = T0 + timedelta(minutes=1)


def mention(key: str, start: int) -> ConceptMention:
    return ConceptMention(
        key=key,
        name=key.upper(),
        start=start,
        end=start + 1,
        surface=key,
        extractor=ExtractorName.catalog,
        confidence=1.0,
        in_catalog=True,
    )


def relation(cue: str, extractor: ExtractorName, conf: float) -> RelationMention:
    return RelationMention(
        source_key="a",
        source_name="A",
        type=RelationType.prerequisite,
        target_key="b",
        target_name="B",
        start=0,
        end=1,
        extractor=extractor,
        confidence=conf,
        cue=cue,
    )


def test_rows_of_one_user() -> None:
    # Given out of order: the assistant's turn (t1, T0) names a twice and b, and relates them;
    # the user's turn (t2, T1) names a, likes it, and relates a and b again by co-occurrence.
    late = StoredTurn(
        "t2",
        "user",
        "a",
        T1,
        "en",
        1,
        TurnExtraction(
            language="en",
            concepts=[mention("a", 0)],
            stances=[StanceMention(key="a", name="A", stance=Stance.interested, start=0, end=1, confidence=0.9)],
            relations=[relation("with", ExtractorName.cooccurrence, 0.2)],
        ),
    )
    early = StoredTurn(
        "t1",
        "assistant",
        "a a b",
        T0,
        "en",
        3,
        TurnExtraction(
            language="en",
            concepts=[mention("a", 0), mention("a", 2), mention("b", 4)],
            relations=[relation("before", ExtractorName.pattern, 0.8)],
        ),
    )
    rows = bulk_rows([BulkUser("u", "s", [late, early]), BulkUser("nobody", "s", [])])
    assert rows.users == [{"user_id": "u", "sessions": [{"session_id": "s", "started_at": T0, "last_at": T1}]}]
    assert [t["turn_id"] for t in rows.turns] == ["t1", "t2"]
    assert [(m["turn_id"], m["key"], m["role"]) for m in rows.mentions] == [
        ("t1", "a", "assistant"),
        ("t1", "a", "assistant"),
        ("t1", "b", "assistant"),
        ("t2", "a", "user"),
    ]
    assert [(s["turn_id"], s["key"], s["stance"], s["seq"]) for s in rows.stances] == [("t2", "a", "interested", 1)]
    (rel,) = rows.relations[RelationType.prerequisite]
    assert (rel["owner"], rel["pair"], rel["turn_ids"]) == ("u:u", "a\tb", ["t1", "t2"])
    assert (rel["extractors"], rel["cues"], rel["confidence"]) == (["pattern", "cooccurrence"], ["before", "with"], 0.8)
    a, b = rows.interests
    # a: one mention per turn (t1's two count once), one by each role; the stance of t2.
    assert (a["key"], a["own_name"], a["mentions"], a["user_mentions"], a["assistant_mentions"]) == ("a", "A", 2, 1, 1)
    assert (a["first_seen"], a["last_seen"], a["evidence"], a["mention_roles"]) == (
        T0,
        T1,
        ["t1", "t2"],
        ["assistant", "user"],
    )
    assert a["mention_ts"] == [T0.timestamp(), T1.timestamp()] and a["sessions"] == ["s"]
    assert (a["stance"], a["stance_at"]) == ("interested", T1)
    assert (b["key"], b["mentions"], b["user_mentions"], b["stance"], b["stance_at"]) == ("b", 1, 0, None, None)
    assert set(rows.concepts) == {"a", "b"} and rows.concepts["a"]["type"] is None
