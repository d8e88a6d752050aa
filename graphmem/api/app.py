"""The FastAPI application: `create_app()` builds it, `graphmem serve` runs it.

Routes live in graphmem/api/routes (one APIRouter per resource), exception handlers in
handlers.py, request limits in limits.py, metrics and their middleware in metrics.py. Handlers that
do work are plain `def`s, so FastAPI runs them in its thread pool: extraction (CPU) and Neo4j calls
(I/O) never block the event loop.
"""

from __future__ import annotations

import faulthandler
import gc
import logging
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from graphmem.service import GraphMemory
from graphmem.settings import Settings, get_settings

from . import handlers
from .auth import load_keyring
from .limits import RequestLimits
from .metrics import Metrics, ObserveRequests
from .routes import ROUTERS

log = logging.getLogger("graphmem.api")


def _freeze_start_up_objects() -> None:
    # Collected first, so only live objects are frozen (frozen cyclic garbage would never be freed).
    gc.collect()
    gc.freeze()
    log.info("gc: %d start-up objects frozen", gc.get_freeze_count())


def _tune_collector(young: int) -> None:
    # Fewer young collections, each over more objects: per request they cost far less once the cached graphs
    # are large (settings.gc_young_threshold).
    if young > 0:
        gc.set_threshold(young, 10, 10)
        log.info("gc: thresholds %s", gc.get_threshold())


def _start_in_background(mem: GraphMemory, state: dict[str, Any]) -> None:
    # Neo4j may come up after the API: keep trying, /readyz says when it is ready.
    def loop() -> None:
        while not state.get("stopping"):
            try:
                mem.start()
                if mem.settings.gc_freeze:
                    _freeze_start_up_objects()
                log.info("graphmem ready: schema applied, pipelines loaded")
                return
            except Exception as exc:
                log.warning("start-up not complete yet (%s); retrying in 2 s", exc)
                time.sleep(2)

    threading.Thread(target=loop, name="graphmem-start", daemon=True).start()


def _stack_dump_on_sigusr1() -> None:
    # `kill -USR1 <pid>` writes every thread's stack to stderr: what a stuck request waits on, without a
    # debugger (tests/test_load.py sends it when a request hangs). Not on Windows (no SIGUSR1).
    if hasattr(signal, "SIGUSR1") and threading.current_thread() is threading.main_thread():
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)


def create_app(settings: Settings | None = None, memory: GraphMemory | None = None) -> FastAPI:
    settings = settings or get_settings()
    metrics = Metrics.create()
    state: dict[str, Any] = {"memory": memory}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        _stack_dump_on_sigusr1()
        if settings.gc_young_threshold and memory is None:
            _tune_collector(settings.gc_young_threshold)  # its own process only: an app handed a memory is a test's
        if state["memory"] is None:
            state["memory"] = GraphMemory(settings)
        mem: GraphMemory = state["memory"]
        if not (mem.schema_applied and mem.models_loaded):
            _start_in_background(mem, state)
        yield
        state["stopping"] = True
        if memory is None:
            mem.close()

    app = FastAPI(
        title="graphmem",
        version="0.1.0",
        description="Graph memory for AI agents: send turns, get a scoped, token-budgeted context block.",
        lifespan=lifespan,
        # A redirect of a mutating request lands on another resource (DELETE /v1/users/a/concepts/..
        # normalised to DELETE /v1/users/a/ and redirected to DELETE /v1/users/a): no redirects at all,
        # a path that does not match is a 404 in the error shape.
        redirect_slashes=False,
    )
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.keyring = load_keyring(settings)
    app.state.graphmem = state
    app.add_middleware(
        CORSMiddleware,
        # The Neo4j Browser fetches the guide from here.
        allow_origins=[f"http://{host}:{settings.neo4j_http_port}" for host in ("127.0.0.1", "localhost")],
        allow_methods=["GET"],
        # The Browser's fetch of a guide sends these and needs the preflight answered.
        allow_headers=["cache-control", "pragma"],
    )
    # Added before ObserveRequests, so it runs inside it: refusals are counted and carry the worker header.
    app.add_middleware(RequestLimits, max_body_bytes=settings.max_body_bytes, max_url_bytes=settings.max_url_bytes)
    app.add_middleware(ObserveRequests, metrics=metrics)
    handlers.install(app, metrics)
    for router in ROUTERS:
        app.include_router(router)
    return app
