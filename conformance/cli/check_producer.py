"""``kafka-conformance check-producer``: third-party producers and encoders (or the built-in
adapters) judged by a real broker and Kafka's consumer (``conformance.producer_check``;
docs/producer-check.md, docs/adapter-protocol.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.capture.brokers import BROKERS
from conformance.cli import check_common as shared
from conformance.harness import session
from conformance.harness.process import ProcessTable
from conformance.harness.report import model
from conformance.harness.run import Part, report, run_parts
from conformance.harness.runner import select
from conformance.jvm.runtime import NoCheckout
from conformance.producer_check.run import (
    DEFAULT_BROKERS,
    MODEL_BROKERS,
    ProducerSettings,
    ProduceSide,
    producer_cases,
)
from conformance.producer_check.scenarios import scenarios

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
back, at three levels (docs/producer-check.md): delivery (Kafka's consumer reads back exactly
the plan: each record once, in order, key, value, headers, timestamp, on the partition the
declared partitioner gives, at the offsets the library reported), wire (also: the broker stores
what was sent, sequences, epochs and transaction flags right), java (also: every header field
is what Java's KafkaProducer writes). --level chooses what must hold (default wire); a
difference above it is a finding: printed, counted, in every report, never a failure. Per
scenario: pass, fail (its first line names the first difference), unsupported or error (crash,
hang, flood, invalid document or invalid capabilities: the process group is killed, the run
goes on); the matrix shows the highest level each scenario reached.

exit codes:
  0   every scenario passed, was unsupported, or is a known divergence
  1   an unexplained fail or error (or, over every scenario, a stale known divergence), or a
      built-in adapter failed to build
  2   usage error (no --impl/--cmd, an --impl naming nothing, unknown implementation or
      broker, no scenario matched, report path, a --from-json file that is not a valid report)
  130 interrupted by Ctrl-C, 143 by SIGTERM (every adapter process, the proxy and every
      broker was stopped, the run's temporary directory removed)

examples:
  {_PROG} --list
  {_PROG} --scenarios-list
  {_PROG} --impl java
  {_PROG} --impl all --json producer.json --html producer-matrix.html
  {_PROG} --impl kafka-python --scenarios 'codec-*' --broker kafka-2.8.2-zk
  {_PROG} --impl java --broker all
  {_PROG} --impl kafkajs --level java     # also Java's exact header bytes
  {_PROG} --cmd "python3 my_producer.py" --keep wire/
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = shared.add_command(
        sub,
        "check-producer",
        "run third-party producers and encoders against a real broker",
        "Run producers (and encoders) over the scenarios, against real Kafka brokers started "
        "by the kit, and judge what they wrote, at a level (delivery, wire, java).",
        _EPILOG,
    )
    shared.add_implementation_options(
        p, "a producer or encoder adapter", "producer and encoder adapters"
    )
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
    shared.add_run_options(
        p,
        jobs=2,
        jobs_help="adapters run at once (default 2)",
        timeout=None,
        timeout_help="wall-clock seconds per adapter run (default: the scenario's own budget + 30)",
        output_limit=16 << 20,
        output_help="what an adapter may print for one scenario (default 16MiB)",
    )
    p.add_argument(
        "--keep",
        metavar="DIR",
        help="write what crossed the wire to DIR/<impl>/<scenario id>/: the plan, the "
        "adapter's output, every Produce request's records and the broker's answer, each "
        "partition as fetched back (encode: the batch); <impl> is the implementation's name "
        "made a safe directory name (docs/producer-check.md)",
    )
    shared.add_level_option(
        p,
        "delivery (Kafka's consumer reads back exactly the plan, on the right partitions, at "
        "the reported offsets), wire (also: the broker stores what was sent; sequences, epochs "
        "and flags right), java (also: every header field as Java's producer writes it)",
    )
    shared.add_report_options(p, "docs/producer-matrix.md")
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


def _say(message: str) -> None:
    print(f"{_PROG}: {message}", file=sys.stderr)


def _cmd(args: argparse.Namespace) -> int:
    # SIGTERM unwinds like Ctrl-C: the adapters, the proxy and the brokers are stopped, the
    # run's temporary directory removed
    return shared.interruptible_command(_PROG, lambda: _check_producer(args))


def _check_producer(args: argparse.Namespace) -> int:
    if args.scenarios_list:
        for s in scenarios():
            print(f"{s.name:24} {s.side:8} {s.description}")
        return shared.EXIT_OK
    done = shared.before_run(_PROG, args, ("produce",), (model.PRODUCE,), _HTML)
    if done is not None:
        return done
    every = scenarios()
    chosen = select(every, args.scenarios)
    if not chosen:
        return shared.refuse(_PROG, f"no scenario matches {' '.join(args.scenarios)}")
    try:
        brokers = _brokers(args.broker)
        names = shared.implementation_names(args.impl)
        selection = session.implementations(names, args.cmd, log=_say, side="produce")
        known = session.known_divergences("produce", args.known)
    except (ValueError, NoCheckout, OSError) as exc:
        return shared.refuse(_PROG, exc)
    settings = ProducerSettings(
        brokers=brokers,
        backend=args.backend,
        jobs=args.jobs,
        output_limit=args.output_limit,
        timeout=args.timeout,
        keep=Path(args.keep).resolve() if args.keep else None,
        level=args.level,
    )
    side = ProduceSide(settings, log=_say)
    part = Part(side, selection.implementations, producer_cases(chosen, brokers))
    part.every = [c.id for c in producer_cases(every, brokers)]
    table = ProcessTable()
    progress = shared.progress_display(args.quiet, title=side.title)
    runs = shared.run_interruptible(  # Interrupted: interruptible_command
        _PROG, table, lambda: run_parts([part], table, progress)
    )
    doc = report([part], runs, known, globs=args.scenarios, builds=selection.builds)
    return shared.finish(_PROG, doc, args, _HTML, selection.failures, known)
