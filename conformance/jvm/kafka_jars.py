r"""Run Apache Kafka's own command-line tools from Maven Central jars, cached per version.

A Kafka server distribution's runtime classpath is resolved once per version with Maven
(``jvm/kafka-classpath/pom.xml``: the checkout's, else the copy the wheel carries,
``runtime.project_dir``; ``dependency:copy-dependencies -DincludeScope=runtime``) into
``<cache>/kafka/<version>/lib/`` (Maven local repository ``<cache>/m2``; ``<cache>`` is
``runtime.cache_root()``: ``<checkout>/.cache``, else the user's cache directory), then the
tools run the way ``bin/kafka-run-class.sh`` runs them: ``java <heap/GC opts> <log4j opts>
-cp <jars> <main class> <args>``.

* :func:`classpath` resolves (once; a file lock serialises concurrent resolutions; Maven copies
  into a staging directory beside ``<version>/``, put in place only once complete, with its
  marker file, written last: a failed download leaves no ``<version>/``, a directory without
  a valid marker, or with a listed jar missing or empty, is resolved again, and what other
  first uses keep in ``<version>/`` (``clients/``, ``native/``) is never removed) and returns
  the jar list;
* :func:`java_command` / :func:`run_class` build / run ``java ... MAIN ARGS``; logging goes to
  stderr only (log4j 1/reload4j and log4j2 configuration files written into ``<cache>/kafka``,
  the same ``WARN, stderr`` set-up as Kafka's ``config/tools-log4j.properties``), so a tool's
  stdout is exactly what the tool prints;
* :func:`find_main_class` finds which of several class names the jars contain (e.g.
  ``kafka.tools.DumpLogSegments`` up to 4.2, ``org.apache.kafka.tools.DumpLogSegments`` from 4.3);
* :func:`dump_log_segments` runs the real DumpLogSegments as ``kafka-dump-log.sh`` would.

The JVM's stdout/stderr encoding is pinned to UTF-8 (what ``kafka-dump-log.sh`` prints under a
UTF-8 locale), so output does not depend on the caller's locale.

Profiles by version (see the POM): ``< 2.4`` -> ``legacy`` (kafka_2.11 + jaxb-api),
``2.4 .. 3.x`` -> ``kafka-3``, ``>= 4`` -> ``kafka-4`` (kafka_2.13 + kafka-tools).

Command line::

    python -m conformance.jvm.kafka_jars classpath 3.9.2      # resolve if needed, print the jars
    python -m conformance.jvm.kafka_jars main-class 4.3.1     # which DumpLogSegments class
    python -m conformance.jvm.kafka_jars dump 3.9.2 -- --files d/0.log --deep-iteration \
        --print-data-log
    python -m conformance.jvm.kafka_jars run 3.9.2 kafka.tools.StorageTool -- random-uuid
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.codecs import zstd
from conformance.jvm import runtime as jvm
from conformance.jvm import zstd_jni

__all__ = [
    "DEFAULT_VERSION",
    "DUMP_LOG_SEGMENTS_CLASSES",
    "DumpResult",
    "KafkaJarsUnavailable",
    "TOOL_JVM_OPTIONS",
    "cache_dir",
    "classpath",
    "command_line",
    "dump_log_segments",
    "main_class_jar",
    "find_main_class",
    "kafka2_libzstd",
    "java_command",
    "main",
    "maven_profile",
    "run_class",
    "try_kafka2_zstd",
    "use_kafka2_zstd",
]

#: The version the decoder oracle pins (oracle/pom.xml).
DEFAULT_VERSION = "3.9.2"

#: Where DumpLogSegments lives: Scala ``core`` (0.8 .. 4.2), Java ``kafka-tools`` (4.3+,
#: KAFKA-14579); the first one present wins.
DUMP_LOG_SEGMENTS_CLASSES: tuple[str, ...] = (
    "org.apache.kafka.tools.DumpLogSegments",
    "kafka.tools.DumpLogSegments",
)

#: ``kafka-run-class.sh`` defaults (KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS) for tools.
TOOL_JVM_OPTIONS: tuple[str, ...] = (
    "-Xmx256M",
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15",
    "-Djava.awt.headless=true",
)

#: Output encoding pinned to UTF-8 whatever the locale (JDK 17 reads sun.std*.encoding,
#: JDK 19+ std*.encoding).
_ENCODING_OPTIONS: tuple[str, ...] = (
    "-Dfile.encoding=UTF-8",
    "-Dsun.stdout.encoding=UTF-8",
    "-Dsun.stderr.encoding=UTF-8",
    "-Dstdout.encoding=UTF-8",
    "-Dstderr.encoding=UTF-8",
)

DEFAULT_TIMEOUT = 300.0
_RESOLVE_TIMEOUT = 1800.0
_TAIL_LINES = 40
_MARKER = "complete.json"
_PROJECT = "jvm/kafka-classpath"
_VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+){1,3}([.-][A-Za-z0-9]+)*$")

# Same set-up as Kafka's config/tools-log4j.properties / tools-log4j2.yaml: WARN and above, stderr.
_LOG4J_PROPERTIES = """\
# written by conformance.jvm.kafka_jars: tools log to stderr only (cf. config/tools-log4j.properties)
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.appender.stderr.Target=System.err
"""  # noqa: E501 - config file content, written verbatim

_LOG4J2_PROPERTIES = """\
# written by conformance.jvm.kafka_jars: Kafka tools log to stderr only (cf. config/tools-log4j2.yaml)
status = error
name = kafka-conformance-tools
appender.stderr.type = Console
appender.stderr.name = STDERR
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = STDERR
"""  # noqa: E501 - config file content, written verbatim


class KafkaJarsUnavailable(RuntimeError):
    """The Kafka classpath cannot be resolved or used (no mvn/java, unknown version, ...)."""


@dataclass(frozen=True)
class DumpResult:
    """What DumpLogSegments printed, verbatim, and its exit status."""

    stdout: str
    stderr: str
    returncode: int

    @property
    def ok(self) -> bool:
        return self.returncode == 0


# --------------------------------------------------------------------------------------------
# locations


def _pom(repo_root: Path | None) -> Path:
    """The POM that resolves the jars (``repo_root``: a checkout; None: the one there is, else
    the wheel's copy)."""
    try:
        return jvm.project_dir(_PROJECT, repo_root) / "pom.xml"
    except jvm.NoCheckout as e:  # a package built without its jvm/ project
        raise KafkaJarsUnavailable(str(e)) from None


def _check_version(version: str) -> str:
    if not _VERSION_RE.match(version):
        raise KafkaJarsUnavailable(f"not a Kafka version: {version!r} (expected e.g. 3.9.2)")
    return version


def cache_dir(version: str, repo_root: Path | None = None) -> Path:
    """``<cache>/kafka/<version>`` (holds ``lib/`` and the completion marker; ``<cache>``:
    ``runtime.cache_root(repo_root)``)."""
    return jvm.cache_root(repo_root) / "kafka" / _check_version(version)


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"[0-9]+", version.split("-")[0])[:3])


def maven_profile(version: str) -> tuple[str, dict[str, str]]:
    """The POM profile and extra ``-D`` properties used to resolve ``version``."""
    v = _version_tuple(_check_version(version))
    if v < (2, 4):
        return "legacy", {}
    if v < (4,):
        return "kafka-3", {}
    return "kafka-4", {}


# --------------------------------------------------------------------------------------------
# resolution


def _read_marker(directory: Path, version: str | None = None) -> list[Path] | None:
    """The jar list of a complete resolution of ``version``, or None when the directory is
    not one: missing, empty, without its marker, a marker of another version, a jar listed
    that is missing or empty (what an interrupted download of an older kit left)."""
    try:
        data = json.loads((directory / _MARKER).read_text(encoding="utf-8"))
        names = data["jars"]
        if version is not None and data.get("version", version) != version:
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    lib = directory / "lib"
    jars = [lib / name for name in names]
    try:
        if not jars or not all(j.is_file() and j.stat().st_size > 0 for j in jars):
            return None
    except OSError:
        return None
    return jars


def classpath(version: str, repo_root: Path | None = None, *, refresh: bool = False) -> list[Path]:
    """The runtime jars of Kafka ``version`` (resolved with Maven on first use), sorted by name.

    ``refresh=True`` resolves again (``mvn -U``) even when a complete cache exists.
    Raises :class:`KafkaJarsUnavailable` (with the tail of Maven's output) on failure.
    """
    directory = cache_dir(version, repo_root)
    if not refresh:
        jars = _read_marker(directory, version)
        if jars is not None:
            return jars
    with jvm.locked(directory.parent / ".resolve.lock"):
        if not refresh:
            jars = _read_marker(directory, version)  # resolved by a concurrent process
            if jars is not None:
                return jars
        return _resolve(version, repo_root, directory, refresh=refresh)


#: the Kafka release whose zstd-jni (1.4.9-1, libzstd 1.4.9) reads zstd for every 2.x line
KAFKA2_ZSTD_FROM = "2.8.2"


def kafka2_libzstd(repo_root: Path | None = None) -> Path:
    """The libzstd of Kafka 2.x: ``libzstd-jni.so`` of the zstd-jni jar among Kafka
    ``KAFKA2_ZSTD_FROM``'s jars (resolved with Maven on first use), extracted once into that
    version's cache directory. It exports libzstd 1.4.9's own API, which
    ``conformance.codecs.zstd`` drives as zstd-jni does (docs/broker.md)."""
    jars = [j for j in classpath(KAFKA2_ZSTD_FROM, repo_root) if j.name.startswith("zstd-jni-")]
    if not jars:
        raise KafkaJarsUnavailable(f"no zstd-jni jar among Kafka {KAFKA2_ZSTD_FROM}'s jars")
    machine = {"x86_64": "amd64", "aarch64": "aarch64"}.get(platform.machine(), platform.machine())
    member = f"linux/{machine}/libzstd-jni.so"
    target = cache_dir(KAFKA2_ZSTD_FROM, repo_root) / "native" / jars[0].stem / member
    if target.is_file():
        return target
    with jvm.locked(cache_dir(KAFKA2_ZSTD_FROM, repo_root).parent / ".native.lock"):
        if not target.is_file():  # else extracted by a concurrent first use
            with zipfile.ZipFile(jars[0]) as z:
                try:
                    data = z.read(member)
                except KeyError:
                    raise KafkaJarsUnavailable(f"{jars[0].name} has no {member}") from None
            target.parent.mkdir(parents=True, exist_ok=True)
            _write_atomically(target, data)
    return target


def use_kafka2_zstd(repo_root: Path | None = None) -> Path:
    """Have the broker model of Kafka 2.x read zstd as Kafka 2.x does (``jvm.zstd_jni``: its
    zstd-jni read loop over its libzstd 1.4.9) in this process; returns the library."""
    path = kafka2_libzstd(repo_root)
    lib = zstd_jni.open_libzstd(path)
    zstd.use_kafka2_reader(functools.partial(zstd_jni.read_stream_kafka2, lib))
    return path


def try_kafka2_zstd(log: Callable[[str], None]) -> bool:
    """:func:`use_kafka2_zstd`, or say (to ``log``) why not: without it only the judgements
    of zstd batches by the broker model of Kafka 2.x fail (with a message that says so)."""
    try:
        use_kafka2_zstd()
    except Exception as exc:  # noqa: BLE001 - reported; only the 2.x zstd judgements need it
        log(f"no Kafka 2.x libzstd for the broker model ({exc})")
        return False
    return True


def _write_atomically(path: Path, data: bytes | str) -> None:
    """``path`` holds ``data`` (text as UTF-8) whole or not at all (a temporary file of its
    own, renamed), even with threads or processes writing it at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _resolve(version: str, repo_root: Path | None, directory: Path, *, refresh: bool) -> list[Path]:
    """Resolve into a staging directory beside ``directory`` (``.<version>.staging-*``), then
    put it in place whole: ``directory`` exists only as a complete resolution (its ``lib/``
    and marker), never as what a failed or interrupted download left. Called under the
    resolution lock."""
    pom = _pom(repo_root)
    if not pom.is_file():
        raise KafkaJarsUnavailable(f"{pom} does not exist")
    profile, props = maven_profile(version)
    directory.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(directory)
    staging = Path(tempfile.mkdtemp(prefix=f".{version}.staging-", dir=directory.parent))
    lib = staging / "lib"
    args = [
        "-ntp",
        *(["-U"] if refresh else []),
        "-f",
        str(pom),
        "-P",
        profile,
        f"-Dkafka.version={version}",
        *(f"-D{k}={v}" for k, v in sorted(props.items())),
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={lib}",
    ]
    cmd = ["mvn", *args]
    try:
        lib.mkdir()
        try:
            proc = jvm.run_maven(
                jvm.cache_root(repo_root), args, cwd=pom.parent, timeout=_RESOLVE_TIMEOUT
            )
        except jvm.JvmToolMissing as exc:
            raise KafkaJarsUnavailable(f"{exc} (needed once per Kafka version)") from exc
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KafkaJarsUnavailable(
                f"cannot resolve Kafka {version}: {shlex.join(cmd)}: {exc}"
            ) from exc
        names = sorted(p.name for p in lib.glob("*.jar"))
        if proc.returncode != 0 or not any(n.startswith("kafka") for n in names):
            raise KafkaJarsUnavailable(
                f"cannot resolve Kafka {version} (profile {profile}): {shlex.join(cmd)} exited "
                f"with status {proc.returncode}, {len(names)} jars copied\n"
                f"--- mvn output (tail) ---\n{jvm.tail(proc.stdout, _TAIL_LINES)}"
            )
        marker = {
            "version": version,
            "profile": profile,
            "properties": props,
            "pom_sha256": hashlib.sha256(pom.read_bytes()).hexdigest(),
            "resolved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "jars": names,
        }
        _write_atomically(staging / _MARKER, json.dumps(marker, indent=1) + "\n")
        if _read_marker(staging, version) is None:
            raise KafkaJarsUnavailable(
                f"cannot resolve Kafka {version}: Maven copied an empty jar into {lib}"
            )
        os.chmod(staging, 0o755)
        os.chmod(lib, 0o755)
        _put_in_place(staging, directory)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already when put in place
    return [directory / "lib" / n for n in names]


def _put_in_place(staging: Path, directory: Path) -> None:
    """Put the complete ``staging`` in place as ``directory``: renamed to it when there is none
    (or an empty one), else its ``lib/`` and marker moved into it. ``<version>/`` is shared:
    other first uses keep files there (``clients/``: the ``kafka-clients`` jar an installed kit
    downloads; ``native/``: Kafka 2.x's libzstd), which a process may be writing or reading
    right now, so the directory itself is never replaced. The marker goes first (a reader
    without it waits for the resolution lock), the old ``lib/`` is renamed aside then removed,
    and the new marker is the last rename: a reader that sees it sees its whole ``lib/``."""
    try:
        os.rename(staging, directory)  # replaces an empty directory, never a full one
        return
    except OSError:
        if not directory.is_dir() or directory.is_symlink():
            raise
    old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.old-", dir=directory.parent))
    try:
        (directory / _MARKER).unlink(missing_ok=True)
        if (directory / "lib").exists() or (directory / "lib").is_symlink():
            os.replace(directory / "lib", old / "lib")
        os.replace(staging / "lib", directory / "lib")
        os.replace(staging / _MARKER, directory / _MARKER)
    finally:
        shutil.rmtree(old, ignore_errors=True)


def _remove_leftovers(directory: Path) -> None:
    """Staging and replaced directories of ``directory`` that a killed resolution left
    (called under the resolution lock, so none is in use)."""
    for pattern in (f".{directory.name}.staging-*", f".{directory.name}.old-*"):
        for path in directory.parent.glob(pattern):
            shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# running


def _java_executable() -> str:
    try:
        return jvm.java_executable()
    except jvm.JvmToolMissing as exc:
        raise KafkaJarsUnavailable(str(exc)) from exc


def _logging_options(repo_root: Path | None) -> list[str]:
    base = jvm.cache_root(repo_root) / "kafka"
    files = {"log4j.properties": _LOG4J_PROPERTIES, "log4j2.properties": _LOG4J2_PROPERTIES}
    for name, text in files.items():
        path = base / name
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != text:
            _write_atomically(path, text)
    return [
        f"-Dlog4j.configuration={(base / 'log4j.properties').as_uri()}",
        f"-Dlog4j2.configurationFile={base / 'log4j2.properties'}",
    ]


def java_command(
    version: str,
    main_class: str,
    args: Sequence[str],
    *,
    jvm_opts: Sequence[str] = (),
    repo_root: Path | None = None,
) -> list[str]:
    """``java <kafka-run-class.sh opts> <logging opts> <jvm_opts> -cp <jars> MAIN ARGS``."""
    jars = classpath(version, repo_root)
    return command_line(
        main_class,
        args,
        java=_java_executable(),
        classpath=[str(j) for j in jars],
        jvm_opts=[*_logging_options(repo_root), *jvm_opts],
    )


def command_line(
    main_class: str,
    args: Sequence[str],
    *,
    java: str,
    classpath: Sequence[str],
    jvm_opts: Sequence[str] = (),
) -> list[str]:
    """``JAVA <kafka-run-class.sh opts> <UTF-8 opts> <jvm_opts> -cp CLASSPATH MAIN ARGS``: the
    launch line of :func:`java_command`, for a JVM and jars somewhere else (e.g. a container's
    ``java`` and ``/opt/kafka/libs/*``)."""
    return [
        java,
        *TOOL_JVM_OPTIONS,
        *_ENCODING_OPTIONS,
        *jvm_opts,
        "-cp",
        os.pathsep.join(classpath),
        main_class,
        *args,
    ]


def run_class(
    version: str,
    main_class: str,
    args: Sequence[str],
    *,
    cwd: Path | str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    jvm_opts: Sequence[str] = (),
    repo_root: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``main_class`` of Kafka ``version``; stdout/stderr captured as UTF-8 text, byte
    for byte (no newline translation: a CR in a payload stays a CR)."""
    cmd = java_command(version, main_class, args, jvm_opts=jvm_opts, repo_root=repo_root)
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except OSError as exc:
        raise KafkaJarsUnavailable(f"cannot run {cmd[0]}: {exc}") from exc
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "surrogateescape"),
        proc.stderr.decode("utf-8", "surrogateescape"),
    )


_main_class_cache: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = {}


def find_main_class(
    version: str, candidates: Iterable[str], *, repo_root: Path | None = None
) -> str:
    """The first of ``candidates`` (fully qualified names) present in the classpath jars."""
    return main_class_jar(version, candidates, repo_root=repo_root)[0]


def main_class_jar(
    version: str, candidates: Iterable[str], *, repo_root: Path | None = None
) -> tuple[str, str]:
    """``(class, jar file name)``: the first of ``candidates`` present in the classpath jars
    and the jar that holds it (provenance: ``kafka_2.11-1.1.1.jar``, ``kafka-tools-4.3.1.jar``)."""
    names = tuple(candidates)
    jars = classpath(version, repo_root)
    key = (str(jars[0].parent), names)
    if key in _main_class_cache:
        return _main_class_cache[key]
    entries = {n: n.replace(".", "/") + ".class" for n in names}
    # Kafka's own jars first: that is where tools live
    ordered = sorted(jars, key=lambda j: (not j.name.startswith("kafka"), j.name))
    present: dict[str, str] = {}
    for jar in ordered:
        try:
            with zipfile.ZipFile(jar) as zf:
                listing = set(zf.namelist())
        except (OSError, zipfile.BadZipFile):
            continue
        for n, entry in entries.items():
            if entry in listing:
                present.setdefault(n, jar.name)
        if names and names[0] in present:
            break
    for n in names:
        if n in present:
            _main_class_cache[key] = (n, present[n])
            return n, present[n]
    raise KafkaJarsUnavailable(f"none of {', '.join(names)} is in the Kafka {version} classpath")


def dump_log_segments(
    version: str,
    files: Sequence[Path | str],
    *,
    deep_iteration: bool = False,
    print_data_log: bool = False,
    verify_index_only: bool = False,
    index_sanity_check: bool = False,
    max_bytes: int | None = None,
    max_message_size: int | None = None,
    skip_record_metadata: bool = False,
    offsets_decoder: bool = False,
    transaction_log_decoder: bool = False,
    cluster_metadata_decoder: bool = False,
    remote_log_metadata_decoder: bool = False,
    share_group_state_decoder: bool = False,
    extra_args: Sequence[str] = (),
    cwd: Path | str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    repo_root: Path | None = None,
) -> DumpResult:
    """Run Kafka's DumpLogSegments: ``--files a,b,c`` plus the flags, as ``kafka-dump-log.sh``.

    File names are passed as given (relative ones resolve against ``cwd``); DumpLogSegments
    echoes them in its ``Dumping <file>`` lines.
    """
    names = [os.fspath(f) for f in files]
    if not names:
        raise ValueError("no files to dump")
    for n in names:
        if "," in n:
            raise ValueError(f"DumpLogSegments splits --files on ',': cannot pass {n!r}")
    args = ["--files", ",".join(names)]
    if deep_iteration:
        args.append("--deep-iteration")
    if print_data_log:
        args.append("--print-data-log")
    if verify_index_only:
        args.append("--verify-index-only")
    if index_sanity_check:
        args.append("--index-sanity-check")
    if max_bytes is not None:
        args += ["--max-bytes", str(max_bytes)]
    if max_message_size is not None:
        args += ["--max-message-size", str(max_message_size)]
    for flag, given in (
        ("--skip-record-metadata", skip_record_metadata),
        ("--offsets-decoder", offsets_decoder),
        ("--transaction-log-decoder", transaction_log_decoder),
        ("--cluster-metadata-decoder", cluster_metadata_decoder),
        ("--remote-log-metadata-decoder", remote_log_metadata_decoder),
        ("--share-group-state-decoder", share_group_state_decoder),
    ):
        if given:
            args.append(flag)
    args += list(extra_args)
    main_class = find_main_class(version, DUMP_LOG_SEGMENTS_CLASSES, repo_root=repo_root)
    proc = run_class(
        version,
        main_class,
        args,
        cwd=cwd,
        timeout=timeout,
        jvm_opts=jvm.CLIENT_COMPILER_ONLY,  # a short run
        repo_root=repo_root,
    )
    return DumpResult(proc.stdout, proc.stderr, proc.returncode)


# --------------------------------------------------------------------------------------------
# command line

_EPILOG = """\
examples:
  python -m conformance.jvm.kafka_jars classpath 3.9.2
  python -m conformance.jvm.kafka_jars classpath --separator : 4.3.1
  python -m conformance.jvm.kafka_jars main-class 4.3.1
  python -m conformance.jvm.kafka_jars dump 3.9.2 -- --files d/00000000000000000000.log --print-data-log
  python -m conformance.jvm.kafka_jars dump 4.3.1 -- --files d/0.index,d/0.timeindex --verify-index-only
  python -m conformance.jvm.kafka_jars run 3.9.2 kafka.tools.StorageTool -- random-uuid

Jars are cached in <cache>/kafka/<version>/lib (Maven repository <cache>/m2), resolved with
jvm/kafka-classpath/pom.xml. In a checkout (or $KAFKA_CONFORMANCE_ROOT) <cache> is its .cache/
and the POM its own; an installed package uses the POM it carries and the user's cache
directory ($XDG_CACHE_HOME/kafka-conformance, default ~/.cache/kafka-conformance).
Needs mvn (first use of a version) and java 17+.
"""  # noqa: E501 - --help epilog, printed verbatim


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.jvm.kafka_jars",
        description="Run Apache Kafka's own tools (DumpLogSegments, ...) from Maven Central jars.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("classpath", help="resolve (once) and print the jars of a Kafka version")
    p.add_argument("version", metavar="VERSION", help=f"Kafka version, e.g. {DEFAULT_VERSION}")
    p.add_argument(
        "--separator", default="\n", help="print the jars joined by this (default: one per line)"
    )
    p.add_argument("--refresh", action="store_true", help="resolve again even if cached (mvn -U)")

    p = sub.add_parser(
        "main-class", help="print which DumpLogSegments class (or given classes) the jars hold"
    )
    p.add_argument("version", metavar="VERSION")
    p.add_argument(
        "candidates", nargs="*", metavar="CLASS", default=list(DUMP_LOG_SEGMENTS_CLASSES)
    )

    p = sub.add_parser(
        "dump",
        help="run DumpLogSegments with the given arguments (as kafka-dump-log.sh)",
        description="Arguments after '--' go to DumpLogSegments verbatim "
        "(try: dump VERSION -- --help).",
    )
    p.add_argument("version", metavar="VERSION")
    p.add_argument("tool_args", nargs=argparse.REMAINDER, metavar="-- ARGS")

    p = sub.add_parser("run", help="run any main class of the Kafka classpath")
    p.add_argument("version", metavar="VERSION")
    p.add_argument("main_class", metavar="MAIN_CLASS")
    p.add_argument("tool_args", nargs=argparse.REMAINDER, metavar="-- ARGS")
    return parser


def _exec(cmd: list[str]) -> int:
    """Run with inherited stdout/stderr (streams large dumps) and return the exit status."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, check=False).returncode
    except OSError as exc:
        raise KafkaJarsUnavailable(f"cannot run {cmd[0]}: {exc}") from exc


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    tool_args = list(getattr(args, "tool_args", None) or [])
    if tool_args[:1] == ["--"]:
        tool_args = tool_args[1:]
    try:
        if args.command == "classpath":
            jars = classpath(args.version, refresh=args.refresh)
            print(args.separator.join(str(j) for j in jars))
        elif args.command == "main-class":
            print(find_main_class(args.version, args.candidates))
        elif args.command == "dump":
            main_class = find_main_class(args.version, DUMP_LOG_SEGMENTS_CLASSES)
            return _exec(java_command(args.version, main_class, tool_args))
        elif args.command == "run":
            return _exec(java_command(args.version, args.main_class, tool_args))
    except KafkaJarsUnavailable as exc:
        print(f"kafka_jars: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
