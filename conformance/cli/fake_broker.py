"""``kafka-conformance fake-broker``: serve one partition's bytes to a real consumer
(``conformance.fakebroker``) until interrupted."""

from __future__ import annotations

import argparse
import io
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from conformance.broker.fetch import FetchLog
from conformance.cli.common import add_command, non_negative_int, non_negative_int64, positive_int
from conformance.errors import DecodeError
from conformance.fakebroker import FakeBroker, Faults, Served, max_magic, read_log, topic_problem
from conformance.jvm.kafka_jars import KafkaJarsUnavailable
from conformance.jvm.message_defs import message_schemas

_PROG = "kafka-conformance fake-broker"

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

#: the release whose protocol definitions the fake broker speaks by default (Fetch v0-v17)
DEFAULT_DEFINITIONS = "3.9.2"
#: lines waiting to be written to stdout (or stderr); beyond it they are dropped
MAX_QUEUED_LINES = 1000
#: how long a stopping broker waits for its queued lines to be written
_DRAIN_SECONDS = 1.0
INT32_MAX = 2**31 - 1

_EPILOG = f"""\
Listens on 127.0.0.1 (a free port) as broker 1 of a one-broker cluster leading one partition
of one topic, and serves PATH's bytes verbatim in Fetch responses: a partition directory (its
segments' .log, .index and .txnindex, e.g. corpora/<broker>/<case>/log/<topic>-0) or one file
of record batches (a segment, a captured records field). It answers ApiVersions, Metadata,
ListOffsets, Fetch (every version of Kafka's definitions; from v4 only when the log holds
magic 2 batches), FindCoordinator, JoinGroup and SyncGroup (a group of one: the subscribing
consumer leads it and is given the assignment it sends), OffsetFetch (nothing committed),
OffsetCommit, Heartbeat and LeaveGroup. A Fetch returns what a leader reading its segments
returns (whole batches
from the one holding the fetch offset, cut at the size limit; KIP-74 from v3; aborted
transactions of the .txnindex for read_committed). See docs/fake-broker.md.

The first line on stdout is "bootstrap 127.0.0.1:PORT"; then one line per request unless
--quiet (a client id's control characters escaped). Output never holds up serving: lines
are written by a thread of their own, and when stdout is not read (a full pipe) more than
{MAX_QUEUED_LINES} waiting lines are dropped (a count on stderr at the end). Ctrl-C (or
SIGTERM) stops it; every connection is closed.

exit codes:
  {EXIT_OK}  stopped by Ctrl-C / SIGTERM
  {EXIT_ERROR}  the protocol definitions could not be read (Kafka's jars)
  {EXIT_USAGE}  usage error (PATH missing, holding no .log, a segment not named after an
     offset; a topic name Kafka refuses: [a-zA-Z0-9._-], at most 249 characters; a
     partition over 2147483647)

examples:
  kafka-conformance fake-broker \
      corpora/kafka-4.3.1-kraft/txn-commit-abort-v2-java/log/txn-commit-abort-v2-java-0
  kafka-conformance fake-broker segment.log --topic orders --partition 3 --quiet
  kafka-conformance fake-broker t-0 --cut-fetch 1:100   # cut the first data response
"""


def register(subparsers: Any) -> None:
    p = add_command(
        subparsers,
        "fake-broker",
        "serve a partition's bytes to real consumers (a fake broker on 127.0.0.1)",
        "Serve one partition directory or file of record batches to real Kafka "
        "consumers, as a one-broker cluster on 127.0.0.1.",
        _EPILOG,
    )
    p.add_argument("path", metavar="PATH", help="a partition directory or a file of batches")
    p.add_argument(
        "--topic", help="topic name (default: the directory's name without -<partition>, or t)"
    )
    p.add_argument(
        "--partition",
        type=non_negative_int,
        help="partition number (default: the directory's suffix, or 0)",
    )
    p.add_argument(
        "--high-watermark",
        type=non_negative_int64,
        metavar="OFFSET",
        help="the high watermark reported (default: the log end offset)",
    )
    p.add_argument(
        "--definitions",
        default=DEFAULT_DEFINITIONS,
        metavar="VERSION",
        help="Kafka release whose JSON message definitions the broker speaks (default %(default)s)",
    )
    p.add_argument(
        "--cut-fetch",
        metavar="N:BYTES",
        help="fault: send only BYTES bytes of the N-th Fetch response holding records, then "
        "close the connection",
    )
    p.add_argument("--quiet", action="store_true", help="no line per request")
    p.set_defaults(func=_cmd_fake_broker)


def _names(path: Path, topic: str | None, partition: int | None) -> tuple[str, int]:
    stem, _, suffix = path.name.rpartition("-")
    from_dir = path.is_dir() and stem and suffix.isdigit()
    return (
        topic if topic is not None else (stem if from_dir else "t"),
        partition if partition is not None else (int(suffix) if from_dir else 0),
    )


def _cut(text: str | None) -> tuple[int, int] | None | str:
    if text is None:
        return None
    n, _, size = text.partition(":")
    try:
        return positive_int(n), non_negative_int(size)
    except argparse.ArgumentTypeError as e:
        return f"--cut-fetch {text!r}: {e} (expected N:BYTES, e.g. 1:100)"


def _escaped(text: str | None) -> str:
    """``text`` on one line: control characters (and backslashes) escaped."""
    if text is None:
        return "None"
    if text.isprintable() and "\\" not in text:
        return text
    return text.encode("unicode_escape").decode("ascii")


class _Lines:
    """Lines for one output, written by a thread of their own so that a caller never waits:
    at most :data:`MAX_QUEUED_LINES` wait; more are dropped (``dropped``), as is every line
    after the reader went away (a broken pipe). Written to the file descriptor itself, so a
    writer blocked on a full pipe holds no lock the interpreter needs at exit."""

    def __init__(self, stream: Any) -> None:
        self.dropped = 0
        self._broken = False
        self._queue: queue.Queue[bytes] = queue.Queue(MAX_QUEUED_LINES)
        self._write: Callable[[bytes], None]
        try:
            stream.flush()
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            self._write = lambda data: (stream.write(data.decode()), stream.flush())  # type: ignore[func-returns-value]
        else:
            self._write = lambda data: _write_all(fd, data)
        threading.Thread(target=self._run, name="fake-broker-output", daemon=True).start()

    def put(self, line: str) -> None:
        try:
            self._queue.put_nowait((line + "\n").encode("utf-8", "backslashreplace"))
        except queue.Full:
            self.dropped += 1

    def drain(self, seconds: float) -> None:
        """Wait up to ``seconds`` for the lines queued so far to be written."""
        deadline = time.monotonic() + seconds
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)

    def _run(self) -> None:
        while True:
            data = self._queue.get()
            try:
                if self._broken:
                    self.dropped += 1
                else:
                    self._write(data)
            except OSError:  # the reader went away (EPIPE) or the descriptor is closed
                self._broken = True
                self.dropped += 1
            finally:
                self._queue.task_done()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _cmd_fake_broker(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.exists():
        print(f"{_PROG}: {args.path}: no such file or directory", file=sys.stderr)
        return EXIT_USAGE
    cut = _cut(args.cut_fetch)
    if isinstance(cut, str):
        print(f"{_PROG}: {cut}", file=sys.stderr)
        return EXIT_USAGE
    topic, partition = _names(path, args.topic, args.partition)
    problem = topic_problem(topic)
    if problem is not None:
        how = "" if args.topic is not None else " (from the directory's name: give --topic)"
        print(f"{_PROG}: topic {ascii(topic)[:80]}: {problem}{how}", file=sys.stderr)
        return EXIT_USAGE
    if partition > INT32_MAX:
        print(f"{_PROG}: partition {partition}: at most {INT32_MAX}", file=sys.stderr)
        return EXIT_USAGE
    try:
        log: FetchLog = read_log(path)
        if args.high_watermark is not None:
            log = FetchLog(log.segments, high_watermark=args.high_watermark)
    except (ValueError, OSError, DecodeError) as e:
        print(f"{_PROG}: {args.path}: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        schemas = message_schemas(args.definitions, clients_only=True)
    except KafkaJarsUnavailable as e:
        print(f"{_PROG}: {e}", file=sys.stderr)
        return EXIT_ERROR
    try:
        served = Served(
            schemas, topic, partition, log, max_magic=max_magic(log), faults=Faults(cut_fetch=cut)
        )
    except ValueError as e:  # a log no broker holds (offsets past a long)
        print(f"{_PROG}: {args.path}: {e}", file=sys.stderr)
        return EXIT_USAGE
    names = {
        s.api_key: s.name.removesuffix("Request") for s in schemas.values() if s.type == "request"
    }

    out, err = _Lines(sys.stdout), _Lines(sys.stderr)

    def on_request(api_key: int, version: int, client_id: str | None) -> None:
        if not args.quiet:
            out.put(f"{names.get(api_key, api_key)} v{version} from {_escaped(client_id)}")

    stop = threading.Event()

    def interrupted(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, interrupted)
    try:
        with FakeBroker(served, on_request=on_request) as broker:
            out.put(f"bootstrap {broker.bootstrap}")
            err.put(
                f"serving {_escaped(str(path))} as {topic}-{partition}: log start "
                f"{log.log_start_offset}, high watermark {log.high_watermark}, magic up to "
                f"{served.max_magic}"
            )
            try:
                while not stop.wait(0.5):
                    pass
            except KeyboardInterrupt:
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    out.drain(_DRAIN_SECONDS)
    if out.dropped:
        err.put(f"{_PROG}: {out.dropped} lines not written (stdout was not read)")
    err.drain(_DRAIN_SECONDS)
    return EXIT_OK
