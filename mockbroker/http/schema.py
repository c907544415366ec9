"""The JSON Schema subset of the HTTP control API: helpers that write schemas (``s_int``,
``s_obj``, ...) and ``check``, the validator of requests against exactly those schemas.

The same dictionaries go into the OpenAPI document (mockbroker/http/openapi.py) and check the
requests, so the document and the server cannot disagree. Only the keywords the helpers write are
understood: type, minimum/maximum, min/maxLength, pattern, min/maxItems, properties, required,
additionalProperties, maxProperties, enum, nullable, oneOf with a discriminator, and $ref.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

Schema = dict[str, Any]

MAX_I32 = (1 << 31) - 1
MAX_I64 = (1 << 63) - 1
MAX_TIMESTAMP_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


class BadInput(Exception):
    """The client's request is wrong; ``field`` names what ("body.partitions", "query.since_seq")."""

    def __init__(self, field: str, message: str, status: int = 400) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.status = status


# -- writing schemas ----------------------------------------------------------------------------------


def s_int(lo: int, hi: int, **kw: Any) -> Schema:
    return {"type": "integer", "minimum": lo, "maximum": hi, **kw}


def s_str(**kw: Any) -> Schema:
    return {"type": "string", **kw}


def s_bool(**kw: Any) -> Schema:
    return {"type": "boolean", **kw}


def s_arr(items: Schema, **kw: Any) -> Schema:
    return {"type": "array", "items": items, **kw}


def s_obj(props: Schema, required: tuple[str, ...] = (), extra: bool | Schema = False, **kw: Any) -> Schema:
    out: Schema = {"type": "object", "properties": props, "additionalProperties": extra, **kw}
    if required:
        out["required"] = list(required)
    return out


def s_map(values: Schema | bool, **kw: Any) -> Schema:
    return {"type": "object", "additionalProperties": values, **kw}


def s_null(schema: Schema) -> Schema:
    return {**schema, "nullable": True}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


# -- checking values ------------------------------------------------------------------------------------


def resolve(schema: Schema, components: Mapping[str, Schema]) -> Schema:
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def check(schema: Schema, value: Any, where: str, components: Mapping[str, Schema]) -> Any:
    """``value`` checked against ``schema`` (``$ref`` looked up in ``components``); returns it with
    integral floats made ints. Raises BadInput naming ``where`` and the offending part."""
    schema = resolve(schema, components)
    if value is None:
        if schema.get("nullable"):
            return None
        raise BadInput(where, "must not be null")
    if "oneOf" in schema:
        return _one_of(schema, value, where, components)
    kind = schema.get("type")
    if kind == "integer" or kind == "number":
        value = _number(schema, value, where)
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise BadInput(where, f"must be true or false, not {_show(value)}")
    elif kind == "string":
        if not isinstance(value, str):
            raise BadInput(where, f"must be a string, not {_show(value)}")
        _size_within(schema, len(value), "Length", "character(s)", where)
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise BadInput(where, f"must match {schema['pattern']}, not {value!r}")
    elif kind == "array":
        if not isinstance(value, list):
            raise BadInput(where, f"must be an array, not {_show(value)}")
        _size_within(schema, len(value), "Items", "item(s)", where)
        value = [check(schema["items"], item, f"{where}[{i}]", components) for i, item in enumerate(value)]
    elif kind == "object":
        value = _object(schema, value, where, components)
    if "enum" in schema and value not in schema["enum"]:
        raise BadInput(where, f"must be one of {', '.join(map(str, schema['enum']))}, not {_show(value)}")
    return value


def _number(schema: Schema, value: Any, where: str) -> Any:
    """An integer (an integral float made an int) or a finite number, within minimum..maximum."""
    kind = schema["type"]
    if kind == "integer":
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadInput(where, f"must be an integer, not {_show(value)}")
    elif isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadInput(where, f"must be a number, not {_show(value)}")
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        article = "an integer" if kind == "integer" else "a number"
        raise BadInput(where, f"must be {article} {lo}..{hi}, not {value}")
    return value


def _object(schema: Schema, value: Any, where: str, components: Mapping[str, Schema]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadInput(where, f"must be an object, not {_show(value)}")
    props: Schema = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            raise BadInput(f"{where}.{name}", "is required")
    extra = schema.get("additionalProperties", True)
    out: dict[str, Any] = {}
    for name, item in value.items():
        if name in props:
            out[name] = check(props[name], item, f"{where}.{name}", components)
        elif extra is False:
            allowed = ", ".join(props) or "none"
            raise BadInput(f"{where}.{name}", f"is not a known field (allowed: {allowed})")
        elif isinstance(extra, dict):
            out[name] = check(extra, item, f"{where}.{name}", components)
        else:
            out[name] = item
    if len(out) > schema.get("maxProperties", len(out)):
        raise BadInput(where, f"must have at most {schema['maxProperties']} entries")
    return out


def _one_of(schema: Schema, value: Any, where: str, components: Mapping[str, Schema]) -> Any:
    """A ``oneOf``: the option its discriminator names (OpenAPI's ``discriminator.mapping``), or
    else the one option that accepts the value."""
    discriminator = schema.get("discriminator")
    if discriminator is not None:
        name, mapping = discriminator["propertyName"], discriminator["mapping"]
        tag = value.get(name) if isinstance(value, dict) else None
        if not isinstance(tag, str) or tag not in mapping:
            raise BadInput(f"{where}.{name}", f"must be one of {', '.join(mapping)}, not {_show(tag)}")
        return check({"$ref": mapping[tag]}, value, where, components)
    accepted = []
    for option in schema["oneOf"]:
        try:
            accepted.append(check(option, value, where, components))
        except BadInput:
            continue
    if len(accepted) != 1:
        raise BadInput(where, f"must match exactly one of {len(schema['oneOf'])} schemas, not {len(accepted)}")
    return accepted[0]


def _size_within(schema: Schema, size: int, keyword: str, unit: str, where: str) -> None:
    """minLength/maxLength (keyword "Length") or minItems/maxItems ("Items")."""
    if size < schema.get(f"min{keyword}", 0):
        raise BadInput(where, f"must have at least {schema[f'min{keyword}']} {unit}")
    if f"max{keyword}" in schema and size > schema[f"max{keyword}"]:
        raise BadInput(where, f"must have at most {schema[f'max{keyword}']} {unit}")


def _show(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, str | int | float | bool | list | dict) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
