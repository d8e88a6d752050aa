"""The `graphmem` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import GraphmemError
from .neo4j_server import LocalNeo4j, Neo4jServerError
from .settings import get_settings
from .vocabulary import Format, Scope

if TYPE_CHECKING:
    from .service import GraphMemory


def _print_json(obj: Any) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2, default=str))


def _memory() -> GraphMemory:
    from .service import GraphMemory

    settings = get_settings()
    LocalNeo4j(settings).start()
    memory = GraphMemory(settings)
    memory.start()
    return memory


# -- neo4j ---------------------------------------------------------------------------


def _cmd_neo4j(args: argparse.Namespace) -> int:
    server = LocalNeo4j(get_settings())
    if args.action == "start":
        print(server.start().describe())
    elif args.action == "stop":
        server.stop()
    elif args.action == "status":
        status = server.status()
        print(status.describe())
        return 0 if status.running else 3
    elif args.action == "build":
        server.build()
    elif args.action == "log":
        print(server.log_tail(args.lines))
    return 0


# -- service ------------------------------------------------------------------------------


def _cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from graphmem.api.app import create_app
    from graphmem.api.http_protocol import JsonErrorHttpProtocol  # the parser's own 400s in the error shape

    settings = get_settings()
    LocalNeo4j(settings).start()
    host, port = args.host or settings.host, args.port or settings.port
    workers = args.workers or settings.workers
    if workers > 1:
        # Each worker process builds its own app from the same GRAPHMEM_* environment. Their caches are
        # per process and keyed by graph and catalog versions, so a write in one is seen by the others.
        uvicorn.run(
            "graphmem.api.app:create_app",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level="info",
            http=JsonErrorHttpProtocol,
        )
    else:
        uvicorn.run(create_app(settings), host=host, port=port, log_level="info", http=JsonErrorHttpProtocol)
    return 0


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise GraphmemError(
                        f"{path}:{number}: not valid JSON ({exc.msg})", code="INVALID_JSONL", status=400
                    ) from None


def _cmd_ingest(args: argparse.Namespace) -> int:
    from .models import TurnIn

    memory = _memory()
    path = Path(args.file)
    rows = list(_read_jsonl(path))
    total, accepted, duplicates = len(rows), 0, 0
    batch: list[TurnIn] = []
    key: tuple[str, str] | None = None

    def flush() -> None:
        nonlocal accepted, duplicates, batch
        if batch and key:
            result = memory.ingest(args.tenant, key[0], key[1], batch)
            accepted += len(result.accepted)
            duplicates += len(result.duplicates)
        batch = []

    done = 0
    for number, row in rows:
        try:
            user_id, session_id = str(row.pop("user_id")), str(row.pop("session_id"))
            turn = TurnIn.model_validate(row)
        except (KeyError, ValueError) as exc:
            raise GraphmemError(
                f"{path}:{number}: a turn needs user_id, session_id, role and text ({exc})",
                code="INVALID_JSONL",
                status=400,
            ) from None
        if key != (user_id, session_id) or len(batch) >= args.batch_size:
            flush()
            key = (user_id, session_id)
        batch.append(turn)
        done += 1
        if done % 50 == 0 or done == total:
            print(f"\ringesting {done}/{total} turns", end="", file=sys.stderr, flush=True)
    flush()
    print(file=sys.stderr)
    # Re-running the same file is safe: stored turn ids are skipped (that is what makes it resumable).
    print(f"{accepted} turns stored, {duplicates} already stored (skipped)")
    return 0


def _cmd_context(args: argparse.Namespace) -> int:
    memory = _memory()
    result = memory.context(
        args.tenant,
        args.user,
        focus=args.focus,
        scope=args.scope,
        max_tokens=args.max_tokens,
        fmt=args.format,
        evidence=args.evidence,
    )
    if args.json:
        _print_json(result.to_dict())
    else:
        print(result.block)
    return 0


def _cmd_explain(args: argparse.Namespace) -> int:
    _print_json(_memory().explain(args.tenant, args.user, args.concept))
    return 0


def _cmd_compact(args: argparse.Namespace) -> int:
    memory = _memory()
    users = memory.store.list_users(args.tenant, limit=100_000) if args.all else [args.user]
    if not users or users == [None]:
        raise GraphmemError("name a USER or pass --all", code="INVALID_INPUT", status=400)
    for user in users:
        run = memory.compact(args.tenant, user)
        print(
            f"{user}: {run['concepts_before']} -> {run['concepts_after']} concepts, "
            f"{run['compacted']} compacted, ratio {run.get('ratio')}"
            + (f"  WARNING: {run['warning']}" if run.get("warning") else "")
        )
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    from .extraction.catalog_io import load_catalog

    memory = _memory()
    if args.action == "load":
        if not args.file:
            raise GraphmemError("catalog load needs a FILE", code="INVALID_INPUT", status=400)
        catalog = load_catalog(args.file, args.edges)
        _print_json(memory.put_catalog(args.tenant, catalog))
    else:
        _print_json(memory.get_catalog(args.tenant))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    _print_json(_memory().export(args.tenant, args.user))
    return 0


def _cmd_erase(args: argparse.Namespace) -> int:
    _print_json(_memory().erase(args.tenant, args.user))
    return 0


def _cmd_kt(args: argparse.Namespace) -> int:
    from .learner import KTFitRequest
    from .service import GraphMemory

    # Fitting needs Neo4j and pyBKT, not the spaCy pipelines: no warm-up.
    settings = get_settings()
    LocalNeo4j(settings).start()
    memory = GraphMemory(settings)
    memory.store.apply_schema()
    try:
        if args.action == "fit":
            req = KTFitRequest(
                concepts=args.concept or None,
                forgets=args.forgets,
                num_fits=args.num_fits,
                min_attempts=args.min_attempts,
                seed=args.seed,
            )
            _print_json(memory.learner.fit(args.tenant, req))
        else:
            _print_json(memory.learner.params(args.tenant))
    finally:
        memory.close()
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(serve=args.serve, host=args.host, port=args.port)


def _cmd_mcp(args: argparse.Namespace) -> int:
    from .mcp_server import serve

    settings = get_settings()
    serve(
        settings,
        tenant=args.tenant,
        api_url=args.api or settings.api_url,
        api_key=args.api_key or settings.api_key,
        http=args.http,
        host=args.host or settings.mcp_host,
        port=args.port or settings.mcp_port,
    )
    return 0


def _cmd_explore(args: argparse.Namespace) -> int:
    # Pure text: needs no server, so it works before `graphmem neo4j start` too.
    from .cypher import load_library
    from .explore import render_explore
    from .guide import CONNECT_RESULT_NODES_OFF, load_grass, style_command

    library = load_library(get_settings().cypher_dir)
    print("// Once per Browser: hide relations other users stated, and apply the graphmem style.")
    print("// Paste each line into the Browser's editor and press Enter.")
    print(CONNECT_RESULT_NODES_OFF)
    print(style_command(load_grass(library)))
    print()
    print(
        render_explore(
            library, args.tenant, args.user, focus=args.focus, concept=args.concept, min_users=args.min_users
        ),
        end="",
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    settings = get_settings()
    parser = argparse.ArgumentParser(prog="graphmem", description="Graph memory for AI agents.")
    sub = parser.add_subparsers(dest="command", required=True)

    def with_tenant(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--tenant", default=settings.default_tenant, help="tenant id (default: %(default)s)")
        return p

    neo = sub.add_parser("neo4j", help="run the project's own Neo4j 5.26 server")
    neo.add_argument("action", choices=["start", "stop", "status", "build", "log"])
    neo.add_argument("--lines", type=int, default=40, help="log lines to show (log)")
    neo.set_defaults(func=_cmd_neo4j)

    serve = sub.add_parser("serve", help="serve the HTTP API (starts Neo4j unless NEO4J_URI is set)")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument(
        "--workers",
        type=int,
        default=None,
        help="API worker processes (default GRAPHMEM_WORKERS, 1); English ingestion scales with cores",
    )
    serve.set_defaults(func=_cmd_serve)

    ingest = with_tenant(sub.add_parser("ingest", help="ingest turns from a JSONL file (resumable by turn id)"))
    ingest.add_argument("file", help="one turn per line: {user_id, session_id, turn_id?, role, text, ts?}")
    ingest.add_argument("--batch-size", type=int, default=64)
    ingest.set_defaults(func=_cmd_ingest)

    ctx = with_tenant(sub.add_parser("context", help="print a user's context block"))
    ctx.add_argument("user")
    ctx.add_argument("--focus", default=None, help="the current question")
    ctx.add_argument(
        "--scope", type=Scope, default=None, choices=list(Scope), help="default: GRAPHMEM_DEFAULT_SCOPE (learning)"
    )
    ctx.add_argument("--max-tokens", type=int, default=None)
    ctx.add_argument(
        "--format", type=Format, default=None, choices=list(Format), help="default: GRAPHMEM_DEFAULT_FORMAT (xml)"
    )
    ctx.add_argument("--evidence", action="store_true", help="add the supporting turn ids per item")
    ctx.add_argument("--json", action="store_true", help="print the whole response as JSON")
    ctx.set_defaults(func=_cmd_context)

    explain = with_tenant(sub.add_parser("explain", help="explain one concept of a user's graph"))
    explain.add_argument("user")
    explain.add_argument("concept")
    explain.set_defaults(func=_cmd_explain)

    compact = with_tenant(sub.add_parser("compact", help="run compaction for a user or all users"))
    compact.add_argument("user", nargs="?")
    compact.add_argument("--all", action="store_true")
    compact.set_defaults(func=_cmd_compact)

    catalog = with_tenant(sub.add_parser("catalog", help="load or show the tenant's concept catalog"))
    catalog.add_argument("action", choices=["load", "show"])
    catalog.add_argument("file", nargs="?", help="JSON, YAML or CSV (concepts)")
    catalog.add_argument("--edges", default=None, help="CSV of relations (with a concepts CSV)")
    catalog.set_defaults(func=_cmd_catalog)

    export = with_tenant(sub.add_parser("export", help="export everything about a user as JSON"))
    export.add_argument("user")
    export.set_defaults(func=_cmd_export)

    erase = with_tenant(sub.add_parser("erase", help="erase everything about a user"))
    erase.add_argument("user")
    erase.set_defaults(func=_cmd_erase)

    explore = with_tenant(
        sub.add_parser("explore", help="print the saved Neo4j Browser queries for a user, parameters filled in")
    )
    explore.add_argument("user")
    explore.add_argument("--focus", default=None, help="concept (name, alias or key) whose gaps to show")
    explore.add_argument("--concept", default=None, help="concept to trace back to its turns (default: --focus)")
    explore.add_argument("--min-users", type=int, default=1, help="shared interests: hide concepts with fewer users")
    explore.set_defaults(func=_cmd_explore)

    kt = with_tenant(
        sub.add_parser("kt", help="knowledge tracing: fit BKT parameters per concept (pyBKT), or show them")
    )
    kt.add_argument("action", choices=["fit", "params"])
    kt.add_argument("--concept", action="append", help="fit only this concept (name, alias or key); repeatable")
    kt.add_argument("--forgets", action="store_true", help="fit BKT with forgetting")
    kt.add_argument("--num-fits", type=int, default=None, help="EM restarts per concept")
    kt.add_argument("--min-attempts", type=int, default=None, help="skip concepts with fewer attempts")
    kt.add_argument("--seed", type=int, default=0)
    kt.set_defaults(func=_cmd_kt)

    mcp = with_tenant(
        sub.add_parser(
            "mcp",
            help="serve graphmem to MCP hosts (stdio by default, streamable HTTP with --http)",
            description="In-process by default (loads spaCy and connects to Neo4j itself); --api URL talks to a "
            "running graphmem API instead. Over stdio the tenant is --tenant (or --api-key's tenant); "
            "over HTTP each caller's bearer key decides it, as in the REST API.",
        )
    )
    mcp.add_argument("--http", action="store_true", help="streamable HTTP on --host/--port, path /mcp")
    mcp.add_argument("--host", default=None, help="HTTP host (default GRAPHMEM_MCP_HOST, 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=None, help="HTTP port (default GRAPHMEM_MCP_PORT, 8001)")
    mcp.add_argument(
        "--api",
        default=None,
        metavar="URL",
        help="use a running graphmem API instead of graphmem in-process (default GRAPHMEM_API_URL)",
    )
    mcp.add_argument(
        "--api-key", default=None, help="with --api over stdio: the key to send (default GRAPHMEM_API_KEY)"
    )
    mcp.set_defaults(func=_cmd_mcp)

    demo = sub.add_parser("demo", help="start Neo4j and the API, load the demo learners, print their blocks")
    demo.add_argument("--serve", action="store_true", help="keep serving after the demo")
    demo.add_argument("--host", default=settings.host)
    demo.add_argument("--port", type=int, default=settings.port)
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except Neo4jServerError as exc:
        print(f"graphmem: {exc}", file=sys.stderr)
        return 2
    except GraphmemError as exc:
        print(f"graphmem: {exc.code}: {exc.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
