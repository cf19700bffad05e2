"""The broker profile (``conformance.broker``): what a Kafka broker answers to a Produce request.

Every expectation here comes from Kafka's own code, never from the model under test:

* ``corpora/produce/`` holds the crafted produce cases with the answers of the broker oracle
  (each supported version's own ``UnifiedLog``/``LogValidator`` in a JVM,
  ``scripts/make-produce-corpus``); the model must give the same answers, and (``oracle``
  mark) the oracle must still give the stored ones.
* Hypothesis properties draw correct producer batches and arbitrary bytes; accepted batches
  are checked against what went into the writer, and (``oracle`` mark) every drawn request
  against the broker oracle of each version.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import decode
from conformance import strategies as kst
from conformance.broker import VERSIONS, PartitionLog
from conformance.broker.codes import CODES
from conformance.broker.compare import diff_verdicts
from conformance.cli import main
from conformance.corpus.produce.cases import NOW, cases
from conformance.corpus.produce.store import ask_oracle, judge, read_corpus
from conformance.stream.findings import FINDING_CODES

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpora" / "produce"
SCHEMA = json.loads((ROOT / "conformance" / "schema" / "decode-result.schema.json").read_text())
#: one validator for every document (``jsonschema.validate`` builds one on each call)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
STORED = read_corpus(CORPUS)
BY_NAME = {s.case.name: s for s in STORED}
PAIRS = [(s.case.name, v) for s in STORED for v in s.case.versions]
#: a Produce version every supported broker speaks (2.8: 0-9, 3.9: 0-11, 4.3: 3-13)
V9 = 9


# ------------------------------------------------------------------ the stored corpus


def test_corpus_is_what_the_writers_make() -> None:
    """corpora/produce/ holds exactly the cases cases.py builds today (same bytes, same
    settings): a writer change that alters a case needs scripts/make-produce-corpus."""
    built = {c.name: c for c in cases()}
    assert set(built) == set(BY_NAME)
    for name, c in built.items():
        assert BY_NAME[name].case == c, name


def test_corpus_covers_every_version_and_outcome() -> None:
    answers = [a for s in STORED for v in s.expected.values() for a in v]
    errors = {a["response"]["errorName"] for a in answers}
    assert {
        "NONE",
        "INVALID_RECORD",
        "CORRUPT_MESSAGE",
        "INVALID_TIMESTAMP",
        "MESSAGE_TOO_LARGE",
        "UNSUPPORTED_COMPRESSION_TYPE",
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
        "INVALID_PRODUCER_EPOCH",
        "UNKNOWN_SERVER_ERROR",
    } <= errors
    for v in VERSIONS:
        assert sum(v in s.expected for s in STORED) >= 40, v


@pytest.mark.parametrize(("name", "version"), PAIRS, ids=[f"{n}@{v}" for n, v in PAIRS])
def test_model_answers_as_kafka(name: str, version: str) -> None:
    stored = BY_NAME[name]
    ours = judge(stored.case, version)
    theirs = stored.expected[version]
    assert len(ours) == len(theirs)
    for i, (expected, actual) in enumerate(zip(theirs, ours)):
        assert diff_verdicts(expected, actual) == [], f"{name} on {version}, request {i}"


@pytest.mark.oracle
@pytest.mark.parametrize("version", list(VERSIONS))
def test_oracle_still_answers_as_stored(version: str) -> None:
    """The stored answers are current: the oracle of each version gives them again."""
    from conformance.jvm.broker_oracle import BrokerOracle

    with BrokerOracle(version) as oracle:
        for s in STORED:
            if version in s.case.versions:
                answers = ask_oracle(oracle, s.case)
                for i, (stored, fresh) in enumerate(zip(s.expected[version], answers)):
                    assert diff_verdicts(stored, fresh) == [], f"{s.case.name}, request {i}"


# ------------------------------------------------------------------ properties


def _produce(data: bytes, version: str, **kw: Any) -> dict[str, Any]:
    log = PartitionLog(kw.pop("topic", {}), version=version)
    return log.produce(data, produce_version=kw.pop("produce_version", V9), now=NOW, **kw).to_dict()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=kst.produce_batches(NOW), version=st.sampled_from(list(VERSIONS)))
def test_a_correct_producer_batch_is_accepted_as_sent(case: kst.BatchCase, version: str) -> None:
    doc = _produce(case.data, version, leader_epoch=7)
    assert doc["response"]["errorName"] == "NONE", doc
    assert doc["response"]["baseOffset"] == "0"
    stored = decode(base64.b64decode(doc["stored"]))
    assert stored.outcome == "ok"
    (batch,) = stored.batches
    assert batch.header.partition_leader_epoch == 7
    got = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in stored.records]
    sent = [(i, r.timestamp, r.key, r.value, r.headers) for i, r in enumerate(case.records)]
    assert got == sent


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.one_of(
        st.binary(max_size=300),
        kst.produce_batches(NOW, max_records=4).map(lambda c: c.data),
    ),
    cut=st.integers(0, 400),
    flip=st.integers(0, 400),
    version=st.sampled_from(list(VERSIONS)),
    produce_version=st.sampled_from([0, 2, 3, 6, 7, 9, 11, 13]),
)
def test_any_bytes_get_a_verdict(
    data: bytes, cut: int, flip: int, version: str, produce_version: int
) -> None:
    """Truncated, bit-flipped or random bytes: a documented verdict, never a traceback."""
    mutated = bytearray(data[: max(cut, 1)])
    if mutated and flip < len(mutated):
        mutated[flip] ^= 0x41
    log = PartitionLog({}, version=version)
    verdict = log.produce(bytes(mutated), produce_version=produce_version, now=NOW)
    doc = verdict.to_dict()
    assert doc["response"]["errorName"] in CODES
    if doc["stored"] is not None:  # stored only when accepted (v0-v2: empty data is too)
        assert doc["response"]["errorName"] == "NONE"
    result = decode(bytes(mutated), profile="broker")
    VALIDATOR.validate(result.to_dict())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=kst.produce_batches(NOW, idempotent=True), version=st.sampled_from(list(VERSIONS)))
def test_an_idempotent_retry_is_a_duplicate(case: kst.BatchCase, version: str) -> None:
    log = PartitionLog({}, version=version)
    first = log.produce(case.data, produce_version=V9, now=NOW)
    again = log.produce(case.data, produce_version=V9, now=NOW)
    assert first.response.error == "NONE" and again.response.error == "NONE"
    assert again.duplicate and again.stored is None
    assert again.response.base_offset == first.response.base_offset == 0


# ---- the same properties against Kafka itself (each version's broker oracle)


@pytest.fixture(scope="module")
def oracles() -> Iterator[dict[str, Any]]:
    from conformance.jvm.broker_oracle import BrokerOracle

    running = {v: BrokerOracle(v) for v in VERSIONS}
    try:
        yield running
    finally:
        for o in running.values():
            o.close()


def _both(oracles: dict[str, Any], version: str, requests: list[bytes], **kw: Any) -> None:
    """Every request, in order on one fresh partition, answered alike by model and Kafka."""
    oracle = oracles[version]
    oracle.reset("prop")
    log = PartitionLog(kw.get("topic", {}), version=version)
    for i, data in enumerate(requests):
        ours = log.produce(data, produce_version=V9, now=NOW).to_dict()
        theirs = oracle.produce(
            data, session="prop", produce_version=V9, topic=kw.get("topic", {}), now=NOW
        )
        assert diff_verdicts(theirs, ours) == [], (version, i, data.hex())


@pytest.mark.oracle
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=kst.produce_batches(NOW, max_records=8),
    version=st.sampled_from(list(VERSIONS)),
    topic=st.sampled_from(
        [{}, {"compression.type": "gzip"}, {"message.timestamp.type": "LogAppendTime"}]
    ),
)
def test_kafka_accepts_what_the_model_accepts(
    oracles: dict[str, Any], case: kst.BatchCase, version: str, topic: dict[str, str]
) -> None:
    _both(oracles, version, [case.data], topic=topic)


@pytest.mark.oracle
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=kst.produce_batches(NOW, max_records=4, idempotent=True),
    version=st.sampled_from(list(VERSIONS)),
    cut=st.integers(0, 200),
    flip=st.integers(0, 200),
)
def test_kafka_and_the_model_agree_on_retries_and_damage(
    oracles: dict[str, Any], case: kst.BatchCase, version: str, cut: int, flip: int
) -> None:
    damaged = bytearray(case.data[: max(cut, 1)])
    if flip < len(damaged):
        damaged[flip] ^= 0x41
    _both(oracles, version, [case.data, case.data, bytes(damaged)])


# ------------------------------------------------------------------ the command line


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_cli_accepts_and_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok = _write(tmp_path, "ok.bin", BY_NAME["req-ok"].case.requests[0])
    bad = _write(tmp_path, "crc.bin", BY_NAME["log-bad-crc"].case.requests[0])
    now = ["--now", str(NOW)]
    assert main(["decode", "--profile", "broker", *now, ok]) == 0
    out = capsys.readouterr().out
    assert "NONE, appended at base offset 0" in out
    assert main(["decode", "--profile", "broker", *now, bad]) == 1
    out = capsys.readouterr().out
    assert "CORRUPT_MESSAGE (2), partition error" in out
    assert "CorruptRecordException: Record is corrupt (stored crc = 12345)" in out
    # the inputs are produced in order to one partition: offsets continue
    assert main(["decode", "--profile", "broker", "--json", *now, ok, ok]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [d["broker"]["response"]["baseOffset"] for d in lines] == ["0", "3"]
    for d in lines:
        VALIDATOR.validate(d)


def test_cli_accepted_but_unreadable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """lz4 with an understated record length: stored in place by 3.x/4.x brokers (their
    skipping iterator never checks lengths; 2.8's does), yet a consumer raises on it: exit 3."""
    name = "parse-lz4-length-understated-in-place"
    answers = {v: a[0]["response"]["errorName"] for v, a in BY_NAME[name].expected.items()}
    assert answers == {"2.8.2": "INVALID_RECORD", "3.9.2": "NONE", "4.3.1": "NONE"}
    data = _write(tmp_path, "lz4.bin", BY_NAME[name].case.requests[0])
    assert main(["decode", "--profile", "broker", "--now", str(NOW), data]) == 3
    assert "consumer error" in capsys.readouterr().out


def test_cli_versions_and_topics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keyless = _write(tmp_path, "k.bin", BY_NAME["rec-compacted-keyless"].case.requests[0])
    args = ["decode", "--profile", "broker", "--json", "--now", str(NOW)]
    assert main([*args, "--topic-config", "cleanup.policy=compact", keyless]) == 1
    doc = json.loads(capsys.readouterr().out)["broker"]
    assert doc["response"] == BY_NAME["rec-compacted-keyless"].expected["4.3.1"][0]["response"]
    assert [e["batchIndex"] for e in doc["response"]["recordErrors"]] == [0, 2]
    assert main([*args, "--broker-version", "2.8.2", "--produce-version", "12", keyless]) == 1
    doc = json.loads(capsys.readouterr().out)["broker"]
    assert (doc["broker"], doc["scope"], doc["response"]["errorName"]) == (
        "2.8.2",
        "request",
        "INVALID_REQUEST",
    )


@pytest.mark.parametrize(
    "bad",
    [
        ["--topic-config", "cleanup.policy"],
        ["--topic-config", "no.such.config=1"],
        ["--broker-version", "9.9.9"],
        ["--broker-version", "2.8.2", "--topic-config", "message.timestamp.after.max.ms=5"],
        ["--as", "file"],
    ],
)
def test_cli_usage_errors(
    bad: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ok = _write(tmp_path, "ok.bin", BY_NAME["req-ok"].case.requests[0])
    try:
        code = main(["decode", "--profile", "broker", *bad, ok])
    except SystemExit as e:  # argparse: an unknown choice
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert err and "Traceback" not in err


# ------------------------------------------------------------------ what is let through


@pytest.mark.parametrize(
    ("name", "finding"),
    [
        ("rewrite-max-timestamp-wrong", "max-timestamp-mismatch"),
        ("rewrite-delta-gap-uncompressed", "last-offset-delta-mismatch"),
        ("rewrite-reserved-bits-kept", "attributes-unused-bits"),
    ],
)
def test_strict_flags_what_the_broker_lets_through(name: str, finding: str) -> None:
    """Accepted by every broker (stored answers), yet the strict profile names the flaw."""
    stored = BY_NAME[name]
    for answers in stored.expected.values():
        assert answers[0]["response"]["errorName"] == "NONE"
    assert finding in FINDING_CODES
    found = decode(stored.case.requests[0], profile="strict").findings
    assert finding in {f.code for f in found}
