"""Transaction verification (KIP-890, 3.6+): the transaction coordinator's answer.

The model's ``coordinator`` (``PartitionLog.produce``, ``ProduceContext``, ``decode --profile
broker --coordinator``) against the broker oracle's stored answers (``corpora/produce/verify-*``,
each case with its coordinator in case.json) and the real brokers' (``corpora/produce-golden/``,
whose 3.6+ cases record COORDINATOR_NOT_AVAILABLE: the capture runs no transaction).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from conformance.broker import PartitionLog
from conformance.broker.codes import COORDINATOR_ERRORS
from conformance.broker.compare import diff_verdicts
from conformance.broker.profile import ProduceContext, decode
from conformance.cli import main
from conformance.corpus.produce.cases import NOW
from conformance.corpus.produce.golden import judge_golden, read_golden
from conformance.corpus.produce.store import judge, read_corpus

ROOT = Path(__file__).resolve().parent.parent
BY_NAME = {s.case.name: s for s in read_corpus(ROOT / "corpora" / "produce")}
GOLDEN = ROOT / "corpora" / "produce-golden"
UNABLE = (
    "Unable to verify the partition has been added to the transaction. Underlying error: "
    "COORDINATOR_NOT_AVAILABLE"
)


def _errors(name: str, version: str) -> list[str]:
    return [a["response"]["errorName"] for a in BY_NAME[name].expected[version]]


def test_the_stored_oracle_answers_show_the_verification() -> None:
    """What Kafka's own classes answered (the oracle), per version: 2.8.2 asks no one."""
    name = "verify-unavailable-then-plain"
    assert _errors(name, "2.8.2") == ["NONE", "INVALID_TXN_STATE"]
    for v in ("3.9.2", "4.3.1"):
        first, second = BY_NAME[name].expected[v]
        assert first["response"]["errorName"] == "NOT_ENOUGH_REPLICAS"
        assert first["response"]["errorMessage"] == UNABLE
        assert (first["response"]["logStartOffset"], first["stored"]) == ("-1", None)
        assert second["response"]["errorName"] == "OUT_OF_ORDER_SEQUENCE_NUMBER"
        assert second["exception"]["message"].endswith(
            "2 (incoming seq. number), 0 (earliest seen sequence)"
        )
    assert _errors("verify-control-unavailable", "2.8.2") == ["INVALID_RECORD"]
    assert _errors("verify-control-unavailable", "4.3.1") == ["NOT_ENOUGH_REPLICAS"]
    assert _errors("verify-abortable-v9", "3.9.2") == ["INVALID_TXN_STATE"]
    assert _errors("verify-abortable-v11", "3.9.2") == ["TRANSACTION_ABORTABLE"]
    assert _errors("verify-concurrent-v11", "4.3.1") == ["NOT_ENOUGH_REPLICAS"]
    assert _errors("verify-concurrent-v12", "4.3.1") == ["CONCURRENT_TRANSACTIONS"]
    assert _errors("verify-fenced", "4.3.1") == ["INVALID_PRODUCER_EPOCH"]
    assert _errors("verify-unavailable-then-lower", "3.9.2") == [
        "NOT_ENOUGH_REPLICAS",
        "NONE",
        "NONE",
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    ]


@pytest.mark.parametrize("version", ["3.9.2", "4.3.1"])
def test_the_coordinator_answer_matters(version: str) -> None:
    """The same bytes with the coordinator's NONE: the model must not give the stored
    (unverified) answers, and given the case's answer it must."""
    case = BY_NAME["verify-unavailable-then-plain"].case
    expected = BY_NAME["verify-unavailable-then-plain"].expected[version]
    assert all(diff_verdicts(e, a) == [] for e, a in zip(expected, judge(case, version)))
    verified = judge(dataclasses.replace(case, coordinator="NONE"), version)
    assert [a["response"]["errorName"] for a in verified] == ["NONE", "INVALID_TXN_STATE"]
    assert any(diff_verdicts(e, a) for e, a in zip(expected, verified))


def test_the_verification_state_stays_until_a_transactional_append() -> None:
    """A verification that failed leaves its state; a verified transactional append clears it."""
    txn, plain = BY_NAME["verify-unavailable-then-plain"].case.requests
    log = PartitionLog(version="3.9.2")
    kw = {"produce_version": 9, "now": NOW}
    assert log.produce(txn, coordinator="NOT_COORDINATOR", **kw).response.error == (
        "NOT_ENOUGH_REPLICAS"
    )
    assert set(log.producers.verifications) == {1000}
    assert log.produce(txn, **kw).response.error == "NONE"  # verified now: appended
    assert log.producers.verifications == {}
    assert log.produce(plain, **kw).response.error == "INVALID_TXN_STATE"  # txn open


def test_no_effect_on_2_8() -> None:
    txn = BY_NAME["verify-unavailable"].case.requests[0]
    for coordinator in COORDINATOR_ERRORS:
        verdict = PartitionLog(version="2.8.2").produce(
            txn, produce_version=9, now=NOW, coordinator=coordinator
        )
        assert verdict.response.error == "NONE", coordinator


def test_unknown_coordinator_errors_are_refused() -> None:
    with pytest.raises(ValueError, match="NO_SUCH_ERROR"):
        ProduceContext(coordinator="NO_SUCH_ERROR")
    with pytest.raises(ValueError, match="known: NONE, COORDINATOR_NOT_AVAILABLE"):
        PartitionLog().produce(b"", produce_version=9, now=NOW, coordinator="none")


def test_decode_carries_the_coordinator() -> None:
    txn = BY_NAME["verify-unavailable"].case.requests[0]
    ctx = ProduceContext(
        version="4.3.1", produce_version=9, now=NOW, coordinator="INVALID_TXN_STATE"
    )
    verdict = decode(txn, profile="broker", produce=ctx).broker
    assert verdict is not None
    assert (verdict.response.error, verdict.response.error_message) == (
        "INVALID_TXN_STATE",
        "Partition was not added to the transaction",
    )


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_cli_coordinator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    txn, plain = (
        _write(tmp_path, f"{i}.bin", r)
        for i, r in enumerate(BY_NAME["verify-unavailable-then-plain"].case.requests)
    )
    args = ["decode", "--profile", "broker", "--json", "--now", str(NOW), "--broker-version"]
    coordinator = ["--coordinator", "COORDINATOR_NOT_AVAILABLE"]
    assert main([*args, "3.9.2", *coordinator, txn, plain]) == 1
    docs = [json.loads(x)["broker"] for x in capsys.readouterr().out.splitlines()]
    assert [d["response"]["errorName"] for d in docs] == [
        "NOT_ENOUGH_REPLICAS",
        "OUT_OF_ORDER_SEQUENCE_NUMBER",
    ]
    assert docs[0]["response"]["errorMessage"] == UNABLE
    assert main([*args, "3.9.2", txn]) == 0  # default NONE: verified, appended
    capsys.readouterr()
    assert main([*args, "2.8.2", *coordinator, txn]) == 0  # 2.8 asks no one
    capsys.readouterr()


@pytest.mark.parametrize("name", ["NO_SUCH_ERROR", "coordinator_not_available"])
def test_cli_refuses_an_unknown_coordinator_error(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    txn = _write(tmp_path, "t.bin", BY_NAME["verify-unavailable"].case.requests[0])
    assert main(["decode", "--profile", "broker", "--coordinator", name, txn]) == 2
    err = capsys.readouterr().err
    assert f"coordinator error {name!r}" in err and "COORDINATOR_NOT_AVAILABLE" in err
    assert "Traceback" not in err


@pytest.mark.skipif(not GOLDEN.is_dir(), reason="no golden corpus")
@pytest.mark.parametrize("broker_id", ["kafka-3.9.2-kraft", "kafka-4.3.1-kraft"])
def test_golden_needs_the_recorded_coordinator(broker_id: str) -> None:
    """The real brokers' answers agree with the model only with the coordinator answer the
    capture recorded (case.json "coordinator")."""
    _, golden = read_golden(GOLDEN / broker_id)
    case = next(c for c in golden if c.name == "pid-txn-then-plain")
    assert case.coordinator == "COORDINATOR_NOT_AVAILABLE"
    assert judge_golden(case) == []
    verified = dataclasses.replace(case, meta={**case.meta, "coordinator": "NONE"})
    assert judge_golden(verified) != []
