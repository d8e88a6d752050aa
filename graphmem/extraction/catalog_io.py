"""Reading a tenant's concept catalog from JSON, YAML or CSV.

Every error is an InvalidCatalog whose message names where the problem is:
`relations[3].type`, `concepts.csv line 4`, `line 7 column 3` of a JSON file.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from graphmem.errors import InvalidCatalog
from graphmem.extraction.normalize import concept_key
from graphmem.models import Catalog

Format = Literal["json", "yaml", "csv"]
CONCEPT_COLUMNS = ("name", "aliases", "type", "id", "url", "critical")
EDGE_COLUMNS = ("source", "type", "target")
_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"", "0", "false", "no", "n", "f"}


def _decode(data: bytes | str, what: str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidCatalog(f"{what}: not valid UTF-8 (byte {exc.start})") from None


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "catalog"


def _validate(obj: Any, where: str = "") -> Catalog:
    if isinstance(obj, list):  # a bare list is a list of concepts
        obj = {"concepts": obj}
    if not isinstance(obj, dict):
        raise InvalidCatalog(
            f"{where}catalog must be an object with 'concepts' and 'relations', got {type(obj).__name__}"
        )
    if "edges" in obj and "relations" not in obj:  # a common synonym
        obj = {**obj, "relations": obj.pop("edges")}
    try:
        catalog = Catalog.model_validate(obj)
    except ValidationError as exc:
        msgs = []
        for err in exc.errors()[:5]:
            got = f" (got {err['input']!r})" if err["type"] not in ("missing", "value_error") else ""
            msg = err["msg"].removeprefix("Value error, ")
            loc = _loc(err["loc"])
            msgs.append(msg if loc == "catalog" else f"{loc}: {msg}{got}")
        raise InvalidCatalog(f"{where}invalid catalog: " + "; ".join(msgs)) from None
    _check_duplicates(catalog, where)
    return catalog


def _check_duplicates(catalog: Catalog, where: str) -> None:
    # Two concepts with the same key would silently merge in the graph.
    seen: dict[str, int] = {}
    for i, c in enumerate(catalog.concepts):
        key = concept_key(c.name)
        if not key:
            raise InvalidCatalog(f"{where}concepts[{i}]: name {c.name!r} has no letters or digits")
        if key in seen:
            raise InvalidCatalog(
                f"{where}concepts[{i}]: duplicate concept {c.name!r} (same key as concepts[{seen[key]}])"
            )
        seen[key] = i


def _parse_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidCatalog(f"{what}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InvalidCatalog(f"{what}: JSON nested too deeply") from None


def _parse_yaml(text: str, what: str) -> Any:
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        """Refuses aliases (and so merge keys): nested aliases expand exponentially ("billion laughs";
        355 bytes held the API for minutes). A catalog never needs them."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(
                    None, None, "YAML aliases (*name) are not accepted in a catalog", mark
                )
            return super().compose_node(parent, index)

    try:
        return yaml.load(text, Loader=NoAliasLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InvalidCatalog(f"{what}: invalid YAML{at}: {problem}") from None
    except RecursionError:
        raise InvalidCatalog(f"{what}: YAML nested too deeply") from None


def _csv_rows(
    text: str, what: str, required: tuple[str, ...], known: tuple[str, ...]
) -> list[tuple[int, dict[str, str]]]:
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise InvalidCatalog(f"{what}: empty CSV (expected a header line: {','.join(known)})") from None
    cols = [h.strip().lower() for h in header]
    missing = [c for c in required if c not in cols]
    if missing:
        raise InvalidCatalog(f"{what} line 1: header lacks column(s) {', '.join(missing)}")
    unknown = [c for c in cols if c not in known]
    if unknown:
        raise InvalidCatalog(f"{what} line 1: unknown column(s) {', '.join(unknown)}; allowed: {', '.join(known)}")
    rows = []
    try:
        for values in reader:
            line = reader.line_num
            if not any(v.strip() for v in values):
                continue  # blank lines are allowed
            if len(values) > len(cols):
                raise InvalidCatalog(f"{what} line {line}: {len(values)} fields, header has {len(cols)}")
            rows.append((line, {c: (values[i].strip() if i < len(values) else "") for i, c in enumerate(cols)}))
    except csv.Error as exc:
        raise InvalidCatalog(f"{what} line {reader.line_num}: {exc}") from None
    return rows


def _concepts_from_csv(text: str, what: str) -> tuple[list[dict[str, Any]], list[int]]:
    concepts, lines = [], []
    for line, row in _csv_rows(text, what, ("name",), CONCEPT_COLUMNS):
        if not row.get("name"):
            raise InvalidCatalog(f"{what} line {line}: missing name")
        critical = row.get("critical", "").lower()
        if critical not in _TRUE | _FALSE:
            raise InvalidCatalog(f"{what} line {line}: critical must be true/false, got {row['critical']!r}")
        item: dict[str, Any] = {
            "name": row["name"],
            "aliases": [a.strip() for a in row.get("aliases", "").split("|") if a.strip()],
            "critical": critical in _TRUE,
        }
        for opt in ("type", "id", "url"):
            if row.get(opt):
                item[opt] = row[opt]
        concepts.append(item)
        lines.append(line)
    return concepts, lines


def _edges_from_csv(text: str, what: str) -> tuple[list[dict[str, Any]], list[int]]:
    edges, lines = [], []
    for line, row in _csv_rows(text, what, EDGE_COLUMNS, EDGE_COLUMNS):
        for col in EDGE_COLUMNS:
            if not row.get(col):
                raise InvalidCatalog(f"{what} line {line}: missing {col}")
        edges.append(dict(row))
        lines.append(line)
    return edges, lines


def _relocate_csv_error(
    exc: InvalidCatalog, c_lines: list[int], e_lines: list[int], c_what: str, e_what: str
) -> InvalidCatalog:
    # Pydantic reports concepts[i] / relations[i]; a CSV user wants the line number.
    import re

    def sub(m: re.Match[str]) -> str:
        idx = int(m.group(2))
        if m.group(1) == "concepts" and idx < len(c_lines):
            return f"{c_what} line {c_lines[idx]} (concepts[{idx}])"
        if m.group(1) == "relations" and idx < len(e_lines):
            return f"{e_what} line {e_lines[idx]} (relations[{idx}])"
        return m.group(0)

    return InvalidCatalog(re.sub(r"\b(concepts|relations)\[(\d+)\]", sub, exc.message))


def parse_catalog(
    data: bytes | str,
    fmt: Format,
    edges_csv: bytes | str | None = None,
    *,
    name: str | None = None,
    edges_name: str | None = None,
) -> Catalog:
    """Parse a catalog. For "csv", `data` holds concepts and `edges_csv` the relations."""
    fmt = fmt.lower()  # type: ignore[assignment]
    what = name or f"catalog.{fmt}"
    text = _decode(data, what)
    if fmt == "json":
        return _validate(_parse_json(text, what), f"{what}: ")
    if fmt in ("yaml", "yml"):
        return _validate(_parse_yaml(text, what), f"{what}: ")
    if fmt == "csv":
        c_what = name or "concepts.csv"
        e_what = edges_name or "edges.csv"
        concepts, c_lines = _concepts_from_csv(text, c_what)
        edges: list[dict[str, Any]] = []
        e_lines: list[int] = []
        if edges_csv is not None:
            edges, e_lines = _edges_from_csv(_decode(edges_csv, e_what), e_what)
        try:
            return _validate({"concepts": concepts, "relations": edges})
        except InvalidCatalog as exc:
            raise _relocate_csv_error(exc, c_lines, e_lines, c_what, e_what) from None
    raise InvalidCatalog(f"unknown catalog format {fmt!r}; use json, yaml or csv")


def load_catalog(path: str | Path, edges_path: str | Path | None = None) -> Catalog:
    """Load a catalog file by extension (.json, .yaml/.yml, .csv).

    A directory is read as concepts.csv plus edges.csv (or relations.csv) if present.
    """
    p = Path(path)
    if p.is_dir():
        edges = edges_path or next((p / n for n in ("edges.csv", "relations.csv") if (p / n).exists()), None)
        return load_catalog(p / "concepts.csv", edges)
    if not p.exists():
        raise InvalidCatalog(f"catalog file not found: {p}")
    suffix = p.suffix.lower().lstrip(".")
    fmt = {"yml": "yaml"}.get(suffix, suffix)
    if fmt not in ("json", "yaml", "csv"):
        raise InvalidCatalog(f"{p.name}: unknown catalog extension {p.suffix!r}; use .json, .yaml or .csv")
    edges_bytes = Path(edges_path).read_bytes() if edges_path is not None else None
    return parse_catalog(
        p.read_bytes(),
        fmt,  # type: ignore[arg-type]
        edges_bytes,
        name=p.name,
        edges_name=Path(edges_path).name if edges_path is not None else None,
    )
