"""The request checker of the HTTP control API (mockbroker/http/schema.py) on the API's own
schemas (mockbroker/http/components.py)."""

from __future__ import annotations

import pytest

from mockbroker.http.components import check
from mockbroker.http.schema import BadInput, ref, s_int, s_obj, s_str


def test_the_group_schema_tells_the_two_kinds_apart_by_type() -> None:
    """The request checker handles the document's oneOf the way its discriminator says: ``type``
    picks the schema, and a body of one kind labelled as the other is refused naming the field."""
    member = {"member_id": "m", "instance_id": None, "rack_id": None, "client_id": "c", "client_host": "/127.0.0.1",
              "member_epoch": 2, "previous_member_epoch": 1, "state": "UNREVOKED_PARTITIONS",
              "subscribed_topic_names": ["t"], "subscribed_topic_regex": None, "server_assignor": None,
              "rebalance_timeout_ms": 300000, "assigned": {"t": [0, 1]}, "pending_revocation": {"t": [1]}, "target": {"t": [0]}}  # fmt: skip
    consumer = {"type": "consumer", "group_id": "g", "state": "Reconciling", "group_epoch": 3, "assignment_epoch": 3,
                "assignor": "uniform", "subscribed_topics": {"t": 2}, "resolved_regexes": {"t.*": ["t"]},
                "protocol_type": "consumer", "members": [member],
                "reconciled": False, "coordinator": 1, "configs": {"consumer.heartbeat.interval.ms": "6000"}}  # fmt: skip
    classic = {"type": "classic", "group_id": "g", "state": "PreparingRebalance", "generation_id": 4, "protocol_type": "consumer",
               "protocol_name": "range", "leader_id": None, "members": [], "coordinator": 1, "configs": {}}  # fmt: skip
    assert check(ref("Group"), consumer, "body") == consumer
    assert check(ref("Group"), classic, "body") == classic
    cases = [
        ({**consumer, "type": "classic"}, "body.generation_id"),
        ({**classic, "state": "Reconciling"}, "body.state"),
        ({**consumer, "type": "sharing"}, "body.type"),
        ({**consumer, "members": [{**member, "state": "Stable"}]}, "body.members[0].state"),
    ]
    for body, field in cases:
        with pytest.raises(BadInput) as refused:
            check(ref("Group"), body, "body")
        assert refused.value.field == field, refused.value


def test_a_body_is_checked_field_by_field_naming_the_offending_one() -> None:
    body = s_obj({"partitions": s_int(1, 1000), "name": s_str(minLength=1, pattern=r"^[a-z]+$")}, ("name",))
    # An integral float is an integer (JSON has one number type); the result says int.
    checked = check(body, {"name": "orders", "partitions": 3.0}, "body")
    assert checked == {"name": "orders", "partitions": 3} and isinstance(checked["partitions"], int)
    cases = [
        ({}, "body.name", "is required"),
        ({"name": "orders", "partitions": 0}, "body.partitions", "must be an integer 1..1000, not 0"),
        ({"name": "orders", "partitions": True}, "body.partitions", "must be an integer, not true"),
        ({"name": "Orders"}, "body.name", "must match"),
        ({"name": "orders", "replicas": 3}, "body.replicas", "is not a known field (allowed: partitions, name)"),
        ([], "body", "must be an object"),
    ]
    for value, field, message in cases:
        with pytest.raises(BadInput) as refused:
            check(body, value, "body")
        assert (refused.value.field, refused.value.status) == (field, 400) and message in refused.value.message, refused.value
