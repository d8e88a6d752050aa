"""Names found across a batch of Chinese turns (usually one conversation): `ZhLexicon`."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from spacy.tokens import Doc

from graphmem.extraction.candidates import GENERIC_ZH, NUMERIC
from graphmem.extraction.zh.names import cue_name, framed, person_name
from graphmem.extraction.zh.tokens import (
    LEAD_STOP,
    MERGE_LEFT_TAGS,
    NAME_DOTS,
    RUN_TAGS,
    UNK_STOP_CHARS,
    Tok,
    cjk_word,
    zh_tokens,
)

BOOK_TITLE = re.compile(r"《([^《》\n]{1,60})》")
# Bracketed or quoted short names: 【阿凡达】, “凡人歌”, 「千与千寻」 (short, no sentence punctuation).
QUOTED = re.compile(r"[【“「『]([^【】“”「」『』\n，。！？,.!?；;：:]{2,14})[】”」』]")


def _strong_names(text: str, toks: list[Tok]) -> Iterator[str]:
    """Names one turn establishes by itself: titles in 《》 or quotes, frames, cues, personal names."""
    for m in BOOK_TITLE.finditer(text):
        inner = m.group(1).strip()
        if 2 <= len(inner) <= 20:
            yield inner
    for m in QUOTED.finditer(text):
        yield m.group(1).strip()
    for s, e in framed(text, toks):
        yield text[s:e]
    for i in range(len(toks)):
        j = cue_name(toks, text, i)
        if j < i:
            yield text[toks[j].start : toks[i - 1].end]
        k = person_name(toks, i)
        if k > i:
            yield text[toks[i].start : toks[k - 1].end]


def _merge_left(prev: Tok) -> bool:
    """A two-character piece that may fuse with the noun after it (超凡|蜘蛛侠)."""
    w = prev.word
    return (
        cjk_word(w)
        and len(w) == 2
        and prev.tag in MERGE_LEFT_TAGS
        and w not in LEAD_STOP
        and not UNK_STOP_CHARS.intersection(w)
        and w not in GENERIC_ZH
    )


def _count_heads_and_pairs(toks: list[Tok], heads: Counter[str], pairs: Counter[tuple[str, str]]) -> None:
    """Counts noun pieces (2+ characters) and the glued (left piece, noun) pairs before them."""
    for i, tok in enumerate(toks):
        if not ((tok.tag in RUN_TAGS or tok.tag == "unk") and len(tok.word) >= 2):
            continue
        heads[tok.word] += 1
        if i > 0 and toks[i - 1].ws == "" and _merge_left(toks[i - 1]):
            pairs[toks[i - 1].word, tok.word] += 1


@dataclass
class ZhLexicon:
    """Names found across a batch of Chinese turns (usually one conversation).

    ``names``: strings established by strong evidence in some turn (《》 or quoted
    titles, a cue such as 这部电影, a personal name) or a merge of adjacent pieces
    that always occur together in the batch (超凡|蜘蛛侠); every turn of the batch
    then gets them as candidates, so a name spelled without its cue elsewhere is
    still found whole. ``first``: first character -> names, longest first.
    """

    names: set[str]
    first: dict[str, list[str]]

    @cached_property
    def title_ends(self) -> frozenset[str]:
        """Every proper end (suffix, down to "") of a name without a name dot (·): what a shorter
        piece ending such a title can be. Built once per batch, not once per turn."""
        titles = [x for x in self.names if not NAME_DOTS.intersection(x)]
        return frozenset(y[k:] for y in titles for k in range(1, len(y) + 1))

    @classmethod
    def build(cls, docs: list[Doc], tags: dict[str, str]) -> ZhLexicon:
        names: set[str] = set()
        heads: Counter[str] = Counter()
        pairs: Counter[tuple[str, str]] = Counter()
        for doc in docs:
            toks = zh_tokens(doc, tags)
            names.update(_strong_names(doc.text, toks))
            _count_heads_and_pairs(toks, heads, pairs)
        # A pair seen twice or more that makes up at least 3/4 of its noun's occurrences is one name.
        names.update(pw + word for (pw, word), c in pairs.items() if c >= 2 and c * 4 >= heads[word] * 3)
        names = {x for x in names if len(x) >= 2 and not NUMERIC.match(x) and x not in GENERIC_ZH}
        first: dict[str, list[str]] = {}
        for x in sorted(names, key=len, reverse=True):
            first.setdefault(x[0], []).append(x)
        return cls(names, first)

    def scan(self, text: str) -> list[tuple[int, int]]:
        """Spans of the batch's names in one text, longest match first, left to right."""
        out: list[tuple[int, int]] = []
        if not self.first:
            return out
        i, n = 0, len(text)
        while i < n:
            cands = self.first.get(text[i])
            if cands:
                for x in cands:
                    if text.startswith(x, i):
                        out.append((i, i + len(x)))
                        i += len(x) - 1
                        break
            i += 1
        return out
