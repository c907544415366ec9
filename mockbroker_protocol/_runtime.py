"""Failure mapping for the generated codecs, kept off their hot path.

Generated per-version functions are straight-line code that fails with the interpreter's own
exceptions on bad input (IndexError past the end, struct.error on a short buffer,
UnicodeDecodeError); the generated ``decode``/``encode`` methods catch whatever escapes and ask
these functions what to raise instead: the DecodeError family for bytes that are not a valid
message (the peer's fault), EncodeError for a message its builder got wrong (the caller's fault).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import struct
import warnings
from types import ModuleType
from typing import NoReturn

from mockbroker_protocol.errors import DecodeError, EncodeError, InvalidValueError, TruncatedError


def decode_failure(exc: BaseException | None, name: str, version: int, data: object) -> DecodeError:
    """What to raise for ``exc`` from a decoder (None: the message ran past the frame's end)."""
    if exc is None:
        return TruncatedError(f"{name} v{version}: the buffer ends inside the message")
    if isinstance(exc, DecodeError):
        return exc
    if not isinstance(data, bytes | bytearray):
        # Decoders slice and decode bytes (the fastest path in CPython); the broker's frame
        # buffer hands out bytes, or a bytearray of its own for a large Produce frame
        # (registry.decode_request). Anything else is the caller's mistake, not the peer's.
        raise TypeError(f"{name}.decode takes bytes, not {type(data).__name__}") from exc
    if isinstance(exc, KeyError):
        return DecodeError(f"{name} has no version {version}")
    if isinstance(exc, IndexError | struct.error):
        return TruncatedError(f"{name} v{version}: buffer ended early ({exc})")
    if isinstance(exc, UnicodeDecodeError):
        return InvalidValueError(f"{name} v{version}: a string is not UTF-8 ({exc.reason})")
    if isinstance(exc, ValueError | OverflowError | MemoryError):
        return InvalidValueError(f"{name} v{version}: {exc}")
    # Anything else is a bug in the codec itself: let it surface as it is.
    raise exc


def null_value(field: str) -> NoReturn:
    """A non-nullable compact string or bytes field arrived as null (length byte 0)."""
    raise InvalidValueError(f"{field}: null, which this field does not allow")


def encode_failure(exc: BaseException, name: str, version: int) -> EncodeError:
    if isinstance(exc, KeyError):
        return EncodeError(f"{name} has no version {version}")
    return EncodeError(f"{name} v{version}: {type(exc).__name__}: {exc}")


# -- the compiled shape -------------------------------------------------------------------------

#: Environment variable that keeps every codec on its pure functions (set it to 1, true or yes).
PURE_CODEC_ENV = "MOCKBROKER_PURE_CODEC"

#: module name under mockbroker_protocol.messages -> "compiled" or "pure", for each module with a compiled
#: shape that has been imported (see codec_shapes()).
SHAPES: dict[str, str] = {}


def pure_codec_forced() -> bool:
    return os.environ.get(PURE_CODEC_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def compiled_module(name: str, digest: str) -> ModuleType | None:
    """mockbroker_protocol._compiled.<name> when it is an extension module built by mypyc from the source the
    caller was generated with (``digest``), else None.

    Called once by each pure module that has a compiled twin, at its import (so it works the same
    whether the registry loads codec modules eagerly or on first use). The twin's source is in the
    package too, but interpreted it is slower than the pure shape, so only a compiled one is used.
    A compiled module that is stale (built before a `make regen`) or fails to load falls back to the
    pure shape with a warning, never an error."""
    shape = "pure"
    module: ModuleType | None = None
    if not pure_codec_forced():
        full = f"mockbroker_protocol._compiled.{name}"
        spec = importlib.util.find_spec(full)
        if spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            try:
                loaded = importlib.import_module(full)
            except ImportError as exc:  # pragma: no cover - a broken build
                warnings.warn(f"{full}: compiled codec not loadable, using the pure one ({exc})", stacklevel=2)
            else:
                if getattr(loaded, "SOURCE_DIGEST", None) == digest:
                    module, shape = loaded, "compiled"
                else:
                    warnings.warn(
                        f"{full}: the compiled codec was built from other sources (reinstall: "
                        "`pip install -e .` or `make test`); using the pure one",
                        stacklevel=2,
                    )
    SHAPES[name] = shape
    return module


def codec_shapes() -> dict[str, str]:
    """{module under mockbroker_protocol.messages: "compiled" or "pure"} for every module that has a compiled
    shape, importing them as needed (for tests, benchmarks and diagnostics)."""
    from mockbroker_protocol._compiled import COMPILED_MODULES

    for name in COMPILED_MODULES:
        importlib.import_module(f"mockbroker_protocol.messages.{name}")
    return {name: SHAPES[name] for name in COMPILED_MODULES}
