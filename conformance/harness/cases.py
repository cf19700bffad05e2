"""The cases ``kafka-conformance check`` runs: every input of the corpora with Kafka's verdict.

A case is one input in one splitting mode, with the canonical document the Java oracle wrote
for it (never the reference decoder's). Case ids, which ``--cases`` globs and
``divergences.toml`` files match:

=====================================================  =========================================
``crafted/<name>@memory|file``                          ``corpora/crafted/<name>.bin`` and its
                                                        ``<name>.<mode>.json``
``<broker-id>/<scenario>/<path>@file|memory``           a golden capture's ``log/`` or ``wire/``
                                                        file and ``expected/<path>.decode.json``
``regressions/stream/<name>@memory``                    a fuzzing regression of the ``stream``
                                                        target (its input is a record stream)
=====================================================  =========================================

Groups (the HTML matrix's columns): ``crafted/<area>`` (the name's first word: ``v2``,
``legacy``, ``gzip``...), the broker id of a golden case, ``regressions``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from conformance.codecs import CODEC_IDS, CODECS
from conformance.corpus import golden, package
from conformance.errors import CorpusError
from conformance.fileio import check_regular_file, read_bytes
from conformance.wire import layout

__all__ = [
    "Case",
    "Features",
    "case_features",
    "check_readable",
    "features",
    "read_cases",
    "read_json_file",
]

#: Kafka's checksum messages (v2 ``DefaultRecordBatch.ensureValid``, legacy ``LegacyRecord``)
_CRC_MESSAGE = re.compile(r"is corrupt \(stored crc = ")
DECODE_SUFFIX = ".decode.json"


@dataclass(frozen=True)
class Case:
    id: str
    group: str
    mode: str
    path: Path  # the input bytes
    expected_path: Path  # the JSON file holding Kafka's document
    expected_key: str | None  # the member holding it (regressions), None: the whole file
    #: Kafka's verdict for the same bytes in the other mode, where the corpus has it
    other_mode_path: Path | None = None
    description: str = ""

    def data(self) -> bytes:
        return read_bytes(self.path)  # a regular file only: a FIFO is refused, never opened

    def expected(self) -> dict[str, Any]:
        doc = read_json_file(self.expected_path)
        if self.expected_key:
            doc = doc.get(self.expected_key)
            if not isinstance(doc, dict):
                raise CorpusError(f"{self.expected_path}: no {self.expected_key!r} object")
        return doc

    def other_mode_expected(self) -> dict[str, Any] | None:
        if self.other_mode_path is None:
            return None
        return read_json_file(self.other_mode_path)

    def check_readable(self) -> None:
        """Raise :class:`CorpusError` if a file of the case is missing, not a regular file, or
        (a verdict) not a JSON object (:func:`check_readable`)."""
        try:
            check_regular_file(self.path)
        except OSError as e:
            raise CorpusError(f"{self.path}: {e.strerror or e}") from None
        self.expected()
        self.other_mode_expected()


@dataclass(frozen=True)
class Features:
    """What a case needs of a decoder (compared with an adapter's capabilities)."""

    magics: frozenset[int]
    codecs: frozenset[str]
    crc_error: bool
    #: file mode only: whether Kafka's memory-mode verdict is the same document (None: unknown)
    same_in_memory: bool | None = field(default=None)


def read_json_file(path: Path) -> dict[str, Any]:
    """The JSON object of a corpus file; :class:`CorpusError` naming the file when it is
    missing, not a regular file (never opened), not UTF-8 JSON, or not an object."""
    try:
        doc = json.loads(read_bytes(path))
    except OSError as e:
        raise CorpusError(f"{path}: {e.strerror or e}") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise CorpusError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise CorpusError(f"{path}: not a JSON object")
    return doc


class _Readable(Protocol):
    @property
    def id(self) -> str: ...

    def check_readable(self) -> None: ...


def check_readable(cases: Iterable[_Readable]) -> None:
    """Before a run: every file the ``cases`` (decode or consume cases) read is there, a
    regular file, and its verdict a JSON object, or :class:`CorpusError` naming the first
    case and file that is not (a damaged corpora directory, refused up front rather than a
    traceback in the middle of the run). Reads every verdict once (0.1 s for the corpora)."""
    for case in cases:
        try:
            case.check_readable()
        except CorpusError as e:
            raise CorpusError(
                f"case {case.id} cannot be read: {e} (the corpora are damaged: restore the "
                f"directory or reinstall the corpora package)"
            ) from None


def _crafted(root: Path) -> Iterable[Case]:
    base = root / "crafted"
    manifest = base / "manifest.json"
    if not manifest.exists():
        return
    try:
        entries = [(e["name"], e["modes"], e.get("description", "")) for e in
                   read_json_file(manifest)["cases"]]  # fmt: skip
    except (KeyError, TypeError, AttributeError):
        raise CorpusError(f"{manifest}: not a crafted-cases manifest") from None
    for name, modes, description in entries:
        area = name.split("-", 1)[0]
        for mode in modes:
            other = "file" if mode == "memory" else "memory"
            other_path = base / f"{name}.{other}.json"
            yield Case(
                id=f"crafted/{name}@{mode}",
                group=f"crafted/{area}",
                mode=mode,
                path=base / f"{name}.bin",
                expected_path=base / f"{name}.{mode}.json",
                expected_key=None,
                other_mode_path=other_path if other_path.exists() else None,
                description=description,
            )


def _golden(root: Path) -> Iterable[Case]:
    for case_dir in golden.find_cases(root):
        broker = case_dir.parent.name
        expected_dir = case_dir / "expected"
        for exp in sorted(expected_dir.rglob("*" + DECODE_SUFFIX)):
            rel = exp.relative_to(expected_dir).as_posix()[: -len(DECODE_SUFFIX)]
            mode = "memory" if golden.file_kind(rel) == "wire" else "file"
            yield Case(
                id=f"{broker}/{case_dir.name}/{rel}@{mode}",
                group=broker,
                mode=mode,
                path=case_dir / rel,
                expected_path=exp,
                expected_key=None,
                description=f"captured from a real broker ({broker}, scenario {case_dir.name})",
            )


def _regressions(root: Path) -> Iterable[Case]:
    # only the `stream` target takes a record stream as it is; the others' inputs are codec
    # payloads or files, wrapped by the fuzz target before the oracle saw them
    base = root / "regressions" / "stream"
    for meta in sorted(base.glob("*.json")):
        doc = read_json_file(meta)
        if "expected" not in doc or "mode" not in doc:
            continue
        yield Case(
            id=f"regressions/{meta.parent.name}/{meta.stem}@{doc['mode']}",
            group="regressions",
            mode=doc["mode"],
            path=meta.with_suffix(".bin"),
            expected_path=meta,
            expected_key="expected",
            description=doc.get("note", ""),
        )


def read_cases(root: Path | None = None) -> list[Case]:
    """Every case of the corpora under ``root`` (default: the checkout's ``corpora/``)."""
    root = Path(root) if root is not None else package.corpora_root()
    return [*_crafted(root), *_golden(root), *_regressions(root)]


def _failing_header(data: bytes, position: int) -> tuple[int | None, str | None]:
    """Magic and codec of the batch starting at ``position`` that Kafka could not list."""
    if position + layout.HEADER_SIZE_UP_TO_MAGIC > len(data):
        return None, None
    magic = data[position + layout.MAGIC_OFFSET]
    if magic == 2:
        at = position + layout.ATTRIBUTES_OFFSET + 1  # the low byte of the int16
    elif magic in (0, 1):
        at = position + layout.LOG_OVERHEAD + layout.MESSAGE_ATTRIBUTES_OFFSET
    else:
        return None, None
    if at >= len(data):
        return magic, None
    codec = data[at] & layout.COMPRESSION_CODEC_MASK
    return magic, CODECS[codec].name if codec in CODECS else None


def case_features(case: Case, data: bytes, expected: dict[str, Any]) -> Features:
    """What ``case`` needs (:func:`features`), with Kafka's memory-mode verdict of a file-mode
    case where the corpus has it."""
    other = case.other_mode_expected() if case.mode == "file" else None
    return features(data, expected, case.mode, other)


def features(
    data: bytes, expected: dict[str, Any], mode: str, other: dict[str, Any] | None = None
) -> Features:
    """What decoding ``data`` in ``mode`` needs, by Kafka's verdict ``expected``: the magics and
    codecs of its batches (those Kafka listed, and the one it failed on), whether the verdict
    is a checksum error, and in file mode whether the memory-mode verdict ``other`` (None:
    unknown) is the same."""
    # a batch with an invalid magic is not a feature: every decoder must refuse it
    magics = {b["magic"] for b in expected["batches"] if b["magic"] in (0, 1, 2)}
    codecs = {b["compression"] for b in expected["batches"] if b["compression"] in CODEC_IDS}
    error = expected.get("error")
    crc_error = False
    if error:
        crc_error = bool(_CRC_MESSAGE.search(error.get("message") or ""))
        listed = {b["position"] for b in expected["batches"]}
        if error["position"] not in listed:
            magic, codec = _failing_header(data, error["position"])
            if magic in (0, 1, 2):
                magics.add(magic)
            if codec is not None:
                codecs.add(codec)
    same: bool | None = None
    if mode == "file":
        if other is not None:
            same = _without_mode(other) == _without_mode(expected)
        elif expected["outcome"] == "ok":
            # the golden logs (no memory verdict stored): a log Kafka reads whole in file mode
            # reads the same in memory mode (tests/test_harness.py asks the oracle for every
            # one; crafted inputs, which can differ, carry both verdicts)
            same = True
    return Features(frozenset(magics), frozenset(codecs), crc_error, same)


def _without_mode(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "mode"}
