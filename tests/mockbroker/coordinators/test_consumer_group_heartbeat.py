"""KIP-848 ConsumerGroupHeartbeat, pure coordinator on a ManualClock: request checks, the errors
of kafka-group-semantics §10.1, epochs and the target (§10.2), reconciliation (§10.3), joining,
leaving, timeouts and static members (§10.4)."""

from __future__ import annotations

import pytest

from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest as Request
from mockbroker_protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequestTopicPartitions as Owned,
)
from tests.mockbroker.coordinators.consumer_groups_support import REBALANCE_TIMEOUT, ConsumerHarness

SESSION = 10_000  # mockbroker's group.consumer.session.timeout.ms


# -- §10.1 request checks ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "version", "message"),
    [
        (Request(group_id="", member_id="m", member_epoch=0, rebalance_timeout_ms=1, subscribed_topic_names=["t"], topic_partitions=[]), 1, "GroupId"),
        (Request(group_id="g", member_id="m", member_epoch=0, instance_id=" ", rebalance_timeout_ms=1, subscribed_topic_names=["t"], topic_partitions=[]), 1, "InstanceId"),
        (Request(group_id="g", member_id="m", member_epoch=0, rack_id="", rebalance_timeout_ms=1, subscribed_topic_names=["t"], topic_partitions=[]), 1, "RackId"),
        (Request(group_id="g", member_id="", member_epoch=0, rebalance_timeout_ms=1, subscribed_topic_names=["t"], topic_partitions=[]), 1, "MemberId"),
        (Request(group_id="g", member_id="", member_epoch=4), 0, "MemberId"),
        (Request(group_id="g", member_id="", member_epoch=-1), 0, "MemberId"),
        (Request(group_id="g", member_id="m", member_epoch=0, subscribed_topic_names=["t"], topic_partitions=[]), 1, "RebalanceTimeoutMs"),
        (Request(group_id="g", member_id="m", member_epoch=0, rebalance_timeout_ms=1, subscribed_topic_names=["t"]), 1, "TopicPartitions"),
        (Request(group_id="g", member_id="m", member_epoch=0, rebalance_timeout_ms=1, subscribed_topic_names=["t"], topic_partitions=[Owned()]), 1, "TopicPartitions"),
        (Request(group_id="g", member_id="m", member_epoch=0, rebalance_timeout_ms=1, topic_partitions=[]), 1, "SubscribedTopicNames"),
        (Request(group_id="g", member_id="m", member_epoch=-2), 1, "InstanceId"),
        (Request(group_id="g", member_id="m", member_epoch=-3), 1, "MemberEpoch"),
    ],
)
def test_invalid_requests(request_: Request, version: int, message: str) -> None:
    h = ConsumerHarness()
    response = h.send(request_, version)
    assert response.error_code == ErrorCode.INVALID_REQUEST
    assert response.error_message is not None and message in response.error_message
    assert h.consumer.groups == {}


def test_v0_join_gets_a_coordinator_generated_member_id() -> None:
    h = ConsumerHarness()
    response = h.cg_join("", version=0)
    assert response.error_code == ErrorCode.NONE and response.member_id and len(response.member_id) == 22


def test_unsupported_assignor_names_the_supported_ones() -> None:
    h = ConsumerHarness()
    response = h.cg_join("m", assignor="sticky")
    assert response.error_code == ErrorCode.UNSUPPORTED_ASSIGNOR
    assert "uniform, range" in (response.error_message or "")


@pytest.mark.parametrize("regex", ["t(", "(?=t)t", r"(a)\1", "a*+"])
def test_invalid_regular_expression(regex: str) -> None:
    h = ConsumerHarness()
    assert h.cg_join("m", regex=regex).error_code == ErrorCode.INVALID_REGULAR_EXPRESSION


# -- §10.1 other errors --------------------------------------------------------------------------------------


def test_unknown_group_with_a_nonzero_epoch_is_not_found() -> None:
    h = ConsumerHarness()
    assert h.cg_heartbeat("m", 4).error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert h.cg_leave("m").error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_unknown_member_with_a_nonzero_epoch() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    assert h.cg_heartbeat("b", 2, {}).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.cg_leave("b").error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_member_epoch_fencing() -> None:
    h = ConsumerHarness()
    assert h.cg_join("a").member_epoch == 2
    assert h.cg_heartbeat("a", 3, {"t": list(range(6))}).error_code == ErrorCode.FENCED_MEMBER_EPOCH  # ahead
    h.cg_join("b")
    h.cg_heartbeat("a", 2, {"t": list(range(6))})  # revokes 3 partitions, stays at epoch 2
    h.cg_heartbeat("a", 2, {"t": [0, 1, 2]})  # revoked: moves to epoch 3
    assert h.member("a")["member_epoch"] == 3 and h.member("a")["previous_member_epoch"] == 2
    # The previous epoch with owned partitions inside the assignment: a lost response, tolerated.
    assert h.cg_heartbeat("a", 2, {"t": [0, 1]}).error_code == ErrorCode.NONE
    # The previous epoch owning something outside it, or an older epoch: fenced.
    assert h.cg_heartbeat("a", 2, {"t": [5]}).error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert h.cg_heartbeat("a", 0, {"t": []}).error_code == ErrorCode.INVALID_REQUEST  # epoch 0 needs a full join
    # Epoch 0 with a full join is a rejoin, accepted (KAFKA-19233): the member keeps its epoch.
    rejoin = h.cg_join("a")
    assert rejoin.error_code == ErrorCode.NONE and rejoin.member_epoch == 3 and h.owned(rejoin) == {"t": [0, 1, 2]}


def test_group_max_size_spares_existing_members_and_known_instances() -> None:
    h = ConsumerHarness(group_consumer_max_size=1)
    h.cg_join("a", instance="i-a")
    assert h.cg_join("b").error_code == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert h.cg_heartbeat("a", 2, {"t": list(range(6))}, instance="i-a").error_code == ErrorCode.NONE
    h.cg_leave("a", instance="i-a", epoch=-2)
    assert h.cg_join("a2", instance="i-a").error_code == ErrorCode.NONE  # replaces the static member


def test_an_empty_classic_group_is_replaced_and_its_offsets_kept() -> None:
    h = ConsumerHarness()
    h.commit("g", {("t", 0): 42})  # a simple (classic, Empty) group with an offset
    assert h.groups.groups["g"].state.value == "Empty"
    assert h.cg_join("a").error_code == ErrorCode.NONE
    assert "g" not in h.groups.groups and "g" in h.consumer.groups
    assert h.groups.offsets.get("g", "t", 0) is not None
    assert h.events("group.deleted", "g")[-1].reason == "replaced by a consumer group (epoch-0 ConsumerGroupHeartbeat)"


def test_a_non_empty_classic_group_is_not_a_consumer_group() -> None:
    # Without online upgrade (the mixed-group rules are in test_consumer_group_mixed.py).
    h = ConsumerHarness(group_consumer_migration_policy="downgrade")
    h.stable_group()
    response = h.cg_join("a")
    assert response.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert "online upgrade is disabled" in (response.error_message or "")
    assert h.cg_heartbeat("a", 2).error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert "g" in h.groups.groups and "g" not in h.consumer.groups


# -- §10.2 epochs, target, assignor choice, states -------------------------------------------------------------


def test_epochs_and_states_through_a_rebalance() -> None:
    h = ConsumerHarness()
    first = h.cg_join("a")
    assert (first.member_epoch, h.owned(first)) == (2, {"t": [0, 1, 2, 3, 4, 5]})
    assert first.heartbeat_interval_ms == 100
    assert h.snap()["state"] == "Stable"
    second = h.cg_join("b")
    snap = h.snap()
    assert (snap["group_epoch"], snap["assignment_epoch"], snap["state"]) == (3, 3, "Reconciling")
    # b's target is held by a: b moves to epoch 3 with nothing, waiting for a to release.
    assert (second.member_epoch, h.owned(second), h.member("b")["state"]) == (3, {}, "UNRELEASED_PARTITIONS")
    owned = h.converge("a", "b")
    assert sorted(len(p["t"]) for p in owned.values()) == [3, 3]
    states = [(e.details["from_state"], e.details["to_state"]) for e in h.events("consumer_group.transition")]
    assert states == [("Empty", "Stable"), ("Stable", "Reconciling"), ("Reconciling", "Stable")]


def test_assignor_is_the_most_requested_else_the_first_configured() -> None:
    h = ConsumerHarness(group_consumer_assignors="range,uniform")
    h.cg_join("a")
    assert h.snap()["assignor"] == "range"
    h.cg_join("b", assignor="uniform")
    assert h.snap()["assignor"] == "uniform"
    h.cg_join("c", assignor="range")
    h.cg_join("d", assignor="range")
    assert h.snap()["assignor"] == "range"
    assert [e.details["assignor"] for e in h.events("consumer_group.target_assignment")] == ["range", "uniform", "uniform", "range"]


def test_a_plugin_named_by_module_and_attribute() -> None:
    h = ConsumerHarness(group_consumer_assignors="tests.integration.kip848_assignor:ModuloAssignor")
    h.cg_join("b")
    h.cg_join("a")
    assert h.snap()["assignor"] == "modulo"
    assert {m["member_id"]: m["target"] for m in h.snap()["members"]} == {"a": {"t": [0, 2, 4]}, "b": {"t": [1, 3, 5]}}


def test_unknown_configured_assignor_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match=r"group\.consumer\.assignors: cannot use .nonesuch."):
        ConsumerHarness(group_consumer_assignors="uniform,nonesuch")


def test_partition_count_change_bumps_the_group_epoch() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    h.cluster.add_partitions("t", 8)
    response = h.cg_heartbeat("a", 2, {"t": list(range(6))})
    assert (response.member_epoch, h.owned(response)) == (3, {"t": list(range(8))})


def test_regex_subscription_follows_topics_as_they_come() -> None:
    h = ConsumerHarness({"orders-1": 2, "payments": 2})
    first = h.cg_join("a", regex="orders-.*")
    assert h.owned(first) == {"orders-1": [0, 1]}
    h.cluster.create_topic("orders-2", 1)
    h.cluster.create_topic("xorders-3", 1)  # matched in full only, as RE2J's matches()
    response = h.cg_heartbeat("a", 2, {"orders-1": [0, 1]})
    assert h.owned(response) == {"orders-1": [0, 1], "orders-2": [0]}
    assert h.member("a")["subscribed_topic_regex"] == "orders-.*"


# -- §10.3 reconciliation ------------------------------------------------------------------------------------


def test_revoke_before_reassign() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    h.cg_join("b")
    revoke = h.cg_heartbeat("a", 2, {"t": list(range(6))})
    assert h.owned(revoke) == {"t": [0, 1, 2]}  # what a keeps; it stays at epoch 2 until it revokes
    assert (revoke.member_epoch, h.member("a")["state"], h.member("a")["pending_revocation"]) == (2, "UNREVOKED_PARTITIONS", {"t": [3, 4, 5]})
    still = h.cg_heartbeat("b", 3, {})
    assert still.assignment is None and h.member("b")["assigned"] == {}  # nothing free yet
    done = h.cg_heartbeat("a", 2, {"t": [0, 1, 2]})
    assert (done.member_epoch, h.member("a")["state"]) == (3, "STABLE")
    given = h.cg_heartbeat("b", 3, {})
    assert h.owned(given) == {"t": [3, 4, 5]} and h.member("b")["state"] == "STABLE"
    assert h.snap()["state"] == "Stable"


def test_a_heartbeat_without_owned_partitions_does_not_complete_a_revocation() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    h.cg_join("b")
    h.cg_heartbeat("a", 2, {"t": list(range(6))})
    assert h.cg_heartbeat("a", 2, None).member_epoch == 2
    assert h.member("a")["state"] == "UNREVOKED_PARTITIONS"


def test_rebalance_timeout_fences_a_member_that_does_not_revoke() -> None:
    h = ConsumerHarness()
    h.cg_join("a", rebalance=5_000)
    h.cg_join("b")
    h.cg_heartbeat("a", 2, {"t": list(range(6))})
    h.advance(4_999)
    assert "a" in h.cgroup().members
    h.advance(1)
    assert "a" not in h.cgroup().members
    fenced = h.events("consumer_group.member_fenced")[-1]
    assert fenced.member_id == "a" and fenced.details["cause"] == "rebalance_timeout"
    given = h.cg_heartbeat("b", 3, {})
    assert h.owned(given) == {"t": list(range(6))} and given.member_epoch == 4
    assert h.cg_heartbeat("a", 2, {"t": [0]}).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_revoking_in_time_cancels_the_rebalance_timeout() -> None:
    h = ConsumerHarness()
    h.cg_join("a", rebalance=5_000)
    h.cg_join("b")
    h.cg_heartbeat("a", 2, {"t": list(range(6))})
    h.cg_heartbeat("a", 2, {"t": [0, 1, 2]})
    h.advance(5_000)
    h.cg_heartbeat("a", 3, {"t": [0, 1, 2]})
    assert "a" in h.cgroup().members and not h.events("consumer_group.member_fenced")


def test_assignment_is_sent_on_full_requests_and_changes_only() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    assert h.cg_heartbeat("a", 2, {"t": list(range(6))}).assignment is None
    full = h.send(Request(group_id="g", member_id="a", member_epoch=2, rebalance_timeout_ms=REBALANCE_TIMEOUT,
                          subscribed_topic_names=["t"], topic_partitions=h.topic_partitions({"t": list(range(6))})))
    assert h.owned(full) == {"t": list(range(6))}


# -- §10.4 joining, leaving, timeouts, static members --------------------------------------------------------


def test_leave_frees_partitions_for_the_others() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    h.cg_join("b")
    h.converge("a", "b")
    left = h.cg_leave("a")
    assert (left.error_code, left.member_epoch, left.member_id) == (ErrorCode.NONE, -1, "a")
    response = h.cg_heartbeat("b", h.member("b")["member_epoch"], {"t": h.member("b")["assigned"]["t"]})
    assert h.owned(response) == {"t": list(range(6))}
    assert h.events("consumer_group.member_left")[-1].member_id == "a"


def test_session_timeout_fences_a_silent_member() -> None:
    h = ConsumerHarness()
    h.cg_join("a")
    h.advance(SESSION - 1)
    h.cg_heartbeat("a", 2, {"t": list(range(6))})
    h.advance(SESSION - 1)
    assert "a" in h.cgroup().members
    h.advance(1)
    assert "a" not in h.cgroup().members and h.snap()["state"] == "Empty"
    assert h.events("consumer_group.member_fenced")[-1].details["cause"] == "session_timeout"


def test_after_many_heartbeats_the_session_ends_one_timeout_after_the_last_in_heartbeat_order() -> None:
    """Heartbeats move the member's armed session timer (Timers.postpone) rather than arming a
    new one: expiry still comes exactly one session timeout after the last heartbeat, and two
    members silent since the same instant are fenced in the order of their last heartbeats."""
    h = ConsumerHarness()
    h.cg_join("a")
    h.cg_join("b")
    owned = h.converge("a", "b")
    timer = h.cgroup().members["a"].session_timer
    for step in range(300):
        h.advance(1 + (step * 7919) % (SESSION - 1))
        for m in ("b", "a") if step % 2 else ("a", "b"):
            assert h.cg_heartbeat(m, h.member(m)["member_epoch"], owned[m]).error_code == ErrorCode.NONE
    assert h.cgroup().members["a"].session_timer is timer  # moved every time, never re-armed
    last = h.now  # the last round heartbeat "b" then "a"
    h.advance(SESSION - 1)
    assert set(h.cgroup().members) == {"a", "b"}
    h.advance(1)
    fenced = h.events("consumer_group.member_fenced")
    assert [(e.member_id, e.time_ms, e.details["cause"]) for e in fenced] == [
        ("b", last + SESSION, "session_timeout"), ("a", last + SESSION, "session_timeout"),
    ]  # fmt: skip
    assert fenced[0].reason == f"member b fenced: the member session expired ({SESSION} ms without a heartbeat)"


def test_session_timeout_from_broker_config() -> None:
    h = ConsumerHarness(group_consumer_session_timeout_ms=3_000, group_consumer_heartbeat_interval_ms=1_000)
    assert h.cg_join("a").heartbeat_interval_ms == 1_000
    h.advance(3_000)
    assert "a" not in h.cgroup().members


def test_static_member_temporary_leave_and_replacement_without_reshuffle() -> None:
    h = ConsumerHarness()
    h.cg_join("a", instance="i-a")
    h.cg_join("b", instance="i-b")
    owned = h.converge("a", "b")
    epoch = h.snap()["group_epoch"]
    left = h.cg_leave("a", instance="i-a", epoch=-2)
    assert (left.error_code, left.member_epoch) == (ErrorCode.NONE, -2)
    assert h.member("a")["member_epoch"] == -2 and h.member("a")["assigned"] == owned["a"]  # still reserved
    assert h.snap()["group_epoch"] == epoch
    rejoin = h.cg_join("a2", instance="i-a")
    assert rejoin.error_code == ErrorCode.NONE and h.owned(rejoin) == owned["a"]
    assert h.snap()["group_epoch"] == epoch and rejoin.member_epoch == epoch  # no new target, no reshuffle
    assert [m["member_id"] for m in h.snap()["members"]] == ["b", "a2"]
    assert h.events("consumer_group.member_replaced")[-1].details["old_member_id"] == "a"


def test_unreleased_fenced_and_unknown_instance_ids() -> None:
    h = ConsumerHarness()
    h.cg_join("a", instance="i-a")
    assert h.cg_join("a2", instance="i-a").error_code == ErrorCode.UNRELEASED_INSTANCE_ID
    assert h.cg_heartbeat("a2", 2, {}, instance="i-a").error_code == ErrorCode.FENCED_INSTANCE_ID
    assert h.cg_heartbeat("x", 2, {}, instance="i-x").error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.cg_leave("a2", instance="i-a").error_code == ErrorCode.FENCED_INSTANCE_ID
    assert h.cg_leave("x", instance="i-x", epoch=-2).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_temporarily_left_static_member_goes_when_its_session_expires() -> None:
    h = ConsumerHarness()
    h.cg_join("a", instance="i-a")
    h.cg_leave("a", instance="i-a", epoch=-2)
    h.advance(SESSION)
    assert h.cgroup().members == {} and h.cgroup().static_members == {}


def test_static_leave_with_minus_one_is_a_full_leave() -> None:
    h = ConsumerHarness()
    h.cg_join("a", instance="i-a")
    assert h.cg_leave("a", instance="i-a").member_epoch == -1
    assert h.cgroup().members == {} and h.cg_join("a2", instance="i-a").error_code == ErrorCode.NONE
