"""``corpora/produce-golden/``: the kit's broker model against what real brokers answered.

Offline (no JVM): every stored case (the crafted produce cases and a real client's batches,
sent as real Produce requests to real 2.8.2 / 3.9.2 / 4.3.1 brokers by
``scripts/capture-produce-golden``) is judged by the model (``judge_golden``: a fresh
``PartitionLog`` per case, the recorded Produce version, clock and transactional id, leader
epoch 0) on the response fields the Produce version carries and on the stored batches fetched
back. Marked ``capture``: a small subset captured live from a real 3.9.2 broker.
"""

from __future__ import annotations

import base64
import dataclasses
from pathlib import Path

import pytest

from conformance.broker.exchange import carried
from conformance.capture.produce import DEFAULT_BROKERS, capture_golden, retime
from conformance.capture.produce_wire import read_produce_response, stored_by_request
from conformance.codecs.zstd import LibzstdUnavailable
from conformance.corpus.produce.golden import (
    GoldenCase,
    judge_golden,
    read_golden,
    read_golden_corpus,
)

ROOT = Path(__file__).resolve().parents[1] / "corpora" / "produce-golden"
CORPUS = read_golden_corpus(ROOT) if ROOT.is_dir() else {}
CASES = [(b, c) for b, (_m, cs) in CORPUS.items() for c in cs]

#: (broker id, case) -> why the model and the real broker differ; strict: a fix shows up.
#: Empty: the crafted transactional cases the 3.6+ brokers refused (KIP-890 verification,
#: COORDINATOR_NOT_AVAILABLE: the capture runs no transaction) are judged with that answer
#: (case.json "coordinator").
KNOWN: dict[tuple[str, str], str] = {}

#: captured live by the ``capture`` test: the request checks, a closed connection, the clock
#: (re-timed records, LogAppendTime), recompression, producer state, a real client
LIVE = (
    "req-ok",
    "req-v12",
    "log-bad-crc",
    "rec-ts-too-new",
    "rewrite-log-append-time",
    "rewrite-to-gzip",
    "pid-duplicate",
    "client-zstd",
    "client-idempotent",
)


@pytest.fixture(scope="module", autouse=True)
def _kafka2_zstd() -> None:
    """Kafka 2.x's zstd is judged with its own libzstd, from the Kafka 2.8.2 jars in .cache/
    (without them, the 2.8.2 zstd cases skip)."""
    from conformance.jvm.kafka_jars import use_kafka2_zstd

    try:
        use_kafka2_zstd()
    except Exception:  # noqa: BLE001 - no jars: LibzstdUnavailable below
        pass


def _params() -> list[object]:
    out = []
    for b, c in CASES:
        why = KNOWN.get((b, c.name))
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(c, id=f"{b}/{c.name}", marks=marks))
    return out


def test_the_corpus_is_there() -> None:
    assert set(DEFAULT_BROKERS) <= set(CORPUS), f"captured: {sorted(CORPUS)}"
    for broker_id, (manifest, cases) in CORPUS.items():
        dirs = {d.name for d in (ROOT / broker_id).iterdir() if d.is_dir()}
        assert dirs == {c.name for c in cases}, broker_id
        assert manifest["broker"]["id"] == broker_id
        assert not manifest["failed"], manifest["failed"]
        assert {c.broker_id for c in cases} == {broker_id}
        assert any(c.name.startswith("client-") for c in cases)
    size = sum(f.stat().st_size for f in ROOT.rglob("*") if f.is_file())
    assert size < 2 << 20, f"{size} bytes"


@pytest.mark.parametrize("case", _params())
def test_the_model_agrees_with_the_real_broker(case: GoldenCase) -> None:
    try:
        diffs = judge_golden(case)
    except LibzstdUnavailable as e:
        pytest.skip(str(e))
    assert not diffs, "\n".join(diffs)


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{b}/{c.name}") for b, c in CASES])
def test_the_answers_are_the_recorded_bytes(case: GoldenCase) -> None:
    """answer.json says what the stored frames and the fetched log say."""
    for r in case.requests:
        if r.response_frame is None:
            assert r.response is None
        else:
            assert read_produce_response(r.response_frame, r.produce_version) == r.response
    if case.fetched:
        assert case.fetch_records is not None
        stored = stored_by_request(case.fetch_records, [r.response for r in case.requests])
        assert stored == [r.stored for r in case.requests]


def _case(broker_id: str, name: str) -> GoldenCase:
    found = [c for b, c in CASES if b == broker_id and c.name == name]
    if not found:
        pytest.skip(f"{broker_id}/{name} not captured")
    return found[0]


def test_a_wrong_expectation_is_caught() -> None:
    """The judge can fail: every tampered answer below is a difference."""
    case = _case("kafka-3.9.2-kraft", "req-ok")
    assert judge_golden(case) == []
    r = case.requests[0]
    assert r.response is not None and r.stored is not None

    def with_request(**changes: object) -> GoldenCase:
        return dataclasses.replace(case, requests=(dataclasses.replace(r, **changes),))

    offset = {**r.response, "baseOffset": "1"}
    assert any("baseOffset" in d for d in judge_golden(with_request(response=offset)))
    error = {**r.response, "errorCode": 87, "errorName": "INVALID_RECORD"}
    assert len(judge_golden(with_request(response=error))) == 2
    stored = bytearray(base64.b64decode(r.stored))
    stored[-1] ^= 1
    wrong = base64.b64encode(bytes(stored)).decode()
    assert any("stored" in d for d in judge_golden(with_request(stored=wrong)))
    assert judge_golden(with_request(response=None))  # "closed" where the broker answered
    # a clock outside the window is not searched: LogAppendTime needs the broker's clock
    lat = _case("kafka-3.9.2-kraft", "rewrite-log-append-time")
    q = lat.requests[0]
    late = dataclasses.replace(q, now=q.now - 60_000, received_at=q.now - 59_000)
    assert judge_golden(dataclasses.replace(lat, requests=(late,)))
    # not fetched: the stored bytes are not compared
    assert judge_golden(dataclasses.replace(with_request(stored=wrong), fetched=False)) == []


def test_carried_fields_follow_the_produce_version() -> None:
    response = {
        "errorCode": 0,
        "errorName": "NONE",
        "errorMessage": None,
        "baseOffset": "0",
        "logAppendTimeMs": "-1",
        "logStartOffset": "0",
        "recordErrors": [],
    }
    assert set(carried(response, 1)) == {"errorCode", "errorName", "baseOffset"}
    assert set(carried(response, 2)) == {"errorCode", "errorName", "baseOffset", "logAppendTimeMs"}
    assert set(carried(response, 7)) == set(response) - {"errorMessage", "recordErrors"}
    assert carried(response, 8) == response


def test_retime_moves_the_timestamps_and_reseals() -> None:
    from conformance import decode
    from conformance.corpus.produce.cases import cases
    from conformance.wire.batch import RecordBatchV2

    case = next(c for c in cases() if c.name == "rec-ts-too-new")
    moved = retime(case.requests[0], 1000)
    before, after = decode(case.requests[0]).to_dict(), decode(moved).to_dict()
    assert after["outcome"] == "ok" and RecordBatchV2(moved).is_valid()
    shifted = int(after["batches"][0]["maxTimestamp"]) - int(before["batches"][0]["maxTimestamp"])
    assert shifted == 1000
    for a, b in zip(before["batches"][0]["records"], after["batches"][0]["records"], strict=True):
        assert int(b["timestamp"]) == int(a["timestamp"]) + 1000
    assert retime(b"\x00" * 5, 1000) == b"\x00" * 5  # not a batch: unchanged


# ------------------------------------------------------------------------------------------
# a real broker


@pytest.mark.capture
def test_live_capture_agrees_with_the_model(tmp_path: Path) -> None:
    result = capture_golden("kafka-3.9.2-kraft", tmp_path, only=LIVE, progress=lambda message: None)
    assert not result.failed, result.failed
    assert sorted(result.captured) == sorted(LIVE)
    assert not result.disagreements, result.disagreements
    manifest, stored = read_golden(tmp_path / "kafka-3.9.2-kraft")
    assert manifest["cases"] == result.captured
    closed = [c for c in stored if c.name == "req-v12"][0]
    assert closed.requests[0].response is None  # Produce v12: 3.9.2 closes the connection
    for case in stored:
        assert judge_golden(case) == [], case.name


def test_the_clock_is_found_beside_a_difference_no_clock_explains() -> None:
    """A real LogAppendTime answer (3.9.2, ``rewrite-log-append-time``) whose broker clock lies
    a few milliseconds after the request's ``now``, with one field the clock cannot change
    tampered (its log start offset): the judge names that field alone, not the timestamps of
    a clock it did not find (the millisecond with the fewest differences is the clock)."""
    lat = _case("kafka-3.9.2-kraft", "rewrite-log-append-time")
    q = lat.requests[0]
    assert q.response is not None
    clock = int(q.response["logAppendTimeMs"])
    early = dataclasses.replace(q, now=clock - 3, received_at=clock + 2)
    assert judge_golden(dataclasses.replace(lat, requests=(early,))) == []
    tampered = dataclasses.replace(early, response={**q.response, "logStartOffset": "7"})
    diffs = judge_golden(dataclasses.replace(lat, requests=(tampered,)))
    assert len(diffs) == 1 and "logStartOffset" in diffs[0], diffs
