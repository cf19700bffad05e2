"""Test support for ``tests/test_replay.py``: a Spark Python worker killed in mid-task.

This directory goes on the Python workers' ``PYTHONPATH`` (``spark.executorEnv.PYTHONPATH``:
Spark merges it into the ``PYTHONPATH`` of pyspark's daemon and of the workers it forks), so
this file is their interpreter's ``sitecustomize``. In a process whose environment has
``KAFKA_CONFORMANCE_TEST_KILL=<range id>:<marker path>`` it wraps
``conformance.replay.task.RangeReplay.rows`` once that module is imported (lazily: pyspark's
daemon must not import anything heavy before it forks). The wrapper lets each column chunk
of that range go to the task's Parquet writer; when the task comes back for the next one,
the first attempt creates the marker file (exclusively), writes what it is into it (pid,
Spark's task attempt number, stage and partition, the path of the module it wrapped) and
kills its own Python worker with SIGKILL, as a lost executor would: no exception, no
cleanup. Attempts that find the marker run normally and append the same facts as a line to
``<marker>.retries``.

Without the variable this file does nothing. Production code knows nothing of it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

VARIABLE = "KAFKA_CONFORMANCE_TEST_KILL"
TARGET = "conformance.replay.task"


def _facts(module: ModuleType) -> dict[str, Any]:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return {
        "pid": os.getpid(),
        "attempt": None if ctx is None else ctx.attemptNumber(),
        "stage": None if ctx is None else ctx.stageId(),
        "partition": None if ctx is None else ctx.partitionId(),
        "module": module.__file__,
    }


def _kill_once(module: ModuleType, marker: str) -> None:
    facts = json.dumps(_facts(module)).encode()
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:  # a later attempt: note it, go on
        with open(marker + ".retries", "ab") as f:
            f.write(facts + b"\n")
        return
    try:
        os.write(fd, facts)
    finally:
        os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


def _wrap(module: ModuleType, range_id: int, marker: str) -> None:
    original = module.RangeReplay.rows

    def rows(self: Any) -> Iterator[Any]:
        for columns in original(self):
            yield columns  # written to the part when the task asks for the next chunk
            if self.range.range_id == range_id:
                _kill_once(module, marker)

    module.RangeReplay.rows = rows


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps :data:`TARGET` right after it is executed."""

    def __init__(self, range_id: int, marker: str) -> None:
        self.range_id = range_id
        self.marker = marker

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module
        finder = self

        def exec_and_wrap(module: ModuleType) -> None:
            exec_module(module)
            _wrap(module, finder.range_id, finder.marker)

        loader.exec_module = exec_and_wrap  # type: ignore[method-assign]
        return spec


def _install(spec: str) -> None:
    range_id, _, marker = spec.partition(":")
    if TARGET in sys.modules:
        _wrap(sys.modules[TARGET], int(range_id), marker)
    else:
        sys.meta_path.insert(0, _Finder(int(range_id), marker))


if os.environ.get(VARIABLE):
    _install(os.environ[VARIABLE])
