"""Demo-like data for the exploration tests, written straight through the store.

`load_demo_like(store, tenant)` is the one place that builds it: the demo
catalog (demo/catalog.yaml, keys = name.casefold()), the xiaoming learner's
turns from demo/learners.json with hand-made extractions, weights with all
three tiers and a compaction record. A second learner, sam, shares some
concepts and states relations of his own that xiaoming must never see.
When the real demo loader (graphmem.service) is used instead, only this
function's body changes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import yaml

from graphmem.models import (
    ConceptMention,
    ExtractorName,
    RelationMention,
    RelationType,
    Stance,
    StanceMention,
    Tier,
    TurnExtraction,
)
from graphmem.settings import PROJECT_ROOT
from graphmem.store import CatalogRows, CompactionRecord, Neo4jStore, StoredTurn, UserRef, WeightRow

DEMO = PROJECT_ROOT / "demo"

# (surface as written in the turn, catalog name); a surface may be an alias.
Mention = tuple[str, str]
Rel = tuple[str, RelationType, str]


@dataclass(frozen=True)
class TurnSpec:
    mentions: Sequence[Mention] = ()
    relations: Sequence[Rel] = ()
    stances: Sequence[tuple[str, Stance]] = ()


# What an extractor would find in each of xiaoming's demo turns, in order.
XIAOMING = {
    "week1": [
        TurnSpec([("Python基础", "Python基础")], stances=[("Python基础", Stance.interested)]),
        TurnSpec(
            [("Python基础", "Python基础"), ("Django框架", "Django框架")],
            relations=[("Python基础", RelationType.prerequisite, "Django框架")],
        ),
        TurnSpec([("Python基础", "Python基础")], stances=[("Python基础", Stance.confused)]),
        TurnSpec(),
    ],
    "week2": [
        TurnSpec(
            [("Python基础", "Python基础"), ("Django框架", "Django框架")],
            stances=[("Python基础", Stance.knows), ("Django框架", Stance.interested)],
        ),
        TurnSpec(
            [("Django框架", "Django框架"), ("SQLAlchemy", "SQLAlchemy"), ("SQL基础", "SQL基础")],
            relations=[
                ("Django框架", RelationType.uses, "SQLAlchemy"),
                ("SQLAlchemy", RelationType.requires, "SQL基础"),
            ],
        ),
        TurnSpec([("Django框架", "Django框架")], stances=[("Django框架", Stance.interested)]),
        TurnSpec([("部署Django", "Django部署")]),
    ],
}

# sam: not a demo turn list of his own here, but turns that share concepts with xiaoming and state
# relations (owned by 'u:sam') that would change xiaoming's graph and gaps if they leaked.
SAM_SESSION = "r2"
SAM_START = "2026-11-26T19:00:00Z"
SAM_TURNS = [
    (
        "I've used Python basics for years. I want to learn Docker to ship my Flask app.",
        TurnSpec(
            [("Python basics", "Python基础"), ("Docker", "Docker"), ("Flask", "Flask"), ("Flask app", "Flask app")],
            stances=[("Python basics", Stance.knows)],
        ),
    ),
    (
        "For me Docker comes before deploy Django, and Python basics goes with SQLAlchemy.",
        TurnSpec(
            [
                ("Docker", "Docker"),
                ("deploy Django", "Django部署"),
                ("Python basics", "Python基础"),
                ("SQLAlchemy", "SQLAlchemy"),
            ],
            relations=[
                ("Docker", RelationType.prerequisite, "Django部署"),
                ("Python基础", RelationType.related_to, "SQLAlchemy"),
            ],
        ),
    ),
]

XIAOMING_WEIGHTS = [
    WeightRow("django框架", 40.0, 8.0, 48.0, Tier.core),
    WeightRow("python基础", 30.0, 4.0, 34.0, Tier.core),
    WeightRow("django部署", 10.0, 6.0, 16.0, Tier.related),
    WeightRow("sqlalchemy", 3.0, 6.0, 9.0, Tier.related),
    WeightRow("sql基础", 3.0, 1.0, 4.0, Tier.compacted),
]
SAM_WEIGHTS = [
    WeightRow("docker", 20.0, 2.0, 22.0, Tier.core),
    WeightRow("flask", 10.0, 2.0, 12.0, Tier.core),
    WeightRow("python基础", 20.0, 3.0, 23.0, Tier.core),
    WeightRow("django部署", 10.0, 0.0, 10.0, Tier.related),
    WeightRow("sqlalchemy", 10.0, 0.0, 10.0, Tier.related),
]


def key_of(name: str) -> str:
    return name.casefold()


def catalog_names() -> set[str]:
    return {c["name"] for c in yaml.safe_load((DEMO / "catalog.yaml").read_text(encoding="utf-8"))["concepts"]}


def catalog_rows() -> CatalogRows:
    doc = yaml.safe_load((DEMO / "catalog.yaml").read_text(encoding="utf-8"))
    concepts = [
        {
            "key": key_of(c["name"]),
            "name": c["name"],
            "aliases": c.get("aliases", []),
            "aliases_text": " | ".join(c.get("aliases", [])),
            "type": c.get("type", "topic"),
            "id": None,
            "url": None,
            "critical": False,
            "language": "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in c["name"]) else "en",
        }
        for c in doc["concepts"]
    ]
    relations: dict[RelationType, list[dict[str, str]]] = {}
    for r in doc["relations"]:
        relations.setdefault(RelationType(r["type"]), []).append(
            {"source_key": key_of(r["source"]), "target_key": key_of(r["target"])}
        )
    return CatalogRows(json.dumps(doc, ensure_ascii=False), concepts, relations)


def _extraction(text: str, spec: TurnSpec, language: str) -> TurnExtraction:
    concepts, cursor = [], {}
    catalog = catalog_names()
    for surface, name in spec.mentions:
        # Successive mentions of one surface point at its successive occurrences.
        start = text.index(surface, cursor.get(surface, 0))
        cursor[surface] = start + len(surface)
        concepts.append(
            ConceptMention(
                key=key_of(name),
                name=name,
                language=language,
                start=start,
                end=start + len(surface),
                surface=surface,
                extractor=ExtractorName.catalog if name in catalog else ExtractorName.noun_chunk,
                confidence=0.95 if name in catalog else 0.6,
                in_catalog=name in catalog,
            )
        )
    names = dict(spec.mentions)
    relations = [
        RelationMention(
            source_key=key_of(a),
            source_name=a,
            type=t,
            target_key=key_of(b),
            target_name=b,
            start=0,
            end=len(text),
            extractor=ExtractorName.pattern,
            confidence=0.8,
            cue="pattern",
        )
        for a, t, b in spec.relations
    ]
    stances = []
    for surface, stance in spec.stances:
        start = text.index(surface)
        stances.append(
            StanceMention(
                key=key_of(names[surface]),
                name=names[surface],
                stance=stance,
                start=start,
                end=start + len(surface),
                cue=stance.value,
                confidence=0.9,
            )
        )
    return TurnExtraction(language=language, concepts=concepts, relations=relations, stances=stances)


def _turns(
    user_id: str, session_id: str, start: str, texts: Sequence[tuple[str, str, TurnSpec]], language: str
) -> list[StoredTurn]:
    t0 = datetime.fromisoformat(start.replace("Z", "+00:00"))
    return [
        StoredTurn(
            f"{user_id}-{session_id}-{i + 1}",
            role,
            text,
            t0 + timedelta(minutes=2 * i),
            language,
            len(text),
            _extraction(text, spec, language),
        )
        for i, (role, text, spec) in enumerate(texts)
    ]


def xiaoming_turns() -> dict[str, list[StoredTurn]]:
    learners = json.loads((DEMO / "learners.json").read_text(encoding="utf-8"))["learners"]
    xiaoming = next(lr for lr in learners if lr["user_id"] == "xiaoming")
    out = {}
    for session in xiaoming["sessions"]:
        specs = XIAOMING[session["session_id"]]
        texts = [(t["role"], t["text"], spec) for t, spec in zip(session["turns"], specs, strict=True)]
        out[session["session_id"]] = _turns("xiaoming", session["session_id"], session["ts"], texts, "zh")
    return out


def sam_turns() -> list[StoredTurn]:
    return _turns("sam", SAM_SESSION, SAM_START, [("user", text, spec) for text, spec in SAM_TURNS], "en")


def drop_tenant(store: Neo4jStore, tenant: str) -> None:
    """Removes everything of a test tenant (only ever called with the tests' own generated ids)."""
    with store._driver.session(database=store.database) as session:
        session.run(
            "MATCH (n) WHERE n.tenant = $tenant OR (n:Tenant AND n.id = $tenant) DETACH DELETE n", tenant=tenant
        ).consume()


def load_demo_like(store: Neo4jStore, tenant: str) -> dict[str, UserRef]:
    """Catalog, xiaoming and sam for `tenant`, ranked and compacted; returns the users by id."""
    store.replace_catalog(tenant, catalog_rows())
    xiaoming, sam = UserRef(tenant, "xiaoming"), UserRef(tenant, "sam")
    for session_id, turns in xiaoming_turns().items():
        store.write_ingest(xiaoming, session_id, turns)
    store.write_ingest(sam, SAM_SESSION, sam_turns())
    run = {
        "id": f"run-{tenant}-xiaoming",
        "at": "2026-11-23T11:00:00+00:00",
        "ranker": "reference",
        "threshold": 5.0,
        "concepts_before": 5,
        "concepts_after": 4,
        "compacted": 1,
    }
    store.write_weights(
        xiaoming, XIAOMING_WEIGHTS, CompactionRecord(run=run, folded_keys=["sql基础"], folded_names=["SQL基础"])
    )
    store.write_weights(sam, SAM_WEIGHTS)
    return {"xiaoming": xiaoming, "sam": sam}
