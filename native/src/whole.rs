//! Payloads read whole for `decode_run` and `scan_plain`, without a Python call: the same
//! decisions as the codecs' Python fast paths (`conformance/codecs/*.py`, `read_whole`), with
//! the same libraries (zlib, through flate2's zlib backend; liblz4, through lz4-sys; libzstd,
//! through zstd-sys; snappy: `snappy.rs`). Each only ever declines more than its Python twin,
//! never less, with one exception: a magic-0 lz4 wrapper, whose header checksum Kafka does
//! not check, is taken here while the Python fast path (magic-2 rules) declines it and the
//! reference reads it with `lz4.read_stream(magic=0)`, which gives the same bytes for such a
//! payload (`LegacyBatch.read_records`). A decline stops the run and the reference decides
//! the batch.
//!
//! | codec | taken when (anything else: declined)                                          |
//! |-------|-------------------------------------------------------------------------------|
//! | gzip  | one member: a header `GZIPInputStream.readHeader` reads (magic, method 8,     |
//! |       | FEXTRA, FNAME, FCOMMENT, FHCRC checked), a raw deflate stream that ends, then  |
//! |       | exactly the 8-byte trailer, CRC-32 and ISIZE right, the data within the limit |
//! | lz4   | Kafka's frame header (`Lz4BlockInputStream.readHeader`: the header checksum   |
//! |       | checked, except under magic 0, where only its byte must be there), no block   |
//! |       | or content checksum, blocks each within the maximum size decoding to at least |
//! |       | one byte, the end mark as the last 4 bytes                                    |
//! | zstd  | one frame, not skippable, no dictionary, a window of at most 2^27, a stated   |
//! |       | content size (not 0, within the limit), ending at the payload's last byte,    |
//! |       | decoded by libzstd in one call to exactly that size                           |
//!
//! The decompression contexts (an inflate state, a zstd `DCtx`) are kept per thread and reset
//! before each payload: making one per payload was most of a small payload's cost.

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::{Decline, Parsed};
use crate::snappy;

pub(crate) const GZIP: i16 = 1;
pub(crate) const SNAPPY: i16 = 2;
pub(crate) const LZ4: i16 = 3;
pub(crate) const ZSTD: i16 = 4;

/// The payload's data as a new `bytes`, or `Decline`; `magic`: the enclosing batch's or
/// wrapper's (lz4 only reads it: under 0 the header checksum is not checked).
pub(crate) fn read<'py>(
    py: Python<'py>,
    codec: i16,
    magic: i64,
    payload: &[u8],
    limit: u64,
) -> Parsed<Bound<'py, PyBytes>> {
    match codec {
        GZIP => gzip(py, payload, limit),
        SNAPPY => {
            let (spans, total) = snappy::blocks(payload, limit)?;
            filled(py, total, |into| snappy::decompress(payload, &spans, into))
        }
        LZ4 => lz4(payload, magic, limit).map(|data| PyBytes::new(py, &data)),
        ZSTD => zstd(py, payload, limit),
        _ => Err(Decline),
    }
}

/// A new `bytes` of `size` bytes written by `fill`, or `Decline` if it declines.
fn filled<'py>(
    py: Python<'py>,
    size: usize,
    fill: impl FnOnce(&mut [u8]) -> Parsed<()>,
) -> Parsed<Bound<'py, PyBytes>> {
    let mut declined = false;
    let made = PyBytes::new_with(py, size, |into| {
        if fill(into).is_err() {
            declined = true;
        }
        Ok(())
    });
    match made {
        Ok(bytes) if !declined => Ok(bytes),
        _ => Err(Decline),
    }
}

// ---------------------------------------------------------------------------------- gzip

const FHCRC: u8 = 2;
const FEXTRA: u8 = 4;
const FNAME: u8 = 8;
const FCOMMENT: u8 = 16;

/// `GZIPInputStream.readHeader` where it succeeds: the position after the header.
fn gzip_header(buf: &[u8]) -> Parsed<usize> {
    let byte = |p: usize| buf.get(p).copied().ok_or(Decline);
    if byte(0)? != 0x1F || byte(1)? != 0x8B || byte(2)? != 8 {
        return Err(Decline);
    }
    let flg = byte(3)?;
    let mut pos = 10;
    if pos > buf.len() {
        return Err(Decline);
    }
    if flg & FEXTRA != 0 {
        let m = usize::from(byte(pos)?) | usize::from(byte(pos + 1)?) << 8;
        pos += 2;
        if pos + m > buf.len() {
            return Err(Decline);
        }
        pos += m;
    }
    for flag in [FNAME, FCOMMENT] {
        if flg & flag != 0 {
            while byte(pos)? != 0 {
                pos += 1;
            }
            pos += 1;
        }
    }
    if flg & FHCRC != 0 {
        let stored = u32::from(byte(pos)?) | u32::from(byte(pos + 1)?) << 8;
        if crc32fast::hash(&buf[..pos]) & 0xFFFF != stored {
            return Err(Decline);
        }
        pos += 2;
    }
    Ok(pos)
}

thread_local! {
    static INFLATE: RefCell<flate2::Decompress> = RefCell::new(flate2::Decompress::new(false));
}

fn gzip<'py>(py: Python<'py>, payload: &[u8], limit: u64) -> Parsed<Bound<'py, PyBytes>> {
    let start = gzip_header(payload)?;
    let n = payload.len();
    if n < start + 8 {
        return Err(Decline);
    }
    let trailer = &payload[n - 8..];
    let crc = u32::from_le_bytes(trailer[..4].try_into().map_err(|_| Decline)?);
    let isize = u32::from_le_bytes(trailer[4..].try_into().map_err(|_| Decline)?);
    if u64::from(isize) > limit {
        return Err(Decline); // (data over 4 GiB, whose ISIZE wraps, is over any sane limit)
    }
    let deflate = &payload[start..n - 8];
    filled(py, isize as usize, |into| {
        INFLATE.with(|cell| {
            let mut inflate = cell.borrow_mut();
            inflate.reset(false);
            let status = inflate
                .decompress(deflate, into, flate2::FlushDecompress::Finish)
                .map_err(|_| Decline)?;
            // the stream ends exactly before the trailer, having filled exactly ISIZE bytes
            if status != flate2::Status::StreamEnd
                || inflate.total_in() != deflate.len() as u64
                || inflate.total_out() != into.len() as u64
            {
                return Err(Decline);
            }
            Ok(())
        })?;
        if crc32fast::hash(into) != crc {
            return Err(Decline);
        }
        Ok(())
    })
}

// ----------------------------------------------------------------------------------- lz4

const LZ4_MAGIC: u32 = 0x184D_2204;

/// `Lz4BlockInputStream.readHeader` where it succeeds: (maximum block size, position after
/// the header), for a frame without block or content checksums. Under magic 0 the header
/// checksum byte must be there but is not checked (Kafka's pre-0.10 writer computed it over
/// the magic bytes too, KAFKA-3160, and its reader ignores it for magic 0).
fn lz4_header(payload: &[u8], batch_magic: i64) -> Parsed<(usize, usize)> {
    if payload.len() < 6 {
        return Err(Decline);
    }
    let magic = u32::from_le_bytes(payload[..4].try_into().map_err(|_| Decline)?);
    let (flg, bd) = (payload[4], payload[5]);
    if magic != LZ4_MAGIC
        || flg & 3 != 0
        || (flg >> 5) & 1 == 0
        || (flg >> 6) & 3 != 1
        || bd & 15 != 0
        || bd >> 7 != 0
        || flg & 0x14 != 0
    {
        return Err(Decline);
    }
    let code = (bd >> 4) & 7;
    if code < 4 {
        return Err(Decline);
    }
    let mut pos = 6;
    if flg & 0x08 != 0 {
        pos += 8; // the content size: skipped, as Java skips it
    }
    let hc = *payload.get(pos).ok_or(Decline)?;
    let checked = batch_magic != 0;
    if checked && u32::from(hc) != (xxhash_rust::xxh32::xxh32(&payload[4..pos], 0) >> 8) & 0xFF {
        return Err(Decline);
    }
    Ok((1usize << (2 * code + 8), pos + 1))
}

fn lz4(payload: &[u8], batch_magic: i64, limit: u64) -> Parsed<Vec<u8>> {
    let (max_block, mut pos) = lz4_header(payload, batch_magic)?;
    let n = payload.len();
    let mut out: Vec<u8> = Vec::new();
    loop {
        let raw = u32::from_le_bytes(
            payload
                .get(pos..pos + 4)
                .and_then(|s| s.try_into().ok())
                .ok_or(Decline)?,
        );
        pos += 4;
        let size = (raw & 0x7FFF_FFFF) as usize;
        if size == 0 {
            return if pos == n { Ok(out) } else { Err(Decline) };
        }
        if size > max_block || n - pos < size {
            return Err(Decline);
        }
        let block = &payload[pos..pos + size];
        pos += size;
        let got = if raw & 0x8000_0000 != 0 {
            out.extend_from_slice(block);
            size
        } else {
            out.reserve(max_block);
            let at = out.len();
            // SAFETY: LZ4_decompress_safe reads exactly `size` bytes of `block` and writes at
            // most `max_block` bytes into the spare capacity just reserved (it never writes
            // past its `dstCapacity` argument); the length is set only to what it reports
            // having written (a negative result, an error, writes nothing we keep).
            let written = unsafe {
                let dst = out.as_mut_ptr().add(at);
                lz4_sys::LZ4_decompress_safe(
                    block.as_ptr().cast(),
                    dst.cast(),
                    size as i32,
                    max_block as i32,
                )
            };
            if written <= 0 {
                return Err(Decline); // an error, or no byte (an empty read: the model's)
            }
            unsafe { out.set_len(at + written as usize) };
            written as usize
        };
        if got == 0 || out.len() as u64 > limit {
            return Err(Decline);
        }
    }
}

// ---------------------------------------------------------------------------------- zstd

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const ZSTD_WINDOW_MAX: u64 = 1 << 27;

struct DCtx(*mut zstd_sys::ZSTD_DCtx);

impl Drop for DCtx {
    fn drop(&mut self) {
        // SAFETY: a context made by ZSTD_createDCtx (or null, which ZSTD_freeDCtx accepts),
        // freed once, here
        unsafe { zstd_sys::ZSTD_freeDCtx(self.0) };
    }
}

thread_local! {
    // SAFETY: ZSTD_createDCtx has no precondition; null (out of memory) is checked at use
    static DCTX: DCtx = DCtx(unsafe { zstd_sys::ZSTD_createDCtx() });
}

fn zstd<'py>(py: Python<'py>, payload: &[u8], limit: u64) -> Parsed<Bound<'py, PyBytes>> {
    if payload.get(..4) != Some(&ZSTD_MAGIC[..]) {
        return Err(Decline);
    }
    // SAFETY: ZSTD_getFrameHeader reads at most `payload.len()` bytes of `payload` and fills
    // the plain struct given; ZSTD_findFrameCompressedSize only reads `payload`
    let (header, frame_size) = unsafe {
        let mut header: zstd_sys::ZSTD_FrameHeader = std::mem::zeroed();
        let r = zstd_sys::ZSTD_getFrameHeader(&mut header, payload.as_ptr().cast(), payload.len());
        if r != 0 {
            return Err(Decline); // an error, or a header cut short
        }
        let size = zstd_sys::ZSTD_findFrameCompressedSize(payload.as_ptr().cast(), payload.len());
        (header, size)
    };
    let content = header.frameContentSize;
    if header.frameType != zstd_sys::ZSTD_FrameType_e::ZSTD_frame
        || content == u64::MAX // ZSTD_CONTENTSIZE_UNKNOWN
        || content == 0
        || content > limit
        || header.windowSize > ZSTD_WINDOW_MAX
        || header.dictID != 0
        || frame_size != payload.len()
    {
        return Err(Decline); // (an error from the frame size is a huge value: never equal)
    }
    filled(py, content as usize, |into| {
        DCTX.with(|dctx| {
            if dctx.0.is_null() {
                return Err(Decline);
            }
            // SAFETY: a live context of this thread, used by one call at a time; the output
            // is `into`, exactly `into.len()` writable bytes; the input is `payload`
            let written = unsafe {
                zstd_sys::ZSTD_DCtx_reset(
                    dctx.0,
                    zstd_sys::ZSTD_ResetDirective::ZSTD_reset_session_only,
                );
                zstd_sys::ZSTD_decompressDCtx(
                    dctx.0,
                    into.as_mut_ptr().cast(),
                    into.len(),
                    payload.as_ptr().cast(),
                    payload.len(),
                )
            };
            // SAFETY: a plain function of a number
            if unsafe { zstd_sys::ZSTD_isError(written) } != 0 || written != into.len() {
                return Err(Decline);
            }
            Ok(())
        })
    })
}
