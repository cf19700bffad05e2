"""Wrong arguments to the library's entry points are the caller's bug, not bad input: they get
a ``TypeError`` / ``ValueError`` naming the argument, never a verdict on made-up bytes (before:
``decode(5)`` decoded five zero bytes, ``decode("str")`` and ``decompressed_limit=None`` raised
raw ``TypeError``s from deep inside)."""

from __future__ import annotations

import pytest

from conformance import StreamDecoder, decode
from conformance.wire.builder import write_batch

GOOD = write_batch([(1_700_000_000_000, b"k", b"v")])


@pytest.mark.parametrize("data", [5, "str", None, 3.0, True, object()])
def test_data_must_be_bytes_like(data: object) -> None:
    with pytest.raises(TypeError, match="data must be bytes"):
        decode(data)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"decompressed_limit": None}, TypeError, "decompressed_limit"),
        ({"decompressed_limit": -1}, ValueError, "decompressed_limit"),
        ({"decompressed_limit": "10"}, TypeError, "decompressed_limit"),
        ({"max_records": -5}, ValueError, "max_records"),
        ({"max_records": 2.5}, TypeError, "max_records"),
        ({"mode": "disk"}, ValueError, "mode"),
        ({"profile": "lenient"}, ValueError, "profile"),
    ],
)
def test_bad_options_name_the_argument(kwargs: dict[str, object], error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        decode(GOOD, **kwargs)  # type: ignore[arg-type]


def test_stream_decoder_keep_checks() -> None:
    with pytest.raises(ValueError, match="keep"):
        StreamDecoder(GOOD, keep=-1)
    with pytest.raises(ValueError, match="strict"):
        StreamDecoder(GOOD, keep=0, profile="strict")


def test_bytes_like_inputs_are_accepted() -> None:
    for data in (GOOD, bytearray(GOOD), memoryview(GOOD)):
        assert decode(data).outcome == "ok"
    assert decode(GOOD, max_records=None, decompressed_limit=0).outcome == "ok"  # uncompressed
