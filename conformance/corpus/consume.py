"""``corpora/consume/``: scenarios for real consumers, each a partition served by the fake
broker, and what Kafka's own ``KafkaConsumer`` delivered for it (docs/fake-broker.md,
docs/adapter-protocol.md "consume").

========================================  ===================================================
path                                      what
========================================  ===================================================
``consume/manifest.json``                 every scenario: its partition, isolation level,
                                          fault, description; the reference's provenance
``consume/<name>/log/<topic>-0/``         the partition of a crafted scenario (written here
                                          by the kit's writer plus a fault); a broker
                                          scenario names a partition of a broker capture
``consume/<name>/expected.json``          Kafka's ``KafkaConsumer`` through the fake broker
                                          (the oracle's ``consume``): the
                                          ``kafka-conformance/consume/1`` document
``consume/<name>/scenario.json``          a stored scenario (not one of :data:`SCENARIOS`: a
                                          finding of ``fuzz --against --side consume``,
                                          promoted): its manifest entry; its partition is
                                          ``consume/<name>/log/t-0/``
========================================  ===================================================

The scenarios cover what consumers really meet: every message format and codec, null keys and
values, headers, LogAppendTime, compacted partitions with offset gaps, several segments, a
batch larger than the default fetch size (KIP-74), aborted transactions under both isolation
levels, a corrupt batch between good ones, a damaged batch header, and a connection dropped in
the middle of a response. ``scripts/make-consume-corpus`` writes them; ``tests/test_consume.py``
holds the stored documents to a fresh run of the reference.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.broker.fetch import FetchLog
from conformance.corpus import golden
from conformance.errors import CorpusError
from conformance.fakebroker import FakeBroker, Faults, Served, max_magic, read_log, write_log
from conformance.jsondoc import JsonDocument
from conformance.logdir.writer import LogConfig, PartitionWriter
from conformance.messages.schema import Schemas
from conformance.wire.builder import BatchBuilder, end_txn_marker_batch

__all__ = [
    "CONSUME_DIR",
    "DEFINITIONS",
    "FORMAT",
    "ISOLATIONS",
    "SCENARIOS",
    "SCENARIO_FILE",
    "TOPIC",
    "ConsumeScenario",
    "every_scenario",
    "partition_dir",
    "read_expected",
    "served",
    "stored_scenarios",
    "write_manifest",
    "write_scenario",
    "write_stored",
]

FORMAT = "kafka-conformance/consume-corpus/1"
#: the directory of ``corpora/`` holding the scenarios
CONSUME_DIR = golden.CONSUME
#: the Kafka release whose protocol definitions the fake broker speaks for the scenarios
DEFINITIONS = "3.9.2"
TS = 1_700_000_000_000
READ_COMMITTED = "read_committed"
READ_UNCOMMITTED = "read_uncommitted"
ISOLATIONS = (READ_UNCOMMITTED, READ_COMMITTED)
#: a stored scenario's manifest entry, in its directory
SCENARIO_FILE = "scenario.json"


@dataclass(frozen=True)
class ConsumeScenario(JsonDocument):
    """One partition served to a consumer reading it from the start.

    ``capture``: a partition directory of a broker capture (``<broker>/<case>/log/<dir>``,
    relative to ``corpora/``); else ``write`` writes the partition (the kit's writer plus a
    fault) into the directory it is given."""

    name: str
    description: str
    capture: str | None = None
    write: Callable[[Path], None] | None = None
    isolation: str = READ_UNCOMMITTED
    cut_fetch: tuple[int, int] | None = None
    high_watermark: int | None = None
    #: Kafka's consumer stops at a checksum error and at nothing else (a consumer that does
    #: not check CRCs cannot be judged on it)
    crc_error: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "partition": self.capture or f"{CONSUME_DIR}/{self.name}/log/{TOPIC}-0",
            "isolation": self.isolation,
            "cut_fetch": list(self.cut_fetch) if self.cut_fetch else None,
            "high_watermark": self.high_watermark,
            "crc_error": self.crc_error,
        }

    @classmethod
    def from_dict(cls, doc: Any) -> ConsumeScenario:
        """A stored scenario from its manifest entry (:meth:`to_dict`); ``CorpusError`` for
        an entry that is not one, or one whose partition is not its own directory's."""
        try:
            name, isolation = doc["name"], doc.get("isolation", READ_UNCOMMITTED)
            cut, crc_error = doc.get("cut_fetch"), doc.get("crc_error", False)
            high_watermark = doc.get("high_watermark")
            if not isinstance(name, str) or not name or "/" in name or isolation not in ISOLATIONS:
                raise TypeError("a name and read_uncommitted or read_committed")
            if cut is not None and not (
                isinstance(cut, list) and len(cut) == 2 and all(type(x) is int for x in cut)
            ):
                raise TypeError("cut_fetch is null or [n, bytes]")
            if not (high_watermark is None or type(high_watermark) is int) or not isinstance(
                crc_error, bool
            ):
                raise TypeError("high_watermark is null or an integer, crc_error a boolean")
            scenario = cls(
                name,
                str(doc.get("description", "")),
                isolation=isolation,
                cut_fetch=(cut[0], cut[1]) if cut else None,
                high_watermark=high_watermark,
                crc_error=crc_error,
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise CorpusError(f"not a consume scenario entry: {exc}") from None
        if doc.get("partition", scenario.to_dict()["partition"]) != scenario.to_dict()["partition"]:
            raise CorpusError(f"{name}: a stored scenario's partition is its own log/{TOPIC}-0")
        return scenario


#: the topic of a written or stored scenario's partition
TOPIC = "t"


def _batches(writer: PartitionWriter, *batches: bytes) -> None:
    for b in batches:
        writer.append(b)


def _v2(base: int, n: int = 3, codec: str = "none", **kw: Any) -> bytes:
    b = BatchBuilder(magic=2, base_offset=base, compression=codec, **kw)
    for j in range(n):
        b.append(TS + base + j, b"k%d" % (base + j), b"value-%d" % (base + j), [("h", b"v")])
    return b.build()


def _write_damaged(d: Path, batches: list[bytes], at: int, data: bytes) -> None:
    """Write ``batches`` with the kit's writer (which takes valid batches only), then change
    the ``.log`` at ``at`` bytes after the start of the second batch (negative: before its
    end) to ``data``: damage done on disk, as bit rot or a bad copy does."""
    w = PartitionWriter(d, TOPIC, 0, LogConfig())
    _batches(w, *batches)
    log = w.close() / "00000000000000000000.log"
    raw = bytearray(log.read_bytes())
    start = len(batches[0])
    pos = start + at if at >= 0 else start + len(batches[1]) + at
    raw[pos : pos + len(data)] = data
    log.write_bytes(bytes(raw))


def _write_corrupt_between(d: Path) -> None:
    """The second batch's last record value changed, its stored CRC kept."""
    second = _v2(3)
    _write_damaged(d, [_v2(0), second, _v2(6)], -3, bytes([second[-3] ^ 1]))


def _write_corrupt_compressed(d: Path) -> None:
    """The second (gzip) batch's compressed payload changed inside the deflate stream."""
    second = _v2(3, codec="gzip")
    _write_damaged(
        d, [_v2(0, codec="gzip"), second, _v2(6, codec="gzip")], -12, bytes([second[-12] ^ 0xFF])
    )


def _write_damaged_header(d: Path) -> None:
    """The second batch's size field below the minimum (the leader's reader fails there)."""
    _write_damaged(d, [_v2(0), _v2(3), _v2(6)], 8, (5).to_bytes(4, "big"))


def _write_open_transaction_aborted(d: Path) -> None:
    """Two transactions of one producer, the first aborted, the second committed, with a
    plain batch between them (the .txnindex written as a broker writes it)."""
    pid, epoch = 4000, 0
    txn = {"producer_id": pid, "producer_epoch": epoch, "is_transactional": True}

    def marker(offset: int, commit: bool) -> bytes:
        return end_txn_marker_batch(
            offset=offset,
            producer_id=pid,
            producer_epoch=epoch,
            commit=commit,
            coordinator_epoch=0,
            timestamp=TS + offset,
        )

    w = PartitionWriter(d, TOPIC, 0, LogConfig())
    _batches(
        w,
        _v2(0, base_sequence=0, **txn),
        marker(3, commit=False),
        _v2(4),
        _v2(7, base_sequence=3, **txn),
        marker(10, commit=True),
    )
    w.close()


def _write_cut_at_fetch_size(d: Path) -> None:
    """Batches of about 100 KB each, 1.3 MB in all: the consumer's default fetch size
    (1 MiB per partition) ends inside the 11th, which every first response carries cut."""
    w = PartitionWriter(d, TOPIC, 0, LogConfig())
    for i in range(13):
        b = BatchBuilder(magic=2, base_offset=i)
        b.append(TS + i, b"k%d" % i, bytes([65 + i]) * 100_000)
        w.append(b.build())
    w.close()


def _capture(broker: str, case: str) -> str:
    return f"{broker}/{case}/log/{case}-0"


SCENARIOS: tuple[ConsumeScenario, ...] = (
    ConsumeScenario(
        "v0-gzip",
        "magic 0, gzip wrappers (kafka-python on Kafka 0.10.2.2)",
        _capture("kafka-0.10.2.2-zk", "codec-gzip-v0-kafka-python"),
    ),
    ConsumeScenario(
        "v1-compacted",
        "magic 1, compacted: offset gaps (Kafka 0.10.2.2)",
        _capture("kafka-0.10.2.2-zk", "compacted-none-v1"),
    ),
    ConsumeScenario(
        "v1-snappy",
        "magic 1, snappy wrappers (Java producer, Kafka 1.1.1)",
        _capture("kafka-1.1.1-zk", "codec-snappy-v1-java"),
    ),
    ConsumeScenario(
        "v2-headers-gzip",
        "magic 2, gzip, headers (Kafka 2.8.2)",
        _capture("kafka-2.8.2-zk", "headers-gzip-v2-java"),
    ),
    ConsumeScenario(
        "v2-nulls",
        "null keys and values (Kafka 2.8.2)",
        _capture("kafka-2.8.2-zk", "nulls-v2-kafka-python"),
    ),
    ConsumeScenario(
        "v2-zstd-recompressed",
        "zstd batches the broker recompressed (Kafka 2.8.2)",
        _capture("kafka-2.8.2-zk", "broker-recompress-zstd-v2"),
    ),
    ConsumeScenario(
        "mixed-magic",
        "v0 messages up-converted, then v2 batches (Kafka 3.9.2)",
        _capture("kafka-3.9.2-zk-ibp2.8", "upconvert-v0-to-v2"),
    ),
    ConsumeScenario(
        "multi-segment",
        "several segments (Kafka 3.9.2, KRaft)",
        _capture("kafka-3.9.2-kraft", "multi-segment-bytes-v2"),
    ),
    ConsumeScenario(
        "v2-compacted",
        "compacted v2 partition: offset gaps (Kafka 3.9.2)",
        _capture("kafka-3.9.2-kraft", "compacted-v2-java"),
    ),
    ConsumeScenario(
        "log-append-time",
        "LogAppendTime gzip batches (Kafka 4.3.1)",
        _capture("kafka-4.3.1-kraft", "log-append-time-gzip-v2"),
    ),
    ConsumeScenario(
        "many-tiny",
        "many tiny batches (Kafka 4.3.1)",
        _capture("kafka-4.3.1-kraft", "many-tiny-v2"),
    ),
    ConsumeScenario(
        "idempotent",
        "an idempotent producer's batches (Kafka 4.3.1)",
        _capture("kafka-4.3.1-kraft", "idempotent-v2-java"),
    ),
    ConsumeScenario(
        "large-record",
        "a 1.1 MB batch, above the default fetch size (KIP-74)",
        _capture("kafka-4.3.1-kraft", "large-record-v2"),
    ),
    ConsumeScenario(
        "txn-uncommitted",
        "a committed and an aborted transaction, read_uncommitted (Kafka 4.3.1)",
        _capture("kafka-4.3.1-kraft", "txn-commit-abort-v2-java"),
    ),
    ConsumeScenario(
        "txn-committed",
        "a committed and an aborted transaction, read_committed: "
        "the aborted records are not delivered (Kafka 4.3.1)",
        _capture("kafka-4.3.1-kraft", "txn-commit-abort-v2-java"),
        isolation=READ_COMMITTED,
    ),
    ConsumeScenario(
        "txn-committed-1.1",
        "the same with kafka-python's transactions on Kafka 1.1.1, read_committed",
        _capture("kafka-1.1.1-zk", "txn-commit-abort-v2-kafka-python"),
        isolation=READ_COMMITTED,
    ),
    ConsumeScenario(
        "dropped-connection",
        "the first response with records is cut after 40 bytes and the connection closed",
        _capture("kafka-3.9.2-kraft", "multi-segment-bytes-v2"),
        cut_fetch=(1, 40),
    ),
    ConsumeScenario(
        "cut-at-fetch-size",
        "13 batches of 100 KB: each response ends with a batch cut at the 1 MiB fetch size",
        write=_write_cut_at_fetch_size,
    ),
    ConsumeScenario(
        "corrupt-between-good",
        "a batch with a bad CRC between two good ones",
        write=_write_corrupt_between,
        crc_error=True,
    ),
    ConsumeScenario(
        "corrupt-compressed",
        "a gzip batch whose payload is damaged (CRC and gzip both fail) between two good ones",
        write=_write_corrupt_compressed,
    ),
    ConsumeScenario(
        "damaged-header",
        "a batch whose size field is below the minimum: the leader answers CORRUPT_MESSAGE",
        write=_write_damaged_header,
        high_watermark=9,
    ),
    ConsumeScenario(
        "aborted-then-committed",
        "an aborted and a committed transaction around a "
        "plain batch, read_committed (written by the kit)",
        write=_write_open_transaction_aborted,
        isolation=READ_COMMITTED,
    ),
)


def stored_scenarios(root: Path) -> list[ConsumeScenario]:
    """The stored scenarios under ``root`` (``corpora/``): every ``consume/<name>/`` with a
    :data:`SCENARIO_FILE` but the built-in ones, by name (``CorpusError`` for a bad one)."""
    d = Path(root) / CONSUME_DIR
    builtin = {s.name for s in SCENARIOS}
    found: list[ConsumeScenario] = []
    for entry in sorted(d.glob(f"*/{SCENARIO_FILE}")) if d.is_dir() else []:
        if entry.parent.name in builtin:
            continue
        try:
            doc = json.loads(entry.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CorpusError(f"{entry}: {exc}") from None
        scenario = ConsumeScenario.from_dict(doc)
        if scenario.name != entry.parent.name:
            raise CorpusError(f"{entry}: names {scenario.name!r}, not its directory")
        found.append(scenario)
    return found


def every_scenario(root: Path) -> list[ConsumeScenario]:
    """The built-in scenarios, then the stored ones of ``root``."""
    return [*SCENARIOS, *stored_scenarios(root)]


def write_stored(
    root: Path, scenario: ConsumeScenario, log: FetchLog, expected: dict[str, Any]
) -> Path:
    """A stored scenario under ``root`` (``corpora/``): its entry, its partition (``log``'s
    segments, :func:`~conformance.fakebroker.write_log`) and Kafka's document
    ``expected``. Returns its directory."""
    out = Path(root) / CONSUME_DIR / scenario.name
    if (out / "log").exists():
        shutil.rmtree(out / "log")
    write_log(out / "log" / f"{TOPIC}-0", log)
    (out / SCENARIO_FILE).write_text(json.dumps(scenario.to_dict(), indent=1) + "\n")
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    return out


def partition_dir(root: Path, scenario: ConsumeScenario) -> Path:
    """The partition directory served for ``scenario`` (``root``: ``corpora/``)."""
    return Path(root) / scenario.to_dict()["partition"]


def served(root: Path, scenario: ConsumeScenario, schemas: Schemas) -> Served:
    """What the fake broker serves for ``scenario``."""
    d = partition_dir(root, scenario)
    log = read_log(d)
    if scenario.high_watermark is not None:
        log.high_watermark = log.last_stable_offset = scenario.high_watermark
    topic = d.name.rsplit("-", 1)[0]
    return Served(
        schemas,
        topic,
        0,
        log,
        max_magic=max_magic(log),
        faults=Faults(cut_fetch=scenario.cut_fetch),
    )


def write_scenario(
    root: Path,
    scenario: ConsumeScenario,
    schemas: Schemas,
    consume: Callable[[str, str, str], dict[str, Any]],
) -> dict[str, Any]:
    """Write a crafted scenario's partition (when it has one) and its ``expected.json``:
    ``consume(bootstrap, topic, isolation)`` runs the reference consumer against the fake
    broker. Returns the document."""
    out = Path(root) / CONSUME_DIR / scenario.name
    if scenario.write is not None:
        if (out / "log").exists():
            shutil.rmtree(out / "log")
        scenario.write(out / "log")
    s = served(root, scenario, schemas)
    with FakeBroker(s) as broker:
        doc = consume(broker.bootstrap, s.topic, scenario.isolation)
    out.mkdir(parents=True, exist_ok=True)
    (out / "expected.json").write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def read_expected(root: Path, scenario: ConsumeScenario) -> dict[str, Any]:
    """The stored reference document of ``scenario``."""
    doc: dict[str, Any] = json.loads(
        (Path(root) / CONSUME_DIR / scenario.name / "expected.json").read_text()
    )
    return doc


def write_manifest(root: Path, reference: str) -> dict[str, Any]:
    """``consume/manifest.json``: the scenarios and where their documents came from."""
    doc = {
        "format": FORMAT,
        "reference": reference,
        "definitions": f"Kafka {DEFINITIONS} (the fake broker's protocol)",
        "scenarios": [s.to_dict() for s in SCENARIOS],
    }
    path = Path(root) / CONSUME_DIR / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return doc
