"""The fuzz targets: what each one feeds the kit, and the invariants it checks.

A target is a function ``bytes -> None`` over the public core (never a second parser). It
returns normally when the kit handled the input: decoded it, or refused it with an error of
the documented hierarchy (:class:`conformance.DecodeError`). Anything else escaping is a
crash: a stray ``IndexError``/``struct.error``/``zlib.error``, a violated invariant
(:class:`InvariantViolation`), an exception with no position. Time and memory bounds are
enforced by the fuzzing engine (libFuzzer ``-timeout`` / ``-rss_limit_mb``, see ``runner``);
decompression is bounded by ``DECOMPRESSED_LIMIT``.

==========  ===============================================================================
target      input -> what runs
==========  ===============================================================================
varint      raw bytes -> read_varint / read_varlong / unsigned, buffer and stream forms agree
headers     a record's header section -> wrapped in one record of a sealed v2 batch -> decode
batch       a v2 record stream (uncompressed) -> decode, kafka and strict profiles
legacy      a magic 0/1 message set (plain and compressed wrappers) -> decode
gzip        [framing][count i32][payload] -> the payload wrapped in a sealed batch -> decode
snappy      same framing, payload xerial-framed or raw snappy
lz4         same framing; framing selects magic 2 / 1 / 0 (Kafka's header-checksum quirk)
zstd        same framing (v2 only in Kafka; legacy framings are refused by Kafka)
stream      any bytes -> decode, memory and file semantics
index       [kind][data] -> OffsetIndex / TimeIndex / TransactionIndex: sanity check, lookups
snapshot    a producer-state .snapshot file -> parse
checkpoint  [kind][data] -> offset / leader-epoch checkpoint, partition.metadata, meta.properties
native      [selector][stream or records region] -> native fast path vs pure loop vs reference
==========  ===============================================================================

Codec framing byte (targets gzip/snappy/lz4/zstd): ``b & 3`` = 0/1 v2 batch, 2 a magic-1
wrapper, 3 a magic-0 wrapper; the 4 bytes after it are the v2 ``recordsCount``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from conformance import codecs
from conformance.errors import Allocations, DecodeError
from conformance.fuzz import native as native_target
from conformance.fuzz.produce import seeds as produce_seeds
from conformance.fuzz.produce import t_produce
from conformance.logdir import checkpoint, snapshot
from conformance.logdir.index import OffsetIndex, TimeIndex
from conformance.logdir.txnindex import TransactionIndex
from conformance.primitives.varint import (
    read_unsigned_varint,
    read_varint,
    read_varint_stream,
    read_varlong,
    read_varlong_stream,
    varint_anomaly,
)
from conformance.stream.decoder import decode
from conformance.stream.result import CONSUMER_PROFILES, MODES, DecodeResult
from conformance.wire.batch import write_batch_v2
from conformance.wire.legacy import write_legacy_message
from conformance.wire.record import write_headers_v2, write_record_v2

#: decompressed bytes any one batch may produce under fuzzing (the kit's default is 256 MiB;
#: a smaller bound keeps decompression bombs cheap - each one costs milliseconds, and the
#: engine keeps them for their coverage - while the bound itself is what is tested)
DECOMPRESSED_LIMIT = 1024 * 1024
#: inputs longer than this are not produced by the engine (libFuzzer ``-max_len``)
MAX_LEN = 16 * 1024

_I32 = struct.Struct(">i")
_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)


class InvariantViolation(AssertionError):
    """The kit returned something it must never return (a bug even without an exception)."""


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise InvariantViolation(what)


# ------------------------------------------------------------------------------ decode checks


def check_result(result: DecodeResult, data_len: int) -> None:
    """Invariants of every :func:`conformance.decode` result."""
    _check(result.outcome in ("ok", "partial", "error"), f"outcome {result.outcome!r}")
    if result.outcome == "error":
        err = result.error
        _check(isinstance(err, DecodeError), f"error is {type(err).__name__}")
        assert err is not None
        _check(err.position is not None and 0 <= err.position <= data_len, "error position")
        _check(err.kafka_exception.count(".") >= 2, f"kafka_exception {err.kafka_exception!r}")
    else:
        _check(result.error is None, "error set on a non-error outcome")
    consumed = sum(b.header.size_in_bytes for b in result.batches)
    _check(consumed <= data_len, "batches cover more bytes than the input")
    if result.outcome == "ok":
        _check(consumed == data_len, "outcome ok but bytes left over")
    if not data_len % 4:  # one input in four (differential mode does it for every input)
        result.to_dict()  # the canonical JSON must always be producible


def check_read_whole(codec: int, payload: bytes, limit: int = DECOMPRESSED_LIMIT) -> None:
    """A codec's whole-payload fast path (``codecs.read_whole``) against its Java model
    (``codecs.read_stream``, a magic-2 batch's): where the fast path returns data, the model
    reads exactly that data without error, short read or ignored trailing bytes, and reports
    the same largest allocation."""
    with Allocations() as fast:
        whole = codecs.read_whole(codec, payload, limit)
    if whole is None:
        return
    with Allocations() as model_allocations:
        try:
            model = codecs.read_stream(codec, payload, 2, limit)
        except DecodeError as e:
            raise InvariantViolation(f"read_whole returned data, the model raised {e!r}") from e
    _check(model.error is None, f"read_whole returned data, the model failed: {model.error!r}")
    _check(all(model.pieces), "read_whole returned data where the model has a short read")
    _check(not model.ignored_trailing, "read_whole returned data where trailing bytes remain")
    _check(model.data == whole, "read_whole's data differs from the model's")
    _check(fast.largest == model_allocations.largest, "read_whole's allocations differ")


def run_decode(
    data: bytes, *, modes: tuple[str, ...] = ("memory",), profiles: tuple[str, ...] = ("kafka",)
) -> None:
    if len(profiles) > 1 and len(data) % 4:
        profiles = profiles[:1]  # strict (extra checks, half the speed) on one input in four
    for mode in modes:
        for profile in profiles:
            result = decode(
                data,
                mode=mode,
                profile=profile,  # type: ignore[arg-type]
                decompressed_limit=DECOMPRESSED_LIMIT,
            )
            check_result(result, len(data))


# ------------------------------------------------------------------------------------ targets


def t_varint(data: bytes) -> None:
    n = len(data)
    for reader, stream_reader, bounds, width in (
        (read_varint, read_varint_stream, _INT32, 5),
        (read_varlong, read_varlong_stream, _INT64, 10),
    ):
        buf_result: tuple[str, int] | None
        try:
            value, end = reader(data, 0, n)
            buf_result = ("ok", value)
            _check(bounds[0] <= value <= bounds[1], f"{reader.__name__} value {value} out of range")
            _check(0 < end <= min(n, width), f"{reader.__name__} consumed {end} bytes")
            varint_anomaly(data, 0, end, is_long=width == 10)
        except DecodeError as e:
            buf_result = ("error", 0)
            _check(bool(e.kafka_exception), "error without a Kafka class")
        it = iter(data)

        class _Src:
            def read(self, it: Iterator[int] = it) -> int:
                return next(it, -1)

        try:
            stream_value = stream_reader(_Src())
            stream_result: tuple[str, int] = ("ok", stream_value)
        except DecodeError:
            stream_result = ("error", 0)
        if buf_result[0] == "ok" or stream_result[0] == "ok":
            # same bytes, same value: a buffer read and a stream read must agree
            _check(
                buf_result == stream_result,
                f"{reader.__name__}: buffer {buf_result} != stream {stream_result}",
            )
    try:
        value, end = read_unsigned_varint(data, 0, n)
        _check(0 <= value < (1 << 32), f"unsigned varint {value}")
    except DecodeError:
        pass


def wrap_headers(section: bytes) -> bytes:
    """One record (key and value null) whose header section is ``section``, in a sealed batch."""
    record = write_record_v2(key=None, value=None, end_after="value", trailing=section)
    return v2_envelope(record, attributes=0, count=1)


def v2_envelope(
    records: bytes,
    *,
    attributes: int,
    count: int,
    last_offset_delta: int = 0,
    base_offset: int = 0,
    timestamp: int = 1_700_000_000_000,
) -> bytes:
    """A v2 batch header (partitionLeaderEpoch 0) around ``records``, length and CRC-32C true."""
    return write_batch_v2(
        base_offset=base_offset,
        partition_leader_epoch=0,
        attributes=attributes,
        last_offset_delta=last_offset_delta,
        base_timestamp=timestamp,
        max_timestamp=timestamp,
        count=count,
        payload=records,
    )


def t_headers(data: bytes) -> None:
    run_decode(wrap_headers(data), profiles=CONSUMER_PROFILES)


def t_batch(data: bytes) -> None:
    run_decode(data, profiles=CONSUMER_PROFILES)


def t_legacy(data: bytes) -> None:
    run_decode(data, profiles=CONSUMER_PROFILES)


def wrap_payload(codec: int, data: bytes) -> bytes:
    """The codec targets' input (framing byte, count, payload) as a sealed batch."""
    if not data:
        return b""
    framing = data[0] & 3
    payload = data[5:]
    if framing < 2:
        count = _I32.unpack(data[1:5])[0] if len(data) >= 5 else 0
        return v2_envelope(payload, attributes=codec, count=count)
    magic = 1 if framing == 2 else 0
    return write_legacy_message(magic, 0, 1_700_000_000_000, None, payload, attributes=codec)


def codec_input(framing: int, count: int, payload: bytes) -> bytes:
    """The inverse of :func:`wrap_payload` (used for seeds and by the mutator)."""
    return bytes([framing & 3]) + _I32.pack(count) + payload


def _codec_target(codec: int) -> Callable[[bytes], None]:
    def run(data: bytes) -> None:
        run_decode(wrap_payload(codec, data), profiles=CONSUMER_PROFILES)
        if data and data[0] & 3 < 2:  # a magic-2 payload: the fast path held to the model
            check_read_whole(codec, data[5:])

    run.__name__ = f"t_{codecs.codec_name(codec)}"
    return run


def t_stream(data: bytes) -> None:
    run_decode(data, modes=MODES)


def _check_lookups(
    index: OffsetIndex | TimeIndex, key: str, targets: tuple[int, ...], floor: int
) -> None:
    """After a passing sanity check, a lookup never returns an entry above its target (the
    "nothing found" answer ``floor`` aside), whatever order the entries are in."""
    try:
        index.sanity_check()
    except DecodeError:
        return
    for target in targets:
        found = getattr(index.lookup(target), key)
        _check(found <= target or found == floor, f"{key} lookup overshoots")


def t_index(data: bytes) -> None:
    if not data:
        return
    kind, body = data[0] % 3, data[1:]
    base = 0 if data[0] & 0x80 else 1000
    if kind == 0:
        offsets = OffsetIndex(body, base)
        last = offsets.last_offset() if offsets.entries else base + 1
        _check_lookups(offsets, "offset", (base - 1, base, base + 7, last), base)
    elif kind == 1:
        times = TimeIndex(body, base)
        last = times.last_entry().timestamp if times.entries else 5
        _check_lookups(times, "timestamp", (-1, 0, last, 1 << 62), -1)
    else:
        txns = TransactionIndex(body, base)
        listed = list(txns)  # may raise KafkaError on a bad version byte (documented)
        _check(len(listed) == len(body) // 34, "transaction index entry count")
        txns.sanity_check()


def t_snapshot(data: bytes) -> None:
    snapshot.read_snapshot(data)


_CHECKPOINT_PARSERS: tuple[Callable[[bytes], object], ...] = (
    checkpoint.read_offset_checkpoint,
    checkpoint.read_leader_epoch_checkpoint,
    checkpoint.read_partition_metadata,
    checkpoint.read_meta_properties,
)


def t_checkpoint(data: bytes) -> None:
    if not data:
        return
    _CHECKPOINT_PARSERS[data[0] % len(_CHECKPOINT_PARSERS)](data[1:])


# ------------------------------------------------------------------------------------- seeds


def _corpora_files(root: Path, patterns: tuple[str, ...]) -> Iterator[Path]:
    base = root / "corpora"
    for pattern in patterns:
        yield from sorted(base.glob(pattern))


def _record_streams(root: Path) -> Iterator[bytes]:
    """Every record stream of the corpora: segments, wire captures, crafted cases."""
    for p in _corpora_files(
        root,
        (
            "*/*/log/*/*.log",
            "*/*/wire/*.bin",
            "crafted/*.bin",
            "regressions/stream/*.bin",
            "regressions/batch/*.bin",
            "regressions/legacy/*.bin",
        ),
    ):
        data = p.read_bytes()
        if data and len(data) <= MAX_LEN:
            yield data


def _batches(root: Path) -> Iterator[tuple[bytes, object]]:
    from conformance.stream.splitter import Splitter

    for stream in _record_streams(root):
        try:
            for b in Splitter(stream):
                yield b.raw, b
        except DecodeError:
            continue


def _seeds_batch(root: Path) -> Iterator[bytes]:
    for raw, b in _batches(root):
        if getattr(b, "magic", 0) == 2:
            yield raw


def _seeds_legacy(root: Path) -> Iterator[bytes]:
    for raw, b in _batches(root):
        if getattr(b, "magic", 2) in (0, 1):
            yield raw


def _seeds_headers(root: Path) -> Iterator[bytes]:
    yield b"\x00"
    for _raw, b in _batches(root):
        if getattr(b, "magic", 0) != 2 or getattr(b, "compression_id", 1) != 0:
            continue
        out: list = []
        try:
            b.read_records(out)  # type: ignore[attr-defined]
        except DecodeError:
            continue
        for r in out:
            if r.headers:
                yield write_headers_v2(r.headers)


def _codec_seeds(codec: int) -> Callable[[Path], Iterator[bytes]]:
    from conformance.wire.legacy import LegacyBatch

    def seeds(root: Path) -> Iterator[bytes]:
        for p in _corpora_files(root, (f"regressions/{codecs.codec_name(codec)}/*.bin",)):
            yield p.read_bytes()
        for raw, b in _batches(root):
            if getattr(b, "compression_id", -1) != codec:
                continue
            if isinstance(b, LegacyBatch):
                value = b.message.value
                if value is not None:
                    yield codec_input(2 if b.magic == 1 else 3, 0, value)
            else:
                yield codec_input(0, b.records_count, raw[61:])  # type: ignore[attr-defined]

    return seeds


def _seeds_stream(root: Path) -> Iterator[bytes]:
    yield from _record_streams(root)


def _seeds_native(root: Path) -> Iterator[bytes]:
    """The built-in seeds, then every v2 batch of the corpora in the stream form (selector
    0: memory mode) and, uncompressed, its records region in the region form."""
    yield from native_target.seeds()
    for raw, b in _batches(root):
        if getattr(b, "magic", 0) != 2:
            continue
        yield b"\x00" + raw
        if getattr(b, "compression_id", 1) == 0:
            lat = b.attributes_raw & 8  # type: ignore[attr-defined]
            yield native_target.write_region_input(
                native_target.RegionInput(
                    1 | (2 if lat else 0),
                    b.records_count,  # type: ignore[attr-defined]
                    b.base_offset,  # type: ignore[attr-defined]
                    b.base_timestamp,  # type: ignore[attr-defined]
                    b.max_timestamp,  # type: ignore[attr-defined]
                    b.records_count,  # type: ignore[attr-defined]
                    b"",
                    raw[61:],
                )
            )


def _seeds_index(root: Path) -> Iterator[bytes]:
    for suffix, kind in (("index", 0), ("timeindex", 1), ("txnindex", 2)):
        for p in _corpora_files(root, (f"*/*/log/*/*.{suffix}",)):
            data = p.read_bytes()
            base = int(p.name.split(".")[0])
            if data and len(data) <= MAX_LEN:
                yield bytes([kind | (0x80 if base == 0 else 0)]) + data


def _seeds_files(pattern: str, prefix: bytes = b"") -> Callable[[Path], Iterator[bytes]]:
    def seeds(root: Path) -> Iterator[bytes]:
        for p in _corpora_files(root, (pattern,)):
            data = p.read_bytes()
            if len(data) <= MAX_LEN:
                yield prefix + data

    return seeds


def _seeds_checkpoint(root: Path) -> Iterator[bytes]:
    yield from _seeds_files("*/*/log/*/leader-epoch-checkpoint", b"\x01")(root)
    yield from _seeds_files("*/*/log/*/partition.metadata", b"\x02")(root)
    yield b"\x000\n1\ntopic 0 5\n"
    yield b"\x030\nversion=1\ncluster.id=abc\nnode.id=1\n"


# ---------------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Target:
    name: str
    run: Callable[[bytes], None]
    description: str
    seeds: Callable[[Path], Iterator[bytes]]
    dictionary: str = "records.dict"
    #: structure of the input, for the structure-aware mutator (None: bytes only)
    shape: str | None = None
    #: the modules whose branches this target is meant to reach (coverage report), as dotted
    #: names under ``conformance``; a package name stands for all its modules
    modules: tuple[str, ...] = field(default_factory=tuple)
    #: the input is a record stream the Java oracle can decode (differential mode)
    differential: bool = False
    #: which oracle the differential asks: "consumer" (Kafka's record classes) or "broker"
    #: (each broker version's own log, ``fuzz.produce``)
    oracle: str = "consumer"
    #: why the target cannot run here (None: it can); the runner and the worker refuse to
    #: start it then, with that reason (``native``: the extension is not installed)
    unavailable: Callable[[], str | None] | None = None
    #: the target's own counters (this process's totals), written to the worker's stats file
    #: and summed into the run's summary (``RunSummary.counters``)
    counters: Callable[[], dict[str, int]] | None = None

    def wire_bytes(self, data: bytes) -> bytes | None:
        """The record stream this input decodes as (differential mode), else None."""
        if self.shape == "codec":
            return wrap_payload(CODEC_OF[self.name], data)
        if self.shape == "headers":
            return wrap_headers(data)
        if self.shape in ("stream", "produce"):
            return data
        return None


#: codec targets: every codec with a compressed payload (not ``none``), by target name
CODEC_OF = {c.name: c.id for c in codecs.CODECS.values() if c.id != codecs.NONE}
_RECORD_MODULES = (
    "primitives.varint",
    "wire.record",
    "wire._record_fast",
    "wire.batch",
    "stream.splitter",
    "stream.decoder",
    "wire.control",
    "stream.findings",
)

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            "varint",
            t_varint,
            "varint / varlong / unsigned varint, buffer and stream readers",
            lambda root: iter(
                [
                    b"\x00",
                    b"\x01",
                    b"\xff\xff\xff\xff\x0f",
                    b"\x80" * 9 + b"\x01",
                    b"\xfe\xff\xff\xff\x0f",
                    b"\xff" * 10 + b"\x01",
                ]
            ),
            shape=None,
            modules=("primitives.varint",),
        ),
        Target(
            "headers",
            t_headers,
            "record header section (count, keys, values)",
            _seeds_headers,
            shape="headers",
            modules=("wire.record", "wire._record_fast", "primitives.varint", "primitives.java"),
            differential=True,
        ),
        Target(
            "batch",
            t_batch,
            "v2 batch header + records, CRC-32C re-sealed by the mutator",
            _seeds_batch,
            shape="stream",
            modules=_RECORD_MODULES,
            differential=True,
        ),
        Target(
            "legacy",
            t_legacy,
            "magic 0/1 message sets and compressed wrappers",
            _seeds_legacy,
            shape="stream",
            modules=("wire.legacy", "stream.splitter", "stream.decoder", "codecs"),
            differential=True,
        ),
        *(
            Target(
                name,
                _codec_target(cid),
                f"{name} compressed payload inside a sealed batch",
                _codec_seeds(cid),
                shape="codec",
                modules=("codecs", "wire.record", "wire._record_fast", "wire.batch", "wire.legacy"),
                differential=True,
            )
            for name, cid in CODEC_OF.items()
        ),
        Target(
            "stream",
            t_stream,
            "any bytes as a record stream, memory and file semantics",
            _seeds_stream,
            shape="stream",
            modules=(*_RECORD_MODULES, "wire.legacy", "codecs"),
            differential=True,
        ),
        Target(
            "produce",
            t_produce,
            "a Produce request's records judged by the broker model (a selector byte picks the "
            "broker version, Produce version and topic)",
            produce_seeds,
            shape="produce",
            modules=("broker", "wire.record_partial"),
            differential=True,
            oracle="broker",
        ),
        Target(
            "native",
            native_target.t_native,
            "the native fast path (kafka_conformance_native) against the pure loop and the "
            "reference reader: decodes and records regions, every codec",
            _seeds_native,
            shape="native",
            modules=("wire._record_fast", "wire.record", "wire.batch", "primitives.native"),
            unavailable=native_target.unavailable,
            counters=native_target.counters,
        ),
        Target(
            "index",
            t_index,
            ".index / .timeindex / .txnindex readers and lookups",
            _seeds_index,
            dictionary="index.dict",
            modules=("logdir.index", "logdir.txnindex"),
        ),
        Target(
            "snapshot",
            t_snapshot,
            "producer-state .snapshot files",
            _seeds_files("*/*/log/*/*.snapshot"),
            dictionary="snapshot.dict",
            modules=("logdir.snapshot",),
        ),
        Target(
            "checkpoint",
            t_checkpoint,
            "offset / leader-epoch checkpoints, partition.metadata, meta.properties",
            _seeds_checkpoint,
            dictionary="checkpoint.dict",
            modules=("logdir.checkpoint",),
        ),
    )
}


def get(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise KeyError(f"unknown fuzz target {name!r} (known: {', '.join(TARGETS)})") from None


__all__ = [
    "DECOMPRESSED_LIMIT",
    "check_read_whole",
    "InvariantViolation",
    "MAX_LEN",
    "TARGETS",
    "Target",
    "get",
    "check_result",
    "codec_input",
    "wrap_headers",
    "wrap_payload",
    "v2_envelope",
]
