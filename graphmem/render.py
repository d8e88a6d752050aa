"""Render a :class:`~graphmem.context.ContextSelection` as a token-budgeted block.

XML (default) looks like::

    <user_knowledge_context scope="learning">
    - core_topics: [Python基础, Django框架]
    - related_concepts: [SQLAlchemy, Nginx, PostgreSQL]
    - knowledge_gaps: [Linux服务器管理, CI/CD流程]
    </user_knowledge_context>

Escaping, so that user text can never open or close a tag nor break a list:
control characters and line breaks in names become spaces (whitespace is
collapsed), then ``& < > " '`` become XML character references and the list
syntax characters ``[ ] ,`` become ``&#91; &#93; &#44;``. A list is therefore
``[`` + items joined by ``", "`` + ``]`` and splitting on ``", "`` recovers
the items exactly. In evidence mode an item is ``name (turns: t1 t7)``: turn
ids are escaped the same way and spaces inside an id become ``&#32;``, so the
suffix is recovered by splitting the item at its *last* ``" (turns: "``.
JSON output escapes ``< > &`` as ``\\u003c \\u003e \\u0026`` for the same reason
(the block is pasted into prompts, where a raw ``</tag>`` would read as markup).

Reason markers (:data:`graphmem.context.STRUGGLING` and friends: why a concept
the user has a stance about is where it is) follow the name:
``JavaScript (struggling)``, before any evidence suffix; in JSON such an item is
``{"name": "JavaScript", "reason": "struggling"}`` (plain items stay strings).
They are part of the rendered text, so the token budget counts them.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from graphmem.context import ContextItem, ContextSelection, parse_scope, resolve_tag
from graphmem.errors import ContextLoopDetected, InvalidInput
from graphmem.tokens import TokenCounter
from graphmem.vocabulary import Format, Scope

TRUNCATION_REASON = "token_budget"

_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "'": "&#39;",
    "[": "&#91;",
    "]": "&#93;",
    ",": "&#44;",
}
_ESCAPE_RE = re.compile("[&<>\"'\\[\\],]")


def clean_display(text: str) -> str:
    """Remove control/format characters and line breaks; collapse whitespace."""
    chars = []
    for ch in text:
        cat = unicodedata.category(ch)
        # Cc: other controls (NUL, ESC, ...); Cs: lone surrogates; Cf: invisible
        # format chars (bidi overrides can make text display as something else);
        # Cn: unassigned code points, among them U+FFFE / U+FFFF, which XML cannot carry.
        if ch in "\t\n\r\v\f\x1c\x1d\x1e\x1f\x85" or cat in ("Zl", "Zp"):
            chars.append(" ")  # line-like breaks separate words: keep a space
        elif cat in ("Cc", "Cs", "Cf", "Cn"):
            continue
        else:
            chars.append(ch)
    return " ".join("".join(chars).split())


@lru_cache(maxsize=65_536)
def escape_atom(text: str) -> str:
    """A name made safe inside an XML/Markdown list item (see module docstring).

    Cached: fitting a block to its budget renders the same names several times per request.
    """
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(0)], clean_display(text))


def _escape_turn_id(text: str) -> str:
    return escape_atom(text).replace(" ", "&#32;")


def _json_safe(text: str) -> str:
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


class BudgetTooSmall(InvalidInput):
    """max_tokens is below the smallest block this selection renders to; ``minimum`` is that size."""

    code = "BUDGET_TOO_SMALL"

    def __init__(self, minimum: int, message: str) -> None:
        super().__init__(message)
        self.minimum = minimum


@dataclass(frozen=True)
class RenderedBlock:
    block: str
    tokens: int
    truncated: bool
    dropped: int
    format: str
    tag: str
    scope: str
    # Section -> keys kept, in rendered order (empty sections omitted).
    sections: dict[str, tuple[str, ...]] = field(default_factory=dict)
    dropped_keys: tuple[str, ...] = ()
    # True only when even the empty frame (with its marker) exceeds max_tokens.
    over_budget: bool = False
    max_tokens: int | None = None


def check_loop(prompt: str | None, tag: str) -> None:
    """Refuse to add a block whose tag is already open in ``prompt``.

    Detects ``<tag`` followed by whitespace, ``/``, ``>`` or the end (so
    ``<user_context_v2`` does not match ``user_context``), and also the
    opening lines of the Markdown (``## tag (scope: …)``) and JSON
    (``{"context": "tag"``) renderings.
    """
    if not prompt:
        return
    t = re.escape(tag)
    patterns = (
        rf"<\s*{t}(?=[\s/>]|$)",
        rf"(?m)^#+ {t} \(scope:",
        rf'"context":\s*"{t}"',
    )
    if any(re.search(p, prompt) for p in patterns):
        raise ContextLoopDetected(
            f"the prompt already contains a <{tag}> block; adding another would feed the context back into itself"
        )


def _item_text(item: ContextItem, evidence: bool) -> str:
    name = escape_atom(item.name) or escape_atom(item.key) or "&#63;"
    if item.marker:
        name = f"{name} ({escape_atom(item.marker)})"
    if evidence and item.evidence:
        return f"{name} (turns: {' '.join(_escape_turn_id(t) for t in item.evidence)})"
    return name


def _section_lines(kept: Sequence[tuple[str, list[ContextItem]]], evidence: bool) -> list[str]:
    return [f"- {section}: [{', '.join(_item_text(i, evidence) for i in items)}]" for section, items in kept if items]


def _xml(tag: str, scope: str, kept: Sequence[tuple[str, list[ContextItem]]], dropped: int, evidence: bool) -> str:
    lines = [f'<{tag} scope="{scope}">', *_section_lines(kept, evidence)]
    if dropped:
        lines.append(f'<truncated_context reason="{TRUNCATION_REASON}" dropped="{dropped}"/>')
    lines.append(f"</{tag}>")
    return "\n".join(lines)


def _markdown(tag: str, scope: str, kept: Sequence[tuple[str, list[ContextItem]]], dropped: int, evidence: bool) -> str:
    lines = [f"## {tag} (scope: {scope})", *_section_lines(kept, evidence)]
    if dropped:
        lines.append(f"- truncated_context: reason={TRUNCATION_REASON} dropped={dropped}")
    return "\n".join(lines)


def _json(tag: str, scope: str, kept: Sequence[tuple[str, list[ContextItem]]], dropped: int, evidence: bool) -> str:
    obj: dict[str, Any] = {"context": tag, "scope": scope}
    for section, items in kept:
        if not items:
            continue
        if evidence:
            obj[section] = [
                {
                    "name": clean_display(i.name) or clean_display(i.key),
                    "turns": [clean_display(t) for t in i.evidence],
                    **({"reason": i.marker} if i.marker else {}),
                }
                for i in items
            ]
        else:
            # A plain item is its name; an item with a reason marker is {"name": ..., "reason": ...}.
            obj[section] = [
                {"name": clean_display(i.name) or clean_display(i.key), "reason": i.marker}
                if i.marker
                else clean_display(i.name) or clean_display(i.key)
                for i in items
            ]
    if dropped:
        obj["truncated_context"] = {"reason": TRUNCATION_REASON, "dropped": dropped}
    return _json_safe(json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")))


_RENDERERS: dict[Format, Callable[[str, str, Sequence[tuple[str, list[ContextItem]]], int, bool], str]] = {
    Format.xml: _xml,
    Format.markdown: _markdown,
    Format.json: _json,
}


def truncated_frame_tokens(fmt: Format | str, scope: Scope | str, tag: str, counter: TokenCounter) -> int:
    """Tokens of an empty block with a truncation marker of any realistic count: a budget below it may be
    refused by :func:`render_block` for some selection (``BUDGET_TOO_SMALL``), a budget at or above it never is.
    Checked before a write that returns a block (an ingest asking for its block), so a refusal stores nothing."""
    return counter.count(_RENDERERS[Format(fmt)](tag, parse_scope(scope).value, [], 10**6, False))


def render_block(
    selection: ContextSelection,
    *,
    fmt: Format | str = "xml",
    scope: Scope | str | None = None,
    tag: str | None = None,
    max_tokens: int | None = None,
    counter: TokenCounter,
    evidence: bool = False,
) -> RenderedBlock:
    """Render ``selection`` within ``max_tokens`` tokens.

    Budgeting: if the whole block does not fit, items are dropped lowest
    weight first across sections (ties: later section, then later position,
    first). The first item of every non-empty section is protected: those are
    dropped last, so each section keeps its top item while anything fits. The
    number of drops is the smallest that fits, found by binary search over the
    drop order with exact token counts of the rendered text (marker included),
    so the result never exceeds ``max_tokens``.

    The budget counts everything returned: frame, tag, items and marker.
    When even the smallest block (the frame, with the truncation marker if
    anything was dropped) is larger than ``max_tokens``, InvalidInput
    ``BUDGET_TOO_SMALL`` (422) names that minimum; no block over budget is
    ever returned. ``max_tokens=None`` means no budget.

    The output depends only on the selection (whose order is already
    deterministic), so the same graph renders byte-identical blocks.
    """
    if fmt not in _RENDERERS:
        raise InvalidInput(f"unknown format {fmt!r}; expected one of: {', '.join(Format)}")
    fmt = Format(fmt)
    sc = parse_scope(scope if scope is not None else selection.scope)
    tag_name = resolve_tag(sc, tag)
    render = _RENDERERS[fmt]

    sections = [(name, list(items)) for name, items in selection.sections.items()]
    # Every item with its place: (section position, item position).
    places = [(s, i) for s, (_, items) in enumerate(sections) for i in range(len(items))]

    def drop_rank(place: tuple[int, int]) -> tuple[bool, float, int, int]:
        s, i = place
        return (i == 0, sections[s][1][i].weight, -s, -i)

    drop_order = sorted(places, key=drop_rank)

    def build(n: int) -> tuple[str, list[tuple[str, list[ContextItem]]]]:
        gone = set(drop_order[:n])
        kept = [
            (name, [it for i, it in enumerate(items) if (s, i) not in gone]) for s, (name, items) in enumerate(sections)
        ]
        return render(tag_name, sc.value, kept, n, evidence), kept

    n = 0
    text, kept = build(0)
    tokens = counter.count(text)
    over = False
    if max_tokens is not None and tokens > max_tokens:
        total = len(drop_order)
        full_text, full_kept = build(total)
        full_tokens = counter.count(full_text)
        if full_tokens > max_tokens:
            # The smallest block that fits: everything dropped (frame + marker), or nothing dropped when
            # the marker costs more than the items it would replace.
            minimum = min(tokens, full_tokens)
            raise BudgetTooSmall(
                minimum,
                f"max_tokens={max_tokens} is too small for a {fmt} block with the tag "
                f"{tag_name!r}: it needs at least {minimum} tokens (the frame"
                f"{' and the truncation marker' if minimum == full_tokens and total else ''})",
            )
        else:
            # Invariant: lo does not fit, hi fits.
            lo, hi = 0, total
            hi_text, hi_kept, hi_tokens = full_text, full_kept, full_tokens
            while hi - lo > 1:
                mid = (lo + hi) // 2
                t, k = build(mid)
                c = counter.count(t)
                if c <= max_tokens:
                    hi, hi_text, hi_kept, hi_tokens = mid, t, k, c
                else:
                    lo = mid
            n, text, kept, tokens = hi, hi_text, hi_kept, hi_tokens

    dropped_keys = tuple(sections[s][1][i].key for s, i in drop_order[:n])
    return RenderedBlock(
        block=text,
        tokens=tokens,
        truncated=n > 0,
        dropped=n,
        format=str(fmt),
        tag=tag_name,
        scope=sc.value,
        sections={name: tuple(i.key for i in items) for name, items in kept if items},
        dropped_keys=dropped_keys,
        over_budget=over,
        max_tokens=max_tokens,
    )
