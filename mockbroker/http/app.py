"""The HTTP control API: an aiohttp app over ``cluster.control`` (mockbroker/control/) that routes
the operations table, checks the bearer token and answers errors as JSON.

It runs on the broker's own event loop, on a port of its own (``mockbroker serve --admin-port``),
so every handler calls a ``Control`` method directly, as the pytest fixture does: there is one
model and this is one of its front ends (docs/http.md lists the endpoints). The OpenAPI 3
document at ``/openapi.json`` is built from the same table of operations that routes the
requests, and request parameters and bodies are checked against exactly those schemas, so the
document and the server cannot disagree (tests/sidecar/ runs schemathesis against it).

Errors are JSON, ``{"error": "...", "field": "..."}``: 400 for bad input (naming the field), 401
without the bearer token (when one is set), 404 for an unknown topic, group, broker or member,
408 when a wait runs out, 409 when the cluster's state refuses the change (a broker already
down, a clock that is not manual), 500 for our own bug (also recorded as a broker bug).

The package: schema.py (the JSON Schema subset and its validator), components.py (the named
schemas), calls.py (Op, Call, Reply), endpoints.py (the handlers), operations.py (the table),
openapi.py (the document), records.py (records as JSON), metrics.py (``/metrics``), console.py
(the web console's files at ``/ui``, ui/).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from mockbroker.control import Control, ControlError, NotFound, ProduceError, WaitTimeout
from mockbroker.http import console
from mockbroker.http.calls import Call, Op, Reply, parse_param
from mockbroker.http.components import check
from mockbroker.http.endpoints import Endpoints
from mockbroker.http.metrics import Metrics
from mockbroker.http.openapi import UNPROTECTED, document
from mockbroker.http.operations import operations
from mockbroker.http.schema import BadInput
from mockbroker.model import TopicError
from mockbroker_protocol.errors import ErrorCode

if TYPE_CHECKING:
    from mockbroker.cluster import MockCluster

log = logging.getLogger("mockbroker.admin")

DEFAULT_ADMIN_PORT = 8092  # the image's; `mockbroker serve` starts no admin API unless given a port
MAX_BODY_BYTES = 16 * 1024 * 1024
# The request line must hold every URL the document allows: a 1024-character group id of 4-byte
# UTF-8 characters is 12 KiB percent-encoded, and a query may add a client id as long (aiohttp's
# default of 8190 bytes answered those 400 in text/plain, before our own checks).
MAX_REQUEST_LINE = 64 * 1024

# Kafka's refusals of a schema-valid topic: 422 (the request is well-formed; Kafka's rules say no).
_TOPIC_ERRORS: dict[ErrorCode, tuple[int, str | None]] = {
    ErrorCode.TOPIC_ALREADY_EXISTS: (409, "body.name"),
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: (404, None),
    ErrorCode.INVALID_TOPIC_EXCEPTION: (422, "body.name"),
    ErrorCode.INVALID_PARTITIONS: (422, "body.partitions"),
    ErrorCode.INVALID_REPLICATION_FACTOR: (422, "body.replication_factor"),
    ErrorCode.INVALID_CONFIG: (422, "body.configs"),
}

RequestHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class AdminServer:
    """The HTTP control API of one cluster; ``start`` binds it on the cluster's running loop."""

    def __init__(self, cluster: MockCluster, *, token: str | None = None) -> None:
        self.cluster = cluster
        self.control: Control = cluster.control
        self.token = token or None
        self.ready = False  # /readyz: true from start() (the cluster already serves) until stop()
        self.host = ""
        self.port = 0
        self.metrics = Metrics(self.control)
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()
        self.endpoints = Endpoints(
            cluster, self.metrics, ready=lambda: self.ready, document=self.openapi, closing=self._closing
        )
        self.ops = operations(self.endpoints)

    # -- lifecycle -----------------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> AdminServer:
        _quiet_client_errors()
        await self.metrics.install()
        app = web.Application(middlewares=[self._errors, self._auth], client_max_size=MAX_BODY_BYTES)
        for op in self.ops:
            app.router.add_route(op.method, op.path, _endpoint(op), name=op.operation_id)
        console.add_routes(app)  # the web console at /ui (mockbroker/http/console.py)
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=1.0, max_line_size=MAX_REQUEST_LINE
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, reuse_address=True)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or ()  # asyncio's or uvloop's Server
        self.host, self.port = host, sockets[0].getsockname()[1] if sockets else port
        self.ready = True
        return self

    async def stop(self) -> None:
        self.ready = False
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.metrics.uninstall()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI document of this server's operations (mockbroker/http/openapi.py)."""
        return document(self.ops, self.token)

    # -- middlewares ---------------------------------------------------------------------------------

    @web.middleware
    async def _auth(self, request: web.Request, handler: RequestHandler) -> web.StreamResponse:
        # The console's files are public (they ship in the wheel); the calls they make are not.
        if self.token is not None and request.path not in UNPROTECTED and not console.is_console(request.path):
            given = request.headers.get("Authorization", "")
            scheme, _, credentials = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(credentials.strip().encode(), self.token.encode()):
                what = "a wrong bearer token" if given else "no bearer token"
                return web.json_response(
                    error_body(f"{what}: send Authorization: Bearer <token> (--admin-token)", "header.Authorization"),
                    status=401, headers={"WWW-Authenticate": 'Bearer realm="mockbroker"'},
                )  # fmt: skip
        return await handler(request)

    @web.middleware
    async def _errors(self, request: web.Request, handler: RequestHandler) -> web.StreamResponse:
        try:
            return await handler(request)
        except (BadInput, ControlError, TopicError) as exc:
            return _refused(exc)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return _http_error(request, exc)
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception as exc:  # our bug: fail loudly, as a broker bug does
            self.cluster.record_internal_error(exc)
            return web.json_response(error_body(f"internal error (a mockbroker bug): {exc!r}"), status=500)


def error_body(message: str, field: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"error": message}
    if field is not None:
        out["field"] = field
    out.update(extra)
    return out


def _refused(exc: BadInput | ControlError | TopicError) -> web.Response:
    """The client's bad input, or what the control model or Kafka's topic rules refused."""
    if isinstance(exc, BadInput):
        return web.json_response(error_body(exc.message, exc.field), status=exc.status)
    if isinstance(exc, NotFound):
        return web.json_response(error_body(str(exc)), status=404)
    if isinstance(exc, WaitTimeout):
        return web.json_response(error_body(str(exc)), status=408)
    if isinstance(exc, ProduceError):
        # Retriable codes are the cluster's state (no leader); the others refuse the records.
        status = 409 if exc.code.retriable else 422
        return web.json_response(error_body(str(exc), "body.records", kafka_error=exc.code.name), status=status)
    if isinstance(exc, ControlError):
        return web.json_response(error_body(str(exc)), status=409)
    status, where = _TOPIC_ERRORS.get(exc.code, (422, None))
    return web.json_response(error_body(exc.message, where, kafka_error=exc.code.name), status=status)


def _http_error(request: web.Request, exc: web.HTTPException) -> web.Response:
    """aiohttp's own 4xx (no route, a method not allowed, a body too large) as our JSON errors."""
    message = {404: f"no such endpoint: {request.method} {request.path} (see /openapi.json)"}.get(exc.status, exc.reason)
    if exc.status == 413:
        message = f"request body too large (at most {MAX_BODY_BYTES} bytes)"
    headers = {k: v for k, v in exc.headers.items() if k.lower() == "allow"}
    return web.json_response(error_body(message), status=exc.status, headers=headers)


# -- dispatch ----------------------------------------------------------------------------------------


def _endpoint(op: Op) -> RequestHandler:
    """The aiohttp handler of ``op``: parameters and body checked, the answer made JSON."""
    path_params = [p for p in op.params if p.where == "path"]
    query_params = {p.name: p for p in op.params if p.where == "query"}

    async def endpoint(request: web.Request) -> web.StreamResponse:
        path = {p.name: parse_param(p, request.match_info.get(p.name, "")) for p in path_params}
        query: dict[str, Any] = {}
        for name in request.query:
            if name not in query_params:
                allowed = ", ".join(query_params) or "none"
                raise BadInput(f"query.{name}", f"unknown query parameter (allowed: {allowed})")
            values = request.query.getall(name)
            if len(values) > 1:
                raise BadInput(f"query.{name}", "given more than once")
            query[name] = parse_param(query_params[name], values[0])
        for name, param in query_params.items():
            if param.required and name not in query:
                raise BadInput(f"query.{name}", "is required")
        body: dict[str, Any] = {}
        if op.body is not None:
            body = await _body(request, op)
        result = await op.handler(Call(request, path, query, body))
        if isinstance(result, web.StreamResponse):
            return result
        if isinstance(result, Reply):
            if result.body is None:
                return web.Response(status=result.status)
            return web.json_response(result.body, status=result.status, dumps=_dumps)
        return web.json_response(result, status=op.status, dumps=_dumps)

    endpoint.__name__ = op.operation_id
    return endpoint


async def _body(request: web.Request, op: Op) -> dict[str, Any]:
    raw = await request.read()
    if not raw.strip():
        if op.body_required:
            raise BadInput("body", "a JSON object is required")
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInput("body", f"not valid JSON: {exc}") from None
    assert op.body is not None
    result: dict[str, Any] = check(op.body, value, "body")
    return result


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return str(value)


# -- logging -------------------------------------------------------------------------------------------


class _ClientHttpErrors(logging.Filter):
    """aiohttp logs a malformed HTTP request (a NUL in a header, say) as an ERROR with a traceback,
    though it is the client's fault and answered 400: log one line at INFO instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            log.info("bad HTTP request answered %s: %s", exc.code, str(exc.message).strip().splitlines()[0])
            return False
        return True


def _quiet_client_errors() -> None:
    logger = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, _ClientHttpErrors) for f in logger.filters):
        logger.addFilter(_ClientHttpErrors())
