"""graphmem: graph memory for AI agents.

Reads conversation turns, extracts concepts, relations and stances with spaCy,
keeps a per-user interest graph in Neo4j, ranks it PageRank-style, compacts
what matters little and renders a scoped, token-budgeted prompt block.
"""

__version__ = "0.1.0"
