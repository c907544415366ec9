"""Generator of mockbroker_protocol/messages/: Kafka JSON message specs in, one readable Python module per API out.

Input: the Apache Kafka message specs that the pinned kafka-python package ships
(``kafka/protocol/schemas/resources/*.json``, Kafka 4.3), read at generation time and never copied
into the repo, plus our own hand-written specs in ``mockbroker_protocol/specs/`` (APIs missing from that set,
and the old versions that clients running here still send; see mockbroker_protocol/specs/README.md).

Output: for each API a module with
- one slots dataclass per message and nested struct, usable at every version (fields that a
  version lacks keep their defaults), each carrying its FIELDS facts (mockbroker_protocol.schema.FieldSpec);
- straight-line decode/encode functions per distinct wire layout (versions that lay out a
  struct identically share one function): consecutive fixed-width fields are read and written by
  one precompiled Struct, one-byte compact lengths are inlined, decoders store into the slots of
  an instance made with object.__new__ (no __init__ call per struct), and nothing interprets a
  schema at run time;
- version tables the classes' ``decode``/``encode`` methods dispatch through.
Only facts are carried over: names, types, versions, nullability, tags, defaults. No spec text.

Run ``python -m mockbroker_protocol._codegen`` (``make regen``) to rewrite the modules;
``python -m mockbroker_protocol._codegen --check`` exits 1 when the checked-in modules differ from what the
specs generate (tests/protocol/test_codegen.py runs the same check).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mockbroker_protocol._codegen_compiled import COMPILED_APIS, emit_compiled_module
from mockbroker_protocol.schema import MAX_VERSION

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "messages"
# The compiled shape (mockbroker_protocol/_codegen_compiled.py); _wire.py there is written by hand.
COMPILED_DIR = HERE / "_compiled"
HAND_WRITTEN = {"_compiled/_wire.py"}
OWN_SPECS = HERE / "specs"

# The APIs mockbroker serves: key -> module name. Request and response live in one module.
APIS: dict[int, str] = {
    0: "Produce",
    1: "Fetch",
    2: "ListOffsets",
    3: "Metadata",
    8: "OffsetCommit",
    9: "OffsetFetch",
    10: "FindCoordinator",
    11: "JoinGroup",
    12: "Heartbeat",
    13: "LeaveGroup",
    14: "SyncGroup",
    15: "DescribeGroups",
    16: "ListGroups",
    17: "SaslHandshake",
    18: "ApiVersions",
    19: "CreateTopics",
    20: "DeleteTopics",
    21: "DeleteRecords",
    22: "InitProducerId",
    23: "OffsetForLeaderEpoch",
    24: "AddPartitionsToTxn",
    25: "AddOffsetsToTxn",
    26: "EndTxn",
    28: "TxnOffsetCommit",
    29: "DescribeAcls",
    30: "CreateAcls",
    31: "DeleteAcls",
    32: "DescribeConfigs",
    33: "AlterConfigs",
    36: "SaslAuthenticate",
    37: "CreatePartitions",
    42: "DeleteGroups",
    44: "IncrementalAlterConfigs",
    47: "OffsetDelete",
    50: "DescribeUserScramCredentials",
    51: "AlterUserScramCredentials",
    60: "DescribeCluster",
    61: "DescribeProducers",
    65: "DescribeTransactions",
    66: "ListTransactions",
    68: "ConsumerGroupHeartbeat",
    69: "ConsumerGroupDescribe",
    88: "StreamsGroupHeartbeat",
    89: "StreamsGroupDescribe",

    76: "ShareGroupHeartbeat",
    77: "ShareGroupDescribe",
    78: "ShareFetch",
    79: "ShareAcknowledge",
    90: "DescribeShareGroupOffsets",
    91: "AlterShareGroupOffsets",
    92: "DeleteShareGroupOffsets",
}
# Non-API structures that travel inside other messages (JoinGroup/SyncGroup metadata).
DATA_MESSAGES = ("ConsumerProtocolSubscription", "ConsumerProtocolAssignment")

# struct format characters of the fixed-width types
FIXED = {
    "int8": ("b", 1),
    "int16": ("h", 2),
    "int32": ("i", 4),
    "int64": ("q", 8),
    "uint16": ("H", 2),
    "uint32": ("I", 4),
    "float64": ("d", 8),
    "bool": ("?", 1),
    "uuid": ("16s", 16),
}
PY_TYPES = {
    "int8": "int",
    "int16": "int",
    "int32": "int",
    "int64": "int",
    "uint16": "int",
    "uint32": "int",
    "float64": "float",
    "bool": "bool",
    "uuid": "uuid.UUID",
    "string": "str",
    "bytes": "bytes",
    "records": "Records",
}

Range = tuple[int, int]


# -- reading specs ------------------------------------------------------------------------------


def kafka_python_specs_dir() -> Path:
    import kafka.protocol.schemas as schemas  # type: ignore[import-untyped]  # pinned dev dependency

    return Path(schemas.__file__).resolve().parent / "resources"


def strip_comments(text: str) -> str:
    """Kafka's spec files are JSON with // comments; drop comments outside strings."""
    out: list[str] = []
    i, n = 0, len(text)
    in_str = False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def load_spec(path: Path) -> dict[str, object]:
    spec: dict[str, object] = json.loads(strip_comments(path.read_text(encoding="utf-8")))
    return spec


def parse_versions(text: object) -> Range | None:
    if text is None:
        return None
    s = str(text).strip()
    if s in ("", "none"):
        return None
    if s.endswith("+"):
        return (int(s[:-1]), MAX_VERSION)
    if "-" in s:
        lo, hi = s.split("-")
        return (int(lo), int(hi))
    return (int(s), int(s))


def snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return s.lower()


def in_range(r: Range | None, v: int) -> bool:
    return r is not None and r[0] <= v <= r[1]


# -- the model ----------------------------------------------------------------------------------


@dataclass
class Field:
    kafka_name: str
    type: str
    versions: Range
    nullable: Range | None
    tag: int | None
    tagged: Range | None
    default_raw: object
    struct: Struct | None = None

    @property
    def name(self) -> str:
        return snake(self.kafka_name)

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def elem(self) -> str:
        return self.type[2:] if self.is_array else self.type

    def present(self, v: int) -> bool:
        return in_range(self.versions, v)

    def is_tagged(self, v: int) -> bool:
        return self.tag is not None and in_range(self.tagged, v)

    def is_nullable(self, v: int) -> bool:
        return in_range(self.nullable, v)

    @property
    def ever_nullable(self) -> bool:
        return self.nullable is not None

    def py_type(self) -> str:
        if self.is_array:
            inner = self.struct.name if self.struct else PY_TYPES[self.elem]
            t = f"list[{inner}]"
        elif self.struct is not None:
            t = self.struct.name
        else:
            t = PY_TYPES[self.type]
        if self.ever_nullable or (self.type == "records"):
            t += " | None"
        return t

    def default_expr(self) -> str:
        """A Python expression for the field's default (Kafka's generated-code rules)."""
        raw = self.default_raw
        if raw == "null":
            return "None"
        if self.is_array:
            return "[]"
        if self.struct is not None:
            return f"{self.struct.name}()"
        t = self.type
        if t in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
            if raw in (None, ""):
                return "0"
            s = str(raw)
            return str(int(s, 16) if s.lower().startswith("0x") else int(s))
        if t == "float64":
            return repr(float(str(raw))) if raw not in (None, "") else "0.0"
        if t == "bool":
            return "True" if str(raw).lower() == "true" else "False"
        if t == "string":
            return repr(str(raw)) if raw is not None else "''"
        if t == "bytes":
            return "b''"
        if t == "records":
            return "None"
        if t == "uuid":
            return "ZERO_UUID"
        raise ValueError(f"no default for type {t}")

    def default_factory_needed(self) -> bool:
        return self.default_expr() == "[]" or (self.struct is not None and self.default_expr() != "None")


@dataclass
class Struct:
    name: str
    fields: list[Field]
    versions: Range
    has_records: bool = False
    layouts: dict[int, int] = field(default_factory=dict)  # version -> layout index


@dataclass
class Message:
    name: str
    api_key: int | None
    kind: str  # request | response | data
    valid: Range
    flexible: Range | None
    top: Struct
    structs: list[Struct]


def build_message(spec: dict[str, object], overrides: dict[str, object] | None = None) -> Message:
    name = str(spec["name"])
    valid = parse_versions(spec["validVersions"])
    assert valid is not None
    if overrides and "validVersions" in overrides:
        valid = parse_versions(overrides["validVersions"])
        assert valid is not None
    flexible = parse_versions(spec.get("flexibleVersions"))
    structs: list[Struct] = []
    common: dict[str, list[dict[str, object]]] = {
        str(cs["name"]): cs["fields"]
        for cs in spec.get("commonStructs", [])  # type: ignore[attr-defined]
    }
    extra_fields: dict[str, list[dict[str, object]]] = dict(overrides.get("addFields", {})) if overrides else {}  # type: ignore[call-overload]

    def make_struct(sname: str, fields_json: list[dict[str, object]], versions: Range) -> Struct:
        existing = next((s for s in structs if s.name == sname), None)
        if existing is not None:
            return existing
        fields_json = list(fields_json)
        for add in extra_fields.get(sname, []):
            after = add.get("after")
            fj = {k: val for k, val in add.items() if k != "after"}
            idx = next(i for i, f in enumerate(fields_json) if f["name"] == after) + 1 if after else 0
            fields_json.insert(idx, fj)
        st = Struct(sname, [], versions)
        structs.append(st)
        for fj in fields_json:
            fversions = parse_versions(fj["versions"])
            assert fversions is not None, fj
            if "flexibleVersions" in fj:
                raise ValueError(f"{name}.{fj['name']}: field-level flexibleVersions is not supported")
            f = Field(
                kafka_name=str(fj["name"]),
                type=str(fj["type"]),
                versions=fversions,
                nullable=parse_versions(fj.get("nullableVersions")),
                tag=int(str(fj["tag"])) if "tag" in fj else None,
                tagged=parse_versions(fj.get("taggedVersions")),
                default_raw=fj.get("default"),
            )
            if f.elem[:1].isupper():
                sub_fields = fj.get("fields")
                if sub_fields is None:
                    sub_fields = common[f.elem]
                f.struct = make_struct(f.elem, sub_fields, fversions)  # type: ignore[arg-type]
            elif f.elem not in PY_TYPES:
                raise ValueError(f"{name}.{f.kafka_name}: unknown type {f.type}")
            st.fields.append(f)
        return st

    top = make_struct(name, spec["fields"], valid)  # type: ignore[arg-type]
    kind = str(spec["type"])
    api_key = int(str(spec["apiKey"])) if "apiKey" in spec else None
    msg = Message(name, api_key, kind, valid, flexible, top, structs)
    for st in structs:
        st.has_records = _has_records(st)
    return msg


def _has_records(st: Struct) -> bool:
    return any(f.type == "records" or (f.struct is not None and _has_records(f.struct)) for f in st.fields)


# -- layouts ------------------------------------------------------------------------------------


def compute_layouts(msg: Message) -> dict[str, list[tuple[object, list[int]]]]:
    """For each struct: the distinct wire layouts and the versions that use each."""
    table: dict[str, list[tuple[object, list[int]]]] = {s.name: [] for s in msg.structs}

    def key(st: Struct, v: int) -> object:
        flex = in_range(msg.flexible, v)
        parts: list[object] = [flex]
        for f in st.fields:
            if not f.present(v):
                parts.append(None)
                continue
            sub = key(f.struct, v) if f.struct is not None else None
            parts.append((f.name, f.is_tagged(v), f.is_nullable(v), sub))
        return tuple(parts)

    def visit(st: Struct, v: int) -> None:
        k = key(st, v)
        entries = table[st.name]
        for i, (ek, vs) in enumerate(entries):
            if ek == k:
                if v not in vs:
                    vs.append(v)
                st.layouts[v] = i
                break
        else:
            entries.append((k, [v]))
            st.layouts[v] = len(entries) - 1
        for f in st.fields:
            if f.struct is not None and f.present(v):
                visit(f.struct, v)

    for v in range(msg.valid[0], msg.valid[1] + 1):
        visit(msg.top, v)
    return table


def ranges_text(versions: list[int]) -> str:
    """'versions 0-2, 5' or 'version 3'."""
    vs = sorted(versions)
    parts: list[str] = []
    start = prev = vs[0]
    for v in vs[1:]:
        if v == prev + 1:
            prev = v
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = v
    parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ("version " if len(vs) == 1 else "versions ") + ", ".join(parts)


# -- emitting code ------------------------------------------------------------------------------


class Emitter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.structs_fmt: dict[str, str] = {}  # format -> global name
        self.counter = 0

    def fmt(self, f: str) -> str:
        if f not in self.structs_fmt:
            # '?' (bool) is spelt 'o' so every format has a distinct, valid name
            self.structs_fmt[f] = "_S_" + f.lstrip(">").replace("?", "o")
        return self.structs_fmt[f]

    def tmp(self, prefix: str = "_n") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"


def fn_name(kind: str, st: Struct, layout_versions: list[int]) -> str:
    return f"_{kind}_{st.name}_v{min(layout_versions)}"


class StructCodegen:
    """Emits decode and encode code for one struct layout at one (representative) version.

    Bodies are produced with a variable prefix and an indentation so that a leaf struct's body
    (one with no struct-typed fields) can be inlined into its parent's array loop: no call and
    no tuple per element on the hot path (JoinGroup members, OffsetCommit partitions)."""

    def __init__(self, em: Emitter, msg: Message, st: Struct, v: int, fn_names: dict[tuple[str, int], str]):
        self.em = em
        self.msg = msg
        self.st = st
        self.v = v
        self.flex = in_range(msg.flexible, v)
        self.fn_names = fn_names

    def sub_fn(self, kind: str, sub: Struct) -> str:
        return self.fn_names[(kind + ":" + sub.name, sub.layouts[self.v])]

    def sub(self, st: Struct) -> StructCodegen:
        return StructCodegen(self.em, self.msg, st, self.v, self.fn_names)

    def inlinable(self, st: Struct) -> bool:
        return all(f.struct is None for f in st.fields if f.present(self.v))

    # ---- decode
    #
    # A decoder makes the instance first with object.__new__ (no __init__ frame to enter, no
    # defaults to fill) and stores each field into its slot as soon as it is read: a run of
    # fixed-width fields unpacks straight into the slots. Fields the version lacks, and tagged
    # fields before their tags are read, get their defaults right after the instance is made.

    def decode(self, name: str, versions: list[int]) -> list[str]:
        st, flex = self.st, self.flex
        L = [f"def {name}(data: bytes, pos: int) -> tuple[{st.name}, int]:"]
        L.append(f'    """{st.name}, {ranges_text(versions)}{" (flexible)" if flex else ""}."""')
        L.extend(self.decode_body("o", "    "))
        L.append("    return o, pos")
        return L

    def decode_body(self, o: str, ind: str) -> list[str]:
        """Lines that make ``o``, an instance of this struct, from ``data`` at ``pos``."""
        st, v, flex = self.st, self.v, self.flex
        body: list[str] = [f"{ind}{o} = _new({st.name})"]
        for f in st.fields:
            if not f.present(v) or f.is_tagged(v):
                body.append(f"{ind}{o}.{f.name} = {f.default_expr()}")
        run: list[tuple[str, str]] = []  # (target, struct fmt char)
        posts: list[str] = []

        def flush() -> None:
            if not run:
                return
            fmt = ">" + "".join(c for _, c in run)
            size = sum(_fmt_size(c) for _, c in run)
            targets = ", ".join(t for t, _ in run)
            sname = self.em.fmt(fmt)
            if len(run) == 1:
                body.append(f"{ind}{targets}, = {sname}.unpack_from(data, pos)")
            else:
                body.append(f"{ind}{targets} = {sname}.unpack_from(data, pos)")
            body.append(f"{ind}pos += {size}")
            body.extend(posts)
            run.clear()
            posts.clear()

        for f in st.fields:
            if not f.present(v) or f.is_tagged(v):
                continue
            var = f"{o}.{f.name}"
            if not f.is_array and f.type in FIXED:
                if f.type == "uuid":
                    raw = self.em.tmp("_r")
                    run.append((raw, FIXED[f.type][0]))
                    posts.append(f"{ind}{var} = UUID(bytes={raw})")
                else:
                    run.append((var, FIXED[f.type][0]))
                continue
            if not flex and (f.is_array or f.type in ("string", "bytes", "records")):
                n = self.em.tmp()
                run.append((n, "h" if f.type == "string" else "i"))
                flush()
                body.extend(self.decode_variable(f, var, n, ind))
            else:
                flush()
                body.extend(self.decode_field(f, var, ind))
        has_tags = any(f.present(v) and f.is_tagged(v) for f in st.fields)
        if run and flex and not has_tags:
            # the (empty) tagged-fields count is read with the fixed run that ends the struct
            t = self.em.tmp("_t")
            run.append((t, "B"))
            flush()
            body += [f"{ind}if {t} != 0:", f"{ind}    pos = skip_tagged_fields(data, pos - 1)"]
        else:
            flush()
            if flex:
                body.extend(self.decode_tagged(o, ind))
        return body

    def decode_field(self, f: Field, var: str, ind: str) -> list[str]:
        """Decode one field at pos (any type) into ``var``, in flexible or classic encoding."""
        if not f.is_array and f.type in FIXED:
            c, size = FIXED[f.type]
            sname = self.em.fmt(">" + c)
            if f.type == "uuid":
                raw = self.em.tmp("_r")
                return [f"{ind}{raw}, = {sname}.unpack_from(data, pos)", f"{ind}pos += {size}", f"{ind}{var} = UUID(bytes={raw})"]
            return [f"{ind}{var}, = {sname}.unpack_from(data, pos)", f"{ind}pos += {size}"]
        if f.struct is not None and not f.is_array:
            fn = self.sub_fn("dec", f.struct)
            if f.is_nullable(self.v):
                # A nullable struct is preceded by an int8 marker: -1 null, 1 present.
                return [
                    f"{ind}if data[pos] == 255:",
                    f"{ind}    {var} = None",
                    f"{ind}    pos += 1",
                    f"{ind}else:",
                    f"{ind}    {var}, pos = {fn}(data, pos + 1)",
                ]
            return [f"{ind}{var}, pos = {fn}(data, pos)"]
        n = self.em.tmp()
        out = []
        if self.flex and not f.is_array and f.type in ("string", "bytes"):
            # The common case (a length under 127: a one-byte varint) is read inline; longer
            # values go to the primitives. A non-nullable field's null (length byte 0) is caught
            # by `n or ...`, which costs nothing when n is not 0.
            nullable = f.is_nullable(self.v)
            value = f"data[pos + 1:pos + {n}]" + (".decode()" if f.type == "string" else "")
            slow = f"read_compact_{'nullable_' if nullable else ''}{'string' if f.type == 'string' else 'bytes'}"
            out.append(f"{ind}{n} = data[pos]")
            if nullable:
                out += [f"{ind}if {n} == 0:", f"{ind}    {var} = None", f"{ind}    pos += 1", f"{ind}elif {n} < 128:"]
                out += [f"{ind}    {var} = {value}", f"{ind}    pos += {n}"]
            else:
                out += [f"{ind}if {n} < 128:", f"{ind}    {var} = {value}"]
                out += [f"{ind}    pos += {n} or _runtime.null_value({f.kafka_name!r})"]
            # a string's slow path is told the field's name for Kafka's length error (0x7fff)
            named = f", {f.kafka_name[:1].lower() + f.kafka_name[1:]!r}" if f.type == "string" else ""
            out += [f"{ind}else:", f"{ind}    {var}, pos = {slow}(data, pos{named})"]
            return out
        if self.flex:
            out += [
                f"{ind}{n} = data[pos]",
                f"{ind}if {n} < 128:",
                f"{ind}    pos += 1",
                f"{ind}else:",
                f"{ind}    {n}, pos = read_uvarint(data, pos)",
                f"{ind}{n} -= 1",
            ]
        else:
            c = "h" if f.type == "string" else "i"
            sname = self.em.fmt(">" + c)
            out += [f"{ind}{n}, = {sname}.unpack_from(data, pos)", f"{ind}pos += {_fmt_size(c)}"]
        return out + self.decode_variable(f, var, n, ind)

    def decode_variable(self, f: Field, var: str, n: str, ind: str) -> list[str]:
        """The body of a length-prefixed field whose length (-1 for null) is in ``n``."""
        nullable = f.is_nullable(self.v)
        out: list[str] = []
        if nullable:
            out += [f"{ind}if {n} < 0:", f"{ind}    {var} = None", f"{ind}    if {n} != -1:"]
            out += [f"{ind}        raise InvalidValueError('{f.kafka_name}: length ' + str({n}))"]
            out.append(f"{ind}else:")
            i2 = ind + "    "
        else:
            out += [f"{ind}if {n} < 0:", f"{ind}    raise InvalidValueError('{f.kafka_name}: null or negative length')"]
            i2 = ind
        if f.is_array:
            # A forged count cannot make us loop for long: every element takes at least a byte.
            out.append(f"{i2}if {n} > len(data) - pos:")
            out.append(f"{i2}    raise TruncatedError('{f.kafka_name}: ' + str({n}) + ' elements in ' + str(len(data) - pos) + ' bytes')")
            e = f.elem
            if e in FIXED and e not in ("uuid", "bool"):
                c, size = FIXED[e]
                out.append(f"{i2}{var} = list(unpack_from('>%d{c}' % {n}, data, pos))")
                out.append(f"{i2}pos += {size} * {n}")
                return out
            # elements are collected in a local list, stored into the field once at the end
            lst = self.em.tmp("_l")
            out.append(f"{i2}{lst}: list[{f.struct.name if f.struct else PY_TYPES[e]}] = []")
            if f.struct is not None and self.inlinable(f.struct):
                e_var = self.em.tmp("_m")
                out.append(f"{i2}for _ in range({n}):")
                out.extend(self.sub(f.struct).decode_body(e_var, i2 + "    "))
            elif f.struct is not None:
                fn = self.sub_fn("dec", f.struct)
                e_var = self.em.tmp("_e")
                out.append(f"{i2}for _ in range({n}):")
                out.append(f"{i2}    {e_var}, pos = {fn}(data, pos)")
            else:
                # arrays of strings (and the rare uuid/bool arrays): element by element
                e_var = self.em.tmp("_e")
                elem = Field(f.kafka_name, e, f.versions, None, None, None, None)
                out.append(f"{i2}for _ in range({n}):")
                out += self.decode_field(elem, e_var, i2 + "    ")
            out.append(f"{i2}    {lst}.append({e_var})")
            out.append(f"{i2}{var} = {lst}")
        elif f.type == "string":
            out.append(f"{i2}{var} = data[pos:pos + {n}].decode()")
            out.append(f"{i2}pos += {n}")
        elif f.type == "bytes":
            out.append(f"{i2}{var} = data[pos:pos + {n}]")
            out.append(f"{i2}pos += {n}")
        elif f.type == "records":
            # Zero copy: a view of the frame. Bounds are checked here because a view, unlike
            # the final position check, would otherwise outlive a truncated frame silently.
            out.append(f"{i2}if pos + {n} > len(data):")
            out.append(f"{i2}    raise TruncatedError('{f.kafka_name}: records run past the end')")
            out.append(f"{i2}{var} = memoryview(data)[pos:pos + {n}]")
            out.append(f"{i2}pos += {n}")
        else:
            raise ValueError(f"no variable-length decoder for {f.type}")
        return out

    def decode_tagged(self, o: str, ind: str) -> list[str]:
        """The tagged-fields section; the tagged fields already hold their defaults."""
        tagged = sorted((f for f in self.st.fields if f.present(self.v) and f.is_tagged(self.v)), key=lambda f: f.tag or 0)
        out: list[str] = []
        out.append(f"{ind}if data[pos] == 0:  # no tagged fields: the common case")
        out.append(f"{ind}    pos += 1")
        out.append(f"{ind}else:")
        if not tagged:
            out.append(f"{ind}    pos = skip_tagged_fields(data, pos)")
            return out
        i2 = ind + "    "
        nt, tag, end = self.em.tmp("_nt"), self.em.tmp("_tag"), self.em.tmp("_end")
        out += [
            f"{i2}{nt}, pos = read_uvarint(data, pos)",
            f"{i2}for _ in range({nt}):",
            f"{i2}    {tag}, pos = read_uvarint(data, pos)",
            f"{i2}    {end}, pos = read_uvarint(data, pos)",
            f"{i2}    {end} += pos",
        ]
        for k, f in enumerate(tagged):
            out.append(f"{i2}    {'if' if k == 0 else 'elif'} {tag} == {f.tag}:")
            out += self.decode_field(f, f"{o}.{f.name}", i2 + "        ")
        out.append(f"{i2}    pos = {end}  # unknown tags are skipped (KIP-482)")
        return out

    # ---- encode

    def encode(self, name: str, versions: list[int]) -> list[str]:
        st, flex = self.st, self.flex
        rec = st.has_records
        sig = "o: {}, out: bytearray{}".format(st.name, ", chunks: list[Buffer] | None" if rec else "")
        L = [f"def {name}({sig}) -> None:"]
        L.append(f'    """{st.name}, {ranges_text(versions)}{" (flexible)" if flex else ""}."""')
        body = self.encode_body("o", "    ")
        L.extend(body or ["    pass"])
        return L

    def encode_body(self, o: str, ind: str) -> list[str]:
        st, v, flex = self.st, self.v, self.flex
        body: list[str] = []
        run: list[tuple[str, str]] = []  # (expression, fmt char)
        pre: list[str] = []
        posts: list[str] = []

        def flush() -> None:
            body.extend(pre)
            pre.clear()
            if not run:
                return
            fmt = ">" + "".join(c for _, c in run)
            sname = self.em.fmt(fmt)
            body.append(f"{ind}out += {sname}.pack({', '.join(e for e, _ in run)})")
            body.extend(posts)
            run.clear()
            pre.clear()
            posts.clear()

        for f in st.fields:
            if not f.present(v) or f.is_tagged(v):
                continue
            ex = f"{o}.{f.name}"
            if f.ever_nullable and not f.is_nullable(v):
                # Null in some versions but not this one: Kafka refuses to serialize it.
                nv = self.em.tmp("_v")
                pre.append(f"{ind}{nv} = {ex}")
                pre.append(f"{ind}if {nv} is None:")
                pre.append(f"{ind}    raise EncodeError('{st.name}.{f.name} is null, which version {v} does not allow')")
                ex = nv
            if not f.is_array and f.type in FIXED:
                run.append((f"{ex}.bytes" if f.type == "uuid" else ex, FIXED[f.type][0]))
                continue
            if not flex and not f.is_array and f.type in ("string", "bytes"):
                # fold the length prefix into the current run of fixed-width fields
                b = self.em.tmp("_b")
                nullable = f.is_nullable(v)
                if f.type == "string":
                    if nullable:
                        pre.append(f"{ind}{b} = None if {ex} is None else {ex}.encode()")
                    else:
                        pre.append(f"{ind}{b} = {ex}.encode()")
                else:
                    pre.append(f"{ind}{b} = {ex}")
                c = "h" if f.type == "string" else "i"
                if nullable:
                    run.append((f"-1 if {b} is None else len({b})", c))
                    posts.append(f"{ind}if {b} is not None:")
                    posts.append(f"{ind}    out += {b}")
                else:
                    run.append((f"len({b})", c))
                    posts.append(f"{ind}out += {b}")
                # the value's bytes follow its length at once
                flush()
                continue
            if not flex and f.is_array:
                a = self.em.tmp("_a")
                pre.append(f"{ind}{a} = {ex}")
                if f.is_nullable(v):
                    run.append((f"-1 if {a} is None else len({a})", "i"))
                else:
                    run.append((f"len({a})", "i"))
                flush()
                if f.is_nullable(v):
                    body.append(f"{ind}if {a} is not None:")
                    body.extend(self.encode_array_body(f, a, "out", ind + "    "))
                else:
                    body.extend(self.encode_array_body(f, a, "out", ind))
                continue
            flush()
            body.extend(self.encode_field(f, ex, "out", ind))
        has_tags = any(f.present(v) and f.is_tagged(v) for f in st.fields)
        if run and flex and not has_tags:
            run.append(("0", "B"))  # the empty tagged-fields count, packed with the last run
            flush()
            return body
        flush()
        if flex:
            body.extend(self.encode_tagged(o, ind))
        return body

    def encode_field(self, f: Field, ex: str, buf: str, ind: str) -> list[str]:
        """Encode one field's value (expression ``ex``) into ``buf``."""
        v, flex = self.v, self.flex
        nullable = f.is_nullable(v)
        if not f.is_array and f.type in FIXED:
            c = FIXED[f.type][0]
            val = f"{ex}.bytes" if f.type == "uuid" else ex
            return [f"{ind}{buf} += {self.em.fmt('>' + c)}.pack({val})"]
        if f.type == "records":
            chunks = "chunks" if buf == "out" else "None"
            return [f"{ind}write_records({buf}, {chunks}, {ex}, {flex})"]
        if f.struct is not None and not f.is_array:
            fn = self.sub_fn("enc", f.struct)
            args = f"{buf}, chunks" if f.struct.has_records else buf
            if nullable:
                return [
                    f"{ind}if {ex} is None:",
                    f"{ind}    {buf}.append(255)",
                    f"{ind}else:",
                    f"{ind}    {buf}.append(1)",
                    f"{ind}    {fn}({ex}, {args})",
                ]
            return [f"{ind}{fn}({ex}, {args})"]
        if f.type == "string" and not f.is_array:
            if not flex:
                return [f"{ind}write_{'nullable_' if nullable else ''}string({buf}, {ex})"]
            b = self.em.tmp("_b")
            n = self.em.tmp("_n")
            body = [
                f"{ind}{b} = {ex}.encode()",
                f"{ind}{n} = len({b}) + 1",
                f"{ind}if {n} < 128:",
                f"{ind}    {buf}.append({n})",
                f"{ind}else:",
                f"{ind}    write_uvarint({buf}, {n})",
                f"{ind}{buf} += {b}",
            ]
            if nullable:
                return [f"{ind}if {ex} is None:", f"{ind}    {buf}.append(0)", f"{ind}else:", *_indent(body)]
            return body
        if f.type == "bytes" and not f.is_array:
            if not flex:
                return [f"{ind}write_bytes({buf}, {ex})"]
            n = self.em.tmp("_n")
            body = [
                f"{ind}{n} = len({ex}) + 1",
                f"{ind}if {n} < 128:",
                f"{ind}    {buf}.append({n})",
                f"{ind}else:",
                f"{ind}    write_uvarint({buf}, {n})",
                f"{ind}{buf} += {ex}",
            ]
            if nullable:
                return [f"{ind}if {ex} is None:", f"{ind}    {buf}.append(0)", f"{ind}else:", *_indent(body)]
            return body
        if f.is_array:
            a = self.em.tmp("_a")
            out = [f"{ind}{a} = {ex}"]
            if flex:
                n = self.em.tmp("_n")
                head = [
                    f"{ind}{n} = len({a}) + 1",
                    f"{ind}if {n} < 128:",
                    f"{ind}    {buf}.append({n})",
                    f"{ind}else:",
                    f"{ind}    write_uvarint({buf}, {n})",
                ]
            else:
                head = [f"{ind}{buf} += {self.em.fmt('>i')}.pack(len({a}))"]
            body = head + self.encode_array_body(f, a, buf, ind)
            if nullable:
                null = f"{ind}    {buf}.append(0)" if flex else f"{ind}    {buf} += b'\\xff\\xff\\xff\\xff'"
                out += [f"{ind}if {a} is None:", null, f"{ind}else:"]
                out += _indent(body)
            else:
                out += body
            return out
        raise ValueError(f"cannot encode {f.type}")

    def encode_array_body(self, f: Field, a: str, buf: str, ind: str) -> list[str]:
        e = f.elem
        ev = self.em.tmp("_e")
        if f.struct is not None and buf == "out" and self.inlinable(f.struct):
            return [f"{ind}for {ev} in {a}:", *self.sub(f.struct).encode_body(ev, ind + "    ")]
        if f.struct is not None:
            fn = self.sub_fn("enc", f.struct)
            args = f"{buf}, chunks" if f.struct.has_records else buf
            return [f"{ind}for {ev} in {a}:", f"{ind}    {fn}({ev}, {args})"]
        if e in FIXED and e not in ("uuid", "bool"):
            c = FIXED[e][0]
            return [f"{ind}{buf} += pack('>%d{c}' % len({a}), *{a})"]
        elem = Field(f.kafka_name, e, f.versions, None, None, None, None)
        return [f"{ind}for {ev} in {a}:", *self.encode_field(elem, ev, buf, ind + "    ")]

    def encode_tagged(self, o: str, ind: str) -> list[str]:
        tagged = sorted((f for f in self.st.fields if f.present(self.v) and f.is_tagged(self.v)), key=lambda f: f.tag or 0)
        if not tagged:
            return [f"{ind}out.append(0)  # no tagged fields"]
        out: list[str] = []
        conds = []
        for f in tagged:
            d = f.default_expr()
            cond = f"{o}.{f.name} is not None" if d == "None" else f"{o}.{f.name} != {d}"
            conds.append((f, cond))
        nt = self.em.tmp("_nt")
        t = self.em.tmp("_t")
        # Kafka writes a tagged field only when it differs from its default, in tag order.
        out.append(f"{ind}{nt} = " + " + ".join(f"({c})" for _, c in conds))
        out.append(f"{ind}if {nt} == 0:")
        out.append(f"{ind}    out.append(0)")
        out.append(f"{ind}else:")
        out.append(f"{ind}    write_uvarint(out, {nt})")
        for f, cond in conds:
            out.append(f"{ind}    if {cond}:")
            out.append(f"{ind}        write_uvarint(out, {f.tag})")
            out.append(f"{ind}        {t} = bytearray()")
            out += self.encode_field(f, f"{o}.{f.name}", t, ind + "        ")
            out.append(f"{ind}        write_uvarint(out, len({t}))")
            out.append(f"{ind}        out += {t}")
        return out


def _fmt_size(c: str) -> int:
    return {"b": 1, "B": 1, "h": 2, "i": 4, "q": 8, "H": 2, "I": 4, "d": 8, "?": 1, "16s": 16}[c]


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


# -- a module -----------------------------------------------------------------------------------


def emit_module(
    api_name: str, api_key: int | None, messages: list[Message], sources: list[str], digest: str | None = None
) -> str:
    em = Emitter()
    classes: list[str] = []
    functions: list[str] = []
    tables: list[str] = []
    uses_uuid = False
    uses_records = False
    seen_classes: dict[str, Struct] = {}
    # Kafka scopes nested struct names per message; one module holds request and response, so a
    # name both use (ConsumerGroupHeartbeat's TopicPartitions) is prefixed with its message's.
    counts: dict[str, int] = {}
    for msg in messages:
        for st in msg.structs:
            counts[st.name] = counts.get(st.name, 0) + 1
    for msg in messages:
        for st in msg.structs:
            if counts[st.name] > 1 and st is not msg.top:
                st.name = msg.name + st.name
    for msg in messages:
        layouts = compute_layouts(msg)
        fn_names: dict[tuple[str, int], str] = {}
        for st in msg.structs:
            if st.name in seen_classes and seen_classes[st.name] is not st:
                raise ValueError(f"{api_name}: struct name {st.name} used twice; rename in the generator")
            seen_classes[st.name] = st
            for i, (_, vs) in enumerate(layouts[st.name]):
                fn_names[("dec:" + st.name, i)] = fn_name("decode", st, vs)
                fn_names[("enc:" + st.name, i)] = fn_name("encode", st, vs)
        # classes: nested structs first so annotations read top-down in dependency order
        for st in reversed(msg.structs):
            classes.append(emit_class(st, msg))
            uses_uuid |= any(f.elem == "uuid" for f in st.fields)
            uses_records |= st.has_records
        for st in reversed(msg.structs):
            for i, (_, vs) in enumerate(layouts[st.name]):
                cg = StructCodegen(em, msg, st, vs[0], fn_names)
                functions.append("\n".join(cg.decode(fn_names[("dec:" + st.name, i)], vs)))
                functions.append("\n".join(cg.encode(fn_names[("enc:" + st.name, i)], vs)))
        top = msg.top
        upper = snake(msg.name).upper()
        dec_items = ", ".join(f"{v}: {fn_names[('dec:' + top.name, top.layouts[v])]}" for v in sorted(top.layouts))
        enc_items = ", ".join(f"{v}: {fn_names[('enc:' + top.name, top.layouts[v])]}" for v in sorted(top.layouts))
        rec = top.has_records
        enc_sig = "bytearray, list[Buffer] | None" if rec else "bytearray"
        tables.append(
            f"_{upper}_DECODERS: dict[int, Callable[[bytes, int], tuple[{top.name}, int]]] = {{{dec_items}}}\n"
            f"_{upper}_ENCODERS: dict[int, Callable[[{top.name}, {enc_sig}], None]] = {{{enc_items}}}"
        )
    body_text = "\n".join(classes + functions + tables)

    def used(name: str) -> bool:
        return re.search(rf"(?<![.\w]){re.escape(name)}\b", body_text) is not None

    imports = ["from __future__ import annotations", ""]
    if uses_uuid:
        imports.append("import uuid")
    imports.append("from collections.abc import Callable")
    imports.append("from dataclasses import dataclass" + (", field" if used("field") else ""))
    imports.append("from struct import " + ", ".join(n for n in ("Struct", "pack", "unpack_from") if n == "Struct" or used(n)))
    imports.append("from typing import ClassVar")
    if uses_uuid:
        imports.append("from uuid import UUID")
    imports.append("")
    imports.append("from mockbroker_protocol import _runtime")
    errs = [n for n in ("EncodeError", "InvalidValueError", "TruncatedError") if used(n)]
    if errs:
        imports.append(f"from mockbroker_protocol.errors import {', '.join(errs)}")
    prim_all = ["Buffer", "Records", "ZERO_UUID", "read_compact_bytes", "read_compact_nullable_bytes",
                "read_compact_nullable_string", "read_compact_string", "read_uvarint", "skip_tagged_fields", "write_bytes",
                "write_nullable_string", "write_records", "write_string", "write_uvarint"]
    prim = [n for n in prim_all if used(n)]
    imports.append(f"from mockbroker_protocol.primitives import {', '.join(sorted(prim))}")
    imports.append("from mockbroker_protocol.schema import FieldSpec, MessageSpec")
    header = _module_doc(api_name, api_key, messages, sources)
    structs_defs = [f"{name} = Struct({fmt!r})" for fmt, name in sorted(em.structs_fmt.items(), key=lambda kv: kv[1])]
    # decoders make instances without running __init__ (see StructCodegen.decode)
    structs_defs.append("_new = object.__new__")
    parts = [header, "\n".join(imports), "\n".join(structs_defs)]
    parts += classes
    parts += functions
    parts += tables
    if digest is not None:
        parts.append(_compiled_tail(api_name, messages, digest))
    parts.append(_all(messages))
    return "\n\n\n".join(p.rstrip() for p in parts if p) + "\n"


def _compiled_tail(api_name: str, messages: list[Message], digest: str) -> str:
    """Install the compiled shape's functions into the version tables, when it is built."""
    mod = snake(api_name)
    L = [
        f"# The compiled shape of these codecs (mockbroker_protocol/_compiled/{mod}.py, built with mypyc when the",
        "# package is installed) takes over the tables' entries when it is present; the classes' methods",
        "# stay these. MOCKBROKER_PURE_CODEC=1 keeps the pure functions (mockbroker_protocol._runtime.compiled_module).",
        f"_compiled = _runtime.compiled_module({mod!r}, {digest!r})",
        "if _compiled is not None:",
    ]
    for m in messages:
        upper = snake(m.name).upper()
        for kind in ("DECODERS", "ENCODERS"):
            L.append(f"    _{upper}_{kind}.update(_compiled.{upper}_{kind})")
    return "\n".join(L)


def _module_doc(api_name: str, api_key: int | None, messages: list[Message], sources: list[str]) -> str:
    lines = []
    if api_key is not None:
        req = next(m for m in messages if m.kind == "request")
        flex = f"; flexible from v{req.flexible[0]}" if req.flexible else "; never flexible"
        lines.append(f"{api_name} (key {api_key}), v{req.valid[0]}-{req.valid[1]}{flex}: generated request and response codecs.")
    else:
        m = messages[0]
        lines.append(f"{api_name}, v{m.valid[0]}-{m.valid[1]}: generated codec of a structure embedded in other messages.")
    lines.append("")
    lines.append("Generated by mockbroker_protocol/_codegen.py from " + ", ".join(sources) + ".")
    lines.append("Do not edit by hand: change the generator or its inputs and run `make regen`.")
    return '"""' + "\n".join(lines) + '\n"""'


def _all(messages: list[Message]) -> str:
    names = []
    for m in messages:
        names += [s.name for s in m.structs]
    return "__all__ = [\n" + "".join(f"    {n!r},\n" for n in sorted(set(names))) + "]"


def emit_class(st: Struct, msg: Message) -> str:
    is_top = st is msg.top
    L = ["@dataclass(slots=True)", f"class {st.name}:"]
    if is_top:
        L.append(f'    """{msg.name}: versions {msg.valid[0]}-{msg.valid[1]}."""')
    else:
        L.append(f'    """A {st.name} entry of {msg.name}."""')
    L.append("")
    for f in st.fields:
        d = f.default_expr()
        if f.default_factory_needed():
            L.append(f"    {f.name}: {f.py_type()} = field(default_factory={'list' if d == '[]' else f.struct.name if f.struct else 'list'})")
        else:
            L.append(f"    {f.name}: {f.py_type()} = {d}")
    if not st.fields:
        L.append("    pass")
    L.append("")
    L.append("    FIELDS: ClassVar[tuple[FieldSpec, ...]] = (")
    for f in st.fields:
        L.append(
            f"        FieldSpec({f.name!r}, {f.kafka_name!r}, {_spec_type(f)!r}, {f.versions!r}, {f.nullable!r}, "
            f"{f.tag!r}, {f.tagged!r}, {_spec_default(f)}),"
        )
    L.append("    )")
    if is_top:
        upper = snake(msg.name).upper()
        name = msg.name
        L.append(
            f"    SPEC: ClassVar[MessageSpec] = MessageSpec({name!r}, {msg.api_key if msg.api_key is not None else -1}, "
            f"{msg.valid!r}, {msg.flexible!r})"
        )
        # decode/encode dispatch inline (one dict lookup, one try) and leave failure mapping to
        # _runtime, off the hot path.
        L += [
            "",
            "    @classmethod",
            f"    def decode_from(cls, data: bytes, version: int, pos: int = 0) -> tuple[{name}, int]:",
            '        """Decode at ``pos``; return the message and the position after it."""',
            "        try:",
            f"            msg, end = _{upper}_DECODERS[version](data, pos)",
            "        except Exception as exc:",
            f"            raise _runtime.decode_failure(exc, {name!r}, version, data) from None",
            "        if end > len(data):",
            f"            raise _runtime.decode_failure(None, {name!r}, version, data)",
            "        return msg, end",
            "",
            "    @classmethod",
            f"    def decode(cls, data: bytes, version: int, pos: int = 0) -> {name}:",
            "        try:",
            f"            msg, end = _{upper}_DECODERS[version](data, pos)",
            "        except Exception as exc:",
            f"            raise _runtime.decode_failure(exc, {name!r}, version, data) from None",
            "        if end > len(data):",
            f"            raise _runtime.decode_failure(None, {name!r}, version, data)",
            "        return msg",
            "",
        ]
        if st.has_records:
            L += [
                "    def encode(self, version: int) -> bytes:",
                "        out = bytearray()",
                "        try:",
                f"            _{upper}_ENCODERS[version](self, out, None)",
                "        except Exception as exc:",
                f"            raise _runtime.encode_failure(exc, {name!r}, version) from None",
                "        return bytes(out)",
                "",
                "    def encode_chunks(self, version: int, head: bytes = b'') -> list[Buffer]:",
                '        """Encode for writelines, after ``head``: record buffers are passed through, not copied."""',
                "        out = bytearray(head)",
                "        chunks: list[Buffer] = []",
                "        try:",
                f"            _{upper}_ENCODERS[version](self, out, chunks)",
                "        except Exception as exc:",
                f"            raise _runtime.encode_failure(exc, {name!r}, version) from None",
                "        if out:",
                "            chunks.append(bytes(out))",
                "        return chunks",
            ]
        else:
            L += [
                "    def encode(self, version: int) -> bytes:",
                "        out = bytearray()",
                "        try:",
                f"            _{upper}_ENCODERS[version](self, out)",
                "        except Exception as exc:",
                f"            raise _runtime.encode_failure(exc, {name!r}, version) from None",
                "        return bytes(out)",
                "",
                "    def encode_into(self, out: bytearray, version: int) -> bytearray:",
                '        """Append the encoding to ``out`` (after a frame header, say) and return it."""',
                "        try:",
                f"            _{upper}_ENCODERS[version](self, out)",
                "        except Exception as exc:",
                f"            raise _runtime.encode_failure(exc, {name!r}, version) from None",
                "        return out",
                "",
                "    def encode_chunks(self, version: int, head: bytes = b'') -> list[Buffer]:",
                "        return [bytes(self.encode_into(bytearray(head), version))]",
            ]
    return "\n".join(L)


def _spec_type(f: Field) -> str:
    """The spec's type, naming our class for struct types (which may carry a message prefix)."""
    if f.struct is None:
        return f.type
    return ("[]" if f.is_array else "") + f.struct.name


def _spec_default(f: Field) -> str:
    d = f.default_expr()
    if d.endswith("()") and f.struct is not None:
        return "None"  # struct defaults are built by the class; the spec records "no literal"
    return d


# -- driving ------------------------------------------------------------------------------------


def module_file_name(api_name: str) -> str:
    return snake(api_name) + ".py"


def find_spec(name: str, kp_dir: Path) -> Path:
    own = OWN_SPECS / f"{name}.json"
    if own.exists():
        return own
    return kp_dir / f"{name}.json"


def load_overrides() -> dict[str, dict[str, object]]:
    path = OWN_SPECS / "overrides.json"
    if not path.exists():
        return {}
    data: dict[str, dict[str, object]] = json.loads(strip_comments(path.read_text(encoding="utf-8")))
    return data


def generate_all() -> dict[str, str]:
    """Return {path under mockbroker_protocol/: source} for every module of mockbroker_protocol/messages/ (the pure
    shape) and of mockbroker_protocol/_compiled/ (the compiled shape of COMPILED_APIS, built by mypyc)."""
    kp_dir = kafka_python_specs_dir()
    overrides = load_overrides()
    files: dict[str, str] = {}
    compiled: dict[str, str] = {}
    table: dict[int, tuple[Range, Range | None]] = {}
    for key, api in sorted(APIS.items()):
        msgs = []
        sources = []
        for suffix in ("Request", "Response"):
            name = api + suffix
            path = find_spec(name, kp_dir)
            sources.append(_source_label(path))
            spec = load_spec(path)
            if int(str(spec["apiKey"])) != key:
                raise ValueError(f"{path}: api key {spec['apiKey']} != {key}")
            msgs.append(build_message(spec, overrides.get(name)))
        table[key] = (msgs[0].valid, msgs[0].flexible)
        digest = None
        if api in COMPILED_APIS:
            # the compiled shape first: the pure module names its digest
            compiled[module_file_name(api)], digest = emit_compiled_module(api, msgs)
        files[module_file_name(api)] = emit_module(api, key, msgs, sources, digest)
    for name in DATA_MESSAGES:
        path = find_spec(name, kp_dir)
        msg = build_message(load_spec(path), overrides.get(name))
        files[module_file_name(name)] = emit_module(name, None, [msg], [_source_label(path)])
    files["__init__.py"] = _package_init(table)
    compiled["__init__.py"] = _compiled_package_init()
    return {f"{OUT_DIR.name}/{n}": src for n, src in files.items()} | {
        f"{COMPILED_DIR.name}/{n}": src for n, src in compiled.items()
    }


def _source_label(path: Path) -> str:
    if path.parent == OWN_SPECS:
        return f"mockbroker_protocol/specs/{path.name}"
    return f"kafka-python's {path.name}"


def _package_init(table: dict[int, tuple[Range, Range | None]]) -> str:
    lines = ['"""Generated message codecs, one module per API (see mockbroker_protocol/_codegen.py).', "", "Do not edit by hand: run `make regen`.", '"""', ""]
    lines.append("from __future__ import annotations")
    lines.append("")
    lines.append("# api key -> module name under mockbroker_protocol.messages")
    lines.append("API_MODULES: dict[int, str] = {")
    for key, api in sorted(APIS.items()):
        lines.append(f"    {key}: {snake(api)!r},")
    lines.append("}")
    lines.append("")
    lines.append("# api key -> (API name, the request's valid versions, its flexible versions or None): what")
    lines.append("# mockbroker_protocol.registry needs to route a request, frame a response and answer ApiVersions without")
    lines.append("# importing the API's module (it is imported on first use; start-up stays fast).")
    lines.append("API_VERSIONS: dict[int, tuple[str, tuple[int, int], tuple[int, int] | None]] = {")
    for key, api in sorted(APIS.items()):
        valid, flexible = table[key]
        lines.append(f"    {key}: ({api!r}, {valid!r}, {flexible!r}),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _compiled_package_init() -> str:
    names = ", ".join(snake(api) for api in COMPILED_APIS)
    return (
        '"""The compiled shape of the codecs of ' + names + ' (see mockbroker_protocol/_codegen_compiled.py).\n\n'
        "Built with mypyc at install time (setup.py); the pure modules in mockbroker_protocol/messages/ pick these up\n"
        'when they are compiled. Generated, except _wire.py: run `make regen`.\n"""\n\n'
        "from __future__ import annotations\n\n"
        "# module names (the same under mockbroker_protocol.messages) that have a compiled shape\n"
        f"COMPILED_MODULES: tuple[str, ...] = {tuple(snake(api) for api in COMPILED_APIS)!r}\n"
    )


def format_source(files: dict[str, str]) -> dict[str, str]:
    """Normalise layout with ruff format so checked-in files are stable and readable."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        tdir = Path(tmp)
        for name, src in files.items():
            (tdir / name).parent.mkdir(parents=True, exist_ok=True)
            (tdir / name).write_text(src, encoding="utf-8")
        ruff = Path(sys.executable).parent / "ruff"
        cmd = [str(ruff) if ruff.exists() else "ruff", "format", "--quiet", "--line-length", "110", str(tdir)]
        subprocess.run(cmd, check=True)
        return {name: (tdir / name).read_text(encoding="utf-8") for name in files}


def iter_drift(files: dict[str, str]) -> Iterator[str]:
    on_disk = {f"{d.name}/{p.name}" for d in (OUT_DIR, COMPILED_DIR) for p in d.glob("*.py")} - HAND_WRITTEN
    for name, src in files.items():
        path = HERE / name
        if not path.exists():
            yield f"missing: {name}"
        elif path.read_text(encoding="utf-8") != src:
            yield f"differs: {name}"
    for name in sorted(on_disk - set(files)):
        yield f"not generated: {name}"


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mockbroker_protocol._codegen", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if mockbroker_protocol/messages/ differs from the specs")
    args = ap.parse_args(list(argv) if argv is not None else None)
    files = format_source(generate_all())
    if args.check:
        drift = list(iter_drift(files))
        for line in drift:
            print(line)
        return 1 if drift else 0
    for d in (OUT_DIR, COMPILED_DIR):
        d.mkdir(exist_ok=True)
    for name, src in files.items():
        path = HERE / name
        if path.exists() and path.read_text(encoding="utf-8") == src:
            continue
        # atomic replace: a process importing the package never sees half a module
        tmp = path.with_suffix(".py.tmp")
        tmp.write_text(src, encoding="utf-8")
        os.replace(tmp, path)
    for d in (OUT_DIR, COMPILED_DIR):
        for path in d.glob("*.py"):
            if f"{d.name}/{path.name}" not in files and f"{d.name}/{path.name}" not in HAND_WRITTEN:
                path.unlink()
    print(f"wrote {len(files)} modules to {OUT_DIR} and {COMPILED_DIR}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
