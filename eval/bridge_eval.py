"""Protocol 3 — core topics from real tutoring chats (Bridge).

Each chat is one learner (one user, one session): its turns are ingested in
order, tutor -> assistant, student -> user. Two inputs are scored:
  * "c_h": the chat history only;
  * "c_h+c_r" (headline): the history plus c_r, the tutor's *original*
    continuation of the same chat (real turns of the same session, not the
    experts' rewrite c_r_/c_revision) — the whole real chat window.
Then `core_topics` of GraphMemory.context(scope="learning", no focus,
max_tokens=20000) is compared with the chat's lesson_topic.

Whose words count: both speakers'. Every turn of the window is ingested, the
student's as the user's (mentions count fully) and the tutor's as the
assistant's (mentions count at assistant_mention_fraction, 0.3 by default), as
an agent would send them; stances are read from the student's turns only. The
"topic in chat" ceiling below also looks at both speakers' turns; "topic in
student turns" is the same test on the student's turns alone (how often the
learner names the lesson topic themself), with Hit@3 over those chats too.
Each result records this as "whose_words".

Hit definition. The lesson topic loses its code prefix ("3.6D.", "A2.7D.")
and a "(Review) - 1" style suffix; its content lemmas are the spaCy
(en_core_web_sm) lemmas of the lower-cased text (so a capitalised plural in a
title, "Adding Fractions", is lemmatised like the noun it is, not kept as a
proper noun "Fractions"), of alphabetic tokens of 3+ letters that
are not stop words and not in TOPIC_GENERIC (curriculum wording, not maths:
review, intro, understanding, using, identify, solve, problem, word, number).
A core topic hits when one of its content lemmas (same definition, without
the generic list) is a content lemma of the topic; a lemma also matches its
"-al"/"-ity"-less stem of 5+ letters ("dimensional" ~ "dimension").
Hit@3: some of the first three core topics hits; MRR: 1/rank of the first hit
(0 when none of the listed core topics hits). Chats whose lesson topic has no
content lemma are left out (counted). "topic in chat" is the share of chats
where a topic content lemma occurs anywhere in the fed turns (any part of
speech): no extractive user model can hit more often, so it is the ceiling of
Hit@3; Hit@3 is also reported over those chats only. Junk per turn: concepts graphmem stored
for the chat that eval/extraction_eval.py's junk_reason calls junk, over turns.
"""

from __future__ import annotations

import ast
import json
import re
import time
from pathlib import Path
from typing import Any

from eval.common import eval_tenant, make_memory, protocol_cli, r4, shared_data_dir
from graphmem.extraction import pipelines
from graphmem.models import TurnIn

TOPIC_GENERIC = frozenset(
    "review intro introduction understand understanding use using identify identifying solve solving "
    "problem word number".split()
)
_PREFIX = re.compile(r"^\s*[A-Z]?\d+(?:\.\d+)*[A-Z]?\.\s*")
_SUFFIX = re.compile(r"\s*\((?:review)\)\s*(?:-\s*\d+)?\s*$|\s*-\s*\d+\s*$", re.IGNORECASE)


def clean_topic(topic: str) -> str:
    return _SUFFIX.sub("", _PREFIX.sub("", topic)).strip()


def _stem(lemma: str) -> str:
    for suf in ("ality", "ity", "al"):
        if lemma.endswith(suf) and len(lemma) - len(suf) >= 5:
            return lemma[: -len(suf)]
    return lemma


def content_lemmas(text: str, generic: frozenset[str] = frozenset()) -> set[str]:
    nlp = pipelines.english()
    out = set()
    # Lower-cased first: the tagger reads title-case words as proper nouns and leaves their
    # plural ("Fractions" stayed "fractions" and never met a core topic "fraction").
    for tok in nlp(text.lower()):
        lem = tok.lemma_.lower()
        if tok.is_alpha and len(tok.text) >= 3 and not tok.is_stop and lem not in generic and tok.lower_ not in generic:
            out.add(_stem(lem))
    return out


def load_bridge(data: Path, split: str) -> list[dict[str, Any]]:
    items = json.loads((data / "bridge" / f"{split}.json").read_text(encoding="utf-8"))
    out = []
    for it in items:
        conv = []
        for part in ("c_h", "c_r"):
            hist = it.get(part) or []
            if isinstance(hist, str):
                hist = ast.literal_eval(hist)
            conv.append([(h["user"], h["text"]) for h in hist if str(h.get("text", "")).strip()])
        out.append({"id": it["c_id"], "topic": it["lesson_topic"], "c_h": conv[0], "c_r": conv[1]})
    return out


def run(
    quick: bool = False,
    limit: int | None = None,
    verbose: bool = True,
    splits: tuple[str, ...] | None = None,
    show_misses: int = 15,
) -> dict[str, Any]:
    from eval.extraction_eval import junk_reason

    data = shared_data_dir()
    splits = splits or (("validation",) if quick else ("validation", "train"))
    chats = [c for s in splits for c in load_bridge(data, s)]
    if limit is not None:
        chats = chats[:limit]
    started = time.perf_counter()
    mem = make_memory()
    out: dict[str, Any] = {"splits": list(splits), "chats": len(chats)}
    lemma_cache: dict[str, set[str]] = {}

    any_cache: dict[str, set[str]] = {}

    def lemmas_any(text: str) -> set[str]:
        # Every lemma of a turn, any part of speech: the ceiling of what a core topic can hit.
        if text not in any_cache:
            any_cache[text] = {_stem(t.lemma_.lower()) for t in pipelines.english()(text) if t.is_alpha}
        return any_cache[text]

    def lemmas(name: str) -> set[str]:
        if name not in lemma_cache:
            lemma_cache[name] = content_lemmas(name)
        return lemma_cache[name]

    try:
        for variant in ("c_h+c_r", "c_h"):
            hits3 = rr = scored = skipped = turns = junk = no_core = answerable = hits3_present = 0
            own = hits3_own = 0
            worst: list[dict[str, Any]] = []
            with eval_tenant(mem, "bridge") as tenant:
                for i, chat in enumerate(chats):
                    topic_lemmas = content_lemmas(clean_topic(chat["topic"]), TOPIC_GENERIC)
                    conv = chat["c_h"] + (chat["c_r"] if variant == "c_h+c_r" else [])
                    if not conv:
                        continue
                    user = f"chat-{i:04d}"
                    tin = [
                        TurnIn(turn_id=f"t{j}", role="user" if who == "student" else "assistant", text=text)
                        for j, (who, text) in enumerate(conv)
                    ]
                    mem.ingest(tenant, user, "s1", tin)
                    turns += len(tin)
                    graph = mem.graph(tenant, user)
                    junk += sum(1 for n in graph["nodes"] if junk_reason(n["key"], chat["topic"])[0])
                    if not topic_lemmas:
                        skipped += 1
                        continue
                    core = mem.context(tenant, user, scope="learning", max_tokens=20000).core_topics
                    scored += 1
                    chat_lemmas = set().union(*(lemmas_any(t) for _, t in conv))
                    present = bool(topic_lemmas & chat_lemmas)
                    answerable += present
                    student = [t for who, t in conv if who == "student"]
                    said = bool(student) and bool(topic_lemmas & set().union(*(lemmas_any(t) for t in student)))
                    own += said
                    no_core += not core
                    rank = next((r + 1 for r, name in enumerate(core) if lemmas(name) & topic_lemmas), 0)
                    hits3 += 0 < rank <= 3
                    hits3_present += present and 0 < rank <= 3
                    hits3_own += said and 0 < rank <= 3
                    rr += 1 / rank if rank else 0.0
                    if not rank and present and len(worst) < 400:
                        worst.append(
                            {
                                "id": chat["id"],
                                "topic": chat["topic"],
                                "core": core[:5],
                                "shared": sorted(topic_lemmas & chat_lemmas),
                            }
                        )
            out[variant] = {
                "scored": scored,
                "skipped_no_topic_lemma": skipped,
                "turns": turns,
                "hit_at_3": r4(hits3 / scored) if scored else 0.0,
                "mrr": r4(rr / scored) if scored else 0.0,
                "no_core_topics": no_core,
                "junk_per_turn": r4(junk / turns) if turns else 0.0,
                "topic_in_chat": r4(answerable / scored) if scored else 0.0,
                "hit_at_3_when_topic_in_chat": r4(hits3_present / answerable) if answerable else 0.0,
                "topic_in_student_turns": r4(own / scored) if scored else 0.0,
                "hit_at_3_when_topic_in_student_turns": r4(hits3_own / own) if own else 0.0,
                "whose_words": "student turns as the user's, tutor turns as the assistant's (both ingested)",
            }
            # Misses name lesson topics and extracted concepts from the data: printed, never saved.
            if verbose:
                print(f"[bridge] {variant}: {out[variant]}")
                for w in worst[:show_misses]:
                    print("   miss:", w)
    finally:
        mem.close()
    out["seconds"] = round(time.perf_counter() - started, 1)
    if verbose:
        print(f"[bridge] {out['seconds']} s")
    return out


if __name__ == "__main__":
    protocol_cli(run)
