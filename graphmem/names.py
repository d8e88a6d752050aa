"""Concept names in the language the user writes in.

A catalog concept has one canonical name (its key is derived from it and never
changes) and aliases, possibly in several languages (``REST API设计`` with
``REST API``, ``RESTful API``). The block, ``/graph`` and ``/explain`` show a
concept in the user's language:

* the canonical name when it is in that language;
* else the first alias in that language, in catalog order (so a tenant picks
  the display name by listing it first);
* else the canonical name.

A name is Chinese when it holds a CJK character and English otherwise:
``HTML与CSS`` cannot be read without Chinese, while ``Django`` reads the same
in both. The user's language is the one most of their *own* turns were
detected in (``Turn.language``, counted by the store when it loads the graph);
with no user turns or a tie, canonical names are kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphmem.models import Catalog, UserGraph

# The languages graphmem.extraction.language detects. Not imported from there: the store imports
# this module, and graphmem.extraction loads spaCy.
EN = "en"
ZH = "zh"
# Kana, CJK ideographs and extensions, compatibility ideographs (graphmem.extraction.normalize.is_cjk).
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df]")


def name_language(name: str) -> str:
    """ "zh" for a name with a CJK character, else "en"."""
    return ZH if _CJK.search(name) else EN


def dominant_language(counts: Iterable[Sequence[Any]] | None) -> str | None:
    """The language of most of the user's turns, from ``[language, turns]`` pairs; None on a tie or none."""
    totals: dict[str, int] = {}
    for pair in counts or ():
        if not pair or len(pair) < 2 or not pair[0]:
            continue
        totals[str(pair[0])] = totals.get(str(pair[0]), 0) + int(pair[1] or 0)
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])
    if not ranked or ranked[0][1] <= 0 or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None
    return ranked[0][0]


def display_names(catalog: Catalog | None, language: str | None) -> dict[str, str]:
    """Concept key -> display name in ``language``, for the concepts whose display name is not
    their canonical name (an empty map keeps every canonical name)."""
    if catalog is None or language is None:
        return {}
    from graphmem.extraction.normalize import concept_key  # the catalog's keys, as put_catalog makes them

    out: dict[str, str] = {}
    for c in catalog.concepts:
        if name_language(c.name) == language:
            continue
        alias = next((a for a in c.aliases if name_language(a) == language), None)
        if alias is not None:
            out[concept_key(c.name)] = alias
    return out


def localized(graph: UserGraph, names: Mapping[str, str], key: str) -> str:
    """The name to show for ``key``: its display name, else the graph's name, else the key."""
    shown = names.get(key)
    if shown is not None:
        return shown
    node = graph.concepts.get(key)
    return node.name if node is not None else key
