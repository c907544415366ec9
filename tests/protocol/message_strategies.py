"""Hypothesis strategies for generated messages, built from each class's FIELDS facts, and a
bridge to kafka-python's message classes (the differential oracle, test-only)."""

from __future__ import annotations

import importlib
import pkgutil
import re
import uuid
from collections.abc import Iterator
from functools import cache
from typing import Any

from hypothesis import strategies as st

import mockbroker_protocol.messages as messages_pkg
from mockbroker_protocol.schema import FieldSpec

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}

# Strings mix ASCII with multi-byte characters; sizes stay small but cross the one-byte
# compact-length boundary (127) now and then.
TEXT = st.one_of(
    st.text(max_size=8),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=120, max_size=140),
)
BINARY = st.one_of(st.binary(max_size=8), st.binary(min_size=126, max_size=130))


def message_modules() -> Iterator[Any]:
    for info in pkgutil.iter_modules(messages_pkg.__path__):
        yield importlib.import_module(f"mockbroker_protocol.messages.{info.name}")


def top_classes() -> list[type]:
    """Every generated top-level class (requests, responses, embedded data)."""
    out = []
    for mod in message_modules():
        for name in mod.__all__:
            cls = getattr(mod, name)
            if hasattr(cls, "SPEC"):
                out.append(cls)
    return sorted(out, key=lambda c: c.__name__)


def cases() -> list[tuple[type, int]]:
    return [(cls, v) for cls in top_classes() for v in range(cls.SPEC.valid_versions[0], cls.SPEC.valid_versions[1] + 1)]


def _struct_class(cls: type, f: FieldSpec) -> type:
    mod = importlib.import_module(cls.__module__)
    return getattr(mod, f.element_type)  # type: ignore[no-any-return]


def scalar(type_: str) -> st.SearchStrategy[Any]:
    if type_ in INT_RANGES:
        lo, hi = INT_RANGES[type_]
        return st.integers(lo, hi)
    if type_ == "bool":
        return st.booleans()
    if type_ == "float64":
        return st.floats(allow_nan=False)
    if type_ == "string":
        return TEXT
    if type_ in ("bytes", "records"):
        return BINARY
    if type_ == "uuid":
        return st.uuids()
    raise ValueError(type_)


@cache
def message(cls: type, version: int) -> st.SearchStrategy[Any]:
    """Random instances of ``cls`` with every field of ``version`` set (others left at default)."""
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    for f in cls.FIELDS:  # type: ignore[attr-defined]
        if not f.present(version):
            continue
        if f.is_struct:
            elem = st.deferred(lambda f=f: message(_struct_class(cls, f), version))
        else:
            elem = scalar(f.element_type)
        s = st.lists(elem, max_size=3) if f.is_array else elem
        if f.nullable(version):
            s = st.one_of(st.none(), s)
        kwargs[f.name] = s
    return st.builds(cls, **kwargs)


def normalise(obj: Any, version: int) -> Any:
    """What decoding ``obj``'s encoding at ``version`` must give: fields the version lacks at
    their defaults, records as bytes (they decode as memoryviews, which compare equal)."""
    cls = type(obj)
    fresh = cls()
    for f in cls.FIELDS:
        val = getattr(obj, f.name)
        if not f.present(version):
            val = getattr(fresh, f.name)
        elif f.is_struct and val is not None:
            val = [normalise(v, version) for v in val] if f.is_array else normalise(val, version)
        setattr(fresh, f.name, val)
    return fresh


# -- kafka-python -------------------------------------------------------------------------------


# kafka-python patches a few specs (json_patch): authorized-operations ints become sets of bit
# positions ("bitfield", None for Kafka's -2147483648 "not requested"), some renamed.
KP_BITFIELDS = {
    ("MetadataResponse", "ClusterAuthorizedOperations"): "authorized_operations",
    ("MetadataResponseTopic", "TopicAuthorizedOperations"): "authorized_operations",
    ("DescribeClusterResponse", "ClusterAuthorizedOperations"): "authorized_operations",
    ("DescribedGroup", "AuthorizedOperations"): "authorized_operations",
}


def kp_name(kafka_name: str, owner: str = "") -> str:
    """kafka-python's attribute name for a spec field name."""
    renamed = KP_BITFIELDS.get((owner, kafka_name))
    if renamed is not None:
        return renamed
    return re.sub(r"(?<!^)(?=[A-Z])", "_", kafka_name).lower()


def _to_bitfield(value: int) -> set[int] | None:
    if value == -(2**31):
        return None
    return {b for b in range(32) if (value & 0xFFFFFFFF) >> b & 1}


def _from_bitfield(bits: set[int] | None) -> int:
    raw = sum(1 << b for b in ({31} if bits is None else bits))
    return raw - 2**32 if raw >= 2**31 else raw


@cache
def kp_class(name: str) -> Any:
    """kafka-python's class for a message name, or None where it has none."""
    import kafka.protocol as kp

    for info in pkgutil.walk_packages(kp.__path__, "kafka.protocol."):
        if ".old" in info.name or info.name.endswith("generate_stubs"):
            continue
        try:
            mod = importlib.import_module(info.name)
        except Exception:
            continue
        cls = getattr(mod, name, None)
        if cls is not None and hasattr(cls, "_struct"):
            return cls
    return None


def to_kp(obj: Any, kp_cls: Any, version: int) -> Any:
    """Build kafka-python's equivalent of one of our message or struct objects."""
    kwargs = {}
    for f in type(obj).FIELDS:
        if not f.present(version):
            continue
        val = getattr(obj, f.name)
        if f.is_struct and val is not None:
            sub = getattr(kp_cls, f.element_type)
            val = [to_kp(v, sub, version) for v in val] if f.is_array else to_kp(val, sub, version)
        elif isinstance(val, memoryview):
            val = bytes(val)
        elif (type(obj).__name__, f.kafka_name) in KP_BITFIELDS:
            val = _to_bitfield(val)
        kwargs[kp_name(f.kafka_name, type(obj).__name__)] = val
    return kp_cls(**kwargs)


def from_kp(kp_obj: Any, cls: type, version: int) -> Any:
    """Our object with the values of a kafka-python object (for comparing decodes)."""
    out = cls()
    for f in cls.FIELDS:  # type: ignore[attr-defined]
        if not f.present(version):
            continue
        val = getattr(kp_obj, kp_name(f.kafka_name, cls.__name__))
        if (cls.__name__, f.kafka_name) in KP_BITFIELDS:
            val = _from_bitfield(val)
        elif f.is_struct and val is not None:
            sub = _struct_class(cls, f)
            val = [from_kp(v, sub, version) for v in val] if f.is_array else from_kp(val, sub, version)
        elif f.type == "uuid" and val is not None and not isinstance(val, uuid.UUID):
            val = uuid.UUID(str(val))
        setattr(out, f.name, val)
    return out
