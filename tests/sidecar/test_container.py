"""The image itself (docker/Dockerfile, built by `make container-images` with podman on the Debian
base it makes: docker/ci/podman.sh): its default command serves a real client on the host,
`mockbroker health` answers inside the container and as the image's HEALTHCHECK, the MOCKBROKER_*
environment is honoured, and SIGTERM stops it with exit status 0.

The container shares the host's network (free ports, set through the image's own MOCKBROKER_*
variables), the way docker/ci/containers.conf runs containers on the CI machines.
"""

from __future__ import annotations

import json
import socket

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataResponse
from tests.integration.support import wait_for
from tests.mockbroker.test_cli import api_versions, connect, request
from tests.sidecar.podman import IMAGE, podman, removed_after, require_images, unique

RECORDS = 6


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def logs(name: str) -> str:
    result = podman("logs", name, check=False)
    return f"container logs:\n{result.stdout}{result.stderr}"


def test_the_image_serves_a_host_client_reports_health_and_stops_on_sigterm() -> None:
    require_images(IMAGE)
    config = json.loads(podman("image", "inspect", IMAGE).stdout)[0]
    # Built in Docker's format, so the HEALTHCHECK survived; a non-root user.
    assert config["Healthcheck"]["Test"] == ["CMD", "mockbroker", "health"]
    assert config["User"] == "mockbroker"

    name = unique("mockbroker-image-test")
    kafka_port, admin_port = free_port(), free_port()
    env = {
        "MOCKBROKER_PORT": str(kafka_port),
        "MOCKBROKER_ADMIN_PORT": str(admin_port),
        "MOCKBROKER_ADVERTISED_HOST": "127.0.0.1",  # the image's default is localhost
        "MOCKBROKER_TOPICS": "orders:3,audit:2",
    }
    with removed_after(name):
        # The image's ENTRYPOINT and CMD, unchanged: only the environment is ours.
        podman("run", "--detach", "--name", name, "--network", "host", *(f"--env={k}={v}" for k, v in env.items()), IMAGE)

        def healthy_inside() -> bool:
            result = podman("exec", name, "mockbroker", "health", check=False)
            return result.returncode == 0 and result.stdout.startswith("ready:")

        wait_for(healthy_inside, "`mockbroker health` inside the container to pass", explain=lambda: logs(name))
        assert podman("healthcheck", "run", name, check=False).returncode == 0, logs(name)  # the image's HEALTHCHECK
        assert podman("exec", name, "id", "-u").stdout.strip() == "10001"

        # Metadata says what MOCKBROKER_ADVERTISED_HOST/PORT say, with the MOCKBROKER_TOPICS topics.
        with connect(("127.0.0.1", kafka_port)) as sock:
            assert api_versions(sock).error_code == 0
            metadata: MetadataResponse = request(sock, 3, 9, 2, MetadataRequest(topics=None))
        assert [(b.host, b.port) for b in metadata.brokers] == [("127.0.0.1", kafka_port)]
        assert {t.name: len(t.partitions) for t in metadata.topics} == {"orders": 3, "audit": 2}

        # A real client on the host produces and consumes through the container.
        bootstrap = f"127.0.0.1:{kafka_port}"
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        try:
            for i in range(RECORDS):
                producer.send("orders", key=f"k{i}".encode(), value=f"order {i}".encode(), partition=i % 3)
            producer.flush(timeout=30)
        finally:
            producer.close(timeout=10)
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False)
        got: list[bytes] = []
        try:
            consumer.assign([TopicPartition("orders", p) for p in range(3)])

            def consumed_all() -> bool:
                for records in consumer.poll(timeout_ms=200).values():
                    got.extend(r.value for r in records)
                return len(got) >= RECORDS

            wait_for(consumed_all, f"{RECORDS} records back from the container", explain=lambda: f"{got}\n{logs(name)}")
        finally:
            consumer.close()
        assert sorted(got) == sorted(f"order {i}".encode() for i in range(RECORDS))

        # `podman stop` sends the image's stop signal, SIGTERM, and waits (SIGKILL only after 30 s).
        podman("stop", "--time", "30", name)
        assert podman("wait", name).stdout.strip() == "0", logs(name)
        assert podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip() == "0"
        final = logs(name)
        assert "Traceback" not in final and "broker bug" not in final, final
