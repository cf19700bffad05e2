"""Running Kafka's DumpLogSegments and ``dump`` side by side (tests of the dump decoders)."""

from __future__ import annotations

import io
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conformance.corpus.golden import first_trace_line_only
from conformance.logdir.dump import dump
from conformance.logdir.dump.formats import format_of
from conformance.wire.builder import BatchBuilder


def run_tool(version: str, case: Path, files: list[str], extra_args: list[str]) -> Any:
    """Kafka ``version``'s DumpLogSegments on ``files`` (relative to ``case``); skips the test
    when the jars cannot be had."""
    from conformance.jvm import kafka_jars

    try:
        return kafka_jars.dump_log_segments(version, files, cwd=case, extra_args=extra_args)
    except kafka_jars.KafkaJarsUnavailable as e:  # pragma: no cover
        pytest.skip(str(e))


def run_tools(runs: list[tuple[str, Path, list[str], list[str]]]) -> list[Any]:
    """:func:`run_tool` for each of ``runs`` (version, case, files, extra args), two JVMs at a
    time (each run is mostly a JVM starting: two overlap on two cores)."""
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda r: run_tool(*r), runs))


def compare_with_tool(
    version: str,
    case: Path,
    files: list[str],
    extra_args: list[str],
    java: Any = None,
    **dump_options: Any,
) -> str:
    """Kafka ``version``'s tool and ``dump`` in that release's format on ``files`` (relative
    to ``case``, the working directory of both): the same stdout, stderr up to the JVM's
    exception line, and exit status. Returns the tool's stdout. ``java``: the tool's result
    when it already ran (:func:`run_tools`)."""
    if java is None:
        java = run_tool(version, case, files, extra_args)
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(case)
    try:
        rc = dump(files, fmt=format_of(version), out=out, err=err, **dump_options)
    finally:
        os.chdir(cwd)
    assert out.getvalue() == java.stdout
    assert err.getvalue() == first_trace_line_only(java.stderr)
    assert rc == java.returncode
    return java.stdout


def write_log(
    case: Path, partition: str, records: list[tuple[bytes | None, bytes | None]], ts: int
) -> str:
    """One magic-2 batch of ``records`` (key, value; timestamps from ``ts`` on) as the first
    segment of ``case/partition``; returns its path relative to ``case``."""
    b = BatchBuilder(magic=2, base_offset=0)
    for i, (key, value) in enumerate(records):
        b.append(ts + i, key, value, [])
    part = case / partition
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(b.build())
    return f"{partition}/00000000000000000000.log"


def refused_before(case: Path, release: str, flag: str, err: pytest.CaptureFixture[str]) -> None:
    """``dump --format-of release FLAG`` on an empty segment: usage error 2, saying so."""
    from conformance.cli import main

    log = case / "x-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(b"")
    assert main(["dump", "--format-of", release, flag, str(log)]) == 2
    assert f"has no {flag}" in err.readouterr().err


def compare_decoder(
    case: Path,
    version: str,
    partition: str,
    records: list[tuple[bytes | None, bytes | None]],
    ts: int,
    flag: str,
    skip: bool,
    **decoder: Any,
) -> str:
    """:func:`write_log` ``records`` into ``partition``, then :func:`compare_with_tool` with the
    decoder ``flag`` (``decoder``: ``dump``'s option for it), with or without
    ``--skip-record-metadata``."""
    log = write_log(case, partition, records, ts)
    extra = [flag] + (["--skip-record-metadata"] if skip else [])
    return compare_with_tool(version, case, [log], extra, skip_record_metadata=skip, **decoder)
