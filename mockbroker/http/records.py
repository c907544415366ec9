"""Records over HTTP: the JSON records of POST /topics/{topic}/records made into the control API's
records (keys, values and header values as utf-8 text or base64), and consumed records back to
JSON in the encoding asked for."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from mockbroker.control import ConsumedRecord
from mockbroker.http.schema import BadInput


def produce_items(records: list[dict[str, Any]], encoding: str) -> list[dict[str, Any]]:
    """The body's records as ``Control.produce`` takes them (bytes keys, values and headers)."""
    items = []
    for i, r in enumerate(records):
        where = f"body.records[{i}]"
        item: dict[str, Any] = {
            "key": decode(r.get("key"), encoding, f"{where}.key"),
            "value": decode(r.get("value"), encoding, f"{where}.value"),
            "headers": [
                (h["key"], decode(h.get("value"), encoding, f"{where}.headers[{j}].value"))
                for j, h in enumerate(r.get("headers", []))
            ],
        }
        for name in ("partition", "timestamp"):
            if name in r:
                item[name] = r[name]
        items.append(item)
    return items


def decode(value: str | None, encoding: str, where: str) -> bytes | None:
    if value is None:
        return None
    if encoding == "base64":
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):  # schema-valid (a string), but not what "encoding" says
            raise BadInput(where, "not valid base64 (encoding is base64)", status=422) from None
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: JSON allows it, UTF-8 cannot carry it
        raise BadInput(where, "not encodable as UTF-8 (a lone surrogate?); send base64") from None


def encode(value: bytes | None, encoding: str, what: str) -> str | None:
    if value is None:
        return None
    if encoding == "base64":
        return base64.b64encode(value).decode("ascii")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput("query.encoding", f"{what} is not valid UTF-8; ask with encoding=base64", status=422) from None


def record_json(r: ConsumedRecord, encoding: str) -> dict[str, Any]:
    at = f"the record at offset {r.offset}"
    return {
        "topic": r.topic,
        "partition": r.partition,
        "offset": r.offset,
        "timestamp": r.timestamp,
        "key": encode(r.key, encoding, f"the key of {at}"),
        "value": encode(r.value, encoding, f"the value of {at}"),
        "headers": [{"key": k, "value": encode(v, encoding, f"header {k!r} of {at}")} for k, v in r.headers],
        "leader_epoch": r.leader_epoch,
        "compression": r.compression,
    }
