"""Protocol 6 — a hand-labelled sample of block items: is each item about the user?

Blocks are produced on real data with the current code, the way an agent would get them:
  * ReDial ``valid`` (eval/redial_block_eval.py's setup: a catalog of the split's movies, genres and
    people; all 100 chats are users of one tenant, so the tenant's document frequency applies);
    the first ``REDIAL_CHATS`` chats are sampled, ``scope="recommendation"``;
  * Bridge ``validation`` (all 71 chats in one tenant, no catalog, student = user, tutor =
    assistant, history + original continuation); the first ``BRIDGE_CHATS``, ``scope="learning"``;
  * KdConv ``dev`` (the first 30 conversations of each domain in one tenant, no catalog; turns
    alternate user / assistant); the first ``KDCONV_CHATS`` of each domain, ``scope="general"``.
Items are core_topics + related_concepts (+ avoid, + knowledge_gaps), default token budget.

Labels: ``eval/data/block_labels.csv`` holds references only — dataset, conversation id, item (the
concept name as shown), label (1: about this user, 0: not), note — never the conversation text.
Labelled by hand (by the engineer who wrote this, reading each conversation; the blocks branch
labelled the items its blocks newly showed and the chats it added to the sample the same way; four
small rules came after that labelling and were seen on those chats — eval/results/NOTES.md says which
and gives the figure before them): 1 when the item is
something this user named, asked about, was taught or was recommended in their own conversation,
a specific thing of their interests or lesson; 0 for generic or dialogue words, fragments, wrong
catalog matches (the pronoun "It" as the film), and things that are not the user's.

``python -m eval.block_sample --fresh`` scores a held-out sample instead (``FRESH``: the chats right after the
labelled ones, labels in ``eval/data/block_labels_fresh.csv``, set aside and labelled before the rules of the
blocks helper's second issue-13 round and scored only before and after it). ``--fresh2`` scores a second held-out
sample (``FRESH2``: Bridge validation and KdConv dev chats picked by a seeded rule, labels in
``eval/data/block_labels_fresh2.csv``, labelled by helper "blocks3" before any rule of its round); ``--fresh3`` a third (``FRESH3``, likewise, labels in
``eval/data/block_labels_fresh3.csv``, labelled by helper "blocks4" before any rule of its round); ``--fresh4`` a fourth (``FRESH4``: ReDial valid, Bridge
validation and KdConv dev chats picked by a seeded rule, labels in ``eval/data/block_labels_fresh4.csv``, labelled by
helper "blocks5" before any rule or model of its round).

``python -m eval.block_sample`` re-renders the blocks and reports which labelled items are still
present, item precision over the present labelled items, and lists new unlabelled items (to label;
they are printed, not saved). ``--dump`` prints every item with the first message naming it, for
labelling.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path
from typing import Any

from eval.bridge_eval import load_bridge
from eval.common import REPO, eval_tenant, make_memory, r4, shared_data_dir
from eval.redial_block_eval import build_catalog, people
from eval.redial_data import load_chats
from graphmem.extraction.normalize import concept_key
from graphmem.models import TurnIn

LABELS = REPO / "eval" / "data" / "block_labels.csv"
# A held-out sample (``--fresh``): the chats right after the labelled ones, set aside and labelled by the
# blocks helper (issue 13, second round) before any rule of that round was written, and scored only
# before and after the round; never read while writing rules.
FRESH_LABELS = REPO / "eval" / "data" / "block_labels_fresh.csv"
REDIAL_CHATS = 16  # 12 until the blocks branch; chats 13-16 were labelled after its rules were set
BRIDGE_CHATS = 16  # likewise
KDCONV_CHATS = 5  # per domain (2 until zhblocks, 3 until blocks; the later ones were labelled after the rules were set)
FRESH = {"redial": (16, 20), "bridge": (16, 20), "kdconv": (5, 7)}  # [start, end) chats (per domain for KdConv)
# A second held-out sample (``--fresh2``, helper "blocks3", issue 13): Bridge validation and KdConv dev chats no label
# file covered, picked by a seeded rule before any rule of that round — random.Random(13).sample(range(20, 71), 16) of
# Bridge's 71 chats and random.Random(13).sample(range(7, 30), 2) of each KdConv domain's 30 — and labelled then.
FRESH2_LABELS = REPO / "eval" / "data" / "block_labels_fresh2.csv"
FRESH2: dict[str, tuple[int, ...]] = {
    "redial": (),
    "bridge": (24, 28, 29, 31, 33, 34, 36, 38, 54, 61, 62, 63, 64, 66, 68, 69),
    "kdconv": (15, 16),
}
# A third held-out sample (``--fresh3``, helper "blocks4", issue 13): the Bridge validation and KdConv dev chats no earlier
# label file covered, picked by a seeded rule before any rule of that round — random.Random(14).sample of the 35 Bridge
# chats left in range(20, 71), 16 of them, and random.Random(14).sample of the 21 KdConv indices left in range(7, 30), 2
# of each domain — and labelled then (``FRESH3_LABELS``).
FRESH3_LABELS = REPO / "eval" / "data" / "block_labels_fresh3.csv"
FRESH3: dict[str, tuple[int, ...]] = {
    "redial": (),
    "bridge": (22, 27, 32, 35, 40, 42, 43, 45, 48, 49, 51, 52, 53, 57, 59, 67),
    "kdconv": (10, 28),
}
# A fourth held-out sample (``--fresh4``, helper "blocks5"): chats no earlier label file covered, picked by a seeded rule
# before any rule or model of that round — ReDial valid: random.Random(15).sample(range(20, 100), 8) (no earlier sample
# covers ReDial chats >= 20); Bridge validation: random.Random(15).sample of the 19 chats of range(20, 71) that FRESH2 and
# FRESH3 do not cover, 12 of them; KdConv dev: random.Random(15).sample of the 19 indices of range(7, 30) that FRESH2 and
# FRESH3 do not cover, 2 of them (each domain) — and labelled then (``FRESH4_LABELS``).
FRESH4_LABELS = REPO / "eval" / "data" / "block_labels_fresh4.csv"
FRESH4: dict[str, tuple[int, ...]] = {
    "redial": (21, 22, 24, 27, 40, 46, 50, 86),
    "bridge": (20, 21, 23, 25, 30, 37, 46, 50, 55, 56, 60, 65),
    "kdconv": (7, 14),
}
# A fifth held-out sample (``--fresh5``, helper "blocks6", 2026-12-04 late): chats no earlier label file covered, picked
# by a seeded rule after the exercise-label, quantity-head and greeting rules of that round were written (from the
# Bridge misses of fresh2-fresh4, which are dev samples from then on) — ReDial valid: random.Random(16).sample of
# range(20, 100) without FRESH4's, 8 of them; Bridge validation: the 7 chats of range(20, 71) that FRESH2, FRESH3 and
# FRESH4 do not cover (all that is left); KdConv dev: random.Random(16).sample of the 17 indices of range(7, 30) no
# earlier sample covers, 2 of them (each domain) — and labelled then (``FRESH5_LABELS``).
FRESH5_LABELS = REPO / "eval" / "data" / "block_labels_fresh5.csv"
FRESH5: dict[str, tuple[int, ...]] = {
    "redial": (20, 56, 63, 73, 80, 84, 88, 89),
    "bridge": (26, 39, 41, 44, 47, 58, 70),
    "kdconv": (23, 27),
}
# A sixth held-out sample (``--fresh6``, helper "blocks7", 2026-12-05): chats no earlier label file covered, picked by a
# seeded rule before any rule of that session — ReDial valid: random.Random(17).sample of range(20, 100) without FRESH4's
# and FRESH5's, 8 of them; Bridge: validation has no chat left, so the tenant is built from the first 71 chats of the
# ``train`` split (the size of the validation tenant) and random.Random(17).sample(range(71), 8) of them are sampled;
# KdConv dev: random.Random(17).sample of the 15 indices of range(7, 30) no earlier sample covers, 3 of them (each
# domain) — and labelled then (``FRESH6_LABELS``).
FRESH6_LABELS = REPO / "eval" / "data" / "block_labels_fresh6.csv"
FRESH6: dict[str, tuple[int, ...]] = {
    "redial": (36, 44, 45, 51, 76, 81, 83, 87),
    "bridge": (14, 22, 35, 37, 38, 46, 53, 66),
    "kdconv": (18, 20, 25),
}
# A seventh held-out sample (``--fresh7``, helper "blocks8", 2026-12-05, labelled on 643b774 before any rule or model of
# that session): ReDial valid: random.Random(18).sample of range(20, 100) without FRESH4-FRESH6's, 8 of them; Bridge: the
# same ``train`` tenant as FRESH6, random.Random(18).sample of range(71) without FRESH6's, 8 of them; KdConv dev:
# random.Random(18).sample of the 12 indices of range(7, 30) no earlier sample covers, 3 of them (each domain).
FRESH7_LABELS = REPO / "eval" / "data" / "block_labels_fresh7.csv"
FRESH7: dict[str, tuple[int, ...]] = {
    "redial": (32, 37, 38, 42, 53, 61, 65, 78),
    "bridge": (7, 11, 12, 16, 23, 30, 33, 48),
    "kdconv": (9, 11, 21),
}
# An eighth held-out sample (``--fresh8``, helper "blocks9", 2026-12-05 session 31, labelled on cd45eb8 before any rule
# or model of that session): ReDial valid: random.Random(19).sample of range(20, 100) without FRESH4-FRESH7's, 8 of them;
# Bridge: the ``train`` tenant of FRESH6, random.Random(19).sample of range(71) without FRESH6's and FRESH7's, 8 of them;
# KdConv dev: random.Random(19).sample of the 9 indices of range(7, 30) no earlier sample covers, 4 of them (each domain).
FRESH8_LABELS = REPO / "eval" / "data" / "block_labels_fresh8.csv"
FRESH8: dict[str, tuple[int, ...]] = {
    "redial": (26, 33, 43, 60, 66, 74, 75, 95),
    "bridge": (2, 8, 17, 34, 44, 45, 58, 65),
    "kdconv": (8, 12, 19, 26),
}
# A ninth held-out sample (``--fresh9``, helper "blocks13", 2026-12-05 session 32, labelled on 22e9a03 before any rule
# or model of that session): ReDial valid: random.Random(20).sample of range(20, 100) without FRESH4-FRESH8's, 8 of them;
# Bridge: the ``train`` tenant of FRESH6, random.Random(20).sample of range(71) without FRESH6-FRESH8's, 8 of them;
# KdConv: range(7, 30) of dev is nearly used up, so its tenant is built from the *next* 30 dev conversations of each
# domain (indices 30-59, a tenant of the same size) and random.Random(20).sample(range(30, 60), 4) of each domain are
# sampled. No model reads dev conversations 30-59 (the name-likeness trainer reads the labelled ones only).
FRESH9_LABELS = REPO / "eval" / "data" / "block_labels_fresh9.csv"
FRESH9: dict[str, tuple[int, ...]] = {
    "redial": (25, 34, 41, 47, 57, 64, 72, 92),
    "bridge": (9, 15, 26, 31, 57, 62, 67, 70),
    "kdconv": (51, 53, 55, 58),
}
# A tenth held-out sample (``--fresh10``, helper "blocks17", 2026-12-05 session 33, labelled on 238e85e before any rule
# or model of that session): ReDial valid: random.Random(21).sample of range(20, 100) without FRESH4-FRESH9's, 8 of them;
# Bridge: a third ``train`` tenant, chats 142-212 (no sample or model read them), random.Random(21).sample of it, 12 of
# them; KdConv: a fourth tenant, dev conversations 90-119 of each domain (no model reads them),
# random.Random(21).sample(range(90, 120), 4) of each domain.
FRESH10_LABELS = REPO / "eval" / "data" / "block_labels_fresh10.csv"
FRESH10: dict[str, tuple[int, ...]] = {
    "redial": (39, 52, 54, 59, 67, 77, 82, 98),
    "bridge": (157, 163, 165, 169, 174, 175, 178, 192, 195, 202, 203, 211),
    "kdconv": (95, 103, 110, 112),
}
# Every other sample reads Bridge ``validation``.
BRIDGE_SPLIT = {
    "fresh6": "train",
    "fresh7": "train",
    "fresh8": "train",
    "fresh9": "train",
    "fresh10": "train",
    "bridge71": "train",
}
# A training sample for the Chinese name-likeness model (``--kdconv30``, labelled in session 32 by helpers who saw
# only its dump, after fresh9 was labelled): the other 26 conversations of each domain of FRESH9's KdConv tenant.
# It is not a held-out sample; eval/train_zh_name_likeness.py fits on it.
KDCONV30_LABELS = REPO / "eval" / "data" / "block_labels_kdconv30.csv"
KDCONV30: dict[str, tuple[int, ...]] = {
    "redial": (),
    "bridge": (),
    "kdconv": tuple(i for i in range(30, 60) if i not in FRESH9["kdconv"]),
}
# A Bridge dev sample (``--bridge71``, labelled in session 32 by a helper who saw only its dump): every chat of a second
# Bridge ``train`` tenant, chats 71-141 (the size of the others). Not held out: a lesson-item filter was tried on it and
# on the other Bridge labels (eval/results/NOTES.md, session 32) and not built.
BRIDGE71_LABELS = REPO / "eval" / "data" / "block_labels_bridge71.csv"
BRIDGE71: dict[str, tuple[int, ...]] = {"redial": (), "bridge": tuple(range(71, 142)), "kdconv": ()}
# The Bridge chats a sample's tenant is built from; every other sample: the first 71 of its split.
BRIDGE_SPAN = {"bridge71": (71, 142), "fresh10": (142, 213)}
# A third KdConv tenant, dev conversations 60-89 of each domain, every block labelled in session 32 (``--kdconv60``),
# likewise a training sample of the name-likeness model.
KDCONV60_LABELS = REPO / "eval" / "data" / "block_labels_kdconv60.csv"
KDCONV60: dict[str, tuple[int, ...]] = {"redial": (), "bridge": (), "kdconv": tuple(range(60, 90))}
# A fifth KdConv tenant, dev conversations 120-149 of each domain (``--kdconv120``), every block labelled in session 33
# for the name-likeness model, dumped with that model's filter off (eval/results/NOTES.md, session 33) so that the
# items it drops are labelled too.
KDCONV120_LABELS = REPO / "eval" / "data" / "block_labels_kdconv120.csv"
KDCONV120: dict[str, tuple[int, ...]] = {"redial": (), "bridge": (), "kdconv": tuple(range(120, 150))}
# The KdConv dev conversations (per domain) a sample's tenant is built from; every other sample: the first 30.
KDCONV_SPAN = {
    "fresh9": (30, 60),
    "fresh10": (90, 120),
    "kdconv30": (30, 60),
    "kdconv60": (60, 90),
    "kdconv120": (120, 150),
}
SECTIONS = ("core_topics", "related_concepts", "avoid", "knowledge_gaps")


def _items(ctx: Any) -> list[tuple[str, str]]:
    return [(s, name) for s in SECTIONS for name in getattr(ctx, s)]


def _picks(sample: str) -> dict[str, set[int]]:
    """Chat indices (per domain for KdConv) of a sample: "main", "fresh", "fresh2", "fresh3" or "fresh4"."""
    seeded = {
        "fresh2": FRESH2,
        "fresh3": FRESH3,
        "fresh4": FRESH4,
        "fresh5": FRESH5,
        "fresh6": FRESH6,
        "fresh7": FRESH7,
        "fresh8": FRESH8,
        "fresh9": FRESH9,
        "fresh10": FRESH10,
        "kdconv30": KDCONV30,
        "bridge71": BRIDGE71,
        "kdconv60": KDCONV60,
        "kdconv120": KDCONV120,
    }
    if sample in seeded:
        return {ds: set(ix) for ds, ix in seeded[sample].items()}
    spans = (
        FRESH
        if sample == "fresh"
        else {"redial": (0, REDIAL_CHATS), "bridge": (0, BRIDGE_CHATS), "kdconv": (0, KDCONV_CHATS)}
    )
    return {ds: set(range(*span)) for ds, span in spans.items()}


def produce(fresh: bool = False, sample: str | None = None) -> list[dict[str, Any]]:
    """Every sampled block item: {dataset, conversation, section, item, turns (for --dump only)}.

    ``fresh``: the held-out chats of ``FRESH`` instead of the labelled sample (the same tenants are built);
    ``sample="fresh2"`` / ``"fresh3"`` / ``"fresh4"``: those of ``FRESH2`` / ``FRESH3`` / ``FRESH4``."""
    sample = sample or ("fresh" if fresh else "main")
    picks = _picks(sample)
    bridge_split = BRIDGE_SPLIT.get(sample, "validation")
    data = shared_data_dir()
    mem = make_memory()
    out: list[dict[str, Any]] = []
    try:
        if picks["redial"]:  # the ReDial tenant is built only when the sample holds ReDial chats
            chats = load_chats(data, "valid")
            with eval_tenant(mem, "labelredial") as tenant:
                mem.put_catalog(tenant, build_catalog(chats, people(chats)))
                for i, chat in enumerate(chats):
                    turns = [
                        TurnIn(turn_id=f"m{m.message_id}", role=m.role, text=m.text)
                        for m in chat.messages
                        if m.text.strip()
                    ]
                    mem.ingest(tenant, f"chat-{i:04d}", "s1", turns)
                for i, chat in [(i, c) for i, c in enumerate(chats) if i in picks["redial"]]:
                    ctx = mem.context(tenant, f"chat-{i:04d}", scope="recommendation")
                    conv = [(m.role, m.text) for m in chat.messages]
                    out += [
                        {
                            "dataset": "redial/valid",
                            "conversation": chat.conversation_id,
                            "section": s,
                            "item": n,
                            "turns": conv,
                        }
                        for s, n in _items(ctx)
                    ]
        b_first, b_end = BRIDGE_SPAN.get(sample, (0, 71))
        bridge = load_bridge(data, bridge_split)[b_first:b_end] if picks["bridge"] else []
        with eval_tenant(mem, "labelbridge") as tenant:
            for i, chat in enumerate(bridge, start=b_first):
                conv = chat["c_h"] + chat["c_r"]
                mem.ingest(
                    tenant,
                    f"chat-{i:04d}",
                    "s1",
                    [
                        TurnIn(turn_id=f"t{j}", role="user" if who == "student" else "assistant", text=text)
                        for j, (who, text) in enumerate(conv)
                    ],
                )
            for i, chat in [(i, c) for i, c in enumerate(bridge, start=b_first) if i in picks["bridge"]]:
                ctx = mem.context(tenant, f"chat-{i:04d}", scope="learning")
                conv = [("user" if w == "student" else "assistant", t) for w, t in chat["c_h"] + chat["c_r"]]
                out += [
                    {
                        "dataset": f"bridge/{bridge_split}",
                        "conversation": chat["id"],
                        "section": s,
                        "item": n,
                        "turns": conv,
                    }
                    for s, n in _items(ctx)
                ]
        with eval_tenant(mem, "labelkdconv") as tenant:
            sampled = []
            for domain in ("film", "music", "travel"):
                first, end = KDCONV_SPAN.get(sample, (0, 30))
                items = json.loads((data / "kdconv" / domain / "dev.json").read_text(encoding="utf-8"))[first:end]
                for n, item in enumerate(items, start=first):
                    texts = [m["message"] for m in item["messages"]]
                    user = f"{domain}-{n}"
                    mem.ingest(
                        tenant,
                        user,
                        "s1",
                        [
                            TurnIn(turn_id=f"t{j}", role="user" if j % 2 == 0 else "assistant", text=t)
                            for j, t in enumerate(texts)
                            if t.strip()
                        ],
                    )
                    if n in picks["kdconv"]:
                        sampled.append((user, texts))
            for user, texts in sampled:
                ctx = mem.context(tenant, user, scope="general")
                conv = [("user" if j % 2 == 0 else "assistant", t) for j, t in enumerate(texts)]
                out += [
                    {"dataset": "kdconv/dev", "conversation": user, "section": s, "item": n, "turns": conv}
                    for s, n in _items(ctx)
                ]
    finally:
        mem.close()
    return out


def read_labels(path: Path = LABELS) -> dict[tuple[str, str, str], dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(line for line in fh if not line.startswith("#")) if r.get("dataset")]
    return {(r["dataset"], r["conversation"], concept_key(r["item"])): r for r in rows}


def report(
    items: list[dict[str, Any]], labels: dict[tuple[str, str, str], dict[str, str]], verbose: bool = True
) -> dict[str, Any]:
    present: set[tuple[str, str, str]] = set()
    unlabelled: list[dict[str, Any]] = []
    for it in items:
        ref = (it["dataset"], it["conversation"], concept_key(it["item"]))
        if ref in labels:
            present.add(ref)
        else:
            unlabelled.append(it)
    good = sum(1 for ref in present if labels[ref]["label"] == "1")
    per: dict[str, dict[str, Any]] = {}
    for ds in sorted({k[0] for k in labels}):
        p = [r for r in present if r[0] == ds]
        per[ds] = {
            "present": len(p),
            "precision": r4(sum(labels[r]["label"] == "1" for r in p) / len(p)) if p else 0.0,
            "labelled": sum(1 for k in labels if k[0] == ds),
        }
    gone = [labels[k] for k in labels if k not in present]
    out = {
        "labelled_items": len(labels),
        "present_labelled": len(present),
        "no_longer_present": len(gone),
        "no_longer_present_bad": sum(1 for r in gone if r["label"] == "0"),
        "item_precision": r4(good / len(present)) if present else 0.0,
        "unlabelled_new_items": len(unlabelled),
        "per_dataset": per,
    }
    if verbose:
        print(f"[block-sample] {out}")
        for it in unlabelled:
            print("   unlabelled:", it["dataset"], it["conversation"], it["section"], repr(it["item"]))
        for r in gone:
            print("   gone:", r["dataset"], r["conversation"], repr(r["item"]), "label", r["label"])
    return out


def run(
    quick: bool = False, limit: int | None = None, verbose: bool = True, fresh: bool = False, sample: str | None = None
) -> dict[str, Any]:
    started = time.perf_counter()
    sample = sample or ("fresh" if fresh else "main")
    labels = {
        "main": LABELS,
        "fresh": FRESH_LABELS,
        "fresh2": FRESH2_LABELS,
        "fresh3": FRESH3_LABELS,
        "fresh4": FRESH4_LABELS,
        "fresh5": FRESH5_LABELS,
        "fresh6": FRESH6_LABELS,
        "fresh7": FRESH7_LABELS,
        "fresh8": FRESH8_LABELS,
        "fresh9": FRESH9_LABELS,
        "fresh10": FRESH10_LABELS,
        "kdconv30": KDCONV30_LABELS,
        "bridge71": BRIDGE71_LABELS,
        "kdconv60": KDCONV60_LABELS,
        "kdconv120": KDCONV120_LABELS,
    }[sample]
    res = report(produce(sample=sample), read_labels(labels), verbose)
    res["seconds"] = round(time.perf_counter() - started, 1)
    return res


def dump(items: list[dict[str, Any]]) -> None:
    """Each item with the first message naming it (for labelling by hand; printed, never saved)."""
    seen_conv = None
    for it in items:
        if it["conversation"] != seen_conv:
            seen_conv = it["conversation"]
            print(f"\n=== {it['dataset']} {seen_conv}")
            for role, text in it["turns"]:
                print(f"   {role[:1]}: {text[:160]}")
        key = it["item"].casefold()
        first = next(((r, t) for r, t in it["turns"] if key in t.casefold()), None)
        print(f" >> {it['section']:<17} {it['item']!r:<30} first: {first[0] if first else '-'}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", action="store_true", help="print items with their conversations for labelling")
    ap.add_argument("--fresh", action="store_true", help="the held-out chats (FRESH) and their own labels")
    for n, ordinal in enumerate(
        ("second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"), start=2
    ):
        ap.add_argument(
            f"--fresh{n}", action="store_true", help=f"the {ordinal} held-out sample (FRESH{n}) and its own labels"
        )
    ap.add_argument("--kdconv30", action="store_true", help="the name-likeness model's second KdConv training sample")
    ap.add_argument("--kdconv60", action="store_true", help="the name-likeness model's third KdConv training sample")
    ap.add_argument("--kdconv120", action="store_true", help="the name-likeness model's fourth KdConv training sample")
    ap.add_argument("--bridge71", action="store_true", help="a second Bridge train tenant, every block (a dev sample)")
    a = ap.parse_args()
    chosen = next((f"fresh{n}" for n in range(10, 1, -1) if getattr(a, f"fresh{n}")), "fresh" if a.fresh else "main")
    chosen = next((n for n in ("kdconv30", "kdconv60", "kdconv120", "bridge71") if getattr(a, n)), chosen)
    if a.dump:
        dump(produce(sample=chosen))
    else:
        run(sample=chosen)
