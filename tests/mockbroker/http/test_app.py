"""The HTTP control API in-process: a MockCluster and its AdminServer on the test's own loop, an
aiohttp client, and aiokafka as the real Kafka client whose view of things the HTTP calls change.

Each test drives one area over HTTP and checks the effect where it shows: in what a real client
gets (pushed errors, a rebalance after an expired member), in the cluster's own state, and in
the answers of the API itself (bodies, status codes, the field named in a 400).
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

from mockbroker import MockCluster
from mockbroker.clock import ManualClock
from mockbroker.http import AdminServer
from tests.integration.groups_support import GROUP_CLUSTER_SETTINGS
from tests.integration.support import DEADLINE_S

TOKEN = "t0ken"


class Api:
    """A JSON client: ``await api.get(path)`` returns (status, body)."""

    def __init__(self, http: aiohttp.ClientSession, token: str | None = None) -> None:
        self.http = http
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def call(self, method: str, path: str, body: Any = None, **query: Any) -> tuple[int, Any]:
        params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in query.items()}
        async with self.http.request(method, path, json=body, params=params, headers=self.headers) as response:
            text = await response.text()
            if response.content_type == "application/json":
                return response.status, json.loads(text)
            return response.status, text

    async def get(self, path: str, **query: Any) -> tuple[int, Any]:
        return await self.call("GET", path, **query)

    async def post(self, path: str, body: Any = None) -> tuple[int, Any]:
        return await self.call("POST", path, body)

    async def ok(self, method: str, path: str, body: Any = None, **query: Any) -> Any:
        status, answer = await self.call(method, path, body, **query)
        assert 200 <= status < 300, f"{method} {path}: {status} {answer}"
        return answer


async def _started(cluster: MockCluster, token: str | None = None) -> tuple[AdminServer, aiohttp.ClientSession]:
    await cluster.start()
    server = await AdminServer(cluster, token=token).start("127.0.0.1", 0)
    return server, aiohttp.ClientSession(base_url=server.url)


@pytest.fixture
async def env() -> AsyncIterator[tuple[MockCluster, Api]]:
    cluster = MockCluster(brokers=3, **GROUP_CLUSTER_SETTINGS)
    server, http = await _started(cluster)
    try:
        yield cluster, Api(http)
    finally:
        await http.close()
        await server.stop()
        await cluster.stop()
    assert not cluster.internal_errors, cluster.internal_errors


# -- health, auth, errors ------------------------------------------------------------------------------


async def test_health_readiness_and_the_bearer_token() -> None:
    cluster = MockCluster()
    server, http = await _started(cluster, token=TOKEN)
    try:
        anonymous, authorised, wrong = Api(http), Api(http, TOKEN), Api(http, "nope")
        assert await anonymous.get("/healthz") == (200, {"status": "ok"})
        status, ready = await anonymous.get("/readyz")
        assert status == 200 and ready["ready"] is True and ready["bootstrap_servers"] == cluster.bootstrap_servers
        for client in (anonymous, wrong):
            status, body = await client.get("/topics")
            assert status == 401 and body["field"] == "header.Authorization", body
        async with http.get("/metrics") as response:
            assert response.status == 401 and response.headers["WWW-Authenticate"].startswith("Bearer")
        assert (await authorised.get("/topics"))[0] == 200
        server.ready = False  # as while stopping
        status, ready = await anonymous.get("/readyz")
        assert status == 503 and ready["ready"] is False
    finally:
        await http.close()
        await server.stop()
        await cluster.stop()


async def test_bad_input_is_a_4xx_naming_the_field(env: tuple[MockCluster, Api]) -> None:
    _, api = env
    cases: list[tuple[str, str, Any, dict[str, Any], int, str]] = [
        ("POST", "/topics", {"name": "t", "partitions": "three"}, {}, 400, "body.partitions"),
        ("POST", "/topics", {"partitions": 3}, {}, 400, "body.name"),
        ("POST", "/topics", {"name": "bad name!"}, {}, 400, "body.name"),
        ("POST", "/topics", {"name": "t", "colour": "red"}, {}, 400, "body.colour"),
        ("POST", "/topics", {"name": "t", "replication_factor": 4}, {}, 422, "body.replication_factor"),
        ("POST", "/topics", {"name": "t", "configs": {"retention.ms": "soon"}}, {}, 422, "body.configs"),
        ("GET", "/events", None, {"since_seq": "x"}, 400, "query.since_seq"),
        ("GET", "/events", None, {"grop": "g"}, 400, "query.grop"),
        ("GET", "/brokers/abc", None, {}, 400, "path.broker_id"),
        ("POST", "/faults/errors", {"api": "Produce", "errors": ["NOT_AN_ERROR"]}, {}, 400, "body.errors[0]"),
        ("POST", "/faults/errors", {"api": "Fetch", "errors": ["NONE"], "topic": "t"}, {}, 422, "body.partition"),
        ("POST", "/faults/latency", {"ms": -5}, {}, 400, "body.ms"),
        ("POST", "/faults/latency", {"ms": 5, "broker": 99}, {}, 404, "body.broker"),
        ("POST", "/clock/advance", {"ms": 1.5}, {}, 400, "body.ms"),
    ]
    for method, path, body, query, status, field in cases:
        got, answer = await api.call(method, path, body, **query)
        assert (got, answer.get("field")) == (status, field), f"{method} {path} {body} {query}: {got} {answer}"
        assert answer["error"]
    async with api.http.post("/topics", data=b"{not json", headers={"Content-Type": "application/json"}) as response:
        assert response.status == 400 and (await response.json())["field"] == "body"
    async with api.http.patch("/topics") as response:
        assert response.status == 405 and "GET" in response.headers["Allow"]
    status, answer = await api.get("/nowhere")
    assert status == 404 and "openapi.json" in answer["error"]


# -- cluster, topics and records -----------------------------------------------------------------------


async def test_topics_and_records_round_trip_through_a_real_client(env: tuple[MockCluster, Api]) -> None:
    cluster, api = env
    topic = await api.ok("POST", "/topics", {"name": "orders", "partitions": 3, "configs": {"cleanup.policy": "compact"}})
    assert (topic["name"], len(topic["partitions"]), topic["configs"]) == ("orders", 3, {"cleanup.policy": "compact"})
    assert (await api.post("/topics", {"name": "orders"}))[0] == 409
    assert [t["name"] for t in (await api.ok("GET", "/topics"))["topics"]] == ["orders"]
    described = await api.ok("GET", "/cluster")
    assert [b["node_id"] for b in described["brokers"]] == [1, 2, 3] and described["bootstrap_servers"] == cluster.bootstrap_servers

    placed = await api.ok("POST", "/topics/orders/records", {
        "records": [
            {"key": "k1", "value": "hello", "headers": [{"key": "h", "value": "v"}, {"key": "nul", "value": None}]},
            {"key": "k2", "value": None, "partition": 2, "timestamp": 1_700_000_000_000},
        ],
    })  # fmt: skip
    # A compacted topic takes no record without a key, as Kafka's LogValidator refuses it.
    status, keyless = await api.post("/topics/orders/records", {"records": [{"key": None, "value": "v", "partition": 0}]})
    assert (status, keyless["kafka_error"]) == (422, "INVALID_RECORD")
    binary = bytes(range(256))
    await api.ok("POST", "/topics/orders/records", {
        "encoding": "base64", "partition": 1,
        "records": [{"key": base64.b64encode(b"\xff").decode(), "value": base64.b64encode(binary).decode()}],
    })  # fmt: skip
    (first, second) = placed["offsets"]
    assert second["partition"] == 2 and second["offset"] == (1 if first["partition"] == 2 else 0)

    # A real consumer reads what HTTP produced.
    consumer = AIOKafkaConsumer("orders", bootstrap_servers=cluster.bootstrap_servers, auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    try:
        got: list[Any] = []
        async with asyncio.timeout(DEADLINE_S):
            while len(got) < 3:
                for records in (await consumer.getmany(timeout_ms=200)).values():
                    got += records
    finally:
        await consumer.stop()
    by_value = {r.value: r for r in got}
    assert by_value[b"hello"].key == b"k1" and by_value[b"hello"].partition == first["partition"]
    assert list(by_value[b"hello"].headers) == [("h", b"v"), ("nul", None)]
    assert by_value[binary].key == b"\xff" and by_value[binary].partition == 1
    assert by_value[None].timestamp == 1_700_000_000_000

    # And HTTP reads what a real producer wrote.
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
    await producer.start()
    try:
        await producer.send_and_wait("orders", b"from aiokafka", key=b"p", partition=0, headers=[("x", b"y")])
    finally:
        await producer.stop()
    read = await api.ok("GET", "/topics/orders/partitions/0/records", offset=0)
    values = [r["value"] for r in read["records"]]
    assert "from aiokafka" in values and read["next_offset"] == read["log_end_offset"]
    mine = read["records"][values.index("from aiokafka")]
    assert mine["key"] == "p" and mine["headers"] == [{"key": "x", "value": "y"}]
    status, refused = await api.get("/topics/orders/partitions/1/records")
    assert status == 422 and "encoding=base64" in refused["error"]
    as_b64 = await api.ok("GET", "/topics/orders/partitions/1/records", encoding="base64")
    assert base64.b64decode(as_b64["records"][0]["value"]) == binary
    assert (await api.get("/topics/orders/partitions/7/records"))[0] == 404

    assert (await api.call("DELETE", "/topics/orders"))[0] == 204
    assert (await api.get("/topics/orders"))[0] == 404


# -- groups ----------------------------------------------------------------------------------------------


async def test_groups_describe_expire_and_rebalance_as_a_real_consumer_sees_them(env: tuple[MockCluster, Api]) -> None:
    cluster, api = env
    await api.ok("POST", "/topics", {"name": "jobs", "partitions": 4})
    consumers = [
        AIOKafkaConsumer(
            "jobs", bootstrap_servers=cluster.bootstrap_servers, group_id="workers", client_id=f"worker-{i}",
            session_timeout_ms=6000, heartbeat_interval_ms=100, auto_offset_reset="earliest",
        )
        for i in range(2)
    ]  # fmt: skip
    try:
        for c in consumers:
            await c.start()
        # aiokafka joins while it is being polled: keep both polling in the background.
        polling = [asyncio.create_task(_poll(c)) for c in consumers]
        group = await api.ok("GET", "/groups/workers/wait", state="Stable", members=2, timeout=int(DEADLINE_S))
        assert (group["type"], group["protocol_type"]) == ("classic", "consumer") and group["coordinator"] in (1, 2, 3)
        owned = sorted(p for m in group["members"] for p in m["assignment"]["jobs"])
        assert owned == [0, 1, 2, 3] and all(m["subscription"] == ["jobs"] for m in group["members"])
        listed = (await api.ok("GET", "/groups"))["groups"]
        assert listed == [{"group_id": "workers", "type": "classic", "state": "Stable", "generation_id": group["generation_id"],
                           "protocol_type": "consumer", "members": 2}]  # fmt: skip

        # Commits show up as committed offsets.
        await api.ok("POST", "/topics/jobs/records", {"records": [{"value": f"job {i}", "partition": i % 4} for i in range(8)]})
        await consumers[0].commit()
        await consumers[1].commit()
        for p in range(4):
            waited = await api.ok("GET", "/groups/workers/offsets/wait", topic="jobs", partition=p, offset=2)
            assert waited["offsets"][str(p)] == 2
        offsets = await api.ok("GET", "/groups/workers/offsets", topic="jobs")
        assert offsets == {"group_id": "workers", "offsets": {"jobs": {"0": 2, "1": 2, "2": 2, "3": 2}}}

        # Force a rebalance: the consumers rejoin into the next generation.
        since = (await api.ok("GET", "/events"))["last_seq"]
        assert await api.ok("POST", "/groups/workers/rebalance", {"reason": "test"}) == {"state": "PreparingRebalance"}
        again = await api.ok("GET", "/groups/workers/wait", state="Stable", members=2, generation_at_least=group["generation_id"] + 1)
        assert again["generation_id"] > group["generation_id"]

        # Expire worker-1's session: the group rebalances without it; its consumer finds out and rejoins.
        expired = await api.ok("POST", "/groups/workers/expire", {"client_id": "worker-1"})
        event = await api.ok("GET", "/events/wait", type="member.expired", group_id="workers", since_seq=since)
        assert event["member_id"] == expired["member_id"] and event["details"]["kind"] == "session_timeout"
        events = (await api.ok("GET", "/events", type="member.", group_id="workers", since_seq=since))["events"]
        assert any(e["type"] == "member.expired" and e["member_id"] == expired["member_id"] for e in events), events
        back = await api.ok("GET", "/groups/workers/wait", state="Stable", members=2, generation_at_least=again["generation_id"] + 1)
        assert expired["member_id"] not in {m["member_id"] for m in back["members"]}  # it rejoined with a new id
        assert {m["client_id"] for m in back["members"]} == {"worker-0", "worker-1"}

        assert (await api.post("/groups/nobody/expire", {}))[0] == 404
        status, answer = await api.get("/groups/workers/wait", state="Dead", timeout=0)
        assert status == 408 and "timed out" in answer["error"]
        for task in polling:
            task.cancel()
        await asyncio.gather(*polling, return_exceptions=True)
    finally:
        for c in consumers:
            await c.stop()


async def test_offsets_of_an_unknown_group_are_404_and_a_simple_group_has_them(env: tuple[MockCluster, Api]) -> None:
    """GET /groups/{id}/offsets answers 404 for a group that does not exist, as GET /groups/{id}
    does (docs/http.md), and 200 for a simple group: one a manual-assignment consumer created by
    committing (OffsetCommit with generation -1), with no members."""
    cluster, api = env
    for path in ("/groups/nobody", "/groups/nobody/offsets"):
        status, answer = await api.get(path)
        assert status == 404 and "nobody" in answer["error"], (path, status, answer)
    assert (await api.get("/groups/nobody/offsets", topic="t"))[0] == 404

    await api.ok("POST", "/topics", {"name": "t", "partitions": 2})
    consumer = AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id="simple", enable_auto_commit=False)
    await consumer.start()
    try:
        consumer.assign([TopicPartition("t", 1)])
        await consumer.commit({TopicPartition("t", 1): 5})
    finally:
        await consumer.stop()
    assert (await api.ok("GET", "/groups/simple"))["members"] == []
    assert await api.ok("GET", "/groups/simple/offsets") == {"group_id": "simple", "offsets": {"t": {"1": 5}}}
    assert await api.ok("GET", "/groups/simple/offsets", topic="other") == {"group_id": "simple", "offsets": {}}


async def _poll(consumer: AIOKafkaConsumer) -> None:
    while True:
        try:
            await consumer.getmany(timeout_ms=100)
        except KafkaError:
            await asyncio.sleep(0.05)


# -- faults -----------------------------------------------------------------------------------------------


async def test_faults_pushed_over_http_reach_a_real_client_and_can_be_listed_and_cleared(env: tuple[MockCluster, Api]) -> None:
    cluster, api = env
    await api.ok("POST", "/topics", {"name": "t", "partitions": 1})
    await api.ok("PUT", "/requests/log", {"enabled": True})
    pushed = await api.ok("POST", "/faults/errors", {"api": "Produce", "errors": ["NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_OR_FOLLOWER"]})
    assert pushed["pending_errors"] == {"Produce": ["NOT_LEADER_OR_FOLLOWER"] * 2}
    latency = await api.ok("POST", "/faults/latency", {"ms": 1, "api": "Metadata"})
    drops = await api.ok("POST", "/faults/drop", {"api": "DescribeGroups", "count": 2})
    faults = await api.ok("GET", "/faults")
    listed = {i["id"]: i for i in faults["interceptors"]}
    assert latency["id"] in listed and listed[latency["id"]]["api"] == "Metadata" and listed[latency["id"]]["keep"] is True
    assert [i["name"] for i in drops["interceptors"]] == ["drop", "drop"]
    assert not any("metrics" in i["name"] for i in faults["interceptors"])  # the API's own observer is not a fault

    # aiokafka retries NOT_LEADER_OR_FOLLOWER and gets through once the pushed errors are used up.
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, retry_backoff_ms=10)
    await producer.start()
    try:
        await producer.send_and_wait("t", b"after two failures", partition=0)
    finally:
        await producer.stop()
    first = await api.ok("GET", "/requests/wait", api="Produce", error="NOT_LEADER_OR_FOLLOWER", timeout=1)
    assert first["outcome"] == "intercepted" and first["errors"] == ["NOT_LEADER_OR_FOLLOWER"]
    status, answer = await api.get("/requests/wait", error="NONE")
    assert (status, answer["field"]) == (400, "query.api")
    refused = (await api.ok("GET", "/requests", api="Produce", error="NOT_LEADER_OR_FOLLOWER"))["requests"]
    assert len(refused) == 2 and all(r["outcome"] == "intercepted" for r in refused)
    assert (await api.ok("GET", "/faults"))["pending_errors"] == {}

    assert (await api.call("DELETE", f"/faults/interceptors/{latency['id']}"))[0] == 204
    assert (await api.call("DELETE", f"/faults/interceptors/{latency['id']}"))[0] == 404
    capped = await api.ok("POST", "/faults/api-versions", {"api": "Fetch", "max_version": 11})
    assert capped["api_version_caps"] == {"Fetch": 11}

    down = await api.ok("POST", "/brokers/2/down")
    assert (await api.ok("GET", "/brokers/2"))["up"] is False and isinstance(down["leaders_moved"], dict)
    assert (await api.post("/brokers/2/down"))[0] == 409
    assert (await api.ok("GET", "/faults"))["brokers_down"] == [2]
    await api.ok("POST", "/brokers/2/up")
    moved = await api.ok("POST", "/topics/t/partitions/0/leader", {"broker_id": 3})
    assert moved["leader_id"] == 3 and moved["leader_epoch"] >= 1
    assert (await api.ok("POST", "/groups/g/coordinator", {"broker_id": 2}))["coordinator"] == 2

    cleared = await api.ok("DELETE", "/faults")
    assert cleared["interceptors"] == [] and cleared["api_version_caps"] == {} and cleared["coordinator_moves"] == {"g": 2}
    # The metrics observer survived the clear: requests are still counted.
    before = _sample(await _metrics(api), "mockbroker_requests_total", api="Metadata")
    consumer = AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap_servers)
    await consumer.start()
    await consumer.topics()
    await consumer.stop()
    assert _sample(await _metrics(api), "mockbroker_requests_total", api="Metadata") > before


async def test_clock_advance_needs_a_manual_clock(env: tuple[MockCluster, Api]) -> None:
    _, api = env
    assert (await api.ok("GET", "/clock"))["manual"] is False
    status, answer = await api.post("/clock/advance", {"ms": 10})
    assert status == 409 and "--manual-clock" in answer["error"]

    cluster = MockCluster(clock=ManualClock(start_ms=1_000_000))
    server, http = await _started(cluster)
    try:
        manual = Api(http)
        assert await manual.ok("GET", "/clock") == {"manual": True, "now_ms": 1_000_000}
        assert await manual.ok("POST", "/clock/advance", {"ms": 2500}) == {"manual": True, "now_ms": 1_002_500}
    finally:
        await http.close()
        await server.stop()
        await cluster.stop()


# -- events and metrics -----------------------------------------------------------------------------------


async def test_event_stream_sends_the_past_then_each_new_event(env: tuple[MockCluster, Api]) -> None:
    cluster, api = env
    cluster.events.record("control.test", reason="before the stream")
    async with api.http.get("/events/stream", params={"type": "control."}) as response:
        assert response.status == 200 and response.headers["Content-Type"].startswith("text/event-stream")
        seen: list[dict[str, Any]] = []
        ids: list[int] = []

        async def read_events(n: int) -> None:
            async with asyncio.timeout(DEADLINE_S):
                while len(seen) < n:
                    line = (await response.content.readline()).decode().rstrip("\n")
                    if line.startswith("id: "):
                        ids.append(int(line[4:]))
                    elif line.startswith("data: "):
                        seen.append(json.loads(line[6:]))

        await read_events(1)
        assert seen[0]["reason"] == "before the stream"
        cluster.events.record("group.ignored", reason="filtered out")
        await api.ok("POST", "/brokers/3/down")
        await read_events(2)
        assert seen[1]["type"] == "control.broker_down" and seen[1]["broker_id"] == 3
        assert ids == [e["seq"] for e in seen]
    # Resuming with Last-Event-ID gives what came after it.
    async with api.http.get("/events/stream", params={"type": "control."}, headers={"Last-Event-ID": str(ids[0])}) as response:
        async with asyncio.timeout(DEADLINE_S):
            while not (line := (await response.content.readline()).decode()).startswith("data: "):
                pass
        assert json.loads(line[6:])["type"] == "control.broker_down"


async def test_metrics_count_requests_errors_bytes_and_groups(env: tuple[MockCluster, Api]) -> None:
    cluster, api = env
    await api.ok("POST", "/topics", {"name": "m", "partitions": 1})
    await api.ok("POST", "/faults/errors", {"api": "Produce", "errors": ["NOT_LEADER_OR_FOLLOWER"]})
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, retry_backoff_ms=10)
    await producer.start()
    try:
        await producer.send_and_wait("m", b"x" * 1000, partition=0)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer("m", bootstrap_servers=cluster.bootstrap_servers, group_id="mg", auto_offset_reset="earliest")
    await consumer.start()
    try:
        async with asyncio.timeout(DEADLINE_S):
            while not await consumer.getmany(timeout_ms=200):
                pass
        text = await _metrics(api)
    finally:
        await consumer.stop()
    assert _sample(text, "mockbroker_requests_total", api="Produce") >= 2
    assert _sample(text, "mockbroker_request_errors_total", api="Produce", error="NOT_LEADER_OR_FOLLOWER") == 1
    assert _sample(text, "mockbroker_bytes_in_total", topic="m") > 1000  # one batch: the record and its framing
    assert _sample(text, "mockbroker_bytes_out_total", topic="m") >= _sample(text, "mockbroker_bytes_in_total", topic="m")
    assert _sample(text, "mockbroker_groups", type="classic", state="Stable") == 1
    assert _sample(text, "mockbroker_group_members", group="mg", type="classic") == 1
    assert _sample(text, "mockbroker_rebalances_total", group="mg", type="classic") >= 1
    assert _sample(text, "mockbroker_brokers", state="up") == 3
    assert _sample(text, "mockbroker_broker_bugs_total") == 0
    for line in text.splitlines():  # the exposition format, line by line
        assert re.fullmatch(r'# (HELP|TYPE) \w+ .+|\w+(\{(\w+="([^"\\]|\\.)*",?)*\})? [0-9.e+-]+', line), line


async def _metrics(api: Api) -> str:
    async with api.http.get("/metrics", headers=api.headers) as response:
        # Prometheus' text exposition format 0.0.4 says so in its content type.
        assert response.status == 200 and response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        return await response.text()


def _sample(text: str, name: str, **labels: str) -> float:
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        if line.startswith(f"{name}{{{want}}} " if labels else f"{name} "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0
