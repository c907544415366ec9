"""Size-prefixed frames: a sans-I/O FrameBuffer that cuts a byte stream into frames, and encode_frame.

Every Kafka request and response travels as a frame: a 4-byte big-endian signed size, then that
many bytes of payload (header + body). The broker feeds whatever the socket returns into a
FrameBuffer and takes complete payloads out; this module never touches a socket or a clock.

Limits follow the broker's NetworkReceive: a negative size is invalid, and a size above
``socket.request.max.bytes`` (default 104857600 = 100 MiB) is refused from the 4-byte prefix alone,
before any of the payload is buffered, so a client cannot make the broker allocate memory by
announcing a huge frame. Within the limit, a large frame's buffer grows with the bytes that
actually arrive (doubling, from ``DIRECT_FRAME_SIZE``), so announcing a frame and sending nothing
costs nothing (Kafka's NetworkReceive allocates the announced size at once; a 4-byte prefix then
cost the broker 100 MB). The broker-wide budget of ``queued.max.request.bytes`` is Kafka's
MemoryPool (``MemoryPool`` here): a large frame takes its announced size from it when its prefix
arrives, and a stream that cannot have it waits (``memory_wanted``) until memory is released. A
zero size is a valid (empty) frame; what it holds is the decoder's problem, not the framer's.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from struct import Struct
from typing import NoReturn

from mockbroker_protocol.errors import DecodeError, EncodeError, FrameTooLarge, InvalidValueError
from mockbroker_protocol.primitives import Buffer

__all__ = [
    "DEFAULT_MAX_FRAME_SIZE",
    "DIRECT_FRAME_SIZE",
    "RECEIVE_BUFFER_SIZE",
    "FrameBuffer",
    "MemoryPool",
    "OwnedFrame",
    "encode_frame",
    "frame_bytes",
]

# Kafka's socket.request.max.bytes default.
DEFAULT_MAX_FRAME_SIZE = 104857600

_SIZE = Struct(">i")
_MAX_INT32 = 0x7FFFFFFF

# Frames of at least this many bytes are handed out as an OwnedFrame (a bytearray), and one still
# arriving is assembled in place: a buffer of the frame's size is made once its size prefix is
# read, and later reads go straight into it. Large frames are produce requests carrying record
# batches; the log keeps them without copying them again (see OwnedFrame).
DIRECT_FRAME_SIZE = 64 * 1024

# The receive buffer that reads go into between large frames (the size of uvloop's own).
RECEIVE_BUFFER_SIZE = 256 * 1024


class OwnedFrame(bytearray):
    """A large frame's payload in a buffer of its own that nothing else refers to: whoever takes
    it from the FrameBuffer owns it, and may keep slices of it and write into them (the broker's
    log keeps a produced record batch as a slice of its request frame and patches its base offset
    in place, where a ``bytes`` frame would have to be copied first)."""

    __slots__ = ()


class MemoryPool:
    """Kafka's SimpleMemoryPool in its non-strict mode (SocketServer builds it from
    ``queued.max.request.bytes``): a budget of bytes for requests being read or queued.

    ``try_allocate`` succeeds while any memory is left, even for more than is left (non-strict:
    a frame larger than the whole budget can still be read, alone), so ``available`` may go
    negative. A stream that was refused registers a waiter (``wait``); ``release`` calls waiters,
    in order, while memory is left. Sans-I/O: waiters are plain callables, called synchronously.
    """

    __slots__ = ("_waiters", "available", "size")

    def __init__(self, size: int) -> None:
        if size <= 0:
            raise ValueError(f"a memory pool needs a positive size, not {size} (no pool: unbounded)")
        self.size = size
        self.available = size
        self._waiters: deque[Callable[[], None]] = deque()

    @property
    def is_out_of_memory(self) -> bool:
        return self.available <= 0

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def try_allocate(self, nbytes: int) -> bool:
        if self.available <= 0:
            return False
        self.available -= nbytes
        return True

    def allocate(self, nbytes: int) -> None:
        """Charge bytes that are already in memory (a large frame that arrived whole in one read)."""
        self.available -= nbytes

    def release(self, nbytes: int) -> None:
        self.available += nbytes
        waiters = self._waiters
        while waiters and self.available > 0:
            waiters.popleft()()

    def wait(self, waiter: Callable[[], None]) -> None:
        if waiter not in self._waiters:
            self._waiters.append(waiter)

    def forget(self, waiter: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self._waiters.remove(waiter)


class FrameBuffer:
    """Cuts a byte stream into frame payloads.

    Bytes come in either way: ``feed(data)`` (what a socket read returned), or, for an
    ``asyncio.BufferedProtocol``, ``get_buffer()`` (where the next read should go) and then
    ``buffer_updated(n)``. ``next_frame()`` returns the next complete payload, or None until one is
    complete; ``frames()`` yields every complete payload. A payload is never a view into a buffer
    the FrameBuffer reuses, so callers may keep memoryview slices of it: frames below
    ``DIRECT_FRAME_SIZE`` are ``bytes``, larger ones an ``OwnedFrame`` (a bytearray of their own),
    by size alone, whatever the read boundaries were.

    Every byte is copied once after the read, so that both many small frames in one read and one
    large frame in many reads cost linear time:
    - Arriving bytes are cut into frames at once, each copied out of the read where it lies; only
      the start of a frame still arriving is kept. So nothing is left in the receive buffer after
      ``buffer_updated``, and one receive buffer can serve every connection of an event loop
      (``receive_buffer``: reads into it are handled one at a time, each before the next read).
    - A frame of ``DIRECT_FRAME_SIZE`` or more still arriving gets its own buffer as soon as its
      size prefix has arrived; its bytes so far are moved there, and ``get_buffer`` hands out the
      rest of it, so that the reads of the rest go straight into the frame handed out. The buffer
      grows (doubling) as the frame's bytes arrive, never beyond the announced size: once it is
      full so far, the next read goes into the receive buffer and the frame grows by what it
      brought (a read may bring nothing; a frame is never grown ahead of its bytes).

    With a ``pool`` (``queued.max.request.bytes``), a large frame still arriving takes its
    announced size from it when its prefix is read, and a large frame that arrives whole is
    charged as it is; the bytes go back when the frame is taken (``next_frame``) or the stream is
    dropped (``close``). A frame the pool refuses leaves the stream waiting: ``memory_wanted`` is
    true, later bytes are only kept (the reader should stop reading), and ``retry`` tries again
    (the pool's waiter). Small frames are not charged: they are bounded per connection by how much
    the reader lets wait before it pauses.

    A stream error (FrameTooLarge, InvalidValueError for a negative size) is raised by
    ``next_frame`` once the frames before it have been taken, and is sticky from then on: the
    stream cannot be resynchronised, so every later call raises it again and nothing more is
    buffered.
    """

    __slots__ = (
        "_bad",
        "_charged",
        "_error",
        "_filled",
        "_frame",
        "_frame_size",
        "_into_frame",
        "_max",
        "_pending",
        "_pool",
        "_ready",
        "_ready_bytes",
        "_receive_buffer",
        "_wanted",
    )

    def __init__(
        self,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        receive_buffer: bytearray | None = None,
        pool: MemoryPool | None = None,
    ) -> None:
        if not 0 <= max_frame_size <= _MAX_INT32:
            raise ValueError(f"max_frame_size must be in [0, {_MAX_INT32}], not {max_frame_size}")
        self._max = max_frame_size
        self._receive_buffer = receive_buffer  # made on first use when not shared
        self._ready: deque[bytes | OwnedFrame] = deque()  # complete frames, in order
        self._ready_bytes = 0
        self._pending = bytearray()  # the start of a small frame (or of a size prefix)
        self._frame: OwnedFrame | None = None  # a large frame being assembled in place (grows)
        self._frame_size = 0  # its announced size
        self._filled = 0  # how many of its bytes have arrived
        self._pool = pool
        self._charged = 0  # bytes taken from the pool and not yet released
        self._wanted = 0  # the size of a large frame the pool refused (0: none)
        self._into_frame = False  # the last get_buffer handed out the rest of _frame
        self._bad: DecodeError | None = None  # found in the stream, raised after the frames before it
        self._error: DecodeError | None = None  # raised: sticky

    @property
    def max_frame_size(self) -> int:
        return self._max

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as part of a frame."""
        return self._ready_bytes + len(self._pending) + (self._filled if self._frame is not None else 0)

    @property
    def memory_wanted(self) -> bool:
        """The pool refused the next frame's size: stop reading until ``retry`` succeeds."""
        return self._wanted != 0

    @property
    def ready(self) -> int:
        """How many complete frames wait to be taken."""
        return len(self._ready)

    def retry(self) -> None:
        """Try again to take a refused frame's size from the pool (a MemoryPool waiter)."""
        if not self._wanted or self._error is not None:
            return
        kept = bytes(self._pending)
        self._pending = bytearray()
        self._wanted = 0
        self._receive(memoryview(kept))

    def close(self) -> None:
        """Drop everything buffered and give its memory back to the pool (the stream is gone)."""
        if self._pool is not None and self._charged:
            charged, self._charged = self._charged, 0
            self._pool.release(charged)
        self._ready.clear()
        self._ready_bytes = 0
        self._pending = bytearray()
        self._frame = None
        self._filled = 0
        self._wanted = 0

    def feed(self, data: Buffer) -> None:
        """Take bytes read from the stream. Raises the stream's error if it already has one."""
        if self._error is not None:
            raise self._error
        if data:
            view = memoryview(data)
            self._receive(view if view.itemsize == 1 else view.cast("B"))

    def get_buffer(self, sizehint: int = -1) -> memoryview:
        """Where the next read should go (``asyncio.BufferedProtocol.get_buffer``): the rest of the
        large frame being assembled, or else the receive buffer. ``sizehint`` is not needed."""
        frame = self._frame
        # A large frame with room left takes the read itself. One whose buffer is full so far is
        # not grown here: the read may bring nothing (an event loop asks for a buffer again after
        # a read that filled the last one, and a client that announced 100 MB may send no more),
        # so that read goes into the receive buffer and the frame grows in buffer_updated only by
        # bytes that came (issue #19: 1,000 stalled announcers would each double for nothing).
        if frame is not None and self._filled < len(frame):
            self._into_frame = True
            return memoryview(frame)[self._filled :]
        self._into_frame = False
        if self._receive_buffer is None:
            self._receive_buffer = bytearray(RECEIVE_BUFFER_SIZE)
        pool = self._pool
        if pool is not None and pool.available <= 0 and not self._pending:
            # The pool is exhausted: read only the next frame's size prefix, as Kafka's
            # NetworkReceive does before it asks the MemoryPool for the payload. A large frame is
            # then refused with its bytes still in the kernel's socket buffer (no copy and no
            # fresh memory for each of 1,000 stalled announcers, issue #19); a small one costs
            # one more read, only while memory is short.
            return memoryview(self._receive_buffer)[:4]
        return memoryview(self._receive_buffer)

    def buffer_updated(self, nbytes: int) -> None:
        """``nbytes`` were read into the last ``get_buffer`` (``asyncio.BufferedProtocol``). Raises
        the stream's error if it already has one."""
        if self._error is not None:
            raise self._error
        if self._into_frame:
            self._into_frame = False
            frame = self._frame
            assert frame is not None
            self._filled += nbytes
            if self._filled == self._frame_size:
                self._frame_done(frame)
        elif nbytes:
            assert self._receive_buffer is not None
            self._receive(memoryview(self._receive_buffer)[:nbytes])

    def next_frame(self) -> bytes | OwnedFrame | None:
        """The next complete frame's payload, or None if none has arrived yet.

        Raises FrameTooLarge or InvalidValueError once every frame before a bad size prefix has
        been returned, whether or not any of that frame's payload has arrived.
        """
        if self._error is not None:
            raise self._error
        if self._ready:
            frame = self._ready.popleft()
            self._ready_bytes -= len(frame)
            if self._pool is not None and type(frame) is OwnedFrame:
                self._charged -= len(frame)
                self._pool.release(len(frame))
            return frame
        if self._bad is not None:
            self._fail(self._bad)
        return None

    def frames(self) -> Iterator[bytes | OwnedFrame]:
        """Yield every complete frame's payload currently buffered."""
        while (frame := self.next_frame()) is not None:
            yield frame

    # -- cutting ------------------------------------------------------------------------------------

    def _receive(self, data: memoryview) -> None:
        """Cut arrived bytes into frames (copied out, in order), keeping the frame still arriving
        at the end: its start in _pending, or a large one in its own buffer."""
        while data and self._bad is None:
            frame = self._frame
            if frame is not None:  # the rest of a large frame comes first
                filled = self._filled
                take = min(self._frame_size - filled, len(data))
                if filled + take > len(frame):
                    self._grow(frame, filled + take)
                frame[filled : filled + take] = data[:take]
                self._filled = filled + take
                data = data[take:]
                if self._filled == self._frame_size:
                    self._frame_done(frame)
                continue
            pending = self._pending
            if self._wanted:  # waiting for memory: only keep what arrives
                pending += data
                return
            if pending:  # the start of a frame arrived earlier: complete it from data
                if len(pending) < 4:
                    take = min(4 - len(pending), len(data))
                    pending += data[:take]
                    data = data[take:]
                    if len(pending) < 4:
                        return
                size = self._size(pending, 0)
                if size is None:
                    return
                if size >= DIRECT_FRAME_SIZE:
                    if not self._reserve(size):
                        pending += data
                        return
                    self._start_frame(size, bytes(memoryview(pending)[4:]))
                    pending.clear()
                    continue
                take = min(4 + size - len(pending), len(data))
                pending += data[:take]
                data = data[take:]
                if len(pending) == 4 + size:
                    self._ready.append(bytes(memoryview(pending)[4:]))
                    self._ready_bytes += size
                    pending.clear()
                continue
            # Nothing pending: cut whole frames out of data where they lie. The common case (many
            # small frames in one read) is the broker's hot path, hence the locals and the size
            # check inlined (_size reports a bad prefix).
            n, pos, arrived = len(data), 0, 0
            ready, unpack, limit = self._ready, _SIZE.unpack_from, self._max
            while n - pos >= 4:
                (size,) = unpack(data, pos)
                if not 0 <= size <= limit:
                    self._ready_bytes += arrived
                    self._size(data, pos)
                    return
                end = pos + 4 + size
                if end > n:
                    if size >= DIRECT_FRAME_SIZE and self._reserve(size):
                        self._start_frame(size, data[pos + 4 :])
                        pos = n
                    break
                if size < DIRECT_FRAME_SIZE:
                    ready.append(data[pos + 4 : end].tobytes())
                else:
                    ready.append(OwnedFrame(data[pos + 4 : end]))
                    if self._pool is not None:  # in memory already: charged, whatever is left
                        self._pool.allocate(size)
                        self._charged += size
                arrived += size
                pos = end
            self._ready_bytes += arrived
            if pos < n:
                pending += data[pos:]
            return

    def _size(self, buf: Buffer, pos: int) -> int | None:
        """The size prefix at ``pos``, or None for a bad one (remembered; nothing more is kept)."""
        (size,) = _SIZE.unpack_from(buf, pos)
        if size < 0:
            self._bad = InvalidValueError(f"frame size prefix is negative ({size})")
        elif size > self._max:
            self._bad = FrameTooLarge(size, self._max)
        else:
            return int(size)
        self._pending = bytearray()
        return None

    def _reserve(self, size: int) -> bool:
        """Take a large frame's announced size from the pool; False (and wait) if refused."""
        pool = self._pool
        if pool is None:
            return True
        if not pool.try_allocate(size):
            self._wanted = size
            return False
        self._charged += size
        return True

    def _start_frame(self, size: int, start: Buffer) -> None:
        arrived = _nbytes(start)
        # The buffer holds what has arrived, and room for one more read; it grows as bytes come.
        self._frame = frame = OwnedFrame(min(size, max(arrived, DIRECT_FRAME_SIZE)))
        frame[:arrived] = start
        self._frame_size = size
        self._filled = arrived

    def _grow(self, frame: OwnedFrame, needed: int) -> None:
        """Make room for ``needed`` bytes: at least double, never beyond the announced size."""
        target = min(self._frame_size, max(needed, 2 * len(frame)))
        frame += bytes(target - len(frame))

    def _frame_done(self, frame: OwnedFrame) -> None:
        self._ready.append(frame)
        self._ready_bytes += len(frame)
        self._frame = None
        self._frame_size = 0
        self._filled = 0

    def _fail(self, error: DecodeError) -> NoReturn:
        self._error = error
        # The connection is going to be closed; drop what was buffered.
        self.close()
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
