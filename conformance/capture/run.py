"""``capture``: run scenarios on ONE real broker and harvest what it wrote (docs/corpora.md).

For a broker id: start one broker (backend ``jvm`` or ``testcontainers``), create one topic per
scenario (1 partition, the scenario's configs), run the scenario's producer, stop the broker
cleanly (indexes trimmed, producer snapshots written), copy ``<log_dir>/<topic>-0/`` (without
``.deleted``/``.cleaned``/``.swap`` files) into ``<out>/<broker_id>/<scenario>/log/<topic>-0/``,
write ``manifest.json`` and have ``conformance.corpus.golden.write_expectations`` write
``expected/``.
"""

from __future__ import annotations

import concurrent.futures
import shutil
import tempfile
import time
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformance.capture import BrokerSpec, CaptureResult, RunningBroker
from conformance.capture.brokers import BROKERS
from conformance.capture.produce_wire import create_topics
from conformance.capture.scenarios import Scenario, scenarios_for
from conformance.host.progress import Status

__all__ = ["CaptureResult", "all_brokers", "capture", "copy_partition", "start"]

SKIP_SUFFIXES = (".deleted", ".cleaned", ".swap")


def all_brokers(backend: str = "jvm") -> dict[str, BrokerSpec]:
    """The brokers ``backend`` can run: every one of ``capture.brokers.BROKERS``, on both."""
    return dict(BROKERS)


def start(
    spec: BrokerSpec, workdir: Path, backend: str = "jvm", image: str | None = None
) -> RunningBroker:
    """Start ``spec`` with ``backend``; ``image`` (testcontainers only) replaces the image
    built locally by another one (e.g. ``apache/kafka:3.9.2``)."""
    if backend == "jvm":
        if image is not None:
            raise ValueError("--image applies to the testcontainers backend only")
        from conformance.capture.jvm import start_broker

        return start_broker(spec, workdir)
    if backend == "testcontainers":
        from conformance.capture.testcontainers_backend import start_broker as start_container

        return start_container(spec, workdir, image=image)
    raise ValueError(f"unknown backend {backend!r} (jvm | testcontainers)")


def copy_partition(src: Path, dst: Path) -> list[Path]:
    """Copy the files of a partition directory (not ``.deleted``/``.cleaned``/``.swap``)."""
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    copied = []
    for f in sorted(src.iterdir()):
        if not f.is_file() or f.name.endswith(SKIP_SUFFIXES):
            continue
        shutil.copy2(f, dst / f.name)
        copied.append(dst / f.name)
    return copied


def _create_topic(broker: RunningBroker, topic: str, configs: dict[str, str]) -> None:
    """Create ``topic`` (1 partition, replication factor 1, ``configs``) and wait until it has
    a leader, so the first produce does not race the election."""
    failed = create_topics(broker.bootstrap, {topic: dict(configs)})
    if topic in failed:
        raise RuntimeError(f"{topic}: {failed[topic]}")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _write_case(
    case_dir: Path,
    broker: RunningBroker,
    scenario: Scenario,
    topic: str,
    producer: dict[str, Any],
    captured_at: str,
    broker_config: dict[str, str],
    expectations: bool = True,
) -> None:
    from conformance.corpus import golden as corpus

    spec = broker.spec
    corpus.write_manifest(
        case_dir,
        format=corpus.CORPUS_FORMAT,
        broker_id=spec.broker_id,
        broker_version=spec.version,
        broker_mode=spec.mode,
        broker_config=broker_config,
        java_version=broker.java_version,
        backend=broker.backend,
        **getattr(broker, "provenance", {}),
        scenario=scenario.name,
        description=scenario.description,
        producer=producer,
        topic=topic if scenario.source_dir is None else scenario.source_dir.rsplit("-", 1)[0],
        topic_configs=scenario.topic_configs,
        captured_at=captured_at,
        non_deterministic=list(scenario.non_deterministic),
    )
    write = getattr(corpus, "write_expectations", None)
    if write is not None and expectations:
        write(case_dir, spec.version)


def capture(
    broker_id: str,
    scenario_names: Sequence[str] | str,
    out_dir: Path,
    backend: str = "jvm",
    progress: Status = print,
    *,
    expectations: bool = True,
    keep_workdir: bool = False,
    workers: int = 2,
    image: str | None = None,
) -> CaptureResult:
    """Capture ``scenario_names`` (or "all") on one broker ``broker_id`` into ``out_dir``."""
    brokers = all_brokers(backend)
    if broker_id not in brokers:
        raise KeyError(f"unknown broker {broker_id!r}; known: {', '.join(brokers)}")
    spec = brokers[broker_id]
    chosen = scenarios_for(spec, scenario_names)
    result = CaptureResult(broker_id)
    if scenario_names != "all" and scenario_names != ["all"]:
        names = [scenario_names] if isinstance(scenario_names, str) else list(scenario_names)
        for n in names:
            if n not in {s.name for s in chosen}:
                result.skipped[n] = f"does not apply to {broker_id}"
    if not chosen:
        progress(f"{broker_id}: no scenario applies")
        return result
    out_dir = Path(out_dir).resolve()
    t_start = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix=f"capture-{broker_id}-"))
    produced: list[tuple[Scenario, str, dict[str, Any], str]] = []
    progress(f"{broker_id}: starting broker ({backend}) in {workdir}")
    try:
        with start(spec, workdir, backend, image) as broker:
            result.startup_seconds = time.monotonic() - t_start
            progress(f"{broker_id}: up at {broker.bootstrap} in {result.startup_seconds:.1f} s")
            for i, sc in enumerate(chosen, 1):
                topic = sc.topic_for()
                t0 = time.monotonic()
                try:
                    if sc.source_dir is None:
                        _create_topic(broker, topic, sc.topic_configs)
                    info = sc.run(broker, topic)
                    if sc.wire is not None:
                        from conformance.capture.proxy import capture_fetch

                        info = dict(info)
                        info["wire"] = capture_fetch(
                            broker.bootstrap,
                            topic,
                            max_bytes=int(sc.wire["max_bytes"]),
                            fetch_version=sc.wire.get("fetch_version"),
                        )
                    produced.append((sc, topic, info, _now()))
                    progress(
                        f"{broker_id}: [{i}/{len(chosen)}] {sc.name} produced "
                        f"({time.monotonic() - t0:.1f} s)"
                    )
                except Exception as exc:  # keep going: report it
                    result.failed[sc.name] = f"{type(exc).__name__}: {exc}".strip()[:2000]
                    progress(f"{broker_id}: [{i}/{len(chosen)}] {sc.name} FAILED: {exc}")
                    if progress is print:
                        traceback.print_exc()
            broker_config = dict(getattr(broker, "broker_config", {}) or spec.config)
            progress(f"{broker_id}: stopping broker")
            broker.stop()
            log_dir = broker.log_dir
            jobs: list[tuple[Scenario, str, dict[str, Any], str, Path]] = []
            for sc, topic, info, captured_at in produced:
                src = log_dir / (sc.source_dir or f"{topic}-0")
                case_dir = out_dir / broker_id / sc.name
                try:
                    if not src.is_dir():
                        raise FileNotFoundError(f"{src} does not exist")
                    if case_dir.exists():
                        shutil.rmtree(case_dir)
                    copy_partition(src, case_dir / "log" / src.name)
                    wire = info.pop("wire", None)
                    if wire is not None:
                        (case_dir / "wire").mkdir(parents=True)
                        for n, records in enumerate(wire):
                            (case_dir / "wire" / f"fetch-{n:03d}.bin").write_bytes(records)
                        info["fetch"] = {"responses_recorded": len(wire), **(sc.wire or {})}
                except Exception as exc:
                    result.failed[sc.name] = f"harvest: {type(exc).__name__}: {exc}"[:2000]
                    progress(f"{broker_id}: {sc.name} harvest FAILED: {exc}")
                    continue
                jobs.append((sc, topic, info, captured_at, case_dir))

            def _finish(job: tuple[Scenario, str, dict[str, Any], str, Path]) -> None:
                sc, topic, info, captured_at, case_dir = job
                try:
                    _write_case(
                        case_dir, broker, sc, topic, info, captured_at, broker_config, expectations
                    )
                    result.captured.append(sc.name)
                    progress(f"{broker_id}: wrote {case_dir}")
                except Exception as exc:
                    result.failed[sc.name] = f"expectations: {type(exc).__name__}: {exc}"[:2000]
                    progress(f"{broker_id}: {sc.name} expectations FAILED: {exc}")

            with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(_finish, jobs))
            result.captured.sort(key=[s.name for s in chosen].index)
    finally:
        if not keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        result.seconds = time.monotonic() - t_start
    progress(
        f"{broker_id}: {len(result.captured)} captured, {len(result.failed)} failed, "
        f"{result.seconds:.0f} s"
    )
    return result
