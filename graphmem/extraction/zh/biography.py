"""Chinese names said as a biography detail: where a person studied or was born.

A knowledge-grounded chat recites a person's record (他毕业于北京电影学院, 1975年生于阿根廷…, 她是英国皇家
戏剧艺术学院毕业的); the school or the birthplace tells nothing about the user. A candidate right after a
lead of ``biography_before`` or right before a word of ``biography_after`` (graphmem/data/zh_descriptors.yaml)
is dropped; a mention of the same name outside such a frame is still taken."""

from __future__ import annotations

from functools import cache

from graphmem.extraction.candidates import Candidate
from graphmem.wordlists import yaml_data


@cache
def _frames() -> tuple[tuple[str, ...], tuple[str, ...]]:
    data = yaml_data("zh_descriptors.yaml")
    return tuple(data["biography_before"]), tuple(data["biography_after"])


def in_biography_frame(text: str, start: int, end: int) -> bool:
    """The span ``text[start:end]`` is framed as where someone studied or was born."""
    before, after = _frames()
    return text[:start].endswith(before) or text[end:].startswith(after)


def drop_biography_details(text: str, cands: list[Candidate]) -> list[Candidate]:
    return [c for c in cands if not in_biography_frame(text, c.start, c.end)]
