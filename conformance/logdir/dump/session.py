"""The state of one DumpLogSegments run (``DumpLogSegments.main``): options, stdout, and the
error maps reported on stderr at the end (Scala ``mutable.HashMap``s keyed by absolute path).
"""

from __future__ import annotations

from collections import deque
from typing import TextIO

from conformance.logdir.dump.javaemu import Console, ScalaHashMap

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

    def newest_first(self) -> list[tuple[int, int]]:
        return list(reversed(self))


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
    ) -> None:
        self.con = Console(out)
        self.err = err
        self.deep = deep
        self.print_data = print_data
        self.verify_only = verify_only
        self.sanity_only = sanity_only
        self.max_bytes = max_bytes
        self.max_message_size = max_message_size
        self.index_mismatches = ScalaHashMap()  # path -> list (prepended)
        self.ts_mismatches = ScalaHashMap()  # path -> list (appended)
        self.ts_out_of_order = ScalaHashMap()
        self.ts_not_found = ScalaHashMap()
        self.non_consecutive = ScalaHashMap()  # path -> list (prepended)

    def eprintln(self, s: str) -> None:
        self.err.write(s + "\n")

    def report_errors(self) -> None:
        """The error maps, on stderr, after the last file."""
        for path, pairs in self.index_mismatches.items():
            self.eprintln(f"Mismatches in :{path}")
            for index_offset, log_offset in pairs.newest_first():
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
        for _path, pairs in self.ts_not_found.items():
            self.eprintln("The following indexed offsets are not found in the log.")
            for a, b in pairs:
                self.eprintln(f"Indexed offset: {a}, found log offset: {b}")
        for path, pairs in self.non_consecutive.items():
            self.eprintln(f"Non-consecutive offsets in {path}")
            for first, second in pairs.newest_first():
                self.eprintln(f"  {first} is followed by {second}")
            self._left_out(pairs)

    def _left_out(self, pairs: _Prepended) -> None:
        if pairs.added > len(pairs):
            self.eprintln(
                f"  ... and {pairs.added - len(pairs)} older pairs not listed "
                f"(kafka-conformance keeps the newest {MAX_REPORTED_PAIRS} per file)"
            )

    @staticmethod
    def prepend(m: ScalaHashMap, key: str, pair: tuple[int, int]) -> None:
        """``m.put(key, pair :: m.getOrElse(key, Nil))`` in O(1)."""
        lst = m.get(key)
        if lst is None:
            lst = _Prepended()
            m.put(key, lst)
        lst.add(pair)

    @staticmethod
    def append(m: ScalaHashMap, key: str, pair: tuple[int, int]) -> None:
        lst = m.get(key)
        if lst is None:
            lst = []
            m.put(key, lst)
        lst.append(pair)
