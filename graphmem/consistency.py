"""Read-your-writes across API replicas: consistency tokens over Neo4j bookmarks.

A write answers with a *consistency token*: the Neo4j bookmarks its transaction produced, the tenant,
and (for a user's write) the user's graph and catalog versions it left. A read that brings the token
back opens its Neo4j sessions with those bookmarks, so on a cluster whichever secondary serves it has
applied the write first; and a replica whose cached ranked graph is already at (or past) the token's
version answers from its cache without asking Neo4j for the version at all.

The token is opaque to clients (base64url of a small JSON document) and not secret: a forged one can
only make its own request wait for, or fail on, bookmarks Neo4j does not know (422
``INVALID_CONSISTENCY_TOKEN``), or skip the cache; it cannot read another tenant (the tenant must match
the caller's, else 422 ``CONSISTENCY_TOKEN_MISMATCH``).

The bookmarks of one request live in a :class:`Chain` held by a context variable: the API opens one per
request (:func:`chain`); the store opens every session with the chain's bookmarks and puts the session's
new bookmarks back (so a read later in the same request, e.g. the re-rank after an ingest, sees the
write too). Outside a chain (the library, background work) sessions carry no bookmarks, as before.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from .errors import InvalidInput

TOKEN_FORMAT = 1
# Far above what a token holds (one bookmark per database, ~40 characters each): a bound on parsing work.
MAX_TOKEN_CHARS = 4096
MAX_BOOKMARKS = 16


@dataclass(frozen=True)
class Token:
    tenant: str
    bookmarks: tuple[str, ...]
    user_id: str | None = None
    # The user's graph version and the tenant's catalog version the write left (a user's write only).
    version: int | None = None
    catalog_version: int | None = None

    def encode(self) -> str:
        doc: dict[str, Any] = {"f": TOKEN_FORMAT, "t": self.tenant, "b": sorted(self.bookmarks)}
        if self.user_id is not None:
            doc.update(u=self.user_id, v=self.version, c=self.catalog_version)
        raw = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _bad(why: str) -> InvalidInput:
    return InvalidInput(
        f"consistency token is not valid ({why}); send back the `consistency` value a write returned, or none",
        code="INVALID_CONSISTENCY_TOKEN",
    )


def _optional_int(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _bad(f"{what} is not a non-negative integer")
    return value


def decode(text: str, tenant: str) -> Token:
    """The token a client sent, checked; InvalidInput (422) when malformed or of another tenant."""
    if not text or len(text) > MAX_TOKEN_CHARS:
        raise _bad(f"it must hold 1 to {MAX_TOKEN_CHARS} characters")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        doc = json.loads(raw.decode())
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise _bad("not base64url-encoded JSON") from None
    if not isinstance(doc, dict) or doc.get("f") != TOKEN_FORMAT:
        raise _bad("unknown token format")
    bookmarks, owner, user_id = doc.get("b"), doc.get("t"), doc.get("u")
    if (
        not isinstance(bookmarks, list)
        or len(bookmarks) > MAX_BOOKMARKS
        or not all(isinstance(b, str) and b for b in bookmarks)
    ):
        raise _bad("bookmarks must be a list of strings")
    if not isinstance(owner, str) or (user_id is not None and not isinstance(user_id, str)):
        raise _bad("tenant and user must be strings")
    if owner != tenant:
        raise InvalidInput(
            "consistency token was issued to another tenant; send a token this API key's writes returned",
            code="CONSISTENCY_TOKEN_MISMATCH",
        )
    return Token(
        owner,
        tuple(bookmarks),
        user_id,
        _optional_int(doc.get("v"), "version"),
        _optional_int(doc.get("c"), "catalog version"),
    )


@dataclass
class Chain:
    """The causal chain of one request: the bookmarks its sessions start from and leave."""

    after: Token | None = None
    bookmarks: frozenset[str] = frozenset()
    # Set by the read path: the user graph version that answered and where it came from ("cache", "store").
    answered_version: int | None = None
    answered_from: str | None = None
    _users: dict[str, tuple[int, int]] = field(default_factory=dict)

    def record(self, bookmarks: Iterable[str]) -> None:
        values = frozenset(bookmarks)
        if values:
            # A session started from the chain's bookmarks returns ones that follow them.
            self.bookmarks = values

    def wrote(self, tenant: str, user_id: str, versions: tuple[int, int]) -> None:
        """A write of this request left the user at these (graph, catalog) versions (its own transaction
        said so): the token takes them without a read after the write."""
        self._users[f"{tenant}\x00{user_id}"] = versions

    def written(self, tenant: str, user_id: str) -> tuple[int, int] | None:
        """The versions a write of this request recorded for the user (None if none did)."""
        return self._users.get(f"{tenant}\x00{user_id}")

    def floor(self, tenant: str, user_id: str) -> tuple[int, int | None] | None:
        """(graph version, catalog version) the answer for this user must reach, if the token says."""
        t = self.after
        if t is None or t.tenant != tenant or t.user_id != user_id or t.version is None:
            return None
        return t.version, t.catalog_version

    def answered(self, version: int | None, source: str) -> None:
        self.answered_version, self.answered_from = version, source

    def token(self, tenant: str, user_id: str | None = None, versions: tuple[int | None, int] | None = None) -> Token:
        version, catalog_version = versions if versions is not None else (None, None)
        if version is None:
            # No graph version to promise (a tenant-level write, or the user was erased): bookmarks only.
            return Token(tenant, tuple(sorted(self.bookmarks)))
        return Token(tenant, tuple(sorted(self.bookmarks)), user_id, version, catalog_version)


_current: ContextVar[Chain | None] = ContextVar("graphmem_consistency_chain", default=None)


def current() -> Chain | None:
    return _current.get()


@contextmanager
def chain(after: Token | None = None) -> Iterator[Chain]:
    """A request's chain, starting from ``after``'s bookmarks (if any)."""
    c = Chain(after, frozenset(after.bookmarks) if after else frozenset())
    reset = _current.set(c)
    try:
        yield c
    finally:
        _current.reset(reset)
