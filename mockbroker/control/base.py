"""What the parts of ``Control`` share: the cluster, the request hooks and pushed errors, and
the helpers every part uses (events with a reason, lookups that raise NotFound, waiting on the
event log)."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mockbroker.control.errors import NotFound, WaitTimeout
from mockbroker.control.intercept import RequestHooks
from mockbroker.control.share_snapshots import ShareGroupSnapshot, share_group_snapshot
from mockbroker.control.snapshots import (
    AnyGroupSnapshot,
    consumer_group_snapshot,
    group_snapshot,
    streams_group_snapshot,
)
from mockbroker.events import Event

if TYPE_CHECKING:
    from mockbroker.coordinators.consumer.group import ConsumerGroup
    from mockbroker.model import Partition, Topic
    from mockbroker.state import ClusterState

T = TypeVar("T")

DEFAULT_WAIT_S = 30.0
NO_LEADER = -1


class ControlBase:
    """The state and helpers behind every part of ``Control`` (mockbroker/control/control.py)."""

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self.hooks = RequestHooks(cluster)
        self.errors = self.hooks.errors
        self._original_caps = dict(cluster.version_caps)
        self._round_robin = itertools.count()

    async def _wait(self, check: Callable[[], T | None], wanted: str, explain: Callable[[], str], timeout: float) -> T:
        """Evaluate ``check`` now and after every event (once the change that recorded it is
        complete: call_soon), until it returns something truthy (or raises, which the waiter
        gets) or ``timeout`` passes."""
        result = check()
        if result:
            return result
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def recheck() -> None:
            if not future.done():
                try:
                    value = check()
                except Exception as exc:  # check's own refusal (ControlError): the waiter gets it
                    future.set_exception(exc)
                    return
                if value:
                    future.set_result(value)

        def on_event(_: Event) -> None:
            loop.call_soon(recheck)

        unsubscribe = self.cluster.events.subscribe(on_event)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise WaitTimeout(f"timed out after {timeout:.1f}s waiting for {wanted}; last seen: {explain()}") from None
        finally:
            unsubscribe()

    def _record(self, type: str, *, reason: str, broker_id: int | None = None, group_id: str | None = None, **details: Any) -> None:
        self.cluster.events.record(type, broker_id=broker_id, group_id=group_id, reason=reason, **details)

    def _broker(self, broker_id: int) -> None:
        if broker_id not in self.cluster.brokers:
            raise NotFound(f"no broker {broker_id}; brokers are {sorted(self.cluster.brokers)}")

    def _topic(self, name: str) -> Topic:
        t = self.cluster.topics.get(name)
        if t is None:
            raise NotFound(f"no topic {name!r}; topics are {sorted(self.cluster.topics)}")
        return t

    def _partition(self, topic: str, index: int) -> Partition:
        t = self._topic(topic)
        if not 0 <= index < len(t.partitions):
            raise NotFound(f"{topic} has no partition {index} (it has {len(t.partitions)})")
        return t.partitions[index]

    def _snapshot(self, group_id: str) -> AnyGroupSnapshot | None:
        snap = self._kind_snapshot(group_id)
        configs = self.cluster.groups.services.group_configs.get(group_id)
        return snap if snap is None or not configs else dataclasses.replace(snap, configs=dict(configs))

    def _kind_snapshot(self, group_id: str) -> AnyGroupSnapshot | None:
        classic = self.cluster.groups.groups.get(group_id)
        if classic is not None:
            return group_snapshot(classic)
        if group_id in self.cluster.groups.streams.groups:
            streams = self.cluster.groups.streams.snapshot(group_id)
            return None if streams is None else streams_group_snapshot(streams)
        if group_id in self.cluster.groups.share.groups:
            return self._share_snapshot(group_id)
        data = self.cluster.groups.consumer.snapshot(group_id)
        return None if data is None else consumer_group_snapshot(data)

    def _share_snapshot(self, group_id: str) -> ShareGroupSnapshot | None:
        """A share group with the share state of every partition it fetched."""
        data = self.cluster.groups.share.snapshot(group_id)
        if data is None:
            return None
        names = {t.topic_id: t.name for t in self.cluster.topics.values()}
        return share_group_snapshot(data, self.cluster.groups.share_partitions.snapshot(group_id, names))

    def _consumer_group(self, group_id: str) -> ConsumerGroup:
        """The KIP-848 consumer group ``group_id`` (called once the classic groups were looked at)."""
        group = self.cluster.groups.consumer.groups.get(group_id)
        if group is None:
            known = sorted([*self.cluster.groups.groups, *self.cluster.groups.consumer.groups])
            raise NotFound(f"no group {group_id!r}; groups are {known}")
        return group

    def _set_leader(self, p: Partition, leader_id: int) -> None:
        p.leader_id = leader_id
        p.log.leader_epoch += 1
        p.log.notify_listeners()  # parked Fetches answer at once (NOT_LEADER_OR_FOLLOWER)

    def _committed(self, group_id: str, topic: str | None) -> dict[str, dict[int, int]]:
        stored = self.cluster.groups.offsets.group_offsets(group_id)
        return {
            t: {p: o.committed_offset for p, o in parts.items()}
            for t, parts in stored.items()
            if topic is None or t == topic
        }
