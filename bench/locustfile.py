"""Locust traffic for the mixed-load benchmark (issue 16, item 6); run it through ``make bench-load``.

Each Locust user is one graphmem user of the tenant the API key maps to. It seeds its graph with a
few turns (request name ``seed``, reported apart), then loops — without think time by default (the
closed loop the earlier load figures used), or with GRAPHMEM_BENCH_THINK_S seconds between requests on average
(uniform in [0.5, 1.5] times it: a person reading the answer and typing the next turn) — picking ``context`` (GET the block, the focus rotating through the
load test's four values) or ``ingest`` (POST one real turn, English or Chinese, spaCy extraction)
with weights GRAPHMEM_BENCH_CONTEXT_WEIGHT : GRAPHMEM_BENCH_INGEST_WEIGHT (default 7 : 3).

    GRAPHMEM_BENCH_KEY=KEY locust -f bench/locustfile.py --headless -u 24 -r 24 -t 60s --host http://127.0.0.1:8000

bench/load_bench.py starts the API, loads the demo catalog, runs this file and writes the report.
"""

from __future__ import annotations

import itertools
import os
import uuid

from locust import FastHttpUser, between, task

KEY = os.environ.get("GRAPHMEM_BENCH_KEY", "")
RUN = os.environ.get("GRAPHMEM_BENCH_RUN") or uuid.uuid4().hex[:6]
CONTEXT_WEIGHT = int(os.environ.get("GRAPHMEM_BENCH_CONTEXT_WEIGHT", "7"))
INGEST_WEIGHT = int(os.environ.get("GRAPHMEM_BENCH_INGEST_WEIGHT", "3"))
THINK_S = float(os.environ.get("GRAPHMEM_BENCH_THINK_S", "0"))

# The load test's traffic (tests/test_load.py, bench/load_profile.py): short English and Chinese turns
# about the demo catalog's concepts, four focus values (none, a question, a concept, Chinese).
TEXTS = [
    "I want to learn Django and Kubernetes.",
    "我对Django框架很感兴趣，也想学Python基础",
    "I struggle with Docker Compose and SQLAlchemy.",
    "Django requires Linux server administration.",
    "I hate React. React uses Redux.",
    "PostgreSQL和Nginx都要学",
    "I already know Git and HTML.",
    "How do I deploy Django with Nginx?",
    "Flask or Django for a REST API?",
]
FOCUSES = [None, "How do I deploy Django?", "React", "数据库"]
_ids = itertools.count()


class GraphmemUser(FastHttpUser):
    # No think time (the default): every user sends its next request as soon as the last one answers.
    wait_time = between(0.5 * THINK_S, 1.5 * THINK_S) if THINK_S > 0 else staticmethod(lambda: 0)  # type: ignore[assignment]

    def on_start(self) -> None:
        self.n = next(_ids)
        self.uid = f"load-{RUN}-{self.n}"
        self.headers = {"Authorization": f"Bearer {KEY}"}
        self.seq = 0
        self.reads = 0
        turns = [self._turn(TEXTS[(self.n + i) % len(TEXTS)]) for i in range(4)]
        self.client.post(
            f"/v1/users/{self.uid}/turns", json={"session_id": "s0", "turns": turns}, headers=self.headers, name="seed"
        )

    def _turn(self, text: str) -> dict[str, str]:
        self.seq += 1
        return {"turn_id": f"t{self.seq}", "role": "user", "text": text}

    @task(INGEST_WEIGHT)
    def send_turn(self) -> None:
        body = {"session_id": f"s{self.seq // 10}", "turns": [self._turn(TEXTS[(self.n + self.seq) % len(TEXTS)])]}
        self.client.post(f"/v1/users/{self.uid}/turns", json=body, headers=self.headers, name="ingest")

    @task(CONTEXT_WEIGHT)
    def read_block(self) -> None:
        self.reads += 1
        focus = FOCUSES[self.reads % len(FOCUSES)]
        self.client.get(
            f"/v1/users/{self.uid}/context",
            params={"focus": focus} if focus else None,
            headers=self.headers,
            name="context",
        )
