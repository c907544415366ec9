"""Fuzzing every request decoder from a corpus of real client frames (issue #19).

The corpus (tests/protocol/fuzz/corpus/<api key>-<version>-<n>.bin, made by
bench/fuzz_capture.py from kafka-python and confluent-kafka talking to mockbroker) holds request
payloads as clients sent them. Hypothesis mutates them (bytes overwritten, flipped, inserted,
deleted; the frame cut short; lengths and counts replaced by extreme values) and the decoder must
either decode the result or refuse it with a DecodeError: no other exception, and no time or
memory out of proportion to the frame (a forged count is checked against the bytes left).

One test per API key in the corpus; MOCKBROKER_FUZZ_EXAMPLES (default 150) sets the examples per
key, so a long run is ``MOCKBROKER_FUZZ_EXAMPLES=1000000 pytest tests/protocol/fuzz``.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker_protocol import registry
from mockbroker_protocol.errors import DecodeError

CORPUS = Path(__file__).resolve().parent / "corpus"
EXAMPLES = int(os.environ.get("MOCKBROKER_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


def corpus() -> dict[int, list[bytes]]:
    frames: dict[int, list[bytes]] = {}
    for path in sorted(CORPUS.glob("*.bin")):
        frames.setdefault(int(path.name.split("-")[0]), []).append(path.read_bytes())
    return frames


FRAMES = corpus()
# Values that make lengths and counts extreme: int16/int32 bounds, -1 (null), and uvarints.
EXTREMES = [
    b"\x7f\xff", b"\x80\x00", b"\xff\xff", b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00", b"\xff\xff\xff\xff",
    b"\x00\x00", b"\xff\xff\xff\xff\x0f", b"\x80\x80\x80\x80\x08", b"\x00",
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, frames: list[bytes]) -> bytes:
    frame = bytearray(draw(st.sampled_from(frames)))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, max(len(frame) - 1, 0)))
        kind = draw(st.sampled_from(["set", "flip", "insert", "delete", "extreme", "cut"]))
        if kind == "set" and frame:
            frame[pos] = draw(st.integers(0, 255))
        elif kind == "flip" and frame:
            frame[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            frame[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del frame[pos : pos + draw(st.integers(1, 8))]
        elif kind == "extreme":
            value = draw(st.sampled_from(EXTREMES))
            frame[pos : pos + len(value)] = value
        elif kind == "cut":
            del frame[pos:]
    return bytes(frame)


def test_the_corpus_decodes() -> None:
    """The unmutated frames are valid requests (and cover the APIs clients use most)."""
    assert {0, 1, 2, 3, 8, 9, 10, 11, 12, 14, 18, 19, 22} <= set(FRAMES)
    for frames in FRAMES.values():
        for frame in frames:
            registry.decode_request(frame)


@pytest.mark.parametrize("api_key", sorted(FRAMES))
def test_a_mutated_request_decodes_or_is_refused(api_key: int) -> None:
    @FUZZ
    @given(mutated(FRAMES[api_key]))
    def fuzz(frame: bytes) -> None:
        with contextlib.suppress(DecodeError):  # refused as undecodable: fine; anything else fails
            registry.decode_request(frame)

    fuzz()
