"""``corpora/written/``: log directories written by the kit's own writer, not by a broker, with
the golden dumps of real Kafka releases' DumpLogSegments.

The broker captures (``corpora/<broker-id>/``) show what each release's tool prints for what
its own broker wrote. A directory written by someone else (a third-party broker, a tool
restoring a backup, the kit's :class:`~conformance.logdir.writer.PartitionWriter`) is read by
the same tool: these cases hold what 2.8, 3.9 and 4.3 (every captured release that reads
magic 2) print for one, with corruptions planted or not.

======================================  ====================================================
path                                    what
======================================  ====================================================
``written/kit-writer-<kafka>/<case>/``  one case per release whose tool printed its dumps
``  manifest.json``                     the corpus manifest (``broker_version`` = that
                                        release; ``writer``: the command that wrote ``log/``)
``  planted.json``                      ``kafka-conformance synth``'s report of the
                                        corruptions
``  log/``                              ``synthesize(log, SIZE, corrupt, seed)``: two
                                        partitions, root checkpoint files
``  expected/``                         decode: the Java oracle; dump and deep: DumpLogSegments
                                        of ``broker_version`` (:func:`golden.write_expectations`)
======================================  ====================================================

The bytes are the same for every release (``synthesize`` is deterministic in size, corruption
count and seed); ``tests/test_written_corpus.py`` writes them again and compares. The cases
are not ``check`` inputs (``golden.NOT_BROKERS``): ``verify`` checks them
(:func:`golden.verify_corpus`). ``scripts/make-written-corpus`` writes them.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.corpus import golden
from conformance.corpus.synth import synthesize

__all__ = ["CASES", "SIZE", "WRITER", "WrittenCase", "case_dir", "write_case"]

#: ``.log`` bytes per case (synth's smallest: two partitions of at least 64 KiB)
SIZE = 128 * 1024
#: the writer's name in directory names and manifests
WRITER = "kit-writer"


@dataclass(frozen=True)
class WrittenCase:
    name: str
    description: str
    corrupt: int
    seed: int

    @property
    def command(self) -> str:
        """The command writing the same ``log/``."""
        return (
            f"kafka-conformance synth --size {SIZE} --corrupt {self.corrupt} --seed {self.seed} "
            "--out log"
        )


CASES: tuple[WrittenCase, ...] = (
    WrittenCase(
        "synth-clean",
        "two partitions written by the kit's PartitionWriter: v0/v1 history then v2, every "
        "codec, idempotent and transactional producers, offset gaps, a clean shutdown",
        0,
        11,
    ),
    WrittenCase(
        "synth-planted",
        "the same kind of directory with corruptions planted in .log files (bit flips, bad "
        "lengths, zero-filled ranges, a torn tail; planted.json)",
        4,
        12,
    ),
)


def case_dir(root: Path, version: str, case: WrittenCase) -> Path:
    """``<root>/written/kit-writer-<version>/<case>`` (``root``: a ``corpora/`` directory)."""
    return Path(root) / golden.WRITTEN / f"{WRITER}-{version}" / case.name


def write_case(root: Path, version: str, case: WrittenCase, *, expectations: bool = True) -> Path:
    """Write one case (replacing it): ``log/`` by the kit's writer, the manifest, and with
    ``expectations`` the oracle's decodes and Kafka ``version``'s dumps (needs Java and that
    release's jars)."""
    out = case_dir(root, version, case)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    synthesize(out / "log", SIZE, corrupt=case.corrupt, seed=case.seed)
    (out / "log" / "planted.json").replace(out / "planted.json")
    writer: dict[str, Any] = {"name": WRITER, "command": case.command}
    golden.write_manifest(
        out,
        broker_version=version,
        scenario=case.name,
        description=case.description,
        writer=writer,
    )
    if expectations:
        golden.write_expectations(out, version)
    return out
