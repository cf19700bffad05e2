"""Running Kafka's DumpLogSegments and ``dump`` side by side (tests of the dump decoders)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

from conformance.corpus.golden import first_trace_line_only
from conformance.logdir.dump import dump
from conformance.logdir.dump.formats import format_of


def compare_with_tool(
    version: str, case: Path, files: list[str], extra_args: list[str], **dump_options: Any
) -> str:
    """Kafka ``version``'s tool and ``dump`` in that release's format on ``files`` (relative
    to ``case``, the working directory of both): the same stdout, stderr up to the JVM's
    exception line, and exit status. Returns the tool's stdout."""
    from conformance.jvm import kafka_jars

    try:
        java = kafka_jars.dump_log_segments(version, files, cwd=case, extra_args=extra_args)
    except kafka_jars.KafkaJarsUnavailable as e:  # pragma: no cover
        pytest.skip(str(e))
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
