"""Stance accuracy on the hand-labelled dev set of real user turns (eval/devsets/stances.jsonl).

The dev set holds references only (source file, conversation, message, concept surface and span) plus
a label in {interested, confused, knows, dislikes, none} and a note; the turn text is read here, at
run time, from ../shared/data:

* ``kdconv/<domain>/dev.json``: conversation = index in the file, message = index in ``messages``;
  the user is the first speaker (even indexes), as in kdconv_eval;
* ``redial/train.jsonl``: conversation = conversationId, message = messageId (seeker turns only), text
  with ``@id`` replaced by the title (eval/redial_data.py);
* ``bridge/train.json``: conversation = c_id, message = the student turn's id in c_h / c_r.

Each turn is extracted on its own as a user turn by the real pipeline, with a catalog holding every
concept of the dev set of its language (so the concept is found and only the stance is judged); the
prediction is the stance for that concept's key, or ``none``. Reported per language and per part
("tune": developed against; "check": measured only): accuracy, per-class precision / recall / F1,
and the confusion matrix (rows gold, columns predicted).

    python -m eval.stance_eval            # prints, writes eval/results/stance_dev.json
"""

from __future__ import annotations

import argparse
import ast
import json
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path
from typing import Any

from eval.common import REPO, prf, r4, shared_data_dir
from eval.redial_data import load_chats
from graphmem.extraction.extractor import ConceptExtractor
from graphmem.extraction.normalize import concept_key
from graphmem.models import Catalog, CatalogConcept

DEVSET = REPO / "eval" / "devsets" / "stances.jsonl"
# Every hand-labelled set of real user turns (same schema; eval/devsets/README.md says how each was drawn).
REAL_SETS = (
    DEVSET,
    REPO / "eval" / "devsets" / "stances_real2.jsonl",
    REPO / "eval" / "devsets" / "stances_real2_zh.jsonl",
)
RESULTS = REPO / "eval" / "results" / "stance_dev.json"
LABELS = ("interested", "confused", "knows", "dislikes", "none")
PARTS = ("tune", "check")


def load_items(path: Path = DEVSET) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def real_turns(language: str, data: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every labelled real turn of `language` in REAL_SETS as (its set's file name, the item with its "text"
    read from the shared data): what the stance models train on (part tune) and report (part check)."""
    return [
        (path.name, {**it, "text": turn_text(it, data)})
        for path in REAL_SETS
        for it in load_items(path)
        if it["language"] == language
    ]


@cache
def _kdconv(data: Path, source: str) -> list[dict[str, Any]]:
    return json.loads((data / source).read_text(encoding="utf-8"))


@cache
def _redial(data: Path) -> dict[tuple[str, int], str]:
    return {(c.conversation_id, m.message_id): m.text for c in load_chats(data, "train") for m in c.messages}


@cache
def _bridge(data: Path, source: str) -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}
    for item in json.loads((data / source).read_text(encoding="utf-8")):
        for field in ("c_h", "c_r"):
            turns = item[field] if isinstance(item[field], list) else ast.literal_eval(item[field])
            for t in turns:
                if t.get("user") == "student":
                    out[(item["c_id"], int(t["id"]))] = t["text"]
    return out


def turn_text(item: dict[str, Any], data: Path) -> str:
    src = item["source"]
    if src.startswith("kdconv/"):
        return _kdconv(data, src)[int(item["conversation"])]["messages"][int(item["message"])]["message"]
    if src.startswith("redial/"):
        return _redial(data)[(str(item["conversation"]), int(item["message"]))]
    if src.startswith("bridge/"):
        return _bridge(data, src)[(str(item["conversation"]), int(item["message"]))]
    raise ValueError(f"unknown source {src!r}")


def predict(items: list[dict[str, Any]], data: Path) -> list[str]:
    """The predicted stance per item (``none`` when the concept gets no stance)."""
    preds: list[str] = [""] * len(items)
    by_lang: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        by_lang[it["language"]].append(i)
    for idxs in by_lang.values():
        names = sorted({items[i]["concept"] for i in idxs})
        extractor = ConceptExtractor(Catalog(concepts=[CatalogConcept(name=n) for n in names]))
        texts = []
        for i in idxs:
            text = turn_text(items[i], data)
            it = items[i]
            if text[it["start"] : it["end"]] != it["concept"]:
                raise ValueError(f"dev item {it['id']}: span does not hold the concept (data changed?)")
            texts.append(text)
        # One turn at a time, as a user turn with nothing before it.
        results = [extractor.extract([t], ["user"])[0] for t in texts]
        for i, ex in zip(idxs, results):
            key = concept_key(items[i]["concept"])
            found = [s.stance.value for s in ex.stances if s.key == key]
            preds[i] = found[-1] if found else "none"
    return preds


def metrics(gold: list[str], pred: list[str]) -> dict[str, Any]:
    n = len(gold)
    out: dict[str, Any] = {"items": n, "accuracy": r4(sum(g == p for g, p in zip(gold, pred)) / n) if n else 0.0}
    per: dict[str, Any] = {}
    for c in LABELS:
        tp = sum(1 for g, p in zip(gold, pred) if g == p == c)
        p_, r_, f_ = prf(tp, sum(1 for p in pred if p == c), sum(1 for g in gold if g == c))
        per[c] = {
            "precision": r4(p_),
            "recall": r4(r_),
            "f1": r4(f_),
            "gold": sum(1 for g in gold if g == c),
            "predicted": sum(1 for p in pred if p == c),
        }
    out["per_class"] = per
    cm = Counter(zip(gold, pred))
    out["confusion"] = {g: {p: cm[(g, p)] for p in LABELS} for g in LABELS}
    return out


def run(verbose: bool = True, errors: bool = False, devset: Path = DEVSET) -> dict[str, Any]:
    data = shared_data_dir()
    items = load_items(devset)
    preds = predict(items, data)
    res: dict[str, Any] = {}
    for lang in ("en", "zh"):
        res[lang] = {}
        for part in (*PARTS, "all"):
            sel = [i for i, it in enumerate(items) if it["language"] == lang and (part == "all" or it["part"] == part)]
            res[lang][part] = metrics([items[i]["label"] for i in sel], [preds[i] for i in sel])
    if verbose:
        for lang in ("en", "zh"):
            if not res[lang]["all"]["items"]:
                continue
            print(
                f"[stance-dev] {devset.name} {lang}: "
                + ", ".join(
                    f"{p} acc {res[lang][p]['accuracy']:.3f} (n={res[lang][p]['items']})" for p in (*PARTS, "all")
                )
            )
    if errors:
        for it, p in zip(items, preds):
            if p != it["label"]:
                print(
                    f"  {it['part']:5} {it['language']} gold={it['label']:10} pred={p:10} {it['concept']!r}: "
                    f"{turn_text(it, data)[:140]!r}"
                )
    return res


def protocol(quick: bool = False, verbose: bool = False) -> dict[str, Any]:
    """For eval/run_all.py: accuracy per language and part (the dev set is small: quick = full)."""
    res = run(verbose=verbose)
    out: dict[str, Any] = {
        lang: {part: res[lang][part]["accuracy"] for part in (*PARTS, "all")} for lang in ("en", "zh")
    }
    out["items"] = {lang: {part: res[lang][part]["items"] for part in (*PARTS, "all")} for lang in ("en", "zh")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--errors", action="store_true", help="print the misjudged items (their text from shared data)")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument(
        "--devset", type=Path, default=DEVSET, help="a real-turn set of eval/devsets (default stances.jsonl)"
    )
    args = ap.parse_args()
    res = run(errors=args.errors, devset=args.devset)
    if not args.no_save:
        out = (
            RESULTS
            if args.devset.resolve() == DEVSET.resolve()
            else RESULTS.with_name(f"stance_dev_{args.devset.stem}.json")
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
