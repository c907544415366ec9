"""Pure KIP-932 share-partition and share-session tests on a ManualClock: acquisition, delivery
counts, Accept/Release/Reject/Gap/Renew, the start offset, lock expiry on the cluster clock, the
delivery-count limit, a member leaving, share-session epochs and their error codes."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.share.manager import SharePartitionManager
from mockbroker.coordinators.share.partition import AcknowledgeType, RecordState, SharePartition
from mockbroker.log.replica_manager import append_records
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.records.records import SimpleRecord, build_batch
from tests.mockbroker.coordinators.groups_support import Harness

A, R, J, G, N = (int(AcknowledgeType.ACCEPT), int(AcknowledgeType.RELEASE), int(AcknowledgeType.REJECT),
                 int(AcknowledgeType.GAP), int(AcknowledgeType.RENEW))  # fmt: skip
LOCK = 30_000


def sp(start: int = 0) -> SharePartition:
    return SharePartition("g", "t", 0, start)


def take(p: SharePartition, member: str, end: int, n: int = 100, now: int = 0) -> list[tuple[int, int, int]]:
    _, ranges = p.acquire(member, range(p.start_offset, end), max_records=n, max_in_flight=2000, now_ms=now,
                          lock_duration_ms=LOCK)  # fmt: skip
    return [(r.first_offset, r.last_offset, r.delivery_count) for r in ranges]


def ack(p: SharePartition, member: str, *batches: tuple[int, int, list[int]], limit: int = 5, renew: bool = True) -> None:
    p.acknowledge(member, list(batches), delivery_count_limit=limit, now_ms=0, lock_duration_ms=LOCK, renew_allowed=renew)


def test_acquire_accept_moves_the_start_offset() -> None:
    p = sp()
    assert take(p, "a", 5, n=3) == [(0, 2, 1)]
    assert take(p, "b", 5) == [(3, 4, 1)]  # nobody else gets 0-2 while a holds them
    assert take(p, "c", 5) == []
    ack(p, "a", (0, 1, [A]))
    assert p.start_offset == 2
    assert p.record(2) is not None and p.record(2).state is RecordState.ACQUIRED  # type: ignore[union-attr]
    ack(p, "a", (2, 2, [J]))
    assert p.start_offset == 3


def test_release_redelivers_with_a_raised_delivery_count_and_the_limit_archives() -> None:
    p = sp()
    take(p, "a", 2)
    ack(p, "a", (0, 1, [R, A]), limit=2)
    assert p.start_offset == 0 and p.record(0).state is RecordState.AVAILABLE  # type: ignore[union-attr]
    assert take(p, "b", 2) == [(0, 0, 2)]
    ack(p, "b", (0, 0, [R]), limit=2)  # second delivery released at the limit: archived
    assert p.start_offset == 2
    assert take(p, "c", 2) == []


def test_per_offset_types_gaps_and_renew() -> None:
    p = sp()
    take(p, "a", 4)
    ack(p, "a", (0, 3, [A, G, N, J]))
    assert p.record(2).state is RecordState.ACQUIRED  # type: ignore[union-attr]  # renewed, still held
    assert p.start_offset == 2


@pytest.mark.parametrize(
    ("batch", "code"),
    [
        ((3, 1, [A]), ErrorCode.INVALID_REQUEST),  # last before first
        ((0, 2, [A, A]), ErrorCode.INVALID_REQUEST),  # neither one type nor one per offset
        ((0, 0, [9]), ErrorCode.INVALID_REQUEST),  # no such type
        ((5, 5, [A]), ErrorCode.INVALID_REQUEST),  # past the acquired records
        ((2, 2, [A]), ErrorCode.INVALID_RECORD_STATE),  # held by b
    ],
)
def test_invalid_acknowledgements_change_nothing(batch: tuple[int, int, list[int]], code: ErrorCode) -> None:
    p = sp()
    take(p, "a", 2)
    take(p, "b", 3)
    with pytest.raises(GroupError) as exc:
        ack(p, "a", (0, 0, [A]), batch)
    assert exc.value.code == code
    assert p.record(0).state is RecordState.ACQUIRED  # type: ignore[union-attr]  # all or nothing


def test_renew_needs_version_2() -> None:
    p = sp()
    take(p, "a", 1)
    with pytest.raises(GroupError) as exc:
        ack(p, "a", (0, 0, [N]), renew=False)
    assert exc.value.code == ErrorCode.INVALID_REQUEST


def test_accepted_twice_is_invalid_record_state() -> None:
    p = sp()
    take(p, "a", 3)
    ack(p, "a", (1, 1, [A]))
    with pytest.raises(GroupError) as exc:
        ack(p, "a", (1, 1, [A]))
    assert exc.value.code == ErrorCode.INVALID_RECORD_STATE


def test_release_member_and_the_in_flight_limit() -> None:
    p = sp()
    _, ranges = p.acquire("a", range(0, 10), max_records=100, max_in_flight=4, now_ms=0, lock_duration_ms=LOCK)
    assert [(r.first_offset, r.last_offset) for r in ranges] == [(0, 3)]
    assert p.release_member("a", delivery_count_limit=5) == [0, 1, 2, 3]
    assert take(p, "b", 10, n=2) == [(0, 1, 2)]


def test_start_offset_follows_delete_records() -> None:
    p = sp()
    take(p, "a", 4)
    p.maybe_move_start(3)
    assert p.start_offset == 3 and sorted(p.in_flight) == [3]


# -- the manager: locks on the cluster clock, share sessions, members leaving ---------------------------------


class ShareData(Harness):
    def __init__(self, **settings: Any) -> None:
        settings.setdefault("group_share_record_lock_duration_ms", 1000)
        settings.setdefault("group_share_delivery_count_limit", 2)
        super().__init__(**settings)
        self.topic = self.cluster.create_topic("t", 1)
        self.manager: SharePartitionManager = self.groups.share_partitions
        self.manager.set_auto_offset_reset("g", "earliest")

    @property
    def log(self) -> Any:
        return self.topic.partitions[0].log

    def produce(self, n: int) -> None:
        partition = self.topic.partitions[0]
        data = bytearray(build_batch([SimpleRecord(value=b"v%d" % i) for i in range(n)]))
        result = append_records(self.cluster, self.cluster.brokers[partition.leader_id], self.topic, partition, data,
                                acks=1, api_version=9, client_id="t", now_ms=self.now)  # fmt: skip
        assert result.error == ErrorCode.NONE

    def acquire(self, member: str, n: int = 100) -> list[tuple[int, int, int]]:
        ranges = self.manager.acquire("g", member, self.topic.topic_id, "t", self.log, n, self.now)
        return [(r.first_offset, r.last_offset, r.delivery_count) for r in ranges]

    def spso(self) -> int:
        return self.manager.partitions[("g", self.topic.topic_id, 0)].start_offset


def test_lock_expiry_on_the_cluster_clock_redelivers_then_archives_at_the_limit() -> None:
    h = ShareData()
    h.produce(3)
    assert h.acquire("a") == [(0, 2, 1)]
    h.advance(999)
    assert h.acquire("b") == []
    h.advance(1)  # the lock expires: Available again, delivered once
    assert [e.details["offsets"] for e in h.events("share_partition.lock_expired")] == [[0, 1, 2]]
    assert h.acquire("b", 2) == [(0, 1, 2)]
    h.advance(1000)  # second delivery expired at the limit (2): archived
    assert h.spso() == 2
    assert h.acquire("c") == [(2, 2, 2)]


def test_renew_keeps_the_lock() -> None:
    h = ShareData()
    h.produce(1)
    h.acquire("a")
    h.advance(900)
    h.manager.acknowledge("g", "a", h.topic.topic_id, "t", h.log, [(0, 0, [N])], h.now, renew_allowed=True)
    h.advance(500)  # past the first deadline, before the renewed one
    assert h.acquire("b") == []
    h.advance(500)
    assert h.acquire("b") == [(0, 0, 2)]


def test_latest_starts_at_the_high_watermark() -> None:
    h = ShareData()
    h.produce(2)
    h.manager.set_auto_offset_reset("g", "latest")
    assert h.acquire("a") == []
    h.produce(1)
    assert h.acquire("a") == [(2, 2, 1)]


def test_share_session_epochs() -> None:
    h = ShareData()
    m = h.manager
    tp = (h.topic.topic_id, 0)
    with pytest.raises(GroupError) as exc:
        m.new_context("g", "a", 1, [tp], [], acknowledging=False, now_ms=h.now)
    assert exc.value.code == ErrorCode.SHARE_SESSION_NOT_FOUND
    with pytest.raises(GroupError) as exc:
        m.new_context("g", "a", 0, [tp], [], acknowledging=True, now_ms=h.now)
    assert exc.value.code == ErrorCode.INVALID_REQUEST
    ctx = m.new_context("g", "a", 0, [tp], [], acknowledging=False, now_ms=h.now)
    assert ctx.is_full and ctx.partitions == [tp]
    with pytest.raises(GroupError) as exc:
        m.new_context("g", "a", 2, [], [], acknowledging=False, now_ms=h.now)
    assert exc.value.code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert not m.new_context("g", "a", 1, [], [], acknowledging=False, now_ms=h.now).is_full
    with pytest.raises(GroupError) as exc:
        m.acknowledge_session_update("g", "a", 0)
    assert exc.value.code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    m.acknowledge_session_update("g", "a", 2)
    assert m.sessions[("g", "a")].epoch == 3
    assert m.new_context("g", "a", 3, [], [tp], acknowledging=False, now_ms=h.now).partitions == []
    with pytest.raises(GroupError) as exc:
        m.new_context("g", "a", -1, [tp], [], acknowledging=False, now_ms=h.now)
    assert exc.value.code == ErrorCode.INVALID_REQUEST
    assert m.new_context("g", "a", -1, [], [], acknowledging=True, now_ms=h.now).is_final


def test_closing_the_session_or_leaving_the_group_releases_held_records() -> None:
    h = ShareData()
    h.produce(2)
    tp = (h.topic.topic_id, 0)
    h.manager.new_context("g", "a", 0, [tp], [], acknowledging=False, now_ms=h.now)
    assert h.acquire("a", 1) == [(0, 0, 1)]
    h.manager.close_session("g", "a", h.now)
    assert h.acquire("b", 1) == [(0, 0, 2)]
    # b is a member of the share group; when it leaves, what it holds goes back.
    from mockbroker_protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest

    h.groups.share_group_heartbeat(h.now, ShareGroupHeartbeatRequest(group_id="g", member_id="b", member_epoch=0,
                                   subscribed_topic_names=["t"]), client_id="c", client_host="/h")  # fmt: skip
    h.groups.share_group_heartbeat(h.now, ShareGroupHeartbeatRequest(group_id="g", member_id="b", member_epoch=-1),
                                   client_id="c", client_host="/h")  # fmt: skip
    assert h.spso() == 1  # offset 0 was at its second delivery: archived at the limit
    assert h.acquire("c") == [(1, 1, 1)]
