"""Grows the scale benchmark's tenant to 100k users in minutes: Neo4j's own bulk importer on copies of real users.

    python -m bench.scale_import --users 100000              # from the users the scale Neo4j holds now
    python -m bench.scale_import --users 100000 --smoke 1000 # plus a 1k-user tenant in the same database

Why: the transactional loader (:meth:`Neo4jStore.bulk_load_users`, ``make bench-scale``) writes 4–8 users/s on
this 2-core machine (py-spy: 40 % of its time packing datetimes in the driver, Neo4j's CPU for the rest), so
100k users would take 3–6 hours. ``neo4j-admin database import full`` writes the same graph from CSV files in
minutes; it is part of the Neo4j 5.26 the project assembles (neo4j-import-tool is on the launcher's classpath).

How, so that the imported graph is the one graphmem itself wrote:

1. **Export** every node and relationship of the scale database (``--source-users`` users that the
   transactional loader and the API wrote, the tenant's catalog, compaction runs, migrations) over Bolt.
2. **Classify**: an entity carrying a ``user_id`` (or a User node, or an entity attached to one) belongs to that
   user; everything else (catalog concepts, the tenant, open-vocabulary concepts, migrations) is shared.
3. **Copy** each user's entities ``users / source-users`` times; copy *c* of user *i* is user
   ``scale-{c·N + i:07d}``: every string that named ``scale-{i:07d}`` (ids, turn ids, owners) names the copy.
   Shared concept nodes are not copied, so they become as dense as in a real tenant of that size (every catalog
   concept is linked to ~1/8 of all users). ``--smoke K`` adds a second tenant, ``bench-scale-smoke``: the first
   K users and the shared nodes again under that tenant name, for the alternated small-vs-big comparison.
4. **Import**: typed CSV headers from the exported values; the server is stopped, the database is replaced
   (``--overwrite-destination``), the server started again, and graphmem's schema (constraints, range and
   full-text indexes) is applied and populated before anything is measured.

Copies share their text with the originals (the generator's turns are templated anyway): the per-request
cost depends on graph shape and sizes, which copies keep; document-frequency statistics see each concept
used 100x more often, as in a larger real tenant.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import neo4j
from neo4j.time import DateTime

from graphmem.neo4j_server import LocalNeo4j
from graphmem.service import GraphMemory

from . import fixtures
from .common import log

TENANT = "bench-scale"
SMOKE = "bench-scale-smoke"
USER_RE = re.compile(r"scale-(\d{7})")
# Private-use characters stand for the parts a copy changes: no stored text holds them.
U_MARK, C_MARK, T_MARK, EMPTY_MARK = "\ue000", "\ue001", "\ue002", "\ue003"
ARRAY_DELIM = "\u001f"


def _csv_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, DateTime):
        return "datetime"
    if isinstance(value, list):
        inner = {_csv_type(v) for v in value}
        if not inner:
            return None  # empty: typed by another entity's value
        if inner == {"long", "double"}:
            inner = {"double"}
        if len(inner) != 1:
            raise ValueError(f"mixed list {value[:5]!r}")
        return f"{inner.pop()}[]"
    raise ValueError(f"no CSV type for {type(value).__name__}: {value!r}"[:200])


def _merge_type(a: str | None, b: str | None) -> str | None:
    if a is None or a == b:
        return b if a is None else a
    if b is None:
        return a
    if {a, b} == {"long", "double"}:
        return "double"
    if {a, b} == {"long[]", "double[]"}:
        return "double[]"
    raise ValueError(f"conflicting types {a} / {b}")


def _cell(value: Any, typ: str) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        if not value:  # an unquoted empty cell is "no property"; a quoted one is an empty array
            return EMPTY_MARK
        return ARRAY_DELIM.join(_cell(v, typ[:-2]) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, DateTime):
        return str(value.iso_format())
    if typ == "double":
        return repr(float(value))
    return str(value)


class Entity:
    __slots__ = ("eid", "labels_or_type", "props", "owner", "tenant", "start", "end")

    def __init__(self, eid: str, lt: str, props: dict[str, Any], start: str = "", end: str = "") -> None:
        self.eid, self.labels_or_type, self.props, self.start, self.end = eid, lt, props, start, end
        self.owner: int | None = None
        tenant = props.get("id") if lt == "Tenant" else props.get("tenant")
        self.tenant: str | None = tenant if isinstance(tenant, str) else None


def _owner_of(labels_or_type: str, props: dict[str, Any]) -> int | None:
    uid = props.get("user_id")
    if uid is None and labels_or_type == "User":
        uid = props.get("id")
    if isinstance(uid, str):
        m = USER_RE.fullmatch(uid)
        if m:
            return int(m.group(1))
    return None


# A user's entities carry user_id (a User node its id); zero-padded ids compare as their numbers.
_OWNER = "coalesce({v}.user_id, CASE WHEN {v}:User THEN {v}.id END, '')"


def export(driver: neo4j.Driver, database: str, source_users: int) -> tuple[list[Entity], list[Entity]]:
    """Every node and relationship except those of users numbered ``source_users`` and above."""
    limit = f"scale-{source_users:07d}"
    nodes: list[Entity] = []
    rels: list[Entity] = []
    with driver.session(database=database) as s:
        # The server's 120 s transaction timeout is too short for a whole-database read: raised for this one.
        q_nodes = neo4j.Query(
            f"MATCH (n) WHERE {_OWNER.format(v='n')} < $limit "
            "RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props",
            timeout=3600,
        )
        for rec in s.run(q_nodes, limit=limit):
            lt = ":".join(sorted(rec["labels"]))
            e = Entity(rec["id"], lt, dict(rec["props"]))
            if e.tenant == SMOKE:  # an earlier import's small tenant: written again from the big one
                continue
            e.owner = _owner_of(lt, e.props)
            nodes.append(e)
        kept = {n.eid for n in nodes}
        q = neo4j.Query(
            f"MATCH (a)-[r]->(b) WHERE {_OWNER.format(v='a')} < $limit AND {_OWNER.format(v='b')} < $limit "
            "AND coalesce(r.user_id, '') < $limit "
            "RETURN elementId(r) AS id, type(r) AS type, properties(r) AS props, elementId(a) AS a, elementId(b) AS b",
            timeout=3600,
        )
        for rec in s.run(q, limit=limit):
            if rec["a"] not in kept or rec["b"] not in kept:
                continue
            e = Entity(rec["id"], rec["type"], dict(rec["props"]), rec["a"], rec["b"])
            e.owner = _owner_of(rec["type"], e.props)
            rels.append(e)
    return nodes, rels


def classify(nodes: list[Entity], rels: list[Entity]) -> None:
    """Gives an owner to entities attached to a user's node (a Turn's EXPRESSES, a Session's HAS_TURN, ...):
    ownership flows along relationships until nothing changes."""
    by_id = {n.eid: n for n in nodes}
    changed = True
    while changed:
        changed = False
        for r in rels:
            a, b = by_id[r.start], by_id[r.end]
            owners = {o for o in (r.owner, a.owner, b.owner) if o is not None}
            if len(owners) > 1:
                raise ValueError(f"{r.labels_or_type} links users {sorted(owners)}")
            if not owners:
                continue
            o = owners.pop()
            if r.owner is None:
                r.owner, changed = o, True
            # A user's node is one without a tenant-level identity: Turn, Session, Interest, Summary, ...
            for n in (a, b):
                if n.owner is None and n.labels_or_type not in ("Concept", "Tenant") and "user_id" in n.props:
                    n.owner, changed = o, True


class Writer:
    """One CSV file per node label set / relationship type; header types from every value seen."""

    def __init__(self, own_ids: set[str]) -> None:
        # Ids of users' nodes that do not name the user (compaction run ids): unique per copy by a suffix.
        self.own_ids = own_ids
        self.node_types: dict[str, dict[str, str | None]] = defaultdict(dict)
        self.rel_types: dict[str, dict[str, str | None]] = defaultdict(dict)

    def scan(self, nodes: Iterable[Entity], rels: Iterable[Entity]) -> None:
        for table, items in ((self.node_types, nodes), (self.rel_types, rels)):
            for e in items:
                cols = table[e.labels_or_type]
                for k, v in e.props.items():
                    cols[k] = _merge_type(cols.get(k), _csv_type(v))

    def columns(self, table: dict[str, dict[str, str | None]], key: str) -> list[tuple[str, str]]:
        return [(k, t or "string[]") for k, t in sorted(table[key].items())]

    def template(self, e: Entity, cols: list[tuple[str, str]], node: bool, id_of: dict[str, Entity]) -> str:
        """The entity's CSV line with markers where a copy differs (user index, copy number, tenant)."""
        user_s = f"scale-{e.owner:07d}" if e.owner is not None else None

        def sub(v: Any) -> Any:
            if isinstance(v, str):
                if v == TENANT:
                    return T_MARK
                if v in self.own_ids:
                    return f"{v}~{T_MARK}{U_MARK}"
                return v.replace(user_s, "scale-" + U_MARK) if user_s else v
            if isinstance(v, list):
                return [sub(x) for x in v]
            return v

        def ref(eid: str) -> str:
            n = id_of[eid]
            return eid + ("#" + C_MARK if n.owner is not None else "") + ("@" + T_MARK if n.tenant else "")

        ids = [ref(e.eid)] if node else [ref(e.start), ref(e.end)]
        row = ids + [_cell(sub(e.props.get(k)), t) for k, t in cols]
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(row)
        return buf.getvalue().replace(EMPTY_MARK, '""')


def write_csvs(
    nodes: list[Entity], rels: list[Entity], out: Path, source_users: int, users: int, smoke: int
) -> tuple[list[str], dict[str, int]]:
    """Writes the files; returns the importer's --nodes/--relationships arguments and row counts."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    own_ids = {
        n.props["id"]
        for n in nodes
        if n.owner is not None and isinstance(n.props.get("id"), str) and not USER_RE.search(n.props["id"])
    }
    w = Writer(own_ids)
    w.scan(nodes, rels)
    id_of = {n.eid: n for n in nodes}
    copies = -(-users // source_users)
    args: list[str] = []
    counts: dict[str, int] = defaultdict(int)
    t0 = time.perf_counter()

    def emit(kind: str, key: str, items: list[Entity], table: dict[str, dict[str, str | None]]) -> None:
        cols = w.columns(table, key)
        fname = out / f"{kind}_{re.sub(r'[^A-Za-z_]', '_', key)}.csv"
        head = [":ID"] if kind == "nodes" else [":START_ID", ":END_ID"]
        header = ",".join(head + [f"{k}:{t}" for k, t in cols]) + "\n"
        fname.with_suffix(".key").write_text(key)
        with fname.open("w", encoding="utf-8") as f:
            f.write(header)
            for e in items:
                line = w.template(e, cols, kind == "nodes", id_of)
                if e.owner is None:
                    # Shared: once, and once more under the small tenant's name if it is the big tenant's.
                    tenants = [TENANT, SMOKE] if e.tenant == TENANT and smoke else [e.tenant or ""]
                    for tenant in tenants:
                        f.write(line.replace(T_MARK, tenant))
                        counts[key] += 1
                    continue
                if e.owner >= source_users:
                    continue
                for c in range(copies):
                    new = c * source_users + e.owner
                    if new >= users:
                        break
                    f.write(line.replace(U_MARK, f"{new:07d}").replace(C_MARK, str(c)).replace(T_MARK, TENANT))
                    counts[key] += 1
                if smoke and e.owner < smoke:
                    f.write(line.replace(U_MARK, f"{e.owner:07d}").replace(C_MARK, "s").replace(T_MARK, SMOKE))
                    counts[key] += 1
        flag = "--nodes" if kind == "nodes" else "--relationships"
        args.append(f"{flag}={key}={fname}")
        log(f"  {fname.name}: {counts[key]:,} rows ({time.perf_counter() - t0:.0f} s)")

    by_label: dict[str, list[Entity]] = defaultdict(list)
    for n in nodes:
        by_label[n.labels_or_type].append(n)
    by_type: dict[str, list[Entity]] = defaultdict(list)
    for r in rels:
        by_type[r.labels_or_type].append(r)
    for key, items in sorted(by_label.items()):
        emit("nodes", key, items, w.node_types)
    for key, items in sorted(by_type.items()):
        emit("rels", key, items, w.rel_types)
    return args, dict(counts)


def run_import(server: LocalNeo4j, args: list[str], database: str) -> float:
    classpath = os.pathsep.join(map(str, server.build()))
    java = server.java().java
    home = server.home
    (home / "conf").mkdir(parents=True, exist_ok=True)
    conf = home / "conf" / "import.conf"
    conf.write_text(
        f"server.directories.data={home / 'data'}\n"
        f"server.directories.transaction.logs.root={home / 'data' / 'transactions'}\n"
    )
    cmd = [
        str(java),
        "-Xmx2g",
        "-cp",
        classpath,
        "org.neo4j.cli.AdminTool",
        "database",
        "import",
        "full",
        database,  # first: the file-list options take every following argument
        f"--additional-config={conf}",
        "--overwrite-destination=true",
        f"--array-delimiter=U+{ord(ARRAY_DELIM):04X}",
        "--multiline-fields=true",
        "--threads=2",
        "--verbose",
        *args,
    ]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env={**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(home / "conf")})
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=100_000)
    ap.add_argument("--source-users", type=int, default=2000, help="users copied (scale-0000000 …)")
    ap.add_argument("--smoke", type=int, default=1000, help="users of the bench-scale-smoke tenant (0: none)")
    ap.add_argument("--csv-dir", type=Path, default=None, help="where the CSV files go (default: under the home)")
    ap.add_argument("--keep-csv", action="store_true")
    ap.add_argument("--reuse-csv", action="store_true", help="import the files a --keep-csv run left (no export)")
    args = ap.parse_args(argv)
    settings = fixtures.bench_settings()
    server = LocalNeo4j(settings)
    uri = settings.neo4j_uri or f"bolt://127.0.0.1:{settings.neo4j_bolt_port}"
    driver = neo4j.GraphDatabase.driver(uri, auth=(settings.neo4j_user, settings.neo4j_password))
    csv_dir = args.csv_dir or server.home / "import-csv"
    if args.reuse_csv:
        import_args = [
            f"--{'nodes' if f.name.startswith('nodes_') else 'relationships'}={_import_key(f)}={f}"
            for f in sorted(csv_dir.glob("*.csv"))
        ]
        return _import_and_index(server, settings, uri, import_args, csv_dir, keep=True)
    try:
        t0 = time.perf_counter()
        nodes, rels = export(driver, settings.neo4j_database, args.source_users)
        classify(nodes, rels)
        owners = {n.owner for n in nodes if n.owner is not None}
        source_users = max(owners) + 1
        if len(owners) != source_users or source_users != args.source_users:
            raise SystemExit(f"users scale-0000000..{source_users - 1:07d} are not all there ({len(owners)})")
        log(
            f"exported {len(nodes):,} nodes, {len(rels):,} relationships of {source_users} users "
            f"({time.perf_counter() - t0:.0f} s)"
        )
    finally:
        driver.close()
    t1 = time.perf_counter()
    import_args, counts = write_csvs(nodes, rels, csv_dir, source_users, args.users, args.smoke)
    log(f"CSV written in {time.perf_counter() - t1:.0f} s: {sum(counts.values()):,} rows")
    del nodes, rels
    return _import_and_index(server, settings, uri, import_args, csv_dir, keep=args.keep_csv)


def _import_key(f: Path) -> str:
    """The label set or relationship type a CSV file holds (written beside it as NAME.key)."""
    return (f.with_suffix(".key")).read_text().strip()


def _import_and_index(
    server: LocalNeo4j, settings: Any, uri: str, import_args: list[str], csv_dir: Path, keep: bool
) -> int:
    server.stop()
    seconds = run_import(server, import_args, settings.neo4j_database)
    log(f"neo4j-admin import: {seconds:.0f} s")
    if not keep:
        shutil.rmtree(csv_dir)
    server.start()
    t2 = time.perf_counter()
    mem = GraphMemory(settings)
    mem.start()  # applies graphmem's schema (constraints, indexes) to the imported database
    mem.close()
    driver = neo4j.GraphDatabase.driver(uri, auth=(settings.neo4j_user, settings.neo4j_password))
    try:
        with driver.session(database=settings.neo4j_database) as s:
            s.run("CALL db.awaitIndexes(7200)").consume()
            n = s.run("MATCH (:Tenant {id: $t})-[:HAS_USER]->(u) RETURN count(u) AS n", t=TENANT).single()
    finally:
        driver.close()
    log(f"tenant {TENANT}: {n['n'] if n else 0:,} users")
    log(f"schema applied and indexes online in {time.perf_counter() - t2:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
