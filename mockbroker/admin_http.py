"""The HTTP control API: a thin aiohttp adapter over ``cluster.control`` (mockbroker/control.py).

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

Metrics (``/metrics``, Prometheus text format) are counted by one observing interceptor on the
control hook and one event-log listener: no code of their own on the request path.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import hmac
import json
import logging
import math
import re
import types
import typing
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from mockbroker import __version__
from mockbroker.cluster import TopicError
from mockbroker.control import (
    AnyGroupSnapshot,
    ConsumedRecord,
    ConsumerGroupSnapshot,
    Control,
    ControlError,
    NotFound,
    ProduceError,
    WaitTimeout,
)
from mockbroker.events import Event
from mockbroker.groups.classic import ClassicGroupState
from mockbroker.groups.consumer import GROUP_TYPE_CONSUMER, ConsumerGroupState, MemberState
from mockbroker.groups.coordinator import GROUP_TYPE_CLASSIC
from mockbroker.intercept import After, Intercepted, Interceptor, api_key_of, error_code_of, error_codes
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.registry import APIS

if TYPE_CHECKING:
    from mockbroker.cluster import MockCluster

log = logging.getLogger("mockbroker.admin")

DEFAULT_ADMIN_PORT = 8092  # the image's; `mockbroker serve` starts no admin API unless given a port
SSE_KEEPALIVE_S = 15.0
MAX_BODY_BYTES = 16 * 1024 * 1024
# The request line must hold every URL the document allows: a 1024-character group id of 4-byte
# UTF-8 characters is 12 KiB percent-encoded, and a query may add a client id as long (aiohttp's
# default of 8190 bytes answered those 400 in text/plain, before our own checks).
MAX_REQUEST_LINE = 64 * 1024
MAX_I32 = (1 << 31) - 1
MAX_TIMESTAMP_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
# A manual clock fires every timer due on the way, periodic ones too (the retention check visits
# every partition every 5 minutes), so one call is kept to a day; advance again for more.
MAX_ADVANCE_MS = 86_400_000
MAX_PARTITIONS = 1000  # per topic created over HTTP (CreateTopics over the wire has no such cap)
UNPROTECTED = frozenset({"/healthz", "/readyz"})
# Kafka's state names of each kind of group (the two share Empty, Stable and Dead); `type` tells
# the kinds apart in every group the API answers with.
GROUP_TYPES = (GROUP_TYPE_CLASSIC, GROUP_TYPE_CONSUMER)
STATES_BY_TYPE: dict[str, tuple[str, ...]] = {
    GROUP_TYPE_CLASSIC: tuple(s.value for s in ClassicGroupState),
    GROUP_TYPE_CONSUMER: tuple(s.value for s in ConsumerGroupState),
}
GROUP_STATES = tuple(dict.fromkeys(s for states in STATES_BY_TYPE.values() for s in states))
COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")
ENCODINGS = ("utf-8", "base64")
TOPIC_NAME = r"^[a-zA-Z0-9._-]+$"
PRODUCE_KEY, FETCH_KEY = 0, 1


# Prometheus' text exposition format names its version in the content type.
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


# -- errors ------------------------------------------------------------------------------------------


class BadInput(Exception):
    """The client's request is wrong; ``field`` names what ("body.partitions", "query.since_seq")."""

    def __init__(self, field: str, message: str, status: int = 400) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.status = status


def _error_body(message: str, field: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"error": message}
    if field is not None:
        out["field"] = field
    out.update(extra)
    return out


# -- schemas: a JSON Schema subset, used both in the document and to check requests ----------------


def s_int(lo: int, hi: int, **kw: Any) -> dict[str, Any]:
    return {"type": "integer", "minimum": lo, "maximum": hi, **kw}


def s_str(**kw: Any) -> dict[str, Any]:
    return {"type": "string", **kw}


def s_bool(**kw: Any) -> dict[str, Any]:
    return {"type": "boolean", **kw}


def s_arr(items: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **kw}


def s_obj(props: dict[str, Any], required: tuple[str, ...] = (), extra: bool | dict[str, Any] = False, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": extra, **kw}
    if required:
        out["required"] = list(required)
    return out


def s_map(values: dict[str, Any] | bool, **kw: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": values, **kw}


def s_null(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "nullable": True}


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


API_NAME = s_str(enum=sorted(spec.name for spec in APIS.values()), description="a Kafka API, by name")
ERROR_NAME = s_str(enum=[code.name for code in ErrorCode], description="a Kafka error code, by name")
BROKER_ID = s_int(0, MAX_I32)
TOPIC = s_str(minLength=1, maxLength=249, pattern=TOPIC_NAME)
GROUP_ID = s_str(minLength=1, maxLength=1024)
GROUP_TYPE = s_str(enum=list(GROUP_TYPES), description="classic (JoinGroup/SyncGroup) or consumer (KIP-848)")
PARTITIONS_BY_TOPIC = s_map(s_arr(s_int(0, MAX_I32)), description="{topic: [partition, ...]}")

COMPONENTS: dict[str, dict[str, Any]] = {
    "Error": s_obj(
        {"error": s_str(), "field": s_str(), "kafka_error": s_str()}, ("error",),
        description="What went wrong; `field` names the bad input, `kafka_error` the Kafka error code",
    ),
    "Broker": s_obj(
        {
            "node_id": s_int(0, MAX_I32), "host": s_str(), "port": s_int(0, 65535),
            "advertised_host": s_str(), "advertised_port": s_int(0, 65535), "rack": s_null(s_str()), "up": s_bool(),
        },
        ("node_id", "host", "port", "advertised_host", "advertised_port", "rack", "up"),
    ),
    "Cluster": s_obj(
        {
            "cluster_id": s_str(), "controller_id": s_int(0, MAX_I32), "brokers": s_arr(ref("Broker")),
            "manual_clock": s_bool(), "now_ms": s_int(0, MAX_TIMESTAMP_MS), "bootstrap_servers": s_str(),
        },
        ("cluster_id", "controller_id", "brokers", "manual_clock", "now_ms", "bootstrap_servers"),
    ),
    "Partition": s_obj(
        {
            "index": s_int(0, MAX_I32), "leader_id": s_int(-1, MAX_I32), "leader_epoch": s_int(-1, MAX_I32),
            "replica_ids": s_arr(s_int(0, MAX_I32)), "isr_ids": s_arr(s_int(0, MAX_I32)),
            "log_start_offset": s_int(0, (1 << 63) - 1), "log_end_offset": s_int(0, (1 << 63) - 1),
        },
        ("index", "leader_id", "leader_epoch", "replica_ids", "isr_ids", "log_start_offset", "log_end_offset"),
    ),
    "Topic": s_obj(
        {
            "name": s_str(), "topic_id": s_str(), "is_internal": s_bool(), "replication_factor": s_int(1, 32767),
            "configs": s_map(s_str()), "partitions": s_arr(ref("Partition")),
        },
        ("name", "topic_id", "is_internal", "replication_factor", "configs", "partitions"),
    ),
    "Member": s_obj(
        {
            "member_id": s_str(), "group_instance_id": s_null(s_str()), "client_id": s_str(), "client_host": s_str(),
            "session_timeout_ms": s_int(-MAX_I32 - 1, MAX_I32), "rebalance_timeout_ms": s_int(-MAX_I32 - 1, MAX_I32),
            "protocols": s_arr(s_str()),
            "subscription": s_null(s_arr(s_str())),
            "owned_partitions": s_null(PARTITIONS_BY_TOPIC),
            "assignment": s_null(PARTITIONS_BY_TOPIC),
            "awaiting_join": s_bool(), "awaiting_sync": s_bool(),
        },
        (
            "member_id", "group_instance_id", "client_id", "client_host", "session_timeout_ms", "rebalance_timeout_ms",
            "protocols", "subscription", "owned_partitions", "assignment", "awaiting_join", "awaiting_sync",
        ),
        description="A classic group's member; subscription, owned_partitions and assignment are decoded from the "
        "consumer protocol (null for other protocol types or undecodable bytes)",
    ),
    "ClassicGroup": s_obj(
        {
            "type": s_str(enum=[GROUP_TYPE_CLASSIC]), "group_id": s_str(),
            "state": s_str(enum=list(STATES_BY_TYPE[GROUP_TYPE_CLASSIC])), "generation_id": s_int(-1, MAX_I32),
            "protocol_type": s_null(s_str()), "protocol_name": s_null(s_str()), "leader_id": s_null(s_str()),
            "members": s_arr(ref("Member")), "coordinator": s_int(0, MAX_I32),
        },
        ("type", "group_id", "state", "generation_id", "protocol_type", "protocol_name", "leader_id", "members", "coordinator"),
        description="A classic group (JoinGroup/SyncGroup): a generation, a leader that assigns, members' assignments decoded",
    ),
    "ConsumerMember": s_obj(
        {
            "member_id": s_str(), "instance_id": s_null(s_str()), "rack_id": s_null(s_str()), "client_id": s_str(),
            "client_host": s_str(),
            "member_epoch": s_int(-2, MAX_I32, description="-2: a static member's temporary leave"),
            "previous_member_epoch": s_int(-2, MAX_I32),
            "state": s_str(enum=[s.value for s in MemberState], description="where it is in its reconciliation"),
            "subscribed_topic_names": s_arr(s_str()), "subscribed_topic_regex": s_null(s_str()),
            "server_assignor": s_null(s_str(description="the server assignor it asked for")),
            "rebalance_timeout_ms": s_int(-MAX_I32 - 1, MAX_I32),
            "assigned": {**PARTITIONS_BY_TOPIC, "description": "what it owns now"},
            "pending_revocation": {**PARTITIONS_BY_TOPIC, "description": "what it must give up before it moves on"},
            "target": {**PARTITIONS_BY_TOPIC, "description": "what the target assignment gives it"},
        },
        (
            "member_id", "instance_id", "rack_id", "client_id", "client_host", "member_epoch", "previous_member_epoch",
            "state", "subscribed_topic_names", "subscribed_topic_regex", "server_assignor", "rebalance_timeout_ms",
            "assigned", "pending_revocation", "target",
        ),
        description="A KIP-848 consumer group's member as its coordinator sees it (partitions by topic name)",
    ),
    "ConsumerGroup": s_obj(
        {
            "type": s_str(enum=[GROUP_TYPE_CONSUMER]), "group_id": s_str(),
            "state": s_str(enum=list(STATES_BY_TYPE[GROUP_TYPE_CONSUMER])),
            "group_epoch": s_int(0, MAX_I32),
            "assignment_epoch": s_int(0, MAX_I32, description="the group epoch the target assignment was computed for"),
            "assignor": s_str(description="the server assignor of the target assignment"),
            "subscribed_topics": s_map(s_int(0, MAX_I32), description="{topic: partition count} of the subscribed topics that exist"),
            "protocol_type": s_str(), "members": s_arr(ref("ConsumerMember")),
            "reconciled": s_bool(description="every member STABLE at the assignment epoch, owning exactly its target"),
            "coordinator": s_int(0, MAX_I32),
        },
        (
            "type", "group_id", "state", "group_epoch", "assignment_epoch", "assignor", "subscribed_topics",
            "protocol_type", "members", "reconciled", "coordinator",
        ),
        description="A KIP-848 consumer group (ConsumerGroupHeartbeat, group.protocol=consumer): epochs instead of a "
        "generation, the broker's assignor instead of a leader, each member's current and target partitions",
    ),
    "Group": {
        "oneOf": [ref("ClassicGroup"), ref("ConsumerGroup")],
        "discriminator": {
            "propertyName": "type",
            "mapping": {GROUP_TYPE_CLASSIC: ref("ClassicGroup")["$ref"], GROUP_TYPE_CONSUMER: ref("ConsumerGroup")["$ref"]},
        },
        "description": "A group of either kind; `type` says which",
    },
    "GroupSummary": s_obj(
        {
            "group_id": s_str(), "type": s_str(enum=list(GROUP_TYPES)), "state": s_str(enum=list(GROUP_STATES)),
            "generation_id": s_int(-1, MAX_I32, description="a classic group's generation; a consumer group's group epoch"),
            "protocol_type": s_null(s_str()), "members": s_int(0, MAX_I32),
        },
        ("group_id", "type", "state", "generation_id", "protocol_type", "members"),
    ),
    "Header": s_obj({"key": s_str(maxLength=1024), "value": s_null(s_str(maxLength=1 << 20))}, ("key",)),
    "Record": s_obj(
        {
            "topic": s_str(), "partition": s_int(0, MAX_I32), "offset": s_int(0, (1 << 63) - 1),
            "timestamp": s_int(-1, (1 << 63) - 1), "key": s_null(s_str()), "value": s_null(s_str()),
            "headers": s_arr(ref("Header")), "leader_epoch": s_int(-1, MAX_I32), "compression": s_str(enum=list(COMPRESSIONS)),
        },
        ("topic", "partition", "offset", "timestamp", "key", "value", "headers", "leader_epoch", "compression"),
        description="key, value and header values in the encoding asked for (utf-8 text or base64)",
    ),
    "Event": s_obj(
        {
            "v": s_int(1, 1000), "seq": s_int(1, (1 << 63) - 1), "time_ms": s_int(0, MAX_TIMESTAMP_MS), "type": s_str(),
            "broker_id": s_int(0, MAX_I32), "group_id": s_str(), "generation_id": s_int(-1, MAX_I32),
            "member_id": s_str(), "reason": s_str(), "details": s_map(True),
        },
        ("v", "seq", "time_ms", "type"),
        description="One event of the event log (schema: docs/events.md)",
    ),
    "Request": s_obj(
        {
            "seq": s_int(1, (1 << 63) - 1), "time_ms": s_int(0, MAX_TIMESTAMP_MS), "broker_id": s_int(0, MAX_I32),
            "api_key": s_int(0, 32767), "api": s_str(), "api_version": s_int(0, 32767), "client_id": s_str(),
            "correlation_id": s_int(-MAX_I32 - 1, MAX_I32), "client": s_str(),
            "outcome": s_str(enum=["pending", "answered", "intercepted", "dropped", "closed", "failed"]),
            "errors": s_arr(s_str()),
        },
        ("seq", "time_ms", "broker_id", "api_key", "api", "api_version", "client_id", "correlation_id", "client", "outcome", "errors"),
    ),
    "Interceptor": s_obj(
        {
            "id": s_int(1, (1 << 63) - 1), "name": s_str(), "api": s_null(s_str()), "broker": s_null(s_int(0, MAX_I32)),
            "keep": s_bool(), "calls": s_int(0, (1 << 63) - 1),
        },
        ("id", "name", "api", "broker", "keep", "calls"),
        description="An interceptor on the request path (latency, disconnect, drop, or one registered in Python)",
    ),
    "Faults": s_obj(
        {
            "pending_errors": s_map(s_arr(s_str())), "interceptors": s_arr(ref("Interceptor")),
            "brokers_down": s_arr(s_int(0, MAX_I32)), "coordinator_moves": s_map(s_int(0, MAX_I32)),
            "api_version_caps": s_map(s_null(s_int(-1, 32767))),
        },
        ("pending_errors", "interceptors", "brokers_down", "coordinator_moves", "api_version_caps"),
    ),
    "LeadersMoved": s_obj({"leaders_moved": s_map(s_int(-1, MAX_I32))}, ("leaders_moved",)),
    "Clock": s_obj({"manual": s_bool(), "now_ms": s_int(0, MAX_TIMESTAMP_MS)}, ("manual", "now_ms")),
}


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = COMPONENTS[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def check(schema: dict[str, Any], value: Any, where: str) -> Any:
    """``value`` checked against ``schema`` (the subset this module writes); returns it with
    integral floats made ints. Raises BadInput naming ``where`` and the offending part."""
    schema = _resolve(schema)
    if value is None:
        if schema.get("nullable"):
            return None
        raise BadInput(where, "must not be null")
    if "oneOf" in schema:
        return _one_of(schema, value, where)
    kind = schema.get("type")
    if kind == "integer":
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadInput(where, f"must be an integer, not {_show(value)}")
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise BadInput(where, f"must be an integer {lo}..{hi}, not {value}")
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise BadInput(where, f"must be a number, not {_show(value)}")
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise BadInput(where, f"must be a number {lo}..{hi}, not {value}")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise BadInput(where, f"must be true or false, not {_show(value)}")
    elif kind == "string":
        if not isinstance(value, str):
            raise BadInput(where, f"must be a string, not {_show(value)}")
        _size_within(schema, len(value), "Length", "character(s)", where)
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise BadInput(where, f"must match {schema['pattern']}, not {value!r}")
    elif kind == "array":
        if not isinstance(value, list):
            raise BadInput(where, f"must be an array, not {_show(value)}")
        _size_within(schema, len(value), "Items", "item(s)", where)
        value = [check(schema["items"], item, f"{where}[{i}]") for i, item in enumerate(value)]
    elif kind == "object":
        if not isinstance(value, dict):
            raise BadInput(where, f"must be an object, not {_show(value)}")
        props: dict[str, Any] = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                raise BadInput(f"{where}.{name}", "is required")
        extra = schema.get("additionalProperties", True)
        out: dict[str, Any] = {}
        for name, item in value.items():
            if name in props:
                out[name] = check(props[name], item, f"{where}.{name}")
            elif extra is False:
                allowed = ", ".join(props) or "none"
                raise BadInput(f"{where}.{name}", f"is not a known field (allowed: {allowed})")
            elif isinstance(extra, dict):
                out[name] = check(extra, item, f"{where}.{name}")
            else:
                out[name] = item
        if len(out) > schema.get("maxProperties", len(out)):
            raise BadInput(where, f"must have at most {schema['maxProperties']} entries")
        value = out
    if "enum" in schema and value not in schema["enum"]:
        raise BadInput(where, _not_in_enum([str(v) for v in schema["enum"]], value))
    return value


def _not_in_enum(allowed: list[str], value: Any) -> str:
    """A short refusal: a long list (error names, API names) gives its size and the close matches."""
    if len(allowed) <= 20:
        return f"must be one of {', '.join(allowed)}, not {_show(value)}"
    import difflib

    by_lower = {a.lower(): a for a in allowed}
    close = [by_lower[m] for m in difflib.get_close_matches(str(value).lower(), list(by_lower), n=5, cutoff=0.6)]
    hint = f"; close matches: {', '.join(close)}" if close else ""
    return f"must be one of {len(allowed)} names (listed in /openapi.json), not {_show(value)}{hint}"


def _one_of(schema: dict[str, Any], value: Any, where: str) -> Any:
    """A ``oneOf``: the option its discriminator names (OpenAPI's ``discriminator.mapping``), or
    else the one option that accepts the value."""
    discriminator = schema.get("discriminator")
    if discriminator is not None:
        name, mapping = discriminator["propertyName"], discriminator["mapping"]
        tag = value.get(name) if isinstance(value, dict) else None
        if not isinstance(tag, str) or tag not in mapping:
            raise BadInput(f"{where}.{name}", f"must be one of {', '.join(mapping)}, not {_show(tag)}")
        return check({"$ref": mapping[tag]}, value, where)
    accepted = []
    for option in schema["oneOf"]:
        try:
            accepted.append(check(option, value, where))
        except BadInput:
            continue
    if len(accepted) != 1:
        raise BadInput(where, f"must match exactly one of {len(schema['oneOf'])} schemas, not {len(accepted)}")
    return accepted[0]


def _size_within(schema: dict[str, Any], size: int, keyword: str, unit: str, where: str) -> None:
    """minLength/maxLength (keyword "Length") or minItems/maxItems ("Items")."""
    if size < schema.get(f"min{keyword}", 0):
        raise BadInput(where, f"must have at least {schema[f'min{keyword}']} {unit}")
    if f"max{keyword}" in schema and size > schema[f"max{keyword}"]:
        raise BadInput(where, f"must have at most {schema[f'max{keyword}']} {unit}")


def _show(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, str | int | float | bool | list | dict) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- operations ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    where: str  # "path" or "query"
    schema: dict[str, Any]
    description: str = ""
    required: bool = False


@dataclass(slots=True)
class Call:
    """One request, its parameters and body already checked and converted."""

    request: web.Request
    path: dict[str, Any]
    query: dict[str, Any]
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: Any = None


Handler = Callable[[Call], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Op:
    method: str
    path: str
    handler: Handler
    summary: str
    tag: str
    response: dict[str, Any] | None  # JSON schema of the success body (None: no body)
    params: tuple[Param, ...] = ()
    body: dict[str, Any] | None = None
    body_required: bool = False
    status: int = 200
    errors: tuple[int, ...] = ()
    content_type: str = "application/json"
    description: str = ""

    @property
    def operation_id(self) -> str:
        return self.handler.__name__.strip("_")


def _path_param(name: str, schema: dict[str, Any], description: str = "") -> Param:
    return Param(name, "path", schema, description, required=True)


def _query(name: str, schema: dict[str, Any], description: str = "") -> Param:
    return Param(name, "query", schema, description)


# -- the server -------------------------------------------------------------------------------------


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
        self._interceptor_ids: dict[int, Interceptor] = {}  # the API's ids of interceptors
        self._ids_by_object: dict[int, int] = {}  # id(interceptor) -> its API id
        self._next_id = 1
        self.ops = self._operations()

    # -- lifecycle -----------------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> AdminServer:
        _quiet_client_errors()
        await self.metrics.install()
        app = web.Application(middlewares=[self._errors, self._auth], client_max_size=MAX_BODY_BYTES)
        for op in self.ops:
            app.router.add_route(op.method, op.path, self._endpoint(op), name=op.operation_id)
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

    # -- middlewares ---------------------------------------------------------------------------------

    @web.middleware
    async def _auth(self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        if self.token is not None and request.path not in UNPROTECTED:
            given = request.headers.get("Authorization", "")
            scheme, _, credentials = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(credentials.strip().encode(), self.token.encode()):
                what = "a wrong bearer token" if given else "no bearer token"
                return web.json_response(
                    _error_body(f"{what}: send Authorization: Bearer <token> (--admin-token)", "header.Authorization"),
                    status=401, headers={"WWW-Authenticate": 'Bearer realm="mockbroker"'},
                )  # fmt: skip
        return await handler(request)

    @web.middleware
    async def _errors(self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        try:
            return await handler(request)
        except BadInput as exc:
            return web.json_response(_error_body(exc.message, exc.field), status=exc.status)
        except NotFound as exc:
            return web.json_response(_error_body(str(exc)), status=404)
        except WaitTimeout as exc:
            return web.json_response(_error_body(str(exc)), status=408)
        except ProduceError as exc:
            # Retriable codes are the cluster's state (no leader); the others refuse the records.
            status = 409 if exc.code.retriable else 422
            return web.json_response(_error_body(str(exc), "body.records", kafka_error=exc.code.name), status=status)
        except ControlError as exc:
            return web.json_response(_error_body(str(exc)), status=409)
        except TopicError as exc:
            status, where = _TOPIC_ERRORS.get(exc.code, (422, None))
            return web.json_response(_error_body(exc.message, where, kafka_error=exc.code.name), status=status)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            message = {404: f"no such endpoint: {request.method} {request.path} (see /openapi.json)"}.get(exc.status, exc.reason)
            if exc.status == 413:
                message = f"request body too large (at most {MAX_BODY_BYTES} bytes)"
            headers = {k: v for k, v in exc.headers.items() if k.lower() == "allow"}
            return web.json_response(_error_body(message), status=exc.status, headers=headers)
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception as exc:  # our bug: fail loudly, as a broker bug does
            self.cluster.record_internal_error(exc)
            return web.json_response(_error_body(f"internal error (a mockbroker bug): {exc!r}"), status=500)

    # -- dispatch ------------------------------------------------------------------------------------

    def _endpoint(self, op: Op) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        path_params = [p for p in op.params if p.where == "path"]
        query_params = {p.name: p for p in op.params if p.where == "query"}

        async def endpoint(request: web.Request) -> web.StreamResponse:
            path = {p.name: _param(p, request.match_info.get(p.name, "")) for p in path_params}
            query: dict[str, Any] = {}
            for name in request.query:
                if name not in query_params:
                    allowed = ", ".join(query_params) or "none"
                    raise BadInput(f"query.{name}", f"unknown query parameter (allowed: {allowed})")
                values = request.query.getall(name)
                if len(values) > 1:
                    raise BadInput(f"query.{name}", "given more than once")
                query[name] = _param(query_params[name], values[0])
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

    # -- operations ----------------------------------------------------------------------------------

    def _operations(self) -> list[Op]:
        group_path = _path_param("group_id", GROUP_ID, "the group id")
        topic_path = _path_param("topic", TOPIC, "the topic name")
        partition_path = _path_param("partition", s_int(0, MAX_I32), "the partition index")
        broker_path = _path_param("broker_id", BROKER_ID, "the broker's node id")
        api_filter = s_obj({"api": s_null(API_NAME), "broker": s_null(BROKER_ID)})
        count = s_int(1, 10_000, default=1)
        ok = s_obj({"ok": s_bool()}, ("ok",))
        return [
            Op("GET", "/healthz", self._healthz, "The admin API answers (liveness)", "health",
               s_obj({"status": s_str(enum=["ok"])}, ("status",))),
            Op("GET", "/readyz", self._readyz, "The broker serves: 200 when ready, 503 while starting or stopping", "health",
               s_obj({"ready": s_bool(), "bootstrap_servers": s_str(), "brokers_up": s_int(0, MAX_I32)},
                     ("ready", "bootstrap_servers", "brokers_up")), errors=(503,)),
            Op("GET", "/metrics", self._metrics, "Prometheus metrics (text exposition format 0.0.4)", "health",
               s_str(), content_type="text/plain"),
            Op("GET", "/openapi.json", self._openapi, "This document", "health", s_map(True)),
            # cluster and brokers
            Op("GET", "/cluster", self._cluster, "Cluster id, controller, brokers and the clock", "cluster", ref("Cluster")),
            Op("GET", "/brokers", self._brokers, "Every broker, up or down", "cluster",
               s_obj({"brokers": s_arr(ref("Broker"))}, ("brokers",))),
            Op("GET", "/brokers/{broker_id}", self._broker, "One broker", "cluster", ref("Broker"),
               (broker_path,), errors=(404,)),
            Op("POST", "/brokers/{broker_id}/down", self._broker_down,
               "Take a broker down: listener closed, connections dropped, leadership and coordinators fail over",
               "faults", ref("LeadersMoved"), (broker_path,), errors=(404, 409)),
            Op("POST", "/brokers/{broker_id}/up", self._broker_up, "Start a broker taken down again", "faults",
               ref("LeadersMoved"), (broker_path,), errors=(404, 409)),
            # topics and records
            Op("GET", "/topics", self._topics, "Every topic", "topics",
               s_obj({"topics": s_arr(ref("Topic"))}, ("topics",)),
               (_query("internal", s_bool(default=False), "include __consumer_offsets and other internal topics"),)),
            Op("POST", "/topics", self._create_topic, "Create a topic", "topics", ref("Topic"),
               body=s_obj({
                   "name": TOPIC, "partitions": s_int(1, MAX_PARTITIONS, default=1),
                   "replication_factor": s_int(1, 32767, default=1),
                   "configs": s_map(s_str(maxLength=4096), maxProperties=100, description="topic configs by Kafka name"),
               }, ("name",)), body_required=True, status=201, errors=(409, 422)),
            Op("GET", "/topics/{topic}", self._topic, "One topic", "topics", ref("Topic"), (topic_path,), errors=(404,)),
            Op("DELETE", "/topics/{topic}", self._delete_topic, "Delete a topic", "topics", None, (topic_path,),
               status=204, errors=(404,)),
            Op("POST", "/topics/{topic}/records", self._produce,
               "Append records as a producer would (one batch per partition); keyed records go where Kafka's "
               "default partitioner puts them", "records",
               s_obj({"offsets": s_arr(s_obj({"partition": s_int(0, MAX_I32), "offset": s_int(0, (1 << 63) - 1)},
                                             ("partition", "offset")))}, ("offsets",)),
               (topic_path,),
               body=s_obj({
                   "records": s_arr(s_obj({
                       "key": s_null(s_str(maxLength=1 << 20)), "value": s_null(s_str(maxLength=1 << 20)),
                       "headers": s_arr(ref("Header"), maxItems=100),
                       "partition": s_int(0, MAX_I32), "timestamp": s_int(0, MAX_TIMESTAMP_MS),
                   }), minItems=1, maxItems=10_000),
                   "encoding": s_str(enum=list(ENCODINGS), default="utf-8",
                                     description="how key, value and header values are written"),
                   "partition": s_int(0, MAX_I32), "compression": s_str(enum=list(COMPRESSIONS), default="none"),
               }, ("records",)), body_required=True, errors=(404, 409, 422)),
            Op("GET", "/topics/{topic}/partitions/{partition}/records", self._read,
               "Read a partition's records from an offset on, decoded", "records",
               s_obj({"records": s_arr(ref("Record")), "next_offset": s_int(0, (1 << 63) - 1),
                      "log_end_offset": s_int(0, (1 << 63) - 1)}, ("records", "next_offset", "log_end_offset")),
               (topic_path, partition_path,
                _query("offset", s_int(0, (1 << 63) - 1, default=0), "first offset to read"),
                _query("limit", s_int(1, 10_000, default=100), "at most this many records"),
                _query("encoding", s_str(enum=list(ENCODINGS), default="utf-8"),
                       "utf-8: keys and values as text (422 when one is not valid UTF-8); base64: as base64")),
               errors=(404, 422)),
            Op("POST", "/topics/{topic}/partitions/{partition}/leader", self._move_leader,
               "Move a partition's leader (default: to the next in-sync replica), bumping its leader epoch", "faults",
               s_obj({"leader_id": s_int(0, MAX_I32), "leader_epoch": s_int(0, MAX_I32)}, ("leader_id", "leader_epoch")),
               (topic_path, partition_path), body=s_obj({"broker_id": s_null(BROKER_ID)}), errors=(404, 409)),
            # groups
            Op("GET", "/groups", self._groups, "Every group, classic and KIP-848 consumer groups alike, in brief",
               "groups", s_obj({"groups": s_arr(ref("GroupSummary"))}, ("groups",)),
               (_query("type", GROUP_TYPE, "only groups of this type"),
                _query("state", s_str(enum=list(GROUP_STATES)), "only groups in this state"))),
            Op("GET", "/groups/{group_id}", self._group,
               "The coordinator's view of a group: a classic group (generation, leader, assignments decoded) or a "
               "consumer group (epochs, assignor, each member's current and target partitions); `type` says which",
               "groups", ref("Group"), (group_path,), errors=(404,)),
            Op("GET", "/groups/{group_id}/offsets", self._offsets, "A group's committed offsets", "groups",
               s_obj({"group_id": s_str(), "offsets": s_map(s_map(s_int(-1, (1 << 63) - 1)))}, ("group_id", "offsets"),
                     description="offsets: {topic: {partition: committed offset}}"),
               (group_path, _query("topic", TOPIC, "only this topic")), errors=(404,)),
            Op("POST", "/groups/{group_id}/expire", self._expire, "Expire one member's session now, through the "
               "coordinator's own expiry path: a classic group rebalances without it, a consumer group fences it and bumps "
               "its group epoch; name it by member_id, instance_id or client_id (none: the only member)",
               "groups", s_obj({"member_id": s_str()}, ("member_id",)), (group_path,),
               body=s_obj({"member_id": s_str(minLength=1, maxLength=1024), "instance_id": s_str(minLength=1, maxLength=1024),
                           "client_id": s_str(maxLength=1024)}), errors=(404, 409)),
            Op("POST", "/groups/{group_id}/rebalance", self._rebalance,
               "Make a group rebalance: a classic group (Stable or CompletingRebalance) goes to PreparingRebalance; a "
               "consumer group (not Empty) gets a group epoch bump and a new target assignment", "groups",
               s_obj({"state": s_str(enum=list(GROUP_STATES))}, ("state",)), (group_path,),
               body=s_obj({"reason": s_str(minLength=1, maxLength=1024)}), errors=(404, 409)),
            Op("POST", "/groups/{group_id}/coordinator", self._move_coordinator,
               "Move a group's coordinator to another broker (clients get NOT_COORDINATOR and look it up again)",
               "faults", s_obj({"previous": s_int(0, MAX_I32), "coordinator": s_int(0, MAX_I32)}, ("previous", "coordinator")),
               (group_path,), body=s_obj({"broker_id": BROKER_ID}, ("broker_id",)), body_required=True,
               errors=(404, 409)),
            Op("GET", "/groups/{group_id}/wait", self._wait_group,
               "Wait until the group is in a state (of its type, with a member count, a generation, every member "
               "reconciled); 408 when the timeout passes, 409 for reconciled=true on a classic group",
               "groups", ref("Group"),
               (group_path,
                _query("state", s_str(enum=[*GROUP_STATES, "any"], default="Stable"), "a state of either kind, or any"),
                _query("members", s_int(0, MAX_I32), "exactly this many members"),
                _query("generation_at_least", s_int(0, MAX_I32), "a classic group's generation, a consumer group's group epoch"),
                _query("type", GROUP_TYPE, "only a group of this type"),
                _query("reconciled", s_bool(default=False),
                       "a consumer group only: every member STABLE at the assignment epoch, owning exactly its target"),
                _query("timeout", s_int(0, 300, default=30), "seconds")),
               errors=(408, 409, 422)),
            Op("GET", "/groups/{group_id}/offsets/wait", self._wait_commit,
               "Wait until the group has committed an offset for the topic (the partition; at least the offset)",
               "groups", s_obj({"group_id": s_str(), "topic": s_str(), "offsets": s_map(s_int(-1, (1 << 63) - 1))},
                               ("group_id", "topic", "offsets")),
               (group_path, Param("topic", "query", TOPIC, "the topic", required=True),
                _query("partition", s_int(0, MAX_I32)), _query("offset", s_int(0, (1 << 63) - 1), "at least this offset"),
                _query("timeout", s_int(0, 300, default=30), "seconds")),
               errors=(408,)),
            # faults
            Op("GET", "/faults", self._faults, "Faults in force", "faults", ref("Faults")),
            Op("DELETE", "/faults", self._clear_faults,
               "Remove every pushed error and interceptor and restore the API versions (brokers stay down, "
               "coordinators stay moved)", "faults", ref("Faults")),
            Op("DELETE", "/faults/interceptors/{interceptor_id}", self._remove_interceptor, "Remove one interceptor",
               "faults", None, (_path_param("interceptor_id", s_int(1, (1 << 63) - 1), "the id GET /faults lists"),),
               status=204, errors=(404,)),
            Op("POST", "/faults/errors", self._push_errors,
               "The next requests of an API fail with these error codes, one each, in order (cluster, broker or "
               "partition level: mockbroker/faults.py)", "faults", ref("Faults"),
               body=s_obj({
                   "api": API_NAME, "errors": s_arr(ERROR_NAME, minItems=1, maxItems=1000,
                                                    description="Kafka error names (NOT_COORDINATOR), used in order"),
                   "broker": s_null(BROKER_ID), "topic": s_null(TOPIC), "partition": s_null(s_int(0, MAX_I32)),
               }, ("api", "errors")), body_required=True, status=201, errors=(404, 422)),
            Op("POST", "/faults/latency", self._latency,
               "Hold every request of an API (all: null) on a broker (all: null) this many ms before answering",
               "faults", ref("Interceptor"),
               body=s_obj({"ms": {"type": "number", "minimum": 0, "maximum": 600_000},
                           "api": s_null(API_NAME), "broker": s_null(BROKER_ID)}, ("ms",)),
               body_required=True, status=201, errors=(404,)),
            Op("POST", "/faults/disconnect", self._disconnect,
               "Close the connection of each of the next `count` matching requests, unanswered", "faults",
               s_obj({"interceptors": s_arr(ref("Interceptor"))}, ("interceptors",)),
               body=s_obj({**api_filter["properties"], "count": count}), status=201, errors=(404,)),
            Op("POST", "/faults/drop", self._drop,
               "Never answer the next `count` matching requests (the client's request times out)", "faults",
               s_obj({"interceptors": s_arr(ref("Interceptor"))}, ("interceptors",)),
               body=s_obj({**api_filter["properties"], "count": count}), status=201, errors=(404,)),
            Op("POST", "/faults/close-connections", self._close_connections,
               "Close every client connection now (of one broker, or all); listeners stay open", "faults",
               s_obj({"closed": s_int(0, MAX_I32)}, ("closed",)), body=s_obj({"broker": s_null(BROKER_ID)}), errors=(404,)),
            Op("POST", "/faults/api-versions", self._cap_api_version,
               "Serve and advertise an API only up to a version (null: back to the configured range)", "faults",
               ref("Faults"), body=s_obj({"api": API_NAME, "max_version": s_null(s_int(-1, 32767))}, ("api", "max_version")),
               body_required=True),
            # clock
            Op("GET", "/clock", self._clock, "The cluster's clock", "clock", ref("Clock")),
            Op("POST", "/clock/advance", self._advance,
               "Move a manual clock (serve --manual-clock) forward, firing every timer that falls due; 409 on real time",
               "clock", ref("Clock"), body=s_obj({"ms": s_int(0, MAX_ADVANCE_MS, description="at most a day per call")}, ("ms",)),
               body_required=True,
               errors=(409,)),
            # events and requests
            Op("GET", "/events", self._events, "The event log (docs/events.md), filtered", "events",
               s_obj({"events": s_arr(ref("Event")), "last_seq": s_int(0, (1 << 63) - 1)}, ("events", "last_seq")),
               (*_event_filters(), _query("limit", s_int(1, 100_000, default=10_000), "at most this many (the oldest first)"))),
            Op("GET", "/events/wait", self._wait_event, "Wait for the first event of a type after since_seq", "events",
               ref("Event"),
               (Param("type", "query", s_str(minLength=1, maxLength=200), 'an event type, or a prefix ending in "."', required=True),
                _query("group_id", GROUP_ID), _query("since_seq", s_int(0, (1 << 63) - 1, default=0)),
                _query("timeout", s_int(0, 300, default=30), "seconds")),
               errors=(408,)),
            Op("GET", "/events/stream", self._event_stream,
               "The event log as Server-Sent Events: the past events after since_seq (or Last-Event-ID), then each "
               "new one as it happens; `id` is the event's seq, `data` its JSON", "events", s_str(),
               _event_filters(), content_type="text/event-stream"),
            Op("GET", "/requests", self._requests, "The request log (off until PUT /requests/log turns it on)", "events",
               s_obj({"enabled": s_bool(), "requests": s_arr(ref("Request"))}, ("enabled", "requests")),
               (_query("api", API_NAME), _query("broker", BROKER_ID), _query("client_id", s_str(maxLength=1024)),
                _query("error", ERROR_NAME, "a Kafka error name found in the response"),
                _query("outcome", s_str(enum=["pending", "answered", "intercepted", "dropped", "closed", "failed"])),
                _query("since_seq", s_int(0, (1 << 63) - 1, default=0)),
                _query("limit", s_int(1, 100_000, default=10_000)))),
            Op("GET", "/requests/wait", self._wait_request,
               "Wait for an answered request of an API in the request log (with an error code in its answer)",
               "events", ref("Request"),
               (Param("api", "query", API_NAME, required=True), _query("error", ERROR_NAME), _query("broker", BROKER_ID),
                _query("client_id", s_str(maxLength=1024)), _query("since_seq", s_int(0, (1 << 63) - 1, default=0)),
                _query("timeout", s_int(0, 300, default=30), "seconds")),
               errors=(408,)),
            Op("PUT", "/requests/log", self._request_log, "Turn the request log on or off", "events", ok,
               body=s_obj({"enabled": s_bool()}, ("enabled",)), body_required=True),
        ]

    # -- handlers: health ------------------------------------------------------------------------------

    async def _healthz(self, call: Call) -> Any:
        return {"status": "ok"}

    async def _readyz(self, call: Call) -> Any:
        snap = await self.control.describe_cluster()
        up = sum(b.up for b in snap.brokers)
        body = {"ready": self.ready and up > 0, "bootstrap_servers": self.cluster.bootstrap_servers, "brokers_up": up}
        return Reply(200 if body["ready"] else 503, body)

    async def _metrics(self, call: Call) -> web.StreamResponse:
        text = await self.metrics.render(self.cluster)
        return web.Response(body=text.encode(), headers={"Content-Type": PROMETHEUS_TEXT})

    async def _openapi(self, call: Call) -> Any:
        return self.openapi()

    # -- handlers: cluster -----------------------------------------------------------------------------

    async def _cluster(self, call: Call) -> Any:
        snap = await self.control.describe_cluster()
        return {**asdict(snap), "bootstrap_servers": self.cluster.bootstrap_servers}

    async def _brokers(self, call: Call) -> Any:
        return {"brokers": [asdict(b) for b in (await self.control.describe_cluster()).brokers]}

    async def _broker(self, call: Call) -> Any:
        for b in (await self.control.describe_cluster()).brokers:
            if b.node_id == call.path["broker_id"]:
                return asdict(b)
        raise NotFound(f"no broker {call.path['broker_id']}; brokers are {sorted(self.cluster.brokers)}")

    async def _broker_down(self, call: Call) -> Any:
        return {"leaders_moved": await self.control.broker_down(call.path["broker_id"])}

    async def _broker_up(self, call: Call) -> Any:
        return {"leaders_moved": await self.control.broker_up(call.path["broker_id"])}

    # -- handlers: topics and records --------------------------------------------------------------------

    async def _topics(self, call: Call) -> Any:
        topics = await self.control.topics(include_internal=call.query.get("internal", False))
        return {"topics": [asdict(t) for t in topics.values()]}

    async def _create_topic(self, call: Call) -> Any:
        b = call.body
        snap = await self.control.create_topic(b["name"], b.get("partitions", 1), b.get("replication_factor", 1), b.get("configs"))
        return asdict(snap)

    async def _topic(self, call: Call) -> Any:
        return asdict(await self.control.topic(call.path["topic"]))

    async def _delete_topic(self, call: Call) -> Any:
        await self.control.delete_topic(call.path["topic"])
        return Reply(204)

    async def _produce(self, call: Call) -> Any:
        encoding = call.body.get("encoding", "utf-8")
        records = []
        for i, r in enumerate(call.body["records"]):
            where = f"body.records[{i}]"
            item: dict[str, Any] = {
                "key": _decode(r.get("key"), encoding, f"{where}.key"),
                "value": _decode(r.get("value"), encoding, f"{where}.value"),
                "headers": [
                    (h["key"], _decode(h.get("value"), encoding, f"{where}.headers[{j}].value"))
                    for j, h in enumerate(r.get("headers", []))
                ],
            }
            for name in ("partition", "timestamp"):
                if name in r:
                    item[name] = r[name]
            records.append(item)
        placed = await self.control.produce(
            call.path["topic"], records, partition=call.body.get("partition"), compression=call.body.get("compression", "none")
        )
        return {"offsets": [{"partition": p, "offset": o} for p, o in placed]}

    async def _read(self, call: Call) -> Any:
        topic, partition = call.path["topic"], call.path["partition"]
        offset = call.query.get("offset", 0)
        encoding = call.query.get("encoding", "utf-8")
        records = await self.control.read(topic, partition, offset, call.query.get("limit", 100))
        end = (await self.control.log_end_offsets(topic))[partition]
        return {
            "records": [_record_json(r, encoding) for r in records],
            "next_offset": records[-1].offset + 1 if records else max(offset, min(offset, end)),
            "log_end_offset": end,
        }

    async def _move_leader(self, call: Call) -> Any:
        topic, partition = call.path["topic"], call.path["partition"]
        epoch = await self.control.move_leader(topic, partition, call.body.get("broker_id"))
        leader = (await self.control.topic(topic)).partitions[partition].leader_id
        return {"leader_id": leader, "leader_epoch": epoch}

    # -- handlers: groups --------------------------------------------------------------------------------

    async def _groups(self, call: Call) -> Any:
        wanted_type, wanted_state = call.query.get("type"), call.query.get("state")
        out = []
        for group_id, listing in (await self.control.groups()).items():
            if (wanted_type is not None and listing.type != wanted_type) or (wanted_state is not None and listing.state != wanted_state):
                continue
            g = await self.control.describe_group(group_id)
            if g is not None:
                out.append({
                    "group_id": g.group_id, "type": g.type, "state": g.state, "generation_id": g.generation_id,
                    "protocol_type": g.protocol_type, "members": len(g.members),
                })  # fmt: skip
        return {"groups": out}

    async def _group_json(self, group_id: str) -> dict[str, Any]:
        g = await self.control.describe_group(group_id)
        if g is None:
            raise NotFound(f"no group {group_id!r}; groups are {sorted(await self.control.groups())}")
        return await self._snapshot_json(g)

    async def _snapshot_json(self, g: AnyGroupSnapshot) -> dict[str, Any]:
        """A snapshot as the API shows it: its to_json(), the coordinator, and for a consumer group
        whether it is reconciled (a property, which to_json() leaves out)."""
        out = {**g.to_json(), "coordinator": await self.control.coordinator(g.group_id)}
        if isinstance(g, ConsumerGroupSnapshot):
            out["reconciled"] = g.reconciled
        return out

    async def _group(self, call: Call) -> Any:
        return await self._group_json(call.path["group_id"])

    async def _offsets(self, call: Call) -> Any:
        group_id = call.path["group_id"]
        committed = await self.control.committed_offsets(group_id, call.query.get("topic"))
        if not committed and await self.control.describe_group(group_id) is None:
            raise NotFound(f"no group {group_id!r}; groups are {sorted(await self.control.groups())}")
        return {"group_id": group_id, "offsets": {t: {str(p): o for p, o in parts.items()} for t, parts in committed.items()}}

    async def _expire(self, call: Call) -> Any:
        b = call.body
        member_id = await self.control.expire_session(
            call.path["group_id"], b.get("member_id"), instance_id=b.get("instance_id"), client_id=b.get("client_id")
        )
        return {"member_id": member_id}

    async def _rebalance(self, call: Call) -> Any:
        reason = call.body.get("reason", "forced over the HTTP control API (POST /groups/{group_id}/rebalance)")
        return {"state": await self.control.force_rebalance(call.path["group_id"], reason)}

    async def _move_coordinator(self, call: Call) -> Any:
        group_id, broker_id = call.path["group_id"], call.body["broker_id"]
        previous = await self.control.move_coordinator(group_id, broker_id)
        return {"previous": previous, "coordinator": await self.control.coordinator(group_id)}

    async def _wait_group(self, call: Call) -> Any:
        q = call.query
        state, group_type = q.get("state", "Stable"), q.get("type")
        if group_type is not None and state != "any" and state not in STATES_BY_TYPE[group_type]:
            raise BadInput(
                "query.state", f"{state} is not a state of a {group_type} group ({', '.join(STATES_BY_TYPE[group_type])})", status=422
            )
        snap = await self.control.wait_for_group(
            call.path["group_id"], None if state == "any" else state, q.get("members"),
            generation_at_least=q.get("generation_at_least"), reconciled=q.get("reconciled", False),
            group_type=group_type, timeout=q.get("timeout", 30),
        )  # fmt: skip
        return await self._snapshot_json(snap)

    async def _wait_commit(self, call: Call) -> Any:
        q, group_id = call.query, call.path["group_id"]
        committed = await self.control.wait_for_commit(
            group_id, q["topic"], q.get("partition"), q.get("offset"), timeout=q.get("timeout", 30)
        )
        return {"group_id": group_id, "topic": q["topic"], "offsets": {str(p): o for p, o in committed.items()}}

    # -- handlers: faults --------------------------------------------------------------------------------

    def _interceptor_json(self, interceptor: Interceptor) -> dict[str, Any]:
        # Keyed by id(): safe, as both maps hold the interceptor (its id cannot be reused meanwhile).
        fault_id = self._ids_by_object.get(id(interceptor))
        if fault_id is None:
            fault_id = self._next_id
            self._next_id += 1
            self._interceptor_ids[fault_id] = interceptor
            self._ids_by_object[id(interceptor)] = fault_id
        return {
            "id": fault_id,
            "name": interceptor.name,
            "api": None if interceptor.api_key is None else APIS[interceptor.api_key].name,
            "broker": interceptor.broker,
            "keep": interceptor.keep,
            "calls": interceptor.calls,
        }

    async def _faults_json(self) -> dict[str, Any]:
        snap = await self.control.faults()
        listed = [i for i in snap.interceptors if not self.metrics.owns(i)]
        # Forget ids of interceptors that are gone (used up one-shots, removed).
        live = {id(i) for i in listed}
        self._interceptor_ids = {k: v for k, v in self._interceptor_ids.items() if id(v) in live}
        self._ids_by_object = {id(v): k for k, v in self._interceptor_ids.items()}
        return {
            "pending_errors": snap.pending_errors,
            "interceptors": [self._interceptor_json(i) for i in listed],
            "brokers_down": list(snap.brokers_down),
            "coordinator_moves": snap.coordinator_moves,
            "api_version_caps": snap.api_version_caps,
        }

    async def _faults(self, call: Call) -> Any:
        return await self._faults_json()

    async def _clear_faults(self, call: Call) -> Any:
        await self.control.clear_faults()
        await self.metrics.install()  # clear_faults removed every interceptor, the metrics' own too
        return await self._faults_json()

    async def _remove_interceptor(self, call: Call) -> Any:
        await self._faults_json()  # refresh the ids
        interceptor = self._interceptor_ids.get(call.path["interceptor_id"])
        if interceptor is None or not interceptor.active:
            raise NotFound(f"no interceptor {call.path['interceptor_id']} in force; GET /faults lists them")
        interceptor.remove()
        return Reply(204)

    async def _push_errors(self, call: Call) -> Any:
        b = call.body
        api = _api(b["api"], "body.api")
        codes = [error_code_of(e) for e in b["errors"]]  # names the schema's enum allows
        topic, partition, broker = b.get("topic"), b.get("partition"), b.get("broker")
        if (topic is None) != (partition is None):
            raise BadInput("body.partition" if partition is None else "body.topic", "topic and partition go together", status=422)
        self._known_broker(broker, "body.broker")
        try:
            await self.control.push_errors(api, *codes, broker=broker, topic=topic, partition=partition)
        except ValueError as exc:  # an API without an error field for this level: Kafka's shapes refuse it
            raise BadInput("body.topic" if topic is not None else "body.api", str(exc), status=422) from None
        return await self._faults_json()

    async def _latency(self, call: Call) -> Any:
        b = call.body
        api = None if b.get("api") is None else _api(b["api"], "body.api")
        self._known_broker(b.get("broker"), "body.broker")
        interceptor = await self.control.set_latency(b["ms"], api=api, broker=b.get("broker"))
        return self._interceptor_json(interceptor)

    async def _disconnect(self, call: Call) -> Any:
        api, broker, count = self._request_filter(call.body)
        made = await self.control.disconnect_next(api, broker=broker, count=count)
        return {"interceptors": [self._interceptor_json(i) for i in made]}

    async def _drop(self, call: Call) -> Any:
        api, broker, count = self._request_filter(call.body)
        made = await self.control.drop_next(api, broker=broker, count=count)
        return {"interceptors": [self._interceptor_json(i) for i in made]}

    async def _close_connections(self, call: Call) -> Any:
        broker = call.body.get("broker")
        self._known_broker(broker, "body.broker")
        return {"closed": await self.control.disconnect_all(broker)}

    async def _cap_api_version(self, call: Call) -> Any:
        await self.control.cap_api_version(_api(call.body["api"], "body.api"), call.body["max_version"])
        return await self._faults_json()

    def _request_filter(self, body: Mapping[str, Any]) -> tuple[int | None, int | None, int]:
        api = None if body.get("api") is None else _api(body["api"], "body.api")
        self._known_broker(body.get("broker"), "body.broker")
        return api, body.get("broker"), body.get("count", 1)

    def _known_broker(self, broker: int | None, where: str) -> None:
        if broker is not None and broker not in self.cluster.brokers:
            raise BadInput(where, f"no broker {broker}; brokers are {sorted(self.cluster.brokers)}", status=404)

    # -- handlers: clock, events, requests -----------------------------------------------------------------

    async def _clock(self, call: Call) -> Any:
        snap = await self.control.describe_cluster()
        return {"manual": snap.manual_clock, "now_ms": snap.now_ms}

    async def _advance(self, call: Call) -> Any:
        if not (await self.control.describe_cluster()).manual_clock:
            raise ControlError("the cluster runs on real time; start it with --manual-clock to advance its clock by hand")
        now = await self.control.advance(call.body["ms"])
        return {"manual": True, "now_ms": now}

    async def _events(self, call: Call) -> Any:
        q = call.query
        events = await self.control.events(q.get("type"), q.get("group_id"), q.get("since_seq", 0))
        return {"events": [e.to_json() for e in events[: q.get("limit", 10_000)]], "last_seq": await self.control.last_event_seq()}

    async def _event_stream(self, call: Call) -> web.StreamResponse:
        q = call.query
        since = q.get("since_seq", 0)
        last_id = call.request.headers.get("Last-Event-ID")
        if last_id is not None:
            since = _param(Param("Last-Event-ID", "header", s_int(0, (1 << 63) - 1)), last_id)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        await response.prepare(call.request)
        wake = asyncio.Event()
        unsubscribe = self.cluster.events.subscribe(lambda _: wake.set())
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await response.write(b": mockbroker event stream\n\n")
            while not self._closing.is_set():
                wake.clear()
                batch = await self.control.events(q.get("type"), q.get("group_id"), since)
                # Events filtered out need not be scanned again: move on to the newest seq.
                newest = await self.control.last_event_seq()
                for event in batch:
                    await response.write(_sse(event))
                since = max(since, newest)
                waiter = asyncio.ensure_future(wake.wait())
                done, _ = await asyncio.wait({waiter, closing}, timeout=SSE_KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if not done:
                    await response.write(b": keep-alive\n\n")
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            unsubscribe()
            closing.cancel()
        return response

    async def _wait_event(self, call: Call) -> Any:
        q = call.query
        event = await self.control.wait_for_event(q["type"], q.get("group_id"), since_seq=q.get("since_seq", 0), timeout=q.get("timeout", 30))
        return event.to_json()

    async def _wait_request(self, call: Call) -> Any:
        q = call.query
        record = await self.control.wait_for_request(
            _api(q["api"], "query.api"), since_seq=q.get("since_seq", 0), error=q.get("error"), broker=q.get("broker"),
            client_id=q.get("client_id"), timeout=q.get("timeout", 30),
        )  # fmt: skip
        return record.to_json()

    async def _requests(self, call: Call) -> Any:
        q = call.query
        api = None if q.get("api") is None else _api(q["api"], "query.api")
        error = None if q.get("error") is None else error_code_of(q["error"])
        found = await self.control.requests(
            api, broker=q.get("broker"), client_id=q.get("client_id"), error=error, outcome=q.get("outcome"),
            since_seq=q.get("since_seq", 0),
        )  # fmt: skip
        return {"enabled": self.control.hooks.log.enabled, "requests": [r.to_json() for r in found[: q.get("limit", 10_000)]]}

    async def _request_log(self, call: Call) -> Any:
        await self.control.enable_request_log(call.body["enabled"])
        return {"ok": True}

    # -- the document --------------------------------------------------------------------------------------

    def openapi(self) -> dict[str, Any]:
        paths: dict[str, dict[str, Any]] = {}
        for op in self.ops:
            paths.setdefault(op.path, {})[op.method.lower()] = self._operation_doc(op)
        doc: dict[str, Any] = {
            "openapi": "3.0.3",
            "info": {
                "title": "mockbroker control API",
                "version": __version__,
                "description": "Drive a running mockbroker cluster over HTTP: the same calls as the Python "
                "control API (mockbroker.control). Errors are {error, field?, kafka_error?}.",
            },
            "servers": [{"url": "/"}],
            "paths": paths,
            "components": {"schemas": COMPONENTS},
        }
        if self.token is not None:
            doc["components"] = {**doc["components"], "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}}
            doc["security"] = [{"bearer": []}]
        return doc

    def _operation_doc(self, op: Op) -> dict[str, Any]:
        error = {"application/json": {"schema": ref("Error")}}
        responses: dict[str, Any] = {}
        ok: dict[str, Any] = {"description": op.summary}
        if op.response is not None:
            ok["content"] = {op.content_type: {"schema": op.response}}
        responses[str(op.status)] = ok
        if op.path == "/readyz":
            responses["503"] = {"description": "not ready", "content": {"application/json": {"schema": op.response}}}
        codes = set(op.errors) - {503}
        if op.params or op.body is not None:
            codes.add(400)
        if op.body is not None:
            codes.add(413)
        if self.token is not None and op.path not in UNPROTECTED:
            codes.add(401)
        for code in sorted(codes):
            responses[str(code)] = {"description": _REASONS.get(code, "error"), "content": error}
        doc: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary, "tags": [op.tag], "responses": responses}
        if op.params:
            doc["parameters"] = [
                {"name": p.name, "in": p.where, "required": p.required, "schema": p.schema,
                 **({"description": p.description} if p.description else {})}
                for p in op.params
            ]  # fmt: skip
        if op.body is not None:
            doc["requestBody"] = {"required": op.body_required, "content": {"application/json": {"schema": op.body}}}
        if op.path in UNPROTECTED:
            doc["security"] = []
        return doc


_REASONS = {
    400: "bad input; `field` names it",
    401: "missing or wrong bearer token",
    404: "no such broker, topic, partition, group, member or fault",
    408: "the wait timed out",
    409: "the cluster's state refuses this",
    413: "request body too large",
    422: "well-formed, but Kafka's rules refuse it (a topic config out of range, a record too large, ...); "
    "for a read: a record that cannot be shown in this encoding",
}
# Kafka's refusals of a schema-valid topic: 422 (the request is well-formed; Kafka's rules say no).
_TOPIC_ERRORS: dict[ErrorCode, tuple[int, str | None]] = {
    ErrorCode.TOPIC_ALREADY_EXISTS: (409, "body.name"),
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: (404, None),
    ErrorCode.INVALID_TOPIC_EXCEPTION: (422, "body.name"),
    ErrorCode.INVALID_PARTITIONS: (422, "body.partitions"),
    ErrorCode.INVALID_REPLICATION_FACTOR: (422, "body.replication_factor"),
    ErrorCode.INVALID_CONFIG: (422, "body.configs"),
}


def _event_filters() -> tuple[Param, ...]:
    return (
        _query("type", s_str(minLength=1, maxLength=200), 'an event type, or a prefix ending in "." ("member.")'),
        _query("group_id", GROUP_ID, "only this group's events"),
        _query("since_seq", s_int(0, (1 << 63) - 1, default=0), "only events after this seq"),
    )


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


def _param(param: Param, raw: str) -> Any:
    where = f"{param.where}.{param.name}"
    kind = _resolve(param.schema).get("type")
    value: Any = raw
    if kind == "integer":
        if not re.fullmatch(r"-?[0-9]{1,19}", raw.strip()):
            raise BadInput(where, f"must be an integer, not {raw!r}")
        value = int(raw)
    elif kind == "boolean":
        if raw.lower() not in ("true", "false"):
            raise BadInput(where, f"must be true or false, not {raw!r}")
        value = raw.lower() == "true"
    return check(param.schema, value, where)


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


def _api(name: str, where: str) -> int:
    try:
        return api_key_of(name)
    except ValueError as exc:
        raise BadInput(where, str(exc)) from None


def _decode(value: str | None, encoding: str, where: str) -> bytes | None:
    if value is None:
        return None
    if encoding == "base64":
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):  # schema-valid (a string), but not what "encoding" says
            raise BadInput(where, "not valid base64 (encoding is base64)", status=422) from None
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: JSON allows it, UTF-8 cannot carry it
        raise BadInput(where, "not encodable as UTF-8 (a lone surrogate?); send base64") from None


def _encode(value: bytes | None, encoding: str, what: str) -> str | None:
    if value is None:
        return None
    if encoding == "base64":
        return base64.b64encode(value).decode("ascii")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput("query.encoding", f"{what} is not valid UTF-8; ask with encoding=base64", status=422) from None


def _record_json(r: ConsumedRecord, encoding: str) -> dict[str, Any]:
    at = f"the record at offset {r.offset}"
    return {
        "topic": r.topic,
        "partition": r.partition,
        "offset": r.offset,
        "timestamp": r.timestamp,
        "key": _encode(r.key, encoding, f"the key of {at}"),
        "value": _encode(r.value, encoding, f"the value of {at}"),
        "headers": [{"key": k, "value": _encode(v, encoding, f"header {k!r} of {at}")} for k, v in r.headers],
        "leader_epoch": r.leader_epoch,
        "compression": r.compression,
    }


def _sse(event: Event) -> bytes:
    return f"id: {event.seq}\ndata: {json.dumps(event.to_json(), separators=(',', ':'))}\n\n".encode()


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


# -- metrics ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Metrics:
    """Counters for /metrics, fed by one observing interceptor (``control.intercept``) and one
    event-log listener; gauges are read from the control API when scraped."""

    control: Control
    requests: Counter[int] = field(default_factory=Counter)  # api key -> requests seen
    errors: Counter[tuple[int, int]] = field(default_factory=Counter)  # (api key, error code) -> responses
    bytes_in: Counter[str] = field(default_factory=Counter)  # topic -> Produce record bytes appended
    bytes_out: Counter[str] = field(default_factory=Counter)  # topic -> Fetch record bytes returned
    events: Counter[str] = field(default_factory=Counter)  # event type -> count
    # (group, type) -> rebalances: a classic group's transitions to PreparingRebalance, a consumer
    # group's group epoch bumps (KIP-848's rebalance: a new target assignment for a new epoch)
    rebalances: Counter[tuple[str, str]] = field(default_factory=Counter)
    _interceptor: Interceptor | None = None
    _unsubscribe: Callable[[], None] | None = None
    _after: dict[int, After] = field(default_factory=dict)

    async def install(self) -> None:
        if self._interceptor is None or not self._interceptor.active:
            self._interceptor = await self.control.intercept(None, self._observe, keep=True)
            self._interceptor.name = "metrics (the admin API's /metrics; not a fault)"
        if self._unsubscribe is None:
            self._unsubscribe = self.control.cluster.events.subscribe(self._on_event)

    def uninstall(self) -> None:
        if self._interceptor is not None:
            self._interceptor.remove()
            self._interceptor = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def owns(self, interceptor: Interceptor) -> bool:
        return interceptor is self._interceptor

    def _observe(self, seen: Intercepted) -> After:
        key = seen.api_key
        self.requests[key] += 1
        if key == PRODUCE_KEY:
            request = seen.request
            return After(lambda response: self._produced(request, response))
        after = self._after.get(key)
        if after is None:
            after = self._after[key] = After(self._answered_edit(key))
        return after

    def _answered_edit(self, key: int) -> Callable[[Any], None]:
        def edit(response: Any) -> None:
            for code in response_error_codes(response):
                self.errors[(key, code)] += 1
            if key == FETCH_KEY:
                for topic in response.responses:
                    name = topic.topic or str(topic.topic_id)
                    for p in topic.partitions:
                        if not p.error_code:
                            self.bytes_out[name] += _size(p.records)

        return edit

    def _produced(self, request: Any, response: Any) -> None:
        if response is None:  # acks=0
            return
        for code in response_error_codes(response):
            self.errors[(PRODUCE_KEY, code)] += 1
        failed = {
            (t.name or str(t.topic_id), p.index) for t in response.responses for p in t.partition_responses if p.error_code
        }
        for t in request.topic_data:
            name = t.name or str(t.topic_id)
            for p in t.partition_data:
                if (name, p.index) not in failed:
                    self.bytes_in[name] += _size(p.records)

    def _on_event(self, event: Event) -> None:
        self.events[event.type] += 1
        if not event.group_id:
            return
        if event.type == "group.transition" and event.details.get("to_state") == "PreparingRebalance":
            self.rebalances[(event.group_id, GROUP_TYPE_CLASSIC)] += 1
        elif event.type == "consumer_group.epoch_bumped":
            self.rebalances[(event.group_id, GROUP_TYPE_CONSUMER)] += 1

    async def render(self, cluster: MockCluster) -> str:
        if self._interceptor is None or not self._interceptor.active:
            await self.install()  # someone cleared every interceptor from Python; count again from now
        c = self.control
        snap = await c.describe_cluster()
        topics = await c.topics()
        states: Counter[tuple[str, str]] = Counter({(t, s): 0 for t, names in STATES_BY_TYPE.items() for s in names})
        members: dict[tuple[str, str], int] = {}
        for group_id in await c.groups():
            g = await c.describe_group(group_id)
            if g is not None:
                states[(g.type, g.state)] += 1
                members[(group_id, g.type)] = len(g.members)
        out: list[str] = []

        def metric(name: str, kind: str, help: str, samples: list[tuple[dict[str, str], float | int]]) -> None:
            out.append(f"# HELP {name} {help}")
            out.append(f"# TYPE {name} {kind}")
            for labels, value in samples:
                text = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
                out.append(f"{name}{{{text}}} {value}" if text else f"{name} {value}")

        metric("mockbroker_info", "gauge", "mockbroker version and cluster id",
               [({"version": __version__, "cluster_id": snap.cluster_id}, 1)])
        metric("mockbroker_requests_total", "counter", "Kafka requests received, by API",
               [({"api": APIS[k].name}, n) for k, n in sorted(self.requests.items())])
        metric("mockbroker_request_errors_total", "counter",
               "Responses carrying an error code, by API and Kafka error name (once per distinct code per response)",
               [({"api": APIS[k].name, "error": _error_name(e)}, n) for (k, e), n in sorted(self.errors.items())])
        metric("mockbroker_bytes_in_total", "counter", "Record batch bytes appended by Produce, by topic",
               [({"topic": t}, n) for t, n in sorted(self.bytes_in.items())])
        metric("mockbroker_bytes_out_total", "counter", "Record batch bytes returned by Fetch, by topic",
               [({"topic": t}, n) for t, n in sorted(self.bytes_out.items())])
        metric("mockbroker_groups", "gauge", "Groups by type (classic, consumer) and state",
               [({"type": t, "state": s}, n) for (t, s), n in sorted(states.items())])
        metric("mockbroker_group_members", "gauge", "Members of each group",
               [({"group": g, "type": t}, n) for (g, t), n in sorted(members.items())])
        metric("mockbroker_rebalances_total", "counter",
               "Rebalances started, by group: a classic group's transitions to PreparingRebalance, a consumer group's "
               "group epoch bumps", [({"group": g, "type": t}, n) for (g, t), n in sorted(self.rebalances.items())])
        metric("mockbroker_events_total", "counter", "Events recorded in the event log, by type",
               [({"type": t}, n) for t, n in sorted(self.events.items())])
        metric("mockbroker_brokers", "gauge", "Brokers up and down",
               [({"state": "up"}, sum(b.up for b in snap.brokers)), ({"state": "down"}, sum(not b.up for b in snap.brokers))])
        metric("mockbroker_topics", "gauge", "Topics (internal ones left out)", [({}, len(topics))])
        metric("mockbroker_partitions", "gauge", "Partitions of those topics", [({}, sum(len(t.partitions) for t in topics.values()))])
        metric("mockbroker_broker_bugs_total", "counter", "Unexpected exceptions while serving (each one is a mockbroker bug)",
               [({}, len(cluster.internal_errors))])
        return "\n".join(out) + "\n"


# Where error codes can be in each response class: its fields that are an error code (ERROR),
# or may hold one (ONE nested message, or a LIST of them), in field order. Worked out once per
# class from its type hints, so counting errors walks only the fields that matter
# (intercept.error_codes, which asks dataclasses.fields() of every object, made a served
# Metadata round trip ~1.6x slower; this walk costs a few per cent).
ERROR, ONE, LIST = 0, 1, 2
_Plan = tuple[tuple[str, int], ...] | None  # None: hints unresolvable, use the generic walk
_PLANS: dict[type, _Plan] = {}


def response_error_codes(response: Any) -> tuple[int, ...]:
    """The distinct non-zero error codes anywhere in ``response``, in order (as
    mockbroker.intercept.error_codes answers, faster)."""
    seen: dict[int, None] = {}
    _walk(response, seen)
    return tuple(seen)


def _walk(obj: Any, seen: dict[int, None]) -> None:
    cls = type(obj)
    plan = _PLANS[cls] if cls in _PLANS else _plan(cls)
    if plan is None:
        seen.update(dict.fromkeys(error_codes(obj)))
        return
    for name, kind in plan:
        value = getattr(obj, name)
        if kind == ERROR:
            if value:
                seen[int(value)] = None
        elif value is None:
            continue
        elif kind == LIST:
            for item in value:
                _walk(item, seen)
        else:
            _walk(value, seen)


def _plan(cls: type, busy: frozenset[type] = frozenset()) -> _Plan:
    if cls in _PLANS:
        return _PLANS[cls]
    if not dataclasses.is_dataclass(cls):
        return ()
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # unresolvable hints: the generic walk (always right, only slower)
        _PLANS[cls] = None
        return None
    steps: list[tuple[str, int]] = []
    for f in dataclasses.fields(cls):
        if f.name == "error_code":
            steps.append((f.name, ERROR))
            continue
        hint = hints[f.name]
        is_list = typing.get_origin(hint) is list
        inner = typing.get_args(hint)[0] if is_list else hint
        candidates = typing.get_args(inner) if typing.get_origin(inner) in (typing.Union, types.UnionType) else (inner,)
        for item in candidates:
            if isinstance(item, type) and dataclasses.is_dataclass(item) and item not in busy:
                sub = _plan(item, busy | {cls})
                if sub is None or sub:
                    steps.append((f.name, LIST if is_list else ONE))
                    break
    plan: _Plan = tuple(steps)
    _PLANS[cls] = plan
    return plan


def _size(records: Any) -> int:
    if records is None:
        return 0
    if isinstance(records, memoryview):
        return records.nbytes
    if isinstance(records, bytes | bytearray):
        return len(records)
    return sum(_size(r) for r in records)


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
