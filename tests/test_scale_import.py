"""The scale benchmark's importer (bench/scale_import.py): how one exported user becomes its copies.

Pure: no Neo4j. The expected CSV lines are derived by hand from the importer's rules (copy c of user i is
user c*N + i; the tenant and a user's own non-user ids change with the copy; an empty list is a quoted cell).
"""

from __future__ import annotations

import csv
import io

import pytest
from neo4j.time import DateTime

from bench import scale_import as si


def _node(eid: str, labels: str, **props: object) -> si.Entity:
    e = si.Entity(eid, labels, dict(props))
    e.owner = si._owner_of(labels, e.props)
    return e


def _copy(line: str, new_user: int, copy: str, tenant: str) -> list[str]:
    text = line.replace(si.U_MARK, f"{new_user:07d}").replace(si.C_MARK, copy).replace(si.T_MARK, tenant)
    return next(csv.reader(io.StringIO(text)))


def test_csv_types_follow_the_values_and_widen_long_to_double() -> None:
    assert si._csv_type(3) == "long"
    assert si._csv_type(True) == "boolean"
    assert si._csv_type([1.5, 2]) == "double[]"
    assert si._csv_type([]) is None
    assert si._csv_type(DateTime(2026, 12, 3, 1, 2, 3)) == "datetime"
    assert si._merge_type("long", "double") == "double"
    assert si._merge_type(None, "string[]") == "string[]"
    with pytest.raises(ValueError):
        si._merge_type("string", "long")


def test_a_users_turn_is_renamed_in_every_copy_and_keeps_its_text() -> None:
    user = _node("4:x:1", "User", tenant="bench-scale", id="scale-0000007", name="scale-0000007")
    turn = _node(
        "4:x:2",
        "Turn",
        tenant="bench-scale",
        user_id="scale-0000007",
        id="scale-0000007-t3",
        text='He said "scale-0000007, hi", then left',
        tags=[],
    )
    w = si.Writer(own_ids=set())
    w.scan([user, turn], [])
    cols = w.columns(w.node_types, "Turn")
    assert [c for c, _ in cols] == ["id", "tags", "tenant", "text", "user_id"]
    line = w.template(turn, cols, node=True, id_of={"4:x:1": user, "4:x:2": turn})
    row = _copy(line, 2007, "1", "bench-scale")
    assert row == [
        "4:x:2#1@bench-scale",
        "scale-0002007-t3",
        "",  # the quoted empty cell: an empty array, not a missing property
        "bench-scale",
        'He said "scale-0002007, hi", then left',
        "scale-0002007",
    ]
    assert '""' in line.split(",")[2]


def test_shared_concepts_keep_their_id_and_follow_the_tenant() -> None:
    concept = _node("4:x:9", "Concept", tenant="bench-scale", key="gibbs_sampling", name="Gibbs sampling")
    user = _node("4:x:1", "User", tenant="bench-scale", id="scale-0000003")
    about = si.Entity("5:x:1", "MENTIONS", {"user_id": "scale-0000003", "key": "gibbs_sampling"}, "4:x:1", "4:x:9")
    about.owner = si._owner_of("MENTIONS", about.props)
    w = si.Writer(own_ids=set())
    w.scan([user, concept], [about])
    cols = w.columns(w.rel_types, "MENTIONS")
    line = w.template(about, cols, node=False, id_of={"4:x:1": user, "4:x:9": concept})
    assert _copy(line, 3, "s", "bench-scale-smoke")[:3] == [
        "4:x:1#s@bench-scale-smoke",
        "4:x:9@bench-scale-smoke",
        "gibbs_sampling",
    ]


def test_a_users_own_random_ids_differ_between_copies_and_tenants() -> None:
    run = _node("4:x:5", "CompactionRun", tenant="bench-scale", user_id="scale-0000001", id="run-abc")
    summary = _node("4:x:6", "Summary", tenant="bench-scale", user_id="scale-0000001", last_run="run-abc")
    w = si.Writer(own_ids={"run-abc"})
    w.scan([run, summary], [])
    ids = {"4:x:5": run, "4:x:6": summary}
    run_line = w.template(run, w.columns(w.node_types, "CompactionRun"), node=True, id_of=ids)
    sum_line = w.template(summary, w.columns(w.node_types, "Summary"), node=True, id_of=ids)
    a = _copy(run_line, 2001, "1", "bench-scale")[1]
    b = _copy(run_line, 1, "s", "bench-scale-smoke")[1]
    assert a != b and a.startswith("run-abc~") and b.startswith("run-abc~")
    assert _copy(sum_line, 2001, "1", "bench-scale")[1] == a  # the reference follows its run


def test_ownership_flows_to_nodes_attached_to_a_user() -> None:
    user = _node("u", "User", tenant="bench-scale", id="scale-0000004")
    session = _node("s", "Session", tenant="bench-scale", user_id="scale-0000004", id="s00000")
    turn = _node("t", "Turn", tenant="bench-scale", user_id="scale-0000004", id="scale-0000004-t0")
    concept = _node("c", "Concept", tenant="bench-scale", key="entropy")
    had = si.Entity("r1", "HAD_SESSION", {}, "u", "s")
    expresses = si.Entity("r2", "EXPRESSES", {"stance": "interested"}, "t", "c")
    si.classify([user, session, turn, concept], [had, expresses])
    assert (had.owner, expresses.owner, concept.owner) == (4, 4, None)
