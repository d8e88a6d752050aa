"""Seeded synthetic learners for the benchmarks, built on the shared Metacademy catalog.

The catalog (393 concepts and their prerequisites) is read at run time from
``../shared/data/metacademy/concepts.jsonl`` relative to the repository root
(override the data directory with ``GRAPHMEM_SHARED_DATA``); nothing from it is
copied into the repository. For 10,000- and 100,000-concept tenants the 393 real
concepts are replicated as synthetic variants ("<title> variant 17") whose
prerequisite edges mirror the real ones inside each variant family.

Two kinds of users:

* :func:`conversation_user` — multi-session learners whose turns are rendered
  from English or Chinese templates (concept titles, stances, relation
  statements, assistant replies, small talk). Session 1 states the learner's
  key facts ("I already know X", "I'm confused by Y", "I want to learn Z");
  later sessions talk about other things. Used through the real extraction.
* :func:`scale_turns` — bulk users with a known concept count (100 … 100,000),
  whose turns come with their ground-truth extraction (:class:`TurnExtraction`),
  so that a large user can be written straight to the store without spending
  the run on spaCy.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from graphmem.extraction.normalize import concept_key
from graphmem.models import (
    ConceptMention,
    ConceptType,
    ExtractorName,
    RelationMention,
    RelationType,
    Stance,
    StanceMention,
    TurnExtraction,
)

REPO = Path(__file__).resolve().parent.parent
EPOCH = datetime(2025, 6, 1, tzinfo=UTC)


def shared_data_dir() -> Path:
    env = os.environ.get("GRAPHMEM_SHARED_DATA")
    return Path(env) if env else (REPO.parent / "shared" / "data")


# ---------------------------------------------------------------------------
# Catalog
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Concept:
    key: str
    name: str
    id: str
    family: int  # 0 = real Metacademy concept, v > 0 = synthetic variant v
    prereqs: tuple[int, ...]  # indexes into the catalog concept list


@lru_cache(maxsize=2)
def _metacademy() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    path = shared_data_dir() / "metacademy" / "concepts.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out, seen = [], set()
    for item in rows:
        title = " ".join(item["title"].split())
        key = concept_key(title)
        if not key or key in seen:
            continue
        seen.add(key)
        out.append((item["tag"], title, tuple(p["tag"] for p in item.get("prerequisites", []))))
    return tuple(out)


@lru_cache(maxsize=4)
def catalog_concepts(size: int) -> tuple[Concept, ...]:
    """``size`` concepts: the real ones first, then variant families (variant 1, 2, …)."""
    base = _metacademy()
    index = {tag: i for i, (tag, _, _) in enumerate(base)}
    n = len(base)
    out: list[Concept] = []
    family = 0
    while len(out) < size:
        for _i, (tag, title, pre) in enumerate(base):
            if len(out) >= size:
                break
            prereqs = tuple(family * n + index[p] for p in pre if p in index and p != tag)
            name = title if family == 0 else f"{title} variant {family}"
            cid = tag if family == 0 else f"{tag}~v{family}"
            out.append(Concept(concept_key(name), name, cid, family, prereqs))
        family += 1
    # Drop prerequisites that fall outside a partial last family.
    return tuple(Concept(c.key, c.name, c.id, c.family, tuple(p for p in c.prereqs if p < len(out))) for c in out)


def catalog_document(size: int) -> dict[str, Any]:
    """The tenant catalog (graphmem's Catalog JSON) with ``size`` concepts and their prerequisites."""
    concepts = catalog_concepts(size)
    return {
        "concepts": [{"name": c.name, "id": c.id, "type": "topic"} for c in concepts],
        "relations": [
            {"source": concepts[p].id, "type": "prerequisite", "target": c.id} for c in concepts for p in c.prereqs
        ],
    }


def real_concept_count() -> int:
    return len(_metacademy())


# ---------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------

# Each template: (text with {a} / {b} slots, stance of {a} or None, relation (a -> b) or None).
STANCE_TEMPLATES: dict[str, dict[Stance, list[str]]] = {
    "en": {
        Stance.knows: ["I already know {a}.", "I have studied {a} before, so that part is fine."],
        Stance.confused: ["I'm confused by {a}.", "I don't understand {a} at all."],
        Stance.interested: ["I want to learn {a}.", "I'm really interested in {a} right now."],
        Stance.dislikes: ["I don't want to learn {a} anymore."],
    },
    "zh": {
        Stance.knows: ["我已经学过{a}了。", "我熟悉{a}，这部分没问题。"],
        Stance.confused: ["我不懂{a}。", "我完全搞不懂{a}。"],
        Stance.interested: ["我想学{a}。", "我打算学习{a}。"],
        Stance.dislikes: ["我不想再学{a}了。"],
    },
}
RELATION_TEMPLATES: dict[str, list[tuple[str, RelationType]]] = {
    "en": [
        ("{a} is a prerequisite for {b}.", RelationType.prerequisite),
        ("{a} uses {b}.", RelationType.uses),
        ("{a} requires {b}.", RelationType.requires),
    ],
    "zh": [
        ("{a}是{b}的基础。", RelationType.prerequisite),
        ("{a}用到了{b}。", RelationType.uses),
        ("{a}需要{b}。", RelationType.requires),
    ],
}
NEUTRAL_TEMPLATES: dict[str, list[str]] = {
    "en": [
        "Can you give me an example of {a}?",
        "Let's review {a} today.",
        "Could we compare {a} and {b}?",
        "I read a blog post about {a} and {b} yesterday.",
    ],
    "zh": ["能举个{a}的例子吗？", "今天复习一下{a}。", "可以比较一下{a}和{b}吗？", "昨天看了一篇关于{a}和{b}的文章。"],
}
ASSISTANT_TEMPLATES: dict[str, list[str]] = {
    "en": [
        "Sure. {a} is often discussed together with {b}; let's start with a short example.",
        "Good question. Think of {a} as a tool, and try a small exercise with {b} first.",
        "Here is a summary of {a}, with a worked example and two practice questions.",
    ],
    "zh": [
        "好的。{a}经常和{b}一起讨论，我们先看一个小例子。",
        "好问题。可以先把{a}当作工具，再用{b}做一个小练习。",
        "这是{a}的总结，附带一个例子和两道练习题。",
    ],
}
SMALL_TALK: dict[str, list[str]] = {
    "en": [
        "Thanks, that helps.",
        "Let me think about that for a minute.",
        "OK, makes sense now, thank you!",
        "I'll try the exercise tonight.",
    ],
    "zh": ["谢谢，明白了。", "让我想一想。", "好的，现在清楚了，谢谢！", "我今晚做一下练习。"],
}


# ---------------------------------------------------------------------------
# Turns with ground truth
# ---------------------------------------------------------------------------


@dataclass
class GenTurn:
    role: str
    text: str
    language: str
    ts: datetime
    mentions: list[tuple[Concept, int, int]] = field(default_factory=list)  # concept, start, end
    stances: list[tuple[Concept, Stance]] = field(default_factory=list)
    relations: list[tuple[Concept, RelationType, Concept]] = field(default_factory=list)

    def extraction(self) -> TurnExtraction:
        """The ground-truth extraction of this turn, in graphmem's own model."""
        spans = {c.key: (s, e) for c, s, e in self.mentions}
        return TurnExtraction(
            language=self.language,
            concepts=[
                ConceptMention(
                    key=c.key,
                    name=c.name,
                    type=ConceptType.topic,
                    language=self.language,
                    start=s,
                    end=e,
                    surface=self.text[s:e],
                    extractor=ExtractorName.catalog,
                    confidence=0.95,
                    in_catalog=True,
                )
                for c, s, e in self.mentions
            ],
            stances=[
                StanceMention(
                    key=c.key,
                    name=c.name,
                    stance=st,
                    start=spans[c.key][0],
                    end=spans[c.key][1],
                    cue="template",
                    confidence=0.9,
                )
                for c, st in self.stances
            ],
            relations=[
                RelationMention(
                    source_key=a.key,
                    source_name=a.name,
                    type=rt,
                    target_key=b.key,
                    target_name=b.name,
                    start=spans[a.key][0],
                    end=spans[b.key][1],
                    extractor=ExtractorName.pattern,
                    confidence=0.8,
                    cue="template",
                )
                for a, rt, b in self.relations
            ],
        )


def _fill(template: str, a: Concept | None, b: Concept | None = None) -> tuple[str, list[tuple[Concept, int, int]]]:
    text, mentions = "", []
    rest = template
    while rest:
        ia, ib = rest.find("{a}"), rest.find("{b}")
        cands = [(i, s) for i, s in ((ia, "a"), (ib, "b")) if i >= 0]
        if not cands:
            text += rest
            break
        i, slot = min(cands)
        text += rest[:i]
        c = a if slot == "a" else b
        assert c is not None
        mentions.append((c, len(text), len(text) + len(c.name)))
        text += c.name
        rest = rest[i + 3 :]
    return text, mentions


def _turn(
    rnd: random.Random,
    lang: str,
    role: str,
    ts: datetime,
    kind: str,
    a: Concept | None = None,
    b: Concept | None = None,
    stance: Stance | None = None,
) -> GenTurn:
    rel: list[tuple[Concept, RelationType, Concept]] = []
    stances: list[tuple[Concept, Stance]] = []
    if kind == "stance":
        assert a is not None and stance is not None
        template = rnd.choice(STANCE_TEMPLATES[lang][stance])
        stances.append((a, stance))
    elif kind == "relation":
        template, rt = rnd.choice(RELATION_TEMPLATES[lang])
        assert a is not None and b is not None
        rel.append((a, rt, b))
    elif kind == "assistant":
        template = rnd.choice(ASSISTANT_TEMPLATES[lang])
    elif kind == "small":
        template = rnd.choice(SMALL_TALK[lang])
    else:
        template = rnd.choice(NEUTRAL_TEMPLATES[lang])
    if "{b}" in template and b is None:
        template = (
            template.replace("{b}", "{a}")
            if "{a}" not in template
            else template.split("{b}")[0].rstrip(" 和and") + ("。" if lang == "zh" else ".")
        )
    text, mentions = _fill(template, a, b)
    # One mention per concept per turn is enough for ground truth.
    seen: set[str] = set()
    mentions = [m for m in mentions if not (m[0].key in seen or seen.add(m[0].key))]
    return GenTurn(role, text, lang, ts, mentions, stances, rel)


@dataclass
class Session:
    session_id: str
    turns: list[GenTurn]


@dataclass
class GenUser:
    user_id: str
    language: str
    sessions: list[Session]
    key_facts: list[tuple[Concept, Stance]]

    @property
    def turns(self) -> list[GenTurn]:
        return [t for s in self.sessions for t in s.turns]


def conversation_user(
    user_id: str,
    *,
    language: str,
    n_turns: int,
    seed: int,
    catalog_size: int | None = None,
    turns_per_session: int = 25,
    key_facts_per_stance: int = 2,
    pool_size: int = 40,
) -> GenUser:
    """A multi-session learner: key facts in session 1, then ``n_turns`` turns in total.

    The learner's world is a neighbourhood of the real catalog (a concept, its
    prerequisites and their prerequisites, topped up at random); key-fact concepts
    are drawn from it and never mentioned again after session 1.
    """
    rnd = random.Random(seed)
    concepts = catalog_concepts(catalog_size or real_concept_count())
    real = [c for c in concepts if c.family == 0]
    start = rnd.choice([c for c in real if c.prereqs] or real)
    pool: list[Concept] = [start]
    frontier = [start]
    while frontier and len(pool) < pool_size:
        nxt = []
        for c in frontier:
            for p in c.prereqs:
                if concepts[p] not in pool:
                    pool.append(concepts[p])
                    nxt.append(concepts[p])
        frontier = nxt
    while len(pool) < pool_size:
        c = rnd.choice(real)
        if c not in pool:
            pool.append(c)
    rnd.shuffle(pool)
    facts: list[tuple[Concept, Stance]] = []
    for st in (Stance.knows, Stance.confused, Stance.interested):
        for _ in range(key_facts_per_stance):
            facts.append((pool.pop(), st))
    # Later talk follows a Zipf-like preference over the remaining pool.
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(pool))]
    ts = EPOCH
    sessions: list[Session] = []
    turns: list[GenTurn] = []
    # Session 1: greeting, the key facts (each answered by the assistant), a little talk.
    for c, st in facts:
        turns.append(_turn(rnd, language, "user", ts, "stance", c, stance=st))
        ts += timedelta(minutes=1)
        turns.append(_turn(rnd, language, "assistant", ts, "assistant", c, rnd.choice(pool)))
        ts += timedelta(minutes=1)
    while len(turns) < n_turns:
        if len(turns) % turns_per_session == 0:
            ts += timedelta(days=rnd.uniform(1, 4))
        a, b = rnd.choices(pool, weights, k=2)
        if a is b:
            b = rnd.choice(pool)
        r = rnd.random()
        if r < 0.12:
            t = _turn(rnd, language, "user", ts, "relation", a, b)
        elif r < 0.22:
            t = _turn(rnd, language, "user", ts, "stance", a, stance=rnd.choice([Stance.interested, Stance.confused]))
        elif r < 0.30:
            t = _turn(rnd, language, "user", ts, "small")
        else:
            t = _turn(rnd, language, "user", ts, "neutral", a, b)
        turns.append(t)
        ts += timedelta(minutes=1)
        if len(turns) < n_turns:
            turns.append(_turn(rnd, language, "assistant", ts, "assistant", a, b))
            ts += timedelta(minutes=1)
    turns = turns[:n_turns]
    for i in range(0, len(turns), turns_per_session):
        sessions.append(Session(f"s{i // turns_per_session + 1:04d}", turns[i : i + turns_per_session]))
    return GenUser(user_id, language, sessions, facts)


def _scale_choice(rnd: random.Random, n_concepts: int, catalog_size: int) -> list[Concept]:
    concepts = catalog_concepts(catalog_size)
    return list(concepts[:n_concepts]) if n_concepts >= catalog_size else rnd.sample(list(concepts), n_concepts)


def scale_user_concepts(n_concepts: int, *, seed: int, catalog_size: int) -> list[Concept]:
    """The concepts :func:`scale_turns` gives a user (same seed, same list)."""
    return _scale_choice(random.Random(seed), n_concepts, catalog_size)


def scale_turns(
    n_concepts: int, *, seed: int, catalog_size: int, language: str = "en", per_turn: int = 4, days: float = 60.0
) -> list[GenTurn]:
    """Turns (with ground truth) that make a user mention exactly ``n_concepts`` concepts.

    Every concept is mentioned at least once; a Zipf-like tail gets repeat
    mentions, 8 % of user turns carry a stance and 10 % a relation statement.
    """
    rnd = random.Random(seed)
    chosen = _scale_choice(rnd, n_concepts, catalog_size)
    order = chosen[:]
    rnd.shuffle(order)
    # Repeat mentions: the first 20 % of concepts get 1-6 extra mentions each.
    hot = order[: max(1, n_concepts // 5)]
    for c in hot:
        order.extend([c] * rnd.randint(1, 6))
    rnd.shuffle(order)
    n_turns = (len(order) + per_turn - 1) // per_turn
    span = timedelta(days=days)
    turns: list[GenTurn] = []
    for i in range(n_turns):
        group = list(dict.fromkeys(order[i * per_turn : (i + 1) * per_turn]))
        ts = EPOCH + span * (i / max(1, n_turns))
        pieces = []
        mentions: list[tuple[Concept, int, int]] = []
        stances: list[tuple[Concept, Stance]] = []
        relations: list[tuple[Concept, RelationType, Concept]] = []
        text = ""
        for j, c in enumerate(group):
            r = rnd.random()
            if r < 0.08:
                st = rnd.choice(list(Stance))
                template = STANCE_TEMPLATES[language][st][0]
                stances.append((c, st))
            elif r < 0.18 and j + 1 < len(group):
                template, rt = RELATION_TEMPLATES[language][0]
                relations.append((c, rt, group[j + 1]))
                template = template.replace("{b}", "{b}")
            else:
                template = NEUTRAL_TEMPLATES[language][1]
            piece, ms = _fill(template, c, group[j + 1] if "{b}" in template else None)
            for m in ms:
                mentions.append((m[0], len(text) + m[1], len(text) + m[2]))
            text += piece + " "
            pieces.append(piece)
        seen: set[str] = set()
        mentions = [m for m in mentions if not (m[0].key in seen or seen.add(m[0].key))]
        turns.append(GenTurn("user", text.strip(), language, ts, mentions, stances, relations))
    return turns
