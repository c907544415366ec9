"""Failure mapping for the generated codecs, kept off their hot path.

Generated per-version functions are straight-line code that fails with the interpreter's own
exceptions on bad input (IndexError past the end, struct.error on a short buffer,
UnicodeDecodeError); the generated ``decode``/``encode`` methods catch whatever escapes and ask
these functions what to raise instead: the DecodeError family for bytes that are not a valid
message (the peer's fault), EncodeError for a message its builder got wrong (the caller's fault).
"""

from __future__ import annotations

import struct
from typing import NoReturn

from protocol.errors import DecodeError, EncodeError, InvalidValueError, TruncatedError


def decode_failure(exc: BaseException | None, name: str, version: int, data: object) -> DecodeError:
    """What to raise for ``exc`` from a decoder (None: the message ran past the frame's end)."""
    if exc is None:
        return TruncatedError(f"{name} v{version}: the buffer ends inside the message")
    if isinstance(exc, DecodeError):
        return exc
    if not isinstance(data, bytes):
        # Decoders slice and decode bytes (the fastest path in CPython); the broker's frame
        # buffer hands out bytes. Anything else is the caller's mistake, not the peer's.
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
