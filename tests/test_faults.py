"""No lost or doubled data (issue 8.2): crash Neo4j (SIGKILL) and the API process (SIGKILL) in the
middle of a stream of ingest calls over HTTP.

Runs against a DEDICATED Neo4j server started by this module (its own home and ports), never the
shared one, and against the API as a real OS process. Promises checked:

- every call that returned 2xx is in the graph after the restart;
- every call that failed left nothing — or, in the unavoidable commit-then-crash window (the
  transaction committed, the answer was lost), its turns are there exactly once, and a retry
  reports them as duplicates;
- while Neo4j is down the API answers 503 with Retry-After, and recovers by itself;
- retrying every call after the fault gives the same graph and counts as a run without the fault;
- concurrent ingest for one user from several clients equals sequential ingest.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from dataclasses import dataclass, field

import httpx
import pytest

from graphmem.neo4j_server import LocalNeo4j
from graphmem.store import Neo4jStore, UserRef
from tests.reliability import (
    FUTURE,
    MIXED_TEXTS,
    ApiProcess,
    dedicated_neo4j_settings,
    keys_spec,
    run_id,
    settings_env,
)

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

KEY, TENANT = "fault-key", "fault-tenant"
CALLS = 20


def _turn(i: int) -> dict:
    text = f"{MIXED_TEXTS[i % len(MIXED_TEXTS)]} ({i})"
    return {"turn_id": f"c{i}", "role": "user" if i % 4 else "assistant", "text": text, "ts": FUTURE.format(1 + i % 9)}


def call_body(i: int) -> dict:
    """Call i: its new turn and, inside a session, a repeat of the previous call's turn (a client retry
    folded into the next batch). A turn is always sent with the same session, text and time."""
    session = i // 4
    turns = [_turn(i)] + ([_turn(i - 1)] if i % 4 else [])
    return {"session_id": f"s{session}", "turns": turns}


@dataclass
class Outcome:
    status: int | None = None  # None: transport error (connection refused / reset)
    retry_after: str | None = None
    accepted: list[str] = field(default_factory=list)


def send(client: httpx.Client, uid: str, i: int) -> Outcome:
    try:
        r = client.post(f"/v1/users/{uid}/turns", json=call_body(i))
    except httpx.TransportError:
        return Outcome()
    out = Outcome(r.status_code, r.headers.get("retry-after"))
    if r.status_code == 200:
        out.accepted = r.json()["accepted"]
    return out


@pytest.fixture(scope="module")
def neo(settings, tmp_path_factory):
    local = LocalNeo4j(dedicated_neo4j_settings(settings, tmp_path_factory.mktemp("neo4j-faults")))
    local.start()
    yield local
    local.stop()


@pytest.fixture(scope="module")
def env(neo):
    return {**settings_env(neo.settings), "GRAPHMEM_API_KEYS": keys_spec({KEY: TENANT})}


@pytest.fixture(scope="module")
def dstore(neo):
    st = Neo4jStore(neo.settings)
    yield st
    st.close()


@pytest.fixture(scope="module")
def api(env, tmp_path_factory):
    proc = ApiProcess(env, log_path=tmp_path_factory.mktemp("api") / "api.log").start()
    yield proc
    proc.stop()


def state(client: httpx.Client, store: Neo4jStore, uid: str) -> dict:
    graph = client.get(f"/v1/users/{uid}/graph").json()
    counts = store.counts(UserRef(TENANT, uid))
    turns = store.turns(UserRef(TENANT, uid))
    return {
        "counts": counts,
        "turns": sorted(t["turn_id"] for t in turns),
        "nodes": graph["nodes"],
        "edges": graph["edges"],
    }


def assert_same_as_reference(got: dict, want: dict) -> None:
    assert got["counts"] == want["counts"]
    assert got["turns"] == want["turns"]
    assert got["edges"] == want["edges"]
    for g, w in zip(got["nodes"], want["nodes"], strict=True):
        # The whole node, stored tier included (a rerank lost to the crash must have been redone).
        assert g == w, (g, w)


def test_neo4j_crash_mid_stream_loses_and_doubles_nothing(neo, api, dstore):
    uid, ref = "crash-" + run_id(), "ref-" + run_id()
    with api.client(KEY, timeout=30) as c:
        for i in range(CALLS):  # the run without a fault
            assert send(c, ref, i).status == 200
        reference = state(c, dstore, ref)
        assert reference["counts"]["turns"] == CALLS

        outcomes: dict[int, Outcome] = {}
        killed_at = threading.Event()

        def stream() -> None:
            for i in range(CALLS):
                outcomes[i] = send(c, uid, i)
                if i == 7:
                    killed_at.set()
                    time.sleep(0.3)  # let the kill land while the next calls are in flight

        sender = threading.Thread(target=stream)
        sender.start()
        assert killed_at.wait(120)
        time.sleep(0.15)
        neo.kill()  # SIGKILL: a crash, mid-stream
        # While Neo4j is down: 503 with Retry-After, for writes and reads alike.
        down = [c.get(f"/v1/users/{ref}/context"), c.post(f"/v1/users/{uid}/turns", json=call_body(0))]
        for r in down:
            assert r.status_code == 503 and r.json()["error"]["code"] == "STORE_UNAVAILABLE", r.text
            assert int(r.headers["retry-after"]) > 0
        assert c.get("/readyz").status_code == 503
        neo.start()
        sender.join(300)
        assert not sender.is_alive()

        # The API recovers by itself (same process, no restart).
        deadline = time.monotonic() + 60
        while c.get(f"/v1/users/{ref}/context").status_code != 200:
            assert time.monotonic() < deadline, "the API did not recover after Neo4j came back"
            time.sleep(0.5)
        assert c.get("/readyz").status_code == 200

        ok = {i for i, o in outcomes.items() if o.status == 200}
        failed = sorted(set(range(CALLS)) - ok)
        assert failed, "the crash hit no call; the test proved nothing"
        assert all(outcomes[i].status in (503, None) for i in failed), {i: outcomes[i] for i in failed}
        assert all(outcomes[i].retry_after for i in failed if outcomes[i].status == 503)
        retry_converges(c, dstore, uid, ok, failed, reference, "neo4j crash")
        # ... and retrying again changes nothing (exactly once).
        for i in range(CALLS):
            assert send(c, uid, i).accepted == []
        assert_same_as_reference(state(c, dstore, uid), reference)


def retry_converges(c, dstore, uid: str, ok: set[int], failed: list[int], reference, what: str) -> None:
    """After a crash: every acknowledged call is durable; a failed call left nothing or (commit-then-crash
    window) all of its new turn, never half; retrying every call, as a client does, gives exactly the
    fault-free result."""
    stored = set(state(c, dstore, uid)["turns"])
    assert all(f"c{i}" in stored for i in ok)
    in_window = [i for i in failed if f"c{i}" in stored]
    print(f"{what}: {len(ok)} ok, {len(failed)} failed, {len(in_window)} committed before the crash")
    for i in range(CALLS):
        out = send(c, uid, i)
        assert out.status == 200
        assert out.accepted == ([f"c{i}"] if i in failed and i not in in_window else [])
    assert_same_as_reference(state(c, dstore, uid), reference)


def test_api_crash_mid_stream_loses_and_doubles_nothing(env, dstore, tmp_path_factory):
    uid, ref = "apicrash-" + run_id(), "apiref-" + run_id()
    proc = ApiProcess(env, log_path=tmp_path_factory.mktemp("api2") / "api.log").start()
    try:
        with proc.client(KEY, timeout=30) as c:
            for i in range(CALLS):
                assert send(c, ref, i).status == 200
            reference = state(c, dstore, ref)

        outcomes: dict[int, Outcome] = {}

        def stream() -> None:
            with proc.client(KEY, timeout=30) as c:
                for i in range(CALLS):
                    outcomes[i] = send(c, uid, i)

        # Two clients in parallel, so that calls are in flight when the process dies.
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(stream)]
            while len(outcomes) < 8:
                time.sleep(0.02)
            proc.kill()  # SIGKILL, as a crash
            for f in futures:
                f.result(120)
        failed = sorted(i for i, o in outcomes.items() if o.status != 200)
        assert failed and all(outcomes[i].status is None for i in failed)
        ok = set(range(CALLS)) - set(failed)

        proc.start()  # same port, same settings
        with proc.client(KEY, timeout=30) as c:
            retry_converges(c, dstore, uid, ok, failed, reference, "api crash")
    finally:
        proc.stop()


def test_concurrent_ingest_from_several_clients_equals_sequential(api, dstore):
    uid, seq = "conc-" + run_id(), "seq-" + run_id()
    with api.client(KEY, timeout=60) as c:
        for i in range(CALLS):
            assert send(c, seq, i).status == 200
        want = state(c, dstore, seq)

    def client_run(offset: int) -> list[Outcome]:
        # Each client sends every call (overlapping batches and the very same turns), in its own order.
        with api.client(KEY, timeout=60) as c:
            return [send(c, uid, (i + offset) % CALLS) for i in range(CALLS)]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = [o for outs in pool.map(client_run, (0, 7, 14, 21)) for o in outs]
    assert all(o.status == 200 for o in results)
    accepted = [t for o in results for t in o.accepted]
    assert sorted(accepted) == sorted(f"c{i}" for i in range(CALLS))  # each turn accepted exactly once
    with api.client(KEY) as c:
        assert_same_as_reference(state(c, dstore, uid), want)
