"""``kafka-conformance check-broker``: Kafka-compatible brokers judged against Kafka's answers
(``conformance.broker_check``; docs/broker-check.md)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from conformance.broker.versions import VERSIONS
from conformance.broker_check.run import DEFAULT_PREFIX, NEWEST, BrokerSettings, BrokerSide
from conformance.broker_check.scenarios import broker_cases
from conformance.broker_check.targets import (
    BUILTIN,
    KAFKA,
    Target,
    bootstrap_target,
    known_targets,
)
from conformance.cli import check_common as shared
from conformance.cli.common import seconds
from conformance.corpus import package
from conformance.harness import registry, session
from conformance.harness.process import ProcessTable
from conformance.harness.report import model, terminal
from conformance.harness.run import Part, run_parts
from conformance.harness.run import report as build_report
from conformance.harness.runner import select
from conformance.host.broker_socket import ANSWER_TIMEOUT, use_answer_timeout
from conformance.jvm.runtime import NoCheckout, cache_root

_PROG = "kafka-conformance check-broker"
_HTML = "broker-matrix.html"
#: what a topic name may hold (Kafka's legal characters), and the prefix's longest length
_TOPIC_CHARS = re.compile(r"[A-Za-z0-9._-]+")
_PREFIX_LONGEST = 100

_EPILOG = f"""\
a target is a broker the kit starts (--target: Apache Kafka {", ".join(VERSIONS)} as JVM
processes, or a built-in Kafka-compatible broker built on demand under .cache/; see --list) or
one that already runs (--bootstrap [NAME=]HOST:PORT: a staging cluster, any vendor's broker).

every case of the produce corpus (corpora/produce: {{req,log,batch,rec,parse,rewrite,pid,
legacy,verify}}-*) is sent raw, as Produce requests (acks -1), to a fresh topic created with
the case's configuration, then the partition is fetched back; the answers and the stored bytes
are judged against Kafka's answers (the kit's broker model of --kafka-version; an Apache Kafka
target is judged against its own line) at three levels: delivery (accepted or refused, offsets,
the records a consumer reads back), wire (also every answer field and stored batch header byte
for byte), java (also Kafka's error message texts). --level chooses what must hold (default
wire); a difference above it is a finding, never a failure. A case whose topic configuration
the target refuses is unsupported, with the reason.

then the session scenarios, on topics of their own: a transactional producer's session
(txn/*: aborted and committed transactions, markers, an open one, a retry), Fetch and
ListOffsets on what it stored (fetch/*: isolation levels, aborted transactions, KIP-74, a
fetch inside a batch, the bounds, offsets by timestamp, a LogAppendTime topic), and both at
every other Produce, Fetch and ListOffsets version the target and Kafka speak (versions/*).

safety: the run creates only topics named <prefix><run token>-<case> (--topic-prefix, default
{DEFAULT_PREFIX}), reads and writes no other topic and deletes its own at the end (also on
errors and Ctrl-C) unless --keep-topics. A target that cannot be started or reached makes its
cases error and the run goes on.

exit codes:
  0   every case passed, was unsupported, or is a known divergence
  1   an unexplained fail or error (or, over every case, a stale known divergence)
  2   usage error (no --target/--bootstrap, unknown target, bad address or prefix, no case
      matched, report path, a --from-json file that is not a valid report), or a corpora
      package whose files do not match its recorded digest or of another version
  130 interrupted by Ctrl-C, 143 by SIGTERM (every broker and PostgreSQL server the kit
      started was stopped, the run's topics deleted)

examples:
  {_PROG} --list
  {_PROG} --cases-list
  {_PROG} --target kafka-4.3.1-kraft
  {_PROG} --target kfake --target tansu --markdown docs/broker-matrix.md --html broker.html
  {_PROG} --bootstrap staging=kafka-1.internal:9092 --kafka-version 3.9.2 --json out.json
  {_PROG} --bootstrap 127.0.0.1:9092 --cases 'pid-*' --keep evidence/ --level java
  {_PROG} --target kfake --cases 'txn/*' --cases 'fetch/*' --cases 'versions/*'
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = shared.add_command(
        sub,
        "check-broker",
        "judge Kafka-compatible brokers against Kafka's answers",
        "Send the produce corpus's requests to brokers (started by the kit, or running at a "
        "bootstrap address), fetch what they stored, and judge both against Kafka's answers, "
        "at a level (delivery, wire, java).",
        _EPILOG,
    )
    p.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="NAME",
        help="a broker the kit starts (repeat, or comma-separate; 'all' = every one; see --list)",
    )
    p.add_argument(
        "--bootstrap",
        action="append",
        default=[],
        metavar="[NAME=]HOST:PORT",
        help="a running broker to judge (repeatable); NAME labels it in the reports",
    )
    p.add_argument(
        "--kafka-version",
        choices=tuple(VERSIONS),
        default=NEWEST,
        help="the Kafka line whose answers judge the targets that are not Apache Kafka "
        "(default %(default)s; an Apache Kafka target is judged against its own line)",
    )
    p.add_argument("--list", action="store_true", help="list the targets and whether they build")
    p.add_argument("--cases-list", action="store_true", help="list the cases and exit")
    p.add_argument(
        "--cases",
        action="append",
        default=[],
        metavar="GLOB",
        help="only the cases whose name or id matches (repeatable), e.g. 'pid-*', 'rewrite/*'",
    )
    p.add_argument(
        "--topic-prefix",
        default=DEFAULT_PREFIX,
        metavar="TEXT",
        help="the prefix of every topic the run creates (default %(default)s)",
    )
    p.add_argument(
        "--keep-topics", action="store_true", help="do not delete the run's topics at the end"
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        default=ANSWER_TIMEOUT,
        metavar="SECONDS",
        help="the longest the kit waits for one answer of a target (default %(default)g); a "
        "target that then does not answer ApiVersions either is judged no further",
    )
    p.add_argument(
        "--keep",
        metavar="DIR",
        help="write each case's evidence to DIR/<target>/<case>/: every request's records "
        "(request-<i>.bin), the response frames, the partition as fetched (fetch.bin), "
        "case.json and answer.json (readable by decode and dump)",
    )
    shared.add_level_option(
        p,
        "delivery (accepted or refused alike, offsets, the records read back), wire (also "
        "every answer field and stored batch byte), java (also Kafka's error texts)",
    )
    p.add_argument(
        "--known",
        action="append",
        default=[],
        metavar="FILE",
        help="known divergences of --bootstrap targets, in the format of the built-ins' "
        "broker-divergences.toml (docs/adapters.md); stale entries fail the run (repeatable)",
    )
    shared.add_report_options(p, "docs/broker-matrix.md")
    p.set_defaults(func=_cmd)


def _say(message: str) -> None:
    print(f"{_PROG}: {message}", file=sys.stderr)


def _cmd(args: argparse.Namespace) -> int:
    # SIGTERM unwinds like Ctrl-C: brokers, PostgreSQL and proxies stopped, topics deleted
    return shared.interruptible_command(_PROG, lambda: _check_broker(args))


def _list() -> int:
    rows = [["target", "kind", "what", "status"]]
    for t in known_targets().values():
        if t.kind == KAFKA:
            status = f"runs from Maven Central jars (resolved into {cache_root()} on first use)"
        else:
            assert t.adapter is not None
            state, why = registry.availability(t.adapter)
            status = "built" if state == "built" else f"{state}: {why}"
        rows.append([t.name, t.kind, t.description[:70], status])
    print("\n".join(terminal.table(rows)))
    return shared.EXIT_OK


def _targets(args: argparse.Namespace) -> list[Target]:
    known = known_targets()
    names = shared.implementation_names(args.target)
    if "all" in names:
        names = list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown target {', '.join(unknown)} (known: {', '.join(known)})")
    chosen = [known[n] for n in dict.fromkeys(names)]
    for value in args.bootstrap:
        name, sep, address = value.rpartition("=")
        chosen.append(bootstrap_target(address, name if sep else None))
    taken = [t.name for t in chosen]
    if len(set(taken)) != len(taken):
        raise ValueError(f"two targets named alike: {', '.join(taken)}")
    return chosen


def _check_broker(args: argparse.Namespace) -> int:
    try:
        corpora = package.corpora_root()
        corpus = package.identity(corpora)  # every file hashed, non-regular ones refused
        every = broker_cases(corpora)
    except (NoCheckout, ValueError) as exc:  # CorpusError: a package that cannot be trusted
        return shared.refuse(_PROG, exc)
    if args.cases_list:
        for c in every:
            print(f"{c.id:44} {c.description}")
        return shared.EXIT_OK
    if args.list:
        return _list()
    done = shared.before_run(
        _PROG,
        args,
        ("broker",),
        (model.BROKER,),
        _HTML,
        (("target", "--target NAME"), ("bootstrap", "--bootstrap HOST:PORT")),
    )
    if done is not None:
        return done
    if not _TOPIC_CHARS.fullmatch(args.topic_prefix) or len(args.topic_prefix) > _PREFIX_LONGEST:
        return shared.refuse(
            _PROG,
            f"--topic-prefix must be 1-{_PREFIX_LONGEST} of the characters a topic name may "
            "hold (letters, digits, '.', '_', '-')",
        )
    chosen = select(every, args.cases)
    if not chosen:
        return shared.refuse(_PROG, f"no case matches {' '.join(args.cases)}")
    try:
        targets = _targets(args)
        known = session.known_divergences("broker", args.known)
        keep = _keep_dir(args.keep)
    except (ValueError, OSError) as exc:
        return shared.refuse(_PROG, exc)
    if any(t.kind == BUILTIN for t in targets):
        missing = shared.needs_checkout(_PROG, "the built-in brokers (their sources in adapters/)")
        if missing is not None:
            return missing
    use_answer_timeout(args.timeout)
    settings = BrokerSettings(
        kafka_version=args.kafka_version,
        topic_prefix=args.topic_prefix,
        keep_topics=args.keep_topics,
        keep=keep,
        level=args.level,
    )
    # Ctrl-C and SIGTERM unwind the run (interruptible_command): every target's ``finally``
    # deletes its topics and stops what the kit started
    side = BrokerSide(targets, settings, log=_say)
    part = Part(side, side.implementations(), chosen, [c.id for c in every])
    progress = shared.progress_display(args.quiet, title=side.title)
    runs = run_parts([part], ProcessTable(), progress)
    report = build_report([part], runs, known, globs=args.cases, corpus=corpus)
    code = shared.finish(_PROG, report, args, _HTML, [], known)
    for run in runs:
        judged = [r for r in run.results if r.status in ("pass", "fail")]
        if run.results and not judged:
            _say(f"{run.impl.name}: judged nothing: every case was unsupported or an error")
            code = max(code, shared.EXIT_DIVERGED)
        left = side.left_behind(run)
        if left:
            _say(f"{run.impl.name}: {len(left)} of the run's topics were left behind: "
                 + ", ".join(sorted(left)[:10]) + (" ..." if len(left) > 10 else ""))  # fmt: skip
    return code


def _keep_dir(value: str | None) -> Path | None:
    """``--keep DIR``: a directory that is or can be made (checked before anything runs)."""
    if value is None:
        return None
    if not value.strip():
        raise ValueError("--keep needs a directory, not an empty name")
    path = Path(value).resolve()
    if path.exists() and not path.is_dir():
        raise ValueError(f"--keep {value}: not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".kafka-conformance-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"--keep {value}: cannot write there ({exc.strerror or exc})") from None
    return path
