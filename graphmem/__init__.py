"""graphmem: graph memory for AI agents.

Reads conversation turns, extracts concepts, relations and stances with spaCy,
keeps a per-user interest graph in Neo4j, ranks it PageRank-style, compacts
what matters little and renders a scoped, token-budgeted prompt block.

    from graphmem import GraphMemory

The names below are imported on first use: ``import graphmem`` alone stays cheap (the CLI, the
settings and the client do not pay for the service's imports).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> the module that defines it.
_EXPORTS = {
    "GraphMemory": "graphmem.service",
    "Settings": "graphmem.settings",
    "GraphmemError": "graphmem.errors",
    "TurnIn": "graphmem.models",
    "Catalog": "graphmem.models",
    "ContextResult": "graphmem.models",
    "IngestResult": "graphmem.models",
    "Format": "graphmem.vocabulary",
    "Scope": "graphmem.vocabulary",
    "Section": "graphmem.vocabulary",
    "Ranker": "graphmem.vocabulary",
}
__all__ = [
    "Catalog",
    "ContextResult",
    "Format",
    "GraphMemory",
    "GraphmemError",
    "IngestResult",
    "Ranker",
    "Scope",
    "Section",
    "Settings",
    "TurnIn",
    "__version__",
]

if TYPE_CHECKING:
    from graphmem.errors import GraphmemError
    from graphmem.models import Catalog, ContextResult, IngestResult, TurnIn
    from graphmem.service import GraphMemory
    from graphmem.settings import Settings
    from graphmem.vocabulary import Format, Ranker, Scope, Section


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'graphmem' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
