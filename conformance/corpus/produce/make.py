"""``scripts/make-produce-corpus``: write ``corpora/produce/`` and compare the kit with it.

For every crafted produce case (``cases.py``) and every supported broker version it applies
to, the broker oracle answers the case's requests (``jvm.broker_oracle``: that version's own
``UnifiedLog``); the requests and answers are written under ``corpora/produce/``
(``store.py``). Then every case is judged by the kit's model (``conformance.broker``) and
compared with Kafka's answers: the differences go to a report (default
``/tmp/produce-diff.txt``) and the exit status is 1 when there are any. Nothing here writes
an expectation of its own.
"""

from __future__ import annotations

import argparse
import fnmatch
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from conformance.broker.compare import diff_verdicts
from conformance.broker.versions import VERSIONS
from conformance.corpus.produce.cases import cases
from conformance.corpus.produce.store import judge, read_corpus, write_corpus
from conformance.jvm.kafka_jars import use_kafka2_zstd
from conformance.jvm.runtime import java_executable, repo_root

__all__ = ["main"]

_EPILOG = """\
exit codes:
  0  written (unless --diff-only) and the kit agrees with Kafka on every case
  1  differences (listed in the report)
  2  usage error, or the broker oracle could not run

examples:
  scripts/make-produce-corpus
  scripts/make-produce-corpus --diff-only --only 'pid-*'
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="make-produce-corpus",
        description="Write corpora/produce/ with the broker oracle's answers, then compare "
        "the kit's broker model with them.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--diff-only", action="store_true", help="compare with what is on disk")
    p.add_argument("--only", metavar="GLOB", help="only the cases whose name matches")
    p.add_argument(
        "--report", type=Path, default=Path("/tmp/produce-diff.txt"), help="the difference report"
    )
    args = p.parse_args(argv)
    root = repo_root() / "corpora" / "produce"
    use_kafka2_zstd()  # the model of 2.x reads zstd with Kafka 2.x's libzstd
    if not args.diff_only:
        from conformance.jvm.broker_oracle import BrokerOracle, source_hash

        oracles: dict[str, BrokerOracle] = {}
        java = subprocess.run(
            [java_executable(), "-version"], capture_output=True, text=True, check=False
        ).stderr.splitlines()
        provenance = {
            "generatedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": "scripts/make-produce-corpus",
            "java": java[0] if java else None,
            "oracleSources": {v: source_hash(v) for v in VERSIONS},
        }
        try:
            write_corpus(
                root,
                cases(),
                lambda v: oracles.setdefault(v, BrokerOracle(v)),
                tuple(VERSIONS),
                provenance,
            )
        finally:
            for o in oracles.values():
                o.close()
    lines = []
    compared = 0
    for stored in read_corpus(root):
        case = stored.case
        if args.only and not fnmatch.fnmatch(case.name, args.only):
            continue
        for version, expected in stored.expected.items():
            ours = judge(case, version)
            for i, (e, a) in enumerate(zip(expected, ours, strict=True)):
                compared += 1
                for d in diff_verdicts(e, a):
                    lines.append(f"{case.name} [{version}] request {i}: {d}")
    args.report.write_text("\n".join(lines) + ("\n" if lines else ""))
    print(
        f"make-produce-corpus: {compared} answers compared, {len(lines)} differences"
        + (f" (see {args.report})" if lines else ""),
        file=sys.stderr,
    )
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
