"""The event log: what happened to groups and offsets, in order, with reasons.

Every group transition, join, sync, leave, expiry, assignment and commit is recorded here with
the broker's clock, broker id, group, generation and a reason ("member m-1 session expired"), so
a test, the HTTP API or the analytics pipeline can tell the story afterwards. Kept in memory
(bounded) and, optionally, appended as JSON Lines to a file. The record schema is documented in
docs/events.md and versioned by SCHEMA_VERSION: the pipeline reads it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA_VERSION = 1
DEFAULT_CAPACITY = 100_000


@dataclass(frozen=True, slots=True)
class Event:
    """One recorded event (docs/events.md); ``to_json`` is its JSON Lines record."""

    seq: int  # 1, 2, ... per cluster: total order
    time_ms: int  # the cluster clock
    type: str  # e.g. "group.transition", "member.joined", "offset.committed"
    broker_id: int | None = None
    group_id: str | None = None
    generation_id: int | None = None
    member_id: str | None = None
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"v": SCHEMA_VERSION, "seq": self.seq, "time_ms": self.time_ms, "type": self.type}
        for key in ("broker_id", "group_id", "generation_id", "member_id", "reason"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.details:
            out["details"] = self.details
        return out


class EventLog:
    def __init__(self, now_ms: Callable[[], int], capacity: int = DEFAULT_CAPACITY, path: str | Path | None = None) -> None:
        self._now_ms = now_ms
        self._events: deque[Event] = deque(maxlen=capacity)
        self._seq = 0
        self._file: IO[str] | None = None
        self._listeners: list[Callable[[Event], None]] = []
        if path is not None:
            # json only with a file (it is ~1% of a cold start); one encoder, as json.dumps(...,
            # separators=(",", ":")) would build per call: the same text.
            import json

            self._encode = json.JSONEncoder(separators=(",", ":")).encode
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def record(
        self,
        type: str,
        *,
        broker_id: int | None = None,
        group_id: str | None = None,
        generation_id: int | None = None,
        member_id: str | None = None,
        reason: str | None = None,
        now_ms: int | None = None,
        **details: Any,
    ) -> Event:
        """Record one event. ``details`` must be JSON-serialisable (ints, strings, lists, dicts)."""
        self._seq += 1
        event = Event(
            seq=self._seq,
            time_ms=self._now_ms() if now_ms is None else now_ms,
            type=type,
            broker_id=broker_id,
            group_id=group_id,
            generation_id=generation_id,
            member_id=member_id,
            reason=reason,
            details=details,
        )
        self._events.append(event)
        if self._file is not None:
            self._file.write(self._encode(event.to_json()) + "\n")
            self._file.flush()
        for listener in list(self._listeners):
            listener(event)
        return event

    def __iter__(self) -> Iterator[Event]:
        return iter(list(self._events))

    def __len__(self) -> int:
        return len(self._events)

    def filter(self, type: str | None = None, group_id: str | None = None, since_seq: int = 0) -> list[Event]:
        """Events in order, optionally of one type (or type prefix ending in '.') and one group."""
        out = []
        for e in self._events:
            if e.seq <= since_seq:
                continue
            if type is not None and not (e.type == type or (type.endswith(".") and e.type.startswith(type))):
                continue
            if group_id is not None and e.group_id != group_id:
                continue
            out.append(e)
        return out

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``listener`` for every new event; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
