"""The second, compiler-aimed shape of the generated codecs: mockbroker_protocol/_compiled/<api>.py, for mypyc.

mockbroker_protocol/_codegen.py writes the pure modules (mockbroker_protocol/messages/), shaped for the CPython
interpreter: Struct runs, inlined one-byte lengths, leaf structs inlined into array loops. That
shape compiles badly: under mypyc every Struct call and slice-and-decode stays a generic call. This
module writes, for the APIs in COMPILED_APIS, a shape that mypyc turns into C:

- plain module-level functions (no classes: decoded objects are the very dataclasses of the pure
  module, imported from it, so ``isinstance``, equality and repr cannot differ between shapes);
- integers assembled from single bytes and strings read by small typed helpers
  (mockbroker_protocol/_compiled/_wire.py), which compile to direct C calls returning C structs;
- one function per struct layout, called per array element (a native call is cheap once compiled,
  so nothing is inlined);
- encoders that append byte strings to a list joined once, instead of growing a bytearray with
  method calls (``bytearray.append`` is a generic call from compiled code);
- the instance made with ``object.__new__`` (the dataclasses are ordinary Python classes) and each
  field stored as it is read, fields the version lacks set to their defaults;
- array fields read through ``Sequence`` locals, so a tuple encodes as it does in the pure shape.

The pure module of each of these APIs ends by asking mockbroker_protocol._runtime.compiled_module() for its
compiled twin and, when one is installed (an extension module built by mypyc; see setup.py),
replaces its version tables' entries with the compiled functions. The message classes' methods
(decode, encode, the DecodeError/EncodeError mapping) stay those of the pure module.

The generated sources are checked in, like the pure ones, so a build needs no spec files (they
come from kafka-python, a test dependency); ``make regen`` rewrites both shapes and
tests/protocol/test_codegen.py fails when either drifts.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockbroker_protocol._codegen import Field, Message, Struct

# The APIs that get a compiled shape: the consumer-group APIs (issue #2's 5x target) and the other
# requests every client sends often. Modules whose pure shape is already bound by something else
# (Produce/Fetch: records pass through uncopied) are left out.
COMPILED_APIS: tuple[str, ...] = (
    "Heartbeat",
    "JoinGroup",
    "SyncGroup",
    "OffsetCommit",
    "OffsetFetch",
    "LeaveGroup",
)

INT_SIZES = {"int8": 1, "int16": 2, "int32": 4, "int64": 8}


class CompiledCodegen:
    """Emits the compiled shape of one API module's messages."""

    def __init__(self, messages: list[Message]) -> None:
        from mockbroker_protocol import _codegen as g

        self.g = g
        self.messages = messages
        self.helpers: set[str] = set()
        self.uses_encode_error = False
        self.uses_uuid = False
        self.uses_zero_uuid = False
        self.packers: dict[str, str] = {}  # global name -> struct format of a fixed-width run
        self.fn_names: dict[tuple[str, str, int], str] = {}  # (kind, struct, layout) -> name

    # ---- naming

    def name(self, kind: str, st: Struct, v: int) -> str:
        return self.fn_names[(kind, st.name, st.layouts[v])]

    def h(self, helper: str) -> str:
        self.helpers.add(helper)
        return helper

    # ---- the module

    def module(self, api_name: str, pure_module: str) -> str:
        g = self.g
        functions: list[str] = []
        tables: list[str] = []
        classes: list[str] = []
        for msg in self.messages:
            layouts = g.compute_layouts(msg)
            for st in msg.structs:
                classes.append(st.name)
                for i, (_, vs) in enumerate(layouts[st.name]):
                    for kind in ("decode", "parts"):
                        self.fn_names[(kind, st.name, i)] = f"{kind}_{st.name}_v{min(vs)}"
                    if st is msg.top:
                        self.fn_names[("encode", st.name, i)] = f"encode_{st.name}_v{min(vs)}"
            for st in reversed(msg.structs):
                for _, vs in layouts[st.name]:
                    v = vs[0]
                    functions.append(self.decode_fn(msg, st, v, vs))
                    functions.append(self.parts_fn(msg, st, v, vs))
                    if st is msg.top:
                        functions.append(self.encode_fn(st, v, vs))
            top = msg.top
            upper = g.snake(msg.name).upper()
            dec = ", ".join(f"{v}: {self.name('decode', top, v)}" for v in sorted(top.layouts))
            enc = ", ".join(f"{v}: {self.name('encode', top, v)}" for v in sorted(top.layouts))
            tables.append(
                f"{upper}_DECODERS: dict[int, Callable[[bytes, int], tuple[{top.name}, int]]] = {{{dec}}}\n"
                f"{upper}_ENCODERS: dict[int, Callable[[{top.name}, bytearray], None]] = {{{enc}}}"
            )
        doc = (
            f'"""{api_name}: the compiled shape of mockbroker_protocol.messages.{pure_module} (built with mypyc).\n\n'
            "Generated by mockbroker_protocol/_codegen_compiled.py from the same specs as the pure module.\n"
            "Do not edit by hand: change the generator or its inputs and run `make regen`.\n"
            "Import mockbroker_protocol.messages." + pure_module + ", never this module: the pure module installs these\n"
            'functions into its version tables when this module is compiled.\n"""'
        )
        imports = ["from __future__ import annotations", ""]
        body_text = "\n".join(functions)
        imports.append("from collections.abc import Callable" + (", Sequence" if "Sequence[" in body_text else ""))
        if self.packers:
            imports.append("from struct import Struct")
        imports.append("from typing import Final")
        if self.uses_uuid:
            imports.append("from uuid import UUID")
        imports.append("")
        if self.uses_encode_error:
            imports.append("from mockbroker_protocol.errors import EncodeError")
        imports.append(f"from mockbroker_protocol._compiled._wire import {', '.join(sorted(self.helpers))}")
        imports.append(f"from mockbroker_protocol.messages.{pure_module} import {', '.join(sorted(set(classes)))}")
        if self.uses_zero_uuid:
            imports.append("from mockbroker_protocol.primitives import ZERO_UUID")
        imports.append("")
        imports.append("# decoders make instances without running __init__ (the pure shape does the same)")
        imports.append("_new: Final = object.__new__")
        imports += [f"{name}: Final = Struct({'>' + fmt!r}).pack" for name, fmt in sorted(self.packers.items())]
        parts = [doc, "\n".join(imports), *functions, *tables]
        body = "\n\n\n".join(p.rstrip() for p in parts) + "\n"
        # The pure module passes this digest when it asks for its compiled twin: a build left over
        # from before a `make regen` (stale extension modules) is then refused, not misused.
        self.digest = hashlib.sha256(body.encode()).hexdigest()[:16]
        return body + f"\n\n# digest of this module's source, checked by mockbroker_protocol.messages.{pure_module}\nSOURCE_DIGEST: Final = {self.digest!r}\n"

    # ---- decode

    def decode_fn(self, msg: Message, st: Struct, v: int, vs: list[int]) -> str:
        g = self.g
        flex = g.in_range(msg.flexible, v)
        L = [f"def {self.name('decode', st, v)}(data: bytes, pos: int) -> tuple[{st.name}, int]:"]
        L.append(f'    """{st.name}, {g.ranges_text(vs)}{" (flexible)" if flex else ""}."""')
        L.append(f"    o: {st.name} = _new({st.name})")
        for f in st.fields:
            if not f.present(v) or f.is_tagged(v):
                if f.is_tagged(v):
                    raise ValueError(f"{st.name}.{f.name}: tagged fields are not in the compiled shape")
                L.append(f"    o.{f.name} = {self.default(f)}")
        for f in st.fields:
            if f.present(v):
                L += self.decode_field(msg, f, v, flex, f"o.{f.name}", "    ")
        if flex:
            L.append(f"    pos = {self.h('tags')}(data, pos)")
        L.append("    return o, pos")
        return "\n".join(L)

    def default(self, f: Field) -> str:
        d = f.default_expr()
        if d == "ZERO_UUID":
            self.uses_zero_uuid = True
        return d

    def decode_field(self, msg: Message, f: Field, v: int, flex: bool, var: str, ind: str) -> list[str]:
        t = f.type
        name = repr(f.kafka_name)
        nullable = f.is_nullable(v)
        if f.is_array:
            return self.decode_array(msg, f, v, flex, var, ind)
        if f.struct is not None:
            if nullable:
                raise ValueError(f"{f.name}: nullable structs are not in the compiled shape")
            return [f"{ind}{var}, pos = {self.name('decode', f.struct, v)}(data, pos)"]
        if t in INT_SIZES:
            return [f"{ind}{var} = {self.h(t.replace('int', 'i'))}(data, pos)", f"{ind}pos += {INT_SIZES[t]}"]
        if t == "bool":
            return [f"{ind}{var} = data[pos] != 0", f"{ind}pos += 1"]
        if t == "uuid":
            self.uses_uuid = True
            return [f"{ind}{var} = UUID(bytes={self.h('raw')}(data, pos, 16))", f"{ind}pos += 16"]
        if t in ("string", "bytes"):
            if flex:
                fn = ("cn" if nullable else "c") + ("str" if t == "string" else "bytes")
                # strings always carry the field's name: Kafka's length error (0x7fff) names it
                args = "" if nullable and t == "bytes" else f", {name}"
            else:
                fn = ("n" if nullable else "") + ("string" if t == "string" else "bytes")
                fn = "bytes_" if fn == "bytes" else fn
                args = f", {name}"
            return [f"{ind}{var}, pos = {self.h(fn)}(data, pos{args})"]
        raise ValueError(f"{f.name}: type {t} is not in the compiled shape")

    def decode_array(self, msg: Message, f: Field, v: int, flex: bool, var: str, ind: str) -> list[str]:
        n, lst, e = f"n_{f.name}", f"l_{f.name}", f"e_{f.name}"
        name = repr(f.kafka_name)
        L = []
        if flex:
            L.append(f"{ind}{n}, pos = {self.h('compact_len')}(data, pos)")
        else:
            L += [f"{ind}{n} = {self.h('i32')}(data, pos)", f"{ind}pos += 4"]
        if f.is_nullable(v):
            L.append(f"{ind}if {self.h('ncount')}(data, pos, {n}, {name}) < 0:")
            L.append(f"{ind}    {var} = None")
            L.append(f"{ind}else:")
            ind += "    "
        else:
            L.append(f"{ind}{self.h('count')}(data, pos, {n}, {name})")
        elem_type = f.struct.name if f.struct is not None else self.g.PY_TYPES[f.elem]
        L.append(f"{ind}{lst}: list[{elem_type}] = []")
        L.append(f"{ind}for _ in range({n}):")
        if f.struct is not None:
            L.append(f"{ind}    {e}, pos = {self.name('decode', f.struct, v)}(data, pos)")
        else:
            elem = self.g.Field(f.kafka_name, f.elem, f.versions, None, None, None, None)
            L += self.decode_field(msg, elem, v, flex, e, ind + "    ")
        L.append(f"{ind}    {lst}.append({e})")
        L.append(f"{ind}{var} = {lst}")
        return L

    # ---- encode

    def encode_fn(self, st: Struct, v: int, vs: list[int]) -> str:
        return "\n".join(
            [
                f"def {self.name('encode', st, v)}(o: {st.name}, out: bytearray) -> None:",
                f'    """{st.name}, {self.g.ranges_text(vs)}: appended to ``out``."""',
                "    parts: list[bytes] = []",
                f"    {self.name('parts', st, v)}(o, parts)",
                '    out += b"".join(parts)',
            ]
        )

    def parts_fn(self, msg: Message, st: Struct, v: int, vs: list[int]) -> str:
        g = self.g
        flex = g.in_range(msg.flexible, v)
        L = [f"def {self.name('parts', st, v)}(o: {st.name}, parts: list[bytes]) -> None:"]
        L.append(f'    """{st.name}, {g.ranges_text(vs)}{" (flexible)" if flex else ""}."""')
        # A run of fixed-width fields goes out as one Struct.pack (one call, one part), as in the
        # pure shape; int.to_bytes per field costs more than the call once compiled.
        run: list[tuple[str, str]] = []

        def flush() -> None:
            if run:
                fmt = "".join(c for _, c in run)
                L.append(f"    parts.append({self.packer(fmt)}({', '.join(e for e, _ in run)}))")
                run.clear()

        for f in st.fields:
            if not f.present(v):
                continue
            ex = f"o.{f.name}"
            if f.ever_nullable and not f.is_nullable(v):
                # Null in some versions but not this one: Kafka refuses to serialize it.
                self.uses_encode_error = True
                flush()
                L += [
                    f"    v_{f.name} = " + (f"getattr(o, {f.name!r})" if f.is_array else ex),
                    f"    if v_{f.name} is None:",
                    f"        raise EncodeError('{st.name}.{f.name} is null, which version {v} does not allow')",
                ]
                ex = f"v_{f.name}"
            if not f.is_array and f.type in g.FIXED:
                run.append((f"{ex}.bytes" if f.type == "uuid" else ex, g.FIXED[f.type][0]))
                continue
            flush()
            L += self.encode_field(f, v, flex, ex, "    ")
        if flex and run:
            run.append(("0", "B"))  # the empty tagged-fields count, packed with the last run
            flush()
        else:
            flush()
            if flex:
                L.append('    parts.append(b"\\x00")  # no tagged fields')
        if len(L) == 2:
            L.append("    pass")
        return "\n".join(L)

    def packer(self, fmt: str) -> str:
        name = "_P_" + fmt.replace("?", "o")
        self.packers[name] = fmt
        return name

    def encode_field(self, f: Field, v: int, flex: bool, ex: str, ind: str) -> list[str]:
        t = f.type
        nullable = f.is_nullable(v)
        if f.is_array:
            a = f"a_{f.name}"
            elem_type = f.struct.name if f.struct is not None else self.g.PY_TYPES[f.elem]
            seq = f"Sequence[{elem_type}]" + (" | None" if nullable else "")
            # read untyped (getattr), so that mypyc does not insist on a list: any sequence
            # encodes, as in the pure shape
            obj, _, attr = ex.rpartition(".")
            read = f"getattr({obj}, {attr!r})" if obj else ex
            L = [f"{ind}{a}: {seq} = {read}", f"{ind}{self.h('w_count')}(parts, {a}, {flex})"]
            if nullable:
                L.append(f"{ind}if {a} is not None:")
                ind += "    "
            e = f"e_{f.name}"
            L.append(f"{ind}for {e} in {a}:")
            if f.struct is not None:
                L.append(f"{ind}    {self.name('parts', f.struct, v)}({e}, parts)")
            else:
                elem = self.g.Field(f.kafka_name, f.elem, f.versions, None, None, None, None)
                L += self.encode_field(elem, v, flex, e, ind + "    ")
            return L
        if f.struct is not None:
            return [f"{ind}{self.name('parts', f.struct, v)}({ex}, parts)"]
        if t in INT_SIZES:
            return [f'{ind}parts.append({ex}.to_bytes({INT_SIZES[t]}, "big", signed=True))']
        if t == "bool":
            return [f'{ind}parts.append(b"\\x01" if {ex} else b"\\x00")']
        if t == "uuid":
            return [f"{ind}parts.append({ex}.bytes)"]
        if t in ("string", "bytes"):
            if flex:
                fn = "w_" + ("cn" if nullable else "c") + ("str" if t == "string" else "bytes")
            else:
                fn = "w_" + ("n" if nullable else "") + ("string" if t == "string" else "bytes")
            return [f"{ind}{self.h(fn)}(parts, {ex})"]
        raise ValueError(f"{f.name}: type {t} is not in the compiled shape")


def emit_compiled_module(api_name: str, messages: list[Message]) -> tuple[str, str]:
    """(source of mockbroker_protocol/_compiled/<api>.py, its digest for the pure module's check)."""
    from mockbroker_protocol import _codegen as g

    cg = CompiledCodegen(messages)
    return cg.module(api_name, g.snake(api_name)), cg.digest
