"""Typed records that cross module boundaries.

Pydantic models validate what comes from outside (turns, catalogs, extraction
results on their way to the store). The graph handed to the pure ranking,
compaction and rendering functions is made of frozen dataclasses, because
those functions run on every request and need no validation.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from enum import Enum, StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Role = Literal["user", "assistant", "system", "tool"]
ROLES: tuple[str, ...] = ("user", "assistant", "system", "tool")


class RelationType(StrEnum):
    """Relation kinds between concepts. `A prerequisite B` means A must be learned before B."""

    prerequisite = "prerequisite"
    uses = "uses"
    requires = "requires"
    part_of = "part_of"
    related_to = "related_to"

    @property
    def neo4j_type(self) -> str:
        return NEO4J_REL_TYPES[self]


# The allow-list: the only relationship type names that ever reach a Cypher string.
NEO4J_REL_TYPES: dict[RelationType, str] = {
    RelationType.prerequisite: "PREREQUISITE_OF",
    RelationType.uses: "USES",
    RelationType.requires: "REQUIRES",
    RelationType.part_of: "PART_OF",
    RelationType.related_to: "RELATED_TO",
}
REL_TYPE_FROM_NEO4J: dict[str, RelationType] = {v: k for k, v in NEO4J_REL_TYPES.items()}

# Relations along which "B depends on A", so A is a knowledge-gap candidate when B is a topic:
# prerequisite A -> B (A is learned before B) and requires B -> A (B requires A). `uses` is not a
# dependency: what a topic uses is related to it (DESIGN.md: SQLAlchemy, Nginx, PostgreSQL are
# related concepts of Django, the gaps are its prerequisites).
DEPENDENCY_TYPES: frozenset[RelationType] = frozenset({RelationType.prerequisite, RelationType.requires})


class Stance(StrEnum):
    interested = "interested"
    confused = "confused"
    knows = "knows"
    dislikes = "dislikes"


class ConceptType(StrEnum):
    """Suggested concept types (what extraction assigns itself). A catalog may use any other
    short label (movie, genre, person, book, song...): see :func:`check_concept_type`."""

    course = "course"
    topic = "topic"
    tool = "tool"
    skill = "skill"
    product = "product"
    category = "category"


# A concept type is a label the tenant chooses: 1-32 letters (any script), digits, '_' or '-'.
# It is stored as a property (Concept.type) and never becomes part of a Cypher string.
CONCEPT_TYPE_MAX_LENGTH = 32
_CONCEPT_TYPE = re.compile(rf"[\w-]{{1,{CONCEPT_TYPE_MAX_LENGTH}}}")  # \w: Unicode letters, digits, '_'


def check_concept_type(value: object) -> str:
    """A valid concept type as a plain string; ValueError with a sentence otherwise."""
    if isinstance(value, Enum):
        value = value.value
    if not isinstance(value, str):
        raise ValueError(f"concept type must be a string, got {type(value).__name__}")
    if not _CONCEPT_TYPE.fullmatch(value):
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise ValueError(
            f"concept type {shown!r} must be 1-{CONCEPT_TYPE_MAX_LENGTH} letters, digits, '_' or '-' "
            f"(no spaces), e.g. {', '.join(t.value for t in ConceptType)}, movie, genre, person"
        )
    return value


class ExtractorName(StrEnum):
    catalog = "catalog"
    ner = "ner"
    noun_chunk = "noun_chunk"
    pattern = "pattern"
    cooccurrence = "cooccurrence"
    coreference = "coreference"


class Tier(StrEnum):
    core = "core"
    related = "related"
    compacted = "compacted"


# Unicode's Cc (control) category is exactly U+0000-U+001F and U+007F-U+009F, Cs (surrogates)
# U+D800-U+DFFF: one regex instead of a per-character category look-up (~0.4 ms per turn of ingest).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def clean_text(value: str) -> str:
    """Drop control characters (keeping newlines and tabs) and lone surrogates."""
    return _CONTROL.sub("", value) if _CONTROL.search(value) else value


def clean_name(value: str, max_length: int = 120) -> str:
    """A concept name: control characters removed, whitespace collapsed, bounded."""
    text = " ".join(clean_text(value).split())
    return text[:max_length].strip()


MAX_UTC_OFFSET = timedelta(hours=18)


def utc_now() -> datetime:
    return datetime.now(UTC)


# ---------------------------------------------------------------------------
# Turns
# ---------------------------------------------------------------------------


class TurnIn(BaseModel):
    """One turn as a client sends it."""

    model_config = ConfigDict(extra="forbid")

    turn_id: str | None = Field(default=None, min_length=1, max_length=128)
    role: Role = "user"
    text: str = Field(min_length=1)
    ts: datetime | None = None

    @field_validator("ts")
    @classmethod
    def _storable_offset(cls, value: datetime | None) -> datetime | None:
        # Python accepts UTC offsets up to ±23:59, Neo4j's temporal types only up to ±18:00 (real zones
        # span -12:00..+14:00): refused here, a 422, not a store error.
        offset = value.utcoffset() if value is not None else None
        if offset is not None and abs(offset) > MAX_UTC_OFFSET:
            raise ValueError("ts has a UTC offset beyond ±18:00; send the time in UTC or with a real offset")
        return value


def derive_turn_id(session_id: str, role: str, text: str, ts: datetime | None) -> str:
    """Content-derived id for clients that send none, so a retry is still a no-op."""
    digest = hashlib.sha256(
        "\x1f".join([session_id, role, text, ts.isoformat() if ts else ""]).encode("utf-8", "surrogatepass")
    ).hexdigest()
    return "t-" + digest[:24]


# ---------------------------------------------------------------------------
# Catalog
# ---------------------------------------------------------------------------


def _no_dot_segments(name: str) -> str:
    """A concept name may be a URL path (DELETE /v1/users/{id}/concepts/{name}): a name with a `.` or `..`
    segment would be resolved away by clients (`../../victimB` reaches another user). Browsers treat `\\`
    as `/`. Names with `/` otherwise stay legal ("CI/CD流程")."""
    if any(part in (".", "..") for part in name.replace("\\", "/").split("/")):
        raise ValueError(f"{name!r} has a '.' or '..' path segment; such names could address another resource")
    return name


class CatalogConcept(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=120)
    aliases: list[str] = Field(default_factory=list)
    # Any short label (check_concept_type); the ConceptType values are suggestions.
    type: str = ConceptType.topic.value
    id: str | None = None
    url: str | None = None
    # A tenant may declare concepts that compaction must never fold away.
    critical: bool = False
    # A name that is also an everyday word ("It", "Up", 英雄) is matched only with evidence
    # (catalog_matcher.is_common_name); a tenant may declare it unambiguous to match it always.
    unambiguous: bool = False

    @field_validator("name")
    @classmethod
    def _clean_name(cls, value: str) -> str:
        cleaned = clean_name(value)
        if not cleaned:
            raise ValueError("concept name is empty after removing control characters")
        return _no_dot_segments(cleaned)

    @field_validator("aliases")
    @classmethod
    def _clean_aliases(cls, value: list[str]) -> list[str]:
        return [_no_dot_segments(a) for a in (clean_name(v) for v in value) if a]

    @field_validator("type", mode="before")
    @classmethod
    def _check_type(cls, value: object) -> str:
        return check_concept_type(value)

    @field_validator("id", "url")
    @classmethod
    def _no_invalid_code_points(cls, value: str | None) -> str | None:
        # Lone surrogates (JSON "\\ud800", YAML "\\ud800") cannot be stored or encoded as UTF-8.
        if value is not None and clean_text(value) != value:
            raise ValueError("contains control characters or invalid code points (lone surrogates)")
        return value


class CatalogRelation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=120)
    type: RelationType
    target: str = Field(min_length=1, max_length=120)


class Catalog(BaseModel):
    """A tenant's concept catalog. Relation ends name a concept by name, alias or id."""

    model_config = ConfigDict(extra="forbid")

    concepts: list[CatalogConcept] = Field(default_factory=list)
    relations: list[CatalogRelation] = Field(default_factory=list)

    @model_validator(mode="after")
    def _relations_resolve(self) -> Catalog:
        known: set[str] = set()
        for c in self.concepts:
            known.add(c.name.casefold())
            known.update(a.casefold() for a in c.aliases)
            if c.id:
                known.add(c.id.casefold())
        for i, rel in enumerate(self.relations):
            for end in (rel.source, rel.target):
                if end.casefold() not in known:
                    raise ValueError(f"relations[{i}]: {end!r} is not a concept name, alias or id in this catalog")
            if rel.source.casefold() == rel.target.casefold():
                raise ValueError(f"relations[{i}]: a concept cannot relate to itself ({rel.source!r})")
        return self


# ---------------------------------------------------------------------------
# Extraction results (validated before they reach the store)
# ---------------------------------------------------------------------------


class ConceptMention(BaseModel):
    key: str = Field(min_length=1, max_length=160)
    name: str = Field(min_length=1, max_length=120)
    type: str | None = None  # a catalog's type, or a ConceptType suggestion
    language: str = "en"
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    surface: str
    extractor: ExtractorName
    confidence: float = Field(ge=0.0, le=1.0)
    in_catalog: bool = False

    @field_validator("type", mode="before")
    @classmethod
    def _check_type(cls, value: object) -> str | None:
        return None if value is None else check_concept_type(value)


class RelationMention(BaseModel):
    source_key: str
    source_name: str
    type: RelationType
    target_key: str
    target_name: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    extractor: ExtractorName
    confidence: float = Field(ge=0.0, le=1.0)
    cue: str = ""


class StanceMention(BaseModel):
    key: str
    name: str
    stance: Stance
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    cue: str = ""
    confidence: float = Field(ge=0.0, le=1.0)


class SkippedCandidate(BaseModel):
    text: str
    reason: str


class TurnExtraction(BaseModel):
    """What one turn yielded. Spans index into the turn's text."""

    language: str
    concepts: list[ConceptMention] = Field(default_factory=list)
    relations: list[RelationMention] = Field(default_factory=list)
    stances: list[StanceMention] = Field(default_factory=list)
    skipped: list[SkippedCandidate] = Field(default_factory=list)


@dataclass(frozen=True)
class PriorTurn:
    """The stored turn just before an ingest batch: its role and what it mentioned
    (the antecedents a user turn at the head of the batch may refer back to)."""

    role: str
    concepts: tuple[ConceptMention, ...]


class TurnEditLog(BaseModel):
    turn_id: str
    session_id: str
    role: Role
    duplicate: bool
    extraction: TurnExtraction | None = None


class ContextResult(BaseModel):
    """A rendered context block and the names in each of its sections (the API's response body)."""

    block: str
    tokens: int
    format: str
    scope: str
    tag: str
    core_topics: list[str]
    related_concepts: list[str]
    knowledge_gaps: list[str]
    current_topic: list[str]
    avoid: list[str]
    truncated: bool
    dropped: int
    evidence: dict[str, list[str]] = Field(default_factory=dict)
    # Name -> reason marker ("struggling", "confused", "dislikes") of the items shown with one.
    reasons: dict[str, str] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


class IngestResult(BaseModel):
    user_id: str
    session_id: str
    accepted: list[str]
    duplicates: list[str]
    edits: list[TurnEditLog]
    # Set by the HTTP API: the write's consistency token, for a later read on any replica (read-your-writes).
    consistency: str | None = None
    # Only when the call asked for it (absent otherwise, so an ingest answers as before): the block a context
    # request right after this ingest returns.
    context: ContextResult | None = Field(default=None, exclude_if=lambda v: v is None)


# ---------------------------------------------------------------------------
# The user subgraph handed to pure ranking / compaction / rendering code
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ConceptNode:
    key: str
    name: str
    type: str | None = None
    user_mentions: int = 0
    assistant_mentions: int = 0
    stance: Stance | None = None
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    sessions: tuple[str, ...] = ()
    in_catalog: bool = False
    critical: bool = False
    tier: Tier | None = None  # as last stored
    compacted_at: datetime | None = None
    # Turn ids that mention the concept (evidence mode); may be truncated by the store.
    evidence: tuple[str, ...] = ()
    # Seconds-since-epoch timestamps of each user/assistant mention, for recency decay.
    mention_times: tuple[float, ...] = ()
    mention_roles: tuple[str, ...] = ()
    # What stood on either side of each Chinese mention (graphmem/zh_name_likeness.context_marks), as a set:
    # a name between punctuation or in 《》 against a piece cut out of a longer word.
    context_marks: frozenset[str] = frozenset()
    # Final weight as last written to the store (None: never ranked), to write back only changes.
    weight: float | None = None
    # Learner model (graphmem/learner.py): BKT mastery from graded attempts (None: never attempted),
    # how many attempts / right answers it rests on, when the latest was made, and when the latest
    # stance was stated — the newer of the two wins (graphmem/gaps.py).
    mastery: float | None = None
    mastery_attempts: int = 0
    mastery_correct: int = 0
    mastery_at: datetime | None = None
    stance_at: datetime | None = None

    @classmethod
    def of_fields(cls, values: dict[str, Any]) -> ConceptNode:
        """A node from field values (the others take their defaults) without the frozen ``__init__``'s
        per-field ``object.__setattr__``: a graph load builds one per interest (~240 for a learner: 1.3 ->
        0.5 ms). ``values`` must name fields only (tests/test_ingest_round_trips.py checks the store's rows)."""
        node = object.__new__(cls)
        object.__setattr__(node, "__dict__", {**_NODE_DEFAULTS, **values})
        return node

    def stored_as(self, tier: Tier | None, weight: float | None) -> ConceptNode:
        """This node with the tier and weight a weights write-back stores: ``dataclasses.replace`` without
        re-running the frozen ``__init__`` over all 22 fields (0.2 vs 1.3 ms for a learner's ~240 nodes; a
        re-rank copies the rows it writes before the block asked right after an ingest can answer). Every
        field is a plain value and none is derived, so the copy equals ``replace``'s."""
        node = object.__new__(ConceptNode)
        node.__dict__.update(self.__dict__)
        object.__setattr__(node, "tier", tier)
        object.__setattr__(node, "weight", weight)
        return node


# Every ConceptNode field but key and name has a plain default (ConceptNode.of_fields).
_NODE_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(ConceptNode) if f.name not in ("key", "name")}


@dataclass(frozen=True)
class ConceptEdge:
    source: str  # concept key
    target: str  # concept key
    type: RelationType
    scope: Literal["catalog", "user"] = "catalog"
    confidence: float = 1.0


@dataclass(frozen=True)
class UserGraph:
    tenant: str
    user_id: str
    concepts: dict[str, ConceptNode]
    edges: tuple[ConceptEdge, ...]
    now: datetime = field(default_factory=utc_now)
    # Turns and token size of the user's raw history, for the compaction ratio.
    history_tokens: int = 0
    turn_count: int = 0
    # The tenant catalog's whole dependency map (B -> keys B depends on; see gaps.dependency_map),
    # shared by every user of one catalog version: "presumed known" follows it past the loaded
    # 2-hop subgraph. None: the subgraph's own edges only.
    catalog_deps: Mapping[str, tuple[str, ...]] | None = field(default=None, compare=False, repr=False)
    # The language most of the user's own turns are in ("en", "zh"); None when unknown or tied.
    # Concepts are displayed in it (graphmem.names).
    language: str | None = None
