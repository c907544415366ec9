"""Control over brokers and placement: brokers down and up, leaders and coordinators moved,
connections closed, API versions capped, and the cluster described."""

from __future__ import annotations

from mockbroker.control.base import NO_LEADER, ControlBase
from mockbroker.control.errors import ControlError
from mockbroker.control.names import api_key_of
from mockbroker.control.snapshots import BrokerSnapshot, ClusterSnapshot, EndpointSnapshot
from mockbroker_protocol.registry import APIS


class BrokerControl(ControlBase):
    """Faults on the model: what happens to brokers, leaders and coordinators."""

    async def disconnect_all(self, broker: int | None = None) -> int:
        """Close every client connection (of one broker, or all); listeners stay open."""
        total = 0
        for node_id, server in list(self.cluster.listeners.items()):
            if broker is None or node_id == broker:
                total += await server.close_connections()
        return total

    async def cap_api_version(self, api: int | str, max_version: int | None) -> None:
        """Advertise and serve ``api`` only up to ``max_version`` from now on (None: back to the
        configured cap). A cap below the lowest served version stops advertising the API.
        Connections that negotiated more and send it get closed, as a downgraded broker would."""
        key = api_key_of(api)
        caps = self.cluster.version_caps
        if max_version is None:
            caps.pop(key, None)
            if key in self._original_caps:
                caps[key] = self._original_caps[key]
        else:
            caps[key] = max_version
        self._record("control.api_version_capped", reason=f"{APIS[key].name} capped at {max_version}", api_key=key, max_version=max_version)

    async def reset_api_versions(self) -> None:
        caps = self.cluster.version_caps
        if caps != self._original_caps:
            caps.clear()
            caps.update(self._original_caps)

    # -- faults on the model ----------------------------------------------------------------------

    async def broker_down(self, broker_id: int) -> dict[str, int]:
        """Stop a broker: its listener closes (new connections refused) and its connections drop;
        Metadata and DescribeCluster leave it out; each partition it led fails over to the first
        live in-sync replica with a leader epoch bump (leader -1 and LEADER_NOT_AVAILABLE when
        none is left); coordinators it hosted move to the next live broker; its fetch sessions
        are gone. Returns {"topic-p": new leader} for every partition whose leader changed."""
        cluster = self.cluster
        self._broker(broker_id)
        if broker_id in cluster.down_brokers:
            raise ControlError(f"broker {broker_id} is already down")
        if len(cluster.down_brokers) + 1 == len(cluster.brokers):
            raise ControlError("cannot take down the last live broker")
        cluster.down_brokers.add(broker_id)
        server = cluster.listeners.get(broker_id)
        if server is not None:
            await server.stop()
        moved: dict[str, int] = {}
        for topic, partition in cluster.iter_partitions():
            if broker_id not in partition.replica_ids:
                continue
            partition.offline_replica_ids.append(broker_id)
            if partition.leader_id == broker_id:
                live = partition.isr_ids
                self._set_leader(partition, live[0] if live else NO_LEADER)
                moved[f"{topic.name}-{partition.index}"] = partition.leader_id
        if cluster.controller_id == broker_id:
            cluster.controller_id = next(i for i in cluster.brokers if i not in cluster.down_brokers)
        from mockbroker.log.fetch_sessions import FetchSessionCache

        cluster.fetch_sessions[broker_id] = FetchSessionCache()
        self._record("control.broker_down", broker_id=broker_id, reason=f"broker {broker_id} taken down", leaders_moved=moved)
        return moved

    async def broker_up(self, broker_id: int) -> dict[str, int]:
        """Start a stopped broker again on the same port: it rejoins Metadata, its replicas
        rejoin the ISR, and it takes back the leadership of the partitions it is the preferred
        (first) replica of, and of leaderless ones, with a leader epoch bump, as Kafka's
        preferred-leader election does (without waiting for its 5-minute check)."""
        cluster = self.cluster
        self._broker(broker_id)
        if broker_id not in cluster.down_brokers:
            raise ControlError(f"broker {broker_id} is not down")
        moved: dict[str, int] = {}
        for topic, partition in cluster.iter_partitions():
            if broker_id in partition.offline_replica_ids:
                partition.offline_replica_ids.remove(broker_id)
            if broker_id in partition.replica_ids and (
                partition.leader_id == NO_LEADER or (partition.replica_ids[0] == broker_id and partition.leader_id != broker_id)
            ):
                self._set_leader(partition, broker_id)
                moved[f"{topic.name}-{partition.index}"] = broker_id
        cluster.down_brokers.discard(broker_id)
        server = cluster.listeners.get(broker_id)
        if server is not None:
            await server.start()
        self._record("control.broker_up", broker_id=broker_id, reason=f"broker {broker_id} started again", leaders_moved=moved)
        return moved

    async def move_leader(self, topic: str, partition: int, broker_id: int | None = None) -> int:
        """Make ``broker_id`` (default: the next in-sync replica) lead the partition, bumping
        its leader epoch; returns the new epoch. Clients at the old leader get
        NOT_LEADER_OR_FOLLOWER, and those sending the old epoch FENCED_LEADER_EPOCH (KIP-320).
        A broker that holds no replica takes over the old leader's place in the replica list."""
        p = self._partition(topic, partition)
        if broker_id is None:
            candidates = [r for r in p.isr_ids if r != p.leader_id]
            if not candidates:
                raise ControlError(f"{topic}-{partition} has no other in-sync replica to lead it; pass broker_id")
            broker_id = candidates[0]
        self._broker(broker_id)
        if broker_id in self.cluster.down_brokers:
            raise ControlError(f"broker {broker_id} is down")
        if broker_id not in p.replica_ids:
            at = p.replica_ids.index(p.leader_id) if p.leader_id in p.replica_ids else 0
            p.replica_ids[at] = broker_id
        old = p.leader_id
        self._set_leader(p, broker_id)
        self._record(
            "control.leader_moved", broker_id=broker_id, reason=f"{topic}-{partition} leader moved from {old} to {broker_id}",
            topic=topic, partition=partition, leader_epoch=p.log.leader_epoch, previous_leader=old,
        )  # fmt: skip
        return p.log.leader_epoch

    async def move_coordinator(self, group_id: str, broker_id: int) -> int:
        """Make ``broker_id`` the group's coordinator; returns the previous one. The group's state
        stays (it lives in one coordinator for the whole cluster); requests to the old
        coordinator get NOT_COORDINATOR, so clients look it up again (FindCoordinator)."""
        self._broker(broker_id)
        if broker_id in self.cluster.down_brokers:
            raise ControlError(f"broker {broker_id} is down")
        previous = self.cluster.coordinator_for(group_id).node_id
        self.cluster.coordinator_moves[group_id] = broker_id
        self._record(
            "control.coordinator_moved", broker_id=broker_id, group_id=group_id,
            reason=f"coordinator of {group_id} moved from broker {previous} to {broker_id}", previous=previous,
        )  # fmt: skip
        return previous


    async def describe_cluster(self) -> ClusterSnapshot:
        """Cluster id, controller, every broker (bound and advertised address, rack, up or
        down) and the clock."""
        c = self.cluster
        brokers = tuple(
            BrokerSnapshot(
                n.node_id, n.host, n.port, n.advertised_host, n.advertised_port, n.rack, n.node_id not in c.down_brokers,
                tuple(
                    EndpointSnapshot(e.listener, e.security_protocol, e.host, e.port, e.advertised_host, e.advertised_port)
                    for e in n.endpoints.values()
                ),
            )
            for n in c.brokers.values()
        )
        return ClusterSnapshot(c.config.cluster_id, c.controller_id, brokers, c.clock.manual, c.clock.now_ms())
