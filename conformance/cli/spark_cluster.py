"""``kafka-conformance spark-cluster``: a Spark standalone cluster on 127.0.0.1 until Ctrl-C
(``conformance.replay.cluster``)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from conformance.cli.common import add_command, positive_int, seconds
from conformance.host.sessions import TerminatedBySignal
from conformance.replay.cluster import (
    ClusterError,
    SparkUnavailable,
    StandaloneCluster,
    read_memory_mb,
)

_PROG = "kafka-conformance spark-cluster"

EXIT_STOPPED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

_EPILOG = f"""\
Starts a Spark standalone master and N workers on 127.0.0.1 with Spark's own deploy classes
(spark-class org.apache.spark.deploy.master.Master / ...worker.Worker) from the pyspark
distribution (or $SPARK_HOME), on free ports; prints the master URL, its web UI, the log
directory and the daemons' pids once every worker is ALIVE, and keeps the cluster up until
Ctrl-C or SIGTERM. Then every process it started is stopped (executors and Python workers
included) and its directory removed (unless --work-dir was given, or a daemon failed: its
logs are kept). See docs/replay.md.

exit codes:
  {EXIT_STOPPED}  stopped by Ctrl-C
  {EXIT_FAILED}  the cluster did not come up, or a daemon exited (the error shows its log), or
     Spark/Java is not installed
  {EXIT_USAGE}  usage error (bad option)
  143  stopped by SIGTERM

examples:
  kafka-conformance spark-cluster --workers 2
  kafka-conformance spark-cluster --workers 2 --cores 1 --memory 1g --work-dir /tmp/cluster
  # then, in another shell:
  kafka-conformance replay corpus/ --out out --master spark://127.0.0.1:PORT \\
      --conf spark.executor.memory=512m
"""


def _memory(text: str) -> str:
    try:
        read_memory_mb(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def register(subparsers: Any) -> None:
    p = add_command(
        subparsers,
        "spark-cluster",
        "run a Spark standalone cluster on 127.0.0.1 until Ctrl-C (for replay --master)",
        "Start a Spark standalone cluster (one master, N workers) on 127.0.0.1 "
        "from the pyspark distribution and keep it up until Ctrl-C.",
        _EPILOG,
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        default=2,
        metavar="N",
        help="number of workers (default %(default)s)",
    )
    p.add_argument(
        "--cores",
        type=positive_int,
        default=1,
        metavar="N",
        help="cores per worker (default %(default)s)",
    )
    p.add_argument(
        "--memory",
        type=_memory,
        default="1g",
        metavar="SIZE",
        help="memory per worker: 512m, 1g, ... (default %(default)s)",
    )
    p.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep logs and work directories here (default: a temporary directory, removed "
        "at exit)",
    )
    p.add_argument(
        "--startup-timeout",
        type=seconds,
        default=120.0,
        metavar="SECONDS",
        help="seconds to wait for every worker (default %(default)g)",
    )
    p.set_defaults(func=_cmd_spark_cluster)


def _cmd_spark_cluster(args: argparse.Namespace) -> int:
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C must work even if our parent started us with SIGINT ignored (``cmd &``)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    cluster = StandaloneCluster(
        args.workers, args.cores, args.memory, args.work_dir, args.startup_timeout
    )
    try:
        began = time.monotonic()
        with cluster:
            print(
                f"master  {cluster.master_url}\nweb UI  {cluster.ui_url}\n"
                f"logs    {cluster.log_dir}\npids    {cluster.processes}\n"
                f"up in {time.monotonic() - began:.1f} s; Ctrl-C stops the cluster",
                flush=True,
            )
            while True:
                cluster.check()
                time.sleep(1.0)
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
        return EXIT_STOPPED
    except TerminatedBySignal as e:
        print(f"stopped ({signal.Signals(e.signum).name})", file=sys.stderr)
        return int(e.code)  # type: ignore[arg-type]
    except (ClusterError, SparkUnavailable) as e:
        print(f"{_PROG}: {e}", file=sys.stderr)  # multi-line: the daemons' log tails
        return EXIT_FAILED
