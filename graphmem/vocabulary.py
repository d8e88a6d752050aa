"""The words the API, the CLI, the settings and the renderer share: one definition each.

They are ``StrEnum``s, so a member is also its string (``Format.xml == "xml"``, same hash): code
that compares, keys dicts or stores them as plain strings keeps working, and pydantic, argparse
(``choices=list(Format)``) and OpenAPI all list the same values.
"""

from __future__ import annotations

from enum import StrEnum


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
