"""``conformance.logdir.writer`` against Kafka 3.9.2's own ``UnifiedLog``.

The same batch sequence (offsets already assigned) goes once through
``PartitionWriter.append`` and once through ``UnifiedLog.appendAsFollower`` (one batch per
append, so Kafka itself decides rolling, index entries, ``.txnindex`` entries and producer
snapshots), then both logs are closed cleanly and the partition directories are compared file
by file: the set of file names, then the bytes of every ``.log``, ``.index``, ``.timeindex``,
``.txnindex`` and ``.snapshot`` (and ``leader-epoch-checkpoint`` / ``partition.metadata``).

``UnifiedLog`` rather than ``LogSegment`` + a re-implemented roll rule: ``UnifiedLog.apply``
only needs a scheduler, a ``BrokerTopicStats`` and a ``LogDirFailureChannel``, so it is cheap
to create, and it leaves nothing to interpretation (``maybeRoll``, ``LocalLog.roll``,
``ProducerStateManager``, ``updateTxnIndex``, ``takeSnapshot`` on roll and close). The
scheduler given to it runs one-shot tasks (the flush after a roll) at once, delayed ones
(deleting ``*.deleted`` files) after close, and never periodic ones, so the producer-expiration
check cannot remove producers whose (1970) timestamps are "old"; segment.ms stays at its 7-day
default and all timestamps of a case lie within minutes of each other, so no time-based roll
happens (the writer does not model it).

All cases run in one JVM (``java -cp <kafka 3.9.2 jars> LogGen.java <root> <case>...``).
"""

from __future__ import annotations

import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.codecs import CODEC_IDS
from conformance.logdir import snapshot, txnindex
from conformance.logdir.writer import LogConfig, PartitionWriter
from conformance.wire.builder import BatchBuilder, end_txn_marker_batch

KAFKA_VERSION = "3.9.2"
TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
CODECS = list(CODEC_IDS)  # every codec

LOG_GEN_JAVA = r"""
import java.io.*;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.*;
import java.util.concurrent.*;
import kafka.log.UnifiedLog;
import kafka.server.BrokerTopicStats;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.Scheduler;
import org.apache.kafka.storage.internals.log.*;

/** Appends each case's batches to a fresh UnifiedLog as a follower would, then closes it. */
public class LogGen {
    /** One-shot tasks (the post-roll flush) run at once, delayed ones after close, periodic ones
     * (the producer-expiration check) never. */
    static final class Inline implements Scheduler {
        final List<Runnable> delayed = new ArrayList<>();
        public void startup() {}
        public void shutdown() {}
        public void resizeThreadPool(int n) {}
        public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
            if (periodMs < 0 && delayMs <= 0) task.run();
            else if (periodMs < 0) delayed.add(task);  // e.g. deleting *.deleted after file.delete.delay.ms
            return new Done();
        }
    }

    static final class Done implements ScheduledFuture<Object> {
        public long getDelay(TimeUnit u) { return 0; }
        public int compareTo(Delayed o) { return 0; }
        public boolean cancel(boolean b) { return false; }
        public boolean isCancelled() { return false; }
        public boolean isDone() { return true; }
        public Object get() { return null; }
        public Object get(long t, TimeUnit u) { return null; }
    }

    public static void main(String[] args) throws Exception {
        File root = new File(args[0]);
        for (int i = 1; i < args.length; i++) run(new File(root, args[i]));
    }

    static void run(File c) throws Exception {
        Properties p = new Properties();
        try (InputStream in = new FileInputStream(new File(c, "config.properties"))) { p.load(in); }
        Map<String, Object> props = new HashMap<>();
        for (String k : p.stringPropertyNames()) props.put(k, p.getProperty(k));
        LogConfig config = new LogConfig(props);
        File dir = new File(c, "kafka/topic-0");
        Inline scheduler = new Inline();
        UnifiedLog log = UnifiedLog.apply(dir, config, 0L, 0L, scheduler, new BrokerTopicStats(false),
            Time.SYSTEM, 900000, new ProducerStateManagerConfig(86400000, false), Integer.MAX_VALUE,
            new LogDirFailureChannel(1), true, scala.Option.apply(Uuid.fromString(p.getProperty("topic.id"))), true,
            new ConcurrentHashMap<String, Object>(), false, LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
        byte[] all = Files.readAllBytes(new File(c, "batches.bin").toPath());
        int pos = 0;
        while (pos < all.length) {
            int size = ByteBuffer.wrap(all, pos + 8, 4).getInt() + 12;
            // 3.9.2 takes the replica's leader epoch (batches with a higher one are skipped)
            MemoryRecords one = MemoryRecords.readableRecords(ByteBuffer.wrap(all, pos, size).slice());
            log.appendAsFollower(one, Integer.MAX_VALUE);
            pos += size;
        }
        log.close();
        for (Runnable task : scheduler.delayed) task.run();  // as if their delays had passed
    }
}
"""  # noqa: E501 - Java source, compiled verbatim


# ------------------------------------------------------------------------------- builders


@dataclass
class Case:
    name: str
    batches: list[bytes]
    segment_bytes: int = 1 << 30
    index_interval_bytes: int = 4096
    segment_index_bytes: int = 10 << 20


# The minimal "min-*" cases below reproduce seven differences these tests found and that
# were fixed in conformance/writer.py (marker timestamps and epoch bumps in producer state,
# legacy roll offsets, epoch-cache clearing and empty checkpoint files, no snapshot when
# nothing was appended since the last one, recreating an empty segment on roll).


class History:
    """Consecutive offsets, per-producer sequences, a clock that only moves a little."""

    def __init__(self, ts: int = 1_700_000_000_000) -> None:
        self.batches: list[bytes] = []
        self.off = 0
        self.ts = ts
        self.seq: dict[int, int] = {}
        self.leader_epoch = 0

    def data(
        self,
        n: int,
        codec: str = "none",
        *,
        pid: int = -1,
        epoch: int = 0,
        txn: bool = False,
        magic: int = 2,
        ts_step: int = 1,
        value_len: int = 30,
        log_append_time: int | None = None,
        leader_epoch: int | None = None,
        timestamps: list[int] | None = None,
    ) -> None:
        kw: dict = dict(magic=magic, base_offset=self.off, compression=codec)
        if magic == 2:  # as the leader stamped it (a follower append of epoch -1 fails in Kafka)
            kw["partition_leader_epoch"] = (
                self.leader_epoch if leader_epoch is None else leader_epoch
            )
        if magic > 0 and log_append_time is not None:
            kw.update(timestamp_type="LogAppendTime", log_append_time=log_append_time)
        if pid >= 0:
            kw.update(
                producer_id=pid,
                producer_epoch=epoch,
                base_sequence=self.seq.get(pid, 0),
                is_transactional=txn,
            )
            self.seq[pid] = self.seq.get(pid, 0) + n
        b = BatchBuilder(**kw)
        for i in range(n):
            t = timestamps[i] if timestamps is not None else self.ts + i * ts_step
            if magic == 0:
                t = -1
            b.append(
                t,
                b"key-%d" % (self.off + i),
                bytes([65 + (self.off + i) % 26]) * (value_len + i % 7),
            )
        self.batches.append(b.build())
        self.off += n
        self.ts += 3

    def marker(self, pid: int, commit: bool, *, epoch: int = 0, coordinator_epoch: int = 5) -> None:
        self.batches.append(
            end_txn_marker_batch(
                offset=self.off,
                producer_id=pid,
                producer_epoch=epoch,
                commit=commit,
                coordinator_epoch=coordinator_epoch,
                timestamp=self.ts,
                partition_leader_epoch=self.leader_epoch,
            )
        )
        self.off += 1
        self.ts += 2

    def gap(self, n: int) -> None:
        self.off += n


def plain(
    count: int,
    *,
    records: int = 3,
    codecs: list[str] = CODECS,
    value_len: int = 30,
    jitter: bool = False,
) -> list[bytes]:
    h = History()
    for i in range(count):
        ts = None
        if jitter:  # max timestamps that go back and forth: TimeIndex.maybeAppend skips some
            base = h.ts + (-40 if i % 3 == 1 else 0)
            ts = [base + (i * 7 + j * 5) % 11 for j in range(records)]
        h.data(records, codecs[i % len(codecs)], value_len=value_len, timestamps=ts)
    return h.batches


def legacy(magic: int, count: int) -> list[bytes]:
    h = History()
    codecs = ["none", "gzip", "snappy"] + (["lz4"] if magic == 1 else [])
    for i in range(count):
        codec = codecs[i % len(codecs)]
        h.data(1 if codec == "none" else 3, codec, magic=magic, ts_step=2)
    return h.batches


def mixed_magic() -> list[bytes]:
    h = History()
    for i in range(6):
        h.data(1, magic=0)
        h.data(3, ["gzip", "snappy"][i % 2], magic=0)
    for i in range(6):
        h.data(1, magic=1)
        h.data(3, ["gzip", "snappy", "lz4"][i % 3], magic=1)
    for i in range(10):
        h.data(2, CODECS[i % 5], leader_epoch=3)
    return h.batches


def log_append_time() -> list[bytes]:
    h = History()
    for i in range(4):  # v1 first: a legacy batch after v2 ones would clear the epoch cache
        h.data(
            1 + i % 2 * 2, ["none", "gzip"][i % 2], magic=1, log_append_time=1_700_000_200_000 + i
        )
    for i in range(24):
        lat = 1_700_000_100_000 + [5, 3, 9, 9, 12][i % 5] * (i // 5 + 1)
        if i % 4 == 3:
            h.data(2, CODECS[i % 5])  # CreateTime batches in between
        else:
            h.data(2, CODECS[i % 5], log_append_time=lat)
    return h.batches


def legacy_gaps(magic: int) -> list[bytes]:
    """Offset gaps (a compacted topic) before legacy entries that start a new segment."""
    h = History()
    for i in range(16):
        h.data(1 if i % 2 else 3, "none" if i % 2 else "gzip", magic=magic)
        h.gap(5 + i)
    return h.batches


def idempotent() -> list[bytes]:
    h = History()
    for i in range(30):
        pid = [7, 1 << 33, -1, 42][i % 4]
        h.leader_epoch = [0, 2, 7][i // 10]
        h.data(1 + i % 3, CODECS[i % 5], pid=pid)
    return h.batches


def interleaved_txns(rounds: int = 10) -> list[bytes]:
    """Producers 1000 and 2000 transactional and interleaved (each one's transaction is often
    open when the other one aborts: lastStableOffset < marker offset + 1), idempotent 3000,
    an ABORT for a producer with no open transaction."""
    h = History()
    for r in range(rounds):
        h.leader_epoch = r // 3  # leader changes: leader-epoch-checkpoint entries
        h.data(2, CODECS[r % 5], pid=1000, txn=True)
        h.data(1, pid=2000, txn=True)
        h.data(2, "lz4", pid=3000)
        h.data(1, "gzip", pid=1000, txn=True)
        h.marker(1000, commit=r % 3 == 1)
        h.data(3, "zstd", pid=2000, txn=True)
        if r % 2 == 0:
            h.data(1, pid=1000, txn=True)  # 1000's next transaction is open when 2000 ends
        h.marker(2000, commit=r % 4 == 3)
        if r % 2 == 0:
            h.marker(1000, commit=False)
        if r == 4:
            h.marker(4000, commit=False)  # ends no transaction
    return h.batches


def epoch_bump() -> list[bytes]:
    """Transactional producer whose epoch is bumped by the marker (a coordinator-side abort)."""
    h = History()
    h.data(2, pid=500, txn=True)
    h.data(1, pid=600, txn=True)
    h.marker(500, commit=False, epoch=1)
    h.marker(600, commit=True)
    h.seq[500] = 0
    h.data(2, pid=500, epoch=1, txn=True)
    h.marker(500, commit=True, epoch=1)
    h.data(1, pid=700)
    return h.batches


def overflow() -> list[bytes]:
    """An offset gap past Integer.MAX_VALUE relative offsets (as after compaction)."""
    h = History()
    h.data(3)
    h.data(2, "gzip")
    h.gap(0x7FFFFFFF)
    h.data(3, "lz4")
    h.data(2)
    return h.batches


def cases() -> list[Case]:
    out = [
        Case("rolls-i0", plain(60), segment_bytes=1500, index_interval_bytes=0),
        Case("rolls-i100", plain(60, jitter=True), segment_bytes=2000, index_interval_bytes=100),
        Case(
            "rolls-i4096",
            plain(200, records=4, value_len=60),
            segment_bytes=20_000,
            index_interval_bytes=4096,
        ),
        Case("one-segment-i0-jitter", plain(40, jitter=True), index_interval_bytes=0),
        Case("segment-bytes-exact", _equal_size(20), segment_bytes=0, index_interval_bytes=0),
    ]
    # exactly two batches per segment: shouldRoll's size > segment.bytes - batch size boundary
    size = len(out[-1].batches[0])
    assert all(len(b) == size for b in out[-1].batches)
    out[-1].segment_bytes = 2 * size
    for codec in CODECS:
        h = History()
        for i in range(25):
            h.data(1 + i % 5, codec, value_len=20 + 13 * (i % 4))
        out.append(Case(f"codec-{codec}", h.batches, segment_bytes=1200, index_interval_bytes=100))
    out += [
        Case("magic0", legacy(0, 30), segment_bytes=600, index_interval_bytes=0),
        Case("magic1", legacy(1, 30), segment_bytes=700, index_interval_bytes=100),
        Case("mixed-magic", mixed_magic(), segment_bytes=900, index_interval_bytes=0),
        Case("log-append-time", log_append_time(), segment_bytes=1000, index_interval_bytes=0),
        Case("idempotent", idempotent(), segment_bytes=1100, index_interval_bytes=0),
        Case("txn-one-segment", interleaved_txns(), index_interval_bytes=4096),
        Case("txn-rolls", interleaved_txns(), segment_bytes=1000, index_interval_bytes=0),
        Case("txn-epoch-bump", epoch_bump(), segment_bytes=300, index_interval_bytes=0),
        # 5 offset entries / 4 time entries (TimeIndex.isFull keeps a slot): the time index fills
        # first
        Case(
            "tiny-index-time-full",
            plain(40, records=1),
            segment_index_bytes=48,
            index_interval_bytes=0,
        ),
        # equal timestamps: one time entry per segment, so the offset index fills first
        Case(
            "tiny-index-offset-full", _same_ts(40), segment_index_bytes=40, index_interval_bytes=0
        ),
        Case(
            "tiny-index-i100",
            plain(60, jitter=True),
            segment_index_bytes=64,
            index_interval_bytes=100,
            segment_bytes=4000,
        ),
        Case("relative-offset-overflow", overflow(), index_interval_bytes=0),
        # degenerate indexes (segment.index.bytes >= 4 is valid): a time index of 1 slot is
        # always full (isFull: entries >= maxEntries - 1), so every append rolls, even into an
        # empty segment (LocalLog.roll's KAFKA-6388 branch)
        Case("index-bytes-12", plain(6), segment_index_bytes=12, index_interval_bytes=0),
        Case("index-bytes-20", plain(6), segment_index_bytes=20, index_interval_bytes=0),
        Case("index-bytes-24", plain(8), segment_index_bytes=24, index_interval_bytes=0),
        Case("magic0-gaps", legacy_gaps(0), segment_bytes=300, index_interval_bytes=0),
        Case("magic1-gaps", legacy_gaps(1), segment_bytes=300, index_interval_bytes=0),
        Case("data-epoch-bump", data_epoch_bump(), segment_bytes=250, index_interval_bytes=0),
        # minimal reproducers of the differences found
        Case("min-marker-timestamp", marker_timestamp()),
        Case("min-marker-epoch-bump", marker_epoch_bump()),
        Case("min-legacy-only", _one_legacy()),
        Case("min-legacy-after-v2", _legacy_after_v2()),
        Case("min-legacy-gap-roll", _legacy_gap(), segment_bytes=len(_legacy_gap()[0])),
        Case("min-index-bytes-12", plain(1), segment_index_bytes=12),
        Case("empty", []),
    ]
    return out


def data_epoch_bump() -> list[bytes]:
    """An idempotent producer restarting with a bumped epoch (sequence 0 again)."""
    h = History()
    for i in range(12):
        epoch = i // 4
        if i % 4 == 0:
            h.seq[9] = 0
        h.data(2, CODECS[i % 5], pid=9, epoch=epoch)
    return h.batches


def marker_timestamp() -> list[bytes]:
    h = History()
    h.data(1, pid=1, txn=True)
    h.marker(1, commit=True)
    return h.batches


def marker_epoch_bump() -> list[bytes]:
    h = History()
    h.data(1, pid=1, txn=True)
    h.marker(1, commit=False, epoch=1)
    return h.batches


def _legacy_gap() -> list[bytes]:
    h = History()
    h.data(1, magic=1)
    h.gap(4)
    h.data(1, magic=1)
    return h.batches


def _one_legacy() -> list[bytes]:
    h = History()
    h.data(1, magic=0)
    return h.batches


def _legacy_after_v2() -> list[bytes]:
    h = History()
    h.data(1)
    h.data(1, magic=1)
    return h.batches


def _equal_size(count: int) -> list[bytes]:
    out = []
    for i in range(count):
        b = BatchBuilder(base_offset=2 * i, partition_leader_epoch=0)
        b.append(1_700_000_000_000 + i, b"k", b"v" * 50)
        b.append(1_700_000_000_000 + i, b"k", b"w" * 50)
        out.append(b.build())
    return out


def _same_ts(count: int) -> list[bytes]:
    h = History()
    for i in range(count):
        h.data(2, CODECS[i % 5], timestamps=[h.ts - 3 * i] * 2)
    return h.batches


CASES = {c.name: c for c in cases()}


# ------------------------------------------------------------------------------- running


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        from conformance.jvm import kafka_jars

        jars = kafka_jars.classpath(KAFKA_VERSION)
    except Exception as e:  # noqa: BLE001 - no Java/Maven/network: nothing to compare with
        pytest.skip(f"Kafka {KAFKA_VERSION} jars unavailable: {e}")
    root = tmp_path_factory.mktemp("writer-kafka")
    for case in CASES.values():
        d = root / case.name
        d.mkdir()
        (d / "batches.bin").write_bytes(b"".join(case.batches))
        (d / "config.properties").write_text(
            f"segment.bytes={case.segment_bytes}\n"
            f"index.interval.bytes={case.index_interval_bytes}\n"
            f"segment.index.bytes={case.segment_index_bytes}\n"
            f"topic.id={TOPIC_ID}\n"
        )
    (root / "LogGen.java").write_text(LOG_GEN_JAVA)
    cmd = [
        "java",
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-XX:ActiveProcessorCount=1",
        "-Dlog4j.configuration=file:/dev/null",
        "-cp",
        ":".join(map(str, jars)),
        str(root / "LogGen.java"),
        str(root),
        *CASES,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return root


def ours(root: Path, case: Case) -> Path:
    w = PartitionWriter(
        root / case.name / "ours",
        "topic",
        0,
        LogConfig(case.segment_bytes, case.index_interval_bytes, case.segment_index_bytes),
        topic_id=TOPIC_ID,
    )
    for b in case.batches:
        w.append(b)
    return w.close()


def describe(name: str, ka: bytes, us: bytes) -> str:
    """A readable account of how two files differ."""
    if name.endswith(".snapshot"):
        kafka, ours = snapshot.read_snapshot(ka), snapshot.read_snapshot(us)
        return f"snapshot entries:\n  kafka {kafka}\n  ours  {ours}"
    if name.endswith(".txnindex"):

        def parse(b: bytes) -> list:  # type: ignore[type-arg]
            return [struct.unpack_from(">hqqqq", b, i) for i in range(0, len(b) - len(b) % 34, 34)]

        return (
            "aborted txns (version, pid, first, last, lso):\n"
            f"  kafka {parse(ka)}\n  ours  {parse(us)}"
        )
    if name.endswith((".index", ".timeindex")):
        fmt, n = (">ii", 8) if name.endswith(".index") else (">qi", 12)

        def parse(b: bytes) -> list:  # type: ignore[type-arg]
            return [struct.unpack_from(fmt, b, i) for i in range(0, len(b) - len(b) % n, n)]

        return f"entries:\n  kafka {parse(ka)}\n  ours  {parse(us)}"
    first = next((i for i, (x, y) in enumerate(zip(ka, us)) if x != y), min(len(ka), len(us)))
    return (
        f"{len(ka)} vs {len(us)} bytes, first difference at {first}: "
        f"{ka[first : first + 24]!r} vs {us[first : first + 24]!r}"
    )


SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex")


def is_segment_file(name: str) -> bool:
    return name.endswith(SEGMENT_SUFFIXES)


def compare(kafka_dir: Path, our_dir: Path, segment_files: bool) -> list[str]:
    """Differences between the two directories, restricted to segment files or to the others."""
    k = {p.name for p in kafka_dir.iterdir() if is_segment_file(p.name) == segment_files}
    o = {p.name for p in our_dir.iterdir() if is_segment_file(p.name) == segment_files}
    problems = []
    if k != o:
        problems.append(f"file names: only Kafka {sorted(k - o)}, only ours {sorted(o - k)}")
    for name in sorted(k & o):
        ka, us = (kafka_dir / name).read_bytes(), (our_dir / name).read_bytes()
        if ka != us:
            problems.append(f"{name}: {describe(name, ka, us)}")
    return problems


def _params() -> list:  # type: ignore[type-arg]
    return [pytest.param(name, marks=[pytest.mark.oracle]) for name in CASES]


@pytest.fixture(scope="module")
def our_dirs(written: Path) -> dict[str, Path]:
    return {name: ours(written, case) for name, case in CASES.items()}


@pytest.mark.parametrize("name", _params())
def test_segment_files_are_byte_identical_to_unified_log(
    written: Path, our_dirs: dict[str, Path], name: str
) -> None:
    """.log, .index, .timeindex, .txnindex: the same names and the same bytes."""
    problems = compare(written / name / "kafka" / "topic-0", our_dirs[name], segment_files=True)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", _params())
def test_state_files_are_byte_identical_to_unified_log(
    written: Path, our_dirs: dict[str, Path], name: str
) -> None:
    """.snapshot files, leader-epoch-checkpoint, partition.metadata."""
    problems = compare(written / name / "kafka" / "topic-0", our_dirs[name], segment_files=False)
    assert not problems, "\n".join(problems)


@pytest.mark.oracle
def test_cases_exercise_what_they_claim(written: Path) -> None:
    """The oracle's directories show the features each case is there for."""

    def files(name: str, suffix: str) -> list[Path]:
        return sorted((written / name / "kafka" / "topic-0").glob("*" + suffix))

    for name in [
        "rolls-i0",
        "rolls-i100",
        "rolls-i4096",
        "segment-bytes-exact",
        "magic0",
        "magic1",
        "mixed-magic",
        "log-append-time",
        "idempotent",
        "txn-rolls",
        "tiny-index-time-full",
        "tiny-index-offset-full",
        "relative-offset-overflow",
    ]:
        assert len(files(name, ".log")) >= 2, name
    assert len(files("segment-bytes-exact", ".log")) == 10
    assert len(files("index-bytes-12", ".log")) == 6  # every append rolls
    for name in ["txn-one-segment", "txn-rolls"]:
        entries = [
            txnindex.AbortedTxn(*struct.unpack_from(">hqqqq", p.read_bytes(), i))
            for p in files(name, ".txnindex")
            for i in range(0, p.stat().st_size, 34)
        ]
        assert any(e.last_stable_offset <= e.last_offset for e in entries), (
            name
        )  # held back by the other
        assert any(e.last_stable_offset == e.last_offset + 1 for e in entries), name
    assert len(files("txn-rolls", ".txnindex")) >= 2
    for name in ["tiny-index-time-full"]:
        assert all(p.stat().st_size == 3 * 12 for p in files(name, ".timeindex")[:-1])
    for name in ["tiny-index-offset-full"]:
        assert all(p.stat().st_size == 5 * 8 for p in files(name, ".index")[:-1])
