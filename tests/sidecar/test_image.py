"""The docker image and the compose example as plain processes (test_container.py and
test_compose.py run the real image and compose with podman): the commands the image runs are
taken from docker/Dockerfile (ENTRYPOINT + CMD, the HEALTHCHECK, the ENV) and from
docker/compose.yaml (each service's command and environment) and run here as processes; compose.yaml is validated against the Compose specification's JSON schema
(the copy check-jsonschema ships as vendor.compose-spec, with its licence).

What a container network provides is mapped, and only that: a service's name resolves to
127.0.0.1, and the fixed ports 9092 and 8092 become free ports (the machine is shared), set
through the same MOCKBROKER_* variables the image uses.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataResponse
from tests.mockbroker.test_cli import api_versions, clean_env, connect, request
from tests.sidecar.support import EXIT_DEADLINE_S, start_serve, stop

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
RUNNER_DEADLINE_S = 120.0


# -- reading the Dockerfile ---------------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in (DOCKER / "Dockerfile").read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        word, _, rest = whole.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def final_stage() -> list[tuple[str, str]]:
    """The instructions of the image itself: those after the last FROM (the build stage before it
    only fills the venv that the image copies)."""
    lines = dockerfile()
    last_from = max(i for i, (word, _) in enumerate(lines) if word == "FROM")
    return lines[last_from:]


def instruction(name: str, lines: list[tuple[str, str]] | None = None) -> list[str]:
    return [args for word, args in (final_stage() if lines is None else lines) if word == name]


def exec_form(name: str) -> list[str]:
    (args,) = instruction(name)[-1:]
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), f"{name} must be in exec form: {args}"
    return value


def image_env(outside: dict[str, str] | None = None) -> dict[str, str]:
    """The image's ENV; ``$NAME`` in a value is read from ``outside`` (the base image's environment)."""
    env: dict[str, str] = {}
    for args in instruction("ENV"):
        for key, value in re.findall(r'(\w+)=("[^"]*"|\S+)', args):
            seen = {**(outside or {}), **env}
            env[key] = re.sub(r"\$\{?(\w+)\}?", lambda m, seen=seen: seen.get(m.group(1), ""), value.strip('"'))
    return env


def healthcheck() -> tuple[dict[str, str], list[str]]:
    (args,) = instruction("HEALTHCHECK")
    options = dict(re.findall(r"--([\w-]+)=(\S+)", args))
    command = args[args.index("CMD") + 3 :].strip()
    return options, json.loads(command)


def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    return document


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def on_this_host(env: dict[str, Any], services: list[str], ports: dict[int, int]) -> dict[str, str]:
    """A service's environment as the container network would make it work: service names ->
    127.0.0.1, and the image's fixed ports -> the free ports this run uses."""
    out = {}
    for key, raw in env.items():
        value = str(raw)
        for name in services:
            for fixed, free in ports.items():
                value = re.sub(rf"(?<![\w.-]){re.escape(name)}:{fixed}(?![0-9])", f"{name}:{free}", value)
            value = re.sub(rf"(?<![\w.-]){re.escape(name)}(?=$|[:/,])", "127.0.0.1", value)
        out[key] = value
    return out


# -- static checks -----------------------------------------------------------------------------------------


def test_the_dockerfile_is_a_slim_non_root_sidecar_that_checks_its_own_health() -> None:
    lines = dockerfile()
    # One Dockerfile for both worlds: the slim Python image by default, any base with a Python and
    # its venv module by --build-arg BASE_IMAGE=... (tests/sidecar/test_container.py builds one).
    assert instruction("ARG", lines) == ["BASE_IMAGE=python:3.11-slim"] and lines[0][0] == "ARG"
    assert instruction("FROM", lines) == ["${BASE_IMAGE} AS build", "${BASE_IMAGE}"]
    assert any("python3 -m venv /opt/mockbroker" in run for run in instruction("RUN", lines))
    assert instruction("COPY") == ["--from=build /opt/mockbroker /opt/mockbroker"]
    assert image_env({"PATH": "/usr/bin"})["PATH"] == "/opt/mockbroker/bin:/usr/bin"
    (user,) = instruction("USER")
    assert user not in ("root", "0")
    assert any("useradd" in run and user in run for run in instruction("RUN"))
    assert any('pip install ".[serve]"' in run for run in instruction("RUN", lines)), "installs the package with uvloop and aiohttp"
    assert exec_form("ENTRYPOINT") == ["mockbroker", "serve"]
    cmd = exec_form("CMD")
    assert cmd[cmd.index("--host") + 1] == "0.0.0.0" and cmd[cmd.index("--admin-host") + 1] == "0.0.0.0"
    env = image_env()
    assert {env["MOCKBROKER_PORT"], env["MOCKBROKER_ADMIN_PORT"]} == {"9092", "8092"}
    assert "MOCKBROKER_ADVERTISED_HOST" in env
    assert set(" ".join(instruction("EXPOSE")).split()) == {"9092", "8092"}
    options, command = healthcheck()
    assert command == ["mockbroker", "health"] and {"interval", "timeout", "retries"} <= set(options)
    assert not any("curl" in run or "wget" in run for run in instruction("RUN", lines))


def compose_schema() -> dict[str, Any]:
    vendored = resources.files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json"
    schema: dict[str, Any] = json.loads(vendored.read_text())
    return schema


def test_compose_yaml_follows_the_compose_specification() -> None:
    schema = compose_schema()
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(compose()), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors)
    # The validator is not vacuous: a misspelt key and a wrong type are caught.
    broken = compose()
    broken["services"]["mockbroker"]["enviroment"] = {"X": "1"}
    broken["services"]["consumer"]["depends_on"] = 3
    assert len(list(validator.iter_errors(broken))) >= 2
    services = compose()["services"]
    assert set(services) == {"mockbroker", "consumer", "test-runner", "mockbroker-sasl", "sasl-client"}
    # The SASL_SSL example (docs/security.md) starts only with `--profile sasl`.
    assert services["mockbroker-sasl"]["profiles"] == services["sasl-client"]["profiles"] == ["sasl"]
    assert services["consumer"]["depends_on"]["mockbroker"]["condition"] == "service_healthy"


# -- the image's commands as processes ---------------------------------------------------------------------


def test_the_images_commands_run_the_compose_example_end_to_end(tmp_path: Path) -> None:
    services = compose()["services"]
    names = list(services)
    kafka_port, admin_port = free_port(), free_port()
    venv_bin = str(Path(sys.executable).parent)
    base = clean_env(PATH=f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    # The image's ENV, then the compose service's environment, as docker applies them.
    ports = {9092: kafka_port, 8092: admin_port}
    broker_env = {**base, **image_env(base), **on_this_host(services["mockbroker"]["environment"], names, ports)}
    broker_env.update(MOCKBROKER_PORT=str(kafka_port), MOCKBROKER_ADMIN_PORT=str(admin_port))
    argv = exec_form("ENTRYPOINT") + exec_form("CMD")
    _, health_argv = healthcheck()

    def health() -> subprocess.CompletedProcess[str]:
        return subprocess.run(health_argv, env=broker_env, capture_output=True, text=True, timeout=EXIT_DEADLINE_S)

    before = health()
    assert before.returncode == 1 and before.stdout.startswith("not ready"), before

    served = start_serve(argv, broker_env, tmp_path / "mockbroker.log", tmp_path)
    consumer: subprocess.Popen[str] | None = None
    try:
        fields = dict(w.split("=", 1) for w in served.ready.split(" ")[2:])
        assert fields["bootstrap"] == f"127.0.0.1:{kafka_port}"  # MOCKBROKER_ADVERTISED_HOST=mockbroker, mapped
        assert fields["admin"] == f"http://0.0.0.0:{admin_port}"
        ok = health()
        assert ok.returncode == 0 and ok.stdout.startswith("ready:"), ok

        consumer_env = {**base, **on_this_host(services["consumer"]["environment"], names, ports)}
        consumer = subprocess.Popen(
            [sys.executable, str(DOCKER / "example" / "consumer.py")], env=consumer_env,
            stdout=subprocess.PIPE, stderr=open(tmp_path / "consumer.log", "w"), text=True,  # noqa: SIM115
        )  # fmt: skip
        runner_env = on_this_host(services["test-runner"]["environment"], names, ports)
        runner_cmd = services["test-runner"]["command"]
        assert runner_cmd == ["python", "/app/drive_faults.py"]
        runner = subprocess.run(
            [sys.executable, str(DOCKER / "example" / "drive_faults.py")], env={**base, **runner_env},
            capture_output=True, text=True, timeout=RUNNER_DEADLINE_S + 30,
        )  # fmt: skip
        assert runner.returncode == 0, f"{runner.stdout}\n{runner.stderr}\nconsumer: {(tmp_path / 'consumer.log').read_text()[-3000:]}"
        assert json.loads(runner.stdout)["result"] == "passed"

        consumer.send_signal(signal.SIGTERM)
        out, _ = consumer.communicate(timeout=EXIT_DEADLINE_S * 2)
        assert consumer.returncode == 0
        lines = [json.loads(line) for line in out.splitlines() if line.strip()]
        consumed = {(e["partition"], e["offset"]) for e in lines if e["event"] == "consumed"}
        assert len(consumed) == 20, lines  # every record, through the expiry and the refused commits
        assert lines[-1]["event"] == "stopped"
    finally:
        if consumer is not None and consumer.poll() is None:
            consumer.kill()
            consumer.wait(EXIT_DEADLINE_S)
        status = stop(served.proc)
    assert status == 0, served.stderr()
    assert "Traceback" not in served.stderr() and "broker bug" not in served.stderr()
    after = health()
    assert after.returncode == 1 and "cannot reach" in after.stdout


# -- the advertised host ------------------------------------------------------------------------------------


def test_advertised_host_goes_to_metadata_while_the_listener_binds_where_told(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "mockbroker", "serve", "--host", "127.0.0.1", "--port", "0", "--advertised-host", "kafka"]
    served = start_serve(argv, clean_env(), tmp_path / "serve.log", tmp_path)
    try:
        fields = dict(w.split("=", 1) for w in served.ready.split(" ")[2:])
        host, port = fields["bootstrap"].rsplit(":", 1)
        assert host == "kafka"
        with connect(("127.0.0.1", int(port))) as sock:  # bound on loopback, at the advertised port
            assert api_versions(sock).error_code == 0
            metadata: MetadataResponse = request(sock, 3, 9, 2, MetadataRequest(topics=None))
        assert [(b.host, b.port) for b in metadata.brokers] == [("kafka", int(port))]
        assert "0.0.0.0" not in served.stderr()
        with pytest.raises(OSError):
            # Not on every interface: another local address does not reach it.
            connect(("127.0.0.2", int(port))).close()
    finally:
        stop(served.proc)
