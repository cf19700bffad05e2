//! `decode_run`: a run of whole batches decoded in one call, each handed back as the objects a
//! decode returns (`DecodedBatch(header=RecordBatchV2 or LegacyBatch, records=RecordList)`).
//!
//! A decode of small batches (a producer with `linger.ms=0`, a quiet partition's fetch) spent
//! most of its time per batch in Python: framing, the header's fields, the CRC call, the
//! record list and the decoded batch, each a Python call. Here the whole batch is decided in
//! one place and its objects are made by `SlotMaker`s (no `__init__` runs); magic-2 records
//! stay lazy (`RecordRows`), as with `read_records_v2`.
//!
//! The run takes only batches it is sure of, the same ones the reference decides without a
//! word of its own, and stops at the first other one, having made nothing for it; the caller
//! (`conformance/stream/_run_fast.py`) hands that batch to the reference, then asks again.
//! Taken, at `start` and after each batch taken:
//!
//! | check                         | taken when                                             |
//! |-------------------------------|--------------------------------------------------------|
//! | framing                       | >= 17 bytes left, size field >= 14, the batch whole    |
//! | magic (@16)                   | 0, 1 or 2                                              |
//! | **magic 2**                   |                                                        |
//! | `ensureValid`                 | >= 61 bytes, CRC-32C of attributes..end right          |
//! | attributes                    | not a control batch (`scan_plain`: one whose records   |
//! |                               | all parse as control records), codec 0-4               |
//! | recordsCount, base offset/ts  | count >= 0, both within (-2^62, 2^62)                  |
//! | records region (codec 0)      | `read_region` reads exactly `count` records            |
//! | payload (codec 1-4)           | the codec's whole-payload fast path (`read_whole`,     |
//! |                               | Python) gives bytes, which `read_region` reads exactly |
//! |                               | (with `native_codecs`: `whole.rs`, no Python call)     |
//! | **magic 0/1, codec 0**        | `read_legacy` takes the entry as one message: CRC-32   |
//! |                               | right, key and value ending exactly at its end         |
//! | **magic 0/1, codec 1-3**      | a non-null value the codec's whole-payload fast path   |
//! | (a wrapper)                   | reads, whose inner messages `read_legacy` takes, the   |
//! |                               | v1 wrapper's offset not below the last inner offset    |
//! | the record list's limit       | keep=None with a limit: count <= limit                 |
//!
//! A magic-2 batch whose records region is empty of records (count 0) is not read further, as
//! the reference does. Framing is the same in Kafka's memory and file readers for such a batch.

use super::*;
use crate::whole;

/// codec ids Kafka knows (none, gzip, snappy, lz4, zstd); others are the reference's error
const LAST_CODEC: i16 = 4;
/// the last codec a v0/v1 wrapper may carry (lz4; zstd came with magic 2)
const LAST_LEGACY_CODEC: i16 = 3;
/// where a v1 message's timestamp is, after its crc, magic and attributes
const LEGACY_TIMESTAMP_AT: usize = 6;
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
type Makers = (
    Py<SlotMaker>,
    Py<SlotMaker>,
    Py<SlotMaker>,
    Py<RecordMaker>,
    Py<SlotMaker>,
    Py<SlotMaker>,
);

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
/// batch with `header, records`; the `RecordMaker` of its records; one of a v0/v1 entry
/// (`LegacyBatch`) with `raw, position, offset, message`; one of its message
/// (`LegacyMessage`) with `buf, wrapper_timestamp, wrapper_timestamp_type`. `keep` and
/// `limit` are the record list's (`None` or >= 0). `read_whole(codec_id, payload, limit)` is
/// the codecs' whole-payload fast path: bytes, or None when it is not sure (then the run
/// stops); an exception it raises stops the run too, and the reference meets it again.
/// `native_codecs`: payloads are read by `whole.rs` instead (the caller's choice: not while
/// the allocations Kafka would make are being watched, which only the Python paths record).
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
    let (header, list, decoded, record, legacy, message) = makers;
    let run = Run {
        py,
        keep_n,
        limit_n,
        keep: &keep,
        limit: &limit,
        header: header.get(),
        list: list.get(),
        decoded: decoded.get(),
        record: &record,
        legacy: legacy.get(),
        message: message.get(),
        payloads: if native_codecs {
            Payloads::Native(decompressed_limit)
        } else {
            Payloads::Python(&read_whole, decompressed_limit)
        },
    };
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
        let magic = buf[pos + MAGIC_AT];
        if size < MIN_ENTRY_SIZE || magic > 2 {
            break; // the reference raises
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
        let position = origin + pos as i64;
        let made = if magic == 2 {
            run.v2(b, position, size)?
        } else {
            run.legacy(b, position)?
        };
        let Some(made) = made else {
            break; // not decided here: the reference reads it
        };
        out.append(made)?;
        pos += total;
        taken += total;
        if taken >= max_bytes {
            break;
        }
    }
    Ok((out.into_any(), pos, need))
}

/// What one `decode_run` call makes its objects with, and the record list's settings.
struct Run<'py, 'a> {
    py: Python<'py>,
    keep_n: Option<i64>,
    limit_n: Option<i64>,
    keep: &'a Obj<'py>,
    limit: &'a Obj<'py>,
    header: &'a SlotMaker,
    list: &'a SlotMaker,
    decoded: &'a SlotMaker,
    record: &'a Py<RecordMaker>,
    legacy: &'a SlotMaker,
    message: &'a SlotMaker,
    payloads: Payloads<'py, 'a>,
}

/// How a compressed payload is read whole, with the decompressed limit: by whole.rs, by the
/// codecs' Python fast path (`read_whole`), or not at all (only uncompressed batches taken).
pub(crate) enum Payloads<'py, 'a> {
    Native(i64),
    Python(&'a Obj<'py>, i64),
    Refused,
}

impl<'py> Payloads<'py, '_> {
    /// The payload's bytes, or `None` where the reader is not sure (an exception from the
    /// Python one is dropped here: the reference calls it again and meets it; None is not
    /// bytes). `magic`: the enclosing batch's or wrapper's (whole.rs reads a magic-0 lz4
    /// header as Kafka does; the Python fast path takes magic-2 rules only, and declines).
    pub(crate) fn read(
        &self,
        py: Python<'py>,
        codec: i16,
        magic: i64,
        payload: &[u8],
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        match *self {
            Payloads::Native(limit) => {
                Ok(whole::read(py, codec, magic, payload, limit.max(0) as u64).ok())
            }
            Payloads::Python(read_whole, limit) => {
                let payload = new_bytes(py, payload)?;
                Ok(read_whole
                    .call1((codec, payload, limit))
                    .ok()
                    .and_then(|got| got.downcast_into::<PyBytes>().ok()))
            }
            Payloads::Refused => Ok(None),
        }
    }
}

/// A magic-2 batch decided in full (`b`: its whole bytes): its header, how many records are
/// kept, the payload read whole (`None`: the records are in `b`), and where the kept records
/// start in those bytes. `kept(count)` is `None` where the reference raises the limit; then,
/// or where anything is not sure, `None`: the reference's.
pub(crate) struct V2Batch<'py> {
    pub(crate) header: Header,
    pub(crate) kept: u64,
    pub(crate) whole: Option<Bound<'py, PyBytes>>,
    pub(crate) starts: Vec<u32>,
}

/// `control`: a control batch may be taken, when every one of its records is a control
/// record the reference parses without error (`control_records_ok`); only the replay's
/// `scan_plain` asks, as it makes no record object (the decoder's records carry `control`).
pub(crate) fn decide_v2<'py>(
    py: Python<'py>,
    b: &[u8],
    kept: impl FnOnce(u64) -> Option<u64>,
    payloads: &Payloads<'py, '_>,
    control: bool,
) -> PyResult<Option<V2Batch<'py>>> {
    let Ok(header) = Header::read(b, control) else {
        return Ok(None);
    };
    let count = header.count as u64;
    let Some(kept) = kept(count) else {
        return Ok(None);
    };
    let is_control = header.attributes & CONTROL_FLAG != 0;
    let whole = if header.codec == 0 {
        None
    } else {
        let Some(whole) = payloads.read(py, header.codec, 2, &b[BATCH_OVERHEAD..])? else {
            return Ok(None);
        };
        Some(whole)
    };
    let mut starts = Vec::new();
    if count > 0 {
        // a count of 0 is not read further, as the reference does
        let records = whole
            .as_ref()
            .map_or(&b[BATCH_OVERHEAD..], |w| w.as_bytes());
        // a control batch: every record's start, each record then parsed as Kafka parses it
        let Ok(found) = region(py, records, count, if is_control { count } else { kept }) else {
            return Ok(None);
        };
        if is_control && !control_records_ok(records, &found) {
            return Ok(None);
        }
        let shift = if whole.is_none() {
            BATCH_OVERHEAD as u32
        } else {
            0
        };
        starts = found
            .into_iter()
            .take(kept as usize)
            .map(|p| p + shift)
            .collect();
    }
    Ok(Some(V2Batch {
        header,
        kept,
        whole,
        starts,
    }))
}

/// Whether every record of a control batch (`records`: its records region, `starts`: each
/// record's start, the region already checked) is one the reference's `_ControlRecords`
/// parses without error, as it parses every record it hands out (`wire/control.py`,
/// `attach_control`): a key (`ControlRecordType.parseTypeId`) of at least 4 bytes whose
/// version is >= 0; for ABORT (0) and COMMIT (1), a value (`EndTransactionMarker`) of at
/// least 6 bytes whose version is >= 0. Other types' values are not parsed there.
fn control_records_ok(records: &[u8], starts: &[u32]) -> bool {
    let mut scratch = Vec::new();
    starts.iter().all(|&start| {
        let mut pos = start as usize;
        let Ok(fields) = read_record(records, &mut pos, &mut scratch, true) else {
            return false;
        };
        let versioned = |field: Option<(usize, usize)>, least: usize| match field {
            Some((from, to)) if to - from >= least => {
                be_i16(records, from).ok().filter(|&v| v >= 0).map(|_| from)
            }
            _ => None,
        };
        let Some(key) = versioned(fields.key, 4) else {
            return false;
        };
        match be_i16(records, key + 2) {
            Ok(0 | 1) => versioned(fields.value, 6).is_some(),
            Ok(_) => true,
            Err(Decline) => false,
        }
    })
}

/// A top-level v0/v1 entry decided in full (`b`: its whole bytes, size >= 14): one message
/// read as `_to_record` reads it; or a gzip, snappy or lz4 wrapper whose payload the codec's
/// whole-payload reader takes and whose inner messages `read_legacy` takes, as
/// `LegacyBatch.read_records` tries first. `None`: the reference's.
pub(crate) struct LegacyEntry<'py> {
    pub(crate) offset: i64,
    magic: i64,
    codec: i16,
    /// the wrapper's payload read whole (`None`: the message is `b` itself)
    whole: Option<Bound<'py, PyBytes>>,
    pub(crate) entries: Vec<LegacyAt>,
    base: i64,
}

impl LegacyEntry<'_> {
    /// A message's absolute offset (a v1 wrapper's inner offsets are relative).
    pub(crate) fn offset_of(&self, e: &LegacyAt) -> i64 {
        inner_offset(self.magic, self.base, e)
    }

    pub(crate) fn codec(&self) -> i16 {
        self.codec
    }
}

pub(crate) fn decide_legacy<'py>(
    py: Python<'py>,
    b: &[u8],
    payloads: &Payloads<'py, '_>,
) -> PyResult<Option<LegacyEntry<'py>>> {
    let body = &b[ENTRY_PREFIX..];
    let Ok(offset) = be_i64(b, 0) else {
        return Ok(None);
    };
    let magic = i64::from(body[4]);
    let attributes = i16::from(body[5] as i8);
    let codec = attributes & CODEC_MASK;
    if codec == 0 {
        let Ok(entries) = read_legacy(b, None) else {
            return Ok(None);
        };
        // one message, at its own offset
        return Ok(Some(LegacyEntry {
            offset,
            magic,
            codec,
            whole: None,
            entries,
            base: 0,
        }));
    }
    if codec > LAST_LEGACY_CODEC {
        return Ok(None); // zstd or no codec: the reference raises
    }
    let key_at = if magic == 0 { 6 } else { 14 };
    let Ok((_, value_at)) = sized(body, key_at) else {
        return Ok(None);
    };
    let Ok((Some((from, to)), _)) = sized(body, value_at) else {
        return Ok(None); // a null value: the reference raises
    };
    let log_append_time = if magic == 1 && attributes & TIMESTAMP_TYPE_FLAG != 0 {
        match be_i64(body, LEGACY_TIMESTAMP_AT) {
            Ok(t) => Some(t),
            Err(Decline) => return Ok(None),
        }
    } else {
        None
    };
    let Some(whole) = payloads.read(py, codec, magic, &body[from..to])? else {
        return Ok(None);
    };
    let Ok(entries) = read_legacy(whole.as_bytes(), log_append_time) else {
        return Ok(None);
    };
    let Ok(base) = legacy_base(magic, offset, &entries) else {
        return Ok(None);
    };
    Ok(Some(LegacyEntry {
        offset,
        magic,
        codec,
        whole: Some(whole),
        entries,
        base,
    }))
}

impl<'py> Run<'py, '_> {
    /// How many of `count` records the list keeps; `None` where the reference raises the
    /// limit at the exact record (keep=None with a limit below `count`).
    fn kept(&self, count: u64) -> Option<u64> {
        if self.keep_n.is_none() && self.limit_n.is_some_and(|l| count > l as u64) {
            return None;
        }
        Some(self.keep_n.map_or(count, |k| (k as u64).min(count)))
    }

    /// The record list (`_items, _rows, keep, limit, visit, total`) and the decoded batch.
    fn decoded(
        &self,
        header: Obj<'py>,
        items: Obj<'py>,
        rows: bool,
        count: i64,
    ) -> PyResult<Obj<'py>> {
        let py = self.py;
        let records = self.list.slots.make_untracked(
            py,
            [
                items,
                pyo3::types::PyBool::new(py, rows).to_owned().into_any(),
                self.keep.clone(),
                self.limit.clone(),
                none(py),
                new_int(py, count)?,
            ],
        )?;
        self.decoded.slots.make_untracked(py, [header, records])
    }

    /// A magic-2 batch (`b`: its whole bytes), or `None`: the reference's.
    fn v2(&self, b: &[u8], position: i64, size: i32) -> PyResult<Option<Obj<'py>>> {
        let py = self.py;
        let Some(taken) = decide_v2(py, b, |count| self.kept(count), &self.payloads, false)? else {
            return Ok(None);
        };
        let batch = &taken.header;
        let raw = new_bytes(py, b)?;
        let (items, as_rows) = if taken.kept > 0 && batch.count > 0 {
            let region_buf = match taken.whole {
                Some(whole) => whole,
                None => raw.clone().downcast_into::<PyBytes>()?,
            };
            let rows = RecordRows {
                maker: Some(self.record.clone_ref(py)),
                buf: region_buf.unbind(),
                starts: taken.starts,
                base_offset: batch.base_offset,
                base_timestamp: batch.base_timestamp,
                log_append_time: batch.log_append_time,
            };
            (Bound::new(py, rows)?.into_any(), true)
        } else {
            let empty = PyList::empty(py).into_any();
            untrack(&empty); // an empty list: no cycle through it yet
            (empty, false)
        };
        let header = self.header.slots.make_untracked(
            py,
            [
                raw,
                new_int(py, position)?,
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
        self.decoded(header, items, as_rows, i64::from(batch.count))
            .map(Some)
    }

    /// A top-level v0/v1 entry (`b`: its whole bytes, size >= 14), or `None`: the
    /// reference's (`decide_legacy`).
    fn legacy(&self, b: &[u8], position: i64) -> PyResult<Option<Obj<'py>>> {
        let py = self.py;
        let Some(entry) = decide_legacy(py, b, &self.payloads)? else {
            return Ok(None);
        };
        let count = entry.entries.len() as u64;
        let Some(kept) = self.kept(count) else {
            return Ok(None);
        };
        let all = entry.whole.as_ref().map_or(b, |w| w.as_bytes());
        let records = legacy_records(
            py,
            self.record.get(),
            all,
            0,
            &entry.entries,
            kept as usize,
            |e| entry.offset_of(e),
        )?;
        let body = &b[ENTRY_PREFIX..];
        let message = self
            .message
            .slots
            .make_untracked(py, [new_bytes(py, body)?, none(py), none(py)])?;
        let header = self.legacy.slots.make_untracked(
            py,
            [
                new_bytes(py, b)?,
                new_int(py, position)?,
                new_int(py, entry.offset)?,
                message,
            ],
        )?;
        self.decoded(header, records.into_any(), false, count as i64)
            .map(Some)
    }
}

/// The fields of a batch the run takes: its size, CRC-32C, attributes and ranges checked
/// (also the replay's `scan_plain`, which also takes control batches: `Header::read`).
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
    /// `b`: the batch's whole bytes; `control`: whether a control batch may be taken (the
    /// replay's `scan_plain`, which checks its control records: `control_records_ok`).
    pub(crate) fn read(b: &[u8], control: bool) -> Parsed<Header> {
        if b.len() < BATCH_OVERHEAD {
            return Err(Decline); // DefaultRecordBatch.ensureValid: smaller than the overhead
        }
        let crc = be_u32(b, CRC_AT)?;
        if ::crc32c::crc32c(&b[ATTRIBUTES_AT..]) != crc {
            return Err(Decline);
        }
        let attributes = be_i16(b, ATTRIBUTES_AT)?;
        let codec = attributes & CODEC_MASK;
        if (!control && attributes & CONTROL_FLAG != 0) || codec > LAST_CODEC {
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
