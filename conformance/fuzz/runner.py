"""Running targets for a time budget: workers, restarts, artifacts, minimization, summary.

``run_target`` starts ``jobs`` libFuzzer processes (``harness.py`` beside this module, run as
a script: see its docstring) on one shared working
corpus (libFuzzer reloads it, so the workers see each other's finds), each bounded per input
(``-timeout``, ``-rss_limit_mb``; ``-max_len``). A worker the engine kills (a hang or memory
blow-up) leaves an artifact; it is filed as a finding and the worker restarts for the time
left. Exceptions never kill a worker: they are filed by the worker itself (``store``). At the
end new crashes and divergences are minimized and a summary (executions, exec/s, corpus,
findings) is written to ``<out>/summary/<target>.json``. A run that executed no input is an
error (``RuntimeError`` with the worker's log), never an empty summary.

Files the runner reads: in a checkout (or ``$KAFKA_CONFORMANCE_ROOT``), the seeds come from
``corpora/`` and the merged corpus ``fuzz/corpus/<target>/`` is fuzzed too; an installed
package has neither and seeds from the kit's own crafted cases and a written partition
directory instead (``seeds``). The dictionaries are package data (``dicts/``).

Directories (``<out>`` defaults to :func:`default_out`: ``<checkout>/.cache/fuzz``, or in an
installed package ``$XDG_CACHE_HOME/kafka-conformance/fuzz``, i.e. by default
``~/.cache/kafka-conformance/fuzz``)::

    <out>/corpus/<target>/     working corpus (grows; ``--merge`` folds it into fuzz/corpus)
    <out>/seeds/<target>/      seeds extracted from corpora/ (rewritten each run)
    <out>/builtin/corpora/     the built-in stand-in for corpora/ (no checkout; rewritten)
    <out>/findings/<target>/   findings (see ``store``)
    <out>/logs/<target>-<job>-<n>.log   libFuzzer output
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from conformance.fuzz import store
from conformance.fuzz.produce import pinned_broker
from conformance.fuzz.seeds import seed_root
from conformance.fuzz.targets import MAX_LEN, Target, get
from conformance.host import sessions
from conformance.host.progress import Status
from conformance.jvm.runtime import NoCheckout, cache_root, checkout_root, no_checkout_message

_PULSE = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/(\S+).*?exec/s: (\d+)")
#: the atheris entry point (a script: it must import the core itself, under instrumentation)
HARNESS = Path(__file__).with_name("harness.py")
#: libFuzzer dictionaries, by ``Target.dictionary`` name (package data)
DICTS = Path(__file__).with_name("dicts")

_ARTIFACT_KINDS = {
    "timeout": "timeout",
    "oom": "oom",
    "crash": "crash",
    "leak": "oom",
    "slow-unit": "slow",
}


@dataclass
class RunSummary:
    target: str
    seconds: float
    jobs: int
    differential: bool
    execs: int = 0
    exec_per_sec: float = 0.0
    slowest_input_s: float = 0.0
    differential_inputs: int = 0
    restarts: int = 0
    coverage: int = 0
    features: int = 0
    corpus_files: int = 0
    findings: dict[str, int] = field(default_factory=dict)
    new_findings: list[str] = field(default_factory=list)
    #: the broker version every input was judged on (``produce`` with ``--broker``)
    broker: str | None = None
    #: the target's own counters summed over its workers (``Target.counters``; e.g. the
    #: ``native`` target's regions accepted / declined by the extension), as of each worker's
    #: last stats write (every couple of seconds)
    counters: dict[str, int] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """A finding of the kit's own (third-party divergences and slow inputs do not fail)."""
        return any(
            k in ("crash", "timeout", "oom", "divergence", "oracle")
            for k in (n.split("/")[0] for n in self.new_findings)
        )


def default_out() -> Path:
    """``<checkout>/.cache/fuzz``; in an installed package (no checkout),
    ``$XDG_CACHE_HOME/kafka-conformance/fuzz`` (default ``~/.cache/kafka-conformance/fuzz``)."""
    return cache_root() / "fuzz"


def paths(out: Path, target: str) -> dict[str, Path]:
    return {
        "corpus": out / "corpus" / target,
        "seeds": out / "seeds" / target,
        "findings": out / "findings",
        "logs": out / "logs",
        "artifacts": out / "artifacts" / target,
        "summary": out / "summary",
        "stats": out / "stats" / target,
    }


def write_seeds(target_name: str, dest: Path, root: Path) -> int:
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    n = 0
    for data in get(target_name).seeds(root):
        (dest / hashlib.sha1(data).hexdigest()).write_bytes(data)
        n += 1
    return n


def _worker_command(
    target: str,
    p: dict[str, Path],
    root: Path | None,
    *,
    seconds: int,
    differential: bool,
    stats: Path,
    max_len: int,
    timeout: int,
    rss_limit_mb: int,
    extra: list[str],
) -> list[str]:
    t = get(target)
    command = [
        sys.executable,
        str(HARNESS),
        target,
        "--findings",
        str(p["findings"]),
        "--stats",
        str(stats),
        f"-max_total_time={seconds}",
        f"-timeout={timeout}",
        f"-rss_limit_mb={rss_limit_mb}",
        f"-max_len={max_len}",
        "-print_final_stats=1",
        "-reload=10",
        f"-artifact_prefix={p['artifacts']}{os.sep}",
        f"-report_slow_units={max(1, timeout // 2)}",
    ]
    if differential:
        command.insert(3, "--differential")
    dictionary = DICTS / t.dictionary
    if dictionary.exists():
        command.append(f"-dict={dictionary}")
    command += extra
    command += [str(p["corpus"])]
    committed = root / "fuzz" / "corpus" / target if root is not None else None
    if committed is not None and committed.is_dir():
        command.append(str(committed))
    command.append(str(p["seeds"]))
    return command


def _last_pulse(log: Path) -> tuple[int, int, int, int] | None:
    try:
        with open(log, "rb") as f:
            f.seek(max(0, os.path.getsize(log) - 16384))
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        m = _PULSE.match(line)
        if m:
            return int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(6))
    return None


def _final_execs(log: Path) -> int | None:
    try:
        with open(log, "rb") as f:
            f.seek(max(0, os.path.getsize(log) - 4096))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    m = re.search(r"stat::number_of_executed_units: (\d+)", text)
    return int(m.group(1)) if m else None


def _collect_artifacts(
    target: str, p: dict[str, Path], log: Path, st: store.FindingStore, summary: RunSummary
) -> None:
    tail = ""
    if log.exists():
        tail = log.read_bytes()[-8000:].decode("utf-8", "replace")
    for f in sorted(p["artifacts"].glob("*")):
        prefix = f.name.rsplit("-", 1)[0]
        kind = _ARTIFACT_KINDS.get(prefix)
        if kind is None:
            continue
        if st.artifact(kind, f.read_bytes(), tail):
            summary.new_findings.append(f"{kind}/{target}/{f.name}")
        f.unlink()


def _no_input_run(target: str, seconds: int, runs: int, logs: Path) -> None:
    """A run that executed nothing must not look like a clean run (exit 0, "none" found)."""
    if runs == 0:
        raise RuntimeError(
            f"fuzz {target}: no input was run: --time {seconds} is too short "
            "to start a worker (give at least 3 seconds)"
        )
    last = max(logs.glob(f"{target}-*.log"), key=lambda f: f.stat().st_mtime, default=None)
    tail = last.read_bytes()[-2000:].decode("utf-8", "replace") if last is not None else ""
    raise RuntimeError(
        f"fuzz {target}: no input was run ({runs} worker start(s)); last log {last}:\n{tail}"
    )


def run_target(
    target_name: str,
    *,
    seconds: int,
    jobs: int = 1,
    differential: bool = False,
    out: Path | None = None,
    max_len: int | None = None,
    timeout: int = 10,
    rss_limit_mb: int = 2048,
    minimize_seconds: float = 30.0,
    extra: list[str] | None = None,
    progress: Status | None = print,
    broker: str | None = None,
) -> RunSummary:
    """Fuzz one target for ``seconds`` with ``jobs`` workers; ``broker`` pins the broker
    version of the ``produce`` target (else each input's selector byte picks one)."""
    target = get(target_name)
    if differential and not target.differential:
        raise ValueError(f"target {target.name!r} has no differential oracle")
    why = target.unavailable() if target.unavailable is not None else None
    if why:
        raise RuntimeError(f"fuzz {target.name}: cannot run: {why}")
    if broker is not None and target.oracle != "broker":
        raise ValueError(f"--broker applies to the produce target, not {target.name!r}")
    if target.oracle == "broker":
        from conformance.jvm.kafka_jars import use_kafka2_zstd

        use_kafka2_zstd()  # here for the minimizer; each worker does the same (worker.build)
    with pinned_broker(broker):
        return _run_target(
            target,
            seconds=seconds,
            jobs=jobs,
            differential=differential,
            out=out,
            max_len=max_len,
            timeout=timeout,
            rss_limit_mb=rss_limit_mb,
            minimize_seconds=minimize_seconds,
            extra=extra,
            progress=progress,
            broker=broker,
        )


def _run_target(
    target: Target,
    *,
    seconds: int,
    jobs: int,
    differential: bool,
    out: Path | None,
    max_len: int | None,
    timeout: int,
    rss_limit_mb: int,
    minimize_seconds: float,
    extra: list[str] | None,
    progress: Status | None,
    broker: str | None,
) -> RunSummary:
    root = checkout_root()
    out = Path(out or default_out())
    p = paths(out, target.name)
    for key in ("corpus", "findings", "logs", "artifacts", "summary"):
        p[key].mkdir(parents=True, exist_ok=True)
    shutil.rmtree(p["stats"], ignore_errors=True)
    p["stats"].mkdir(parents=True)
    say = progress or (lambda _msg: None)
    seeds_from, built_in = seed_root(out / "builtin")
    n_seeds = write_seeds(target.name, p["seeds"], seeds_from)
    if differential:
        from conformance.jvm.oracle import ensure_built

        if checkout_root() is None:
            raise NoCheckout(
                no_checkout_message(
                    "--differential (the Java oracle is built from its oracle/ folder)"
                )
            )

        if target.oracle == "broker":
            from conformance.jvm import broker_oracle

            for version in [broker] if broker else broker_oracle.SUPPORTED_VERSIONS:
                broker_oracle.ensure_built(version)  # once here, not in every worker
        else:
            ensure_built()  # build once here, not in every worker at once
    before = {f.path.name for f in store.read_findings(p["findings"], target.name)}
    summary = RunSummary(target.name, seconds, jobs, differential, broker=broker)
    say(
        f"fuzz {target.name}: {seconds}s x {jobs} job(s){' differential' if differential else ''}"
        f"{f' on Kafka {broker}' if broker else ''}, "
        f"{n_seeds} seeds{' (built in: no checkout corpora/)' if built_in else ''}, "
        f"findings -> {p['findings'] / target.name}"
    )
    st = store.FindingStore(p["findings"], target.name)
    for old_log in p["logs"].glob(f"{target.name}-*.log"):
        old_log.unlink()
    started_at = time.time() - 1
    deadline = time.monotonic() + seconds
    workers: dict[int, tuple[subprocess.Popen[bytes], Path, float]] = {}
    runs = 0
    quick_exits = 0

    def start(job: int) -> None:
        nonlocal runs
        left = int(deadline - time.monotonic())
        if left < 2:
            return
        runs += 1
        log = p["logs"] / f"{target.name}-{job}-{runs}.log"
        stats = p["stats"] / f"{job}-{runs}.json"  # matches the log name after the target
        command = _worker_command(
            target.name,
            p,
            root,
            seconds=left,
            differential=differential,
            stats=stats,
            max_len=max_len or MAX_LEN,
            timeout=timeout,
            rss_limit_mb=rss_limit_mb,
            extra=list(extra or []),
        )
        with open(log, "wb") as f:
            proc = subprocess.Popen(
                command, stdout=f, stderr=subprocess.STDOUT, cwd=root if root is not None else out
            )
        workers[job] = (proc, log, time.monotonic())

    # SIGTERM (a CI timeout, ``kill``) stops the workers as Ctrl-C does: through ``finally``
    guarded = sessions.guard_sigterm()
    try:
        for job in range(jobs):
            start(job)
        last_report = time.monotonic()
        while workers:
            time.sleep(0.5)
            for job, (proc, log, started) in list(workers.items()):
                if proc.poll() is None:
                    continue
                del workers[job]
                _collect_artifacts(target.name, p, log, st, summary)
                if time.monotonic() < deadline - 2:
                    quick_exits = quick_exits + 1 if time.monotonic() - started < 5 else 0
                    if quick_exits >= 3:
                        tail = log.read_bytes()[-2000:].decode("utf-8", "replace")
                        raise RuntimeError(
                            f"the {target.name} worker keeps exiting at once; "
                            f"last log {log}:\n{tail}"
                        )
                    if proc.returncode != 0:
                        summary.restarts += 1
                        say(
                            f"  job {job}: worker exited ({proc.returncode}), restarting; log {log}"
                        )
                    start(job)
            if time.monotonic() - last_report >= 15 and workers:
                last_report = time.monotonic()
                pulses = [q for q in (_last_pulse(w[1]) for w in workers.values()) if q]
                if pulses:
                    execs = sum(q[0] for q in pulses)
                    rate = sum(q[3] for q in pulses)
                    left = max(0, int(deadline - time.monotonic()))
                    found = len(store.read_findings(p["findings"], target.name))
                    say(
                        f"  {target.name}: {execs} execs, {rate} exec/s, "
                        f"cov {max(q[1] for q in pulses)}, "
                        f"findings {found}, {left}s left"
                    )
    finally:

        def stop_workers() -> None:
            for proc, _log, _run in workers.values():
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()

        sessions.uninterrupted(stop_workers)
        if guarded:
            sessions.unguard_sigterm()

    # ---- totals: libFuzzer's final count when the worker ended normally, else the worker's
    # own (written every couple of seconds)
    for log in p["logs"].glob(f"{target.name}-*.log"):
        if log.stat().st_mtime < started_at:
            continue
        stats_file = p["stats"] / (log.stem.split("-", 1)[1] + ".json")
        doc: dict[str, float] = {}
        if stats_file.exists():
            try:
                doc = json.loads(stats_file.read_text())
            except ValueError:
                doc = {}
        final = _final_execs(log)
        execs = int(final if final is not None else doc.get("execs", 0))
        summary.execs += execs
        # inputs really compared with the oracle (the worker's count, every couple of seconds)
        summary.differential_inputs += int(doc.get("differential_inputs", 0))
        summary.slowest_input_s = max(summary.slowest_input_s, doc.get("slowest", 0.0))
        counted = doc.get("counters")
        if isinstance(counted, dict):
            for key, n in counted.items():
                summary.counters[key] = summary.counters.get(key, 0) + int(n)
    summary.exec_per_sec = round(summary.execs / seconds, 1) if seconds else 0.0
    pulses = [
        q
        for q in (
            _last_pulse(log)
            for log in p["logs"].glob(f"{target.name}-*.log")
            if log.stat().st_mtime >= started_at
        )
        if q
    ]
    if pulses:
        summary.coverage = max(q[1] for q in pulses)
        summary.features = max(q[2] for q in pulses)
    summary.corpus_files = sum(1 for _ in p["corpus"].iterdir())
    if summary.execs == 0:
        _no_input_run(target.name, seconds, runs, p["logs"])
    if summary.counters:
        say(
            f"  {target.name} counters: "
            + ", ".join(f"{k} {v}" for k, v in summary.counters.items())
        )

    # ---- new findings from the workers themselves, minimized
    differential_runner = None
    for finding in store.read_findings(p["findings"], target.name):
        summary.findings[finding.kind] = summary.findings.get(finding.kind, 0) + 1
        if finding.path.name in before:
            continue
        summary.new_findings.append(f"{finding.kind}/{target.name}/{finding.path.name}")
        if finding.kind in ("divergence", "kafka-python") and differential_runner is None:
            if target.oracle == "broker":
                from conformance.fuzz.produce import ProduceDifferential

                differential_runner = ProduceDifferential()
            else:
                from conformance.fuzz.differential import Differential

                differential_runner = Differential()
        from conformance.fuzz.minimize import minimize

        small = minimize(finding, differential=differential_runner, seconds=minimize_seconds)
        if small is not None:
            say(
                f"  minimized {finding.path.name}: "
                f"{finding.info.get('input_size')} -> {len(small)} bytes"
            )
    summary.new_findings = sorted(set(summary.new_findings))
    if differential_runner is not None:
        differential_runner.close()
    (p["summary"] / f"{target.name}.json").write_text(json.dumps(asdict(summary), indent=2) + "\n")
    return summary


def merge(
    target_name: str,
    out: Path | None = None,
    *,
    max_len: int | None = None,
    progress: Status | None = print,
) -> int:
    """Fold the working corpus into ``fuzz/corpus/<target>`` (libFuzzer ``-merge=1``: only
    inputs that add coverage are kept). Returns the number of files in the result.

    Needs a checkout (:class:`NoCheckout` otherwise): the merged corpus is kept in git."""
    target = get(target_name)
    root = checkout_root()
    if root is None:
        raise NoCheckout(no_checkout_message("--merge (it writes fuzz/corpus/<target>)"))
    out = Path(out or default_out())
    p = paths(out, target.name)
    dest = root / "fuzz" / "corpus" / target.name
    tmp = dest.with_name(dest.name + ".merging")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    sources = [str(d) for d in (dest, p["corpus"], p["seeds"]) if d.is_dir()]
    command = [
        sys.executable,
        str(HARNESS),
        target.name,
        "--findings",
        str(p["findings"]),
        "-merge=1",
        f"-max_len={max_len or MAX_LEN}",
        str(tmp),
        *sources,
    ]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(f"merge failed ({result.returncode}):\n{result.stderr[-3000:]}")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    n = sum(1 for _ in dest.iterdir())
    if progress:
        progress(f"merged {target.name}: {n} inputs in {dest}")
    return n


__all__ = [
    "DICTS",
    "HARNESS",
    "RunSummary",
    "default_out",
    "merge",
    "paths",
    "run_target",
    "write_seeds",
]
