"""The `graphmem` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .neo4j_server import LocalNeo4j, Neo4jServerError
from .settings import get_settings


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphmem", description="Graph memory for AI agents.")
    sub = parser.add_subparsers(dest="command", required=True)

    neo = sub.add_parser("neo4j", help="run the project's own Neo4j 5.26 server")
    neo.add_argument("action", choices=["start", "stop", "status", "build", "log"])
    neo.add_argument("--lines", type=int, default=40, help="log lines to show (log)")
    neo.set_defaults(func=_cmd_neo4j)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except Neo4jServerError as exc:
        print(f"graphmem: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
