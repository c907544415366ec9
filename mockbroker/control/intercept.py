"""The one low-level control hook: interceptors on the request path, and the request log.

``MockCluster.control.intercept(api_key, fn, broker=None, keep=False)`` registers ``fn``; every
request of that API (every API for ``None``) served by that broker (any broker for ``None``)
is shown to ``fn`` as an ``Intercepted`` (decoded request, header, broker, client, clock) after
decoding and the version check, before its handler runs. ``fn`` (a plain function or a
coroutine function) answers with one of:

- ``None``: only observe; the request goes on.
- ``Respond(response)``: answer with this response object; the handler does not run.
- ``Delay(ms)``: wait ``ms`` wall-clock milliseconds, then go on (the connection waits, as a
  slow broker's would).
- ``After(edit)``: run the handler, then ``edit(response)`` (return a replacement, or None to
  keep the edited object).
- ``DROP``: never answer (the client's request times out; the connection stays open).
- ``CLOSE``: close the connection without answering.

Interceptors run in registration order; ``Delay`` and ``After`` accumulate and the next
interceptor is asked, ``Respond``/``DROP``/``CLOSE`` end the chain. One-shot interceptors
(``keep=False``) are removed the first time they match, whatever they answer.

Pushed errors (mockbroker/control/faults.py) are taken after the interceptors, at the point where
the handler would be called (the whole-request fault point) and in the per-partition handlers.

Cost when unused: dispatch reads one bool (``cluster.intercepting``), true only while an
interceptor is registered, the request log is on or a pushed error waits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import itertools
import types
import typing
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockbroker.control.faults import ErrorQueues
from mockbroker.control.names import api_key_of as api_key_of  # public here (docs/control.md)
from mockbroker.control.names import error_code_of as error_code_of
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.registry import APIS

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.dispatch.table import Handler
    from mockbroker.state import ClusterState

DEFAULT_REQUEST_LOG_CAPACITY = 100_000


# -- what an interceptor may answer ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Respond:
    """Answer with ``response`` (the API's response object); the handler does not run."""

    response: Any


@dataclass(frozen=True, slots=True)
class Delay:
    """Hold the request ``ms`` wall-clock milliseconds, then go on."""

    ms: float


@dataclass(frozen=True, slots=True)
class After:
    """Let the handler answer, then ``edit(response)``: return a replacement or None (edited in place)."""

    edit: Callable[[Any], Any]


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


class _Close:
    def __repr__(self) -> str:
        return "CLOSE"


DROP: Any = _Drop()
CLOSE: Any = _Close()

Action = Respond | Delay | After | _Drop | _Close | None
InterceptFn = Callable[["Intercepted"], "Action | Awaitable[Action]"]


@dataclass(slots=True)
class Intercepted:
    """One request as an interceptor sees it. ``request`` is the decoded request object and may
    be edited in place before the handler runs."""

    ctx: RequestContext
    request: Any

    @property
    def api_key(self) -> ApiKey:
        return ApiKey(self.ctx.header.request_api_key)

    @property
    def api_name(self) -> str:
        return APIS[self.api_key].name

    @property
    def api_version(self) -> int:
        return self.ctx.api_version

    @property
    def broker_id(self) -> int:
        return self.ctx.broker.node_id

    @property
    def client_id(self) -> str:
        return self.ctx.client_id

    @property
    def correlation_id(self) -> int:
        return self.ctx.header.correlation_id

    @property
    def now_ms(self) -> int:
        return self.ctx.now_ms


@dataclass(eq=False, slots=True)
class Interceptor:
    """A registered interceptor; ``remove()`` unregisters it (idempotent)."""

    api_key: ApiKey | None
    fn: InterceptFn
    broker: int | None
    keep: bool
    hooks: RequestHooks
    calls: int = 0
    name: str = ""

    def matches(self, api_key: int, broker_id: int) -> bool:
        return (self.api_key is None or self.api_key == api_key) and (self.broker is None or self.broker == broker_id)

    def remove(self) -> None:
        self.hooks.remove(self)

    @property
    def active(self) -> bool:
        return self in self.hooks.interceptors


# -- the request log ---------------------------------------------------------------------------


@dataclass(slots=True)
class RequestRecord:
    """One request as the broker saw it. ``outcome`` is "pending" until answered, then
    "answered", "intercepted" (an interceptor's Respond), "dropped", "closed" or "failed" (a
    broker bug). ``error_codes`` are the distinct non-zero error codes anywhere in the response."""

    seq: int
    time_ms: int
    broker_id: int
    api_key: ApiKey
    api_name: str
    api_version: int
    client_id: str
    correlation_id: int
    client_host: str
    client_port: int
    request: Any = field(repr=False, default=None)
    outcome: str = "pending"
    error_codes: tuple[int, ...] = ()

    @property
    def errors(self) -> tuple[str, ...]:
        """The error codes by Kafka name ("NOT_COORDINATOR")."""
        return tuple(_error_name(c) for c in self.error_codes)

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "time_ms": self.time_ms,
            "broker_id": self.broker_id,
            "api_key": self.api_key,
            "api": self.api_name,
            "api_version": self.api_version,
            "client_id": self.client_id,
            "correlation_id": self.correlation_id,
            "client": f"{self.client_host}:{self.client_port}",
            "outcome": self.outcome,
            "errors": list(self.errors),
        }


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def error_codes(response: Any) -> tuple[int, ...]:
    """The distinct non-zero error codes anywhere in a response object, in order: every field named
    ``error_code`` or ending so (``partition_error_code`` of AddPartitionsToTxn v0-3,
    ``topic_config_error_code`` of CreateTopics).

    The one error-code walker: the request log and the HTTP API's metrics both count with it.
    Each response class gets a plan, worked out once from its type hints: the fields that are an
    error code, or that may hold one (one nested message, or a list of them), in field order, so
    a walk reads only the fields that matter (asking ``dataclasses.fields()`` of every object
    made a served Metadata round trip ~1.6x slower with the metrics on)."""
    seen: dict[int, None] = {}
    _walk(response, seen)
    return tuple(seen)


_ERROR, _ONE, _LIST = 0, 1, 2
_Plan = tuple[tuple[str, int], ...] | None  # None: the hints do not resolve; walk every field
_PLANS: dict[type, _Plan] = {}


def _walk(obj: Any, seen: dict[int, None]) -> None:
    cls = type(obj)
    plan = _PLANS[cls] if cls in _PLANS else _plan(cls)
    if plan is None:
        _walk_fields(obj, seen)
        return
    for name, kind in plan:
        value = getattr(obj, name)
        if kind == _ERROR:
            if value:
                seen[int(value)] = None
        elif value is None:
            continue
        elif kind == _LIST:
            for item in value:
                _walk(item, seen)
        else:
            _walk(value, seen)


def _walk_fields(obj: Any, seen: dict[int, None]) -> None:
    """Every field of a dataclass whose hints do not resolve (always right, only slower)."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.name.endswith("error_code"):
            if value:
                seen[int(value)] = None
        elif isinstance(value, list):
            for item in value:
                if dataclasses.is_dataclass(item):
                    _walk(item, seen)
        elif dataclasses.is_dataclass(value):
            _walk(value, seen)


def _plan(cls: type, busy: frozenset[type] = frozenset()) -> _Plan:
    if cls in _PLANS:
        return _PLANS[cls]
    if not dataclasses.is_dataclass(cls):
        return ()
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # unresolvable hints: the field-by-field walk
        _PLANS[cls] = None
        return None
    steps: list[tuple[str, int]] = []
    for f in dataclasses.fields(cls):
        if f.name.endswith("error_code"):
            steps.append((f.name, _ERROR))
            continue
        kind = _nested_kind(hints[f.name], busy | {cls})
        if kind is not None:
            steps.append((f.name, kind))
    plan: _Plan = tuple(steps)
    _PLANS[cls] = plan
    return plan


def _nested_kind(hint: Any, busy: frozenset[type]) -> int | None:
    """_ONE or _LIST when a field of this type may hold an error code, else None."""
    is_list = typing.get_origin(hint) is list
    inner = typing.get_args(hint)[0] if is_list else hint
    candidates = typing.get_args(inner) if typing.get_origin(inner) in (typing.Union, types.UnionType) else (inner,)
    for item in candidates:
        if isinstance(item, type) and dataclasses.is_dataclass(item) and item not in busy:
            sub = _plan(item, busy)
            if sub is None or sub:
                return _LIST if is_list else _ONE
    return None


class RequestLog:
    """The last ``capacity`` requests, in arrival order; off until ``enable()`` (the pytest
    fixture turns it on; a served broker pays nothing for it)."""

    def __init__(self, capacity: int = DEFAULT_REQUEST_LOG_CAPACITY) -> None:
        self.enabled = False
        self._records: deque[RequestRecord] = deque(maxlen=capacity)
        self._seq = itertools.count(1)

    def start(self, ctx: RequestContext, request: Any) -> RequestRecord:
        header = ctx.header
        record = RequestRecord(
            seq=next(self._seq),
            time_ms=ctx.now_ms,
            broker_id=ctx.broker.node_id,
            api_key=ApiKey(header.request_api_key),
            api_name=APIS[header.request_api_key].name,
            api_version=ctx.api_version,
            client_id=ctx.client_id,
            correlation_id=header.correlation_id,
            client_host=ctx.client_host,
            client_port=ctx.client_port,
            request=request,
        )
        self._records.append(record)
        return record

    def __iter__(self) -> Iterator[RequestRecord]:
        return iter(list(self._records))

    def __len__(self) -> int:
        return len(self._records)

    def clear(self) -> None:
        self._records.clear()

    def filter(
        self,
        api: int | str | None = None,
        *,
        broker: int | None = None,
        client_id: str | None = None,
        error: int | str | None = None,
        outcome: str | None = None,
        since_seq: int = 0,
    ) -> list[RequestRecord]:
        """Records in arrival order, narrowed by API (key or name), broker, client id, an error
        code (key or Kafka name) found in the response, outcome, and sequence number."""
        key = None if api is None else api_key_of(api)
        code = None if error is None else error_code_of(error)
        return [
            r
            for r in self._records
            if r.seq > since_seq
            and (key is None or r.api_key == key)
            and (broker is None or r.broker_id == broker)
            and (client_id is None or r.client_id == client_id)
            and (code is None or code in r.error_codes)
            and (outcome is None or r.outcome == outcome)
        ]


# -- the registry and the slow path of dispatch ----------------------------------------------------


class RequestHooks:
    """Interceptors and the request log of one cluster; keeps ``cluster.intercepting`` true
    exactly while there is something to do on the request path."""

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self.interceptors: list[Interceptor] = []
        self.log = RequestLog()
        self.errors = ErrorQueues(cluster, self._update)  # pushed errors (mockbroker/control/faults.py)

    def add(self, api_key: int | str | None, fn: InterceptFn, broker: int | None, keep: bool, name: str = "") -> Interceptor:
        key = None if api_key is None else api_key_of(api_key)
        if broker is not None and broker not in self.cluster.brokers:
            raise ValueError(f"no broker {broker}; brokers are {sorted(self.cluster.brokers)}")
        interceptor = Interceptor(key, fn, broker, keep, self, name=name or getattr(fn, "__name__", ""))
        self.interceptors.append(interceptor)
        self._update()
        return interceptor

    def remove(self, interceptor: Interceptor) -> None:
        if interceptor in self.interceptors:
            self.interceptors.remove(interceptor)
            self._update()

    def clear(self) -> None:
        self.interceptors.clear()
        self._update()

    def enable_log(self, enabled: bool = True) -> None:
        self.log.enabled = enabled
        self._update()

    def _update(self) -> None:
        self.cluster.intercepting = bool(self.interceptors) or self.log.enabled or self.errors.armed

    async def handle(self, ctx: RequestContext, handler: Handler, request: Any) -> Any:
        """Dispatch's slow path: log, intercept, call the handler. Returns the response object,
        None for no response (dropped, or acks=0), or raises CloseConnection."""
        from mockbroker.dispatch.context import CloseConnection, call_handler

        record = self.log.start(ctx, request) if self.log.enabled else None
        answer, edits = await self._ask_interceptors(Intercepted(ctx, request))
        try:
            if answer is DROP:
                if record is not None:
                    record.outcome = "dropped"
                return None
            if answer is CLOSE:
                if record is not None:
                    record.outcome = "closed"
                raise CloseConnection("closed by an interceptor")
            if isinstance(answer, Respond):
                response = answer.response
                outcome = "intercepted"
            else:
                # The whole-request fault point: a pushed error answers instead of the handler.
                response = self.errors.answer(ctx, request) if self.errors.armed else None
                if response is not None:
                    outcome = "intercepted"
                else:
                    response = await call_handler(ctx, handler, request)
                    outcome = "answered"
            for edit in edits:
                replaced = edit(response)
                if replaced is not None:
                    response = replaced
            if record is not None:
                record.outcome = outcome
                if response is not None:
                    record.error_codes = error_codes(response)
            return response
        except CloseConnection:
            if record is not None and record.outcome == "pending":
                record.outcome = "failed" if ctx.cluster.internal_errors else "closed"
            raise

    async def _ask_interceptors(self, seen: Intercepted) -> tuple[Any, list[Callable[[Any], Any]]]:
        """Ask the matching interceptors in order: (the answer that ended the chain, or None; the
        After edits collected). Raises CloseConnection when an interceptor fails."""
        from mockbroker.dispatch.context import CloseConnection

        edits: list[Callable[[Any], Any]] = []
        answer: Any = None
        api_key, broker_id = seen.ctx.header.request_api_key, seen.ctx.broker.node_id
        for interceptor in [i for i in self.interceptors if i.matches(api_key, broker_id)]:
            if not interceptor.keep:
                self.remove(interceptor)
            interceptor.calls += 1
            try:
                action = interceptor.fn(seen)
                if inspect.isawaitable(action):
                    action = await action
            except Exception as exc:  # the test's interceptor failed: surface it like a broker bug
                self.cluster.record_internal_error(exc)
                raise CloseConnection(f"interceptor {interceptor.name!r} raised {exc!r}") from exc
            if action is None:
                continue
            if isinstance(action, Delay):
                await asyncio.sleep(max(action.ms, 0) / 1000)
            elif isinstance(action, After):
                edits.append(action.edit)
            elif isinstance(action, Respond | _Drop | _Close):
                answer = action
                break
            else:
                self.cluster.record_internal_error(
                    TypeError(f"interceptor {interceptor.name!r} answered {action!r}; expected None, Respond, Delay, After, DROP or CLOSE")
                )
                raise CloseConnection("bad interceptor answer")
        return answer, edits
