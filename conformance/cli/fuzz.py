"""``kafka-conformance fuzz``: list, run, merge, measure coverage, replay and promote."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from conformance.broker.versions import VERSIONS as BROKER_VERSIONS
from conformance.cli.common import add_command, positive_int, shown
from conformance.fileio import read_bytes
from conformance.fuzz.targets import TARGETS
from conformance.harness.judge import CONSUME, DECODE
from conformance.levels import DEFAULT_LEVEL, LEVELS

#: the sides `fuzz --against` hunts on (fuzz_check.run.hunt_all)
HUNT_SIDES = (DECODE, CONSUME)

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2

_EPILOG = """\
targets: run `kafka-conformance fuzz --list`; `all` runs every target in turn (--time each).

exit codes:
  0  the run found nothing of the kit's own (crash, hang, memory blow-up, divergence)
  1  new findings (see the summary; each under <out>/findings/<target>/<kind>-<hash>/)
  2  usage error, or atheris / the Java oracle / coverage (--coverage) is missing

examples:
  kafka-conformance fuzz --list
  kafka-conformance fuzz varint --time 60
  kafka-conformance fuzz batch --time 600 --jobs 2
  kafka-conformance fuzz stream --time 3600 --differential      # vs Kafka's Java classes
  kafka-conformance fuzz produce --time 3600 --jobs 2 --differential --broker 2.8.2
  kafka-conformance fuzz all --time 30                          # smoke of every target
  kafka-conformance fuzz batch --merge                          # keep the new corpus in git
  kafka-conformance fuzz --coverage                             # decoder branch coverage
  kafka-conformance fuzz --findings                             # what earlier runs found
  kafka-conformance fuzz --replay .cache/fuzz/findings/stream/divergence-1a2b3c4d
  kafka-conformance fuzz --promote .cache/fuzz/findings/stream/divergence-1a2b3c4d \\
      --name lz4-empty-block --note "our reader stopped early; fixed in codecs.py"

other implementations, differentially (docs/fuzzing.md, "Fuzzing other implementations"):
  kafka-conformance fuzz --against kafka-python --time 600
  kafka-conformance fuzz --against all --time 600 --html hunt.html --junit hunt.xml
  kafka-conformance fuzz --cmd "python3 my_adapter.py" --time 120 --known my-divergences.toml
  kafka-conformance fuzz --against franz-go --max-inputs 5000 --seed 7 --level delivery
  kafka-conformance fuzz --against kafka-python --side consume --time 600   # its consumer
  (exit 1: a finding no known divergence explains, or one of the kit's own; each finding is
  written with its reproduction: kafka-conformance check ... --corpora <finding>/corpora)
"""


def register(subparsers: Any) -> None:
    p = add_command(
        subparsers,
        "fuzz",
        "coverage-guided fuzzing (atheris), differential against the Java oracle",
        "Fuzz the kit's decoders with atheris/libFuzzer: structure-aware mutation, "
        "invariants (only documented errors, bounded time and memory), optional differential "
        "comparison with Kafka's Java classes and kafka-python.",
        _EPILOG,
    )
    p.add_argument("target", nargs="?", metavar="TARGET", help="a target name, or `all`")
    actions = p.add_mutually_exclusive_group()
    actions.add_argument("--list", action="store_true", help="list the targets")
    actions.add_argument(
        "--merge",
        action="store_true",
        help="fold the working corpus of TARGET into fuzz/corpus/TARGET (of the checkout)",
    )
    actions.add_argument(
        "--coverage",
        action="store_true",
        help="decoder branch coverage reached by the saved corpora",
    )
    actions.add_argument("--findings", action="store_true", help="list saved findings")
    actions.add_argument(
        "--replay",
        metavar="PATH",
        help="run one input (a file, or a finding directory) and show every side",
    )
    actions.add_argument(
        "--promote",
        metavar="FINDING",
        help="copy a finding into corpora/regressions/ (after the fix)",
    )
    p.add_argument(
        "--time",
        type=positive_int,
        default=60,
        metavar="SECONDS",
        help="time budget per target (default %(default)s)",
    )
    p.add_argument(
        "--jobs", type=positive_int, default=1, metavar="N", help="parallel workers (default 1)"
    )
    p.add_argument(
        "--differential",
        action="store_true",
        help="also judge every input with Kafka's own code: the Java oracle and kafka-python "
        "(record streams), or each version's broker oracle (produce)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="working corpus, findings, logs, summaries (default: .cache/fuzz of the "
        "checkout; an installed package without one: $XDG_CACHE_HOME/"
        "kafka-conformance/fuzz, i.e. ~/.cache/kafka-conformance/fuzz)",
    )
    p.add_argument(
        "--max-len",
        type=positive_int,
        default=None,
        metavar="BYTES",
        help="largest input the engine makes (default 16384)",
    )
    p.add_argument(
        "--timeout",
        type=positive_int,
        default=10,
        metavar="SECONDS",
        help="an input running longer is a hang finding (default %(default)s)",
    )
    p.add_argument(
        "--rss-limit-mb",
        type=positive_int,
        default=2048,
        metavar="MB",
        help="a worker above this resident size is a memory finding (default %(default)s)",
    )
    p.add_argument(
        "--minimize-seconds",
        type=float,
        default=30.0,
        metavar="S",
        help="time to minimize each new finding (default %(default)s)",
    )
    p.add_argument(
        "--broker",
        metavar="VERSION",
        default=None,
        help="produce target: judge every input on this broker version "
        f"({', '.join(BROKER_VERSIONS)}; default: each input's selector byte picks one)",
    )
    p.add_argument(
        "--json", action="store_true", help="machine-readable output (--against: the report)"
    )
    hunt = p.add_argument_group(
        "other implementations (--against, --cmd): their decoders fuzzed against the kit's, "
        "each difference confirmed by Kafka's classes; or their consumers, through the fake "
        "broker, against Kafka's KafkaConsumer (--side consume)"
    )
    hunt.add_argument(
        "--against",
        action="append",
        default=[],
        metavar="NAME",
        help="a built-in decoder or consumer (repeat, or comma-separate; 'all': every one "
        "of the side; see `kafka-conformance check --list`)",
    )
    hunt.add_argument(
        "--side",
        choices=HUNT_SIDES,
        default=HUNT_SIDES[0],
        help="what is fuzzed: decoders (record streams) or consumers (partitions through "
        "the fake broker) (default %(default)s)",
    )
    hunt.add_argument(
        "--cmd", action="append", default=[], metavar="CMD", help="an adapter's command line"
    )
    hunt.add_argument(
        "--known",
        action="append",
        default=[],
        metavar="FILE",
        help="known divergences of --cmd adapters (divergences.toml format; a finding's case "
        "is regressions/stream/fuzz-<id>@<mode>, or consume/fuzz-<id>)",
    )
    hunt.add_argument(
        "--level",
        choices=LEVELS,
        default=DEFAULT_LEVEL,
        help="what an answer must reach, as in check (default %(default)s)",
    )
    hunt.add_argument(
        "--seed", type=int, default=0, help="the inputs' seed (default 0): a run repeats"
    )
    hunt.add_argument(
        "--max-inputs",
        type=positive_int,
        default=None,
        metavar="N",
        help="stop each implementation's hunt after N inputs (default: --time decides)",
    )
    hunt.add_argument("--junit", metavar="OUT", help="write JUnit XML (a testcase per finding)")
    hunt.add_argument("--html", metavar="OUT", help="write the self-contained HTML report")
    hunt.add_argument("--markdown", metavar="OUT", help="write the Markdown report")
    p.add_argument("--name", help="--promote: the regression's file name (a-z0-9-)")
    p.add_argument("--note", default="", help="--promote: what was wrong and where it was fixed")
    p.add_argument(
        "--engine-arg",
        action="append",
        default=[],
        metavar="FLAG",
        help="an extra libFuzzer flag, e.g. --engine-arg=-use_value_profile=1 (repeatable)",
    )
    p.set_defaults(func=_cmd_fuzz)


def _err(message: str) -> int:
    print(f"kafka-conformance fuzz: {message}", file=sys.stderr)
    return EXIT_USAGE


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _cmd_fuzz(args: argparse.Namespace) -> int:
    if args.against or args.cmd:
        from conformance.cli.fuzz_against import against

        return against(args)
    if args.list:
        width = max(map(len, TARGETS))
        for t in TARGETS.values():
            flag = " [differential]" if t.differential else ""
            print(f"{t.name:{width}}  {t.description}{flag}")
        return EXIT_OK
    if args.coverage:
        return _coverage(args)
    if args.findings:
        return _list_findings(args)
    if args.replay:
        return _replay(args)
    if args.promote:
        return _promote(args)
    if not args.target:
        return _err("name a TARGET (see --list), or `all`")
    names = list(TARGETS) if args.target == "all" else [args.target]
    for n in names:
        if n not in TARGETS:
            return _err(f"unknown target {n!r} (known: {', '.join(TARGETS)})")
    try:
        import atheris  # noqa: F401
    except ImportError:
        return _err(
            "atheris is not installed: pip install 'kafka-conformance[fuzz]' "
            "(in a checkout: pip install -e '.[fuzz]', which scripts/bootstrap does)"
        )
    from conformance.fuzz.runner import merge, run_target

    if args.merge:
        try:
            for n in names:
                merge(n, args.out, max_len=args.max_len, progress=_say)
        except RuntimeError as e:
            return _err(str(e))
        return EXIT_OK
    if args.differential:
        names = [n for n in names if TARGETS[n].differential] if args.target == "all" else names
        if not TARGETS[names[0]].differential:
            return _err(f"target {names[0]!r} has no differential oracle (not a record stream)")
    if args.broker is not None:
        if args.broker not in BROKER_VERSIONS:
            return _err(f"--broker: unknown version {args.broker!r} (known: "
                        f"{', '.join(BROKER_VERSIONS)})")  # fmt: skip
        if any(TARGETS[n].oracle != "broker" for n in names):
            return _err("--broker applies to the produce target only")
    if args.target == "all":  # a target this machine cannot run (native: no extension) is
        # skipped with its reason; named on its own, it stops the command (exit 2)
        for n in list(names):
            target = TARGETS[n]
            why = target.unavailable() if target.unavailable is not None else None
            if why:
                _say(f"fuzz {n}: skipped: {why}")
                names.remove(n)
    extra = list(args.engine_arg)
    from conformance.jvm.oracle import OracleError

    summaries = []
    try:
        for n in names:
            summaries.append(
                run_target(
                    n,
                    seconds=args.time,
                    jobs=args.jobs,
                    differential=args.differential,
                    out=args.out,
                    max_len=args.max_len,
                    timeout=args.timeout,
                    rss_limit_mb=args.rss_limit_mb,
                    minimize_seconds=args.minimize_seconds,
                    extra=extra,
                    progress=_say,
                    broker=args.broker,
                )
            )
    except (RuntimeError, OracleError) as e:
        return _err(str(e))
    if args.json:
        from dataclasses import asdict

        print(json.dumps([asdict(s) for s in summaries], indent=2))
    else:
        print(
            f"{'target':10} {'execs':>10} {'exec/s':>8} {'slowest':>8} {'cov':>6} "
            f"{'corpus':>7}  findings"
        )
        for s in summaries:
            found = ", ".join(f"{k} {v}" for k, v in sorted(s.findings.items())) or "none"
            print(
                f"{s.target:10} {s.execs:10} {s.exec_per_sec:8.0f} {s.slowest_input_s:7.3f}s "
                f"{s.coverage:6} {s.corpus_files:7}  {found}"
            )
            if s.differential:
                judge = f"Kafka {s.broker}" if s.broker else "Java oracle"
                print(f"{'':10} differential inputs (vs {judge}): {s.differential_inputs}")
            for f in s.new_findings:
                print(f"  NEW {f}")
    return EXIT_FINDINGS if any(s.failed for s in summaries) else EXIT_OK


def _coverage(args: argparse.Namespace) -> int:
    from conformance.fuzz import coverage

    names = list(TARGETS) if args.target in (None, "all") else [args.target]
    if any(n not in TARGETS for n in names):
        return _err(f"unknown target {args.target!r}")
    try:
        results = coverage.measure(names, progress=None if args.json else _say)
    except ImportError as e:
        if e.name != "coverage" and not (e.name or "").startswith("coverage."):
            raise
        return _err(
            "--coverage needs the coverage package, which is not installed: "
            "pip install 'kafka-conformance[fuzz]' (in a checkout: pip install -e "
            "'.[fuzz]', which scripts/bootstrap does)"
        )
    if args.json:
        print(json.dumps(coverage.coverage_dict(results), indent=2))
    else:
        print(coverage.render(results))
    return EXIT_OK


def _out(args: argparse.Namespace) -> Path:
    from conformance.fuzz.runner import default_out

    return Path(args.out or default_out())


def _list_findings(args: argparse.Namespace) -> int:
    from conformance.fuzz import store

    found = store.read_findings(
        _out(args) / "findings", args.target if args.target != "all" else None
    )
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "path": str(f.path),
                        "target": f.target,
                        "kind": f.kind,
                        "signature": f.signature,
                    }
                    for f in found
                ],
                indent=2,
            )
        )
        return EXIT_OK
    if not found:
        print("no findings")
    for f in found:
        print(f"{f.kind:12} {f.target:10} {f.path}\n             {f.signature}")
    return EXIT_OK


def _finding_input(path: Path) -> tuple[bytes, str | None, dict[str, Any]]:
    """The input of a finding directory or file (regular files only: a FIFO would block)."""
    if path.is_dir():
        info = json.loads(read_bytes(path / "finding.json").decode("utf-8"))
        if info.get("target") == "consume":  # a partition: its case directory, no .bin
            return b"", "consume", info
        m = path / "input.min.bin"
        return read_bytes(m if m.exists() else path / "input.bin"), info.get("target"), info
    return read_bytes(path), None, {}


def _replay(args: argparse.Namespace) -> int:
    from conformance.errors import DecodeError
    from conformance.fuzz.targets import get

    path = Path(args.replay)
    if not path.exists():
        return _err(f"{path}: no such file or directory")
    try:
        data, target_name, _info = _finding_input(path)
    except (OSError, ValueError) as e:
        if isinstance(e, OSError):
            return _err(f"cannot read {shown(e.filename or path)}: {e.strerror or e}")
        return _err(f"{path}: not a finding directory: {e}")
    target_name = args.target or target_name
    if target_name is None:
        return _err("say which target the input belongs to (TARGET)")
    if target_name == "consume":
        return _err(f"a consume finding is replayed by its reproduction: {_info.get('reproduce')}")
    target = get(target_name)
    report: dict[str, Any] = {"target": target.name, "input_size": len(data)}
    try:
        target.run(data)
        report["target_run"] = "ok (decoded, or refused with a documented error)"
    except DecodeError as e:
        report["target_run"] = f"documented error: {e}"
    except Exception as e:  # noqa: BLE001
        report["target_run"] = f"CRASH: {type(e).__name__}: {e}"
    wire = target.wire_bytes(data)
    if wire is not None:
        from conformance.fuzz.differential import Differential

        d = Differential()
        try:
            o = d.run(wire)
        finally:
            d.close()
        report.update(
            {
                "mode": o.mode,
                "ours": o.ours,
                "java": o.java,
                "differences": o.differences,
                "kafka-python": o.kp,
                "kafka_python_differences": o.kp_differences,
                "oracle_error": o.oracle_error,
            }
        )
    print(
        json.dumps(report, indent=2, default=lambda b: b.hex() if isinstance(b, bytes) else str(b))
    )
    return EXIT_OK


def _promote(args: argparse.Namespace) -> int:
    """A fixed finding becomes ``corpora/regressions/<target>/<name>.bin`` + ``.json``; for a
    record-stream target the JSON carries the Java oracle's verdict (the expectation the
    normal test suite replays)."""
    from conformance.fuzz.targets import get
    from conformance.jvm.runtime import NoCheckout, repo_root

    path = Path(args.promote)
    if not path.is_dir() or not (path / "finding.json").exists():
        return _err(f"{path}: not a finding directory (no finding.json)")
    if not args.name or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", args.name):
        return _err("--name is required: lower-case letters, digits and dashes")
    data, target_name, info = _finding_input(path)
    if target_name == "consume":
        return _promote_consume(path, args)
    target = get(args.target or target_name or "")
    try:
        dest = repo_root() / "corpora" / "regressions" / target.name
    except NoCheckout as e:
        return _err(str(e))
    dest.mkdir(parents=True, exist_ok=True)
    meta: dict[str, Any] = {
        "target": target.name,
        "kind": info.get("kind"),
        "signature": info.get("signature"),
        "note": args.note,
        "found": info.get("first_seen"),
    }
    wire = target.wire_bytes(data)
    if wire is not None:
        from conformance.fuzz.differential import mode_of, normalize_java
        from conformance.jvm.oracle import OracleError, OracleServer

        mode = str(info["mode"]) if info.get("mode") in ("memory", "file") else mode_of(wire)
        try:
            with OracleServer() as oracle:
                meta["mode"] = mode
                meta["expected"] = normalize_java(oracle.decode(wire, mode))
        except OracleError as e:  # the verdict is Kafka's or none: nothing is written
            return _err(f"the Java oracle is needed for the regression's verdict: {e}")
        meta["expected_by"] = (
            "Java oracle (oracle/, kafka-clients) via `kafka-conformance fuzz --promote`"
        )
    (dest / f"{args.name}.bin").write_bytes(data)
    (dest / f"{args.name}.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"promoted {path} -> {dest / args.name}.bin")
    return EXIT_OK


def _promote_consume(path: Path, args: argparse.Namespace) -> int:
    """A consume finding becomes ``corpora/consume/<name>/`` (a stored scenario): its
    partition, and Kafka's consumer's document, read again."""
    from conformance.errors import CorpusError
    from conformance.fuzz_check.findings import promote_consume
    from conformance.jvm.kafka_jars import KafkaJarsUnavailable
    from conformance.jvm.oracle import OracleError
    from conformance.jvm.runtime import NoCheckout, repo_root

    try:
        dest = promote_consume(path, repo_root() / "corpora", args.name, args.note)
    except (CorpusError, NoCheckout, OSError, ValueError) as e:
        return _err(str(e))
    except (OracleError, KafkaJarsUnavailable) as e:
        return _err(f"Kafka's consumer (the Java oracle) is needed for the case's verdict: {e}")
    print(f"promoted {path} -> {dest}")
    return EXIT_OK


__all__ = ["register"]
