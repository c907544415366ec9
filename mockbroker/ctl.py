"""``mockbroker health`` and ``mockbroker ctl ...``: command-line clients of the HTTP control API.

Standard library only (urllib), so a slim image can health-check itself without curl and a
shell script can drive faults. Where the API is: ``--url``, else ``MOCKBROKER_ADMIN_URL``, else
``http://127.0.0.1:$MOCKBROKER_ADMIN_PORT`` (8092 when unset); the token: ``--token``, else
``MOCKBROKER_ADMIN_TOKEN``. ``ctl`` prints the API's JSON answer on stdout; an error answer goes
to stderr as it came, with exit status 1 (2 for bad usage).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from collections.abc import Mapping
from typing import Any

DEFAULT_ADMIN_PORT = 8092  # mockbroker.http.DEFAULT_ADMIN_PORT (not imported: no aiohttp here)
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class CtlError(Exception):
    """The API answered with an error, or could not be reached; the message says which."""

    def __init__(self, message: str, body: Any = None) -> None:
        super().__init__(message)
        self.body = body


def default_url(environ: Mapping[str, str]) -> str:
    url = environ.get("MOCKBROKER_ADMIN_URL")
    if url:
        return url
    return f"http://127.0.0.1:{environ.get('MOCKBROKER_ADMIN_PORT') or DEFAULT_ADMIN_PORT}"


class Client:
    def __init__(self, url: str, token: str | None = None, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def request(self, method: str, path: str, body: Any = None, query: Mapping[str, Any] | None = None) -> Any:
        """The decoded JSON answer (None for an empty one); CtlError for an error status."""
        status, payload = self.raw(method, path, body, query)
        if status >= 400:
            message = payload.get("error", payload) if isinstance(payload, dict) else payload
            raise CtlError(f"{method} {path}: HTTP {status}: {message}", payload)
        return payload

    def raw(self, method: str, path: str, body: Any = None, query: Mapping[str, Any] | None = None) -> tuple[int, Any]:
        # Imported here: `serve` builds the parser that lists these commands, and urllib.request
        # (http.client, email) would cost every broker's cold start for nothing.
        import urllib.error
        import urllib.request

        url = self.url + path
        wanted = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        if wanted:
            url += "?" + urllib.parse.urlencode(wanted)
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, _decode(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, _decode(exc.read())
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise CtlError(f"cannot reach the control API at {self.url}: {reason}") from None

    def stream(self, path: str, query: Mapping[str, Any]) -> Any:
        """Server-Sent Events: yield each event's decoded ``data``."""
        import urllib.error
        import urllib.request

        url = self.url + path + "?" + urllib.parse.urlencode({k: _query_value(v) for k, v in query.items() if v is not None})
        request = urllib.request.Request(url)
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            response = urllib.request.urlopen(request)  # no timeout: the stream is meant to stay open
        except urllib.error.HTTPError as exc:
            raise CtlError(f"GET {path}: HTTP {exc.code}: {_decode(exc.read())}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise CtlError(f"cannot reach the control API at {self.url}: {getattr(exc, 'reason', exc)}") from None
        with response:
            for raw in response:
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith("data:"):
                    yield json.loads(line[5:].strip())


def _query_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _decode(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return data.decode("utf-8", errors="replace")


# -- the command line ---------------------------------------------------------------------------------


def add_commands(commands: Any) -> None:
    """Add ``health`` and ``ctl`` to the ``mockbroker`` command's subparsers."""
    health = commands.add_parser(
        "health", help="exit 0 when the control API says the broker is ready, 1 otherwise",
        description="Ask GET /readyz of the control API; exit 0 when ready, 1 otherwise (one line says why). "
        "Needs no token.",
    )  # fmt: skip
    _connection_options(health, timeout=2.0)

    ctl = commands.add_parser(
        "ctl", help="drive a running broker over its HTTP control API (JSON out)",
        description="Call the HTTP control API of a running `mockbroker serve --admin-port`; prints its JSON answer.",
    )  # fmt: skip
    _connection_options(ctl, timeout=60.0)
    sub = ctl.add_subparsers(dest="area", metavar="AREA", required=True)

    sub.add_parser("cluster", help="cluster id, brokers (up or down), clock")

    topics = sub.add_parser("topics", help="list, describe, create, delete topics").add_subparsers(dest="action", required=True)
    listing = topics.add_parser("list")
    listing.add_argument("--internal", action="store_true", help="include internal topics")
    topics.add_parser("describe").add_argument("name")
    create = topics.add_parser("create")
    create.add_argument("name")
    create.add_argument("--partitions", type=int, default=1)
    create.add_argument("--replication-factor", type=int, default=1)
    create.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="a topic config (repeatable)")
    topics.add_parser("delete").add_argument("name")

    _record_commands(sub)
    _group_commands(sub)
    transactions = sub.add_parser("transactions", help="list, describe, abort transactions").add_subparsers(dest="action", required=True)
    transactions.add_parser("list", help="every transactional id: state, producer id and epoch, partitions").add_argument("--state")
    transactions.add_parser("describe", help="one transactional id as its coordinator sees it").add_argument("transactional_id")
    abort = transactions.add_parser("abort", help="abort the ongoing transaction (its producer is fenced)")
    abort.add_argument("transactional_id")
    abort.add_argument("--reason")

    _fault_commands(sub)
    clock = sub.add_parser("clock", help="show or advance the manual clock").add_subparsers(dest="action")
    clock.add_parser("show")
    clock.add_parser("advance").add_argument("ms", type=int)

    events = sub.add_parser("events", help="the event log (--follow: live, one JSON object per line)")
    events.add_argument("--type", help='an event type, or a prefix ending in "."')
    events.add_argument("--group")
    events.add_argument("--since", type=int, default=0, help="only events after this seq")
    events.add_argument("--follow", action="store_true", help="keep printing new events (Server-Sent Events)")


def _record_commands(sub: Any) -> None:
    """``ctl records ...``: produce and read records."""
    records = sub.add_parser("records", help="produce or read records").add_subparsers(dest="action", required=True)
    produce = records.add_parser("produce", help="append one record per VALUE")
    produce.add_argument("topic")
    produce.add_argument("values", nargs="+", metavar="VALUE")
    produce.add_argument("--key", help="every record's key")
    produce.add_argument("--partition", type=int, help="this partition (default: the key's, else spread)")
    produce.add_argument("--header", action="append", default=[], metavar="KEY=VALUE",
                         help="a record header, on every record (repeatable)")
    produce.add_argument("--base64", action="store_true", help="key, values and header values are base64 (binary data)")
    read = records.add_parser("read", help="a partition's records from --offset on")
    read.add_argument("topic")
    read.add_argument("partition", type=int)
    read.add_argument("--offset", type=int, default=0)
    read.add_argument("--limit", type=int, default=100)
    read.add_argument("--base64", action="store_true", help="keys and values as base64 (for binary data)")


def _fault_commands(sub: Any) -> None:
    """``ctl faults ...``: the fault endpoints."""
    faults = sub.add_parser("faults", help="inject, list and clear faults").add_subparsers(dest="action", required=True)
    faults.add_parser("list", help="the faults in force (pushed errors, interceptors, brokers down, caps)")
    faults.add_parser("clear", help="remove every fault")
    faults.add_parser("remove", help="remove one interceptor by its id (from `faults list`)").add_argument("id", type=int)
    errors = faults.add_parser("errors", help="the next requests of API fail with ERROR, one each")
    errors.add_argument("api")
    errors.add_argument("errors", nargs="+", metavar="ERROR")
    errors.add_argument("--broker", type=int)
    errors.add_argument("--topic")
    errors.add_argument("--partition", type=int)
    latency = faults.add_parser("latency", help="delay every answer (of --api, on --broker) by MS milliseconds")
    latency.add_argument("ms", type=float)
    latency.add_argument("--api")
    latency.add_argument("--broker", type=int)
    for name, text in (("disconnect", "close the connection instead of answering the next --count requests"),
                       ("drop", "never answer the next --count requests (the connection stays open)")):
        p = faults.add_parser(name, help=text)
        p.add_argument("--api")
        p.add_argument("--broker", type=int)
        p.add_argument("--count", type=int, default=1)
    faults.add_parser("close-connections", help="close every client connection (of --broker) now").add_argument("--broker", type=int)
    faults.add_parser("broker-down", help="take a broker down: connections dropped, leaders and coordinators move").add_argument("broker", type=int)
    faults.add_parser("broker-up", help="bring a broker back: preferred leaders and coordinators return").add_argument("broker", type=int)
    leader = faults.add_parser("move-leader", help="move a partition's leader (to --broker, else the next in-sync replica)")
    leader.add_argument("topic")
    leader.add_argument("partition", type=int)
    leader.add_argument("--broker", type=int)
    coordinator = faults.add_parser("move-coordinator", help="move a group's coordinator to BROKER")
    coordinator.add_argument("group")
    coordinator.add_argument("broker", type=int)
    txn_coordinator = faults.add_parser("move-transaction-coordinator", help="move a transactional id's coordinator to BROKER")
    txn_coordinator.add_argument("transactional_id")
    txn_coordinator.add_argument("broker", type=int)
    loading = faults.add_parser(
        "load-transaction-coordinator", help="the id's coordinator answers COORDINATOR_LOAD_IN_PROGRESS for MS (0: stop)"
    )
    loading.add_argument("transactional_id")
    loading.add_argument("ms", type=int)
    cap = faults.add_parser("cap-version", help="serve API only up to VERSION ('none': as configured)")
    cap.add_argument("api")
    cap.add_argument("version")


def _group_commands(sub: Any) -> None:
    """``ctl groups ...``: the group endpoints."""
    groups = sub.add_parser("groups", help="list, describe, offsets, expire, expire-lock, rebalance, wait").add_subparsers(dest="action", required=True)
    listing = groups.add_parser("list", help="every group, classic, consumer, streams and share groups (`type` says which)")
    listing.add_argument("--type", choices=("classic", "consumer", "streams", "share"), help="only groups of this type")
    listing.add_argument("--state", help="only groups in this state")
    groups.add_parser("describe", help="state, members and decoded assignments of one group").add_argument("group")
    offsets = groups.add_parser("offsets", help="a group's committed offsets")
    offsets.add_argument("group")
    offsets.add_argument("--topic")
    expire = groups.add_parser("expire", help="expire one member's session now")
    expire.add_argument("group")
    expire.add_argument("--member-id")
    expire.add_argument("--instance-id")
    expire.add_argument("--client-id")
    lock = groups.add_parser("expire-lock", help="a share group's acquisition locks on a partition expire now (KIP-932)")
    lock.add_argument("group")
    lock.add_argument("topic")
    lock.add_argument("partition", type=int)
    lock.add_argument("--offset", type=int, action="append", dest="offsets", help="only this record (repeatable); none: every Acquired record")
    rebalance = groups.add_parser("rebalance", help="make the group rebalance now")
    rebalance.add_argument("group")
    rebalance.add_argument("--reason")
    wait = groups.add_parser("wait", help="wait until the group is in a state")
    wait.add_argument("group")
    wait.add_argument(
        "--state", default="Stable",
        help="a classic group's (Empty, PreparingRebalance, CompletingRebalance, Stable, Dead), a consumer group's "
        "(Empty, Assigning, Reconciling, Stable, Dead), or any",
    )  # fmt: skip
    wait.add_argument("--members", type=int)
    wait.add_argument("--generation-at-least", type=int, help="a classic group's generation, a consumer group's group epoch")
    wait.add_argument("--type", choices=("classic", "consumer", "streams", "share"), help="only a group of this type")
    wait.add_argument("--reconciled", action="store_true", help="consumer groups: every member at its target assignment")
    wait.add_argument("--timeout", type=int, default=30, help="seconds")



def _connection_options(parser: argparse.ArgumentParser, timeout: float) -> None:
    parser.add_argument("--url", help=f"the control API (default: $MOCKBROKER_ADMIN_URL, else http://127.0.0.1:$MOCKBROKER_ADMIN_PORT or {DEFAULT_ADMIN_PORT})")
    parser.add_argument("--token", help="bearer token (default: $MOCKBROKER_ADMIN_TOKEN)")
    parser.add_argument("--timeout", type=float, default=timeout, help=f"seconds per HTTP call (default: {timeout:g})")


def main(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    client = Client(args.url or default_url(environ), args.token or environ.get("MOCKBROKER_ADMIN_TOKEN"), args.timeout)
    if args.command == "health":
        return health(client)
    try:
        if args.area == "events" and args.follow:
            for event in client.stream("/events/stream", {"type": args.type, "group_id": args.group, "since_seq": args.since}):
                print(json.dumps(event), flush=True)
            return EXIT_OK
        result = run(client, args)
    except CtlError as exc:
        body = exc.body if exc.body is not None else {"error": str(exc)}
        print(json.dumps(body) if not isinstance(body, str) else body, file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return EXIT_OK
    except ValueError as exc:  # bad usage found after parsing (KEY=VALUE)
        print(f"mockbroker ctl: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps({"ok": True} if result is None else result, indent=2))
    return EXIT_OK


def health(client: Client) -> int:
    try:
        status, body = client.raw("GET", "/readyz")
    except CtlError as exc:
        print(f"not ready: {exc}")
        return EXIT_FAILURE
    if status == 200 and isinstance(body, dict) and body.get("ready") is True:
        print(f"ready: bootstrap={body.get('bootstrap_servers')} brokers_up={body.get('brokers_up')}")
        return EXIT_OK
    print(f"not ready: HTTP {status}: {json.dumps(body) if not isinstance(body, str) else body}")
    return EXIT_FAILURE


def run(client: Client, args: argparse.Namespace) -> Any:
    """One ``ctl`` command: the HTTP call it stands for."""
    c, area, action = client, args.area, getattr(args, "action", None)
    q = urllib.parse.quote
    if area == "cluster":
        return c.request("GET", "/cluster")
    if area == "topics":
        if action == "list":
            return c.request("GET", "/topics", query={"internal": args.internal})
        if action == "describe":
            return c.request("GET", f"/topics/{q(args.name, safe='')}")
        if action == "create":
            configs = dict(_key_value(item, "--config") for item in args.config)
            body = {"name": args.name, "partitions": args.partitions, "replication_factor": args.replication_factor, "configs": configs}
            return c.request("POST", "/topics", body)
        return c.request("DELETE", f"/topics/{q(args.name, safe='')}")
    if area == "records":
        if action == "produce":
            headers = [{"key": k, "value": v} for k, v in (_key_value(item, "--header") for item in args.header)]
            records = [{"key": args.key, "value": v, **({"headers": headers} if headers else {}),
                        **({"partition": args.partition} if args.partition is not None else {})} for v in args.values]  # fmt: skip
            body = {"records": records, **({"encoding": "base64"} if args.base64 else {})}
            return c.request("POST", f"/topics/{q(args.topic, safe='')}/records", body)
        return c.request(
            "GET", f"/topics/{q(args.topic, safe='')}/partitions/{args.partition}/records",
            query={"offset": args.offset, "limit": args.limit, "encoding": "base64" if args.base64 else "utf-8"},
        )  # fmt: skip
    if area == "groups":
        return _groups(c, args)
    if area == "transactions":
        return _transactions(c, args)
    if area == "faults":
        return _faults(c, args)
    if area == "clock":
        if action == "advance":
            return c.request("POST", "/clock/advance", {"ms": args.ms})
        return c.request("GET", "/clock")
    # events
    return c.request("GET", "/events", query={"type": args.type, "group_id": args.group, "since_seq": args.since})


def _groups(c: Client, args: argparse.Namespace) -> Any:
    """``ctl groups ACTION``: the HTTP call it stands for."""
    action, q = args.action, urllib.parse.quote
    if action == "list":
        return c.request("GET", "/groups", query={"type": args.type, "state": args.state})
    group = f"/groups/{q(args.group, safe='')}"
    if action == "describe":
        return c.request("GET", group)
    if action == "offsets":
        return c.request("GET", f"{group}/offsets", query={"topic": args.topic})
    if action == "expire":
        body = {k: v for k, v in (("member_id", args.member_id), ("instance_id", args.instance_id), ("client_id", args.client_id)) if v is not None}
        return c.request("POST", f"{group}/expire", body)
    if action == "expire-lock":
        body = {"topic": args.topic, "partition": args.partition, **({"offsets": args.offsets} if args.offsets else {})}
        return c.request("POST", f"{group}/expire-lock", body)
    if action == "rebalance":
        return c.request("POST", f"{group}/rebalance", {} if args.reason is None else {"reason": args.reason})
    c.timeout = max(c.timeout, args.timeout + 10)
    return c.request(
        "GET", f"{group}/wait",
        query={
            "state": args.state, "members": args.members, "generation_at_least": args.generation_at_least,
            "type": args.type, "reconciled": args.reconciled or None, "timeout": args.timeout,
        },
    )  # fmt: skip


def _transactions(c: Client, args: argparse.Namespace) -> Any:
    if args.action == "list":
        return c.request("GET", "/transactions", query={"state": args.state})
    path = f"/transactions/{urllib.parse.quote(args.transactional_id, safe='')}"
    if args.action == "describe":
        return c.request("GET", path)
    return c.request("POST", f"{path}/abort", {} if args.reason is None else {"reason": args.reason})


def _faults(c: Client, args: argparse.Namespace) -> Any:
    action = args.action
    if action == "list":
        return c.request("GET", "/faults")
    if action == "clear":
        return c.request("DELETE", "/faults")
    if action == "remove":
        return c.request("DELETE", f"/faults/interceptors/{args.id}")
    if action == "errors":
        body: dict[str, Any] = {"api": args.api, "errors": args.errors}
        for name in ("broker", "topic", "partition"):
            if getattr(args, name) is not None:
                body[name] = getattr(args, name)
        return c.request("POST", "/faults/errors", body)
    if action == "latency":
        return c.request("POST", "/faults/latency", {"ms": args.ms, "api": args.api, "broker": args.broker})
    if action in ("disconnect", "drop"):
        return c.request("POST", f"/faults/{action}", {"api": args.api, "broker": args.broker, "count": args.count})
    if action == "close-connections":
        return c.request("POST", "/faults/close-connections", {"broker": args.broker})
    if action in ("broker-down", "broker-up"):
        return c.request("POST", f"/brokers/{args.broker}/{action.removeprefix('broker-')}")
    if action == "move-leader":
        return c.request("POST", f"/topics/{urllib.parse.quote(args.topic, safe='')}/partitions/{args.partition}/leader", {"broker_id": args.broker})
    if action in ("move-transaction-coordinator", "load-transaction-coordinator"):
        path = f"/transactions/{urllib.parse.quote(args.transactional_id, safe='')}"
        if action == "move-transaction-coordinator":
            return c.request("POST", f"{path}/coordinator", {"broker_id": args.broker})
        return c.request("POST", f"{path}/loading", {"duration_ms": args.ms})
    if action == "move-coordinator":
        return c.request("POST", f"/groups/{urllib.parse.quote(args.group, safe='')}/coordinator", {"broker_id": args.broker})
    version = None if args.version.lower() == "none" else _int(args.version, "VERSION")
    return c.request("POST", "/faults/api-versions", {"api": args.api, "max_version": version})


def _key_value(item: str, flag: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise ValueError(f"{flag}: expected KEY=VALUE, not {item!r}")
    return key, value


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what}: expected an integer or 'none', not {text!r}") from None
