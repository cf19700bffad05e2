"""The command line against hostile inputs: FIFOs, devices, directories, sockets, symbolic link
loops, unreadable files, huge sparse files, broken manifests, bad option values, odd file names.

Every case runs the real CLI in a subprocess (``python -m conformance.cli``) and asserts the
documented exit code, no Python traceback (nor ``Exception ignored`` noise) and a one-line
message naming the file and the problem. Cases that could hang on the old code run with a
timeout; cases that could exhaust memory run under an address-space limit.

Permission cases need a process that the kernel subjects to file permissions: as root, the
CLI runs as ``nobody`` (uid 65534) when that user can run this interpreter and import the
package, else as root without ``CAP_DAC_OVERRIDE``/``CAP_DAC_READ_SEARCH`` (dropped from the
bounding set before ``exec``: root then gets only the owner's permissions of a ``chmod 000``
file, i.e. none); not as root, as the current user.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conformance.logdir.writer import LogConfig, assign_offsets, write_batches
from conformance.stream.decoder import decode
from conformance.wire.builder import BatchBuilder

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60  # seconds; the old code blocked forever on FIFOs
MEMORY_CAP = 512 << 20  # RLIMIT_AS of every run (the old code read 3 GiB files whole)
SPARSE_SIZE = 3 << 30
NOBODY = 65534

Run = subprocess.CompletedProcess[str]


def run(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
    code: str | None = None,
) -> Run:
    """The CLI in a subprocess (``code``: a ``-c`` program instead of ``-m conformance.cli``),
    always under :data:`MEMORY_CAP` and :data:`TIMEOUT`."""
    head = ["-c", code] if code is not None else ["-m", "conformance.cli"]

    def before_exec() -> None:
        _cap_memory()
        if preexec_fn is not None:
            preexec_fn()

    return subprocess.run(
        [sys.executable, *head, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        cwd=cwd or ROOT,
        env=env,
        preexec_fn=before_exec,
        stdin=subprocess.DEVNULL,
        errors="backslashreplace",
    )


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def clean(r: Run, exit_code: int) -> None:
    """No traceback, no ``__del__`` noise, the expected exit code."""
    assert "Traceback" not in r.stderr, r.stderr
    assert "Exception ignored" not in r.stderr, r.stderr
    assert r.returncode == exit_code, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])


def message(r: Run, *needles: str) -> str:
    """The one stderr line holding every needle (the file and the problem)."""
    lines = [line for line in r.stderr.splitlines() if all(n in line for n in needles)]
    assert lines, f"no stderr line with {needles}: {r.stderr!r}"
    return lines[0]


def one_batch(records: int = 1, base: int = 0) -> bytes:
    b = BatchBuilder(base_offset=base)
    for i in range(records):
        b.append(1_700_000_000_000 + i, b"k", b"value-%d" % i)
    return b.build()


def partition(root: Path, batches: int = 30, segment_bytes: int = 1500) -> Path:
    """A writer-made partition directory ``root/topic-0`` of several segments."""
    raw = [one_batch(3) for _ in range(batches)]
    cfg = LogConfig(segment_bytes=segment_bytes, index_interval_bytes=200)
    return write_batches(root, assign_offsets(raw), config=cfg)


def logs(pdir: Path) -> list[Path]:
    return sorted(pdir.glob("*.log"))


# ------------------------------------------------------------------ non-regular files


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.fixture
def sock(tmp_path: Path) -> Iterator[Path]:
    # AF_UNIX paths are limited to ~107 bytes: bind in a short directory
    short = Path(tempfile.mkdtemp(prefix="kcs-"))
    path = short / "s.bin"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    try:
        yield path
    finally:
        s.close()
        shutil.rmtree(short, ignore_errors=True)


@pytest.mark.parametrize(
    "kind, problem",
    [
        ("fifo", "FIFO"),
        ("chardev", "character device"),
        ("directory", "directory"),
        ("socket", "socket"),
    ],
)
def test_decode_refuses_non_regular_files(
    tmp_path: Path, request: pytest.FixtureRequest, kind: str, problem: str
) -> None:
    if kind == "fifo":
        target = str(_fifo(tmp_path / "in.bin"))
    elif kind == "chardev":
        target = "/dev/zero"
    elif kind == "directory":
        target = str(tmp_path)
    else:
        target = str(request.getfixturevalue("sock"))
    r = run("decode", target, preexec_fn=_cap_memory)
    clean(r, 2)
    message(r, target, problem)


def test_decode_sparse_3gib_file_is_not_read_whole(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    with big.open("wb") as f:
        f.truncate(SPARSE_SIZE)  # zeros: size field 0 at byte 0, Kafka raises at once
    for mode in ("memory", "file"):  # under a 1 GiB address-space limit
        r = run("decode", "--as", mode, str(big), preexec_fn=_cap_memory)
        clean(r, 1)
        assert "CorruptRecordException" in r.stdout and "(byte 0)" in r.stdout, r.stdout


def test_decode_goes_on_after_a_missing_file(tmp_path: Path) -> None:
    good = tmp_path / "good.bin"
    other = tmp_path / "other.bin"
    good.write_bytes(one_batch(2))
    other.write_bytes(one_batch(3))
    missing = tmp_path / "missing.bin"
    r = run("decode", str(good), str(missing), str(other))
    clean(r, 2)
    message(r, str(missing), "No such file")
    assert f"{good}: ok" in r.stdout and f"{other}: ok" in r.stdout, r.stdout


def test_dump_refuses_fifo(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path / "00000000000000000000.log")
    r = run("dump", str(fifo))
    clean(r, 2)
    message(r, str(fifo), "FIFO")
    assert r.stdout == ""  # refused before anything is dumped


def test_lookup_refuses_fifo_index(tmp_path: Path) -> None:
    pdir = partition(tmp_path)
    index = logs(pdir)[0].with_suffix(".index")
    index.unlink()
    _fifo(index)
    r = run("lookup", str(pdir), "--offset", "0")
    clean(r, 2)
    message(r, str(index.name), "FIFO")


@pytest.mark.parametrize("kind, problem", [("directory", "directory"), ("loop", "symbolic links")])
def test_lookup_unusable_log(tmp_path: Path, kind: str, problem: str) -> None:
    pdir = partition(tmp_path)
    log = logs(pdir)[0]
    log.unlink()
    if kind == "directory":
        log.mkdir()
    else:
        os.symlink(log.name, log)  # a link to itself
    r = run("lookup", str(pdir), "--offset", "0")
    clean(r, 2)
    message(r, log.name, problem)


def test_verify_dir_reports_fifo_index_and_snapshot(tmp_path: Path) -> None:
    pdir = partition(tmp_path)
    assert run("verify-dir", str(pdir)).returncode == 0  # clean before
    index = logs(pdir)[1].with_suffix(".index")
    snap = next(pdir.glob("*.snapshot"))
    for p in (index, snap):
        p.unlink()
        _fifo(p)
    r = run("verify-dir", "--json", str(pdir))
    clean(r, 1)
    doc = json.loads(r.stdout)
    bad = {(Path(f["file"]).name, f["severity"]) for f in doc["findings"]}
    assert (index.name, "error") in bad and (snap.name, "error") in bad, doc["findings"]
    assert not doc["ok"]


def test_verify_dir_refuses_fifo_argument(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path / "00000000000000000000.log")
    r = run("verify-dir", str(fifo))
    clean(r, 2)
    message(r, str(fifo), "FIFO")


# ------------------------------------------------------------------------- verify


def _case(root: Path, log_size: int | None = None, manifest: dict | None = None) -> Path:
    """``root/b-1/s`` with one .log; manifest listing it (with the real size, unless given)."""
    case = root / "kafka-3.9.2-kraft" / "s"
    log = case / "log" / "t-0" / "00000000000000000000.log"
    log.parent.mkdir(parents=True)
    data = one_batch(2)
    log.write_bytes(data)
    if log_size is not None:
        with log.open("r+b") as f:
            f.truncate(log_size)
    if manifest is None:
        manifest = {
            "format": "kafka-conformance/corpus/1",
            "broker_version": "2.8.2",
            "files": [
                {
                    "path": "log/t-0/00000000000000000000.log",
                    "sha256": "0" * 64,
                    "size": len(data),
                    "kind": "log",
                }
            ],
        }
    (case / "manifest.json").write_text(json.dumps(manifest))
    return case


def test_verify_empty_directory_fails(tmp_path: Path) -> None:
    r = run("verify", str(tmp_path))
    clean(r, 2)
    message(r, str(tmp_path), "nothing to verify")
    assert "PASS" not in r.stdout


@pytest.mark.parametrize("where", ["case", "corpus"])
def test_verify_case_without_manifest_fails(tmp_path: Path, where: str) -> None:
    case = _case(tmp_path)
    (case / "manifest.json").unlink()
    r = run("verify", str(case if where == "case" else tmp_path))
    clean(r, 1)
    assert "PASS" not in r.stdout
    assert any("manifest.json" in line and "missing" in line for line in r.stdout.splitlines()), (
        r.stdout
    )


def test_verify_manifest_files_not_a_list(tmp_path: Path) -> None:
    case = _case(
        tmp_path,
        manifest={"format": "kafka-conformance/corpus/1", "broker_version": "2.8.2", "files": 5},
    )
    r = run("verify", "-j", "1", str(case))
    clean(r, 1)
    assert "files" in r.stdout and "FAIL" in r.stdout


def test_verify_huge_log_with_small_manifest_size_is_not_read(tmp_path: Path) -> None:
    case = _case(tmp_path, log_size=SPARSE_SIZE)
    rel = "log/t-0/00000000000000000000.log"
    expected = case / "expected" / (rel + ".decode.json")
    expected.parent.mkdir(parents=True)
    expected.write_text('{"outcome": "ok"}')  # a decode check would read the file
    listed = json.loads((case / "manifest.json").read_text())["files"][0]["size"]
    r = run("verify", "-j", "1", str(case), preexec_fn=_cap_memory)
    clean(r, 1)
    lines = [
        line
        for line in r.stdout.splitlines()
        if str(SPARSE_SIZE) in line and str(listed) in line and "manifest" in line
    ]
    assert lines, r.stdout


@pytest.mark.parametrize("option", ["--json", "--junit"])
@pytest.mark.parametrize("problem", ["directory", "missing-parent"])
def test_verify_report_output_not_writable(tmp_path: Path, option: str, problem: str) -> None:
    case = _case(tmp_path / "corpus")
    out = tmp_path / "out" if problem == "directory" else tmp_path / "nope" / "r.out"
    if problem == "directory":
        out.mkdir()
    r = run("verify", str(case), option, str(out))
    clean(r, 2)
    message(r, option, str(out))


def test_verify_diff_labels_expected_and_actual(tmp_path: Path) -> None:
    case = _case(tmp_path)
    rel = "log/t-0/00000000000000000000.log"
    doc = decode((case / rel).read_bytes(), mode="file", filename=rel).to_dict()
    doc["batches"][0]["records"][0]["offset"] = "42"
    expected = case / "expected" / (rel + ".decode.json")
    expected.parent.mkdir(parents=True)
    expected.write_text(json.dumps(doc))
    r = run("verify", "-j", "1", str(case))
    clean(r, 1)
    lines = r.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if f"decode {rel} (mismatch)" in line)
    shown = "\n".join(lines[at + 1 : at + 3])
    assert "'42'" in shown  # the difference itself
    assert "expected" in shown and "actual" in shown and "oracle" in shown and "decoder" in shown


# ---------------------------------------------------------------- capture, fuzz


def test_capture_without_kafka_jars(tmp_path: Path) -> None:
    env = dict(os.environ, KAFKA_CONFORMANCE_ROOT=str(tmp_path / "root"), TMPDIR=str(tmp_path))
    (tmp_path / "root").mkdir()
    r = run(
        "capture",
        "--broker",
        "kafka-3.9.2-kraft",
        "--scenario",
        "all",
        "--out",
        str(tmp_path / "out"),
        "--no-expectations",
        env=env,
    )
    clean(r, 2)
    message(r, "3.9.2", "jars", "scripts/fetch-kafka-jars")


def test_fuzz_coverage_without_coverage_package() -> None:
    program = (
        "import runpy, sys; sys.modules['coverage'] = None; "
        "sys.argv = ['kafka-conformance', 'fuzz', '--coverage', 'varint']; "
        "runpy.run_module('conformance.cli', run_name='__main__')"
    )
    r = run(code=program)
    clean(r, 2)
    message(r, "coverage", "fuzz")


def test_fuzz_replay_refuses_fifo(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path / "input.bin")
    r = run("fuzz", "--replay", str(fifo), "varint")
    clean(r, 2)
    message(r, str(fifo), "FIFO")


# ---------------------------------------------------------------- out of memory

_RAISE_MEMORY_ERROR = (
    "import runpy, sys\n"
    "import {module} as m\n"
    "def boom(*args, **kwargs):\n"
    "    raise MemoryError\n"
    "m.{name} = boom\n"
    "sys.argv = ['kafka-conformance', *sys.argv[1:]]\n"
    "runpy.run_module('conformance.cli', run_name='__main__')\n"
)


def test_memory_error_in_decode_is_a_message(tmp_path: Path) -> None:
    """A MemoryError the decoder does not turn into Kafka's OutOfMemoryError verdict itself
    (simulated: real ones need a machine without memory) names the file, the others go on."""
    first, second = tmp_path / "a.bin", tmp_path / "b.bin"
    for p in (first, second):
        p.write_bytes(one_batch(1))
    program = _RAISE_MEMORY_ERROR.format(module="conformance.cli.decode", name="_write_summary")
    r = run("decode", str(first), str(second), code=program)
    clean(r, 2)
    message(r, str(first), "memory")
    message(r, str(second), "memory")


def test_memory_error_in_any_command_is_a_message(tmp_path: Path) -> None:
    pdir = partition(tmp_path)
    program = _RAISE_MEMORY_ERROR.format(module="conformance.cli.lookup", name="lookup_offset")
    r = run("lookup", str(pdir), "--offset", "0", code=program)
    clean(r, 2)
    message(r, "lookup", "out of memory")


# ---------------------------------------------------------------- option values


@pytest.mark.parametrize(
    "args, option",
    [
        (["decode", "--max-decompressed", "-5", "x.bin"], "--max-decompressed"),
        (["verify", "-j", "-3"], "-j/--jobs"),
        (["lookup", ".", "--offset", "12345678901234567890123"], "--offset"),
        (["lookup", ".", "--offset", "-1"], "--offset"),
        (["lookup", ".", "--timestamp", "-3"], "--timestamp"),
        (["fuzz", "--list", "--time", "-5"], "--time"),
    ],
)
def test_bad_option_values_are_usage_errors(args: list[str], option: str) -> None:
    r = run(*args)
    clean(r, 2)
    message(r, "error: argument", option)


def test_lookup_latest_and_earliest_timestamps(tmp_path: Path) -> None:
    pdir = partition(tmp_path)
    assert len(logs(pdir)) >= 3
    # the answers computed independently: every batch of every segment, decoded
    every = [b for log in logs(pdir) for b in decode(log.read_bytes(), mode="file").batches]
    log_end = every[-1].header.last_offset + 1
    first_base = int(logs(pdir)[0].name.split(".")[0])
    r = run("lookup", str(pdir), "--timestamp", "-1", "--json")
    clean(r, 0)
    assert json.loads(r.stdout)["recordOffset"] == str(log_end)
    r = run("lookup", str(pdir), "--timestamp", "-2", "--json")
    clean(r, 0)
    assert json.loads(r.stdout)["recordOffset"] == str(first_base)
    # a log-start-offset-checkpoint above the first segment's base offset wins (LogLoader)
    start = every[len(every) // 2].header.last_offset
    (tmp_path / "log-start-offset-checkpoint").write_text(f"0\n1\ntopic 0 {start}\n")
    r = run("lookup", str(pdir), "--timestamp", "-2", "--json")
    clean(r, 0)
    doc = json.loads(r.stdout)
    assert doc["recordOffset"] == str(start) and doc["recordTimestamp"] == "-1"
    holder = next(b for b in every if b.header.last_offset >= start)
    assert doc["batch"]["lastOffset"] == str(holder.header.last_offset)
    r = run("lookup", str(pdir), "--timestamp", "-1")
    clean(r, 0)
    assert str(log_end) in r.stdout


def test_help_documents_exit_codes() -> None:
    for command in ("decode", "dump", "verify-dir", "lookup", "verify", "capture", "fuzz"):
        r = run(command, "--help")
        clean(r, 0)
        assert "exit codes:" in r.stdout, command
    assert "-1" in run("lookup", "--help").stdout and "LATEST" in run("lookup", "--help").stdout


# ---------------------------------------------------------------- small things


def test_decode_singular_counts(tmp_path: Path) -> None:
    one = tmp_path / "one.bin"
    one.write_bytes(one_batch(1))
    r = run("decode", str(one))
    clean(r, 0)
    assert r.stdout.splitlines()[0] == f"{one}: ok, 1 batch, 1 record"
    two = tmp_path / "two.bin"
    two.write_bytes(one_batch(2) + one_batch(1, base=2))
    assert run("decode", str(two)).stdout.splitlines()[0] == f"{two}: ok, 2 batches, 3 records"


def test_control_characters_in_file_names_are_escaped(tmp_path: Path) -> None:
    odd = tmp_path / "a\nb\x1b[2J.bin"
    odd.write_bytes(one_batch(1))
    r = run("decode", str(odd))
    clean(r, 0)
    assert r.stdout.splitlines()[0].startswith(f"{tmp_path}/a\\nb\\x1b[2J.bin: ok")
    r = run("decode", str(tmp_path / "gone\n.bin"))
    clean(r, 2)
    assert len(r.stderr.strip().splitlines()) == 1 and "gone\\n.bin" in r.stderr
    # verify-dir: a file with a newline in its name gets one finding line, escaped
    pdir = partition(tmp_path / "p")
    (pdir / "x\ny").write_bytes(b"")
    r = run("verify-dir", str(pdir))
    clean(r, 1)
    assert "x\\ny" in r.stdout and "\ny\n" not in r.stdout


# ---------------------------------------------------------------- permissions


def _as_nobody() -> None:
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def _without_dac_override() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.fixture
def world_dir() -> Iterator[Path]:
    """A directory every user can traverse (pytest's tmp_path is private to root)."""
    d = Path(tempfile.mkdtemp(prefix="kc-hostile-"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        for p in [d, *d.rglob("*")]:
            if not p.is_symlink():
                p.chmod(0o755 if p.is_dir() else 0o644)
        shutil.rmtree(d, ignore_errors=True)


@functools.cache
def _unprivileged(probe_dir: str) -> tuple[Callable[[], None] | None, str]:
    """How to run the CLI so that a ``chmod 000`` file is unreadable for it, or a skip reason."""
    secret = Path(probe_dir) / "probe.bin"
    secret.write_bytes(b"x")
    secret.chmod(0)
    check = (
        f"import conformance.cli\ntry:\n    open({str(secret)!r}, 'rb')\n"
        "except PermissionError:\n    raise SystemExit(0)\nraise SystemExit(3)"
    )
    if os.geteuid() != 0:
        r = run(code=check, cwd=Path(probe_dir))
        if r.returncode == 0:
            return None, ""
        return None, f"cannot make an unreadable file as uid {os.geteuid()}"
    reasons = []
    for how, name in (
        (_as_nobody, f"uid {NOBODY} (nobody)"),
        (_without_dac_override, "root without CAP_DAC_OVERRIDE"),
    ):
        try:
            r = run(code=check, cwd=Path(probe_dir), preexec_fn=how)
        except (OSError, subprocess.SubprocessError) as e:
            reasons.append(f"{name}: {e}")
            continue
        if r.returncode == 0:
            return how, ""
        reasons.append(f"{name}: exit {r.returncode} {r.stderr.strip()[-200:]}")
    return None, (
        "no unprivileged way to run the CLI here (the interpreter "
        f"{sys.executable} and the checkout must be readable by others): " + "; ".join(reasons)
    )


def unprivileged(world: Path) -> Callable[[], None] | None:
    probe = world / "probe"
    probe.mkdir()
    probe.chmod(0o755)
    how, reason = _unprivileged(str(probe))
    if reason:
        pytest.skip(reason)
    return how


def _unreadable(path: Path) -> Path:
    path.chmod(0)
    return path


def test_lookup_unreadable_log(world_dir: Path) -> None:
    how = unprivileged(world_dir)
    pdir = partition(world_dir)
    log = _unreadable(logs(pdir)[0])
    r = run("lookup", str(pdir), "--offset", "0", cwd=world_dir, preexec_fn=how)
    clean(r, 2)
    message(r, log.name, "Permission denied")


def test_verify_unreadable_log(world_dir: Path) -> None:
    how = unprivileged(world_dir)
    case = _case(world_dir)
    rel = "log/t-0/00000000000000000000.log"
    _unreadable(case / rel)
    r = run("verify", "-j", "1", str(case), cwd=world_dir, preexec_fn=how)
    clean(r, 1)
    assert any(rel in line and "error" in line for line in r.stdout.splitlines()), r.stdout
    assert "Permission denied" in r.stdout


def test_decode_unreadable_file_among_others(world_dir: Path) -> None:
    how = unprivileged(world_dir)
    good = world_dir / "good.bin"
    good.write_bytes(one_batch(1))
    secret = world_dir / "secret.bin"
    secret.write_bytes(one_batch(1))
    _unreadable(secret)
    r = run("decode", str(secret), str(good), cwd=world_dir, preexec_fn=how)
    clean(r, 2)
    message(r, str(secret), "Permission denied")
    assert f"{good}: ok" in r.stdout
    assert stat.S_IMODE(secret.stat().st_mode) == 0


@pytest.mark.parametrize(
    "args, code, needle",
    [
        (["decode", "{fifo}"], 2, "FIFO"),
        (["decode", "/dev/zero"], 2, "character device"),
        (["decode", "{missing}", "{good}"], 2, "No such file"),
        (["dump", "{fifo}"], 2, "FIFO"),
        (["verify-dir", "{fifo}"], 2, "FIFO"),
        (["lookup", "{loop}", "--offset", "0"], 2, "loop"),
        (["verify", "{empty}"], 2, "nothing to verify"),
        (["decode", "--max-decompressed", "-5", "{good}"], 2, "--max-decompressed"),
        (["lookup", "{pdir}", "--offset", "1" * 23], 2, "--offset"),
    ],
    ids=[
        "decode-fifo",
        "decode-dev-zero",
        "decode-missing",
        "dump-fifo",
        "verify-dir-fifo",
        "lookup-loop",
        "verify-empty",
        "bad-max-decompressed",
        "bad-offset",
    ],
)
def test_hostile_inputs_as_an_unprivileged_user(
    world_dir: Path, args: list[str], code: int, needle: str
) -> None:
    """The same verdicts for a user the kernel holds to file permissions (not root)."""
    how = unprivileged(world_dir)
    pdir = partition(world_dir)
    fifo = _fifo(world_dir / "f.bin")
    good = world_dir / "good.bin"
    good.write_bytes(one_batch(2))
    loop = world_dir / "loop"
    loop.symlink_to(loop)
    empty = world_dir / "empty"
    empty.mkdir()
    for p in (pdir, *pdir.iterdir(), good, empty):
        p.chmod(0o755 if p.is_dir() else 0o644)
    argv = [
        a.format(
            fifo=fifo,
            missing=world_dir / "missing.bin",
            good=good,
            loop=loop,
            empty=empty,
            pdir=pdir,
        )
        for a in args
    ]
    r = run(*argv, cwd=world_dir, preexec_fn=how)
    clean(r, code)
    assert needle in r.stderr, r.stderr
