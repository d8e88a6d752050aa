"""Quoted sentences are no names: the pieces jieba reads inside one are words of the sentence.

Quotation marks around a short span without clause punctuation frame a name (“木吉他合唱团”,
zh.lexicon's QUOTED); around a span that holds a comma or a full stop they quote what someone said
or wrote: a line of a poem ("神仙排云出，但见金银台"), a slogan, a review. The noun runs read off
jieba inside such a quotation (神仙排云出, 金银) are cut out of that sentence, not names of the
conversation. Titles in 《》 inside a quotation keep their own marks and stay, and so do names jieba's
dictionary tags as a person, a place or an organisation (nr, ns, nt: 周杰伦 in reported speech).
"""

from __future__ import annotations

import re

from graphmem.extraction.candidates import Candidate

# A quoted span (straight or curly double quotes, corner brackets) up to 120 characters holding
# clause punctuation: a quoted sentence.
QUOTED_SENTENCE = re.compile(
    r'"([^"\n]{0,120}?[，。！？；,!?;][^"\n]{0,120}?)"'
    r"|“([^“”\n]{0,120}?[，。！？；,!?;][^“”\n]{0,120}?)”"
    r"|「([^「」\n]{0,120}?[，。！？；,!?;][^「」\n]{0,120}?)」"
    r"|『([^『』\n]{0,120}?[，。！？；,!?;][^『』\n]{0,120}?)』"
)


# Candidate labels of pieces read as common words or runs of them (zh.candidates' noun rule).
SENTENCE_PIECE_LABELS = frozenset({"compound", "n", "nz", "unk"})


def quoted_sentences(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in QUOTED_SENTENCE.finditer(text)]


def drop_pieces_of_quotations(text: str, cands: list[Candidate]) -> list[Candidate]:
    """Drop common-word pieces and runs that lie inside a quoted sentence."""
    spans = quoted_sentences(text)
    if not spans:
        return cands
    return [
        c
        for c in cands
        if c.label not in SENTENCE_PIECE_LABELS or not any(s <= c.start and c.end <= e for s, e in spans)
    ]
