"""Shared fixtures. Integration tests use the real Neo4j server the project starts.

`graphmem neo4j start` (or `make test`) starts it; when NEO4J_URI is set the
tests use that server instead. A missing server is a failure, not a skip.

Missing shared evaluation data or Chromium is a visible skip on a developer's clone and a failure in CI
(tests/requires.py). Every test whose fixtures reach the server is marked ``neo4j`` and every test that
reads the shared data ``shared_data`` at collection, so ``-m "not neo4j"`` never starts Neo4j through a
fixture (autouse ones included).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphmem.settings import PROJECT_ROOT, Settings
from tests.requires import REQUIRE_SHARED_DATA, missing

# The reliability tests send turns dated 2031 (tests/reliability.py FUTURE: recency decay exactly 1, so blocks
# are bit-identical over time); the default clock-skew allowance (300 s) would refuse them as TS_IN_FUTURE.
os.environ.setdefault("GRAPHMEM_MAX_CLOCK_SKEW_S", str(10 * 365 * 86_400))

SHARED_DATA = Path(os.environ.get("GRAPHMEM_SHARED_DATA", PROJECT_ROOT.parent / "shared" / "data"))


@pytest.hookimpl(tryfirst=True)  # before pytest's own -m deselection reads the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        # fixturenames is the closure: fixtures of fixtures and autouse fixtures count too.
        names = set(getattr(item, "fixturenames", ()))
        if "neo4j_server" in names:
            item.add_marker(pytest.mark.neo4j)
        if "shared_data" in names:
            item.add_marker(pytest.mark.shared_data)


@pytest.fixture(scope="session")
def settings() -> Settings:
    # The suite pins the re-rank inside the request: many assertions read stored weights and tiers
    # right after an ingest. The background re-rank (the default) is tested in test_rerank_background.py.
    # In-process apps leave the test process's garbage collector alone (gc_freeze and gc_young_threshold are the
    # API's start-up).
    return Settings(rerank_in_background=False, gc_freeze=False, gc_young_threshold=0)


@pytest.fixture(scope="session")
def neo4j_server(settings: Settings):
    """Makes sure the project's Neo4j is up (harmless when it already runs)."""
    from graphmem.neo4j_server import LocalNeo4j

    server = LocalNeo4j(settings)
    if not settings.neo4j_uri:
        server.start()
    return server


@pytest.fixture(scope="session")
def store(settings: Settings, neo4j_server) -> Iterator[Neo4jStore]:  # noqa: F821
    from graphmem.store import Neo4jStore

    st = Neo4jStore(settings)
    if not st.ping():
        pytest.fail(
            f"Neo4j is not reachable at {settings.neo4j_uri or 'bolt://127.0.0.1:7687'}; "
            "start it with `graphmem neo4j start`"
        )
    st.apply_schema()
    yield st
    st.close()


@pytest.fixture
def tenant() -> str:
    """A tenant of its own per test, so tests never see each other's data."""
    return "test-" + uuid.uuid4().hex[:10]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared evaluation data (read at run time, never copied into the repo)."""
    if not SHARED_DATA.is_dir():
        missing(f"shared evaluation data not found at {SHARED_DATA} (set GRAPHMEM_SHARED_DATA)", REQUIRE_SHARED_DATA)
    return SHARED_DATA


@dataclass(frozen=True)
class ApiTenants:
    key_a: str
    tenant_a: str
    key_b: str
    tenant_b: str
    key_demo: str
    tenant_demo: str


@pytest.fixture(scope="session")
def api_tenants() -> ApiTenants:
    run = uuid.uuid4().hex[:8]
    return ApiTenants(f"key-a-{run}", f"api-a-{run}", f"key-b-{run}", f"api-b-{run}", f"key-demo-{run}", f"demo-{run}")


@pytest.fixture(scope="session")
def api(settings: Settings, store, api_tenants: ApiTenants):
    """The real HTTP API (uvicorn on loopback) over the real Neo4j, with two tenants' keys."""
    from tests.http_server import start_api

    api_settings = settings.model_copy(
        update={
            "api_keys": f"{api_tenants.key_a}:{api_tenants.tenant_a},{api_tenants.key_b}:{api_tenants.tenant_b},"
            f"{api_tenants.key_demo}:{api_tenants.tenant_demo}",
        }
    )
    running = start_api(api_settings)
    yield running
    running.stop()


@pytest.fixture
def user_id() -> str:
    return "u-" + uuid.uuid4().hex[:10]


@pytest.fixture(scope="session")
def real_demo_tenant(api, api_tenants: ApiTenants, store) -> Iterator[str]:
    """The real demo (demo/catalog.yaml + demo/learners.json) loaded through the real HTTP API."""
    from graphmem.demo import load_demo
    from tests.demo_like import drop_tenant

    with api.client(api_tenants.key_demo) as client:
        load_demo(client)
    yield api_tenants.tenant_demo
    drop_tenant(store, api_tenants.tenant_demo)
