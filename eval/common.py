"""Shared helpers of the quality protocols: data location, a GraphMemory, own tenants.

Every protocol writes into tenants of its own, named ``eval-<protocol>-<run id>``,
and removes exactly those tenants when it ends (``EvalTenant``), so runs never
see each other's data and never touch anyone else's.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from graphmem.service import GraphMemory  # noqa: E402
from graphmem.settings import Settings  # noqa: E402

TENANT_PREFIX = "eval-"


def shared_data_dir() -> Path:
    """../shared/data relative to the repo root, or $GRAPHMEM_SHARED_DATA."""
    env = os.environ.get("GRAPHMEM_SHARED_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    missing = [d for d in ("metacademy", "bridge", "kdconv") if not (path / d).is_dir()]
    if missing:
        raise FileNotFoundError(
            f"shared evaluation data not found at {path} (missing {', '.join(missing)}); "
            "set GRAPHMEM_SHARED_DATA to the folder holding metacademy/, bridge/ and kdconv/"
        )
    return path


def make_memory(**overrides: object) -> GraphMemory:
    """A started GraphMemory over the configured Neo4j; `overrides` replace settings fields."""
    settings = Settings()
    if overrides:
        settings = settings.model_copy(update=overrides)
    mem = GraphMemory(settings)
    mem.start()
    return mem


def new_tenant(protocol: str) -> str:
    return f"{TENANT_PREFIX}{protocol}-{uuid.uuid4().hex[:10]}"


def drop_tenant(mem: GraphMemory, tenant: str) -> None:
    """Deletes everything of one of this harness's own tenants (refuses any other id)."""
    if not re.fullmatch(re.escape(TENANT_PREFIX) + r"[a-z0-9]+-[0-9a-f]{10}", tenant):
        raise ValueError(f"refusing to drop {tenant!r}: not an evaluation tenant")
    store = mem.store
    with store._driver.session(database=store.database) as session:
        while True:
            # A managed write: a deadlock with a re-rank still writing is re-run, not raised (it failed
            # a fresh-clone CI run as an auto-commit statement).
            deleted = session.execute_write(
                lambda tx: tx.run(
                    "MATCH (n) WHERE n.tenant = $tenant OR (n:Tenant AND n.id = $tenant) "
                    "WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS c",
                    tenant=tenant,
                ).single()["c"]
            )
            if not deleted:
                break


@contextmanager
def eval_tenant(mem: GraphMemory, protocol: str, keep: bool = False) -> Iterator[str]:
    """A fresh tenant for one protocol run, dropped afterwards unless `keep`."""
    tenant = new_tenant(protocol)
    try:
        yield tenant
    finally:
        if not keep:
            drop_tenant(mem, tenant)


def prf(tp: int, n_pred: int, n_gold: int) -> tuple[float, float, float]:
    p = tp / n_pred if n_pred else (1.0 if not n_gold else 0.0)
    r = tp / n_gold if n_gold else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def r4(x: float) -> float:
    return round(float(x), 4)


def protocol_cli(run: Callable[[bool, int | None], Any], size_option: str = "--limit") -> None:
    """`python -m eval.<protocol> [--quick] [<size_option> N]`: one protocol on its own."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the deterministic subset of `make eval-quick`")
    ap.add_argument(size_option, type=int, dest="size", help="how much of the data to feed")
    args = ap.parse_args()
    run(args.quick, args.size)
