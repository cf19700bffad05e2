"""Java oracle: Kafka's own classes (kafka-clients) decoding record-batch bytes.

The oracle lives in ``oracle/`` (Maven project): the checkout's, else the copy the wheel
carries (``runtime.project_dir``). This module builds it on demand and runs it:

* :func:`ensure_built` builds the jar with Maven (local repository ``<cache>/m2``) and
  keeps the result under ``<cache>/oracle/<sha256 of pom.xml + java sources>/``, so a
  rebuild only happens when the sources change; it returns the ``java`` command prefix.
  ``<cache>`` is ``runtime.cache_root()``: ``<checkout>/.cache``, else the user's cache
  directory. A checkout's project is built in place (``oracle/target/``); the wheel's copy is
  never written to: its sources are copied into a scratch directory under ``<cache>/oracle/``
  and built there.
* :func:`decode_files` decodes files in one JVM run (``decode`` sub-command).
* :class:`OracleServer` keeps one JVM running (``serve`` sub-command) for differential fuzzing.
* :func:`write_batches` builds batches with Kafka's own ``MemoryRecordsBuilder`` (``encode``
  sub-command; ``OracleServer.write_batches`` does the same in a running ``serve`` JVM).

Every document follows docs/canonical-json.md (contract v1).

Command line::

    python -m conformance.jvm.oracle build
    python -m conformance.jvm.oracle capabilities   (the built-in `java` adapter, both sides)
    python -m conformance.jvm.oracle decode [--as memory|file] FILE...
    python -m conformance.jvm.oracle serve
    python -m conformance.jvm.oracle consume --bootstrap HOST:PORT --topic T --partition P --from 0
    python -m conformance.jvm.oracle encode     (batch specs on stdin, one JSON object per line)

Encode specs (one dict per batch; every member optional, see Oracle's ``Encoder.java``)::

    {"magic": 2, "compression": "none|gzip|snappy|lz4|zstd",
     "timestampType": "CreateTime|LogAppendTime", "baseOffset": "0", "logAppendTime": "-1",
     "producerId": "-1", "producerEpoch": -1, "baseSequence": -1, "isTransactional": False,
     "isControl": False, "partitionLeaderEpoch": -1, "deleteHorizonMs": "-1",
     "records": [{"offset": "0", "timestamp": "-1", "key": <base64|None>, "value": <base64|None>,
                  "headers": [{"key": "h", "value": <base64|None>}]}],
     "endTxnMarker": {"commit": True, "coordinatorEpoch": 0, "timestamp": "0"}}

64-bit integers may be strings or ints; ``bytes`` values are base64-encoded automatically.
The result for each spec is the bytes Kafka built, or, when Kafka's builder throws, the string
``"<java class>: <message>"``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from conformance.host.lifetime import Started
from conformance.host.sessions import end_input
from conformance.jvm import runtime as jvm
from conformance.stream.splitter import MODES

__all__ = [
    "CONSUME_FORMAT",
    "capabilities",
    "consume",
    "consume_argv",
    "MODES",
    "JVM_OPTIONS",
    "OracleError",
    "OracleUnavailable",
    "OracleServer",
    "decode_files",
    "write_batches",
    "ensure_built",
    "main",
    "source_hash",
]

_MODE_BYTE = {"memory": 0, "file": 1}
_ENCODE_BYTE = 2
_CONSUME_BYTE = 3

#: JVM options the oracle needs: JVM-raised NullPointerExceptions must carry a null message
#: (the contract's "null key" case); JDK 15+ would otherwise compute a "helpful" message.
JVM_OPTIONS: tuple[str, ...] = ("-XX:-ShowCodeDetailsInExceptionMessages",)
SERVE_HEAP = "-Xmx1g"

_JAR_NAME = "oracle.jar"
# keep command lines well below ARG_MAX (and Windows-like limits, should it ever matter)
_MAX_ARGS_CHARS = 100_000
_TAIL_LINES = 40


class OracleError(RuntimeError):
    """The oracle ran but misbehaved (crash, bad exit status, malformed output)."""


class OracleUnavailable(OracleError):
    """The oracle cannot be built or started (no java, no mvn, build failure, ...)."""


def _oracle_dir(repo_root: Path | None) -> Path:
    """The checkout's ``oracle/`` (``repo_root``, else the one there is), else the wheel's."""
    try:
        return jvm.project_dir("oracle", repo_root)
    except jvm.NoCheckout as e:  # a package built without its oracle/ project
        raise OracleUnavailable(str(e)) from None


def _source_files(oracle_dir: Path) -> list[Path]:
    sources = sorted((oracle_dir / "src").rglob("*.java")) if (oracle_dir / "src").is_dir() else []
    return [oracle_dir / "pom.xml", *sources]


def source_hash(repo_root: Path | None = None) -> str:
    """sha256 over pom.xml and every Java source (relative path and content)."""
    oracle_dir = _oracle_dir(repo_root)
    digest = hashlib.sha256()
    for path in _source_files(oracle_dir):
        rel = path.relative_to(oracle_dir).as_posix().encode()
        data = path.read_bytes()
        digest.update(struct.pack(">I", len(rel)) + rel)
        digest.update(struct.pack(">Q", len(data)) + data)
    return digest.hexdigest()


def _java_executable() -> str | None:
    try:
        return jvm.java_executable()
    except jvm.JvmToolMissing:
        return None


def ensure_built(repo_root: Path | None = None) -> list[str]:
    """Build the oracle if needed and return the command prefix that runs it.

    The result is e.g. ``["/usr/bin/java", "-XX:-ShowCodeDetailsInExceptionMessages", "-jar",
    "<cache>/oracle/<hash>/oracle.jar"]``; append ``decode ...`` or ``serve``.

    Raises :class:`OracleUnavailable` when java or mvn is missing or the build fails.
    """
    oracle_dir = _oracle_dir(repo_root)
    if not (oracle_dir / "pom.xml").is_file():
        raise OracleUnavailable(
            f"oracle sources not found: {oracle_dir / 'pom.xml'} does not exist"
        )

    java = _java_executable()
    if java is None:
        raise OracleUnavailable(
            "no java: neither $JAVA_HOME/bin/java nor java on PATH (JDK 17+ needed)"
        )

    cache = jvm.cache_root(repo_root)
    out_dir = cache / "oracle" / source_hash(repo_root)
    jar = out_dir / _JAR_NAME
    command = [java, *JVM_OPTIONS, "-jar", str(jar)]
    if jar.is_file():
        return command

    with jvm.locked(out_dir.parent / ".build.lock"):
        if not jar.is_file():  # else built by a concurrent process while we waited
            if jvm.is_packaged(oracle_dir):  # read only: build a copy of its sources
                _build_copy(cache, oracle_dir, out_dir)
            else:
                _build(cache, oracle_dir, out_dir)
    return command


def _build_copy(cache: Path, oracle_dir: Path, out_dir: Path) -> None:
    """:func:`_build` on a copy of ``oracle_dir``'s sources in a scratch directory beside
    ``out_dir``, removed afterwards."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=out_dir.parent))
    try:
        work = scratch / "oracle"
        for path in _source_files(oracle_dir):
            dest = work / path.relative_to(oracle_dir)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        _build(cache, work, out_dir)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _build(cache: Path, oracle_dir: Path, out_dir: Path) -> None:
    args = ["-q", "-f", str(oracle_dir / "pom.xml"), "clean", "package"]
    cmd = ["mvn", *args]
    try:
        proc = jvm.run_maven(cache, args, cwd=oracle_dir)
    except jvm.JvmToolMissing as exc:
        raise OracleUnavailable(f"{exc} (needed once to build the oracle)") from exc
    except OSError as exc:
        raise OracleUnavailable(f"build failed: cannot run mvn: {exc}") from exc
    target = oracle_dir / "target"
    built_jar = target / _JAR_NAME
    if proc.returncode != 0 or not built_jar.is_file():
        raise OracleUnavailable(
            f"build failed: {shlex.join(cmd)} exited with status {proc.returncode}\n"
            f"--- mvn output (tail) ---\n{jvm.tail(proc.stdout, _TAIL_LINES)}"
        )
    # copy jar + lib/ into a fresh directory, then rename it into place atomically
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=out_dir.parent))
    try:
        os.chmod(staging, 0o755)
        shutil.copy2(built_jar, staging / _JAR_NAME)
        shutil.copytree(target / "lib", staging / "lib")
        os.replace(staging, out_dir)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not (out_dir / _JAR_NAME).is_file():
            raise


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")


def _chunks(paths: Sequence[str]) -> Iterator[list[str]]:
    chunk: list[str] = []
    size = 0
    for p in paths:
        if chunk and size + len(p) + 1 > _MAX_ARGS_CHARS:
            yield chunk
            chunk, size = [], 0
        chunk.append(p)
        size += len(p) + 1
    if chunk:
        yield chunk


def decode_files(paths: Sequence[Path], mode: str = "memory") -> list[dict[str, Any]]:
    """Decode every file with the oracle (one JVM per command-line-sized chunk), in order."""
    _check_mode(mode)
    command = ensure_built()
    names = [os.fspath(p) for p in paths]
    documents: list[dict[str, Any]] = []
    for chunk in _chunks(names):
        # "--" so that a file name starting with "-" is never taken for an option
        cmd = [*command, "decode", "--as", mode, "--", *chunk]
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, check=False)
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0:
            raise OracleError(
                f"oracle exited with status {proc.returncode}\n{jvm.tail(stderr, _TAIL_LINES)}"
            )
        lines = proc.stdout.decode("utf-8").splitlines()
        if len(lines) != len(chunk):
            raise OracleError(
                f"oracle printed {len(lines)} documents for {len(chunk)} inputs\n"
                f"{jvm.tail(stderr, _TAIL_LINES)}"
            )
        try:
            documents.extend(json.loads(line) for line in lines)
        except json.JSONDecodeError as exc:
            raise OracleError(f"oracle printed malformed JSON: {exc}") from exc
    return documents


#: the document of the oracle's ``consume`` command (Kafka's ``KafkaConsumer``)
CONSUME_FORMAT = "kafka-conformance/consume/1"


def consume_argv(
    bootstrap: str,
    topic: str,
    partition: int,
    *,
    start: str = "earliest",
    isolation: str = "read_uncommitted",
    timeout_ms: int = 20_000,
    group: str | None = None,
) -> list[str]:
    """The arguments of the adapter protocol's ``consume`` command (docs/adapter-protocol.md),
    after the command itself (``--group``: optional, a member of that group)."""
    return [
        "consume",
        "--bootstrap",
        bootstrap,
        "--topic",
        topic,
        "--partition",
        str(partition),
        "--from",
        start,
        "--isolation",
        isolation,
        "--timeout-ms",
        str(timeout_ms),
        *(["--group", group] if group is not None else []),
    ]


def consume(
    bootstrap: str,
    topic: str,
    partition: int,
    *,
    start: str = "earliest",
    isolation: str = "read_uncommitted",
    timeout_ms: int = 20_000,
    group: str | None = None,
) -> dict[str, Any]:
    """Kafka's ``KafkaConsumer`` (``check.crcs=true``, its default fetch sizes, no group unless
    ``group``) reading one partition from ``start`` until its position reaches the end offset
    of ``isolation``, an exception, or ``timeout_ms``: the ``consume`` document it prints."""
    argv = consume_argv(
        bootstrap,
        topic,
        partition,
        start=start,
        isolation=isolation,
        timeout_ms=timeout_ms,
        group=group,
    )
    proc = subprocess.run(
        [*ensure_built(), *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout_ms / 1000 + 60,
        check=False,
    )
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise OracleError(
            f"oracle consume exited with status {proc.returncode}\n{jvm.tail(stderr, _TAIL_LINES)}"
        )
    return _consume_document(proc.stdout)


def _consume_document(body: bytes) -> dict[str, Any]:
    """The ``consume`` document the oracle printed (``OracleError`` if it is none)."""
    try:
        doc: dict[str, Any] = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OracleError(f"oracle consume printed malformed JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != CONSUME_FORMAT:
        what = doc.get("message") if isinstance(doc, dict) else doc
        raise OracleError(f"oracle consume printed another document: {what!r}")
    return doc


#: the consumer side of the built-in ``java`` adapter: Kafka's ``KafkaConsumer`` itself (the
#: oracle's ``consume``), whose class names and messages are Kafka's by construction
_CONSUME_CAPABILITIES = {
    "checks_crc": True,
    "error_classes": "exact",
    "notes": "Kafka's own KafkaConsumer (check.crcs=true, its default fetch sizes, no group "
    "unless --group), the reference of the consumer side",
}


def capabilities(prefix: Sequence[str] | None = None) -> dict[str, Any]:
    """The capabilities document of the built-in ``java`` adapter (docs/adapter-protocol.md):
    the JVM's (Kafka's classes as a decoder) with a ``consume`` object for the consumer side,
    which the same command serves (``prefix``: the ``java`` command, default
    :func:`ensure_built`'s)."""
    proc = subprocess.run(
        [*(prefix or ensure_built()), "capabilities"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace")
        raise OracleError(
            f"oracle capabilities exited with status {proc.returncode}\n"
            f"{jvm.tail(stderr, _TAIL_LINES)}"
        )
    try:
        doc: dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise OracleError(f"oracle capabilities printed malformed JSON: {exc}") from exc
    doc["consume"] = {
        "name": doc.get("name", "java"),
        "version": doc.get("version", ""),
        **_CONSUME_CAPABILITIES,
    }
    return doc


def _spec_json(spec: dict[str, Any]) -> str:
    def default(o: object) -> object:
        if isinstance(o, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(o)).decode("ascii")
        raise TypeError(f"cannot put {type(o).__name__} in an encode spec")

    # ensure_ascii: one physical line whatever the strings hold (the protocol is line-based)
    return json.dumps(spec, separators=(",", ":"), ensure_ascii=True, default=default)


def _read_written_batches(lines: Sequence[str], count: int) -> list[bytes | str]:
    if len(lines) != count:
        raise OracleError(f"oracle encode printed {len(lines)} lines for {count} specs")
    out: list[bytes | str] = []
    for i, line in enumerate(lines):
        if line.startswith("{"):
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as exc:
                raise OracleError(f"oracle encode printed malformed JSON: {exc}") from exc
            if "specError" in doc:
                raise ValueError(f"encode spec #{i} rejected by the oracle: {doc['specError']}")
            out.append(str(doc["error"]))
        else:
            try:
                out.append(bytes.fromhex(line))
            except ValueError as exc:
                raise OracleError(
                    f"oracle encode printed neither hex nor JSON: {line[:80]!r}"
                ) from exc
    return out


def write_batches(
    specs: Sequence[dict[str, Any]], *, server: OracleServer | None = None
) -> list[bytes | str]:
    """Build each spec with Kafka's ``MemoryRecordsBuilder``: its bytes, or Kafka's error string.

    The error string is ``"<java class>: <message>"`` (e.g. ``"java.lang.IllegalArgumentException:
    Magic v0 does not support record headers"``). Runs one JVM (``encode`` sub-command), or uses
    ``server`` when given. A malformed spec raises :class:`ValueError`.
    """
    if server is not None:
        return server.write_batches(specs)
    if not specs:
        return []
    command = ensure_built()
    payload = "".join(_spec_json(s) + "\n" for s in specs).encode("ascii")
    proc = subprocess.run([*command, "encode"], input=payload, capture_output=True, check=False)
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise OracleError(
            f"oracle encode exited with status {proc.returncode}\n{jvm.tail(stderr, _TAIL_LINES)}"
        )
    return _read_written_batches(proc.stdout.decode("utf-8").splitlines(), len(specs))


class OracleServer(Started):
    """One long-lived oracle JVM (``serve`` mode)::

    with OracleServer() as oracle:
        doc = oracle.decode(data, mode="memory")
        [data_or_error] = oracle.write_batches([{"magic": 2, "records": [...]}])
    """

    def __init__(self, repo_root: Path | None = None) -> None:
        self._repo_root = repo_root
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    def start(self) -> None:
        if self._proc is not None:
            return
        command = ensure_built(self._repo_root)
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                # one JVM per fuzzing worker: a bounded heap keeps several of them inside
                # the machine's memory (inputs whose verdict depends on the heap are not
                # sent by the differential fuzzer: allocations above 256 MiB)
                [command[0], SERVE_HEAP, *command[1:], "serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
            )
        except OSError as exc:
            self._stderr.close()
            self._stderr = None
            raise OracleUnavailable(f"cannot start the oracle: {exc}") from exc

    def _stderr_tail(self) -> str:
        return jvm.file_tail(self._stderr, _TAIL_LINES)

    def _read_exactly(self, n: int) -> bytes:
        assert self._proc is not None and self._proc.stdout is not None
        buf = bytearray()
        while len(buf) < n:
            piece = self._proc.stdout.read(n - len(buf))
            if not piece:
                break
            buf += piece
        return bytes(buf)

    def decode(self, data: bytes, mode: str = "memory") -> dict[str, Any]:
        """Decode one input; returns the canonical JSON document as a dict."""
        self.send_decode(data, mode)
        return self.receive_decode()

    def send_decode(self, data: bytes, mode: str = "memory") -> None:
        """First half of :meth:`decode`: the JVM works while the caller does something else
        (differential fuzzing decodes with the kit meanwhile). One request in flight."""
        _check_mode(mode)
        self._send(_MODE_BYTE[mode], data)

    def receive_decode(self) -> dict[str, Any]:
        body = self._receive()
        try:
            document: dict[str, Any] = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise OracleError(f"oracle sent malformed JSON: {exc}") from exc
        return document

    def write_batches(self, specs: Sequence[dict[str, Any]]) -> list[bytes | str]:
        """Like :func:`write_batches`, in this JVM (one request for all ``specs``)."""
        if not specs:
            return []
        payload = "\n".join(_spec_json(s) for s in specs).encode("ascii")
        body = self._request(_ENCODE_BYTE, payload)
        return _read_written_batches(body.decode("utf-8").split("\n"), len(specs))

    def consume(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        *,
        isolation: str = "read_uncommitted",
        timeout_ms: int = 20_000,
    ) -> dict[str, Any]:
        """Like :func:`consume` (from the earliest offset, no group), in this JVM: no start-up
        per call. A JVM that has not answered 30 s after ``timeout_ms`` is stopped
        (``OracleError``)."""
        argv = consume_argv(bootstrap, topic, partition, isolation=isolation, timeout_ms=timeout_ms)
        self._send(_CONSUME_BYTE, "\n".join(argv[1:]).encode("utf-8"))
        proc = self._proc
        assert proc is not None
        watchdog = threading.Timer(timeout_ms / 1000 + 30, proc.kill)
        watchdog.start()
        try:
            body = self._receive()
        finally:
            watchdog.cancel()
        return _consume_document(body)

    def _request(self, mode_byte: int, data: bytes) -> bytes:
        self._send(mode_byte, data)
        return self._receive()

    def _send(self, mode_byte: int, data: bytes) -> None:
        if len(data) > 0x7FFFFFFF:
            raise ValueError("input larger than 2 GiB - 1")
        self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(struct.pack(">BI", mode_byte, len(data)))
            proc.stdin.write(data)
            proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise self._died(f"cannot send the request: {exc}") from exc

    def _receive(self) -> bytes:
        if self._proc is None:
            raise OracleError("oracle serve: no request in flight")
        header = self._read_exactly(4)
        if len(header) != 4:
            raise self._died("no response")
        (length,) = struct.unpack(">I", header)
        body = self._read_exactly(length)
        if len(body) != length:
            raise self._died("truncated response")
        return body

    def _died(self, what: str) -> OracleError:
        proc = self._proc
        status = proc.poll() if proc is not None else None
        if proc is not None and status is None:
            try:
                status = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        err = OracleError(f"oracle serve: {what} (exit status {status})\n{self._stderr_tail()}")
        self.close()
        return err

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            end_input(proc, timeout=30)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    usage = (
        "usage: python -m conformance.jvm.oracle build\n"
        "       python -m conformance.jvm.oracle decode [--as memory|file] [FILE...]"
        "  (no FILE: stdin)\n"
        "       python -m conformance.jvm.oracle capabilities   (the built-in `java` adapter)\n"
        "       python -m conformance.jvm.oracle serve\n"
        "       python -m conformance.jvm.oracle consume --bootstrap HOST:PORT --topic T "
        "--partition P --from OFFSET|earliest [--isolation L] [--timeout-ms N]\n"
        "       python -m conformance.jvm.oracle encode"
        "   (JSON batch specs on stdin, one per line)\n"
    )
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(usage)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    try:
        prefix = ensure_built()
    except OracleUnavailable as exc:
        print(f"oracle unavailable: {exc}", file=sys.stderr)
        return 1
    if command == "build":
        if rest:
            sys.stderr.write(usage)
            return 2
        print(shlex.join(prefix))
        return 0
    if command == "encode" and rest:
        sys.stderr.write(usage)
        return 2
    if command == "capabilities" and not rest:
        try:
            doc = capabilities(prefix)
        except OracleError as exc:
            print(exc, file=sys.stderr)
            return 1
        sys.stdout.write(json.dumps(doc, separators=(",", ":")) + "\n")
        return 0
    if command in ("decode", "serve", "encode", "capabilities", "consume"):
        # become the JVM: the caller (e.g. `kafka-conformance check`) then owns the JVM's
        # process directly, and its stdin/stdout are the JVM's
        sys.stdout.flush()
        sys.stderr.flush()
        if command != "serve":  # a one-shot JVM: the client compiler only
            prefix = [*prefix[:-2], *jvm.CLIENT_COMPILER_ONLY, *prefix[-2:]]
        os.execv(prefix[0], [*prefix, command, *rest])
    sys.stderr.write(f"unknown command: {command}\n{usage}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
