"""librdkafka's mock cluster (rdkafka_mock.h) through ctypes, on the librdkafka that confluent-kafka's
wheel bundles: the second target of the conformance suite and the peer of the broker benchmarks.

Standard library only (bench/rdkafka_mock.py loads this file by path, so a benchmark process does
not pay for importing mockbroker). A producer handle exists for the mock's bookkeeping (it never
connects anywhere); ``rd_kafka_mock_cluster_new(rk, N)`` starts N brokers on their own thread.
Besides topics, the mock's own fault hooks are exposed: coordinator and leader placement, broker
down/up, queued request errors and per-broker round-trip time.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
from pathlib import Path

RD_KAFKA_PRODUCER = 0
_c = ctypes


def librdkafka_path() -> str:
    """The librdkafka shared object inside confluent-kafka's wheel (found without importing it)."""
    spec = importlib.util.find_spec("confluent_kafka")
    if spec is None or spec.origin is None:
        raise RuntimeError("confluent-kafka is not installed (pip install -e '.[test]')")
    site = Path(spec.origin).parent.parent
    found = sorted(glob.glob(str(site / "confluent_kafka.libs" / "librdkafka*.so*")))
    if not found:
        raise RuntimeError(f"no librdkafka*.so* under {site / 'confluent_kafka.libs'}")
    return found[0]


_SIGNATURES: dict[str, tuple[list[type], type | None]] = {
    "rd_kafka_conf_new": ([], _c.c_void_p),
    "rd_kafka_conf_set": ([_c.c_void_p, _c.c_char_p, _c.c_char_p, _c.c_char_p, _c.c_size_t], _c.c_int),
    "rd_kafka_new": ([_c.c_int, _c.c_void_p, _c.c_char_p, _c.c_size_t], _c.c_void_p),
    "rd_kafka_destroy": ([_c.c_void_p], None),
    "rd_kafka_mock_cluster_new": ([_c.c_void_p, _c.c_int], _c.c_void_p),
    "rd_kafka_mock_cluster_destroy": ([_c.c_void_p], None),
    "rd_kafka_mock_cluster_bootstraps": ([_c.c_void_p], _c.c_char_p),
    "rd_kafka_mock_topic_create": ([_c.c_void_p, _c.c_char_p, _c.c_int, _c.c_int], _c.c_int),
    "rd_kafka_mock_group_initial_rebalance_delay_ms": ([_c.c_void_p, _c.c_int32], None),
    "rd_kafka_mock_coordinator_set": ([_c.c_void_p, _c.c_char_p, _c.c_char_p, _c.c_int32], _c.c_int),
    "rd_kafka_mock_partition_set_leader": ([_c.c_void_p, _c.c_char_p, _c.c_int32, _c.c_int32], _c.c_int),
    "rd_kafka_mock_broker_set_down": ([_c.c_void_p, _c.c_int32], _c.c_int),
    "rd_kafka_mock_broker_set_up": ([_c.c_void_p, _c.c_int32], _c.c_int),
    "rd_kafka_mock_broker_set_rtt": ([_c.c_void_p, _c.c_int32, _c.c_int], _c.c_int),
    "rd_kafka_mock_push_request_errors_array": ([_c.c_void_p, _c.c_int16, _c.c_size_t, _c.c_void_p], None),
    "rd_kafka_mock_clear_request_errors": ([_c.c_void_p, _c.c_int16], None),
    "rd_kafka_mock_set_group_consumer_session_timeout_ms": ([_c.c_void_p, _c.c_int], None),
    "rd_kafka_mock_set_group_consumer_heartbeat_interval_ms": ([_c.c_void_p, _c.c_int], None),
}


class MockCluster:
    """One librdkafka mock cluster with ``brokers`` brokers (ids 1..N), alive until ``destroy()``."""

    def __init__(self, brokers: int = 1, lib_path: str | None = None) -> None:
        lib = self.lib = ctypes.CDLL(lib_path or librdkafka_path())
        for name, (argtypes, restype) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, restype
        self.brokers = brokers
        errstr = ctypes.create_string_buffer(512)
        conf = lib.rd_kafka_conf_new()
        # The handle only exists for the mock's bookkeeping: keep its own logging quiet.
        if lib.rd_kafka_conf_set(conf, b"log_level", b"3", errstr, len(errstr)) != 0:
            raise RuntimeError(errstr.value.decode())
        self.rk = lib.rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, len(errstr))
        if not self.rk:
            raise RuntimeError(f"rd_kafka_new: {errstr.value.decode()}")
        self.mcluster = lib.rd_kafka_mock_cluster_new(self.rk, brokers)
        if not self.mcluster:
            raise RuntimeError("rd_kafka_mock_cluster_new failed")

    @property
    def bootstrap_servers(self) -> str:
        return str(self.lib.rd_kafka_mock_cluster_bootstraps(self.mcluster).decode())

    def _check(self, what: str, err: int) -> None:
        if err != 0:
            raise RuntimeError(f"{what}: librdkafka error {err}")

    def create_topic(self, name: str, partitions: int, replication_factor: int = 1) -> None:
        self._check(f"rd_kafka_mock_topic_create({name})",
                    self.lib.rd_kafka_mock_topic_create(self.mcluster, name.encode(), partitions, replication_factor))  # fmt: skip

    def set_initial_rebalance_delay_ms(self, delay_ms: int) -> None:
        self.lib.rd_kafka_mock_group_initial_rebalance_delay_ms(self.mcluster, delay_ms)

    def set_consumer_group_timing(self, session_timeout_ms: int, heartbeat_interval_ms: int) -> None:
        """KIP-848 groups: group.consumer.session.timeout.ms and group.consumer.heartbeat.interval.ms."""
        self.lib.rd_kafka_mock_set_group_consumer_session_timeout_ms(self.mcluster, session_timeout_ms)
        self.lib.rd_kafka_mock_set_group_consumer_heartbeat_interval_ms(self.mcluster, heartbeat_interval_ms)

    def set_coordinator(self, key_type: str, key: str, broker_id: int) -> None:
        """``key_type`` "group" or "transaction"."""
        self._check("rd_kafka_mock_coordinator_set",
                    self.lib.rd_kafka_mock_coordinator_set(self.mcluster, key_type.encode(), key.encode(), broker_id))  # fmt: skip

    def set_leader(self, topic: str, partition: int, broker_id: int) -> None:
        self._check("rd_kafka_mock_partition_set_leader",
                    self.lib.rd_kafka_mock_partition_set_leader(self.mcluster, topic.encode(), partition, broker_id))  # fmt: skip

    def broker_down(self, broker_id: int) -> None:
        self._check("rd_kafka_mock_broker_set_down", self.lib.rd_kafka_mock_broker_set_down(self.mcluster, broker_id))

    def broker_up(self, broker_id: int) -> None:
        self._check("rd_kafka_mock_broker_set_up", self.lib.rd_kafka_mock_broker_set_up(self.mcluster, broker_id))

    def set_rtt(self, broker_id: int, rtt_ms: int) -> None:
        self._check("rd_kafka_mock_broker_set_rtt", self.lib.rd_kafka_mock_broker_set_rtt(self.mcluster, broker_id, rtt_ms))

    def push_request_errors(self, api_key: int, errors: list[int]) -> None:
        """The next len(errors) requests of ``api_key`` (any broker) fail, one error each."""
        array = (ctypes.c_int * len(errors))(*errors)
        self.lib.rd_kafka_mock_push_request_errors_array(self.mcluster, api_key, len(errors), ctypes.cast(array, ctypes.c_void_p))

    def destroy(self) -> None:
        if self.mcluster:
            self.lib.rd_kafka_mock_cluster_destroy(self.mcluster)
            self.mcluster = None
        if self.rk:
            self.lib.rd_kafka_destroy(self.rk)
            self.rk = None
