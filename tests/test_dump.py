"""``kafka-conformance dump`` against Kafka 3.9.2's own ``kafka.tools.DumpLogSegments``.

Partition directories are written with the kit's broker-faithful writer and encoder, then
corrupted by hand. For every directory and every option set the real tool runs once (one JVM,
all files of the directory passed together, the very same path strings on both sides) and
stdout, stderr (of a Java stack trace: the first line only; a JVM identity hash as ``dump``
prints it) and the exit status must be identical. A few pure-Python tests pin behaviour
without Java.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import struct
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.capture.brokers import BROKERS
from conformance.corpus.golden import first_trace_line_only
from conformance.logdir.dump import dump, dump_json
from conformance.logdir.dump.formats import format_of, kafka_version
from conformance.logdir.dump.javaemu import (
    UNKNOWN_IDENTITY_HASH,
    ScalaHashMap,
)
from conformance.logdir.writer import LogConfig, PartitionWriter, write_batches
from conformance.primitives.java import java_parse_int
from conformance.wire.batch import seal_v2, write_batch_v2
from conformance.wire.builder import BatchBuilder, empty_batch, end_txn_marker_batch
from conformance.wire.legacy import write_legacy_message
from conformance.wire.record import write_record_v2

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "corpora" / "samples"
SCHEMA = json.loads((ROOT / "conformance" / "schema" / "decode-result.schema.json").read_text())
#: one validator for every document (``jsonschema.validate`` builds one on each call)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
KAFKA = "3.9.2"
#: the format the pinned texts below were printed in (by Kafka 3.9.2's tool)
F39 = format_of(KAFKA)
#: every broker version of the corpora: each one's own DumpLogSegments is the oracle
VERSIONS = sorted({spec.version for spec in BROKERS.values()}, key=kafka_version)
TS = 1_700_000_000_000


# ------------------------------------------------------------------------------------------
# building blocks


def v2(base: int, n: int = 3, ts: int = TS, **kw: object) -> bytes:
    b = BatchBuilder(magic=2, base_offset=base, **kw)  # type: ignore[arg-type]
    for j in range(n):
        headers = [("h", b"x"), ("trace-id", None)] if j % 2 == 0 else []
        b.append(ts + j, b"key-%d" % j if j != 1 else None, b"value-%d" % (base + j), headers)
    return b.build()


def legacy(magic: int, base: int, compression: str = "none", tst: str = "CreateTime") -> bytes:
    b = BatchBuilder(
        magic=magic,
        base_offset=base,
        compression=compression,
        timestamp_type=tst,
        log_append_time=TS + 999,
    )
    for j in range(3):
        b.append(TS + j, None if j == 1 else b"lk%d" % j, None if j == 2 else b"lv%d" % j)
    return b.build()


def entries(message_set: bytes) -> list[bytes]:
    """Split a v0/v1 message set into its top-level entries."""
    out, pos = [], 0
    while pos < len(message_set):
        size = struct.unpack_from(">i", message_set, pos + 8)[0]
        out.append(message_set[pos : pos + 12 + size])
        pos += 12 + size
    return out


def ctrl_batch(
    base: int,
    records: list[tuple[bytes | None, bytes | None]],
    attrs: int = 0x30,
    producer_id: int = 99,
) -> bytes:
    body = b"".join(write_record_v2(i, 0, k, v) for i, (k, v) in enumerate(records))
    return write_batch_v2(
        payload=body,
        count=len(records),
        base_offset=base,
        attributes=attrs,
        last_offset_delta=len(records) - 1,
        base_timestamp=1000,
        max_timestamp=1000,
        producer_id=producer_id,
        producer_epoch=0,
    )


def patch(path: Path, offset: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[offset : offset + len(data)] = data
    path.write_bytes(bytes(raw))


def files_of(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


@dataclass
class Scenario:
    dir: Path
    files: list[str]  # as passed to both tools
    relative: bool  # files are relative to dir (cwd = dir) or absolute paths
    max_bytes: int = 0
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------
# scenarios


def _healthy(root: Path) -> Scenario:
    """Several segments, every codec, headers, LogAppendTime, idempotent and transactional
    batches with COMMIT/ABORT markers (txn index), an empty batch, a delete horizon; clean
    shutdown (snapshots). Ends with an unknown suffix and a name without '.'."""
    w = PartitionWriter(root, config=LogConfig(segment_bytes=900, index_interval_bytes=150))
    off = 0
    for i, codec in enumerate(["none", "gzip", "snappy", "lz4", "zstd", "none", "gzip"]):
        w.append(v2(off, 4, ts=TS + 100 * i, compression=codec, partition_leader_epoch=i // 3))
        off += 4
    w.append(
        v2(off, 3, timestamp_type="LogAppendTime", log_append_time=TS + 5000, compression="lz4")
    )
    off += 3
    for i in range(6):
        pid = 1000 + i % 2
        w.append(
            v2(
                off,
                2,
                producer_id=pid,
                producer_epoch=0,
                base_sequence=2 * (i // 2),
                is_transactional=True,
                compression="snappy" if i % 3 else "none",
            )
        )
        off += 2
        if i % 2:
            for p, commit in ((1000, i % 4 == 1), (1001, False)):
                w.append(
                    end_txn_marker_batch(
                        offset=off,
                        producer_id=p,
                        producer_epoch=0,
                        commit=commit,
                        coordinator_epoch=3 + i,
                        timestamp=TS + 9000,
                    )
                )
                off += 1
    w.append(v2(off, 2, producer_id=7, producer_epoch=2, base_sequence=2147483646))
    off += 2
    w.append(
        empty_batch(
            base_offset=off,
            last_offset=off + 1,
            producer_id=8,
            producer_epoch=1,
            base_sequence=4,
            timestamp=TS + 7000,
        )
    )
    off += 2
    w.append(v2(off, 2, delete_horizon_ms=TS + 86_400_000, compression="zstd"))
    d = w.close()
    files = [f for f in files_of(d) if "." in f] + ["leader-epoch-checkpoint"]
    return Scenario(d, files, relative=True)


def _legacy(root: Path) -> Scenario:
    """Magic 0 and 1, uncompressed and compressed wrappers, LogAppendTime, null keys/values;
    then one message's value byte flipped (bad CRC)."""
    batches = []
    off = 0
    for magic in (0, 1):
        for codec in ("none", "gzip", "snappy", "lz4"):
            for tst in ("CreateTime", "LogAppendTime") if magic else ("CreateTime",):
                batches.extend(entries(legacy(magic, off, codec, tst)))  # one entry per append
                off += 3
    batches.append(v2(off, 2))  # a v2 batch after the upgrade
    d = write_batches(root, batches, config=LogConfig(segment_bytes=700, index_interval_bytes=60))
    log = d / "00000000000000000000.log"
    raw = log.read_bytes()
    pos = raw.index(b"lv0")
    patch(log, pos, b"LV0")  # first message: CRC no longer matches
    return Scenario(d, [str(d / f) for f in files_of(d) if "." in f], relative=False)


def _crash(root: Path) -> Scenario:
    """No clean shutdown: the active segment's indexes are preallocated (zero-filled, 1 MiB),
    the active .log has a zero-filled tail (dumped last, where the tool dies)."""
    batches = []
    off = 0
    for i in range(14):
        batches.append(v2(off, 3, ts=TS + 10 * i, compression=["none", "gzip", "lz4"][i % 3]))
        off += 3
    d = write_batches(
        root,
        batches,
        clean=False,
        config=LogConfig(segment_bytes=1000, index_interval_bytes=100, segment_index_bytes=1 << 20),
    )
    logs = sorted(d.glob("*.log"))
    active = logs[-1]
    with open(active, "ab") as fh:
        fh.write(bytes(64))
    files = [f for f in files_of(d) if "." in f and f != active.name] + [active.name]
    return Scenario(d, files, relative=True)


def _corrupt(root: Path) -> Scenario:
    """Damage the tool reports without dying: many segments whose .index first entry names the
    wrong batch, .timeindex entries out of order / with a wrong timestamp / at an offset that
    is not a batch's last offset, a bad batch CRC, offset gaps, a truncated batch at the end, a
    corrupt producer snapshot."""
    batches = []
    off = 0
    for i in range(64):
        if i in (10, 41):
            off += 5  # gap: non-consecutive offsets
        batches.append(v2(off, 3, ts=TS + 10 * i, compression="gzip" if i % 4 == 3 else "none"))
        off += 3
    d = write_batches(root, batches, config=LogConfig(segment_bytes=600, index_interval_bytes=60))
    indexes = sorted(d.glob("*.index"))
    assert len(indexes) >= 14
    for p in indexes[:14]:
        raw = p.read_bytes()
        if len(raw) >= 8:
            rel, pos = struct.unpack_from(">ii", raw, 0)
            patch(p, 0, struct.pack(">ii", rel + 1, pos))
    tis = [p for p in sorted(d.glob("*.timeindex")) if p.stat().st_size >= 24]
    ts0, rel0 = struct.unpack_from(">qi", tis[0].read_bytes(), 0)
    patch(tis[0], 0, struct.pack(">qi", ts0 + 3, rel0))  # mismatching timestamp
    ts1, rel1 = struct.unpack_from(">qi", tis[1].read_bytes(), 12)
    patch(tis[1], 12, struct.pack(">qi", ts1 - 50, rel1))  # out of order (stays >= first)
    ts2, rel2 = struct.unpack_from(">qi", tis[2].read_bytes(), 0)
    patch(tis[2], 0, struct.pack(">qi", ts2, rel2 - 1))  # not a batch's last offset
    with open(tis[3], "ab") as fh:
        fh.write(struct.pack(">qi", TS + 10**6, 10**6))  # offset beyond the log
    logs = sorted(d.glob("*.log"))
    raw = logs[1].read_bytes()
    patch(logs[1], raw.index(b"value-") + 6, b"X")  # bad CRC, still parseable
    with open(logs[-1], "ab") as fh:
        fh.write(v2(off, 3)[:70])  # a truncated batch after the last one
    snaps = sorted(d.glob("*.snapshot"))
    patch(snaps[0], 8, b"\x7f")  # CRC / count damage
    return Scenario(d, [str(d / f) for f in files_of(d) if "." in f], relative=False)


def _bad_batches_a(root: Path) -> Scenario:
    """A gzip batch with a damaged payload (dies only when iterating records), then a v2
    batch shorter than its 61-byte header at the end of a file (KafkaException)."""
    root.mkdir()
    g = bytearray(v2(3, 3, compression="gzip"))
    g[75] ^= 0x55
    g[80] ^= 0xFF
    (root / "00000000000000000000.log").write_bytes(v2(0, 3) + seal_v2(bytes(g)))
    short = bytearray(struct.pack(">qi", 9, 30) + bytes(30))
    short[16] = 2
    (root / "00000000000000000006.log").write_bytes(v2(6, 3) + bytes(short))
    return Scenario(root, files_of(root), relative=True)


def _bad_batches_b(root: Path) -> Scenario:
    """Control batches with a LEADER_CHANGE, an unknown type and a null key (NPE while
    iterating), then a batch with compression id 6 (IllegalArgumentException)."""
    root.mkdir()
    data = (
        v2(0, 1)
        + ctrl_batch(1, [(b"\0\0\0\2", b"abc"), (b"\0\0\0\x09", b"")])
        + ctrl_batch(3, [(None, b"\0\0\0\0\0\1")])
        + v2(4, 1)
    )
    (root / "00000000000000000000.log").write_bytes(data)
    bad = bytearray(v2(5, 2))
    bad[22] |= 6
    (root / "00000000000000000005.log").write_bytes(v2(3, 2) + seal_v2(bytes(bad)))
    return Scenario(root, files_of(root), relative=True)


def _bad_batches_c(root: Path) -> Scenario:
    """A v2 batch of 42 bytes inside a file (IndexOutOfBoundsException when iterating), a
    magic-1 message too short for its key size, then a legacy entry whose magic byte is -1."""
    root.mkdir()
    short = bytearray(struct.pack(">qi", 0, 30) + bytes(30))
    short[16] = 2
    (root / "00000000000000000000.log").write_bytes(bytes(short) + v2(1, 2))
    tiny = bytearray(struct.pack(">qi", 3, 14) + bytes(14))
    tiny[16] = 1
    (root / "00000000000000000003.log").write_bytes(bytes(tiny))
    m = bytearray(write_legacy_message(1, 5, TS, b"k", b"v"))
    m[16] = 0xFF
    (root / "00000000000000000005.log").write_bytes(
        write_legacy_message(0, 4, -1, b"a", b"b") + bytes(m)
    )
    return Scenario(root, files_of(root), relative=True)


def _index_errors(root: Path) -> Scenario:
    """An .index with 3 stray bytes (fails --index-sanity-check), then one whose entry
    points at the end of the log (NoSuchElementException)."""
    d = write_batches(
        root,
        [v2(i * 3, 3) for i in range(8)],
        config=LogConfig(segment_bytes=500, index_interval_bytes=60),
    )
    indexes = sorted(d.glob("*.index"))
    with open(indexes[0], "ab") as fh:
        fh.write(b"\1\2\3")
    log1 = indexes[1].with_suffix(".log")
    patch(indexes[1], 0, struct.pack(">ii", 2, log1.stat().st_size))
    files = [indexes[0].with_suffix(".log").name, indexes[0].name, log1.name, indexes[1].name]
    return Scenario(d, [str(d / f) for f in files], relative=False)


def _txn_errors(root: Path) -> Scenario:
    """Producer snapshots: valid, bad CRC, too short (messages on stderr, the tool goes on);
    a .txnindex with a partial trailing entry, an .index whose .log does not exist
    (NoSuchFileException), never reached after a .txnindex entry of version 1."""
    root.mkdir()
    w = PartitionWriter(root / "w", config=LogConfig(segment_bytes=10**6))
    w.append(v2(0, 2, producer_id=5, producer_epoch=0, base_sequence=0, is_transactional=True))
    w.append(
        end_txn_marker_batch(
            offset=2,
            producer_id=5,
            producer_epoch=0,
            commit=False,
            coordinator_epoch=1,
            timestamp=TS,
        )
    )
    w.append(v2(3, 2, producer_id=6, producer_epoch=1, base_sequence=0))
    d = w.close()
    snap = (d / "00000000000000000005.snapshot").read_bytes()
    (root / "00000000000000000005.snapshot").write_bytes(snap)
    (root / "00000000000000000006.snapshot").write_bytes(snap[:-1] + bytes([snap[-1] ^ 1]))
    (root / "00000000000000000007.snapshot").write_bytes(b"\0\1\0")
    (root / "00000000000000000008.snapshot").write_bytes(b"\0\2" + snap[2:])
    txn = (d / "00000000000000000000.txnindex").read_bytes()
    (root / "00000000000000000000.txnindex").write_bytes(txn + txn[:20])
    (root / "00000000000000000001.txnindex").write_bytes(txn + b"\x01" + txn[1:])
    (root / "00000000000000000009.index").write_bytes(struct.pack(">ii", 1, 0))
    files = [
        "00000000000000000005.snapshot",
        "00000000000000000006.snapshot",
        "00000000000000000007.snapshot",
        "00000000000000000008.snapshot",
        "00000000000000000000.txnindex",
        "00000000000000000099.txnindex",
        "00000000000000000009.index",
        "00000000000000000001.txnindex",
    ]
    shutil.rmtree(root / "w")
    return Scenario(root, files, relative=True)


def _uv(n: int) -> bytes:
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def _cstr(s: str) -> bytes:
    b = s.encode()
    return _uv(len(b) + 1) + b


def _kraft(root: Path) -> Scenario:
    """KRaft snapshots (.checkpoint): SnapshotHeader, KRaftVersion, KRaftVoters, data,
    SnapshotFooter; bootstrap.checkpoint; then a .log whose name is not a number."""
    root.mkdir()
    voters = struct.pack(">h", 0) + _uv(3)
    for vid in (1, 2):
        voters += (
            struct.pack(">i", vid)
            + uuid.UUID(int=vid * 12345678901234567).bytes
            + _uv(3)
            + _cstr("CONTROLLER")
            + _cstr(f'ho"st\\{vid}')
            + struct.pack(">H", 9093)
            + b"\0"
            + _cstr("X")
            + _cstr("h\u00e9")
            + struct.pack(">H", 65535)
            + b"\0"
            + struct.pack(">hh", 0, 1)
            + b"\0\0"
        )
    voters += b"\0"
    b = BatchBuilder(magic=2, base_offset=3, partition_leader_epoch=5)
    b.append(1000, None, b"\x01\x02metadata")
    data = (
        ctrl_batch(
            0,
            [
                (b"\0\0\0\3", struct.pack(">hq", 0, TS) + b"\0"),
                (b"\0\0\0\5", struct.pack(">hh", 0, 1) + b"\0"),
                (b"\0\0\0\6", voters),
            ],
            attrs=0x20,
            producer_id=-1,
        )
        + b.build()
        + ctrl_batch(4, [(b"\0\0\0\4", b"\0\0\0")], attrs=0x20, producer_id=-1)
    )
    (root / "00000000000000000005-0000000003.checkpoint").write_bytes(data)
    (root / "bootstrap.checkpoint").write_bytes(data)
    (root / "segment.log").write_bytes(v2(0, 1))
    files = ["00000000000000000005-0000000003.checkpoint", "bootstrap.checkpoint", "segment.log"]
    return Scenario(root, files, relative=True)


BUILDERS = {
    "healthy": _healthy,
    "legacy": _legacy,
    "crash": _crash,
    "corrupt": _corrupt,
    "bad-batches-a": _bad_batches_a,
    "bad-batches-b": _bad_batches_b,
    "bad-batches-c": _bad_batches_c,
    "index-errors": _index_errors,
    "txn-errors": _txn_errors,
    "kraft": _kraft,
}

FLAGS: dict[str, dict[str, object]] = {
    "plain": {},
    "deep-iteration": {"deep_iteration": True},
    "print-data-log": {"print_data_log": True},
    "verify-index-only": {"verify_index_only": True},
    "index-sanity-check": {"index_sanity_check": True},
    "max-bytes": {},  # filled per scenario: half the largest .log/.checkpoint
}


@pytest.fixture(scope="session")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scenario]:
    base = tmp_path_factory.mktemp("dump")
    out = {}
    for name, build in BUILDERS.items():
        s = build(base / name)
        sizes = [
            (s.dir / Path(f).name).stat().st_size
            for f in s.files
            if f.endswith((".log", ".checkpoint")) and (s.dir / Path(f).name).exists()
        ]
        s.max_bytes = max(sizes, default=0) // 2
        out[name] = s
    return out


#: (release, directory, option set) whose output ``dump`` does not reproduce yet, "*" for
#: any (docs/dump.md, "Not reproduced yet"); every other one is compared with the real tool
NOT_YET: dict[tuple[str, str, str], str] = {}


def _same_identity_hashes(stderr: str) -> str:
    """The JVM's identity hash in ``Object.toString()`` of a file channel (up to 2.1.0, in
    the exception of a batch header cut by the end of a file) as ``dump`` prints it
    (``javaemu.UNKNOWN_IDENTITY_HASH``): the JVM draws it at run time."""
    return re.sub(
        r"(sun\.nio\.ch\.FileChannelImpl@)[0-9a-f]+", rf"\g<1>{UNKNOWN_IDENTITY_HASH}", stderr
    )


def _options(s: Scenario, flag: str) -> dict[str, object]:
    return {"max_bytes": s.max_bytes} if flag == "max-bytes" else dict(FLAGS[flag])


def _ours(s: Scenario, options: dict[str, object], version: str) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(s.dir if s.relative else ROOT)
    try:
        rc = dump(s.files, out=out, err=err, fmt=format_of(version), **options)  # type: ignore[arg-type]
    finally:
        os.chdir(cwd)
    return out.getvalue(), err.getvalue(), rc


def _not_compared(version: str, name: str, flag: str) -> str | None:
    """Why (version, scenario, flag) is not compared (None: it is)."""
    if not format_of(version).has(flag) and flag != "plain":
        return f"Kafka {version}'s DumpLogSegments has no --{flag}"
    gap = next(
        (
            NOT_YET[k]
            for k in ((version, name, flag), (version, name, "*"), (version, "*", "*"))
            if k in NOT_YET
        ),
        None,
    )
    return None if gap is None else f"not reproduced yet (docs/dump.md): {gap}"


@pytest.fixture(scope="module")
def tool_runs(
    request: pytest.FixtureRequest, scenarios: dict[str, Scenario]
) -> Iterator[dict[tuple[str, str, str], Future[Any]]]:
    """Kafka's tool on every (version, scenario, flag) the run selected of
    :func:`test_matches_kafka_dump_log_segments`, all started at once, two JVMs at a time
    (each run is mostly a JVM starting: two overlap on two cores); each test waits for its
    own."""
    from conformance.jvm import kafka_jars

    futures: dict[tuple[str, str, str], Future[Any]] = {}
    pool = ThreadPoolExecutor(2)
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if getattr(item, "originalname", "") != "test_matches_kafka_dump_log_segments":
            continue
        key = (params["version"], params["name"], params["flag"])
        if key in futures or _not_compared(*key) is not None:
            continue
        s = scenarios[key[1]]
        futures[key] = pool.submit(
            kafka_jars.dump_log_segments,
            key[0],
            s.files,
            cwd=s.dir if s.relative else ROOT,
            **_options(s, key[2]),  # type: ignore[arg-type]
        )
    try:
        yield futures
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.oracle
@pytest.mark.parametrize("flag", list(FLAGS))
@pytest.mark.parametrize("name", list(BUILDERS))
@pytest.mark.parametrize("version", VERSIONS)
def test_matches_kafka_dump_log_segments(
    scenarios: dict[str, Scenario],
    tool_runs: dict[tuple[str, str, str], Future[Any]],
    name: str,
    flag: str,
    version: str,
) -> None:
    """Each broker version's own tool against ``dump`` in that version's format."""
    from conformance.jvm import kafka_jars

    s = scenarios[name]
    why = _not_compared(version, name, flag)
    if why is not None:
        pytest.skip(why)
    options = _options(s, flag)
    try:
        java = tool_runs[(version, name, flag)].result()
    except kafka_jars.KafkaJarsUnavailable as e:  # pragma: no cover
        pytest.skip(str(e))
    out, err, rc = _ours(s, options, version)
    assert out == java.stdout
    assert err == _same_identity_hashes(first_trace_line_only(java.stderr))
    assert rc == java.returncode


# ------------------------------------------------------------------------------------------
# without Java


A1_DUMP = """\
Dumping {d}/00000000000000000100.log
Log starting offset: 100
baseOffset: 100 lastOffset: 102 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 \
producerEpoch: -1 partitionLeaderEpoch: -1 isTransactional: false isControl: false \
deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000005 size: 99 magic: 2 \
compresscodec: none crc: 1476234221 isvalid: true
| offset: 100 CreateTime: 1700000000000 keySize: 2 valueSize: 2 sequence: -1 headerKeys: [h1,h2] \
key: k0 payload: v0
| offset: 101 CreateTime: 1700000000005 keySize: -1 valueSize: 2 sequence: -1 headerKeys: [] \
payload: v1
| offset: 102 CreateTime: 1699999999990 keySize: 2 valueSize: -1 sequence: -1 headerKeys: [] key: k2
Dumping {d}/00000000000000000200.log
Log starting offset: 200
offset: 100 position: 0 CreateTime: 1700000000000 size: 38 magic: 1 compresscodec: none \
crc: 1957318976 isvalid: true
| offset: 100 CreateTime: 1700000000000 keySize: 2 valueSize: 2 isValid: true crc: 1957318976} \
key: k0 payload: v0
offset: 100 position: 38 NoTimestampType: -1 size: 30 magic: 0 compresscodec: none crc: 2258072140 \
isvalid: true
| offset: 100 NoTimestampType: -1 keySize: 2 valueSize: 2 isValid: true crc: 2258072140} key: k0 \
payload: v0
"""


def test_spec_reference_bytes_dump_as_kafka_prints_them(tmp_path: Path) -> None:
    """Output of the real tool (3.9.2) for the spec's Appendix A bytes, pinned."""
    (tmp_path / "00000000000000000100.log").write_bytes(
        (SAMPLES / "spec-a1-v2-three-records.bin").read_bytes()
    )
    (tmp_path / "00000000000000000200.log").write_bytes(
        (SAMPLES / "spec-a2-v1-message.bin").read_bytes()
        + (SAMPLES / "spec-a2-v0-message.bin").read_bytes()
    )
    out, err = io.StringIO(), io.StringIO()
    files = [str(tmp_path / "00000000000000000100.log"), str(tmp_path / "00000000000000000200.log")]
    assert dump(files, print_data_log=True, fmt=F39, out=out, err=err) == 0
    assert out.getvalue() == A1_DUMP.replace("{d}", str(tmp_path))
    assert err.getvalue() == (
        f"Non-consecutive offsets in {tmp_path}/00000000000000000200.log\n"
        "  100 is followed by 100\n"
    )


def test_uncaught_exception_keeps_partial_stdout(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    bad = bytearray(v2(0, 1))
    bad[22] |= 5
    log.write_bytes(seal_v2(bytes(bad)))
    out, err = io.StringIO(), io.StringIO()
    assert dump([str(log)], fmt=F39, out=out, err=err) == 1
    assert out.getvalue().endswith("deleteHorizonMs: OptionalLong.empty")  # no newline
    assert err.getvalue() == (
        'Exception in thread "main" java.lang.IllegalArgumentException: '
        "Unknown compression type id: 5\n"
    )


def test_zero_tail_and_trailer(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(v2(0) + bytes(17))
    out, err = io.StringIO(), io.StringIO()
    assert dump([str(log)], fmt=F39, out=out, err=err) == 0
    assert out.getvalue().endswith(
        "Found 17 invalid bytes at the end of 00000000000000000000.log\n"
    )
    log.write_bytes(v2(0) + bytes(18))
    out, err = io.StringIO(), io.StringIO()
    assert dump([str(log)], fmt=F39, out=out, err=err) == 1
    assert err.getvalue() == (
        'Exception in thread "main" org.apache.kafka.common.errors.CorruptRecordException: '
        f"Found record size 0 smaller than minimum record overhead (14) in file {log}.\n"
    )


def test_java_long_parsing() -> None:
    assert java_parse_int("00000000000000000042") == 42
    assert java_parse_int("+7") == 7 and java_parse_int("-7") == -7
    assert java_parse_int("\u0663") == 3  # Character.digit accepts any Nd digit
    for bad in ("", "+", " 1", "1_0", "9223372036854775808", "0x10"):
        with pytest.raises(Exception, match="For input string"):
            java_parse_int(bad)


def test_scala_hashmap_order() -> None:
    m = ScalaHashMap()
    keys = [f"/tmp/d/{i:020d}.index" for i in range(20)]
    for k in keys:
        m.put(k, [k])
    order = [k for k, _ in m.items()]
    assert sorted(order) == keys and order != keys  # hash order, not insertion order
    assert m._table == 32  # grew once: 12th insert reaches 0.75 * 16


def test_json_documents(scenarios: dict[str, Scenario]) -> None:
    s = scenarios["healthy"]
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(s.dir)
    try:
        rc = dump_json(s.files, out=out, err=err)
    finally:
        os.chdir(cwd)
    docs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(docs) == len(s.files) and rc == 0
    kinds = {d.get("kind", "log") for d in docs}
    assert kinds == {"log", "index", "timeindex", "txnindex", "snapshot", "unknown"}
    for f, d in zip(s.files, docs, strict=True):
        if f.endswith(".log"):
            VALIDATOR.validate(d)
            assert d["outcome"] == "ok" and d["batches"]
        else:
            assert d["file"] == f and d["error"] is None
    txn = next(d for d in docs if d.get("kind") == "txnindex" and d["entries"])
    assert set(txn["entries"][0]) == {
        "version",
        "producerId",
        "firstOffset",
        "lastOffset",
        "lastStableOffset",
    }
    assert "Ignoring unknown file partition.metadata" in err.getvalue()


def test_cli_help_and_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    with pytest.raises(SystemExit):
        main(["dump", "--help"])
    text = capsys.readouterr().out
    assert "examples:" in text and "--print-data-log" in text and "exit codes:" in text
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(v2(0, 2))
    assert main(["dump", "--deep-iteration", str(log)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"Dumping {log}" and lines[3].startswith("| offset: 0 CreateTime:")
    assert main(["dump", "--json", str(log)]) == 0
    VALIDATOR.validate(json.loads(capsys.readouterr().out))


@pytest.mark.oracle
def test_timeindex_lookup_with_duplicate_index_offsets(tmp_path: Path) -> None:
    from conformance.jvm import kafka_jars

    batches = [v2(0, 3), v2(3, 3), v2(6, 3), v2(9, 3)]
    pos = [0]
    for b in batches:
        pos.append(pos[-1] + len(b))
    (tmp_path / "00000000000000000000.log").write_bytes(b"".join(batches))
    (tmp_path / "00000000000000000000.index").write_bytes(
        struct.pack(">8i", 2, 0, 5, pos[1], 5, pos[1], 5, pos[3])
    )
    (tmp_path / "00000000000000000000.timeindex").write_bytes(struct.pack(">qi", TS + 2, 5))
    files = [str(tmp_path / "00000000000000000000.timeindex")]
    java = kafka_jars.dump_log_segments(KAFKA, files)
    out, err = io.StringIO(), io.StringIO()
    dump(files, fmt=F39, out=out, err=err)
    assert (out.getvalue(), err.getvalue()) == (java.stdout, java.stderr)


def test_kraft_control_values_are_parsed_by_wire_control() -> None:
    """dump only formats: the KRaft control values are ``wire.control``'s structured values,
    with the JVM's exceptions for truncated or null values."""
    from conformance.errors import DecodeError, NullPointerError
    from conformance.wire import control

    h = control.read_kraft_control_value(control.SNAPSHOT_HEADER, struct.pack(">hq", 0, TS) + b"\0")
    assert h == control.SnapshotHeader(0, TS)
    assert control.read_kraft_version(struct.pack(">hh", 0, 1) + b"\0") == control.KRaftVersion(
        0, 1
    )
    assert control.read_snapshot_footer(b"\0\0\0") == control.SnapshotFooter(0)
    directory = uuid.UUID(int=7).bytes
    value = (
        struct.pack(">h", 0)
        + _uv(2)
        + struct.pack(">i", 1)
        + directory
        + _uv(2)
        + _cstr("CONTROLLER")
        + _cstr("host")
        + struct.pack(">H", 9093)
        + b"\0"
        + struct.pack(">hh", 0, 1)
        + b"\0\0\0"
    )
    voters = control.read_voters(value)
    assert voters == control.Voters(
        0,
        (control.Voter(1, directory, (control.VoterEndpoint("CONTROLLER", "host", 9093),), 0, 1),),
    )
    with pytest.raises(DecodeError) as e:
        control.read_snapshot_header(b"\0\0\0")
    assert e.value.kafka_exception == "java.nio.BufferUnderflowException"
    with pytest.raises(NullPointerError):
        control.read_kraft_control_value(control.KRAFT_VOTERS, None)
    with pytest.raises(DecodeError) as e:
        control.read_voters(struct.pack(">h", 0) + _uv(0))
    assert e.value.java_string() == (
        "java.lang.RuntimeException: non-nullable field voters was serialized as null"
    )
