"""librdkafka's mock cluster as a stand-alone process, the peer every broker benchmark compares with.

confluent-kafka's wheel bundles librdkafka, and its mock cluster (rdkafka_mock.h) is exported from
that shared object; this module reaches it through ctypes: a producer handle (librdkafka needs one
for its bookkeeping; it never connects anywhere), ``rd_kafka_mock_cluster_new(rk, N)``, topics
through ``rd_kafka_mock_topic_create`` and group.initial.rebalance.delay.ms through
``rd_kafka_mock_group_initial_rebalance_delay_ms``. The mock serves on its own thread.

Run as a script it prints ``MOCK READY bootstrap=HOST:PORT[,...]`` once serving (the same shape as
mockbroker's READY line) and serves until stdin closes or a signal arrives.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import sys
from pathlib import Path

RD_KAFKA_PRODUCER = 0


def librdkafka_path() -> str:
    """The librdkafka shared object inside confluent-kafka's wheel (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("confluent_kafka")
    if spec is None or spec.origin is None:
        raise RuntimeError("confluent-kafka is not installed (pip install -e '.[test]')")
    site = Path(spec.origin).parent.parent
    found = sorted(glob.glob(str(site / "confluent_kafka.libs" / "librdkafka*.so*")))
    if not found:
        raise RuntimeError(f"no librdkafka*.so* under {site / 'confluent_kafka.libs'}")
    return found[0]


class MockCluster:
    """One librdkafka mock cluster with ``brokers`` brokers, alive until ``destroy()``."""

    def __init__(self, brokers: int = 1, lib_path: str | None = None) -> None:
        lib = self.lib = ctypes.CDLL(lib_path or librdkafka_path())
        lib.rd_kafka_conf_new.restype = ctypes.c_void_p
        lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.rd_kafka_conf_set.restype = ctypes.c_int
        lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.rd_kafka_new.restype = ctypes.c_void_p
        lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
        lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
        lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
        lib.rd_kafka_mock_group_initial_rebalance_delay_ms.argtypes = [ctypes.c_void_p, ctypes.c_int32]
        lib.rd_kafka_mock_group_initial_rebalance_delay_ms.restype = None
        errstr = ctypes.create_string_buffer(512)
        conf = lib.rd_kafka_conf_new()
        # The handle only exists for the mock's bookkeeping: keep its own logging quiet.
        for name, value in ((b"log_level", b"3"),):
            if lib.rd_kafka_conf_set(conf, name, value, errstr, len(errstr)) != 0:
                raise RuntimeError(errstr.value.decode())
        self.rk = lib.rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, len(errstr))
        if not self.rk:
            raise RuntimeError(f"rd_kafka_new: {errstr.value.decode()}")
        self.mcluster = lib.rd_kafka_mock_cluster_new(self.rk, brokers)
        if not self.mcluster:
            raise RuntimeError("rd_kafka_mock_cluster_new failed")

    @property
    def bootstrap_servers(self) -> str:
        return self.lib.rd_kafka_mock_cluster_bootstraps(self.mcluster).decode()

    def create_topic(self, name: str, partitions: int, replication_factor: int = 1) -> None:
        err = self.lib.rd_kafka_mock_topic_create(self.mcluster, name.encode(), partitions, replication_factor)
        if err != 0:
            raise RuntimeError(f"rd_kafka_mock_topic_create({name}): error {err}")

    def set_initial_rebalance_delay_ms(self, delay_ms: int) -> None:
        self.lib.rd_kafka_mock_group_initial_rebalance_delay_ms(self.mcluster, delay_ms)

    def destroy(self) -> None:
        if self.mcluster:
            self.lib.rd_kafka_mock_cluster_destroy(self.mcluster)
            self.mcluster = None
        if self.rk:
            self.lib.rd_kafka_destroy(self.rk)
            self.rk = None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=1)
    parser.add_argument("--topic", action="append", default=[], metavar="NAME:PARTITIONS")
    parser.add_argument("--initial-rebalance-delay-ms", type=int, default=None,
                        help="group.initial.rebalance.delay.ms (the mock's default: 3000)")  # fmt: skip
    args = parser.parse_args(argv)
    cluster = MockCluster(args.brokers)
    for spec in args.topic:
        name, _, partitions = spec.partition(":")
        cluster.create_topic(name, int(partitions or 1))
    if args.initial_rebalance_delay_ms is not None:
        cluster.set_initial_rebalance_delay_ms(args.initial_rebalance_delay_ms)
    sys.stdout.write(f"MOCK READY bootstrap={cluster.bootstrap_servers}\n")
    sys.stdout.flush()
    # Serve until whoever started us closes our stdin (or signals us).
    try:
        while os.read(0, 4096):
            pass
    except KeyboardInterrupt:
        pass
    os._exit(0)  # the mock's threads need no orderly stop; a destroy can take a second or more


if __name__ == "__main__":
    sys.exit(main())
