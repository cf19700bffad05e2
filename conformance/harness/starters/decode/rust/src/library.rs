//! The hook: the ONE file you edit. Call your Kafka client library in `decode` and declare what
//! it supports in the constants below; `src/main.rs` does the rest of the adapter protocol
//! (docs/adapter-protocol.md) and writes the canonical JSON (docs/canonical-json.md).
//!
//! Rules of the protocol:
//! * Report only what the library decoded. Never parse the bytes yourself to fill a field the
//!   library does not expose: leave it at its default and list its key in `OMITS`.
//!   The ONE exception: you may read a batch's length field (bytes 8..11 at the batch's
//!   position, a big-endian int32; size = 12 + length) to compute `position` and
//!   `batch_index`; `crate::batch_position(data, index)` does it for you.
//! * Declare the library's real defaults (e.g. `CHECKS_CRC = false` if it checks no CRC by
//!   default) rather than configure it to look conformant.
//! * Map the library's errors to the Kafka exception class they correspond to, and put the
//!   library's own error text in `message`.

#[allow(unused_imports)]
use crate::{batch_position, Batch, Control, DecodeError, Decoded, Header, Mode, Record};
use std::error::Error;

/// The name shown in reports.
pub const NAME: &str = "my-adapter";
/// The version of the library (not of this adapter).
pub const VERSION: &str = "";
/// Message formats (magic values) the library decodes: of 0, 1, 2. A case with another magic
/// is `unsupported`.
pub const MAGICS: &[u8] = &[0, 1, 2];
/// Compression codecs the library decodes: of "none", "gzip", "snappy", "lz4", "zstd".
/// A case that needs another is `unsupported`.
pub const CODECS: &[&str] = &["none", "gzip", "snappy", "lz4", "zstd"];
/// Whether the library verifies checksums (by default). If false, a case whose verdict is a
/// checksum error is `unsupported`.
pub const CHECKS_CRC: bool = true;
/// What the library delivers from a batch in which an error happens:
/// "streaming": the records before the error inside a compressed batch, as Kafka's consumer;
/// "eager": a compressed batch in which an error happens may deliver fewer, down to none;
/// "atomic": any batch in which an error happens, compressed or not, may deliver a prefix of
/// its records, down to none. The records it does deliver must match.
pub const ERROR_SEMANTICS: &str = "streaming";
/// Whether `Mode::File` is decoded with `FileRecords` rules (a .log segment). If false, a file
/// case runs only where Kafka's memory verdict for the same bytes is the same.
pub const FILE_SEMANTICS: bool = true;
/// How `DecodeError::kafka_exception` is compared with Kafka's: "exact" (class and message),
/// "class" (class only), "family" (corrupt / compression / resource, see the protocol doc),
/// "none" (any error will do). A library that only reports a bare EOF should use
/// CorruptRecordException and declare "none".
pub const ERROR_CLASSES: &str = "class";
/// Whether the library lists the header of the batch that failed. False: it returns an error
/// without that batch, so that batch may be missing from `batches`.
pub const LISTS_FAILING_BATCH: bool = true;
/// Batch or record keys the library does not expose (they are not written nor compared), e.g.
/// "partitionLeaderEpoch", "headers"; "control.coordinatorEpoch" omits one field of a record's
/// control object.
pub const OMITS: &[&str] = &[];
/// Free text for the report, e.g. "CRC checking is off by default in this library".
pub const NOTES: &str = "";

/// Decodes `data` (a fetch response's records for `Mode::Memory`, a whole .log segment for
/// `Mode::File`) with your library.
///
/// Return `Ok` also when the library rejects the bytes: that is a verdict, put it in
/// `Decoded::error` (with the batches and records decoded before it). Return `Err` (or panic)
/// only when the adapter itself fails; the kit reports that as an `error`, never a pass.
///
/// `DecodeError::kafka_exception` is the Kafka exception class the library's error corresponds
/// to, for example:
/// * `org.apache.kafka.common.errors.CorruptRecordException`: a bad CRC, a bad size or length,
///   truncated or malformed records;
/// * `org.apache.kafka.common.InvalidRecordException`: a record inconsistent with its batch;
/// * `java.lang.IllegalArgumentException`: an unknown compression id or magic;
/// * `org.apache.kafka.common.KafkaException`: a codec (gzip, snappy, lz4, zstd) stream failed;
/// * `java.nio.BufferUnderflowException`: the bytes ended inside a record.
///
/// `DecodeError::message` is the library's own error text; `batch_index` the 0-based index of
/// the batch being decoded and `position` its byte position (`batch_position(data, index)`).
#[allow(unused_variables)]
pub fn decode(data: &[u8], mode: Mode) -> Result<Decoded, Box<dyn Error>> {
    // An example with a made-up library `kafka_lib` (add yours to Cargo.toml):
    //
    // let mut decoded = Decoded::default();
    // let mut reader = kafka_lib::BatchReader::new(data, mode == Mode::File);
    // let mut index = 0;
    // loop {
    //     let batch = match reader.next_batch() {
    //         Ok(Some(batch)) => batch,
    //         Ok(None) => break,
    //         Err(e) => {
    //             decoded.error = Some(DecodeError {
    //                 kafka_exception: "org.apache.kafka.common.errors.CorruptRecordException"
    //                     .to_string(),
    //                 message: Some(e.to_string()),
    //                 batch_index: index,
    //                 position: batch_position(data, index),
    //             });
    //             break;
    //         }
    //     };
    //     decoded.batches.push(Batch {
    //         position: batch_position(data, index),
    //         size_in_bytes: batch.size_in_bytes(),
    //         magic: batch.magic(),
    //         crc: batch.crc(),
    //         attributes: batch.attributes(),
    //         compression: batch.compression().name().to_string(), // "none", "gzip", ...
    //         timestamp_type: "CreateTime".to_string(),
    //         last_offset: batch.last_offset(),
    //         max_timestamp: batch.max_timestamp(),
    //         base_offset: batch.base_offset(), // and the other magic 2 fields
    //         ..Batch::default()
    //     });
    //     for record in batch.records() {
    //         let record = match record {
    //             Ok(record) => record,
    //             Err(e) => {
    //                 // the batch keeps the records delivered before the error
    //                 decoded.error = Some(DecodeError { /* as above */ });
    //                 return Ok(decoded);
    //             }
    //         };
    //         decoded.batches.last_mut().unwrap().records.push(Record {
    //             offset: record.offset(),
    //             timestamp: record.timestamp(),
    //             key: record.key().map(<[u8]>::to_vec), // None = null, empty = ""
    //             value: record.value().map(<[u8]>::to_vec),
    //             headers: record
    //                 .headers()
    //                 .map(|h| Header {
    //                     key: String::from_utf8_lossy(h.key()).into_owned(),
    //                     value: h.value().map(<[u8]>::to_vec),
    //                 })
    //                 .collect(),
    //             control: None, // Some(Control { type_id, type_name, coordinator_epoch })
    //         });
    //     }
    //     index += 1;
    // }
    // Ok(decoded)
    Err("decode is not implemented yet: call your library in src/library.rs".into())
}
