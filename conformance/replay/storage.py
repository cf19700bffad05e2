"""Object stores as the replay reaches them: ``pyarrow.fs`` file systems named by URIs
(``s3://bucket/key?endpoint_override=...``, ``gs://...``, ``hdfs://...``), with a timeout on
every request. Inputs (``inputs``) are read and outputs (``output``) written through here.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["DEFAULT_IO_TIMEOUT", "IO_ATTEMPTS", "arrow_fs", "is_uri", "with_query"]


def is_uri(path: str) -> bool:
    """Whether ``path`` is a URI (``scheme://...``), not a local path."""
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path) is not None


#: seconds an object store may stay silent before a request fails (``--io-timeout``); a
#: request is tried :data:`IO_ATTEMPTS` times
DEFAULT_IO_TIMEOUT = 20.0
IO_ATTEMPTS = 3


def arrow_fs(uri: str, timeout: float = DEFAULT_IO_TIMEOUT) -> tuple[Any, str]:
    """The ``pyarrow.fs`` file system of ``uri`` and the path in it, with ``timeout`` on
    every request: S3 (connect and transfer: curl's low-speed limit on Linux; tried
    :data:`IO_ATTEMPTS` times) and GCS (its retry time limit: without it, credentials that
    cannot be found are retried for 15 minutes, silently). The file system's other settings
    are the URI's (``?endpoint_override=...&scheme=http&region=...``), read back from it."""
    from datetime import timedelta

    from pyarrow import fs as pafs  # the replay extra; only object stores need it here

    fs, path = pafs.FileSystem.from_uri(uri)
    if isinstance(fs, pafs.S3FileSystem):
        settings = fs.__reduce__()[1][0]  # the constructor's arguments, as pickling keeps them
        settings.update(connect_timeout=timeout, request_timeout=timeout)
        fs = pafs.S3FileSystem(
            **settings, retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=IO_ATTEMPTS)
        )
    elif isinstance(fs, pafs.GcsFileSystem):
        settings = fs.__reduce__()[1][0]
        settings["retry_time_limit"] = timedelta(seconds=timeout)
        fs = pafs.GcsFileSystem(**settings)
    return fs, str(path)


def with_query(uri: str, path: str) -> str:
    """``scheme://path`` plus ``uri``'s query (the file system's settings), so each file's
    URI opens the file system its input named."""
    scheme, rest = uri.split("://", 1)
    query = rest.partition("?")[2]
    return f"{scheme}://{path}" + (f"?{query}" if query else "")
