"""``kafka-conformance check-producer``: third-party producers and encoders (or the built-in
adapters) judged by a real broker and Kafka's consumer (``conformance.producer_check``;
docs/producer-check.md, docs/adapter-protocol.md)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from conformance.capture.brokers import BROKERS
from conformance.cli.check import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    add_implementation_options,
    add_report_options,
    before_run,
    finish,
)
from conformance.cli.common import byte_size, positive_int, seconds
from conformance.harness import session
from conformance.harness.process import ProcessTable
from conformance.harness.report import model
from conformance.harness.runner import Settings
from conformance.host.progress import Progress
from conformance.jvm.runtime import NoCheckout
from conformance.producer_check.run import (
    DEFAULT_BROKERS,
    MODEL_BROKERS,
    ProducerSettings,
    case_documents,
    run_producers,
)
from conformance.producer_check.scenarios import scenarios, select

_PROG = "kafka-conformance check-producer"
_HTML = "producer-matrix.html"

_EPILOG = f"""\
a producer adapter is a command speaking docs/adapter-protocol.md ("Producer side"):
`CMD produce --bootstrap HOST:PORT --plan FILE` sends the plan's records with the library's
real producer and prints what it reported per record; `CMD encode --plan FILE` writes the
batch the library's batch builder makes; `CMD capabilities` declares codecs, idempotence,
transactions, headers, the default partitioner and the library's defaults.

the kit starts the broker(s) itself (a JVM process from Maven Central jars, or a container
with --backend testcontainers), puts a recording proxy in front, creates a topic per
implementation x scenario and judges every Produce request and what Kafka's consumer reads
back: the broker's answer (and the kit's broker model agreeing with it), the batch header
against what Java's KafkaProducer writes, the records (keys, values, headers, timestamps,
partitions) against the plan. Per scenario: pass, fail (with the diff), unsupported or error
(crash, hang, flood, invalid document: the process group is killed, the run goes on).

exit codes:
  0   every scenario passed, was unsupported, or is a known divergence
  1   an unexplained fail or error (or, over every scenario, a stale known divergence), or a
      built-in adapter failed to build
  2   usage error
  130 interrupted (every adapter process and broker was stopped)

examples:
  {_PROG} --list
  {_PROG} --scenarios-list
  {_PROG} --impl java
  {_PROG} --impl all --json producer.json --html producer-matrix.html
  {_PROG} --impl kafka-python --scenarios 'codec-*' --broker kafka-2.8.2-zk
  {_PROG} --impl java --broker all
  {_PROG} --cmd "python3 my_producer.py" --keep wire/
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "check-producer",
        help="run third-party producers and encoders against a real broker",
        description="Run producers (and encoders) over the scenarios, against real Kafka "
        "brokers started by the kit, and judge what they wrote.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_implementation_options(p, "a producer or encoder adapter", "producer and encoder adapters")
    p.add_argument("--scenarios-list", action="store_true", help="list the scenarios and exit")
    p.add_argument(
        "--scenarios",
        action="append",
        default=[],
        metavar="GLOB",
        help="only the scenarios whose name matches (repeatable), e.g. 'codec-*', 'encode-*'",
    )
    p.add_argument(
        "--broker",
        action="append",
        default=[],
        metavar="ID",
        help=f"a broker to produce to (repeatable; default {', '.join(DEFAULT_BROKERS)}; "
        f"'all' = {', '.join(MODEL_BROKERS)}; known: {', '.join(BROKERS)})",
    )
    p.add_argument(
        "--backend",
        choices=("jvm", "testcontainers"),
        default="jvm",
        help="how brokers run: a JVM process (default) or a container (testcontainers)",
    )
    p.add_argument(
        "--jobs", "-j", type=positive_int, default=2, help="adapters run at once (default 2)"
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        metavar="S",
        help="wall-clock seconds per adapter run (default: the scenario's own budget + 30); "
        "then the adapter's process group is killed",
    )
    p.add_argument(
        "--output-limit",
        type=byte_size,
        default=16 << 20,
        metavar="SIZE",
        help="what an adapter may print for one scenario (default 16MiB)",
    )
    p.add_argument(
        "--keep",
        metavar="DIR",
        help="write what crossed the wire to DIR/<impl>/<scenario id>/: the plan, the "
        "adapter's output, every Produce request's records and the broker's answer, each "
        "partition as fetched back (encode: the batch)",
    )
    add_report_options(p, "docs/producer-matrix.md")
    p.set_defaults(func=_cmd)


def _brokers(values: list[str]) -> tuple[str, ...]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    if not names:
        return DEFAULT_BROKERS
    if "all" in names:
        return MODEL_BROKERS
    unknown = [n for n in names if n not in BROKERS]
    if unknown:
        raise ValueError(f"unknown broker {', '.join(unknown)} (known: {', '.join(BROKERS)})")
    return tuple(dict.fromkeys(names))


def _progress(quiet: bool) -> Callable[[str, int, int], None]:
    bar: list[Progress] = []
    counts: Counter[str] = Counter()

    def update(impl: str, done: int, total: int) -> None:
        if quiet:
            return
        if not bar:
            bar.append(Progress("check-producer", total))
        counts[impl] += 1
        bar[0].update(done, f"last: {impl}")
        if done >= total:
            bar[0].close()

    return update


def _say(message: str) -> None:
    print(f"{_PROG}: {message}", file=sys.stderr)


def _cmd(args: argparse.Namespace) -> int:
    if args.scenarios_list:
        for s in scenarios():
            print(f"{s.name:24} {s.side:8} {s.description}")
        return EXIT_OK
    done = before_run(_PROG, args, "produce", model.PRODUCER, _HTML)
    if done is not None:
        return done
    every = scenarios()
    chosen = select(every, args.scenarios)
    if not chosen:
        print(f"{_PROG}: no scenario matches {' '.join(args.scenarios)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        brokers = _brokers(args.broker)
        names = [n.strip() for spec in args.impl for n in spec.split(",") if n.strip()]
        selection = session.implementations(names, args.cmd, log=_say, side="produce")
        known = session.known_divergences("produce", args.known)
    except (ValueError, NoCheckout, OSError) as exc:
        print(f"{_PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    settings = ProducerSettings(
        brokers=brokers,
        backend=args.backend,
        jobs=args.jobs,
        output_limit=args.output_limit,
        timeout=args.timeout,
        keep=Path(args.keep).resolve() if args.keep else None,
    )
    table = ProcessTable()
    try:
        runs = run_producers(
            selection.implementations,
            chosen,
            settings,
            table,
            log=_say,
            progress=_progress(args.quiet),
        )
    except KeyboardInterrupt:
        table.kill_all()
        print(f"\n{_PROG}: interrupted; every adapter process was stopped", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        table.kill_all()
    report = model.build(
        runs,
        case_documents(chosen, brokers),
        settings=Settings(
            jobs=settings.jobs,
            timeout=settings.timeout or settings.grace,
            output_limit=settings.output_limit,
        ),
        known=known,
        complete=len(chosen) == len(every),
        globs=args.scenarios,
        builds=selection.builds,
        side=model.PRODUCER,
    )
    return finish(_PROG, report, args, _HTML, selection.failures)
