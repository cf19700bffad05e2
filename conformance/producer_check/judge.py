"""The judgement of one implementation on one scenario: what it wrote, against Kafka, at
three levels.

Every check adds ``levels.Difference`` lines, each at the **level** it breaks
(``levels.LEVELS``, each including the one before):

=========  =====================================================================================
level      what must hold
=========  =====================================================================================
delivery   the broker accepted every request; Kafka's consumer reads back exactly the plan
           (each record once, in plan order per partition, key, value, headers, timestamp), on
           the partition the plan names or the declared partitioner gives (a key-ignoring one:
           by its promise), at the offsets the library reported; a transaction ends with its
           marker; for ``encode``: the batch decodes to the plan's records and the broker
           model accepts it
wire       also: what the broker stores is what was sent (no rebuild, no recompression, no
           rewrite beyond the fields every broker assigns: baseOffset, partitionLeaderEpoch,
           the CRC); magic 2, the codec asked for, CreateTime, lastOffsetDelta and maxTimestamp
           true to the records; producer id, epoch and sequences right (idempotent: an id, an
           epoch, sequences contiguous per partition from 0, a retry repeating its batch's;
           else no producer id); the transactional flag iff in a transaction; the kit's broker
           model, replayed on the same requests, answers and stores what the broker did
java       also: every header field is what Java's ``MemoryRecordsBuilder`` writes
           (baseOffset 0, partitionLeaderEpoch -1, producerEpoch and baseSequence -1 without a
           producer id, baseTimestamp the first record's, minimal varints and zero unused
           bits: no strict-profile finding), keys placed by Java's default partitioner, and a
           record Java's ``ProducerRecord`` refuses (a negative timestamp) refused
=========  =====================================================================================

A run is judged at one level (``--level``, default ``wire``): a difference at or
below it fails the scenario (its first line is the headline); one above it is a *finding*,
reported and counted, not a failure. ``Judgement.reached`` is the highest level with no
difference at or below it, what the matrix shows.

Every distinct difference is a line of its own ("plan record 199 never read back", "plan
record 5 read 2 times ...", "... key and value exchanged", "record 7: partition 2, the
declared partitioner 'java' gives 4"), so a known-divergence entry that explains one kind of
line can never explain another fault in the same scenario. The same difference in many
batches is one line (``... (at request 0 partition 0 batch 0 and 4 more)``).

Produce (:func:`judge_produce`) reads the adapter's result document, the Produce requests and
the broker's answers recorded by the proxy, and each partition fetched back from offset 0;
encode (:func:`judge_encode`) reads the one batch an encoder wrote. The records of a plan
group are also read in the batches as sent, and the batches each group took counted
(``producer_check.sent``).
"""

from __future__ import annotations

import base64
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from conformance.broker.exchange import Exchange, Sent, differences
from conformance.broker.log import DEFAULT_TRANSACTIONAL_ID
from conformance.broker.profile import ProduceContext
from conformance.broker.profile import decode as broker_decode
from conformance.capture.produce_wire import stored_by_request
from conformance.harness.divergences import EVIDENCE
from conformance.levels import (
    DELIVERY,
    JAVA,
    WIRE,
    Judgement,
    Lines,
)
from conformance.partitioners import PARTITIONERS, Partitioner, partitioner
from conformance.producer_check.plan import BATCH_LINGER, DISCONNECT, ENCODE, PlanRecord, Scenario
from conformance.producer_check.sent import SentBatch, content, expected_record, group_lines
from conformance.stream.compare import pair
from conformance.stream.decoder import decode
from conformance.wire.layout import NO_TIMESTAMP

__all__ = [
    "ProduceObservation",
    "SentRequest",
    "judge_encode",
    "judge_produce",
    "read_result_document",
]

#: the partitioner every scenario's expectation uses unless the implementation declares another
JAVA_PARTITIONER = "java"
#: header fields a broker assigns to every batch whatever the producer wrote, and the CRC it
#: recomputes after any rewrite (a wrong CRC of the producer is the consumer's finding)
ASSIGNED = frozenset({"baseOffset", "partitionLeaderEpoch", "lastOffset", "crc"})
#: keys of a decoded batch that are no header field of the producer's, or follow from one
_DERIVED = frozenset({"position", "records", "lastSequence"})
#: how far (ms) before the adapter started a producer-stamped timestamp may be
CLOCK_SLACK_MS = 2_000
#: batches whose header bytes a diff shows as evidence
EVIDENCE_BATCHES = 2
#: the v2 batch header's size (the evidence shown)
HEADER_BYTES = 61
#: strict-profile findings that break what the broker trusts (wire); every other one is a
#: byte Java would not write (java)
_WIRE_FINDINGS = frozenset(
    {
        "last-offset-delta-mismatch",
        "max-timestamp-mismatch",
        "offset-delta-non-monotonic",
        "offset-delta-negative",
        "empty-batch-with-payload",
        "control-batch-record-count",
    }
)
#: a record named by its position in a list (``record 7``), as partitioners' promises do
_RECORD_N = re.compile(r"\brecord (\d+)\b")
#: how a value read back and the plan's are named in a record's difference
_PARTIES = ("plan", "read")


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

    def sent(self, stored: str | None) -> Sent:
        """The request as an exchange's (what the broker model is replayed on), with what it
        ``stored`` (base64, as fetched back)."""
        return Sent(
            self.records,
            self.produce_version,
            self.sent_at,
            self.transactional_id,
            self.response,
            stored,
            self.received_at,
        )


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
    #: how the adapter says its library puts a plan group in one batch (``sent``)
    batching: str = BATCH_LINGER


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

#: a header field's level when it differs: wire (the broker or a reader trusts it), else java
_HEADER_LEVEL = {
    "magic": WIRE,
    "compression": WIRE,
    "timestampType": WIRE,
    "isControl": WIRE,
    "lastOffsetDelta": WIRE,
    "maxTimestamp": WIRE,
    "isTransactional": WIRE,
    "producerId": WIRE,
    "baseTimestamp": JAVA,
    "baseOffset": JAVA,
    "partitionLeaderEpoch": JAVA,
}


def _header_lines(
    lines: Lines,
    where: str,
    batch: dict[str, Any],
    *,
    codec: str,
    expect: dict[str, Any],
    levels: dict[str, str],
) -> bool:
    """Differences between a decoded batch header and Java's for the same records, each at its
    level (``levels`` overrides :data:`_HEADER_LEVEL`); True if there was one."""
    before = len(lines.items)
    records = batch.get("records") or []
    stamps = [int(r["timestamp"]) for r in records]

    def need(name: str, actual: Any, wanted: Any, why: str = "") -> None:
        if actual != wanted:
            level = levels.get(name, _HEADER_LEVEL.get(name, WIRE))
            lines.add(level, f"{where}: {name} {actual}, expected {wanted}{why}")

    need("magic", batch["magic"], 2)
    if batch["magic"] != 2:
        return True
    need("compression", batch["compression"], codec, " (the codec asked for)")
    need("timestampType", batch["timestampType"], "CreateTime")
    need("isControl", batch["isControl"], False)
    need("lastOffsetDelta", batch["lastOffsetDelta"], len(records) - 1, " (records - 1)")
    base = int(batch["baseOffset"])
    for i, r in enumerate(records):
        if int(r["offset"]) != base + i:
            delta = int(r["offset"]) - base
            lines.add(WIRE, f"{where}: record {i} has offset delta {delta}, not {i}")
            break
    if stamps:
        need("baseTimestamp", int(batch["baseTimestamp"]), stamps[0], " (the first record's)")
        # Java's maximum starts at NO_TIMESTAMP and only rises: records all below -1 give -1
        top = max(NO_TIMESTAMP, *stamps)
        why = " (the largest record's)" if top in stamps else " (NO_TIMESTAMP, all records below)"
        need("maxTimestamp", int(batch["maxTimestamp"]), top, why)
    for name, wanted in expect.items():
        actual = batch[name]
        if name in ("producerId", "baseOffset"):
            actual = int(actual)
        if callable(wanted):
            problem = wanted(actual)
            if problem:
                lines.add(levels.get(name, WIRE), f"{where}: {name} {actual}: {problem}")
        else:
            need(name, actual, wanted)
    return len(lines.items) > before


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


def _strict(lines: Lines, where: str, data: bytes) -> list[dict[str, Any]]:
    """The batches of ``data`` (decoded, strict profile); what is wrong with the bytes goes to
    ``lines`` (a strict finding at its level, a decode error at ``delivery``)."""
    result = decode(data, profile="strict").to_dict()
    for f in result.get("findings", []):
        level = WIRE if f["code"] in _WIRE_FINDINGS else JAVA
        lines.add(
            level,
            f"{where}batch {f.get('batch_index')}: strict finding {f['code']}: {f['message']}",
        )
    failure = _consumer_failure(result)
    if failure is not None:
        batch = (result.get("error") or {}).get("batch_index")
        lines.add(DELIVERY, f"{where}batch {batch}: Kafka's consumer fails on the bytes: {failure}")
    return list(result["batches"])


def _consumer_failure(doc: dict[str, Any]) -> str | None:
    """What Kafka's consumer raised on a decode document (None: it read everything)."""
    if doc["outcome"] == "ok":
        return None
    err = doc.get("error") or {}
    return f"{err.get('kafka_exception')}: {err.get('message')}"


# ------------------------------------------------------------------------------------ produce


@dataclass
class _ReadBack:
    """Every record Kafka's consumer read from the topic's partitions, each matched to the
    plan record it is (by key, value and headers; a record that matches none is matched by
    its key or value alone, then reported by field)."""

    #: plan index -> where it was read: [(partition, offset, the record)]
    found: dict[int, list[tuple[int, int, dict[str, Any]]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    #: per partition, the plan indices in the order they were read
    order: dict[int, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    #: per partition, the transaction markers read ("commit" / "abort")
    markers: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))


def _read_back(obs: ProduceObservation, lines: Lines) -> _ReadBack:
    s = obs.scenario
    out = _ReadBack()
    match = _Matcher(s.records, out.found)
    for p in range(s.partitions):
        doc = decode(obs.fetched.get(p, b"")).to_dict()
        failure = _consumer_failure(doc)
        if failure is not None:
            lines.add(DELIVERY, f"partition {p}: Kafka's consumer fails reading back: {failure}")
        for b in doc["batches"]:
            if b.get("isControl"):
                out.markers[p] += [
                    "commit" if (r.get("control") or {}).get("type") == "COMMIT" else "abort"
                    for r in b["records"]
                ]
                continue
            if s.transaction is not None and not b.get("isTransactional"):
                lines.add(WIRE, f"partition {p}: a batch of the transaction is not transactional")
            for r in b["records"]:
                where = f"partition {p} offset {r['offset']}"
                i = match(r, where, lines)
                if i is not None:
                    out.found[i].append((p, int(r["offset"]), r))
                    out.order[p].append((int(r["offset"]), i))
    return out


class _Matcher:
    """Which plan record a read-back record is: the first not yet read with the same key,
    value and headers (an explicit timestamp that agrees first); else the same with key and
    value exchanged; else the first not yet read with the same key, or value, whose other
    fields then differ (each difference a line); else none (a line: not in the plan). A
    record whose every match was read already is a duplicate of the first."""

    def __init__(self, records: tuple[PlanRecord, ...], found: dict[int, Any]) -> None:
        self.plan = [expected_record(r) for r in records]
        self.stamps = [r.timestamp for r in records]
        self.found = found
        self.by: dict[str, dict[Any, list[int]]] = {
            "content": defaultdict(list),
            "key": defaultdict(list),
            "value": defaultdict(list),
        }
        for i, e in enumerate(self.plan):
            self.by["content"][content(e)].append(i)
            self.by["key"][e["key"]].append(i)
            self.by["value"][e["value"]].append(i)

    def _unread(self, how: str, value: Any, timestamp: int | None = None) -> int | None:
        candidates = [i for i in self.by[how].get(value, []) if i not in self.found]
        agreeing = [i for i in candidates if self.stamps[i] == timestamp]
        return (agreeing or candidates or [None])[0]

    def __call__(self, r: dict[str, Any], where: str, lines: Lines) -> int | None:
        mine = content(r)
        same = self.by["content"].get(mine)
        if same:
            i = self._unread("content", mine, int(r["timestamp"]))
            return same[0] if i is None else i
        i = self._unread("content", (r["value"], r["key"], mine[2]))
        if i is not None:
            lines.add(DELIVERY, f"plan record {i} ({where}): key and value exchanged")
            return i
        i = self._unread("key", r["key"]) if r["key"] is not None else None
        if i is None:
            i = self._unread("value", r["value"])
        if i is None:
            shown = {k: r[k] for k in ("key", "value", "headers")}
            lines.add(DELIVERY, f"{where}: a record not in the plan: {shown}")
            return None
        for k in ("key", "value", "headers"):
            if r[k] != self.plan[i][k]:
                lines.add(
                    DELIVERY, f"plan record {i} ({where}) {k}: {_plan_pair(self.plan[i][k], r[k])}"
                )
        return i


def _plan_pair(planned: Any, read: Any) -> str:
    return pair(planned, read, _PARTIES)


def _expected_partition(
    i: int, r: PlanRecord, partitions: int, rule: Partitioner
) -> tuple[int | None, str]:
    """Where plan record ``i`` must land (None: the partitioner does not derive it from the
    key) and what says so."""
    if r.partition is not None:
        return r.partition, "the plan names"
    if partitions == 1:
        return 0, "the topic has one partition:"
    if not rule.key_determined:
        return None, ""
    assert r.key is not None, "a record without key or partition on several partitions"
    return rule.partition(r.key, partitions), f"the declared partitioner {rule.name!r} gives"


def _timestamp_problem(r: PlanRecord, actual: int, obs: ProduceObservation) -> str | None:
    if r.timestamp is not None:
        if actual == r.timestamp:
            return None
        return f"timestamp: {pair(r.timestamp, actual, _PARTIES)}"
    low, high = obs.started_ms - CLOCK_SLACK_MS, obs.ended_ms
    if low <= actual <= high:
        return None
    return f"timestamp {actual}, expected the producer's clock during the run [{low}, {high}]"


def _records_lines(
    obs: ProduceObservation,
    lines: Lines,
    refused_by_client: set[int],
    reported: list[dict[str, Any]] | None,
) -> None:
    """Delivery: each plan record read back once, in plan order per partition, as planned, on
    its partition, at the offset reported; a transaction's markers; the partitioner's java
    finding. The lines come in the order of what a fault causes: what was read that is not
    the plan, what was never read, read twice, out of order, misplaced, stamped wrong; last
    the offsets reported (a consequence of any of these)."""
    s = obs.scenario
    read = _read_back(obs, lines)
    rule = partitioner(obs.partitioner)  # a name or a composition (checked with the caps)
    kinds = ("missing", "repeated", "order", "placed", "stamped", "reported", "markers")
    found: dict[str, list[str]] = {k: [] for k in kinds}
    unplaced: list[int] = []  # plan records the partitioner places (no explicit partition)
    elsewhere_than_java = 0
    for i, r in enumerate(s.records):
        seen = read.found.get(i, [])
        if i in refused_by_client:
            if seen:
                p, o, _ = seen[0]
                found["missing"].append(
                    f"plan record {i}: the library reported an error, yet it was stored "
                    f"(partition {p} offset {o})"
                )
            continue
        want, says = _expected_partition(i, r, s.partitions, rule)
        if r.partition is None and s.partitions > 1:
            unplaced.append(i)
            java = PARTITIONERS[JAVA_PARTITIONER].partition(r.key, s.partitions)
            elsewhere_than_java += java is not None and (not seen or seen[0][0] != java)
        if not seen:
            where = f" (expected on partition {want})" if want is not None else ""
            found["missing"].append(f"plan record {i} never read back{where}")
            continue
        if len(seen) > 1:
            places = ", ".join(f"partition {p} offset {o}" for p, o, _ in seen)
            found["repeated"].append(f"plan record {i} read {len(seen)} times ({places})")
        p, offset, got = seen[0]
        if want is not None and p != want:
            found["placed"].append(f"record {i}: partition {p}, {says} {want}")
        ts = _timestamp_problem(r, int(got["timestamp"]), obs)
        if ts:
            found["stamped"].append(f"plan record {i} (partition {p} offset {offset}) {ts}")
        if reported is not None and s.acks != 0 and reported[i]["error"] is None:
            told = (reported[i]["partition"], reported[i]["offset"])
            if told != (p, offset):
                found["reported"].append(
                    f"record {i}: reported partition {told[0]} offset {told[1]}, stored at "
                    f"partition {p} offset {offset}"
                )
    for p, order in sorted(read.order.items()):
        latest = -1
        for offset, i in sorted(order):
            if i < latest:
                found["order"].append(
                    f"plan record {i} read after plan record {latest} on partition {p} "
                    f"(offset {offset}): out of plan order"
                )
            latest = max(latest, i)
    if unplaced and not rule.key_determined:
        placed = [i for i in unplaced if read.found.get(i)]
        landed = [read.found[i][0][0] for i in placed]
        found["placed"] += [
            # the promise's "record k" is the k-th of the placed records: named by plan index
            _RECORD_N.sub(lambda m: f"plan record {placed[int(m.group(1))]}", line)
            for line in rule.promise_problems(landed, s.partitions)
        ]
    if s.transaction is not None:
        used = {p for places in read.found.values() for p, _, _ in places}
        found["markers"] += [
            f"partition {p}: transaction markers {read.markers[p]}, expected [{s.transaction!r}]"
            for p in sorted(used)
            if read.markers[p] != [s.transaction]
        ]
    for kind in kinds:
        lines.extend(DELIVERY, found[kind])
    if obs.partitioner != JAVA_PARTITIONER and elsewhere_than_java:
        lines.add(
            JAVA,
            f"partitioner: {elsewhere_than_java} of {len(unplaced)} records placed by the "
            f"declared default partitioner {obs.partitioner!r} are not where Java's default "
            "partitioner puts their key",
        )


def _batch_lines(obs: ProduceObservation, lines: Lines) -> tuple[list[str], list[SentBatch]]:
    """Every batch as sent: its bytes (strict profile) and its header against Java's; the
    evidence (header bytes) of the first batches with a difference, and the batches."""
    s = obs.scenario
    idempotent = s.idempotence or s.transaction is not None
    evidence: list[str] = []
    sent: list[SentBatch] = []
    next_seq: dict[int, int] = {}
    seen: dict[tuple[int, bytes], int] = {}
    for n, req in enumerate(obs.requests):
        where = f"request {n} partition {req.partition}"
        before = len(lines.items)
        batches = _strict(lines, where + " ", req.records)
        for k, b in enumerate(batches):
            bw = f"{where} batch {k}"
            start, size = int(b["position"]), int(b["sizeInBytes"])
            sent.append(
                SentBatch(bw, req.partition, req.records[start : start + size], b["records"])
            )
            expect: dict[str, Any] = {
                "partitionLeaderEpoch": -1,
                "isTransactional": s.transaction is not None,
                "baseOffset": 0,
            }
            levels: dict[str, str] = {}
            if b.get("magic") == 2 and not idempotent:
                expect |= {"producerId": -1, "producerEpoch": -1, "baseSequence": -1}
                # without a producer id the broker checks no epoch or sequence
                levels |= {"producerEpoch": JAVA, "baseSequence": JAVA}
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
            _header_lines(lines, bw, b, codec=s.codec, expect=expect, levels=levels)
            if len(lines.items) > before and len(evidence) < EVIDENCE_BATCHES:
                start = int(b["position"])
                evidence.append(f"{EVIDENCE}{bw} header: {_header_hex(req.records, start)}")
            before = len(lines.items)
    return evidence, sent


def _stored_lines(where: str, sent: bytes, stored: bytes, lines: Lines) -> None:
    """Wire: the batches the broker stored for one request are the ones sent, but for the
    fields every broker assigns."""
    got = [b for b in decode(stored).to_dict()["batches"] if not b.get("isControl")]
    for k, (s, t) in enumerate(zip(decode(sent).to_dict()["batches"], got, strict=False)):
        at = f"{where} batch {k}"
        if s["sizeInBytes"] != t["sizeInBytes"] or s["compression"] != t["compression"]:
            lines.add(
                WIRE,
                f"{at}: the broker rebuilt the batch ({s['compression']}, "
                f"{s['sizeInBytes']} bytes sent; {t['compression']}, {t['sizeInBytes']} stored)",
            )
            continue
        for name in s.keys() - ASSIGNED - _DERIVED:
            if s[name] != t.get(name):
                change = pair(s[name], t.get(name), ("sent", "stored"))
                lines.add(WIRE, f"{at}: the broker rewrote {name}: {change}")
        strip = [{k: v for k, v in r.items() if k != "offset"} for r in s["records"]]
        kept = [{k: v for k, v in r.items() if k != "offset"} for r in t["records"]]
        if strip != kept:
            lines.add(WIRE, f"{at}: the broker stored other records than were sent")


def _broker_lines(obs: ProduceObservation, lines: Lines) -> None:
    """Delivery: every answer the broker gave is NONE. Wire: what it stored is what was sent,
    and the kit's broker model, replayed on the same requests, agrees with it."""
    for n, req in enumerate(obs.requests):
        r = req.response
        if r is not None and r["errorCode"] != 0:
            lines.add(
                DELIVERY,
                f"request {n} partition {req.partition}: the broker answered {r['errorName']} "
                f"({r['errorCode']}): {r.get('errorMessage')}"
                + (" (the answer the proxy dropped)" if req.dropped else ""),
            )
    by_partition: dict[int, list[tuple[int, SentRequest]]] = defaultdict(list)
    for n, req in enumerate(obs.requests):
        if req.response is not None:
            by_partition[req.partition].append((n, req))
    for p, numbered in sorted(by_partition.items()):
        reqs = [r for _, r in numbered]
        stored = stored_by_request(obs.fetched.get(p, b""), [r.response for r in reqs])
        for (n, req), st in zip(numbered, stored, strict=True):
            if st is not None:
                where = f"request {n} partition {p}"
                _stored_lines(where, req.records, base64.b64decode(st), lines)
        exchange = Exchange(
            obs.kafka_version,
            obs.topic,
            {},
            tuple(r.sent(st) for r, st in zip(reqs, stored, strict=True)),
            obs.inter_broker_protocol_version,
            fetched=obs.scenario.transaction is None,
        )
        at = f"{obs.broker_id}/{obs.topic}-{p}"
        lines.extend(WIRE, (f"kit broker model: {at} {d.text}" for d in differences(exchange)))


def _spans(indices: list[int]) -> str:
    """Sorted indices as runs: ``0-19, 25``."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def judge_produce(obs: ProduceObservation) -> Judgement:
    """Every difference of one produce run whose adapter printed a document."""
    s = obs.scenario
    reported, problem = read_result_document(obs.document, len(s.records))
    if reported is None:
        return Judgement(error=f"invalid result document: {problem}")
    report = Lines()
    refused_by_client = {i for i, r in enumerate(reported) if r["error"] is not None}
    by_error: dict[str, list[int]] = defaultdict(list)
    for i in sorted(refused_by_client - s.refused):
        by_error[reported[i]["error"]].append(i)
    for error, which in by_error.items():
        named = f"record {which[0]}" if len(which) == 1 else f"records {_spans(which)}"
        report.add(DELIVERY, f"{named}: the library reported an error: {error}")
    if isinstance(obs.document.get("error"), str):
        report.add(DELIVERY, f"the library reported: {obs.document['error']}")
    for i in sorted(s.refused - refused_by_client):
        report.add(
            JAVA,
            f"record {i}: timestamp {s.records[i].timestamp} was sent; Java's ProducerRecord "
            "refuses a negative timestamp (IllegalArgumentException)",
        )
    if not obs.requests:
        report.add(DELIVERY, "no Produce request for the topic crossed the proxy")
    elif s.fault == DISCONNECT and not any(r.dropped for r in obs.requests):
        return Judgement(
            error="kit: the proxy dropped no answer (the scenario's fault did not happen)"
        )
    broker, batches, records, groups = Lines(), Lines(), Lines(), Lines()
    _broker_lines(obs, broker)
    evidence, sent = _batch_lines(obs, batches)
    _records_lines(obs, records, refused_by_client, reported)
    clock = (obs.started_ms - CLOCK_SLACK_MS, obs.ended_ms)
    group_lines(s, obs.batching, sent, clock, groups)
    return Judgement(
        broker.plain("broker")  # the broker's refusal first: it is why a library reports errors
        + report.plain("report")
        + records.plain("records")
        + groups.plain("groups")
        + batches.grouped("batches"),
        evidence,
    )


# ------------------------------------------------------------------------------------- encode


def judge_encode(s: Scenario, data: bytes, kafka_version: str) -> Judgement:
    """Every difference of an encoder's batch for ``s`` (a :data:`ENCODE` scenario)."""
    assert s.side == ENCODE
    b = s.batch
    lines, records_lines = Lines(), Lines()
    batches = _strict(lines, "", data)
    if len(batches) != 1:
        records_lines.add(DELIVERY, f"{len(batches)} batches decoded, expected 1")
    evidence: list[str] = []
    if batches:
        got = batches[0]
        has_id = b["producer_id"] >= 0
        expect = {
            "baseOffset": b["base_offset"],
            "partitionLeaderEpoch": b["partition_leader_epoch"],
            "producerId": b["producer_id"],
            "producerEpoch": b["producer_epoch"],
            "baseSequence": b["base_sequence"],
            "isTransactional": b["transactional"],
        }
        # without a producer id the broker checks no epoch or sequence
        levels = {} if has_id else {"producerEpoch": JAVA, "baseSequence": JAVA}
        if has_id:
            levels = {"producerEpoch": WIRE, "baseSequence": WIRE}
        _header_lines(lines, "batch 0", got, codec=s.codec, expect=expect, levels=levels)
        records = got.get("records") or []
        for i, (r, g) in enumerate(zip(s.records, records, strict=False)):
            exp = expected_record(r) | {
                "timestamp": str(r.timestamp if r.timestamp is not None else -1)
            }
            for k in exp:
                if g[k] != exp[k]:
                    records_lines.add(DELIVERY, f"record {i} {k}: {pair(exp[k], g[k], _PARTIES)}")
        if len(records) != len(s.records):
            records_lines.add(DELIVERY, f"{len(records)} records, expected {len(s.records)}")
        ctx = ProduceContext(
            version=kafka_version,
            transactional_id=DEFAULT_TRANSACTIONAL_ID if b["transactional"] else None,
        )
        verdict = broker_decode(data, profile="broker", produce=ctx).broker
        assert verdict is not None
        v = verdict.to_dict()
        model = f"kit broker model (Kafka {kafka_version})"
        if v["response"]["errorCode"] != 0:
            records_lines.add(
                DELIVERY,
                f"{model}: {v['response']['errorName']}: {v['response']['errorMessage']}",
            )
        records_lines.extend(
            WIRE,
            (
                f"{model}: the broker rewrites {w['field']} {w['from']} -> {w['to']}"
                for w in v["rewrites"]
                if w["field"] not in ASSIGNED
            ),
        )
        if v["rebuilt"]:
            records_lines.add(WIRE, f"{model}: the broker rebuilds the batch: {v['rebuilt']}")
        if lines.items and len(data) >= HEADER_BYTES:
            evidence.append(f"{EVIDENCE}batch 0 header: {_header_hex(data, 0)}")
    return Judgement(records_lines.plain("encode") + lines.grouped("encode"), evidence)
