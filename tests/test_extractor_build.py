"""A tenant's extractor is built once, however many requests need it at the same moment (single flight).

The stall of tests/test_load.py: after a catalog change (an upload to another API process; an upload to this one
builds the extractor at once), the first request of each of 20 clients found no
extractor for the new catalog version and built its own (services/core.py, Core.extractor_entry). On a
cold process a build costs ~1.6 s of CPU (the catalog matcher loads wordfreq's frequency lists); 20 of
them at once on a loaded 2-core machine left the last request waiting past the client's 60 s timeout.
Here the builds are made slow on purpose (a subclass of the real extractor that waits at a barrier no
build reaches twice) and counted: one build for N concurrent requests, and every request gets it.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from graphmem.extraction.catalog_io import load_catalog
from graphmem.extraction.extractor import ConceptExtractor
from graphmem.memory_store import InMemoryStore
from graphmem.service import GraphMemory
from graphmem.services import core as core_module
from graphmem.services.admin import catalog_rows
from graphmem.settings import PROJECT_ROOT, Settings

TENANT = "single-flight"
REQUESTS = 12


class SlowCountingExtractor(ConceptExtractor):
    """The real extractor, whose construction takes long enough that every request arrives meanwhile."""

    builds = 0
    lock = threading.Lock()
    all_waiting = threading.Event()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        with SlowCountingExtractor.lock:
            SlowCountingExtractor.builds += 1
        # Every request is in extractor_entry by now (or waits behind this build): see the test.
        SlowCountingExtractor.all_waiting.wait(10)
        super().__init__(*args, **kwargs)


@pytest.fixture
def slow_builds(monkeypatch: pytest.MonkeyPatch) -> type[SlowCountingExtractor]:
    SlowCountingExtractor.builds = 0
    SlowCountingExtractor.all_waiting = threading.Event()
    monkeypatch.setattr(core_module, "ConceptExtractor", SlowCountingExtractor)
    return SlowCountingExtractor


def test_concurrent_requests_after_a_catalog_change_build_the_extractor_once(
    settings: Settings, slow_builds: type[SlowCountingExtractor]
) -> None:
    mem = GraphMemory(settings, store=InMemoryStore(settings))
    catalog = load_catalog(PROJECT_ROOT / "demo" / "catalog.yaml")
    slow_builds.all_waiting.set()  # the upload builds its own extractor at once (AdminService.put_catalog)
    mem.put_catalog(TENANT, catalog)
    slow_builds.builds, slow_builds.all_waiting = 0, threading.Event()
    # Another API process uploads the catalog again: this process's extractor is now stale.
    mem.store.replace_catalog(TENANT, catalog_rows(catalog))
    arrived = threading.Semaphore(0)
    real_entry = mem.core.extractor_entry

    def request(_: int) -> tuple[int, ConceptExtractor]:
        arrived.release()
        return real_entry(TENANT)

    with ThreadPoolExecutor(REQUESTS) as pool:
        futures = [pool.submit(request, i) for i in range(REQUESTS)]
        for _ in range(REQUESTS):
            assert arrived.acquire(timeout=10)
        # All requests have entered extractor_entry; give them a moment to reach the build, then let
        # the build(s) finish. Without single flight each of them is inside its own build by now.
        threading.Event().wait(0.3)
        slow_builds.all_waiting.set()
        entries = [f.result(timeout=60) for f in futures]

    assert slow_builds.builds == 1
    assert len({id(extractor) for _, extractor in entries}) == 1
    assert {version for version, _ in entries} == {mem.store.catalog_version(TENANT)}


def test_a_catalog_change_builds_a_new_extractor(settings: Settings, slow_builds: type[SlowCountingExtractor]) -> None:
    slow_builds.all_waiting.set()
    mem = GraphMemory(settings, store=InMemoryStore(settings))
    catalog = load_catalog(PROJECT_ROOT / "demo" / "catalog.yaml")
    mem.put_catalog(TENANT, catalog)
    # The upload built it: the first turns of every user do not pay for it.
    assert slow_builds.builds == 1 and mem.core.extractors[TENANT][0] == mem.store.catalog_version(TENANT)
    first = mem.core.extractor_entry(TENANT)
    assert mem.core.extractor_entry(TENANT) is first
    mem.put_catalog(TENANT, catalog)
    second = mem.core.extractor_entry(TENANT)
    assert second[0] == first[0] + 1 and second[1] is not first[1]
    assert slow_builds.builds == 2
