"""The compiled shape of the codecs of heartbeat, join_group, sync_group, offset_commit, offset_fetch, leave_group (see mockbroker_protocol/_codegen_compiled.py).

Built with mypyc at install time (setup.py); the pure modules in mockbroker_protocol/messages/ pick these up
when they are compiled. Generated, except _wire.py: run `make regen`.
"""

from __future__ import annotations

# module names (the same under mockbroker_protocol.messages) that have a compiled shape
COMPILED_MODULES: tuple[str, ...] = (
    "heartbeat",
    "join_group",
    "sync_group",
    "offset_commit",
    "offset_fetch",
    "leave_group",
)
