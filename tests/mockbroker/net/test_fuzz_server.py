"""Fuzzing the broker over its socket (issue #19): mutated real client frames (the corpus of
tests/protocol/fuzz) sent to a running cluster. Each is answered with its own correlation id, or
not answered (acks=0, or a request that parks), or its connection is closed; the broker records no
internal error (the cluster fixture fails the test on one) and goes on answering everyone.

Deterministic (a seeded Random); MOCKBROKER_FUZZ_FRAMES (default 1000) sets how many frames.
"""

from __future__ import annotations

import asyncio
import os
import random
import struct

from mockbroker import MockCluster
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from tests.mockbroker.datapath import connect_to
from tests.mockbroker.wire import WireClient
from tests.protocol.fuzz.test_decoders import EXTREMES, FRAMES

FRAMES_SENT = int(os.environ.get("MOCKBROKER_FUZZ_FRAMES", "1000"))
MARKER = 0x7EADBEEF  # the correlation id of the ApiVersions sent after each fuzzed frame
WAIT_S = 0.5  # how long an answer is waited for before the request is taken as parked


def mutate(rng: random.Random, frame: bytes) -> bytes:
    out = bytearray(frame)
    for _ in range(rng.randint(1, 2)):
        pos = rng.randrange(max(len(out), 1))
        kind = rng.choice(["set", "flip", "insert", "delete", "extreme", "cut"])
        if kind == "set" and out:
            out[pos] = rng.randrange(256)
        elif kind == "flip" and out:
            out[pos] ^= 1 << rng.randrange(8)
        elif kind == "insert":
            out[pos:pos] = rng.randbytes(rng.randint(1, 8))
        elif kind == "delete":
            del out[pos : pos + rng.randint(1, 8)]
        elif kind == "extreme":
            value = rng.choice(EXTREMES)
            out[pos : pos + len(value)] = value
        elif kind == "cut" and pos > 8:  # keep the header's start: cuts of it are the decoder test's
            del out[pos:]
    return bytes(out)


async def answers_until_marker(client: WireClient) -> list[int] | None:
    """Correlation ids answered before the marker's; None if the connection closed or waits."""
    got: list[int] = []
    while True:
        try:
            answer = await client.read_frame(timeout=WAIT_S)
        except (asyncio.IncompleteReadError, ConnectionError, TimeoutError):
            return None
        (correlation_id,) = struct.unpack_from(">i", answer)
        if correlation_id == MARKER:
            return got
        got.append(correlation_id)


async def test_mutated_client_frames_never_break_the_broker(cluster: MockCluster) -> None:
    cluster.create_topic("fuzz-a", 2)
    cluster.create_topic("fuzz-b", 2)
    rng = random.Random(19)
    corpus = [frame for frames in FRAMES.values() for frame in frames]
    marker = registry.encode_request(RequestHeader(18, 3, MARKER, "fuzz"), ApiVersionsRequest("fuzz", "1"))
    client = await connect_to(cluster, 1)
    outcomes = {"answered": 0, "unanswered": 0, "closed or parked": 0}
    for _ in range(FRAMES_SENT):
        frame = mutate(rng, rng.choice(corpus))
        await client.send_raw(len(frame).to_bytes(4, "big") + frame + marker)
        got = await answers_until_marker(client)
        if got is None:
            outcomes["closed or parked"] += 1
            await client.close()
            client = await connect_to(cluster, 1)
            continue
        assert got in ([], list(struct.unpack_from(">i", frame, 4))), f"answers {got} to {frame!r}"
        outcomes["answered" if got else "unanswered"] += 1
    await client.close()
    print(f"fuzzed frames: {outcomes}")  # shown with -s (the figures in bench/RESULTS.md)
    # Still serving.
    fresh = await connect_to(cluster, 2)
    resp = await fresh.request(18, 3, ApiVersionsRequest("after", "1"))
    assert resp.error_code == 0
    await fresh.close()
    assert outcomes["answered"] > FRAMES_SENT // 10, outcomes  # many mutations leave a valid request
