"""Request limits checked before any route runs, each answered in the error shape.

* the URL (path + query) is bounded: 414 ``URI_TOO_LONG``;
* the path must be valid UTF-8 once percent-decoded (Starlette decodes it with ``errors="replace"``,
  which made ``Ren%E9`` and ``Ren%FF`` the same user ``Ren\\ufffd``): 422 ``INVALID_USER_ID`` under
  ``/v1/users/``, else 400 ``INVALID_PATH``; a user id segment holding an encoded ``/`` (``%2F``) is a
  422 ``INVALID_USER_ID`` too (user ids cannot hold ``/``, see graphmem/ids.py);
* one ``Authorization`` header at most: 400 ``DUPLICATE_AUTHORIZATION`` (which key would win is up to
  each proxy on the way);
* the body is read here, up to the limit, and handed on whole: 413 ``BODY_TOO_LARGE`` with or without
  Content-Length, before the application parses a byte (raising from inside ``receive`` surfaced as an
  ExceptionGroup, i.e. a 500, or as FastAPI's 400 "error parsing the body").
"""

from __future__ import annotations

import re
from urllib.parse import unquote_to_bytes

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphmem.errors import GraphmemError

_USER_SEGMENT = re.compile(rb"^/v1/users/([^/]*)")


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


class RequestLimits:
    """ASGI middleware: the checks above, then the request with its body buffered."""

    def __init__(self, app: ASGIApp, max_body_bytes: int, max_url_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.max_url_bytes = max_url_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._check_head(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        body = bytearray()
        declared = next((v for k, v in scope.get("headers", []) if k == b"content-length"), None)
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._too_large()(scope, receive, send)
            return
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client went away: nobody to answer
            body += message.get("body", b"")
            if len(body) > self.max_body_bytes:
                await self._too_large()(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()  # after the body: wait for the disconnect, as a server would

        await self.app(scope, replay, send)

    def _too_large(self) -> JSONResponse:
        return _error(413, "BODY_TOO_LARGE", f"the request body is larger than {self.max_body_bytes} bytes")

    def _check_head(self, scope: Scope) -> JSONResponse | None:
        raw_path: bytes = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
        query: bytes = scope.get("query_string", b"")
        if len(raw_path) + len(query) > self.max_url_bytes:
            return _error(
                414,
                "URI_TOO_LONG",
                f"the URL is longer than {self.max_url_bytes} bytes; "
                "send long text (focus, prompt) in the body of POST /context",
            )
        try:
            unquote_to_bytes(raw_path).decode("utf-8")
        except UnicodeDecodeError:
            if raw_path.startswith(b"/v1/users/"):
                return _error(
                    422,
                    "INVALID_USER_ID",
                    "the user id in the path is not valid UTF-8 once percent-decoded; ids are UTF-8 text",
                )
            return _error(400, "INVALID_PATH", "the path is not valid UTF-8 once percent-decoded")
        segment = _USER_SEGMENT.match(raw_path)
        if segment and b"%2f" in segment.group(1).lower():
            return _error(
                422,
                "INVALID_USER_ID",
                "user ids cannot contain '/' (it would be a second path segment); pick ids without '/'",
            )
        authorizations = sum(1 for k, _ in scope.get("headers", []) if k == b"authorization")
        if authorizations > 1:
            return _error(
                400, "DUPLICATE_AUTHORIZATION", f"{authorizations} Authorization headers were sent; send exactly one"
            )
        return None


class UnsupportedMediaType(GraphmemError):
    code = "UNSUPPORTED_MEDIA_TYPE"
    status = 415


def require_json(request: Request) -> None:
    """Route dependency of JSON-body endpoints: 415 for any other (or no) content type."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json" and not (
        content_type.startswith("application/") and content_type.endswith("+json")
    ):
        shown = repr(content_type) if content_type else "none"
        raise UnsupportedMediaType(f"this endpoint takes a JSON body (content-type: application/json); got {shown}")
