"""GroupError: a Kafka error a coordinator's rule answers to a request (an ApiException in Java).

Raised where a rule refuses a request and caught at the coordinator's public entry point, which
answers its code (and its message where the response carries one); see the package docstring,
"One error style". Never reaches a handler.
"""

from __future__ import annotations

from mockbroker_protocol.errors import ErrorCode


class GroupError(Exception):
    """A refused request: the error code to answer and Kafka's message for it."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
