"""Prometheus metrics, one registry per app (tests create several apps in one process), and the
middleware that counts every request."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..store import write_retries


class WriteRetries(Collector):
    """Re-runs of store write transactions by reason (deadlock, concept_gone, constraint, transient),
    read from the store's process-wide counts at scrape time: the safety net, which should stay rare."""

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            "graphmem_store_write_retries", "Write transactions re-run after a deadlock or race", labels=["reason"]
        )
        for reason, count in sorted(write_retries.snapshot().items()):
            family.add_metric([reason], count)
        yield family


@dataclass
class Metrics:
    registry: CollectorRegistry
    requests: Counter
    latency: Histogram
    ingest_turns: Counter
    extraction_seconds: Histogram
    block_tokens: Histogram
    compaction_runs: Counter
    neo4j_errors: Counter

    @classmethod
    def create(cls) -> Metrics:
        reg = CollectorRegistry()
        reg.register(WriteRetries())
        # Objects start-up froze out of the garbage collector's scans (settings.gc_freeze); 0: not frozen.
        Gauge(
            "graphmem_gc_frozen_objects", "Objects frozen out of the cyclic garbage collector", registry=reg
        ).set_function(gc.get_freeze_count)
        # The collector's first-generation threshold (settings.gc_young_threshold; Python's own: 700).
        Gauge(
            "graphmem_gc_young_threshold", "First-generation threshold of the cyclic garbage collector", registry=reg
        ).set_function(lambda: gc.get_threshold()[0])
        return cls(
            registry=reg,
            requests=Counter(
                "graphmem_http_requests_total", "HTTP requests", ["route", "method", "status"], registry=reg
            ),
            latency=Histogram(
                "graphmem_http_request_seconds",
                "HTTP request latency",
                ["route", "method"],
                buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
                registry=reg,
            ),
            ingest_turns=Counter("graphmem_ingest_turns_total", "Turns ingested", ["result"], registry=reg),
            extraction_seconds=Histogram(
                "graphmem_extraction_seconds", "Extraction time per ingest call", registry=reg
            ),
            block_tokens=Histogram(
                "graphmem_block_tokens",
                "Tokens per rendered context block",
                buckets=(16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
                registry=reg,
            ),
            compaction_runs=Counter("graphmem_compaction_runs_total", "Compaction runs", ["result"], registry=reg),
            neo4j_errors=Counter(
                "graphmem_neo4j_errors_total", "Calls that failed because Neo4j was unreachable", registry=reg
            ),
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)


class ObserveRequests:
    """ASGI middleware: counts each request by route, method and status, times it, and names the
    API process that answered (``X-Graphmem-Worker``: with ``graphmem serve --workers N`` it tells
    the workers apart in logs).

    A plain ASGI class, not ``@app.middleware("http")``: Starlette's BaseHTTPMiddleware runs the rest
    of the app in a task and streams the response through a memory channel, a cost paid per request.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics
        self.worker_id = str(os.getpid())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message).append("X-Graphmem-Worker", self.worker_id)
            await send(message)

        try:
            await self.app(scope, receive, observed)
        finally:
            # The router put the matched route into the (shared) scope.
            path = getattr(scope.get("route"), "path", "unmatched")
            self.metrics.requests.labels(path, scope["method"], str(status)).inc()
            self.metrics.latency.labels(path, scope["method"]).observe(time.perf_counter() - started)
