"""Capturing golden corpora from real Kafka brokers (docs/corpora.md).

Backends start a real broker and hand back a :class:`RunningBroker`; scenarios produce into
it; ``capture`` copies the partition directories the broker wrote after a clean shutdown and
has the independent tools (Java oracle, the broker version's DumpLogSegments) write the
expectations.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from conformance.host.progress import Status

Mode = Literal["kraft", "zookeeper"]


def add_out_option(p: argparse.ArgumentParser) -> argparse.Action:
    """``--out DIR``, the corpus root a capture command writes into (None when not given: the
    command takes ``corpus.golden.default_root()``)."""
    return p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="corpus root (default: <repo>/corpora)",
    )


@dataclass(frozen=True)
class BrokerSpec:
    """One broker flavour of the corpus (``corpora/<broker_id>/``)."""

    broker_id: str  # e.g. "kafka-3.9.2-kraft"
    version: str  # Maven version of org.apache.kafka:kafka_2.x
    mode: Mode
    config: dict[str, str] = field(default_factory=dict)  # extra server.properties
    max_magic: int = 2  # highest message format this broker can write
    image: str | None = None  # docker image for the testcontainers backend


@dataclass
class CaptureResult:
    """What a capture on one broker did: the cases captured, failed and skipped (with why),
    its time and the broker's start-up time."""

    broker_id: str
    captured: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    startup_seconds: float = 0.0

    def tell_cases(self, progress: Status) -> bool:
        """Say each case skipped (and why) and each failed (the first line of why) to
        ``progress``; whether none failed."""
        for name, why in self.skipped.items():
            progress(f"{self.broker_id}: {name} skipped: {why}")
        for name, why in self.failed.items():
            progress(f"{self.broker_id}: {name} FAILED: {why.splitlines()[0] if why else ''}")
        return not self.failed


class RunningBroker(Protocol):
    spec: BrokerSpec
    bootstrap: str  # "127.0.0.1:<port>"
    log_dir: Path  # partition directories are here once stop() returned
    java_version: str
    backend: str  # "jvm" | "testcontainers"

    def stop(self) -> None:
        """Clean shutdown (indexes trimmed, producer snapshots written); idempotent."""

    def read_log_file(self, rel: str) -> bytes | None:
        """``<log.dirs>/rel`` while the broker runs (``None``: no such file)."""

    def list_log_dir(self, rel: str) -> list[str]:
        """File names in ``<log.dirs>/rel`` while the broker runs."""

    def __enter__(self) -> RunningBroker: ...

    def __exit__(self, *exc: object) -> None: ...
