"""``corpora/produce-golden/``: Produce requests answered by real Kafka brokers.

Where ``corpora/produce/`` holds the broker *oracle's* answers (Kafka's classes in a JVM), this
corpus holds what real brokers answered over the wire (``conformance.capture.produce``,
``scripts/capture-produce-golden``): the crafted produce cases and batches of a real client,
each sent as a real Produce request through the recording proxy to a fresh partition.

======================================  ======================================================
file                                    content
======================================  ======================================================
``<broker-id>/manifest.json``           the broker, the cases, the cases left out and why,
                                        when and how the corpus was captured
``<broker-id>/<case>/request-<i>.bin``  the i-th partition payload, as sent (``records``)
``<broker-id>/<case>/response-<i>.bin`` the Produce response frame as received (no size
                                        prefix); absent when the broker closed the connection
``<broker-id>/<case>/case.json``        provenance: broker, topic and its configuration, per
                                        request the Produce version, transactional id and the
                                        broker's clock ``now``; ``coordinator`` (3.6+ brokers):
                                        what their transaction verification hears (the
                                        capture runs no transaction: COORDINATOR_NOT_AVAILABLE)
``<broker-id>/<case>/answer.json``      the partition responses decoded from the frames, and
                                        the batches each request stored (fetched back)
``<broker-id>/<case>/fetch.bin``        the ``records`` of the Fetch from offset 0
======================================  ======================================================

Expectations come only from the real broker. A case holds one exchange with it
(:meth:`GoldenCase.exchange`, ``broker.exchange``); :func:`judge_golden` lists every
difference between the kit's model and the broker's answers in it, at any level
(``broker.exchange.differences``: the response fields the Produce version carries, and the
stored batches, with the rule for recompressed batches).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.broker.codes import NONE
from conformance.broker.exchange import LEADER_EPOCH, Exchange, Sent, differences

__all__ = [
    "FORMAT",
    "GoldenCase",
    "GoldenRequest",
    "judge_golden",
    "read_golden",
    "read_golden_corpus",
    "stored_b64",
    "write_golden_case",
    "write_golden_manifest",
]

FORMAT = "kafka-conformance/produce-golden/1"


@dataclass(frozen=True)
class GoldenRequest(Sent):
    """One Produce request of a case and the broker's answer to it (the exchange's
    :class:`~conformance.broker.exchange.Sent`), with the files that keep it."""

    #: the Produce response frame as received (None: the broker closed the connection)
    response_frame: bytes | None = None
    #: case.json's entry for the request (provenance: versions, clocks, files)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GoldenCase:
    name: str
    description: str
    broker_id: str
    kafka_version: str
    topic_name: str
    topic: dict[str, str]
    requests: tuple[GoldenRequest, ...]
    inter_broker_protocol_version: str | None = None
    #: whether the partition was fetched back (``stored`` is the broker's)
    fetched: bool = False
    fetch_records: bytes | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def coordinator(self) -> str:
        """The transaction coordinator's answer to the broker's verification (KIP-890, 3.6+),
        as recorded: NONE where the case.json says nothing."""
        return str(self.meta.get("coordinator", NONE))

    def exchange(self) -> Exchange:
        """What the case's requests exchanged with the broker (``broker.exchange``)."""
        return Exchange(
            self.kafka_version,
            self.topic_name,
            self.topic,
            self.requests,
            self.inter_broker_protocol_version,
            self.fetched,
            self.coordinator,
        )


def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def write_golden_case(root: Path, case: GoldenCase) -> Path:
    """Write ``case`` to ``root/<case.name>/`` (replacing what was there); returns it."""
    d = root / case.name
    d.mkdir(parents=True, exist_ok=True)
    for stale in [*d.glob("request-*.bin"), *d.glob("response-*.bin"), d / "fetch.bin"]:
        stale.unlink(missing_ok=True)
    entries, answers = [], []
    for i, r in enumerate(case.requests):
        (d / f"request-{i}.bin").write_bytes(r.records)
        entry = {
            "file": f"request-{i}.bin",
            "sha256": hashlib.sha256(r.records).hexdigest(),
            **r.meta,
            "produceVersion": r.produce_version,
            "transactionalId": r.transactional_id,
            "now": str(r.now),
            "receivedAtMs": None if r.received_at is None else str(r.received_at),
            "response": None,
        }
        if r.response_frame is not None:
            (d / f"response-{i}.bin").write_bytes(r.response_frame)
            entry["response"] = f"response-{i}.bin"
        entries.append(entry)
        answers.append(
            {
                "request": i,
                "connectionClosed": r.response is None,
                "response": r.response,
                "stored": r.stored,
            }
        )
    fetch = None
    if case.fetch_records is not None:
        (d / "fetch.bin").write_bytes(case.fetch_records)
        fetch = {"file": "fetch.bin", "sha256": hashlib.sha256(case.fetch_records).hexdigest()}
    (d / "case.json").write_text(
        _dump(
            {
                "name": case.name,
                "description": case.description,
                **case.meta,
                "brokerId": case.broker_id,
                "kafkaVersion": case.kafka_version,
                "topic": case.topic_name,
                "topicConfig": case.topic,
                "interBrokerProtocolVersion": case.inter_broker_protocol_version,
                "leaderEpoch": LEADER_EPOCH,
                "requests": entries,
            }
        )
    )
    (d / "answer.json").write_text(
        _dump(
            {
                "broker": case.broker_id,
                "fetched": case.fetched,
                "fetch": fetch,
                "answers": answers,
            }
        )
    )
    return d


def write_golden_manifest(root: Path, doc: dict[str, Any]) -> None:
    """``root/manifest.json``: ``doc`` (broker, cases, skipped, provenance) with the format."""
    (root / "manifest.json").write_text(_dump({"format": FORMAT, **doc}))


def _read_case(d: Path) -> GoldenCase:
    meta = json.loads((d / "case.json").read_text(encoding="utf-8"))
    answer = json.loads((d / "answer.json").read_text(encoding="utf-8"))
    requests = []
    for entry, ans in zip(meta["requests"], answer["answers"], strict=True):
        data = (d / entry["file"]).read_bytes()
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise ValueError(f"{d / entry['file']}: sha256 differs from case.json")
        frame = None if entry["response"] is None else (d / entry["response"]).read_bytes()
        requests.append(
            GoldenRequest(
                data,
                entry["produceVersion"],
                int(entry["now"]),
                entry["transactionalId"],
                ans["response"],
                ans["stored"],
                None if entry.get("receivedAtMs") is None else int(entry["receivedAtMs"]),
                frame,
                entry,
            )
        )
    fetched = answer.get("fetch")
    return GoldenCase(
        meta["name"],
        meta["description"],
        meta["brokerId"],
        meta["kafkaVersion"],
        meta["topic"],
        dict(meta["topicConfig"]),
        tuple(requests),
        meta["interBrokerProtocolVersion"],
        bool(answer["fetched"]),
        None if fetched is None else (d / fetched["file"]).read_bytes(),
        meta,
    )


def read_golden(root: Path) -> tuple[dict[str, Any], list[GoldenCase]]:
    """The manifest and the cases of one broker's directory ``root``."""
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{root}: not a {FORMAT} corpus")
    return manifest, [_read_case(root / name) for name in manifest["cases"]]


def read_golden_corpus(root: Path) -> dict[str, tuple[dict[str, Any], list[GoldenCase]]]:
    """Every broker directory under ``root`` (``corpora/produce-golden``), by broker id."""
    return {
        d.name: read_golden(d)
        for d in sorted(root.iterdir())
        if d.is_dir() and (d / "manifest.json").is_file()
    }


def judge_golden(case: GoldenCase) -> list[str]:
    """Every difference between the real broker's answers in ``case`` and the kit's model, at
    any level (``broker.exchange.differences``), each line naming the case and the request."""
    return [f"{case.broker_id}/{case.name} {d.text}" for d in differences(case.exchange())]


def stored_b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()
