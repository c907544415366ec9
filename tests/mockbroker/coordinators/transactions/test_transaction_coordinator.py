"""The transaction coordinator without sockets: a MockCluster never started, on a ManualClock.

Every state transition, the timeout, and the error codes of InitProducerId, AddPartitionsToTxn
(and its verification), EndTxn v0-4 and v5, and what the markers do to the partitions' logs and
to the group's pending offsets."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker import MockCluster
from mockbroker.clock import ManualClock
from mockbroker.coordinators.transactions.coordinator import ProducerIdResult, TransactionCoordinator
from mockbroker.coordinators.transactions.metadata import SHORT_MAX, TransactionState
from mockbroker.model import OFFSETS_TOPIC
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.records import build_batch, parse_batch_header
from mockbroker_protocol.records.records import SimpleRecord

TID = "app-1"
TIMEOUT = 10_000
E = ErrorCode
S = TransactionState


class Harness:
    def __init__(self, **settings: Any) -> None:
        self.clock = ManualClock()
        settings.setdefault("brokers", 1)
        self.cluster = MockCluster(clock=self.clock, **settings)
        self.cluster.create_topic("t", 2)
        self.txns: TransactionCoordinator = self.cluster.transactions

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    def advance(self, ms: int) -> None:
        target = self.now + ms
        while (due := self.cluster.timers.next_deadline()) is not None and due <= target:
            self.clock.advance(max(due - self.now, 0))
        self.clock.advance(target - self.now)
        if self.cluster.internal_errors:
            raise self.cluster.internal_errors[0]

    def init(self, expected: tuple[int, int] | None = None, timeout: int = TIMEOUT, tid: str = TID) -> ProducerIdResult:
        return self.txns.init_producer_id(self.now, tid, timeout, expected)

    def add(self, pid: int, epoch: int, *partitions: tuple[str, int]) -> ErrorCode:
        return self.txns.add_partitions(self.now, TID, pid, epoch, partitions or [("t", 0)])

    def end(self, pid: int, epoch: int, commit: bool, *, tv2: bool = False) -> ProducerIdResult:
        return self.txns.end_transaction(self.now, TID, pid, epoch, commit, tv2=tv2)

    def state(self) -> S:
        txn = self.txns.describe(TID)
        assert txn is not None
        return txn.state

    def transitions(self) -> list[tuple[str, str]]:
        return [(e.details["from_state"], e.details["to_state"]) for e in self.cluster.events.filter("txn.transition")]

    def produce(self, pid: int, epoch: int, seq: int, partition: int = 0) -> None:
        batch = bytearray(
            build_batch(
                [SimpleRecord(key=None, value=b"v", timestamp=self.now)],
                producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=True,
            )
        )  # fmt: skip
        self.cluster.topics["t"].partitions[partition].log.append(batch, parse_batch_header(batch))


@pytest.fixture
def h() -> Harness:
    return Harness()


# -- InitProducerId ---------------------------------------------------------------------------------


def test_first_init_gets_a_new_id_at_epoch_0_then_each_init_bumps_the_epoch(h: Harness) -> None:
    first = h.init()
    assert (first.error, first.producer_epoch) == (E.NONE, 0)
    again = h.init()
    assert (again.error, again.producer_id, again.producer_epoch) == (E.NONE, first.producer_id, 1)
    assert h.state() is S.EMPTY
    assert h.transitions() == [("Empty", "Empty"), ("Empty", "Empty")]


@pytest.mark.parametrize("timeout", [0, -1, 900_001])
def test_timeout_outside_the_maximum_is_invalid_transaction_timeout(h: Harness, timeout: int) -> None:
    assert h.init(timeout=timeout).error == E.INVALID_TRANSACTION_TIMEOUT


def test_the_maximum_timeout_is_a_setting() -> None:
    h = Harness(transaction_max_timeout_ms=5_000)
    assert h.init(timeout=5_001).error == E.INVALID_TRANSACTION_TIMEOUT
    assert h.init(timeout=5_000).error == E.NONE


def test_empty_transactional_id_is_invalid_request(h: Harness) -> None:
    assert h.init(tid="").error == E.INVALID_REQUEST


def test_kip360_bump_with_the_current_epoch_and_a_retry_with_the_previous_one(h: Harness) -> None:
    first = h.init()
    bumped = h.init((first.producer_id, 0))
    assert (bumped.error, bumped.producer_epoch) == (E.NONE, 1)
    retried = h.init((first.producer_id, 0))  # the answer was lost: the same epoch again
    assert (retried.error, retried.producer_epoch) == (E.NONE, 1)


def test_kip360_with_an_older_epoch_or_another_id_is_fenced(h: Harness) -> None:
    first = h.init()
    h.init()
    h.init()  # epoch 2; the previous epoch is forgotten by a plain init
    assert h.init((first.producer_id, 0)).error == E.PRODUCER_FENCED
    assert h.init((first.producer_id + 100, 2)).error == E.PRODUCER_FENCED


def test_exhausted_epoch_rotates_the_producer_id(h: Harness) -> None:
    first = h.init()
    txn = h.txns.describe(TID)
    assert txn is not None
    txn.producer_epoch = SHORT_MAX - 1
    rotated = h.init()
    assert rotated.error == E.NONE
    assert rotated.producer_id != first.producer_id and rotated.producer_epoch == 0
    assert txn.last_producer_id == first.producer_id


def test_init_during_an_ongoing_transaction_fences_and_aborts_it(h: Harness) -> None:
    first = h.init()
    assert h.add(first.producer_id, 0) == E.NONE
    h.produce(first.producer_id, 0, 0)
    assert h.init().error == E.CONCURRENT_TRANSACTIONS
    assert h.state() is S.COMPLETE_ABORT
    assert h.transitions()[-4:] == [
        ("Empty", "Ongoing"), ("Ongoing", "PrepareEpochFence"), ("PrepareEpochFence", "PrepareAbort"),
        ("PrepareAbort", "CompleteAbort"),
    ]  # fmt: skip
    log = h.cluster.topics["t"].partitions[0].log
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in log.aborted_txns] == [(first.producer_id, 0, 1)]
    assert log.last_stable_offset == 2
    retry = h.init()  # the client retries: a second bump
    assert (retry.error, retry.producer_epoch) == (E.NONE, 2)
    # the zombie, at epoch 0, is fenced everywhere
    assert h.add(first.producer_id, 0) == E.PRODUCER_FENCED
    assert h.end(first.producer_id, 0, True).error == E.PRODUCER_FENCED


# -- AddPartitionsToTxn ---------------------------------------------------------------------------------


def test_add_partitions_errors(h: Harness) -> None:
    assert h.add(1, 0) == E.INVALID_PRODUCER_ID_MAPPING  # unknown transactional id
    p = h.init()
    assert h.add(p.producer_id + 1, 0) == E.INVALID_PRODUCER_ID_MAPPING
    assert h.add(p.producer_id, 1) == E.PRODUCER_FENCED
    assert h.txns.add_partitions(h.now, "", p.producer_id, 0, [("t", 0)]) == E.INVALID_REQUEST
    assert h.add(p.producer_id, 0) == E.NONE
    assert h.add(p.producer_id, 0) == E.NONE  # already in: no transition
    assert h.add(p.producer_id, 0, ("t", 1)) == E.NONE
    assert h.transitions()[-2:] == [("Empty", "Ongoing"), ("Ongoing", "Ongoing")]
    txn = h.txns.describe(TID)
    assert txn is not None and txn.sorted_partitions() == [("t", 0), ("t", 1)]


def test_verify_only(h: Harness) -> None:
    p = h.init()
    h.add(p.producer_id, 0)
    assert h.txns.verify_partitions(TID, p.producer_id, 0, [("t", 0), ("t", 1)]) == {
        ("t", 0): E.NONE, ("t", 1): E.TRANSACTION_ABORTABLE,
    }  # fmt: skip
    assert h.txns.verify_partitions(TID, p.producer_id, 1, [("t", 0)]) == E.PRODUCER_FENCED
    assert h.txns.verify_partitions("other", p.producer_id, 0, [("t", 0)]) == E.INVALID_PRODUCER_ID_MAPPING
    assert h.txns.verify_partitions("", p.producer_id, 0, [("t", 0)]) == {("t", 0): E.INVALID_REQUEST}


# -- EndTxn ------------------------------------------------------------------------------------------


def test_commit_writes_markers_and_completes(h: Harness) -> None:
    p = h.init()
    h.add(p.producer_id, 0, ("t", 0), ("t", 1))
    h.produce(p.producer_id, 0, 0, 0)
    h.produce(p.producer_id, 0, 1, 1)
    log = h.cluster.topics["t"].partitions[0].log
    assert log.last_stable_offset == 0
    result = h.end(p.producer_id, 0, True)
    assert (result.error, result.producer_id, result.producer_epoch) == (E.NONE, p.producer_id, 0)
    assert h.state() is S.COMPLETE_COMMIT
    assert h.transitions()[-2:] == [("Ongoing", "PrepareCommit"), ("PrepareCommit", "CompleteCommit")]
    assert log.last_stable_offset == log.high_watermark == 2 and not log.aborted_txns
    assert [b.is_control for b in log.batches] == [False, True]
    (written,) = h.cluster.events.filter("txn.markers_written")
    assert written.details["partitions"] == ["t-0", "t-1"] and written.details["result"] == "COMMIT"
    assert h.end(p.producer_id, 0, True).error == E.NONE  # a retry
    assert h.end(p.producer_id, 0, False).error == E.INVALID_TXN_STATE


def test_end_errors(h: Harness) -> None:
    assert h.end(1, 0, True).error == E.INVALID_PRODUCER_ID_MAPPING
    p = h.init()
    assert h.end(p.producer_id, 0, True).error == E.INVALID_TXN_STATE  # Empty: nothing to commit
    assert h.end(p.producer_id, 0, False).error == E.INVALID_TXN_STATE  # nor to abort, under TV1
    assert h.end(p.producer_id + 1, 0, True).error == E.INVALID_PRODUCER_ID_MAPPING
    assert h.end(p.producer_id, 3, True).error == E.PRODUCER_FENCED
    h.add(p.producer_id, 0)
    assert h.end(p.producer_id, 0, False).error == E.NONE
    assert h.end(p.producer_id, 0, False).error == E.NONE  # a retry
    assert h.end(p.producer_id, 0, True).error == E.INVALID_TXN_STATE


def test_prepare_states_answer_concurrent_transactions_while_markers_are_written() -> None:
    h = Harness(transaction_marker_delay_ms=100)
    p = h.init()
    h.add(p.producer_id, 0)
    assert h.end(p.producer_id, 0, True).error == E.NONE
    assert h.state() is S.PREPARE_COMMIT
    assert h.end(p.producer_id, 0, True).error == E.CONCURRENT_TRANSACTIONS
    assert h.end(p.producer_id, 0, False).error == E.INVALID_TXN_STATE
    assert h.add(p.producer_id, 0) == E.CONCURRENT_TRANSACTIONS
    assert h.init().error == E.CONCURRENT_TRANSACTIONS
    h.advance(100)
    assert h.state() is S.COMPLETE_COMMIT
    assert h.add(p.producer_id, 0) == E.NONE


def test_tv2_end_bumps_the_epoch_and_a_retry_is_recognised(h: Harness) -> None:
    p = h.init()
    h.add(p.producer_id, 0)
    h.produce(p.producer_id, 0, 0)
    result = h.end(p.producer_id, 0, True, tv2=True)
    assert (result.error, result.producer_id, result.producer_epoch) == (E.NONE, p.producer_id, 1)
    log = h.cluster.topics["t"].partitions[0].log
    assert parse_batch_header(log.batches[-1].data).producer_epoch == 1  # the marker has the new epoch
    retry = h.end(p.producer_id, 0, True, tv2=True)
    assert (retry.error, retry.producer_epoch) == (E.NONE, 1)
    assert h.end(p.producer_id, 0, False, tv2=True).error == E.INVALID_TXN_STATE
    empty_abort = h.end(p.producer_id, 1, False, tv2=True)  # TV2 may abort with nothing added
    assert (empty_abort.error, empty_abort.producer_epoch) == (E.NONE, 2)
    assert h.end(p.producer_id, 0, True, tv2=True).error == E.PRODUCER_FENCED


def test_tv2_end_of_an_exhausted_epoch_moves_to_a_new_producer_id(h: Harness) -> None:
    p = h.init()
    txn = h.txns.describe(TID)
    assert txn is not None
    txn.producer_epoch = SHORT_MAX - 1
    h.add(p.producer_id, SHORT_MAX - 1)
    result = h.end(p.producer_id, SHORT_MAX - 1, True, tv2=True)
    assert result.error == E.NONE and result.producer_id != p.producer_id and result.producer_epoch == 0
    retry = h.end(p.producer_id, SHORT_MAX - 1, True, tv2=True)
    assert (retry.error, retry.producer_id) == (E.NONE, result.producer_id)


# -- timeouts ------------------------------------------------------------------------------------------


def test_an_ongoing_transaction_is_aborted_after_its_timeout_and_its_producer_fenced(h: Harness) -> None:
    p = h.init()
    h.add(p.producer_id, 0)
    h.produce(p.producer_id, 0, 0)
    h.advance(TIMEOUT)
    assert h.state() is S.ONGOING  # Kafka's condition is start + timeout < now
    h.advance(1)
    assert h.state() is S.COMPLETE_ABORT
    (timed_out,) = h.cluster.events.filter("txn.timed_out")
    assert timed_out.time_ms == h.now
    assert h.end(p.producer_id, 0, True).error == E.PRODUCER_FENCED
    assert h.cluster.topics["t"].partitions[0].log.aborted_txns


def test_a_completed_transaction_disarms_its_timeout(h: Harness) -> None:
    p = h.init()
    h.add(p.producer_id, 0)
    h.end(p.producer_id, 0, True)
    h.advance(TIMEOUT * 2)
    assert h.state() is S.COMPLETE_COMMIT
    assert not h.cluster.events.filter("txn.timed_out")


def test_control_abort(h: Harness) -> None:
    assert h.txns.abort_transaction(h.now, TID) == E.TRANSACTIONAL_ID_NOT_FOUND
    p = h.init()
    assert h.txns.abort_transaction(h.now, TID) == E.INVALID_TXN_STATE
    h.add(p.producer_id, 0)
    assert h.txns.abort_transaction(h.now, TID) == E.NONE
    assert h.state() is S.COMPLETE_ABORT


# -- offsets ------------------------------------------------------------------------------------------


def test_offsets_become_visible_on_commit_only(h: Harness) -> None:
    groups = h.cluster.groups
    offsets_partition = (OFFSETS_TOPIC, h.cluster.coordinator_partition("g"))
    for commit, expected in ((False, -1), (True, 5)):
        p = h.init()
        h.add(p.producer_id, p.producer_epoch, offsets_partition)
        assert groups.commit_transactional_offsets(h.now, "g", p.producer_id, [("t", [(0, 5, -1, "")])]) == {
            ("t", 0): E.NONE
        }
        pending = groups.fetch_offsets("g", [("t", [0])], require_stable=True)
        assert pending.topics[0].partitions[0].error_code == E.UNSTABLE_OFFSET_COMMIT
        h.end(p.producer_id, p.producer_epoch, commit)
        fetched = groups.fetch_offsets("g", [("t", [0])], require_stable=True)
        assert fetched.topics[0].partitions[0].committed_offset == expected


def test_list_transactions_filters(h: Harness) -> None:
    p = h.init()
    h.init(tid="other")
    h.add(p.producer_id, 0)
    h.advance(50)
    found, unknown = h.txns.list_transactions(h.now, states=["Ongoing", "Bogus"])
    assert [t.transactional_id for t in found] == [TID] and unknown == ["Bogus"]
    assert [t.transactional_id for t in h.txns.list_transactions(h.now, pattern="oth.*")[0]] == ["other"]
    assert [t.transactional_id for t in h.txns.list_transactions(h.now, producer_ids=[p.producer_id])[0]] == [TID]
    assert [t.transactional_id for t in h.txns.list_transactions(h.now, duration_ms=49, states=["Ongoing"])[0]] == [TID]
    assert h.txns.list_transactions(h.now, duration_ms=50, states=["Ongoing"])[0] == []


def test_the_wiring_names_the_offsets_topic_as_the_model_does() -> None:
    from mockbroker.coordinators.transactions import wiring

    assert wiring.OFFSETS_TOPIC == OFFSETS_TOPIC


# -- transactional.id.expiration.ms ------------------------------------------------------------------


def test_an_idle_transactional_id_expires_and_comes_back_with_a_new_producer_id() -> None:
    h = Harness(transactional_id_expiration_ms=1000)
    first = h.init()
    h.add(first.producer_id, 0)
    assert h.end(first.producer_id, 0, True).error == E.NONE  # CompleteCommit at t=0
    h.advance(500)
    again = h.init()  # Empty at t=500: the last update counts
    assert (again.producer_id, again.producer_epoch) == (first.producer_id, 1)
    h.advance(999)
    assert h.state() is S.EMPTY
    h.advance(1)  # last update + transactional.id.expiration.ms: txnLastUpdateTimestamp <= now - expiration
    assert h.txns.describe(TID) is None
    assert h.transitions()[-1] == ("Empty", "Dead")
    (expired,) = h.cluster.events.filter("txn.expired")
    assert expired.details["last_update_ms"] == h.now - 1000
    renewed = h.init()
    assert renewed.producer_id != first.producer_id and renewed.producer_epoch == 0


def test_an_ongoing_transaction_does_not_expire() -> None:
    h = Harness(transactional_id_expiration_ms=1000)
    p = h.init(timeout=60_000)
    h.add(p.producer_id, 0)
    h.advance(5000)
    assert h.state() is S.ONGOING  # only Empty, CompleteCommit and CompleteAbort may expire
    assert h.end(p.producer_id, 0, False).error == E.NONE
    h.advance(1000)
    assert h.txns.describe(TID) is None


def test_transactional_id_expiration_is_a_kafka_setting() -> None:
    from mockbroker.config.cluster import ClusterConfig

    assert ClusterConfig.from_kafka({"transactional.id.expiration.ms": "5000"}).transactional_id_expiration_ms == 5000
    with pytest.raises(ValueError, match=r"transactional\.id\.expiration\.ms"):
        ClusterConfig(transactional_id_expiration_ms=0)
