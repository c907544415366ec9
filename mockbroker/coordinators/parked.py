"""Parked responses: the coordinator's answer to a request it cannot answer yet.

A JoinGroup waits for the join phase to complete, a SyncGroup for the leader's assignment (Kafka
keeps a CompletableFuture per member, ClassicGroupMember.awaitingJoinFuture/awaitingSyncFuture).
The coordinator stays sans-I/O: it hands out a ``Parked`` and completes it later, from another
request or from a timer callback. Pure tests read ``parked.result()``; handlers ``await wait(parked)``,
the only place asyncio meets the groups package.

A parked response may never complete: Kafka drops the first of two parked JoinGroups from the same
member without answering it (kafka-group-semantics §3.8). Its connection then waits until the
client gives up or the cluster stops, as it would against Kafka.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

_UNSET: object = object()


class Parked(Generic[T]):
    __slots__ = ("_callbacks", "_value", "what")

    def __init__(self, what: str = "") -> None:
        self.what = what  # for repr and logs: "JoinGroup g/m-1"
        self._value: object = _UNSET
        self._callbacks: list[Callable[[T], None]] = []

    def done(self) -> bool:
        return self._value is not _UNSET

    def result(self) -> T:
        if self._value is _UNSET:
            raise LookupError(f"{self.what or 'parked response'} is not answered yet")
        return self._value  # type: ignore[return-value]

    def complete(self, value: T) -> bool:
        """Answer it; False (and nothing changes) when it was answered already."""
        if self._value is not _UNSET:
            return False
        self._value = value
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(value)
        return True

    def add_done_callback(self, callback: Callable[[T], None]) -> None:
        if self._value is not _UNSET:
            callback(self._value)  # type: ignore[arg-type]
        else:
            self._callbacks.append(callback)

    def __repr__(self) -> str:
        state = f"answered {self._value!r}" if self.done() else "waiting"
        return f"<Parked {self.what}: {state}>"


async def wait(parked: Parked[T]) -> T:
    """Await a parked response from a handler. A client that disconnects (or a cluster that stops)
    cancels only this await; the coordinator may still complete ``parked`` later, harmlessly."""
    if parked.done():
        return parked.result()
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()

    def deliver(value: T) -> None:
        if not future.done():  # cancelled: the connection is gone, nobody to answer
            future.set_result(value)

    parked.add_done_callback(deliver)
    return await future
