"""Is a concept specific to this user? Pure judgements, measured where possible, listed where not.

A block item must tell the model something about this user (DESIGN: "What a block may say"). Four
judgements, each returning a machine-readable reason or None:

* ``fragment_reason``: the text is not a word or name at all: a 1–2 letter token (`hs`, `si`), a
  code or maths fragment (`x+a)(x+b`), unbalanced quotes or brackets (`variable 'b`), a typo-shaped
  token (`WelI`), or an unknown lower-case word (wordfreq has never seen it);
* ``meta_reason``: a dialogue-act or meta word (`recommendation`, `accept`, bare `movie`,
  `previous step`) from the data file ``graphmem/data/meta_words.txt``;
* ``language_reason``: a very common word of the language (wordfreq Zipf >= ``common_zipf``:
  `process`, `return`, `feel`) that the conversation does not keep coming back to (fewer than
  ``repeat_mentions`` mentions: `area` said ten times in a lesson on area stays; one only the
  assistant said may still be a core topic, see CENTRAL_ONLY); a word that heads
  several of the tenant's catalog names (`framework` in "Django framework", "Flask framework";
  `movie` in "Scary Movie", "Bee Movie") is the tenant's kind of thing, not a topic; a phrase whose
  head is generic and whose modifiers are all common (`summer course`, `previous step`). Phrases
  with a specific modifier stay (`christmas movies`, `jump scares`, `80s films`);
* ``chat_reply_reason``: every word is a chat reply word — an answer, a hedge, a form of address or a
  cheer (`yea kinda`, `maam` from "yes maam", `yay`: graphmem/data/chat_replies_en.txt and the chat
  interjections) — what the user said back, not a topic;
* document frequency across the tenant (``df_reason``): a concept most of the tenant's users have
  (`movie` in a film app) is demoted once the tenant has ``df_min_users`` users.

The extractor uses ``fragment_reason`` and ``meta_reason`` to reject candidates (nothing stored);
``demoted`` applies all four to a user's stored concepts when a block is selected (context.py), so
data stored before a rule existed is judged too, and ranking still counts what is demoted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from spacy.lang.en.stop_words import STOP_WORDS

from graphmem import zh_name_likeness as name_likeness
from graphmem.extraction.lexical import (
    LATIN_WORD,
    category_words,
    filler_en,
    fragment_reason,
    generic_en,
    is_category,
    meta_keys,
    meta_reason,
    zipf,
)
from graphmem.models import ConceptNode
from graphmem.wordlists import words
from graphmem.zh_cuts import cut_reason
from graphmem.zh_descriptors import descriptor_reason

if TYPE_CHECKING:
    from graphmem.settings import Settings

__all__ = [
    "CENTRAL_ONLY",
    "SpecificityConfig",
    "category_words",
    "demoted",
    "chat_reply_reason",
    "df_reason",
    "fragment_reason",
    "language_reason",
    "meta_reason",
    "node_reason",
    "zh_assistant_only_unlike_a_name",
    "zh_language_reason",
    "own_word_reason",
    "written_as_title",
]


# Reasons that keep a concept out of related but not out of core. A common word only the assistant
# said ("value" and "area" from a tutor's place-value or area lesson) is core only when the user
# named nothing heavier, i.e. when the conversation centres on it; the user's own common words said
# in passing ("process", "return", "feel") are noise anywhere. English only: see node_reason for Chinese.
CENTRAL_ONLY = frozenset({"common_word_of_assistant"})
# Chinese reasons that do not hold when both the user and the assistant name the word: an everyday
# noun or a well-known place both sides talk about is the conversation's topic (鸟巢 in a chat about
# Beijing, 海洋 as the film both discuss), not a word said in passing (加拿大 as an actor's nationality);
# likewise an item whose make-up looks like a phrase (``unlike_a_name``: 流浪地球 is two common words). A stance
# is no such exemption: in KdConv it let back 钢材编织成 and 利用错视技法 (Chinese stances reach every name of the
# sentence), labelled-sample KdConv precision 0.897 -> 0.843.
SHARED_TOPIC_OK = frozenset({"common_noun_zh", "common_place", "unlike_a_name"})
# Word-level reasons that do not hold for what a Chinese user said they learn, like, know or dislike (我想学|吉他。
# 我讨厌|数学 我特别想学|Go: the mark name_likeness.TOPIC_OBJECT_MARK): the verb makes an everyday word, a language
# or a place their topic. Pieces of phrases (zh_cuts) and meta words still go. A stance alone is no such waiver
# (measured in session 33: KdConv users hold stances on 中国, 觉得, 玩玩; labelled-sample precision -4 points).
# Measured in eval/results/NOTES.md (session 33).
TOPIC_OBJECT_OK = frozenset(
    {
        "common_noun_zh",
        "common_word",
        "common_place",
        "unlike_a_name",
        "language_name",
        "phrase_entry",
        "latin_and_common",
        "too_short",
        "descriptor_phrase",
        "role_and_name",
    }
)


@dataclass(frozen=True)
class SpecificityConfig:
    common_zipf_en: float = 4.7  # "process" 5.26, "feel" 5.67, "plenty" 4.72; "hero" 4.68, "python" 3.78
    common_zipf_zh: float = 5.5  # 过程 5.5, 喜欢 5.73; 故宫 3.82, 周杰伦 3.52
    common_noun_zipf_zh: float = 2.0  # dictionary common nouns (jieba n) at or above: 作曲家 3.3, 食堂 3.95
    modifier_zipf: float = 4.0  # a phrase's modifiers at or above this are common ("summer" 5.23)
    repeat_mentions: int = 3  # a common word mentioned this often is a topic of the conversation
    own_words_zipf_en: float = 4.0  # own-words scopes: a user's single word this common is small talk
    category_min_names: int = 2  # a word heading this many catalog names is the tenant's kind of thing
    df_max_share: float = 0.2  # share of the tenant's users above which a concept is not specific
    df_min_users: int = 20  # below this many users a share means nothing

    @classmethod
    def from_settings(cls, settings: Settings) -> SpecificityConfig:
        return cls(
            common_zipf_en=settings.specificity_common_zipf,
            common_zipf_zh=settings.specificity_common_zipf_zh,
            common_noun_zipf_zh=settings.specificity_common_noun_zipf_zh,
            modifier_zipf=settings.specificity_modifier_zipf,
            repeat_mentions=settings.specificity_repeat_mentions,
            own_words_zipf_en=settings.specificity_own_words_zipf,
            df_max_share=settings.specificity_df_max_share,
            df_min_users=settings.specificity_df_min_users,
        )


def language_reason(
    key: str,
    mentions: int,
    config: SpecificityConfig,
    categories: frozenset[str] = frozenset(),
    marks: frozenset[str] = frozenset(),
) -> str | None:
    """Common in the language and not a recurring topic, or the tenant's own kind of thing. ``marks``: what stood
    around the key's Chinese mentions (graphmem/zh_name_likeness.py; ConceptNode.context_marks)."""
    if not key:
        return "fragment"
    if not key.isascii():
        return zh_language_reason(key, mentions, config, marks)
    parts = key.split()
    if len(parts) == 1:
        if is_category(key, categories):
            return "category_word"
        if LATIN_WORD.match(key) and zipf(key) >= config.common_zipf_en and mentions < config.repeat_mentions:
            return "common_word"
        return None
    if "".join(parts) in generic_en():
        return "common_phrase"  # a generic word spelled open: "white board", "score board"
    head, mods = parts[-1], [p for p in parts[:-1] if p not in STOP_WORDS]
    meta = meta_keys()
    generic_head = head in generic_en() or head in STOP_WORDS or (head in meta and head not in categories)
    if not generic_head or head in categories:
        return None
    if all(m in generic_en() or m in filler_en() or m in meta or zipf(m) >= config.modifier_zipf for m in mods):
        if head in meta and any(m not in filler_en() and m not in generic_en() and m not in meta for m in mods):
            return None  # "christmas movies", "buddy cop movie": a kind of movie is a preference
        return "common_phrase"
    return None


def zh_language_reason(
    key: str, mentions: int, config: SpecificityConfig, marks: frozenset[str] = frozenset()
) -> str | None:
    """Chinese: a piece of a sentence (一为校园, TOP排行榜: graphmem/zh_cuts.py), a very common word (过程, 喜欢), a description rather than a name (a nationality, 美国小说家,
    同名小说, an award category, an address, a role fused onto a name, a language: graphmem/zh_descriptors.py),
    an everyday dictionary noun said in passing, or an item whose make-up and place in the text (``marks``) are a
    phrase's rather than a name's (graphmem/zh_name_likeness.py: 极具人气, 成本高达, 清宫 glued to 乾; measured in
    eval/results/NOTES.md).

    A key jieba's dictionary tags as a common noun (n) with wordfreq Zipf >= ``common_noun_zipf_zh``
    (作曲家, 食堂, 配音, 乐坛, 导演奖) names a kind of thing, not this user's topic, unless the
    conversation keeps coming back to it (``repeat_mentions``) or it ends like a place name (圆明园,
    神武门 are dictionary nouns too), and (``node_reason``) not when both the user and the assistant
    name it. Names are tagged nr/ns/nt/nz or are out of the dictionary. Measured on KdConv dev (all
    450 conversations, extraction only): the rule takes 1,482 of 8,318 stored concepts, 174 of them
    knowledge-base values, 14 knowledge-base entities (教父, 青蛇: titles that are common nouns).
    """
    if not any("\u4e00" <= ch <= "\u9fff" for ch in key) or " " in key:
        return None
    cut = cut_reason(key)  # a piece of a sentence is no name however often it recurs
    if cut:
        return cut
    if mentions >= config.repeat_mentions:
        return None
    z = zipf(key, "zh")
    if z >= config.common_zipf_zh:
        return "common_word"
    described = descriptor_reason(key, zh_place_like(key))
    if described:
        return described
    if z >= config.common_noun_zipf_zh and zh_dictionary_tag(key) == "n" and not zh_place_like(key):
        return "common_noun_zh"
    if name_likeness.probability(key, marks) < name_likeness.threshold(marks):
        return "unlike_a_name"  # a recited detail's or a phrase's look (graphmem/zh_name_likeness.py)
    return None


def zh_assistant_only_unlike_a_name(
    key: str, mentions: int, config: SpecificityConfig, marks: frozenset[str] = frozenset()
) -> bool:
    """A Chinese item only the assistant said must look more like a name than one the user said: the user never
    took it up, and such items are most often a detail the assistant recited (a birthplace, an address, the body
    that gives a prize). The stricter threshold is the model file's ``threshold_assistant_only``."""
    if key.isascii() or mentions >= config.repeat_mentions or not any("\u4e00" <= ch <= "\u9fff" for ch in key):
        return False
    return name_likeness.probability(key, marks) < name_likeness.threshold_assistant_only(marks)


def zh_dictionary_tag(key: str) -> str | None:
    """jieba's dictionary part of speech of a Chinese word (None when it is not a dictionary word)."""
    from graphmem.extraction import pipelines  # jieba's table is loaded once, on first use

    return pipelines.jieba_tags().get(key)


def zh_place_like(key: str) -> bool:
    from graphmem.extraction.zh.tokens import PLACE_ENDINGS

    return any(key.endswith(e) and len(key) > len(e) for e in PLACE_ENDINGS)


def chat_reply_reason(key: str) -> str | None:
    """Every word of an English key is a chat reply word ("yea kinda", "maam" of "yes maam", "yay").

    Judged at block selection only: the extractor keeps what it stored (stances and the preference
    model read the same candidates), the block leaves the reply out."""
    parts = key.split()
    if not parts or not key.isascii():
        return None
    reply = _chat_reply_words()
    return "chat_reply" if all(p in reply for p in parts) else None


def written_as_title(name: str) -> bool:
    """An English phrase in title case: two or more capitalised words, every other word one a title leaves in
    lower case (graphmem/data/title_small_words_en.txt). "Everything Everywhere All at Once", "Among Us"; not
    "German cases", "summer course", "Happy birthday", nor a name cut after an initial ("Jennifer A")."""
    parts = name.split()
    if len(parts) < 2 or not name.isascii() or not parts[0][:1].isupper() or len(parts[-1]) < 2:
        return False
    small = words("title_small_words_en.txt")
    capitalised = [p for p in parts if p[:1].isupper()]
    return len(capitalised) >= 2 and all(p[:1].isupper() or p in small for p in parts)


@cache
def _chat_reply_words() -> frozenset[str]:
    # Built once: chat_reply_reason runs for every candidate of every block.
    return words("chat_replies_en.txt") | words("latin_interjections.txt")


def node_reason(node: ConceptNode, config: SpecificityConfig, categories: frozenset[str] = frozenset()) -> str | None:
    """Why a stored concept is not specific to its user (language and list checks only; the
    tenant's document frequency is ``df_reason``). Catalog concepts are the tenant's own names
    and are judged by document frequency only."""
    if node.in_catalog:
        return None
    key = node.key
    reason = (
        fragment_reason(node.name)
        or meta_reason(key)
        or chat_reply_reason(key)
        or language_reason(key, node.user_mentions + node.assistant_mentions, config, categories, node.context_marks)
    )
    if reason in SHARED_TOPIC_OK and node.user_mentions and node.assistant_mentions:
        return None  # both sides name it (鸟巢, 水立方, the film 海洋 in a chat about it): a topic they share
    if reason in TOPIC_OBJECT_OK and name_likeness.TOPIC_OBJECT_MARK in node.context_marks:
        return None  # the user learns, likes, knows or dislikes it (我想学吉他。)
    if reason == "common_phrase" and written_as_title(node.name):
        return None  # common words written as a title are a name: "The Last of Us", "Ready Player One"
    if reason == "common_word" and node.user_mentions == 0 and key.isascii():
        return "common_word_of_assistant"
    if (
        reason is None
        and node.user_mentions == 0
        and zh_assistant_only_unlike_a_name(key, node.assistant_mentions, config, node.context_marks)
    ):
        return "unlike_a_name_of_assistant"
    # Chinese: the everyday nouns of a lesson are dictionary nouns (common_noun_zh, judged above), so a word
    # this common (Zipf >= common_zipf_zh: 中国 6.4 in "北京大学是中国的最高学府") is said in passing even
    # when only the assistant said it, and does not fill the core either.
    return reason


def own_word_reason(node: ConceptNode, config: SpecificityConfig) -> str | None:
    """In an own-words (recommendation) block: a single common word the user said in passing
    ("in a mood for", "I don't get snow", "is a riot") is small talk, not a preference; a preference
    said in one word is a catalog genre or title, a rarer word ("zombies"), or said again."""
    key = node.key
    mentions = node.user_mentions + node.assistant_mentions
    if LATIN_WORD.match(key) and mentions < config.repeat_mentions and zipf(key) >= config.own_words_zipf_en:
        return "common_word"
    return None


def df_reason(users_with: int, tenant_users: int, config: SpecificityConfig) -> str | None:
    """Too common across the tenant's users to say anything about one of them."""
    if tenant_users < max(1, config.df_min_users):
        return None
    return "common_in_tenant" if users_with / tenant_users > config.df_max_share else None


def demoted(
    concepts: Mapping[str, ConceptNode],
    candidates: Iterable[str],
    config: SpecificityConfig,
    categories: frozenset[str] = frozenset(),
    df: Mapping[str, int] | None = None,
    tenant_users: int = 0,
    df_catalog: bool = False,
    own_words_only: bool = False,
) -> dict[str, str]:
    """key -> reason for the candidate concepts that stay out of core and related.

    ``df``: how many of the tenant's ``tenant_users`` users have each key (missing keys are not
    judged by share). A catalog concept the user named, or that reached the graph only through the
    catalog's relations, is judged by share only when ``df_catalog``: a genre half the users like
    still says this user likes it, and a curriculum neighbour every learner of a course reaches
    (DESIGN.md's SQLAlchemy under Django) is still this learner's related concept. A catalog concept
    only the assistant named is judged (a title a recommender suggests to everyone).
    ``own_words_only`` (recommendation blocks): an open-vocabulary concept only the assistant said
    ("frat house", "toilet jokes" describing a film it suggests) is the assistant's, not a preference
    of the user's; catalog concepts it suggested stay (what was recommended to this user); and a
    single common word the user said in passing is small talk (``own_word_reason``).
    """
    out: dict[str, str] = {}
    for key in candidates:
        node = concepts.get(key)
        if node is None:
            continue
        reason = node_reason(node, config, categories)
        if reason is None and own_words_only and not node.in_catalog:
            reason = "assistant_words" if node.user_mentions == 0 else own_word_reason(node, config)
        assistant_only = node.user_mentions == 0 and node.assistant_mentions > 0
        if reason is None and df is not None and key in df and (df_catalog or not node.in_catalog or assistant_only):
            reason = df_reason(df[key], tenant_users, config)
        if reason is not None:
            out[key] = reason
    return out
