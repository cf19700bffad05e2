"""``kafka-conformance check-producer`` (conformance.producer_check): producers and encoders
judged by a real broker the kit starts, and Kafka's consumer.

* the judgement on its own (no broker): batches made with the kit's real writers, with a fault
  knob each, against an encode scenario;
* one real run (a Kafka 4.3.1 JVM broker started and stopped by the kit) of the producers of
  tests/adapters/producer_faults.py: the correct one passes, each planted fault fails with the
  diff line that names it, the hostile ones (hang, crash, flood, garbage, wrong document) get an
  error verdict and the run completes with nothing left behind;
* every built-in producer and encoder adapter in one ``--impl all`` run: Java's KafkaProducer
  passes every scenario, every third party's divergences are classified
  (``producer-divergences.toml``) and none is stale, each third party diverges somewhere, and
  the published matrix (docs/producer-matrix.md) has this run's counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, processes, published_and_fresh_counts, unexplained_and_stale

from conformance import decode
from conformance.broker.config import DEFAULT_MAX_MESSAGE_BYTES
from conformance.codecs import CODECS
from conformance.harness import registry
from conformance.producer_check.judge import judge_encode
from conformance.producer_check.run import read_producer_capabilities
from conformance.producer_check.scenarios import PRODUCE, scenarios, write_plan
from conformance.wire.batch import v2_attributes, write_batch_v2
from conformance.wire.builder import BatchBuilder
from conformance.wire.layout import TimestampType
from conformance.wire.record import write_record_v2

FAULTS = [sys.executable, str(ROOT / "tests" / "adapters" / "producer_faults.py")]
MARK = ("kafka-conformance-broken-adapter", "tests/adapters/")
SCENARIO = {s.name: s for s in scenarios()}


def _cli(*args: str, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", "check-producer", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        env={**os.environ, "KAFKA_CONFORMANCE_ROOT": str(ROOT)},
    )


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
        status, headline, diff = judge_encode(SCENARIO[name], _kit_batch(name), "4.3.1")
        assert (status, diff) == ("pass", []), headline


@pytest.mark.parametrize(
    ("knobs", "expected"),
    [
        ({"last_offset_delta": 0}, "lastOffsetDelta 0, expected 19"),
        ({"max_timestamp": -1}, "maxTimestamp -1, expected"),
        ({"crc": 7}, "Record is corrupt"),
        ({"attributes": 0}, "compression none, expected gzip"),
        ({"base_offset": 5}, "baseOffset 5, expected 0"),
        ({"partition_leader_epoch": 0}, "partitionLeaderEpoch 0, expected -1"),
        ({"producer_id": 9}, "producerId 9, expected -1"),
    ],
)
def test_each_header_fault_is_named(knobs: dict[str, Any], expected: str) -> None:
    status, _, diff = judge_encode(
        SCENARIO["encode-codec-gzip"], _kit_batch("encode-codec-gzip", **knobs), "4.3.1"
    )
    assert status == "fail"
    assert any(expected in line for line in diff), diff


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
    status, _, diff = judge_encode(s, data, "4.3.1")
    assert status == "fail"
    assert f"baseTimestamp {smallest}, expected {first} (the first record's) (at batch 0)" in diff


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


# ------------------------------------------------------------ one real broker, faulty adapters

#: behaviour -> (scenario, a line its diff or reason must contain)
PLANTED = {
    "last-offset-delta": ("4.3.1/codec-gzip", "lastOffsetDelta 0, expected 19"),
    "max-timestamp": ("4.3.1/codec-gzip", "maxTimestamp -1"),
    "bad-crc": ("4.3.1/codec-gzip", "CORRUPT_MESSAGE"),
    "no-compression": ("4.3.1/codec-gzip", "compression none, expected gzip"),
    "null-header-empty": (
        "4.3.1/headers-shapes",
        "'value': ''}], expected [{'key': 'null', 'value': None}]",
    ),
    "duplicate": ("4.3.1/codec-gzip", "40 records read back, 20 expected"),
    "fnv-partitioner": ("4.3.1/keyed-partitions", "expected"),
    "lie-offsets": ("4.3.1/codec-gzip", "record 0: reported partition 0 offset 1, stored at"),
}
HOSTILE = {
    "hang": "timeout",
    "crash": "SIGSEGV",
    "flood": "output over",
    "garbage": "invalid JSON",
    "wrong": "invalid result document",
}


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("faulty") / "report.json"
    before = set(processes(("kafka.Kafka ", *MARK)))
    args = []
    for behaviour in ["ok", *PLANTED, *HOSTILE]:
        args += ["--cmd", " ".join([*FAULTS, behaviour])]
    for glob in ("codec-gzip", "headers-shapes", "keyed-partitions", "encode-codec-gzip"):
        args += ["--scenarios", glob]
    keep = out.parent / "keep"
    proc = _cli(
        *args, "-q", "--timeout", "20", "--json", str(out), "--jobs", "2", "--keep", str(keep)
    )
    assert out.is_file(), proc.stderr[-4000:]
    report = json.loads(out.read_text())
    report["_exit"], report["_stderr"], report["_keep"] = proc.returncode, proc.stderr, keep
    report["_left"] = {
        p: c for p, c in processes(("kafka.Kafka ", *MARK)).items() if p not in before
    }
    return report


def _results(report: dict[str, Any], impl: str) -> dict[str, dict[str, Any]]:
    return {r["case"]: r for r in report["results"] if r["impl"] == impl}


def test_a_correct_producer_passes_on_the_real_broker(faulty: dict[str, Any]) -> None:
    assert faulty["_exit"] == 1  # the faults are unexplained divergences
    assert {r["status"] for r in _results(faulty, "faulty-ok").values()} == {"pass"}


@pytest.mark.parametrize("behaviour", list(PLANTED))
def test_each_planted_fault_is_found(faulty: dict[str, Any], behaviour: str) -> None:
    case, needle = PLANTED[behaviour]
    r = _results(faulty, f"faulty-{behaviour}")[case]
    assert r["status"] == "fail", r
    assert any(needle in line for line in r["diff"]), r["diff"]


@pytest.mark.parametrize("behaviour", list(HOSTILE))
def test_hostile_producers_get_an_error_verdict(faulty: dict[str, Any], behaviour: str) -> None:
    results = _results(faulty, f"faulty-{behaviour}")
    produce = {c: r for c, r in results.items() if not c.startswith("encode/")}
    assert len(produce) == 3
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


def test_nothing_is_left_behind(faulty: dict[str, Any]) -> None:
    """No adapter process (nor a child of the hanging one) and no broker is left."""
    assert faulty["_exit"] in (0, 1)
    assert faulty["_left"] == {}


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
    for impl in builtin["implementations"]:
        if impl["name"] in ("java", "kit"):
            continue
        c = impl["counts"]
        assert c["fail"] + c["error"] > 0, impl["name"]  # differs from Java somewhere
        assert c["unsupported"] < len(builtin["cases"]), impl["name"]  # and ran something


@pytest.mark.oracle
def test_published_producer_matrix_is_current(builtin: dict[str, Any]) -> None:
    published, fresh = published_and_fresh_counts(ROOT / "docs" / "producer-matrix.md", builtin)
    assert published == fresh, "run scripts/publish-producer-matrix"
    assert (ROOT / "docs" / "producer-matrix.html").is_file()


def test_list_shows_the_producers() -> None:
    proc = _cli("--list", timeout=600)
    assert proc.returncode == 0, proc.stderr
    for a in PRODUCERS:
        assert a.name in proc.stdout
    assert Path(ROOT / "scripts" / "publish-producer-matrix").is_file()
