"""The state of one DumpLogSegments run (``DumpLogSegments.main``): options, stdout, and the
error maps reported on stderr at the end (Scala ``mutable.HashMap``s keyed by absolute path).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, TextIO

from conformance import codecs
from conformance.errors import IllegalArgumentError
from conformance.logdir.dump.files import FileBatch, RecordVisitor
from conformance.logdir.dump.formats import DumpFormat
from conformance.logdir.dump.javaemu import ERROR_MAPS, Console

#: a decoder option's ``MessageParser.parse``: (offset, key, value) -> key and payload texts
RecordParser = Callable[[int, bytes | None, bytes | None], tuple[str | None, str | None]]

#: pairs kept per file in a prepended error map; Kafka keeps them all (a hostile segment of
#: millions of non-consecutive offsets would hold them all), the kit keeps the newest ones
#: (those Kafka prints first) and says how many it left out (docs/memory.md)
MAX_REPORTED_PAIRS = 100_000


class _Prepended(deque):  # type: ignore[type-arg]
    """A Scala ``List`` built by prepending: newest first. Stored oldest-first (appending is
    O(1) where prepending to a Python list copies it), read newest-first, bounded."""

    def __init__(self) -> None:
        super().__init__(maxlen=MAX_REPORTED_PAIRS)
        self.added = 0

    def add(self, pair: tuple[int, int]) -> None:
        self.append(pair)
        self.added += 1

    def pairs(self) -> list[tuple[int, int]]:
        """Newest first, as a Scala ``List`` built by prepending prints."""
        return list(reversed(self))


class _Sorted(dict):  # type: ignore[type-arg]
    """A Java ``TreeMap<Long, Long>`` (Kafka 4.3): one pair per first value, the last put
    wins; printed in ascending (or, ``descending``, descending) order of the first value."""

    def __init__(self, descending: bool) -> None:
        super().__init__()
        self.descending = descending
        self.pruned = False  # pairs beyond the first MAX_REPORTED_PAIRS printed were dropped

    def add(self, pair: tuple[int, int]) -> None:
        first, second = pair
        if self.pruned and (first < self._edge if self.descending else first > self._edge):
            return  # past the last pair kept: it would not be printed among them
        self[first] = second
        if len(self) >= 2 * MAX_REPORTED_PAIRS:
            keep = self.pairs()[:MAX_REPORTED_PAIRS]
            self.clear()
            self.update(keep)
            self.pruned = True
            self._edge = keep[-1][0]

    def pairs(self) -> list[tuple[int, int]]:
        return sorted(self.items(), reverse=self.descending)


class DumpSession:
    """Options, console and error maps shared by the dumpers of each file kind."""

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        *,
        deep: bool,
        print_data: bool,
        verify_only: bool,
        sanity_only: bool,
        max_bytes: int,
        max_message_size: int,
        skip_metadata: bool,
        fmt: DumpFormat,
        record_parser: RecordParser | None = None,
    ) -> None:
        self.con = Console(out)
        #: a decoder option's message parser: (offset, key, value) -> the key and payload
        #: texts, None for one not printed (``MessageParser.parse``); None: keys and values
        #: as text
        self.record_parser = record_parser
        self.fmt = fmt
        self.skip_metadata = skip_metadata
        self.err = err
        self.deep = deep
        self.print_data = print_data
        self.verify_only = verify_only
        self.sanity_only = sanity_only
        self.max_bytes = max_bytes
        self.max_message_size = max_message_size
        new_map = ERROR_MAPS[fmt.error_maps]
        self.index_mismatches = new_map()  # path -> pairs (fmt.index_mismatch_pairs)
        self.ts_mismatches = new_map()  # path -> list (appended)
        self.ts_out_of_order = new_map()
        self.ts_not_found = new_map()
        self.non_consecutive = new_map()  # path -> pairs (fmt.non_consecutive_pairs)

    def codec(self, codec_id: int) -> codecs.Codec:
        """``CompressionType.forId`` of this release: a codec it does not have yet is an
        unknown id (zstd before 2.1, KIP-110)."""
        found = codecs.codec(codec_id)
        if found.since > self.fmt.release[: len(found.since)]:
            raise IllegalArgumentError(f"Unknown compression type id: {codec_id}")
        return found

    def visit_records(self, batch: FileBatch, on_record: RecordVisitor) -> None:
        """The batch's record iterator (its codec first, as the release knows codecs: a v2
        batch's from its header, a legacy one's from its outer message, whatever its magic)."""
        if batch.is_v2:
            self.codec(batch.header().compression_id)
        elif batch.batch.compression_id:
            self.codec(batch.batch.compression_id)
        batch.visit_records(on_record, self.codec)

    def eprintln(self, s: str) -> None:
        self.err.write(s + "\n")

    def report_errors(self) -> None:
        """The error maps, on stderr, after the last file."""
        fmt = self.fmt
        for path, pairs in self.index_mismatches.items():
            self.eprintln(f"Mismatches in :{path}")
            for index_offset, log_offset in pairs.pairs():
                self.eprintln(f"  Index offset: {index_offset}, log offset: {log_offset}")
            self._left_out(pairs)
        for path, pairs in self.ts_mismatches.items():
            self.eprintln(f"Found timestamp mismatch in :{path}")
            for a, b in pairs:
                self.eprintln(f"  Index timestamp: {a}, log timestamp: {b}")
        for path, pairs in self.ts_out_of_order.items():
            self.eprintln(f"Found out of order timestamp in :{path}")
            for a, b in pairs:
                self.eprintln(f"  Index timestamp: {a}, Previously indexed timestamp: {b}")
        for path, pairs in self.ts_not_found.items():
            self.eprintln(fmt.ts_not_found_header.format(path=path))
            for a, b in pairs:
                self.eprintln(f"Indexed offset: {a}, found log offset: {b}")
        for path, pairs in self.non_consecutive.items():
            self.eprintln(fmt.non_consecutive_header.format(path=path))
            for first, second in pairs.pairs():
                self.eprintln(f"  {first} is followed by {second}")
            self._left_out(pairs)

    def _left_out(self, pairs: _Prepended | _Sorted) -> None:
        if isinstance(pairs, _Sorted):
            if pairs.pruned:
                self.eprintln(
                    f"  ... and more pairs not listed (kafka-conformance keeps the first "
                    f"{MAX_REPORTED_PAIRS} per file)"
                )
            return
        if pairs.added > len(pairs):
            self.eprintln(
                f"  ... and {pairs.added - len(pairs)} older pairs not listed "
                f"(kafka-conformance keeps the newest {MAX_REPORTED_PAIRS} per file)"
            )

    def add_pair(self, m: Any, key: str, pair: tuple[int, int], kind: str) -> None:
        """Record ``pair`` for file ``key`` in ``m``: ``kind`` "prepended" (a Scala ``List``,
        ``m.put(key, pair :: m.getOrElse(key, Nil))``, in O(1)), "ascending"/"descending" (a
        Java ``TreeMap``, ``computeIfAbsent(key).put``)."""
        lst = m.get(key)
        if lst is None:
            lst = _Prepended() if kind == "prepended" else _Sorted(kind == "descending")
            m.put(key, lst)
        lst.add(pair)

    @staticmethod
    def append(m: Any, key: str, pair: tuple[int, int]) -> None:
        lst = m.get(key)
        if lst is None:
            lst = []
            m.put(key, lst)
        lst.append(pair)
