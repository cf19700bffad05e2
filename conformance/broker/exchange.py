"""One Produce exchange with a broker, Kafka's answer to it by the model, and every
difference between the two at its level.

An exchange is what crossed the wire to one partition, whoever keeps or judges it (the produce
corpus ``corpus.produce.golden``, ``check-producer``, ``check-broker``):

=================================  ===========================================================
member                             what it holds
=================================  ===========================================================
``kafka_version``                  the Kafka line whose answers are Kafka's (the model's)
``topic_name``, ``topic``          the topic and its configuration, as created
``inter_broker_protocol_version``  the broker's ``inter.broker.protocol.version``, if set
``coordinator``                    what a transaction coordinator answers a 3.6+ broker's
                                   verification (KIP-890; ``NONE``: verified)
``requests`` (:class:`Sent`)       per Produce request in order: the records as sent, its
                                   Produce version and transactional id, the wall clock read
                                   before sending (``now``) and after the answer arrived
                                   (``received_at``); the partition response as received
                                   (None: the connection closed); the batches it stored
``fetched``                        whether the partition was fetched back (``stored`` holds
                                   what the broker stored, and is compared)
=================================  ===========================================================

Kafka's answer (:func:`model_answers`) is the model's (a fresh ``PartitionLog`` of the
topic, leader epoch 0), each request replayed in order; the broker read its clock somewhere
in ``[now, received_at]``, and the first millisecond of it whose answer agrees is its clock
(:func:`model_answer`). A difference (:func:`differences`) is filed at the level it breaks
(``conformance.levels``):

==========  ===================================================================================
level       what differs
==========  ===================================================================================
delivery    what a client sees: accepted or refused and with which error (``errorCode``: a
            retriable error makes a producer retry), the base offset of an accepted request,
            the record errors' batch indices, a closed connection where Kafka answers, and
            what a consumer reads back: the records (offsets, timestamps and their type,
            keys, values, headers) and their batches' count
wire        the rest of the answer (``logAppendTimeMs``, ``logStartOffset``), an answer
            where Kafka closes the connection (a request it cannot read), and the bytes
            stored: every batch header field (leader epoch, attributes, CRC, producer fields,
            max timestamp, ...), exactly; a batch Kafka recompresses need only hold the same
            records (a compressor's output is not pinned)
java        Kafka's texts (``errorMessage``, each record error's message) and the offsets of
            a request both refuse (a client reads none from a refusal)
==========  ===================================================================================

Only the response fields the Produce version carries are compared
(:data:`RESPONSE_FIELDS_SINCE`). Sans-IO: an exchange in, differences out.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, NamedTuple

from conformance.broker.codes import NONE
from conformance.broker.compare import PARTIES, stored_differences
from conformance.broker.log import PartitionLog
from conformance.broker.versions import BrokerVersion, broker_version
from conformance.levels import DELIVERY, JAVA, WIRE, Difference
from conformance.stream.compare import diff

__all__ = [
    "LEADER_EPOCH",
    "MAX_CLOCK_WINDOW_MS",
    "RESPONSE_FIELDS_SINCE",
    "Exchange",
    "Replayed",
    "Sent",
    "answer_differences",
    "carried",
    "differences",
    "model_answer",
    "model_answers",
    "where",
]

#: the leader epoch of a freshly created partition (the model's ``leader_epoch``)
LEADER_EPOCH = 0
#: the widest clock window :func:`model_answer` searches for the broker's clock
MAX_CLOCK_WINDOW_MS = 10_000
#: the partition response fields that appeared after Produce v0, with their first version
RESPONSE_FIELDS_SINCE: dict[str, int] = {
    "logAppendTimeMs": 2,
    "logStartOffset": 5,
    "recordErrors": 8,
    "errorMessage": 8,
}
#: the response fields and the level a difference in each breaks
_RESPONSE_LEVELS = {
    "errorCode": DELIVERY,
    "errorName": DELIVERY,
    "baseOffset": DELIVERY,
    "recordErrors": DELIVERY,
    "logAppendTimeMs": WIRE,
    "logStartOffset": WIRE,
    "errorMessage": JAVA,
}
#: the paths of the refusal itself in a response difference (which records, KIP-467)
_ERROR_PATHS = ("$.response.errorCode", "$.response.errorName", "$.response.recordErrors")


@dataclass(frozen=True)
class Sent:
    """One Produce request to the partition as sent, and the answer as received."""

    records: bytes
    produce_version: int
    #: the wall clock read right before sending (ms): the model's clock to start from
    now: int
    transactional_id: str | None = None
    #: the partition response (the verdict's ``response`` shape); None: the connection closed
    response: dict[str, Any] | None = None
    #: base64 of the batches this request stored, as fetched back (None: nothing stored)
    stored: str | None = None
    #: the wall clock read right after the answer arrived (None: ``now``)
    received_at: int | None = None


@dataclass(frozen=True)
class Exchange:
    """The Produce requests to one fresh partition and the broker's answers (module doc)."""

    kafka_version: str
    topic_name: str
    topic: dict[str, str]
    requests: tuple[Sent, ...]
    inter_broker_protocol_version: str | None = None
    fetched: bool = False
    coordinator: str = NONE


class Replayed(NamedTuple):
    """Kafka's answer to one request (the model's verdict document) and what differs."""

    kafka: dict[str, Any]
    differences: list[Difference]


def carried(response: dict[str, Any], produce_version: int) -> dict[str, Any]:
    """``response`` without the fields a Produce response of ``produce_version`` lacks."""
    return {k: v for k, v in response.items() if produce_version >= RESPONSE_FIELDS_SINCE.get(k, 0)}


def _response_level(path: str) -> str:
    """The level of a difference at ``path`` (``$.response.<field>...``)."""
    if path.endswith("batchIndexErrorMessage"):
        return JAVA
    name = path.removeprefix("$.response.").split(".", 1)[0].split("[", 1)[0].split(":", 1)[0]
    return _RESPONSE_LEVELS.get(name, WIRE)


def _closed(kafka: dict[str, Any], version: BrokerVersion) -> bool:
    """Whether Kafka answers the request by closing the connection (the request parser's
    unsupported-version failure)."""
    exc = kafka.get("exception") or {}
    return kafka["scope"] == "request" and exc.get("class") == version.unsupported_version[1]


def answer_differences(
    r: Sent, kafka: dict[str, Any], fetched: bool, version: BrokerVersion
) -> list[Difference]:
    """What differs between Kafka's answer ``kafka`` (a verdict document) to ``r`` and the
    answer ``r`` received (and, ``fetched``, what it stored), each at its level."""
    out: list[Difference] = []
    if r.response is None:
        if not _closed(kafka, version):
            out.append(
                Difference(
                    DELIVERY,
                    "the target closed the connection; kafka answers "
                    f"{kafka['response']['errorName']}",
                )
            )
    elif _closed(kafka, version):
        out.append(
            Difference(
                WIRE,
                "kafka closes the connection (a request it cannot read); the target answered "
                f"{r.response['errorName']}",
            )
        )
    else:
        lines = diff(
            {"response": carried(kafka["response"], r.produce_version)},
            {"response": carried(r.response, r.produce_version)},
            "$",
            PARTIES,
        )
        refused = kafka["response"]["errorCode"] != 0 and r.response["errorCode"] != 0
        for line in lines:
            level = _response_level(line.split(": ", 1)[0])
            if refused and level in (DELIVERY, WIRE) and not line.startswith(_ERROR_PATHS):
                level = JAVA  # both refuse: a client reads no offset from a refusal
            out.append(Difference(level, line))
    if fetched:
        out += stored_differences(kafka.get("stored"), r.stored)
    return out


def model_answer(
    log: PartitionLog, r: Sent, coordinator: str, fetched: bool, version: BrokerVersion
) -> tuple[PartitionLog, Replayed]:
    """Kafka's answer to ``r`` on ``log`` (leader epoch 0, the coordinator answering
    ``coordinator``): the log after it, and the answer with its differences from ``r``'s.

    The model runs at ``r.now``, and when that differs, at each later millisecond up to
    ``r.received_at`` (at most :data:`MAX_CLOCK_WINDOW_MS`); the first that agrees is the
    broker's clock (the log goes on from there). When none agrees (the target differs in
    something no clock explains, a leader epoch, say) the millisecond with the fewest
    differences is taken (the earliest of those), so that a difference of the clock's own is
    not reported beside it."""
    before = copy.deepcopy(log)

    def run(target: PartitionLog, now: int) -> dict[str, Any]:
        return target.produce(
            r.records,
            produce_version=r.produce_version,
            now=now,
            leader_epoch=LEADER_EPOCH,
            transactional_id=r.transactional_id,
            coordinator=coordinator,
        ).to_dict()

    best_log, kafka = log, run(log, r.now)
    diffs = answer_differences(r, kafka, fetched, version)
    last = min(r.received_at or r.now, r.now + MAX_CLOCK_WINDOW_MS)
    for now in range(r.now + 1, last + 1) if diffs else ():
        trial = copy.deepcopy(before)
        verdict = run(trial, now)
        found = answer_differences(r, verdict, fetched, version)
        if len(found) < len(diffs):
            best_log, kafka, diffs = trial, verdict, found
            if not diffs:
                break
    return best_log, Replayed(kafka, diffs)


def model_answers(exchange: Exchange) -> list[Replayed]:
    """Kafka's answer to each request of ``exchange`` in order, by the model of its Kafka
    line on a fresh partition of its topic (:func:`model_answer`), with what differs."""
    version = broker_version(exchange.kafka_version)
    log = PartitionLog(
        exchange.topic,
        version=version,
        topic_name=exchange.topic_name,
        inter_broker_protocol_version=exchange.inter_broker_protocol_version,
    )
    out: list[Replayed] = []
    for r in exchange.requests:
        log, replayed = model_answer(log, r, exchange.coordinator, exchange.fetched, version)
        out.append(replayed)
    return out


def where(i: int, r: Sent) -> str:
    """How a difference names the ``i``-th request ``r``."""
    return f"request {i} (Produce v{r.produce_version})"


def differences(exchange: Exchange) -> list[Difference]:
    """Every difference between the answers in ``exchange`` and Kafka's, each at its level,
    each naming its request (``request 0 (Produce v9): ...``)."""
    return [
        Difference(d.level, f"{where(i, r)}: {d.text}")
        for i, (r, replayed) in enumerate(zip(exchange.requests, model_answers(exchange)))
        for d in replayed.differences
    ]
