"""The pytest plugin's fixtures themselves: a broker per test on its own thread, driven from sync
tests (kafka-python) and async ones (aiokafka); the teardown checks; the session-wide variant;
and the ManualClock: a session expiry and a rebalance timeout caused by ``advance()`` alone."""

from __future__ import annotations

import asyncio
import threading

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from kafka import KafkaConsumer, KafkaProducer

from mockbroker.control import GroupSnapshot
from mockbroker.testing import ClusterProblems, KafkaCluster, start_cluster
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.heartbeat import HeartbeatRequest
from mockbroker_protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from mockbroker_protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from tests.integration.support import DEADLINE_S, wait_for
from tests.mockbroker.coordinators.groups_support import assignment, subscription
from tests.mockbroker.wire import WireClient

JOIN, HEARTBEAT, SYNC = 11, 12, 14


def test_kafka_cluster_serves_kafka_python(kafka_cluster: KafkaCluster) -> None:
    kafka_cluster.create_topic("orders", partitions=2)
    producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="fixture-producer")
    try:
        producer.send("orders", key=b"k", value=b"v", headers=[("h", b"1")], partition=1).get(DEADLINE_S)
    finally:
        producer.close(DEADLINE_S)
    (record,) = kafka_cluster.read("orders", 1)
    assert (record.key, record.value, record.headers, record.offset) == (b"k", b"v", (("h", b"1"),), 0)
    produced = kafka_cluster.requests("Produce", client_id="fixture-producer")
    assert [r.outcome for r in produced] == ["answered"] and produced[0].error_codes == ()
    assert kafka_cluster.call(threading.current_thread) is not threading.current_thread()

    kafka_cluster.produce("orders", [("a", "1"), ("b", "2")], partition=0, compression="gzip")
    consumer = KafkaConsumer(
        "orders", bootstrap_servers=kafka_cluster.bootstrap_servers, group_id="readers",
        auto_offset_reset="earliest", client_id="fixture-consumer",
    )  # fmt: skip
    try:
        seen: list[bytes] = []
        wait_for(lambda: seen.extend(r.value for rs in consumer.poll(200).values() for r in rs) or len(seen) >= 3, "3 records")
        consumer.commit()
    finally:
        consumer.close()
    assert sorted(seen) == [b"1", b"2", b"v"]
    assert kafka_cluster.committed_offsets("readers") == {"orders": {0: 2, 1: 1}}


@pytest.mark.kafka_cluster(brokers=3, topics={"spread": {"partitions": 3, "replication_factor": 3}})
def test_marker_configures_the_cluster(kafka_cluster: KafkaCluster) -> None:
    assert kafka_cluster.broker_ids == [1, 2, 3]
    topic = kafka_cluster.topic("spread")
    assert topic.replication_factor == 3 and set(topic.leaders().values()) == {1, 2, 3}


async def test_async_tests_await_the_aio_facade(kafka_cluster: KafkaCluster) -> None:
    await kafka_cluster.aio.create_topic("events", partitions=1)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_cluster.bootstrap_servers)
    await producer.start()
    try:
        await producer.send_and_wait("events", b"hello")
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        "events", bootstrap_servers=kafka_cluster.bootstrap_servers, group_id="aio-readers",
        auto_offset_reset="earliest", client_id="aio-reader",
    )  # fmt: skip
    await consumer.start()
    try:
        # the broker waits for the group while this loop keeps the consumer running
        snapshot = await kafka_cluster.aio.wait_for_group("aio-readers", members=1, timeout=DEADLINE_S)
        (member,) = snapshot.members
        assert member.client_id == "aio-reader" and member.subscription == ("events",)
        assert (await consumer.getone()).value == b"hello"
        await consumer.commit()
        assert await kafka_cluster.aio.wait_for_commit("aio-readers", "events", 0, offset=1) == {0: 1}
    finally:
        await consumer.stop()


def test_teardown_reports_broker_bugs_and_strict_failures() -> None:
    kafka = start_cluster()

    def buggy(_: object) -> None:
        raise RuntimeError("boom in an interceptor")

    kafka.intercept("Metadata", buggy)
    # kafka-python's first Metadata meets the failing interceptor (its connection is closed); it retries
    KafkaProducer(bootstrap_servers=kafka.bootstrap_servers).close(DEADLINE_S)
    wait_for(lambda: kafka.internal_errors, "the interceptor's exception to be recorded")
    problems = kafka.close(check=False)
    assert any("boom in an interceptor" in p for p in problems), problems

    strict = start_cluster()
    strict.call(lambda: strict.cluster.strict_failures.append("member m-1 was assigned t-0 twice"))
    with pytest.raises(ClusterProblems, match="assigned t-0 twice"):
        strict.close()


def test_clean_close_leaves_nothing_behind() -> None:
    before = {t.name for t in threading.enumerate()}
    with start_cluster(brokers=2) as kafka:
        producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
        producer.send("auto", b"x").get(DEADLINE_S)  # auto-created topic; a live client connection
        producer.close(DEADLINE_S)
        name = kafka._thread.name
    assert kafka.close() == []
    assert name not in {t.name for t in threading.enumerate()} and {t.name for t in threading.enumerate()} <= before | {
        t.name for t in threading.enumerate() if not t.name.startswith("mockbroker-")
    }
    assert kafka.loop.is_closed()


def test_shared_cluster_clears_faults(shared_kafka_cluster: KafkaCluster) -> None:
    shared_kafka_cluster.push_errors("FindCoordinator", "COORDINATOR_NOT_AVAILABLE")
    assert shared_kafka_cluster.pending_errors() == {"FindCoordinator": ["COORDINATOR_NOT_AVAILABLE"]}


def test_shared_cluster_starts_each_test_without_faults(shared_kafka_cluster: KafkaCluster) -> None:
    assert shared_kafka_cluster.pending_errors() == {}


# -- the manual clock ----------------------------------------------------------------------------


class RawMember:
    """A consumer-group member speaking the protocol itself (no background threads of its own),
    so the only thing that moves time is the test's ``advance``."""

    def __init__(self, client: WireClient, group: str, session_ms: int, rebalance_ms: int) -> None:
        self.client, self.group = client, group
        self.session_ms, self.rebalance_ms = session_ms, rebalance_ms
        self.member_id, self.generation = "", -1

    def join_request(self) -> JoinGroupRequest:
        return JoinGroupRequest(
            group_id=self.group, session_timeout_ms=self.session_ms, rebalance_timeout_ms=self.rebalance_ms,
            member_id=self.member_id, protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol("range", subscription("t"))],
        )  # fmt: skip

    async def send_join(self) -> None:
        await self.client.send_raw(self._frame(JOIN, 5, self.join_request()))

    async def read_join(self) -> JoinGroupResponse:
        from mockbroker_protocol import registry

        _, response = registry.decode_response(JOIN, 5, await self.client.read_frame(DEADLINE_S))
        if response.error_code == ErrorCode.NONE:
            self.member_id, self.generation = response.member_id, response.generation_id
        return response  # type: ignore[no-any-return]

    async def join(self) -> JoinGroupResponse:
        first: JoinGroupResponse = await self.client.request(JOIN, 5, self.join_request())
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED  # KIP-394 handshake
        self.member_id = first.member_id
        await self.send_join()
        return await self.read_join()

    async def sync(self, leader: bool) -> None:
        assignments = [SyncGroupRequestAssignment(self.member_id, assignment(t=[0]))] if leader else []
        response = await self.client.request(
            SYNC, 5, SyncGroupRequest(self.group, self.generation, self.member_id, None, "consumer", "range", assignments)
        )
        assert response.error_code == ErrorCode.NONE

    async def heartbeat(self) -> ErrorCode:
        response = await self.client.request(HEARTBEAT, 4, HeartbeatRequest(self.group, self.generation, self.member_id))
        return ErrorCode(response.error_code)

    def _frame(self, api_key: int, version: int, body: object) -> bytes:
        from mockbroker_protocol import registry
        from mockbroker_protocol.headers import RequestHeader

        return registry.encode_request(RequestHeader(api_key, version, 1_000_000, self.client.client_id), body)  # type: ignore[arg-type]


@pytest.mark.kafka_cluster(manual_clock=True, topics={"t": 1})
async def test_manual_clock_session_expiry_and_rebalance_timeout(kafka_cluster: KafkaCluster) -> None:
    kafka, host_port = kafka_cluster, kafka_cluster.bootstrap_servers.split(":")
    a = RawMember(await WireClient.connect(host_port[0], int(host_port[1]), "member-a"), "g", 10_000, 30_000)
    b = RawMember(await WireClient.connect(host_port[0], int(host_port[1]), "member-b"), "g", 10_000, 30_000)
    try:
        # a alone: Stable at generation 1
        assert (await a.join()).generation_id == 1
        await a.sync(leader=True)
        # b joins; a learns of the rebalance by heartbeat and rejoins: generation 2 with both
        b_first: JoinGroupResponse = await b.client.request(JOIN, 5, b.join_request())
        assert b_first.error_code == ErrorCode.MEMBER_ID_REQUIRED
        b.member_id = b_first.member_id
        await b.send_join()
        await kafka.aio.wait_for_group("g", "PreparingRebalance")
        assert await a.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS
        await a.send_join()
        assert (await a.read_join()).generation_id == (await b.read_join()).generation_id == 2
        await a.sync(leader=True)
        await b.sync(leader=False)
        await kafka.aio.wait_for_group("g", "Stable", members=2)

        # Session expiry, by the clock alone: b heartbeats every 3 s of manual time, a never does.
        for _ in range(3):
            await kafka.aio.advance(3_000)
            assert await b.heartbeat() == ErrorCode.NONE
        await kafka.aio.advance(1_000)  # 10 s since a's last word: its session expires now
        expired = await kafka.aio.events("member.expired", "g")
        assert [e.member_id for e in expired] == [a.member_id]
        snap: GroupSnapshot = await kafka.aio.wait_for_group("g", "PreparingRebalance", members=1)
        assert snap.members[0].member_id == b.member_id

        # Rebalance timeout, by the clock alone: b keeps heartbeating (it is told to rejoin) but
        # never rejoins, as a consumer stuck between polls; the join phase ends b's rebalance
        # timeout (30 s of manual time) after it began, without b, and the group is left Empty.
        for _ in range(9):
            await kafka.aio.advance(3_000)
            assert await b.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS
        await kafka.aio.advance(2_999)
        assert (await kafka.aio.describe_group("g")).state == "PreparingRebalance"
        await kafka.aio.advance(1)
        snap = await kafka.aio.wait_for_group("g", "Empty", members=0)
        assert snap.generation_id == 3
        removed = await kafka.aio.events("member.removed", "g")
        assert [(e.member_id, e.details["cause"]) for e in removed] == [(b.member_id, "not_rejoined")]
    finally:
        await a.client.close()
        await b.client.close()


def test_advance_needs_a_manual_clock(kafka_cluster: KafkaCluster) -> None:
    with pytest.raises(TypeError, match="ManualClock"):
        kafka_cluster.advance(1)


def test_unknown_control_method_says_what_exists(kafka_cluster: KafkaCluster) -> None:
    with pytest.raises(AttributeError, match="wait_for_group"):
        kafka_cluster.wait_for_grup("g")  # type: ignore[attr-defined]


async def test_aio_facade_keeps_the_test_loop_running(kafka_cluster: KafkaCluster) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.001)

    ticker = asyncio.create_task(tick())
    try:
        with pytest.raises(TimeoutError):
            await kafka_cluster.aio.wait_for_group("nobody", timeout=0.2)
    finally:
        ticker.cancel()
    assert ticks > 1
