"""In-process brokers for tests: a cluster on a thread of its own, with sync and async facades
over its control API (mockbroker.control), and teardown checks.

The broker owns its state without locks, on one event loop. Tests drive clients that block
(kafka-python, confluent-kafka) or run on the test's own loop (aiokafka), so the broker gets a
thread and a loop of its own, and every call to it hops onto that loop:

    with start_cluster(brokers=3, topics={"orders": 6}) as kafka:
        producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
        kafka.push_errors("Produce", "NOT_LEADER_OR_FOLLOWER")     # sync, from any thread
        ...
        await kafka.aio.wait_for_group("g", members=2)             # from an async test

``KafkaCluster`` answers every method of ``Control`` (see docs/control.md): ``kafka.describe_group``
runs ``cluster.control.describe_group`` on the broker's loop and returns its result;
``kafka.aio.describe_group`` does the same as a coroutine for the caller's own loop. Interceptor
functions passed to ``intercept`` run on the broker's thread and must not block.

At ``close()`` the cluster stops and the checks run: no broker bug recorded
(``internal_errors``), no strict-mode violation (``strict_failures``), and nothing left behind:
the thread ended, every listening and client socket closed, no task left on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping
from typing import Any, TypeVar

from mockbroker.clock import Clock, ManualClock
from mockbroker.cluster import MockCluster
from mockbroker.config.cluster import ClusterConfig
from mockbroker.config.topics import validate_topic_configs
from mockbroker.control import Control
from mockbroker.dispatch.table import load_all as load_all_handlers

T = TypeVar("T")

CALL_TIMEOUT_S = 120.0  # a guard against a hung broker loop, never a speed assertion
_thread_ids = iter(range(1, 1 << 30))


class ClusterProblems(AssertionError):
    """What the teardown checks found: broker bugs, strict-mode violations, leaks."""


class KafkaCluster:
    """A started cluster on its own thread and loop; the sync facade over its control API.

    ``bootstrap_servers`` and ``broker_ids`` are plain attributes; every other public name is
    a ``Control`` method, run on the broker's loop (``kafka.aio.<name>`` to await it from
    another loop). ``call(fn)``/``run(coro)`` run your own code there (read ``kafka.cluster``
    only that way while the cluster runs)."""

    def __init__(
        self,
        config: ClusterConfig | None = None,
        *,
        clock: Clock | None = None,
        topics: Mapping[str, int | Mapping[str, Any]] | None = None,
        request_log: bool = True,
        **settings: Any,
    ) -> None:
        self.cluster = MockCluster(config, clock=clock, **settings) if config is not None else MockCluster(clock=clock, **settings)
        self.control: Control = self.cluster.control
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=f"mockbroker-{next(_thread_ids)}", daemon=True)
        self._topics = dict(topics or {})
        self._request_log = request_log
        self.bootstrap_servers = ""
        # Each listener's bootstrap servers, by listener name (several listeners: `listeners`).
        self.bootstrap_servers_by_listener: dict[str, str] = {}
        self.broker_ids: list[int] = []
        # SSL and SASL_SSL listeners: the PEM file of the CA clients trust (the generated one, or
        # ssl.truststore.location with ssl.keystore.location), once started; None on plain listeners.
        self.ssl_ca_path: str | None = None
        # Each SSL and SASL_SSL listener's CA, by listener name (listener.name.<name>.ssl.keystore.location
        # gives a listener a certificate of its own).
        self.ssl_ca_paths_by_listener: dict[str, str | None] = {}
        self.aio = AsyncFacade(self)
        self._started = False
        self._closed = False
        self._problems: list[str] = []

    # -- lifecycle --------------------------------------------------------------------------------

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def start(self) -> KafkaCluster:
        self._thread.start()
        self._started = True

        async def start() -> None:
            await self.cluster.start()
            await self.control.enable_request_log(self._request_log)
            for name, spec in self._topics.items():
                if isinstance(spec, int):
                    self.cluster.create_topic(name, spec)
                else:
                    configs = {k: str(v) for k, v in dict(spec.get("configs", {})).items()}
                    # CreateTopics' check (LogConfig.validate): a bad config fails the start, naming it.
                    problem = validate_topic_configs(configs)
                    if problem is not None:
                        raise ValueError(f"topic {name!r} configs: {problem.message}")
                    self.cluster.create_topic(
                        name, spec.get("partitions", 1), spec.get("replication_factor", 1), configs
                    )

        # Everything a client may ask for is imported now (mockbroker serve imports lazily): a
        # test's first group request is as fast as its later ones, whichever test runs first.
        load_all_handlers()
        try:
            self.run(start())
        except BaseException:
            self.close(check=False)
            raise
        self.bootstrap_servers = self.cluster.bootstrap_servers
        self.bootstrap_servers_by_listener = {
            spec.name: self.cluster.bootstrap_servers_for(spec.name) for spec in self.cluster.listener_specs
        }
        self.broker_ids = list(self.cluster.brokers)
        self.ssl_ca_path = self.cluster.ssl_ca_path
        self.ssl_ca_paths_by_listener = {
            spec.name: self.cluster.ssl_ca_path_for(spec.name) for spec in self.cluster.listener_specs if spec.tls
        }
        return self

    def close(self, check: bool = True) -> list[str]:
        """Stop the cluster and the thread; return (and with ``check``, raise ClusterProblems
        for) what the teardown checks found. Idempotent."""
        if self._closed:
            return self._problems
        self._closed = True
        problems: list[str] = []
        if self._started and self._thread.is_alive():
            try:
                problems += self.run(self._stop_and_check())
            finally:
                self.loop.call_soon_threadsafe(self.loop.stop)
                self._thread.join(CALL_TIMEOUT_S)
            if self._thread.is_alive():
                problems.append(f"thread {self._thread.name} is still running after the cluster stopped")
            else:
                self.loop.close()
        elif not self.loop.is_closed():
            self.loop.close()
        problems = self.bug_reports() + problems
        self._problems = problems
        if check and problems:
            raise ClusterProblems("\n".join(problems))
        return problems

    async def _stop_and_check(self) -> list[str]:
        servers = list(self.cluster._servers.values())
        listeners = [s for server in servers for s in server.bound_sockets()]
        await self.cluster.stop()
        problems = []
        open_listeners = [s for s in listeners if s.fileno() != -1]
        if open_listeners:
            problems.append(f"listening sockets left open: {open_listeners}")
        open_connections = sum(len(server._connections) for server in servers)
        if open_connections:
            problems.append(f"{open_connections} client connection(s) left open")
        current = asyncio.current_task()
        leftover = [t for t in asyncio.all_tasks() if t is not current]
        for task in leftover:
            task.cancel()
        if leftover:
            problems.append(f"tasks left on the broker's loop: {leftover}")
        return problems

    def bug_reports(self) -> list[str]:
        """Broker bugs and strict-mode violations recorded so far, one line each."""
        out = [f"broker bug: {type(e).__name__}: {e}" for e in list(self.cluster.internal_errors)]
        out += [f"strict mode: {f}" for f in list(self.cluster.strict_failures)]
        return out

    def __enter__(self) -> KafkaCluster:
        return self if self._started else self.start()

    def __exit__(self, *exc: object) -> None:
        self.close(check=exc[0] is None)

    # -- running things on the broker's loop --------------------------------------------------------

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = CALL_TIMEOUT_S) -> T:
        """Run ``coro`` on the broker's loop and return its result (from any other thread)."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("called from the broker's own thread (an interceptor?): use cluster.control there")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, fn: Callable[[], T], timeout: float = CALL_TIMEOUT_S) -> T:
        """Run the plain function ``fn`` on the broker's loop and return its result."""

        async def on_loop() -> T:
            return fn()

        return self.run(on_loop(), timeout)

    def __getattr__(self, name: str) -> Any:
        method = _control_method(name)

        @functools.wraps(method)
        def on_loop(*args: Any, **kwargs: Any) -> Any:
            return self.run(method(self.control, *args, **kwargs))

        return on_loop

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(_CONTROL_METHODS))

    # -- convenience --------------------------------------------------------------------------------

    @property
    def internal_errors(self) -> list[BaseException]:
        return list(self.cluster.internal_errors)

    @property
    def strict_failures(self) -> list[Any]:
        return list(self.cluster.strict_failures)

    @property
    def manual_clock(self) -> bool:
        return isinstance(self.cluster.clock, ManualClock)


class AsyncFacade:
    """``kafka.aio.<method>(...)``: a Control method as a coroutine for the caller's loop (it
    runs on the broker's loop; the caller's loop keeps running meanwhile)."""

    def __init__(self, owner: KafkaCluster) -> None:
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        method = _control_method(name)
        owner = self._owner

        @functools.wraps(method)
        async def on_loop(*args: Any, **kwargs: Any) -> Any:
            future = asyncio.run_coroutine_threadsafe(method(owner.control, *args, **kwargs), owner.loop)
            return await asyncio.wrap_future(future)

        return on_loop

    def __dir__(self) -> list[str]:
        return sorted(_CONTROL_METHODS)


_CONTROL_METHODS = frozenset(
    name for name in dir(Control) if not name.startswith("_") and asyncio.iscoroutinefunction(getattr(Control, name))
)


def _control_method(name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    if name not in _CONTROL_METHODS:
        raise AttributeError(f"KafkaCluster has no attribute {name!r} (control methods: {', '.join(sorted(_CONTROL_METHODS))})")
    method: Callable[..., Coroutine[Any, Any, Any]] = getattr(Control, name)
    return method


def start_cluster(
    brokers: int = 1,
    *,
    topics: Mapping[str, int | Mapping[str, Any]] | None = None,
    clock: Clock | None = None,
    manual_clock: bool = False,
    auto_create_topics: bool = True,
    api_versions: Mapping[int | str, int] | None = None,
    request_log: bool = True,
    **settings: Any,
) -> KafkaCluster:
    """Start a cluster on its own thread: ``brokers``, ``topics`` ({name: partitions} or {name:
    {"partitions", "replication_factor", "configs"}}), ``clock`` (or ``manual_clock=True``),
    ``auto_create_topics``, ``api_versions`` caps ({"Fetch": 11}), and any ClusterConfig setting
    (group_min_session_timeout_ms=..., kafka_version="3.9", ...). Close it (or use ``with``)."""
    from mockbroker.intercept import api_key_of

    if manual_clock and clock is None:
        clock = ManualClock()
    caps = {api_key_of(k): v for k, v in (api_versions or {}).items()}
    if caps:
        settings["api_version_caps"] = {**settings.get("api_version_caps", {}), **caps}
    kafka = KafkaCluster(
        clock=clock, topics=topics, request_log=request_log, brokers=brokers,
        auto_create_topics_enable=auto_create_topics, **settings,
    )  # fmt: skip
    return kafka.start()


@contextlib.contextmanager
def running_cluster(**options: Any) -> Iterator[KafkaCluster]:
    """``with running_cluster(brokers=3) as kafka:`` — start_cluster, closed (and checked) at the end."""
    kafka = start_cluster(**options)
    try:
        yield kafka
    finally:
        kafka.close()


def wait_for(predicate: Callable[[], T], what: str, timeout: float = 30.0, interval: float = 0.01) -> T:
    """Poll ``predicate`` (from a sync test) until it returns something truthy, and return that;
    raise AssertionError naming ``what`` after ``timeout`` seconds. The timeout guards against a
    hang, it is not a speed assertion. From an async test, use ``kafka.aio.wait_for_*``."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)
