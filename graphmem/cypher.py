"""Loads the named, parameterised Cypher statements kept in ``cypher/*.cypher``.

A file holds statements introduced by a header comment::

    // name: load_user_interests
    // One line saying what the statement does.
    MATCH ...

Relationship types cannot be query parameters in Cypher, so a statement may
contain the token ``__REL_TYPE__``; it is replaced only by a name from the
allow-list in :data:`graphmem.models.NEO4J_REL_TYPES`, never by user text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .models import NEO4J_REL_TYPES, RelationType

REL_TYPE_TOKEN = "__REL_TYPE__"
_HEADER = re.compile(r"^//\s*name:\s*([a-z_][a-z0-9_]*)\s*$")


@dataclass(frozen=True)
class Statement:
    name: str
    text: str
    description: str
    source: Path


def parse_cypher_file(path: Path) -> list[Statement]:
    statements: list[Statement] = []
    name: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if name is None:
            return
        comments = [ln[2:].strip() for ln in lines if ln.startswith("//")]
        body = "\n".join(ln for ln in lines if not ln.lstrip().startswith("//")).strip().rstrip(";").strip()
        if not body:
            raise ValueError(f"{path}: statement {name!r} is empty")
        statements.append(Statement(name, body, comments[0] if comments else "", path))

    for raw in path.read_text(encoding="utf-8").splitlines():
        match = _HEADER.match(raw.strip())
        if match:
            flush()
            name, lines = match.group(1), []
        elif name is not None:
            lines.append(raw)
    flush()
    return statements


class CypherLibrary:
    """All statements under a folder (recursively), addressed by name."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._by_name: dict[str, Statement] = {}
        for path in sorted(folder.rglob("*.cypher")):
            for stmt in parse_cypher_file(path):
                if stmt.name in self._by_name:
                    raise ValueError(f"duplicate Cypher statement name {stmt.name!r} in {path}")
                self._by_name[stmt.name] = stmt

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def names(self, prefix: str = "") -> list[str]:
        return [n for n in self._by_name if n.startswith(prefix)]

    def statement(self, name: str) -> Statement:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no Cypher statement named {name!r} under {self.folder}") from None

    def text(self, name: str, rel_type: RelationType | None = None) -> str:
        text = self.statement(name).text
        if REL_TYPE_TOKEN in text:
            if rel_type is None:
                raise ValueError(f"statement {name!r} needs a relationship type from the allow-list")
            return text.replace(REL_TYPE_TOKEN, NEO4J_REL_TYPES[RelationType(rel_type)])
        return text

    def in_file(self, filename: str) -> list[Statement]:
        return [s for s in self._by_name.values() if s.source.name == filename]


@lru_cache(maxsize=4)
def load_library(folder: Path) -> CypherLibrary:
    return CypherLibrary(folder)
