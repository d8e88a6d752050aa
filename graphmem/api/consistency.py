"""Consistency tokens on the HTTP API (graphmem/consistency.py): writes return one, reads accept one.

A write answers with its token in the body (`consistency`) and in the `X-Graphmem-Consistency` header;
a read (context, graph, explain) takes it as the `consistency` query parameter (or body field) and
says how it answered: `X-Graphmem-Graph-Version` (the user graph version the answer was ranked
under) and, with a token, `X-Graphmem-Consistency-Applied` (`bookmarks=N; min_version=V;
source=cache|store`: how many bookmarks the Neo4j sessions started from, the version the token
demanded, and whether the replica's cache answered without asking Neo4j).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from fastapi import Query

from graphmem.consistency import MAX_TOKEN_CHARS, Chain, chain, decode
from graphmem.service import GraphMemory
from graphmem.store import UserRef

TOKEN_HEADER = "X-Graphmem-Consistency"
VERSION_HEADER = "X-Graphmem-Graph-Version"
APPLIED_HEADER = "X-Graphmem-Consistency-Applied"
TOKEN_HELP = "the `consistency` token a write returned: the answer then includes that write (read-your-writes)"


class Headers(Protocol):
    """Where the answer's headers go: a route's injected ``Response.headers``, or a dict for a ready body."""

    def __setitem__(self, key: str, value: str) -> None: ...


ConsistencyQuery = Annotated[str | None, Query(min_length=1, max_length=MAX_TOKEN_CHARS, description=TOKEN_HELP)]


@contextmanager
def reading(tenant: str, token: str | None, headers: Headers) -> Iterator[Chain]:
    """A read after ``token`` (if given); the answer's ``headers`` say which version answered and how."""
    after = decode(token, tenant) if token is not None else None
    with chain(after) as c:
        yield c
    if c.answered_version is not None:
        headers[VERSION_HEADER] = str(c.answered_version)
    if after is not None:
        floor = "" if after.version is None else str(after.version)
        headers[APPLIED_HEADER] = (
            f"bookmarks={len(after.bookmarks)}; min_version={floor}; source={c.answered_from or 'store'}"
        )


@dataclass
class Stamp:
    """The token of a finished write, to put into the answer's body."""

    token: str = ""

    def on(self, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "consistency": self.token}


@contextmanager
def writing(mem: GraphMemory, tenant: str, headers: Headers, user_id: str | None = None) -> Iterator[Stamp]:
    """A write's chain; on success its token (with the user's versions after it) goes on the answer."""
    stamp = Stamp()
    with chain() as c:
        yield stamp
        # The versions the write's own transaction saw (ingest records them), else read in the write's
        # chain, so it sees the write: one index seek, on the replica's own session.
        versions: tuple[int | None, int] | None = None
        if user_id is not None:
            versions = c.written(tenant, user_id) or mem.store.user_version(UserRef(tenant, user_id))
        stamp.token = c.token(tenant, user_id, versions).encode()
    headers[TOKEN_HEADER] = stamp.token
