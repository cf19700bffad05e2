"""The kit's one progress display for long commands (``check``, ``synth``, ``replay``).

On a terminal it is a `tqdm <https://tqdm.github.io>`_ bar on stderr (count, rate, time left,
redrawn at most five times a second); anywhere else (a log file, CI) it is one plain line at
every tenth of the work and at the end, so logs stay short and readable::

    synth: 40.1/100.0 MB (40%), 35.2 MB/s
    java: 484/967 (50%)  pass 484  fail 0  unsupported 0  error 0

``update(done, detail)`` takes the absolute amount done; ``detail`` is shown after the count.
A display with ``enabled=False`` or nothing to do shows nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from conformance.host.lifetime import Closing

__all__ = ["Progress", "Status"]

#: a callback taking one line of status text ("verifying x.log (1.2 MB)")
Status = Callable[[str], None]


class Progress(Closing):
    """Progress of ``total`` units of work labelled ``label`` (``unit="B"``: bytes, shown in
    MB with a rate); ``with`` closes it."""

    def __init__(
        self,
        label: str,
        total: int,
        *,
        unit: str = "",
        enabled: bool = True,
        stream: TextIO | None = None,
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and total > 0
        self.started = time.monotonic()
        self.next_tenth = 1
        self.finished = False
        self.bar: Any = None
        if self.enabled and self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                desc=label,
                unit=unit or "it",
                unit_scale=unit == "B",
                unit_divisor=1000,
                file=self.stream,
                dynamic_ncols=True,
                mininterval=0.2,
                leave=True,
            )

    def update(self, done: int, detail: str = "") -> None:
        """``done`` of ``total`` units are done (absolute, not an increment)."""
        if not self.enabled or self.finished:
            return
        done = min(done, self.total)
        if self.bar is not None:
            if detail:
                self.bar.set_postfix_str(detail, refresh=False)
            self.bar.update(done - self.bar.n)
            return
        if done * 10 >= self.next_tenth * self.total:
            self.stream.write(self._line(done, detail) + "\n")
            self.stream.flush()
            self.next_tenth = done * 10 // self.total + 1
        self.finished = done >= self.total

    def _line(self, done: int, detail: str) -> str:
        percent = done * 100 // self.total
        if self.unit == "B":
            elapsed = time.monotonic() - self.started
            rate = done / 1e6 / elapsed if elapsed > 0 else 0.0
            text = f"{done / 1e6:,.1f}/{self.total / 1e6:,.1f} MB ({percent}%), {rate:.1f} MB/s"
        else:
            unit = f" {self.unit}" if self.unit else ""
            text = f"{done:,}/{self.total:,}{unit} ({percent}%)"
        return f"{self.label}: {text}" + (f"  {detail}" if detail else "")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        self.finished = True
