"""One broker's answers to one case against Kafka's, every difference at its level.

Kafka's answer is the kit's broker model of the Kafka line asked, replayed on the requests as
sent (``corpus.produce.golden.replay_model``: the broker's clock searched in the window the
request was in flight). A difference is filed at the level it breaks (``harness.levels``):

==========  ===================================================================================
level       what differs
==========  ===================================================================================
delivery    what a client sees: accepted or refused (``errorCode``), the base offset, the
            record errors' batch indices, a closed connection where Kafka answers (or an
            answer where Kafka refuses the request), and what a consumer reads back: the
            records (offsets, timestamps and their type, keys, values, headers) and their
            batches' count
wire        the rest of the answer (``logAppendTimeMs``, ``logStartOffset``) and the bytes
            stored: every batch header field (leader epoch, attributes, CRC, producer fields,
            max timestamp, ...), exactly; a batch Kafka recompresses need only hold the same
            records (a compressor's output is not pinned)
java        Kafka's texts: ``errorMessage`` and each record error's message
==========  ===================================================================================
"""

from __future__ import annotations

import base64
from typing import Any

from conformance.broker.versions import broker_version
from conformance.codecs import NONE
from conformance.corpus.produce.golden import GoldenCase, GoldenRequest, carried, replay_model
from conformance.errors import DecodeError
from conformance.harness.levels import DELIVERY, JAVA, WIRE, Difference, Judgement
from conformance.stream.compare import diff
from conformance.stream.decoder import decode
from conformance.stream.splitter import Splitter

__all__ = ["SIDES", "judge_case"]

#: how a difference names its two sides
SIDES = ("kafka", "target")
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
#: batch fields a consumer hands to the application with each record
_CONSUMER_SEES = ("timestampType",)
#: batch fields a recompressing broker's compressor decides
_COMPRESSOR_DECIDES = ("sizeInBytes", "crc", "position")


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


def _documents(data: bytes) -> dict[str, Any]:
    return decode(data).to_dict()


def _compressed(data: bytes) -> bool:
    try:
        return all(b.compression_id != NONE for b in Splitter(data, "memory"))
    except DecodeError:
        return False


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
    kd, td = _documents(k), _documents(t)
    recompressed = _compressed(k) and _compressed(t) and len(kd["batches"]) == len(td["batches"])
    out: list[Difference] = []
    for line in diff(kd, td, "$.stored", SIDES):
        path = line.split(": ", 1)[0]
        field = path.rsplit(".", 1)[-1]
        if recompressed and ".records" not in path and field in _COMPRESSOR_DECIDES:
            continue
        seen = ".records" in path or path == "$.stored.batches" or field in _CONSUMER_SEES
        level = DELIVERY if seen else WIRE
        out.append(Difference(level, line))
    if not out and k != t and not recompressed:
        out.append(Difference(WIRE, "stored: the bytes differ where the decode shows nothing"))
    return out


def _request_differences(
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
            SIDES,
        )
        out += [Difference(_response_level(line.split(": ", 1)[0]), line) for line in lines]
    if fetched:
        out += stored_differences(ours.get("stored"), r.stored)
    return out


def judge_case(case: GoldenCase) -> Judgement:
    """Every difference between the target's answers in ``case`` (what it answered to each
    request, what it stored) and Kafka's (the model of ``case.kafka_version``), each line
    naming its request."""
    version = broker_version(case.kafka_version)
    replayed = replay_model(
        case, lambda r, ours: _request_differences(r, ours, case.fetched, version)
    )
    judgement = Judgement()
    for i, (r, (ours, diffs)) in enumerate(zip(case.requests, replayed)):
        where = f"request {i} (Produce v{r.produce_version})"
        judgement.differences += [Difference(d.level, f"{where}: {d.text}") for d in diffs]
        if diffs:
            judgement.evidence.append(
                f"{where}: kafka answers {ours['response']['errorName']}"
                + (f" ({ours['exception']['class']})" if ours.get("exception") else "")
            )
    return judgement
