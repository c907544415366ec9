"""What every coordinator shares, one object the router builds: settings, timers, events, placement.

Kafka's coordinators get the same from their runtime (CoordinatorRuntime: the timer, the time,
the log context). Timers are the cluster's ``Timers``, on the cluster clock: a coordinator arms a
deadline in clock milliseconds and is called back with the time the timer fired; nothing in a
coordinator reads a clock itself.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from mockbroker.config.group_configs import EffectiveGroupConfig
from mockbroker.config.groups import GroupConfig
from mockbroker.events import EventLog
from mockbroker.timers import Timer, Timers


class CoordinatorServices:
    """The group settings, the timers, the event log, and which broker hosts a group id."""

    __slots__ = ("_broker_of", "_effective", "_on_internal_error", "config", "events", "group_configs", "timers")

    def __init__(
        self,
        config: GroupConfig,
        timers: Timers,
        events: EventLog,
        *,
        broker_of: Callable[[str], int] | None = None,
        on_internal_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.config = config
        self.timers = timers
        self.events = events
        self._broker_of = broker_of
        self._on_internal_error = on_internal_error
        # Per-group configs (GroupConfigManager): group id -> the overrides set with
        # IncrementalAlterConfigs/AlterConfigs on its GROUP resource, kept apart from the groups
        # themselves (they may name a group that does not exist yet, and survive DeleteGroups).
        self.group_configs: dict[str, dict[str, str]] = {}
        self._effective: dict[str, EffectiveGroupConfig] = {}

    def group_config(self, group_id: str) -> EffectiveGroupConfig:
        """The configs a coordinator applies to ``group_id``: its overrides on the broker's values."""
        effective = self._effective.get(group_id)
        if effective is None:
            overrides = self.group_configs.get(group_id, {})
            effective = self._effective[group_id] = EffectiveGroupConfig.of(overrides, self.config)
        return effective

    def set_group_configs(self, group_id: str, overrides: dict[str, str]) -> None:
        """Replace a group's overrides (already validated: GroupConfig.validate)."""
        if overrides:
            self.group_configs[group_id] = dict(overrides)
        else:
            self.group_configs.pop(group_id, None)
        self._effective.pop(group_id, None)

    def record(
        self,
        type: str,
        group_id: str,
        generation_id: int | None,
        now_ms: int,
        *,
        member_id: str | None = None,
        reason: str | None = None,
        **details: Any,
    ) -> None:
        """One event of a group (docs/events.md), stamped with the broker that coordinates it."""
        self.events.record(
            type,
            broker_id=self._broker_of(group_id) if self._broker_of is not None else None,
            group_id=group_id,
            generation_id=generation_id,
            member_id=member_id,
            reason=reason,
            now_ms=now_ms,
            **details,
        )

    def schedule(self, key: Hashable, deadline_ms: int, callback: Callable[[int], None]) -> Timer:
        """Arm (or re-arm) the timer ``key``; a broker bug inside its callback is handed to the
        cluster's internal errors (when it has a handler) and the other timers keep going."""

        def fire(now_ms: int) -> None:
            try:
                callback(now_ms)
            except Exception as exc:
                if self._on_internal_error is None:
                    raise
                self._on_internal_error(exc)

        return self.timers.schedule(key, deadline_ms, fire)
