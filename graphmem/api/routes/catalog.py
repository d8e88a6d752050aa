"""PUT and GET /v1/catalog: the tenant's concept catalog (JSON, YAML, CSV or a multipart upload)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from graphmem.errors import InvalidCatalog
from graphmem.extraction.catalog_io import Format as CatalogFormat
from graphmem.extraction.catalog_io import parse_catalog
from graphmem.models import Catalog

from ..consistency import writing
from ..deps import ERRORS, Memory, Tenant
from ..schemas import CatalogResponse, CatalogStored

router = APIRouter(tags=["catalog"])

_FORMATS: dict[str, CatalogFormat] = {
    "application/json": "json",
    "application/yaml": "yaml",
    "application/x-yaml": "yaml",
    "text/yaml": "yaml",
    "text/csv": "csv",
}
_BODY = {
    "required": True,
    "content": {
        "application/json": {"schema": {"type": "object"}},
        "application/yaml": {"schema": {"type": "string"}},
        "text/csv": {"schema": {"type": "string"}},
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {
                    "concepts": {"type": "string", "format": "binary"},
                    "edges": {"type": "string", "format": "binary"},
                },
            }
        },
    },
}


async def _read_catalog(request: Request) -> Catalog:
    content_type = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if content_type == "multipart/form-data":
        form = await request.form()
        concepts = form.get("concepts")
        edges = form.get("edges")
        if concepts is None or isinstance(concepts, str):
            raise InvalidCatalog("upload the concepts CSV as the form field `concepts`")
        concepts_bytes = await concepts.read()
        edges_bytes = await edges.read() if edges is not None and not isinstance(edges, str) else None
        # Parsing is CPU work on untrusted input: never on the event loop (every tenant waits on it).
        return await run_in_threadpool(parse_catalog, concepts_bytes, "csv", edges_csv=edges_bytes)
    fmt = _FORMATS.get(content_type)
    if fmt is None:
        raise InvalidCatalog(
            f"unsupported content type {content_type!r}; send JSON, YAML, CSV or a multipart upload",
            code="UNSUPPORTED_MEDIA_TYPE",
            status=415,
        )
    return await run_in_threadpool(parse_catalog, await request.body(), fmt)


@router.put(
    "/v1/catalog",
    response_model=CatalogStored,
    responses=ERRORS,
    summary="Replace the tenant's concept catalog",
    openapi_extra={"requestBody": _BODY},
)
async def put_catalog(request: Request, tenant: Tenant, mem: Memory, response: Response) -> dict[str, Any]:
    catalog = await _read_catalog(request)
    # The chain is set on this task's context; run_in_threadpool runs the write in a copy of it.
    with writing(mem, tenant, response.headers) as stamp:
        stored = await run_in_threadpool(mem.put_catalog, tenant, catalog)
    return stamp.on(stored)


@router.get("/v1/catalog", response_model=CatalogResponse, responses=ERRORS, summary="The tenant's catalog")
def get_catalog(tenant: Tenant, mem: Memory) -> dict[str, Any]:
    return mem.get_catalog(tenant)
