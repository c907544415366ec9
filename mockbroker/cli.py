"""The ``mockbroker`` command: ``mockbroker serve`` runs a cluster until SIGINT or SIGTERM.

A thin adapter: flags, environment and config file are merged by ``mockbroker.config.settings``; this
module only parses the command line, runs the event loop (uvloop when installed, unless
``--no-uvloop``), prints the READY line and stops cleanly on a signal.

stdout carries exactly one line, once every listener is bound and the topics exist::

    MOCKBROKER READY bootstrap=127.0.0.1:9092,127.0.0.1:9093 cluster_id=mockbroker-cluster-0001

(space-separated ``key=value`` fields after ``MOCKBROKER READY``; values never contain spaces;
fields may be added at the end later, so read them by key). Logs go to stderr.

Exit status: 0 after a signal-initiated stop; 1 when the broker cannot run (a port in use, an
address that cannot be bound, a stop that did not finish); 2 for a bad flag, variable or config
file (one line on stderr naming it and what it allows, as argparse does).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import importlib.util
import logging
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from mockbroker import __version__
from mockbroker.clock import ManualClock
from mockbroker.cluster import MockCluster
from mockbroker.config.settings import LOG_LEVELS, Flags, ServeSettings, SettingsError, describe, resolve
from mockbroker.model import TopicError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

log = logging.getLogger("mockbroker.cli")

READY_PREFIX = "MOCKBROKER READY"
STOP_TIMEOUT_S = 10.0  # a stop that takes longer than this is a bug; exit 1 rather than hang
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

EPILOG = """\
precedence: flags > MOCKBROKER_* environment variables > --config file > defaults.

environment: MOCKBROKER_HOST, MOCKBROKER_PORT, MOCKBROKER_BROKERS, MOCKBROKER_ADVERTISED_HOST,
  MOCKBROKER_ADVERTISED_PORT, MOCKBROKER_CLUSTER_ID, MOCKBROKER_TOPICS="a:3,b",
  MOCKBROKER_KAFKA_DEFAULTS=true, MOCKBROKER_CONFIG=FILE, MOCKBROKER_LOG_LEVEL, MOCKBROKER_UVLOOP=false,
  MOCKBROKER_ASSIGNMENT_CHECKS, MOCKBROKER_ASSIGNMENT_STRICT, MOCKBROKER_BROKER_ASSIGNORS="orders-*=range,g1=sticky",
  MOCKBROKER_ADMIN_PORT, MOCKBROKER_ADMIN_HOST, MOCKBROKER_ADMIN_TOKEN, MOCKBROKER_MANUAL_CLOCK=true, and
  MOCKBROKER_SET_<NAME>=VALUE for a Kafka setting, with the NAME spelled as Confluent's images
  spell KAFKA_*: '_' for '.', '__' for '_', '___' for '-'
  (MOCKBROKER_SET_AUTO_CREATE_TOPICS_ENABLE=false is auto.create.topics.enable=false).

ready: one line on stdout when serving:
  MOCKBROKER READY bootstrap=HOST:PORT[,HOST:PORT...] cluster_id=ID [admin=http://HOST:PORT]
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line (no usage block): easier to read in a container's log."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser(*, serve_only: bool = False, commands_from_plugins: bool = True) -> _Parser:
    """The whole command line; ``serve_only``: the ``serve`` command alone (what ``serve`` parses with);
    ``commands_from_plugins``: with the commands other packages add (``COMMANDS_GROUP``), which are
    loaded for their help lines."""
    parser = _Parser(
        prog="mockbroker",
        description="An in-memory broker speaking the Kafka wire protocol.",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"mockbroker {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    serve = parser.commands["serve"] = commands.add_parser(
        "serve",
        help="run a cluster until SIGINT or SIGTERM",
        description="Run a mockbroker cluster on loopback (or --host) until SIGINT or SIGTERM.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    _listener_and_cluster_options(serve)
    _event_and_group_options(serve)
    _security_control_and_runtime_options(serve)
    if serve_only:
        # `serve` parses with its own subparser alone: the other commands (~40 subparsers, the ctl
        # module) cost a cold start ~40M instructions (~10%) and change nothing in serve's parsing,
        # its errors ("mockbroker serve: error: ...") or its --help.
        return parser
    from mockbroker import ctl

    ctl.add_commands(commands)
    if commands_from_plugins:
        # Listed for --help (each parses its own arguments when run).
        for name, command in sorted(plugin_commands().items()):
            parser.commands[name] = commands.add_parser(name, help=_summary(command.load()), add_help=False)
    return parser


def _listener_and_cluster_options(serve: argparse.ArgumentParser) -> None:
    """``serve``: where it listens, what it advertises, the cluster's shape and Kafka profile."""
    serve.add_argument("--host", metavar="HOST", help="address the listeners bind (default: 127.0.0.1)")
    serve.add_argument(
        "--port",
        metavar="PORT",
        help="first broker's port; broker i gets PORT+i; 0 picks free ports (default: 9092)",
    )
    serve.add_argument("--brokers", metavar="N", help="number of brokers (default: 1)")
    serve.add_argument(
        "--topic", metavar="NAME[:PARTITIONS[:REPLICATION]]", dest="topics", action="append", default=[],
        help="create a topic at start (repeatable); partitions and replication default to "
        "num.partitions and default.replication.factor",
    )  # fmt: skip
    serve.add_argument(
        "--advertised-host", metavar="HOST", help="host that Metadata tells clients (default: --host)"
    )
    serve.add_argument(
        "--advertised-port", metavar="PORT", help="first broker's advertised port (default: the bound port)"
    )
    serve.add_argument("--cluster-id", metavar="ID", help="cluster id (default: mockbroker-cluster-0001)")
    serve.add_argument(
        "--kafka-version",
        metavar="VERSION",
        help="advertise and serve the API versions of this Kafka release: 4.0 (default) or 3.9",
    )
    serve.add_argument(
        "--kafka-defaults", action="store_const", const="true",
        help="Kafka's exact group defaults (group.min.session.timeout.ms 6000, "
        "group.initial.rebalance.delay.ms 3000) instead of mockbroker's fast-test ones (1, 0)",
    )  # fmt: skip


def _event_and_group_options(serve: argparse.ArgumentParser) -> None:
    """``serve``: the event log and the group coordinator's assignment checks and assignors."""
    serve.add_argument(
        "--event-log", metavar="PATH", dest="events_path",
        help="also append every group and offset event to PATH as JSON Lines (schema: docs/events.md)",
    )  # fmt: skip
    serve.add_argument(
        "--events-topic", action="store_const", const="true",
        help="also append every event to the internal topic __mockbroker_events (JSON values keyed by "
        "group, readable by any Kafka client; docs/events.md)",
    )  # fmt: skip
    serve.add_argument(
        "--assignment-checks", metavar="MODE",
        help="check every assignment SyncGroup stores: off, validate (ownership, subscriptions, decodable "
        "bytes) or full (also compare with Java's built-in assignors; default)",
    )  # fmt: skip
    serve.add_argument(
        "--assignment-strict", metavar="MODE",
        help="findings that count as failures (cluster.strict_failures): off (default), violations "
        "(all but reference divergences) or all",
    )  # fmt: skip
    serve.add_argument(
        "--broker-assignor", metavar="GLOB=ASSIGNOR", dest="broker_assignors", action="append",
        help="groups matching GLOB get the broker's assignment by ASSIGNOR (a protocol name such as "
        "cooperative-sticky, a plugin name, or module:attr) instead of the leader's (repeatable)",
    )  # fmt: skip


def _security_control_and_runtime_options(serve: argparse.ArgumentParser) -> None:
    """``serve``: SASL users, the HTTP control API, the clock, settings files and the event loop."""
    serve.add_argument(
        "--sasl-user", metavar="NAME=PASSWORD", dest="sasl_users", action="append",
        help="a SASL user for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (repeatable; docs/security.md); "
        "listeners, ssl.* and sasl.* are Kafka settings (--set)",
    )  # fmt: skip
    serve.add_argument(
        "--admin-port", metavar="PORT",
        help="serve the HTTP control API (docs/http.md) on this port; 0 picks a free one (default: off)",
    )  # fmt: skip
    serve.add_argument("--admin-host", metavar="HOST", help="address the control API binds (default: 127.0.0.1)")
    serve.add_argument(
        "--admin-token", metavar="TOKEN",
        help="require 'Authorization: Bearer TOKEN' on every control API call but /healthz and /readyz",
    )  # fmt: skip
    serve.add_argument(
        "--manual-clock", action="store_const", const="true",
        help="run the cluster on a manual clock: time moves only by POST /clock/advance (sessions, rebalance "
        "timeouts, retention and Fetch long polls wait for it)",
    )  # fmt: skip
    serve.add_argument("--config", metavar="FILE", help="TOML file: [cluster], [kafka] and [[topic]] tables")
    serve.add_argument(
        "--set", metavar="KEY=VALUE", dest="sets", action="append", default=[],
        help="a Kafka-named setting, e.g. auto.create.topics.enable=false (repeatable)",
    )  # fmt: skip
    serve.add_argument("--log-level", metavar="LEVEL", help=f"one of {', '.join(LOG_LEVELS)} (default: info)")
    serve.add_argument(
        "--no-uvloop",
        dest="uvloop",
        action="store_const",
        const=False,
        help="use asyncio's own event loop even when uvloop is installed",
    )

# Commands other packages add to ``mockbroker`` (``conformance`` from mockbroker_conformance,
# ``analyze`` and ``assignor-lab`` from mockbroker_pipeline): entry points of this group, each a
# function called with the command line from the command's word on (``argv[0]`` is the word) and
# returning the exit status; its docstring's first line is its --help line. mockbroker imports
# none of those packages: they import mockbroker, and pyproject.toml registers their commands.
COMMANDS_GROUP = "mockbroker.commands"


def plugin_commands() -> dict[str, EntryPoint]:
    """The commands of ``COMMANDS_GROUP`` by word (importlib.metadata: never on a cold ``serve``)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=COMMANDS_GROUP)}


def _summary(command: Callable[[Sequence[str]], int]) -> str:
    lines = (command.__doc__ or "").strip().splitlines()
    line = lines[0].rstrip(".") if lines else ""
    return line[:1].lower() + line[1:]  # argparse's style: "run ...", as the other commands


def parse_serve(argv: Sequence[str], environ: Mapping[str, str]) -> ServeSettings:
    """``serve``'s arguments (without the word ``serve``) and an environment -> settings.

    Raises SettingsError for bad values, SystemExit(2) for what argparse itself rejects.
    """
    # The serve parser itself, so that its errors say "mockbroker serve: error: ...".
    args = build_parser(serve_only=True).commands["serve"].parse_args(list(argv))
    flags = Flags(
        host=args.host,
        port=args.port,
        brokers=args.brokers,
        advertised_host=args.advertised_host,
        advertised_port=args.advertised_port,
        cluster_id=args.cluster_id,
        kafka_version=args.kafka_version,
        kafka_defaults=args.kafka_defaults,
        events_path=args.events_path,
        events_topic=args.events_topic,
        assignment_checks=args.assignment_checks,
        assignment_strict=args.assignment_strict,
        broker_assignors=args.broker_assignors,
        sasl_users=args.sasl_users,
        admin_port=args.admin_port,
        admin_host=args.admin_host,
        admin_token=args.admin_token,
        manual_clock=args.manual_clock,
        topics=list(args.topics),
        sets=list(args.sets),
        config=args.config,
        log_level=args.log_level,
        uvloop=args.uvloop,
    )
    return resolve(flags, environ)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("health", "ctl"):
        from mockbroker import ctl

        return ctl.main(build_parser(commands_from_plugins=False).parse_args(args), os.environ)
    if args and args[0] != "serve" and (plugin := plugin_commands().get(args[0])) is not None:
        command: Callable[[Sequence[str]], int] = plugin.load()
        return command(args)
    if not args:  # a bare `mockbroker`: the commands it has, then the one-line error (exit 2)
        build_parser().print_help(sys.stderr)
    if not args or args[0] != "serve":
        build_parser().parse_args(args)  # --help, --version, or an error naming the commands; all exit
        return EXIT_USAGE  # pragma: no cover - parse_args exits for every input that is not serve
    try:
        settings = parse_serve(args[1:], os.environ)
    except SettingsError as exc:
        print(f"mockbroker serve: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    if settings.admin_port is not None and importlib.util.find_spec("aiohttp") is None:
        _error(f"the HTTP control API ({settings.sources['admin_port']}) needs aiohttp: install mockbroker with its sidecar extra (pip install 'CHECKOUT[sidecar]'; README, Install)")
        return EXIT_USAGE
    return run(settings)


# -- running -------------------------------------------------------------------------------------------


def _loop_factory(use_uvloop: bool) -> tuple[Callable[[], asyncio.AbstractEventLoop] | None, str]:
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            return None, "asyncio (uvloop is not installed)"
        # uvloop.__version__, not importlib.metadata: that import alone costs a cold start ~10 ms.
        return uvloop.new_event_loop, f"uvloop {getattr(uvloop, '__version__', '?')}"
    return None, "asyncio (--no-uvloop)"


def run(settings: ServeSettings, stdout: TextIO | None = None) -> int:
    logging.basicConfig(
        level=settings.log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )
    for warning in settings.warnings:
        log.warning("%s", warning)
    for line in describe(settings):
        log.debug("setting %s", line)
    factory, loop_name = _loop_factory(settings.uvloop)
    # Until the loop's own handlers are in place, SIGTERM interrupts as SIGINT does.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with asyncio.Runner(loop_factory=factory) as runner:
            return runner.run(serve(settings, stdout or sys.stdout, loop_name))
    except KeyboardInterrupt:
        log.info("interrupted while starting or stopping; exiting")
        return EXIT_OK
    finally:
        signal.signal(signal.SIGTERM, previous)


async def serve(settings: ServeSettings, stdout: TextIO, loop_name: str = "asyncio") -> int:
    """Start the cluster, print the READY line, serve until SIGINT/SIGTERM, stop. Returns the exit status."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()

    def on_signal(sig: signal.Signals) -> None:
        if stopping.is_set():
            # A second signal while stopping: the user wants out now.
            log.warning("%s again while stopping; exiting at once", sig.name)
            os._exit(EXIT_FAILURE)
        log.info("%s received; stopping", sig.name)
        stopping.set()

    handled = (signal.SIGINT, signal.SIGTERM)
    for sig in handled:
        loop.add_signal_handler(sig, on_signal, sig)
    loop.set_exception_handler(_exception_handler)
    cluster = MockCluster(settings.cluster, clock=ManualClock() if settings.manual_clock else None)
    try:
        status = await _serve(cluster, settings, stopping, stdout, loop_name)
    finally:
        stopped = await _stop(cluster)
        for sig in handled:
            loop.remove_signal_handler(sig)
    return status if stopped else EXIT_FAILURE


def _exception_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    # On Python 3.11 asyncio's start_server reports a *cancelled* connection task (stop() cancels
    # them) as "Exception in callback ... CancelledError" with a traceback: CPython gh-113538,
    # fixed in 3.12 only. A cancellation is how we stop, never an error: keep it out of the log.
    if isinstance(context.get("exception"), asyncio.CancelledError):
        log.debug("ignored: %s", context.get("message"))
        return
    loop.default_exception_handler(context)


async def _serve(
    cluster: MockCluster, settings: ServeSettings, stopping: asyncio.Event, stdout: TextIO, loop_name: str
) -> int:
    config = settings.cluster
    # Topics first, so that they exist by the time anyone can connect.
    for spec in settings.topics:
        try:
            cluster.create_topic(spec.name, spec.partitions, spec.replication_factor, spec.configs)
        except TopicError as exc:
            _error(f"{spec.source}: {exc.message}")
            return EXIT_USAGE
    try:
        await cluster.start()
    except OSError as exc:
        if config.port == 0:
            where = f"{config.host} (free ports)"
        elif config.brokers == 1:
            where = f"{config.host}:{config.port}"
        else:
            where = f"{config.host}:{config.port}-{config.port + config.brokers - 1}"
        hint = ""
        if exc.errno == errno.EADDRINUSE:
            hint = " (another process holds the port: choose another --port, or --port 0 for free ports)"
        _error(f"cannot listen on {where}: {exc.strerror or exc}{hint}")
        return EXIT_FAILURE
    if stopping.is_set():  # a signal arrived while the listeners were starting
        return EXIT_OK
    admin: Any = None
    try:
        ready = f"{READY_PREFIX} bootstrap={cluster.bootstrap_servers} cluster_id={config.cluster_id}"
        if settings.admin_port is not None:
            from mockbroker.http import AdminServer

            admin = AdminServer(cluster, token=settings.admin_token)
            try:
                await admin.start(settings.admin_host, settings.admin_port)
            except OSError as exc:
                admin = None
                hint = " (another process holds the port: choose another --admin-port)" if exc.errno == errno.EADDRINUSE else ""
                _error(f"cannot listen on {settings.admin_host}:{settings.admin_port} (control API): {exc.strerror or exc}{hint}")
                return EXIT_FAILURE
            ready += f" admin={admin.url}"
            if settings.admin_token is None and settings.admin_host not in ("127.0.0.1", "::1", "localhost"):
                log.warning("the control API on %s takes no token: anyone who reaches it controls the broker "
                            "(set --admin-token)", admin.url)  # fmt: skip
            log.info("HTTP control API on %s (%s)", admin.url, "bearer token required" if settings.admin_token else "no token")
        _log_started(cluster, settings, loop_name)
        _ready(stdout, ready)
        await stopping.wait()
        return EXIT_OK
    finally:
        if admin is not None:
            await admin.stop()


async def _stop(cluster: MockCluster) -> bool:
    """Close listeners and connections; False if that did not finish in time (a bug: say so)."""
    try:
        async with asyncio.timeout(STOP_TIMEOUT_S):
            await cluster.stop()
    except TimeoutError:
        log.error("the cluster did not stop within %.0f s; exiting anyway", STOP_TIMEOUT_S)
        return False
    if cluster.internal_errors:
        log.warning(
            "%d broker bug(s) were logged while serving (see the errors above)", len(cluster.internal_errors)
        )
    log.info("stopped")
    return True


def _log_started(cluster: MockCluster, settings: ServeSettings, loop_name: str) -> None:
    nodes = ", ".join(
        f"node {n.node_id} on {n.host}:{n.port}"
        + (
            f" (advertised {n.advertised_host}:{n.advertised_port})"
            if (n.advertised_host, n.advertised_port) != (n.host, n.port)
            else ""
        )
        for n in cluster.brokers.values()
    )
    topics = (
        ", ".join(f"{t.name} ({len(t.partitions)} partition{'' if len(t.partitions) == 1 else 's'})" for t in cluster.topics.values()) or "none"
    )
    log.info(
        "mockbroker %s serving %s; cluster id %s; event loop %s; topics: %s",
        __version__, nodes, settings.cluster.cluster_id, loop_name, topics,
    )  # fmt: skip
    several = len(cluster.listener_specs) > 1
    for spec in cluster.listener_specs:
        if spec.security_protocol == "PLAINTEXT" and not several:
            continue
        users = ", ".join(cluster.credentials.users()) or "none"
        log.info(
            "listener %s (%s) at %s%s%s", spec.name, spec.security_protocol, cluster.bootstrap_servers_for(spec.name),
            f"; SASL mechanisms {','.join(cluster.listener_mechanisms[spec.name])}, users: {users}" if spec.sasl else "",
            f"; clients trust the CA in {ca}" if spec.tls and (ca := cluster.ssl_ca_path_for(spec.name)) else "",
        )  # fmt: skip


def _ready(stdout: TextIO, line: str) -> None:
    try:
        stdout.write(line + "\n")
        stdout.flush()
    except BrokenPipeError:
        # Nobody reads stdout any more; serve anyway. Point stdout at devnull so that the
        # interpreter's flush at exit does not fail again (the recipe in Python's signal docs).
        log.warning("could not print the READY line: stdout is closed")
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())


def _error(message: str) -> None:
    print(f"mockbroker serve: error: {message}", file=sys.stderr, flush=True)
