"""Differential: the transactional APIs (KIP-98, KIP-360, KIP-447, KIP-664, KIP-890) against Kafka.

InitProducerId with transactional ids (epochs, fencing, KIP-360 bumps, bad timeouts),
AddPartitionsToTxn v0-5 (v4+ batched and verify-only), AddOffsetsToTxn, EndTxn (v5's epoch bump),
TxnOffsetCommit with group checks, DescribeTransactions, ListTransactions with its filters,
DescribeProducers, transactional Produce (KIP-890 verification), read_committed Fetch (aborted
transactions, the last stable offset) and ListOffsets; and the error codes each gives.

The transactional id of a sequence is its fresh group name (``ctx.group``). Kafka creates
``__transaction_state`` on the first FindCoordinator of key type 1 and answers
COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS until it has loaded
it, so every sequence starts by waiting for the coordinator (not compared), and the first
InitProducerId retries those (only its last answer is compared). Producer ids are compared by
order of first appearance (``<producer#n>``); the times a broker makes up (a transaction's start,
a control batch's timestamps and CRC) are masked.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from mockbroker_protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from mockbroker_protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from mockbroker_protocol.messages.describe_producers import DescribeProducersRequest, TopicRequest
from mockbroker_protocol.messages.describe_transactions import DescribeTransactionsRequest
from mockbroker_protocol.messages.end_txn import EndTxnRequest
from mockbroker_protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.init_producer_id import InitProducerIdRequest
from mockbroker_protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from mockbroker_protocol.messages.list_transactions import ListTransactionsRequest
from mockbroker_protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from mockbroker_protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from mockbroker_protocol.records import SimpleRecord, build_batch
from tests.differential.harness import Context, Step, Target, differential
from tests.differential.steps import FETCH, LIST_OFFSETS, PRODUCE, create

FIND_COORDINATOR, INIT_PRODUCER_ID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = (
    10,
    22,
    24,
    25,
    26,
    28,
)
DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 61, 65, 66
# Answers a coordinator gives while it is not ready yet (Kafka, shortly after its first use).
NOT_READY = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
TIMEOUT_MS = 60000
T0 = int(time.time() * 1000) - 60_000
READ_COMMITTED = 1

Pid = Callable[[Context], tuple[int, int]]


def tid(ctx: Context) -> str:
    return ctx.group


def producer(label: str, epoch_delta: int = 0) -> Pid:
    """The producer id and epoch an earlier answer (InitProducerId, EndTxn v5) gave, the epoch
    moved by ``epoch_delta`` (a zombie: -1; a producer from the future: +1)."""

    def get(ctx: Context) -> tuple[int, int]:
        answer = ctx.answers[label]
        return int(answer.producer_id), int(answer.producer_epoch) + epoch_delta

    return get


def coordinator_ready() -> list[Step]:
    """Wait (not compared) until the transaction coordinator of the sequence's id answers."""
    return [
        Step(
            FIND_COORDINATOR,
            4,
            lambda ctx: FindCoordinatorRequest(key_type=1, coordinator_keys=[ctx.group]),
            compare=False,
            until=lambda a: a.coordinators[0].error_code == 0,
        )
    ]


def init(
    *,
    version: int = 4,
    timeout_ms: int = TIMEOUT_MS,
    expected: Pid | None = None,
    txn: Callable[[Context], str] = tid,
) -> Any:
    def build(ctx: Context) -> InitProducerIdRequest:
        pid, epoch = expected(ctx) if expected is not None else (-1, -1)
        return InitProducerIdRequest(
            transactional_id=txn(ctx),
            transaction_timeout_ms=timeout_ms,
            producer_id=pid,
            producer_epoch=epoch,
        )

    return build


def init_step(label: str = "init", **kwargs: Any) -> Step:
    version = kwargs.get("version", 4)
    return Step(
        INIT_PRODUCER_ID, version, init(**kwargs), label=label, until=lambda a: a.error_code not in NOT_READY
    )


def add_partitions(
    who: Pid,
    *partitions: tuple[str, int],
    version: int = 3,
    verify_only: bool = False,
    txn: Callable[[Context], str] = tid,
) -> Any:
    """AddPartitionsToTxn of ("topic" | "topic2" | a literal name, partition) pairs."""

    def build(ctx: Context) -> AddPartitionsToTxnRequest:
        pid, epoch = who(ctx)
        topics: dict[str, list[int]] = {}
        for name, index in partitions:
            topics.setdefault({"topic": ctx.topic, "topic2": ctx.topic2}.get(name, name), []).append(index)
        wanted = [AddPartitionsToTxnTopic(name, indexes) for name, indexes in topics.items()]
        if version < 4:
            return AddPartitionsToTxnRequest(
                v3_and_below_transactional_id=txn(ctx),
                v3_and_below_producer_id=pid,
                v3_and_below_producer_epoch=epoch,
                v3_and_below_topics=wanted,
            )
        return AddPartitionsToTxnRequest(
            transactions=[AddPartitionsToTxnTransaction(txn(ctx), pid, epoch, verify_only, wanted)]
        )

    return build


def add_offsets(who: Pid) -> Any:
    def build(ctx: Context) -> AddOffsetsToTxnRequest:
        pid, epoch = who(ctx)
        return AddOffsetsToTxnRequest(
            transactional_id=ctx.group, producer_id=pid, producer_epoch=epoch, group_id=ctx.group
        )

    return build


def end_txn(who: Pid, commit: bool) -> Any:
    def build(ctx: Context) -> EndTxnRequest:
        pid, epoch = who(ctx)
        return EndTxnRequest(
            transactional_id=ctx.group, producer_id=pid, producer_epoch=epoch, committed=commit
        )

    return build


def txn_offset_commit(who: Pid, offset: int, *, generation: int = -1, member: str = "") -> Any:
    def build(ctx: Context) -> TxnOffsetCommitRequest:
        pid, epoch = who(ctx)
        partitions = [TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=offset)]
        return TxnOffsetCommitRequest(
            transactional_id=ctx.group,
            group_id=ctx.group,
            producer_id=pid,
            producer_epoch=epoch,
            generation_id=generation,
            member_id=member,
            topics=[TxnOffsetCommitRequestTopic(ctx.topic, partitions)],
        )

    return build


def txn_batch(who: Pid, *values: bytes, sequence: int = 0) -> Callable[[Context], bytes]:
    def build(ctx: Context) -> bytes:
        pid, epoch = who(ctx)
        records = [SimpleRecord(key=b"k", value=v, timestamp=T0 + i) for i, v in enumerate(values)]
        return build_batch(
            records, producer_id=pid, producer_epoch=epoch, base_sequence=sequence, is_transactional=True
        )

    return build


def produce(records: Callable[[Context], bytes], *, transactional: bool = True) -> Any:
    def build(ctx: Context) -> ProduceRequest:
        return ProduceRequest(
            transactional_id=ctx.group if transactional else None,
            acks=-1,
            timeout_ms=10000,
            topic_data=[
                TopicProduceData(name=ctx.topic, partition_data=[PartitionProduceData(0, records(ctx))])
            ],
        )

    return build


def fetch(isolation: int = READ_COMMITTED, offset: int = 0) -> Any:
    def build(ctx: Context) -> FetchRequest:
        partition = FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)
        return FetchRequest(
            max_wait_ms=0,
            min_bytes=1,
            max_bytes=50 << 20,
            isolation_level=isolation,
            session_epoch=-1,
            topics=[FetchTopic(topic=ctx.topic, partitions=[partition])],
        )

    return build


def list_offsets(timestamp: int = -1, isolation: int = READ_COMMITTED) -> Any:
    def build(ctx: Context) -> ListOffsetsRequest:
        wanted = [ListOffsetsPartition(0, -1, timestamp)]
        return ListOffsetsRequest(
            replica_id=-1, isolation_level=isolation, topics=[ListOffsetsTopic(ctx.topic, wanted)]
        )

    return build


def describe_transactions(*extra: str) -> Any:
    return lambda ctx: DescribeTransactionsRequest(transactional_ids=[ctx.group, *extra])


def list_transactions(
    *,
    states: list[str] | None = None,
    pids: Pid | None = None,
    duration: int = -1,
    pattern: str | None = None,
) -> Any:
    def build(ctx: Context) -> ListTransactionsRequest:
        return ListTransactionsRequest(
            state_filters=states or [],
            producer_id_filters=[pids(ctx)[0]] if pids is not None else [],
            duration_filter=duration,
            transactional_id_pattern=ctx.group if pattern is None else pattern,
        )

    return build


def describe_producers() -> Any:
    return lambda ctx: DescribeProducersRequest(topics=[TopicRequest(ctx.topic, [0])])


# -- normalisers: times a broker makes up -----------------------------------------------------------


def started(tree: Any, ctx: Context) -> Any:
    for state in tree["transaction_states"]:
        if state["transaction_start_time_ms"] != -1:
            state["transaction_start_time_ms"] = "<start>"
    return tree


def control_batches(tree: Any, ctx: Context) -> Any:
    """A control batch's timestamps (and so its CRC) are the coordinator's clock."""
    for topic in tree["responses"]:
        for partition in topic["partitions"]:
            records = partition["records"]
            for batch in records if isinstance(records, list) else []:
                if batch["header"]["producer_id"] != -1:
                    batch["header"]["crc"] = "<crc>"  # covers the real producer id
                if batch["header"]["attributes"] & 0x20:
                    batch["header"].update(crc="<crc>", base_timestamp="<time>", max_timestamp="<time>")
                    for record in batch["records"]:
                        record["timestamp"] = "<time>"
    return tree


def by_id(tree: Any, ctx: Context) -> Any:
    """ListTransactions lists in the coordinator's map order, which Kafka leaves unspecified."""
    tree["transaction_states"].sort(key=lambda s: s["transactional_id"])
    return tree


def add_results(tree: Any, ctx: Context) -> Any:
    """AddPartitionsToTxn's results of a failed transaction come in Kafka's hash map order."""
    # v0-3 answer one list; v4+ one list per transaction, each sorted in place (a list built from
    # them would leave the tree's own lists in Kafka's order).
    lists = [tree["results_by_topic_v3_and_below"]] + [r["topic_results"] for r in tree["results_by_transaction"]]
    for results in lists:
        results.sort(key=lambda t: t["name"])
        for topic in results:
            topic["results_by_partition"].sort(key=lambda p: p["partition_index"])
    return tree


def producers_seen(tree: Any, ctx: Context) -> Any:
    for topic in tree["topics"]:
        for partition in topic["partitions"]:
            for state in partition["active_producers"]:
                state["last_timestamp"] = "<time>" if state["last_timestamp"] != -1 else -1
    return tree


def created() -> list[Step]:
    return [*create(), *coordinator_ready()]


def settled() -> Step:
    """Wait (not compared) until the transaction is no longer PrepareCommit/PrepareAbort: Kafka
    answers EndTxn before its markers are written (D8), mockbroker after."""
    return Step(
        DESCRIBE_TRANSACTIONS,
        0,
        describe_transactions(),
        compare=False,
        until=lambda a: a.transaction_states[0].transaction_state not in ("PrepareCommit", "PrepareAbort"),
    )


def group_coordinator_ready() -> list[Step]:
    """Wait (not compared) until the group coordinator of ``ctx.group`` has loaded its partition."""
    from mockbroker_protocol.messages.offset_fetch import OffsetFetchRequest

    return [
        Step(
            FIND_COORDINATOR,
            4,
            lambda ctx: FindCoordinatorRequest(key_type=0, coordinator_keys=[ctx.group]),
            compare=False,
            until=lambda a: a.coordinators[0].error_code == 0,
        ),
        Step(
            9,
            5,
            lambda c: OffsetFetchRequest(group_id=c.group, topics=None),
            compare=False,
            until=lambda a: a.error_code == 0,
        ),
    ]


# -- InitProducerId ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(6))
def test_init_producer_id_bumps_the_epoch(targets: tuple[Target, Target], version: int) -> None:
    """Each InitProducerId of a transactional id bumps its epoch (KIP-98), the producer id kept."""
    differential(
        *targets,
        [
            *coordinator_ready(),
            init_step("first", version=version),
            Step(INIT_PRODUCER_ID, version, init(version=version), label="second"),
            Step(DESCRIBE_TRANSACTIONS, 0, describe_transactions(), normalise=started),
        ],
    )


@pytest.mark.parametrize("timeout_ms", [0, -1, 900_001, 900_000])
def test_init_producer_id_transaction_timeout(targets: tuple[Target, Target], timeout_ms: int) -> None:
    """transaction.timeout.ms must be positive and at most transaction.max.timeout.ms."""
    differential(*targets, [*coordinator_ready(), init_step(timeout_ms=timeout_ms)])


@pytest.mark.parametrize("version", [3, 4, 5])
def test_init_producer_id_kip_360_expected_epochs(targets: tuple[Target, Target], version: int) -> None:
    """v3+: a producer names its id and epoch; the current one bumps, a retried bump is answered
    again, an older epoch is fenced, an unknown producer id is fenced."""
    differential(
        *targets,
        [
            *coordinator_ready(),
            init_step("first", version=version),
            Step(INIT_PRODUCER_ID, version, init(version=version, expected=producer("first")), label="bump"),
            Step(INIT_PRODUCER_ID, version, init(version=version, expected=producer("first")), label="retry"),
            Step(
                INIT_PRODUCER_ID,
                version,
                init(version=version, expected=producer("first", -1)),
                label="zombie",
            ),
            Step(
                INIT_PRODUCER_ID,
                version,
                init(version=version, expected=lambda ctx: (123456, 0)),
                label="stranger",
            ),
            Step(
                INIT_PRODUCER_ID, version, init(version=version, expected=producer("bump", 5)), label="future"
            ),
        ],
    )


def test_init_producer_id_aborts_an_ongoing_transaction(targets: tuple[Target, Target]) -> None:
    """A producer re-initialising while its transaction is open: the transaction is aborted (the
    old producer fenced) and the retry bumps the epoch again."""
    differential(
        *targets,
        [
            *created(),
            init_step(),
            Step(ADD_PARTITIONS, 3, add_partitions(producer("init"), ("topic", 0))),
            Step(PRODUCE, 9, produce(txn_batch(producer("init"), b"a"))),
            Step(INIT_PRODUCER_ID, 4, init(), label="reinit"),
            Step(INIT_PRODUCER_ID, 4, init(), label="again", until=lambda a: a.error_code != 51),
            Step(ADD_PARTITIONS, 3, add_partitions(producer("init"), ("topic", 0)), label="zombie"),
            Step(FETCH, 12, fetch(), normalise=control_batches),
            Step(FETCH, 12, fetch(isolation=0), normalise=control_batches),
            Step(DESCRIBE_TRANSACTIONS, 0, describe_transactions(), normalise=started),
        ],
    )


# -- a transaction, committed or aborted -----------------------------------------------------------


@pytest.mark.parametrize("commit", [True, False])
@pytest.mark.parametrize("end_version", range(5))
def test_transaction_commit_or_abort(targets: tuple[Target, Target], commit: bool, end_version: int) -> None:
    """AddPartitionsToTxn, transactional Produce, EndTxn; the control marker, the last stable
    offset, read_committed and read_uncommitted Fetch, ListOffsets at both isolation levels, and the
    coordinator's view at each point."""
    differential(
        *targets,
        [
            *created(),
            init_step(),
            Step(ADD_PARTITIONS, 3, add_partitions(producer("init"), ("topic", 0))),
            Step(DESCRIBE_TRANSACTIONS, 0, describe_transactions(), normalise=started, label="ongoing"),
            Step(PRODUCE, 9, produce(txn_batch(producer("init"), b"a", b"b"))),
            Step(PRODUCE, 9, produce(txn_batch(producer("init"), b"c", sequence=2))),
            Step(FETCH, 12, fetch(), label="lso"),
            Step(LIST_OFFSETS, 7, list_offsets(), label="lso-offsets"),
            Step(LIST_OFFSETS, 7, list_offsets(isolation=0), label="hw-offsets"),
            Step(DESCRIBE_PRODUCERS, 0, describe_producers(), normalise=producers_seen, label="producers"),
            Step(END_TXN, end_version, end_txn(producer("init"), commit), label="end"),
            settled(),
            Step(END_TXN, end_version, end_txn(producer("init"), commit), label="retry"),
            Step(END_TXN, end_version, end_txn(producer("init"), not commit), label="other"),
            Step(DESCRIBE_TRANSACTIONS, 0, describe_transactions(), normalise=started, label="complete"),
            Step(FETCH, 12, fetch(), normalise=control_batches, label="committed"),
            Step(FETCH, 12, fetch(isolation=0), normalise=control_batches, label="uncommitted"),
            Step(LIST_OFFSETS, 7, list_offsets(), label="after"),
            Step(
                DESCRIBE_PRODUCERS, 0, describe_producers(), normalise=producers_seen, label="producers-after"
            ),
        ],
    )


@pytest.mark.parametrize("commit", [True, False])
def test_end_txn_v5_bumps_the_epoch(targets: tuple[Target, Target], commit: bool) -> None:
    """KIP-890 part 2: EndTxn v5 answers the producer's next epoch; the old epoch's retry is
    answered again, an abort with nothing added is allowed, and the old epoch is fenced after."""
    differential(
        *targets,
        [
            *created(),
            init_step(version=5),
            Step(ADD_PARTITIONS, 5, add_partitions(producer("init"), ("topic", 0), version=5)),
            Step(PRODUCE, 12, produce(txn_batch(producer("init"), b"a"))),
            Step(END_TXN, 5, end_txn(producer("init"), commit), label="end"),
            settled(),
            Step(END_TXN, 5, end_txn(producer("init"), commit), label="retry"),
            Step(END_TXN, 5, end_txn(producer("end"), False), label="empty-abort"),
            settled(),
            Step(END_TXN, 5, end_txn(producer("empty-abort"), True), label="empty-commit"),
            Step(
                ADD_PARTITIONS,
                5,
                add_partitions(producer("init"), ("topic", 0), version=5),
                label="old-epoch",
            ),
            Step(DESCRIBE_TRANSACTIONS, 0, describe_transactions(), normalise=started),
            Step(FETCH, 12, fetch(), normalise=control_batches),
        ],
    )


# -- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(6))
def test_add_partitions_errors(targets: tuple[Target, Target], version: int) -> None:
    """Unknown partitions fail the whole transaction; an unknown id or producer id, a zombie epoch,
    a future epoch; adding after the end."""
    v = version
    differential(
        *targets,
        [
            *created(),
            init_step(),
            Step(ADD_PARTITIONS, v, add_partitions(producer("init"), ("topic", 0), ("topic", 7), version=v), label="unknown-partition", normalise=add_results),
            Step(ADD_PARTITIONS, v, add_partitions(producer("init"), ("topic", 0), ("no-such-topic-x", 0), version=v), label="unknown-topic", normalise=add_results),
            Step(ADD_PARTITIONS, v, add_partitions(producer("init"), ("topic", 0), version=v, txn=lambda c: c.group + "-none"), label="unknown-id"),
            Step(ADD_PARTITIONS, v, add_partitions(lambda c: (424242, 0), ("topic", 0), version=v), label="unknown-pid"),
            Step(ADD_PARTITIONS, v, add_partitions(producer("init", -1), ("topic", 0), version=v), label="zombie"),
            Step(ADD_PARTITIONS, v, add_partitions(producer("init", 1), ("topic", 0), version=v), label="future"),
            Step(ADD_PARTITIONS, v, add_partitions(producer("init"), ("topic", 0), version=v), label="added"),
            Step(ADD_PARTITIONS, v, add_partitions(producer("init"), ("topic", 0), version=v), label="again"),
        ],
    )  # fmt: skip


@pytest.mark.parametrize("version", [4, 5])
def test_add_partitions_verify_only(targets: tuple[Target, Target], version: int) -> None:
    """v4+ verify-only (KIP-890 part 1): each partition in the transaction or not; nothing added."""
    v = version
    differential(
        *targets,
        [
            *created(),
            init_step(),
            Step(ADD_PARTITIONS, v, add_partitions(producer("init"), ("topic", 0), version=v, verify_only=True), label="before"),
            Step(DESCRIBE_TRANSACTIONS, 0, describe_transactions(), normalise=started, label="still-empty"),
            Step(ADD_PARTITIONS, 3, add_partitions(producer("init"), ("topic", 0))),
            Step(ADD_PARTITIONS, v, add_partitions(producer("init"), ("topic", 0), version=v, verify_only=True), label="after"),
            Step(ADD_PARTITIONS, v, add_partitions(producer("init", -1), ("topic", 0), version=v, verify_only=True), label="zombie"),
            Step(ADD_PARTITIONS, v, add_partitions(lambda c: (424242, 0), ("topic", 0), version=v, verify_only=True), label="stranger"),
        ],
    )  # fmt: skip


@pytest.mark.parametrize("version", range(5))
def test_end_txn_errors(targets: tuple[Target, Target], version: int) -> None:
    """EndTxn with nothing begun (INVALID_TXN_STATE), an unknown id or producer id, a zombie."""
    v = version
    differential(
        *targets,
        [
            *created(),
            init_step(),
            Step(END_TXN, v, end_txn(producer("init"), True), label="commit-nothing"),
            Step(END_TXN, v, end_txn(producer("init"), False), label="abort-nothing"),
            Step(END_TXN, v, lambda c: EndTxnRequest(c.group + "-none", 1, 0, True), label="unknown-id"),
            Step(END_TXN, v, end_txn(lambda c: (424242, 0), True), label="unknown-pid"),
            Step(ADD_PARTITIONS, 3, add_partitions(producer("init"), ("topic", 0))),
            Step(END_TXN, v, end_txn(producer("init", -1), True), label="zombie"),
            Step(END_TXN, v, end_txn(producer("init"), True), label="commit"),
        ],
    )


@pytest.mark.parametrize("version", range(5))
def test_add_offsets_and_txn_offset_commit(targets: tuple[Target, Target], version: int) -> None:
    """AddOffsetsToTxn then TxnOffsetCommit (v0-4 here); errors of both; offsets visible only once
    committed."""
    from mockbroker_protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic

    fetch_offsets = Step(
        9, 5, lambda c: OffsetFetchRequest(group_id=c.group, topics=[OffsetFetchRequestTopic(c.topic, [0])]),
    )  # fmt: skip
    v = min(version, 3)
    differential(
        *targets,
        [
            *created(),
            *group_coordinator_ready(),
            init_step(),
            Step(TXN_OFFSET_COMMIT, version, txn_offset_commit(producer("init"), 5), label="before-add"),
            Step(ADD_OFFSETS, v, add_offsets(producer("init", -1)), label="zombie"),
            Step(ADD_OFFSETS, v, add_offsets(lambda c: (424242, 0)), label="stranger"),
            Step(ADD_OFFSETS, v, add_offsets(producer("init")), label="added"),
            Step(
                TXN_OFFSET_COMMIT, version, txn_offset_commit(producer("init", -1), 5), label="zombie-commit"
            ),
            Step(TXN_OFFSET_COMMIT, version, txn_offset_commit(producer("init"), 5), label="commit-offsets"),
            fetch_offsets,
            Step(END_TXN, 3, end_txn(producer("init"), True), label="end"),
            settled(),
            Step(9, 5, fetch_offsets.request, label="after"),
        ],
    )


def test_next_transaction_after_commit(targets: tuple[Target, Target]) -> None:
    """The next transaction's AddPartitionsToTxn after a commit. Kafka answers EndTxn before its
    markers are written (D8): at once after it, the add may meet PrepareCommit and get
    CONCURRENT_TRANSACTIONS (which clients retry); the retried, settled answer is compared."""
    differential(
        *targets,
        [
            *created(),
            init_step(),
            Step(ADD_PARTITIONS, 3, add_partitions(producer("init"), ("topic", 0))),
            Step(END_TXN, 3, end_txn(producer("init"), True)),
            Step(
                ADD_PARTITIONS, 3, add_partitions(producer("init"), ("topic", 0)), label="next",
                until=lambda a: a.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code != 51,
            ),
        ],
    )  # fmt: skip


# -- Produce -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [3, 9, 10, 11])
def test_produce_verification(targets: tuple[Target, Target], version: int) -> None:
    """KIP-890 part 1: a transactional batch to a partition not in the transaction, a batch of a
    fenced producer, a batch without the transactional id."""
    differential(
        *targets,
        [
            *created(),
            init_step(),
            Step(PRODUCE, version, produce(txn_batch(producer("init"), b"a")), label="not-added"),
            Step(
                PRODUCE,
                version,
                produce(txn_batch(producer("init"), b"a"), transactional=False),
                label="no-id",
            ),
            Step(ADD_PARTITIONS, 3, add_partitions(producer("init"), ("topic", 0))),
            Step(PRODUCE, version, produce(txn_batch(producer("init", -1), b"a")), label="zombie"),
            Step(PRODUCE, version, produce(txn_batch(producer("init"), b"a")), label="added"),
        ],
    )


# -- admin: DescribeTransactions, ListTransactions ---------------------------------------------------


@pytest.mark.parametrize("version", range(3))
def test_list_transactions_filters(targets: tuple[Target, Target], version: int) -> None:
    """ListTransactions filters: states (an unknown state name listed back), producer ids, duration
    (v1), pattern (v2)."""

    def lt(**kwargs: Any) -> Any:
        build = list_transactions(**kwargs)

        def request(ctx: Context) -> ListTransactionsRequest:
            req = build(ctx)
            if version < 2:
                req.transactional_id_pattern = None
            if version < 1:
                req.duration_filter = -1
            return req

        return request

    def mine(tree: Any, ctx: Context) -> Any:
        """Below v2 there is no pattern: keep this sequence's id (the session has others)."""
        tree["transaction_states"] = [
            s for s in tree["transaction_states"] if s["transactional_id"] == ctx.group
        ]
        return tree

    differential(
        *targets,
        [
            *created(),
            init_step(),
            Step(LIST_TRANSACTIONS, version, lt(), normalise=mine, label="all"),
            Step(LIST_TRANSACTIONS, version, lt(states=["Empty", "Bogus"]), normalise=mine, label="empty"),
            # An Empty transaction has no start time (-1): "running" since the epoch.
            Step(LIST_TRANSACTIONS, version, lt(duration=3_600_000), normalise=mine, label="empty-long"),
            Step(ADD_PARTITIONS, 3, add_partitions(producer("init"), ("topic", 0))),
            Step(LIST_TRANSACTIONS, version, lt(states=["Ongoing"]), normalise=mine, label="ongoing"),
            Step(LIST_TRANSACTIONS, version, lt(states=["Empty"]), normalise=mine, label="not-empty"),
            Step(LIST_TRANSACTIONS, version, lt(pids=producer("init")), normalise=mine, label="by-pid"),
            Step(LIST_TRANSACTIONS, version, lt(duration=3_600_000), normalise=mine, label="long"),
            Step(END_TXN, 3, end_txn(producer("init"), False)),
            settled(),
            Step(LIST_TRANSACTIONS, version, lt(duration=3_600_000), normalise=mine, label="complete-long"),
        ],
    )


def test_list_transactions_pattern(targets: tuple[Target, Target]) -> None:
    """v2 (KIP-1152): a pattern the whole id must match; an invalid pattern."""
    differential(
        *targets,
        [
            *coordinator_ready(),
            init_step(),
            Step(LIST_TRANSACTIONS, 2, list_transactions(pattern=None), label="exact"),
            Step(LIST_TRANSACTIONS, 2, lambda c: ListTransactionsRequest(transactional_id_pattern=c.group[:-1]), label="prefix"),
            Step(
                LIST_TRANSACTIONS, 2, lambda c: ListTransactionsRequest(transactional_id_pattern=c.group[:-1] + ".*"),
                label="regex", normalise=by_id, ignore=("transaction_states.*.producer_id",),
            ),
            Step(LIST_TRANSACTIONS, 2, lambda c: ListTransactionsRequest(transactional_id_pattern="(["), label="invalid"),
        ],
    )  # fmt: skip


def test_describe_transactions_unknown(targets: tuple[Target, Target]) -> None:
    """DescribeTransactions of an id the coordinator does not know: TRANSACTIONAL_ID_NOT_FOUND."""
    differential(
        *targets,
        [
            *coordinator_ready(),
            init_step(),
            Step(DESCRIBE_TRANSACTIONS, 0, describe_transactions(), normalise=started, label="known"),
            Step(
                DESCRIBE_TRANSACTIONS,
                0,
                lambda c: DescribeTransactionsRequest([c.group + "-none"]),
                label="unknown",
            ),
        ],
    )


@pytest.mark.parametrize("version", [3, 4])
@pytest.mark.parametrize(("generation", "member"), [(-1, ""), (5, "m"), (-1, "m"), (5, "")])
def test_txn_offset_commit_group_checks(
    targets: tuple[Target, Target], version: int, generation: int, member: str
) -> None:
    """v3+ (KIP-447): the producer names the group member it commits for; for a group that has no
    members (a simple group), what a generation or member id gets."""
    differential(
        *targets,
        [
            *created(),
            *group_coordinator_ready(),
            init_step(),
            Step(ADD_OFFSETS, 3, add_offsets(producer("init"))),
            Step(TXN_OFFSET_COMMIT, version, txn_offset_commit(producer("init"), 3, generation=generation, member=member)),
        ],
    )
