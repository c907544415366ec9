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

__all__ = ["DEFAULT_MAX_FRAME_SIZE", "DIRECT_FRAME_SIZE", "FrameBuffer", "OwnedFrame", "encode_frame", "frame_bytes"]

# Kafka's socket.request.max.bytes default.
DEFAULT_MAX_FRAME_SIZE = 104857600

_SIZE = Struct(">i")
_MAX_INT32 = 0x7FFFFFFF

# Compact the buffer (drop consumed bytes from its front) once this many consumed bytes sit before
# the read offset and they are at least half of it: each byte is then moved O(1) times amortised,
# and small-frame traffic does not pay a memmove per frame.
_COMPACT_AT = 64 * 1024

# Frames of at least this many bytes are handed out as an OwnedFrame (a bytearray), and one still
# arriving is assembled in place: a buffer of the frame's size is made once its size prefix is
# read, and later reads are copied straight into it. Large frames are produce requests carrying
# record batches; the log keeps them without copying them again (see OwnedFrame).
DIRECT_FRAME_SIZE = 64 * 1024


class OwnedFrame(bytearray):
    """A large frame's payload in a buffer of its own that nothing else refers to: whoever takes
    it from the FrameBuffer owns it, and may keep slices of it and write into them (the broker's
    log keeps a produced record batch as a slice of its request frame and patches its base offset
    in place, where a ``bytes`` frame would have to be copied first)."""

    __slots__ = ()


class FrameBuffer:
    """Cuts a byte stream into frame payloads.

    ``feed(data)`` appends what the socket read; ``next_frame()`` returns the next complete payload,
    or None until one is complete; ``frames()`` yields every complete payload. A payload is never a
    view into the buffer, so callers may keep memoryview slices of it: frames below
    ``DIRECT_FRAME_SIZE`` are ``bytes``, larger ones an ``OwnedFrame`` (a bytearray of their own),
    by size alone, whatever the read boundaries were.

    Bytes are copied as little as possible, so that both many small frames in one read and one
    large frame in many reads cost linear time, and a large frame is copied once in all:
    - A read handed over as ``bytes`` while nothing else is buffered is kept as it is (immutable,
      so it cannot change under us), and frames are cut from it; only a trailing partial frame is
      copied, into a bytearray that later reads are appended to (consumed bytes are dropped in bulk).
    - A frame of ``DIRECT_FRAME_SIZE`` or more still arriving gets its own buffer as soon as its
      size prefix is read (``next_frame``); the bytes of it already read are moved there and later
      reads are copied straight into it, and that buffer is the frame handed out.

    A stream error (FrameTooLarge, InvalidValueError for a negative size) is sticky: the stream
    cannot be resynchronised, so every later call raises it again and nothing more is buffered.
    """

    __slots__ = ("_buf", "_error", "_filled", "_frame", "_max", "_pos")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        if not 0 <= max_frame_size <= _MAX_INT32:
            raise ValueError(f"max_frame_size must be in [0, {_MAX_INT32}], not {max_frame_size}")
        self._max = max_frame_size
        # Bytes received and not yet cut into frames start at _pos: a bytearray of our own, or the
        # caller's immutable bytes (or a view of them) while nothing else is buffered.
        self._buf: Buffer = b""
        self._pos = 0
        # A large frame being assembled in place, and how many of its bytes have arrived.
        self._frame: OwnedFrame | None = None
        self._filled = 0
        self._error: DecodeError | None = None

    @property
    def max_frame_size(self) -> int:
        return self._max

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as part of a frame."""
        return len(self._buf) - self._pos + (self._filled if self._frame is not None else 0)

    def feed(self, data: Buffer) -> None:
        """Append bytes read from the stream. Raises the stream's error if it already has one."""
        if self._error is not None:
            raise self._error
        if not data:
            return
        borrow = type(data) is bytes  # immutable: safe to keep without copying
        frame = self._frame
        if frame is not None:
            # The large frame in progress comes before anything else in the stream.
            filled = self._filled
            take = len(frame) - filled
            if take >= len(data):
                frame[filled : filled + len(data)] = data
                self._filled = filled + len(data)
                return
            view = memoryview(data)
            frame[filled:] = view[:take]
            self._filled = len(frame)
            data = view[take:]
        buf, pos = self._buf, self._pos
        if pos >= len(buf):  # nothing else buffered
            if borrow:
                self._buf, self._pos = data, 0
                return
            buf, self._pos = bytearray(), 0
            self._buf = buf
        elif not isinstance(buf, bytearray):  # a borrowed read with a partial frame left in it
            buf, self._pos = bytearray(memoryview(buf)[pos:]), 0
            self._buf = buf
        elif pos >= _COMPACT_AT and pos * 2 >= len(buf):
            del buf[:pos]
            self._pos = 0
        buf += data

    def next_frame(self) -> bytes | OwnedFrame | None:
        """The next complete frame's payload, or None if the buffer does not hold one yet.

        Raises FrameTooLarge or InvalidValueError as soon as the 4-byte size prefix is buffered,
        whether or not any of the payload has arrived.
        """
        if self._error is not None:
            raise self._error
        frame = self._frame
        if frame is not None:
            if self._filled < len(frame):
                return None
            self._frame = None
            return frame
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
        start = pos + 4
        end = start + size
        if available - 4 < size:
            if size >= DIRECT_FRAME_SIZE:
                # Assemble it in place: its bytes so far are the last in the buffer.
                self._frame = frame = OwnedFrame(size)
                self._filled = available - 4
                with memoryview(buf) as view:
                    frame[: self._filled] = view[start:]
                self._buf, self._pos = b"", 0
            return None
        # Copy through a memoryview so the payload is copied once (a slice would copy twice); the
        # view is released before returning so that a bytearray buffer can be resized again.
        with memoryview(buf) as view:
            payload = view[start:end]
            out = payload.tobytes() if size < DIRECT_FRAME_SIZE else OwnedFrame(payload)
            payload.release()
        self._pos = end
        return out

    def frames(self) -> Iterator[bytes | OwnedFrame]:
        """Yield every complete frame's payload currently buffered."""
        while (frame := self.next_frame()) is not None:
            yield frame

    def _fail(self, error: DecodeError) -> NoReturn:
        self._error = error
        # The connection is going to be closed; drop what was buffered.
        self._buf = b""
        self._pos = 0
        self._frame = None
        self._filled = 0
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
