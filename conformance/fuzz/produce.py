"""Fuzzing the broker's verdict: the ``produce`` target and its differential against Kafka.

An input is one selector byte, then the records of one partition of a Produce request:

=====  ====================================================================================
bits   selects
=====  ====================================================================================
0-1    the broker version (``VERSIONS`` in order; 3 = the newest)
2-4    the Produce version (:data:`PRODUCE_VERSIONS`, clamped into the broker's range)
5-7    the topic configuration (:data:`TOPICS`)
=====  ====================================================================================

so a saved input replays the same request on the same broker. Each input is judged on a
fresh partition at the fixed clock :data:`NOW`, by the kit's model (``conformance.broker``)
and, in differential mode, by the broker oracle of that version (each version's own
``UnifiedLog``, ``jvm.broker_oracle``); the two verdicts must agree
(``broker.compare.diff_verdicts``). The mutator mutates the records as a record stream and,
now and then, the selector.
"""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.broker.compare import diff_verdicts
from conformance.broker.config import topic_properties
from conformance.broker.log import PartitionLog
from conformance.broker.versions import VERSIONS
from conformance.corpus.produce.cases import NOW, cases
from conformance.errors import HEAP_DEPENDENT, Allocations, is_resource_limit
from conformance.fuzz.store import FindingStore

__all__ = [
    "NOW",
    "PRODUCE_VERSIONS",
    "BROKER_ENV",
    "TOPICS",
    "ProduceDifferential",
    "Request",
    "read_request",
    "pinned_broker",
    "seeds",
    "t_produce",
    "write_request",
]

#: Produce versions a selector picks from (v2: legacy magics; v6: zstd refused; v9, v11)
PRODUCE_VERSIONS = (9, 3, 6, 7, 2, 11, 0, 13)
#: topic configurations a selector picks from
TOPICS: tuple[dict[str, str], ...] = (
    {},
    {"cleanup.policy": "compact"},
    {"message.timestamp.type": "LogAppendTime"},
    {"compression.type": "gzip"},
    {"compression.type": "uncompressed", "max.message.bytes": "2000"},
    {"message.timestamp.after.max.ms": "3600000", "message.timestamp.before.max.ms": "3600000"},
    {"compression.type": "zstd"},
    {"max.message.bytes": "200", "cleanup.policy": "compact"},
)
_VERSION_NAMES = tuple(VERSIONS)


@dataclass(frozen=True)
class Request:
    """What an input asks: the broker, the Produce version, the topic, the records."""

    version: str
    produce_version: int
    topic: dict[str, str] = field(default_factory=dict)
    records: bytes = b""


#: the environment variable that pins the broker version of every input (``fuzz produce
#: --broker``): set in the supervisor, inherited by its workers and libFuzzer's re-runs
BROKER_ENV = "KAFKA_CONFORMANCE_FUZZ_BROKER"


@contextlib.contextmanager
def pinned_broker(version: str | None) -> Iterator[None]:
    """Judge every input on broker ``version`` (None: as each selector says) in this process
    and the processes it starts, for the ``with`` block."""
    if version is not None and version not in VERSIONS:
        raise ValueError(f"unknown broker version {version!r} (known: {', '.join(VERSIONS)})")
    before = os.environ.get(BROKER_ENV)
    if version is None:
        os.environ.pop(BROKER_ENV, None)
    else:
        os.environ[BROKER_ENV] = version
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(BROKER_ENV, None)
        else:
            os.environ[BROKER_ENV] = before


def read_request(data: bytes) -> Request:
    """The request an input encodes (an empty input: an empty request to the newest; the
    version is the pinned one while :func:`pinned_broker` holds)."""
    selector = data[0] if data else 0
    vi = selector & 0x03
    version = _VERSION_NAMES[vi] if vi < len(_VERSION_NAMES) else _VERSION_NAMES[-1]
    pinned = os.environ.get(BROKER_ENV)
    if pinned in VERSIONS:
        version = pinned
    low, high = VERSIONS[version].produce_versions
    wanted = PRODUCE_VERSIONS[(selector >> 2) & 0x07]
    known = topic_properties(version)
    topic = {k: v for k, v in TOPICS[(selector >> 5) & 0x07].items() if k in known}
    return Request(version, min(max(wanted, low), high), topic, data[1:])


def write_request(
    version_index: int, produce_index: int, topic_index: int, records: bytes
) -> bytes:
    """The input of a request (indexes into ``VERSIONS``, :data:`PRODUCE_VERSIONS`,
    :data:`TOPICS`)."""
    return (
        bytes([(version_index & 3) | (produce_index & 7) << 2 | (topic_index & 7) << 5]) + records
    )


def judge(r: Request) -> dict[str, Any]:
    """The kit's verdict document on a fresh partition."""
    log = PartitionLog(r.topic, version=r.version)
    return log.produce(r.records, produce_version=r.produce_version, now=NOW).to_dict()


def t_produce(data: bytes) -> None:
    """The target: the model answers every input (never raises) with a valid document."""
    doc = judge(read_request(data))
    if (
        doc["response"]["errorName"] == "NONE"
        and doc["stored"] is None
        and doc["scope"] != "partition"
    ):
        raise AssertionError("an accepted produce outside a partition scope")


def seeds(root: Path) -> Iterator[bytes]:
    """Every request of the crafted produce cases, under every selector of its settings."""
    for c in cases():
        for v in c.versions:
            vi = _VERSION_NAMES.index(v)
            pi = (
                PRODUCE_VERSIONS.index(c.produce_version)
                if c.produce_version in PRODUCE_VERSIONS
                else 0
            )
            ti = next((i for i, t in enumerate(TOPICS) if t == c.topic), 0)
            for r in c.requests:
                yield write_request(vi, pi, ti, r)


@dataclass
class _Outcome:
    differences: list[str]
    oracle_error: str | None = None
    bounded: bool = False


class ProduceDifferential:
    """The model against the broker oracle of each input's version (one JVM per version,
    started on first use)."""

    def __init__(self) -> None:
        from conformance.jvm.kafka_jars import use_kafka2_zstd

        use_kafka2_zstd()  # the model of 2.x reads zstd with Kafka 2.x's libzstd
        self.oracles: dict[str, Any] = {}
        self.inputs = 0
        #: inputs not compared (heap-dependent)
        self.skipped = 0

    def close(self) -> None:
        for o in self.oracles.values():
            o.close()
        self.oracles.clear()

    def warm(self) -> None:
        """Start the pinned version's oracle now (none pinned: nothing), so that its JVM's
        start-up is not spent out of the fuzzing time budget."""
        version = os.environ.get(BROKER_ENV)
        if version:
            self._oracle(version).start()

    def _oracle(self, version: str) -> Any:
        from conformance.jvm.broker_oracle import BrokerOracle

        if version not in self.oracles:
            self.oracles[version] = BrokerOracle(version)
        return self.oracles[version]

    def run(self, data: bytes) -> tuple[Request, dict[str, Any], dict[str, Any] | None, _Outcome]:
        from conformance.jvm.broker_oracle import BrokerOracleError

        self.inputs += 1
        r = read_request(data)
        with Allocations() as allocations:
            ours = judge(r)
        if allocations.largest > HEAP_DEPENDENT or is_resource_limit(
            (ours.get("exception") or {}).get("message")
        ):
            # Kafka would allocate that much before it reads on: its verdict depends on the
            # heap (the oracle's -Xmx1g: OutOfMemoryError), as in the consumer's differential
            self.skipped += 1
            return r, ours, None, _Outcome([], bounded=True)
        oracle = self._oracle(r.version)
        try:
            theirs = oracle.produce(
                r.records, session="fuzz", produce_version=r.produce_version, topic=r.topic, now=NOW
            )
            oracle.reset("fuzz")
        except BrokerOracleError as e:
            self.oracles.pop(r.version, None)
            oracle.close()
            return r, ours, None, _Outcome([], oracle_error=str(e)[:2000])
        return r, ours, theirs, _Outcome(diff_verdicts(theirs, ours))

    def divergence_signature(self, data: bytes) -> str | None:
        """The signature of the divergence ``data`` shows (None: none)."""
        r, _ours, _theirs, o = self.run(data)
        return _signature(r, o.differences) if o.differences else None

    def check(self, data: bytes, wire: bytes, store: FindingStore) -> _Outcome:
        try:
            r, ours, theirs, o = self.run(data)
        except Exception:  # noqa: BLE001 - the model's crash is the target's finding already
            return _Outcome([], bounded=True)
        if o.oracle_error is not None:
            store.divergence(
                data, "oracle", "oracle failed: " + o.oracle_error.splitlines()[0],
                [o.oracle_error], {"ours": ours}, r.records,
            )  # fmt: skip
        elif o.differences:
            signature = _signature(r, o.differences)
            store.divergence(
                data, "divergence", signature, o.differences, {"ours": ours, "kafka": theirs},
                r.records,
            )  # fmt: skip
        return o


def _signature(r: Request, differences: list[str]) -> str:
    """A divergence's signature: the broker version and the JSON paths that differ."""
    return f"produce {r.version}: " + "; ".join(sorted({d.split(":")[0] for d in differences}))


def mutate_selector(data: bytes, rng: random.Random) -> bytes:
    """Another broker version, Produce version or topic for the same records."""
    selector = data[0] if data else 0
    bit = rng.randrange(8)
    return bytes([selector ^ (1 << bit)]) + data[1:]
