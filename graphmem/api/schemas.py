"""Request and response bodies of the HTTP API (validated by pydantic, shown in OpenAPI).

Response models name the fields every client may rely on; most allow extra fields (``extra="allow"``)
because their inner records (nodes, spans, run records) are shaped by the services and documented in
docs/api.md, and a response model must never drop what the service returned.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphmem.models import TurnIn
from graphmem.vocabulary import ContextOptions, Format, Scope

__all__ = ["ContextRequest", "ErrorResponse", "Format", "IngestRequest", "Scope"]


class ContextRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    focus: str | None = Field(default=None, max_length=20_000, description="the current question")
    scope: Scope | None = Field(default=None, description="default: the server's GRAPHMEM_DEFAULT_SCOPE (learning)")
    # Strict: `true` and "100" are not token budgets, "true" and 1 are not booleans (JSON has the types).
    max_tokens: int | None = Field(default=None, ge=1, le=100_000, strict=True)
    format: Format | None = Field(default=None, description="default: the server's GRAPHMEM_DEFAULT_FORMAT (xml)")
    evidence: bool = Field(default=False, strict=True)
    tag: str | None = Field(default=None, max_length=64, description="custom tag name (an XML name)")
    prompt: str | None = Field(
        default=None, max_length=2_000_000, description="the prompt being assembled, for loop detection"
    )
    as_of: datetime | None = Field(default=None, description="answer as the user model stood then (ISO 8601)")
    consistency: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        description="the `consistency` token a write returned: the answer then includes that write",
    )

    def options(self) -> ContextOptions:
        """The block options as the library takes them (``GraphMemory.context``, ``GraphMemory.ingest(context=)``)."""
        return ContextOptions(
            focus=self.focus,
            scope=self.scope,
            max_tokens=self.max_tokens,
            fmt=self.format,
            evidence=self.evidence,
            prompt=self.prompt,
            tag=self.tag,
            as_of=self.as_of,
        )


class IngestRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "session_id": "week2",
                    "turns": [
                        {
                            "turn_id": "w2-1",
                            "role": "user",
                            "text": "我已经学过Python基础了，现在想学Django框架。",
                            "ts": "2026-11-23T10:00:00Z",
                        }
                    ],
                }
            ]
        },
    )

    session_id: str = Field(min_length=1, max_length=128)
    turns: list[TurnIn] = Field(min_length=1, max_length=512)
    context: ContextRequest | None = Field(
        default=None,
        description=(
            "ask for the block in the same answer (the agent loop in one call): the options of POST "
            "/v1/users/{user_id}/context (`{}` for the defaults); the answer's `context` is the block a context "
            "request right after this ingest returns. Its options are checked before anything is stored"
        ),
    )

    @model_validator(mode="after")
    def _no_token_for_own_write(self) -> IngestRequest:
        if self.context is not None and self.context.consistency is not None:
            # The block already follows this call's own write: a token of another write has no place here.
            raise ValueError("context.consistency: the block returned with an ingest follows that ingest's write")
        return self


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorResponse(BaseModel):
    error: ErrorBody


# -- responses -----------------------------------------------------------------------------------


class _Open(BaseModel):
    """A response whose records may carry more fields than the ones named here."""

    model_config = ConfigDict(extra="allow")


class Status(BaseModel):
    status: str


class Readiness(_Open):
    ready: bool
    neo4j: bool
    schema_: bool = Field(alias="schema", description="the Neo4j schema is applied")
    models: bool

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class UserGraphResponse(_Open):
    user_id: str
    version: int | None
    language: str | None
    ranker: str
    threshold: float
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    summary: Any
    as_of: str | None


class Explanation(_Open):
    key: str
    name: str
    tier: str | None
    ranker: str
    rank: int | None
    weights: dict[str, Any]
    propagation: list[dict[str, Any]]
    mentions: dict[str, Any]


class _Written(_Open):
    """The answer of a write: its consistency token comes back with it (graphmem/api/consistency.py)."""

    consistency: str | None = Field(
        default=None, description="pass it to a later read (`consistency=`) so the read includes this write"
    )


class CompactionRun(_Written):
    id: str
    at: str
    ranker: str
    trigger: str


class Forgotten(_Written):
    concept: str
    removed: Any


class Erased(_Written):
    user_id: str
    removed: Any


class CatalogStored(_Written):
    tenant: str
    catalog_version: int
    concepts: int
    relations: int


class CatalogResponse(_Open):
    catalog_version: int | None
    catalog: dict[str, Any]


class AttemptsRecorded(_Written):
    user_id: str
    accepted: list[Any]
    duplicates: list[Any]
    replayed: list[Any]
    attempts: list[dict[str, Any]]


class ConceptAttempts(_Open):
    user_id: str
    concept: str
    attempts: list[dict[str, Any]]


class KTFitReport(_Open):
    tenant: str
    version: Any
    fitted: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    defaults: dict[str, Any]


class KTParams(_Open):
    tenant: str
    defaults: dict[str, Any]
    concepts: Any
    fits: Any
