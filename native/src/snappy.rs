//! A magic-2 snappy payload read whole, for `decode_run`: the same decision as the codecs'
//! Python fast path (`conformance/codecs/snappy.py`, `read_whole`), made with the same library
//! (the `snap` crate, which is what cramjam's snappy is), so a one-record batch does not pay
//! a Python call for its codec. It only ever declines more than the Python path, never less:
//! a decline stops the run and the reference decides the batch.
//!
//! | payload                      | taken when                                              |
//! |------------------------------|---------------------------------------------------------|
//! | under 16 bytes, or no magic  | one raw block (`Snappy.uncompress`)                     |
//! | xerial magic                 | Java's header (version 1, compatible 1) exactly, then   |
//! |                              | chunks `[int32 length][raw block]` tiling the rest      |
//! | a chunk length               | <= 512 MiB and within the payload                       |
//! | each block                   | its varint length (snappy's `GetUncompressedLength`)    |
//! |                              | valid, not 0, < 2^31; the total within the limit; the   |
//! |                              | block decompresses to exactly that length               |
//! | an empty payload             | declined                                                |

use super::{be_u32, Decline, Parsed};

const MAGIC: &[u8; 8] = b"\x82SNAPPY\x00";
/// the xerial header snappy-java writes: magic, version 1, compatible version 1
const JAVA_HEADER: &[u8; 16] = b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01";
const MAX_CHUNK: usize = 512 * 1024 * 1024;
/// the largest array a JVM makes (`errors.JVM_MAX_BYTE_ARRAY`): snappy-java's allocation
const JVM_MAX_BYTE_ARRAY: u64 = 2_147_483_645;

/// snappy's `GetUncompressedLength` (`Varint::Parse32WithLimit`) over a block's first bytes:
/// None when invalid (the Python path's `_uncompressed_length`).
fn uncompressed_length(block: &[u8]) -> Option<u64> {
    let mut result: u64 = 0;
    for i in 0..5 {
        let b = u64::from(*block.get(i)?);
        if i == 4 {
            return (b < 16).then_some(result | (b << 28));
        }
        result |= (b & 0x7F) << (7 * i);
        if b < 0x80 {
            return Some(result);
        }
    }
    None
}

/// A block: where it starts and stops in the payload, and the length it decompresses to.
pub(crate) type Block = (usize, usize, usize);

/// The blocks of `payload` and their total decompressed length, checked as the table says;
/// the total is within `limit`.
pub(crate) fn blocks(payload: &[u8], limit: u64) -> Parsed<(Vec<Block>, usize)> {
    let n = payload.len();
    if n == 0 {
        return Err(Decline);
    }
    let mut spans = Vec::new();
    if n < 16 || &payload[..8] != MAGIC {
        spans.push((0, n));
    } else if &payload[..16] != JAVA_HEADER {
        return Err(Decline);
    } else {
        let mut pos = 16;
        while pos < n {
            let size = be_u32(payload, pos)? as usize; // unsigned: < 0 is > the maximum
            pos += 4;
            if size > MAX_CHUNK || size > n - pos {
                return Err(Decline);
            }
            spans.push((pos, pos + size));
            pos += size;
        }
    }
    let mut out = Vec::with_capacity(spans.len());
    let mut total: u64 = 0;
    for (start, stop) in spans {
        let head = &payload[start..stop.min(start + 5)];
        let length = uncompressed_length(head).ok_or(Decline)?;
        if length == 0 || length > JVM_MAX_BYTE_ARRAY {
            return Err(Decline);
        }
        total += length;
        if total > limit {
            return Err(Decline);
        }
        out.push((start, stop, length as usize));
    }
    Ok((out, total as usize))
}

/// Decompress `blocks` of `payload` into `into` (exactly the blocks' total length), each
/// block to exactly its stated length.
pub(crate) fn decompress(payload: &[u8], blocks: &[Block], into: &mut [u8]) -> Parsed<()> {
    let mut at = 0;
    let mut decoder = snap::raw::Decoder::new();
    for &(start, stop, length) in blocks {
        let out = into.get_mut(at..at + length).ok_or(Decline)?;
        match decoder.decompress(&payload[start..stop], out) {
            Ok(written) if written == length => at += length,
            _ => return Err(Decline),
        }
    }
    if at == into.len() {
        Ok(())
    } else {
        Err(Decline)
    }
}
