"""``kafka-conformance check-producer`` (conformance.producer_check): producers and encoders
judged by a real broker the kit starts, and Kafka's consumer.

* the judgement on its own (no broker): batches made with the kit's real writers, with a fault
  knob each, against an encode scenario;
* one real run (a Kafka 4.3.1 JVM broker started and stopped by the kit) of the producers of
  tests/adapters/producer_faults.py: the correct one passes, each planted fault fails with the
  diff line that names it, the hostile ones (hang, crash, flood, garbage, wrong document) get an
  error verdict and the run completes with nothing left behind;
* the batches as sent (``producer_check.sent``): a plan group built by the kit's writer with a
  32-bit timestamp delta (a knob of the real writer) is caught in the batch itself; a split
  group is a failure under a batch call and a finding under a linger; and one real run of the
  ``batch-*`` scenarios: Kafka's KafkaProducer, kafka-python and the correct faulty adapter
  pass, the 32-bit builder fails the produce scenario (not only the encoder's), a false batch
  call fails, a linger that split is a finding, a library that cannot batch is unsupported;
* every built-in producer and encoder adapter in one ``--impl all`` run: Java's KafkaProducer
  passes every scenario, every third party's divergences are classified
  (``producer-divergences.toml``) and none is stale, each third party diverges somewhere, and
  the published matrix (docs/producer-matrix.md) has this run's counts.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, kit_cli, processes, published_and_fresh_counts, unexplained_and_stale

from conformance import decode
from conformance.broker.config import DEFAULT_MAX_MESSAGE_BYTES
from conformance.codecs import CODECS
from conformance.errors import EncodeError
from conformance.harness import registry
from conformance.levels import DELIVERY, JAVA, LEVELS, WIRE, Lines
from conformance.primitives.java import wrap32
from conformance.producer_check.judge import judge_encode
from conformance.producer_check.plan import PlanRecord, Promise, Scenario
from conformance.producer_check.run import ProducerCapabilityError, read_producer_capabilities
from conformance.producer_check.scenarios import PRODUCE, scenarios, write_plan
from conformance.producer_check.sent import SentBatch, group_lines
from conformance.wire.batch import v2_attributes, write_batch_v2
from conformance.wire.builder import BatchBuilder
from conformance.wire.layout import TimestampType
from conformance.wire.record import write_record_v2

FAULTS = [sys.executable, str(ROOT / "tests" / "adapters" / "producer_faults.py")]
MARK = ("kafka-conformance-broken-adapter", "tests/adapters/")
SCENARIO = {s.name: s for s in scenarios()}


def _cli(*args: str, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
    return kit_cli("check-producer", *args, timeout=timeout)


# ------------------------------------------------------------------------- no broker needed


def _kit_batch(name: str, **knobs: Any) -> bytes:
    """The scenario's batch from the kit's writers (the BatchBuilder's field values), with the
    knobs of ``write_batch_v2`` changed."""
    s = SCENARIO[name]
    stamps = [r.timestamp for r in s.records]
    base = stamps[0]
    assert base is not None
    records = [
        write_record_v2(i, (t or 0) - base, r.key, r.value, list(r.headers))
        for i, (r, t) in enumerate(zip(s.records, stamps, strict=True))
    ]
    codec = next(cid for cid, c in CODECS.items() if c.name == s.codec)
    fields: dict[str, Any] = {
        "attributes": v2_attributes(codec, TimestampType.CREATE_TIME, False, False, False),
        "base_timestamp": base,
        "max_timestamp": max(t or 0 for t in stamps),
    }
    return write_batch_v2(records, **(fields | knobs))


def test_a_correct_batch_passes() -> None:
    for name in ("encode-codec-gzip", "encode-timestamps", "encode-codec-none"):
        judgement = judge_encode(SCENARIO[name], _kit_batch(name), "4.3.1")
        assert judgement.differences == [], judgement
        assert judgement.reached() == "java"
        for level in LEVELS:
            assert judgement.verdict(level) == ("pass", "", [], [])


@pytest.mark.parametrize(
    ("knobs", "expected", "reached"),
    [
        # Kafka 4.3's broker refuses these (INVALID_RECORD): not even delivery holds
        ({"last_offset_delta": 0}, "lastOffsetDelta 0, expected 19", "none"),
        ({"base_offset": 5}, "baseOffset 5, expected 0", "none"),
        ({"producer_id": 9}, "producerId 9, expected -1", "none"),
        ({"crc": 7}, "Record is corrupt", "none"),
        # read back as planned, but not what the broker and readers trust
        ({"max_timestamp": -1}, "maxTimestamp -1, expected", "delivery"),
        ({"attributes": 0}, "compression none, expected gzip", "delivery"),
        # harmless: fields the broker assigns, or ignores without a producer id
        ({"partition_leader_epoch": 0}, "partitionLeaderEpoch 0, expected -1", "wire"),
        ({"producer_epoch": 0}, "producerEpoch 0, expected -1", "wire"),
        ({"base_sequence": 0}, "baseSequence 0, expected -1", "wire"),
    ],
)
def test_each_header_fault_is_named_at_its_level(
    knobs: dict[str, Any], expected: str, reached: str
) -> None:
    """Each fault fails at the levels it breaks and is a finding above: an assigned field
    (baseOffset, leader epoch) or an epoch/sequence without a producer id only at ``java``."""
    judgement = judge_encode(
        SCENARIO["encode-codec-gzip"], _kit_batch("encode-codec-gzip", **knobs), "4.3.1"
    )
    assert judgement.reached() == reached, judgement.differences
    for level in LEVELS:
        status, headline, diff, findings = judgement.verdict(level)
        fails = LEVELS.index(level) > (LEVELS.index(reached) if reached in LEVELS else -1)
        assert status == ("fail" if fails else "pass")
        assert headline == (diff[0] if fails else "")
        assert any(expected in line for line in diff + findings), (diff, findings)


def test_base_timestamp_is_the_first_records() -> None:
    s = SCENARIO["encode-timestamps"]
    smallest = min(r.timestamp or 0 for r in s.records)
    first = s.records[0].timestamp or 0
    records = [
        write_record_v2(i, (r.timestamp or 0) - smallest, r.key, r.value)
        for i, r in enumerate(s.records)
    ]
    data = write_batch_v2(
        records, base_timestamp=smallest, max_timestamp=max(r.timestamp or 0 for r in s.records)
    )
    judgement = judge_encode(s, data, "4.3.1")
    assert judgement.reached() == "wire"  # a difference from Java's bytes only
    status, _, diff, _ = judgement.verdict("java")
    assert status == "fail"
    assert f"baseTimestamp {smallest}, expected {first} (the first record's) (at batch 0)" in diff
    status, _, _, findings = judgement.verdict("wire")
    assert status == "pass" and any("baseTimestamp" in f for f in findings)


def _one_negative_record(max_timestamp: int) -> tuple[Scenario, bytes]:
    """An encode plan of one record stamped -5, and its batch from the kit's writers with
    ``max_timestamp`` (``BatchBuilder``, like Java's ``MemoryRecordsBuilder``, refuses the
    stamp, so its writers are called directly)."""
    s = dataclasses.replace(
        SCENARIO["encode-codec-none"],
        name="encode-timestamp-negative",
        promises=(Promise("one record stamped -5", lambda s: _stamps_of(s) == [-5]),),
        records=(PlanRecord(b"k", b"v", timestamp=-5),),
    )
    with pytest.raises(EncodeError, match="Invalid negative timestamp -5"):
        BatchBuilder().append(-5, b"k", b"v")
    data = write_batch_v2(
        [write_record_v2(0, 0, b"k", b"v")], base_timestamp=-5, max_timestamp=max_timestamp
    )
    return s, data


def _stamps_of(s: Scenario) -> list[int | None]:
    return [r.timestamp for r in s.records]


def test_records_all_below_minus_one_make_a_max_timestamp_of_minus_one() -> None:
    """Kafka's ``MemoryRecordsBuilder`` and ``LogValidator`` start a batch's maxTimestamp at
    ``RecordBatch.NO_TIMESTAMP`` (-1) and raise it only for a larger record timestamp: one
    record stamped -5 makes maxTimestamp -1. That batch reaches ``java``; one stating -5 (the
    record's own) is what a broker rewrites, so it fails at ``wire``."""
    s, data = _one_negative_record(-1)
    judgement = judge_encode(s, data, "4.3.1")
    assert judgement.differences == [], judgement
    assert judgement.reached() == "java"

    s, data = _one_negative_record(-5)
    judgement = judge_encode(s, data, "4.3.1")
    assert judgement.reached() == "delivery", judgement.differences
    status, headline, diff, _ = judgement.verdict("wire")
    assert status == "fail" and headline
    assert any("maxTimestamp -5, expected -1" in line for line in diff), diff
    assert judgement.verdict("delivery")[0] == "pass"


def test_plans_are_complete_documents() -> None:
    for s in scenarios():
        plan = json.loads(json.dumps(write_plan(s, "topic-x", "txn-x")))
        assert plan["format"] == "kafka-conformance/produce-plan/1"
        assert len(plan["records"]) == len(s.records)
        assert set(plan["settings"]) == {
            "codec",
            "idempotence",
            "acks",
            "linger_ms",
            "batch_size",
            "max_request_size",
            "transaction",
            "timeout_ms",
        }
        assert ("batch" in plan) == (s.side != PRODUCE)
        assert plan["groups"] == [{"first": f, "count": c} for f, c in s.groups]
    grouped = [s for s in scenarios() if s.groups]
    assert {s.name for s in grouped} == {
        "batch-timestamps-wide",
        "batch-many-records",
        "batch-headers",
        "batch-nulls-mixed",
    }


def test_a_record_on_several_partitions_has_a_key_or_a_partition() -> None:
    """What the judgement relies on to know each record's partition: with several partitions,
    a record names its partition or has a key for the partitioner."""
    for s in scenarios():
        if s.partitions > 1:
            assert all(r.key is not None or r.partition is not None for r in s.records), s.name


def test_the_near_max_record_fits_the_brokers_default_limit() -> None:
    """``size-near-max``: Kafka's own builder makes its batch just under max.message.bytes."""
    (r,) = SCENARIO["size-near-max"].records
    b = BatchBuilder()
    b.append(r.timestamp or 0, r.key, r.value, [])
    size = len(b.build())
    assert DEFAULT_MAX_MESSAGE_BYTES - 200 < size <= DEFAULT_MAX_MESSAGE_BYTES


def test_capabilities_defaults_and_declarations() -> None:
    caps, problem = read_producer_capabilities("not json", "x")
    assert caps.produce == {} and caps.encode == {} and problem
    caps, problem = read_producer_capabilities(
        json.dumps({"name": "n", "produce": {"codecs": ["none"], "transactions": False}}), "x"
    )
    assert problem is None and caps.encode is None
    assert caps.unsupported(SCENARIO["codec-gzip"]) == ("codec gzip not supported (codecs: none)")
    assert caps.unsupported(SCENARIO["txn-commit"]) == "transactions not supported"
    assert caps.unsupported(SCENARIO["encode-codec-none"]).startswith("no encode mode")
    assert caps.unsupported(SCENARIO["codec-none"]) is None
    # a transaction needs idempotence too: what is missing is named, transactions first
    caps, _ = read_producer_capabilities(
        json.dumps({"produce": {"idempotence": False, "transactions": False}}), "x"
    )
    assert caps.unsupported(SCENARIO["txn-abort"]) == "transactions not supported"
    assert caps.unsupported(SCENARIO["idempotent"]) == "idempotence not supported"


def test_batching_and_settings_a_library_does_not_have() -> None:
    """``batching`` says how a plan group becomes one batch (undeclared: a linger); "none"
    makes the batch scenarios unsupported, never failed. ``defaults`` may say "none" for a
    linger or batch size the library does not have."""
    group = SCENARIO["batch-timestamps-wide"]
    none = {"linger_ms": "none", "batch_size": "none", "acks": -1, "idempotence": False}
    for batching in ("call", "linger", None):
        caps, problem = read_producer_capabilities(
            json.dumps({"produce": {"batching": batching, "defaults": none}}), "x"
        )
        assert problem is None and caps.unsupported(group) is None, batching
        assert caps.batching() == (batching or "linger")
    caps, _ = read_producer_capabilities(json.dumps({"produce": {"batching": "none"}}), "x")
    assert caps.unsupported(group) == (
        'batching not supported (batching "none": no batch call, no linger)'
    )
    assert caps.unsupported(SCENARIO["codec-none"]) is None  # no group: no batching needed


@pytest.mark.parametrize(
    ("produce", "needle"),
    [
        ({"batching": "sometimes"}, "produce.batching must be one of call, linger, none"),
        ({"batching": True}, "produce.batching must be str"),
        ({"defaults": {"linger_ms": "unset"}}, "produce.defaults.linger_ms must be a number"),
        ({"defaults": {"batch_size": -1}}, "produce.defaults.batch_size must be a number"),
        ({"defaults": {"batch_size": 1.5}}, "or 'none' (the library has no such setting)"),
        ({"partitioner": "no-such-partitioner"}, "unknown partitioner 'no-such-partitioner'"),
        ({"codecs": ["gzip", "brotli"]}, "codecs names ['brotli']"),
        ({"idempotent": True}, "produce.idempotent is not a capability"),
        ({"headers": "yes"}, "produce.headers must be bool"),
        ({"magics": [0, 1]}, "magics must hold 2"),
        ({"defaults": []}, "produce.defaults must be dict"),
    ],
)
def test_invalid_capabilities_are_an_error_never_a_silent_default(
    produce: dict[str, Any], needle: str
) -> None:
    with pytest.raises(ProducerCapabilityError, match=re.escape(needle)):
        read_producer_capabilities(json.dumps({"produce": produce}), "x")
    with pytest.raises(ProducerCapabilityError, match="encode.idempotent is not a capability"):
        read_producer_capabilities(json.dumps({"encode": {"idempotent": True}}), "x")


# ----------------------------------------------------------------- a plan group, as sent


def _sent(name: str, batches: list[list[int]], delta: Any = lambda d: d) -> list[SentBatch]:
    """The records of scenario ``name`` in ``batches`` (plan indices per batch), each batch
    written by the kit's real writers (``BatchBuilder``'s field values; the timestamp delta
    through ``delta``, the fault knob) and decoded as the judgement decodes a request's."""
    s = SCENARIO[name]
    out = []
    for k, indices in enumerate(batches):
        rs = [s.records[i] for i in indices]
        base = rs[0].timestamp or 0
        body = [
            write_record_v2(j, delta((r.timestamp or 0) - base), r.key, r.value, list(r.headers))
            for j, r in enumerate(rs)
        ]
        data = write_batch_v2(
            body, base_timestamp=base, max_timestamp=max(r.timestamp or 0 for r in rs)
        )
        (b,) = decode(data).to_dict()["batches"]
        out.append(SentBatch(f"request 0 partition 0 batch {k}", 0, data, b["records"]))
    return out


def test_a_group_as_sent_by_a_correct_builder_has_no_difference() -> None:
    for name in ("batch-timestamps-wide", "batch-headers", "batch-nulls-mixed"):
        s = SCENARIO[name]
        lines = Lines()
        group_lines(s, "call", _sent(name, [list(range(len(s.records)))]), (0, 0), lines)
        assert lines.items == [], name
    # and the kit's mirror of Kafka's builder writes every timestamp the plan says
    s = SCENARIO["batch-timestamps-wide"]
    b = BatchBuilder()
    for r in s.records:
        b.append(r.timestamp or 0, r.key, r.value, list(r.headers))
    (batch,) = decode(b.build()).to_dict()["batches"]
    assert [int(r["timestamp"]) for r in batch["records"]] == [r.timestamp for r in s.records]


def test_a_32_bit_timestamp_delta_is_caught_in_the_batch_as_sent() -> None:
    """Every record whose delta from the first does not fit an int32 is named, with the
    timestamp the faulty batch carries; the others are not."""
    s = SCENARIO["batch-timestamps-wide"]
    first = s.records[0].timestamp or 0
    overflowing = {
        i for i, r in enumerate(s.records) if not -(2**31) <= (r.timestamp or 0) - first < 2**31
    }
    assert len(overflowing) >= 2  # over and under
    lines = Lines()
    group_lines(s, "call", _sent(s.name, [list(range(len(s.records)))], wrap32), (0, 0), lines)
    assert {int(text.split()[2]) for _, text in lines.items} == overflowing, lines.items
    assert {level for level, _ in lines.items} == {DELIVERY}
    assert all(
        "as sent (request 0 partition 0 batch 0) timestamp: plan=" in text
        for _, text in lines.items
    )


def test_a_split_group_fails_a_batch_call_and_is_a_finding_of_a_linger() -> None:
    s = SCENARIO["batch-nulls-mixed"]
    split = _sent(s.name, [[0, 1, 2], [3, 4, 5]])
    retried = split + split[:1]  # a retry repeats a batch's bytes: still two batches
    for batching, level in (("call", WIRE), ("linger", JAVA)):
        lines = Lines()
        group_lines(s, batching, retried, (0, 0), lines)
        [(got, text)] = lines.items
        assert got == level, text
        assert text.startswith("plan records 0-5 (one plan group) sent in 2 batches"), text


# ------------------------------------------------------------ one real broker, faulty adapters

#: behaviour -> (scenario, what the headline (the first failing line) says, a line of the diff)
PLANTED = {
    "last-offset-delta": ("4.3.1/codec-gzip", "INVALID_RECORD", "lastOffsetDelta 0, expected 19"),
    "max-timestamp": ("4.3.1/codec-gzip", "maxTimestamp", "maxTimestamp -1"),
    "bad-crc": ("4.3.1/codec-gzip", "CORRUPT_MESSAGE", "CORRUPT_MESSAGE"),
    "no-compression": ("4.3.1/codec-gzip", "compression none, expected gzip", "compression"),
    "null-header-empty": ("4.3.1/headers-shapes", "headers: plan=", '"value": ""'),
    "duplicate": ("4.3.1/codec-gzip", "plan record 0 read 2 times", "plan record 11 read 2 times"),
    # @platformatic/kafka's (murmur2(key) >>> 0) % n declared as Java's: half the kit's fault
    # before compositions (issue 52); declared as murmur2|unsigned|mod it passes (below)
    "murmur2-unsigned+declares-java": (
        "4.3.1/keyed-partitions",
        ", the declared partitioner 'java' gives ",
        "record ",
    ),
    "fnv-partitioner": (
        "4.3.1/keyed-partitions",
        ", the declared partitioner 'java' gives ",
        "record ",
    ),
    "lie-offsets": (
        "4.3.1/codec-gzip",
        "record 0: reported partition 0 offset 1, stored at partition 0 offset 0",
        "record 11: reported partition 0 offset 12",
    ),
    "lose": ("4.3.1/codec-gzip", "plan record 19 never read back", "never read back"),
    "reorder": (
        "4.3.1/codec-gzip",
        "plan record 0 read after plan record 1 on partition 0 (offset 1): out of plan order",
        "record 0: reported partition 0 offset 0, stored at partition 0 offset 1",
    ),
    "swap-kv": ("4.3.1/codec-gzip", "plan record 19 (", "key and value exchanged"),
    # a known entry explains the maxTimestamp lines; the lost record is a new fault
    "max-timestamp+lose": ("4.3.1/codec-gzip", "never read back", "maxTimestamp -1"),
}
#: lenient-but-correct producers: wire passes, with these findings (at ``java``)
LENIENT = {
    "epoch0": ("4.3.1/codec-gzip", "java: partitionLeaderEpoch 0, expected -1"),
    "seq0": ("4.3.1/codec-gzip", "java: baseSequence 0, expected -1"),
    "smallest-base": ("4.3.1/timestamps-explicit", "java: baseTimestamp "),
}
HOSTILE = {
    "hang": "timeout",
    "crash": "SIGSEGV",
    "flood": "output over",
    "garbage": "invalid JSON",
    "wrong": "invalid result document",
}
SCENARIOS = ("codec-gzip", "headers-shapes", "keyed-partitions", "timestamps-explicit")
#: the known entry of ``max-timestamp+lose`` (an outside adapter's ``--known`` file)
KNOWN = """
[[divergence]]
impl = "faulty-max-timestamp+lose"
cases = ["*/codec-gzip"]
lines = ["*maxTimestamp*"]
class = "real-bug"
summary = "maxTimestamp -1 (sarama#3108)"
"""


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("faulty") / "report.json"
    known = out.parent / "known.toml"
    known.write_text(KNOWN, encoding="utf-8")
    before = set(processes(("kafka.Kafka ", *MARK)))
    args = ["--known", str(known)]
    for behaviour in ["ok", "murmur2-unsigned", *PLANTED, *LENIENT, *HOSTILE]:
        args += ["--cmd", " ".join([*FAULTS, behaviour])]
    for glob in (*SCENARIOS, "encode-codec-gzip"):
        args += ["--scenarios", glob]
    keep = out.parent / "keep"
    proc = _cli(
        *args, "-q", "--timeout", "20", "--json", str(out), "--jobs", "2", "--keep", str(keep)
    )
    assert out.is_file(), proc.stderr[-4000:]
    report = json.loads(out.read_text())
    report["_exit"], report["_stderr"], report["_keep"] = proc.returncode, proc.stderr, keep
    report["_stdout"] = proc.stdout
    report["_left"] = {
        p: c for p, c in processes(("kafka.Kafka ", *MARK)).items() if p not in before
    }
    return report


def _results(report: dict[str, Any], impl: str) -> dict[str, dict[str, Any]]:
    return {r["case"]: r for r in report["results"] if r["impl"] == impl}


def test_a_correct_producer_passes_on_the_real_broker(faulty: dict[str, Any]) -> None:
    assert faulty["_exit"] == 1  # the faults are unexplained divergences
    results = _results(faulty, "faulty-ok").values()
    assert {r["status"] for r in results} == {"pass"}
    assert {r["level"] for r in results} == {"java"}  # Java's bytes: no finding
    assert faulty["settings"]["level"] == "wire"


@pytest.mark.parametrize("behaviour", list(PLANTED))
def test_each_planted_fault_fails_with_a_first_line_that_names_it(
    faulty: dict[str, Any], behaviour: str
) -> None:
    case, headline, needle = PLANTED[behaviour]
    r = _results(faulty, f"faulty-{behaviour}")[case]
    assert r["status"] == "fail", r
    assert headline in r["reason"] and r["reason"] == r["diff"][0], r["diff"]
    assert any(needle in line for line in r["diff"]), r["diff"]
    assert r["divergence"] is None  # unexplained, also where a known entry explains a line


@pytest.mark.parametrize("behaviour", list(LENIENT))
def test_lenient_but_correct_producers_pass_at_wire_with_findings(
    faulty: dict[str, Any], behaviour: str
) -> None:
    case, finding = LENIENT[behaviour]
    results = _results(faulty, f"faulty-{behaviour}")
    produce = {c: r for c, r in results.items() if not c.startswith("encode/")}
    assert {r["status"] for r in produce.values()} == {"pass"}, produce
    assert results[case]["level"] == "wire"
    assert any(f.startswith(finding) for f in results[case]["findings"]), results[case]
    impl = next(i for i in faulty["implementations"] if i["name"] == f"faulty-{behaviour}")
    assert impl["levels"]["wire"] >= 1 and impl["with_findings"] >= 1
    assert "findings (not failures at this level)" in faulty["_stdout"]


def test_a_known_entry_cannot_hide_a_new_fault(faulty: dict[str, Any]) -> None:
    """The entry explains the maxTimestamp lines of its case; the lost record stays an
    unexplained failure, named in the report, and the entry is not stale (a line matched)."""
    r = _results(faulty, "faulty-max-timestamp+lose")["4.3.1/codec-gzip"]
    assert r["divergence"] is None and r["divergences"] == []
    assert [line for line in r["unexplained"] if "never read back" in line], r
    assert not [line for line in r["unexplained"] if "maxTimestamp" in line], r
    (entry,) = [d for d in faulty["divergences"] if d["impl"] == "faulty-max-timestamp+lose"]
    assert entry["count"] == 1
    assert faulty["divergences"].index(entry) not in faulty["stale"]


@pytest.mark.parametrize("behaviour", list(HOSTILE))
def test_hostile_producers_get_an_error_verdict(faulty: dict[str, Any], behaviour: str) -> None:
    results = _results(faulty, f"faulty-{behaviour}")
    produce = {c: r for c, r in results.items() if not c.startswith("encode/")}
    assert len(produce) == len(SCENARIOS)
    for r in produce.values():
        assert r["status"] == "error" and HOSTILE[behaviour] in r["reason"], r


def test_keep_writes_what_crossed_the_wire(faulty: dict[str, Any]) -> None:
    """``--keep``: the duplicating producer's two identical requests, the broker's answers and
    the partition as fetched back (its 20 records twice)."""
    d = faulty["_keep"] / "faulty-duplicate" / "4.3.1" / "codec-gzip"
    index = json.loads((d / "requests.json").read_text())
    assert [(r["partition"], r["response"]["errorName"]) for r in index] == [(0, "NONE")] * 2
    first, second = ((d / r["records"]).read_bytes() for r in index)
    assert first == second
    fetched = decode((d / "fetch-p0.bin").read_bytes())
    assert fetched.ok and len(fetched.records) == 40
    assert json.loads((d / "plan.json").read_text())["scenario"] == "codec-gzip"
    assert json.loads((d / "result.json").read_text())["format"] == (
        "kafka-conformance/produce-result/1"
    )


def test_a_composition_the_kit_never_named_is_judged_by_it(faulty: dict[str, Any]) -> None:
    """A producer placing keys by ``(murmur2(key) >>> 0) % n`` that declares it as
    ``murmur2|unsigned|mod`` passes keyed-partitions, with a java-level finding that its keys
    are not where Java puts them; declaring ``java`` instead fails it (``PLANTED``)."""
    results = _results(faulty, "faulty-murmur2-unsigned")
    assert {r["status"] for r in results.values()} == {"pass"}, results
    keyed = results["4.3.1/keyed-partitions"]
    assert keyed["level"] == "wire", keyed
    assert any(
        "placed by the declared default partitioner 'murmur2|unsigned|mod' are not where "
        "Java's default partitioner puts their key" in f
        for f in keyed["findings"]
    ), keyed["findings"]
    wrong = _results(faulty, "faulty-murmur2-unsigned+declares-java")["4.3.1/keyed-partitions"]
    assert wrong["status"] == "fail" and "the declared partitioner 'java' gives" in wrong["reason"]


def test_nothing_is_left_behind(faulty: dict[str, Any]) -> None:
    """No adapter process (nor a child of the hanging one) and no broker is left."""
    assert faulty["_exit"] in (0, 1)
    assert faulty["_left"] == {}


# ------------------------------------------------- one real broker, the batches of a group

#: behaviours of tests/adapters/producer_faults.py run on the ``batch-*`` scenarios
BATCHED = ("ok", "ts-delta-32", "split", "linger+split", "no-batching")
#: kafka-python, the third-party library installed in the kit's own environment
KAFKA_PYTHON = [sys.executable, str(ROOT / "adapters" / "kafka-python" / "producer.py")]
BATCH_SCENARIOS = [s.name for s in scenarios() if s.groups]


@pytest.fixture(scope="module")
def batched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One check-producer run (a Kafka 4.3.1 broker) of the plan groups' scenarios: Java's
    KafkaProducer and MemoryRecordsBuilder, the kit's builder, kafka-python and the faulty
    adapters."""
    out = tmp_path_factory.mktemp("batched") / "report.json"
    args = ["--impl", "java", "--impl", "kit", "--cmd", " ".join(KAFKA_PYTHON)]
    for behaviour in BATCHED:
        args += ["--cmd", " ".join([*FAULTS, behaviour])]
    proc = _cli(*args, "--scenarios", "*batch-*", "-q", "--json", str(out), "--jobs", "2")
    assert out.is_file(), proc.stderr[-4000:]
    report = json.loads(out.read_text())
    report["_exit"], report["_stdout"] = proc.returncode, proc.stdout
    return report


@pytest.mark.oracle
@pytest.mark.capture
def test_correct_producers_pass_the_batch_scenarios(batched: dict[str, Any]) -> None:
    """Java's KafkaProducer (linger) and the kit's writer sending one batch per group (call)
    reach ``java``; kafka-python (linger) passes (at ``wire``: its batches carry
    partitionLeaderEpoch 0); the kit's builder writes the encode counterparts as Java does."""
    assert batched["_exit"] == 1  # the faulty ones fail
    produce = {f"4.3.1/{name}" for name in BATCH_SCENARIOS}
    encode = {"encode/encode-batch-timestamps-wide", "encode/encode-batch-headers"}
    for impl, cases, level in (
        ("java", produce | encode, "java"),
        ("faulty-ok", produce | encode, "java"),
        ("kafka-python", produce | encode, None),
        ("kit", encode, "java"),
    ):
        results = _results(batched, impl)
        assert {c for c, r in results.items() if r["status"] != "unsupported"} == cases, impl
        for case in cases:
            r = results[case]
            assert r["status"] == "pass", (impl, case, r["reason"], r["diff"])
            assert level is None or r["level"] == level, (impl, case, r["findings"])


@pytest.mark.oracle
@pytest.mark.capture
def test_a_32_bit_timestamp_delta_fails_the_produce_scenario(batched: dict[str, Any]) -> None:
    """The builder that writes timestamp deltas in 32 bits fails the produce scenario whose
    group spans more than 2^31 ms, on the batch as sent, not only the encoder's; the groups
    whose deltas fit pass."""
    results = _results(batched, "faulty-ts-delta-32")
    r = results["4.3.1/batch-timestamps-wide"]
    assert r["status"] == "fail", r
    assert any(" as sent (request " in line and "timestamp: plan=" in line for line in r["diff"])
    assert results["encode/encode-batch-timestamps-wide"]["status"] == "fail"
    for name in ("batch-many-records", "batch-headers", "batch-nulls-mixed"):
        assert results[f"4.3.1/{name}"]["status"] == "pass", results[f"4.3.1/{name}"]


@pytest.mark.oracle
@pytest.mark.capture
def test_a_split_group_fails_a_batch_call_and_is_a_linger_finding(
    batched: dict[str, Any],
) -> None:
    call, linger = _results(batched, "faulty-split"), _results(batched, "faulty-linger+split")
    for name in BATCH_SCENARIOS:
        r = call[f"4.3.1/{name}"]
        assert r["status"] == "fail" and "the adapter's batch call" in r["reason"], r
        r = linger[f"4.3.1/{name}"]
        assert r["status"] == "pass" and r["level"] == "wire", r
        assert any("the library's linger split them" in f for f in r["findings"]), r


@pytest.mark.oracle
@pytest.mark.capture
def test_a_library_that_cannot_batch_is_unsupported(batched: dict[str, Any]) -> None:
    results = _results(batched, "faulty-no-batching")
    for name in BATCH_SCENARIOS:
        r = results[f"4.3.1/{name}"]
        assert r["status"] == "unsupported" and "batching not supported" in r["reason"], r
    assert results["encode/encode-batch-headers"]["status"] == "pass"


# ----------------------------------------------------------------- the built-in adapters

PRODUCERS = registry.adapters(ROOT / "adapters", side="produce")


@pytest.fixture(scope="module")
def builtin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("builtin-producers") / "report.json"
    proc = _cli("--impl", "all", "-q", "--json", str(out))
    assert out.is_file(), proc.stderr[-4000:]
    report = json.loads(out.read_text())
    report["_exit"], report["_stdout"], report["_stderr"] = (
        proc.returncode,
        proc.stdout,
        proc.stderr,
    )
    return report


def test_the_built_in_producers() -> None:
    assert {a.name for a in PRODUCERS} >= {
        "java",
        "confluent-kafka",
        "kafka-python",
        "aiokafka",
        "franz-go",
        "sarama",
        "kafkajs",
        "kafka-protocol-rs",
        "kit",
    }


@pytest.mark.oracle
def test_every_built_in_producer_ran(builtin: dict[str, Any]) -> None:
    assert builtin["_exit"] == 0, builtin["_stdout"][-4000:] + builtin["_stderr"][-4000:]
    assert [i["name"] for i in builtin["implementations"]] == sorted(a.name for a in PRODUCERS)
    assert builtin["complete"]
    for impl in builtin["implementations"]:
        assert sum(impl["counts"].values()) == len(builtin["cases"]), impl["name"]
        assert impl["capabilities"]["declared"], impl["name"]


@pytest.mark.oracle
def test_java_passes_every_scenario(builtin: dict[str, Any]) -> None:
    java = next(i for i in builtin["implementations"] if i["name"] == "java")
    assert java["counts"]["pass"] == len(builtin["cases"]), [
        (r["case"], r["reason"])
        for r in builtin["results"]
        if r["impl"] == "java" and r["status"] != "pass"
    ]


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(a.name for a in PRODUCERS))
def test_every_divergence_is_classified(builtin: dict[str, Any], name: str) -> None:
    assert unexplained_and_stale(builtin, name) == ([], [])


@pytest.mark.oracle
def test_third_parties_really_diverge(builtin: dict[str, Any]) -> None:
    """Every third party differs from Java's bytes somewhere (a failure, or a scenario that
    does not reach ``java``: its findings say where), and ran something; Java and the kit's
    own builder reach ``java`` on every scenario they ran."""
    for impl in builtin["implementations"]:
        c, reached = impl["counts"], impl["levels"]
        ran = c["pass"] + c["fail"] + c["error"]
        if impl["name"] in ("java", "kit"):
            assert reached["java"] == ran, impl
            continue
        assert reached["java"] < ran, impl["name"]  # differs from Java somewhere
        assert impl["with_findings"] + c["fail"] + c["error"] > 0, impl["name"]
        assert c["unsupported"] < len(builtin["cases"]), impl["name"]  # and ran something


@pytest.mark.oracle
def test_published_producer_matrix_is_current(builtin: dict[str, Any]) -> None:
    matrix = ROOT / "docs" / "producer-matrix.md"
    published, fresh = published_and_fresh_counts(matrix, builtin)
    assert published == fresh, "run scripts/publish-producer-matrix"
    # and the scenarios reaching each level (none, delivery, wire, java) and with findings
    rows = re.findall(
        r"^\| (\S+) [^|]*\| [^|]*\|(?: \d+ \|){5} (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|",
        matrix.read_text(),
        re.M,
    )
    levels = {name: [int(x) for x in counts] for name, *counts in rows}
    assert levels == {
        i["name"]: [*i["levels"].values(), i["with_findings"]] for i in builtin["implementations"]
    }, "run scripts/publish-producer-matrix"
    assert (ROOT / "docs" / "producer-matrix.html").is_file()


def test_list_shows_the_producers() -> None:
    proc = _cli("--list", timeout=600)
    assert proc.returncode == 0, proc.stderr
    for a in PRODUCERS:
        assert a.name in proc.stdout
    assert Path(ROOT / "scripts" / "publish-producer-matrix").is_file()
