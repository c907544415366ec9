"""socket.listen.backlog.size (KIP-764): the backlog the broker's listening sockets are given
(Kafka's Acceptor passes it to ServerSocketChannel.bind), a broker-wide setting with Kafka's
default (50) and validator (INT, atLeast(1)), read from the kernel's own view of the socket."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from mockbroker import MockCluster
from mockbroker.cli import parse_serve
from mockbroker.config.cluster import ClusterConfig
from mockbroker.config.settings import SettingsError
from mockbroker.testing import wait_for
from tests.mockbroker.net.sockets import listen_queue
from tests.mockbroker.net.test_limits import API_VERSIONS, api_versions, broker, read_correlation
from tests.mockbroker.wire import WireClient

KEY = "socket.listen.backlog.size"


def test_the_setting_has_kafkas_name_default_and_range(tmp_path: Path) -> None:
    assert ClusterConfig().socket_listen_backlog_size == 50  # SocketServerConfigs.SOCKET_LISTEN_BACKLOG_SIZE_DEFAULT
    assert ClusterConfig.from_kafka({KEY: "7"}).socket_listen_backlog_size == 7
    # Kafka's ConfigException (ConfigDef.parseType, Range.atLeast(1)), for every source alike
    for bad, reason in [
        ("0", "Value must be at least 1"),
        ("-1", "Value must be at least 1"),
        ("2147483648", "Not a number of type INT"),
        ("many", "Not a number of type INT"),
    ]:
        with pytest.raises(ValueError) as refused:
            ClusterConfig.from_kafka({KEY: bad})
        assert str(refused.value) == f"Invalid value {bad} for configuration {KEY}: {reason}"
    with pytest.raises(ValueError, match=rf"^Invalid value 0 for configuration {KEY}: Value must be at least 1$"):
        MockCluster(brokers=1, socket_listen_backlog_size=0)  # the fixture's keyword, checked the same
    with pytest.raises(SettingsError, match=rf"^MOCKBROKER_SET_SOCKET_LISTEN_BACKLOG_SIZE: Invalid value 0 for configuration {KEY}"):
        parse_serve([], {"MOCKBROKER_SET_SOCKET_LISTEN_BACKLOG_SIZE": "0"})
    # --set beats MOCKBROKER_SET_* beats the TOML file, as for every Kafka setting
    path = tmp_path / "broker.toml"
    path.write_text(f'[kafka]\n"{KEY}" = 30\n')
    assert parse_serve(["--config", str(path)], {}).cluster.socket_listen_backlog_size == 30
    env = {"MOCKBROKER_SET_SOCKET_LISTEN_BACKLOG_SIZE": "20"}
    assert parse_serve(["--config", str(path)], env).cluster.socket_listen_backlog_size == 20
    assert parse_serve(["--config", str(path), "--set", f"{KEY}=10"], env).cluster.socket_listen_backlog_size == 10


def test_kafka_reads_it_broker_wide_only() -> None:
    """Kafka 4.3.1's Acceptor takes KafkaConfig.socketListenBacklogSize, never a listener's
    listener.name.<name>. value (unlike max.connections): such a key is refused, not ignored."""
    with pytest.raises(ValueError, match=r"unknown setting 'listener\.name\.plaintext\.socket\.listen\.backlog\.size'"):
        MockCluster(brokers=1, listener_overrides={f"listener.name.plaintext.{KEY}": "5"})


def _wait_for_queue(port: int, length: int) -> tuple[int, int]:
    """Poll the kernel (without yielding to the broker's event loop) until ``length`` completed
    connections wait on the listening socket; fail at the deadline."""
    def queued() -> tuple[int, int] | None:
        queue = listen_queue(port)
        return queue if queue[0] == length else None

    queue = wait_for(queued, f"{length} completed connections in the accept queue", timeout=10, interval=0.001)
    assert queue is not None  # wait_for returns only a truthy answer
    return queue


async def test_the_listening_socket_has_the_configured_backlog_and_holds_that_many_plus_one() -> None:
    async with broker(socket_listen_backlog_size=3) as (_, server):
        port = server.node.port
        assert listen_queue(port) == (0, 3)  # what listen() was given
        # The event loop does not run until all are connected: the broker accepts none meanwhile,
        # and the kernel completes backlog + 1 handshakes (Linux's sk_acceptq_is_full is "more than").
        waiting = [socket.create_connection((server.node.host, port), timeout=10) for _ in range(4)]
        assert _wait_for_queue(port, 4) == (4, 3)
        for correlation_id, sock in enumerate(waiting):
            sock.sendall(api_versions(correlation_id))
        clients = [WireClient(*await asyncio.open_connection(sock=sock), "t") for sock in waiting]
        for correlation_id, client in enumerate(clients):  # each is then accepted and served
            assert await read_correlation(client, API_VERSIONS, 3) == correlation_id
            await client.close()
        assert listen_queue(port) == (0, 3)


async def test_kafkas_default_backlog() -> None:
    async with broker() as (_, server):
        assert listen_queue(server.node.port) == (0, 50)
