"""kafkajs 2.2.4 consumes with a consumer group: two kafkajs consumers (one node process,
tests/integration/clients/node/kafkajs-consume.js) join a group on a 6-partition topic, split the
partitions, and consume back exactly what kafkajs produced (keys, null keys, values, headers,
CreateTime timestamps, order per partition), each partition read by its owner only. Their
commits bring the coordinator's committed offsets to every partition's end, and once they
disconnect (LeaveGroup) the group is Empty.

The records are produced (by the kafkajs producer driver) only once the group is Stable with
both members and every partition assigned, so no partition changes hands while being read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mockbroker import MockCluster
from tests.integration.clients.driver import (
    NODE_DIR,
    SUBPROCESS_TIMEOUT_S,
    events,
    from_json,
    kafkajs_script,
    run_client,
    to_json,
)
from tests.integration.groups_support import (
    assert_exactly_once,
    group_cluster,
    group_view,
    stored_offsets,
)
from tests.integration.support import (
    DEADLINE_S,
    assert_consumed_exactly,
    async_wait_until,
    make_messages,
)

PARTITIONS = 6
COUNT = 300
CONSUMERS = 2


@pytest.fixture
async def cluster() -> AsyncIterator[MockCluster]:
    async for c in group_cluster():
        yield c


async def test_kafkajs_consumer_group_consumes_what_was_produced(cluster: MockCluster) -> None:
    node, produce_script = kafkajs_script()
    consume_script = NODE_DIR / "kafkajs-consume.js"
    topic, group = "kafkajs-group", "kafkajs-group"
    cluster.create_topic(topic, PARTITIONS)
    sent = make_messages("kafkajs group", COUNT, PARTITIONS)

    consumer = await asyncio.create_subprocess_exec(
        node, str(consume_script),
        "--brokers", cluster.bootstrap_servers,
        "--topic", topic,
        "--group", group,
        "--count", str(COUNT),
        "--consumers", str(CONSUMERS),
        # kafkajs heartbeats between fetches; a generous session keeps a loaded machine from
        # expiring a member mid-test (nothing here waits for a session to expire)
        "--session-timeout-ms", "30000",
        "--timeout-ms", str(int(DEADLINE_S * 1000)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        def stable_with_everything_assigned() -> bool:
            view = group_view(cluster, group, topic)
            return (
                view is not None
                and view.state == "Stable"
                and len(view.members) == CONSUMERS
                and frozenset().union(*(m.assignment for m in view.members)) == frozenset(range(PARTITIONS))
                and not view.awaiting_sync
            )

        await async_wait_until(stable_with_everything_assigned, "both kafkajs consumers to join the group")
        joined = group_view(cluster, group, topic)
        assert joined is not None and joined.protocol_type == "consumer"
        assert_exactly_once({m.member_id: m.assignment for m in joined.members}, PARTITIONS, "the broker's group state")

        await run_client(
            [
                node, str(produce_script),
                "--brokers", cluster.bootstrap_servers,
                "--topic", topic,
                "--timeout-ms", str(int(DEADLINE_S * 1000)),
            ],
            [to_json(m) for m in sent],
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(consumer.communicate(), SUBPROCESS_TIMEOUT_S)
        except TimeoutError:
            pytest.fail(f"kafkajs-consume still running after {SUBPROCESS_TIMEOUT_S:.0f}s")
        tail = "\n".join(err.decode(errors="replace").splitlines()[-40:])
        printed = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
        summary = {kind: len(events(printed, kind)) for kind in ("joined", "consumed", "committed", "done")}
        last_commits = {line["partition"]: line["offset"] for line in events(printed, "committed")}
        assert consumer.returncode == 0, (
            f"kafkajs-consume exited {consumer.returncode}; it printed {summary}, last commits {last_commits}; "
            f"stderr tail:\n{tail}"
        )
    finally:
        if consumer.returncode is None:
            consumer.kill()
            await consumer.wait()
    lines: list[dict[str, Any]] = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    assert events(lines, "done"), "kafkajs-consume did not finish"

    # What the consumers got: exactly what was produced, each partition from one consumer only.
    consumed = events(lines, "consumed")
    assert_consumed_exactly(sent, [from_json(line) for line in consumed])
    readers = {p: {line["consumer"] for line in consumed if line["partition"] == p} for p in range(PARTITIONS)}
    assert all(len(r) == 1 for r in readers.values()), f"partitions read by more than one consumer: {readers}"

    # kafkajs's own view of the assignment (its GROUP_JOIN events) agrees with the coordinator's:
    # each consumer's last join against the assignment the coordinator last stored for it.
    last_join = {line["consumer"]: line for line in events(lines, "joined")}
    stored: dict[str, frozenset[int]] = {}
    for e in cluster.events.filter(type="member.assigned", group_id=group):
        stored[e.member_id or ""] = frozenset((e.details["assignment"] or {}).get(topic, []))
    said = {j["member_id"]: frozenset(j["assignment"]) for j in last_join.values()}
    assert said == {member_id: stored.get(member_id) for member_id in said}, (
        f"kafkajs joins {events(lines, 'joined')}; the coordinator stored {stored}"
    )
    assert_exactly_once(said, PARTITIONS, "kafkajs's GROUP_JOIN events")
    for i, join in last_join.items():
        assert {p for p, r in readers.items() if i in r} <= set(join["assignment"])

    # Their commits reached the coordinator; after they left, the group is Empty.
    assert stored_offsets(cluster, group, topic) == dict.fromkeys(range(PARTITIONS), COUNT // PARTITIONS)
    final = group_view(cluster, group, topic)
    assert final is not None and final.state == "Empty" and not final.members, final
