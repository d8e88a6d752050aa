"""Exception handlers: every error leaves the API in one shape, ``{"error": {"code", "message"}}``."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from neo4j import exceptions as neo4j_errors
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphmem.errors import GraphmemError, StoreUnavailable

from .metrics import Metrics

log = logging.getLogger("graphmem.api")


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def install(app: FastAPI, metrics: Metrics) -> None:
    """Registers the handlers on ``app``; store failures are counted in ``metrics``."""

    @app.exception_handler(GraphmemError)
    async def graphmem_error(request: Request, exc: GraphmemError) -> JSONResponse:
        headers = None
        if isinstance(exc, StoreUnavailable):
            metrics.neo4j_errors.inc()
            headers = {"Retry-After": "5"}
        return error_response(exc.status, exc.code, exc.message, headers)

    @app.exception_handler(neo4j_errors.DriverError)
    async def driver_error(request: Request, exc: neo4j_errors.DriverError) -> JSONResponse:
        metrics.neo4j_errors.inc()
        return error_response(
            503,
            "STORE_UNAVAILABLE",
            f"Neo4j is unreachable ({type(exc).__name__}); retry shortly",
            {"Retry-After": "5"},
        )

    @app.exception_handler(neo4j_errors.Neo4jError)
    async def neo4j_error(request: Request, exc: neo4j_errors.Neo4jError) -> JSONResponse:
        metrics.neo4j_errors.inc()
        if isinstance(exc, (neo4j_errors.TransientError, neo4j_errors.DatabaseUnavailable)):
            # Which transient failure (deadlock, lock timeout, memory) tells an operator what to tune.
            log.warning("Neo4j transient error answered 503: %s %s", exc.code, exc.message)
            return error_response(
                503, "STORE_UNAVAILABLE", "Neo4j is busy or unavailable; retry shortly", {"Retry-After": "5"}
            )
        log.exception("Neo4j error")
        return error_response(500, "STORE_ERROR", "the graph store failed; nothing was changed")

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request", "type": ""}
        if first.get("type") == "json_invalid":
            return error_response(400, "INVALID_JSON", "the body is not valid JSON (or not UTF-8)")
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "request"
        code = "INVALID_ROLE" if where.endswith("role") else "INVALID_INPUT"
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        return error_response(422, code, f"{where}: {first.get('msg')}{more}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:
            # FastAPI's own "error parsing the body": bytes that are not UTF-8 JSON.
            return error_response(400, "INVALID_BODY", "the body could not be decoded as UTF-8 JSON")
        codes = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "BODY_TOO_LARGE"}
        return error_response(exc.status_code, codes.get(exc.status_code, "HTTP_ERROR"), str(exc.detail))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "INTERNAL_ERROR", "an unexpected error occurred; it has been logged")
