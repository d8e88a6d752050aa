"""The agent loop side by side with the closest runnable peer, neo4j-agent-memory, in one run.

    make bench-peer                                   # its own Neo4j (ports 7748/7535), 30 users, 4 rounds
    python -m bench.peer_loop_bench --users 30 --rounds 4

The optional ``peer`` extra installs the peer (``pip install -e '.[peer]'``: neo4j-agent-memory 0.8, whose
core needs only the Neo4j driver and pydantic). It runs in its LLM-free configuration: spaCy NER
(``ExtractorType.SPACY``, no LLM fallback, the same ``en_core_web_sm`` pipeline graphmem loads) and a free
hashed bag-of-words embedder (:class:`HashedEmbedder`, no model: the cheapest embedder it accepts, so the
comparison is generous to the peer — with MiniLM embeddings its stores cost more).

The loop is DESIGN.md's hot path on real tutoring chats without a catalog (Bridge ``validation``, read at
run time from ``../shared/data``; student = user): for every student turn of a chat, store that one turn,
then fetch the context for the next model call with the turn as the question (graphmem: ``POST …/turns``
then ``GET …/context?focus=<turn>`` over real HTTP on loopback; the peer: ``short_term.add_message`` then
``get_context(<turn>, session_id=<user>)`` as a library call, so the peer pays no HTTP). Rounds alternate
which system goes first, and every round uses fresh user ids, so both do the same work from an empty
user on a machine whose load drifts. Reported per system: p50/p95/p99 of the store, the read and the pair,
and graphmem's speed-up (peer / graphmem) at each percentile. Results: ``bench/results/peer_loop.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import time
import uuid
import warnings
from typing import Any

import httpx

from eval.bridge_eval import load_bridge
from eval.common import shared_data_dir
from graphmem.settings import Settings

from .common import RESULTS, log, machine, start_server, summary_ms

PEER_VERSION = "0.8"
TENANT = "bench-peer-loop"


class HashedEmbedder:
    """Signed feature hashing of lower-cased words into ``dimensions`` floats, L2-normalised.

    Satisfies the peer's ``Embedder`` protocol (``dimensions``, ``embed``, ``embed_batch``) without a model.
    """

    dimensions = 256

    async def embed(self, text: str) -> list[float]:
        vec = [0.0] * self.dimensions
        for word in text.lower().split():
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
            vec[h % self.dimensions] += 1.0 if (h >> 16) & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vec)) or 1.0
        return [x / norm for x in vec]

    async def embed_batch(self, texts: list[str]) -> list[list[float]]:
        return [await self.embed(t) for t in texts]


def student_turns(n_users: int) -> list[list[str]]:
    """The student turns of the first ``n_users`` Bridge validation chats that have any."""
    chats = load_bridge(shared_data_dir(), "validation")
    out: list[list[str]] = []
    for chat in chats:
        turns = [text for who, text in chat["c_h"] + chat["c_r"] if who == "student"]
        if turns:
            out.append(turns)
        if len(out) == n_users:
            break
    return out


def graphmem_pass(client: httpx.Client, chats: list[list[str]], run: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"store": [], "read": [], "pair": []}
    for u, turns in enumerate(chats):
        uid = f"peer-{run}-{u}"
        for i, text in enumerate(turns):
            body = {"session_id": "s1", "turns": [{"turn_id": f"t{i}", "role": "user", "text": text}]}
            t0 = time.perf_counter()
            client.post(f"/v1/users/{uid}/turns", json=body).raise_for_status()
            t1 = time.perf_counter()
            client.post(f"/v1/users/{uid}/context", json={"focus": text}).raise_for_status()
            t2 = time.perf_counter()
            out["store"].append(t1 - t0)
            out["read"].append(t2 - t1)
            out["pair"].append(t2 - t0)
    return out


async def peer_pass(memory: Any, chats: list[list[str]], run: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"store": [], "read": [], "pair": []}
    for u, turns in enumerate(chats):
        uid = f"peer-{run}-{u}"
        for text in turns:
            t0 = time.perf_counter()
            await memory.short_term.add_message(session_id=uid, role="user", content=text)
            t1 = time.perf_counter()
            await memory.get_context(text, session_id=uid)
            t2 = time.perf_counter()
            out["store"].append(t1 - t0)
            out["read"].append(t2 - t1)
            out["pair"].append(t2 - t0)
    return out


def peer_settings(settings: Settings) -> Any:
    from neo4j_agent_memory import MemorySettings
    from neo4j_agent_memory.config.settings import ExtractionConfig, ExtractorType

    from graphmem.extraction.pipelines import english

    meta = english().meta  # the pipeline graphmem loaded, under its package name
    uri = settings.neo4j_uri or f"bolt://127.0.0.1:{settings.neo4j_bolt_port}"
    return MemorySettings(
        backend="bolt",
        neo4j={"uri": uri, "username": settings.neo4j_user, "password": settings.neo4j_password},
        llm=None,
        extraction=ExtractionConfig(
            extractor_type=ExtractorType.SPACY, enable_llm_fallback=False, spacy_model=f"{meta['lang']}_{meta['name']}"
        ),
    )


def speedups(peer: dict[str, float], ours: dict[str, float]) -> dict[str, float]:
    return {k: round(peer[k] / ours[k], 2) for k in ("p50_ms", "p95_ms", "p99_ms") if ours.get(k)}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from neo4j_agent_memory import MemoryClient

    chats = student_turns(args.users)
    log(f"{len(chats)} Bridge chats, {sum(map(len, chats))} student turns per pass")
    key = f"bench-peer-{uuid.uuid4().hex[:8]}"
    server = start_server({key: TENANT})
    samples: dict[str, dict[str, list[float]]] = {
        s: {"store": [], "read": [], "pair": []} for s in ("graphmem", "peer")
    }
    load: list[float] = []
    try:
        async with MemoryClient(peer_settings(Settings()), embedder=HashedEmbedder()) as memory:
            with httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=120) as c:
                log("warm-up: five chats each (spaCy, pools, the peer's schema)")
                graphmem_pass(c, chats[:5], f"w{uuid.uuid4().hex[:6]}")
                await peer_pass(memory, chats[:5], f"w{uuid.uuid4().hex[:6]}")
                for r in range(args.rounds):
                    order = ["graphmem", "peer"] if r % 2 == 0 else ["peer", "graphmem"]
                    for system in order:
                        load.append(os.getloadavg()[0])
                        run_id = uuid.uuid4().hex[:8]
                        part = (
                            graphmem_pass(c, chats, run_id)
                            if system == "graphmem"
                            else await peer_pass(memory, chats, run_id)
                        )
                        for k, v in part.items():
                            samples[system][k] += v
                    log(
                        f"round {r + 1}/{args.rounds}: "
                        + ", ".join(f"{s} pair p50 {summary_ms(samples[s]['pair'])['p50_ms']} ms" for s in samples)
                    )
    finally:
        server.stop()
    result: dict[str, Any] = {
        "peer": f"neo4j-agent-memory {PEER_VERSION} (spaCy NER, no LLM, hashed embeddings)",
        "data": "Bridge validation, student turns, no catalog",
        "users_per_pass": len(chats),
        "rounds": args.rounds,
        "load_average_during": [round(sum(load) / len(load), 1), round(max(load), 1)],
    }
    for system, s in samples.items():
        result[system] = {k: summary_ms(v) for k, v in s.items()}
    result["speedup_peer_over_graphmem"] = {
        k: speedups(result["peer"][k], result["graphmem"][k]) for k in ("store", "read", "pair")
    }
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="graphmem vs neo4j-agent-memory: the agent loop, alternated")
    ap.add_argument("--users", type=int, default=30, help="Bridge chats (users) per pass")
    ap.add_argument("--rounds", type=int, default=4, help="alternated rounds (each system once per round)")
    args = ap.parse_args(argv)
    try:
        import neo4j_agent_memory  # noqa: F401
    except ImportError:
        log("the peer is not installed: pip install -e '.[peer]' (neo4j-agent-memory), then run this again")
        return 2
    warnings.filterwarnings("ignore", module="neo4j")  # the peer's driver settings warn once per session
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {"machine": machine(), **asyncio.run(run(args))}
    (RESULTS / "peer_loop.json").write_text(json.dumps(out, indent=2))
    log(json.dumps({k: out[k] for k in ("graphmem", "peer", "speedup_peer_over_graphmem")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
