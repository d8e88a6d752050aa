"""The Neo4j Browser guide: ``:play http://127.0.0.1:8000/browser/guide``.

A guide is an HTML fragment the Browser fetches and shows as slides
(``<article class="guide"><carousel class="deck container"><slide class="row-fluid">``).
A ``<pre class="runnable">`` block goes into the editor when clicked and runs
when its play icon is clicked, so each saved query is one click per demo user.

Each block holds exactly one command with its parameters inlined as Cypher
literals: the Browser runs a clicked block as a whole, and one statement per
block means no ``:param`` state leaks from one user's slide into another's.
Everything user-supplied is HTML-escaped (ids, focus names) on top of being a
Cypher literal, so an id cannot open a tag in the guide nor break the query.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from .cypher import CypherLibrary
from .explore import ExploreQuery, explore_queries

GRASS_FILE = "graphmem.grass"
# Queries that are about the tenant rather than one user get a slide of their own.
TENANT_QUERIES = frozenset({"explore_shared_interests"})
# The Browser's "Connect result nodes" setting fetches every relationship between the nodes on
# screen, which would draw relations other users stated; the guide switches it off first.
CONNECT_RESULT_NODES_OFF = ":config autoComplete: false"
# The demo learners (demo/learners.json) and the concept each one's guide slide starts from.
DEMO_USERS = ["xiaoming", "emma", "li_wei", "sam"]
DEMO_FOCUS = {"xiaoming": "Django部署", "emma": "REST API设计", "li_wei": "神经网络"}


def style_command(grass: str) -> str:
    """The GraSS sheet as one ``:style`` line (the Browser's parser ignores whitespace between rules)."""
    return ":style " + " ".join(grass.split())


def load_grass(library: CypherLibrary) -> str:
    return (Path(library.folder) / GRASS_FILE).read_text(encoding="utf-8")


def _code(command: str) -> str:
    return f'<pre class="pre-scrollable code runnable">{escape(command, quote=False)}</pre>'


def _slide(*parts: str) -> str:
    body = "\n".join(parts)
    return f'<slide class="row-fluid">\n<div class="col-sm-12">\n{body}\n</div>\n</slide>'


def _query_block(q: ExploreQuery) -> str:
    return f"<h4>{escape(q.name)}</h4>\n<p>{escape(q.description)}</p>\n{_code(q.inlined())}"


def render_guide(
    cypher_library: CypherLibrary,
    tenant: str,
    user_ids: list[str],
    focus: dict[str, str] | None,
    grass: str | None = None,
) -> str:
    """The guide's HTML: set-up, one slide per user with every saved query, then the tenant slide.

    ``focus`` maps a user id to the concept their gap and provenance queries
    start from; a user without one gets the gaps of their core topics.
    ``grass`` defaults to ``cypher/graphmem.grass`` next to the library.
    """
    focus = focus or {}
    sheet = grass if grass is not None else load_grass(cypher_library)
    slides = [_intro_slide(tenant, user_ids, sheet)]
    for user_id in user_ids:
        slides.append(_user_slide(cypher_library, tenant, user_id, focus.get(user_id)))
    if user_ids:
        queries = explore_queries(cypher_library, tenant, user_ids[0])
        slides.append(_tenant_slide(tenant, [q for q in queries if q.name in TENANT_QUERIES]))
    deck = "\n".join(slides)
    return f'<article class="guide">\n<carousel class="deck container">\n{deck}\n</carousel>\n</article>\n'


def _intro_slide(tenant: str, user_ids: Sequence[str], grass: str) -> str:
    users = ", ".join(f"<code>{escape(u)}</code>" for u in user_ids) or "(none)"
    return _slide(
        "<h3>graphmem: one learner's interest graph</h3>",
        f'<p class="lead">Tenant <code>{escape(tenant)}</code>; learners {users}.</p>',
        "<p>Click the play icon of a block to run it; click the text to copy it into the editor.</p>",
        "<h4>1. Show only what this user may see</h4>",
        "<p>The Browser's <em>Connect result nodes</em> setting would fetch every relationship between the "
        "nodes on screen, including relations other learners stated. Switch it off:</p>",
        _code(CONNECT_RESULT_NODES_OFF),
        "<h4>2. Apply the graphmem style</h4>",
        "<p>Captions are concept names; interests are sized and coloured by tier: "
        "<strong>Core</strong> large red, <strong>Related</strong> medium blue, "
        "<strong>Compacted</strong> small grey; a plain <strong>Concept</strong> (orange) is a topic "
        "the user has no interest in yet, which is how knowledge gaps show up.</p>",
        _code(style_command(grass)),
    )


def _user_slide(library: CypherLibrary, tenant: str, user_id: str, focus: str | None) -> str:
    queries = [q for q in explore_queries(library, tenant, user_id, focus=focus) if q.name not in TENANT_QUERIES]
    about = (
        f"Focus: <code>{escape(focus)}</code> (gaps and provenance start here)."
        if focus
        else "No focus: gaps are those of the learner's core topics."
    )
    parts = [f"<h3>Learner <code>{escape(user_id)}</code></h3>", f"<p>{about}</p>"]
    for q in queries:
        if q.name == "explore_provenance" and q.params.get("concept") is None:
            continue  # provenance needs a concept; without a focus there is none to trace
        parts.append(_query_block(q))
    return _slide(*parts)


def _tenant_slide(tenant: str, queries: Sequence[ExploreQuery]) -> str:
    parts = [
        f"<h3>Across tenant <code>{escape(tenant)}</code></h3>",
        "<p>Aggregates only: concept names and how many learners share them, never whose or what they said.</p>",
    ]
    parts += [_query_block(q) for q in queries]
    return _slide(*parts)
