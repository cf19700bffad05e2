"""``corpora/produce/``: the crafted produce cases with the broker oracle's answers.

==============================  ===========================================================
file                            content
==============================  ===========================================================
``<case>/request-<i>.bin``      the i-th partition payload, produced in order
``<case>/case.json``            name, description, topic configuration, Produce version,
                                the broker's clock, leader epoch, inter-broker protocol,
                                the transaction coordinator's answer (``coordinator``),
                                the broker versions it applies to, sha256 of each request
``<case>/expected.json``        per broker version, the oracle's answer to each request
                                (``scope``, ``response``, ``exception``, ``stored``)
``manifest.json``               the cases, the oracle's Kafka versions, how it was made
==============================  ===========================================================

Expectations come only from the broker oracle (``conformance.jvm.broker_oracle``: each
version's own ``UnifiedLog``); :func:`judge` gives the kit's answers, compared with
``broker.compare.diff_verdicts``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from conformance.broker.log import PartitionLog
from conformance.corpus.produce.cases import ProduceCase

__all__ = ["FORMAT", "StoredCase", "judge", "read_corpus", "write_corpus"]

FORMAT = "kafka-conformance/produce-corpus/1"


class Oracle(Protocol):
    """What the writer needs of ``conformance.jvm.broker_oracle.BrokerOracle``."""

    def produce(
        self,
        records: bytes,
        *,
        session: str,
        produce_version: int,
        topic: dict[str, str],
        broker: dict[str, str] | None,
        now: int,
        leader_epoch: int,
        coordinator: str,
    ) -> dict[str, Any]: ...


@dataclass(frozen=True)
class StoredCase:
    """A case as stored: the case itself and, per broker version, Kafka's answers."""

    case: ProduceCase
    expected: dict[str, list[dict[str, Any]]]


def _broker_config(case: ProduceCase) -> dict[str, str] | None:
    ibp = case.inter_broker_protocol_version
    return None if ibp is None else {"inter.broker.protocol.version": ibp}


def judge(case: ProduceCase, version: str) -> list[dict[str, Any]]:
    """The kit's verdict documents for the requests of ``case`` on a broker of ``version``."""
    log = PartitionLog(
        case.topic,
        version=version,
        inter_broker_protocol_version=case.inter_broker_protocol_version,
    )
    return [
        log.produce(
            r,
            produce_version=case.produce_version,
            now=case.now,
            leader_epoch=case.leader_epoch,
            coordinator=case.coordinator,
        ).to_dict()
        for r in case.requests
    ]


def ask_oracle(oracle: Oracle, case: ProduceCase) -> list[dict[str, Any]]:
    """Kafka's answers to the requests of ``case`` (one fresh session per case)."""
    return [
        oracle.produce(
            r,
            session=case.name,
            produce_version=case.produce_version,
            topic=dict(case.topic),
            broker=_broker_config(case),
            now=case.now,
            leader_epoch=case.leader_epoch,
            coordinator=case.coordinator,
        )
        for r in case.requests
    ]


def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def write_corpus(
    root: Path,
    cases: Sequence[ProduceCase],
    oracle_for: Callable[[str], Oracle],
    versions: Sequence[str],
    provenance: dict[str, Any] | None = None,
) -> None:
    """Write ``cases`` under ``root`` with the answers of ``oracle_for(version)`` for every
    version of ``versions`` a case applies to; ``provenance`` goes into the manifest."""
    root.mkdir(parents=True, exist_ok=True)
    expected: dict[str, dict[str, list[dict[str, Any]]]] = {c.name: {} for c in cases}
    for version in versions:
        oracle = oracle_for(version)
        for c in cases:
            if version in c.versions:
                expected[c.name][version] = ask_oracle(oracle, c)
    for c in cases:
        d = root / c.name
        d.mkdir(exist_ok=True)
        for stale in d.glob("request-*.bin"):
            stale.unlink()
        names = []
        for i, r in enumerate(c.requests):
            (d / f"request-{i}.bin").write_bytes(r)
            names.append({"file": f"request-{i}.bin", "sha256": hashlib.sha256(r).hexdigest()})
        (d / "case.json").write_text(
            _dump(
                {
                    "name": c.name,
                    "description": c.description,
                    "topic": c.topic,
                    "produceVersion": c.produce_version,
                    "now": str(c.now),
                    "leaderEpoch": c.leader_epoch,
                    "interBrokerProtocolVersion": c.inter_broker_protocol_version,
                    "coordinator": c.coordinator,
                    "versions": list(c.versions),
                    "requests": names,
                }
            )
        )
        (d / "expected.json").write_text(_dump(expected[c.name]))
    (root / "manifest.json").write_text(
        _dump(
            {
                "format": FORMAT,
                "oracle": "conformance.jvm.broker_oracle: each version's UnifiedLog.appendAsLeader",
                "versions": list(versions),
                **(provenance or {}),
                "cases": [c.name for c in cases],
            }
        )
    )


def read_corpus(root: Path) -> list[StoredCase]:
    """The cases stored under ``root`` (``ValueError`` for a request whose sha256 differs)."""
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{root}: not a {FORMAT} corpus")
    out = []
    for name in manifest["cases"]:
        d = root / name
        meta = json.loads((d / "case.json").read_text(encoding="utf-8"))
        requests = []
        for entry in meta["requests"]:
            data = (d / entry["file"]).read_bytes()
            if hashlib.sha256(data).hexdigest() != entry["sha256"]:
                raise ValueError(f"{d / entry['file']}: sha256 differs from case.json")
            requests.append(data)
        case = ProduceCase(
            meta["name"],
            meta["description"],
            tuple(requests),
            topic=dict(meta["topic"]),
            produce_version=meta["produceVersion"],
            now=int(meta["now"]),
            leader_epoch=meta["leaderEpoch"],
            versions=tuple(meta["versions"]),
            inter_broker_protocol_version=meta["interBrokerProtocolVersion"],
            coordinator=meta.get("coordinator", "NONE"),
        )
        expected = json.loads((d / "expected.json").read_text(encoding="utf-8"))
        out.append(StoredCase(case, expected))
    return out
