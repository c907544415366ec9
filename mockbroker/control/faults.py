"""Declarative faults built on the one hook (mockbroker.intercept): error codes pushed for the next
N requests of an API at cluster, broker or partition level, latency, disconnects.

Where an error goes in the response (``error_response``, ``PartitionErrors``):
- APIs with a top-level ``error_code`` (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ListGroups,
  InitProducerId, FindCoordinator v0-3, OffsetFetch v2-7, OffsetDelete, ...) get it there.
- Per-partition APIs (Produce, Fetch, ListOffsets, OffsetCommit, TxnOffsetCommit,
  OffsetForLeaderEpoch, DeleteRecords) get it in every partition the request named.
- Per-key APIs get it in every entry: FindCoordinator v4+ (each key), DescribeGroups (each group),
  OffsetFetch v8+ (each group).
- Metadata runs (brokers are still listed) and every topic entry carries the error (and the
  top-level error_code from v13): how a client meets LEADER_NOT_AVAILABLE or UNKNOWN_TOPIC_OR_PARTITION.
Anything else is refused when the error is pushed (use ``intercept`` with your own response).

Precedence, for one request: a broker-level error (pushed with ``broker=``) is taken before a
cluster-level one; either fails the request as a whole (the handler does not run, so a failed
OffsetCommit commits nothing and a failed JoinGroup joins nobody). Partition-level errors
(``topic=`` and ``partition=``) apply to requests that do run: the partition is taken out of
the request before the handler sees it (a failed Produce partition appends nothing) and its
error put into the response, in that partition's entry. Each pushed error is used by exactly
one request (one partition entry for partition-level errors), in the order pushed.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockbroker.control.intercept import After, Intercepted, Interceptor, Respond, api_key_of, error_code_of
from mockbroker_protocol.registry import APIS

if TYPE_CHECKING:
    from mockbroker.cluster import MockCluster


@dataclass(frozen=True, slots=True)
class PartitionShape:
    """Where topics and partitions sit in one per-partition API's request and response."""

    req_topics: str  # request attribute with the topic list
    req_parts: str  # topic entry attribute with the partition list
    req_index: str  # partition entry attribute with the index
    resp_topics: str
    resp_topic_name: str  # name attribute of a response topic entry
    resp_parts: str
    resp_index: str
    # Request attribute names that may carry a topic's name (the first non-empty wins).
    req_topic_name: str = "name"
    # What else an errored partition carries (Kafka's error entries: offsets -1 and so on).
    error_fields: tuple[tuple[str, Any], ...] = ()
    # Writes: the errored partition is taken out of the request, so nothing is appended or
    # committed for it. Reads run whole and get the error written over the partition's answer
    # (taking a partition out of a Fetch would change its KIP-227 session).
    writes: bool = False


PRODUCE, FETCH, LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FOR_LEADER_EPOCH, DELETE_RECORDS, TXN_OFFSET_COMMIT = 0, 1, 2, 8, 23, 21, 28
FIND_COORDINATOR, OFFSET_FETCH, DESCRIBE_GROUPS, METADATA = 10, 9, 15, 3

PARTITION_SHAPES: dict[int, PartitionShape] = {
    PRODUCE: PartitionShape(
        "topic_data", "partition_data", "index", "responses", "name", "partition_responses", "index",
        error_fields=(("base_offset", -1), ("log_append_time_ms", -1), ("log_start_offset", -1)), writes=True,
    ),
    FETCH: PartitionShape(
        "topics", "partitions", "partition", "responses", "topic", "partitions", "partition_index",
        req_topic_name="topic",
        error_fields=(("high_watermark", -1), ("last_stable_offset", -1), ("log_start_offset", -1), ("records", None)),
    ),
    LIST_OFFSETS: PartitionShape(
        "topics", "partitions", "partition_index", "topics", "name", "partitions", "partition_index",
        error_fields=(("timestamp", -1), ("offset", -1), ("leader_epoch", -1)),
    ),
    OFFSET_COMMIT: PartitionShape(
        "topics", "partitions", "partition_index", "topics", "name", "partitions", "partition_index", writes=True
    ),
    TXN_OFFSET_COMMIT: PartitionShape(
        "topics", "partitions", "partition_index", "topics", "name", "partitions", "partition_index", writes=True
    ),
    OFFSET_FOR_LEADER_EPOCH: PartitionShape(
        "topics", "partitions", "partition", "topics", "topic", "partitions", "partition", req_topic_name="topic",
        error_fields=(("leader_epoch", -1), ("end_offset", -1)),
    ),
    DELETE_RECORDS: PartitionShape(
        "topics", "partitions", "partition_index", "topics", "name", "partitions", "partition_index",
        error_fields=(("low_watermark", -1),), writes=True,
    ),
}  # fmt: skip


def _item_class(container: type, attr: str) -> type:
    """The element class of a list field of a generated message class (from its default)."""
    for f in dataclasses.fields(container):
        if f.name == attr:
            hint = f.type if isinstance(f.type, str) else repr(f.type)
            module = __import__(container.__module__, fromlist=["_"])
            name = hint.split("[", 1)[1].split("]", 1)[0].split("|")[0].strip()
            cls: type = getattr(module, name)
            return cls
    raise AttributeError(f"{container.__name__} has no field {attr}")


def _topic_name(cluster: MockCluster, entry: Any, attr: str) -> str:
    name = getattr(entry, attr, "") or ""
    if not name:
        topic_id = getattr(entry, "topic_id", None)
        if isinstance(topic_id, uuid.UUID):
            name = cluster.topic_ids.get(topic_id, "")
    return str(name)


def request_partitions(cluster: MockCluster, api_key: int, request: Any) -> list[tuple[str, int]]:
    """The (topic, partition) pairs a per-partition request names (empty for other APIs)."""
    shape = PARTITION_SHAPES.get(api_key)
    if shape is None:
        return []
    return [
        (_topic_name(cluster, t, shape.req_topic_name), getattr(p, shape.req_index))
        for t in getattr(request, shape.req_topics)
        for p in getattr(t, shape.req_parts)
    ]


def strip_partitions(cluster: MockCluster, api_key: int, request: Any, drop: set[tuple[str, int]]) -> dict[tuple[str, int], Any]:
    """Take ``drop`` out of the request (a topic left with no partitions goes too); returns the
    removed partitions' topic entries, which carry the topic's name or id for the response."""
    shape = PARTITION_SHAPES[api_key]
    removed: dict[tuple[str, int], Any] = {}
    kept_topics = []
    for t in getattr(request, shape.req_topics):
        name = _topic_name(cluster, t, shape.req_topic_name)
        kept = []
        for p in getattr(t, shape.req_parts):
            key = (name, getattr(p, shape.req_index))
            if key in drop:
                removed[key] = t
            else:
                kept.append(p)
        setattr(t, shape.req_parts, kept)
        if kept:
            kept_topics.append(t)
    setattr(request, shape.req_topics, kept_topics)
    return removed


def put_partition_errors(
    cluster: MockCluster, api_key: int, response: Any, errors: dict[tuple[str, int], int], request_topics: dict[tuple[str, int], Any]
) -> None:
    """Write each (topic, partition) error into its partition entry of ``response``, adding the
    topic and partition entries when the handler did not answer them (they were taken out)."""
    shape = PARTITION_SHAPES[api_key]
    topic_cls = _item_class(type(response), shape.resp_topics)
    part_cls = _item_class(topic_cls, shape.resp_parts)
    topics = getattr(response, shape.resp_topics)
    for (name, index), code in errors.items():
        topic_entry = next((t for t in topics if _topic_name(cluster, t, shape.resp_topic_name) == name), None)
        if topic_entry is None:
            topic_entry = topic_cls()
            setattr(topic_entry, shape.resp_topic_name, name)
            source = request_topics.get((name, index))
            if hasattr(topic_entry, "topic_id"):  # topics by id (Fetch v13+, Produce v13, OffsetCommit v10)
                known = cluster.topics.get(name)
                topic_entry.topic_id = getattr(source, "topic_id", None) or (known.topic_id if known else topic_entry.topic_id)
            topics.append(topic_entry)
        parts = getattr(topic_entry, shape.resp_parts)
        entry = next((p for p in parts if getattr(p, shape.resp_index) == index), None)
        if entry is None:
            entry = part_cls()
            setattr(entry, shape.resp_index, index)
            parts.append(entry)
        entry.error_code = code
        for attr, value in shape.error_fields:
            setattr(entry, attr, value)


def supports_request_errors(api_key: int) -> bool:
    response_cls = APIS[api_key].response
    names = {f.name for f in dataclasses.fields(response_cls)}
    return "error_code" in names or api_key in PARTITION_SHAPES or api_key in (DESCRIBE_GROUPS,)


def error_response(cluster: MockCluster, api_key: int, version: int, request: Any, code: int) -> Any:
    """A whole-request error answer for ``request``, shaped as the module docstring says."""
    response = APIS[api_key].response()
    if api_key in PARTITION_SHAPES:
        pairs = request_partitions(cluster, api_key, request)
        put_partition_errors(cluster, api_key, response, dict.fromkeys(pairs, code), {})
        if api_key == FETCH:
            response.error_code = code  # Fetch also has a top-level error (KIP-227 sessions)
        return response
    if api_key == FIND_COORDINATOR and version >= 4:
        coordinator_cls = _item_class(type(response), "coordinators")
        response.coordinators = [
            coordinator_cls(key=k, node_id=-1, host="", port=-1, error_code=code) for k in request.coordinator_keys
        ]
        return response
    if api_key == OFFSET_FETCH and version >= 8:
        group_cls = _item_class(type(response), "groups")
        response.groups = [group_cls(group_id=g.group_id, error_code=code) for g in request.groups]
        return response
    if api_key == DESCRIBE_GROUPS:
        group_cls = _item_class(type(response), "groups")
        response.groups = [group_cls(error_code=code, group_id=g) for g in request.groups]
        return response
    if api_key == FIND_COORDINATOR:
        response.node_id, response.host, response.port, response.error_message = -1, "", -1, None
    response.error_code = code
    return response


class ErrorQueues:
    """Pushed error codes, consumed one per request (or per partition entry) by one interceptor
    registered while any are left (see the module docstring for precedence)."""

    def __init__(self, cluster: MockCluster) -> None:
        self.cluster = cluster
        self.cluster_level: dict[int, deque[int]] = {}
        self.broker_level: dict[tuple[int, int], deque[int]] = {}
        self.partition_level: dict[tuple[int, str, int], deque[int]] = {}
        self._interceptor: Interceptor | None = None

    def push(
        self, api: int | str, errors: Iterable[int | str], *, broker: int | None = None,
        topic: str | None = None, partition: int | None = None,
    ) -> None:  # fmt: skip
        api_key = api_key_of(api)
        codes = [error_code_of(e) for e in errors]
        if (topic is None) != (partition is None):
            raise ValueError("partition-level errors need both topic= and partition=")
        if topic is not None and partition is not None:
            if api_key not in PARTITION_SHAPES:
                names = ", ".join(APIS[k].name for k in PARTITION_SHAPES)
                raise ValueError(f"{APIS[api_key].name} has no per-partition errors; partition-level errors go to {names}")
            if broker is not None:
                raise ValueError("a partition-level error applies wherever the partition is served; drop broker=")
            self.partition_level.setdefault((api_key, topic, partition), deque()).extend(codes)
        else:
            if not supports_request_errors(api_key):
                raise ValueError(
                    f"{APIS[api_key].name} has no error field to put a request-level error in; use intercept() and Respond"
                )
            if broker is not None:
                if broker not in self.cluster.brokers:
                    raise ValueError(f"no broker {broker}; brokers are {sorted(self.cluster.brokers)}")
                self.broker_level.setdefault((api_key, broker), deque()).extend(codes)
            else:
                self.cluster_level.setdefault(api_key, deque()).extend(codes)
        self._update()

    def pending(self) -> dict[str, list[str]]:
        """What is left, for diagnostics: {"Produce": [...], "Produce@broker2": [...], "Produce:t-0": [...]}."""
        from mockbroker_protocol.errors import ErrorCode

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
        for k1 in [k for k, q in self.cluster_level.items() if not q]:
            del self.cluster_level[k1]
        for k2 in [k for k, q in self.broker_level.items() if not q]:
            del self.broker_level[k2]
        for k3 in [k for k, q in self.partition_level.items() if not q]:
            del self.partition_level[k3]
        busy = bool(self.cluster_level or self.broker_level or self.partition_level)
        if busy and self._interceptor is None:
            self._interceptor = self.cluster.control.hooks.add(None, self._intercept, None, keep=True, name="pushed errors")
        elif not busy and self._interceptor is not None:
            self._interceptor.remove()
            self._interceptor = None

    def _intercept(self, seen: Intercepted) -> Respond | After | None:
        api_key = seen.api_key
        queue = self.broker_level.get((api_key, seen.broker_id)) or self.cluster_level.get(api_key)
        if queue:
            code = queue.popleft()
            self._update()
            if api_key == METADATA:
                return After(lambda response: _metadata_error(response, code, seen.api_version))
            return Respond(error_response(self.cluster, api_key, seen.api_version, seen.request, code))
        if not self.partition_level or api_key not in PARTITION_SHAPES:
            return None
        errors: dict[tuple[str, int], int] = {}
        for name, index in request_partitions(self.cluster, api_key, seen.request):
            q = self.partition_level.get((api_key, name, index))
            if q:
                errors[(name, index)] = q.popleft()
        if not errors:
            return None
        self._update()
        removed = strip_partitions(self.cluster, api_key, seen.request, set(errors)) if PARTITION_SHAPES[api_key].writes else {}
        cluster = self.cluster

        def edit(response: Any) -> None:
            put_partition_errors(cluster, api_key, response, errors, removed)

        return After(edit)


def _metadata_error(response: Any, code: int, version: int) -> None:
    for topic in response.topics:
        topic.error_code = code
        topic.partitions = []
    if version >= 13:
        response.error_code = code

