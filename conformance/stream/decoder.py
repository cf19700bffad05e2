"""The verdict: decode a byte stream the way Kafka's Java consumer does (docs/canonical-json.md).

Sans-IO: bytes in, a :class:`DecodeResult` out. The algorithm, step for step:

1. split the next batch (memory or file semantics, ``splitter``);
2. magic 2: ``ensureValid()`` (size >= 61, CRC-32C);
3. iterate its records as ``streamingIterator()`` does; legacy records are CRC-checked one by
   one (``record.ensureValid()``); control records are parsed as DumpLogSegments parses them;
4. the first error ends decoding; the records handed out before it stay in the result;
5. bytes after the last complete batch make the outcome ``partial``.

Profile ``strict`` adds findings (``findings.py``) for what Kafka accepts silently.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance import codecs
from conformance.errors import DecodeError
from conformance.stream import _run_fast
from conformance.stream.findings import check_batch
from conformance.stream.result import (
    CONSUMER_PROFILES,
    PROFILES,
    DecodedBatch,
    DecodeResult,
    Finding,
    Mode,
    Outcome,
    Profile,
    Tail,
)
from conformance.stream.splitter import Source, Splitter
from conformance.wire.batch import RecordBatchV2
from conformance.wire.control import attach_control
from conformance.wire.record import Record, RecordList

#: records kept per batch by :func:`decode` (~200 bytes each: about 200 MB at most per batch)
DEFAULT_MAX_RECORDS = 1_000_000


def _check_source(data: object) -> None:
    if (
        isinstance(data, (str, int, float, bool))
        or data is None
        or not (hasattr(data, "__len__") and hasattr(data, "__getitem__"))
    ):
        raise TypeError(
            "data must be bytes, bytearray, memoryview or a ByteSource (len() and byte "
            f"slices), not {type(data).__name__}"
        )


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, not {value}")


class StreamDecoder:
    """The verdict, one batch at a time: iterate to get each :class:`DecodedBatch` as soon as
    it is decoded; afterwards ``outcome``, ``error``, ``tail`` and ``findings`` hold the rest
    of the verdict. Memory stays bounded by one batch (or one run of the native lane: 64 KiB of
    input, ``stream._run_fast.RUN_BYTES``, or one larger batch), so a
    ``conformance.fileio.FileSource`` over a segment of any size can be decoded (``decode()`` is
    this plus a list).

    What a batch keeps of its records (``DecodedBatch.records``, a
    :class:`~conformance.wire.record.RecordList`; ``records.total`` counts them all):
    ``keep=None`` every record, up to ``max_records`` per batch
    (:class:`~conformance.errors.RecordLimitError` beyond); ``keep=k`` the first ``k``, the
    others are checked and counted only, without limit. The verdict is the same either way
    (short of the limit). Profile ``strict`` needs every record (``keep=None``).
    """

    def __init__(
        self,
        data: Source,
        *,
        mode: Mode = "memory",
        profile: Profile = "kafka",
        filename: str = "<input>",
        decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
        keep: int | None = None,
        max_records: int | None = DEFAULT_MAX_RECORDS,
    ) -> None:
        if profile not in PROFILES:
            raise ValueError(f"profile must be {' or '.join(map(repr, PROFILES))}, not {profile!r}")
        if profile not in CONSUMER_PROFILES:
            raise ValueError(
                "profile 'broker' needs the Produce request's context: use conformance.decode("
                "..., profile='broker', produce=ProduceContext(...)) or conformance.broker"
            )
        _check_source(data)
        _check_count("decompressed_limit", decompressed_limit)
        if keep is not None:
            _check_count("keep", keep)
            if profile == "strict":
                raise ValueError("profile 'strict' checks every record: it needs keep=None")
        if max_records is not None:
            _check_count("max_records", max_records)
        self.keep = keep
        self.max_records = max_records
        self.data = data
        self.mode = mode
        self.profile = profile
        self.splitter = Splitter(data, mode, filename)
        self.decompressed_limit = decompressed_limit
        self.outcome: Outcome | None = None
        self.error: DecodeError | None = None
        self.tail: Tail | None = None
        self.findings: list[Finding] | None = [] if profile == "strict" else None
        self.batch_count = 0

    def __iter__(self) -> Iterator[DecodedBatch]:
        if self.outcome is not None:
            raise RuntimeError("a StreamDecoder can be iterated once")
        splitter = self.splitter
        strict = self.profile == "strict"
        limit = self.decompressed_limit
        index = 0
        batch_start = 0
        # the native lane (stream/_run_fast.py): runs of batches it decides in full, one call
        lane = _run_fast.available(self.data, self.profile)
        data = self.data
        try:
            while True:
                if lane:
                    run, position = _run_fast.run(
                        data,
                        splitter.position,
                        self.keep,
                        self.max_records,
                        limit,
                    )
                    splitter.position = batch_start = position
                    if run:
                        for current in run:
                            index += 1
                            self.batch_count = index
                            yield current
                        continue  # a run ends at its size too: ask again before the reference
                header = next(splitter, None)
                if header is None:
                    break
                batch_start = header.position
                if isinstance(header, RecordBatchV2):
                    header.ensure_valid()
                sink = (_ControlRecords if header.is_control else RecordList)(
                    keep=self.keep, limit=self.max_records
                )
                current = DecodedBatch(header, sink)
                try:
                    if strict:
                        assert self.findings is not None
                        check_batch(header, current.records, index, limit, self.findings)
                    else:
                        header.read_records(current.records, limit)
                except DecodeError:
                    self._pending = current
                    raise
                index += 1
                self.batch_count = index
                batch_start = splitter.position
                yield current
        except DecodeError as e:
            self._fail(e, index, batch_start)
            pending = getattr(self, "_pending", None)
            if pending is not None:
                self._pending = None
                yield pending  # the batch during which the error happened, with its records
            return
        except RecursionError as e:  # pragma: no cover - defensive: nothing here recurses
            self._fail(
                DecodeError(str(e), java_class="java.lang.StackOverflowError"), index, batch_start
            )
            return
        except MemoryError:  # pragma: no cover
            self._fail(
                DecodeError(None, java_class="java.lang.OutOfMemoryError"), index, batch_start
            )
            return
        size = len(self.data)
        if splitter.position < size:
            self.outcome = "partial"
            self.tail = Tail(splitter.position, size - splitter.position)
        else:
            self.outcome = "ok"

    def _fail(self, e: DecodeError, index: int, position: int) -> None:
        e.batch_index = index
        e.position = position
        self.error = e
        self.outcome = "error"


def decode(
    data: bytes | bytearray | memoryview | Source,
    *,
    mode: Mode = "memory",
    profile: Profile = "kafka",
    filename: str = "<input>",
    decompressed_limit: int = codecs.DEFAULT_DECOMPRESSED_LIMIT,
    max_records: int | None = DEFAULT_MAX_RECORDS,
) -> DecodeResult:
    """Decode ``data`` and return Kafka's verdict on it, with every record.

    ``mode`` picks the splitting semantics (``memory``: produce/fetch data; ``file``: a log
    segment). ``filename`` only appears in file-mode error messages, as in Kafka's.
    ``decompressed_limit`` bounds the decompressed bytes of any one batch, ``max_records`` the
    records kept of any one batch (:class:`~conformance.errors.RecordLimitError` beyond it;
    ``None``: no limit); both are kit resource limits (docs/memory.md). To check bytes
    without keeping their records, iterate ``StreamDecoder(data, keep=0)``.
    Never raises for bad input: every failure is in ``result.error``. Raises ``TypeError`` /
    ``ValueError`` for wrong arguments (``data`` that is not bytes-like, a negative limit).
    """
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    stream = StreamDecoder(
        data,
        mode=mode,
        profile=profile,
        filename=filename,
        decompressed_limit=decompressed_limit,
        max_records=max_records,
    )
    batches = list(stream)
    assert stream.outcome is not None
    return DecodeResult(stream.outcome, mode, batches, stream.error, stream.tail, stream.findings)


class _ControlRecords(RecordList):
    """Records of a control batch: each is parsed as a control record as it is handed out."""

    __slots__ = ()

    def append(self, record: Record) -> None:
        attach_control(record)
        super().append(record)


__all__ = [
    "DEFAULT_MAX_RECORDS",
    "DecodeResult",
    "DecodedBatch",
    "Finding",
    "StreamDecoder",
    "Tail",
    "decode",
]
