#!/usr/bin/env python3
"""A deliberately misbehaving consumer, built on mockbroker's own codec (``protocol``), to show
that the client audit catches what it should (tests/conformance/test_audit.py). It speaks the
driver protocol of docs/conformance.md, as one consumer-group member that assigns every partition
to itself, and breaks one rule, chosen with ``--misbehave``:

- ``stale-generation``: after joining, it rejoins once more (a new generation), then commits with
  the generation it had before;
- ``no-heartbeat``: it joins and then never sends a Heartbeat;
- ``ignore-member-id``: after JoinGroup answers MEMBER_ID_REQUIRED it joins again without the id
  it was given (then, corrected, with it);
- ``none``: it behaves (the control case: no findings).

Usage: python misbehaving.py --misbehave MODE --bootstrap HOST:PORT --client-id ID
Commands: subscribe (topic, group, session_timeout_ms), commit (offsets), close.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import struct
import sys
import threading
import time
from typing import Any

from mockbroker_protocol import registry
from mockbroker_protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    encode_assignment,
    encode_subscription,
)
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.heartbeat import HeartbeatRequest
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from mockbroker_protocol.messages.leave_group import LeaveGroupRequest
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from mockbroker_protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment

# API key -> the version this client sends (all inside what mockbroker advertises).
VERSIONS = {3: 12, 8: 8, 10: 3, 11: 5, 12: 4, 13: 4, 14: 3}
MEMBER_ID_REQUIRED = 79


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


class Connection:
    def __init__(self, host: str, port: int, client_id: str) -> None:
        self.sock = socket.create_connection((host, port), timeout=30)
        self.client_id = client_id
        self.correlation = 0
        self.lock = threading.Lock()

    def call(self, api_key: int, request: Any) -> Any:
        with self.lock:
            self.correlation += 1
            version = VERSIONS[api_key]
            self.sock.sendall(registry.encode_request(RequestHeader(api_key, version, self.correlation, self.client_id), request))
            size = struct.unpack(">i", self._read(4))[0]
            _, body = registry.decode_response(api_key, version, self._read(size))
            return body

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            data += chunk
        return data


class Member:
    def __init__(self, mode: str, bootstrap: str, client_id: str) -> None:
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.mode, self.client_id = mode, client_id
        self.bootstrap = Connection(host, int(port), client_id)
        self.coordinator: Connection | None = None
        self.member_id, self.generation, self.previous_generation = "", -1, -1
        self.group = self.topic = ""
        self.stop = threading.Event()

    def subscribe(self, cmd: dict[str, Any]) -> None:
        self.group, self.topic = cmd["group"], cmd["topic"]
        self.session_timeout_ms = int(cmd.get("session_timeout_ms", 6000))
        meta = self.bootstrap.call(3, MetadataRequest(topics=[MetadataRequestTopic(name=self.topic)]))
        self.partitions = sorted(p.partition_index for p in meta.topics[0].partitions)
        found = self.bootstrap.call(10, FindCoordinatorRequest(key=self.group))
        self.coordinator = Connection(found.host, found.port, self.client_id)
        self.join()
        if self.mode == "stale-generation":
            self.join()  # a second generation: the first is now stale
        emit("assigned", added=self.partitions, partitions=self.partitions, member_id=self.member_id, generation=self.generation)
        if self.mode != "no-heartbeat":
            threading.Thread(target=self.heartbeat, daemon=True).start()

    def join(self) -> None:
        assert self.coordinator is not None
        subscription = encode_subscription(ConsumerProtocolSubscription(topics=[self.topic]))
        request = JoinGroupRequest(
            group_id=self.group, session_timeout_ms=self.session_timeout_ms, rebalance_timeout_ms=30000,
            member_id=self.member_id, protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=subscription)],
        )  # fmt: skip
        joined = self.coordinator.call(11, request)
        if joined.error_code == MEMBER_ID_REQUIRED:
            if self.mode == "ignore-member-id":
                joined = self.coordinator.call(11, request)  # the violation: the same empty member id again
            request.member_id = joined.member_id
            joined = self.coordinator.call(11, request)
        if joined.error_code != 0:
            raise RuntimeError(f"JoinGroup answered {joined.error_code}")
        self.member_id = joined.member_id
        self.previous_generation, self.generation = self.generation, joined.generation_id
        assignment = encode_assignment(ConsumerProtocolAssignment(assigned_partitions=[TopicPartition(self.topic, self.partitions)]))
        synced = self.coordinator.call(14, SyncGroupRequest(
            group_id=self.group, generation_id=self.generation, member_id=self.member_id,
            assignments=[SyncGroupRequestAssignment(member_id=self.member_id, assignment=assignment)],
        ))  # fmt: skip
        if synced.error_code != 0:
            raise RuntimeError(f"SyncGroup answered {synced.error_code}")

    def heartbeat(self) -> None:
        assert self.coordinator is not None
        while not self.stop.wait(0.3):
            self.coordinator.call(12, HeartbeatRequest(group_id=self.group, generation_id=self.generation, member_id=self.member_id))

    def commit(self, cmd: dict[str, Any]) -> dict[str, Any]:
        assert self.coordinator is not None
        generation = self.previous_generation if self.mode == "stale-generation" else self.generation
        offsets = {int(p): int(o) for p, o in (cmd.get("offsets") or {str(p): 0 for p in self.partitions}).items()}
        answer = self.coordinator.call(8, OffsetCommitRequest(
            group_id=self.group, generation_id_or_member_epoch=generation, member_id=self.member_id,
            topics=[OffsetCommitRequestTopic(name=self.topic, partitions=[
                OffsetCommitRequestPartition(partition_index=p, committed_offset=o) for p, o in offsets.items()
            ])],
        ))  # fmt: skip
        codes = {p.error_code for t in answer.topics for p in t.partitions} - {0}
        if codes:
            raise RuntimeError(f"OffsetCommit with generation {generation} answered error codes {sorted(codes)}")
        return {"offsets": {str(p): o for p, o in offsets.items()}}

    def close(self) -> None:
        self.stop.set()
        if self.coordinator is not None and self.member_id:
            time.sleep(0)  # let a heartbeat in flight finish before the leave (the lock orders them)
            self.coordinator.call(13, LeaveGroupRequest(group_id=self.group, member_id=self.member_id))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misbehave", required=True, choices=("stale-generation", "no-heartbeat", "ignore-member-id", "none"))
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--client-id", required=True)
    args = parser.parse_args()
    member = Member(args.misbehave, args.bootstrap, args.client_id)
    emit("hello", protocol=1, client=f"misbehaving ({args.misbehave})", version="0", unsupported={})
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        name = cmd.get("cmd")
        if name == "close":
            break
        try:
            if name == "subscribe":
                member.subscribe(cmd)
                emit("subscribed")
            elif name == "commit":
                emit("committed", **member.commit(cmd))
            else:
                emit("unsupported", cmd=name, reason="the misbehaving client only joins and commits")
        except Exception as exc:
            emit(f"{name}_failed", error=type(exc).__name__, message=str(exc))
    with contextlib.suppress(OSError, RuntimeError):
        member.close()
    emit("closed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
