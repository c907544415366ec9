"""The handler table, keyed by ApiKey: one thin module per API (mockbroker/handlers/), each
declaring the versions it serves.

A handler module defines ``API_KEY``, ``VERSIONS = (min, max)``, optionally ``ADVERTISED_MIN``
(what ApiVersions advertises when it differs from what is served; see produce) and
``async def handle(ctx, request) -> response | None``, and optionally a synchronous ``fast``
for requests repeated byte for byte (see heartbeat and mockbroker.dispatch.dispatch). ApiVersions is built
from this table, so an API is advertised exactly when a handler serves it.

The table below repeats each module's declarations so that start-up imports no handler module
(they pull in the group coordinator, the log and their codecs): a module is imported by the first
request of its API (``Handler.handle``). tests/mockbroker/dispatch/test_table.py checks that the
table and the modules agree, and that every module of mockbroker/handlers/ is in it.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.registry import APIS

if TYPE_CHECKING:
    from mockbroker.state import ClusterState

# api key -> (module, VERSIONS, ADVERTISED_MIN or None when it is VERSIONS' minimum), as declared
# in mockbroker/handlers/<module>.py.
TABLE: dict[ApiKey, tuple[str, tuple[int, int], int | None]] = {
    ApiKey.PRODUCE: ("produce", (3, 13), 0),
    ApiKey.FETCH: ("fetch", (4, 18), None),
    ApiKey.LIST_OFFSETS: ("list_offsets", (1, 11), None),
    ApiKey.METADATA: ("metadata", (0, 13), None),
    ApiKey.OFFSET_COMMIT: ("offset_commit", (1, 10), 2),
    ApiKey.OFFSET_FETCH: ("offset_fetch", (1, 10), None),
    ApiKey.FIND_COORDINATOR: ("find_coordinator", (0, 6), None),
    ApiKey.JOIN_GROUP: ("join_group", (0, 9), None),
    ApiKey.HEARTBEAT: ("heartbeat", (0, 4), None),
    ApiKey.LEAVE_GROUP: ("leave_group", (0, 5), None),
    ApiKey.SYNC_GROUP: ("sync_group", (0, 5), None),
    ApiKey.DESCRIBE_GROUPS: ("describe_groups", (0, 6), None),
    ApiKey.LIST_GROUPS: ("list_groups", (0, 5), None),
    ApiKey.SASL_HANDSHAKE: ("sasl_handshake", (0, 1), None),
    ApiKey.API_VERSIONS: ("api_versions", (0, 4), None),
    ApiKey.CREATE_TOPICS: ("create_topics", (0, 7), 2),
    ApiKey.DELETE_TOPICS: ("delete_topics", (0, 6), 1),
    ApiKey.DELETE_RECORDS: ("delete_records", (0, 2), None),
    ApiKey.INIT_PRODUCER_ID: ("init_producer_id", (0, 5), None),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: ("offset_for_leader_epoch", (2, 4), None),
    ApiKey.ADD_PARTITIONS_TO_TXN: ("add_partitions_to_txn", (0, 5), None),
    ApiKey.ADD_OFFSETS_TO_TXN: ("add_offsets_to_txn", (0, 4), None),
    ApiKey.END_TXN: ("end_txn", (0, 5), None),
    ApiKey.TXN_OFFSET_COMMIT: ("txn_offset_commit", (0, 5), None),
    ApiKey.DESCRIBE_ACLS: ("describe_acls", (1, 3), None),
    ApiKey.CREATE_ACLS: ("create_acls", (1, 3), None),
    ApiKey.DELETE_ACLS: ("delete_acls", (1, 3), None),
    ApiKey.DESCRIBE_CONFIGS: ("describe_configs", (0, 4), 1),
    ApiKey.ALTER_CONFIGS: ("alter_configs", (0, 2), None),
    ApiKey.CREATE_PARTITIONS: ("create_partitions", (0, 3), None),
    ApiKey.SASL_AUTHENTICATE: ("sasl_authenticate", (0, 2), None),
    ApiKey.DELETE_GROUPS: ("delete_groups", (0, 2), None),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: ("incremental_alter_configs", (0, 1), None),
    ApiKey.OFFSET_DELETE: ("offset_delete", (0, 0), None),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: ("describe_user_scram_credentials", (0, 0), None),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: ("alter_user_scram_credentials", (0, 0), None),
    ApiKey.DESCRIBE_CLUSTER: ("describe_cluster", (0, 2), None),
    ApiKey.DESCRIBE_PRODUCERS: ("describe_producers", (0, 0), None),
    ApiKey.DESCRIBE_TRANSACTIONS: ("describe_transactions", (0, 0), None),
    ApiKey.LIST_TRANSACTIONS: ("list_transactions", (0, 2), None),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: ("consumer_group_heartbeat", (0, 1), None),
    ApiKey.CONSUMER_GROUP_DESCRIBE: ("consumer_group_describe", (0, 1), None),
    ApiKey.STREAMS_GROUP_HEARTBEAT: ("streams_group_heartbeat", (0, 0), None),
    ApiKey.STREAMS_GROUP_DESCRIBE: ("streams_group_describe", (0, 0), None),

    ApiKey.SHARE_GROUP_HEARTBEAT: ("share_group_heartbeat", (1, 1), None),
    ApiKey.SHARE_GROUP_DESCRIBE: ("share_group_describe", (1, 1), None),
    ApiKey.SHARE_FETCH: ("share_fetch", (1, 2), None),
    ApiKey.SHARE_ACKNOWLEDGE: ("share_acknowledge", (1, 2), None),
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: ("describe_share_group_offsets", (0, 1), None),
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: ("alter_share_group_offsets", (0, 0), None),
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: ("delete_share_group_offsets", (0, 0), None),
}

MODULES = tuple(sorted(module for module, _, _ in TABLE.values()))


class Handler:
    """One API's handler. ``handle`` starts as a loader: its first call imports the module and
    puts the module's own ``handle`` in its place, so later calls go straight to it."""

    __slots__ = ("advertised_min", "api_key", "fast", "handle", "module_name", "name", "versions")

    def __init__(self, api_key: ApiKey, module_name: str, versions: tuple[int, int], advertised_min: int) -> None:
        self.api_key = api_key
        self.name = APIS[api_key].name
        self.module_name = module_name
        self.versions = versions
        self.advertised_min = advertised_min
        self.handle: Callable[[Any, Any], Awaitable[Any]] = self._load_and_handle
        # The module's synchronous ``fast`` handler, if it has one, once loaded (mockbroker.dispatch.dispatch,
        # "requests kept by their bytes"); None until then, so nothing is kept before the first call.
        self.fast: Callable[[Any, Any, int, Any], tuple[bytes, bytes] | None] | None = None

    def __repr__(self) -> str:
        return f"Handler({int(self.api_key)}, {self.name!r}, v{self.versions[0]}-{self.versions[1]})"

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


# Keyed by the ApiKey members, looked up with the request header's int api key (an ApiKey is equal
# to and hashes as its int, hence typed by int).
HANDLERS: dict[int, Handler] = _table()


def load_all() -> None:
    """Import every handler module now (and with them the codecs, the group coordinator and the
    log) instead of on first use. For long-lived in-process brokers such as the pytest fixture's:
    a test's first group request then takes no longer than its later ones."""
    for handler in HANDLERS.values():
        handler.load()


def served_versions(cluster: ClusterState, handler: Handler) -> tuple[int, int]:
    """The versions this cluster serves for an API: the handler's range under any configured cap."""
    lo, hi = handler.versions
    cap = cluster.version_caps.get(handler.api_key)
    if cap is not None:
        hi = min(hi, cap)
    return lo, hi


def advertised_versions(cluster: ClusterState, handler: Handler) -> tuple[int, int] | None:
    """What ApiVersions advertises (None: not advertised, when a cap is below the minimum).

    The advertised minimum is the handler's own statement and may differ from what it serves:
    Produce advertises 0 but serves 3+ (KAFKA-18659: librdkafka needs to see 0), and APIs that
    still serve versions Kafka 4 removed (for sarama, which never asks) advertise Kafka 4's
    minimum, so negotiating clients see the same ranges as against Kafka."""
    lo, hi = served_versions(cluster, handler)
    if hi < lo:
        return None
    return (handler.advertised_min, hi)
