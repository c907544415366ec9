"""Running the suite: every (client, scenario) cell against a target, several at a time.

Each cell gets its own target cluster (a fresh embedded mockbroker or librdkafka mock; on a shared
bootstrap broker, fresh topic and group names), so cells of different clients run concurrently
without disturbing each other. Cells are ordered scenario by scenario, so the ones running together
are mostly of different clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import time
from collections.abc import Callable, Sequence

from mockbroker_conformance.clients import CLIENTS, ClientSpec
from mockbroker_conformance.model import (
    FAIL,
    PASS,
    UNSUPPORTED,
    CellResult,
    Matrix,
    NotSupported,
    ScenarioFailed,
)
from mockbroker_conformance.scenarios import SCENARIOS, SCENARIOS_BY_ID, WAIT_S, Context, Scenario
from mockbroker_conformance.streams_scenarios import mismatch
from mockbroker_conformance.targets import (
    CONSUMER_HEARTBEAT_INTERVAL_MS,
    CONSUMER_SESSION_TIMEOUT_MS,
    EMBEDDED_STREAMS_SETTINGS,
    BootstrapTarget,
    EmbeddedTarget,
    KafkaTarget,
    RdkafkaMockTarget,
    Target,
)

CELL_TIMEOUT_S = 60.0  # a whole scenario; each wait inside it has its own, shorter deadline
CLOSE_TIMEOUT_S = 15.0
DEFAULT_JOBS = 4


class UnavailableClients(Exception):
    """Clients asked for that cannot run on this machine; the message says what each lacks."""


def make_target(target: str = "mockbroker", bootstrap: str | None = None) -> Target:
    """``mockbroker`` (embedded), ``rdkafka-mock``, ``kafka`` (a real one, started), or, with
    ``bootstrap``, that broker."""
    if bootstrap:
        return BootstrapTarget(bootstrap)
    if target == "mockbroker":
        # Test-friendly KIP-848 timing too, so that a crashed consumer-protocol member is fenced soon.
        return EmbeddedTarget(
            group_consumer_session_timeout_ms=CONSUMER_SESSION_TIMEOUT_MS,
            group_consumer_heartbeat_interval_ms=CONSUMER_HEARTBEAT_INTERVAL_MS,
            **EMBEDDED_STREAMS_SETTINGS,
        )
    if target == "rdkafka-mock":
        return RdkafkaMockTarget()
    if target == "kafka":
        return KafkaTarget()
    raise ValueError(f"unknown target {target!r}: mockbroker, rdkafka-mock, kafka, or --bootstrap HOST:PORT")


def select(names: Sequence[str] | None, known: Sequence[str], what: str) -> list[str]:
    if not names:
        return list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown {what} {', '.join(unknown)}; known: {', '.join(known)}")
    return list(names)


async def run_cell(target: Target, client: ClientSpec, scenario: Scenario) -> CellResult:
    if why := mismatch(client.kind, scenario.kind):  # decided before any broker or JVM starts
        return CellResult(client.name, scenario.id, UNSUPPORTED, why)
    started = time.monotonic()
    cluster = await target.start(scenario.brokers, f"{client.short}-{scenario.id}")
    ctx = Context(client, cluster, scenario.id)
    status, detail = PASS, ""
    try:
        await asyncio.wait_for(scenario.run(ctx), CELL_TIMEOUT_S)
    except NotSupported as exc:
        status, detail = UNSUPPORTED, str(exc)
    except ScenarioFailed as exc:
        status, detail = FAIL, str(exc)
    except TimeoutError:
        status, detail = FAIL, f"the scenario did not finish within {CELL_TIMEOUT_S:.0f}s"
    except Exception as exc:  # a driver or a target misbehaving in a way no check foresaw
        status, detail = FAIL, f"{type(exc).__name__}: {exc}"
    findings = await cluster.audit_findings()
    await asyncio.gather(*(d.close(CLOSE_TIMEOUT_S) for d in ctx.drivers), return_exceptions=True)
    problems = await cluster.close()
    if problems:
        status = FAIL
        detail = "; ".join(filter(None, [detail, "broker problems: " + "; ".join(problems)]))
    if findings and status == PASS:
        status = FAIL
        detail = f"client audit: {len(findings)} finding(s): " + "; ".join(sorted({f.message for f in findings})[:3])
    return CellResult(client.name, scenario.id, status, detail, findings, time.monotonic() - started)


async def run_suite_async(
    target: Target,
    clients: Sequence[str] | None = None,
    scenarios: Sequence[str] | None = None,
    jobs: int = DEFAULT_JOBS,
    progress: Callable[[CellResult], None] | None = None,
) -> Matrix:
    client_names = select(clients, list(CLIENTS), "client")
    scenario_ids = select(scenarios, [s.id for s in SCENARIOS], "scenario")
    missing = {n: m for n in client_names if (m := CLIENTS[n].missing())}
    if missing:
        raise UnavailableClients("; ".join(f"{n}: needs {m}" for n, m in missing.items()))
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    began = time.monotonic()
    versions = await _versions(target, client_names)
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(client: str, scenario: str) -> CellResult:
        async with gate:
            cell = await run_cell(target, CLIENTS[client], SCENARIOS_BY_ID[scenario])
        if progress is not None:
            progress(cell)
        return cell

    try:
        cells = await asyncio.gather(*(one(c, s) for s in scenario_ids for c in client_names))
    finally:
        await target.close()
    ordered = sorted(cells, key=lambda c: (scenario_ids.index(c.scenario), client_names.index(c.client)))
    return Matrix(target.description, client_names, scenario_ids, ordered, versions, started_at, time.monotonic() - began)


async def _versions(target: Target, clients: list[str]) -> dict[str, str]:
    """Each driver's hello: the client's name and version (started without a broker to talk to)."""
    from mockbroker_conformance.process import DriverProcess

    async def hello(name: str) -> tuple[str, str]:
        spec = CLIENTS[name]
        d = DriverProcess(name, spec.argv("127.0.0.1:9", f"{spec.short}-hello"), spec.env())
        try:
            await d.start(WAIT_S)
            return name, str(d.hello.get("version", ""))
        except ScenarioFailed as exc:
            return name, f"unknown ({exc})"
        finally:
            with contextlib.suppress(Exception):
                await d.close(CLOSE_TIMEOUT_S)

    return dict(await asyncio.gather(*(hello(n) for n in clients)))


def run_suite(
    target: str = "mockbroker",
    *,
    bootstrap: str | None = None,
    clients: Sequence[str] | None = None,
    scenarios: Sequence[str] | None = None,
    jobs: int = DEFAULT_JOBS,
    progress: Callable[[CellResult], None] | None = None,
) -> Matrix:
    """Run the suite (blocking) and return its matrix. See docs/conformance.md."""
    return asyncio.run(run_suite_async(make_target(target, bootstrap), clients, scenarios, jobs, progress))
