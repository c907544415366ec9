"""One driver process seen from the runner: commands in on stdin, events out on stdout (JSON lines).

The protocol is in docs/conformance.md. Events are kept in arrival order; waits look for an event
matching a predicate from an index on, so a scenario can mark a point and wait for what follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mockbroker_conformance.model import NotSupported, ScenarioFailed

Event = dict[str, Any]
STDERR_TAIL = 40


class DriverProcess:
    """A started driver. ``events`` grows as lines arrive; ``hello`` is its first event."""

    def __init__(self, name: str, argv: Sequence[str], env: dict[str, str] | None = None, client_id: str = "") -> None:
        self.name = name
        self.client_id = client_id
        self.argv = list(argv)
        self.env = env
        self.events: list[Event] = []
        self.stderr: list[str] = []
        self.proc: asyncio.subprocess.Process | None = None
        self._changed = asyncio.Condition()
        self._readers: list[asyncio.Task[None]] = []
        self.hello: Event = {}

    async def start(self, timeout: float) -> DriverProcess:
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self.env, start_new_session=True,
        )  # fmt: skip
        self._readers = [asyncio.ensure_future(self._read_stdout()), asyncio.ensure_future(self._read_stderr())]
        self.hello = await self.wait(lambda e: e.get("event") == "hello", "its hello", timeout)
        return self

    async def _read_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        async for line in self.proc.stdout:
            text = line.decode(errors="replace").strip()
            if not text:
                continue
            try:
                event = json.loads(text)
            except ValueError:
                event = {"event": "protocol_error", "message": "not JSON", "line": text}
            if not isinstance(event, dict):
                event = {"event": "protocol_error", "message": "not an object", "line": text}
            event["_t"] = time.monotonic()
            async with self._changed:
                self.events.append(event)
                self._changed.notify_all()
        async with self._changed:
            self.events.append({"event": "_exit", "_t": time.monotonic()})
            self._changed.notify_all()

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        async for line in self.proc.stderr:
            self.stderr.append(line.decode(errors="replace").rstrip())
            del self.stderr[:-STDERR_TAIL]

    def mark(self) -> int:
        return len(self.events)

    def find(self, pred: Callable[[Event], bool], since: int = 0) -> list[Event]:
        return [e for e in self.events[since:] if pred(e)]

    async def wait(self, pred: Callable[[Event], bool], what: str, timeout: float, since: int = 0) -> Event:
        """The first event from ``since`` on matching ``pred``; ScenarioFailed on timeout or exit."""
        deadline = time.monotonic() + timeout
        async with self._changed:
            while True:
                for e in self.events[since:]:
                    if pred(e):
                        return e
                if any(e.get("event") == "_exit" for e in self.events[since:]):
                    raise ScenarioFailed(f"{self.name} exited (status {await self._status()}) while waiting for {what}{self._tail()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ScenarioFailed(f"{self.name}: timed out after {timeout:.0f}s waiting for {what}{self._tail()}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), left)

    async def _status(self) -> int | None:
        if self.proc is None:
            return None
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(self.proc.wait(), 5)
        return None

    def _tail(self) -> str:
        errors = [e for e in self.events if e.get("event") in ("client_error", "protocol_error") or e.get("event", "").endswith("_failed")]
        parts = []
        if errors:
            parts.append("; last errors: " + json.dumps([{k: v for k, v in e.items() if k != "_t"} for e in errors[-3:]]))
        if self.stderr:
            parts.append("; stderr tail: " + " | ".join(self.stderr[-5:]))
        return "".join(parts)

    async def send(self, cmd: dict[str, Any]) -> int:
        """Send a command; returns the mark of the events before it."""
        assert self.proc is not None and self.proc.stdin is not None
        mark = self.mark()
        try:
            self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ScenarioFailed(f"{self.name} is gone ({exc}); cannot send {cmd['cmd']}{self._tail()}") from None
        return mark

    async def call(self, cmd: dict[str, Any], answer: str, timeout: float) -> Event:
        """Send ``cmd`` and wait for its answer: the ``answer`` event, ``<cmd>_failed`` (a
        ScenarioFailed) or ``unsupported`` (NotSupported)."""
        name = cmd["cmd"]
        mark = await self.send(cmd)
        event = await self.wait(
            lambda e: e.get("event") in (answer, f"{name}_failed") or (e.get("event") == "unsupported" and e.get("cmd") == name),
            f"the answer to {name}", timeout, since=mark,
        )  # fmt: skip
        if event["event"] == "unsupported":
            raise NotSupported(event.get("reason") or f"{name} is not supported")
        if event["event"] != answer:
            detail = {k: v for k, v in event.items() if k != "_t"}
            raise ScenarioFailed(f"{self.name}: {name} failed: {json.dumps(detail)}")
        return event

    async def close(self, timeout: float) -> None:
        """Ask the driver to close (LeaveGroup etc.) and wait for it to exit; kill it after ``timeout``."""
        if self.proc is None or self.proc.returncode is not None:
            return
        try:
            await self.send({"cmd": "close"})
            await asyncio.wait_for(self.proc.wait(), timeout)
        except (TimeoutError, ScenarioFailed):
            self.kill()
            await self.proc.wait()
        await self._join_readers()

    @property
    def exited(self) -> bool:
        return any(e.get("event") == "_exit" for e in self.events)

    def kill(self) -> None:
        """SIGKILL the driver's whole process group (a wrapper's own children too)."""
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    async def crash(self) -> None:
        """Gone without a word: killed, so no LeaveGroup and no commit; sockets dropped."""
        self.kill()
        if self.proc is not None:
            await self.proc.wait()
        await self._join_readers()

    async def _join_readers(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self._readers, return_exceptions=True), 5)
        for task in self._readers:
            task.cancel()


POLL_S = 0.02


async def wait_for(check: Callable[[], Any], what: str, timeout: float, *drivers: DriverProcess) -> Any:
    """Poll ``check()`` (typically over several drivers' events) until it returns a true value;
    ScenarioFailed naming ``what`` on timeout, or when one of ``drivers`` exited meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        for d in drivers:
            if d.exited:
                raise ScenarioFailed(f"{d.name} exited while waiting for {what}{d._tail()}")
        if time.monotonic() > deadline:
            tails = "".join(d._tail() for d in drivers)
            raise ScenarioFailed(f"timed out after {timeout:.0f}s waiting for {what}{tails}")
        await asyncio.sleep(POLL_S)


async def wait_for_async(pred: Callable[[], Awaitable[bool]], what: str, timeout: float) -> None:
    """Ask the coroutine ``pred`` again until it holds (a broker's answers converging: metadata
    after a deletion, a share group's start offset); ScenarioFailed naming ``what`` on timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await pred():
        if loop.time() > deadline:
            raise ScenarioFailed(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(0.1)
