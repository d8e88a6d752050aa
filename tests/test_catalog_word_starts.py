"""catalog_matcher._WORD_STARTS (how scan finds where a name may start) gives exactly the positions
_starts_word allows."""

from __future__ import annotations

import random

from graphmem.extraction.catalog_matcher import _WORD_STARTS, _starts_word
from graphmem.extraction.normalize import normalize


def _positions(norm: str) -> list[int]:
    return [m.start() for m in _WORD_STARTS.finditer(norm) if m.start() < len(norm)]


def test_regex_positions_equal_starts_word() -> None:
    rng = random.Random(16)
    alphabet = "ab z09 .-'ßéɏɐ中文+#/"
    texts = [
        normalize(t)
        for t in ("I want to learn linear regression", "C++ and C# 3.0, scikit-learn", "学习Python基础 ok", "ß straße")
    ]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(2000)]
    for norm in texts:
        assert _positions(norm) == [i for i in range(len(norm)) if _starts_word(norm, i)], repr(norm)
