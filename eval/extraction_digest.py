"""A digest of everything extraction yields on ~3,000 fixed turns, to prove a speed-up changed no output.

    python -m eval.extraction_digest [--out digest.jsonl]

Turns (read at run time from ../shared/data, never copied here), each set extracted one conversation
at a time with its roles (so coreference and replies run) and then all in one batch without roles,
without and with a catalog:

- Bridge (train split, the first conversations up to 1,200 turns; catalog: Metacademy concepts);
- ReDial (train split, the first chats up to 1,200 turns, seeker = user; catalog: the split's movie
  titles plus the genre list of eval/redial_block_eval.py);
- KdConv (dev, the first conversations up to 600 turns; catalog: their gold entity names), for the
  code shared with Chinese.

Prints one SHA-256 per (set, catalog) and one overall; ``--out`` writes every TurnExtraction as a
JSON line (set, catalog, turn index, extraction) so two runs can be diffed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from eval.extraction_eval import Conversation, load_bridge, load_kdconv, shared_data_dir
from eval.redial_block_eval import build_catalog
from eval.redial_data import load_chats
from graphmem.extraction import ConceptExtractor
from graphmem.extraction.normalize import concept_key
from graphmem.models import Catalog

BRIDGE_TURNS, REDIAL_TURNS, KDCONV_TURNS = 1200, 1200, 600


def _first_turns(convs: list[Conversation], limit: int) -> list[Conversation]:
    kept, n = [], 0
    for conv in convs:
        if n >= limit:
            break
        kept.append(conv)
        n += len(conv.turns)
    return kept


def redial_conversations(data: Path) -> tuple[list[Conversation], Catalog]:
    chats = load_chats(data, "train")
    convs = [Conversation([m.text for m in c.messages], [m.role for m in c.messages], []) for c in chats]
    # The catalog of the ReDial block evaluation (films and genres; no people).
    return _first_turns(convs, REDIAL_TURNS), build_catalog(chats, [])


def kdconv_catalog(convs: list[Conversation]) -> Catalog:
    concepts: dict[str, dict[str, str]] = {}
    for conv in convs:
        for name in conv.gold:
            if concept_key(name) and concept_key(name) not in concepts:
                concepts[concept_key(name)] = {"name": name, "type": "topic"}
    return Catalog.model_validate({"concepts": list(concepts.values())})


def turn_sets(data: Path) -> dict[str, tuple[list[Conversation], Catalog]]:
    from bench.extraction_throughput import metacademy_catalog

    kdconv = _first_turns(load_kdconv(data), KDCONV_TURNS)
    return {
        "bridge": (_first_turns(load_bridge(data, "train"), BRIDGE_TURNS), metacademy_catalog(data)),
        "redial": redial_conversations(data),
        "kdconv": (kdconv, kdconv_catalog(kdconv)),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, help="write every extraction as a JSON line")
    args = ap.parse_args()
    out = args.out.open("w", encoding="utf-8") if args.out else None
    overall = hashlib.sha256()
    total = 0
    for name, (convs, catalog) in turn_sets(shared_data_dir()).items():
        for label, extractor in (("none", ConceptExtractor()), ("catalog", ConceptExtractor(catalog))):
            digest = hashlib.sha256()
            i = 0
            # One conversation at a time with roles (as ingest does), then the whole set as one batch
            # without roles (as the throughput bench does; Chinese names then come from the whole batch).
            batches = [(c.turns, c.roles) for c in convs] + [([t for c in convs for t in c.turns], None)]
            for turns, roles in batches:
                for ex in extractor.extract(turns, roles):
                    line = ex.model_dump_json()
                    digest.update(line.encode("utf-8") + b"\n")
                    if out is not None:
                        out.write(json.dumps({"set": name, "catalog": label, "turn": i, "x": json.loads(line)}) + "\n")
                    i += 1
            total += i
            overall.update(digest.digest())
            print(f"{name:7s} {label:8s} {i:5d} turns  {digest.hexdigest()}")
    print(f"overall {total} turns  {overall.hexdigest()}")
    if out is not None:
        out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
