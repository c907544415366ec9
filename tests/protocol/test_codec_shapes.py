"""The two shapes of the codecs: compiled (mockbroker_protocol/_compiled/, mypyc) and pure (mockbroker_protocol/messages/).

The rest of tests/protocol runs on whichever shape is in use (`make test` runs it twice: compiled,
then MOCKBROKER_PURE_CODEC=1). These tests check the selection itself, and compare the two
shapes' functions directly, layout by layout, in one process: same bytes, equal objects of the
same classes, the same DecodeError subclass for broken input.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker_protocol import _runtime
from mockbroker_protocol._compiled import COMPILED_MODULES
from mockbroker_protocol.errors import DecodeError
from tests.integration.support import in_ci
from tests.protocol import message_strategies as ms

SHAPES = _runtime.codec_shapes()
FORCED_PURE = _runtime.pure_codec_forced()
COMPILED = all(s == "compiled" for s in SHAPES.values())


def test_the_shape_in_use_is_the_one_asked_for() -> None:
    if FORCED_PURE:
        assert set(SHAPES.values()) == {"pure"}
    elif in_ci():
        # `make test` installs a compiler and builds the compiled shape: a build that silently
        # fell back to pure must fail CI, not pass it on the slower codecs.
        assert COMPILED, f"CI must test the compiled codecs, but: {SHAPES}"
    elif not COMPILED:
        pytest.skip(f"compiled codecs not built here ({SHAPES}); `pip install -e .` with a C compiler builds them")


def test_every_generated_compiled_module_is_selectable() -> None:
    from mockbroker_protocol import _codegen, _codegen_compiled

    assert [_codegen.snake(a) for a in _codegen_compiled.COMPILED_APIS] == list(COMPILED_MODULES)
    for name in COMPILED_MODULES:
        text = (_codegen.OUT_DIR / f"{name}.py").read_text()
        assert f"_runtime.compiled_module(\"{name}\"," in text


def test_the_environment_variable_forces_pure_in_a_fresh_process() -> None:
    code = "import mockbroker_protocol._runtime as r; print(sorted(set(r.codec_shapes().values())))"
    env = {**os.environ, "MOCKBROKER_PURE_CODEC": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['pure']"


_SKIP_PURE = pytest.mark.skipif(not COMPILED, reason="the compiled codecs are not in use in this run")


def needs_compiled(test: Any) -> Any:
    """Compiled-shape-only tests: marked ``compiled_codec`` so the Makefile's pure pass deselects
    them (nothing skips in CI), and skipped on a machine that built no compiled codecs."""
    return pytest.mark.compiled_codec(_SKIP_PURE(test))


def _pairs() -> list[tuple[type, int, Any, Any, Any, Any]]:
    """(class, version, compiled decode, pure decode, compiled encode, pure encode) for every top
    class and version of the compiled modules; the pure functions are found by name (the two
    generators name a layout's functions alike)."""
    out = []
    for name in COMPILED_MODULES:
        pure = importlib.import_module(f"mockbroker_protocol.messages.{name}")
        comp = importlib.import_module(f"mockbroker_protocol._compiled.{name}")
        for cls_name in pure.__all__:
            cls = getattr(pure, cls_name)
            if not hasattr(cls, "SPEC"):
                continue
            upper = _upper(cls_name)
            decs, encs = getattr(comp, f"{upper}_DECODERS"), getattr(comp, f"{upper}_ENCODERS")
            lo, hi = cls.SPEC.valid_versions
            for v in range(lo, hi + 1):
                cd, ce = decs[v], encs[v]
                pd = getattr(pure, "_" + cd.__name__)
                pe = getattr(pure, "_encode_" + ce.__name__.removeprefix("encode_"))
                out.append((cls, v, cd, pd, ce, pe))
    return out


def _upper(name: str) -> str:
    from mockbroker_protocol._codegen import snake

    return snake(name).upper()


PAIRS = _pairs() if COMPILED else []
FAST = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@needs_compiled
def test_the_tables_hold_the_compiled_functions() -> None:
    assert PAIRS
    for cls, v, cd, _, ce, _ in PAIRS:
        mod = importlib.import_module(cls.__module__)
        tables = {k: t for k, t in vars(mod).items() if k.endswith(("_DECODERS", "_ENCODERS"))}
        assert any(t.get(v) is cd for t in tables.values()), (cls, v)
        assert any(t.get(v) is ce for t in tables.values()), (cls, v)
        assert type(cd).__name__ == "builtin_function_or_method"  # compiled, not interpreted


def _run(fn: Any, *args: Any) -> Any:
    """A decode through the classes' failure mapping: the value, or the DecodeError class raised."""
    try:
        obj, end = fn(*args)
    except Exception as exc:
        return type(_runtime.decode_failure(exc, "X", 0, args[0]))
    return obj, end


@needs_compiled
@pytest.mark.parametrize(("cls", "v", "cd", "pd", "ce", "pe"), PAIRS, ids=[f"{p[0].__name__}-v{p[1]}" for p in PAIRS])
@FAST
@given(data=st.data())
def test_compiled_and_pure_agree(cls: type, v: int, cd: Any, pd: Any, ce: Any, pe: Any, data: st.DataObject) -> None:
    msg = data.draw(ms.message(cls, v))
    a, b = bytearray(), bytearray()
    ce(msg, a)
    pe(msg, b)
    assert a == b
    encoded = bytes(a)
    got, want = cd(encoded, 0), pd(encoded, 0)
    assert type(got[0]) is cls and got == want and repr(got[0]) == repr(want[0])
    # broken input: a truncation and a flipped byte decode alike or both fail with a DecodeError
    cut = data.draw(st.integers(0, max(0, len(encoded) - 1)))
    _same_outcome(_run(cd, encoded[:cut], 0), _run(pd, encoded[:cut], 0))
    if encoded:
        i = data.draw(st.integers(0, len(encoded) - 1))
        flipped = encoded[:i] + bytes([encoded[i] ^ data.draw(st.integers(1, 255))]) + encoded[i + 1 :]
        _same_outcome(_run(cd, flipped, 0), _run(pd, flipped, 0))


def _same_outcome(r1: Any, r2: Any) -> None:
    if isinstance(r1, type) or isinstance(r2, type):
        # Both fail, each with a DecodeError. The subclass can differ at the edges: a string cut
        # inside a multi-byte character is InvalidValueError (not UTF-8) where a shape slices
        # first and TruncatedError where it checks the length first.
        assert isinstance(r1, type) and isinstance(r2, type), (r1, r2)
        assert issubclass(r1, DecodeError) and issubclass(r2, DecodeError)
    else:
        assert r1 == r2


@needs_compiled
def test_encode_errors_are_encode_errors_in_both_shapes() -> None:
    from mockbroker_protocol.errors import EncodeError
    from mockbroker_protocol.messages.join_group import JoinGroupResponse, JoinGroupResponseMember

    bad = [
        JoinGroupResponse(members=[JoinGroupResponseMember(member_id=None)]),  # type: ignore[arg-type]
        JoinGroupResponse(error_code=1 << 20),
        JoinGroupResponse(generation_id="x"),  # type: ignore[arg-type]
    ]
    for msg in bad:
        for v in (5, 9):
            with pytest.raises(EncodeError):
                msg.encode(v)
    # a tuple where a list is declared encodes as in the pure shape
    ok = JoinGroupResponse(members=(JoinGroupResponseMember(member_id="m"),))  # type: ignore[arg-type]
    assert ok.encode(9) == JoinGroupResponse(members=[JoinGroupResponseMember(member_id="m")]).encode(9)
