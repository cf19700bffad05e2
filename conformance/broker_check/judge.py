"""One broker's answers to one case against Kafka's, every difference at its level.

Kafka's answer is the kit's broker model of the Kafka line asked, replayed on the requests as
sent (``corpus.produce.golden.replay_model``: the broker's clock searched in the window the
request was in flight). A difference is filed at the level it breaks (``harness.levels``):

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
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

from conformance.broker.codes import NONE as NONE_ERROR
from conformance.broker.compare import COMPRESSOR_DECIDES, recompressed
from conformance.broker.versions import broker_version
from conformance.corpus.produce.golden import GoldenCase, GoldenRequest, carried, replay_model
from conformance.harness.divergences import EVIDENCE
from conformance.harness.levels import (
    DELIVERY,
    JAVA,
    LEVELS,
    NONE,
    WIRE,
    Difference,
    Judgement,
)
from conformance.stream.compare import diff
from conformance.stream.decoder import decode

__all__ = [
    "COORDINATOR_STATES",
    "PARTIES",
    "judge_case",
    "request_differences",
    "stored_differences",
]

#: the levels a judgement may reach, lowest first
LEVELS_ORDER = (NONE, *LEVELS)
#: how a difference names its two parties
PARTIES = ("kafka", "target")
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
#: batch fields a consumer hands to the application with each record
_CONSUMER_SEES = ("timestampType",)


def _response_level(path: str) -> str:
    """The level of a difference at ``path`` (``$.response.<field>...``)."""
    if path.endswith("batchIndexErrorMessage"):
        return JAVA
    name = path.removeprefix("$.response.").split(".", 1)[0].split("[", 1)[0].split(":", 1)[0]
    return _RESPONSE_LEVELS.get(name, WIRE)


def _closed(ours: dict[str, Any], version: Any) -> bool:
    """Whether Kafka answers the request by closing the connection (the request parser's
    unsupported-version failure)."""
    exc = ours.get("exception") or {}
    return ours["scope"] == "request" and exc.get("class") == version.unsupported_version[1]


def stored_differences(kafka: str | None, target: str | None) -> list[Difference]:
    """What differs between the batches Kafka stores (base64, or None: nothing) and the
    target's, as fetched back: records at ``delivery``, batch fields at ``wire``."""
    if kafka == target:
        return []
    k = base64.b64decode(kafka) if kafka is not None else b""
    t = base64.b64decode(target) if target is not None else b""
    if not k or not t:
        what = "nothing" if not k else f"{len(k)} bytes"
        got = "nothing" if not t else f"{len(t)} bytes"
        return [Difference(DELIVERY, f"stored: kafka={what} target={got}")]
    kd, td = decode(k).to_dict(), decode(t).to_dict()
    both = recompressed(k) and recompressed(t) and len(kd["batches"]) == len(td["batches"])
    out: list[Difference] = []
    for line in diff(kd, td, "$.stored", PARTIES):
        path = line.split(": ", 1)[0]
        field = path.rsplit(".", 1)[-1]
        if both and ".records" not in path and field in COMPRESSOR_DECIDES:
            continue
        seen = ".records" in path or path == "$.stored.batches" or field in _CONSUMER_SEES
        level = DELIVERY if seen else WIRE
        out.append(Difference(level, line))
    if not out and k != t and not both:
        out.append(Difference(WIRE, "stored: the bytes differ where the decode shows nothing"))
    return out


def request_differences(
    r: GoldenRequest, ours: dict[str, Any], fetched: bool, version: Any
) -> list[Difference]:
    out: list[Difference] = []
    if r.response is None:
        if not _closed(ours, version):
            out.append(
                Difference(
                    DELIVERY,
                    "the target closed the connection; kafka answers "
                    f"{ours['response']['errorName']}",
                )
            )
    elif _closed(ours, version):
        out.append(
            Difference(
                WIRE,
                "kafka closes the connection (a request it cannot read); the target answered "
                f"{r.response['errorName']}",
            )
        )
    else:
        lines = diff(
            {"response": carried(ours["response"], r.produce_version)},
            {"response": carried(r.response, r.produce_version)},
            "$",
            PARTIES,
        )
        refused = ours["response"]["errorCode"] != 0 and r.response["errorCode"] != 0
        for line in lines:
            level = _response_level(line.split(": ", 1)[0])
            if refused and level in (DELIVERY, WIRE) and not line.startswith(_ERROR_PATHS):
                level = JAVA  # both refuse: a client reads no offset from a refusal
            out.append(Difference(level, line))
    if fetched:
        out += stored_differences(ours.get("stored"), r.stored)
    return out


#: what a transaction coordinator may answer a 3.6+ broker's verification of a transactional
#: batch from a producer the kit never ran a transaction for: no coordinator (the topic
#: ``__transaction_state`` does not exist yet: Kafka started by the kit), the partition not
#: in a transaction, an unknown transactional id; and verified (a broker that does not verify)
COORDINATOR_STATES = (
    "COORDINATOR_NOT_AVAILABLE",
    "INVALID_TXN_STATE",
    "INVALID_PRODUCER_ID_MAPPING",
    NONE_ERROR,
)


def _judged(case: GoldenCase) -> Judgement:
    version = broker_version(case.kafka_version)
    replayed = replay_model(
        case, lambda r, ours: request_differences(r, ours, case.fetched, version)
    )
    judgement = Judgement()
    for i, (r, (ours, diffs)) in enumerate(zip(case.requests, replayed)):
        where = f"request {i} (Produce v{r.produce_version})"
        judgement.differences += [Difference(d.level, f"{where}: {d.text}") for d in diffs]
        if diffs:
            judgement.evidence.append(
                f"{EVIDENCE}{where}: kafka answers {ours['response']['errorName']}"
                + (f" ({ours['exception']['class']})" if ours.get("exception") else "")
            )
    return judgement


def judge_case(case: GoldenCase) -> Judgement:
    """Every difference between the target's answers in ``case`` (what it answered to each
    request, what it stored) and Kafka's (the model of ``case.kafka_version``), each line
    naming its request.

    Where Kafka's answer depends on the transaction coordinator's state, which the kit cannot
    see on a target (a transactional request to a line that verifies, KIP-890), each state of
    :data:`COORDINATOR_STATES` is Kafka's answer in turn, the case's own first: the first
    without a difference (else the one reaching the highest level, else the case's own) is
    the judgement, and its evidence names the state when it is not the case's own."""
    first = _judged(case)
    transactional = any(r.transactional_id for r in case.requests)
    if not first.differences or not transactional:
        return first
    if not broker_version(case.kafka_version).transaction_verification:
        return first
    best = first
    for state in COORDINATOR_STATES:
        if state == case.coordinator:
            continue
        other = dataclasses.replace(case, meta={**case.meta, "coordinator": state})
        trial = _judged(other)
        trial.evidence.append(f"{EVIDENCE}judged with the coordinator answering {state}")
        if LEVELS_ORDER.index(trial.reached()) > LEVELS_ORDER.index(best.reached()):
            best = trial
        if not trial.differences:
            return trial
    return best
