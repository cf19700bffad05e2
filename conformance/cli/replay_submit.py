"""The replay as a ``spark-submit`` application: the master comes from ``spark-submit``.

    spark-submit --master spark://host:7077 "$(python -m conformance.cli.replay_submit --path)" \\
        INPUT... --out DIR [--profile strict] [--split-bytes 256MiB]

Takes the options of ``kafka-conformance replay`` (``--master`` is ignored: spark-submit's
wins). ``python -m conformance.cli.replay_submit --path`` prints this file's path.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--path"]:
        print(__file__)
        return 0
    from conformance.cli import replay as cli_replay

    parser = argparse.ArgumentParser(
        prog="spark-submit ... replay_submit.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cli_replay.add_arguments(parser)
    args = parser.parse_args(argv)
    return cli_replay.run(args, None if args.engine == "spark" else args.master)


if __name__ == "__main__":
    sys.exit(main())
