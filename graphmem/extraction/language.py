"""Per-turn language choice: which pipeline reads a turn.

A turn goes to the Chinese pipeline when Chinese characters carry at least as
much of it as Latin words do. A CJK character is roughly a morpheme, so
`我想学Django` (3 CJK characters, 1 Latin word) is Chinese and
`I like 北京 a lot` (2 vs 4) is English. Latin words inside Chinese turns are
still found by the Chinese pipeline (jieba tags them `eng`) and by the catalog
matcher, which is script-agnostic.
"""

from __future__ import annotations

import re

from graphmem.extraction.normalize import is_cjk

_LATIN_WORDS = re.compile(r"[A-Za-z\uff21-\uff3a\uff41-\uff5a\u00c0-\u024f]+")

EN = "en"
ZH = "zh"


def detect_language(text: str) -> str:
    """ "zh" or "en" (the default for empty, numeric or emoji-only turns)."""
    cjk = 0
    for ch in text:
        if ch >= "\u3040" and is_cjk(ch):
            cjk += 1
    if cjk == 0:
        return EN
    latin = len(_LATIN_WORDS.findall(text))
    return ZH if cjk >= latin else EN
