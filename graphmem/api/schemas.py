"""Request and response bodies of the HTTP API (validated by pydantic, shown in OpenAPI)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from graphmem.models import TurnIn

Scope = Literal["learning", "recommendation", "general"]
Format = Literal["xml", "markdown", "json"]


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


class ContextRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    focus: str | None = Field(default=None, max_length=20_000, description="the current question")
    scope: Scope = "learning"
    # Strict: `true` and "100" are not token budgets, "true" and 1 are not booleans (JSON has the types).
    max_tokens: int | None = Field(default=None, ge=1, le=100_000, strict=True)
    format: Format = "xml"
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


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorResponse(BaseModel):
    error: ErrorBody


class Health(BaseModel):
    status: str


class Readiness(BaseModel):
    ready: bool
    neo4j: bool
    schema_applied: bool = Field(alias="schema")
    models: bool

    model_config = ConfigDict(populate_by_name=True)


JSONDict = dict[str, Any]
