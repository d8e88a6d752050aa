"""Prometheus metrics, one registry per app (tests create several apps in one process)."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest


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
