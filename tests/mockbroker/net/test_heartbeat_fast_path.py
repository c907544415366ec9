"""Heartbeats answered by the fast handler (mockbroker/dispatch/dispatch.py "requests kept by their bytes",
handlers/heartbeat.py ``fast``): the same answers and the same coordinator effects as through
dispatch, in every case, and interceptors, faults and the request log still see every heartbeat."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mockbroker import MockCluster
from mockbroker.clock import ManualClock
from mockbroker.dispatch.table import HANDLERS
from mockbroker.intercept import Intercepted
from mockbroker_protocol import registry
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.heartbeat import HeartbeatRequest
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from mockbroker_protocol.messages.sync_group import SyncGroupRequest
from tests.mockbroker.coordinators.groups_support import subscription
from tests.mockbroker.wire import WireClient

JOIN, HEARTBEAT, SYNC = 11, 12, 14
G1 = "my-group"  # coordinated by broker 1 of 3 (tests/mockbroker/coordinators/classic/test_group_wire.py)


@contextmanager
def fast_handler(enabled: bool) -> Iterator[list[int]]:
    """Heartbeat's fast handler counted (enabled) or taken away (every heartbeat through dispatch);
    yields the list of the fast handler's calls, one entry per call (1 answered, 0 declined)."""
    handler = HANDLERS[HEARTBEAT]
    handler.load()
    original = handler.fast
    assert original is not None
    calls: list[int] = []

    def counted(*args: Any) -> Any:
        answer = original(*args)
        calls.append(0 if answer is None else 1)
        return answer

    handler.fast = counted if enabled else None
    try:
        yield calls
    finally:
        handler.fast = original


def frame(version: int, correlation_id: int, body: HeartbeatRequest) -> bytes:
    return registry.encode_request(RequestHeader(HEARTBEAT, version, correlation_id, "hb-test"), body)  # type: ignore[arg-type]


async def connect(cluster: MockCluster, node_id: int) -> WireClient:
    node = cluster.brokers[node_id]
    return await WireClient.connect(node.host, node.port, "hb-test")


async def heartbeats(client: WireClient, version: int, body: HeartbeatRequest, count: int = 3) -> list[tuple[int, int]]:
    """``count`` identical heartbeats pipelined in one write: (correlation id, error code) each."""
    await client.send_raw(b"".join(frame(version, cid, body) for cid in range(100, 100 + count)))
    answers = []
    for _ in range(count):
        cid, response = registry.decode_response(HEARTBEAT, version, await client.read_frame())
        answers.append((cid, response.error_code))
    return answers


def join_request(group_id: str) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group_id, session_timeout_ms=30_000, rebalance_timeout_ms=60_000, member_id="",
        protocol_type="consumer", protocols=[JoinGroupRequestProtocol("range", subscription("t"))],
    )  # fmt: skip


async def join_and_sync(client: WireClient, group_id: str) -> str:
    joined = await client.request(JOIN, 3, join_request(group_id))  # before KIP-394: no MEMBER_ID_REQUIRED round trip
    assert joined.error_code == ErrorCode.NONE
    synced = await client.request(SYNC, 3, SyncGroupRequest(group_id, joined.generation_id, joined.member_id))
    assert synced.error_code == ErrorCode.NONE
    return str(joined.member_id)


async def script(fast: bool) -> tuple[list[Any], list[int]]:
    """Every case a heartbeat meets, each request repeated; returns what was observed (answers,
    the member's session deadline after each step, the event log) and the fast handler's calls."""
    clock = ManualClock()
    cluster = MockCluster(brokers=3, clock=clock)
    await cluster.start()
    seen: list[Any] = []
    try:
        with fast_handler(fast) as calls:
            one = await connect(cluster, 1)
            member = await join_and_sync(one, G1)
            timer_key = ("classic-group-heartbeat", G1, member)

            def step(name: str, answers: list[tuple[int, int]]) -> None:
                seen.append((name, answers, cluster.groups.timers.deadline(timer_key)))

            for version in (0, 3, 4):  # NONE, each moving the session timer
                clock.advance(1_000)
                step(f"none v{version}", await heartbeats(one, version, HeartbeatRequest(G1, 1, member)))
            clock.advance(1_000)
            step("illegal generation", await heartbeats(one, 4, HeartbeatRequest(G1, 0, member)))
            step("unknown member", await heartbeats(one, 4, HeartbeatRequest(G1, 1, "stranger")))
            step("unknown instance", await heartbeats(one, 3, HeartbeatRequest(G1, 1, member, "nobody")))
            step("invalid group id", await heartbeats(one, 4, HeartbeatRequest("", 1, member)))

            # Faults and interceptors are on the hook: every heartbeat goes through them.
            await cluster.control.push_errors("Heartbeat", "COORDINATOR_LOAD_IN_PROGRESS", "NOT_COORDINATOR")
            step("pushed errors", await heartbeats(one, 4, HeartbeatRequest(G1, 1, member), count=4))
            observed: list[int] = []

            def observe(intercepted: Intercepted) -> None:
                observed.append(intercepted.correlation_id)

            interceptor = await cluster.control.intercept("Heartbeat", observe, keep=True)
            step("intercepted", await heartbeats(one, 4, HeartbeatRequest(G1, 1, member)))
            interceptor.remove()
            seen.append(("interceptor saw", observed))
            step("after the interceptor", await heartbeats(one, 4, HeartbeatRequest(G1, 1, member)))

            # A version capped away closes the connection, as it did before the request was kept.
            await cluster.control.cap_api_version("Heartbeat", 3)
            await one.send_raw(frame(4, 7, HeartbeatRequest(G1, 1, member)))
            seen.append(("capped away, closed", await one.closed_by_peer()))
            await one.close()
            one = await connect(cluster, 1)
            step("v3 under the cap", await heartbeats(one, 3, HeartbeatRequest(G1, 1, member)))
            await cluster.control.cap_api_version("Heartbeat", None)

            # The coordinator moves: the old one answers NOT_COORDINATOR, the new one the member.
            await cluster.control.move_coordinator(G1, 2)
            clock.advance(1_000)
            step("old coordinator", await heartbeats(one, 4, HeartbeatRequest(G1, 1, member)))
            two = await connect(cluster, 2)
            step("new coordinator", await heartbeats(two, 4, HeartbeatRequest(G1, 1, member)))

            # A second member joins (its JoinGroup parks): the group prepares a rebalance.
            other = await connect(cluster, 2)
            await other.send_raw(registry.encode_request(RequestHeader(JOIN, 3, 1, "hb-test"), join_request(G1)))
            for _ in range(100):  # bounded: each round trip lets the broker read the JoinGroup
                clock.advance(10)
                answers = await heartbeats(two, 4, HeartbeatRequest(G1, 1, member))
                if answers[0][1] == ErrorCode.REBALANCE_IN_PROGRESS:
                    break
            step("rebalance in progress", answers)

            # The session expires one timeout after the last heartbeat, whichever path took it.
            clock.advance(30_000)
            step("expired", await heartbeats(two, 4, HeartbeatRequest(G1, 1, member)))
            seen.append(("events", [(e.type, e.time_ms) for e in cluster.events if e.type != "control.api_version_capped"]))

            # Kept requests are never changed by whoever handled them.
            for by_key in cluster.fast_requests.values():
                for key, entry in by_key.items():
                    _, decoded = registry.decode_request(key[:4] + b"\x00\x00\x00\x00" + key[4:])
                    assert decoded == entry[4]
            for client in (one, two, other):
                await client.close()
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []
    return seen, calls


def answers_of(seen: list[Any], name: str) -> list[int]:
    return next([code for _, code in entry[1]] for entry in seen if entry[0] == name)


async def test_the_fast_path_answers_and_acts_as_dispatch_does() -> None:
    through_dispatch, no_calls = await script(fast=False)
    fast, calls = await script(fast=True)
    assert no_calls == []
    assert fast == through_dispatch
    # The fast path was taken (the first request of each kind goes through dispatch, which keeps it)
    # and declined where handle answers without the coordinator (NOT_COORDINATOR after the move).
    assert calls.count(1) >= 20 and 0 in calls
    # And the script meets what it says it does.
    NONE, E = ErrorCode.NONE, ErrorCode
    assert answers_of(fast, "none v4") == [NONE] * 3
    assert answers_of(fast, "illegal generation") == [E.ILLEGAL_GENERATION] * 3
    assert answers_of(fast, "unknown member") == [E.UNKNOWN_MEMBER_ID] * 3
    assert answers_of(fast, "unknown instance") == [E.UNKNOWN_MEMBER_ID] * 3
    assert answers_of(fast, "invalid group id") == [E.INVALID_GROUP_ID] * 3
    assert answers_of(fast, "pushed errors") == [E.COORDINATOR_LOAD_IN_PROGRESS, E.NOT_COORDINATOR, NONE, NONE]
    assert answers_of(fast, "intercepted") == [NONE] * 3
    assert ("interceptor saw", [100, 101, 102]) in fast
    assert ("capped away, closed", True) in fast
    assert answers_of(fast, "old coordinator") == [E.NOT_COORDINATOR] * 3
    assert answers_of(fast, "new coordinator") == [NONE] * 3
    assert answers_of(fast, "rebalance in progress") == [E.REBALANCE_IN_PROGRESS] * 3
    assert answers_of(fast, "expired") == [E.UNKNOWN_MEMBER_ID] * 3
    deadlines = [entry[2] for entry in fast if entry[0].startswith("none v")]
    assert deadlines[1] - deadlines[0] == deadlines[2] - deadlines[1] == 1_000  # each step's heartbeats moved it


async def test_the_request_log_sees_every_heartbeat(cluster: MockCluster) -> None:
    client = await connect(cluster, 1)
    member = await join_and_sync(client, G1)
    with fast_handler(True) as calls:
        assert await heartbeats(client, 4, HeartbeatRequest(G1, 1, member)) == [(100, 0), (101, 0), (102, 0)]
        assert calls == [1, 1]  # kept by the first
        await cluster.control.enable_request_log()
        await heartbeats(client, 4, HeartbeatRequest(G1, 1, member), count=5)
        logged = [r.correlation_id for r in cluster.control.hooks.log if r.api_key == HEARTBEAT]
        assert logged == [100, 101, 102, 103, 104]
        assert calls == [1, 1]
        await cluster.control.enable_request_log(False)
        await heartbeats(client, 4, HeartbeatRequest(G1, 1, member))
        assert calls == [1, 1, 1, 1, 1]
    await client.close()
