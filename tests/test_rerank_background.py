"""The re-rank off the request path (services/rerank.py, BackgroundReranker), through the in-memory store.

Ingest commits and answers; the re-rank runs in a background thread, coalesced per user; a read before it
ranks on read (read-your-writes) and leaves only the weights write-back queued. The write-back is held
back for real (a store whose ``write_weights`` waits on an event), so each test sees the window it is
about. What a read shows must not change when the write-back lands (the graph's stored tiers included),
and the end state must equal the re-rank inside the request.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from graphmem.errors import NotFound
from graphmem.memory_store import InMemoryStore
from graphmem.models import TurnIn
from graphmem.service import GraphMemory
from graphmem.settings import Settings
from graphmem.store import UserRef

TENANT = "background"
TEXTS = [
    "I want to learn Python before Django",
    "Django uses SQL databases and an ORM",
    "I already know linear algebra",
    "Explain gradient descent please",
]


class HeldStore(InMemoryStore):
    """Weights write-backs wait until ``release`` is set; counts them."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.release = threading.Event()
        self.release.set()
        self.weight_writes = 0

    def write_weights(self, user: UserRef, rows: Any, *args: Any, **kwargs: Any) -> int:
        assert self.release.wait(10), "write-back held too long"
        self.weight_writes += 1
        return super().write_weights(user, rows, *args, **kwargs)


@pytest.fixture
def background(settings: Settings) -> Settings:
    return settings.model_copy(update={"rerank_in_background": True})


def turn(text: str, turn_id: str) -> list[TurnIn]:
    return [TurnIn(turn_id=turn_id, role="user", text=text)]


def without_version(graph: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in graph.items() if k != "version"}


def test_ingest_answers_before_the_rerank_and_a_read_right_after_sees_the_turn(background: Settings) -> None:
    store = HeldStore(background)
    mem = GraphMemory(background, store=store)
    try:
        mem.ingest(TENANT, "ann", "s1", turn(TEXTS[0], "a0"))
        assert mem.wait_reranked()
        store.release.clear()  # the next write-back waits
        result = mem.ingest(TENANT, "ann", "s1", turn(TEXTS[2], "a1"))
        assert result.accepted == ["a1"]
        # Read-your-writes: the block and the graph already hold the new turn's concept.
        pending = mem.graph(TENANT, "ann")
        assert "linear algebra" in {n["canonical_name"].lower() for n in pending["nodes"]}
        assert "linear algebra" in mem.context(TENANT, "ann").block.lower()
        assert store.weight_writes == 1  # the second write-back has not landed
        store.release.set()
        assert mem.wait_reranked()
        assert store.weight_writes == 2
        landed = mem.graph(TENANT, "ann")
        # Nothing a read shows changes when the write-back lands: tiers, stored tiers, weights.
        assert without_version(landed) == without_version(pending)
        assert landed["version"] == pending["version"] + 1
    finally:
        store.release.set()
        mem.close()


class HeldCountingStore(HeldStore):
    """A HeldStore that counts graph loads and says when a write-back has started waiting."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.loads = 0
        self.waiting = threading.Event()

    def load_user_graph(self, user: UserRef, *args: Any, **kwargs: Any) -> Any:
        self.loads += 1
        return super().load_user_graph(user, *args, **kwargs)

    def write_weights(self, user: UserRef, rows: Any, *args: Any, **kwargs: Any) -> int:
        self.waiting.set()
        return super().write_weights(user, rows, *args, **kwargs)


def test_a_read_during_the_users_running_rerank_waits_for_it_instead_of_ranking_again(background: Settings) -> None:
    """The agent loop's block arrives while the background ranks the turn just stored (no longer queued):
    the read answers from what that re-rank cached before its write-back; it used to load and rank
    the same graph a second time beside it."""
    store = HeldCountingStore(background)
    mem = GraphMemory(background, store=store)
    try:
        mem.ingest(TENANT, "dee", "s1", turn(TEXTS[0], "d0"))
        assert mem.wait_reranked()
        store.release.clear()
        store.waiting.clear()
        loads = store.loads
        mem.ingest(TENANT, "dee", "s1", turn(TEXTS[2], "d1"))
        assert store.waiting.wait(10)  # the background has loaded and ranked; its write-back is held
        assert mem.core.background is not None and mem.core.background.pending(UserRef(TENANT, "dee")) is None
        blocks: list[str] = []
        reader = threading.Thread(target=lambda: blocks.append(mem.context(TENANT, "dee").block))
        reader.start()
        reader.join(0.3)
        store.release.set()
        reader.join(10)
        assert blocks and "linear algebra" in blocks[0].lower()
        assert store.loads == loads + 1  # the background's load only
        assert mem.wait_reranked()
    finally:
        store.release.set()
        mem.close()


def test_the_end_state_equals_the_rerank_inside_the_request(settings: Settings, background: Settings) -> None:
    graphs = []
    for s in (settings, background):
        store = InMemoryStore(s)
        mem = GraphMemory(s, store=store)
        try:
            for i, text in enumerate(TEXTS):
                mem.ingest(TENANT, "bob", "s1", turn(text, f"b{i}"))
            assert mem.wait_reranked()
            # Stored weights and tiers as a fresh process reads them (no cache).
            fresh = GraphMemory(s, store=store)
            graphs.append(fresh.graph(TENANT, "bob")["nodes"])
        finally:
            mem.close()
    # Turn times differ between the two runs (the server clock), so weights are compared to 1e-3.
    shape = [[{k: round(v, 3) if isinstance(v, float) else v for k, v in n.items()} for n in nodes] for nodes in graphs]
    assert shape[0] == shape[1]


def test_writes_queued_while_a_rerank_runs_are_coalesced(background: Settings) -> None:
    store = HeldStore(background)
    mem = GraphMemory(background, store=store)
    try:
        store.release.clear()
        mem.ingest(TENANT, "cy0", "s1", turn(TEXTS[0], "x0"))  # another user's re-rank holds the thread
        for i, text in enumerate(TEXTS):
            mem.ingest(TENANT, "cy", "s1", turn(text, f"c{i}"))  # queued behind it, as one
        store.release.set()
        assert mem.wait_reranked()
        assert store.weight_writes == 2  # five ingests, two re-ranks
        assert {"gradient descent", "linear algebra"} <= {
            n["canonical_name"].lower() for n in mem.graph(TENANT, "cy")["nodes"]
        }
    finally:
        store.release.set()
        mem.close()


def test_shutdown_drains_queued_reranks(background: Settings) -> None:
    store = InMemoryStore(background)
    mem = GraphMemory(background, store=store)
    mem.ingest(TENANT, "dee", "s1", turn(TEXTS[0], "d0"))
    mem.close()
    assert mem.core.background is not None and mem.core.background.dropped == 0
    # The weights were written: a new process reads them without ranking first.
    user = UserRef(TENANT, "dee")
    assert any(n.weight for n in store.load_user_graph(user).concepts.values())


def test_shutdown_drops_what_it_cannot_finish_in_time(background: Settings) -> None:
    slow = background.model_copy(update={"rerank_drain_s": 0.05})
    store = HeldStore(slow)
    mem = GraphMemory(slow, store=store)
    store.release.clear()
    mem.ingest(TENANT, "eli", "s1", turn(TEXTS[0], "e0"))  # held in its write-back
    mem.ingest(TENANT, "eli2", "s1", turn(TEXTS[1], "e1"))  # queued behind it
    mem.close()
    assert mem.core.background is not None and mem.core.background.dropped == 1
    store.release.set()
    # The turns were committed before the answers: nothing but derived weights was lost.
    assert len(store.turns(UserRef(TENANT, "eli2"))) == 1


def test_an_erase_before_the_background_rerank_leaves_nothing(background: Settings) -> None:
    store = HeldStore(background)
    mem = GraphMemory(background, store=store)
    try:
        mem.ingest(TENANT, "fay", "s1", turn(TEXTS[0], "f0"))
        assert mem.wait_reranked()
        store.release.clear()
        mem.ingest(TENANT, "fay", "s1", turn(TEXTS[1], "f1"))  # its write-back waits
        store.release.set()
        mem.erase(TENANT, "fay")
        assert mem.wait_reranked()
        with pytest.raises(NotFound):
            mem.graph(TENANT, "fay")
        assert store.user_version(UserRef(TENANT, "fay"))[0] is None
        assert store.turns(UserRef(TENANT, "fay")) == []
    finally:
        store.release.set()
        mem.close()


def test_compaction_starts_from_the_pending_write_back(background: Settings) -> None:
    store = HeldStore(background)
    mem = GraphMemory(background, store=store)
    try:
        for i, text in enumerate(TEXTS):
            mem.ingest(TENANT, "gus", "s1", turn(text, f"g{i}"))
        before = mem.graph(TENANT, "gus")  # ranked on read, write-back maybe still queued
        run = mem.compact(TENANT, "gus")
        assert run["concepts_before"] == len(before["nodes"])
        after = mem.graph(TENANT, "gus")
        assert {n["key"]: n["tier"] for n in after["nodes"]} == {n["key"]: n["stored_tier"] for n in after["nodes"]}
    finally:
        mem.close()


class HeldLoadStore(HeldStore):
    """A HeldStore whose background graph loads wait at ``load_gate`` and say when they start."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.load_gate = threading.Event()
        self.load_gate.set()
        self.load_started = threading.Event()

    def load_user_graph(self, user: UserRef, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "graphmem-rerank":
            self.load_started.set()
            assert self.load_gate.wait(10), "load held too long"
        return super().load_user_graph(user, *args, **kwargs)


def _second_turn_held_in_the_background_load(
    mem: GraphMemory, store: HeldLoadStore, user_id: str, hold_write_back: bool = False
) -> int:
    """Stores a first turn and lets its re-rank land, then stores a second one whose background re-rank
    is held in its graph load (running, nothing cached yet), and with ``hold_write_back`` its write-back
    too once the load is let go. Returns the weight writes before the second turn."""
    mem.ingest(TENANT, user_id, "s1", turn(TEXTS[0], f"{user_id}0"))
    assert mem.wait_reranked()
    writes = store.weight_writes
    if hold_write_back:
        store.release.clear()
    store.load_gate.clear()
    store.load_started.clear()
    mem.ingest(TENANT, user_id, "s1", turn(TEXTS[2], f"{user_id}1"))
    assert store.load_started.wait(10)
    return writes


def _block_in_a_thread(mem: GraphMemory, user_id: str) -> tuple[threading.Thread, list[str]]:
    """A context read on its own thread (started), and the list its block lands in."""
    blocks: list[str] = []
    reader = threading.Thread(target=lambda: blocks.append(mem.context(TENANT, user_id).block))
    reader.start()
    return reader, blocks


def test_a_read_during_the_ranking_answers_before_the_write_back(background: Settings) -> None:
    """The agent loop's block arrives while the background is still loading the turn just stored: the read
    waits for that ranking and answers once it is cached, not after the weights write-back that follows
    under the user's lock (it used to wait for the write too)."""
    store = HeldLoadStore(background)
    mem = GraphMemory(background, store=store)
    try:
        writes = _second_turn_held_in_the_background_load(mem, store, "eve", hold_write_back=True)
        reader, blocks = _block_in_a_thread(mem, "eve")
        reader.join(0.3)
        assert reader.is_alive()  # waiting for the ranking, not ranking a second time
        store.load_gate.set()
        reader.join(5)
        assert not reader.is_alive() and blocks and "linear algebra" in blocks[0].lower()
        assert store.weight_writes == writes  # answered while the write-back is still held
        store.release.set()
        assert mem.wait_reranked()
        assert store.weight_writes == writes + 1
    finally:
        store.load_gate.set()
        store.release.set()
        mem.close()


def test_a_read_does_not_wait_long_for_a_stalled_background(
    background: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A starved or slow background must not hold a block back (one waited a minute on a loaded machine,
    tests/test_load.py): after READ_WAIT_S the read ranks what is stored itself, without caching it, and the
    background's write-back of that version still lands."""
    from graphmem.services import core as core_module

    monkeypatch.setattr(core_module, "READ_WAIT_S", 0.3)
    store = HeldLoadStore(background)
    mem = GraphMemory(background, store=store)
    try:
        # The background is stalled in its load, holding the user.
        writes = _second_turn_held_in_the_background_load(mem, store, "gus")
        reader, blocks = _block_in_a_thread(mem, "gus")
        reader.join(5)
        assert not reader.is_alive() and blocks and "linear algebra" in blocks[0].lower()
        store.load_gate.set()
        assert mem.wait_reranked()
        assert store.weight_writes == writes + 1  # the read's own ranking did not take the write-back's place
    finally:
        store.load_gate.set()
        mem.close()


def test_the_write_back_waits_for_the_read_that_waited_for_the_ranking(background: Settings) -> None:
    """The block right after an ingest, waiting for the background's ranking, answers before that re-rank's
    weights write-back starts (rerank_read_first_ms): the write-back's work would otherwise run beside the
    answer's selection and rendering. The order is checked, not a time."""
    settings = background.model_copy(update={"rerank_read_first_ms": 10_000.0})
    store = HeldLoadStore(settings)
    mem = GraphMemory(settings, store=store)
    events: list[str] = []
    assert mem.core.background is not None
    answered, write_weights = mem.core.background.answered, store.write_weights

    def recording_answered() -> None:
        events.append("answered")
        answered()

    def recording_write_weights(*args: Any, **kwargs: Any) -> int:
        events.append("write-back")
        return write_weights(*args, **kwargs)

    mem.core.background.answered = recording_answered  # type: ignore[method-assign]
    store.write_weights = recording_write_weights  # type: ignore[method-assign]
    try:
        _second_turn_held_in_the_background_load(mem, store, "hal")
        events.clear()
        reader, blocks = _block_in_a_thread(mem, "hal")
        reader.join(0.3)
        assert reader.is_alive()  # waiting for the ranking
        store.load_gate.set()
        reader.join(5)
        assert not reader.is_alive() and blocks and "linear algebra" in blocks[0].lower()
        assert mem.wait_reranked()
        assert events[:2] == ["answered", "write-back"], events
    finally:
        store.load_gate.set()
        mem.close()


def test_the_write_back_does_not_wait_long_for_a_read(background: Settings) -> None:
    """A read the re-rank handed its graph that never says it answered (a bug, a stuck thread) holds the
    write-back for rerank_read_first_ms at most."""
    from graphmem.services import rerank

    settings = background.model_copy(update={"rerank_read_first_ms": 50.0})
    store = HeldLoadStore(settings)
    mem = GraphMemory(settings, store=store)
    assert mem.core.background is not None
    mem.core.background.answered = lambda: None  # type: ignore[method-assign]
    try:
        writes = _second_turn_held_in_the_background_load(mem, store, "ivy")
        reader, blocks = _block_in_a_thread(mem, "ivy")
        reader.join(0.3)
        store.load_gate.set()
        reader.join(5)
        assert blocks
        assert mem.wait_reranked(5)
        assert store.weight_writes == writes + 1
        assert rerank._answer_of.get() is None  # this thread never read
    finally:
        store.load_gate.set()
        mem.close()
