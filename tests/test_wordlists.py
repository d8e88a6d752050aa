"""The hand-kept word lists in graphmem/data: well-formed, no duplicates, loaded by the code."""

from __future__ import annotations

import pytest

from graphmem.extraction.candidates import GENERIC_EN, GENERIC_ZH
from graphmem.extraction.lexical import meta_keys
from graphmem.extraction.normalize import concept_key
from graphmem.wordlists import entries, words, yaml_data

LISTS = (
    "generic_en.txt",
    "generic_zh.txt",
    "leading_filler_en.txt",
    "meta_words.txt",
    "latin_interjections.txt",
    "chat_replies_en.txt",
    "chat_idioms_en.txt",
    "enumeration_heads_en.txt",
    "relational_heads_en.txt",
    "greetings_en.txt",
    "zh_boundary_chars.txt",
    "title_small_words_en.txt",
)


@pytest.mark.parametrize("name", LISTS)
def test_list_has_no_duplicates_and_no_blank_entries(name: str) -> None:
    items = entries(name)
    assert items, name
    dupes = sorted({x for x in items if items.count(x) > 1})
    assert not dupes, f"{name} lists {dupes} more than once"
    assert all(x == x.strip() and x for x in items)


def test_meta_words_have_no_duplicate_keys() -> None:
    # Two spellings of one key ("movie", "movies") would be one entry twice.
    keys = [concept_key(x) for x in entries("meta_words.txt")]
    assert len(keys) == len(set(keys))


def test_code_reads_the_data_files() -> None:
    assert GENERIC_EN == words("generic_en.txt") and "homework" in GENERIC_EN
    assert GENERIC_ZH == words("generic_zh.txt") and "电影" in GENERIC_ZH
    assert {"recommendation", "accept", "opinion", "movie", "previous step", "best shot"} <= meta_keys()


def test_exercise_word_lists_are_read_by_the_english_candidates() -> None:
    from graphmem.extraction.en import candidates as en

    assert en._ENUMERATION_HEADS == words("enumeration_heads_en.txt") and "option" in en._ENUMERATION_HEADS
    assert en._RELATIONAL_HEADS == words("relational_heads_en.txt") and "result" in en._RELATIONAL_HEADS
    assert en._GREETINGS == words("greetings_en.txt") and "bye" in en._GREETINGS
    assert "value" in en._RELATIONAL_HEADS  # asked of a digit in a number, it is named "place value" instead
    assert all(x == x.lower() for x in en._ENUMERATION_HEADS | en._RELATIONAL_HEADS | en._GREETINGS)


def test_title_evidence_file_has_both_languages() -> None:
    data = yaml_data("title_evidence.yaml")
    for lang in ("en", "zh"):
        assert data[lang]["window"] >= 1
        assert data[lang]["before"] and data[lang]["after"]
        for side in ("before", "after"):
            assert len(data[lang][side]) == len(set(data[lang][side])), (lang, side)


def test_chinese_name_lists_have_no_duplicates() -> None:
    # zh_names.yaml: character lists are strings (one entry per character), word lists are lists.
    data = yaml_data("zh_names.yaml")
    assert data
    for name, value in data.items():
        items = list(value)
        assert items, name
        dupes = sorted({x for x in items if items.count(x) > 1})
        assert not dupes, f"zh_names.yaml {name} lists {dupes} more than once"
        assert all(isinstance(x, str) and x == x.strip() and x for x in items), name
    # An ending listed as a name suffix need not be listed again among the place endings.
    assert not set(data["name_suffix"]) & set(data["place_endings"])


def test_chinese_rules_read_the_data_file() -> None:
    from graphmem.extraction.candidates import ROLE_ZH
    from graphmem.extraction.zh import tokens

    assert ROLE_ZH == frozenset(yaml_data("zh_names.yaml")["role_words"]) and "主演" in ROLE_ZH
    assert "王" in tokens.SURNAMES and "美术馆" in tokens.PLACE_ENDINGS and "溶洞" in tokens.PLACE_ENDINGS


def test_chinese_boundary_characters_are_single_characters_read_by_the_marks() -> None:
    from graphmem.zh_name_likeness import context_marks

    chars = entries("zh_boundary_chars.txt")
    assert all(len(c) == 1 for c in chars)
    assert {"的", "，", "《", "》"} <= set(chars)
    # A listed character is a mark of its own; another Han character is "H".
    assert context_marks("看了的电影", 3, 5) == ("lc=的", "rc=$")
    assert context_marks("乾清宫", 1, 3) == ("lc=H", "rc=$")
