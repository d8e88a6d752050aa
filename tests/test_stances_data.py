"""The hand-kept stance data: cue files (no duplicates, every entry in a known class, every pattern
compiles) and the hand-labelled dev set of real turns (references only; labels in the class set;
both parts and both languages large enough), plus floors on the dev-set metrics measured with the
real extraction (data-backed: needs ../shared/data)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from graphmem.extraction.stance_cues import CONTEXT_KEYS, LANGUAGES, cues, raw
from graphmem.models import Stance

DEVSET = Path(__file__).resolve().parent.parent / "eval" / "devsets" / "stances.jsonl"
LABELS = {s.value for s in Stance} | {"none"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_cue_file_is_well_formed(lang: str) -> None:
    data = raw(lang)
    assert set(data["order"]) == {s.value for s in Stance}
    assert set(data["classes"]) == {s.value for s in Stance}
    seen: Counter[str] = Counter()
    for name, spec in data["classes"].items():
        assert spec["negated"] is None or spec["negated"] in LABELS
        assert spec["cues"], name
        for cue in spec["cues"]:
            assert isinstance(cue, str) and cue.strip() == cue and cue
            re.compile(cue)
            seen[cue] += 1
    for cls, extra in (data.get("before_mention") or {}).items():
        assert cls in data["classes"]
        seen.update(extra)
    dupes = [c for c, n in seen.items() if n > 1]
    assert not dupes, f"cues listed twice: {dupes}"
    for key in CONTEXT_KEYS:
        assert isinstance(data[key], str) and data[key], key
    cs = cues(lang)  # compiles
    assert [c.stance.value for c in cs.classes] == data["order"]


def test_devset_holds_references_only_and_valid_labels() -> None:
    items = [json.loads(line) for line in DEVSET.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(items) >= 300
    ids = [it["id"] for it in items]
    assert len(ids) == len(set(ids))
    by = Counter((it["language"], it["part"]) for it in items)
    for lang in ("en", "zh"):
        assert by[(lang, "tune")] + by[(lang, "check")] >= 100
        assert by[(lang, "check")] * 3 >= by[(lang, "tune")] + by[(lang, "check")] - 3  # about a third
    for it in items:
        assert it["label"] in LABELS
        assert set(it) == {
            "id",
            "source",
            "conversation",
            "message",
            "concept",
            "start",
            "end",
            "language",
            "label",
            "note",
            "part",
        }
        assert it["end"] - it["start"] == len(it["concept"])
        assert it["source"].split("/")[0] in ("kdconv", "redial", "bridge")


@pytest.mark.slow
def test_devset_floors(shared_data: Path) -> None:
    """Floors just below what was measured (eval/results/stance_dev.json), so a regression fails."""
    from eval.stance_eval import run

    res = run(verbose=False)
    # Measured at this commit: en tune 0.937 / check 0.875; zh tune 0.936 / check 0.812.
    assert res["en"]["tune"]["accuracy"] >= 0.91
    assert res["en"]["check"]["accuracy"] >= 0.84
    assert res["zh"]["tune"]["accuracy"] >= 0.90
    assert res["zh"]["check"]["accuracy"] >= 0.78


@pytest.mark.slow
def test_real2_check_floors(shared_data: Path) -> None:
    """The second real-turn sets through `run(devset=...)` (what `--devset` runs): floors below what was
    measured on their check parts, which are never trained on (2026-12-04: en 0.861 of 144, zh 0.865 of 96)."""
    from eval.stance_eval import run

    en = run(verbose=False, devset=DEVSET.parent / "stances_real2.jsonl")
    zh = run(verbose=False, devset=DEVSET.parent / "stances_real2_zh.jsonl")
    assert en["en"]["check"]["items"] == 144 and zh["zh"]["check"]["items"] == 96
    assert not en["zh"]["all"]["items"] and not zh["en"]["all"]["items"]  # one language per file
    assert en["en"]["check"]["accuracy"] >= 0.83
    assert zh["zh"]["check"]["accuracy"] >= 0.83


NATURAL = sorted((DEVSET.parent).glob("natural_stances_*.jsonl"))
# The files the cue rules were tuned on (natural_stances_corpus2.jsonl came later, from another writer,
# and is only trained on by the English stance model: it has no floor of the rules here).
TUNED = [p for p in NATURAL if p.name != "natural_stances_corpus2.jsonl"]


def test_natural_sets_are_well_formed() -> None:
    from eval.natural_stance_eval import load

    assert {p.name for p in NATURAL} >= {"natural_stances_tune.jsonl", "natural_stances_own_tune.jsonl"}
    assert not any("check" in p.name and "own" not in p.name for p in NATURAL)  # the blind check stays out
    for path in NATURAL:
        items = load(path)
        assert len({it["id"] for it in items}) == len(items), path.name
        for it in items:
            assert it["concept"].casefold() in it["text"].casefold(), it["id"]


def test_natural_sets_floors() -> None:
    """Floors just below what was measured (eval/results/natural_stance.json): all natural files
    together, per language. The files were tuned on (see eval/devsets/README.md): a regression guard,
    not a held-out figure."""
    from eval.natural_stance_eval import evaluate, load

    items = [it for path in TUNED for it in load(path)]
    res = evaluate(items)
    # Measured at this commit: en 0.973, zh 0.981 over 262 / 260 items.
    assert res["en"]["accuracy"] >= 0.95
    assert res["zh"]["accuracy"] >= 0.95
    assert res["en"]["concept_not_found"] == res["zh"]["concept_not_found"] == 0


def test_blind_check_set_floor() -> None:
    """The blind check set (eval/results/natural_stance_blind.md), measured once at en 0.64 / zh 0.85 and
    never tuned on: a regression guard just below that figure, not a target."""
    from eval.natural_stance_eval import evaluate, load

    res = evaluate(load(DEVSET.parent / "measured" / "blind_check.jsonl"))
    assert res["en"]["accuracy"] >= 0.60
    assert res["zh"]["accuracy"] >= 0.80


def test_english_comparison_and_ellipsis_patterns() -> None:
    # The optional English-only keys (stances.py `_mark_lesser`, `_elliptic_negation`) hold what their
    # comments say; Chinese has none of them.
    cs = cues("en")
    assert cs.lesser_than and cs.comparison_negated and cs.elliptic_negation
    assert cs.lesser_than.search("I liked it way better than the original ")
    assert not cs.lesser_than.search("better than I thought it would be")
    assert cs.comparison_negated.search("it doesn't get") and not cs.comparison_negated.search("I went and")
    assert cs.elliptic_negation.match(" but not  or  ") and not cs.elliptic_negation.match(" but not really ")
    assert cues("zh").lesser_than is None and cues("zh").elliptic_negation is None
