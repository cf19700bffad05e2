"""``python -m conformance.cli``: the same as the ``kafka-conformance`` command."""

import sys

from conformance.cli import main

sys.exit(main())
