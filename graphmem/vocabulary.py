"""The words the API, the CLI, the settings and the renderer share: one definition each.

They are ``StrEnum``s, so a member is also its string (``Format.xml == "xml"``, same hash): code
that compares, keys dicts or stores them as plain strings keeps working, and pydantic, argparse
(``choices=list(Format)``) and OpenAPI all list the same values.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import TypedDict


class Format(StrEnum):
    """How a context block is rendered (graphmem/render.py)."""

    xml = "xml"
    markdown = "markdown"
    json = "json"


class Scope(StrEnum):
    """What a block is for; each scope has its own sections and tag (graphmem/context.py)."""

    learning = "learning"
    recommendation = "recommendation"
    general = "general"


class Section(StrEnum):
    """The lists a block can hold, as named in the block and in the API's response."""

    current_topic = "current_topic"
    core_topics = "core_topics"
    related_concepts = "related_concepts"
    knowledge_gaps = "knowledge_gaps"
    avoid = "avoid"


class Ranker(StrEnum):
    """The ranking method (graphmem/ranking.py)."""

    pagerank = "pagerank"
    reference = "reference"


class ContextOptions(TypedDict, total=False):
    """The keyword options of ``GraphMemory.context`` (graphmem/services/read.py), for an ingest that returns
    its block (``GraphMemory.ingest(..., context=...)``)."""

    focus: str | None
    scope: str | None
    max_tokens: int | None
    fmt: str | None
    evidence: bool
    prompt: str | None
    tag: str | None
    as_of: datetime | None
