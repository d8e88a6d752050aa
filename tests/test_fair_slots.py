"""FairSlots: the store's write admission serves waiters in arrival order (no overtaking).

threading.BoundedSemaphore, used before, lets a newcomer take a slot released for a woken waiter; under
steady load one ingest lost that race for 60 s in a fresh-clone CI run of tests/test_load.py.
"""

from __future__ import annotations

import threading
import time

import pytest

from graphmem.fair_slots import FairSlots


def _wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.001)


def _start_waiter(slots: FairSlots, got: list[str], name: str, hold: threading.Event) -> threading.Thread:
    def run() -> None:
        with slots:
            got.append(name)
            hold.wait(10)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_released_slot_goes_to_the_waiter_not_to_a_newcomer():
    slots = FairSlots(1)
    assert slots.acquire()
    got: list[str] = []
    hold = threading.Event()
    waiter = _start_waiter(slots, got, "waiter", hold)
    _wait_for(lambda: slots.waiting == 1)
    slots.release()
    # A newcomer arriving right after the release does not overtake (the std semaphore lets it).
    assert not slots.acquire(blocking=False)
    _wait_for(lambda: got == ["waiter"])
    hold.set()
    waiter.join(10)
    assert slots.acquire(blocking=False)  # the slot is free again once the waiter is done


def test_waiters_are_served_in_arrival_order():
    slots = FairSlots(1)
    slots.acquire()
    got: list[str] = []
    hold = threading.Event()
    hold.set()  # each waiter releases at once
    threads = []
    for i in range(5):
        threads.append(_start_waiter(slots, got, f"w{i}", hold))
        _wait_for(lambda n=i + 1: slots.waiting == n)
    slots.release()
    for t in threads:
        t.join(10)
    assert got == [f"w{i}" for i in range(5)]


def test_at_most_slots_holders_at_once():
    slots = FairSlots(2)
    inside, peak = [0], [0]
    guard = threading.Lock()

    def run() -> None:
        for _ in range(50):
            with slots:
                with guard:
                    inside[0] += 1
                    peak[0] = max(peak[0], inside[0])
                time.sleep(0.0005)
                with guard:
                    inside[0] -= 1

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert peak[0] == 2
    assert slots.waiting == 0 and slots.acquire(blocking=False) and slots.acquire(blocking=False)
    assert not slots.acquire(blocking=False)


def test_zero_slots_is_refused():
    with pytest.raises(ValueError):
        FairSlots(0)
