"""A typed Python client for graphmem's HTTP API: `GraphMemClient` (sync) and `AsyncGraphMemClient`.

    from graphmem.client import GraphMemClient
    mem = GraphMemClient("http://127.0.0.1:8000", api_key="...")
    mem.ingest("xiaoming", "week2", ["我已经学过Python基础了，现在想学Django框架。"])
    print(mem.context("xiaoming", focus="how do I deploy Django?").block)

Requests are built from the API's own pydantic models (`api.schemas`, `graphmem.models`), so a bad
argument fails here with the code the server would answer, before anything is sent. Every endpoint
the client calls is listed once in `ENDPOINTS`; tests/test_client.py checks that table against the
served openapi.json, so the client and the API cannot drift apart unnoticed.

A 503 (Neo4j unreachable, or the API still starting) and a refused connection are retried with
backoff, honouring `Retry-After`: that is safe because ingest is idempotent by turn id (turns sent
without an id get one derived from their content), and a 503 means nothing was written.
Every failure is raised as one exception type, `ApiError`, carrying the API's machine code.

Read-your-writes across API replicas (docs/deploy.md): every write answers with a consistency token;
the client keeps the last one per user (`TokenBook`) and sends it with that user's next context, graph
and explain calls, so behind a load balancer the replica that answers includes the write, whichever
replica took it. A tenant-level write (catalog, BKT fit) is newer than every user's token before it, so
it replaces them until that user writes again.
"""

from __future__ import annotations

import asyncio
import email.utils
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from graphmem.api.schemas import ContextRequest, IngestRequest
from graphmem.learner import AttemptIn, AttemptsRequest, KTFitRequest
from graphmem.models import Catalog, ContextResult, IngestResult, TurnIn
from graphmem.vocabulary import Format, Scope

__all__ = ["ApiError", "AsyncGraphMemClient", "Endpoint", "ENDPOINTS", "GraphMemClient", "TokenBook", "TurnLike"]

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
# Statuses after which a retry is safe: the server says nothing was done (see module docstring).
RETRY_STATUSES = frozenset({503})
# The header a write's consistency token comes back in (also the body's `consistency` field).
TOKEN_HEADER = "x-graphmem-consistency"

TurnLike = TurnIn | Mapping[str, Any] | str


class ApiError(Exception):
    """Any failure of a graphmem call: the API's machine code, its sentence and the HTTP status.

    `status` is 0 when no HTTP answer came (connection refused, timeout); `code` is then
    `CONNECTION_FAILED` or `TIMEOUT`. Input the client rejects before sending gets the code the
    server gives the same input (`INVALID_INPUT`, `INVALID_ROLE`) and status 422.
    """

    def __init__(self, code: str, message: str, status: int = 0, retry_after: float | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class Endpoint:
    """One API operation the client calls: what it sends and how it reads the answer."""

    method: Literal["GET", "POST", "PUT", "DELETE"]
    path: str
    query: tuple[str, ...] = ()
    body: type[BaseModel] | None = None
    response: type[BaseModel] | None = None  # None: a JSON object returned as a dict


# The single source of what the client sends; tests/test_client.py compares it with openapi.json.
ENDPOINTS: dict[str, Endpoint] = {
    "ingest": Endpoint("POST", "/v1/users/{user_id}/turns", body=IngestRequest, response=IngestResult),
    "context": Endpoint(
        "GET",
        "/v1/users/{user_id}/context",
        query=("focus", "scope", "max_tokens", "format", "evidence", "tag", "as_of", "consistency"),
        response=ContextResult,
    ),
    "context_with_prompt": Endpoint("POST", "/v1/users/{user_id}/context", body=ContextRequest, response=ContextResult),
    "graph": Endpoint("GET", "/v1/users/{user_id}/graph", query=("as_of", "consistency")),
    "explain": Endpoint("GET", "/v1/users/{user_id}/explain", query=("concept", "as_of", "consistency")),
    "compact": Endpoint("POST", "/v1/users/{user_id}/compact"),
    "forget": Endpoint("DELETE", "/v1/users/{user_id}/concepts/{concept}"),
    "erase": Endpoint("DELETE", "/v1/users/{user_id}"),
    "catalog": Endpoint("GET", "/v1/catalog"),
    "put_catalog": Endpoint("PUT", "/v1/catalog", body=Catalog),
    "ready": Endpoint("GET", "/readyz"),
    # The learner model (graphmem/api/routes/attempts.py).
    "record_attempts": Endpoint("POST", "/v1/users/{user_id}/attempts", body=AttemptsRequest),
    "attempts": Endpoint("GET", "/v1/users/{user_id}/attempts", query=("concept",)),
    "kt_fit": Endpoint("POST", "/v1/kt/fit", body=KTFitRequest),
    "kt_params": Endpoint("GET", "/v1/kt/params"),
}


# -- request building and answer reading, shared by both clients ------------------------------------


@dataclass(frozen=True)
class _Call:
    endpoint: Endpoint
    url: str
    params: dict[str, Any] | None = None
    json: Any = None
    user_id: str | None = None  # whose consistency token the call reads or leaves (None: tenant-level)


class TokenBook:
    """The last consistency token seen per user, and the tenant's (thread-safe; share it between clients
    of one API key, e.g. one per call, to keep read-your-writes across them)."""

    def __init__(self) -> None:
        self._users: dict[str, str] = {}
        self._tenant: str | None = None
        self._lock = threading.Lock()

    def get(self, user_id: str | None) -> str | None:
        with self._lock:
            return self._users.get(user_id, self._tenant) if user_id is not None else self._tenant

    def seen(self, user_id: str | None, token: str) -> None:
        with self._lock:
            if user_id is None:
                # One database per tenant: a later write's bookmark covers every earlier one.
                self._tenant = token
                self._users.clear()
            else:
                self._users[user_id] = token

    def attach(self, call: _Call) -> _Call:
        """The call with the user's token, when it is a read that takes one and none is set."""
        token = self.get(call.user_id)
        if token is None:
            return call
        if "consistency" in call.endpoint.query and not (call.params or {}).get("consistency"):
            return replace(call, params={**(call.params or {}), "consistency": token})
        if call.endpoint.body is ContextRequest and isinstance(call.json, dict) and not call.json.get("consistency"):
            return replace(call, json={**call.json, "consistency": token})
        return call

    def note(self, call: _Call, response: httpx.Response) -> None:
        token = response.headers.get(TOKEN_HEADER)
        if token and response.status_code < 400:
            self.seen(call.user_id, token)


def invalid_input(exc: ValidationError) -> ApiError:
    """A pydantic error in the words of the API's validation handler (graphmem/api/app.py)."""
    errors = exc.errors()
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "request"
    code = "INVALID_ROLE" if where.endswith("role") else "INVALID_INPUT"
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return ApiError(code, f"{where}: {first.get('msg')}{more}", 422)


def _turn(value: TurnLike) -> TurnIn:
    if isinstance(value, TurnIn):
        return value
    if isinstance(value, str):
        return TurnIn(text=value)
    return TurnIn.model_validate(dict(value))


def _path(endpoint: Endpoint, **values: str) -> str:
    # Ids may hold '/', '?', '#': each path value is one percent-encoded segment.
    return endpoint.path.format(**{k: quote(v, safe="") for k, v in values.items()})


def _validated(model: type[BaseModel], data: Any) -> BaseModel:
    try:
        return data if isinstance(data, model) else model.model_validate(data)
    except ValidationError as exc:
        raise invalid_input(exc) from None


# An ingest's `context`: True for the block with the server's defaults, else the options of `context()`
# (a ContextRequest, or a mapping with its field names: focus, scope, max_tokens, format, evidence, tag, prompt).
ContextLike = bool | ContextRequest | Mapping[str, Any] | None


def build_ingest(
    user_id: str, session_id: str, turns: Sequence[TurnLike] | TurnLike, context: ContextLike = None
) -> _Call:
    ep = ENDPOINTS["ingest"]
    if isinstance(turns, (str, TurnIn, Mapping)):
        turns = [turns]  # one turn, not a sequence of characters or keys
    wanted: ContextRequest | None = None
    if context is True:
        wanted = ContextRequest()
    elif context is not None and context is not False:
        wanted = _validated(ContextRequest, context if isinstance(context, ContextRequest) else dict(context))  # type: ignore[assignment]
    try:
        body = IngestRequest(session_id=session_id, turns=[_turn(t) for t in turns], context=wanted)
    except ValidationError as exc:
        raise invalid_input(exc) from None
    return _Call(ep, _path(ep, user_id=user_id), json=body.model_dump(mode="json", exclude_none=True), user_id=user_id)


def build_context(
    user_id: str,
    *,
    focus: str | None,
    scope: Scope | str | None,
    max_tokens: int | None,
    format: Format | str | None,
    evidence: bool,
    tag: str | None,
    prompt: str | None,
    as_of: datetime | str | None = None,
) -> _Call:
    req = _validated(
        ContextRequest,
        {
            "focus": focus,
            "scope": scope,
            "max_tokens": max_tokens,
            "format": format,
            "evidence": evidence,
            "tag": tag,
            "prompt": prompt,
            "as_of": as_of,
        },
    )
    if prompt is not None:
        # Loop detection needs the prompt, which can be long: sent as a body, not a query string.
        ep = ENDPOINTS["context_with_prompt"]
        return _Call(
            ep, _path(ep, user_id=user_id), json=req.model_dump(mode="json", exclude_none=True), user_id=user_id
        )
    ep = ENDPOINTS["context"]
    params = {k: v for k, v in req.model_dump(mode="json", exclude={"prompt"}).items() if v is not None}
    params["evidence"] = "true" if evidence else "false"
    return _Call(ep, _path(ep, user_id=user_id), params=params, user_id=user_id)


def build(name: str, **values: str) -> _Call:
    """A call whose only inputs are path values and the query parameters the endpoint names."""
    ep = ENDPOINTS[name]
    params = {k: values.pop(k) for k in ep.query if k in values}
    return _Call(ep, _path(ep, **values), params=params or None, user_id=values.get("user_id"))


def _as_of(value: datetime | str | None) -> dict[str, str]:
    """The ``as_of`` query parameter, only when given."""
    if value is None:
        return {}
    return {"as_of": value.isoformat() if isinstance(value, datetime) else str(value)}


def build_attempts(user_id: str, attempts: Sequence[AttemptIn | Mapping[str, Any]]) -> _Call:
    ep = ENDPOINTS["record_attempts"]
    body = _validated(AttemptsRequest, {"attempts": [a if isinstance(a, AttemptIn) else dict(a) for a in attempts]})
    return _Call(ep, _path(ep, user_id=user_id), json=body.model_dump(mode="json", exclude_none=True), user_id=user_id)


def build_kt_fit(options: Mapping[str, Any]) -> _Call:
    ep = ENDPOINTS["kt_fit"]
    body = _validated(KTFitRequest, dict(options))
    return _Call(ep, ep.path, json=body.model_dump(mode="json", exclude_none=True))


def build_put_catalog(catalog: Catalog | Mapping[str, Any]) -> _Call:
    ep = ENDPOINTS["put_catalog"]
    body = _validated(Catalog, catalog)
    return _Call(ep, ep.path, json=body.model_dump(mode="json", exclude_none=True))


def retry_after_seconds(response: httpx.Response) -> float | None:
    """`Retry-After` as seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def error_from(response: httpx.Response) -> ApiError:
    try:
        body = response.json()
        err = body["error"]
        code, message = str(err["code"]), str(err["message"])
    except (ValueError, KeyError, TypeError):
        code = f"HTTP_{response.status_code}"
        message = response.text[:500] or response.reason_phrase
    return ApiError(code, message, response.status_code, retry_after_seconds(response))


def read(call: _Call, response: httpx.Response) -> Any:
    if response.status_code >= 400:
        raise error_from(response)
    try:
        data = response.json()
    except ValueError:
        raise ApiError(
            "INVALID_RESPONSE",
            f"the API answered {call.endpoint.method} {call.url} with non-JSON",
            response.status_code,
        ) from None
    model = call.endpoint.response
    if model is None:
        return data
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ApiError(
            "INVALID_RESPONSE", f"the API's answer does not match {model.__name__}: {exc}", response.status_code
        ) from None


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait. Waits grow as backoff × 2^attempt unless the server names one."""

    max_retries: int = 3
    backoff: float = 0.5
    max_wait: float = 30.0

    def wait(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_wait)
        return min(self.backoff * (2**attempt), self.max_wait)


_CONNECT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout)  # nothing reached the server: safe to resend


def _transport_error(exc: httpx.HTTPError) -> ApiError:
    code = "TIMEOUT" if isinstance(exc, httpx.TimeoutException) else "CONNECTION_FAILED"
    return ApiError(code, f"{type(exc).__name__}: {exc}", 0)


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json", "User-Agent": "graphmem-client/0.1"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


# -- the clients ------------------------------------------------------------------------------------


class GraphMemClient:
    """Synchronous client. Use as a context manager, or call `close()`.

    `api_key` is sent as `Authorization: Bearer <key>` (it decides the tenant). `http` is an httpx client
    to use (and not close) instead of a new one, e.g. one shared by clients of several keys. `sleep` is
    what waits between retries (tests record the waits instead of sleeping them).
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_wait: float = 30.0,
        http: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        tokens: TokenBook | None = None,
    ) -> None:
        self.retry = RetryPolicy(max_retries, backoff, max_wait)
        self._own_http = http is None
        # A given `http` client may be shared by clients with different keys: the key goes with each request.
        self.http = http or httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout)
        self._headers = _headers(api_key)
        self._sleep = sleep
        # Consistency tokens of this key's writes (see the module docstring).
        self.tokens = tokens if tokens is not None else TokenBook()

    def __enter__(self) -> GraphMemClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._own_http:
            self.http.close()

    def _send(self, call: _Call) -> Any:
        call = self.tokens.attach(call)
        attempt = 0
        while True:
            try:
                response = self.http.request(
                    call.endpoint.method, call.url, params=call.params, json=call.json, headers=self._headers
                )
            except _CONNECT_ERRORS as exc:
                if attempt >= self.retry.max_retries:
                    raise _transport_error(exc) from exc
                self._sleep(self.retry.wait(attempt, None))
                attempt += 1
                continue
            except httpx.HTTPError as exc:
                raise _transport_error(exc) from exc
            if response.status_code in RETRY_STATUSES and attempt < self.retry.max_retries:
                self._sleep(self.retry.wait(attempt, retry_after_seconds(response)))
                attempt += 1
                continue
            self.tokens.note(call, response)
            return read(call, response)

    def ingest(
        self, user_id: str, session_id: str, turns: Sequence[TurnLike] | TurnLike, *, context: ContextLike = None
    ) -> IngestResult:
        """Stores turns (a str is a user turn; one turn needs no list). Re-sending a turn id changes nothing.
        ``context``: True, or the options of :meth:`context` as a dict: the result's ``context`` is then the
        block a context call right after would return (the agent loop in one call)."""
        return self._send(build_ingest(user_id, session_id, turns, context))

    def context(
        self,
        user_id: str,
        *,
        focus: str | None = None,
        scope: Scope | str | None = None,
        max_tokens: int | None = None,
        format: Format | str | None = None,
        evidence: bool = False,
        tag: str | None = None,
        prompt: str | None = None,
        as_of: datetime | str | None = None,
    ) -> ContextResult:
        """The block for the next model call; with `prompt`, refused if the prompt already holds one;
        with `as_of`, as the user model stood then."""
        return self._send(
            build_context(
                user_id,
                focus=focus,
                scope=scope,
                max_tokens=max_tokens,
                format=format,
                evidence=evidence,
                tag=tag,
                prompt=prompt,
                as_of=as_of,
            )
        )

    def graph(self, user_id: str, as_of: datetime | str | None = None) -> dict[str, Any]:
        return self._send(build("graph", user_id=user_id, **_as_of(as_of)))

    def explain(self, user_id: str, concept: str, as_of: datetime | str | None = None) -> dict[str, Any]:
        return self._send(build("explain", user_id=user_id, concept=concept, **_as_of(as_of)))

    def record_attempts(self, user_id: str, attempts: Sequence[AttemptIn | Mapping[str, Any]]) -> dict[str, Any]:
        """Graded attempts (idempotent by attempt_id); per attempt `predicted` (before) and `mastery` (after)."""
        return self._send(build_attempts(user_id, attempts))

    def attempts(self, user_id: str, concept: str) -> dict[str, Any]:
        return self._send(build("attempts", user_id=user_id, concept=concept))

    def kt_fit(self, **options: Any) -> dict[str, Any]:
        """Fits BKT per concept from the tenant's attempts (options: concepts, forgets, num_fits, min_attempts, seed)."""
        return self._send(build_kt_fit(options))

    def kt_params(self) -> dict[str, Any]:
        return self._send(build("kt_params"))

    def compact(self, user_id: str) -> dict[str, Any]:
        return self._send(build("compact", user_id=user_id))

    def forget(self, user_id: str, concept: str) -> dict[str, Any]:
        return self._send(build("forget", user_id=user_id, concept=concept))

    def erase(self, user_id: str) -> dict[str, Any]:
        return self._send(build("erase", user_id=user_id))

    def catalog(self) -> dict[str, Any]:
        return self._send(build("catalog"))

    def put_catalog(self, catalog: Catalog | Mapping[str, Any]) -> dict[str, Any]:
        return self._send(build_put_catalog(catalog))

    def ready(self) -> bool:
        """Neo4j reachable, schema applied, pipelines loaded. Asked once: a 503 here is an answer."""
        try:
            return self.http.get(ENDPOINTS["ready"].path, headers=self._headers).status_code == 200
        except httpx.HTTPError:
            return False


class AsyncGraphMemClient:
    """The same calls as `GraphMemClient`, awaitable. Use `async with`, or `await aclose()`."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_wait: float = 30.0,
        http: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        tokens: TokenBook | None = None,
    ) -> None:
        self.retry = RetryPolicy(max_retries, backoff, max_wait)
        self._own_http = http is None
        self.http = http or httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=timeout)
        self._headers = _headers(api_key)
        self._sleep = sleep
        self.tokens = tokens if tokens is not None else TokenBook()

    async def __aenter__(self) -> AsyncGraphMemClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._own_http:
            await self.http.aclose()

    async def _send(self, call: _Call) -> Any:
        call = self.tokens.attach(call)
        attempt = 0
        while True:
            try:
                response = await self.http.request(
                    call.endpoint.method, call.url, params=call.params, json=call.json, headers=self._headers
                )
            except _CONNECT_ERRORS as exc:
                if attempt >= self.retry.max_retries:
                    raise _transport_error(exc) from exc
                await self._sleep(self.retry.wait(attempt, None))
                attempt += 1
                continue
            except httpx.HTTPError as exc:
                raise _transport_error(exc) from exc
            if response.status_code in RETRY_STATUSES and attempt < self.retry.max_retries:
                await self._sleep(self.retry.wait(attempt, retry_after_seconds(response)))
                attempt += 1
                continue
            self.tokens.note(call, response)
            return read(call, response)

    async def ingest(
        self, user_id: str, session_id: str, turns: Sequence[TurnLike] | TurnLike, *, context: ContextLike = None
    ) -> IngestResult:
        return await self._send(build_ingest(user_id, session_id, turns, context))

    async def context(
        self,
        user_id: str,
        *,
        focus: str | None = None,
        scope: Scope | str | None = None,
        max_tokens: int | None = None,
        format: Format | str | None = None,
        evidence: bool = False,
        tag: str | None = None,
        prompt: str | None = None,
        as_of: datetime | str | None = None,
    ) -> ContextResult:
        return await self._send(
            build_context(
                user_id,
                focus=focus,
                scope=scope,
                max_tokens=max_tokens,
                format=format,
                evidence=evidence,
                tag=tag,
                prompt=prompt,
                as_of=as_of,
            )
        )

    async def graph(self, user_id: str, as_of: datetime | str | None = None) -> dict[str, Any]:
        return await self._send(build("graph", user_id=user_id, **_as_of(as_of)))

    async def explain(self, user_id: str, concept: str, as_of: datetime | str | None = None) -> dict[str, Any]:
        return await self._send(build("explain", user_id=user_id, concept=concept, **_as_of(as_of)))

    async def record_attempts(self, user_id: str, attempts: Sequence[AttemptIn | Mapping[str, Any]]) -> dict[str, Any]:
        return await self._send(build_attempts(user_id, attempts))

    async def attempts(self, user_id: str, concept: str) -> dict[str, Any]:
        return await self._send(build("attempts", user_id=user_id, concept=concept))

    async def kt_fit(self, **options: Any) -> dict[str, Any]:
        return await self._send(build_kt_fit(options))

    async def kt_params(self) -> dict[str, Any]:
        return await self._send(build("kt_params"))

    async def compact(self, user_id: str) -> dict[str, Any]:
        return await self._send(build("compact", user_id=user_id))

    async def forget(self, user_id: str, concept: str) -> dict[str, Any]:
        return await self._send(build("forget", user_id=user_id, concept=concept))

    async def erase(self, user_id: str) -> dict[str, Any]:
        return await self._send(build("erase", user_id=user_id))

    async def catalog(self) -> dict[str, Any]:
        return await self._send(build("catalog"))

    async def put_catalog(self, catalog: Catalog | Mapping[str, Any]) -> dict[str, Any]:
        return await self._send(build_put_catalog(catalog))

    async def ready(self) -> bool:
        try:
            return (await self.http.get(ENDPOINTS["ready"].path, headers=self._headers)).status_code == 200
        except httpx.HTTPError:
            return False
