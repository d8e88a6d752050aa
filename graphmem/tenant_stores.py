"""Tenants on their own Neo4j database or server: one :class:`Neo4jStore` per target, picked per call.

``Settings.tenant_databases`` / ``tenant_uris`` map a tenant to a database (of the default server) and/or
another server. :func:`open_store` builds a plain :class:`Neo4jStore` when both maps are empty, else a
:class:`TenantRoutedStore`: one store (one driver per URI, shared by that URI's databases) per distinct
target, and every store call goes to the target of its tenant. Every user-level store method takes a
:class:`UserRef` or a tenant first (the isolation rule of graphmem/store.py), so the router reads the
tenant from the first argument and needs no change in the store's methods.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from neo4j import Driver

from .graph_store import GraphStore
from .settings import Settings
from .store import Neo4jStore, UserRef

Target = tuple[str, str]  # (bolt or neo4j URI, database)


def default_uri(settings: Settings) -> str:
    return settings.neo4j_uri or f"bolt://127.0.0.1:{settings.neo4j_bolt_port}"


def tenant_target(settings: Settings, tenant: str) -> Target:
    return (
        settings.tenant_uris.get(tenant, default_uri(settings)),
        settings.tenant_databases.get(tenant, settings.neo4j_database),
    )


def open_store(settings: Settings) -> GraphStore:
    """The store for these settings: routed per tenant only when a tenant map is set."""
    if not settings.tenant_databases and not settings.tenant_uris:
        return Neo4jStore(settings)
    # Satisfies GraphStore through __getattr__, which mypy does not follow.
    return cast(GraphStore, TenantRoutedStore(settings))


def _tenant_of(args: Sequence[Any], kwargs: dict[str, Any]) -> str | None:
    first = args[0] if args else kwargs.get("user", kwargs.get("tenant"))
    if isinstance(first, UserRef):
        return first.tenant
    return first if isinstance(first, str) else None


class TenantRoutedStore:
    """A GraphStore over several Neo4j targets; the default target serves every unmapped tenant."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        drivers: dict[str, Driver] = {}
        self.stores: dict[Target, Neo4jStore] = {}
        targets = {tenant_target(settings, t) for t in {*settings.tenant_databases, *settings.tenant_uris}}
        self.default_target: Target = (default_uri(settings), settings.neo4j_database)
        for uri, database in sorted({self.default_target, *targets}):
            store = Neo4jStore(
                settings.model_copy(update={"neo4j_uri": uri, "neo4j_database": database}), drivers.get(uri)
            )
            drivers.setdefault(uri, store._driver)
            self.stores[(uri, database)] = store
        self.default = self.stores[self.default_target]

    def store_for(self, tenant: str) -> Neo4jStore:
        return self.stores[tenant_target(self.settings, tenant)]

    # -- calls without a tenant: every target, or the default one ----------------------------

    def close(self) -> None:
        closed: set[int] = set()
        for store in self.stores.values():
            if id(store._driver) not in closed:  # databases of one server share its driver
                closed.add(id(store._driver))
                store.close()

    def ping(self) -> bool:
        answers = [store.ping() for store in self.stores.values()]  # each one, so each notes its state
        return all(answers)

    def apply_schema(self) -> list[str]:
        """The schema and migrations on every target; the default target's constraint names."""
        for target, store in self.stores.items():
            if target != self.default_target:
                store.apply_schema()
        return self.default.apply_schema()

    def schema_state(self) -> dict[str, list[dict[str, Any]]]:
        return self.default.schema_state()

    def read_statement(self, name: str, **params: Any) -> list[dict[str, Any]]:
        tenant = params.get("tenant")
        store = self.store_for(tenant) if isinstance(tenant, str) else self.default
        return store.read_statement(name, **params)

    @property
    def unreachable(self) -> bool:
        return any(store.unreachable for store in self.stores.values())

    # -- everything else: the target of the tenant in the first argument ---------------------

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.default, name)
        if name.startswith("_") or not callable(attr):
            return attr  # plumbing and plain attributes (cypher library, settings): the default target's

        def routed(*args: Any, **kwargs: Any) -> Any:
            tenant = _tenant_of(args, kwargs)
            if tenant is None:
                raise TypeError(f"store method {name!r} was called without a tenant or user first")
            method: Callable[..., Any] = getattr(self.store_for(tenant), name)
            return method(*args, **kwargs)

        return routed
