"""Broker oracle: what a real Kafka broker answers to one partition's records in a Produce request.

A small Java program (``oracle/broker/``) run on one supported broker version's own jars: it
creates a real partition log the way that version's ``LogManager`` does (``Log.apply`` in 2.8,
``UnifiedLog.apply`` in 3.x, ``UnifiedLog.create`` in 4.x) and answers each produce by running
that version's request checks (``ProduceRequest.validateRecords``, ...) and
``appendAsLeader`` (``analyzeAndValidateRecords``, ``LogValidator``, producer state), then the
exception-to-response mapping of that version's ``ReplicaManager``. It is the judge for the
kit's Python re-implementation of the broker's validation. docs/broker-oracle.md has the
protocol and what is mirrored rather than called.

* :func:`ensure_built` compiles ``oracle/broker/common`` plus the version's source set (the
  checkout's, else the copy the wheel carries: ``runtime.project_dir``) with ``javac`` against
  the version's jars (:func:`conformance.jvm.kafka_jars.classpath`) into
  ``<cache>/broker-oracle/<version>/<sha256 of the sources + version>/`` (``<cache>``:
  ``runtime.cache_root()``; again only when the sources change; a file lock keeps parallel
  builds apart) and returns the command prefix.
* :class:`BrokerOracle` keeps one JVM per instance (one version), JSON lines over its
  stdin/stdout; restarted when it dies, stopped on close, at interpreter exit, and when its
  stdin closes (the JVM exits at end of input, so it never outlives this process).

Command line::

    python -m conformance.jvm.broker_oracle build [VERSION|all]
    python -m conformance.jvm.broker_oracle produce --version 3.9.2 --produce-version 9 \\
        --now 1700000000000 --topic cleanup.policy=compact batch.bin
    python -m conformance.jvm.broker_oracle murmur2 --version 3.9.2 foobar
    python -m conformance.jvm.broker_oracle version --version 4.3.1
"""

from __future__ import annotations

import argparse
import atexit
import base64
import hashlib
import json
import os
import selectors
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from conformance.host import sessions
from conformance.host.lifetime import Started
from conformance.jvm import kafka_jars
from conformance.jvm import runtime as jvm

__all__ = [
    "DEFAULT_TRANSACTIONAL_ID",
    "JVM_OPTIONS",
    "MAIN_CLASS",
    "SOURCE_SETS",
    "SUPPORTED_VERSIONS",
    "BrokerOracle",
    "BrokerOracleError",
    "BrokerOracleRequestError",
    "BrokerOracleUnavailable",
    "ensure_built",
    "main",
    "source_hash",
]

#: the broker versions the oracle runs on (their classpaths: ``kafka_jars.classpath``)
SUPPORTED_VERSIONS = ("2.8.2", "3.9.2", "4.3.1")
#: the Java source set of each version's API generation, under ``oracle/broker/``
SOURCE_SETS: dict[str, str] = {"2.8.2": "kafka-2.8", "3.9.2": "kafka-3", "4.3.1": "kafka-4"}
#: plain-Java code shared by every source set
_COMMON = "common"
#: what ``ps`` shows of a running oracle (tests/conftest.py's leftover guard looks for it)
MAIN_CLASS = "org.kafkaconformance.brokeroracle.BrokerOracle"
#: a bounded heap like the consumer oracle's: a huge declared size is answered, not fatal
#: -XX:-OmitStackTraceInFastThrow: HotSpot otherwise replaces an exception the JIT-compiled
#: code throws often (the NullPointerException of a null record, ...) by a preallocated one
#: without a message after a while; the oracle's answers must not depend on its uptime
JVM_OPTIONS: tuple[str, ...] = ("-Xmx1g", "-XX:-OmitStackTraceInFastThrow")
#: the transactional id a produce carries unless told otherwise: a correct client's
DEFAULT_TRANSACTIONAL_ID = "broker-oracle"

_CLASS_FILE = Path("org/kafkaconformance/brokeroracle/BrokerOracle.class")
_TAIL_LINES = 40
_REQUEST_TIMEOUT = 300.0
_STOP_TIMEOUT = 20.0


class BrokerOracleError(RuntimeError):
    """The oracle ran but misbehaved: the JVM died or answered something malformed (the
    message ends with the JVM's stderr tail)."""


class BrokerOracleUnavailable(BrokerOracleError):
    """The oracle cannot be built or started: no java/javac, the version's jars cannot be
    resolved, the build failed, no sources (a package built without its oracle/ project)."""


class BrokerOracleRequestError(BrokerOracleError, ValueError):
    """The oracle refused the request (``protocolError``): malformed, or a session reused with
    another config. The JVM goes on."""


# --------------------------------------------------------------------------------------------
# building


def _sources_dir(repo_root: Path | None) -> Path:
    """``oracle/broker`` of the checkout (``repo_root``, else the one there is), else of the
    wheel's copy."""
    try:
        return jvm.project_dir("oracle", repo_root) / "broker"
    except jvm.NoCheckout as exc:  # a package built without its oracle/ project
        raise BrokerOracleUnavailable(str(exc)) from None


def _check_version(version: str) -> str:
    if version not in SOURCE_SETS:
        raise ValueError(
            f"unsupported broker version {version!r}: one of {', '.join(SUPPORTED_VERSIONS)}"
        )
    return version


def _source_files(base: Path, version: str) -> list[Path]:
    files: list[Path] = []
    for part in (_COMMON, SOURCE_SETS[version]):
        files.extend(sorted((base / part).rglob("*.java")))
    return files


def source_hash(version: str, repo_root: Path | None = None) -> str:
    """sha256 over the version and every Java source it is built from (path and content)."""
    base = _sources_dir(repo_root)
    digest = hashlib.sha256(f"broker-oracle {_check_version(version)}\n".encode())
    for path in _source_files(base, version):
        rel = path.relative_to(base).as_posix().encode()
        data = path.read_bytes()
        digest.update(struct.pack(">I", len(rel)) + rel)
        digest.update(struct.pack(">Q", len(data)) + data)
    return digest.hexdigest()


def _javac() -> str:
    try:
        return jvm.jdk_tool("javac")
    except jvm.JvmToolMissing as e:
        raise BrokerOracleUnavailable(str(e)) from None


def _jars(version: str, repo_root: Path | None) -> list[Path]:
    try:
        return kafka_jars.classpath(version, repo_root)
    except kafka_jars.KafkaJarsUnavailable as exc:
        raise BrokerOracleUnavailable(f"Kafka {version} jars: {exc}") from exc


def ensure_built(version: str, repo_root: Path | None = None) -> list[str]:
    """Compile the oracle for ``version`` if its sources changed; the command prefix.

    The prefix is ``java <options> -cp <classes>:<jars> org.kafkaconformance.brokeroracle.
    BrokerOracle``; append ``serve LOG_ROOT``. Raises :class:`BrokerOracleUnavailable`.
    """
    _check_version(version)
    base = _sources_dir(repo_root)
    sources = _source_files(base, version)
    if not sources:
        raise BrokerOracleUnavailable(f"no sources under {base}")
    jars = _jars(version, repo_root)
    out_dir = (
        jvm.cache_root(repo_root) / "broker-oracle" / version / source_hash(version, repo_root)
    )
    if not (out_dir / _CLASS_FILE).is_file():
        with jvm.locked(out_dir.parent / ".build.lock"):
            if not (out_dir / _CLASS_FILE).is_file():  # else built meanwhile by another process
                _build(sources, jars, out_dir)
    try:
        command = kafka_jars.java_command(
            version, MAIN_CLASS, [], jvm_opts=JVM_OPTIONS, repo_root=repo_root
        )
    except kafka_jars.KafkaJarsUnavailable as exc:
        raise BrokerOracleUnavailable(str(exc)) from exc
    cp = command.index("-cp") + 1
    command[cp] = os.pathsep.join([str(out_dir), command[cp]])
    return command


def _build(sources: Sequence[Path], jars: Sequence[Path], out_dir: Path) -> None:
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=out_dir.parent))
    try:
        cmd = [
            _javac(),
            "--release",
            "17",
            "-encoding",
            "UTF-8",
            "-nowarn",
            "-d",
            str(staging),
            "-cp",
            os.pathsep.join(str(j) for j in jars),
            *(str(s) for s in sources),
        ]
        try:
            proc = subprocess.run(
                cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
            )
        except OSError as exc:
            raise BrokerOracleUnavailable(f"cannot run javac: {exc}") from exc
        if proc.returncode != 0 or not (staging / _CLASS_FILE).is_file():
            raise BrokerOracleUnavailable(
                f"build failed: javac exited with status {proc.returncode}\n"
                f"--- javac output (tail) ---\n{jvm.tail(proc.stdout + proc.stderr, _TAIL_LINES)}"
            )
        os.chmod(staging, 0o755)
        os.replace(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# running

_live: weakref.WeakSet[BrokerOracle] = weakref.WeakSet()
_live_lock = threading.Lock()


def _scratch_root() -> str | None:
    """Where the JVM keeps its logs: ``/dev/shm`` (memory) when it is a writable directory,
    else the default temporary directory. Every session creates, appends to and deletes a
    log; on a disk each reset costs ~12 ms, in memory ~3 ms (docs/broker-oracle.md)."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


@atexit.register
def _close_all() -> None:
    """Every oracle still open at exit is closed (its JVM stopped, its scratch directory
    removed)."""
    with _live_lock:
        oracles = list(_live)
    for oracle in oracles:
        try:
            oracle.close()
        except Exception:  # pragma: no cover - best effort at exit
            pass


class BrokerOracle(Started):
    """One broker oracle JVM for one Kafka ``version``::

        with BrokerOracle("3.9.2") as oracle:
            answer = oracle.produce(batch, produce_version=9, topic={}, now=1700000000000)
            answer["response"]["errorName"]  # "NONE"

    Each answer is the protocol's document (docs/broker-oracle.md): ``scope``, ``response``
    (64-bit numbers as decimal strings), ``exception``, ``stored`` (base64 or None).

    A JVM that died is restarted by the next request; its sessions (logs and producer state)
    are gone with it, so the sessions start anew (:attr:`restarts` counts the restarts). A
    request during which the JVM dies is retried once on a fresh JVM; a second death raises
    :class:`BrokerOracleError` with the JVM's stderr tail.
    """

    def __init__(
        self,
        version: str,
        *,
        repo_root: Path | None = None,
        request_timeout: float = _REQUEST_TIMEOUT,
    ) -> None:
        self.version = _check_version(version)
        self._repo_root = repo_root
        self._timeout = request_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._log_root: Path | None = None
        self._buffer = bytearray()
        self._lost = False  # the last JVM died: the next start is a restart
        #: how often a dead JVM was replaced (each replacement lost every session)
        self.restarts = 0

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The running JVM's process id (None when none runs)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def log_root(self) -> Path | None:
        """The running JVM's directory (its sessions' logs); deleted when it stops."""
        return self._log_root

    def start(self) -> None:
        """Start the JVM (building the oracle first if needed); no-op while one runs."""
        if self._proc is not None and self._proc.poll() is None:
            return
        if self._proc is not None:  # died between requests: clean up, then replace it
            self._stop()
            self._lost = True
        if self._lost:
            self.restarts += 1
            self._lost = False
        command = ensure_built(self.version, self._repo_root)
        self._log_root = Path(
            tempfile.mkdtemp(prefix=f"broker-oracle-{self.version}-", dir=_scratch_root())
        )
        self._stderr = tempfile.TemporaryFile()
        self._buffer.clear()
        try:
            self._proc = subprocess.Popen(
                [*command, "serve", str(self._log_root)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                # its own session: Ctrl-C in a terminal reaches this process, which stops it
                start_new_session=True,
            )
        except OSError as exc:
            self._stop()
            raise BrokerOracleUnavailable(f"cannot start the broker oracle: {exc}") from exc
        with _live_lock:
            _live.add(self)

    def close(self) -> None:
        """Stop the JVM (it closes and deletes its logs) and remove its directory."""
        sessions.uninterrupted(self._stop)
        with _live_lock:
            _live.discard(self)

    def __del__(self) -> None:
        try:
            self._stop()
        except Exception:  # pragma: no cover - interpreter teardown
            pass

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            sessions.end_input(proc, _STOP_TIMEOUT)  # the JVM closes its logs and exits
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._log_root is not None:
            shutil.rmtree(self._log_root, ignore_errors=True)
            self._log_root = None

    def _stderr_tail(self) -> str:
        return jvm.file_tail(self._stderr, _TAIL_LINES)

    # -- requests ---------------------------------------------------------------------------

    def request(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        """Send one protocol request, return the JVM's response document."""
        line = json.dumps(doc, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"
        for attempt in (1, 2):
            self.start()
            try:
                answer = self._exchange(line)
            except _Died as died:
                if attempt == 2:
                    raise BrokerOracleError(str(died)) from None
                continue
            if "protocolError" in answer:
                raise BrokerOracleRequestError(str(answer["protocolError"]))
            if "internalError" in answer:
                raise BrokerOracleError(
                    f"broker oracle internal error: {answer['internalError']}\n"
                    f"{self._stderr_tail()}"
                )
            return answer
        raise AssertionError("unreachable")  # pragma: no cover

    def _exchange(self, line: bytes) -> dict[str, Any]:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(line)
            proc.stdin.flush()
        except OSError as exc:
            raise self._died(f"cannot send the request: {exc}") from None
        text = self._read_line(proc)
        try:
            answer = json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            tail = self._stderr_tail()
            self._abandon()
            raise BrokerOracleError(
                f"broker oracle answered malformed JSON ({exc}): {text[:200]!r}\n{tail}"
            ) from None
        if not isinstance(answer, dict):
            raise BrokerOracleError(f"broker oracle answered a non-object: {text[:200]!r}")
        return answer

    def _read_line(self, proc: subprocess.Popen[bytes]) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + self._timeout
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    tail = self._stderr_tail()
                    self._abandon()
                    raise BrokerOracleError(
                        f"broker oracle did not answer within {self._timeout:.0f} s "
                        f"(stopped)\n{tail}"
                    )
                if not selector.select(left):
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise self._died("no answer")
                self._buffer += chunk
        end = self._buffer.index(b"\n")
        text = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return text

    def _died(self, what: str) -> _Died:
        proc = self._proc
        status = None
        if proc is not None:
            try:
                status = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        message = (
            f"broker oracle {self.version}: {what} (JVM exit status {status})\n"
            f"{self._stderr_tail()}"
        )
        self._abandon()
        return _Died(message)

    def _abandon(self) -> None:
        """Stop a JVM that failed; the next request starts another (a restart)."""
        self._stop()
        self._lost = True

    # -- the operations ---------------------------------------------------------------------

    def produce(
        self,
        records: bytes,
        *,
        session: str = "default",
        produce_version: int,
        topic: Mapping[str, str],
        broker: Mapping[str, str] | None = None,
        now: int,
        leader_epoch: int = 0,
        transactional_id: str | None = DEFAULT_TRANSACTIONAL_ID,
        coordinator: str = "NONE",
    ) -> dict[str, Any]:
        """What the broker answers to ``records`` as partition t-0's data in a Produce request
        of ``produce_version`` at time ``now`` (ms), appended to ``session``'s log (created on
        first use with ``topic``/``broker`` config; later produces must pass the same).

        ``transactional_id``: the request's transactional id; None sends none (then a
        transactional batch gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED). ``coordinator``: the
        transaction coordinator's answer (a Kafka ``Errors`` name) when a 3.6+ broker asks it
        whether the partition is in the producer's transaction (KIP-890); NONE: it is."""
        return self.request(
            {
                "op": "produce",
                "session": session,
                "produceVersion": produce_version,
                "now": str(now),
                "leaderEpoch": leader_epoch,
                "topic": dict(topic),
                "broker": dict(broker or {}),
                "records": base64.b64encode(records).decode("ascii"),
                "transactionalId": transactional_id,
                "coordinator": coordinator,
            }
        )

    def reset(self, session: str = "default") -> None:
        """Delete ``session``'s log (and producer state); the next produce starts a new one."""
        self.request({"op": "reset", "session": session})

    def murmur2(self, keys: Sequence[bytes]) -> list[int]:
        """Kafka's ``Utils.murmur2`` of each key (signed 32-bit), from this version's jars."""
        answer = self.request(
            {"op": "murmur2", "keys": [base64.b64encode(k).decode("ascii") for k in keys]}
        )
        return [int(h) for h in answer["hashes"]]

    def describe(self, broker: Mapping[str, str] | None = None) -> dict[str, Any]:
        """``{"kafka": version, "produceVersions": [min, max] accepted,
        "advertisedProduceVersions": [min, max], ...}`` for a broker with ``broker`` config."""
        return self.request({"op": "version", "broker": dict(broker or {})})


class _Died(Exception):
    """The JVM ended before answering."""


# --------------------------------------------------------------------------------------------
# command line


def _key_values(items: Sequence[str] | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--{what} takes KEY=VALUE, not {item!r}")
        out[key] = value
    return out


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.jvm.broker_oracle",
        description="What a real Kafka broker (2.8.2, 3.9.2, 4.3.1; its own classes) answers "
        "to one partition's records in a Produce request.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
        "  python -m conformance.jvm.broker_oracle build all\n"
        "  python -m conformance.jvm.broker_oracle produce --version 3.9.2 --produce-version 9 "
        "--now 1700000000000 batch.bin\n"
        "  python -m conformance.jvm.broker_oracle produce --version 4.3.1 --produce-version 11 "
        "--now 1700000000000 --topic cleanup.policy=compact --topic "
        "message.timestamp.type=CreateTime - < batch.bin\n"
        "  python -m conformance.jvm.broker_oracle murmur2 --version 2.8.2 21 foobar\n"
        "  python -m conformance.jvm.broker_oracle version --version 4.3.1\n",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="compile the oracle (if its sources changed)")
    build.add_argument("target", nargs="?", default="all", help="a version or 'all' (default)")

    def versioned(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--version", required=True, choices=SUPPORTED_VERSIONS)
        return p

    produce = versioned("produce", "one produce to a fresh partition; prints the answer")
    produce.add_argument("file", help="the records bytes (a file, or - for stdin)")
    produce.add_argument("--produce-version", type=int, required=True)
    produce.add_argument("--now", type=int, default=None, help="the clock, ms (default: now)")
    produce.add_argument("--leader-epoch", type=int, default=0)
    produce.add_argument("--topic", action="append", metavar="KEY=VALUE", help="topic config")
    produce.add_argument("--broker", action="append", metavar="KEY=VALUE", help="broker config")
    produce.add_argument("--transactional-id", default=DEFAULT_TRANSACTIONAL_ID)
    produce.add_argument(
        "--no-transactional-id", action="store_true", help="the request carries none"
    )
    produce.add_argument(
        "--coordinator",
        default="NONE",
        metavar="ERROR",
        help="the transaction coordinator's answer to the verification of a transactional batch "
        "(3.6+, KIP-890): a Kafka Errors name (default NONE: the partition is in the transaction)",
    )
    murmur = versioned("murmur2", "Utils.murmur2 of each KEY (UTF-8)")
    murmur.add_argument("keys", nargs="+", metavar="KEY")
    versioned("version", "the Kafka version and its Produce versions")
    return parser


def _run(args: argparse.Namespace) -> int:
    if args.command == "build":
        targets = SUPPORTED_VERSIONS if args.target == "all" else (args.target,)
        for version in targets:
            started = time.monotonic()
            command = ensure_built(version)
            classes = command[command.index("-cp") + 1].split(os.pathsep)[0]
            print(f"{version}: {classes} ({time.monotonic() - started:.1f} s)")
        return 0
    with BrokerOracle(args.version) as oracle:
        if args.command == "produce":
            data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
            answer: object = oracle.produce(
                data,
                produce_version=args.produce_version,
                topic=_key_values(args.topic, "topic"),
                broker=_key_values(args.broker, "broker"),
                now=args.now if args.now is not None else int(time.time() * 1000),
                leader_epoch=args.leader_epoch,
                transactional_id=None if args.no_transactional_id else args.transactional_id,
                coordinator=args.coordinator,
            )
        elif args.command == "murmur2":
            answer = dict(zip(args.keys, oracle.murmur2([k.encode() for k in args.keys])))
        else:
            answer = oracle.describe()
    print(json.dumps(answer, indent=1))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    with sessions.sigterm_guarded():  # SIGTERM unwinds: the JVM is stopped on the way out
        try:
            return _run(args)
        except ValueError as exc:
            print(f"broker oracle: {exc}", file=sys.stderr)
            return 2
        except BrokerOracleError as exc:
            print(f"broker oracle: {exc}", file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
