"""The extraction entry point: turns in, validated TurnExtractions out.

    extractor = ConceptExtractor(catalog)          # cheap: builds a matcher only
    results = extractor.extract(texts, roles)      # one TurnExtraction per text

The spaCy pipelines are loaded once per process (pipelines.py) and shared by
every extractor; texts are grouped by language and run through `pipe` in
batches. Per turn: catalog matches (highest confidence), then open-vocabulary
candidates that do not overlap them, then relations and — for user turns
only — stances.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from spacy.language import Language
from spacy.tokens import Doc

from graphmem.errors import InvalidInput
from graphmem.extraction import pipelines
from graphmem.extraction.candidates import LONE_LATIN_NAME, Candidate, overlaps, reject_reason
from graphmem.extraction.catalog_matcher import CatalogMatcher, catalog_keys
from graphmem.extraction.coreference import carry_references
from graphmem.extraction.en.candidates import english_candidates, story_object_keys
from graphmem.extraction.language import EN, ZH, detect_language
from graphmem.extraction.lexical import category_words, is_category
from graphmem.extraction.normalize import blank_links, concept_key, sanitize
from graphmem.extraction.relations import extract_relations
from graphmem.extraction.replies import attach_replies
from graphmem.extraction.stances import ReplyStance, analyse_turn
from graphmem.extraction.zh.candidates import ZhLexicon, chinese_candidates
from graphmem.models import (
    ROLES,
    Catalog,
    ConceptMention,
    ConceptType,
    ExtractorName,
    PriorTurn,
    SkippedCandidate,
    TurnExtraction,
    clean_name,
)
from graphmem.settings import Settings, get_settings

__all__ = ["ConceptExtractor", "concept_key", "catalog_keys"]

CONF_CATALOG = 0.95
# No lemmatizer (lemmas come from the rule-based singulariser in normalize.py); NER runs separately,
# only on turns that can hold an entity (_needs_ner), because it is half of the pipeline's cost.
_EN_COMPONENTS = ("tok2vec", "tagger", "parser", "attribute_ruler")
_NER_TYPES = {"PRODUCT": ConceptType.product, "LANGUAGE": ConceptType.skill}
MAX_SKIPPED = 50  # per turn: enough to debug, bounded for huge turns


class ConceptExtractor:
    """Concept, relation and stance extraction for one tenant catalog (or none)."""

    def __init__(
        self, catalog: Catalog | None = None, settings: Settings | None = None, *, use_ner: bool = True
    ) -> None:
        self.settings = settings or get_settings()
        self.catalog = catalog
        self.matcher = CatalogMatcher(catalog) if catalog is not None and catalog.concepts else None
        # Words heading several catalog names ("framework", "api", "movie"): the tenant's kinds of
        # thing, never an open-vocabulary concept of their own (graphmem/specificity.py).
        self.categories = (
            category_words([n for c in catalog.concepts for n in (c.name, *c.aliases)])
            if self.matcher is not None and catalog
            else frozenset()
        )
        self.use_ner = use_ner
        self.max_chars = max(1, self.settings.max_text_chars)
        self.batch_size = max(1, self.settings.extraction_batch_size)

    # -- pipelines ----------------------------------------------------------

    @property
    def nlp_en(self) -> Language:
        return pipelines.english(self.settings.spacy_model)

    @property
    def nlp_zh(self) -> Language:
        return pipelines.chinese()

    def _run_en(self, texts: list[str]) -> Iterator[Doc]:
        # Components are chained by hand rather than with nlp.select_pipes, which
        # mutates the shared pipeline and is not safe across threads.
        nlp = self.nlp_en
        docs: Iterable[Doc] = (nlp.make_doc(t) for t in texts)
        fast_ruler = pipelines.attribute_ruler(nlp)
        for name, proc in nlp.pipeline:
            if name == "attribute_ruler" and fast_ruler is not None:
                proc = fast_ruler  # the same rules without spaCy's Matcher (en/attribute_rules.py)
            if name in _EN_COMPONENTS:
                docs = proc.pipe(docs, batch_size=self.batch_size)  # type: ignore[attr-defined]
        docs = list(docs)
        if self.use_ner and "ner" in nlp.pipe_names:
            # NER is half the pipeline's cost; it only runs where an entity can be
            # (a capitalised word not opening a sentence, a proper noun, a code-like word).
            need = [d for d in docs if _needs_ner(d)]
            for _ in nlp.get_pipe("ner").pipe(need, batch_size=self.batch_size):  # type: ignore[attr-defined]
                pass
        return iter(docs)

    def _run_zh(self, texts: list[str]) -> Iterator[Doc]:
        return self.nlp_zh.pipe(texts, batch_size=self.batch_size)

    # -- entry point ------------------------------------------------------------

    def extract(
        self, texts: Sequence[str], roles: Sequence[str] | None = None, prior: PriorTurn | None = None
    ) -> list[TurnExtraction]:
        """One TurnExtraction per text. With ``roles``, the texts are one session's turns in
        order and a user turn referring back to the assistant turn before it ("he", 这部电影)
        also mentions what that turn named (coreference.py); ``prior`` is the stored turn
        before the first text, if any.
        """
        if isinstance(texts, str):
            raise InvalidInput("extract() takes a sequence of texts, not one string")
        if roles is not None and len(roles) != len(texts):
            raise InvalidInput(f"{len(texts)} texts but {len(roles)} roles")
        for r in roles or ():
            if r not in ROLES:
                raise InvalidInput(f"unknown role {r!r}; expected one of {', '.join(ROLES)}")
        results: list[TurnExtraction | None] = [None] * len(texts)
        replies: list[ReplyStance | None] = [None] * len(texts)
        prepared: list[tuple[str, str, list[SkippedCandidate]]] = []
        by_lang: dict[str, list[int]] = {EN: [], ZH: []}
        for i, raw in enumerate(texts):
            if not isinstance(raw, str):
                raise InvalidInput(f"texts[{i}] is {type(raw).__name__}, expected str")
            skipped: list[SkippedCandidate] = []
            text = raw
            if len(text) > self.max_chars:
                # Spans stay valid for the original: only its head is read.
                skipped.append(
                    SkippedCandidate(
                        text=f"<{len(text) - self.max_chars} chars after {self.max_chars}>", reason="truncated"
                    )
                )
                text = text[: self.max_chars]
            text = blank_links(sanitize(text))
            lang = detect_language(text)
            prepared.append((text, lang, skipped))
            if not any(ch.isalpha() for ch in text):
                # Numbers, punctuation, emoji: nothing to find, no pipeline needed.
                results[i] = TurnExtraction(language=lang, skipped=skipped)
            else:
                by_lang[lang].append(i)
        counted: set[str] = set()  # what the batch's word problems count a character having
        for lang, idxs in by_lang.items():
            if not idxs:
                continue
            run = self._run_zh if lang == ZH else self._run_en
            docs = list(run([prepared[i][0] for i in idxs]))
            # Chinese names established anywhere in the batch (a cue, a title, a recurring
            # merge) are looked up in every turn of it: see zh.candidates.ZhLexicon.
            lexicon = ZhLexicon.build(docs, pipelines.jieba_tags()) if lang == ZH else None
            if lang != ZH and roles is not None:  # only a session's turns (roles given) drop counted objects
                counted |= {k for doc in docs for k in story_object_keys(doc)}
            for i, doc in zip(idxs, docs):
                text, _, skipped = prepared[i]
                role = roles[i] if roles is not None else "user"
                results[i], replies[i] = self._one(texts[i], text, lang, doc, role, skipped, lexicon)
        done = [r if r is not None else TurnExtraction(language=EN) for r in results]
        if roles is None:
            return done
        texts_ = [p[0] for p in prepared]
        done = [
            _without_counted(ex, counted) if role == "assistant" else ex for ex, role in zip(done, roles, strict=True)
        ]
        carried = carry_references(texts_, roles, done, prior)
        # A user's reply about what the assistant just named ("I didn't like that one") is a stance toward it.
        return attach_replies(texts_, roles, carried, replies, prior)

    # -- one turn -------------------------------------------------------------------

    def _one(
        self,
        original: str,
        text: str,
        lang: str,
        doc: Doc,
        role: str,
        skipped: list[SkippedCandidate],
        lexicon: ZhLexicon | None = None,
    ) -> tuple[TurnExtraction, ReplyStance | None]:
        max_len = self.settings.max_name_length
        mentions: list[ConceptMention] = []
        taken: list[tuple[int, int]] = []
        if self.matcher is not None:
            for hit in self.matcher.scan(text):
                concept = self.matcher.concepts[hit.concept]
                surface = original[hit.start : hit.end]
                if surface != text[hit.start : hit.end]:
                    _skip(skipped, surface, "invalid_characters")
                    continue
                mentions.append(
                    ConceptMention(
                        key=self.matcher.keys[hit.concept],
                        name=concept.name,
                        type=concept.type,
                        language=lang,
                        start=hit.start,
                        end=hit.end,
                        surface=surface,
                        extractor=ExtractorName.catalog,
                        confidence=CONF_CATALOG,
                        in_catalog=True,
                    )
                )
                taken.append((hit.start, hit.end))
        if lang == ZH:
            cands = chinese_candidates(doc, pipelines.jieba_tags(), lexicon)
        else:
            cands = english_candidates(doc)
        # Longest candidate first, then the more confident one: "longest match wins".
        cands.sort(key=lambda c: (-(c.end - c.start), -c.confidence, c.start))
        for c in cands:
            if any(overlaps(c.start, c.end, s, e) for s, e in taken):
                continue
            m = self._open_mention(original, text, lang, c, max_len, skipped)
            if m is not None:
                mentions.append(m)
                taken.append((m.start, m.end))
        mentions.sort(key=lambda m: m.start)
        sentences = [(s.start_char, s.end_char) for s in doc.sents] if _has_sents(doc) else [(0, len(text))]
        relations = extract_relations(text, lang, sentences, mentions) if len(mentions) > 1 else []
        stances, reply = [], None
        if role == "user":
            found = analyse_turn(text, lang, sentences, mentions)
            stances, reply = found.stances, found.reply
            if found.cue_mentions:  # "second nature" is how the user said it, not what about
                dropped = set(found.cue_mentions)
                mentions = [m for m in mentions if (m.start, m.end) not in dropped]
                relations = [
                    r
                    for r in relations
                    if r.source_key in {m.key for m in mentions} and r.target_key in {m.key for m in mentions}
                ]
        if original[: len(text)] != text:
            # Cues were read on the sanitised copy; report the caller's characters.
            for relation in relations:
                relation.cue = original[relation.start : relation.end]
            for stance in stances:
                stance.cue = original[stance.start : stance.end]
            if reply is not None:
                reply = ReplyStance(
                    reply.stance, reply.start, reply.end, original[reply.start : reply.end], reply.confidence
                )
        return (
            TurnExtraction(language=lang, concepts=mentions, relations=relations, stances=stances, skipped=skipped),
            reply,
        )

    def _open_mention(
        self, original: str, text: str, lang: str, c: Candidate, max_len: int, skipped: list[SkippedCandidate]
    ) -> ConceptMention | None:
        start, end = c.start, c.end
        raw = text[start:end]
        # Trim whitespace and quotes the tokenizer left attached.
        lead = len(raw) - len(raw.lstrip(" \t\n\"'`“”‘’"))
        trail = len(raw) - len(raw.rstrip(" \t\n\"'`“”‘’.,;:!?"))
        start, end = start + lead, end - trail
        if end <= start:
            return None
        surface = original[start:end]
        if surface != text[start:end]:
            _skip(skipped, text[start:end], "invalid_characters")
            return None
        key = concept_key(c.name or surface)
        reason = reject_reason(c.name or surface, key, max_len, latin_name=c.label == LONE_LATIN_NAME)
        if reason is not None:
            _skip(skipped, surface, reason)
            return None
        ctype: ConceptType | str | None = ConceptType.skill if c.label == "operation" else _NER_TYPES.get(c.label)
        name = clean_name(c.name or surface, max_len)
        in_catalog = False
        if self.matcher is not None:
            idx = self.matcher.resolve(key)
            if idx is not None and (
                key in self.matcher.common_keys or key in self.matcher.common_lower_keys and surface.islower()
            ):
                # A catalog name that is also a common word, here without evidence (catalog_matcher).
                _skip(skipped, surface, "common_word_name")
                return None
            if idx is not None:
                concept = self.matcher.concepts[idx]
                key, name, ctype, in_catalog = self.matcher.keys[idx], concept.name, concept.type, True
        if not in_catalog and is_category(key, self.categories):
            _skip(skipped, surface, "category_word")
            return None
        if not name or len(key) > 160:
            _skip(skipped, surface, "too_long" if name else "empty")
            return None
        return ConceptMention(
            key=key,
            name=name,
            type=ctype,
            language=lang,
            start=start,
            end=end,
            surface=surface,
            extractor=c.extractor,
            confidence=c.confidence,
            in_catalog=in_catalog,
        )


def _without_counted(ex: TurnExtraction, counted: set[str]) -> TurnExtraction:
    """An assistant turn without the open-vocabulary nouns its session's word problems count a
    character having (en.candidates.story_object_keys).

    A tutor who asks "how many glasses did Ayako drink?" also says "add all the glasses in the
    pictograph": the glasses are the story's object wherever the tutor names them, not what the lesson
    teaches (the candidates already skip the counted mention itself). The user's own mentions stay;
    catalog names stay."""
    drop = {m.key for m in ex.concepts if m.key in counted and not m.in_catalog}
    if not drop:
        return ex
    return ex.model_copy(
        update={
            "concepts": [m for m in ex.concepts if m.key not in drop],
            "relations": [r for r in ex.relations if r.source_key not in drop and r.target_key not in drop],
        }
    )


def _skip(skipped: list[SkippedCandidate], text: str, reason: str) -> None:
    if len(skipped) < MAX_SKIPPED and not any(s.text == text and s.reason == reason for s in skipped):
        skipped.append(SkippedCandidate(text=clean_name(text, 120) or "<empty>", reason=reason))


def _has_sents(doc: Doc) -> bool:
    return doc.has_annotation("SENT_START") or doc.has_annotation("DEP")


# Words that join the parts of one name ("Axiom of Choice", "Karush-Kuhn-Tucker", "AT&T"): the parser's
# noun chunks and proper-noun tokens split such names, the entity recogniser keeps them whole.
# "and" is left out on purpose: "React and Django" is two concepts, and chat joins names with it all the time.
_NAME_JOINERS = frozenset({"of", "-", "&", "de", "du", "von", "van", "for"})


def _needs_ner(doc: Doc) -> bool:
    """Can the entity recogniser find a concept the noun chunks and proper nouns miss?

    Measured on 900 chat turns (benchmark learners, Bridge) and 357 Metacademy summaries: NER
    changed the concepts of 1 turn ("Keep Going", junk) and of 14 summaries, every time a name
    joined by a small word or a hyphen. NER is about a third of the English pipeline's cost,
    so it runs only on texts holding such a joined capitalised name.
    """
    toks = list(doc)
    for i in range(len(toks) - 2):
        a, join, b = toks[i], toks[i + 1], toks[i + 2]
        if (
            a.text[:1].isupper()
            and b.text[:1].isupper()
            and join.lower_ in _NAME_JOINERS
            and (a.pos_ == "PROPN" or b.pos_ == "PROPN" or not a.is_sent_start)
        ):
            return True
    return False
