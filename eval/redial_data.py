"""ReDial movie-recommendation chats, read at run time from ``../shared/data/redial`` (never copied here).

One chat per line (see ``shared/data/redial/SOURCE.md``). The seeker (``initiatorWorkerId``) is the user,
the recommender the assistant. In the text a movie is written ``@<id>``; it is replaced by the title
without its year, as people write it. After each chat the seeker answered, for every movie mentioned,
whether they liked it: ``initiatorQuestions[id].liked`` (0 disliked, 1 liked, 2 did not say) is gold for
the seeker's own stance, from the person who held it.

Splits: ``train`` (500 chats) to derive rules from, ``valid`` (100 chats) to measure on. There is no
test split in the shared data.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

SPLITS = ("train", "valid")
_MOVIE_REF = re.compile(r"@(\d+)")
_YEAR = re.compile(r"\s*\(\d{4}\)\s*$")


@dataclass(frozen=True)
class Message:
    message_id: int
    role: str  # "user" (the seeker) or "assistant" (the recommender)
    text: str  # @ids replaced by titles
    raw: str  # as stored in the data set
    time_offset: int


@dataclass(frozen=True)
class Verdict:
    movie_id: str
    title: str
    suggested: int  # 1 = suggested by the recommender
    seen: int  # 0 no, 1 yes, 2 did not say
    liked: int  # 0 disliked, 1 liked, 2 did not say


@dataclass(frozen=True)
class Chat:
    conversation_id: str
    split: str
    messages: tuple[Message, ...]
    titles: dict[str, str]  # movie id -> title without year
    verdicts: tuple[Verdict, ...]  # the seeker's own answers


def clean_title(raw: str) -> str:
    """``"Bridesmaids  (2011)"`` -> ``"Bridesmaids"``; inner runs of spaces folded."""
    return " ".join(_YEAR.sub("", raw).split())


def load_chats(data_dir: Path, split: str) -> list[Chat]:
    """The chats of one split, in file order. ``data_dir`` is ``shared/data``."""
    if split not in SPLITS:
        raise ValueError(f"unknown ReDial split {split!r}; use one of {SPLITS}")
    path = data_dir / "redial" / f"{split}.jsonl"
    chats: list[Chat] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                chats.append(_chat(json.loads(line), split))
    return chats


def _chat(row: dict, split: str) -> Chat:
    titles = {mid: clean_title(t) for mid, t in (row.get("movieMentions") or {}).items() if t}
    seeker = row["initiatorWorkerId"]

    def replace(m: re.Match[str]) -> str:
        return titles.get(m.group(1), m.group(0))

    messages = tuple(
        Message(
            message_id=int(m["messageId"]),
            role="user" if m["senderWorkerId"] == seeker else "assistant",
            text=_MOVIE_REF.sub(replace, m["text"]),
            raw=m["text"],
            time_offset=int(m.get("timeOffset", 0)),
        )
        for m in row["messages"]
    )
    answers = row.get("initiatorQuestions") or {}
    verdicts = tuple(
        Verdict(
            movie_id=mid,
            title=titles[mid],
            suggested=int(a.get("suggested", 2)),
            seen=int(a.get("seen", 2)),
            liked=int(a.get("liked", 2)),
        )
        for mid, a in answers.items()
        if mid in titles
    )
    return Chat(
        conversation_id=str(row["conversationId"]), split=split, messages=messages, titles=titles, verdicts=verdicts
    )
