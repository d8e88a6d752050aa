"""Protocol 5 — recommendation blocks on real movie chats (ReDial): are the items about the seeker?

Setup (held-out style, built from the data; develop on ``train``, measure on ``valid``):
  * a tenant catalog of the split's movies (every title of ``movieMentions``, year stripped, type
    product), the genres of ``eval/data/movie_genres.txt`` (hand-written, type category) and people
    (type topic): PERSON entities of two or more words that spaCy's en_core_web_sm finds in the
    split's messages in at least two chats (derived from the text, no outside list);
  * one user per chat (seeker = user, recommender = assistant), every message ingested in order
    through GraphMemory into the real Neo4j, then ``context(scope="recommendation")`` with the
    default token budget.

Metrics (items = core_topics + related_concepts of the block):
  * ``core_entity_share``: core topics that are entities of the chat (a movie of its movieMentions,
    or a catalog genre / person whose name occurs in the chat) over all core topics;
  * ``generic_item_share``: items that appear in >= 25 % of the users' blocks, over all items;
  * ``seeker_entity_recall``: entities the seeker named (movies the seeker wrote as @id, genres and
    people in the seeker's messages) found among core + related + avoid;
  * ``items_per_block``: mean core / related / avoid counts; ``blocks``: chats scored.
Only figures are saved; the most common items are printed (they are data text).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import Any

from eval.common import REPO, eval_tenant, make_memory, protocol_cli, r4, shared_data_dir
from eval.redial_data import Chat, load_chats
from graphmem.extraction import pipelines
from graphmem.extraction.normalize import concept_key, normalize
from graphmem.models import Catalog, TurnIn

GENRES = REPO / "eval" / "data" / "movie_genres.txt"
GENERIC_SHARE = 0.25
_REF = re.compile(r"@(\d+)")


def genre_rows() -> list[list[str]]:
    rows = []
    for line in GENRES.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            rows.append([x.strip() for x in line.split("|") if x.strip()])
    return rows


def people(chats: list[Chat], min_chats: int = 2) -> list[str]:
    """Multi-word PERSON names spaCy finds in at least ``min_chats`` chats of the split."""
    nlp = pipelines.english()
    seen: dict[str, set[str]] = {}
    for chat in chats:
        for doc in nlp.pipe([m.text for m in chat.messages], batch_size=64):
            for ent in doc.ents:
                name = " ".join(ent.text.split())
                if ent.label_ == "PERSON" and len(name.split()) >= 2 and all(w[:1].isupper() for w in name.split()):
                    seen.setdefault(name, set()).add(chat.conversation_id)
    return sorted(n for n, c in seen.items() if len(c) >= min_chats)


def build_catalog(chats: list[Chat], persons: list[str]) -> Catalog:
    concepts: dict[str, dict[str, Any]] = {}
    for chat in chats:
        for title in chat.titles.values():
            if concept_key(title) and concept_key(title) not in concepts:
                concepts[concept_key(title)] = {"name": title, "type": "product"}
    for row in genre_rows():
        k = concept_key(row[0])
        if k not in concepts:
            concepts[k] = {"name": row[0], "aliases": row[1:], "type": "category"}
    for p in persons:
        if concept_key(p) not in concepts:
            concepts[concept_key(p)] = {"name": p, "type": "topic"}
    # Aliases must not collide with another concept's name (the catalog refuses duplicates).
    names = set(concepts)
    for c in concepts.values():
        c["aliases"] = [a for a in c.get("aliases", []) if concept_key(a) not in names]
    return Catalog.model_validate({"concepts": list(concepts.values())})


def chat_entities(chat: Chat, catalog_keys: dict[str, str]) -> tuple[set[str], set[str]]:
    """(entities of the chat, entities the seeker named), as concept keys of catalog names."""
    movies = {concept_key(t) for t in chat.titles.values()}
    seeker_movies = {
        concept_key(chat.titles[m])
        for msg in chat.messages
        if msg.role == "user"
        for m in _REF.findall(msg.raw)
        if m in chat.titles
    }

    def named(texts: list[str]) -> set[str]:
        text = " " + normalize(" ".join(texts)) + " "
        return {canon for alias, canon in catalog_keys.items() if canon not in movies and f" {alias} " in text}

    everyone = named([m.text for m in chat.messages])
    seeker = named([m.text for m in chat.messages if m.role == "user"])
    return movies | everyone, seeker_movies | seeker


def run(quick: bool = False, limit: int | None = None, verbose: bool = True, split: str = "valid") -> dict[str, Any]:
    data = shared_data_dir()
    chats = load_chats(data, split)
    if limit is None and quick:
        limit = 50
    chats = chats[:limit] if limit else chats
    started = time.perf_counter()
    persons = people(load_chats(data, split))
    catalog = build_catalog(load_chats(data, split), persons)
    # Non-movie catalog keys (genres, people) and their aliases -> canonical key, to find them in text.
    alias_keys: dict[str, str] = {}
    for c in catalog.concepts:
        if str(getattr(c.type, "value", c.type)) != "product":
            for n in (c.name, *c.aliases):
                alias_keys[normalize(n)] = concept_key(c.name)
    mem = make_memory()
    blocks: list[dict[str, Any]] = []
    try:
        with eval_tenant(mem, "redialblocks") as tenant:
            mem.put_catalog(tenant, catalog)
            for i, chat in enumerate(chats):
                user = f"chat-{i:04d}"
                turns = [
                    TurnIn(turn_id=f"m{m.message_id}", role=m.role, text=m.text)
                    for m in chat.messages
                    if m.text.strip()
                ]
                for b in range(0, len(turns), 256):
                    mem.ingest(tenant, user, "s1", turns[b : b + 256])
            for i, chat in enumerate(chats):
                ctx = mem.context(tenant, f"chat-{i:04d}", scope="recommendation")
                ents, seeker = chat_entities(chat, alias_keys)
                blocks.append(
                    {
                        "id": chat.conversation_id,
                        "core": ctx.core_topics,
                        "related": ctx.related_concepts,
                        "avoid": ctx.avoid,
                        "entities": ents,
                        "seeker": seeker,
                    }
                )
    finally:
        mem.close()
    return score(blocks, split, len(persons), len(catalog.concepts), time.perf_counter() - started, verbose)


def score(
    blocks: list[dict[str, Any]], split: str, n_people: int, n_catalog: int, seconds: float, verbose: bool
) -> dict[str, Any]:
    n = len(blocks)
    df: Counter[str] = Counter()
    for b in blocks:
        df.update({concept_key(x) for x in b["core"] + b["related"]})
    generic = {k for k, c in df.items() if n and c / n >= GENERIC_SHARE}
    items = [concept_key(x) for b in blocks for x in b["core"] + b["related"]]
    core = [(concept_key(x), b) for b in blocks for x in b["core"]]
    core_ent = sum(1 for k, b in core if k in b["entities"])
    found = total = 0
    for b in blocks:
        listed = {concept_key(x) for x in b["core"] + b["related"] + b["avoid"]}
        total += len(b["seeker"])
        found += len(b["seeker"] & listed)
    out = {
        "split": split,
        "blocks": n,
        "catalog_concepts": n_catalog,
        "catalog_people": n_people,
        "core_entity_share": r4(core_ent / len(core)) if core else 0.0,
        "generic_item_share": r4(sum(1 for k in items if k in generic) / len(items)) if items else 0.0,
        "generic_items": len(generic),
        "seeker_entity_recall": r4(found / total) if total else 0.0,
        "seeker_entities": total,
        "items_per_block": {
            s: r4(sum(len(b[s]) for b in blocks) / n) if n else 0.0 for s in ("core", "related", "avoid")
        },
        "seconds": round(seconds, 1),
    }
    if verbose:
        print(f"[redial-blocks] {out}")
        print("   generic items:", sorted(generic))
        print("   commonest items:", df.most_common(25))
        non_ent = Counter(x for b in blocks for x in b["core"] if concept_key(x) not in b["entities"])
        print("   commonest non-entity core topics:", non_ent.most_common(30))
        misses = Counter(
            k for b in blocks for k in b["seeker"] - {concept_key(x) for x in b["core"] + b["related"] + b["avoid"]}
        )
        print("   seeker entities missed:", misses.most_common(40))
    return out


if __name__ == "__main__":
    protocol_cli(run)
