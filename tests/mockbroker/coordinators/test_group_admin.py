"""kafka-group-semantics §8.5-§8.7 (DescribeGroups, ListGroups, DeleteGroups, the coordinator's
part), §9 (settings by their Kafka names, --kafka-defaults), and the event log of groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mockbroker import MockCluster
from mockbroker.clock import ManualClock
from mockbroker.config.cluster import ClusterConfig
from mockbroker.config.groups import GroupConfig
from mockbroker.events import SCHEMA_VERSION
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.describe_groups import DescribedGroup, DescribedGroupMember
from mockbroker_protocol.messages.list_groups import ListedGroup
from mockbroker_protocol.messages.offset_commit import OffsetCommitRequest
from tests.mockbroker.coordinators.groups_support import Harness, answered, assignment, subscription

# -- §8.5 DescribeGroups -----------------------------------------------------------------------------------------


def test_describe_a_stable_group_shows_protocol_and_member_metadata() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    described = h.groups.describe_group("g")
    assert described is not None
    assert (described.group_state, described.protocol_type, described.protocol_data) == ("Stable", "consumer", "range")
    assert described.members == [
        DescribedGroupMember(leader, None, "c0", "/127.0.0.1", subscription("t"), assignment(t=[0])),
        DescribedGroupMember(follower, None, "c1", "/127.0.0.1", subscription("t"), assignment(t=[1])),
    ]


def test_describe_outside_stable_has_no_protocol_data_and_no_member_metadata() -> None:
    h = Harness()
    leader, _follower = h.stable_group()
    h.join("g", leader)
    described = h.groups.describe_group("g")
    assert described is not None
    assert (described.group_state, described.protocol_data) == ("PreparingRebalance", "")
    assert [(m.member_metadata, m.member_assignment) for m in described.members] == [
        (b"", assignment(t=[0])),
        (b"", assignment(t=[1])),
    ]


def test_describe_a_simple_group_and_an_unknown_one() -> None:
    h = Harness()
    h.commit("s", {("t", 0): 1})
    assert h.groups.describe_group("s") == DescribedGroup(error_code=0, group_id="s", group_state="Empty")
    assert h.groups.describe_group("nobody") is None


def test_describe_shows_static_members_instance_ids() -> None:
    h = Harness()
    h.join("g", instance="i-1")
    described = h.groups.describe_group("g")
    assert described is not None and described.members[0].group_instance_id == "i-1"


# -- §8.6 ListGroups ------------------------------------------------------------------------------------------------


def listed(h: Harness, states: list[str] = [], types: list[str] = []) -> list[tuple[str, str]]:  # noqa: B006
    return sorted((g.group_id, g.group_state) for g in h.groups.list_groups(states, types))


def three_groups(h: Harness) -> None:
    h.stable_group("stable")
    h.join("empty")  # a MEMBER_ID_REQUIRED round trip only
    h.commit("simple", {("t", 0): 1})


def test_every_group_is_listed_empty_and_simple_included() -> None:
    h = Harness()
    three_groups(h)
    assert sorted(h.groups.list_groups(), key=lambda g: g.group_id) == [
        ListedGroup("empty", "", "Empty", "classic"),
        ListedGroup("simple", "", "Empty", "classic"),
        ListedGroup("stable", "consumer", "Stable", "classic"),
    ]


def test_states_filter_is_case_insensitive_and_trimmed() -> None:
    h = Harness()
    three_groups(h)
    assert listed(h, [" STABLE "]) == [("stable", "Stable")]
    assert listed(h, ["empty", "preparingrebalance"]) == [("empty", "Empty"), ("simple", "Empty")]
    assert listed(h, ["Dead"]) == []


@pytest.mark.parametrize(("types", "count"), [(["classic"], 3), (["CLASSIC"], 3), (["consumer"], 0), (["share", "Classic"], 3), (["bogus"], 0)])
def test_types_filter(types: list[str], count: int) -> None:
    h = Harness()
    three_groups(h)
    assert len(listed(h, types=types)) == count


def test_include_picks_one_brokers_groups() -> None:
    h = Harness()
    three_groups(h)
    assert [g.group_id for g in h.groups.list_groups(include=lambda g: g.startswith("s"))] == ["stable", "simple"]


# -- §8.7 DeleteGroups -------------------------------------------------------------------------------------------------


def test_delete_groups_rules() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    h.commit("g", {("t", 0): 5}, generation=1, member_id=leader)
    assert h.groups.delete_group(h.now, "nobody") == ErrorCode.GROUP_ID_NOT_FOUND
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NON_EMPTY_GROUP
    h.leave("g", leader, follower)
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NONE
    assert "g" not in h.groups.groups and h.committed() == {}
    assert h.events("group.deleted")[-1].details == {"offsets_deleted": 1}
    assert h.groups.delete_group(h.now, "g") == ErrorCode.GROUP_ID_NOT_FOUND


def test_delete_a_group_in_every_non_empty_state_is_non_empty_group() -> None:
    h = Harness()
    leader, follower = h.stable_group()
    h.join("g", leader)
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NON_EMPTY_GROUP  # PreparingRebalance
    h.join("g", follower)
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NON_EMPTY_GROUP  # CompletingRebalance


def test_delete_takes_pending_transactional_offsets_too() -> None:
    h = Harness()
    h.commit("g", {("t", 0): 1})
    h.groups.commit_transactional_offsets(h.now, "g", 9, [("t", [(1, 2, -1, "")])])
    h.groups.delete_group(h.now, "g")
    assert h.events("group.deleted")[-1].details == {"offsets_deleted": 2}
    assert not h.groups.offsets.has_open_transactions("g")


# -- §9 settings ---------------------------------------------------------------------------------------------------------


def test_defaults_are_fast_for_tests_and_kafkas_with_kafka_defaults() -> None:
    fast = GroupConfig.from_cluster_config(ClusterConfig())
    assert (fast.group_min_session_timeout_ms, fast.group_initial_rebalance_delay_ms) == (1, 0)
    kafka = GroupConfig.from_cluster_config(ClusterConfig(kafka_defaults=True))
    assert kafka == GroupConfig(
        group_min_session_timeout_ms=6000,
        group_max_session_timeout_ms=1800000,
        group_initial_rebalance_delay_ms=3000,
        group_max_size=2147483647,
        offsets_retention_minutes=10080,
        offsets_retention_check_interval_ms=600000,
        offset_metadata_max_bytes=4096,
        classic_group_new_member_join_timeout_ms=300000,
        consumer_group_session_timeout_ms=45000,
        consumer_group_min_session_timeout_ms=45000,
        consumer_group_max_session_timeout_ms=60000,
        consumer_group_heartbeat_interval_ms=5000,
        consumer_group_min_heartbeat_interval_ms=5000,
        consumer_group_max_heartbeat_interval_ms=15000,
        consumer_group_max_size=2147483647,
        consumer_group_assignors=("uniform", "range"),
        streams_group_session_timeout_ms=45000,
        streams_group_heartbeat_interval_ms=5000,
        streams_group_initial_rebalance_delay_ms=3000,

        share_group_session_timeout_ms=45000,
        share_group_min_session_timeout_ms=45000,
        share_group_max_session_timeout_ms=60000,
        share_group_heartbeat_interval_ms=5000,
        share_group_min_heartbeat_interval_ms=5000,
        share_group_max_heartbeat_interval_ms=15000,
        share_group_max_size=200,
        share_group_record_lock_duration_ms=30000,
        share_group_delivery_count_limit=5,
        share_group_partition_max_record_locks=2000,
    )
    explicit = GroupConfig.from_cluster_config(ClusterConfig(kafka_defaults=True, group_initial_rebalance_delay_ms=0))
    assert (explicit.group_initial_rebalance_delay_ms, explicit.group_min_session_timeout_ms) == (0, 6000)


def test_settings_by_their_kafka_names() -> None:
    config = ClusterConfig.from_kafka(
        {
            "group.min.session.timeout.ms": "6000",
            "group.max.session.timeout.ms": "300000",
            "group.initial.rebalance.delay.ms": "3000",
            "group.max.size": "5",
            "offsets.retention.minutes": "1440",
            "offsets.retention.check.interval.ms": "1000",
            "offset.metadata.max.bytes": "100",
        }
    )
    group = GroupConfig.from_cluster_config(config)
    assert (group.group_min_session_timeout_ms, group.group_max_session_timeout_ms, group.group_max_size) == (6000, 300000, 5)
    assert (group.offsets_retention_ms, group.offsets_retention_check_interval_ms, group.offset_metadata_max_bytes) == (
        86_400_000,
        1000,
        100,
    )


@pytest.mark.parametrize(("key", "value"), [("group.max.size", "0"), ("offsets.retention.minutes", "0"), ("offsets.retention.check.interval.ms", "0")])
def test_settings_are_validated_as_kafka_validates_them(key: str, value: str) -> None:
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        ClusterConfig.from_kafka({key: value})


def test_the_cluster_uses_the_configured_bounds() -> None:
    h = Harness(kafka_defaults=True)
    assert answered(h.join("g", session=5_999)).error_code == ErrorCode.INVALID_SESSION_TIMEOUT


# -- the event log ------------------------------------------------------------------------------------------------------------


def test_events_carry_time_broker_group_generation_member_and_reason() -> None:
    h = Harness(brokers=3)
    h.cluster.create_topic("t", 2)  # the assignment below is then sound: no group.assignment_finding
    h.advance(500)
    leader, follower = h.stable_group()
    broker = h.cluster.coordinator_for("g").node_id
    events = h.events(group_id="g")
    assert {e.broker_id for e in events} == {broker}
    assert all(e.time_ms == h.start_ms + 500 for e in events)
    joined = h.events("member.joined")
    assert [e.member_id for e in joined] == [leader, follower]
    assert joined[0].details["protocols"] == [{"name": "range", "metadata_bytes": len(subscription("t")), "version": 0, "topics": ["t"]}]
    assigned = {e.member_id: (e.generation_id, e.details["assignment"]) for e in h.events("member.assigned")}
    assert assigned == {leader: (1, {"t": [0]}), follower: (1, {"t": [1]})}
    assert [e.type for e in events] == [
        "group.created",
        "member.join_pending",
        "member.joined",
        "group.transition",
        "member.join_pending",
        "member.joined",
        "group.initial_rebalance_extended",
        "group.transition",
        "member.synced",
        "member.synced",
        "member.assigned",
        "member.assigned",
        "group.transition",
    ]


def test_events_are_written_as_json_lines_with_the_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    cluster = MockCluster(brokers=1, events_path=str(path), clock=ManualClock())
    cluster.groups.commit_offsets(cluster.clock.now_ms(), OffsetCommitRequest(group_id="g"), api_version=9)
    cluster.events.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["v"], line["type"], line["group_id"], line["broker_id"]) for line in lines] == [
        (SCHEMA_VERSION, "group.created", "g", 1),
        (SCHEMA_VERSION, "offset.committed", "g", 1),
    ]
    assert lines[1]["details"] == {"request_generation_id": -1, "offsets": {}, "metadata_too_large": [], "expire_timestamp_ms": None}


def test_kafka_defaults_from_the_command_line_environment_and_file(tmp_path: Path) -> None:
    from mockbroker.cli import parse_serve

    assert parse_serve(["--kafka-defaults"], {}).cluster.kafka_defaults is True
    assert parse_serve([], {"MOCKBROKER_KAFKA_DEFAULTS": "true"}).cluster.kafka_defaults is True
    assert parse_serve([], {}).cluster.kafka_defaults is False
    config = tmp_path / "broker.toml"
    config.write_text('[cluster]\nkafka_defaults = true\n[kafka]\n"group.initial.rebalance.delay.ms" = 100\n')
    settings = parse_serve(["--config", str(config)], {})
    group = GroupConfig.from_cluster_config(settings.cluster)
    assert (group.group_min_session_timeout_ms, group.group_initial_rebalance_delay_ms) == (6000, 100)
    over_set = parse_serve(["--set", "group.min.session.timeout.ms=250"], {}).cluster
    assert GroupConfig.from_cluster_config(over_set).group_min_session_timeout_ms == 250
