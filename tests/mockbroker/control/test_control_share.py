"""The control API over KIP-932 share groups, pure coordinator on a ManualClock: listing and
describing a share group (members, assignment, each share partition's SPSO and in-flight records
with state, delivery count, holder and lock deadline), expiring a record's acquisition lock and a
member's session through the coordinators' own paths, with their events."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.control import ControlError, GroupListing, NotFound, ShareGroupSnapshot
from mockbroker_protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from tests.mockbroker.coordinators.share.test_share_partition import ShareData


class ShareControl(ShareData):
    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        self.control = self.cluster.control

    def share_join(self, member_id: str, client_id: str = "c") -> None:
        request = ShareGroupHeartbeatRequest(group_id="g", member_id=member_id, member_epoch=0, subscribed_topic_names=["t"])
        response = self.groups.share_group_heartbeat(self.now, request, client_id=client_id, client_host="/127.0.0.1")
        assert response.error_code == 0, response

    async def snap(self) -> ShareGroupSnapshot:
        snap = await self.control.describe_group("g")
        assert isinstance(snap, ShareGroupSnapshot)
        return snap


async def test_describe_a_share_group_with_its_in_flight_records() -> None:
    h = ShareControl()
    h.share_join("a", client_id="ca")
    h.share_join("b", client_id="cb")
    h.produce(4)
    assert h.acquire("a", 2) == [(0, 1, 1)]
    assert (await h.control.groups())["g"] == GroupListing("g", "share", "Stable", "share")
    snap = await h.snap()
    assert snap.type == "share" and snap.state == "Stable" and snap.generation_id == snap.group_epoch
    assert snap.assignment("t") == {"a": (0,), "b": (0,)}  # a share group's partitions go to every member
    assert snap.member(client_id="cb").member_id == "b"
    part = snap.partition("t", 0)
    assert part is not None and part.start_offset == 0 and part.next_fetch_offset == 2
    assert [(r.offset, r.state, r.delivery_count, r.member_id) for r in part.in_flight] == [
        (0, "Acquired", 1, "a"), (1, "Acquired", 1, "a"),
    ]
    assert part.in_flight[0].lock_deadline_ms == h.now + 1000
    assert snap.to_json()["partitions"][0]["in_flight"][0]["state"] == "Acquired"
    assert (await h.control.wait_for_group("g", "Stable", members=2, group_type="share", timeout=1)).group_id == "g"


async def test_expire_acquisition_lock_redelivers_then_archives_at_the_limit() -> None:
    h = ShareControl()  # delivery count limit 2
    h.share_join("a")
    h.produce(3)
    h.acquire("a")
    assert await h.control.expire_acquisition_lock("g", "t", 0, [1]) == [1]
    part = (await h.snap()).partition("t", 0)
    assert part is not None and part.record(1) is not None
    assert (part.record(1).state, part.record(1).member_id, part.record(1).lock_deadline_ms) == ("Available", None, None)  # type: ignore[union-attr]
    assert [r.offset for r in part.acquired()] == [0, 2]
    cause, effect = h.events("control.acquisition_lock_expired"), h.events("share_partition.lock_expired")
    assert len(cause) == 1 and cause[0].seq < effect[0].seq and effect[0].details["offsets"] == [1]
    assert h.acquire("a") == [(1, 1, 2)]  # redelivered, delivery count 2
    assert await h.control.expire_acquisition_lock("g", "t", 0) == [0, 1, 2]  # every acquired record
    part = (await h.snap()).partition("t", 0)
    assert part is not None and part.start_offset == 0
    assert [(r.offset, r.state) for r in part.in_flight] == [(0, "Available"), (1, "Archived"), (2, "Available")]
    h.advance(1000)  # the original lock timers find nothing of theirs left to release
    assert len(h.events("share_partition.lock_expired")) == 2


async def test_expire_acquisition_lock_refusals() -> None:
    h = ShareControl()
    h.share_join("a")
    with pytest.raises(ControlError, match="never fetched"):
        await h.control.expire_acquisition_lock("g", "t", 0)
    with pytest.raises(NotFound):
        await h.control.expire_acquisition_lock("nobody", "t", 0)
    with pytest.raises(NotFound):
        await h.control.expire_acquisition_lock("g", "t", 5)
    assert not h.events("control.acquisition_lock_expired")


async def test_expire_session_of_a_share_member_fences_it_and_releases_its_records() -> None:
    h = ShareControl()
    h.share_join("a", client_id="ca")
    h.share_join("b", client_id="cb")
    h.produce(2)
    h.acquire("a")
    epoch = (await h.snap()).group_epoch
    assert await h.control.expire_session("g", client_id="ca") == "a"
    snap = await h.snap()
    assert [m.member_id for m in snap.members] == ["b"] and snap.group_epoch == epoch + 1
    part = snap.partition("t", 0)
    assert part is not None and not part.acquired()
    types = [e.type for e in h.cluster.events.filter(group_id="g")]
    assert types.index("control.session_expired") < types.index("share_group.member_fenced") < types.index("share_partition.released")
    with pytest.raises(NotFound):
        await h.control.expire_session("g", "a")


async def test_group_configs_set_shown_and_refused_as_kafka_refuses() -> None:
    h = ShareControl()
    assert await h.control.group_configs("g") == {"share.auto.offset.reset": "earliest"}
    assert await h.control.group_configs("nobody") == {}  # configs need no group
    after = await h.control.alter_group_configs("g", {"share.record.lock.duration.ms": "20000", "share.auto.offset.reset": None})
    assert after == {"share.record.lock.duration.ms": "20000"}
    assert h.groups.services.group_config("g").share_record_lock_duration_ms == 20000
    with pytest.raises(ControlError, match=r"^Unknown group config name: nope$"):
        await h.control.alter_group_configs("g", {"nope": "1"})
    with pytest.raises(ControlError, match=r"share\.delivery\.count\.limit must be less than or equal to group\.share\.max\.delivery\.count\.limit"):
        await h.control.alter_group_configs("g", {"share.delivery.count.limit": "11"})
    assert await h.control.group_configs("g") == {"share.record.lock.duration.ms": "20000"}  # refusals change nothing
    h.share_join("m1")
    assert (await h.snap()).configs == {"share.record.lock.duration.ms": "20000"}
    await h.control.alter_group_configs("g", {"share.record.lock.duration.ms": None})
    assert (await h.snap()).configs == {}
