"""FrameBuffer and encode_frame: splitting, limits, sticky errors, and a split-anywhere property."""

from __future__ import annotations

import itertools
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockbroker_protocol.errors import DecodeError, EncodeError, FrameTooLarge, InvalidValueError
from mockbroker_protocol.framing import (
    DEFAULT_MAX_FRAME_SIZE,
    DIRECT_FRAME_SIZE,
    RECEIVE_BUFFER_SIZE,
    FrameBuffer,
    MemoryPool,
    OwnedFrame,
    encode_frame,
    frame_bytes,
)

FAST = settings(max_examples=60, deadline=None)


def framed(*payloads: bytes) -> bytes:
    return b"".join(struct.pack(">i", len(p)) + p for p in payloads)


def drain(buf: FrameBuffer) -> list[bytes]:
    return list(buf.frames())


def test_default_max_is_socket_request_max_bytes() -> None:
    assert DEFAULT_MAX_FRAME_SIZE == 104857600
    assert FrameBuffer().max_frame_size == 104857600


def test_one_frame_in_one_feed() -> None:
    buf = FrameBuffer()
    buf.feed(framed(b"hello"))
    assert buf.next_frame() == b"hello"
    assert buf.next_frame() is None
    assert buf.buffered == 0


def test_many_frames_in_one_feed() -> None:
    payloads = [bytes([i]) * i for i in range(50)]
    buf = FrameBuffer()
    buf.feed(framed(*payloads) + b"\x00\x00")  # plus the start of a 51st prefix
    assert drain(buf) == payloads
    assert buf.buffered == 2


def test_frame_split_across_feeds() -> None:
    data = framed(b"abcdefgh")
    buf = FrameBuffer()
    buf.feed(data[:2])
    assert buf.next_frame() is None
    buf.feed(data[2:7])
    assert buf.next_frame() is None
    buf.feed(data[7:])
    assert buf.next_frame() == b"abcdefgh"


def test_byte_by_byte_equals_whole() -> None:
    payloads = [b"", b"x", b"yz" * 100, b"", bytes(range(256))]
    data = framed(*payloads)
    whole = FrameBuffer()
    whole.feed(data)
    one_by_one = FrameBuffer()
    got: list[bytes] = []
    for i in range(len(data)):
        one_by_one.feed(data[i : i + 1])
        got.extend(one_by_one.frames())
    assert got == drain(whole) == payloads


def test_zero_length_frame() -> None:
    buf = FrameBuffer()
    buf.feed(b"\x00\x00\x00\x00")
    frame = buf.next_frame()
    assert frame == b""
    assert type(frame) is bytes
    assert buf.next_frame() is None


def test_oversized_prefix_raises_before_payload() -> None:
    buf = FrameBuffer(max_frame_size=1000)
    buf.feed(struct.pack(">i", 1001))  # the prefix only, no payload at all
    with pytest.raises(FrameTooLarge) as info:
        buf.next_frame()
    assert (info.value.size, info.value.max_size) == (1001, 1000)


def test_default_maximum_is_enforced_from_prefix() -> None:
    buf = FrameBuffer()
    buf.feed(struct.pack(">i", DEFAULT_MAX_FRAME_SIZE + 1) + b"abc")
    with pytest.raises(FrameTooLarge):
        buf.next_frame()


def test_frame_of_exactly_the_maximum_is_accepted() -> None:
    buf = FrameBuffer(max_frame_size=8)
    buf.feed(framed(b"12345678"))
    assert buf.next_frame() == b"12345678"


def test_frames_before_an_oversized_one_are_delivered() -> None:
    buf = FrameBuffer(max_frame_size=4)
    buf.feed(framed(b"ok") + struct.pack(">i", 5))
    assert buf.next_frame() == b"ok"
    with pytest.raises(FrameTooLarge):
        buf.next_frame()


def test_negative_size_is_invalid() -> None:
    buf = FrameBuffer()
    buf.feed(struct.pack(">i", -1))
    with pytest.raises(InvalidValueError):
        buf.next_frame()


def test_errors_are_sticky() -> None:
    buf = FrameBuffer(max_frame_size=10)
    buf.feed(struct.pack(">i", 11))
    with pytest.raises(FrameTooLarge):
        buf.next_frame()
    with pytest.raises(FrameTooLarge):
        buf.feed(b"more")
    with pytest.raises(FrameTooLarge):
        buf.next_frame()
    assert buf.buffered == 0


def test_frames_are_independent_bytes() -> None:
    """The broker keeps memoryview slices of a frame: it must not alias the mutable buffer."""
    buf = FrameBuffer()
    buf.feed(framed(b"first"))
    first = buf.next_frame()
    assert first is not None
    view = memoryview(first)[1:3]
    buf.feed(framed(b"second" * 10_000))  # forces the buffer to be cleared and regrown
    assert buf.next_frame() == b"second" * 10_000
    assert type(first) is bytes
    assert bytes(view) == b"ir"


def test_large_frame_in_many_pieces() -> None:
    payload = bytes(range(256)) * 8192  # 2 MiB
    data = framed(payload, b"tail")
    buf = FrameBuffer()
    got: list[bytes] = []
    for i in range(0, len(data), 1000):
        buf.feed(data[i : i + 1000])
        got.extend(buf.frames())
    assert got == [payload, b"tail"]


def test_many_small_frames_compact_the_buffer() -> None:
    """Arriving bytes are cut into frames at once, so only the start of the frame still arriving
    stays buffered, even when every read ends inside a frame."""
    data = framed(*[b"x" * 10] * 30_000)
    buf = FrameBuffer()
    count = 0
    for i in range(0, len(data), 7777):
        buf.feed(data[i : i + 7777])
        count += len(list(buf.frames()))
        assert buf.buffered < 14  # at most a partial 14-byte frame
    assert count == 30_000
    assert buf.buffered == 0


def test_feed_accepts_bytearray_and_memoryview() -> None:
    buf = FrameBuffer()
    data = framed(b"abc", b"defg")
    buf.feed(bytearray(data[:5]))
    buf.feed(memoryview(data)[5:])
    assert drain(buf) == [b"abc", b"defg"]


def test_encode_frame_prepends_size_without_copying() -> None:
    records = memoryview(b"0123456789")[2:6]
    parts = encode_frame([b"head", b"", records, bytearray(b"!")])
    assert parts[0] == struct.pack(">i", 9)
    assert parts[1:] == [b"head", records, bytearray(b"!")]
    assert parts[2] is records
    assert b"".join(parts) == framed(b"head2345!")


def test_encode_frame_empty_payload() -> None:
    assert encode_frame([]) == [b"\x00\x00\x00\x00"]


def test_encode_frame_counts_bytes_of_wide_memoryviews() -> None:
    wide = memoryview(struct.pack(">4i", 1, 2, 3, 4)).cast("i")
    assert encode_frame([wide])[0] == struct.pack(">i", 16)


def test_encode_frame_rejects_oversized_payload() -> None:
    class Huge(bytes):
        def __len__(self) -> int:
            return 0x80000000

    with pytest.raises(EncodeError):
        encode_frame([Huge(b"x")])


def test_frame_bytes_round_trips() -> None:
    buf = FrameBuffer()
    buf.feed(frame_bytes(b"payload") + frame_bytes(memoryview(b"")))
    assert drain(buf) == [b"payload", b""]


def test_invalid_max_frame_size() -> None:
    with pytest.raises(ValueError):
        FrameBuffer(max_frame_size=-1)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(data[last:p])
        last = p
    pieces.append(data[last:])
    return pieces


def _run(pieces: list[bytes], max_size: int) -> tuple[list[bytes], type[DecodeError] | None]:
    """Feed the pieces in order, collecting frames; stop at the first DecodeError."""
    buf = FrameBuffer(max_frame_size=max_size)
    frames: list[bytes] = []
    try:
        for piece in pieces:
            buf.feed(piece)
            frames.extend(buf.frames())
    except DecodeError as exc:
        return frames, type(exc)
    return frames, None


@FAST
@given(
    payloads=st.lists(st.binary(max_size=40), max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=20),
)
def test_split_anywhere_gives_the_same_frames(payloads: list[bytes], cuts: list[int]) -> None:
    data = framed(*payloads)
    assert _run(_split(data, cuts), 1 << 20) == (payloads, None)


@FAST
@given(
    data=st.binary(max_size=300),
    cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=20),
    max_size=st.integers(min_value=0, max_value=64),
)
def test_random_streams_split_anywhere_match_one_feed(data: bytes, cuts: list[int], max_size: int) -> None:
    """Arbitrary bytes: whatever the split, the same frames come out and the same error (only
    DecodeError subclasses) ends the stream."""
    assert _run(_split(data, cuts), max_size) == _run([data], max_size)


def _read_all(buf: FrameBuffer, data: bytes, sizes: list[int]) -> list[bytes | OwnedFrame]:
    """Deliver ``data`` as an asyncio.BufferedProtocol transport does: each read fills up to
    the next size of ``sizes`` (cycled) of what get_buffer handed out; frames taken after each."""
    got: list[bytes | OwnedFrame] = []
    pos, i = 0, 0
    while pos < len(data):
        target = buf.get_buffer(-1)
        n = min(len(target), sizes[i % len(sizes)], len(data) - pos)
        target[:n] = data[pos : pos + n]
        del target  # the transport lets go of the buffer before buffer_updated (uvloop)
        buf.buffer_updated(n)
        pos, i = pos + n, i + 1
        got.extend(buf.frames())
    return got


BIG = bytes(range(256)) * (DIRECT_FRAME_SIZE // 256)  # exactly DIRECT_FRAME_SIZE


@FAST
@given(
    payloads=st.lists(st.sampled_from([b"", b"abc", b"q" * 700, BIG[:-1], BIG, BIG + b"tail"]), max_size=6),
    sizes=st.lists(st.integers(min_value=1, max_value=100_000), min_size=1, max_size=6),
    buffered_reads=st.booleans(),
)
def test_large_frames_are_owned_and_small_ones_bytes_whatever_the_reads(
    payloads: list[bytes], sizes: list[int], buffered_reads: bool
) -> None:
    data = framed(*payloads)
    buf = FrameBuffer()
    if buffered_reads:
        got = _read_all(buf, data, sizes)
    else:
        got = []
        for piece in _split(data, list(itertools.accumulate(sizes * (1 + len(data) // sum(sizes))))):
            buf.feed(piece)
            got.extend(buf.frames())
    assert got == payloads
    assert [type(f) for f in got] == [OwnedFrame if len(p) >= DIRECT_FRAME_SIZE else bytes for p in payloads]
    assert buf.buffered == 0


def test_reads_go_straight_into_a_large_frame_once_its_size_is_known() -> None:
    """Reads go into the frame's own buffer while it has room; the read after it fills up goes
    into the receive buffer (it may bring nothing) and the frame grows by what that read brought."""
    payload = BIG * 4
    data = framed(payload)
    buf = FrameBuffer()
    first = buf.get_buffer()
    receive_buffer = first.obj
    first[:1000] = data[:1000]
    buf.buffer_updated(1000)  # the prefix and the start, read into the receive buffer
    assert buf.next_frame() is None and buf.buffered == 1000 - 4
    pos, frame_buffer, direct, through_receive_buffer = 1000, None, 0, 0
    while pos < len(data):
        target = buf.get_buffer()
        if target.obj is receive_buffer:  # the frame's buffer is full so far
            through_receive_buffer += 1
        else:
            assert 0 < len(target) <= len(data) - pos  # never beyond the frame's end
            frame_buffer = target.obj if frame_buffer is None else frame_buffer
            assert target.obj is frame_buffer  # always the frame's own buffer
            direct += 1
        n = min(len(target), len(data) - pos, 32 * 1024)  # reads of at most 32 KiB
        target[:n] = data[pos : pos + n]
        del target
        buf.buffer_updated(n)
        pos += n
    frame = buf.next_frame()
    assert frame is frame_buffer and frame == payload
    # The buffer doubles: one read goes through the receive buffer each time it fills up.
    assert direct > through_receive_buffer >= 1


def test_a_large_frame_is_not_grown_by_a_read_that_brings_nothing() -> None:
    """An event loop asks for a buffer again after a read that filled the last one; a client that
    announced 100 MB may send nothing more: the frame's buffer stays the size of what came."""
    buf = FrameBuffer()
    buf.feed(struct.pack(">i", DEFAULT_MAX_FRAME_SIZE) + bytes(DIRECT_FRAME_SIZE))
    for _ in range(3):
        target = buf.get_buffer()
        assert not isinstance(target.obj, OwnedFrame)  # the receive buffer: nothing to grow yet
        del target
        buf.buffer_updated(0)
    assert buf.buffered == DIRECT_FRAME_SIZE
    buf.feed(b"x")  # a byte comes: now the frame grows (doubling)
    target = buf.get_buffer()
    assert isinstance(target.obj, OwnedFrame) and len(target.obj) == 2 * DIRECT_FRAME_SIZE


def test_a_large_frame_buffer_grows_with_the_bytes_that_arrive() -> None:
    """Announcing 100 MB and sending one byte costs about one read, not 100 MB (issue #19)."""
    buf = FrameBuffer()
    buf.feed(struct.pack(">i", DEFAULT_MAX_FRAME_SIZE) + b"x")
    target = buf.get_buffer()
    assert isinstance(target.obj, OwnedFrame) and len(target.obj) <= 2 * DIRECT_FRAME_SIZE
    del target
    chunk = bytes(range(256)) * 4096  # 1 MiB
    for _ in range(3):
        buf.feed(chunk)
    target = buf.get_buffer()
    assert len(target.obj) <= 2 * (1 + 3 * len(chunk))  # at most doubled past what arrived
    assert buf.buffered == 1 + 3 * len(chunk)


def test_a_memory_pool_makes_a_second_large_frame_wait_until_the_first_is_taken() -> None:
    """queued.max.request.bytes (Kafka's non-strict SimpleMemoryPool): the first large frame may
    take more than is left; the next one waits, its bytes kept, until memory is released."""
    pool = MemoryPool(100_000)
    a, b = FrameBuffer(pool=pool), FrameBuffer(pool=pool)
    big_a, big_b = BIG + b"a" * 100_000, BIG + b"b" * 50_000
    data_a, data_b = framed(big_a), framed(big_b)
    a.feed(data_a[:10])
    assert pool.available == 100_000 - len(big_a) and pool.is_out_of_memory and not a.memory_wanted
    b.feed(data_b[:5000])
    assert b.memory_wanted and b.next_frame() is None
    woken: list[str] = []
    pool.wait(lambda: (woken.append("b"), b.retry())[0])
    b.feed(data_b[5000:20_000])  # kept while waiting
    assert b.memory_wanted and b.buffered == 20_000
    a.feed(data_a[10:])
    assert a.next_frame() == big_a  # taken: its bytes go back, b is woken and gets its size
    assert woken == ["b"] and not b.memory_wanted
    assert pool.available == 100_000 - len(big_b)
    b.feed(data_b[20_000:])
    assert b.next_frame() == big_b and pool.available == 100_000 and pool.waiting == 0


def test_a_closed_stream_gives_its_memory_back() -> None:
    pool = MemoryPool(10)
    buf = FrameBuffer(pool=pool)
    buf.feed(framed(BIG)[:100])
    assert pool.is_out_of_memory
    buf.close()
    assert pool.available == 10 and buf.buffered == 0


def test_a_large_frame_arriving_whole_is_charged_until_taken() -> None:
    pool = MemoryPool(1_000_000)
    buf = FrameBuffer(pool=pool)
    buf.feed(framed(BIG, BIG))
    assert pool.available == 1_000_000 - 2 * len(BIG)
    assert buf.next_frame() == BIG and pool.available == 1_000_000 - len(BIG)
    assert buf.next_frame() == BIG and pool.available == 1_000_000


def test_one_receive_buffer_serves_many_streams() -> None:
    """Nothing stays in the shared receive buffer after buffer_updated: interleaved reads of
    two streams through one buffer give each stream its own frames."""
    shared = bytearray(RECEIVE_BUFFER_SIZE)
    a, b = FrameBuffer(receive_buffer=shared), FrameBuffer(receive_buffer=shared)
    streams = {a: framed(b"a1", b"a2" * 50, BIG + b"a3", b"a4"), b: framed(b"b1" * 30, b"b2", BIG + b"b3")}
    got: dict[FrameBuffer, list[bytes | OwnedFrame]] = {a: [], b: []}
    pos = {a: 0, b: 0}
    while any(pos[s] < len(streams[s]) for s in streams):
        for s, data in streams.items():
            if pos[s] < len(data):
                target = s.get_buffer()
                n = min(len(target), 7, len(data) - pos[s])
                target[:n] = data[pos[s] : pos[s] + n]
                del target
                s.buffer_updated(n)
                pos[s] += n
                shared[:] = b"\xee" * len(shared)  # whatever the next read leaves there
                got[s].extend(s.frames())
    assert got[a] == [b"a1", b"a2" * 50, BIG + b"a3", b"a4"]
    assert got[b] == [b"b1" * 30, b"b2", BIG + b"b3"]


def test_buffered_reads_deliver_the_frames_before_a_bad_size_then_fail() -> None:
    buf = FrameBuffer(max_frame_size=100)
    data = framed(b"ok", b"fine") + struct.pack(">i", 101) + b"x" * 50
    for i in range(0, len(data), 3):  # every read in before any frame is taken
        target = buf.get_buffer()
        target[: len(data[i : i + 3])] = data[i : i + 3]
        del target
        buf.buffer_updated(len(data[i : i + 3]))
    assert [buf.next_frame(), buf.next_frame()] == [b"ok", b"fine"]
    with pytest.raises(FrameTooLarge):
        buf.next_frame()
    with pytest.raises(FrameTooLarge):
        buf.buffer_updated(0)
    assert buf.buffered == 0


def test_an_exhausted_pool_makes_a_read_take_only_the_next_size_prefix() -> None:
    """Kafka's NetworkReceive reads a frame's 4-byte size before it asks the MemoryPool for the
    rest: while the pool is exhausted, get_buffer hands out 4 bytes between frames, so a refused
    frame's payload stays in the socket; the rest of a started prefix or frame reads as usual."""
    pool = MemoryPool(10)
    hog, buf = FrameBuffer(pool=pool), FrameBuffer(pool=pool)
    assert len(buf.get_buffer()) == RECEIVE_BUFFER_SIZE  # memory left: a whole read
    hog.feed(struct.pack(">i", len(BIG)) + BIG[:100])  # takes the pool (non-strict)
    assert pool.is_out_of_memory
    view = buf.get_buffer()
    assert len(view) == 4
    view[:] = struct.pack(">i", len(BIG))
    buf.buffer_updated(4)
    assert buf.memory_wanted and buf.buffered == 4  # refused: nothing of the payload was read
    small = FrameBuffer(pool=pool)
    view = small.get_buffer()
    view[:2] = struct.pack(">i", 3)[:2]
    small.buffer_updated(2)
    assert len(small.get_buffer()) == RECEIVE_BUFFER_SIZE  # a prefix under way: read as usual
    assert len(FrameBuffer().get_buffer()) == RECEIVE_BUFFER_SIZE  # no pool: never limited
