"""The handler table: one thin module per API, each declaring the versions it serves.

A handler module defines ``API_KEY``, ``VERSIONS = (min, max)``, optionally ``ADVERTISED_MIN``
(what ApiVersions advertises when it differs from what is served; see produce) and
``async def handle(ctx, request) -> response | None``, and optionally a synchronous ``fast``
for requests repeated byte for byte (see heartbeat and mockbroker.dispatch). ApiVersions is built
from this table, so an API is advertised exactly when a handler serves it.

The table below repeats each module's declarations so that start-up imports no handler module
(they pull in the group coordinator, the log and their codecs): a module is imported by the first
request of its API (``Handler.handle``). tests/mockbroker/test_handler_table.py checks that the
table and the modules agree, and that every module of this package is in it.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import Any

from mockbroker_protocol.registry import APIS

# api key -> (module, VERSIONS, ADVERTISED_MIN or None when it is VERSIONS' minimum), as declared
# in mockbroker/handlers/<module>.py.
TABLE: dict[int, tuple[str, tuple[int, int], int | None]] = {
    0: ("produce", (3, 13), 0),
    1: ("fetch", (4, 18), None),
    2: ("list_offsets", (1, 11), None),
    3: ("metadata", (0, 13), None),
    8: ("offset_commit", (1, 10), 2),
    9: ("offset_fetch", (1, 10), None),
    10: ("find_coordinator", (0, 6), None),
    11: ("join_group", (0, 9), None),
    12: ("heartbeat", (0, 4), None),
    13: ("leave_group", (0, 5), None),
    14: ("sync_group", (0, 5), None),
    15: ("describe_groups", (0, 6), None),
    16: ("list_groups", (0, 5), None),
    18: ("api_versions", (0, 4), None),
    19: ("create_topics", (0, 7), 2),
    20: ("delete_topics", (0, 6), 1),
    21: ("delete_records", (0, 2), None),
    22: ("init_producer_id", (0, 5), None),
    23: ("offset_for_leader_epoch", (2, 4), None),
    24: ("add_partitions_to_txn", (0, 5), None),
    25: ("add_offsets_to_txn", (0, 4), None),
    26: ("end_txn", (0, 5), None),
    28: ("txn_offset_commit", (0, 5), None),
    32: ("describe_configs", (0, 4), 1),
    33: ("alter_configs", (0, 2), None),
    37: ("create_partitions", (0, 3), None),
    42: ("delete_groups", (0, 2), None),
    44: ("incremental_alter_configs", (0, 1), None),
    47: ("offset_delete", (0, 0), None),
    60: ("describe_cluster", (0, 2), None),
    61: ("describe_producers", (0, 0), None),
    65: ("describe_transactions", (0, 0), None),
    66: ("list_transactions", (0, 2), None),
    68: ("consumer_group_heartbeat", (0, 1), None),
    69: ("consumer_group_describe", (0, 1), None),
}

MODULES = tuple(sorted(module for module, _, _ in TABLE.values()))


class Handler:
    """One API's handler. ``handle`` starts as a loader: its first call imports the module and
    puts the module's own ``handle`` in its place, so later calls go straight to it."""

    __slots__ = ("advertised_min", "api_key", "fast", "handle", "module_name", "name", "versions")

    def __init__(self, api_key: int, module_name: str, versions: tuple[int, int], advertised_min: int) -> None:
        self.api_key = api_key
        self.name = APIS[api_key].name
        self.module_name = module_name
        self.versions = versions
        self.advertised_min = advertised_min
        self.handle: Callable[[Any, Any], Awaitable[Any]] = self._load_and_handle
        # The module's synchronous ``fast`` handler, if it has one, once loaded (mockbroker.dispatch,
        # "requests kept by their bytes"); None until then, so nothing is kept before the first call.
        self.fast: Callable[[Any, Any, int, Any], tuple[bytes, bytes] | None] | None = None

    def __repr__(self) -> str:
        return f"Handler({self.api_key}, {self.name!r}, v{self.versions[0]}-{self.versions[1]})"

    @property
    def loaded(self) -> bool:
        return self.handle != self._load_and_handle

    def load(self) -> Callable[[Any, Any], Awaitable[Any]]:
        """Import the module (once) and return its ``handle``."""
        if not self.loaded:
            mod = importlib.import_module(f"mockbroker.handlers.{self.module_name}")
            self.handle = mod.handle
            self.fast = getattr(mod, "fast", None)
        return self.handle

    async def _load_and_handle(self, ctx: Any, request: Any) -> Any:
        return await self.load()(ctx, request)


def _table() -> dict[int, Handler]:
    table: dict[int, Handler] = {}
    for key, (module, (lo, hi), advertised_min) in TABLE.items():
        codec_lo, codec_hi = APIS[key].versions
        if lo < codec_lo or hi > codec_hi:
            raise RuntimeError(f"{module} serves v{lo}-{hi} but the codec decodes only v{codec_lo}-{codec_hi}")
        table[key] = Handler(key, module, (lo, hi), lo if advertised_min is None else advertised_min)
    return table


HANDLERS: dict[int, Handler] = _table()


def load_all() -> None:
    """Import every handler module now (and with them the codecs, the group coordinator and the
    log) instead of on first use. For long-lived in-process brokers such as the pytest fixture's:
    a test's first group request then takes no longer than its later ones."""
    for handler in HANDLERS.values():
        handler.load()
