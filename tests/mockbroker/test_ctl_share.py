"""`mockbroker ctl groups expire-lock` stands for POST /groups/{id}/expire-lock (KIP-932 share
groups), and `groups list --type share` passes the type through."""

from __future__ import annotations

import argparse
from typing import Any

from mockbroker import ctl


class Recorder:
    timeout = 10.0

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any, Any]] = []

    def request(self, method: str, path: str, body: Any = None, query: Any = None) -> Any:
        self.calls.append((method, path, body, query))
        return {}


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    ctl.add_commands(parser.add_subparsers(dest="command"))
    return parser.parse_args(["ctl", *argv])


def test_expire_lock_and_share_listing() -> None:
    client = Recorder()
    ctl.run(client, parsed("groups", "expire-lock", "sg", "q", "0", "--offset", "3", "--offset", "5"))  # type: ignore[arg-type]
    ctl.run(client, parsed("groups", "expire-lock", "sg", "q", "1"))  # type: ignore[arg-type]
    ctl.run(client, parsed("groups", "list", "--type", "share"))  # type: ignore[arg-type]
    assert client.calls == [
        ("POST", "/groups/sg/expire-lock", {"topic": "q", "partition": 0, "offsets": [3, 5]}, None),
        ("POST", "/groups/sg/expire-lock", {"topic": "q", "partition": 1}, None),
        ("GET", "/groups", None, {"type": "share", "state": None}),
    ]
