"""Crafted cases of area ``lz4-``."""

from __future__ import annotations

from functools import partial
from typing import Any

from conformance import codecs
from conformance.codecs.lz4 import Block, write_frame
from conformance.corpus.crafted._build import (
    LZ4,
    Collector,
    codec_batch,
    legacy_message,
    legacy_wrapper,
    simple_batch,
    simple_records,
    text,
    v1_inner,
)


def add_cases(add: Collector) -> None:
    recs = simple_records(3)
    raw = b"".join(recs)

    lb = partial(codec_batch, LZ4)

    def framed(name: str, description: str, **knobs: Any) -> None:
        """Case ``name``: the v2 lz4 batch of ``recs`` in a frame written with ``knobs``."""
        add(name, description, lb(write_frame([raw], **knobs)))

    def lw(magic: int, **knobs: Any) -> bytes:
        """A magic ``magic`` lz4 wrapper at offset 1 over two inner messages, in a frame
        written with ``knobs``."""
        inner = v1_inner(2, magic=magic, offsets=[0, 1])
        frame = write_frame([b"".join(inner)], **knobs)
        return legacy_wrapper(inner, magic=magic, codec=LZ4, offset=1, payload=frame)

    add(
        "lz4-v2-java",
        "§5.4/A.3: v2 lz4 batch as Java writes it (FLG 60 BD 40 HC 82)",
        lb(codecs.write_stream(LZ4, raw, 2)),
    )
    add(
        "lz4-multi-block-c18",
        "C18/§5.4: ~90 KB of records in two 64 KiB blocks",
        simple_batch(30, value_size=3000, attributes=LZ4),
    )
    framed(
        "lz4-v2-broken-hc-c16",
        "C16/§5.4: v2 batch with the magic-0 'broken' HC: 'Stream frame descriptor corrupted'",
        header_checksum="broken",
    )
    framed("lz4-v2-bad-hc", "§5.4: v2 batch with HC byte 00", header_checksum=0)
    add(
        "lz4-v0-broken-hc-c16a",
        "C16a/C17/C20/§5.4: v0 lz4 wrapper with the broken HC (as old Java wrote)",
        lw(0, header_checksum="broken"),
    )
    add(
        "lz4-v1-correct-hc-c16b",
        "C16b/§5.4: v1 lz4 wrapper with the correct HC",
        lw(1, header_checksum="correct"),
    )
    add(
        "lz4-v1-broken-hc-c16c",
        "C16c/§5.4: v1 lz4 wrapper with the broken HC: rejected",
        lw(1, header_checksum="broken"),
    )
    add(
        "lz4-v0-correct-hc-c16d",
        "C16d/§5.4: v0 lz4 wrapper with the correct HC: HC ignored for magic 0",
        lw(0, header_checksum="correct"),
    )
    add(
        "lz4-v0-garbage-hc",
        "§5.4: v0 lz4 wrapper with HC byte 0x5A: ignored",
        lw(0, header_checksum=0x5A),
    )
    framed("lz4-v2-correct-hc-c16", "C16/§5.4: v2 with the correct HC built by hand")
    framed(
        "lz4-reserved-bit0-dictid",
        "§5.4: FLG bit 0 (DictID in newer spec) set: 'Reserved bits must be 0'",
        flg=0x61,
    )
    framed("lz4-reserved-bit1", "§5.4: FLG bit 1 set", flg=0x62)
    framed(
        "lz4-dependent-blocks-c18",
        "C18/§5.4: FLG block independence 0: 'Dependent block stream is unsupported'",
        flg=0x40,
    )
    framed("lz4-version-0", "§5.4: FLG version bits 00", flg=0x20)
    framed("lz4-version-2", "§5.4: FLG version bits 10", flg=0xA0)
    framed(
        "lz4-bd-code-3",
        "§5.4: BD block max size code 3: 'Block size value must be between 4 and 7'",
        bd=0x30,
    )
    framed("lz4-bd-reserved-bits", "§5.4: BD reserved low bits set (0x41)", bd=0x41)
    framed("lz4-bd-reserved-bit7", "§5.4: BD reserved bit 7 set (0xC0)", bd=0xC0)
    framed("lz4-bd-256k", "§5.4: BD code 5 (256 KiB): accepted", bd=0x50)
    framed("lz4-bd-4m", "§5.4: BD code 7 (4 MiB): accepted", bd=0x70)
    framed(
        "lz4-content-size-c18",
        "C18/§5.4: FLG content-size flag with the true size",
        content_size=len(raw),
    )
    framed(
        "lz4-content-size-wrong",
        "§5.4: content size field 12345 (not the true size): not checked",
        content_size=12345,
    )
    framed(
        "lz4-block-checksum-good-c18",
        "C18/§5.4: block checksums present and correct",
        block_checksum=True,
    )
    framed(
        "lz4-block-checksum-bad",
        "§5.4: block checksum wrong: 'Block checksum mismatch'",
        block_checksum="bad",
    )
    framed(
        "lz4-content-checksum-good-c19",
        "C19/§5.4: content checksum present and correct",
        content_checksum=True,
    )
    framed(
        "lz4-content-checksum-wrong-c19",
        "C19/§5.4: content checksum wrong: read but not verified",
        content_checksum=0xDEADBEEF,
    )
    framed(
        "lz4-content-checksum-missing-c19",
        "C19/§5.4: content checksum flag set but the 4 bytes missing: raw BufferUnderflowException",
        content_checksum="missing",
    )
    framed(
        "lz4-all-flags",
        "§5.4: content size + block checksums + content checksum together",
        content_size=len(raw),
        block_checksum=True,
        content_checksum=True,
    )
    add(
        "lz4-uncompressed-blocks",
        "§5.4: every block stored uncompressed (size top bit)",
        lb(write_frame([Block(r, stored=True) for r in recs])),
    )
    add(
        "lz4-many-small-blocks",
        "§5.4: one compressed block per 7 bytes",
        lb(write_frame([raw[i : i + 7] for i in range(0, len(raw), 7)])),
    )
    add(
        "lz4-empty-compressed-block",
        "§5.4: a 1-byte compressed block (token 00) that decodes to 0 bytes, then the data block",
        lb(write_frame([b""] + [raw])),
    )
    add(
        "lz4-end-mark-first",
        "§5.4: a block size of 0 (end mark) before the data block: the stream ends early",
        lb(write_frame([Block(b"", stored=True, size=0), raw])),
    )
    framed(
        "lz4-missing-end-mark",
        "§5.4: no end mark: 'Error checking for remaining bytes' / 'Stream ended prematurely'",
        end_mark=False,
    )
    framed(
        "lz4-junk-after-end-mark",
        "§5.4: 9 junk bytes after the end mark: ignored",
        trailer=b"JUNKJUNK!",
    )
    framed(
        "lz4-junk-after-content-checksum",
        "§5.4: junk after end mark + content checksum: ignored",
        content_checksum=True,
        trailer=b"\x01\x02",
    )
    add(
        "lz4-block-size-over-max",
        "§5.4: block size field 0x10001 > 64 KiB max: 'Block size ... exceeded max'",
        lb(write_frame([Block(raw, size=0x10001)])),
    )
    add(
        "lz4-block-size-short",
        "§5.4: block size field larger than the bytes left: 'Stream ended prematurely'",
        lb(write_frame([Block(raw, size=0x400)], end_mark=False)),
    )
    add(
        "lz4-bad-magic",
        "§5.4: magic 05 22 4d 18: 'Stream unsupported (invalid magic bytes)'",
        lb(b"\x05" + codecs.write_stream(LZ4, raw, 2)[1:]),
    )
    add(
        "lz4-short-5-bytes",
        "§5.4: 5-byte payload: 'Stream ended prematurely'",
        lb(codecs.write_stream(LZ4, raw, 2)[:5]),
    )
    add("lz4-empty", "§5.4: empty lz4 payload", lb(b""))
    add(
        "lz4-header-only",
        "§5.4: frame header (7 bytes) and nothing else",
        lb(codecs.write_stream(LZ4, raw, 2)[:7]),
    )
    good_frame = write_frame([raw])
    add(
        "lz4-corrupt-block",
        "§5.4: compressed block bytes replaced by zeros (offset 0 match): "
        "LZ4Exception -> IOException",
        lb(good_frame[:11] + bytes(len(good_frame) - 15) + good_frame[-4:]),
    )
    add(
        "lz4-truncated-frame",
        "C3/§5.4: frame truncated inside the block (batch resealed)",
        lb(codecs.write_stream(LZ4, raw, 2)[:30]),
    )
    add(
        "lz4-legacy-v1-content-checksum-missing",
        "§5.4: v1 lz4 wrapper, content checksum flag set but missing",
        lw(1, content_checksum="missing"),
    )
    add(
        "lz4-legacy-v0-dependent",
        "§5.4: v0 lz4 wrapper with dependent blocks (FLG 0x40)",
        lw(0, flg=0x40, header_checksum="broken"),
    )
    add(
        "lz4-legacy-v1-java",
        "§5.4: v1 lz4 wrapper with many inner messages spanning two blocks",
        legacy_wrapper(
            [legacy_message(b"k%d" % i, text(2000, i), offset=i) for i in range(40)],
            codec=LZ4,
            offset=39,
        ),
    )
