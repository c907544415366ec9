"""Cross-check of the KIP-848 messages against kio's generated classes (a test-only oracle).

Our ConsumerGroupHeartbeat (key 68) and ConsumerGroupDescribe (key 69) specs (and the KIP-1071
StreamsGroupHeartbeat/StreamsGroupDescribe ones, keys 88 and 89) are hand-written
(mockbroker_protocol/specs/*.json); kio generates its classes from Apache Kafka's own JSON specs. Two checks,
at every version we serve:

- schema: field by field, in order and recursively into nested structs, the same names, kafka
  types, nullability, tags and defaults (plus api key, flexibility and header versions);
- bytes: a random message of ours encodes to exactly kio's serialization of the equivalent kio
  object, and kio parses our bytes back to that object.

kio's conventions, mapped back here: timedelta fields drop the ``_ms`` suffix
(``throttle_time`` for ThrottleTimeMs, kafka type "timedelta_i32"), error codes are its
``ErrorCode`` enum (kafka type "error_code"), arrays are tuples, a zero UUID is ``None`` (its uuid
fields are typed ``UUID | None`` though Kafka's uuid is never nullable), and struct fields carry
no "kafka_type" metadata (their type is the nested dataclass).
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib
import io
import types
import uuid
from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple, Union, get_args, get_origin

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer
from kio.static.primitive import i8, i16, i32, i32Timedelta, i64, i64Timedelta

from mockbroker_protocol.headers import request_header_version, response_header_version
from mockbroker_protocol.messages import consumer_group_describe as cgd
from mockbroker_protocol.messages import consumer_group_heartbeat as cgh
from mockbroker_protocol.messages import streams_group_describe as sgd
from mockbroker_protocol.messages import streams_group_heartbeat as sgh
from mockbroker_protocol.primitives import ZERO_UUID
from mockbroker_protocol.schema import FieldSpec
from tests.protocol import message_strategies as ms

MESSAGES: list[type] = [
    cgh.ConsumerGroupHeartbeatRequest,
    cgh.ConsumerGroupHeartbeatResponse,
    cgd.ConsumerGroupDescribeRequest,
    cgd.ConsumerGroupDescribeResponse,
    sgh.StreamsGroupHeartbeatRequest,
    sgh.StreamsGroupHeartbeatResponse,
    sgd.StreamsGroupDescribeRequest,
    sgd.StreamsGroupDescribeResponse,
]
CASES = [
    (cls, v)
    for cls in MESSAGES
    for v in range(cls.SPEC.valid_versions[0], cls.SPEC.valid_versions[1] + 1)  # type: ignore[attr-defined]
]
IDS = [f"{cls.__name__}-v{v}" for cls, v in CASES]

# kio's kafka types that stand for one of the spec's plain types.
KIO_TYPE_ALIASES = {
    "timedelta_i32": "int32",
    "timedelta_i64": "int64",
    "error_code": "int16",
    "datetime_i64": "int64",
}
IMPLICIT_DEFAULTS: dict[str, Any] = {
    "int8": 0,
    "int16": 0,
    "int32": 0,
    "int64": 0,
    "uint16": 0,
    "uint32": 0,
    "float64": 0.0,
    "bool": False,
    "string": "",
    "bytes": b"",
    "uuid": ZERO_UUID,
}


def test_cases_cover_both_versions() -> None:
    # Guard against the parametrisation silently shrinking (the tests must not skip).
    assert {v for _, v in CASES} == {0, 1}
    assert len(CASES) == 12  # 4 KIP-848 messages at v0-1, 4 KIP-1071 messages at v0


def kio_class(cls: type, version: int) -> Any:
    """kio's class for one of our top-level messages at ``version``."""
    package = cls.__module__.rsplit(".", 1)[1]  # consumer_group_heartbeat, ...
    kind = "request" if cls.__name__.endswith("Request") else "response"
    mod = importlib.import_module(f"kio.schema.{package}.v{version}.{kind}")
    return getattr(mod, cls.__name__)


def our_struct(cls: type, f: FieldSpec) -> type:
    return getattr(importlib.import_module(cls.__module__), f.element_type)  # type: ignore[no-any-return]


# -- kio field introspection ---------------------------------------------------------------------


def _unwrap_optional(tp: Any) -> tuple[Any, bool]:
    if get_origin(tp) in (types.UnionType, Union):
        args = [a for a in get_args(tp) if a is not type(None)]
        assert len(args) == 1, tp
        return args[0], True
    return tp, False


class KioField(NamedTuple):
    field: dataclasses.Field[Any]
    kafka_type: str  # "struct" for nested entities
    is_array: bool
    nullable: bool
    struct: Any  # the nested kio dataclass, or None

    @property
    def our_name(self) -> str:
        """Our attribute name: kio drops the ``_ms`` of fields it types as timedeltas."""
        if self.kafka_type.startswith("timedelta_"):
            return self.field.name + "_ms"
        return self.field.name


def kio_field(f: dataclasses.Field[Any]) -> KioField:
    tp, nullable = _unwrap_optional(f.type)
    is_array = get_origin(tp) is tuple
    if is_array:
        elem, ellipsis = get_args(tp)
        assert ellipsis is Ellipsis, tp
    else:
        elem = tp
    if dataclasses.is_dataclass(elem):
        return KioField(f, "struct", is_array, nullable, elem)
    kafka_type = f.metadata["kafka_type"]
    if kafka_type == "uuid":
        # kio types every uuid field ``UUID | None`` (None standing for the zero UUID).
        nullable = False
    return KioField(f, kafka_type, is_array, nullable, None)


def kio_fields(kcls: Any) -> list[KioField]:
    return [kio_field(f) for f in dataclasses.fields(kcls)]


# -- schema ---------------------------------------------------------------------------------------


class _Unknown:
    """A default kio does not state (it emits none for struct-typed fields): matches anything."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "<not stated by kio>"


UNKNOWN = _Unknown()


class Row(NamedTuple):
    path: str  # e.g. "groups[].members[].assignment.topic_partitions[].topic_id"
    type: str  # e.g. "int32", "[]string", "struct", "[]struct"
    nullable: bool
    tag: int | None
    default: Any


def _from_kio_value(kafka_type: str, value: Any) -> Any:
    """A kio default in our terms."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return [_from_kio_value(kafka_type, v) for v in value]
    if kafka_type.startswith("timedelta_"):
        return round(value / datetime.timedelta(milliseconds=1))
    if kafka_type == "error_code":
        return int(value)
    return value


def our_rows(cls: type, version: int, prefix: str = "") -> list[Row]:
    rows = []
    for f in cls.FIELDS:  # type: ignore[attr-defined]
        if not f.present(version):
            continue
        path = prefix + f.name
        if f.is_struct:
            # FieldSpec.default of a non-nullable struct is None (the instance gets a fresh
            # struct); what matters is whether the default is null or a struct.
            default = getattr(cls(), f.name)
            default = None if default is None else ([] if f.is_array else "struct")
            type_ = "[]struct" if f.is_array else "struct"
        else:
            default = f.default
            type_ = f.type
        tag = f.tag if f.tagged(version) else None
        rows.append(Row(path, type_, f.nullable(version), tag, default))
        if f.is_struct:
            rows += our_rows(our_struct(cls, f), version, path + ("[]." if f.is_array else "."))
    return rows


def kio_rows(kcls: Any, prefix: str = "") -> list[Row]:
    rows = []
    for kf in kio_fields(kcls):
        f = kf.field
        path = prefix + kf.our_name
        base = KIO_TYPE_ALIASES.get(kf.kafka_type, kf.kafka_type)
        type_ = ("[]" if kf.is_array else "") + base
        raw: Any = f.default
        if f.default_factory is not dataclasses.MISSING:
            raw = f.default_factory()
        if raw is not dataclasses.MISSING:
            default = _from_kio_value(kf.kafka_type, raw)
            if kf.struct is not None and default is not None:
                default = [] if kf.is_array else "struct"
        elif kf.struct is not None:
            # kio's generator emits no default for struct-typed fields, even Kafka's "null".
            default = UNKNOWN
        else:
            default = [] if kf.is_array else IMPLICIT_DEFAULTS[base]
        tag = f.metadata.get("tag")
        rows.append(Row(path, type_, kf.nullable, tag, default))
        if kf.struct is not None:
            rows += kio_rows(kf.struct, path + ("[]." if kf.is_array else "."))
    return rows


def _diff(ours: list[Row], theirs: list[Row]) -> str:
    lines = []
    for i in range(max(len(ours), len(theirs))):
        a = ours[i] if i < len(ours) else None
        b = theirs[i] if i < len(theirs) else None
        if a != b:
            lines.append(f"  #{i}: ours {a}\n       kio  {b}")
    return "\n".join(lines)


@pytest.mark.parametrize(("cls", "version"), CASES, ids=IDS)
def test_schema_matches_kio(cls: Any, version: int) -> None:
    kcls = kio_class(cls, version)
    assert kcls.__api_key__ == cls.SPEC.api_key
    assert kcls.__version__ == version
    assert kcls.__flexible__ == cls.SPEC.flexible(version)
    header = int(kcls.__header_schema__.__module__.split(".")[-2].removeprefix("v"))
    if cls.__name__.endswith("Request"):
        assert header == request_header_version(cls.SPEC.flexible(version))
    else:
        assert header == response_header_version(cls.SPEC.api_key, cls.SPEC.flexible(version))
    ours, theirs = our_rows(cls, version), kio_rows(kcls)
    assert ours == theirs, f"{cls.__name__} v{version} differs from kio (field: ours / kio):\n" + _diff(
        ours, theirs
    )


# -- bytes ----------------------------------------------------------------------------------------

# The only constraint on our random values: kio decodes error codes into its ErrorCode enum, and
# cannot represent (neither build nor read) an int16 that is not one of its members. Timedelta
# fields need none: i32Timedelta takes the whole int32 millisecond range, negatives included
# (checked by the test below), and integers of any int32 size are exact in a timedelta.
ERROR_CODES = st.sampled_from(sorted(int(e) for e in ErrorCode))
OVERRIDES: dict[str, st.SearchStrategy[Any]] = {"ErrorCode": ERROR_CODES}


def _deferred_struct(struct: type, version: int) -> Callable[[], st.SearchStrategy[Any]]:
    return lambda: kio_compatible(struct, version)


@cache
def kio_compatible(cls: type, version: int) -> st.SearchStrategy[Any]:
    """ms.message(cls, version) with OVERRIDES for the fields kio constrains (by kafka name)."""
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    for f in cls.FIELDS:  # type: ignore[attr-defined]
        if not f.present(version):
            continue
        if f.is_struct:
            elem = st.deferred(_deferred_struct(our_struct(cls, f), version))
        else:
            override = OVERRIDES.get(f.kafka_name)
            elem = ms.scalar(f.element_type) if override is None else override
        s = st.lists(elem, max_size=3) if f.is_array else elem
        if f.nullable(version):
            s = st.one_of(st.none(), s)
        kwargs[f.name] = s
    return st.builds(cls, **kwargs)


_KIO_SCALARS: dict[str, Any] = {
    "int8": i8,
    "int16": i16,
    "int32": i32,
    "int64": i64,
    "timedelta_i32": lambda ms_: i32Timedelta.parse(datetime.timedelta(milliseconds=ms_)),
    "timedelta_i64": lambda ms_: i64Timedelta.parse(datetime.timedelta(milliseconds=ms_)),
    "error_code": ErrorCode,
    "uuid": lambda u: None if u == ZERO_UUID else u,
    "bytes": bytes,
    "records": bytes,
}


def to_kio(obj: Any, kcls: Any) -> Any:
    """kio's equivalent of one of our message or struct objects (kio's fields drive it)."""
    kwargs = {}
    for kf in kio_fields(kcls):
        val = getattr(obj, kf.our_name)
        if val is not None:
            if kf.struct is not None:
                val = tuple(to_kio(v, kf.struct) for v in val) if kf.is_array else to_kio(val, kf.struct)
            else:
                conv = _KIO_SCALARS.get(kf.kafka_type, lambda x: x)
                val = tuple(conv(v) for v in val) if kf.is_array else conv(val)
        kwargs[kf.field.name] = val
    return kcls(**kwargs)


def kio_encode(kobj: Any) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(kobj))(buf, kobj)
    return buf.getvalue()


@pytest.mark.parametrize(("cls", "version"), CASES, ids=IDS)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_bytes_match_kio(cls: Any, version: int, data: st.DataObject) -> None:
    ours = data.draw(kio_compatible(cls, version), label="ours")
    kcls = kio_class(cls, version)
    kobj = to_kio(ours, kcls)
    ours_bytes = ours.encode(version)
    assert ours_bytes == kio_encode(kobj)
    back, size = entity_reader(kcls)(ours_bytes, 0)
    assert size == len(ours_bytes)
    assert back == kobj
    assert cls.decode(ours_bytes, version) == ms.normalise(ours, version)


def test_kio_timedeltas_take_negative_milliseconds() -> None:
    """Why the timedelta fields need no constraint: -1 (Kafka's "unchanged") and the int32 ends."""
    for ms_ in (-1, -(2**31), 2**31 - 1):
        msg = cgh.ConsumerGroupHeartbeatRequest(rebalance_timeout_ms=ms_, topic_partitions=[])
        kobj = to_kio(msg, kio_class(cgh.ConsumerGroupHeartbeatRequest, 1))
        data = msg.encode(1)
        assert data == kio_encode(kobj)
        back, _ = entity_reader(type(kobj))(data, 0)
        assert back.rebalance_timeout == datetime.timedelta(milliseconds=ms_)


def test_uuid_zero_is_none_in_kio() -> None:
    topic = uuid.uuid4()
    msg = cgh.ConsumerGroupHeartbeatResponse(
        assignment=cgh.Assignment(
            [
                cgh.ConsumerGroupHeartbeatResponseTopicPartitions(ZERO_UUID, [1]),
                cgh.ConsumerGroupHeartbeatResponseTopicPartitions(topic, [2, 3]),
            ]
        )
    )
    kcls = kio_class(cgh.ConsumerGroupHeartbeatResponse, 0)
    kobj = to_kio(msg, kcls)
    assert [tp.topic_id for tp in kobj.assignment.topic_partitions] == [None, topic]
    assert entity_reader(kcls)(msg.encode(0), 0)[0] == kobj
