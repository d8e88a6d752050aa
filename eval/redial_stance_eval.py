"""The seeker's current stance per movie in real ReDial chats vs the seeker's own verdict.

Protocol (see eval/redial_data.py for the data): one tenant per run whose catalog holds every
movie title of the split (type ``product``); one user per chat; every message ingested through
GraphMemory in order (seeker = user, recommender = assistant, timestamps from the chat's time
offsets) into the real Neo4j; then the user's stored current stance per movie of the chat
(``GraphMemory.graph``) is compared with the seeker's answer ``liked`` (0 disliked, 1 liked; 2 "did
not say" is left out).

Metrics:
* dislike precision / recall / F1: predicted ``dislikes`` vs verdict disliked;
* liked_positive: share of liked movies whose stance is ``interested`` (the positive stance);
  liked_knows (``knows``) is reported separately and is not counted as positive;
* liked_disliked: share of liked movies marked ``dislikes``.

Rules and the preference model (eval/train_preference.py) were derived on ``train``; ``valid`` is the
measure, whole: the shared data holds 100 valid chats (440 movies with a verdict, 17 disliked), so one
disliked movie moves dislike F1 by about 0.03-0.05. ``--fast`` runs the same extraction
without Neo4j (the newest stance of the chat per movie, as ingest_refresh_interests keeps it),
for quick iteration; the reported figures come from the store.

    python -m eval.redial_stance_eval [--split valid|train|both] [--limit N] [--fast]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from eval.common import REPO, eval_tenant, make_memory, prf, r4, shared_data_dir
from eval.redial_data import Chat, load_chats
from graphmem.extraction.extractor import ConceptExtractor
from graphmem.extraction.normalize import concept_key
from graphmem.models import Catalog, CatalogConcept, ConceptType, TurnIn

RESULTS = REPO / "eval" / "results" / "redial_stance.json"
_T0 = datetime(2020, 1, 1, tzinfo=UTC)


def catalog_of(chats: list[Chat]) -> Catalog:
    seen: dict[str, str] = {}
    for c in chats:
        for title in c.titles.values():
            k = concept_key(title)
            if k and k not in seen:
                seen[k] = title
    return Catalog(concepts=[CatalogConcept(name=t[:120], type=ConceptType.product) for t in seen.values()])


def turns_of(chat: Chat) -> list[TurnIn]:
    out = []
    for i, m in enumerate(chat.messages):
        if m.text.strip():
            ts = _T0 + timedelta(seconds=m.time_offset, microseconds=i)
            out.append(TurnIn(turn_id=f"m{m.message_id}", role=m.role, text=m.text, ts=ts))
    return out


def fast_stances(extractor: ConceptExtractor, chat: Chat) -> dict[str, str]:
    """The newest stance per concept key, from extraction alone (what the store keeps as current)."""
    turns = turns_of(chat)
    exs = extractor.extract([t.text for t in turns], [t.role for t in turns])
    current: dict[str, str] = {}
    for ex in exs:
        for s in ex.stances:
            current[s.key] = s.stance.value
    return current


def score(rows: list[tuple[int, str | None]]) -> dict[str, Any]:
    """rows: (liked verdict 0/1, predicted stance or None)."""
    disliked = [p for v, p in rows if v == 0]
    liked = [p for v, p in rows if v == 1]
    pred_dis = sum(1 for _, p in rows if p == "dislikes")
    tp = sum(1 for p in disliked if p == "dislikes")
    p, r, f = prf(tp, pred_dis, len(disliked))
    by = Counter(p or "none" for p in liked)
    n = len(liked) or 1
    return {
        "movies": len(rows),
        "liked": len(liked),
        "disliked": len(disliked),
        "dislike_precision": r4(p),
        "dislike_recall": r4(r),
        "dislike_f1": r4(f),
        "liked_positive": r4(by["interested"] / n),
        "liked_knows": r4(by["knows"] / n),
        "liked_disliked": r4(by["dislikes"] / n),
        "liked_none": r4(by["none"] / n),
        "disliked_stances": dict(Counter(p or "none" for p in disliked)),
    }


def run_split(split: str, limit: int | None = None, fast: bool = False, verbose: bool = True) -> dict[str, Any]:
    chats = load_chats(shared_data_dir(), split)[:limit]
    catalog = catalog_of(chats)
    rows: list[tuple[int, str | None]] = []
    errors: list[dict[str, Any]] = []
    started = time.perf_counter()

    def collect(chat: Chat, current: dict[str, str]) -> None:
        for v in chat.verdicts:
            if v.liked in (0, 1):
                pred = current.get(concept_key(v.title))
                rows.append((v.liked, pred))
                wrong = (v.liked == 0) != (pred == "dislikes")
                if wrong and len(errors) < 400:
                    errors.append({"conv": chat.conversation_id, "movie": v.movie_id, "liked": v.liked, "pred": pred})

    if fast:
        ex = ConceptExtractor(catalog)
        for chat in chats:
            collect(chat, fast_stances(ex, chat))
    else:
        mem = make_memory()
        try:
            with eval_tenant(mem, "redialstance") as tenant:
                mem.put_catalog(tenant, catalog)
                for chat in chats:
                    user = f"chat-{chat.conversation_id}"
                    turns = turns_of(chat)
                    for b in range(0, len(turns), 200):
                        mem.ingest(tenant, user, "s1", turns[b : b + 200])
                    nodes = mem.graph(tenant, user)["nodes"]
                    collect(chat, {n["key"]: n["stance"] for n in nodes if n["stance"]})
        finally:
            mem.close()
    out = {
        "split": split,
        "chats": len(chats),
        "mode": "extraction-only" if fast else "store",
        **score(rows),
        "seconds": round(time.perf_counter() - started, 1),
    }
    if verbose:
        print(f"[redial-stance] {json.dumps(out)}")
    out["_errors"] = errors
    return out


def protocol(quick: bool = False, verbose: bool = False) -> dict[str, Any]:
    """For eval/run_all.py: valid (the measure) always, train (to show the gap) in full runs."""
    out: dict[str, Any] = {}
    for split in ("valid",) if quick else ("valid", "train"):
        res = run_split(split, verbose=verbose)
        res.pop("_errors")
        out[split] = res
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="both", choices=["train", "valid", "both"])
    ap.add_argument("--limit", type=int)
    ap.add_argument("--fast", action="store_true", help="extraction only, no Neo4j (for iteration)")
    ap.add_argument("--errors", action="store_true", help="print the misjudged movies of the split")
    args = ap.parse_args()
    splits = ["train", "valid"] if args.split == "both" else [args.split]
    res = {s: run_split(s, args.limit, args.fast) for s in splits}
    if args.errors:
        for s in splits:
            for e in res[s]["_errors"]:
                print(s, e)
    for s in splits:
        res[s].pop("_errors")
    if not args.fast and args.limit is None:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
