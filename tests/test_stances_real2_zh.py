"""The second file of hand-labelled real Chinese turns (eval/devsets/stances_real2_zh.jsonl): references
only, ids and parts as the sampler makes them, and (data-backed) every span holds its concept."""

from __future__ import annotations

import json
from pathlib import Path

from eval.devsets.sample_real2_zh import OUT, check, part_of

KEYS = {"id", "source", "conversation", "message", "concept", "start", "end", "language", "label", "note", "part"}


def test_items_are_references_with_stable_parts() -> None:
    items = [json.loads(line) for line in OUT.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(items) >= 250
    for it in items:
        assert set(it) == KEYS, it["id"]  # no turn text stored
        assert it["source"] in {f"kdconv/{d}/dev.json" for d in ("film", "music", "travel")}
        assert it["part"] == part_of(it["id"])
        assert it["end"] - it["start"] == len(it["concept"])
    check_share = sum(it["part"] == "check" for it in items) / len(items)
    assert 0.25 < check_share < 0.42  # the hash gives about a third


def test_part_of_is_the_sha1_third() -> None:
    ids = [f"x#{i}" for i in range(300)]
    assert 70 < sum(part_of(i) == "check" for i in ids) < 130


def test_spans_hold_their_concepts(shared_data: Path) -> None:
    counts = check(OUT, shared_data)
    assert sum(counts.values()) >= 250
