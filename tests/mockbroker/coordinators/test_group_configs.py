"""Per-group configs (KIP-848 GroupConfig, KIP-932 share.*, KIP-1071 streams.*) on a ManualClock:
Kafka's validation messages, what DescribeConfigs shows, and each coordinator applying a group's
overrides instead of the broker's group.* settings (and the broker's again once deleted)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from mockbroker.config.group_configs import (
    GROUP_CONFIG_KEYS,
    by_duration_ms,
    group_config_entries,
    validate_group_configs,
)
from mockbroker.config.groups import GroupConfig
from mockbroker.config.topics import ConfigSource
from mockbroker.coordinators.errors import GroupError
from mockbroker.log.replica_manager import append_records
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.records.records import SimpleRecord, build_batch
from tests.mockbroker.coordinators.consumer_groups_support import ConsumerHarness
from tests.mockbroker.coordinators.share.test_share_group_heartbeat import ShareHarness
from tests.mockbroker.coordinators.share.test_share_partition import ShareData
from tests.mockbroker.coordinators.streams_groups_support import StreamsHarness

# Kafka 4.3.1's broker defaults for the bounds (kafka_defaults=True gives the same).
KAFKA = GroupConfig(
    consumer_group_session_timeout_ms=45000, consumer_group_min_session_timeout_ms=45000,
    consumer_group_heartbeat_interval_ms=5000, consumer_group_min_heartbeat_interval_ms=5000,
    share_group_session_timeout_ms=45000, share_group_min_session_timeout_ms=45000,
    share_group_heartbeat_interval_ms=5000, share_group_min_heartbeat_interval_ms=5000,
    streams_group_session_timeout_ms=45000, streams_group_heartbeat_interval_ms=5000,
    streams_group_initial_rebalance_delay_ms=3000,
)  # fmt: skip


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"nope": "1", "consumer.session.timeout.ms": "10"}, "Unknown group config name: nope"),
        ({"consumer.session.timeout.ms": "x"}, "Invalid value x for configuration consumer.session.timeout.ms: Not a number of type INT"),
        ({"consumer.session.timeout.ms": "10", "share.delivery.count.limit": "1"},
         "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2"),
        ({"consumer.session.timeout.ms": "10"},
         "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"),
        ({"consumer.heartbeat.interval.ms": "46000"},
         "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"),
        ({"share.record.lock.duration.ms": "70000"},
         "share.record.lock.duration.ms must be less than or equal to group.share.max.record.lock.duration.ms"),
        ({"share.partition.max.record.locks": "5000"},
         "share.partition.max.record.locks must be less than or equal to group.share.max.partition.max.record.locks"),
        ({"streams.num.standby.replicas": "3"},
         "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"),
        ({"streams.heartbeat.interval.ms": "4000"},
         "streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms"),
        ({"share.isolation.level": "x"},
         "Invalid value x for configuration share.isolation.level: String must be one of: read_committed, read_uncommitted"),
        ({"share.auto.offset.reset": "by_duration:-PT1H"},
         "Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: Invalid value `by_duration:-PT1H` for "
         "configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format "
         "'by_duration:<PnDTnHnMn.nS>'."),
    ],
)  # fmt: skip
def test_validation_messages_are_kafkas(overrides: dict[str, str], message: str) -> None:
    error = validate_group_configs(overrides, KAFKA)
    assert error is not None and (error.code, error.message) == (ErrorCode.INVALID_CONFIG, message)


def test_session_must_exceed_heartbeat_within_loose_bounds() -> None:
    error = validate_group_configs({"share.session.timeout.ms": "200", "share.heartbeat.interval.ms": "200"}, GroupConfig())
    assert error is not None and error.message == "share.session.timeout.ms must be greater than share.heartbeat.interval.ms"
    assert validate_group_configs({"share.session.timeout.ms": "300", "share.heartbeat.interval.ms": "200"}, GroupConfig()) is None


def test_by_duration() -> None:
    assert by_duration_ms("by_duration:PT1H30M") == 5_400_000
    assert by_duration_ms("by_duration:P1DT0.5S") == 86_400_500
    assert by_duration_ms("by_duration:pt2s") == 2000
    for bad in ("by_duration:", "by_duration:P", "by_duration:PT", "by_duration:-PT1H", "by_duration: PT1H", "by_duration:P1DT"):
        assert by_duration_ms(bad) is None, bad


def test_entries_show_overrides_then_broker_values() -> None:
    entries = {e.name: e for e in group_config_entries({"share.auto.offset.reset": "earliest", "consumer.session.timeout.ms": " 50000 "}, GroupConfig())}
    assert set(entries) == set(GROUP_CONFIG_KEYS) and len(entries) == 17
    reset = entries["share.auto.offset.reset"]
    assert (reset.value, reset.source) == ("earliest", ConfigSource.GROUP_CONFIG)
    assert [(s.name, s.value, s.source) for s in reset.synonyms] == [
        ("share.auto.offset.reset", "earliest", ConfigSource.GROUP_CONFIG),
        ("share.auto.offset.reset", "latest", ConfigSource.DEFAULT_CONFIG),
    ]
    session = entries["consumer.session.timeout.ms"]  # mockbroker's 10000 is not Kafka's 45000: set on the broker
    assert [(s.name, s.value, s.source) for s in session.synonyms] == [
        ("consumer.session.timeout.ms", "50000", ConfigSource.GROUP_CONFIG),
        ("group.consumer.session.timeout.ms", "10000", ConfigSource.STATIC_BROKER_CONFIG),
        ("group.consumer.session.timeout.ms", "45000", ConfigSource.DEFAULT_CONFIG),
    ]
    locks = entries["share.partition.max.record.locks"]
    assert (locks.value, locks.source, len(locks.synonyms)) == ("2000", ConfigSource.DEFAULT_CONFIG, 1)


# -- consumer groups (KIP-848) -----------------------------------------------------------------------


def test_consumer_group_heartbeat_interval_and_session_timeout() -> None:
    h = ConsumerHarness()
    h.groups.services.set_group_configs("g", {"consumer.session.timeout.ms": "400", "consumer.heartbeat.interval.ms": "50"})
    joined = h.cg_join("a")
    assert joined.heartbeat_interval_ms == 50
    assert h.cg_join("b", group_id="other").heartbeat_interval_ms == h.groups.config.consumer_group_heartbeat_interval_ms
    h.advance(399)
    assert "a" in h.cgroup().members
    h.advance(1)
    assert "a" not in h.cgroup().members
    assert "b" in h.cgroup("other").members  # the broker's 10 s session


# -- share groups (KIP-932) --------------------------------------------------------------------------


def test_share_group_heartbeat_interval_and_session_timeout() -> None:
    h = ShareHarness()
    h.groups.services.set_group_configs("g", {"share.session.timeout.ms": "300", "share.heartbeat.interval.ms": "20"})
    assert h.hb("m1", 0, ["t"]).heartbeat_interval_ms == 20
    h.advance(299)
    assert "m1" in h.share.groups["g"].members
    h.advance(1)
    assert "m1" not in h.share.groups["g"].members
    h.groups.services.set_group_configs("g", {})  # deleted: the broker's values again
    assert h.hb("m2", 0, ["t"]).heartbeat_interval_ms == h.groups.config.share_group_heartbeat_interval_ms


def test_share_record_lock_duration_and_delivery_count_limit() -> None:
    h = ShareData()  # broker: lock 1000 ms, delivery count limit 2
    h.groups.services.set_group_configs(
        "g", {"share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": "15000", "share.delivery.count.limit": "3"}
    )
    h.produce(1)
    assert h.acquire("a") == [(0, 0, 1)]
    h.advance(14999)
    assert h.acquire("b") == []  # still locked by a
    h.advance(1)
    assert h.acquire("b") == [(0, 0, 2)]
    h.advance(15000)
    assert h.acquire("c") == [(0, 0, 3)]  # the broker's limit (2) would have archived it
    h.advance(15000)
    assert h.acquire("c") == []  # the third delivery was the group's last


def test_share_partition_max_record_locks() -> None:
    h = ShareData()
    h.groups.services.set_group_configs("g", {"share.auto.offset.reset": "earliest", "share.partition.max.record.locks": "100"})
    h.produce(150)
    acquired = h.acquire("a")
    assert sum(last - first + 1 for first, last, _ in acquired) == 100


def produce_now(h: ShareData, n: int) -> None:
    """``n`` records stamped with the cluster clock's time (CreateTime)."""
    partition = h.topic.partitions[0]
    data = bytearray(build_batch([SimpleRecord(value=b"v", timestamp=h.now) for _ in range(n)]))
    result = append_records(h.cluster, h.cluster.brokers[partition.leader_id], h.topic, partition, data,
                            acks=1, api_version=9, client_id="t", now_ms=h.now)  # fmt: skip
    assert result.error == ErrorCode.NONE


def test_share_auto_offset_reset_by_duration() -> None:
    h = ShareData()
    produce_now(h, 2)
    h.advance(60_000)
    produce_now(h, 1)  # a minute later
    h.groups.services.set_group_configs("g", {"share.auto.offset.reset": "by_duration:PT30S"})
    assert h.acquire("a") == [(2, 2, 1)]


def test_share_auto_offset_reset_by_duration_past_every_record_is_latest() -> None:
    h = ShareData()
    produce_now(h, 2)
    h.advance(60_000)
    h.groups.services.set_group_configs("g", {"share.auto.offset.reset": "by_duration:PT1S"})
    assert h.acquire("a") == []
    h.produce(1)
    assert h.acquire("a") == [(2, 2, 1)]


def test_set_auto_offset_reset_refuses_what_kafka_refuses() -> None:
    h = ShareData()
    with pytest.raises(ValueError, match="The value must be either 'earliest', 'latest'"):
        h.manager.set_auto_offset_reset("g", "EARLIEST")
    assert h.groups.services.group_configs["g"] == {"share.auto.offset.reset": "earliest"}  # ShareData's, unchanged


def test_renew_acknowledge_disabled_for_the_group() -> None:
    h = ShareData()
    h.produce(1)
    assert h.acquire("a") == [(0, 0, 1)]
    h.groups.services.set_group_configs("g", {"share.auto.offset.reset": "earliest", "share.renew.acknowledge.enable": "false"})
    with pytest.raises(GroupError) as exc:
        h.manager.acknowledge("g", "a", h.topic.topic_id, "t", h.log, [(0, 0, [4])], h.now, renew_allowed=True)
    assert (exc.value.code, exc.value.message) == (
        ErrorCode.INVALID_RECORD_STATE, "Renewing acquisition locks is not enabled for the group."
    )  # fmt: skip


# -- streams groups (KIP-1071) -----------------------------------------------------------------------


def test_streams_heartbeat_interval_and_session_timeout() -> None:
    h = StreamsHarness()
    h.groups.services.set_group_configs("g", {"streams.session.timeout.ms": "500", "streams.heartbeat.interval.ms": "25"})
    assert h.enter("a").heartbeat_interval_ms == 25
    h.advance(499)
    assert "a" in h.sgroup().members
    h.advance(1)
    assert "a" not in h.sgroup().members


def test_streams_num_standby_replicas_per_group() -> None:
    h = StreamsHarness()  # the broker's group.streams.num.standby.replicas is 0
    h.groups.services.set_group_configs("g", {"streams.num.standby.replicas": "1"})
    h.enter("a")
    h.beat("a", h.epoch("a"), active={}, standby={})
    h.enter("b")
    target = {m["member_id"]: m["target"] for m in h.snap()["members"]}
    for mine, theirs in (("a", "b"), ("b", "a")):
        assert target[mine]["standby"].get("1", []) == target[theirs]["active"].get("1", [])
    assert target["a"]["standby"] or target["b"]["standby"]


def test_streams_standby_change_bumps_the_group_epoch() -> None:
    h = StreamsHarness(topics={"input": 2})
    h.enter("a", process="pa")
    h.beat("a", h.epoch("a"), active={}, standby={})
    h.enter("b", process="pb")
    before = h.sgroup().group_epoch
    assert all(m["target"]["standby"] == {} for m in h.snap()["members"])
    h.groups.services.set_group_configs("g", {"streams.num.standby.replicas": "1"})
    h.beat("a", h.epoch("a"))
    assert h.sgroup().group_epoch == before + 1
    assert any(m["target"]["standby"] for m in h.snap()["members"])


def test_streams_initial_rebalance_delay() -> None:
    h = StreamsHarness()
    h.groups.services.set_group_configs("g", {"streams.initial.rebalance.delay.ms": "1000"})
    assert h.enter("a").member_epoch == 0  # held at the assignment epoch while the delay runs
    h.advance(999)
    assert h.enter("a").member_epoch == 0
    h.advance(1)
    assert h.enter("a").member_epoch > 0


@dataclass
class Batch:
    base_offset: int
    last_offset: int
    is_control: bool = False
    producer_id: int = -1
    is_transactional: bool = False


@dataclass
class Aborted:
    producer_id: int
    first_offset: int
    last_offset: int


@dataclass
class FakeLog:
    """A partition log as a share partition reads it: a plain batch, an aborted transaction with
    its marker, then a transaction still open (the last stable offset stops before it)."""

    partition: int = 0
    log_start_offset: int = 0
    high_watermark: int = 7
    last_stable_offset: int = 5
    batches: list[Batch] = field(default_factory=lambda: [
        Batch(0, 1), Batch(2, 3, producer_id=7, is_transactional=True), Batch(4, 4, is_control=True, producer_id=7,
        is_transactional=True), Batch(5, 6, producer_id=8, is_transactional=True),
    ])  # fmt: skip
    aborted: list[Aborted] = field(default_factory=lambda: [Aborted(7, 2, 4)])

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        return None

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[Aborted]:
        return [t for t in self.aborted if t.last_offset >= start_offset and t.first_offset < upper_bound_offset]


@pytest.mark.parametrize(
    ("isolation", "acquired"),
    [("read_uncommitted", [(0, 3, 1), (5, 6, 1)]), ("read_committed", [(0, 1, 1)])],
)
def test_share_isolation_level(isolation: str, acquired: list[tuple[int, int, int]]) -> None:
    h = ShareData()
    h.groups.services.set_group_configs("g", {"share.auto.offset.reset": "earliest", "share.isolation.level": isolation})
    log = FakeLog()
    ranges = h.manager.acquire("g", "a", h.topic.topic_id, "t", log, 100, h.now)
    assert [(r.first_offset, r.last_offset, r.delivery_count) for r in ranges] == acquired
    if isolation == "read_committed":
        log.last_stable_offset = 7  # the open transaction commits
        log.batches.append(Batch(7, 7, is_control=True, producer_id=8, is_transactional=True))
        log.high_watermark = 8
        more = h.manager.acquire("g", "a", h.topic.topic_id, "t", log, 100, h.now)
        assert [(r.first_offset, r.last_offset) for r in more] == [(5, 6)]  # the aborted 2-3 never delivered
