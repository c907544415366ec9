"""A steady-state heartbeat's cost in the broker, layer by layer, without sockets.

One Stable group with one member (a classic group joined by a raw client, as bench/requests.py
sets it up; or a KIP-848 consumer group at its target assignment), then N heartbeats of that
member, all answered NONE, at one of three depths:

- ``coordinator``: the group coordinator alone (``ClassicGroupCoordinator.heartbeat``, the entry
  handlers/heartbeat.py calls, or
  ``ConsumerGroupCoordinator.consumer_group_heartbeat``), what the groups area owns;
- ``handler``: the API handler with its request context (adds the coordinator lookup);
- ``request``: request frames through a ``Connection`` (16 pipelined frames per
  read, as the bench client sends them): framing, decode, dispatch, the handler,
  encoding, to a transport that only counts;
- ``driver``: the coordinator depth's loop with the heartbeat left out (the clock read and the
  call remain), to subtract from it: coordinator - driver is the coordinator's own share.

Instructions per heartbeat = (run with N - run with 0) / N, both after the same warm-up, with
PYTHONHASHSEED=0, under valgrind (cachegrind's ``I refs``), which the machine's load does not change:

    python bench/heartbeat_cost.py --instructions               # every kind and depth
    python bench/heartbeat_cost.py --kind classic --depth request -n 2000   # one run
"""

# ruff: noqa: E402 - the project's imports must come after the sys.path fix below

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

# The bench directory off sys.path (running this file puts it first): its assignors.py must not
# shadow the assignors package, which KIP-848 groups import. _rawclient is loaded by its path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
_spec = importlib.util.spec_from_file_location("_rawclient", _HERE / "_rawclient.py")
assert _spec is not None and _spec.loader is not None
rc = sys.modules["_rawclient"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rc)

from mockbroker import MockCluster
from mockbroker.dispatch.context import RequestContext
from mockbroker.net.server import Connection
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from mockbroker_protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from mockbroker_protocol.registry import Encoded

TOPIC = "bench-requests"
GROUP = "bench-requests-group"
KINDS = ("classic", "consumer")
DEPTHS = ("driver", "coordinator", "handler", "request")
BATCH = 16
CONSUMER_GROUP_HEARTBEAT = 68
RESPONSES: dict[str, Any] = {"classic": HeartbeatResponse, "consumer": ConsumerGroupHeartbeatResponse}



class _CountingTransport:
    """Just enough of a transport for a Connection: answers are counted, not sent."""

    def __init__(self) -> None:
        self.writes = 0
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 40000) if name == "peername" else default

    def writelines(self, chunks: list[Any]) -> None:
        self.writes += 1

    def write(self, data: Any) -> None:
        self.writes += 1

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def _run_coroutine(coro: Any) -> Any:
    """A handler coroutine that never waits (a heartbeat's), run to its end in one step."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    raise RuntimeError("the handler waited")


async def _classic_member(cluster: MockCluster) -> HeartbeatRequest:
    node = next(iter(cluster.brokers.values()))
    members, _, conns = await rc.join_group(
        (node.host, node.port), GROUP, 1, TOPIC, 8, session_timeout_ms=300000
    )
    for _, writer in conns:
        writer.close()
    return rc.heartbeat_request(GROUP, members[0])


def _consumer_member(cluster: MockCluster) -> ConsumerGroupHeartbeatRequest:
    """A KIP-848 member joined and reconciled to its target; the request is its steady heartbeat
    (nothing changed: the optional fields left out, as clients send them)."""
    consumer = cluster.groups.consumer
    join = ConsumerGroupHeartbeatRequest(
        group_id=GROUP, member_id="bench-member-0000000000", member_epoch=0, rebalance_timeout_ms=300000,
        subscribed_topic_names=[TOPIC], topic_partitions=[],
    )  # fmt: skip
    answer = consumer.consumer_group_heartbeat(
        cluster.clock.now_ms(), join, api_version=0, client_id="bench", client_host="/127.0.0.1"
    )
    if answer.error_code != ErrorCode.NONE:
        raise RuntimeError(f"join: {answer.error_code!r}")
    steady = ConsumerGroupHeartbeatRequest(
        group_id=GROUP, member_id=answer.member_id, member_epoch=answer.member_epoch
    )
    answer = consumer.consumer_group_heartbeat(
        cluster.clock.now_ms(), steady, api_version=0, client_id="bench", client_host="/127.0.0.1"
    )
    if answer.error_code != ErrorCode.NONE or answer.assignment is not None:
        raise RuntimeError(f"not steady: {answer!r}")
    return steady


async def run(kind: str, depth: str, n: int, warmup: int) -> int:
    cluster = MockCluster(group_initial_rebalance_delay_ms=0)
    await cluster.start()
    try:
        cluster.create_topic(TOPIC, 8)
        node = cluster.coordinator_for(GROUP)
        groups = cluster.groups
        if kind == "classic":
            req: Any = await _classic_member(cluster)
            api_key, version = rc.HEARTBEAT, rc.VERSION[rc.HEARTBEAT]
        else:
            req = _consumer_member(cluster)
            api_key, version = CONSUMER_GROUP_HEARTBEAT, 0
        clock = cluster.clock
        answered = 0
        if depth in ("coordinator", "driver"):
            if depth == "driver":
                none = ErrorCode.NONE

                def one() -> Any:
                    clock.now_ms()
                    return none
            elif kind == "classic":
                group_id, member_id, generation_id = req.group_id, req.member_id, req.generation_id

                def one() -> Any:
                    return groups.classic.heartbeat(clock.now_ms(), group_id, member_id, generation_id, None)
            else:
                consumer = groups.consumer

                def one() -> Any:
                    return consumer.consumer_group_heartbeat(
                        clock.now_ms(), req, api_version=0, client_id="bench", client_host="/127.0.0.1"
                    ).error_code

            for _ in range(warmup):
                one()
            for _ in range(n):
                error = one()
                answered += 1
            if n and error != ErrorCode.NONE:  # steady state: every answer is the same as the last
                raise RuntimeError(f"a heartbeat failed: {error!r}")
            return answered
        if depth == "handler":
            from mockbroker.dispatch.table import HANDLERS

            handle = HANDLERS[api_key].handle
            header = RequestHeader(api_key, version, 7, rc.CLIENT_ID)

            def one() -> Any:
                ctx = RequestContext(cluster, node, header, version, clock.now_ms(), "127.0.0.1", 40000)
                return _run_coroutine(handle(ctx, req))

            for _ in range(warmup):
                one()
            for _ in range(n):
                answer = one()
                answered += 1
            if n:  # steady state: every answer is the same as the last
                if isinstance(answer, Encoded):  # an answer sent from a table of encoded ones
                    answer = RESPONSES[kind].decode(answer.body, version)
                if answer.error_code != ErrorCode.NONE:
                    raise RuntimeError(f"a heartbeat failed: {answer!r}")
            return answered
        connection = Connection(cluster._servers[node.node_id])
        transport = _CountingTransport()
        connection.connection_made(transport)  # type: ignore[arg-type]
        chunk = rc.frame(api_key, req, 7, version) * BATCH
        for _ in range(warmup // BATCH):
            rc.feed(connection, chunk)
        before = transport.writes
        for _ in range(n // BATCH):
            rc.feed(connection, chunk)
        if transport.closed:
            raise RuntimeError("the broker closed the connection")
        connection.connection_lost(None)  # what a real transport would report, so stop() does not wait
        return (transport.writes - before) * BATCH
    finally:
        await cluster.stop()


def count_instructions(kind: str, depth: str, n: int, warmup: int) -> int:
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", sys.executable,
           str(Path(__file__).resolve()), "--kind", kind, "--depth", depth, "-n", str(n), "--warmup", str(warmup)]  # fmt: skip
    out = subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True
    )
    m = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if not m:
        raise SystemExit(f"no instruction count in valgrind's output:\n{out.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--kind", choices=KINDS, default="classic")
    parser.add_argument("--depth", choices=DEPTHS, default="coordinator")
    parser.add_argument("-n", type=int, default=2000, help="heartbeats measured")
    parser.add_argument("--warmup", type=int, default=512)
    parser.add_argument(
        "--instructions", action="store_true", help="instructions per heartbeat, under valgrind"
    )
    args = parser.parse_args(argv)
    if args.n % BATCH or args.warmup % BATCH:
        parser.error(f"-n and --warmup must be multiples of {BATCH}")
    if args.instructions:
        kinds = KINDS if "--kind" not in (argv or sys.argv) else (args.kind,)
        depths = DEPTHS if "--depth" not in (argv or sys.argv) else (args.depth,)
        for kind in kinds:
            for depth in depths:
                base = count_instructions(kind, depth, 0, args.warmup)
                total = count_instructions(kind, depth, args.n, args.warmup)
                print(
                    f"{kind:9} {depth:12} {(total - base) / args.n:10,.0f} instructions per heartbeat",
                    flush=True,
                )
        return
    answered = asyncio.run(run(args.kind, args.depth, args.n, args.warmup))
    if answered != args.n:
        raise SystemExit(f"{answered} of {args.n} heartbeats answered")


if __name__ == "__main__":
    main()
