"""``kafka-conformance capture``: capture golden corpora from real brokers (docs/corpora.md);
``capture compare A B``, two captures against each other, is ``cli.capture_compare``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.capture import add_out_option
from conformance.cli import capture_compare
from conformance.cli.common import add_command

__all__ = ["register"]

_USAGE = """\
kafka-conformance capture [-h] [--broker ID|all] [--backend {jvm,testcontainers}]
                                [--image REF] [--scenario NAME|all] [--out DIR]
                                [--no-expectations]
       kafka-conformance capture --list
       kafka-conformance capture compare [options] A B"""

_EPILOG = """\
exit codes:
  0  every scenario captured (or skipped as not applicable)
  130 interrupted (Ctrl-C): every broker, container and engine service it started is stopped
  1  a scenario failed (the summary names it)
  2  usage error (unknown broker or scenario), the backend is unavailable (no container
     engine could be found or started; no Kafka jars for the broker's version:
     `scripts/fetch-kafka-jars <version>` resolves them once from Maven Central into
     .cache/kafka/<version>/, needs Maven and Java)

examples:
  kafka-conformance capture --list
  kafka-conformance capture --broker kafka-3.9.2-kraft --scenario codec-gzip-v2-kafka-python --out /tmp/c
  kafka-conformance capture --broker kafka-3.9.2-zk-ibp2.8 --scenario all --out corpora
  kafka-conformance capture --broker all --scenario all --out corpora
  kafka-conformance capture --broker kafka-4.3.1-kraft --backend testcontainers --out /tmp/c
  kafka-conformance capture --broker kafka-3.9.2-kraft --backend testcontainers \\
      --image apache/kafka:3.9.2 --scenario codec-zstd-v2-java --out /tmp/c
  kafka-conformance capture compare /tmp/c/jvm /tmp/c/testcontainers

One broker is started per broker id (backend jvm: Kafka's Maven Central jars on this JVM;
backend testcontainers: a container of kafka-conformance/kafka:<version>, an image built here
from this machine's JDK and the same jars, on the Docker or Podman daemon that answers, else
on Podman's socket service started by scripts/container-engine and stopped again at the
end), every applicable scenario gets its own topic, the
broker is stopped cleanly and each partition directory is copied to
OUT/<broker-id>/<scenario>/log/<topic>-0/ with manifest.json and expected/ (oracle +
DumpLogSegments). Scenarios that do not apply to a broker (e.g. magic 0/1 on KRaft) are skipped.

`capture compare A B` compares two captures (same files, same decoded records apart from the
fields each scenario declares non-deterministic) and reports as verify does; it takes none of
the options above, only its own (kafka-conformance capture compare --help). A capture run
takes no positional argument, so `capture --broker ...` is unchanged.
"""  # noqa: E501 - --help epilog, printed verbatim


def register(subparsers: Any) -> None:
    p = add_command(
        subparsers,
        "capture",
        "capture golden corpora from real Kafka brokers; compare two captures",
        "Run scenarios on real Kafka brokers and store what they wrote;\n"
        "or (capture compare A B) compare two captures.",
        _EPILOG,
        usage=_USAGE,
    )
    options = [
        p.add_argument(
            "--broker",
            default="all",
            metavar="ID|all",
            help="broker id (see --list) or all (default)",
        ),
        p.add_argument(
            "--backend",
            default="jvm",
            choices=("jvm", "testcontainers"),
            help="how brokers run (default: jvm)",
        ),
        p.add_argument(
            "--image",
            default=None,
            metavar="REF",
            help="testcontainers: run this image instead of the one built locally "
            "(apache/kafka:<v> for KRaft, confluentinc/cp-kafka:<v> for ZooKeeper "
            "mode; must be present or pullable); needs a single --broker",
        ),
        p.add_argument(
            "--scenario",
            action="append",
            metavar="NAME|all",
            help="scenario name (repeatable) or all (default)",
        ),
        add_out_option(p),
        p.add_argument(
            "--list",
            action="store_true",
            help="list brokers and scenarios (and which brokers each applies to)",
        ),
        p.add_argument(
            "--no-expectations",
            action="store_true",
            help="only copy files and write manifests (no oracle / DumpLogSegments)",
        ),
    ]
    # an optional subcommand: without it, capture runs as it always did (it has no positional)
    sub = p.add_subparsers(
        dest="capture_command",
        title="subcommand (optional; its own options: kafka-conformance capture compare --help)",
    )
    capture_compare.register(sub, options)
    p.set_defaults(func=_cmd_capture)


def _cmd_capture(args: argparse.Namespace) -> int:
    from conformance.capture.run import all_brokers
    from conformance.capture.scenarios import SCENARIOS

    brokers = all_brokers(args.backend)
    if args.list:
        print("brokers:")
        for bid, spec in brokers.items():
            print(f"  {bid:26} {spec.mode:9} version {spec.version}")
        print("scenarios:")
        for name, sc in SCENARIOS.items():
            on = [b for b, spec in brokers.items() if sc.applies(spec)]
            print(f"  {name:38} {sc.producer:12} {', '.join(on) or '-'}")
            print(f"      {sc.description}")
        return 0
    ids = list(brokers) if args.broker == "all" else [args.broker]
    if args.image is not None and (args.backend != "testcontainers" or len(ids) != 1):
        print(
            "capture: --image needs --backend testcontainers and a single --broker", file=sys.stderr
        )
        return 2
    unknown = [b for b in ids if b not in brokers]
    if unknown:
        print(
            f"capture: unknown broker {unknown[0]!r}; known: {', '.join(brokers)}", file=sys.stderr
        )
        return 2
    names: Any = args.scenario or ["all"]
    if "all" in names:
        names = "all"
    else:
        bad = [n for n in names if n not in SCENARIOS]
        if bad:
            print(f"capture: unknown scenario {bad[0]!r} (see --list)", file=sys.stderr)
            return 2
    if args.out is None:
        from conformance.corpus.golden import default_root

        out = default_root()
    else:
        out = args.out

    def progress(message: str) -> None:
        print(f"capture: {message}", file=sys.stderr, flush=True)

    engine = None
    if args.backend == "testcontainers":
        from conformance.capture.containers.engine import EngineUnavailable, ensure_engine

        try:
            import testcontainers  # type: ignore[import-not-found]  # noqa: F401
        except ImportError:
            print(
                "capture: backend testcontainers needs the testcontainers package "
                "(pip install 'kafka-conformance[test]')",
                file=sys.stderr,
            )
            return 2
        try:
            engine = ensure_engine()
        except EngineUnavailable as exc:
            print(f"capture: backend testcontainers unavailable: {exc}", file=sys.stderr)
            return 2
        progress(
            f"container engine at {engine.url}"
            + (" (started; stopped again at the end)" if engine.started else "")
        )
    try:
        return _capture_all(args, ids, names, out, brokers, progress)
    except KeyboardInterrupt:
        print("\ncapture: interrupted (brokers stopped, containers removed)", file=sys.stderr)
        return 130
    finally:
        if engine is not None:
            engine.stop()  # only stops a service this run started


def _capture_all(
    args: argparse.Namespace,
    ids: list[str],
    names: Any,
    out: Path,
    brokers: dict[str, Any],
    progress: Any,
) -> int:
    from conformance.capture.containers.images import ImageBuildError
    from conformance.capture.jvm import BrokerStartError
    from conformance.capture.run import capture
    from conformance.jvm.kafka_jars import KafkaJarsUnavailable
    from conformance.jvm.runtime import checkout_root

    status = 0
    for bid in ids:
        try:
            result = capture(
                bid,
                names,
                out,
                backend=args.backend,
                progress=progress,
                expectations=not args.no_expectations,
                image=args.image,
            )
        except KafkaJarsUnavailable as e:
            version = brokers[bid].version
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            if checkout_root() is None:  # an installed package: the message says what to set
                print(f"capture: {bid}: Kafka {version} jars unavailable: {first}", file=sys.stderr)
                return 2
            print(
                f"capture: {bid}: Kafka {version} jars missing ({first}); get them once with "
                f"`scripts/fetch-kafka-jars {version}` (Maven, from Maven Central, into "
                f".cache/kafka/{version}/)",
                file=sys.stderr,
            )
            return 2
        except (BrokerStartError, ImageBuildError) as e:
            progress(f"{bid}: FAILED to start: {e}")
            status = 1
            continue
        if not result.tell_cases(progress):
            status = 1
    return status
