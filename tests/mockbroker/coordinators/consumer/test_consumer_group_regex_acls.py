"""KIP-848 regex subscriptions under an authorizer (issue #21): a regex matches only the topics the
heartbeating member's principal may DESCRIBE (Kafka's TopicRegexResolver), and the group's
regexes are resolved again only when GroupMetadataManager.maybeUpdateRegularExpressions would: a
new regex, topics created, or a resolution older than group.consumer.regex.refresh.interval.ms.
An ACL change alone therefore shows at the next refresh, not at the next heartbeat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from mockbroker.cli import parse_serve
from mockbroker.config.cluster import ClusterConfig
from mockbroker.config.settings import SettingsError
from tests.mockbroker.coordinators.consumer_groups_support import ConsumerHarness, Parts

TOPICS = {"orders-a": 2, "orders-b": 2, "payments": 2}
KAFKA_REFRESH_INTERVAL_MS = 600_000  # GroupCoordinatorConfig.CONSUMER_GROUP_REGEX_REFRESH_INTERVAL_MS_DEFAULT


class Acls:
    """The DESCRIBE ACLs of the principal sending the next heartbeats, changeable between them."""

    def __init__(self, *allowed: str) -> None:
        self.allowed = set(allowed)
        self.asked: list[list[str]] = []

    def __call__(self, names: Sequence[str]) -> list[str]:
        self.asked.append(list(names))
        return [name for name in names if name in self.allowed]


def _secured(*allowed: str, **settings: Any) -> tuple[ConsumerHarness, Acls]:
    h = ConsumerHarness(TOPICS, **settings)
    acls = Acls(*allowed)
    h.describable = acls
    return h, acls


def _keep_alive(h: ConsumerHarness, ms: int, owned: dict[str, Parts], step_ms: int = 5_000) -> None:
    """Let ``ms`` pass, every member heartbeating every ``step_ms`` (inside its session timeout)."""
    for _ in range(ms // step_ms):
        h.advance(step_ms)
        for member_id in owned:
            response = h.cg_heartbeat(member_id, h.member(member_id)["member_epoch"], owned[member_id])
            assert response.error_code == 0, response
            given = h.owned(response)
            if given is not None:
                owned[member_id] = {t: ps for t, ps in given.items() if ps}


def test_a_regex_matches_only_the_topics_the_member_may_describe() -> None:
    h, acls = _secured("orders-a", "payments")
    joined = h.cg_join("a", regex="orders-.*")
    assert h.owned(joined) == {"orders-a": [0, 1]}
    assert h.snap()["subscribed_topics"] == {"orders-a": 2}
    assert acls.asked == [["orders-a", "orders-b"]]  # only the matched topics are authorized
    assert h.cgroup().resolved_regexes == {"orders-.*": frozenset({"orders-a"})}


def test_without_an_authorizer_every_matching_topic() -> None:
    h = ConsumerHarness(TOPICS)
    assert h.owned(h.cg_join("a", regex="orders-.*")) == {"orders-a": [0, 1], "orders-b": [0, 1]}


def test_topics_named_are_not_filtered_by_the_regex_resolution() -> None:
    """Named topics are checked by the handler (TOPIC_AUTHORIZATION_FAILED), not left out."""
    h, _ = _secured("orders-a")
    joined = h.cg_join("a", topics=["payments"], regex="orders-.*")
    assert h.owned(joined) == {"orders-a": [0, 1], "payments": [0, 1]}


def test_an_acl_added_later_shows_at_the_periodic_refresh() -> None:
    h, acls = _secured("orders-a")
    owned = {"a": h.owned(h.cg_join("a", regex="orders-.*")) or {}}
    acls.allowed.add("orders-b")
    _keep_alive(h, KAFKA_REFRESH_INTERVAL_MS - 5_000, owned)
    assert owned["a"] == {"orders-a": [0, 1]}  # no refresh yet: the ACL alone is no reason
    epoch = h.member("a")["member_epoch"]
    _keep_alive(h, 10_000, owned)
    assert owned["a"] == {"orders-a": [0, 1], "orders-b": [0, 1]}
    assert h.member("a")["member_epoch"] == epoch + 1  # the new resolution bumped the group epoch


def test_an_acl_removed_later_shows_when_a_new_topic_triggers_a_refresh() -> None:
    h, acls = _secured("orders-a", "orders-b")
    owned = {"a": h.owned(h.cg_join("a", regex="orders-.*")) or {}}
    assert owned["a"] == {"orders-a": [0, 1], "orders-b": [0, 1]}
    acls.allowed.discard("orders-b")
    _keep_alive(h, 10_000, owned)
    assert owned["a"] == {"orders-a": [0, 1], "orders-b": [0, 1]}
    h.cluster.create_topic("unrelated", 1)  # any new topic: Kafka's lastMetadataImageWithNewTopics
    _keep_alive(h, 10_000, owned)
    assert owned["a"] == {"orders-a": [0, 1]}


def test_the_refreshing_members_principal_resolves_every_regex_of_the_group() -> None:
    """As in Kafka, one principal's ACLs filter all the group's regexes: those of the member whose
    heartbeat triggered the refresh (here a second member subscribing a new regex)."""
    h, acls = _secured("orders-a")
    owned = {"a": h.owned(h.cg_join("a", regex="orders-.*")) or {}}
    acls.allowed.update({"orders-b", "payments"})  # the second member's principal
    owned["b"] = h.owned(h.cg_join("b", regex="pay.*")) or {}
    assert h.cgroup().resolved_regexes == {"orders-.*": frozenset({"orders-a", "orders-b"}), "pay.*": frozenset({"payments"})}
    owned = h.converge("a", "b")
    assert sorted(t for parts in owned.values() for t in parts) == ["orders-a", "orders-b", "payments"]


def test_a_regex_no_member_subscribes_to_is_dropped() -> None:
    h, _ = _secured("orders-a", "payments")
    h.cg_join("a", regex="orders-.*")
    h.cg_join("b", regex="pay.*")
    h.cg_leave("b")
    assert set(h.cgroup().resolved_regexes) == {"orders-.*"}
    h.cg_heartbeat("a", h.member("a")["member_epoch"], regex="")  # "" clears the regex
    assert h.cgroup().resolved_regexes == {}


def test_a_deleted_topic_triggers_no_refresh_a_recreated_one_does() -> None:
    """GroupMetadataManager.onMetadataUpdate advances lastMetadataImageWithNewTopics only for
    created topic ids (javap on Kafka 4.3.1): a deletion is no reason to resolve again, so an ACL
    removed meanwhile still holds; the deleted topic leaves the assignment through the group's
    subscription metadata. Recreating it (a new topic id) is a reason."""
    h, acls = _secured("orders-a", "orders-b", "payments")
    owned = {"a": h.owned(h.cg_join("a", regex="orders-.*|payments")) or {}}
    assert owned["a"] == {"orders-a": [0, 1], "orders-b": [0, 1], "payments": [0, 1]}
    acls.allowed.discard("orders-b")
    h.cluster.delete_topic("payments")
    del owned["a"]["payments"]  # the client forgets a deleted topic's partitions
    _keep_alive(h, 10_000, owned)
    assert owned["a"] == {"orders-a": [0, 1], "orders-b": [0, 1]}
    assert h.cgroup().resolved_regexes == {"orders-.*|payments": frozenset({"orders-a", "orders-b", "payments"})}
    h.cluster.create_topic("payments", 1)
    _keep_alive(h, 10_000, owned)
    assert owned["a"] == {"orders-a": [0, 1], "payments": [0]}


def test_a_shorter_refresh_interval_refreshes_sooner() -> None:
    """group.consumer.regex.refresh.interval.ms set to its minimum, 10 s: the ACL added shows
    after 10 s rather than 10 minutes, and not before."""
    h, acls = _secured("orders-a", group_consumer_regex_refresh_interval_ms=10_000)
    owned = {"a": h.owned(h.cg_join("a", regex="orders-.*")) or {}}
    acls.allowed.add("orders-b")
    _keep_alive(h, 10_000, owned, step_ms=2_500)
    assert owned["a"] == {"orders-a": [0, 1]}  # exactly the interval old: not yet stale
    _keep_alive(h, 5_000, owned, step_ms=2_500)
    assert owned["a"] == {"orders-a": [0, 1], "orders-b": [0, 1]}


def test_the_refresh_interval_setting_is_kafkas() -> None:
    """An internal GroupCoordinatorConfig setting all the same accepted by Kafka's name, by
    --set and the environment; Kafka's default and its atLeast(10000)."""
    assert ClusterConfig().group_config().consumer_group_regex_refresh_interval_ms == KAFKA_REFRESH_INTERVAL_MS
    assert ClusterConfig(kafka_defaults=True).group_config().consumer_group_regex_refresh_interval_ms == KAFKA_REFRESH_INTERVAL_MS
    name = "group.consumer.regex.refresh.interval.ms"
    assert ClusterConfig.from_kafka({name: "10000"}).group_consumer_regex_refresh_interval_ms == 10_000
    assert parse_serve(["--set", f"{name}=20000"], {}).cluster.group_consumer_regex_refresh_interval_ms == 20_000
    env = {"MOCKBROKER_SET_GROUP_CONSUMER_REGEX_REFRESH_INTERVAL_MS": "30000"}
    assert parse_serve([], env).cluster.group_consumer_regex_refresh_interval_ms == 30_000
    with pytest.raises(ValueError, match=name):
        ClusterConfig.from_kafka({name: "9999"})
    with pytest.raises(SettingsError, match=name):
        parse_serve(["--set", f"{name}=5000"], {})
