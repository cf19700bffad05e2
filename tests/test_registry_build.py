"""Building a built-in adapter leaves nothing running: each build step runs in a session of its
own, and whatever it started is stopped when the step ends, fails or is interrupted (Ctrl-C
during ``check``'s build of an adapter used to leave ``cargo`` running)."""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.harness import registry
from conformance.jvm import runtime


@pytest.fixture
def adapter_dir(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / f"kit-test-build-{uuid.uuid4().hex[:12]}"
    d.mkdir()
    yield d
    shutil.rmtree(runtime.cache_root() / "adapters" / d.name, ignore_errors=True)


def _adapter(d: Path, script: str) -> registry.Adapter:
    (d / "adapter.toml").write_text(
        'library = "test"\nversion = "0"\ntoolchain = ["sh"]\n'
        f"[build]\nsteps = [[\"sh\", \"-c\", '''{script}''']]\n"
        '[[impl]]\nname = "kit-test-build"\ncommand = ["true"]\n'
    )
    (adapter,) = registry.adapters(d.parent)
    return adapter


def _gone(pid: int, seconds: float = 10.0) -> bool:
    """``pid`` ended (no process, or a zombie waiting for its reaper)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def _pids(d: Path) -> list[int]:
    return [int(p.read_text()) for p in sorted(d.glob("*.pid"))]


def test_a_step_that_fails_leaves_no_process(adapter_dir: Path) -> None:
    adapter = _adapter(adapter_dir, f"sleep 300 & echo $! > {adapter_dir}/bg.pid; exit 3")
    with pytest.raises(registry.AdapterBuildError, match="exit 3"):
        registry.build(adapter)
    (pid,) = _pids(adapter_dir)
    assert _gone(pid), "the step's background process was left running"


def test_a_build_interrupted_by_ctrl_c_leaves_no_process(adapter_dir: Path) -> None:
    script = (
        f"sleep 300 & echo $! > {adapter_dir}/bg.pid; "
        f"sleep 300 & echo $! > {adapter_dir}/fg.pid; wait"
    )
    adapter = _adapter(adapter_dir, script)

    def interrupt() -> None:
        deadline = time.monotonic() + 30
        while len(_pids(adapter_dir)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            registry.build(adapter)
    finally:
        signal.signal(signal.SIGINT, previous)
    pids = _pids(adapter_dir)
    assert len(pids) == 2
    assert all(_gone(pid) for pid in pids), "the interrupted step's processes were left running"


def test_a_step_that_succeeds_is_built_once(adapter_dir: Path) -> None:
    count = adapter_dir.parent / "count"  # outside the directory: its files are in the hash
    adapter = _adapter(adapter_dir, f"echo built >> {count}")
    first = registry.build(adapter)
    again = registry.build(adapter)
    assert first.build_seconds is not None and again.build_seconds is None
    assert count.read_text() == "built\n"
    log = next((runtime.cache_root() / "adapters" / adapter_dir.name).glob("*.log"))
    assert log.read_text().startswith("$ sh -c echo built")
