"""Fit graphmem/zh_name_likeness.py's model on the hand-labelled KdConv block items.

    python -m eval.train_zh_name_likeness [--check]

Items: every KdConv row of eval/data/block_labels.csv, block_labels_fresh{,2,3,4,5,6,7,8}.csv and
block_labels_kdconv{30,60,120}.csv (references only: the item as shown and its label, 1 = about the user); never
block_labels_fresh9.csv or block_labels_fresh10.csv, the held-out samples (fresh8 was session 31's, scored before it
joined). The features
are the item's own make-up and the marks of its mentions (zh_name_likeness.features): the marks come from running the
extractor over the item's KdConv conversation (from the shared data, as eval/block_sample.py ingests it: one call, user
and assistant alternating) and taking zh_name_likeness.mention_marks of each mention, as the store does. Rows whose item
a later rule already removes still teach what a recited detail looks like. Two models are fitted the same way: with
marks, and on make-up alone (``without_marks``, for items stored before marks were kept). C and the threshold are chosen on out-of-fold probabilities, the folds grouped by
conversation (a conversation's items never sit on both sides): the threshold is the highest that loses at most
``MAX_GOOD_LOSS`` of the good items, so the filter removes recited details without costing much recall. An item only
the assistant said needs more of the look of a name (``threshold_assistant_only``: the highest that loses at most
``ASSISTANT_ONLY_MAX_GOOD_LOSS``): the user never took it up, and among such items of the dev samples 0.60 were
about the user against 0.74 of the items the user said (eval/results/NOTES.md). Writes
graphmem/data/zh_name_likeness.json; ``--check`` fits again and reports the difference without writing.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eval import block_sample as bs
from eval.common import REPO, shared_data_dir
from graphmem import zh_name_likeness as nl
from graphmem.extraction.normalize import concept_key

OUT = REPO / "graphmem" / "data" / nl.MODEL_FILE
LABEL_FILES = (
    bs.LABELS,
    bs.FRESH_LABELS,
    bs.FRESH2_LABELS,
    bs.FRESH3_LABELS,
    bs.FRESH4_LABELS,
    bs.FRESH5_LABELS,
    bs.FRESH6_LABELS,
    bs.FRESH7_LABELS,
    bs.FRESH8_LABELS,
    bs.KDCONV30_LABELS,
    bs.KDCONV60_LABELS,
    bs.KDCONV120_LABELS,
)
C = 3.0  # the best of 0.3 / 1 / 3 out of fold on the KdConv items alone (2026-12-05)
FOLDS = 5
MAX_GOOD_LOSS = 0.05
# A Chinese user's topics outside a knowledge-grounded chat (数学, 线性代数, 特征值, 科幻) look like KdConv's recited
# details to a model fitted on KdConv alone: it dropped 34 % of the written sets' topics (51 % with marks). They join
# the fit as positives, each weighing the smallest w that loses at most MAX_WRITTEN_LOSS of them out of fold.
WRITTEN_WEIGHT_GRID = (0.01, 0.02, 0.03, 0.05, 0.1, 0.2)
MAX_WRITTEN_LOSS = 0.05
ASSISTANT_ONLY_MAX_GOOD_LOSS = 0.15


def rows() -> list[tuple[str, str, int]]:
    """(conversation, key, label) of every labelled KdConv item, once per conversation and key."""
    seen: dict[tuple[str, str], int] = {}
    for path in LABEL_FILES:
        for (ds, conv, _key), r in bs.read_labels(path).items():
            if ds.startswith("kdconv"):
                seen.setdefault((conv, concept_key(r["item"])), int(r["label"]))
    return [(c, k, y) for (c, k), y in sorted(seen.items())]


def conversation_marks(conversations: set[str]) -> dict[tuple[str, str], frozenset[str]]:
    """(conversation, key) -> the marks of the key's mentions in that KdConv dev conversation ("film-12": the 13th
    of the film domain), from the extractor run as the store's ingest runs it."""
    from graphmem.extraction.extractor import ConceptExtractor

    data = shared_data_dir()
    extractor = ConceptExtractor()
    out: dict[tuple[str, str], set[str]] = {}
    for domain in sorted({c.split("-")[0] for c in conversations}):
        items = json.loads((data / "kdconv" / domain / "dev.json").read_text(encoding="utf-8"))
        for n, item in enumerate(items):
            conv = f"{domain}-{n}"
            if conv not in conversations:
                continue
            turns = [(j, m["message"]) for j, m in enumerate(item["messages"]) if m["message"].strip()]
            texts = [t for _, t in turns]
            roles = ["user" if j % 2 == 0 else "assistant" for j, _ in turns]
            for text, role, ex in zip(texts, roles, extractor.extract(texts, roles), strict=True):
                for m in ex.concepts:
                    marks = nl.mention_marks(text, m.start, m.end, m.surface, m.language, role)
                    if marks:
                        out.setdefault((conv, m.key), set()).update(marks)
    return {k: frozenset(v) for k, v in out.items()}


def written_topics() -> list[tuple[str, str, frozenset[str]]]:
    """(file, key, marks) of every Chinese concept of the written and real stance sets of eval/devsets (the
    writers' ``*_zh_check.jsonl`` files and the Chinese stance dev sets): each names a topic a user talks about, so
    each is a name the filter must keep, whatever stance the sentence takes. The marks are those of the concept's
    first occurrence in its text, as a user's (each is a user's message)."""
    out: list[tuple[str, str, frozenset[str]]] = []
    for path in written_files():
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            text, concept = item.get("text"), item.get("concept")
            if not text or not concept or concept not in text or not any("\u4e00" <= ch <= "\u9fff" for ch in concept):
                continue
            start = text.index(concept)
            marks = nl.mention_marks(text, start, start + len(concept), concept, "zh", "user")
            out.append((path.name, concept_key(concept), frozenset(marks)))
    return out


def written_files() -> list[Path]:
    """The Chinese stance sets whose concepts are written topics: the writers' check files and two dev sets."""
    devsets = REPO / "eval" / "devsets"
    return sorted(devsets.glob("measured/*_zh_check.jsonl")) + [
        devsets / "stances_corpus2_zh.jsonl",
        devsets / "stances_real2_zh.jsonl",
    ]


def train(
    data: list[tuple[str, str, int]],
    marks: dict[tuple[str, str], frozenset[str]] | None = None,
    written: list[tuple[str, str, frozenset[str]]] | None = None,
) -> dict[str, Any]:
    """The model file's content: the model over make-up and marks, and under ``without_marks`` the one over
    make-up alone, each chosen out of fold (folds grouped by conversation, and by file for the written topics)
    and then fitted on every item."""
    marks = conversation_marks({c for c, _, _ in data}) if marks is None else marks
    written = written_topics() if written is None else written
    with_marks = _train(
        data, written, lambda c, k, m: nl.features(k, marks.get((c, k), frozenset()) if m is None else m)
    )
    without = _train(data, written, lambda c, k, m: nl.features(k))
    return {
        "version": f"kdconv-items-{len(data)}-written-{len(written)}",
        **{k: with_marks[k] for k in ("threshold", "threshold_assistant_only", "cv", "weights")},
        "without_marks": {k: without[k] for k in ("threshold", "threshold_assistant_only", "cv", "weights")},
    }


def _train(
    data: list[tuple[str, str, int]],
    written: list[tuple[str, str, frozenset[str]]],
    feats: Callable[[str, str, frozenset[str] | None], dict[str, float]],
) -> dict[str, Any]:
    """Labelled KdConv items (1 / 0) and written topics (1, each weighing ``w``): the classes are balanced by
    weight, and ``w`` is the smallest of WRITTEN_WEIGHT_GRID whose model, out of fold, loses at most
    MAX_WRITTEN_LOSS of the written topics at the threshold that loses MAX_GOOD_LOSS of the KdConv good items."""
    import numpy as np
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold

    y = np.array([lab for _, _, lab in data] + [1] * len(written))
    kd = np.array([True] * len(data) + [False] * len(written))
    groups = [c for c, _, _ in data] + ["written:" + f for f, _, _ in written]
    dv = DictVectorizer()
    x = dv.fit_transform([feats(c, k, None) for c, k, _ in data] + [feats("", k, m) for _, k, m in written])

    def fit(w: float, rows: Any) -> Any:
        weight = np.where(kd[rows], 1.0, w)
        ys = y[rows]
        weight[ys == 0] *= weight[ys == 1].sum() / weight[ys == 0].sum()  # balanced classes
        return LogisticRegression(C=C, max_iter=5000, fit_intercept=False).fit(x[rows], ys, sample_weight=weight)

    def threshold_for(oof: Any, max_loss: float) -> float:
        yk, ok = y[kd], oof[kd]
        best_t = 0.0
        for t in np.round(np.arange(0.05, 0.95, 0.05), 2):
            if ((ok < t) & (yk == 1)).sum() <= max_loss * yk.sum():
                best_t = float(t)
        return best_t

    chosen: tuple[float, Any, float] | None = None
    for w in WRITTEN_WEIGHT_GRID:
        oof = np.zeros(len(y))
        for tr, te in GroupKFold(FOLDS).split(x, y, groups):
            oof[te] = fit(w, tr).predict_proba(x[te])[:, 1]
        t = threshold_for(oof, MAX_GOOD_LOSS)
        if float((oof[~kd] < t).mean()) <= MAX_WRITTEN_LOSS:
            chosen = (w, oof, t)
            break
    if chosen is None:
        raise SystemExit("no written-topic weight keeps the written topics; widen WRITTEN_WEIGHT_GRID")
    w, oof, threshold = chosen
    threshold_assistant_only = threshold_for(oof, ASSISTANT_ONLY_MAX_GOOD_LOSS)
    yk, ok = y[kd], oof[kd]
    keep = ok >= threshold
    report = {
        "items": len(data),
        "conversations": len({c for c, _, _ in data}),
        "written_topics": len(written),
        "written_weight": w,
        "c": C,
        "oof_auc": round(float(roc_auc_score(yk, ok)), 4),
        "threshold": threshold,
        "threshold_assistant_only": threshold_assistant_only,
        "oof_precision_before": round(float(yk.mean()), 4),
        "oof_precision_kept": round(float(yk[keep].mean()), 4),
        "oof_good_lost": int(((~keep) & (yk == 1)).sum()),
        "oof_bad_removed": int(((~keep) & (yk == 0)).sum()),
        "oof_written_lost": round(float((oof[~kd] < threshold).mean()), 4),
        "bad": int((yk == 0).sum()),
        "good": int(yk.sum()),
    }
    m = fit(w, np.arange(len(y)))
    weights = {f: [0.0, round(float(v), 6)] for f, v in zip(dv.get_feature_names_out(), m.coef_[0]) if abs(v) > 1e-9}
    return {
        "threshold": threshold,
        "threshold_assistant_only": threshold_assistant_only,
        "cv": report,
        "weights": dict(sorted(weights.items())),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fit again and compare with the shipped file")
    args = ap.parse_args()
    out = train(rows())
    print(f"[zh-name-likeness] with marks: {out['cv']}")
    print(f"[zh-name-likeness] make-up alone: {out['without_marks']['cv']}")
    if args.check:
        old = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
        same = old == out
        print(f"[zh-name-likeness] shipped threshold {old.get('threshold')}; same weights and threshold: {same}")
        return
    OUT.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"[zh-name-likeness] wrote {Path(OUT).relative_to(REPO)} ({len(out['weights'])} features)")


if __name__ == "__main__":
    main()
