"""Prompt cost and retention as conversations grow, through the real extraction.

Multi-session learners (generator.conversation_user) state their key facts in
session 1 ("I already know X", "I'm confused by Y", "I want to learn Z"), then
talk about other things. Their turns go through GraphMemory.ingest (spaCy
extraction, Neo4j) one session per call; at each checkpoint we compare

* prompt cost: tokens of graphmem's block vs tokens of the full raw history;
* retention: share of key-fact concepts named in graphmem's block vs in the
  naive baseline, the last N turns that fit the same token budget (same tokenizer).
"""

from __future__ import annotations

import statistics
from typing import Any

from graphmem.models import TurnIn
from graphmem.service import GraphMemory

from . import generator
from .common import log

TENANT = "bench-conv"
CHECKPOINTS = (50, 100, 200, 500, 1000)


def _present(name: str, text: str) -> bool:
    return name.casefold() in text.casefold()


def window_baseline(turns: list[generator.GenTurn], budget: int, mem: GraphMemory) -> tuple[str, int]:
    """The most recent turns, rendered 'role: text', that fit `budget` tokens."""
    lines: list[str] = []
    used = 0
    for t in reversed(turns):
        line = f"{t.role}: {t.text}"
        cost = mem.counter.count(line + "\n")
        if used + cost > budget:
            break
        lines.append(line)
        used += cost
    return "\n".join(reversed(lines)), used


def run_users(mem: GraphMemory, quick: bool) -> dict[str, Any]:
    langs = ["en", "zh"] if quick else ["en", "zh"] * 4
    budget = mem.settings.default_max_tokens
    per_user = []
    for i, lang in enumerate(langs):
        uid = f"conv-{lang}-{i}"
        if mem.store.user_version(mem.user(TENANT, uid))[0] is not None:
            mem.erase(TENANT, uid)
        user = generator.conversation_user(uid, language=lang, n_turns=max(CHECKPOINTS), seed=1000 + i)
        done = 0
        history_tokens = 0
        points = []
        for session in user.sessions:
            turns = session.turns
            mem.ingest(
                TENANT,
                uid,
                session.session_id,
                [
                    TurnIn(turn_id=f"{session.session_id}-{j}", role=t.role, text=t.text, ts=t.ts)
                    for j, t in enumerate(turns)
                ],
            )
            history_tokens += sum(mem.counter.count(t.text) for t in turns)
            done += len(turns)
            if done in CHECKPOINTS:
                ctx = mem.context(TENANT, uid, max_tokens=budget)
                so_far = user.turns[:done]
                # The full history as an agent would paste it ("role: text" lines).
                full_tokens = sum(mem.counter.count(f"{t.role}: {t.text}\n") for t in so_far)
                window, window_tokens = window_baseline(so_far, budget, mem)
                facts = [(c.name, st.value) for c, st in user.key_facts]
                in_block = [_present(n, ctx.block) for n, _ in facts]
                in_window = [_present(n, window) for n, _ in facts]
                points.append(
                    {
                        "turns": done,
                        "block_tokens": ctx.tokens,
                        "history_tokens_text": history_tokens,
                        "history_tokens": full_tokens,
                        "ratio": round(ctx.tokens / full_tokens, 4),
                        "window_tokens": window_tokens,
                        "retention_block": round(sum(in_block) / len(facts), 3),
                        "retention_window": round(sum(in_window) / len(facts), 3),
                        "facts": [
                            {"name": n, "stance": st, "block": b, "window": w}
                            for (n, st), b, w in zip(facts, in_block, in_window)
                        ],
                    }
                )
        per_user.append({"user_id": uid, "language": lang, "points": points})
        last = points[-1]
        log(
            f"conversation {uid}: {last['turns']} turns, block {last['block_tokens']} tok vs history "
            f"{last['history_tokens']} tok ({last['ratio']:.1%}); retention block {last['retention_block']:.0%} "
            f"vs window {last['retention_window']:.0%}"
        )
    # Medians per checkpoint across users.
    curve = []
    for cp in CHECKPOINTS:
        pts = [p for u in per_user for p in u["points"] if p["turns"] == cp]
        if not pts:
            continue
        curve.append(
            {
                "turns": cp,
                "users": len(pts),
                "block_tokens_p50": statistics.median(p["block_tokens"] for p in pts),
                "block_tokens_max": max(p["block_tokens"] for p in pts),
                "history_tokens_p50": statistics.median(p["history_tokens"] for p in pts),
                "ratio_p50": round(statistics.median(p["ratio"] for p in pts), 4),
                "ratio_max": round(max(p["ratio"] for p in pts), 4),
                "retention_block_mean": round(statistics.mean(p["retention_block"] for p in pts), 3),
                "retention_window_mean": round(statistics.mean(p["retention_window"] for p in pts), 3),
                "by_language": {
                    lang: {
                        "retention_block_mean": round(
                            statistics.mean(
                                p["retention_block"]
                                for u in per_user
                                if u["language"] == lang
                                for p in u["points"]
                                if p["turns"] == cp
                            ),
                            3,
                        ),
                        "retention_window_mean": round(
                            statistics.mean(
                                p["retention_window"]
                                for u in per_user
                                if u["language"] == lang
                                for p in u["points"]
                                if p["turns"] == cp
                            ),
                            3,
                        ),
                    }
                    for lang in sorted({u["language"] for u in per_user})
                },
            }
        )
    by_stance: dict[str, dict[str, float]] = {}
    for st in ("knows", "confused", "interested"):
        fs = [f for u in per_user for f in u["points"][-1]["facts"] if f["stance"] == st]
        by_stance[st] = {
            "block": round(sum(f["block"] for f in fs) / len(fs), 3),
            "window": round(sum(f["window"] for f in fs) / len(fs), 3),
        }
    return {"budget_tokens": budget, "curve": curve, "by_stance_at_last": by_stance, "users": per_user}
