"""``conformance.logdir.verify``: clean directories written by ``conformance.logdir.writer``
give no findings; every finding code is planted into a copy of a clean directory and reported
at the exact file and byte position, without unrelated codes."""

from __future__ import annotations

import json
import os
import shutil
import struct
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance import cli
from conformance.codecs import CODEC_IDS
from conformance.fileio import FileSource
from conformance.logdir import checkpoint, snapshot
from conformance.logdir.txnindex import AbortedTxn, TransactionIndex, write_aborted_txn
from conformance.logdir.verify import (
    FINDING_CODES,
    SEVERITY,
    DirReport,
    verify_dir,
    verify_segment,
)
from conformance.logdir.writer import LogConfig, PartitionWriter, filename_prefix
from conformance.stream.splitter import Splitter
from conformance.wire.batch import seal_v2
from conformance.wire.builder import BatchBuilder, end_txn_marker_batch

CODECS = list(CODEC_IDS)  # every codec


# ------------------------------------------------------------------------------- builders


def v2(off: int, n: int, ts: int, codec: str = "none", value: bytes = b"v" * 40, **kw) -> bytes:
    b = BatchBuilder(base_offset=off, compression=codec, **kw)
    for i in range(n):
        b.append(ts + i, b"k%d" % i, value)
    return b.build()


def legacy(magic: int, off: int, n: int, ts: int, codec: str = "none") -> bytes:
    b = BatchBuilder(magic=magic, base_offset=off, compression=codec)
    for i in range(n):
        b.append(ts + i, b"k%d" % i, b"legacy-value")
    return b.build()


def write(
    root: Path,
    batches: list[bytes],
    *,
    segment_bytes: int = 3000,
    interval: int = 0,
    clean: bool = True,
    topic: str = "topic",
    partition: int = 0,
    index_bytes: int = 10 << 20,
) -> Path:
    w = PartitionWriter(
        root,
        topic,
        partition,
        LogConfig(
            segment_bytes=segment_bytes,
            index_interval_bytes=interval,
            segment_index_bytes=index_bytes,
        ),
    )
    for b in batches:
        w.append(b)
    return w.close(clean=clean)


def plain_batches(count: int = 60, records: int = 3) -> list[bytes]:
    out, off = [], 0
    for i in range(count):
        out.append(v2(off, records, 1000 + 10 * i, CODECS[i % 5]))
        off += records
    return out


def mixed_magic_batches() -> list[bytes]:
    out, off, ts = [], 0, 1000
    for i in range(8):  # v0: one message per entry, and gzip/snappy wrappers
        out.append(legacy(0, off, 1, ts))
        off += 1
        out.append(legacy(0, off, 3, ts, ["gzip", "snappy"][i % 2]))
        off += 3
    for i in range(8):  # v1 (timestamps), uncompressed and compressed
        out.append(legacy(1, off, 1, ts + 10 * i))
        off += 1
        out.append(legacy(1, off, 3, ts + 10 * i + 5, ["gzip", "snappy", "lz4"][i % 3]))
        off += 3
    for i in range(8):  # v2 after an upgrade
        out.append(v2(off, 2, 2000 + 10 * i, CODECS[i % 5]))
        off += 2
    return out


def log_append_time_batches() -> list[bytes]:
    out, off = [], 0
    for i in range(20):
        out.append(
            v2(
                off,
                2,
                1000 + i,
                CODECS[i % 5],
                timestamp_type="LogAppendTime",
                log_append_time=5000 + 7 * i,
            )
        )
        off += 2
    return out


def txn_batches() -> list[bytes]:
    """Two transactional producers interleaved, an idempotent one, aborts and commits, and an
    ABORT marker that ends no transaction (Kafka writes no .txnindex entry for it)."""
    out: list[bytes] = []
    off, ts = 0, 1000
    seq = {1000: 0, 2000: 0, 3000: 0}

    def data(pid: int, n: int, transactional: bool, codec: str = "none") -> None:
        nonlocal off, ts
        b = BatchBuilder(
            base_offset=off,
            compression=codec,
            producer_id=pid,
            producer_epoch=0,
            base_sequence=seq[pid],
            is_transactional=transactional,
        )
        for i in range(n):
            b.append(ts, b"k", b"txn-%d-%d" % (pid, i))
            ts += 1
        out.append(b.build())
        seq[pid] += n
        off += n

    def marker(pid: int, commit: bool) -> None:
        nonlocal off, ts
        out.append(
            end_txn_marker_batch(
                offset=off,
                producer_id=pid,
                producer_epoch=0,
                commit=commit,
                coordinator_epoch=3,
                timestamp=ts,
            )
        )
        off += 1
        ts += 1

    for r in range(12):
        data(1000, 2, True, CODECS[r % 5])
        data(2000, 3, True)
        data(3000, 2, False, "lz4")
        data(1000, 1, True)
        marker(1000, commit=r % 3 != 0)
        data(2000, 1, True, "gzip")
        marker(2000, commit=r % 2 == 0)
        if r == 5:
            marker(4000, commit=False)  # nothing to abort
    return out


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("clean")
    dirs = {
        "v2-i0": write(root / "a", plain_batches(), interval=0),
        "v2-i4096": write(root / "b", plain_batches(120), segment_bytes=12000, interval=4096),
        "mixed-magic": write(root / "c", mixed_magic_batches(), segment_bytes=1500, interval=0),
        "log-append-time": write(root / "d", log_append_time_batches(), segment_bytes=1200),
        "txn": write(root / "e", txn_batches(), segment_bytes=2500, interval=0),
        "txn-i4096": write(root / "f", txn_batches(), segment_bytes=1 << 20, interval=4096),
        "unclean": write(root / "g", plain_batches(), interval=0, clean=False),
        "unclean-i4096": write(root / "h", plain_batches(), interval=4096, clean=False),
    }
    logdir = root / "logdir"
    write(logdir, plain_batches(20), topic="orders", partition=0)
    write(logdir, txn_batches(), topic="orders", partition=1, segment_bytes=2000)
    entries = [checkpoint.OffsetEntry("orders", 0, 60), checkpoint.OffsetEntry("orders", 1, 100)]
    for name in checkpoint.OFFSET_CHECKPOINTS:
        (logdir / name).write_bytes(checkpoint.write_offset_checkpoint(entries))
    (logdir / "meta.properties").write_text(
        "#\n#Tue Jan 01 00:00:00 UTC 2030\nnode.id=1\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\n"
        "version=1\ncluster.id=abc\n"
    )
    (logdir / ".lock").touch()
    dirs["logdir"] = logdir
    return dirs


def copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def headers(log: Path) -> list:  # type: ignore[type-arg]
    with FileSource(log) as src:
        return list(Splitter(src, "file", str(log)))


def segments(pdir: Path) -> list[Path]:
    return sorted(pdir.glob("*.log"))


def patch(path: Path, position: int, data: bytes) -> None:
    b = bytearray(path.read_bytes())
    b[position : position + len(data)] = data
    path.write_bytes(bytes(b))


def append(path: Path, data: bytes) -> int:
    size = path.stat().st_size if path.exists() else 0
    with open(path, "ab") as f:
        f.write(data)
    return size


def rewrite_batch(
    log: Path, index: int, change: Callable[[bytearray], None], codec: str | None = None
) -> int:
    """Change batch ``index`` (or the first batch using ``codec`` from there), reseal its CRC;
    returns its position."""
    hs = headers(log)
    if codec is not None:
        codes = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
        h = next(h for h in hs[index:] if h.compression_id == codes[codec])
    else:
        h = hs[index]
    raw = bytearray(h.raw)
    change(raw)
    patch(log, h.position, seal_v2(raw))
    return h.position


def found(report: DirReport) -> list[tuple[str, Path, int]]:
    return [(f.code, Path(f.file), f.position) for f in report.findings]


def assert_only(
    report: DirReport, code: str, file: Path, position: int, also: set[str] = frozenset()
) -> None:  # type: ignore[assignment]
    got = found(report)
    assert (code, file, position) in got, got
    unrelated = {c for c, _, _ in got} - {code} - set(also)
    assert not unrelated, got


# ----------------------------------------------------------------------------- clean dirs


@pytest.mark.parametrize(
    "name", ["v2-i0", "v2-i4096", "mixed-magic", "log-append-time", "txn", "txn-i4096", "logdir"]
)
def test_clean_directories_have_no_findings(clean: dict[str, Path], name: str) -> None:
    report = verify_dir(clean[name])
    assert report.findings == [], report.format_text()
    assert report.ok and report.batches > 0


def test_clean_dirs_exercise_what_they_claim(clean: dict[str, Path]) -> None:
    assert len(segments(clean["v2-i0"])) > 2
    assert all(p.stat().st_size > 0 for p in clean["v2-i0"].glob("*.index") if p.stem != "x")
    assert list(clean["txn"].glob("*.txnindex"))
    assert len(segments(clean["txn"])) > 2
    assert {h.magic for log in segments(clean["mixed-magic"]) for h in headers(log)} == {0, 1, 2}
    report = verify_dir(clean["logdir"])
    assert report.partitions == 2


@pytest.mark.parametrize("name", ["unclean", "unclean-i4096"])
def test_unclean_close_reports_zero_tails_as_informational(
    clean: dict[str, Path], name: str
) -> None:
    report = verify_dir(clean[name])
    assert report.codes() == {"index-zero-tail", "timeindex-zero-tail"}
    assert report.ok
    assert all(f.severity == "info" for f in report.findings)


def test_single_log_file_and_verify_segment(clean: dict[str, Path]) -> None:
    for log in segments(clean["txn"]):
        assert verify_segment(log) == []
        report = verify_dir(log)
        assert report.findings == [] and report.segments == 1


def test_compaction_gap_allowed_at_or_below_cleaner_checkpoint(tmp_path: Path) -> None:
    batches = [v2(0, 3, 1000), v2(3, 3, 1010), v2(10, 3, 1020), v2(13, 2, 1030), v2(20, 1, 1040)]
    pdir = write(tmp_path, batches, topic="compacted")
    log = segments(pdir)[0]
    hs = headers(log)
    report = verify_dir(tmp_path)  # no cleaner-offset-checkpoint: two gaps
    assert found(report) == [
        ("offset-gap", log, hs[2].position),
        ("offset-gap", log, hs[4].position),
    ]
    ckpt = tmp_path / "cleaner-offset-checkpoint"
    ckpt.write_bytes(
        checkpoint.write_offset_checkpoint([checkpoint.OffsetEntry("compacted", 0, 9)])
    )
    assert found(verify_dir(tmp_path)) == [("offset-gap", log, hs[4].position)]
    assert found(verify_dir(pdir)) == [
        ("offset-gap", log, hs[4].position)
    ]  # root found from the partition
    ckpt.write_bytes(
        checkpoint.write_offset_checkpoint([checkpoint.OffsetEntry("compacted", 0, 19)])
    )
    assert verify_dir(tmp_path).findings == []
    ckpt.write_bytes(checkpoint.write_offset_checkpoint([checkpoint.OffsetEntry("other", 0, 99)]))
    assert len(verify_dir(tmp_path).findings) == 2


def test_first_segment_may_start_after_its_name(tmp_path: Path) -> None:
    """docs/format.md §6.2: name base <= first batch offset (compaction/truncation) is fine."""
    w = PartitionWriter(tmp_path)
    w.append(v2(5, 2, 1000))
    w.append(v2(7, 2, 1001))
    w.close()
    assert verify_dir(w.dir).findings == []


# ------------------------------------------------------------------- planting, per code
# each planter: (tmp_path, clean dirs) -> (report, file, position, codes allowed besides)

Planted = tuple[DirReport, Path, int, set[str]]


def _decode_plant(change: Callable[[bytearray], None], codec: str) -> Callable[..., Planted]:
    def plant(tmp: Path, clean: dict[str, Path]) -> Planted:
        pdir = copy(clean["v2-i0"], tmp)
        log = segments(pdir)[1]
        pos = rewrite_batch(log, 1, change, codec)
        return verify_dir(pdir), log, pos, set()

    return plant


def _flip_value(raw: bytearray) -> None:
    raw[-3] ^= 0xFF


def _count_plus_one(raw: bytearray) -> None:
    struct.pack_into(">i", raw, 57, struct.unpack_from(">i", raw, 57)[0] + 1)


def _codec_5(raw: bytearray) -> None:
    raw[22] = (raw[22] & ~7) | 5


def _garbage_payload(raw: bytearray) -> None:
    raw[61:] = b"\xab" * (len(raw) - 61)


def _snappy_negative_chunk(raw: bytearray) -> None:
    struct.pack_into(">i", raw, 61 + 16, -1)


def plant_corrupt_record(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    log = segments(pdir)[1]
    h = headers(log)[2]
    patch(log, h.position + h.size_in_bytes - 3, b"\x00")  # CRC no longer matches
    return verify_dir(pdir), log, h.position, set()


def next_offset(log: Path) -> int:
    return headers(log)[-1].last_offset + 1


def plant_runtime_exception(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    log = segments(pdir)[-1]
    b = BatchBuilder(
        base_offset=next_offset(log),
        producer_id=9,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
    )
    b._append(5000, None, b"\0\0\0\0\0\3", (), None, control=True)  # null control key: NPE
    pos = append(log, b.build())
    return verify_dir(pdir), log, pos, set()


def plant_decompressed_limit(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = write(
        tmp, [v2(0, 2, 1000), v2(2, 1, 1001, "gzip", value=bytes(200_000)), v2(3, 2, 1002, "zstd")]
    )
    log = segments(pdir)[0]
    return verify_dir(pdir, max_decompressed=100_000), log, headers(log)[1].position, set()


def plant_records_exceed_offsets(tmp: Path, clean: dict[str, Path]) -> Planted:
    from conformance.corpus.hostile import tiny_records_batch

    pdir = copy(clean["v2-i0"], tmp)
    log = segments(pdir)[-1]
    pos = append(
        log, tiny_records_batch(5, "lz4", base_offset=next_offset(log))
    )  # 5 records, 1 offset
    return verify_dir(pdir), log, pos, set()


def plant_log_zero_tail(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    log = segments(pdir)[-1]
    pos = append(log, bytes(1000))
    return verify_dir(pdir), log, pos, set()


def plant_truncated_tail(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    log = segments(pdir)[-1]
    pos = append(log, v2(next_offset(log), 3, 9000)[:30])
    return verify_dir(pdir), log, pos, set()


def plant_overlap(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    log = segments(pdir)[-1]
    pos = append(log, headers(log)[-1].raw)  # the last batch twice
    return verify_dir(pdir), log, pos, set()


def plant_overlap_across_segments(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    first, second = segments(pdir)[:2]
    append(first, headers(second)[0].raw)  # segment 1's first batch also ends segment 0
    return verify_dir(pdir), second, 0, set()


def plant_gap(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    log = segments(pdir)[-1]
    pos = append(log, v2(next_offset(log) + 5, 3, 9000))
    return verify_dir(pdir), log, pos, set()


def plant_segment_base(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    log = segments(pdir)[1]
    base = int(log.stem)
    new = pdir / f"{filename_prefix(base + 1)}.log"
    log.rename(new)
    for suffix in (".index", ".timeindex"):  # their entries are relative to the old name
        (pdir / f"{log.stem}{suffix}").unlink()
    return verify_dir(pdir), new, 0, set()


def _index(pdir: Path, n: int, suffix: str = ".index") -> Path:
    return segments(pdir)[n].with_suffix(suffix)


def plant_index_zero_tail(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    idx = _index(pdir, 0)
    pos = append(idx, bytes(80))
    return verify_dir(pdir), idx, pos, set()


def plant_index_sanity(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    idx = _index(pdir, 0)
    data = idx.read_bytes()
    idx.write_bytes(data[:-3])
    return verify_dir(pdir), idx, (len(data) - 3) // 8 * 8, set()


def plant_index_not_monotonic(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    idx = _index(pdir, 0)
    d = bytearray(idx.read_bytes())
    d[8:16], d[16:24] = d[16:24], d[8:16]
    idx.write_bytes(bytes(d))
    return verify_dir(pdir), idx, 16, set()


def plant_index_outside(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    idx = _index(pdir, 0)
    n = idx.stat().st_size // 8
    patch(idx, (n - 1) * 8 + 4, struct.pack(">i", segments(pdir)[0].stat().st_size + 100))
    return verify_dir(pdir), idx, (n - 1) * 8, set()


def plant_index_not_boundary(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    idx = _index(pdir, 0)
    rel, pos = struct.unpack_from(">ii", idx.read_bytes(), 8)
    patch(idx, 8, struct.pack(">ii", rel, pos + 1))
    return verify_dir(pdir), idx, 8, set()


def plant_index_offset(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    idx = _index(pdir, 0)
    rel, pos = struct.unpack_from(">ii", idx.read_bytes(), 8)
    patch(idx, 8, struct.pack(">ii", rel - 1, pos))
    return verify_dir(pdir), idx, 8, set()


def plant_index_multi_batch(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i4096"], tmp)
    idx = _index(pdir, 0)
    log = segments(pdir)[0]
    rel, pos = struct.unpack_from(">ii", idx.read_bytes(), 0)
    hs = headers(log)
    k = next(i for i, h in enumerate(hs) if h.position == pos)
    patch(idx, 0, struct.pack(">ii", hs[k + 2].last_offset - int(log.stem), pos))
    return verify_dir(pdir), idx, 0, set()


def plant_timeindex_zero_tail(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    tidx = _index(pdir, 0, ".timeindex")
    pos = append(tidx, bytes(24))
    return verify_dir(pdir), tidx, pos, set()


def plant_timeindex_sanity(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    tidx = _index(pdir, 0, ".timeindex")
    data = tidx.read_bytes()
    tidx.write_bytes(data[:-5])
    return verify_dir(pdir), tidx, (len(data) - 5) // 12 * 12, set()


def plant_timeindex_not_monotonic(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    tidx = _index(pdir, 0, ".timeindex")
    d = bytearray(tidx.read_bytes())
    d[12:24], d[24:36] = d[24:36], d[12:24]
    tidx.write_bytes(bytes(d))
    return verify_dir(pdir), tidx, 24, set()


def plant_timeindex_timestamp(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    tidx = _index(pdir, 0, ".timeindex")
    ts, rel = struct.unpack_from(">qi", tidx.read_bytes(), 12)
    patch(tidx, 12, struct.pack(">qi", ts + 1, rel))
    return verify_dir(pdir), tidx, 12, set()


def plant_timeindex_offset(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    tidx = _index(pdir, 0, ".timeindex")
    ts, rel = struct.unpack_from(">qi", tidx.read_bytes(), 12)
    patch(tidx, 12, struct.pack(">qi", ts, rel - 1))
    return verify_dir(pdir), tidx, 12, set()


def _txn_segment(pdir: Path, base_above_zero: bool = False) -> Path:
    """The .txnindex of the first segment that has one (with base > 0 if asked)."""
    for log in segments(pdir):
        t = log.with_suffix(".txnindex")
        if t.exists() and (int(log.stem) > 0 or not base_above_zero):
            return t
    raise AssertionError("no .txnindex")


def plant_txn_sanity(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["txn"], tmp)
    t = _txn_segment(pdir, base_above_zero=True)
    base = int(t.stem)
    pos = append(t, write_aborted_txn(AbortedTxn(0, 1000, base - 5, base - 1, base)))
    return verify_dir(pdir), t, pos, set()


def plant_txn_bad_version(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["txn"], tmp)
    t = _txn_segment(pdir)
    patch(t, 0, b"\x01")
    return verify_dir(pdir), t, 0, set()


def plant_txn_partial(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["txn"], tmp)
    t = _txn_segment(pdir)
    pos = append(t, bytes(10))
    return verify_dir(pdir), t, pos, set()


def plant_txn_missing(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["txn"], tmp)
    t = _txn_segment(pdir)
    first = next(iter(TransactionIndex.open(t)))
    t.write_bytes(t.read_bytes()[34:])
    log = t.with_suffix(".log")
    marker = next(h for h in headers(log) if h.last_offset == first.last_offset)
    return verify_dir(pdir), log, marker.position, set()


def plant_txn_extra(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["txn"], tmp)
    t = _txn_segment(pdir)
    last = headers(t.with_suffix(".log"))[-1].last_offset
    pos = append(t, write_aborted_txn(AbortedTxn(0, 1000, last - 3, last + 100, last + 101)))
    return verify_dir(pdir), t, pos, set()


def plant_txn_extra_at_commit(tmp: Path, clean: dict[str, Path]) -> Planted:
    """An entry whose lastOffset is a COMMIT marker (inserted in lastOffset order)."""
    pdir = copy(clean["txn"], tmp)
    t = _txn_segment(pdir)
    log = t.with_suffix(".log")
    commit = next(h for h in headers(log) if h.is_control and list(h)[0].key[3] == 1)
    new = AbortedTxn(
        0, commit.producer_id, commit.last_offset - 1, commit.last_offset, commit.last_offset + 1
    )
    entries = [write_aborted_txn(e) for e in TransactionIndex.open(t)]
    k = sum(1 for e in TransactionIndex.open(t) if e.last_offset < commit.last_offset)
    entries.insert(k, write_aborted_txn(new))
    t.write_bytes(b"".join(entries))
    return verify_dir(pdir), t, 34 * k, set()


def plant_txn_mismatch(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["txn"], tmp)
    t = _txn_segment(pdir)
    patch(t, 2, struct.pack(">q", 2999))
    return verify_dir(pdir), t, 0, set()


def plant_txn_wrong_lso(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["txn"], tmp)
    t = _txn_segment(pdir)
    txn = next(iter(TransactionIndex.open(t)))
    patch(t, 26, struct.pack(">q", txn.last_stable_offset + 1))
    return verify_dir(pdir), t, 0, set()


def plant_snapshot(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["txn"], tmp)
    snap = sorted(pdir.glob("*.snapshot"))[-1]
    assert len(snapshot.read_snapshot_file(snap)) > 0
    patch(snap, 20, b"\x7f")
    return verify_dir(pdir), snap, 2, set()


def plant_checkpoint(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    f = pdir / "leader-epoch-checkpoint"
    f.write_bytes(b"0\n1\nfoo 0\n")
    return verify_dir(pdir), f, 4, set()


def plant_metadata(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    f = pdir / "partition.metadata"
    f.write_bytes(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA")  # the all-zero topic id
    return verify_dir(pdir), f, 11, set()


def plant_unexpected(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    f = pdir / "notes.txt"
    f.write_text("hello")
    return verify_dir(pdir), f, 0, set()


def plant_lifecycle(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    src = segments(pdir)[0]
    f = src.with_name(src.name + ".deleted")
    shutil.copy(src, f)
    return verify_dir(pdir), f, 0, set()


def plant_io_error(tmp: Path, clean: dict[str, Path]) -> Planted:
    pdir = copy(clean["v2-i0"], tmp)
    f = pdir / f"{filename_prefix(99999)}.snapshot"
    f.mkdir()
    return verify_dir(pdir), f, 0, set()


PLANTERS: dict[str, Callable[[Path, dict[str, Path]], Planted]] = {
    "log-corrupt-record": plant_corrupt_record,
    "log-invalid-record": _decode_plant(_count_plus_one, "none"),
    "log-kafka-exception": _decode_plant(_garbage_payload, "gzip"),
    "log-codec-error": _decode_plant(_snappy_negative_chunk, "snappy"),
    "log-illegal-argument": _decode_plant(_codec_5, "none"),
    "log-runtime-exception": plant_runtime_exception,
    "log-decompressed-limit": plant_decompressed_limit,
    "batch-records-exceed-offsets": plant_records_exceed_offsets,
    "log-zero-tail": plant_log_zero_tail,
    "log-truncated-tail": plant_truncated_tail,
    "offset-overlap": plant_overlap,
    "offset-gap": plant_gap,
    "segment-base-offset-mismatch": plant_segment_base,
    "index-zero-tail": plant_index_zero_tail,
    "index-sanity-check": plant_index_sanity,
    "index-not-monotonic": plant_index_not_monotonic,
    "index-position-outside": plant_index_outside,
    "index-not-batch-boundary": plant_index_not_boundary,
    "index-offset-mismatch": plant_index_offset,
    "index-entry-multi-batch": plant_index_multi_batch,
    "timeindex-zero-tail": plant_timeindex_zero_tail,
    "timeindex-sanity-check": plant_timeindex_sanity,
    "timeindex-not-monotonic": plant_timeindex_not_monotonic,
    "timeindex-timestamp-mismatch": plant_timeindex_timestamp,
    "timeindex-offset-mismatch": plant_timeindex_offset,
    "txnindex-sanity-check": plant_txn_sanity,
    "txnindex-bad-version": plant_txn_bad_version,
    "txnindex-partial-entry": plant_txn_partial,
    "txnindex-missing": plant_txn_missing,
    "txnindex-extra": plant_txn_extra,
    "txnindex-mismatch": plant_txn_mismatch,
    "snapshot-unreadable": plant_snapshot,
    "checkpoint-unreadable": plant_checkpoint,
    "metadata-unreadable": plant_metadata,
    "unexpected-file": plant_unexpected,
    "lifecycle-file": plant_lifecycle,
    "io-error": plant_io_error,
}

VARIANTS: list[tuple[str, Callable[[Path, dict[str, Path]], Planted]]] = [
    ("offset-overlap", plant_overlap_across_segments),
    ("txnindex-extra", plant_txn_extra_at_commit),
    ("txnindex-mismatch", plant_txn_wrong_lso),
]


def test_every_code_has_a_planting_test() -> None:
    assert set(PLANTERS) == set(FINDING_CODES)
    assert set(SEVERITY) == set(FINDING_CODES)
    assert all(text and "\n" not in text for text in FINDING_CODES.values())


@pytest.mark.parametrize("code", sorted(FINDING_CODES))
def test_planted_defect_is_reported_exactly(
    code: str, tmp_path: Path, clean: dict[str, Path]
) -> None:
    report, file, position, also = PLANTERS[code](tmp_path, clean)
    assert_only(report, code, file, position, also)
    assert sum(1 for c, _, _ in found(report) if c == code) == 1, found(report)
    assert report.ok == (SEVERITY[code] == "info")


@pytest.mark.parametrize("code,planter", VARIANTS, ids=[p.__name__ for _, p in VARIANTS])
def test_planted_variants(
    code: str, planter: Callable[..., Planted], tmp_path: Path, clean: dict[str, Path]
) -> None:
    report, file, position, also = planter(tmp_path, clean)
    assert (code, file, position) in found(report), found(report)
    assert {c for c, _, _ in found(report)} <= {code} | also


def test_decode_findings_carry_the_java_exception(tmp_path: Path, clean: dict[str, Path]) -> None:
    expected = {
        "log-corrupt-record": "org.apache.kafka.common.errors.CorruptRecordException",
        "log-invalid-record": "org.apache.kafka.common.InvalidRecordException",
        "log-kafka-exception": "org.apache.kafka.common.KafkaException",
        "log-codec-error": "org.xerial.snappy.SnappyError",
        "log-illegal-argument": "java.lang.IllegalArgumentException",
        "log-runtime-exception": "java.lang.NullPointerException",
    }
    for i, (code, java) in enumerate(expected.items()):
        report = PLANTERS[code](tmp_path / str(i), clean)[0]
        (f,) = report.findings
        assert f.java_exception == java and java in f.message


def test_short_zero_tail_and_bad_batch_in_the_middle(
    tmp_path: Path, clean: dict[str, Path]
) -> None:
    pdir = copy(clean["v2-i0"], tmp_path)
    log = segments(pdir)[-1]
    pos = append(log, bytes(10))  # <= 17 bytes: Kafka's file reader ignores it
    assert found(verify_dir(pdir)) == [("log-zero-tail", log, pos)]
    # a corrupt batch early in the segment: the batches after it are still verified
    hs = headers(log)
    patch(log, hs[0].position + 70, b"\xee")
    assert found(verify_dir(pdir)) == [("log-corrupt-record", log, 0), ("log-zero-tail", log, pos)]
    # zeros followed by data are not a preallocated tail
    append(log, v2(hs[-1].last_offset + 1, 1, 99999))
    assert found(verify_dir(pdir)) == [
        ("log-corrupt-record", log, 0),
        ("log-corrupt-record", log, pos),
    ]


def test_unframeable_entry_stops_the_segment_but_not_the_partition(
    tmp_path: Path, clean: dict[str, Path]
) -> None:
    pdir = copy(clean["v2-i0"], tmp_path)
    logs = segments(pdir)
    h = headers(logs[0])[3]
    patch(logs[0], h.position + 8, struct.pack(">i", 5))  # size 5 < 14, not a zero tail
    report = verify_dir(pdir)
    assert found(report)[0] == ("log-corrupt-record", logs[0], h.position)
    # index entries past the unframeable entry cannot be judged; the next segment is checked
    assert {c for c, _, _ in found(report)} == {"log-corrupt-record"}


def test_findings_are_capped_per_file_and_code(tmp_path: Path) -> None:
    batches = [v2(i, 1, 1000 + i) for i in range(300)]
    pdir = write(tmp_path, batches, segment_bytes=1 << 30, interval=0)
    idx = _index(pdir, 0)
    d = bytearray(idx.read_bytes())
    for n in range(len(d) // 8):
        rel, pos = struct.unpack_from(">ii", d, n * 8)
        struct.pack_into(">ii", d, n * 8, rel, pos + 1)
    idx.write_bytes(bytes(d))
    report = verify_dir(pdir)
    assert len(report.findings) == 100
    assert list(report.suppressed.values()) == [len(d) // 8 - 100]
    assert not report.ok and "more index-not-batch-boundary" in report.format_text()


def test_log_dir_root_files(tmp_path: Path, clean: dict[str, Path]) -> None:
    root = copy(clean["logdir"], tmp_path)
    ckpt = root / "recovery-point-offset-checkpoint"
    ckpt.write_bytes(b"0\n3\norders 0 5\n")
    meta = root / "meta.properties"
    meta.write_bytes(b"#c\nversion=7\ncluster.id=x\n")
    (root / "orders-0.abc-delete").mkdir()
    (root / "stray.bin").write_bytes(b"x")
    report = verify_dir(root)
    assert sorted(found(report)) == sorted(
        [
            ("checkpoint-unreadable", ckpt, 2),
            ("metadata-unreadable", meta, 3),
            ("lifecycle-file", root / "orders-0.abc-delete", 0),
            ("unexpected-file", root / "stray.bin", 0),
        ]
    )
    by = {f.code: f for f in report.findings}
    assert by["checkpoint-unreadable"].java_exception == "java.io.IOException"
    assert "Expected [3] entries" in by["checkpoint-unreadable"].message


def test_orphaned_index_is_unexpected(tmp_path: Path, clean: dict[str, Path]) -> None:
    pdir = copy(clean["v2-i0"], tmp_path)
    orphan = pdir / f"{filename_prefix(77777)}.timeindex"
    orphan.write_bytes(b"")
    assert found(verify_dir(pdir)) == [("unexpected-file", orphan, 0)]


def test_memory_does_not_grow_with_log_size(tmp_path: Path) -> None:
    batches = [v2(i * 4, 4, 1000 + i, value=b"x" * 2000) for i in range(1000)]
    pdir = write(tmp_path, batches, segment_bytes=1 << 30, interval=4096)
    log = segments(pdir)[0]
    assert log.stat().st_size > 8_000_000
    tracemalloc.start()
    try:
        report = verify_dir(pdir)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.findings == [] and report.batches == 1000
    assert peak < 1_000_000, peak


# ------------------------------------------------------------------------------------ CLI


def main(argv: list[str]) -> int:
    """``kafka-conformance`` with only this module's subcommand (as ``cli.main`` runs it)."""
    return cli.main(argv)


def test_cli_picks_up_the_subcommand() -> None:
    from conformance.cli import verify_dir

    args = cli.build_parser().parse_args(["verify-dir", "some-dir"])
    assert args.func is verify_dir._cmd_verify_dir


def test_cli_exit_codes_and_outputs(
    tmp_path: Path, clean: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify-dir", str(clean["txn"])]) == 0
    out = capsys.readouterr()
    assert "clean" in out.out and out.err == ""  # no progress lines: stderr is not a TTY
    assert main(["verify-dir", str(clean["unclean"])]) == 0  # informational only
    assert "index-zero-tail" in capsys.readouterr().out

    report, file, position, _ = plant_index_offset(tmp_path, clean)
    assert main(["verify-dir", str(file.parent)]) == 1
    text = capsys.readouterr().out
    assert f"{file.name}\n  @{position} index-offset-mismatch [error]" in text
    assert main(["verify-dir", "--json", str(file.parent)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False
    assert [(f["code"], f["file"], f["position"]) for f in doc["findings"]] == [
        ("index-offset-mismatch", str(file), position)
    ]
    assert main(["verify-dir", str(tmp_path / "missing")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_cli_usage_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["verify-dir", "--max-decompressed", "0", "."])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["verify-dir"])
    assert e.value.code == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(["verify-dir", "--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    for code in FINDING_CODES:
        assert code in text
    assert "examples:" in text and "exit codes:" in text


def test_cli_progress_on_a_tty(
    clean: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["verify-dir", str(clean["v2-i0"])]) == 0
    assert "verify-dir: verifying" in capsys.readouterr().err


# ------------------------------------------------ against files Kafka's own classes wrote

KAFKA_VERSION = "3.9.2"

GEN_JAVA = r"""
import java.io.File;
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.*;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.*;

/** Writes partition directories with Kafka's LogSegment (as UnifiedLog drives it). */
public class Gen {
    static long ts = 1_700_000_000_000L;

    static MemoryRecords batch(long base, int n, Compression c, long pid, int seq, boolean txn) {
        MemoryRecordsBuilder b = MemoryRecords.builder(ByteBuffer.allocate(1 << 16), RecordBatch.CURRENT_MAGIC_VALUE,
            c, TimestampType.CREATE_TIME, base, 0L, pid, (short) (pid < 0 ? -1 : 0), seq, txn, 0);
        for (int i = 0; i < n; i++) b.append(ts + (i * 7) % 5, ("k" + i).getBytes(), ("value-" + base + "-" + i).getBytes());
        ts += 3;
        return b.build();
    }

    static MemoryRecords concat(List<MemoryRecords> parts) {
        int size = 0;
        for (MemoryRecords m : parts) size += m.sizeInBytes();
        ByteBuffer buf = ByteBuffer.allocate(size);
        for (MemoryRecords m : parts) buf.put(m.buffer().duplicate());
        buf.flip();
        return MemoryRecords.readableRecords(buf);
    }

    static void append(LogSegment seg, MemoryRecords recs) throws Exception {
        long last = -1;
        for (RecordBatch b : recs.batches()) last = b.lastOffset();
        seg.append(last, recs);
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0], "kafka-0");
        File rdir = new File(args[0], "recovered-0");
        dir.mkdirs();
        rdir.mkdirs();
        LogConfig config = new LogConfig(Map.of("index.interval.bytes", args[1], "segment.index.bytes", "4096"));
        Compression[] codecs = {Compression.NONE, Compression.gzip().build(), Compression.snappy().build(),
            Compression.lz4().build(), Compression.zstd().build()};
        long off = 0;
        LogSegment s0 = LogSegment.open(dir, 0, config, Time.SYSTEM, 0, false);
        for (int i = 0; i < 20; i++) {
            if (i % 4 == 3) {  // a follower append of three batches
                List<MemoryRecords> parts = new ArrayList<>();
                for (int j = 0; j < 3; j++) { parts.add(batch(off, 2, codecs[(i + j) % 5], -1, -1, false)); off += 2; }
                append(s0, concat(parts));
            } else {
                append(s0, batch(off, 3, codecs[i % 5], -1, -1, false)); off += 3;
            }
        }
        s0.onBecomeInactiveSegment();
        s0.close();
        LogSegment s1 = LogSegment.open(dir, off, config, Time.SYSTEM, 0, false);
        int seqA = 0, seqB = 0;
        for (int r = 0; r < 6; r++) {
            long firstA = off;
            append(s1, batch(off, 2, codecs[r % 5], 1000, seqA, true)); off += 2; seqA += 2;
            long firstB = off;
            append(s1, batch(off, 1, Compression.NONE, 2000, seqB, true)); off += 1; seqB += 1;
            boolean abortA = r % 2 == 0;
            append(s1, MemoryRecords.withEndTransactionMarker(off, ts++, 0, 1000, (short) 0,
                new EndTransactionMarker(abortA ? ControlRecordType.ABORT : ControlRecordType.COMMIT, 5)));
            if (abortA) s1.updateTxnIndex(new CompletedTxn(1000, firstA, off, true), firstB);  // LSO: B is open
            off += 1;
            append(s1, MemoryRecords.withEndTransactionMarker(off, ts++, 0, 2000, (short) 0,
                new EndTransactionMarker(ControlRecordType.ABORT, 5)));
            s1.updateTxnIndex(new CompletedTxn(2000, firstB, off, true), off + 1);
            off += 1;
        }
        s1.onBecomeInactiveSegment();
        s1.close();
        // preallocated (log.preallocate=true) and never closed: a crash
        LogSegment s2 = LogSegment.open(dir, off, config, Time.SYSTEM, 1 << 16, true);
        for (int i = 0; i < 10; i++) { append(s2, batch(off, 2, codecs[i % 5], -1, -1, false)); off += 2; }
        s2.flush();
        // written, then its indexes rebuilt by LogSegment.recover
        LogSegment s3 = LogSegment.open(rdir, 0, config, Time.SYSTEM, 0, false);
        long o = 0;
        for (int i = 0; i < 15; i++) {
            List<MemoryRecords> parts = new ArrayList<>();
            for (int j = 0; j < 2; j++) { parts.add(batch(o, 2, codecs[(i + j) % 5], -1, -1, false)); o += 2; }
            append(s3, concat(parts));
        }
        s3.close();
        new File(rdir, "00000000000000000000.index").delete();
        new File(rdir, "00000000000000000000.timeindex").delete();
        LogSegment s4 = LogSegment.open(rdir, 0, config, Time.SYSTEM, true, 0, false, "");
        s4.recover(new ProducerStateManager(new TopicPartition("recovered", 0), rdir, 60000,
            new ProducerStateManagerConfig(86400000, false), Time.SYSTEM), Optional.empty());
        s4.close();
    }
}
"""  # noqa: E501 - Java source, compiled verbatim


@pytest.fixture(scope="module")
def kafka_written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import subprocess

    try:
        from conformance.jvm import kafka_jars

        jars = kafka_jars.classpath(KAFKA_VERSION)
    except Exception as e:  # noqa: BLE001 - no Java/Maven/network: nothing to compare with
        pytest.skip(f"Kafka {KAFKA_VERSION} jars unavailable: {e}")
    root = tmp_path_factory.mktemp("kafka")
    (root / "Gen.java").write_text(GEN_JAVA)
    out = {}
    for interval in ("0", "4096"):
        target = root / f"i{interval}"
        target.mkdir()
        subprocess.run(
            [
                "java",
                "-cp",
                ":".join(map(str, jars)),
                str(root / "Gen.java"),
                str(target),
                interval,
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        out[interval] = target
    return out


@pytest.mark.oracle
@pytest.mark.parametrize("interval", ["0", "4096"])
def test_files_written_by_kafka_verify_clean(kafka_written: dict[str, Path], interval: str) -> None:
    root = kafka_written[interval]
    assert verify_dir(root / "recovered-0").findings == []
    report = verify_dir(root / "kafka-0")
    crashed = root / "kafka-0" / f"{filename_prefix(105)}"
    assert {(c, p.name) for c, p, _ in found(report)} == {
        ("log-zero-tail", crashed.name + ".log"),
        ("index-zero-tail", crashed.name + ".index"),
        ("timeindex-zero-tail", crashed.name + ".timeindex"),
    }
    assert report.ok and report.batches == 64
    assert list((root / "kafka-0").glob("*.txnindex"))


@pytest.mark.oracle
def test_index_mismatches_agree_with_dump_log_segments(
    kafka_written: dict[str, Path], tmp_path: Path
) -> None:
    from conformance.jvm import kafka_jars

    pdir = copy(kafka_written["0"] / "recovered-0", tmp_path)
    idx, tidx = pdir / f"{filename_prefix(0)}.index", pdir / f"{filename_prefix(0)}.timeindex"
    rel, pos = struct.unpack_from(">ii", idx.read_bytes(), 16)
    patch(idx, 16, struct.pack(">ii", rel - 1, pos))
    ts, rel = struct.unpack_from(">qi", tidx.read_bytes(), 24)
    patch(tidx, 24, struct.pack(">qi", ts + 1, rel))
    dump = kafka_jars.dump_log_segments(KAFKA_VERSION, [idx, tidx], verify_index_only=True)
    assert "Mismatches in" in dump.stderr and "Found timestamp mismatch" in dump.stderr, dump.stderr
    assert sorted(found(verify_dir(pdir))) == [
        ("index-offset-mismatch", idx, 16),
        ("timeindex-timestamp-mismatch", tidx, 24),
    ]


def test_random_damage_never_crashes_the_verifier(tmp_path: Path, clean: dict[str, Path]) -> None:
    import random

    rng = random.Random(1234)
    sources = [clean["txn"], clean["mixed-magic"], clean["v2-i4096"], clean["log-append-time"]]
    for i in range(int(os.environ.get("VERIFY_FUZZ_ROUNDS", "60"))):
        pdir = copy(sources[i % len(sources)], tmp_path / str(i))
        files = sorted(p for p in pdir.iterdir() if p.is_file())
        for _ in range(rng.randint(1, 4)):
            f = rng.choice(files)
            data = bytearray(f.read_bytes())
            action = rng.random()
            if data and action < 0.6:
                for _ in range(rng.randint(1, 8)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
            elif data and action < 0.8:
                del data[rng.randrange(len(data)) :]
            else:
                data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
            f.write_bytes(bytes(data))
        report = verify_dir(pdir)
        for f in report.findings:
            assert f.code in FINDING_CODES and f.position >= 0
            assert Path(f.file).exists()


def random_partition(rng, root: Path) -> Path:  # type: ignore[no-untyped-def]
    """A random but valid history: legacy prefix, codecs, timestamps that go back and forth,
    LogAppendTime, interleaved transactions of several producers, idempotent producers."""
    batches: list[bytes] = []
    off = 0
    if rng.random() < 0.3:
        for _ in range(rng.randint(1, 6)):
            magic = rng.choice([0, 1])
            n = rng.randint(1, 3)
            codec = (
                "none"
                if n == 1
                else rng.choice(["gzip", "snappy", "lz4"] if magic else ["gzip", "snappy"])
            )
            batches.append(legacy(magic, off, n, rng.randint(0, 5000), codec))
            off += n
    pids = [100 + i for i in range(rng.randint(1, 4))]
    txn_pids = {p for p in pids if rng.random() < 0.7}
    seq = dict.fromkeys(pids, 0)
    for _ in range(rng.randint(5, 60)):
        pid = rng.choice(pids + [-1])
        n = rng.randint(1, 4)
        ts = rng.randint(0, 10_000)
        if pid in txn_pids and rng.random() < 0.3:
            batches.append(
                end_txn_marker_batch(
                    offset=off,
                    producer_id=pid,
                    producer_epoch=0,
                    commit=rng.random() < 0.5,
                    coordinator_epoch=1,
                    timestamp=ts,
                )
            )
            off += 1
            continue
        kw: dict = {}
        if pid >= 0:
            kw = dict(
                producer_id=pid,
                producer_epoch=0,
                base_sequence=seq[pid],
                is_transactional=pid in txn_pids,
            )
            seq[pid] += n
        if rng.random() < 0.2:
            kw.update(timestamp_type="LogAppendTime", log_append_time=ts)
        batches.append(v2(off, n, ts, rng.choice(CODECS), **kw))
        off += n
    return write(
        root,
        batches,
        segment_bytes=rng.choice([300, 800, 2000, 1 << 20]),
        interval=rng.choice([0, 100, 4096]),
        clean=rng.random() < 0.8,
        index_bytes=rng.choice([4096, 10_000]),
    )


def test_random_valid_histories_have_no_findings(tmp_path: Path) -> None:
    import random

    rng = random.Random(99)
    for i in range(int(os.environ.get("VERIFY_FUZZ_ROUNDS", "40"))):
        pdir = random_partition(rng, tmp_path / str(i))
        report = verify_dir(pdir)
        assert report.codes() <= {"index-zero-tail", "timeindex-zero-tail"}, (
            i,
            report.format_text(),
        )
        shutil.rmtree(tmp_path / str(i))
