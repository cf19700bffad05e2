"""The codecs' whole-payload fast paths (``codecs.read_whole``) against their Java models.

``read_whole`` decompresses a magic-2 batch's payload in one call when it is sure Kafka's
stream reads it to its end without error or short read; otherwise it returns None and the
model (``codecs.read_stream``) decides. The rule checked here, on payloads made by the real
writers with their fault knobs and then cut or flipped: where ``read_whole`` returns data, the
model reads exactly that data cleanly (``fuzz.targets.check_read_whole``, which the codec fuzz
targets run on every input too); and on what Kafka's producers write, it does return the data.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import codecs
from conformance.codecs import gzip as kgzip
from conformance.codecs import lz4 as klz4
from conformance.codecs import snappy as ksnappy
from conformance.codecs import zstd as kzstd
from conformance.fuzz.targets import check_read_whole

WHOLE = [c.id for c in codecs.CODECS.values() if c.read_whole is not None]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_text = st.binary(max_size=200).map(lambda b: b * 3)  # compressible, sometimes empty
data_st = st.one_of(_text, st.binary(max_size=3000), st.just(b"kafka " * 20_000))


def test_every_compressed_codec_has_a_fast_path() -> None:
    assert sorted(WHOLE) == sorted(c for c in codecs.CODECS if c != codecs.NONE)


@SETTINGS
@given(codec=st.sampled_from(WHOLE), data=data_st)
def test_what_kafka_writes_is_read_whole(codec: int, data: bytes) -> None:
    """The Java producer's framing (the kit's writer with no fault) takes the fast path."""
    payload = codecs.write_stream(codec, data)
    check_read_whole(codec, payload, codecs.DEFAULT_DECOMPRESSED_LIMIT)
    if data:  # empty data: a frame of nothing is left to the model (zstd)
        assert codecs.read_whole(codec, payload) == data
        assert codecs.read_whole(codec, payload, len(data) - 1) is None  # over the limit


def _mutate(payload: bytes, cut: int, flip: int | None) -> bytes:
    if cut:
        payload = payload[: max(0, len(payload) - cut)]
    if flip is not None and payload:
        i = flip % len(payload)
        payload = payload[:i] + bytes([payload[i] ^ 0x5A]) + payload[i + 1 :]
    return payload


mutation = st.tuples(
    st.sampled_from([0, 0, 1, 2, 3, 5, 9, 40]), st.one_of(st.none(), st.integers(0, 1 << 20))
)


@st.composite
def snappy_payloads(draw: st.DrawFn, data_of: st.SearchStrategy[bytes] = data_st) -> bytes:
    data = draw(data_of)
    shape = draw(st.sampled_from(["xerial", "raw", "concatenated", "tail"]))
    if shape == "raw":
        return ksnappy.write_raw(data)
    payload = ksnappy.write_xerial(
        data,
        block=draw(st.sampled_from([None, 7, 1000, ksnappy.BLOCK_SIZE])),
        version=draw(st.sampled_from([1, 1, 2])),
        compat=draw(st.sampled_from([1, 1, 0])),
    )
    if shape == "concatenated":
        payload += ksnappy.write_xerial(draw(data_of))
    elif shape == "tail":
        payload += draw(st.binary(min_size=1, max_size=6))
    return payload


@st.composite
def lz4_payloads(draw: st.DrawFn, data_of: st.SearchStrategy[bytes] = data_st) -> bytes:
    return klz4.write_frame(
        draw(data_of),
        block_size=draw(st.sampled_from([klz4.BLOCK_SIZE, 100, 1000])),
        content_size=draw(st.sampled_from([None, None, 5])),
        block_checksum=draw(st.sampled_from([False, False, False, True])),  # Java's: none
        content_checksum=draw(st.sampled_from([False, False, False, True])),
        end_mark=draw(st.sampled_from([True, True, True, False])),
        trailer=draw(st.sampled_from([b"", b"", b"\x00", b"tail"])),
    )


@st.composite
def zstd_payloads(draw: st.DrawFn, data_of: st.SearchStrategy[bytes] = data_st) -> bytes:
    data = draw(data_of)
    shape = draw(st.sampled_from(["frame", "raw", "two", "skippable", "tail"]))
    if shape == "raw":
        return kzstd.write_raw_frame(
            data,
            content_size=draw(st.sampled_from([None, len(data), len(data) + 1])),
            checksum=draw(st.sampled_from([False, True, 12345])),
        )
    payload = kzstd.write_frame(
        data, content_size=draw(st.booleans()), checksum=draw(st.booleans())
    )
    if shape == "two":
        payload += kzstd.write_frame(draw(data_of))
    elif shape == "skippable":
        payload = kzstd.write_skippable_frame(b"skip") + payload
    elif shape == "tail":
        payload += draw(st.binary(min_size=1, max_size=6))
    return payload


@st.composite
def gzip_payloads(draw: st.DrawFn, data_of: st.SearchStrategy[bytes] = data_st) -> bytes:
    member = kgzip.write_member(
        draw(data_of),
        flags=draw(st.sampled_from([0, 2, 4, 8, 16, 30])),
        extra=b"ex",
        fname=b"n",
        comment=b"c",
    )
    tail = draw(st.sampled_from([b"", b"\x00", b"x" * 30, kgzip.write_member(b"second")]))
    return member + tail


#: a codec's payloads: Java's framing of the data and what the writers' fault knobs make
#: (also the payloads of tests/test_run_fast.py, around records regions)
PAYLOAD_STRATEGIES = {
    codecs.GZIP: gzip_payloads,
    codecs.SNAPPY: snappy_payloads,
    codecs.LZ4: lz4_payloads,
    codecs.ZSTD: zstd_payloads,
}
PAYLOADS = {codec: strategy() for codec, strategy in PAYLOAD_STRATEGIES.items()}


@pytest.mark.parametrize("codec", WHOLE, ids=codecs.codec_name)
@SETTINGS
@given(data=st.data(), mutate=mutation)
def test_fast_path_agrees_with_the_java_model(
    codec: int, data: st.DataObject, mutate: tuple[int, int | None]
) -> None:
    payload = _mutate(data.draw(PAYLOADS[codec]), *mutate)
    check_read_whole(codec, payload, 64 * 1024)


@pytest.mark.parametrize(
    ("codec", "payload"),
    [
        (codecs.SNAPPY, ksnappy.write_xerial(b"abc" * 100) + b"\x00\x00"),  # ignored by Java
        (codecs.SNAPPY, ksnappy.write_xerial(b"abc" * 100, version=2)),  # noted, not checked
        (codecs.SNAPPY, ksnappy.write_xerial(b"abc") + ksnappy.write_xerial(b"def")),
        (codecs.SNAPPY, ksnappy.write_xerial([b"abc", b""], block=None)),  # an empty read
        (codecs.SNAPPY, b""),
        (codecs.LZ4, klz4.write_frame(b"abc" * 100, trailer=b"x")),  # ignored by Java
        (codecs.LZ4, klz4.write_frame(b"abc" * 100, block_checksum=True)),
        (codecs.LZ4, klz4.write_frame(b"abc" * 100, end_mark=False)),
        (codecs.LZ4, klz4.write_frame(b"abc" * 100, magic=0)),  # the broken header checksum
        (codecs.ZSTD, kzstd.write_frame(b"abc" * 100, content_size=False)),
        (codecs.ZSTD, kzstd.write_frame(b"abc") + kzstd.write_frame(b"def")),
        (codecs.ZSTD, kzstd.write_skippable_frame(b"x") + kzstd.write_frame(b"abc")),
        (codecs.ZSTD, kzstd.write_frame(b"abc" * 100)[:-1]),
        (codecs.ZSTD, kzstd.write_frame(b"") + b"\x00"),  # the model fails on the extra byte
    ],
    ids=lambda v: codecs.codec_name(v) if isinstance(v, int) else "",
)
def test_what_the_fast_path_leaves_to_the_model(codec: int, payload: bytes) -> None:
    """Payloads Java reads with a quirk (trailing bytes ignored, an empty read, several
    frames, a missing field) are not the fast path's: the model decides them."""
    assert codecs.read_whole(codec, payload) is None
