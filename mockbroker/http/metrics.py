"""The Prometheus metrics of ``GET /metrics`` (text exposition format 0.0.4).

Counters are fed by one observing interceptor on the control hook (requests, error codes, bytes
in and out) and one event-log listener (events, rebalances): no code of their own on the request
path of a broker serving without the admin API. Gauges are read from the control API when scraped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockbroker import __version__
from mockbroker.control import Control
from mockbroker.coordinators.classic.group import GROUP_TYPE_CLASSIC
from mockbroker.coordinators.consumer.group import GROUP_TYPE_CONSUMER
from mockbroker.coordinators.streams.group import GROUP_TYPE_STREAMS
from mockbroker.events import Event
from mockbroker.http.components import STATES_BY_TYPE
from mockbroker.intercept import After, Intercepted, Interceptor, error_codes
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.registry import APIS

if TYPE_CHECKING:
    from mockbroker.cluster import MockCluster

# The exposition format's content type (Prometheus' text format 0.0.4).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

Sample = tuple[dict[str, str], float | int]


@dataclass(slots=True)
class Metrics:
    """Counters for /metrics, fed by one observing interceptor (``control.intercept``) and one
    event-log listener; gauges are read from the control API when scraped."""

    control: Control
    requests: Counter[ApiKey] = field(default_factory=Counter)  # requests seen
    errors: Counter[tuple[ApiKey, int]] = field(default_factory=Counter)  # (api, error code) -> responses
    bytes_in: Counter[str] = field(default_factory=Counter)  # topic -> Produce record bytes appended
    bytes_out: Counter[str] = field(default_factory=Counter)  # topic -> Fetch record bytes returned
    events: Counter[str] = field(default_factory=Counter)  # event type -> count
    # (group, type) -> rebalances: a classic group's transitions to PreparingRebalance, a consumer
    # group's group epoch bumps (KIP-848's rebalance: a new target assignment for a new epoch)
    rebalances: Counter[tuple[str, str]] = field(default_factory=Counter)
    _interceptor: Interceptor | None = None
    _unsubscribe: Callable[[], None] | None = None
    _after: dict[ApiKey, After] = field(default_factory=dict)

    async def install(self) -> None:
        if self._interceptor is None or not self._interceptor.active:
            self._interceptor = await self.control.intercept(None, self._observe, keep=True)
            self._interceptor.name = "metrics (the admin API's /metrics; not a fault)"
        if self._unsubscribe is None:
            self._unsubscribe = self.control.cluster.events.subscribe(self._on_event)

    def uninstall(self) -> None:
        if self._interceptor is not None:
            self._interceptor.remove()
            self._interceptor = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def owns(self, interceptor: Interceptor) -> bool:
        return interceptor is self._interceptor

    # -- counting ----------------------------------------------------------------------------------------

    def _observe(self, seen: Intercepted) -> After:
        key = ApiKey(seen.api_key)
        self.requests[key] += 1
        if key is ApiKey.PRODUCE:
            request = seen.request
            return After(lambda response: self._produced(request, response))
        after = self._after.get(key)
        if after is None:
            after = self._after[key] = After(self._answered_edit(key))
        return after

    def _answered_edit(self, key: ApiKey) -> Callable[[Any], None]:
        def edit(response: Any) -> None:
            for code in error_codes(response):
                self.errors[(key, code)] += 1
            if key is ApiKey.FETCH:
                for topic in response.responses:
                    name = topic.topic or str(topic.topic_id)
                    for p in topic.partitions:
                        if not p.error_code:
                            self.bytes_out[name] += _size(p.records)

        return edit

    def _produced(self, request: Any, response: Any) -> None:
        if response is None:  # acks=0
            return
        for code in error_codes(response):
            self.errors[(ApiKey.PRODUCE, code)] += 1
        failed = {
            (t.name or str(t.topic_id), p.index) for t in response.responses for p in t.partition_responses if p.error_code
        }
        for t in request.topic_data:
            name = t.name or str(t.topic_id)
            for p in t.partition_data:
                if (name, p.index) not in failed:
                    self.bytes_in[name] += _size(p.records)

    def _on_event(self, event: Event) -> None:
        self.events[event.type] += 1
        if not event.group_id:
            return
        if event.type == "group.transition" and event.details.get("to_state") == "PreparingRebalance":
            self.rebalances[(event.group_id, GROUP_TYPE_CLASSIC)] += 1
        elif event.type == "consumer_group.epoch_bumped":
            self.rebalances[(event.group_id, GROUP_TYPE_CONSUMER)] += 1
        elif event.type == "streams_group.epoch_bumped":
            self.rebalances[(event.group_id, GROUP_TYPE_STREAMS)] += 1

    # -- the exposition --------------------------------------------------------------------------------

    async def render(self, cluster: MockCluster) -> str:
        if self._interceptor is None or not self._interceptor.active:
            await self.install()  # someone cleared every interceptor from Python; count again from now
        info, *read = await self._read(cluster)
        out: list[str] = []
        for name, kind, help, samples in [info, *self._counted(), *read]:
            out.append(f"# HELP {name} {help}")
            out.append(f"# TYPE {name} {kind}")
            for labels, value in samples:
                text = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
                out.append(f"{name}{{{text}}} {value}" if text else f"{name} {value}")
        return "\n".join(out) + "\n"

    def _counted(self) -> list[tuple[str, str, str, list[Sample]]]:
        return [
            ("mockbroker_requests_total", "counter", "Kafka requests received, by API",
             [({"api": APIS[k].name}, n) for k, n in sorted(self.requests.items())]),
            ("mockbroker_request_errors_total", "counter",
             "Responses carrying an error code, by API and Kafka error name (once per distinct code per response)",
             [({"api": APIS[k].name, "error": _error_name(e)}, n) for (k, e), n in sorted(self.errors.items())]),
            ("mockbroker_bytes_in_total", "counter", "Record batch bytes appended by Produce, by topic",
             [({"topic": t}, n) for t, n in sorted(self.bytes_in.items())]),
            ("mockbroker_bytes_out_total", "counter", "Record batch bytes returned by Fetch, by topic",
             [({"topic": t}, n) for t, n in sorted(self.bytes_out.items())]),
        ]  # fmt: skip

    async def _read(self, cluster: MockCluster) -> list[tuple[str, str, str, list[Sample]]]:
        """mockbroker_info, then the metrics read from the control API at scrape time (with the
        counted rebalances and events, in the order the exposition has always listed them)."""
        c = self.control
        snap = await c.describe_cluster()
        topics = await c.topics()
        states: Counter[tuple[str, str]] = Counter({(t, s): 0 for t, names in STATES_BY_TYPE.items() for s in names})
        members: dict[tuple[str, str], int] = {}
        for group_id in await c.groups():
            g = await c.describe_group(group_id)
            if g is not None:
                states[(g.type, g.state)] += 1
                members[(group_id, g.type)] = len(g.members)
        up = sum(b.up for b in snap.brokers)
        return [
            ("mockbroker_info", "gauge", "mockbroker version and cluster id",
             [({"version": __version__, "cluster_id": snap.cluster_id}, 1)]),
            ("mockbroker_groups", "gauge", "Groups by type (classic, consumer, streams) and state",
             [({"type": t, "state": s}, n) for (t, s), n in sorted(states.items())]),
            ("mockbroker_group_members", "gauge", "Members of each group",
             [({"group": g, "type": t}, n) for (g, t), n in sorted(members.items())]),
            ("mockbroker_rebalances_total", "counter",
             "Rebalances started, by group: a classic group's transitions to PreparingRebalance, a consumer or "
             "streams group's group epoch bumps", [({"group": g, "type": t}, n) for (g, t), n in sorted(self.rebalances.items())]),
            ("mockbroker_events_total", "counter", "Events recorded in the event log, by type",
             [({"type": t}, n) for t, n in sorted(self.events.items())]),
            ("mockbroker_brokers", "gauge", "Brokers up and down",
             [({"state": "up"}, up), ({"state": "down"}, len(snap.brokers) - up)]),
            ("mockbroker_topics", "gauge", "Topics (internal ones left out)", [({}, len(topics))]),
            ("mockbroker_partitions", "gauge", "Partitions of those topics",
             [({}, sum(len(t.partitions) for t in topics.values()))]),
            ("mockbroker_broker_bugs_total", "counter", "Unexpected exceptions while serving (each one is a mockbroker bug)",
             [({}, len(cluster.internal_errors))]),
        ]  # fmt: skip


def _size(records: Any) -> int:
    if records is None:
        return 0
    if isinstance(records, memoryview):
        return records.nbytes
    if isinstance(records, bytes | bytearray):
        return len(records)
    return sum(_size(r) for r in records)


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
