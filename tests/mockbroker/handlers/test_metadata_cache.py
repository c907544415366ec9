"""Metadata answers are kept encoded and reused only while what they describe is unchanged
(mockbroker/handlers/metadata.py): every change shows in the next answer, cached or not."""

from __future__ import annotations

from typing import Any

from mockbroker import MockCluster
from mockbroker.handlers import metadata as metadata_handler
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from tests.mockbroker.wire import WireClient


async def connect(cluster: MockCluster, node_id: int = 1) -> WireClient:
    node = cluster.brokers[node_id]
    return await WireClient.connect(node.host, node.port)


def summary(resp: Any) -> tuple[Any, ...]:
    return (
        resp.controller_id,
        sorted((b.node_id, b.port) for b in resp.brokers),
        [
            (t.name, t.error_code, [(p.partition_index, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes,
                                     p.offline_replicas) for p in t.partitions])
            for t in resp.topics
        ],
    )  # fmt: skip


async def ask(client: WireClient, topics: list[str] | None, version: int = 12) -> tuple[Any, ...]:
    req = MetadataRequest(topics=None if topics is None else [MetadataRequestTopic(name=t) for t in topics])
    return summary(await client.request(3, version, req))


async def test_repeated_questions_are_answered_from_the_cache(cluster: MockCluster) -> None:
    cluster.create_topic("t", 3, 2)
    client = await connect(cluster)
    first = await ask(client, ["t"])
    assert len(cluster.memos.get(metadata_handler._ANSWERS) or ()) == 1
    assert await ask(client, ["t"]) == first
    assert await ask(client, ["t"], version=9) == first  # another version: another entry, same facts
    assert len(cluster.memos.get(metadata_handler._ANSWERS) or ()) == 2
    await client.close()


async def test_every_change_shows_in_the_next_answer(cluster: MockCluster) -> None:
    cluster.create_topic("t", 3, 2)
    client = await connect(cluster)
    control = cluster.control

    async def both() -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return await ask(client, ["t"]), await ask(client, None)

    before = await both()
    epoch = await control.move_leader("t", 0)
    after_move = await both()
    assert after_move != before
    (_, _, topics), _ = after_move
    assert topics[0][2][0][2] == epoch  # partition 0's leader epoch is the new one

    cluster.add_partitions("t", 5)
    after_add = await both()
    assert len(after_add[0][2][0][2]) == 5

    cluster.create_topic("u", 1, 1)
    all_topics = (await ask(client, None))[2]
    assert sorted(name for name, _, _ in all_topics) == ["t", "u"]

    down = next(b for b in cluster.brokers if b != 1)
    await control.broker_down(down)
    after_down = await both()
    assert down not in [b for b, _ in after_down[0][1]]
    assert any(down in offline for *_, offline in after_down[0][2][0][2])
    await control.broker_up(down)
    assert down in [b for b, _ in (await ask(client, ["t"]))[1]]

    # A test editing the model by hand is seen too: nothing has to remember to invalidate.
    partition = cluster.topics["t"].partitions[1]
    partition.replica_ids.reverse()
    partition.leader_id = partition.replica_ids[0]
    (_, _, topics) = await ask(client, ["t"])
    assert topics[0][2][1][1:4] == (partition.leader_id, partition.log.leader_epoch, partition.replica_ids)

    await control.delete_topic("u")
    assert [name for name, _, _ in (await ask(client, None))[2]] == ["t"]
    await client.close()


async def test_unknown_topics_are_not_cached_and_still_auto_created(cluster: MockCluster) -> None:
    client = await connect(cluster)
    req = MetadataRequest(topics=[MetadataRequestTopic(name="auto")], allow_auto_topic_creation=False)
    resp = await client.request(3, 12, req)
    assert resp.topics[0].error_code != 0 and not cluster.memos.get(metadata_handler._ANSWERS)
    req.allow_auto_topic_creation = True
    resp = await client.request(3, 12, req)
    assert resp.topics[0].error_code == 0 and "auto" in cluster.topics
    await client.close()


async def test_faults_and_the_request_log_see_real_responses(cluster: MockCluster) -> None:
    """While a request log or interceptor is on, answers are built (and may be edited), not cached."""
    cluster.create_topic("t", 1, 1)
    client = await connect(cluster)
    clean = await ask(client, ["t"])  # now cached
    control = cluster.control
    await control.push_errors("Metadata", "LEADER_NOT_AVAILABLE")
    req = MetadataRequest(topics=[MetadataRequestTopic(name="t")])
    faulted = await client.request(3, 12, req)
    assert faulted.topics[0].error_code == 5 and faulted.topics[0].partitions == []
    await control.enable_request_log()
    assert await ask(client, ["t"]) == clean
    (record,) = await control.requests("Metadata")
    assert record.outcome == "answered" and record.error_codes == ()
    await client.close()
