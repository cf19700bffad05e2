"""Where the corpora are, and which corpus a report was made with.

The corpora ``check`` reads (decode cases, consume scenarios, the produce cases of
``check-broker``) come from one of two places, in this order:

1. a checkout's ``corpora/`` (``$KAFKA_CONFORMANCE_ROOT``, or the repository an editable
   install lives in: ``jvm.runtime.checkout_root``);
2. the companion data package ``kafka-conformance-corpora`` (import name
   :data:`PACKAGE`), installed by ``pip install 'kafka-conformance[corpora]'``: a wheel of its
   own, built by ``scripts/build-corpora-package`` from the checkout's corpora, versioned with
   the kit (the extra pins the same version), holding only the files the cases read.

:func:`identity` names the corpus a run used (its version, where it came from, a digest of
its files) for every report, and refuses corpora that cannot be trusted before any case
runs (:class:`conformance.errors.CorpusError`). The data package carries its identity in
:data:`IDENTITY_FILE`, written when it is built, with the sha256 of every file; the files are
hashed again at every run and held to it (a changed, missing or added file is refused, and
so is a package of another version than the kit). A directory's identity is computed from its
files. Either way only regular files are read: a FIFO, socket or device anywhere in the
corpora is refused up front, never opened.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance import __version__
from conformance.broker.fetch import READ_COMMITTED, READ_UNCOMMITTED
from conformance.corpus import consume, golden
from conformance.errors import CorpusError
from conformance.fileio import read_bytes
from conformance.jvm import runtime as jvm
from conformance.messages.schema import Schemas

__all__ = [
    "DISTRIBUTION",
    "FETCH_ANSWER_FIELDS",
    "IDENTITY_FILE",
    "INSTALL_HINT",
    "PACKAGE",
    "corpora_root",
    "corpus_files",
    "FetchAnswers",
    "digest",
    "fetch_answers",
    "identity",
    "package_root",
    "write_identity",
]

#: the data package's distribution name (``pip install``) and import name
DISTRIBUTION = "kafka-conformance-corpora"
PACKAGE = "kafka_conformance_corpora"
#: the data package's own description of its corpus: ``{"format", "version", "digest",
#: "files", "bytes", "sha256"}`` (``sha256``: each file's path, relative to the package,
#: to the sha256 of its contents)
IDENTITY_FILE = "corpus.json"
IDENTITY_FORMAT = "kafka-conformance/corpus-package/2"
INSTALL_HINT = (
    f"install the corpora (pip install 'kafka-conformance[corpora]', the {DISTRIBUTION} "
    "package of the same version), pass --corpora DIR, or set KAFKA_CONFORMANCE_ROOT to a "
    "checkout"
)
#: what a user does about a package that cannot be trusted
REINSTALL = f"reinstall it: pip install --force-reinstall '{DISTRIBUTION}=={__version__}'"
#: directories that are no part of a corpus (Python writes them into an installed package)
_SKIPPED_DIRS = frozenset({"__pycache__"})
#: how many differing files a refusal names
_NAMED = 5


def package_root() -> Path | None:
    """The installed data package's directory (its files are the corpora), or None."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent  # its corpus.json is checked by identity()


def corpora_root() -> Path:
    """The corpora directory to read when none is given: the checkout's ``corpora/``, else
    the installed data package's. Raises :class:`conformance.jvm.runtime.NoCheckout` (with
    :data:`INSTALL_HINT`) when there is neither."""
    try:
        return golden.default_root()
    except jvm.NoCheckout:
        installed = package_root()
        if installed is not None:
            return installed
    raise jvm.NoCheckout(f"no corpora here: {INSTALL_HINT}")


def _kind(mode: int) -> str:
    return {
        stat.S_IFIFO: "a FIFO",
        stat.S_IFSOCK: "a socket",
        stat.S_IFCHR: "a character device",
        stat.S_IFBLK: "a block device",
    }.get(stat.S_IFMT(mode), "not a regular file")


def corpus_files(root: Path) -> list[Path]:
    """Every file under ``root`` but ``__pycache__/``, each checked with ``os.stat`` (links
    followed) to be a regular file before anything opens it. :class:`CorpusError` for a
    ``root`` that is no directory, a FIFO, socket, device or broken link under it, and a
    directory that cannot be listed."""
    if not root.is_dir():
        what = "does not exist" if not root.exists() else "is not a directory"
        raise CorpusError(f"{root}: the corpora directory {what}")

    def refuse(e: OSError) -> None:
        raise CorpusError(f"{e.filename}: cannot be listed: {e.strerror}")

    out: list[Path] = []
    for where, dirs, names in os.walk(root, onerror=refuse):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in names:
            path = Path(where) / name
            try:
                mode = os.stat(path).st_mode
            except OSError as e:
                raise CorpusError(f"{path}: {e.strerror} (a broken link?)") from None
            if not stat.S_ISREG(mode):
                raise CorpusError(
                    f"{path}: {_kind(mode)} in the corpora, not a regular file: refused "
                    "(a corpus holds regular files only; remove it)"
                )
            out.append(path)
    return out


def _read(path: Path) -> bytes:
    try:
        return read_bytes(path)
    except OSError as e:  # changed under us (a FIFO put in its place), unreadable
        raise CorpusError(f"{path}: cannot be read: {e.strerror or e}") from None


def _hashes(root: Path, files: list[Path]) -> tuple[str, dict[str, str], int]:
    """The corpus digest of ``files`` (see :func:`digest`), each file's sha256 by its
    relative path, and their total size: every file read once."""
    whole = hashlib.sha256()
    each: dict[str, str] = {}
    size = 0
    for f in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        rel = f.relative_to(root).as_posix()
        data = _read(f)
        whole.update(f"{rel}\0{len(data)}\0".encode())
        whole.update(data)
        each[rel] = hashlib.sha256(data).hexdigest()
        size += len(data)
    return whole.hexdigest(), each, size


def digest(root: Path, files: list[Path]) -> str:
    """sha256 over every file's path (relative to ``root``) and contents, in path order: two
    corpora with the same digest hold the same cases."""
    return _hashes(root, files)[0]


def _recorded(path: Path) -> dict[str, Any]:
    """The data package's :data:`IDENTITY_FILE`, of this format and this kit's version."""
    try:
        doc = json.loads(_read(path).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorpusError(
            f"{path}: the corpora package's {IDENTITY_FILE} is not valid JSON ({e}); {REINSTALL}"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != IDENTITY_FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else None
        raise CorpusError(
            f"{path}: not a corpora package description of this kit (format "
            f"{ascii(found)[:80]}, expected {IDENTITY_FORMAT!r}); {REINSTALL}"
        )
    version = doc.get("version")
    if version != __version__:
        raise CorpusError(
            f"{path.parent}: the corpora package is version {ascii(version)[:40]}, the kit "
            f"{__version__}: the cases and verdicts of one release are judged by the same "
            f"release; {REINSTALL}"
        )
    if not isinstance(doc.get("digest"), str) or not isinstance(doc.get("sha256"), dict):
        raise CorpusError(f"{path}: no digest or file list recorded; {REINSTALL}")
    return doc


def _named(kind: str, paths: list[str]) -> str:
    more = f" and {len(paths) - _NAMED} more" if len(paths) > _NAMED else ""
    return f"{kind} {', '.join(paths[:_NAMED])}{more}"


def _verify(root: Path, doc: dict[str, Any], files: list[Path]) -> str:
    """The digest of the package ``root``'s ``files``, which must be the recorded one."""
    found, each, _ = _hashes(root, files)
    if found == doc["digest"]:
        return found
    recorded: dict[str, Any] = doc["sha256"]
    parts = [
        _named("changed:", sorted(p for p in each if p in recorded and recorded[p] != each[p])),
        _named("missing:", sorted(set(recorded) - set(each))),
        _named("not in the package:", sorted(set(each) - set(recorded))),
    ]
    said = "; ".join(p for p in parts if not p.endswith(": ")) or "their digest differs"
    raise CorpusError(
        f"{root}: the corpora package's files do not match its recorded digest "
        f"({doc['digest'][:12]}, {IDENTITY_FILE}): {said}. Its cases and verdicts cannot be "
        f"trusted; {REINSTALL}"
    )


def identity(root: Path) -> dict[str, Any]:
    """Which corpus ``root`` is: ``{"version", "source", "digest"}``, after hashing every
    file. ``source`` is ``package`` (the data package: its version, which must be the kit's,
    and its digest, which its files must give), or ``directory`` (a checkout's or any other
    directory: the kit's version with ``+directory``, the digest of every file under it).
    :class:`CorpusError` when the corpora cannot be used (see :func:`corpus_files`, and a
    package's refusals above)."""
    root = Path(root)
    files = corpus_files(root)
    recorded = root / IDENTITY_FILE
    if recorded in files or root.name == PACKAGE or (root / "__init__.py") in files:
        # the data package, or a copy of it
        if recorded not in files:
            raise CorpusError(f"{recorded}: missing from the corpora package; {REINSTALL}")
        doc = _recorded(recorded)
        files.remove(recorded)
        return {"version": doc["version"], "source": "package", "digest": _verify(root, doc, files)}
    return {
        "version": f"{__version__}+directory",
        "source": "directory",
        "digest": digest(root, files),
    }


def write_identity(root: Path, version: str) -> dict[str, Any]:
    """Record ``root``'s identity in :data:`IDENTITY_FILE` (the data package's build)."""
    files = [f for f in corpus_files(root) if f != root / IDENTITY_FILE]
    whole, each, size = _hashes(root, files)
    doc = {
        "format": IDENTITY_FORMAT,
        "version": version,
        "digest": whole,
        "files": len(files),
        "bytes": size,
        "sha256": each,
    }
    (root / IDENTITY_FILE).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return doc


#: what :class:`FetchAnswers` holds of each Fetch answer, in order
FETCH_ANSWER_FIELDS = (
    "offset",
    "error",
    "records",
    "high watermark",
    "last stable offset",
    "log start offset",
    "aborted transactions",
    "first entry incomplete",
)


@dataclass(frozen=True)
class FetchAnswers:
    """What the fake broker serves a consumer of one consume scenario: its topic partition,
    the highest magic (which Fetch versions it answers), the scenario's fault, and the answer
    to a Fetch at every offset from the log start to the log end (the fields of
    :data:`FETCH_ANSWER_FIELDS`; aborted transactions as sent: producer id, first offset)."""

    topic: str
    partition: int
    max_magic: int
    cut_fetch: tuple[int, int] | None
    answers: tuple[tuple[Any, ...], ...]

    def digest(self) -> str:
        """sha256 of everything above (to compare two installations' answers)."""
        return hashlib.sha256(repr(self).encode()).hexdigest()


def fetch_answers(root: Path, scenario: consume.ConsumeScenario) -> FetchAnswers:
    """What the fake broker answers for ``scenario`` served from the corpora ``root``, at the
    scenario's isolation level (``FetchLog.read`` as ``fakebroker.handlers`` calls it, at the
    fake broker's ``fetch.max.bytes``; no socket). Two corpora whose answers are equal serve
    the scenario alike: ``scripts/build-corpora-package`` holds the package to the checkout
    with it. ``ValueError`` or ``OSError`` for a partition that cannot be served."""
    served = consume.served(root, scenario, Schemas([], "unused: the partition alone"))
    log = served.log
    committed = scenario.isolation == consume.READ_COMMITTED
    isolation = READ_COMMITTED if committed else READ_UNCOMMITTED
    assert log.log_start_offset is not None
    answers = []
    for offset in range(log.log_start_offset, log.log_end_offset + 1):
        r = log.read(offset, served.fetch_max_bytes, min_one_message=True, isolation=isolation)
        aborted = (
            None if r.aborted is None else [(a.producer_id, a.first_offset) for a in r.aborted]
        )
        answers.append((offset, r.error, r.records, r.high_watermark, r.last_stable_offset,
                        r.log_start_offset, aborted, r.first_entry_incomplete))  # fmt: skip
    return FetchAnswers(
        served.topic, served.partition, served.max_magic, served.faults.cut_fetch, tuple(answers)
    )
