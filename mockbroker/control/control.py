"""The control and introspection API: one model, many front ends (docs/control.md).

``cluster.control`` is a ``Control``: async methods that run on the cluster's own event loop and
are the only way the pytest fixture (mockbroker.testing's sync and async facades), the HTTP admin
API and the CLI change or read a running cluster. Faults are built on the one request hook
(``intercept``, mockbroker/control/intercept.py) or change the cluster's model directly (brokers down,
leaders and coordinators moved), always recording a ``control.*`` event with a reason.

Every method is ``async`` even where it does not wait, so front ends treat them alike; none of
them may be called from another thread (the facades in mockbroker.testing hop onto the loop).
"""

from __future__ import annotations

import asyncio

from mockbroker.control.base import DEFAULT_WAIT_S
from mockbroker.control.brokers import BrokerControl
from mockbroker.control.errors import WaitTimeout
from mockbroker.control.groups import GroupControl
from mockbroker.control.intercept import (
    CLOSE,
    DROP,
    Delay,
    Intercepted,
    InterceptFn,
    Interceptor,
    RequestRecord,
    api_key_of,
)
from mockbroker.control.records import TopicControl
from mockbroker.control.security import SecurityControl
from mockbroker.control.snapshots import FaultsSnapshot
from mockbroker.control.transactions import TransactionControl
from mockbroker.events import Event
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.registry import APIS


class Control(BrokerControl, TopicControl, GroupControl, TransactionControl, SecurityControl):
    """Everything a test (or the HTTP API, or the CLI) may do to a running cluster."""

    # -- time -------------------------------------------------------------------------------------

    async def now_ms(self) -> int:
        return self.cluster.clock.now_ms()

    async def advance(self, ms: int) -> int:
        """Move a ManualClock forward by ``ms``, firing every timer that falls due (session
        expiry, rebalance and join timeouts, retention, fetch long-polls) at its own deadline.
        Returns the new time. TypeError for a cluster on real time."""
        advance = getattr(self.cluster.clock, "advance", None)
        if not self.cluster.clock.manual or advance is None:
            raise TypeError("advance() needs a cluster built with clock=ManualClock()")
        result: int = advance(ms)
        return result

    # -- the hook ---------------------------------------------------------------------------------

    async def intercept(self, api: int | str | None, fn: InterceptFn, broker: int | None = None, keep: bool = False) -> Interceptor:
        """Show ``fn`` the next request of ``api`` (every API for None) on ``broker`` (any for
        None), or every one with ``keep=True``; see mockbroker/control/intercept.py for what it may answer."""
        return self.hooks.add(None if api is None else api_key_of(api), fn, broker, keep)

    async def clear_faults(self) -> None:
        """Remove every interceptor and pushed error, end transaction coordinators' loading, and
        restore the configured API versions."""
        self.cluster.transaction_loading_until_ms.clear()
        self.errors.clear()
        self.hooks.clear()
        await self.reset_api_versions()

    async def enable_request_log(self, enabled: bool = True) -> None:
        self.hooks.enable_log(enabled)

    async def requests(
        self,
        api: int | str | None = None,
        *,
        broker: int | None = None,
        client_id: str | None = None,
        error: int | str | None = None,
        outcome: str | None = None,
        since_seq: int = 0,
    ) -> list[RequestRecord]:
        """The request log (enable_request_log; the pytest fixture turns it on), filtered."""
        return self.hooks.log.filter(api, broker=broker, client_id=client_id, error=error, outcome=outcome, since_seq=since_seq)

    async def events(self, type: str | None = None, group_id: str | None = None, since_seq: int = 0) -> list[Event]:
        """The event log (docs/events.md): ``type`` exact, or a prefix ending in "." ("member.")."""
        return self.cluster.events.filter(type=type, group_id=group_id, since_seq=since_seq)

    async def last_event_seq(self) -> int:
        events = list(self.cluster.events)
        return events[-1].seq if events else 0

    # -- faults on the hook ---------------------------------------------------------------------------

    async def push_errors(
        self, api: int | str, *errors: int | str | ErrorCode, broker: int | None = None,
        topic: str | None = None, partition: int | None = None,
    ) -> None:  # fmt: skip
        """The next len(errors) requests of ``api`` fail with these codes, one each, in order:
        cluster level, or ``broker=`` level, or ``topic=``/``partition=`` level (that partition's
        entry only). Precedence and placement: mockbroker/control/faults.py and error_answers.py."""
        if not errors:
            raise ValueError("push_errors needs at least one error code")
        self.errors.push(api, errors, broker=broker, topic=topic, partition=partition)

    async def pending_errors(self) -> dict[str, list[str]]:
        return self.errors.pending()

    async def set_latency(self, ms: float, *, api: int | str | None = None, broker: int | None = None) -> Interceptor:
        """Hold every request of ``api`` (all for None) on ``broker`` (all for None) ``ms``
        wall-clock milliseconds before answering; ``remove()`` the result to stop."""
        delay = Delay(ms)

        def add_latency(_: Intercepted) -> Delay:
            return delay

        return self.hooks.add(None if api is None else api_key_of(api), add_latency, broker, keep=True, name=f"latency {ms} ms")

    async def disconnect_next(self, api: int | str | None = None, *, broker: int | None = None, count: int = 1) -> list[Interceptor]:
        """Close the connection of each of the next ``count`` matching requests, unanswered."""
        return [self.hooks.add(None if api is None else api_key_of(api), lambda _: CLOSE, broker, keep=False, name="disconnect") for _ in range(count)]

    async def drop_next(self, api: int | str | None = None, *, broker: int | None = None, count: int = 1) -> list[Interceptor]:
        """Never answer the next ``count`` matching requests (the client's request times out)."""
        return [self.hooks.add(None if api is None else api_key_of(api), lambda _: DROP, broker, keep=False, name="drop") for _ in range(count)]


    async def wait_for_event(
        self, type: str, group_id: str | None = None, *, since_seq: int = 0, timeout: float = DEFAULT_WAIT_S
    ) -> Event:
        """Wait for the first event of ``type`` (a prefix ending in ".") after ``since_seq``."""

        def check() -> Event | None:
            found = self.cluster.events.filter(type=type, group_id=group_id, since_seq=since_seq)
            return found[0] if found else None

        return await self._wait(check, f"event {type}" + (f" of {group_id}" if group_id else ""), lambda: "", timeout)

    async def wait_for_request(
        self, api: int | str, *, since_seq: int = 0, error: int | str | None = None, broker: int | None = None,
        client_id: str | None = None, timeout: float = DEFAULT_WAIT_S,
    ) -> RequestRecord:  # fmt: skip
        """Wait for an answered request of ``api`` in the request log (with ``error`` in its
        response, when given) after ``since_seq``; polls, as requests are not events."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            found = [
                r for r in self.hooks.log.filter(api, broker=broker, client_id=client_id, error=error, since_seq=since_seq)
                if r.outcome != "pending"
            ]  # fmt: skip
            if found:
                return found[0]
            if asyncio.get_running_loop().time() > deadline:
                raise WaitTimeout(f"timed out after {timeout:.1f}s waiting for a {api} request" + (f" answered {error}" if error else ""))
            await asyncio.sleep(0.005)

    async def faults(self) -> FaultsSnapshot:
        """The faults in force (clear_faults removes errors, interceptors and caps; brokers come
        back with broker_up, coordinators stay where they were moved)."""
        caps = self.cluster.version_caps
        changed = {
            APIS[k].name: caps.get(k) for k in sorted(set(caps) | set(self._original_caps)) if caps.get(k) != self._original_caps.get(k)
        }
        return FaultsSnapshot(
            pending_errors=self.errors.pending(),
            interceptors=tuple(self.hooks.interceptors),
            brokers_down=tuple(sorted(self.cluster.down_brokers)),
            coordinator_moves=dict(self.cluster.coordinator_moves),
            api_version_caps=changed,
            transaction_coordinator_moves=dict(self.cluster.transaction_coordinator_moves),
            transaction_coordinators_loading={
                t: until for t, until in self.cluster.transaction_loading_until_ms.items() if until > self.cluster.clock.now_ms()
            },
        )
