"""The command line: settings precedence (pure), bad values, and a served broker in a subprocess.

Served brokers always use --port 0 (free ports), never 9092, so the suite runs next to a
`make serve`. Every wait has a deadline; the subprocess is killed at teardown if a test failed
before it stopped.
"""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mockbroker.cli import main, parse_serve, plugin_commands
from mockbroker.config.settings import ServeSettings, SettingsError, TopicSpec, env_setting_name
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataResponse
from mockbroker_protocol.primitives import INT32

READY_DEADLINE_S = 30.0
EXIT_DEADLINE_S = 15.0
IO_TIMEOUT_S = 10.0

FILE = """\
[cluster]
port = 19092
brokers = 3
cluster_id = "from-file"
advertised_host = "file-host"

[kafka]
"auto.create.topics.enable" = false
num.partitions = 4            # unquoted: a dotted key in TOML, read back as num.partitions
"log.retention.ms" = "1000"

[[topic]]
name = "orders"
partitions = 6
replication_factor = 2
configs = { "cleanup.policy" = "compact", "retention.ms" = 5000 }

[[topic]]
name = "shared"
partitions = 1
"""


def settings(argv: list[str], env: dict[str, str] | None = None) -> ServeSettings:
    return parse_serve(argv, env or {})


@pytest.fixture
def config_file(tmp_path: Path) -> str:
    path = tmp_path / "broker.toml"
    path.write_text(FILE)
    return str(path)


# -- precedence (pure) --------------------------------------------------------------------------------


def test_other_packages_commands_come_from_entry_points(capsys: pytest.CaptureFixture[str]) -> None:
    """conformance, analyze and assignor-lab are entry points of mockbroker.commands (mockbroker
    imports neither package), listed by --help with their docstrings' first lines."""
    commands = plugin_commands()
    assert set(commands) == {"conformance", "analyze", "assignor-lab"}
    assert {ep.value.split(":")[0] for ep in commands.values()} == {"mockbroker_conformance.cli", "mockbroker_pipeline.cli"}
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "run the client conformance suite" in out and "assignor-lab" in out and "analyze" in out


def test_defaults() -> None:
    s = settings([])
    c = s.cluster
    assert (c.host, c.port, c.brokers, c.advertised_host, c.advertised_port) == (
        "127.0.0.1",
        9092,
        1,
        None,
        None,
    )
    assert c.cluster_id == "mockbroker-cluster-0001"
    assert c.auto_create_topics_enable is True
    assert s.topics == []
    assert (s.log_level, s.uvloop) == ("info", True)
    assert set(s.sources.values()) == {"default"}
    assert s.warnings == []


def test_config_file_alone(config_file: str) -> None:
    s = settings(["--config", config_file])
    c = s.cluster
    assert (c.port, c.brokers, c.cluster_id, c.advertised_host) == (19092, 3, "from-file", "file-host")
    assert (c.auto_create_topics_enable, c.num_partitions, c.log_retention_ms) == (False, 4, 1000)
    assert c.host == "127.0.0.1"  # not in the file: the CLI default
    assert s.topics == [
        TopicSpec("orders", 6, 2, {"cleanup.policy": "compact", "retention.ms": "5000"}),
        TopicSpec("shared", 1, None, {}),
    ]
    assert s.sources["port"] == f"{config_file} [cluster] port"
    assert s.sources["num_partitions"] == f"{config_file} [kafka] num.partitions"


def test_environment_beats_the_file_and_flags_beat_the_environment(config_file: str) -> None:
    env = {
        "MOCKBROKER_PORT": "29092",
        "MOCKBROKER_BROKERS": "2",
        "MOCKBROKER_HOST": "0.0.0.0",
        "MOCKBROKER_ADVERTISED_HOST": "env-host",
        "MOCKBROKER_TOPICS": "shared:5, fromenv",
        "MOCKBROKER_SET_NUM_PARTITIONS": "7",
        "MOCKBROKER_SET_AUTO_CREATE_TOPICS_ENABLE": "true",
    }
    s = settings(["--config", config_file], env)
    c = s.cluster
    # environment over file
    assert (c.port, c.brokers, c.host, c.advertised_host) == (29092, 2, "0.0.0.0", "env-host")
    assert (c.num_partitions, c.auto_create_topics_enable) == (7, True)
    # file where the environment is silent, defaults where both are
    assert (c.cluster_id, c.log_retention_ms, c.advertised_port) == ("from-file", 1000, None)
    assert s.sources["brokers"] == "MOCKBROKER_BROKERS"
    assert s.sources["num_partitions"] == "MOCKBROKER_SET_NUM_PARTITIONS"

    s = settings(
        ["--config", config_file, "--port", "39092", "--host", "127.0.0.1", "--set", "num.partitions=9",
         "--advertised-port", "40000", "--cluster-id", "from-flags", "--topic", "shared:8:2"],
        env,
    )  # fmt: skip
    c = s.cluster
    # flags over environment
    assert (c.port, c.host, c.num_partitions, c.cluster_id) == (39092, "127.0.0.1", 9, "from-flags")
    assert c.advertised_port == 40000
    # environment where the flags are silent
    assert (c.brokers, c.advertised_host, c.auto_create_topics_enable) == (2, "env-host", True)
    assert s.sources["port"] == "--port"
    assert s.sources["num_partitions"] == "--set num.partitions"


def test_topics_from_every_source_combine_and_the_higher_one_wins_by_name(config_file: str) -> None:
    s = settings(
        ["--config", config_file, "--topic", "shared:8:2", "--topic", "flagged"],
        {"MOCKBROKER_TOPICS": "shared:5,fromenv:2,orders:1", "MOCKBROKER_BROKERS": "2"},
    )
    by_name = {t.name: t for t in s.topics}
    assert list(by_name) == ["orders", "shared", "fromenv", "flagged"]  # first declared first
    assert by_name["orders"] == TopicSpec("orders", 1, None, {})  # the environment's, as a whole
    assert by_name["shared"] == TopicSpec("shared", 8, 2, {})  # the flag's
    assert by_name["fromenv"] == TopicSpec("fromenv", 2, None, {})
    assert by_name["flagged"] == TopicSpec("flagged", None, None, {})


def test_kafka_settings_precedence_set_over_env_over_file(tmp_path: Path) -> None:
    path = tmp_path / "k.toml"
    path.write_text('[kafka]\n"message.max.bytes" = 100\n"log.retention.bytes" = 200\n"num.partitions" = 3\n')
    env = {"MOCKBROKER_SET_MESSAGE_MAX_BYTES": "1000", "MOCKBROKER_SET_LOG_RETENTION_BYTES": "2000"}
    c = settings(["--config", str(path), "--set", "message.max.bytes=10000"], env).cluster
    assert (c.message_max_bytes, c.log_retention_bytes, c.num_partitions) == (10000, 2000, 3)
    # a repeated --set: the last one wins, as for any repeated option
    c = settings(["--set", "num.partitions=2", "--set", "num.partitions=5"]).cluster
    assert c.num_partitions == 5


def test_broker_table_is_an_alias_and_config_file_can_come_from_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "b.toml"
    path.write_text(
        '[broker]\nport = 0\nfirst_node_id = 0\nracks = ["r1"]\n\n[broker.api_version_caps]\n18 = 3\n'
    )
    c = settings([], {"MOCKBROKER_CONFIG": str(path)}).cluster
    assert (c.port, c.first_node_id, c.racks, c.api_version_caps) == (0, 0, ("r1",), {18: 3})
    other = tmp_path / "other.toml"
    other.write_text("[cluster]\nport = 1234\n")
    assert settings(["--config", str(other)], {"MOCKBROKER_CONFIG": str(path)}).cluster.port == 1234


def test_log_level_and_uvloop_precedence() -> None:
    assert (
        settings([], {"MOCKBROKER_LOG_LEVEL": "DEBUG", "MOCKBROKER_UVLOOP": "false"}).log_level
    ) == "debug"
    s = settings(["--log-level", "warning"], {"MOCKBROKER_LOG_LEVEL": "debug", "MOCKBROKER_UVLOOP": "0"})
    assert (s.log_level, s.uvloop) == ("warning", False)
    assert settings(["--no-uvloop"], {"MOCKBROKER_UVLOOP": "true"}).uvloop is False


def test_environment_names_of_kafka_settings() -> None:
    assert env_setting_name("MOCKBROKER_SET_AUTO_CREATE_TOPICS_ENABLE") == "auto.create.topics.enable"
    assert env_setting_name("MOCKBROKER_SET_A__B___C_D") == "a_b-c.d"


def test_unknown_mockbroker_variables_are_reported_not_fatal() -> None:
    s = settings([], {"MOCKBROKER_PROT": "1", "OTHER": "x"})
    assert s.warnings == ["ignoring unknown environment variable MOCKBROKER_PROT"]


@pytest.mark.parametrize(
    ("argv", "env", "named"),
    [
        ([], {"MOCKBROKER_PORT": "x"}, "MOCKBROKER_PORT"),
        (["--topic", "t:0"], {}, "argument --topic"),
        (["--port", "65535", "--brokers", "2"], {}, "--port, --brokers"),
        (["--topic", "t:1:2"], {}, "replication factor 2"),
    ],
)
def test_settings_errors_name_their_source(argv: list[str], env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        settings(argv, env)


# -- bad values: exit status 2, one line naming the key (subprocess) ----------------------------------


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOCKBROKER_")}
    env.update(extra)
    return env


def run_cli(
    args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockbroker", *args],
        env=clean_env(**(env or {})),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=EXIT_DEADLINE_S,
    )


BAD_FILES = {
    "unknown_table": ("[clusterr]\nport = 1\n", "unknown table [clusterr]; allowed: [cluster]"),
    "unknown_field": (
        "[cluster]\nprot = 1\n",
        "[cluster] prot: unknown setting; allowed: brokers, host, port",
    ),
    "bad_port": ('[cluster]\nport = "high"\n', "[cluster] port: must be an integer 0-65535, not 'high'"),
    "bad_kafka": (
        '[kafka]\n"num.partitions" = 0\n',
        "[kafka] num.partitions: Invalid value 0 for configuration num.partitions: Value must be at least 1",
    ),
    "topic_key": (
        '[[topic]]\nname = "t"\npartition = 3\n',
        "unknown key 'partition'; allowed: name, partitions",
    ),
    "twice": ('[cluster]\nnum_partitions = 2\n[kafka]\n"num.partitions" = 3\n', "sets num_partitions again"),
    "not_toml": ("[cluster\n", "not valid TOML"),
}


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--port", "abc"], {}, "argument --port: must be an integer 0-65535, not 'abc'"),
        (["--port", "70000"], {}, "argument --port: must be an integer 0-65535, not '70000'"),
        (["--brokers", "0"], {}, "argument --brokers: must be an integer >= 1, not '0'"),
        (["--advertised-port", "0"], {}, "argument --advertised-port: must be an integer 1-65535"),
        (["--host", ""], {}, "argument --host: must be a host name or address (non-empty, no spaces)"),
        (["--cluster-id", "a b"], {}, "argument --cluster-id: must be a cluster id (non-empty, no spaces)"),
        (["--topic", "a:b"], {}, "argument --topic a partitions: must be an integer >= 1, not 'b'"),
        (
            ["--topic", "a:1:2:3"],
            {},
            "argument --topic: expected NAME[:PARTITIONS[:REPLICATION]], not 'a:1:2:3'",
        ),
        (["--topic", "bad/name"], {}, "argument --topic: Topic name is invalid: 'bad/name' contains"),
        (["--topic", "t", "--topic", "t:2"], {}, "argument --topic: topic 't' is declared twice"),
        (
            ["--set", "auto.create.topics.enable=maybe"],
            {},
            "argument --set: Invalid value maybe for configuration auto.create.topics.enable: Expected value to be either true or false",
        ),
        (
            ["--set", "no.such.setting=1"],
            {},
            "argument --set: unknown setting 'no.such.setting'; known settings: advertised.listeners, allow.everyone.if.no.acl.found",
        ),
        (["--set", "num.partitions"], {}, "argument --set: expected KEY=VALUE"),
        (
            ["--log-level", "loud"],
            {},
            "argument --log-level: must be one of debug, info, warning, error, not 'loud'",
        ),
        (["--bogus"], {}, "unrecognized arguments: --bogus"),
        (
            ["--config", "missing.toml"],
            {},
            "config file 'missing.toml': cannot read it: No such file or directory",
        ),
        ([], {"MOCKBROKER_PORT": "-1"}, "MOCKBROKER_PORT: must be an integer 0-65535, not '-1'"),
        ([], {"MOCKBROKER_BROKERS": "many"}, "MOCKBROKER_BROKERS: must be an integer >= 1, not 'many'"),
        ([], {"MOCKBROKER_TOPICS": "a:3,a"}, "MOCKBROKER_TOPICS: topic 'a' is declared twice"),
        (
            [],
            {"MOCKBROKER_SET_NUM_PARTITIONS": "x"},
            "MOCKBROKER_SET_NUM_PARTITIONS: Invalid value x for configuration num.partitions: Not a number of type INT",
        ),
        ([], {"MOCKBROKER_SET_NOPE": "1"}, "MOCKBROKER_SET_NOPE: unknown setting 'nope'"),
        ([], {"MOCKBROKER_UVLOOP": "perhaps"}, "MOCKBROKER_UVLOOP: must be true or false, not 'perhaps'"),
        (
            [],
            {"MOCKBROKER_LOG_LEVEL": "x"},
            "MOCKBROKER_LOG_LEVEL: must be one of debug, info, warning, error",
        ),
    ],
)
def test_bad_values_exit_2_with_one_line_naming_the_key(
    args: list[str], env: dict[str, str], expected: str, tmp_path: Path
) -> None:
    result = run_cli(["serve", "--port", "0", *args], env, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mockbroker serve: error: ")
    assert expected in lines[0]


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_config_files_exit_2_naming_file_and_key(case: str, tmp_path: Path) -> None:
    text, expected = BAD_FILES[case]
    (tmp_path / "bad.toml").write_text(text)
    result = run_cli(["serve", "--config", "bad.toml"], cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mockbroker serve: error: ")
    assert "bad.toml" in lines[0]
    assert expected in lines[0]


def test_no_command_exits_2_naming_the_commands() -> None:
    result = run_cli([])
    assert result.returncode == 2
    assert "mockbroker: error: the following arguments are required: COMMAND" in result.stderr


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "mockbroker"
    result = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, timeout=EXIT_DEADLINE_S
    )
    assert result.returncode == 0
    assert result.stdout.startswith("mockbroker ")


# -- a served broker (subprocess) ------------------------------------------------------------------


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    ready: str  # the READY line
    stderr_path: Path

    @property
    def fields(self) -> dict[str, str]:
        words = self.ready.split(" ")
        assert words[:2] == ["MOCKBROKER", "READY"], self.ready
        return dict(w.split("=", 1) for w in words[2:])

    @property
    def addresses(self) -> list[tuple[str, int]]:
        out = []
        for address in self.fields["bootstrap"].split(","):
            host, port = address.rsplit(":", 1)
            out.append((host, int(port)))
        return out

    def stderr(self) -> str:
        return self.stderr_path.read_text()


def read_line(proc: subprocess.Popen[bytes], deadline: float) -> bytes:
    """One line from the child's stdout, or fail at the deadline (or when the child exits first)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    data = b""
    while b"\n" not in data:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no line on stdout within the deadline; got {data!r}")
        readable, _, _ = select.select([fd], [], [], remaining)
        if readable:
            chunk = os.read(fd, 4096)
            if not chunk:
                raise AssertionError(
                    f"stdout closed before a full line (exit {proc.wait(EXIT_DEADLINE_S)}); got {data!r}"
                )
            data += chunk
    return data


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    started: list[subprocess.Popen[bytes]] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Served:
        stderr_path = tmp_path / f"stderr-{len(started)}.log"
        with open(stderr_path, "wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, "-m", "mockbroker", "serve", *args],
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=clean_env(**(env or {})),
                cwd=tmp_path,
            )
        started.append(proc)
        try:
            data = read_line(proc, time.monotonic() + READY_DEADLINE_S)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nstderr:\n{stderr_path.read_text()}") from None
        assert data.endswith(b"\n") and data.count(b"\n") == 1, data  # exactly one line, nothing after
        return Served(proc, data.decode().rstrip("\n"), stderr_path)

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(EXIT_DEADLINE_S)
        if proc.stdout is not None:
            proc.stdout.close()


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise AssertionError(f"connection closed after {len(data)} of {n} bytes")
        data += chunk
    return data


def request(sock: socket.socket, api_key: int, version: int, correlation_id: int, body: Any) -> Any:
    sock.sendall(registry.encode_request(RequestHeader(api_key, version, correlation_id, "cli-test"), body))
    (size,) = INT32.unpack(recv_exactly(sock, 4))
    got, response = registry.decode_response(api_key, version, recv_exactly(sock, size))
    assert got == correlation_id
    return response


def api_versions(sock: socket.socket) -> ApiVersionsResponse:
    response: ApiVersionsResponse = request(sock, 18, 3, 1, ApiVersionsRequest("cli-test", "1.0"))
    return response


def connect(address: tuple[str, int]) -> socket.socket:
    return socket.create_connection(address, timeout=IO_TIMEOUT_S)


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serves_api_versions_then_stops_cleanly_on_a_signal(
    serve: Any, sig: signal.Signals, loop: str
) -> None:
    served: Served = serve("--port", "0", *([] if loop == "uvloop" else ["--no-uvloop"]))
    ((host, port),) = served.addresses
    assert host == "127.0.0.1" and port != 0
    assert served.fields["cluster_id"] == "mockbroker-cluster-0001"
    with connect((host, port)) as sock:
        response = api_versions(sock)
        assert response.error_code == 0
        assert 18 in {k.api_key for k in response.api_keys}

        served.proc.send_signal(sig)
        assert served.proc.wait(EXIT_DEADLINE_S) == 0, served.stderr()
        assert sock.recv(1) == b""  # the broker closed our connection on the way out
    assert served.proc.stdout is not None
    assert served.proc.stdout.read() == b""  # the READY line was the only output
    err = served.stderr()
    assert f"event loop {loop}" in err
    assert f"{sig.name} received; stopping" in err
    assert "Traceback" not in err
    with pytest.raises(ConnectionRefusedError):
        connect((host, port)).close()  # the listener is closed too


# Imported by a cold `serve` only when used (issue #7, start-up): the other commands' parsers and
# modules, fetch sessions (the first Fetch), uuid and its platform import (the first topic or a
# codec with uuid fields), json (an event log file), and what only other commands need.
DEFERRED_AT_START = (
    "mockbroker.ctl",
    "mockbroker_conformance",
    "mockbroker.log.fetch_sessions",
    "mockbroker.control",
    "mockbroker.coordinators.router",
    "uuid",
    "platform",
    "json",
    "random",
    "tomllib",
    "importlib.metadata",
    "mockbroker_pipeline",
)


def imported_modules(verbose_stderr: str) -> set[str]:
    """Module names from ``python -v`` lines: ``import 'name' # <loader>``. (``-X importtime`` would
    miss modules loaded through importlib.import_module, as the handlers and codecs are.)"""
    return {m.group(1) for m in re.finditer(r"^import '([\w.]+)' #", verbose_stderr, re.MULTILINE)}


def test_a_cold_serve_answers_before_importing_what_it_does_not_need(serve: Any) -> None:
    served: Served = serve("--port", "0", env={"PYTHONVERBOSE": "1"})
    with connect(served.addresses[0]) as sock:
        assert api_versions(sock).error_code == 0
        # Each import is logged on the line-buffered stderr as it happens, so every import made
        # before the answer is in the file now.
        before_answer = imported_modules(served.stderr())
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(EXIT_DEADLINE_S) == 0, served.stderr()
    # The lines are there at all (a run that lost them would pass the check below vacuously).
    assert {"asyncio", "mockbroker.net.server", "mockbroker_protocol.messages.api_versions"} <= before_answer
    packages = tuple(f"{name}." for name in DEFERRED_AT_START)
    deferred = {m for m in before_answer if m in DEFERRED_AT_START or m.startswith(packages)}
    assert not deferred, f"imported before the first answer: {sorted(deferred)}"


def test_port_0_gives_each_broker_a_free_port_and_topics_exist_when_ready(serve: Any) -> None:
    served: Served = serve("--port", "0", "--brokers", "3", "--topic", "demo:3", "--topic", "events:6:2")
    addresses = served.addresses
    assert len(addresses) == 3 and len({port for _, port in addresses}) == 3
    assert all(port != 0 for _, port in addresses)
    for i, address in enumerate(addresses):
        with connect(address) as sock:
            assert api_versions(sock).error_code == 0
            metadata: MetadataResponse = request(sock, 3, 9, 2, MetadataRequest(topics=None))
        assert sorted((b.host, b.port) for b in metadata.brokers) == sorted(addresses), i
        topics = {t.name: t for t in metadata.topics}
        assert {name: len(t.partitions) for name, t in topics.items()} == {"demo": 3, "events": 6}
        assert {len(p.replica_nodes) for p in topics["events"].partitions} == {2}
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(EXIT_DEADLINE_S) == 0, served.stderr()


def test_environment_and_config_file_reach_the_served_cluster(serve: Any, tmp_path: Path) -> None:
    (tmp_path / "broker.toml").write_text(
        '[cluster]\nbrokers = 2\n\n[[topic]]\nname = "from-file"\npartitions = 2\n'
    )
    served: Served = serve(
        "--port", "0",
        env={"MOCKBROKER_CONFIG": "broker.toml", "MOCKBROKER_CLUSTER_ID": "env-cluster", "MOCKBROKER_TOPICS": "from-env:4"},
    )  # fmt: skip
    assert served.fields["cluster_id"] == "env-cluster"
    assert len(served.addresses) == 2
    with connect(served.addresses[0]) as sock:
        metadata: MetadataResponse = request(sock, 3, 9, 1, MetadataRequest(topics=None))
    assert metadata.cluster_id == "env-cluster"
    assert {t.name: len(t.partitions) for t in metadata.topics} == {"from-file": 2, "from-env": 4}
    served.proc.send_signal(signal.SIGINT)
    assert served.proc.wait(EXIT_DEADLINE_S) == 0, served.stderr()


@pytest.mark.parametrize("brokers", [1, 2])
def test_a_port_in_use_fails_with_a_clear_message(brokers: int, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # With two brokers the second one's port is the taken one: the first listener, already
        # bound, must be closed on the way out rather than crash the exit.
        first = port - brokers + 1
        result = run_cli(["serve", "--port", str(first), "--brokers", str(brokers)], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("mockbroker serve: error: ")]
    assert len(errors) == 1, result.stderr
    assert f"cannot listen on 127.0.0.1:{first}" in errors[0]
    if brokers == 1:  # (with two, the first port may happen to be taken by someone else too)
        assert "address already in use" in errors[0]
        assert "--port 0 for free ports" in errors[0]
