"""Catalog loading: JSON / YAML / CSV, and errors that say where the problem is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphmem.errors import InvalidCatalog
from graphmem.extraction import catalog_keys, concept_key, load_catalog, parse_catalog
from graphmem.models import ConceptType, RelationType

GOOD = {
    "concepts": [
        {"name": "Python基础", "aliases": ["Python basics"], "type": "course", "id": "py101"},
        {"name": "Django框架", "aliases": ["Django"], "type": "tool", "url": "https://example.org/django"},
        {"name": "SQLAlchemy", "type": "tool"},
        {"name": "SQL基础", "type": "course", "critical": True},
    ],
    "relations": [
        {"source": "Python基础", "type": "prerequisite", "target": "Django框架"},
        {"source": "Django框架", "type": "uses", "target": "SQLAlchemy"},
        {"source": "SQLAlchemy", "type": "requires", "target": "SQL基础"},
    ],
}

YAML = """
concepts:
  - name: Python基础
    aliases: [Python basics]
    type: course
    id: py101
  - name: Django框架
    aliases: [Django]
    type: tool
  - {name: SQLAlchemy, type: tool}
  - {name: SQL基础, type: course, critical: true}
relations:
  - {source: Python基础, type: prerequisite, target: Django框架}
  - {source: Django, type: uses, target: SQLAlchemy}
  - {source: SQLAlchemy, type: requires, target: SQL基础}
"""

CONCEPTS_CSV = """name,aliases,type,id,url,critical
Python基础,Python basics|Python fundamentals,course,py101,,
Django框架,Django,tool,,https://example.org/django,false
SQLAlchemy,,tool,,,
SQL基础,,course,,,true
"""
EDGES_CSV = """source,type,target
Python基础,prerequisite,Django框架
Django,uses,SQLAlchemy
SQLAlchemy,requires,SQL基础
"""


def _check(cat) -> None:  # type: ignore[no-untyped-def]
    assert [c.name for c in cat.concepts] == ["Python基础", "Django框架", "SQLAlchemy", "SQL基础"]
    assert cat.concepts[0].type == ConceptType.course and cat.concepts[1].aliases[0] == "Django"
    assert cat.concepts[3].critical is True and cat.concepts[2].critical is False
    assert [r.type for r in cat.relations] == [RelationType.prerequisite, RelationType.uses, RelationType.requires]
    keys = catalog_keys(cat)
    assert keys[concept_key("django")] == concept_key("Django框架")


def test_json_yaml_csv_load_the_same_catalog(tmp_path: Path) -> None:
    _check(parse_catalog(json.dumps(GOOD, ensure_ascii=False), "json"))
    _check(parse_catalog(YAML.encode("utf-8"), "yaml"))
    _check(parse_catalog(CONCEPTS_CSV, "csv", EDGES_CSV))
    (tmp_path / "c.json").write_text(json.dumps(GOOD), encoding="utf-8")
    (tmp_path / "c.yml").write_text(YAML, encoding="utf-8")
    (tmp_path / "concepts.csv").write_bytes(b"\xef\xbb\xbf" + CONCEPTS_CSV.encode("utf-8"))  # BOM from Excel
    (tmp_path / "edges.csv").write_text(EDGES_CSV, encoding="utf-8")
    _check(load_catalog(tmp_path / "c.json"))
    _check(load_catalog(tmp_path / "c.yml"))
    _check(load_catalog(tmp_path / "concepts.csv", tmp_path / "edges.csv"))
    _check(load_catalog(tmp_path))  # a folder: concepts.csv + edges.csv


def test_unknown_relation_type_names_the_entry() -> None:
    bad = json.loads(json.dumps(GOOD))
    bad["relations"].append({"source": "SQL基础", "type": "teaches", "target": "Python基础"})
    with pytest.raises(InvalidCatalog) as err:
        parse_catalog(json.dumps(bad), "json")
    assert "relations[3]" in err.value.message and "teaches" in err.value.message
    assert err.value.code == "INVALID_CATALOG" and err.value.status == 422


def test_csv_missing_name_names_the_line() -> None:
    csv_text = "name,aliases,type\nA,,topic\nB,,topic\n,orphan alias,topic\n"
    with pytest.raises(InvalidCatalog) as err:
        parse_catalog(csv_text, "csv")
    assert "line 4" in err.value.message and "name" in err.value.message


def test_relation_to_unknown_concept() -> None:
    with pytest.raises(InvalidCatalog) as err:
        parse_catalog(
            json.dumps({"concepts": [{"name": "A"}], "relations": [{"source": "A", "type": "uses", "target": "Nope"}]}),
            "json",
        )
    assert "relations[0]" in err.value.message and "Nope" in err.value.message
    with pytest.raises(InvalidCatalog) as err:
        parse_catalog(CONCEPTS_CSV, "csv", EDGES_CSV + "SQLAlchemy,uses,Nope\n")
    assert "line 5" in err.value.message and "Nope" in err.value.message


@pytest.mark.parametrize(
    "data,fmt,needle",
    [
        ("{not json", "json", "line 1"),
        ("concepts:\n  - name: A\n   type: [", "yaml", "line"),
        (json.dumps({"concepts": [{"name": "A", "type": "sci fi"}]}), "json", "concepts[0].type"),
        (json.dumps({"concepts": [{"name": "A", "type": "x" * 33}]}), "json", "concepts[0].type"),
        ("name,type\nA,movie;drop\n", "csv", "line 2"),
        (json.dumps({"concepts": [{"name": "A"}, {"name": "a"}]}), "json", "concepts[1]"),
        (json.dumps({"concepts": [{"name": "A", "colour": "red"}]}), "json", "concepts[0].colour"),
        ("name,colour\nA,red\n", "csv", "line 1"),
        ("name,critical\nA,maybe\n", "csv", "line 2"),
        (b"\xff\xfe\x00", "json", "UTF-8"),
        ("[]", "toml", "format"),
    ],
)
def test_errors_say_where(data: str | bytes, fmt: str, needle: str) -> None:
    with pytest.raises(InvalidCatalog) as err:
        parse_catalog(data, fmt)  # type: ignore[arg-type]
    assert needle in err.value.message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidCatalog):
        load_catalog(tmp_path / "nope.json")


# ---------------------------------------------------------------------------
# Concept types are open: any short label, the six built-in ones are suggestions.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("ctype", ["movie", "genre", "person", "book", "song", "sci-fi", "tv_show", "课程", "course"])
def test_any_short_label_is_a_concept_type(ctype: str) -> None:
    cat = parse_catalog(json.dumps({"concepts": [{"name": "Alien", "type": ctype}]}), "json")
    assert cat.concepts[0].type == ctype and type(cat.concepts[0].type) is str
    cat = parse_catalog(f"name,type\nAlien,{ctype}\n", "csv")
    assert cat.concepts[0].type == ctype


@pytest.mark.parametrize("ctype", ["", "a b", "x" * 33, "movie\u0000", "movie!", "mo.vie", "a/b", "<b>", "a'b", "`x`"])
def test_concept_types_are_short_labels_without_spaces_or_punctuation(ctype: str) -> None:
    with pytest.raises(InvalidCatalog) as err:
        parse_catalog(json.dumps({"concepts": [{"name": "Alien", "type": ctype}]}), "json")
    assert "concepts[0].type" in err.value.message and "letters, digits" in err.value.message


def test_the_default_type_is_topic() -> None:
    assert parse_catalog(json.dumps({"concepts": [{"name": "Alien"}]}), "json").concepts[0].type == "topic"
