"""Share groups over the HTTP control API: GET /groups and /groups/{id} answer a KIP-932 share
group (members, assignment, each share partition's in-flight records), POST
/groups/{id}/expire-lock and /groups/{id}/expire act through the coordinators' own paths, and the
answers match the OpenAPI document's ShareGroup schema."""

from __future__ import annotations

from mockbroker import MockCluster
from mockbroker.http.components import check
from mockbroker.http.schema import ref
from mockbroker_protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from tests.mockbroker.http.test_app import Api, env

__all__ = ["env"]  # the fixture, shared with test_app


def _join(cluster: MockCluster, member_id: str, client_id: str) -> None:
    request = ShareGroupHeartbeatRequest(group_id="sg", member_id=member_id, member_epoch=0, subscribed_topic_names=["q"])
    answer = cluster.groups.share_group_heartbeat(cluster.clock.now_ms(), request, client_id=client_id, client_host="/127.0.0.1")
    assert answer.error_code == 0, answer


async def test_a_share_group_described_and_its_locks_and_sessions_expired(env: tuple[MockCluster, Api]) -> None:
    cluster, api = env
    await api.ok("POST", "/topics", {"name": "q", "partitions": 1})
    await api.ok("POST", "/topics/q/records", {"records": [{"value": f"job {i}"} for i in range(3)]})
    manager = cluster.groups.share_partitions
    manager.set_auto_offset_reset("sg", "earliest")
    _join(cluster, "m1", "c1")
    _join(cluster, "m2", "c2")
    topic = cluster.topics["q"]
    assert manager.acquire("sg", "m1", topic.topic_id, "q", topic.partitions[0].log, 2, cluster.clock.now_ms())

    listed = (await api.ok("GET", "/groups", type="share"))["groups"]
    assert [(g["group_id"], g["type"], g["state"], g["members"]) for g in listed] == [("sg", "share", "Stable", 2)]
    group = await api.ok("GET", "/groups/sg")
    assert check(ref("Group"), group, "answer") == group
    assert group["type"] == "share" and group["assignor"] == "simple"
    assert group["configs"] == {"share.auto.offset.reset": "earliest"}  # its GROUP config resource's overrides
    assert {m["client_id"]: m["assigned"] for m in group["members"]} == {"c1": {"q": [0]}, "c2": {"q": [0]}}
    [part] = group["partitions"]
    assert (part["topic"], part["partition"], part["start_offset"]) == ("q", 0, 0)
    assert [(r["offset"], r["state"], r["delivery_count"], r["member_id"]) for r in part["in_flight"]] == [
        (0, "Acquired", 1, "m1"), (1, "Acquired", 1, "m1"),
    ]
    assert all(r["lock_deadline_ms"] > 0 for r in part["in_flight"])

    assert await api.ok("POST", "/groups/sg/expire-lock", {"topic": "q", "partition": 0, "offsets": [1]}) == {"offsets": [1]}
    event = await api.ok("GET", "/events/wait", type="share_partition.lock_expired", group_id="sg")
    assert event["details"]["offsets"] == [1]
    again = (await api.ok("GET", "/groups/sg"))["partitions"][0]["in_flight"]
    assert [(r["offset"], r["state"], r["member_id"]) for r in again] == [(0, "Acquired", "m1"), (1, "Available", None)]

    assert await api.ok("POST", "/groups/sg/expire", {"client_id": "c1"}) == {"member_id": "m1"}
    after = await api.ok("GET", "/groups/sg/wait", type="share", members=1)
    assert check(ref("Group"), after, "answer") == after and [m["member_id"] for m in after["members"]] == ["m2"]
    assert [r["state"] for r in after["partitions"][0]["in_flight"]] == ["Available", "Available"]

    assert (await api.post("/groups/nobody/expire-lock", {"topic": "q", "partition": 0}))[0] == 404
    assert (await api.post("/groups/sg/expire-lock", {"topic": "nope", "partition": 0}))[0] == 404
    assert (await api.post("/groups/sg/expire-lock", {"partition": 0}))[0] == 400
    await api.ok("POST", "/topics", {"name": "r", "partitions": 1})
    status, answer = await api.post("/groups/sg/expire-lock", {"topic": "r", "partition": 0})
    assert status == 409 and "never fetched" in answer["error"]
