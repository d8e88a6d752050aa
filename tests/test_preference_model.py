"""The trained preference model (graphmem/extraction/preference.py, data/preference_en.json):
reproducible from ReDial's train split, cheap to load, pure in its features."""

from __future__ import annotations

import json
import time
from importlib import resources
from pathlib import Path

import pytest

from graphmem.extraction import preference


def _shipped_json() -> dict:
    raw = resources.files("graphmem.extraction").joinpath("data", preference.MODEL_FILE).read_text(encoding="utf-8")

    def no_duplicates(pairs: list[tuple[str, object]]) -> dict:
        keys = [k for k, _ in pairs]
        assert len(keys) == len(set(keys)), "duplicate keys in the model file"
        return dict(pairs)

    return json.loads(raw, object_pairs_hook=no_duplicates)


def test_model_file_is_plain_weights_with_thresholds() -> None:
    data = _shipped_json()
    assert data["weights"] and all(isinstance(v, float) for v in data["weights"].values())
    assert 0.5 <= data["dislike_threshold"] <= 1.0 and 0.0 <= data["veto_threshold"] <= 1.0
    # Only words, word pairs, VADER scores and structure: no titles or digits memorised.
    assert all(k.split(":", 1)[0] in {"w", "b", "v", "s"} for k in data["weights"])
    assert not any(ch.isdigit() for k in data["weights"] if k[0] in "wb" for ch in k)


def test_loading_and_scoring_are_fast() -> None:
    start = time.perf_counter()
    for _ in range(20):
        preference.model_from_json(_shipped_json())
    load = (time.perf_counter() - start) / 20
    assert load < 0.1, f"loading the model takes {load:.3f}s"
    m = preference.shipped()
    vader = {"compound": -0.4, "pos": 0.0, "neg": 0.4, "neu": 0.6}
    start = time.perf_counter()
    for _ in range(2000):
        m.probability(preference.features("it was a bit too long and kind of predictable", vader, reply=True))
    per_clause = (time.perf_counter() - start) / 2000
    assert per_clause < 2e-4, f"{per_clause * 1e6:.0f} µs per clause"


def test_features_are_words_pairs_vader_and_structure() -> None:
    f = preference.features("I didn't like it, 12 times!", {"compound": 0.4, "pos": 0.5, "neg": 0.0}, reply=False)
    assert {"w:not", "w:like", "b:did_not", "b:not_like", "w:!"} <= f.keys()
    assert not any(ch.isdigit() for k in f if k[0] in "wb" for ch in k)
    assert f["s:negated_positive"] == 1.0 and f["s:reply"] == 0.0 and f["v:positive"] == 1.0


def test_training_reproduces_the_shipped_model(shared_data: Path) -> None:
    """The training derivation and fit (eval/train_preference.py) reproduce the shipped weights: the
    same clauses from ReDial train, and one fit at the shipped C gives the same weights (the cross-
    validated choice of C and thresholds runs in `python -m eval.train_preference --check`)."""
    from eval import train_preference as tp
    from eval.redial_data import load_chats

    shipped = _shipped_json()
    chats = load_chats(shared_data, "train")
    examples = tp.derive(chats)
    assert f"{len(chats)} chats, {len(examples)} clauses" in shipped["trained_on"]
    weights, bias = tp._fit(examples, shipped["C"])
    assert bias == pytest.approx(shipped["bias"], abs=1e-3)
    assert weights.keys() == shipped["weights"].keys()
    assert max(abs(weights[k] - shipped["weights"][k]) for k in weights) < 1e-3
    # Disliked-movie clauses score higher than liked ones on the training data.
    m = preference.model_from_json(shipped)
    dis = [m.probability(e.feats) for e in examples if e.label == 1]
    liked = [m.probability(e.feats) for e in examples if e.label == 0]
    assert sum(dis) / len(dis) > sum(liked) / len(liked) + 0.1
