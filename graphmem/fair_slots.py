"""A first-come, first-served counting semaphore (the store's write admission).

``threading.Semaphore`` is not fair: a released slot wakes a waiter, but a thread that calls ``acquire``
before the woken one runs takes the slot, and the woken one goes back to the end of the queue. Under steady
load one request can lose that race again and again: in a fresh-clone CI run of ``tests/test_load.py`` an
ingest waited 60 s for a write slot while others came and went. Here a released slot is handed to the
longest waiter directly, so a waiter's delay is bounded by the queue ahead of it.
"""

from __future__ import annotations

import threading
from collections import deque
from types import TracebackType

__all__ = ["FairSlots"]


class FairSlots:
    """``slots`` holders at once; waiters are served in arrival order. Use as a context manager."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("slots must be at least 1")
        self._free = slots
        self._guard = threading.Lock()
        # One event per waiting thread, oldest first; setting it hands that thread a slot.
        self._waiters: deque[threading.Event] = deque()

    @property
    def waiting(self) -> int:
        """How many threads wait for a slot now."""
        with self._guard:
            return len(self._waiters)

    def acquire(self, blocking: bool = True) -> bool:
        with self._guard:
            # A free slot goes to a newcomer only when nobody waits for it: no overtaking.
            if self._free and not self._waiters:
                self._free -= 1
                return True
            if not blocking:
                return False
            handed = threading.Event()
            self._waiters.append(handed)
        handed.wait()
        return True

    def release(self) -> None:
        with self._guard:
            if self._waiters:
                self._waiters.popleft().set()  # the slot passes on without ever being free
            else:
                self._free += 1

    def __enter__(self) -> FairSlots:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
