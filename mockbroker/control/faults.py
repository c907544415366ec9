"""Pushed errors: error codes queued for the next N requests of an API at cluster, broker or
partition level (``Control.push_errors``), taken at fixed points of the request path.

Two fault points, as kfake's fault checks are, never an edit of the answer from outside:
- Whole requests (cluster level, or ``broker=``): dispatch's slow path asks ``answer`` where it
  would call the handler; a request that meets an error gets the API's whole-request error answer
  (mockbroker/control/error_answers.py) and the handler does not run. Metadata is the exception:
  its handler runs and carries the error in every topic (``RequestFaults.request_error``).
- Partitions (``topic=`` and ``partition=``): the per-partition handlers (Produce, Fetch,
  ListOffsets, OffsetCommit, OffsetForLeaderEpoch, DeleteRecords) ask
  ``ctx.faults.partition(topic, index)`` for each partition before their own checks, and answer
  a partition that meets an error with it, built with their own classes: a failed Produce or
  OffsetCommit partition appends or commits nothing.

Precedence, for one request: a broker-level error is taken before a cluster-level one; partition
errors apply to requests that do run. Each pushed error is used by exactly one request (one
partition entry for partition-level errors), in the order pushed. Interceptors run before the
fault point: one that answers (Respond, DROP, CLOSE) leaves the pushed error for the next request.

Cost: nothing while nothing is pushed. Pushed errors keep ``cluster.intercepting`` on (so dispatch
takes its slow path) and set ``ctx.faults`` only for a request of an API with errors waiting; the
per-partition handlers read that one attribute (None on the common path).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from mockbroker.control.error_answers import ERROR_ANSWERS
from mockbroker.control.names import api_key_of, error_code_of
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.registry import APIS

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.state import ClusterState

# The APIs whose handlers have a per-partition fault point.
PARTITION_APIS = frozenset(
    {
        ApiKey.PRODUCE,
        ApiKey.FETCH,
        ApiKey.LIST_OFFSETS,
        ApiKey.OFFSET_COMMIT,
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        ApiKey.DELETE_RECORDS,
    }
)
# Whole-request errors: the APIs with an error answer, and Metadata (its handler places them).
REQUEST_APIS = frozenset(ERROR_ANSWERS) | {ApiKey.METADATA}


class RequestFaults:
    """The pushed errors one request meets (``ctx.faults``): ``request_error`` for a whole-request
    error its handler places itself (Metadata), ``partition`` for each partition it answers."""

    __slots__ = ("api_key", "queues", "request_error")

    def __init__(self, queues: ErrorQueues, api_key: ApiKey, request_error: int | None) -> None:
        self.queues = queues
        self.api_key = api_key
        self.request_error = request_error

    def partition(self, topic: str, partition: int) -> ErrorCode | None:
        """The error pushed for this partition of this API, taken (None: none is waiting)."""
        return self.queues.take_partition(self.api_key, topic, partition)


class ErrorQueues:
    """Pushed error codes, consumed one per request (or per partition entry) at the fault points."""

    def __init__(self, cluster: ClusterState, on_change: Callable[[], None]) -> None:
        self.cluster = cluster
        self.cluster_level: dict[ApiKey, deque[int]] = {}
        self.broker_level: dict[tuple[ApiKey, int], deque[int]] = {}
        self.partition_level: dict[tuple[ApiKey, str, int], deque[int]] = {}
        self.armed = False  # any error waiting: read by dispatch's slow path
        self._on_change = on_change

    def push(
        self, api: int | str, errors: Iterable[int | str], *, broker: int | None = None,
        topic: str | None = None, partition: int | None = None,
    ) -> None:  # fmt: skip
        api_key = api_key_of(api)
        codes = [error_code_of(e) for e in errors]
        if (topic is None) != (partition is None):
            raise ValueError("partition-level errors need both topic= and partition=")
        if topic is not None and partition is not None:
            if api_key not in PARTITION_APIS:
                names = ", ".join(sorted(APIS[k].name for k in PARTITION_APIS))
                raise ValueError(f"{APIS[api_key].name} has no per-partition errors; partition-level errors go to {names}")
            if broker is not None:
                raise ValueError("a partition-level error applies wherever the partition is served; drop broker=")
            self.partition_level.setdefault((api_key, topic, partition), deque()).extend(codes)
        elif api_key not in REQUEST_APIS:
            raise ValueError(f"{APIS[api_key].name} has no error field to put a request-level error in; use intercept() and Respond")
        elif broker is not None:
            if broker not in self.cluster.brokers:
                raise ValueError(f"no broker {broker}; brokers are {sorted(self.cluster.brokers)}")
            self.broker_level.setdefault((api_key, broker), deque()).extend(codes)
        else:
            self.cluster_level.setdefault(api_key, deque()).extend(codes)
        self._update()

    def answer(self, ctx: RequestContext, request: Any) -> Any:
        """The whole-request fault point (dispatch's slow path, where the handler would be called):
        the error answer when a request-level error is waiting for this request, else None, with
        ``ctx.faults`` set when the handler has errors to place."""
        api_key = ApiKey(ctx.header.request_api_key)
        queue = self.broker_level.get((api_key, ctx.broker.node_id)) or self.cluster_level.get(api_key)
        code = None
        if queue:
            code = queue.popleft()
            self._update()
            build = ERROR_ANSWERS.get(api_key)
            if build is not None:
                return build(ctx.api_version, request, code)
        if code is not None or (api_key in PARTITION_APIS and self.partition_level):
            ctx.faults = RequestFaults(self, api_key, code)
        return None

    def take_partition(self, api_key: ApiKey, topic: str, partition: int) -> ErrorCode | None:
        queue = self.partition_level.get((api_key, topic, partition))
        if not queue:
            return None
        code = queue.popleft()
        self._update()
        return ErrorCode(code)

    def pending(self) -> dict[str, list[str]]:
        """What is left, for diagnostics: {"Produce": [...], "Produce@broker2": [...], "Produce:t-0": [...]}."""
        out: dict[str, list[str]] = {}
        for k, q in self.cluster_level.items():
            out[APIS[k].name] = [ErrorCode(c).name for c in q]
        for (k, b), q in self.broker_level.items():
            out[f"{APIS[k].name}@broker{b}"] = [ErrorCode(c).name for c in q]
        for (k, t, p), q in self.partition_level.items():
            out[f"{APIS[k].name}:{t}-{p}"] = [ErrorCode(c).name for c in q]
        return {k: v for k, v in out.items() if v}

    def clear(self) -> None:
        self.cluster_level.clear()
        self.broker_level.clear()
        self.partition_level.clear()
        self._update()

    def _update(self) -> None:
        _drop_used(self.cluster_level)
        _drop_used(self.broker_level)
        _drop_used(self.partition_level)
        armed = bool(self.cluster_level or self.broker_level or self.partition_level)
        if armed != self.armed:
            self.armed = armed
            self._on_change()


def _drop_used(queues: dict[Any, deque[int]]) -> None:
    for key in [k for k, q in queues.items() if not q]:
        del queues[key]
