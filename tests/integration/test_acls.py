"""ACLs with real clients (issue #21, must-show 2): a confluent-kafka consumer denied READ on its
group gets GROUP_AUTHORIZATION_FAILED, an admin client adds the ACL over the wire (CreateAcls),
and the same consumer then reads; a producer without WRITE gets TOPIC_AUTHORIZATION_FAILED."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from mockbroker.testing import KafkaCluster

DEADLINE_S = 30.0
USERS = {"admin": "admin-secret", "alice": "alice-secret"}


@pytest.fixture(scope="module")
def secured() -> Iterator[KafkaCluster]:
    with KafkaCluster(
        listeners="SASL_PLAINTEXT://127.0.0.1:0",
        sasl_users=USERS,
        authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        super_users="User:admin",
        request_log=False,
    ) as kafka:
        yield kafka


def _settings(kafka: KafkaCluster, user: str) -> dict[str, str]:
    return {
        "bootstrap.servers": kafka.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
        "sasl.username": user, "sasl.password": USERS[user],
    }


def _create_acls(admin: AdminClient, *bindings: AclBinding) -> None:
    for future in admin.create_acls(list(bindings), request_timeout=DEADLINE_S).values():
        future.result(timeout=DEADLINE_S)


def test_consumer_denied_group_read_until_the_acl_is_added(secured: KafkaCluster) -> None:
    topic, group = f"t-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    producer = Producer(_settings(secured, "admin"))  # a super user
    producer.produce(topic, b"paid")
    assert producer.flush(DEADLINE_S) == 0
    admin = AdminClient(_settings(secured, "admin"))
    _create_acls(admin, AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW))

    consumer = Consumer({**_settings(secured, "alice"), "group.id": group, "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + DEADLINE_S
        error = None
        while error is None and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None:
                assert message.error() is not None, "read without READ on the group"
                error = message.error()
        assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED, error

        _create_acls(admin, AclBinding(ResourceType.GROUP, group, ResourcePatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW))
        got = None
        deadline = time.monotonic() + DEADLINE_S
        while got is None and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                got = message.value()
        assert got == b"paid"
    finally:
        consumer.close()
    described = admin.describe_acls(
        AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, "User:alice", None, AclOperation.ANY, AclPermissionType.ANY),
        request_timeout=DEADLINE_S,
    ).result(timeout=DEADLINE_S)
    assert {(b.restype, b.name) for b in described} >= {(ResourceType.TOPIC, topic), (ResourceType.GROUP, group)}
    denials = secured.call(lambda: [e.details for e in secured.cluster.events if e.type == "authorization.denied"])
    assert any(d["resource_name"] == group and d["principal"] == "User:alice" for d in denials)


def test_producer_denied_write(secured: KafkaCluster) -> None:
    topic = f"t-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(_settings(secured, "admin"))
    # DESCRIBE only: Metadata shows the topic, Produce is refused
    _create_acls(admin, AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW))
    setup = Producer(_settings(secured, "admin"))
    setup.produce(topic, b"x")
    assert setup.flush(DEADLINE_S) == 0
    errors: list[KafkaError] = []
    producer = Producer({**_settings(secured, "alice"), "enable.idempotence": False, "message.timeout.ms": 20000})
    producer.produce(topic, b"nope", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(DEADLINE_S)
    assert errors and errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, errors


def _read(consumer: Consumer, wanted: set[str], new: str) -> None:
    """Poll until the consumer is assigned exactly ``wanted`` topics and has read the record of
    ``new`` (and nothing from a topic not wanted)."""
    read: set[str] = set()
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and not (new in read and {tp.topic for tp in consumer.assignment()} == wanted):
        message = consumer.poll(0.2)
        if message is not None:
            assert message.error() is None, message.error()
            read.add(message.topic() or "")
    assert {tp.topic for tp in consumer.assignment()} == wanted and new in read <= wanted, (consumer.assignment(), read)


def _assigned_by_the_coordinator(secured: KafkaCluster, group: str) -> set[str]:
    """The member's assignment as the coordinator made it (the client alone would hide a topic it
    may not DESCRIBE: Metadata does not name it)."""
    snapshot = secured.call(lambda: secured.cluster.groups.consumer.snapshot(group))
    assert snapshot is not None and len(snapshot["members"]) == 1, snapshot
    return set(snapshot["members"][0]["assigned"])


def test_kip848_regex_consumer_is_assigned_only_the_topics_it_may_describe(secured: KafkaCluster) -> None:
    """A confluent-kafka consumer with group.protocol=consumer subscribing by regex (KIP-848's
    SubscribedTopicRegex, resolved by the broker) is assigned the matching topic alice may READ
    (so DESCRIBE) and not the other; a READ ACL added later shows once a new topic makes the
    coordinator resolve the regex again (GroupMetadataManager.maybeUpdateRegularExpressions)."""
    prefix, group = f"rx-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    allowed, later, never = f"{prefix}-allowed", f"{prefix}-later", f"{prefix}-never"
    producer = Producer(_settings(secured, "admin"))
    for topic in (allowed, later):
        producer.produce(topic, topic.encode())
    assert producer.flush(DEADLINE_S) == 0
    admin = AdminClient(_settings(secured, "admin"))
    _create_acls(
        admin,
        AclBinding(ResourceType.GROUP, group, ResourcePatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW),
        AclBinding(ResourceType.TOPIC, allowed, ResourcePatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW),
    )
    consumer = Consumer({
        **_settings(secured, "alice"), "group.id": group, "group.protocol": "consumer", "auto.offset.reset": "earliest",
    })  # fmt: skip
    try:
        consumer.subscribe([f"^{prefix}-.*"])
        _read(consumer, {allowed}, allowed)
        assert _assigned_by_the_coordinator(secured, group) == {allowed}
        _create_acls(admin, AclBinding(ResourceType.TOPIC, later, ResourcePatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW))
        producer.produce(never, b"never")  # a new topic: the group's regex is resolved again
        assert producer.flush(DEADLINE_S) == 0
        _read(consumer, {allowed, later}, later)
        assert _assigned_by_the_coordinator(secured, group) == {allowed, later}
    finally:
        consumer.close()
