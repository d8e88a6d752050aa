"""Extraction layer: spaCy pipelines, catalog matching, open-vocabulary concepts,
relations and stances. Pure Python, no database."""

from graphmem.extraction.catalog_io import load_catalog, parse_catalog
from graphmem.extraction.catalog_matcher import CatalogMatcher, catalog_keys
from graphmem.extraction.extractor import ConceptExtractor
from graphmem.extraction.language import detect_language
from graphmem.extraction.normalize import concept_key

__all__ = [
    "CatalogMatcher",
    "ConceptExtractor",
    "catalog_keys",
    "concept_key",
    "detect_language",
    "load_catalog",
    "parse_catalog",
]
