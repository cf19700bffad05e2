"""The judgement of one implementation on one scenario: what it wrote, against Kafka.

Produce (:func:`judge_produce`), from what crossed the recording proxy and what the broker
stored, in this order; every failed check adds lines to the field-level diff:

1. **report**: the adapter's result document names every plan record, in plan order; a record
   is acknowledged (no error, a partition, an offset) unless it is one Java's
   ``ProducerRecord`` refuses (a negative timestamp), which must be refused or is judged by
   what was sent;
2. **broker**: every partition response the real broker gave (also the ones the proxy
   dropped) is ``NONE``; and the kit's broker model (``conformance.broker``), replayed on the
   same requests in order with the broker's clock window, answers what the broker answered
   and stores what it stored (``corpus.produce.golden.judge_golden``);
3. **batches**: each batch as sent decodes (CRC, framing) with no strict-profile finding, and
   its header is what Java's ``KafkaProducer`` writes: magic 2, the codec asked for,
   CreateTime, baseOffset 0, offsets ``0..n-1`` with ``lastOffsetDelta = n - 1``,
   ``baseTimestamp`` = the first record's, ``maxTimestamp`` = the largest, partition leader
   epoch -1, producer id/epoch/sequence as the settings ask (idempotent: sequences
   contiguous per partition from 0; a retry repeats its batch's), transactional iff in a
   transaction, not control. A field the broker rewrites silently is still a finding here;
4. **records**: what Kafka's consumer reads back from each partition (the reference decoder
   on the fetched log) is the plan's records, in order, each once: key, value, headers,
   timestamp (a record without one: the producer's clock during the run), on the partition
   the plan names, else the Java default partitioner's for a keyed record (or the
   partitioner the implementation declares, which is then reported); the offsets the
   adapter reported are where the records are; a transaction ends with its marker.

Encode (:func:`judge_encode`): the bytes decode to one batch with no strict finding, the header
and records are what Java's ``MemoryRecordsBuilder`` writes for the plan's batch settings, and
the kit's broker model accepts the batch without rewriting anything but what it assigns
(offsets, leader epoch).
"""

from __future__ import annotations

import base64
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from conformance.broker.log import DEFAULT_TRANSACTIONAL_ID
from conformance.broker.profile import ProduceContext
from conformance.broker.profile import decode as broker_decode
from conformance.capture.produce_wire import stored_by_request
from conformance.corpus.produce.golden import GoldenCase, GoldenRequest, judge_golden
from conformance.harness.divergences import EVIDENCE
from conformance.partitioners import PARTITIONERS
from conformance.producer_check.scenarios import DISCONNECT, ENCODE, PlanRecord, Scenario
from conformance.stream.decoder import decode

__all__ = ["SentRequest", "ProduceObservation", "judge_encode", "judge_produce"]

#: the partitioner every scenario's expectation uses unless the implementation declares another
JAVA_PARTITIONER = "java"
#: header fields a broker assigns to every batch whatever the producer wrote, and the CRC it
#: recomputes after any rewrite (a wrong CRC of the producer is the consumer's finding)
ASSIGNED = frozenset({"baseOffset", "partitionLeaderEpoch", "lastOffset", "crc"})
#: how far (ms) before the adapter started a producer-stamped timestamp may be
CLOCK_SLACK_MS = 2_000
#: diff lines kept per check
MAX_LINES = 12
#: batches whose header bytes a diff shows as evidence
EVIDENCE_BATCHES = 2
#: the v2 batch header's size (the evidence shown)
HEADER_BYTES = 61


@dataclass(frozen=True)
class SentRequest:
    """One partition's records of one Produce request, and the broker's answer to it."""

    partition: int
    records: bytes
    produce_version: int
    acks: int
    transactional_id: str | None
    #: the partition response (the verdict's ``response`` shape); None: no answer (acks=0)
    response: dict[str, Any] | None
    sent_at: int
    received_at: int
    #: the proxy dropped the answer (the client saw a closed connection)
    dropped: bool = False


@dataclass
class ProduceObservation:
    """What one produce run left: the adapter's document and what crossed the wire."""

    scenario: Scenario
    topic: str
    kafka_version: str
    broker_id: str
    document: Any
    started_ms: int
    ended_ms: int
    requests: list[SentRequest] = field(default_factory=list)
    #: the records of each partition fetched back from offset 0
    fetched: dict[int, bytes] = field(default_factory=dict)
    inter_broker_protocol_version: str | None = None
    partitioner: str = JAVA_PARTITIONER


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _expected_record(r: PlanRecord) -> dict[str, Any]:
    return {
        "key": _b64(r.key),
        "value": _b64(r.value),
        "headers": [{"key": k, "value": _b64(v)} for k, v in r.headers],
    }


def _grouped(lines: list[str]) -> list[str]:
    """``where: message`` lines as one line per message, in first-seen order:
    ``message (at where[ and N more])``, so that the same difference in many batches is one
    line (and one line to classify)."""
    at: dict[str, list[str]] = {}
    for line in lines:
        where, _, message = line.partition(": ")
        at.setdefault(message, []).append(where)
    return [
        f"{m} (at {w[0]}{f' and {len(w) - 1} more' if len(w) > 1 else ''})" for m, w in at.items()
    ]


def _cap(lines: list[str], title: str) -> list[str]:
    if len(lines) <= MAX_LINES:
        return lines
    return lines[:MAX_LINES] + [f"{title}: {len(lines) - MAX_LINES} more lines"]


def read_result_document(doc: Any, n: int) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The per-record entries of an adapter's produce result, or why it is not one."""
    if not isinstance(doc, dict) or doc.get("format") != "kafka-conformance/produce-result/1":
        return None, "not a kafka-conformance/produce-result/1 document"
    records = doc.get("records")
    if not isinstance(records, list) or len(records) != n:
        have = len(records) if isinstance(records, list) else "no"
        return None, f"the result has {have} record entries for {n} plan records"
    for i, r in enumerate(records):
        if not isinstance(r, dict) or not {"partition", "offset", "error"} <= set(r):
            return None, f"record entry {i} is not {{partition, offset, error}}"
        for k in ("partition", "offset"):
            if r[k] is not None and (not isinstance(r[k], int) or isinstance(r[k], bool)):
                return None, f"record entry {i}: {k} is not an integer or null"
        if r["error"] is not None and not isinstance(r["error"], str):
            return None, f"record entry {i}: error is not a string or null"
    return records, None


# ------------------------------------------------------------------------------- batch header


def _header_lines(
    where: str,
    batch: dict[str, Any],
    *,
    codec: str,
    expect: dict[str, Any],
) -> list[str]:
    """Differences between a decoded batch header and Java's for the same records."""
    out: list[str] = []
    records = batch.get("records") or []
    stamps = [int(r["timestamp"]) for r in records]

    def need(name: str, actual: Any, wanted: Any, why: str = "") -> None:
        if actual != wanted:
            out.append(f"{where}: {name} {actual}, expected {wanted}{why}")

    need("magic", batch["magic"], 2)
    if batch["magic"] != 2:
        return out
    need("compression", batch["compression"], codec, " (the codec asked for)")
    need("timestampType", batch["timestampType"], "CreateTime")
    need("isControl", batch["isControl"], False)
    need("lastOffsetDelta", batch["lastOffsetDelta"], len(records) - 1, " (records - 1)")
    base = int(batch["baseOffset"])
    for i, r in enumerate(records):
        if int(r["offset"]) != base + i:
            out.append(f"{where}: record {i} has offset delta {int(r['offset']) - base}, not {i}")
            break
    if stamps:
        need("baseTimestamp", int(batch["baseTimestamp"]), stamps[0], " (the first record's)")
        need("maxTimestamp", int(batch["maxTimestamp"]), max(stamps), " (the largest record's)")
    for name, wanted in expect.items():
        actual = batch[name]
        if name == "producerId":
            actual = int(actual)
        if callable(wanted):
            problem = wanted(actual)
            if problem:
                out.append(f"{where}: {name} {actual}: {problem}")
        else:
            need(name, actual, wanted)
    return out


def _header_hex(data: bytes, start: int) -> str:
    """The batch header at ``start`` as hex, its fields apart (offset, length, leader epoch,
    magic, crc, attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producer id, epoch,
    base sequence, count)."""
    widths = (8, 4, 4, 1, 4, 2, 4, 8, 8, 8, 2, 4, 4)
    head = data[start : start + HEADER_BYTES]
    out, at = [], 0
    for w in widths:
        out.append(head[at : at + w].hex())
        at += w
    return " ".join(out)


def _strict_lines(where: str, data: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    """The batches of ``data`` (decoded, strict profile) and what is wrong with the bytes."""
    result = decode(data, profile="strict").to_dict()
    lines = [
        f"{where}batch {f.get('batch_index')}: strict finding {f['code']}: {f['message']}"
        for f in result.get("findings", [])
    ]
    if result["outcome"] != "ok":
        err = result.get("error") or {}
        lines.append(
            f"{where}batch {err.get('batch_index')}: Kafka's consumer fails on the bytes: "
            f"{err.get('kafka_exception')}: "
            f"{err.get('message')}"
        )
    return result["batches"], lines


# ------------------------------------------------------------------------------------ produce


def _expected_partition(r: PlanRecord, partitions: int, partitioner: str) -> tuple[int, bool]:
    """Where ``r`` must land, and whether Java's partitioner would place it elsewhere (a
    keyed record under a declared non-Java partitioner). Every scenario gives a record on a
    topic of several partitions a key or a partition (``scenarios.Scenario``)."""
    if r.partition is not None:
        return r.partition, False
    if partitions == 1:
        return 0, False
    assert r.key is not None, "a record without key or partition on several partitions"
    mine = PARTITIONERS[partitioner].partition(r.key, partitions)
    java = PARTITIONERS[JAVA_PARTITIONER].partition(r.key, partitions)
    assert mine is not None
    return mine, java != mine


def _records_lines(
    obs: ProduceObservation, refused_by_client: set[int], reported: list[dict[str, Any]] | None
) -> list[str]:
    s = obs.scenario
    out: list[str] = []
    expected: dict[int, list[int]] = defaultdict(list)
    java_differs = 0
    for i, r in enumerate(s.records):
        if i in refused_by_client:
            continue
        p, java_differs_here = _expected_partition(r, s.partitions, obs.partitioner)
        expected[p].append(i)
        java_differs += java_differs_here
    if java_differs:
        out.append(
            f"partitioner: {java_differs} keyed records were expected on the partition of the "
            f"declared default partitioner {obs.partitioner!r}, which is not Java's"
        )
    read: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    markers: dict[int, list[str]] = {}
    for p in range(s.partitions):
        data = obs.fetched.get(p, b"")
        doc = decode(data).to_dict()
        if doc["outcome"] != "ok":
            err = doc.get("error") or {}
            out.append(
                f"partition {p}: Kafka's consumer fails reading the log back: "
                f"{err.get('kafka_exception')}: {err.get('message')}"
            )
        read[p], markers[p] = [], []
        for b in doc["batches"]:
            if b.get("isControl"):
                markers[p] += [
                    "commit" if (r.get("control") or {}).get("type") == "COMMIT" else "abort"
                    for r in b["records"]
                ]
                continue
            read[p] += [(int(r["offset"]), r) for r in b["records"]]
            if s.transaction is not None and not b.get("isTransactional"):
                out.append(f"partition {p}: a batch of the transaction is not transactional")
    where: dict[int, tuple[int, int]] = {}  # plan index -> (partition, offset)
    for p in range(s.partitions):
        out += _compare_partition(p, expected.get(p, []), read[p], obs, where)
    if s.transaction is not None:
        used = {p for p, _ in where.values()}
        for p in sorted(used):
            if markers[p] != [s.transaction]:
                out.append(
                    f"partition {p}: transaction markers {markers[p]}, expected [{s.transaction!r}]"
                )
    if reported is not None and s.acks != 0:
        wrong = [
            f"record {i}: reported partition {reported[i]['partition']} offset "
            f"{reported[i]['offset']}, stored at partition {p} offset {o}"
            for i, (p, o) in sorted(where.items())
            if reported[i]["error"] is None
            and (reported[i]["partition"], reported[i]["offset"]) != (p, o)
        ]
        out += wrong[:MAX_LINES] + (
            [f"{len(wrong) - MAX_LINES} more wrong offsets"] if len(wrong) > MAX_LINES else []
        )
    return out


def _timestamp_problem(r: PlanRecord, actual: int, obs: ProduceObservation) -> str | None:
    if r.timestamp is not None:
        return None if actual == r.timestamp else f"timestamp {actual}, expected {r.timestamp}"
    low, high = obs.started_ms - CLOCK_SLACK_MS, obs.ended_ms
    if low <= actual <= high:
        return None
    return f"timestamp {actual}, expected the producer's clock during the run [{low}, {high}]"


def _compare_partition(
    p: int,
    want: list[int],
    got: list[tuple[int, dict[str, Any]]],
    obs: ProduceObservation,
    where: dict[int, tuple[int, int]],
) -> list[str]:
    out: list[str] = []
    records = obs.scenario.records
    for n, (i, (offset, g)) in enumerate(zip(want, got, strict=False)):
        exp = _expected_record(records[i])
        diffs = [
            f"{k} {g[k]!r}, expected {exp[k]!r}"
            for k in ("key", "value", "headers")
            if g[k] != exp[k]
        ]
        ts = _timestamp_problem(records[i], int(g["timestamp"]), obs)
        if ts:
            diffs.append(ts)
        if diffs:
            out.append(
                f"partition {p} offset {offset} (the {n + 1}th record read, plan record {i}): "
                + "; ".join(d if len(d) < 200 else d[:200] + "..." for d in diffs)
            )
        else:
            where[i] = (p, offset)
    if len(got) > len(want):
        extra = got[len(want)]
        out.append(
            f"partition {p}: {len(got)} records read back, {len(want)} expected "
            f"(first extra at offset {extra[0]}: a duplicate or a misplaced record)"
        )
    elif len(got) < len(want):
        out.append(
            f"partition {p}: {len(got)} records read back, {len(want)} expected "
            f"(plan records {want[len(got)]}... missing)"
        )
    return _cap(out, f"partition {p}")


def _batch_lines(obs: ProduceObservation) -> list[str]:
    s = obs.scenario
    idempotent = s.idempotence or s.transaction is not None
    out: list[str] = []
    evidence: list[str] = []
    next_seq: dict[int, int] = {}
    seen: dict[tuple[int, bytes], int] = {}
    for n, req in enumerate(obs.requests):
        where = f"request {n} partition {req.partition}"
        batches, lines = _strict_lines(where + " ", req.records)
        out += lines
        for k, b in enumerate(batches):
            bw = f"{where} batch {k}"
            before = len(out)
            expect: dict[str, Any] = {
                "partitionLeaderEpoch": -1,
                "isTransactional": s.transaction is not None,
            }
            if b.get("magic") == 2 and not idempotent:
                expect |= {"producerId": -1, "producerEpoch": -1, "baseSequence": -1}
            elif b.get("magic") == 2:
                expect["producerId"] = lambda v: None if v >= 0 else "no producer id (idempotent)"
                expect["producerEpoch"] = lambda v: None if v >= 0 else "no epoch (idempotent)"
                start = int(b["position"])
                key = (req.partition, req.records[start : start + int(b["sizeInBytes"])])
                if key in seen:  # a retry of the same batch keeps its sequence
                    expect["baseSequence"] = seen[key]
                else:
                    expect["baseSequence"] = next_seq.get(req.partition, 0)
                    seen[key] = expect["baseSequence"]
                    next_seq[req.partition] = expect["baseSequence"] + len(b["records"])
            out += _header_lines(bw, b, codec=s.codec, expect=expect)
            if int(b.get("baseOffset", 0)) != 0:
                out.append(f"{bw}: baseOffset {b['baseOffset']}, expected 0 (Java sends 0)")
            if len(out) > before and len(evidence) < EVIDENCE_BATCHES:
                start = int(b["position"])
                evidence.append(f"{EVIDENCE}{bw} header: {_header_hex(req.records, start)}")
    return _cap(_grouped(out), "batches") + evidence


def _broker_lines(obs: ProduceObservation) -> list[str]:
    out: list[str] = []
    for n, req in enumerate(obs.requests):
        r = req.response
        if r is not None and r["errorCode"] != 0:
            out.append(
                f"request {n} partition {req.partition}: the broker answered {r['errorName']} "
                f"({r['errorCode']}): {r.get('errorMessage')}"
                + (" (the answer the proxy dropped)" if req.dropped else "")
            )
    by_partition: dict[int, list[SentRequest]] = defaultdict(list)
    for req in obs.requests:
        if req.response is not None:
            by_partition[req.partition].append(req)
    for p, reqs in sorted(by_partition.items()):
        answers = [r.response for r in reqs]
        stored = stored_by_request(obs.fetched.get(p, b""), answers)
        case = GoldenCase(
            name=f"{obs.topic}-{p}",
            description="",
            broker_id=obs.broker_id,
            kafka_version=obs.kafka_version,
            topic_name=obs.topic,
            topic={},
            requests=tuple(
                GoldenRequest(
                    records=r.records,
                    produce_version=r.produce_version,
                    now=r.sent_at,
                    transactional_id=r.transactional_id,
                    response=r.response,
                    stored=st,
                    received_at=r.received_at,
                )
                for r, st in zip(reqs, stored, strict=True)
            ),
            inter_broker_protocol_version=obs.inter_broker_protocol_version,
            fetched=obs.scenario.transaction is None,
        )
        out += [f"kit broker model: {d}" for d in judge_golden(case)]
    return _cap(out, "broker")


def judge_produce(obs: ProduceObservation) -> tuple[str, str, list[str]]:
    """(status, headline, diff) of one produce run whose adapter printed a document."""
    s = obs.scenario
    reported, problem = read_result_document(obs.document, len(s.records))
    if reported is None:
        return "error", f"invalid result document: {problem}", []
    diff: list[str] = []
    refused_by_client = {i for i, r in enumerate(reported) if r["error"] is not None}
    for i in sorted(refused_by_client - s.refused)[:MAX_LINES]:
        diff.append(f"record {i}: the library reported an error: {reported[i]['error']}")
    if isinstance(obs.document.get("error"), str):
        diff.append(f"the library reported: {obs.document['error']}")
    for i in sorted(s.refused - refused_by_client):
        diff.append(
            f"record {i}: timestamp {s.records[i].timestamp} was sent; Java's ProducerRecord "
            "refuses a negative timestamp (IllegalArgumentException)"
        )
    if not obs.requests:
        diff.append("no Produce request for the topic crossed the proxy")
    elif s.fault == DISCONNECT and not any(r.dropped for r in obs.requests):
        return "error", "kit: the proxy dropped no answer (the scenario's fault did not happen)", []
    diff += _broker_lines(obs)
    diff += _batch_lines(obs)
    diff += _records_lines(obs, refused_by_client, reported)
    if not diff:
        return "pass", "", []
    return "fail", diff[0], diff


# ------------------------------------------------------------------------------------- encode


def judge_encode(s: Scenario, data: bytes, kafka_version: str) -> tuple[str, str, list[str]]:
    """(status, headline, diff) of an encoder's batch for ``s`` (a :data:`ENCODE` scenario)."""
    assert s.side == ENCODE
    b = s.batch
    batches, lines = _strict_lines("", data)
    diff: list[str] = []
    if len(batches) != 1:
        diff.append(f"{len(batches)} batches decoded, expected 1")
    if batches:
        got = batches[0]
        expect = {
            "baseOffset": str(b["base_offset"]),
            "partitionLeaderEpoch": b["partition_leader_epoch"],
            "producerId": b["producer_id"],
            "producerEpoch": b["producer_epoch"],
            "baseSequence": b["base_sequence"],
            "isTransactional": b["transactional"],
        }
        lines += _header_lines("batch 0", got, codec=s.codec, expect=expect)
        records = got.get("records") or []
        for i, (r, g) in enumerate(zip(s.records, records, strict=False)):
            exp = _expected_record(r) | {
                "timestamp": str(r.timestamp if r.timestamp is not None else -1)
            }
            bad = [f"{k} {g[k]!r}, expected {exp[k]!r}" for k in exp if g[k] != exp[k]]
            if bad:
                diff.append(f"record {i}: " + "; ".join(x[:200] for x in bad))
        if len(records) != len(s.records):
            diff.append(f"{len(records)} records, expected {len(s.records)}")
        ctx = ProduceContext(
            version=kafka_version,
            transactional_id=DEFAULT_TRANSACTIONAL_ID if b["transactional"] else None,
        )
        verdict = broker_decode(data, profile="broker", produce=ctx).broker
        assert verdict is not None
        v = verdict.to_dict()
        if v["response"]["errorCode"] != 0:
            diff.append(
                f"kit broker model (Kafka {kafka_version}): {v['response']['errorName']}: "
                f"{v['response']['errorMessage']}"
            )
        diff += [
            f"kit broker model (Kafka {kafka_version}): the broker rewrites {w['field']} "
            f"{w['from']} -> {w['to']}"
            for w in v["rewrites"]
            if w["field"] not in ASSIGNED
        ]
        if v["rebuilt"]:
            diff.append(
                f"kit broker model (Kafka {kafka_version}): the broker rebuilds the batch: "
                f"{v['rebuilt']}"
            )
    diff = _cap(_grouped(lines) + diff, "encode")
    if diff and len(data) >= HEADER_BYTES:
        diff.append(f"{EVIDENCE}batch 0 header: {_header_hex(data, 0)}")
    if not diff:
        return "pass", "", []
    return "fail", diff[0], diff
