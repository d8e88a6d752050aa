"""Saved exploration queries, made ready to paste into the Neo4j Browser.

The queries live in ``cypher/explore/*.cypher`` as named statements starting
with ``explore_``. This module only formats them: for each one its comment,
the ``:param`` lines it needs (values written as Cypher literals) and the
statement. It never runs anything, so it is a pure function of the library and
the ids it is given.

Ids come from users and tenants, so every value is escaped as a Cypher string
literal: a user id such as ``x'}) MATCH (n) DETACH DELETE n //`` stays one
string and cannot end the literal or the ``:param`` line it is on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from .cypher import CypherLibrary

PREFIX = "explore_"
# Matches a parameter reference; the identifier is taken whole, so $user never eats $user_id.
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
# Escapes the Cypher lexer understands inside a string literal.
_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}

ParamValue = str | int | float | bool | None


@dataclass(frozen=True)
class ExploreQuery:
    name: str
    description: str
    params: dict[str, ParamValue]  # only the parameters the statement uses, in order of first use
    text: str  # the statement with $parameters

    def inlined(self) -> str:
        """The statement with every parameter replaced by its literal (one click in a guide)."""
        return inline_params(self.text, self.params)


def cypher_literal(value: ParamValue) -> str:
    """A Cypher literal for a scalar value; strings are single-quoted with every special character escaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no Cypher literal")
        return repr(value)
    if isinstance(value, str):
        out = []
        for ch in value:
            if ch in _ESCAPES:
                out.append(_ESCAPES[ch])
            elif ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 or ch in "\u2028\u2029":
                # Other control characters (and line separators) would break the one-line :param form.
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        return "'" + "".join(out) + "'"
    raise TypeError(f"cannot write {type(value).__name__} as a Cypher literal")


def statement_params(text: str) -> list[str]:
    """Parameter names a statement uses, in order of first use."""
    return list(dict.fromkeys(_PARAM.findall(text)))


def inline_params(text: str, params: Mapping[str, ParamValue]) -> str:
    """Replaces each $name by its literal. The saved statements hold no '$' inside strings or comments."""

    def literal(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in params:
            raise KeyError(f"no value for parameter ${name}")
        return cypher_literal(params[name])

    return _PARAM.sub(literal, text)


def param_line(name: str, value: ParamValue) -> str:
    """The Browser's client command that sets one parameter: ``:param user_id => 'xiaoming';``."""
    return f":param {name} => {cypher_literal(value)};"


def explore_params(
    tenant: str, user_id: str, focus: str | None = None, concept: str | None = None, min_users: int = 1
) -> dict[str, ParamValue]:
    """Values for every parameter the saved queries use.

    ``concept`` (the provenance query) defaults to the focus, so one
    ``--focus`` shows both what a topic needs and where it came from.
    """
    return {
        "tenant": tenant,
        "user_id": user_id,
        "focus": focus,
        "concept": concept if concept is not None else focus,
        "min_users": min_users,
    }


def explore_queries(
    library: CypherLibrary,
    tenant: str,
    user_id: str,
    focus: str | None = None,
    concept: str | None = None,
    min_users: int = 1,
) -> list[ExploreQuery]:
    values = explore_params(tenant, user_id, focus, concept, min_users)
    queries = []
    for name in library.names(PREFIX):
        stmt = library.statement(name)
        used = statement_params(stmt.text)
        missing = [p for p in used if p not in values]
        if missing:
            raise KeyError(f"{name} uses parameters graphmem does not fill: {', '.join(missing)}")
        queries.append(ExploreQuery(name, stmt.description, {p: values[p] for p in used}, stmt.text))
    return queries


def render_explore(
    library: CypherLibrary,
    tenant: str,
    user_id: str,
    focus: str | None = None,
    concept: str | None = None,
    min_users: int = 1,
) -> str:
    """Text to paste into the Browser, one block per saved query.

    Each block is the query's comment, its ``:param`` lines and the statement
    ending in ``;``. Paste one block at a time (the Browser runs a multi-line
    paste as several statements, one frame each).
    """
    blocks = []
    for q in explore_queries(library, tenant, user_id, focus, concept, min_users):
        lines = [f"// {q.name}: {q.description}"]
        lines += [param_line(k, v) for k, v in q.params.items()]
        lines.append(q.text + ";")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
