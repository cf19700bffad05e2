"""Arrow record batches from the replay's Python columns, built from buffers.

``pyarrow.record_batch`` converts Python lists itself, but its converter first asks whether
each list is a pandas object, and that question imports pandas (measured: 0.39 s, once per
process: 8% of a 1 GB process-engine replay, and again in every Spark Python worker). The
replay's columns have four shapes only, so they are laid out here directly in Arrow's format
(little-endian on every platform Arrow supports natively, as ``array.array`` writes them):

===============  ===========================================================================
Arrow type       buffers
===============  ===========================================================================
int8/32/64       validity bitmap (only when a value is None; bit i set: value i present),
                 the values (``array.array``; a None is stored as 0 under a cleared bit)
string           validity bitmap, int32 offsets (n + 1, starting at 0), the UTF-8 bytes
list<string>     int32 offsets into the child strings (never null), the child string array
===============  ===========================================================================

tests/test_replay.py holds :func:`record_batch` to ``pyarrow.record_batch`` on the same
columns. A column over 2 GiB of text (more than int32 offsets) raises ``OverflowError``: a
chunk is ``TaskOptions.rows_per_batch`` rows, far below it.
"""

from __future__ import annotations

import array
from collections.abc import Mapping, Sequence
from itertools import accumulate, chain
from typing import Any

__all__ = ["record_batch"]

_INT_CODES = {8: "b", 16: "h", 32: "i", 64: "q"}


def _validity(values: Sequence[Any]) -> tuple[Any, int]:
    """The validity bitmap of ``values`` (None when nothing is null) and the null count."""
    import pyarrow as pa

    nulls = values.count(None)
    if not nulls:
        return None, 0
    bits = bytearray((len(values) + 7) // 8)
    if nulls < len(values):
        for i, v in enumerate(values):
            if v is not None:
                bits[i >> 3] |= 1 << (i & 7)
    return pa.py_buffer(bits), nulls


def _offsets(lengths: Sequence[int]) -> Any:
    import pyarrow as pa

    offsets = array.array("i", [0])
    offsets.extend(accumulate(lengths))  # OverflowError past 2**31 - 1
    return pa.py_buffer(offsets)


def _ints(arrow_type: Any, values: Sequence[int | None]) -> Any:
    import pyarrow as pa

    validity, nulls = _validity(values)
    filled = values if not nulls else [0 if v is None else v for v in values]
    data = array.array(_INT_CODES[arrow_type.bit_width], filled)
    return pa.Array.from_buffers(
        arrow_type, len(values), [validity, pa.py_buffer(data)], null_count=nulls
    )


def _strings(values: Sequence[str | None]) -> Any:
    import pyarrow as pa

    n = len(values)
    validity, nulls = _validity(values)
    if n and values.count(values[0]) == n:
        # one value throughout (a range's file and directory, most rows' verdict): its bytes
        # once, the offsets a range
        one = b"" if values[0] is None else values[0].encode("utf-8")
        width = len(one)
        offsets = (
            array.array("i", range(0, (n + 1) * width, width))  # OverflowError past 2**31 - 1
            if width
            else array.array("i", bytes(4 * (n + 1)))
        )
        buffers = [validity, pa.py_buffer(offsets), pa.py_buffer(one * n)]
    else:  # each distinct value encoded once
        utf8 = {v: b"" if v is None else v.encode("utf-8") for v in set(values)}
        encoded = list(map(utf8.__getitem__, values))
        buffers = [validity, _offsets(list(map(len, encoded))), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), n, buffers, null_count=nulls)


def _string_lists(values: Sequence[Sequence[str]]) -> Any:
    import pyarrow as pa

    offsets = pa.Array.from_buffers(
        pa.int32(), len(values) + 1, [None, _offsets(list(map(len, values)))]
    )
    return pa.ListArray.from_arrays(offsets, _strings(list(chain.from_iterable(values))))


def _column(arrow_type: Any, values: Sequence[Any]) -> Any:
    import pyarrow as pa

    if pa.types.is_string(arrow_type):
        return _strings(values)
    if pa.types.is_integer(arrow_type) and pa.types.is_signed_integer(arrow_type):
        return _ints(arrow_type, values)
    if pa.types.is_list(arrow_type) and pa.types.is_string(arrow_type.value_type):
        return _string_lists(values)
    raise TypeError(f"no Arrow layout here for {arrow_type}")


def record_batch(columns: Mapping[str, Sequence[Any]], schema: Any) -> Any:
    """``pyarrow.record_batch(columns, schema=schema)`` for the replay's column types (signed
    ints, strings, lists of strings), without pyarrow's per-list pandas check."""
    import pyarrow as pa

    return pa.RecordBatch.from_arrays(
        [_column(field.type, columns[field.name]) for field in schema], schema=schema
    )
