"""Hand-kept word lists, read from the data files in ``graphmem/data`` (packaged with the library).

A list file holds one entry per line; ``#`` starts a comment line. Lists are read once per process.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml


def _text(name: str) -> str:
    return resources.files("graphmem").joinpath("data", name).read_text(encoding="utf-8")


def entries(name: str) -> list[str]:
    """The entries of a list file, in file order (duplicates kept, so a test can find them)."""
    return [line.strip() for line in _text(name).splitlines() if line.strip() and not line.lstrip().startswith("#")]


@cache
def words(name: str) -> frozenset[str]:
    """The entries of a list file as a set."""
    return frozenset(entries(name))


@cache
def yaml_data(name: str) -> Any:
    return yaml.safe_load(_text(name))
