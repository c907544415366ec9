"""The control API's errors: what a control call raises when it cannot be done as asked."""

from __future__ import annotations

from mockbroker_protocol.errors import ErrorCode


class ControlError(Exception):
    """A control call that cannot be done as asked (unknown group, broker, topic ...)."""


class NotFound(ControlError, LookupError):
    """The broker, topic, partition, group or member named does not exist (HTTP: 404)."""


class WaitTimeout(ControlError, TimeoutError):
    """A wait_for_* helper gave up; the message says what it waited for and what it last saw."""


class ProduceError(ControlError):
    def __init__(self, code: ErrorCode, message: str | None) -> None:
        super().__init__(f"{code.name}: {message or 'the append was refused'}")
        self.code = code
