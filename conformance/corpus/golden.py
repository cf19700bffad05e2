"""Golden corpora of real brokers (docs/corpora.md): writing expectations, verifying cases.

A case is ``corpora/<broker-id>/<scenario>/`` with ``manifest.json``, ``log/...`` (the partition
directories the broker wrote), optionally ``wire/*.bin`` (fetched bytes) and ``expected/...``
(written here, by independent tools only):

* :func:`write_manifest` computes sha256 / size / kind of every file under ``log/`` and
  ``wire/`` and writes ``manifest.json`` with the documented key order, merging the fields the
  capturer knows (broker, producer, topic, ...).
* :func:`write_expectations` runs the Java oracle (Kafka's own ``FileRecords`` /
  ``MemoryRecords``, ``oracle/``) and the broker version's real ``DumpLogSegments``
  (``conformance.jvm.kafka_jars``) over the case, with the case directory as working directory and
  case-relative paths, and writes ``expected/<path>.decode.json`` / ``.dump.txt`` /
  ``.dump.err`` / ``.deep.txt``. Needs Java (and Maven once).
* :func:`verify_corpus` checks every case with the kit's own Python code only: sha256 of every
  file, ``conformance.decode`` against ``*.decode.json`` (``conformance.stream.compare.diff``) and
  ``conformance.logdir.dump.dump`` in the format of the case's broker version
  (``logdir.dump.formats``) against the dump texts, byte for byte; a version the kit has no
  format for is reported as skipped.

Absolute paths: DumpLogSegments names files by absolute path in some stderr reports
(``Non-consecutive offsets in /abs/path/...``, index mismatches). The case directory's absolute
path is replaced by ``<case-dir>`` in ``.dump.err`` / ``.deep.err`` when they are written, and
in our stderr when compared, so a case verifies wherever it is checked out.

Comparing stderr: when DumpLogSegments dies of an exception the JVM prints a stack trace after
``Exception in thread "main" ...``; ``.dump.err`` keeps it verbatim, the comparison stops at that
line (our dump does not mirror stack traces).

``kafka-conformance verify`` (``conformance/cli/verify.py``) is the command-line front end.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fnmatch
import hashlib
import io
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from conformance.corpus.report import (
    ERROR,
    MISMATCH,
    OK,
    SKIPPED,
    Check,
    CorpusReport,
    VerifiedCase,
)
from conformance.fileio import FileSource, check_regular_file, read_bytes
from conformance.jvm import runtime as jvm
from conformance.logdir.dump import dump
from conformance.logdir.dump.formats import DumpFormat, UnknownKafkaVersion, format_of

__all__ = [
    "CASE_DIR_TOKEN",
    "CORPUS_FORMAT",
    "MANIFEST_KEYS",
    "VerifiedCase",
    "Check",
    "CorpusReport",
    "default_root",
    "dump_format",
    "expected_path",
    "file_kind",
    "find_cases",
    "find_cases_without_manifest",
    "first_trace_line_only",
    "case_id",
    "verify_case",
    "verify_corpus",
    "write_expectations",
    "write_manifest",
]

CORPUS_FORMAT = "kafka-conformance/corpus/1"

#: manifest.json keys, in the documented order (docs/corpora.md); other keys follow them
MANIFEST_KEYS: tuple[str, ...] = (
    "format",
    "broker_id",
    "broker_version",
    "broker_mode",
    "broker_config",
    "java_version",
    "backend",
    "image",
    "scenario",
    "description",
    "writer",
    "producer",
    "topic",
    "topic_configs",
    "captured_at",
    "non_deterministic",
    "files",
    "expectations",
)

#: the top-level directory of ``corpora/`` holding directories written by the kit's writer,
#: with real releases' dumps (``conformance.corpus.written``): verified, not ``check`` inputs
WRITTEN = "written"
#: top-level directories of ``corpora/`` that are not log captures (own formats and tests;
#: ``produce-golden`` holds Produce exchanges, ``conformance.corpus.produce.golden``)
#: the top-level directory of ``corpora/`` holding the real consumers' scenarios
#: (``conformance.corpus.consume``)
CONSUME = "consume"
NOT_BROKERS = frozenset({"crafted", "samples", "produce", "produce-golden", WRITTEN, CONSUME})

_KIND_BY_SUFFIX = {
    ".log": "log",
    ".index": "index",
    ".timeindex": "timeindex",
    ".txnindex": "txnindex",
    ".snapshot": "snapshot",
    ".checkpoint": "checkpoint",
}
#: suffixes DumpLogSegments dumps (a ``.checkpoint`` is a KRaft snapshot, dumped like a log)
DUMP_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".checkpoint")
#: record files: decoded (mode file) and deep-dumped
RECORD_SUFFIXES = (".log", ".checkpoint")

_DECODE = ".decode.json"
_DUMP = ".dump.txt"
_DUMP_ERR = ".dump.err"
_DEEP = ".deep.txt"
_DEEP_ERR = ".deep.err"

#: stands for the case directory's absolute path in .dump.err / .deep.err
CASE_DIR_TOKEN = "<case-dir>"


def default_root() -> Path:
    """``<repo>/corpora``, the repository being ``$KAFKA_CONFORMANCE_ROOT``, else the checkout
    holding this package. Looked up when called (importing this module reads no environment).

    Raises :class:`conformance.jvm.runtime.NoCheckout` in an installed package with no
    checkout: never a ``corpora/`` beside the package in ``site-packages``."""
    root = jvm.checkout_root()
    if root is None:
        raise jvm.NoCheckout(jvm.no_checkout_message("the default corpora/ directory"))
    return root / "corpora"


# --------------------------------------------------------------------------------------------
# small helpers


def file_kind(rel: str) -> str:
    """The manifest ``kind`` of a case-relative path."""
    if rel.startswith("wire/"):
        return "wire"
    return _KIND_BY_SUFFIX.get(Path(rel).suffix, "metadata")


def expected_path(case_dir: Path, rel: str, suffix: str) -> Path:
    """``expected/<rel><suffix>``."""
    return case_dir / "expected" / (rel + suffix)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _case_files(case_dir: Path) -> list[str]:
    """Case-relative posix paths of every regular file under ``log/`` and ``wire/``, sorted."""
    out = []
    for top in ("log", "wire"):
        base = case_dir / top
        if base.is_dir():
            out += [p.relative_to(case_dir).as_posix() for p in base.rglob("*") if p.is_file()]
    return sorted(out)


def dump_format(version: str | None) -> DumpFormat | None:
    """The DumpLogSegments format of Kafka ``version`` (``logdir.dump.formats``), or ``None``
    when the kit has none for it (not a version, or outside the releases it knows)."""
    if version is None:
        return None
    try:
        return format_of(version)
    except UnknownKafkaVersion:
        return None


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)


def _read_text(path: Path) -> str:
    with path.open("r", encoding="utf-8", errors="surrogateescape", newline="") as f:
        return f.read()


def _json_text(doc: Any) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def first_trace_line_only(stderr: str) -> str:
    """Cut a JVM stack trace after its ``Exception in thread "main" ...`` line."""
    lines = stderr.split("\n")
    for i, line in enumerate(lines):
        if line.startswith('Exception in thread "main" '):
            return "\n".join(lines[: i + 1]) + "\n"
    return stderr


def _tokenize(text: str, case_dir: str) -> str:
    """Replace the case directory's absolute path by :data:`CASE_DIR_TOKEN`."""
    return text.replace(case_dir.rstrip("/") + "/", CASE_DIR_TOKEN + "/")


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _oracle_kafka_version() -> str:
    try:
        pom = (jvm.project_dir("oracle") / "pom.xml").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    m = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", pom)
    return m.group(1).strip() if m else "unknown"


# --------------------------------------------------------------------------------------------
# manifest


def _ordered(manifest: dict[str, Any]) -> dict[str, Any]:
    out = {k: manifest[k] for k in MANIFEST_KEYS if k in manifest}
    out.update((k, v) for k, v in manifest.items() if k not in out)
    return out


def read_manifest(case_dir: Path) -> dict[str, Any]:
    doc = json.loads(read_bytes(case_dir / "manifest.json").decode("utf-8"))
    if not isinstance(doc, dict):
        raise ValueError("manifest.json is not a JSON object")
    return doc


def write_manifest(case_dir: Path, **fields: Any) -> dict[str, Any]:
    """Write ``case_dir/manifest.json``: the existing manifest (if any), updated with
    ``fields``, ``files`` recomputed from disk (sha256, size, kind of every file under ``log/``
    and ``wire/``), keys in the documented order. ``format``, ``broker_id`` (the parent
    directory's name) and ``scenario`` (the directory's name) get defaults. Returns it."""
    case_dir = Path(case_dir)
    path = case_dir / "manifest.json"
    manifest: dict[str, Any] = read_manifest(case_dir) if path.is_file() else {}
    manifest.update(fields)
    manifest.setdefault("format", CORPUS_FORMAT)
    manifest.setdefault("broker_id", case_dir.resolve().parent.name)
    manifest.setdefault("scenario", case_dir.resolve().name)
    manifest["files"] = [
        {
            "path": rel,
            "sha256": _sha256(case_dir / rel),
            "size": (case_dir / rel).stat().st_size,
            "kind": file_kind(rel),
        }
        for rel in _case_files(case_dir)
    ]
    manifest = _ordered(manifest)
    _write_text(path, _json_text(manifest))
    return manifest


# --------------------------------------------------------------------------------------------
# expectations (Java: the oracle and the broker version's DumpLogSegments)


def _oracle_decode(case_dir: Path, rels: Sequence[str], mode: str) -> list[dict[str, Any]]:
    """``oracle.decode_files`` with ``case_dir`` as working directory (relative paths, so file
    mode messages quoting the file name are the ones ``conformance.decode`` reproduces)."""
    from conformance.jvm import oracle

    if not rels:
        return []
    command = oracle.ensure_built()
    cmd = [*command, "decode", "--as", mode, "--", *rels]
    proc = subprocess.run(
        cmd, cwd=case_dir, stdin=subprocess.DEVNULL, capture_output=True, check=False
    )
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise oracle.OracleError(f"oracle exited with status {proc.returncode}\n{stderr[-4000:]}")
    lines = proc.stdout.decode("utf-8").splitlines()
    if len(lines) != len(rels):
        raise oracle.OracleError(f"oracle printed {len(lines)} documents for {len(rels)} inputs")
    docs = [json.loads(line) for line in lines]
    for rel, doc in zip(rels, docs):
        if doc.get("mode") != mode:
            raise oracle.OracleError(f"oracle answered mode {doc.get('mode')} for {rel}")
    return docs


def _split_dump(stdout: str, names: Sequence[str]) -> list[str] | None:
    """Split the stdout of one multi-file run at its ``Dumping <file>`` lines, or ``None``
    when that is ambiguous (a header missing or also occurring inside a payload)."""
    if len(set(names)) != len(names):
        return None
    starts = []
    for i, name in enumerate(names):
        header = f"Dumping {name}\n"
        if i == 0:
            if not stdout.startswith(header) or stdout.count(header) != 1:
                return None
            starts.append(0)
        else:
            marker = "\n" + header
            if stdout.count(header) != 1 or stdout.count(marker) != 1:
                return None
            at = stdout.index(marker) + 1
            if at <= starts[-1]:
                return None
            starts.append(at)
    ends = starts[1:] + [len(stdout)]
    return [stdout[a:b] for a, b in zip(starts, ends)]


def _run_dumps(
    version: str, case_dir: Path, rels: Sequence[str], *, deep: bool
) -> dict[str, tuple[str, str]]:
    """``{rel: (stdout, stderr)}`` of DumpLogSegments run on each file alone.

    One JVM for all files when the combined run is clean (exit 0, empty stderr) and its output
    splits unambiguously; otherwise one JVM per file (stderr is only reported at the end of
    a run, so it cannot be attributed to a file)."""
    from conformance.jvm import kafka_jars

    if not rels:
        return {}
    flags = {"deep_iteration": deep, "print_data_log": deep}
    combined = kafka_jars.dump_log_segments(version, list(rels), cwd=case_dir, **flags)
    if combined.returncode == 0 and not combined.stderr:
        parts = _split_dump(combined.stdout, rels)
        if parts is not None:
            return {rel: (part, "") for rel, part in zip(rels, parts)}
    if len(rels) == 1:
        return {rels[0]: (combined.stdout, combined.stderr)}

    def one(rel: str) -> tuple[str, tuple[str, str]]:
        r = kafka_jars.dump_log_segments(version, [rel], cwd=case_dir, **flags)
        return rel, (r.stdout, r.stderr)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(pool.map(one, rels))


def dump_provenance(broker_version: str) -> str:
    """``<DumpLogSegments class> from <jar>`` of that version, as ``kafka_jars`` runs it."""
    from conformance.jvm import kafka_jars

    tool, jar = kafka_jars.main_class_jar(broker_version, kafka_jars.DUMP_LOG_SEGMENTS_CLASSES)
    return f"{tool} from {jar}"


def write_expectations(case_dir: Path, broker_version: str) -> None:
    """Write ``case_dir/expected/`` from the independent tools (replacing what was there).

    * every ``.log`` / ``.checkpoint`` under ``log/``: ``<path>.decode.json`` (oracle, mode
      file) and ``<path>.deep.txt`` (DumpLogSegments ``--deep-iteration --print-data-log``);
    * every ``wire/*.bin``: ``<path>.decode.json`` (oracle, mode memory);
    * every file DumpLogSegments dumps (.log, .index, .timeindex, .txnindex, .snapshot,
      .checkpoint): ``<path>.dump.txt`` and, when non-empty, ``<path>.dump.err``
      (``.deep.err`` likewise).

    The tools run with ``case_dir`` as working directory and the case-relative path strings
    ``verify`` uses. Raises if a tool changed a file of the case. Updates ``manifest.json``
    (``files``, ``broker_version``, ``expectations``) when it exists.
    """
    case_dir = Path(case_dir).resolve()
    rels = _case_files(case_dir)
    before = {rel: _sha256(case_dir / rel) for rel in rels}
    records = [r for r in rels if r.startswith("log/") and r.endswith(RECORD_SUFFIXES)]
    wires = [r for r in rels if r.startswith("wire/") and r.endswith(".bin")]
    dumpable = [r for r in rels if r.startswith("log/") and r.endswith(DUMP_SUFFIXES)]

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        f_file = pool.submit(_oracle_decode, case_dir, records, "file")
        f_memory = pool.submit(_oracle_decode, case_dir, wires, "memory")
        f_dump = pool.submit(_run_dumps, broker_version, case_dir, dumpable, deep=False)
        f_deep = pool.submit(_run_dumps, broker_version, case_dir, records, deep=True)
        decoded = dict(zip(records, f_file.result())) | dict(zip(wires, f_memory.result()))
        dumps, deeps = f_dump.result(), f_deep.result()

    after = {rel: _sha256(case_dir / rel) for rel in _case_files(case_dir)}
    if after != before:
        changed = sorted(set(after.items()) ^ set(before.items()))
        raise RuntimeError(f"a tool changed the case's files: {sorted({c[0] for c in changed})}")

    expected = case_dir / "expected"
    if expected.exists():
        import shutil

        shutil.rmtree(expected)
    for rel, doc in decoded.items():
        _write_text(expected_path(case_dir, rel, _DECODE), _json_text(doc))
    for results, out_suffix, err_suffix in ((dumps, _DUMP, _DUMP_ERR), (deeps, _DEEP, _DEEP_ERR)):
        for rel, (stdout, stderr) in results.items():
            _write_text(expected_path(case_dir, rel, out_suffix), stdout)
            if stderr:
                stderr = _tokenize(stderr, str(case_dir))
                _write_text(expected_path(case_dir, rel, err_suffix), stderr)

    if (case_dir / "manifest.json").is_file():
        write_manifest(
            case_dir,
            broker_version=broker_version,
            expectations={
                "decode": f"oracle kafka-clients {_oracle_kafka_version()} (oracle/)",
                "dump": dump_provenance(broker_version),
            },
        )


# --------------------------------------------------------------------------------------------
# verification (Python only)

_MAX_DETAILS = 5
_MAX_LINE = 160


def find_cases(root: Path, only: str | Sequence[str] | None = None) -> list[Path]:
    """Case directories under ``root``: ``root`` itself when it holds a manifest.json, else its
    ``<broker-id>/<scenario>/`` (and, for a broker directory, ``<scenario>/``) directories with a
    manifest.json; ``corpora/crafted`` and ``corpora/samples`` are not broker captures.

    ``only``: glob(s) on ``<broker-id>/<scenario>``; a glob without ``/`` names broker ids."""
    root = Path(root)
    if (root / "manifest.json").is_file() and root.name not in NOT_BROKERS:
        found = [root]
    else:
        found = [
            m.parent
            for m in sorted(root.glob("*/manifest.json")) + sorted(root.glob("*/*/manifest.json"))
            if m.relative_to(root).parts[0] not in NOT_BROKERS
        ]
    return _selected(found, only)


def _selected(found: list[Path], only: str | Sequence[str] | None) -> list[Path]:
    """``found`` case directories whose id matches ``only`` (a broker name or id globs)."""
    if only:
        patterns = [only] if isinstance(only, str) else list(only)
        patterns = [p if "/" in p else p + "/*" for p in patterns]
        found = [d for d in found if any(fnmatch.fnmatchcase(case_id(d), p) for p in patterns)]
    return sorted(set(found), key=case_id)


def _looks_like_case(directory: Path) -> bool:
    return (directory / "log").is_dir() or (directory / "wire").is_dir()


def find_cases_without_manifest(root: Path, only: str | Sequence[str] | None = None) -> list[Path]:
    """Directories where :func:`find_cases` looks that hold ``log/`` or ``wire/`` (so were meant
    as cases) but no ``manifest.json``: ``verify`` reports them instead of passing them over."""
    root = Path(root)
    if _looks_like_case(root):
        found = [] if (root / "manifest.json").is_file() else [root]
    else:
        found = [
            d.parent
            for d in sorted(root.glob("*/log"))
            + sorted(root.glob("*/wire"))
            + sorted(root.glob("*/*/log"))
            + sorted(root.glob("*/*/wire"))
            if d.is_dir()
            and not (d.parent / "manifest.json").is_file()
            and d.relative_to(root).parts[0] not in NOT_BROKERS
            and not _inside_a_case(d.parent, root)
        ]
    return _selected(found, only)


def _inside_a_case(directory: Path, root: Path) -> bool:
    """Whether a directory between ``root`` and ``directory`` is a case (its ``expected/``
    mirrors ``log/``: not a case of its own)."""
    return any((d / "manifest.json").is_file() for d in directory.parents if root in d.parents)


def case_id(case_dir: Path) -> str:
    """``<broker-id>/<scenario>`` of a case directory."""
    d = case_dir.resolve()
    return f"{d.parent.name}/{d.name}"


def _text_diff(expected: str, actual: str) -> list[str]:
    """The first differing line (1-based) of two texts, both sides shown."""
    if expected == actual:
        return []
    e, a = expected.split("\n"), actual.split("\n")
    for i, (x, y) in enumerate(zip(e, a)):  # noqa: B007 - i is used after the loop
        if x != y:
            break
    else:
        i = min(len(e), len(a))
    out = [f"line {i + 1} differs ({len(e)} vs {len(a)} lines)"]
    for label, lines in (("expected", e), ("actual  ", a)):
        text = lines[i] if i < len(lines) else "<end of text>"
        if len(text) > _MAX_LINE:
            # show where they differ when the line is long
            col = next(
                (
                    j
                    for j, (p, q) in enumerate(
                        zip(e[i] if i < len(e) else "", a[i] if i < len(a) else "")
                    )
                    if p != q
                ),
                0,
            )
            start = max(0, col - 40)
            text = ("..." if start else "") + text[start : start + _MAX_LINE] + "..."
        out.append(f"{label}: {text!r}")
    return out


def _check_manifest(case_dir: Path, manifest: dict[str, Any], checks: list[Check]) -> None:
    problems = []
    if manifest.get("format") != CORPUS_FORMAT:
        problems.append(f"format {manifest.get('format')!r} != {CORPUS_FORMAT!r}")
    if not isinstance(manifest.get("files"), list):
        problems.append("no files list")
    if not isinstance(manifest.get("broker_version"), str):
        problems.append("no broker_version")
    for key, expected in (
        ("broker_id", case_dir.resolve().parent.name),
        ("scenario", case_dir.resolve().name),
    ):
        if key in manifest and manifest[key] != expected:
            problems.append(f"{key} {manifest[key]!r} != directory name {expected!r}")
    checks.append(Check("manifest", "manifest.json", ERROR if problems else OK, problems))


def _listed_path(case_dir: Path, index: int, entry: Any) -> tuple[str | None, str | None]:
    """The case-relative path of manifest ``files[index]``, or ``(None, problem)``."""
    if not isinstance(entry, dict):
        return None, f"files[{index}] is not an object: {entry!r:.80}"
    rel = entry.get("path")
    if not isinstance(rel, str) or not rel:
        return None, f"files[{index}] has no path"
    parts = Path(rel).parts
    if Path(rel).is_absolute() or ".." in parts:
        return rel, "path outside the case directory"
    return rel, None


def _check_files(
    case_dir: Path, manifest: dict[str, Any], checks: list[Check]
) -> tuple[list[str], set[str]]:
    """The sha256 checks; returns every path (listed or on disk) and those whose content must
    not be read (unreadable, not a regular file, or a size that already differs from the
    manifest: a 3 GB file listed at 248 bytes is not read at all)."""
    listed: list[str] = []
    not_read: set[str] = set()
    files = manifest.get("files")
    for n, entry in enumerate(files if isinstance(files, list) else []):
        t0 = time.perf_counter()
        rel, problem = _listed_path(case_dir, n, entry)
        if problem is not None:
            checks.append(
                Check("sha256", rel or f"files[{n}]", ERROR, [f"manifest.json: {problem}"])
            )
            if rel is not None:
                not_read.add(rel)
            continue
        assert rel is not None
        listed.append(rel)
        path = case_dir / rel
        try:
            size = check_regular_file(path).st_size
        except FileNotFoundError:
            checks.append(Check("sha256", rel, ERROR, ["file listed in manifest.json is missing"]))
            continue
        except OSError as exc:
            checks.append(Check("sha256", rel, ERROR, [f"cannot read: {exc.strerror or exc}"]))
            not_read.add(rel)
            continue
        if size != entry.get("size"):
            detail = (
                f"size {size} (on disk) != {entry.get('size')} (manifest); content not "
                "read (sha256, decode and dump not run)"
            )
            checks.append(Check("sha256", rel, MISMATCH, [detail], time.perf_counter() - t0))
            not_read.add(rel)
            continue
        try:
            digest = _sha256(path)
        except OSError as exc:
            checks.append(Check("sha256", rel, ERROR, [f"cannot read: {exc.strerror or exc}"]))
            not_read.add(rel)
            continue
        details = []
        if digest != entry.get("sha256"):
            details.append(f"sha256 {digest} (on disk) != {entry.get('sha256')} (manifest)")
        checks.append(
            Check("sha256", rel, MISMATCH if details else OK, details, time.perf_counter() - t0)
        )
    for rel in _case_files(case_dir):
        if rel not in listed:
            checks.append(Check("sha256", rel, ERROR, ["file not listed in manifest.json"]))
    return sorted(set(listed) | set(_case_files(case_dir))), not_read


def _check_decode(case_dir: Path, rel: str, mode: str) -> Check:
    from conformance import decode
    from conformance.stream.compare import diff

    t0 = time.perf_counter()
    exp_path = expected_path(case_dir, rel, _DECODE)
    if not exp_path.is_file():
        return Check(
            "decode", rel, ERROR, [f"missing expectation {exp_path.relative_to(case_dir)}"]
        )
    try:
        expected = json.loads(exp_path.read_text(encoding="utf-8"))
        source = FileSource(case_dir / rel)  # read batch by batch, never whole
    except (OSError, ValueError) as exc:
        return Check("decode", rel, ERROR, [f"{type(exc).__name__}: {exc}"])
    try:
        with source:
            actual = decode(source, mode=mode, filename=rel).to_dict()  # type: ignore[arg-type]
    except Exception as exc:  # the decoder must never raise: report it
        return Check(
            "decode",
            rel,
            ERROR,
            [f"decoder raised {type(exc).__name__}: {exc}"],
            time.perf_counter() - t0,
        )
    diffs = diff(expected, actual)
    details = [d if len(d) <= 300 else d[:300] + "..." for d in diffs[:_MAX_DETAILS]]
    if len(diffs) > _MAX_DETAILS:
        details.append(f"... {len(diffs) - _MAX_DETAILS} more difference(s)")
    return Check("decode", rel, MISMATCH if diffs else OK, details, time.perf_counter() - t0)


def _check_dump(case_dir: Path, rel: str, *, deep: bool, fmt: DumpFormat) -> Check:
    kind = "deep" if deep else "dump"
    out_suffix, err_suffix = (_DEEP, _DEEP_ERR) if deep else (_DUMP, _DUMP_ERR)
    t0 = time.perf_counter()
    exp_out = expected_path(case_dir, rel, out_suffix)
    if not exp_out.is_file():
        return Check(kind, rel, ERROR, [f"missing expectation {exp_out.relative_to(case_dir)}"])
    exp_err_path = expected_path(case_dir, rel, err_suffix)
    try:
        expected_out = _read_text(exp_out)
        expected_err = _read_text(exp_err_path) if exp_err_path.is_file() else ""
    except (OSError, ValueError) as exc:
        return Check(kind, rel, ERROR, [f"{type(exc).__name__}: {exc}"])
    out, err = io.StringIO(), io.StringIO()
    try:
        with _cwd(case_dir):
            here = os.getcwd()
            dump([rel], deep_iteration=deep, print_data_log=deep, fmt=fmt, out=out, err=err)
    except Exception as exc:  # must never raise: report it
        return Check(
            kind, rel, ERROR, [f"dump raised {type(exc).__name__}: {exc}"], time.perf_counter() - t0
        )
    details = []
    d_out = _text_diff(expected_out, out.getvalue())
    if d_out:
        details += [f"stdout ({exp_out.name}): " + d_out[0], *d_out[1:]]
    d_err = _text_diff(first_trace_line_only(expected_err), _tokenize(err.getvalue(), here))
    if d_err:
        details += [f"stderr ({exp_err_path.name}): " + d_err[0], *d_err[1:]]
    return Check(kind, rel, MISMATCH if details else OK, details, time.perf_counter() - t0)


def verify_case(case_dir: Path) -> VerifiedCase:
    """Every check of one case directory."""
    case_dir = Path(case_dir)
    t0 = time.perf_counter()
    result = VerifiedCase(case_id(case_dir), case_dir)
    checks = result.checks
    try:
        manifest = read_manifest(case_dir)
    except (OSError, ValueError) as exc:
        checks.append(Check("manifest", "manifest.json", ERROR, [f"unreadable: {exc}"]))
        result.seconds = time.perf_counter() - t0
        return result
    _check_manifest(case_dir, manifest, checks)
    version = manifest.get("broker_version")
    result.broker_version = version if isinstance(version, str) else None
    writer = manifest.get("writer")
    if isinstance(writer, dict) and isinstance(writer.get("name"), str):
        result.written_by = writer["name"]
    rels, not_read = _check_files(case_dir, manifest, checks)
    result.files = len(rels)
    present = [r for r in rels if r not in not_read and (case_dir / r).is_file()]

    for rel in present:
        if rel.startswith("log/") and rel.endswith(RECORD_SUFFIXES):
            checks.append(_check_decode(case_dir, rel, "file"))
        elif rel.startswith("wire/") and rel.endswith(".bin"):
            checks.append(_check_decode(case_dir, rel, "memory"))

    fmt = dump_format(result.broker_version)
    if fmt is None:
        result.dump_note = f"skipped (no DumpLogSegments format for {result.broker_version})"
    for rel in present:
        if not (rel.startswith("log/") and rel.endswith(DUMP_SUFFIXES)):
            continue
        kinds = [False, True] if rel.endswith(RECORD_SUFFIXES) else [False]
        for deep in kinds:
            kind = "deep" if deep else "dump"
            if fmt is not None:
                checks.append(_check_dump(case_dir, rel, deep=deep, fmt=fmt))
            else:
                reason = f"no DumpLogSegments format for {result.broker_version}"
                checks.append(Check(kind, rel, SKIPPED, [reason]))

    # expectations whose file does not exist (stale expected/ tree)
    expected_dir = case_dir / "expected"
    if expected_dir.is_dir():
        suffixes = (_DECODE, _DUMP, _DUMP_ERR, _DEEP, _DEEP_ERR)
        known = set(rels)
        for p in sorted(expected_dir.rglob("*")):
            if not p.is_file():
                continue
            name = p.relative_to(expected_dir).as_posix()
            source = next((name[: -len(s)] for s in suffixes if name.endswith(s)), None)
            if source is None or source not in known:
                checks.append(
                    Check(
                        "manifest",
                        f"expected/{name}",
                        ERROR,
                        ["expectation without a matching file of the case"],
                    )
                )
    result.seconds = time.perf_counter() - t0
    return result


def verify_corpus(
    root: Path | None = None, *, only: str | Sequence[str] | None = None, jobs: int = 1
) -> CorpusReport:
    """Verify every ``<broker-id>/<scenario>/`` case under ``root`` (see :func:`find_cases`;
    default :func:`default_root`), and for a ``corpora/`` directory the cases of its
    :data:`WRITTEN` directory too.

    ``jobs`` > 1 verifies cases in that many processes (0: one per CPU); the report is the
    same, in the same order."""
    t0 = time.perf_counter()
    if root is None:
        root = default_root()
    report = CorpusReport(Path(root))
    roots = [Path(root)]
    if (Path(root) / WRITTEN).is_dir() and not (Path(root) / "manifest.json").is_file():
        roots.append(Path(root) / WRITTEN)  # corpora/: its written/ cases too
    cases = [c for r in roots for c in find_cases(r, only)]
    for missing in (m for r in roots for m in find_cases_without_manifest(r, only)):
        case = VerifiedCase(case_id(missing), missing)
        detail = (
            "missing: a case directory (it has log/ or wire/) needs a manifest.json "
            "(docs/corpora.md); nothing of it was verified"
        )
        case.checks.append(Check("manifest", "manifest.json", ERROR, [detail]))
        report.cases.append(case)
    if jobs <= 0:
        jobs = os.cpu_count() or 1
    jobs = min(jobs, len(cases))
    if jobs > 1:
        # processes, not threads: the dump runs with the case directory as working directory
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
            report.cases.extend(pool.map(verify_case, cases))
    else:
        report.cases.extend(verify_case(c) for c in cases)
    report.cases.sort(key=lambda c: c.case_id)
    report.seconds = time.perf_counter() - t0
    return report
