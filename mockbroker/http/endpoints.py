"""The endpoints of the HTTP control API: one coroutine per operation, each a thin call of a
``Control`` method (mockbroker/control/) with its answer shaped as JSON. The operations table
(mockbroker/http/operations.py) routes to them; parameters and bodies arrive already checked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from mockbroker.control import (
    AnyGroupSnapshot,
    ConsumerGroupSnapshot,
    Control,
    ControlError,
    NotFound,
    StreamsGroupSnapshot,
)
from mockbroker.events import Event
from mockbroker.http.calls import Call, Param, Reply, parse_param
from mockbroker.http.components import STATES_BY_TYPE
from mockbroker.http.metrics import CONTENT_TYPE, Metrics
from mockbroker.http.records import produce_items, record_json
from mockbroker.http.schema import MAX_I64, BadInput, s_int
from mockbroker.intercept import Interceptor, api_key_of, error_code_of
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.registry import APIS

if TYPE_CHECKING:
    from mockbroker.cluster import MockCluster

SSE_KEEPALIVE_S = 15.0
LAST_EVENT_ID = Param("Last-Event-ID", "header", s_int(0, MAX_I64))


class Endpoints:
    """The handlers of one AdminServer. ``ready`` and ``document`` are the server's readiness and
    OpenAPI document; ``closing`` is set when it stops (ending event streams)."""

    def __init__(
        self, cluster: MockCluster, metrics: Metrics, *, ready: Callable[[], bool], document: Callable[[], dict[str, Any]],
        closing: asyncio.Event,
    ) -> None:  # fmt: skip
        self._cluster = cluster
        self._control: Control = cluster.control
        self._metrics = metrics
        self._ready = ready
        self._document = document
        self._closing = closing
        self._interceptor_ids: dict[int, Interceptor] = {}  # the API's ids of interceptors
        self._ids_by_object: dict[int, int] = {}  # id(interceptor) -> its API id
        self._next_id = 1

    # -- handlers: health ------------------------------------------------------------------------------

    async def healthz(self, call: Call) -> Any:
        return {"status": "ok"}

    async def readyz(self, call: Call) -> Any:
        snap = await self._control.describe_cluster()
        up = sum(b.up for b in snap.brokers)
        body = {"ready": self._ready() and up > 0, "bootstrap_servers": self._cluster.bootstrap_servers, "brokers_up": up}
        return Reply(200 if body["ready"] else 503, body)

    async def metrics(self, call: Call) -> web.StreamResponse:
        text = await self._metrics.render(self._cluster)
        return web.Response(body=text.encode(), headers={"Content-Type": CONTENT_TYPE})

    async def openapi(self, call: Call) -> Any:
        return self._document()

    # -- handlers: cluster -----------------------------------------------------------------------------

    async def cluster(self, call: Call) -> Any:
        snap = await self._control.describe_cluster()
        return {**asdict(snap), "bootstrap_servers": self._cluster.bootstrap_servers}

    async def security(self, call: Call) -> Any:
        snap = await self._control.describe_security()
        listeners = [{**asdict(listener), "sasl_mechanisms": list(listener.sasl_mechanisms)} for listener in snap.listeners]
        # The CA certificate itself (public), for a client in another container than the broker,
        # where ssl_ca_path names no file it can read.
        pem = Path(snap.ssl_ca_path).read_text() if snap.ssl_ca_path else None
        return {**asdict(snap), "sasl_mechanisms": list(snap.sasl_mechanisms), "listeners": listeners, "ssl_ca_pem": pem}

    async def users(self, call: Call) -> Any:
        return {"users": await self._control.users()}

    async def put_user(self, call: Call) -> Any:
        await self._control.add_user(call.path["user"], call.body["password"], reason="http")
        return Reply(204)

    async def delete_user(self, call: Call) -> Any:
        await self._control.remove_user(call.path["user"], reason="http")
        return Reply(204)

    async def acls(self, call: Call) -> Any:
        return {"acls": await self._control.acls()}

    async def add_acl(self, call: Call) -> Any:
        return await self._control.add_acl(**call.body, reason="http")

    async def remove_acls(self, call: Call) -> Any:
        return {"removed": await self._control.remove_acls(**call.body, reason="http")}

    async def brokers(self, call: Call) -> Any:
        return {"brokers": [asdict(b) for b in (await self._control.describe_cluster()).brokers]}

    async def broker(self, call: Call) -> Any:
        for b in (await self._control.describe_cluster()).brokers:
            if b.node_id == call.path["broker_id"]:
                return asdict(b)
        raise NotFound(f"no broker {call.path['broker_id']}; brokers are {sorted(self._cluster.brokers)}")

    async def broker_down(self, call: Call) -> Any:
        return {"leaders_moved": await self._control.broker_down(call.path["broker_id"])}

    async def broker_up(self, call: Call) -> Any:
        return {"leaders_moved": await self._control.broker_up(call.path["broker_id"])}

    # -- handlers: topics and records --------------------------------------------------------------------

    async def topics(self, call: Call) -> Any:
        topics = await self._control.topics(include_internal=call.query.get("internal", False))
        return {"topics": [asdict(t) for t in topics.values()]}

    async def create_topic(self, call: Call) -> Any:
        b = call.body
        snap = await self._control.create_topic(b["name"], b.get("partitions", 1), b.get("replication_factor", 1), b.get("configs"))
        return asdict(snap)

    async def topic(self, call: Call) -> Any:
        return asdict(await self._control.topic(call.path["topic"]))

    async def delete_topic(self, call: Call) -> Any:
        await self._control.delete_topic(call.path["topic"])
        return Reply(204)

    async def produce(self, call: Call) -> Any:
        records = produce_items(call.body["records"], call.body.get("encoding", "utf-8"))
        placed = await self._control.produce(
            call.path["topic"], records, partition=call.body.get("partition"), compression=call.body.get("compression", "none")
        )
        return {"offsets": [{"partition": p, "offset": o} for p, o in placed]}

    async def read(self, call: Call) -> Any:
        topic, partition = call.path["topic"], call.path["partition"]
        offset = call.query.get("offset", 0)
        encoding = call.query.get("encoding", "utf-8")
        records = await self._control.read(topic, partition, offset, call.query.get("limit", 100))
        end = (await self._control.log_end_offsets(topic))[partition]
        return {
            "records": [record_json(r, encoding) for r in records],
            "next_offset": records[-1].offset + 1 if records else max(offset, min(offset, end)),
            "log_end_offset": end,
        }

    async def move_leader(self, call: Call) -> Any:
        topic, partition = call.path["topic"], call.path["partition"]
        epoch = await self._control.move_leader(topic, partition, call.body.get("broker_id"))
        leader = (await self._control.topic(topic)).partitions[partition].leader_id
        return {"leader_id": leader, "leader_epoch": epoch}

    # -- handlers: groups --------------------------------------------------------------------------------

    async def groups(self, call: Call) -> Any:
        wanted_type, wanted_state = call.query.get("type"), call.query.get("state")
        out = []
        for group_id, listing in (await self._control.groups()).items():
            if (wanted_type is not None and listing.type != wanted_type) or (wanted_state is not None and listing.state != wanted_state):
                continue
            g = await self._control.describe_group(group_id)
            if g is not None:
                out.append({
                    "group_id": g.group_id, "type": g.type, "state": g.state, "generation_id": g.generation_id,
                    "protocol_type": g.protocol_type, "members": len(g.members),
                })  # fmt: skip
        return {"groups": out}

    async def _group_json(self, group_id: str) -> dict[str, Any]:
        g = await self._control.describe_group(group_id)
        if g is None:
            raise NotFound(f"no group {group_id!r}; groups are {sorted(await self._control.groups())}")
        return await self._snapshot_json(g)

    async def _snapshot_json(self, g: AnyGroupSnapshot) -> dict[str, Any]:
        """A snapshot as the API shows it: its to_json(), the coordinator, and for a consumer group
        whether it is reconciled (a property, which to_json() leaves out)."""
        out = {**g.to_json(), "coordinator": await self._control.coordinator(g.group_id)}
        if isinstance(g, (ConsumerGroupSnapshot, StreamsGroupSnapshot)):
            out["reconciled"] = g.reconciled
        return out

    async def group(self, call: Call) -> Any:
        return await self._group_json(call.path["group_id"])

    async def offsets(self, call: Call) -> Any:
        group_id = call.path["group_id"]
        # 404 for an unknown group, as the other group endpoints answer (a group with committed
        # offsets exists: a commit creates a simple group, and its offsets outlive its members).
        if group_id not in await self._control.groups() and not await self._control.committed_offsets(group_id):
            raise NotFound(f"no group {group_id!r}; groups are {sorted(await self._control.groups())}")
        committed = await self._control.committed_offsets(group_id, call.query.get("topic"))
        return {"group_id": group_id, "offsets": {t: {str(p): o for p, o in parts.items()} for t, parts in committed.items()}}

    async def expire(self, call: Call) -> Any:
        b = call.body
        member_id = await self._control.expire_session(
            call.path["group_id"], b.get("member_id"), instance_id=b.get("instance_id"), client_id=b.get("client_id")
        )
        return {"member_id": member_id}

    async def expire_lock(self, call: Call) -> Any:
        b = call.body
        offsets = await self._control.expire_acquisition_lock(call.path["group_id"], b["topic"], b["partition"], b.get("offsets"))
        return {"offsets": offsets}

    async def rebalance(self, call: Call) -> Any:
        reason = call.body.get("reason", "forced over the HTTP control API (POST /groups/{group_id}/rebalance)")
        return {"state": await self._control.force_rebalance(call.path["group_id"], reason)}

    async def move_coordinator(self, call: Call) -> Any:
        group_id, broker_id = call.path["group_id"], call.body["broker_id"]
        previous = await self._control.move_coordinator(group_id, broker_id)
        return {"previous": previous, "coordinator": await self._control.coordinator(group_id)}

    # -- transactions ---------------------------------------------------------------------------------

    async def transactions(self, call: Call) -> Any:
        found = await self._control.transactions(state=call.query.get("state"))
        return {"transactions": [t.to_json() for t in found.values()]}

    async def transaction(self, call: Call) -> Any:
        tid = call.path["transactional_id"]
        found = await self._control.describe_transaction(tid)
        if found is None:
            raise NotFound(f"no transactional id {tid!r}; GET /transactions lists them")
        return found.to_json()

    async def abort_transaction(self, call: Call) -> Any:
        reason = call.body.get("reason", "aborted over the HTTP control API (POST /transactions/{transactional_id}/abort)")
        return (await self._control.abort_transaction(call.path["transactional_id"], reason)).to_json()

    async def move_transaction_coordinator(self, call: Call) -> Any:
        tid, broker_id = call.path["transactional_id"], call.body["broker_id"]
        previous = await self._control.move_transaction_coordinator(tid, broker_id)
        return {"previous": previous, "coordinator": await self._control.transaction_coordinator(tid)}

    async def load_transaction_coordinator(self, call: Call) -> Any:
        tid = call.path["transactional_id"]
        until = await self._control.load_transaction_coordinator(tid, call.body["duration_ms"])
        return {"until_ms": until, "coordinator": await self._control.transaction_coordinator(tid)}

    async def wait_group(self, call: Call) -> Any:
        q = call.query
        state, group_type = q.get("state", "Stable"), q.get("type")
        if group_type is not None and state != "any" and state not in STATES_BY_TYPE[group_type]:
            raise BadInput(
                "query.state", f"{state} is not a state of a {group_type} group ({', '.join(STATES_BY_TYPE[group_type])})", status=422
            )
        snap = await self._control.wait_for_group(
            call.path["group_id"], None if state == "any" else state, q.get("members"),
            generation_at_least=q.get("generation_at_least"), reconciled=q.get("reconciled", False),
            group_type=group_type, timeout=q.get("timeout", 30),
        )  # fmt: skip
        return await self._snapshot_json(snap)

    async def wait_commit(self, call: Call) -> Any:
        q, group_id = call.query, call.path["group_id"]
        committed = await self._control.wait_for_commit(
            group_id, q["topic"], q.get("partition"), q.get("offset"), timeout=q.get("timeout", 30)
        )
        return {"group_id": group_id, "topic": q["topic"], "offsets": {str(p): o for p, o in committed.items()}}

    # -- handlers: faults --------------------------------------------------------------------------------

    def _interceptor_json(self, interceptor: Interceptor) -> dict[str, Any]:
        # Keyed by id(): safe, as both maps hold the interceptor (its id cannot be reused meanwhile).
        fault_id = self._ids_by_object.get(id(interceptor))
        if fault_id is None:
            fault_id = self._next_id
            self._next_id += 1
            self._interceptor_ids[fault_id] = interceptor
            self._ids_by_object[id(interceptor)] = fault_id
        return {
            "id": fault_id,
            "name": interceptor.name,
            "api": None if interceptor.api_key is None else APIS[interceptor.api_key].name,
            "broker": interceptor.broker,
            "keep": interceptor.keep,
            "calls": interceptor.calls,
        }

    async def _faults_json(self) -> dict[str, Any]:
        snap = await self._control.faults()
        listed = [i for i in snap.interceptors if not self._metrics.owns(i)]
        # Forget ids of interceptors that are gone (used up one-shots, removed).
        live = {id(i) for i in listed}
        self._interceptor_ids = {k: v for k, v in self._interceptor_ids.items() if id(v) in live}
        self._ids_by_object = {id(v): k for k, v in self._interceptor_ids.items()}
        return {
            "pending_errors": snap.pending_errors,
            "interceptors": [self._interceptor_json(i) for i in listed],
            "brokers_down": list(snap.brokers_down),
            "coordinator_moves": snap.coordinator_moves,
            "api_version_caps": snap.api_version_caps,
            "transaction_coordinator_moves": snap.transaction_coordinator_moves,
            "transaction_coordinators_loading": snap.transaction_coordinators_loading,
        }

    async def faults(self, call: Call) -> Any:
        return await self._faults_json()

    async def clear_faults(self, call: Call) -> Any:
        await self._control.clear_faults()
        await self._metrics.install()  # clear_faults removed every interceptor, the metrics' own too
        return await self._faults_json()

    async def remove_interceptor(self, call: Call) -> Any:
        await self._faults_json()  # refresh the ids
        interceptor = self._interceptor_ids.get(call.path["interceptor_id"])
        if interceptor is None or not interceptor.active:
            raise NotFound(f"no interceptor {call.path['interceptor_id']} in force; GET /faults lists them")
        interceptor.remove()
        return Reply(204)

    async def push_errors(self, call: Call) -> Any:
        b = call.body
        api = _api(b["api"], "body.api")
        codes = [error_code_of(e) for e in b["errors"]]  # names the schema's enum allows
        topic, partition, broker = b.get("topic"), b.get("partition"), b.get("broker")
        if (topic is None) != (partition is None):
            raise BadInput("body.partition" if partition is None else "body.topic", "topic and partition go together", status=422)
        self._known_broker(broker, "body.broker")
        try:
            await self._control.push_errors(api, *codes, broker=broker, topic=topic, partition=partition)
        except ValueError as exc:  # an API without an error field for this level: Kafka's shapes refuse it
            raise BadInput("body.topic" if topic is not None else "body.api", str(exc), status=422) from None
        return await self._faults_json()

    async def latency(self, call: Call) -> Any:
        b = call.body
        api = None if b.get("api") is None else _api(b["api"], "body.api")
        self._known_broker(b.get("broker"), "body.broker")
        interceptor = await self._control.set_latency(b["ms"], api=api, broker=b.get("broker"))
        return self._interceptor_json(interceptor)

    async def disconnect(self, call: Call) -> Any:
        api, broker, count = self._request_filter(call.body)
        made = await self._control.disconnect_next(api, broker=broker, count=count)
        return {"interceptors": [self._interceptor_json(i) for i in made]}

    async def drop(self, call: Call) -> Any:
        api, broker, count = self._request_filter(call.body)
        made = await self._control.drop_next(api, broker=broker, count=count)
        return {"interceptors": [self._interceptor_json(i) for i in made]}

    async def close_connections(self, call: Call) -> Any:
        broker = call.body.get("broker")
        self._known_broker(broker, "body.broker")
        return {"closed": await self._control.disconnect_all(broker)}

    async def cap_api_version(self, call: Call) -> Any:
        await self._control.cap_api_version(_api(call.body["api"], "body.api"), call.body["max_version"])
        return await self._faults_json()

    def _request_filter(self, body: Mapping[str, Any]) -> tuple[ApiKey | None, int | None, int]:
        api = None if body.get("api") is None else _api(body["api"], "body.api")
        self._known_broker(body.get("broker"), "body.broker")
        return api, body.get("broker"), body.get("count", 1)

    def _known_broker(self, broker: int | None, where: str) -> None:
        if broker is not None and broker not in self._cluster.brokers:
            raise BadInput(where, f"no broker {broker}; brokers are {sorted(self._cluster.brokers)}", status=404)

    # -- handlers: clock, events, requests -----------------------------------------------------------------

    async def clock(self, call: Call) -> Any:
        snap = await self._control.describe_cluster()
        return {"manual": snap.manual_clock, "now_ms": snap.now_ms}

    async def advance(self, call: Call) -> Any:
        if not (await self._control.describe_cluster()).manual_clock:
            raise ControlError("the cluster runs on real time; start it with --manual-clock to advance its clock by hand")
        now = await self._control.advance(call.body["ms"])
        return {"manual": True, "now_ms": now}

    async def events(self, call: Call) -> Any:
        q = call.query
        events = await self._control.events(q.get("type"), q.get("group_id"), q.get("since_seq", 0))
        return {"events": [e.to_json() for e in events[: q.get("limit", 10_000)]], "last_seq": await self._control.last_event_seq()}

    async def event_stream(self, call: Call) -> web.StreamResponse:
        q = call.query
        since = q.get("since_seq", 0)
        last_id = call.request.headers.get("Last-Event-ID")
        if last_id is not None:
            since = parse_param(LAST_EVENT_ID, last_id)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        await response.prepare(call.request)
        wake = asyncio.Event()
        unsubscribe = self._cluster.events.subscribe(lambda _: wake.set())
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await response.write(b": mockbroker event stream\n\n")
            while not self._closing.is_set():
                wake.clear()
                batch = await self._control.events(q.get("type"), q.get("group_id"), since)
                # Events filtered out need not be scanned again: move on to the newest seq.
                newest = await self._control.last_event_seq()
                for event in batch:
                    await response.write(_sse(event))
                since = max(since, newest)
                waiter = asyncio.ensure_future(wake.wait())
                done, _ = await asyncio.wait({waiter, closing}, timeout=SSE_KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if not done:
                    await response.write(b": keep-alive\n\n")
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            unsubscribe()
            closing.cancel()
        return response

    async def wait_event(self, call: Call) -> Any:
        q = call.query
        event = await self._control.wait_for_event(q["type"], q.get("group_id"), since_seq=q.get("since_seq", 0), timeout=q.get("timeout", 30))
        return event.to_json()

    async def wait_request(self, call: Call) -> Any:
        q = call.query
        record = await self._control.wait_for_request(
            _api(q["api"], "query.api"), since_seq=q.get("since_seq", 0), error=q.get("error"), broker=q.get("broker"),
            client_id=q.get("client_id"), timeout=q.get("timeout", 30),
        )  # fmt: skip
        return record.to_json()

    async def requests(self, call: Call) -> Any:
        q = call.query
        api = None if q.get("api") is None else _api(q["api"], "query.api")
        error = None if q.get("error") is None else error_code_of(q["error"])
        found = await self._control.requests(
            api, broker=q.get("broker"), client_id=q.get("client_id"), error=error, outcome=q.get("outcome"),
            since_seq=q.get("since_seq", 0),
        )  # fmt: skip
        return {"enabled": self._control.hooks.log.enabled, "requests": [r.to_json() for r in found[: q.get("limit", 10_000)]]}

    async def request_log(self, call: Call) -> Any:
        await self._control.enable_request_log(call.body["enabled"])
        return {"ok": True}



def _api(name: str, where: str) -> ApiKey:
    try:
        return ApiKey(api_key_of(name))
    except ValueError as exc:
        raise BadInput(where, str(exc)) from None


def _sse(event: Event) -> bytes:
    return f"id: {event.seq}\ndata: {json.dumps(event.to_json(), separators=(',', ':'))}\n\n".encode()
