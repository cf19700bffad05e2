//! `decode_run`: a run of whole magic-2 batches decoded in one call, each handed back as the
//! objects a decode returns (`DecodedBatch(header=RecordBatchV2, records=RecordList)`).
//!
//! A decode of small batches (a producer with `linger.ms=0`, a quiet partition's fetch) spent
//! most of its time per batch in Python: framing, the header's fields, the CRC call, the
//! record list and the decoded batch, each a Python call. Here the whole batch is decided in
//! one place and its objects are made by `SlotMaker`s (no `__init__` runs); records stay lazy
//! (`RecordRows`), as with `read_records_v2`.
//!
//! The run takes only batches it is sure of, the same ones the reference decides without a
//! word of its own, and stops at the first other one, having made nothing for it; the caller
//! (`conformance/stream/_run_fast.py`) hands that batch to the reference, then asks again.
//! Taken, at `start` and after each batch taken:
//!
//! | check                         | taken when                                             |
//! |-------------------------------|--------------------------------------------------------|
//! | framing                       | >= 17 bytes left, size field >= 14, the batch whole    |
//! | magic (@16)                   | 2                                                      |
//! | `ensureValid`                 | >= 61 bytes, CRC-32C of attributes..end right          |
//! | attributes                    | not a control batch, codec 0-4                         |
//! | recordsCount, base offset/ts  | count >= 0, both within (-2^62, 2^62)                  |
//! | the record list's limit       | keep=None with a limit: count <= limit                 |
//! | records region (codec 0)      | `read_region` reads exactly `count` records            |
//! | payload (codec 1-4)           | the codec's whole-payload fast path (`read_whole`,     |
//! |                               | Python) gives bytes, which `read_region` reads exactly |
//! |                               | (with `native_codecs`: `whole.rs`, no Python call)     |
//!
//! A batch whose records region is empty of records (count 0) is not read further, as the
//! reference does. Framing is the same in Kafka's memory and file readers for such a batch.

use super::*;
use crate::whole;

/// codec ids Kafka knows (none, gzip, snappy, lz4, zstd); others are the reference's error
const LAST_CODEC: i16 = 4;
/// a region this large is read with the GIL released
const RELEASE_AT: usize = 1 << 16;

fn region(py: Python<'_>, data: &[u8], count: u64, keep: u64) -> Parsed<Vec<u32>> {
    if data.len() >= RELEASE_AT {
        py.allow_threads(|| read_region(data, count, keep))
    } else {
        read_region(data, count, keep)
    }
}

/// The makers `decode_run` is given, in its order.
type Makers = (Py<SlotMaker>, Py<SlotMaker>, Py<SlotMaker>, Py<RecordMaker>);

/// Whole batches from `start` of `data`, until the first one not taken (see the module's
/// table), the end of the data, or once `max_bytes` have been taken (after one batch at
/// least). `data` is the whole input or a window of it whose first byte is at `origin` (each
/// header's `position` is `origin` + its index). Returns (the `DecodedBatch` objects, where
/// the run stopped, and how many bytes from there a window would need to hold the next
/// batch when it stopped only for running past the end of `data`, else 0).
///
/// `makers`: a `SlotMaker` of the header with the slots `raw, position, base_offset,
/// batch_length, partition_leader_epoch, magic, crc, attributes_raw, last_offset_delta,
/// base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence, records_count`;
/// one of the record list with `_items, _rows, keep, limit, visit, total`; one of the decoded
/// batch with `header, records`; the `RecordMaker` of its records. `keep` and `limit` are the
/// record list's (`None` or >= 0). `read_whole(codec_id, payload, limit)` is the codecs'
/// whole-payload fast path: bytes, or None when it is not sure (then the run stops); an
/// exception it raises stops the run too, and the reference meets it again. `native_codecs`:
/// payloads are read by `whole.rs` instead (the caller's choice: not while the allocations
/// Kafka would make are being watched, which only the Python paths record).
#[pyfunction]
#[pyo3(signature = (data, start, origin, keep, limit, max_bytes, makers, read_whole, decompressed_limit, native_codecs=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_run<'py>(
    py: Python<'py>,
    data: Bound<'py, PyBytes>,
    start: usize,
    origin: i64,
    keep: Bound<'py, PyAny>,
    limit: Bound<'py, PyAny>,
    max_bytes: usize,
    makers: Makers,
    read_whole: Bound<'py, PyAny>,
    decompressed_limit: i64,
    native_codecs: bool,
) -> PyResult<(Obj<'py>, usize, usize)> {
    let keep_n: Option<i64> = keep.extract()?;
    let limit_n: Option<i64> = limit.extract()?;
    if keep_n.is_some_and(|k| k < 0) || limit_n.is_some_and(|l| l < 0) {
        return Err(PyValueError::new_err("keep and limit must be None or >= 0"));
    }
    let (header_maker, list_maker, decoded_maker, record_maker) = makers;
    let (header_maker, list_maker, decoded_maker) =
        (header_maker.get(), list_maker.get(), decoded_maker.get());
    let buf = data.as_bytes();
    let end = buf.len();
    let mut pos = start;
    let mut taken = 0usize;
    let out = PyList::empty(py);
    let mut need = 0usize;
    while pos <= end {
        if end - pos < HEADER_UP_TO_MAGIC {
            need = HEADER_UP_TO_MAGIC;
            break;
        }
        let Ok(size) = be_i32(buf, pos + SIZE_AT) else {
            break;
        };
        if size < MIN_ENTRY_SIZE || buf[pos + MAGIC_AT] != 2 {
            break; // the reference raises, or reads a v0/v1 message
        }
        let total = size as usize + ENTRY_PREFIX;
        if total > i32::MAX as usize {
            break; // Java's int overflow: the reference decides
        }
        if total > end - pos {
            need = total; // a partial batch, or one past the window: the caller's call
            break;
        }
        let b = &buf[pos..pos + total];
        let Ok(batch) = Header::read(b) else {
            break;
        };
        if keep_n.is_none() && limit_n.is_some_and(|l| i64::from(batch.count) > l) {
            break; // the reference raises the limit at the exact record
        }
        let count = batch.count as u64;
        let kept = keep_n.map_or(count, |k| (k as u64).min(count));
        let raw = new_bytes(py, b)?;
        // (the bytes the records are read from, the starts of the kept records there)
        let rows: Option<(Obj<'py>, Vec<u32>)> = if batch.codec == 0 {
            if count == 0 {
                None
            } else {
                let Ok(starts) = region(py, &b[BATCH_OVERHEAD..], count, kept) else {
                    break;
                };
                let starts = starts
                    .into_iter()
                    .map(|p| p + BATCH_OVERHEAD as u32)
                    .collect();
                Some((raw.clone(), starts))
            }
        } else {
            // the payload read whole: by whole.rs, or by the codecs' Python fast path
            let whole = if native_codecs {
                let limit = decompressed_limit.max(0) as u64;
                whole::read(py, batch.codec, &b[BATCH_OVERHEAD..], limit).ok()
            } else {
                let payload = new_bytes(py, &b[BATCH_OVERHEAD..])?;
                // an exception is dropped here: the reference calls it again and meets it;
                // None (not sure) is not bytes
                read_whole
                    .call1((batch.codec, payload, decompressed_limit))
                    .ok()
                    .and_then(|got| got.downcast_into::<PyBytes>().ok())
            };
            let Some(whole) = whole else {
                break; // not decided here: the reference reads it
            };
            if count == 0 {
                None
            } else {
                let Ok(starts) = region(py, whole.as_bytes(), count, kept) else {
                    break;
                };
                Some((whole.into_any(), starts))
            }
        };
        let (items, as_rows) = match rows {
            Some((region_buf, starts)) if kept > 0 => {
                let rows = RecordRows {
                    maker: Some(record_maker.clone_ref(py)),
                    buf: region_buf.downcast_into::<PyBytes>()?.unbind(),
                    starts,
                    base_offset: batch.base_offset,
                    base_timestamp: batch.base_timestamp,
                    log_append_time: batch.log_append_time,
                };
                (Bound::new(py, rows)?.into_any(), true)
            }
            _ => {
                let empty = PyList::empty(py).into_any();
                untrack(&empty); // an empty list: no cycle through it yet
                (empty, false)
            }
        };
        let records = list_maker.slots.make_untracked(
            py,
            [
                items,
                pyo3::types::PyBool::new(py, as_rows).to_owned().into_any(),
                keep.clone(),
                limit.clone(),
                none(py),
                new_int(py, i64::from(batch.count))?,
            ],
        )?;
        let header = header_maker.slots.make_untracked(
            py,
            [
                raw,
                new_int(py, origin + pos as i64)?,
                new_int(py, batch.base_offset)?,
                new_int(py, i64::from(size))?,
                new_int(py, i64::from(batch.leader_epoch))?,
                small_int(py, 2)?,
                new_int(py, i64::from(batch.crc))?,
                new_int(py, i64::from(batch.attributes))?,
                new_int(py, i64::from(batch.last_offset_delta))?,
                new_int(py, batch.base_timestamp)?,
                new_int(py, batch.max_timestamp)?,
                new_int(py, batch.producer_id)?,
                new_int(py, i64::from(batch.producer_epoch))?,
                new_int(py, i64::from(batch.base_sequence))?,
                new_int(py, i64::from(batch.count))?,
            ],
        )?;
        out.append(decoded_maker.slots.make_untracked(py, [header, records])?)?;
        pos += total;
        taken += total;
        if taken >= max_bytes {
            break;
        }
    }
    Ok((out.into_any(), pos, need))
}

/// The fields of a batch the run takes: its size, CRC-32C, attributes and ranges checked
/// (also the replay's `scan_plain`, which takes uncompressed ones only).
pub(crate) struct Header {
    pub(crate) base_offset: i64,
    leader_epoch: i32,
    crc: u32,
    attributes: i16,
    pub(crate) codec: i16,
    pub(crate) last_offset_delta: i32,
    base_timestamp: i64,
    max_timestamp: i64,
    log_append_time: Option<i64>,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    pub(crate) count: i32,
}

impl Header {
    /// `b`: the batch's whole bytes.
    pub(crate) fn read(b: &[u8]) -> Parsed<Header> {
        if b.len() < BATCH_OVERHEAD {
            return Err(Decline); // DefaultRecordBatch.ensureValid: smaller than the overhead
        }
        let crc = be_u32(b, CRC_AT)?;
        if ::crc32c::crc32c(&b[ATTRIBUTES_AT..]) != crc {
            return Err(Decline);
        }
        let attributes = be_i16(b, ATTRIBUTES_AT)?;
        let codec = attributes & CODEC_MASK;
        if attributes & CONTROL_FLAG != 0 || codec > LAST_CODEC {
            return Err(Decline); // control records, or an unknown codec: the reference's
        }
        let base_offset = be_i64(b, 0)?;
        let base_timestamp = be_i64(b, BASE_TIMESTAMP_AT)?;
        let max_timestamp = be_i64(b, MAX_TIMESTAMP_AT)?;
        let count = be_i32(b, COUNT_AT)?;
        if count < 0
            || !(-LIMIT < base_offset && base_offset < LIMIT)
            || !(-LIMIT < base_timestamp && base_timestamp < LIMIT)
        {
            return Err(Decline);
        }
        Ok(Header {
            base_offset,
            leader_epoch: be_i32(b, LEADER_EPOCH_AT)?,
            crc,
            attributes,
            codec,
            last_offset_delta: be_i32(b, LAST_DELTA_AT)?,
            base_timestamp,
            max_timestamp,
            log_append_time: (attributes & TIMESTAMP_TYPE_FLAG != 0).then_some(max_timestamp),
            producer_id: be_i64(b, PRODUCER_ID_AT)?,
            producer_epoch: be_i16(b, PRODUCER_EPOCH_AT)?,
            base_sequence: be_i32(b, BASE_SEQUENCE_AT)?,
            count,
        })
    }
}
