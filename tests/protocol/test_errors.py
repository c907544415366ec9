"""ErrorCode against kafka-python's kafka.errors and against Java facts; the DecodeError family."""

from __future__ import annotations

import inspect
from typing import Any

import kafka.errors as kafka_errors
import pytest

from mockbroker_protocol.errors import (
    CorruptRecordError,
    DecodeError,
    EncodeError,
    ErrorCode,
    FrameTooLarge,
    InvalidValueError,
    TruncatedError,
    UnknownApiError,
    UnsupportedVersionError,
)


def _kafka_python_codes() -> list[tuple[int, str, bool, str]]:
    """(errno, kafka-python's name for it, its retriable flag, class name) for every class with an errno."""
    rows = []
    for cls_name, cls in vars(kafka_errors).items():
        if inspect.isclass(cls) and issubclass(cls, kafka_errors.KafkaError):
            errno = getattr(cls, "errno", None)
            if isinstance(errno, int):
                info: Any = cls  # kafka-python's error classes are untyped
                rows.append((errno, str(info.message), bool(info.retriable), cls_name))
    return rows


# Where kafka-python 3.0.12 still uses an older Kafka name (Java renamed these; the numbers never
# change): code -> kafka-python's name. Ours follow Java's Errors enum on trunk.
KAFKA_PYTHON_OLD_NAMES = {
    -1: "UNKNOWN",  # Java: UNKNOWN_SERVER_ERROR
    0: "NO_ERROR",  # Java: NONE
    6: "NOT_LEADER_FOR_PARTITION",  # Java: NOT_LEADER_OR_FOLLOWER
    10: "MESSAGE_SIZE_TOO_LARGE",  # Java: MESSAGE_TOO_LARGE
    17: "INVALID_TOPIC",  # Java: INVALID_TOPIC_EXCEPTION
    39: "INVALID_REPLICATION_ASSIGNMENT",  # Java: INVALID_REPLICA_ASSIGNMENT
}

# Where kafka-python's retriable flag disagrees with Java's exception hierarchy (Java wins):
# CorruptRecordException extends RetriableException in Java.
KAFKA_PYTHON_RETRIABLE_DIFFERS = {2}


def test_every_kafka_python_code_is_in_the_enum() -> None:
    rows = _kafka_python_codes()
    assert len(rows) > 100
    for errno, name, _, cls_name in rows:
        code = ErrorCode(errno)  # raises ValueError if missing
        if errno in KAFKA_PYTHON_OLD_NAMES:
            assert name == KAFKA_PYTHON_OLD_NAMES[errno], cls_name
        else:
            assert code.name == name, cls_name


def test_retriable_agrees_with_kafka_python_except_where_java_differs() -> None:
    for errno, _, retriable, cls_name in _kafka_python_codes():
        if errno in KAFKA_PYTHON_RETRIABLE_DIFFERS:
            assert ErrorCode(errno).retriable != retriable, cls_name
        else:
            assert ErrorCode(errno).retriable == retriable, cls_name


def test_codes_are_contiguous_from_unknown_server_error_to_the_newest() -> None:
    values = [code.value for code in ErrorCode]
    assert values == list(range(-1, 137))
    assert len({code.name for code in ErrorCode}) == len(values)  # no aliases


# The codes whose Java exception extends RetriableException (Errors.java + common/errors/*.java).
JAVA_RETRIABLE = {
    2, 3, 5, 6, 7, 9, 13, 14, 15, 16, 19, 20, 41, 51, 56, 70, 71, 72, 74, 75, 78, 80, 83, 84, 88, 89,
    100, 103, 106, 122, 123, 133,
}  # fmt: skip


def test_retriable_is_exactly_javas_retriable_exceptions() -> None:
    assert {code.value for code in ErrorCode if code.retriable} == JAVA_RETRIABLE
    assert not ErrorCode.NONE.retriable
    assert not ErrorCode.UNKNOWN_SERVER_ERROR.retriable


# docs/kafka-group-semantics.md §0, the codes the group coordinator uses, and a few others by name.
NAMED = {
    -1: "UNKNOWN_SERVER_ERROR", 0: "NONE", 3: "UNKNOWN_TOPIC_OR_PARTITION", 6: "NOT_LEADER_OR_FOLLOWER",
    12: "OFFSET_METADATA_TOO_LARGE", 14: "COORDINATOR_LOAD_IN_PROGRESS", 15: "COORDINATOR_NOT_AVAILABLE",
    16: "NOT_COORDINATOR", 22: "ILLEGAL_GENERATION", 23: "INCONSISTENT_GROUP_PROTOCOL", 24: "INVALID_GROUP_ID",
    25: "UNKNOWN_MEMBER_ID", 26: "INVALID_SESSION_TIMEOUT", 27: "REBALANCE_IN_PROGRESS",
    29: "TOPIC_AUTHORIZATION_FAILED", 30: "GROUP_AUTHORIZATION_FAILED", 35: "UNSUPPORTED_VERSION",
    42: "INVALID_REQUEST", 68: "NON_EMPTY_GROUP", 69: "GROUP_ID_NOT_FOUND", 79: "MEMBER_ID_REQUIRED",
    81: "GROUP_MAX_SIZE_REACHED", 82: "FENCED_INSTANCE_ID", 86: "GROUP_SUBSCRIBED_TO_TOPIC",
    88: "UNSTABLE_OFFSET_COMMIT", 100: "UNKNOWN_TOPIC_ID", 110: "FENCED_MEMBER_EPOCH",
    111: "UNRELEASED_INSTANCE_ID", 112: "UNSUPPORTED_ASSIGNOR", 113: "STALE_MEMBER_EPOCH",
    128: "INVALID_REGULAR_EXPRESSION", 129: "REBOOTSTRAP_REQUIRED", 130: "STREAMS_INVALID_TOPOLOGY",
    133: "SHARE_SESSION_LIMIT_REACHED", 134: "GROUP_DELETION_FAILED",
    135: "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED", 136: "CONTROLLER_ID_NOT_REGISTERED",
}  # fmt: skip


@pytest.mark.parametrize(("value", "name"), sorted(NAMED.items()))
def test_java_names(value: int, name: str) -> None:
    assert ErrorCode(value).name == name
    assert ErrorCode[name] == value


def test_error_codes_are_ints_that_fit_int16() -> None:
    for code in ErrorCode:
        assert isinstance(code, int)
        assert -(2**15) <= code < 2**15
    assert ErrorCode.MEMBER_ID_REQUIRED.value == 79
    assert int(ErrorCode.NOT_COORDINATOR) == 16


def test_unknown_code_is_not_an_error_code() -> None:
    with pytest.raises(ValueError):
        ErrorCode(137)
    with pytest.raises(ValueError):
        ErrorCode(-2)


def test_decode_error_family() -> None:
    for cls in (TruncatedError, InvalidValueError, FrameTooLarge, UnknownApiError, UnsupportedVersionError,
                CorruptRecordError):  # fmt: skip
        assert issubclass(cls, DecodeError)
    assert issubclass(DecodeError, ValueError)
    assert not issubclass(EncodeError, DecodeError)
    too_large = FrameTooLarge(10, 5)
    assert (too_large.size, too_large.max_size) == (10, 5)
