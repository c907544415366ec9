"""Size-prefixed frames: a sans-I/O FrameBuffer that cuts a byte stream into frames, and encode_frame.

Every Kafka request and response travels as a frame: a 4-byte big-endian signed size, then that
many bytes of payload (header + body). The broker feeds whatever the socket returns into a
FrameBuffer and takes complete payloads out; this module never touches a socket or a clock.

Limits follow the broker's NetworkReceive: a negative size is invalid, and a size above
``socket.request.max.bytes`` (default 104857600 = 100 MiB) is refused from the 4-byte prefix alone,
before any of the payload is buffered, so a client cannot make the broker allocate memory by
announcing a huge frame. A zero size is a valid (empty) frame; what it holds is the decoder's
problem, not the framer's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from struct import Struct
from typing import NoReturn

from protocol.errors import DecodeError, EncodeError, FrameTooLarge, InvalidValueError
from protocol.primitives import Buffer

__all__ = ["DEFAULT_MAX_FRAME_SIZE", "FrameBuffer", "encode_frame", "frame_bytes"]

# Kafka's socket.request.max.bytes default.
DEFAULT_MAX_FRAME_SIZE = 104857600

_SIZE = Struct(">i")
_MAX_INT32 = 0x7FFFFFFF

# Compact the buffer (drop consumed bytes from its front) once this many consumed bytes sit before
# the read offset and they are at least half of it: each byte is then moved O(1) times amortised,
# and small-frame traffic does not pay a memmove per frame.
_COMPACT_AT = 64 * 1024


class FrameBuffer:
    """Cuts a byte stream into frame payloads.

    ``feed(data)`` appends what the socket read; ``next_frame()`` returns the next complete payload
    as its own ``bytes`` object (never a view into the buffer, so callers may keep memoryview slices
    of it), or None until one is complete; ``frames()`` yields every complete payload.

    The buffer is the last read itself while it holds only whole frames (no copy at all before
    each frame is sliced out), else a bytearray plus a read offset: appends are amortised O(1) per
    byte, a frame is copied out once, and consumed bytes are dropped in bulk, so both many small
    frames in one read and one large frame in many reads cost linear time.

    A stream error (FrameTooLarge, InvalidValueError for a negative size) is sticky: the stream
    cannot be resynchronised, so every later call raises it again and nothing more is buffered.
    """

    __slots__ = ("_buf", "_error", "_max", "_pos")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        if not 0 <= max_frame_size <= _MAX_INT32:
            raise ValueError(f"max_frame_size must be in [0, {_MAX_INT32}], not {max_frame_size}")
        self._max = max_frame_size
        # What was read and not yet cut into frames, from ``_pos`` on: the last read itself while it
        # holds whole frames, a bytearray once a frame spans reads.
        self._buf: bytes | bytearray = b""
        self._pos = 0
        self._error: DecodeError | None = None

    @property
    def max_frame_size(self) -> int:
        return self._max

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as part of a frame."""
        return len(self._buf) - self._pos

    def feed(self, data: Buffer) -> None:
        """Append bytes read from the stream. Raises the stream's error if it already has one."""
        if self._error is not None:
            raise self._error
        if not data:
            return
        buf, pos = self._buf, self._pos
        if pos == len(buf):
            # Nothing buffered (the common case: a read ends on a frame boundary). A ``bytes`` read
            # is kept as it is, not copied: frames are sliced out of it directly (one copy each).
            self._buf = data if type(data) is bytes else bytearray(data)
            self._pos = 0
            return
        if isinstance(buf, bytes):
            # A partial frame left in a kept read: from here on a growable buffer (copied once, so
            # a large frame arriving in many reads still costs linear time).
            view = memoryview(buf)
            self._buf = buf = bytearray(view[pos:])
            view.release()
            self._pos = 0
        elif pos >= _COMPACT_AT and pos * 2 >= len(buf):
            del buf[:pos]
            self._pos = 0
        buf += data

    def next_frame(self) -> bytes | None:
        """The next complete frame's payload, or None if the buffer does not hold one yet.

        Raises FrameTooLarge or InvalidValueError as soon as the 4-byte size prefix is buffered,
        whether or not any of the payload has arrived.
        """
        if self._error is not None:
            raise self._error
        buf = self._buf
        pos = self._pos
        available = len(buf) - pos
        if available < 4:
            return None
        (size,) = _SIZE.unpack_from(buf, pos)
        if size < 0:
            self._fail(InvalidValueError(f"frame size prefix is negative ({size})"))
        if size > self._max:
            self._fail(FrameTooLarge(size, self._max))
        if available - 4 < size:
            return None
        start = pos + 4
        end = start + size
        self._pos = end
        if type(buf) is bytes:
            return buf[start:end]
        # Copy through a memoryview so the payload is copied once (a bytearray slice would copy
        # twice); the view is released before returning so the bytearray can be resized again.
        view = memoryview(buf)
        try:
            return view[start:end].tobytes()
        finally:
            view.release()

    def frames(self) -> Iterator[bytes]:
        """Yield every complete frame's payload currently buffered."""
        while (frame := self.next_frame()) is not None:
            yield frame

    def _fail(self, error: DecodeError) -> NoReturn:
        self._error = error
        # The connection is going to be closed; drop what was buffered.
        self._buf = b""
        self._pos = 0
        raise error


def _nbytes(chunk: Buffer) -> int:
    return chunk.nbytes if isinstance(chunk, memoryview) else len(chunk)


def encode_frame(chunks: Iterable[Buffer]) -> list[Buffer]:
    """Prepend the 4-byte size to a payload given as chunks, for ``transport.writelines``.

    The chunks are not copied (records stay the buffers they are stored in); empty ones are left
    out. Raises EncodeError if the total does not fit Kafka's int32 size.
    """
    parts = [chunk for chunk in chunks if _nbytes(chunk)]
    size = sum(_nbytes(chunk) for chunk in parts)
    if size > _MAX_INT32:
        raise EncodeError(f"frame payload of {size} bytes does not fit an int32 size prefix")
    parts.insert(0, _SIZE.pack(size))
    return parts


def frame_bytes(payload: Buffer) -> bytes:
    """One payload as one framed ``bytes`` (test clients, small replies)."""
    size = _nbytes(payload)
    if size > _MAX_INT32:
        raise EncodeError(f"frame payload of {size} bytes does not fit an int32 size prefix")
    return b"".join((_SIZE.pack(size), payload))
