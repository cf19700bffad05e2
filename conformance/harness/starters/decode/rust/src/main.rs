//! A kafka-conformance adapter: the protocol side (docs/adapter-protocol.md).
//!
//! This file speaks the adapter protocol so that `src/library.rs` (the hook) only has to call
//! your Kafka client library. You should not need to edit it: edit `src/library.rs` only.
//!
//! Build and run:
//!
//! ```text
//! cargo build --release --offline
//! target/release/kafka-adapter capabilities                    # the capability JSON object
//! target/release/kafka-adapter decode --as memory < input.bin  # one canonical JSON document
//! target/release/kafka-adapter serve                           # framed requests on stdin
//! kafka-conformance check --cmd "$PWD/target/release/kafka-adapter"
//! ```
//!
//! It uses the standard library only (base64 and JSON are written by hand below), so it builds
//! offline; add your library to `Cargo.toml`.

mod library;

use std::env;
use std::error::Error;
use std::fmt::Write as _;
use std::io::{self, BufReader, BufWriter, ErrorKind, Read, Write};
use std::process::ExitCode;

/// How the input is split into batches (docs/format.md §1.2 and §1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// a fetch response's `records` field (`MemoryRecords`)
    Memory,
    /// a whole `.log` segment (`FileRecords`)
    File,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Memory => "memory",
            Mode::File => "file",
        }
    }

    fn parse(text: &str) -> Option<Mode> {
        match text {
            "memory" => Some(Mode::Memory),
            "file" => Some(Mode::File),
            _ => None,
        }
    }
}

// The structures the hook fills (docs/canonical-json.md). They are built by the hook only,
// hence `allow(dead_code)` while the hook is the unfinished stub.

/// What the library decoded from one input.
#[allow(dead_code)]
#[derive(Debug, Clone, Default)]
pub struct Decoded {
    /// in input order, including the batch during which the error happened (if the library
    /// lists it: see `LISTS_FAILING_BATCH`)
    pub batches: Vec<Batch>,
    /// the error that ended decoding (a verdict, not a crash), or `None`
    pub error: Option<DecodeError>,
}

/// One batch (magic 2) or one top-level message (magic 0/1) as the library reports it.
#[allow(dead_code)]
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// byte position of the batch in the input (see `batch_position`)
    pub position: usize,
    /// 12 + the batch's length field
    pub size_in_bytes: usize,
    pub magic: i8,
    /// the stored checksum, unsigned
    pub crc: u32,
    /// as stored: the int16 of magic 2 (high byte included), the int8 of magic 0/1
    pub attributes: i16,
    /// `none`, `gzip`, `snappy`, `lz4`, `zstd`, or `unknown-5`/`-6`/`-7`
    pub compression: String,
    /// `CreateTime`, `LogAppendTime` or (magic 0) `NoTimestampType`
    pub timestamp_type: String,
    pub last_offset: i64,
    pub max_timestamp: i64,
    // Magic 2 only (not written for magic 0/1):
    pub base_offset: i64,
    pub last_offset_delta: i32,
    pub partition_leader_epoch: i32,
    pub base_timestamp: i64,
    pub delete_horizon_ms: Option<i64>,
    pub is_transactional: bool,
    pub is_control: bool,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub last_sequence: i32,
    /// the stored records count field
    pub records_count: i32,
    pub records: Vec<Record>,
}

/// One record of a batch.
#[allow(dead_code)]
#[derive(Debug, Clone, Default)]
pub struct Record {
    pub offset: i64,
    pub timestamp: i64,
    /// `None` is a null key; `Some(vec![])` an empty one (they are never conflated)
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<Header>,
    /// only for the records of a control batch
    pub control: Option<Control>,
}

/// A record header.
#[allow(dead_code)]
#[derive(Debug, Clone, Default)]
pub struct Header {
    /// decoded as UTF-8 leniently, as Kafka does (`String::from_utf8_lossy`)
    pub key: String,
    pub value: Option<Vec<u8>>,
}

/// The control part of a record in a control batch.
#[allow(dead_code)]
#[derive(Debug, Clone, Default)]
pub struct Control {
    pub type_id: i16,
    /// `ControlRecordType` name: `ABORT`, `COMMIT`, ...
    pub type_name: String,
    /// for `ABORT`/`COMMIT` only
    pub coordinator_epoch: Option<i32>,
}

/// The error the library reported: where decoding stopped and the Kafka exception it maps to.
#[allow(dead_code)]
#[derive(Debug, Clone, Default)]
pub struct DecodeError {
    /// the Kafka (or JDK) exception class, e.g. `org.apache.kafka.common.errors.CorruptRecordException`
    pub kafka_exception: String,
    /// the library's own error text
    pub message: Option<String>,
    /// 0-based index of the batch during which decoding failed
    pub batch_index: usize,
    /// byte position of that batch (see `batch_position`)
    pub position: usize,
}

/// The byte position of entry `index` of `data`: walks the entries' length fields from 0
/// (size = 12 + the big-endian int32 at position + 8), stopping at the end of the data or at
/// an entry whose length cannot be read. This is the one read of the bytes an adapter may do
/// itself (a count, not decoding).
#[allow(dead_code)]
pub fn batch_position(data: &[u8], index: usize) -> usize {
    let mut position = 0usize;
    for _ in 0..index {
        let Some(field) = data.get(position + 8..position + 12) else {
            break;
        };
        let length = i32::from_be_bytes([field[0], field[1], field[2], field[3]]);
        let Ok(length) = usize::try_from(length) else {
            break;
        };
        // saturating: no overflow where usize is 32-bit
        position = position.saturating_add(12).saturating_add(length).min(data.len());
    }
    position
}

// ---- JSON writing ----

/// A JSON value; objects keep their keys in the order given.
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(&'static str, Json)>),
}

impl Json {
    fn str(text: &str) -> Json {
        Json::Str(text.to_owned())
    }

    /// 64-bit integers are decimal strings in the canonical document
    fn long(value: i64) -> Json {
        Json::Str(value.to_string())
    }

    fn count(value: usize) -> Json {
        Json::Int(i64::try_from(value).unwrap_or(i64::MAX))
    }

    /// bytes: standard base64 with padding, `None` as null
    fn bytes(value: Option<&[u8]>) -> Json {
        value.map_or(Json::Null, |data| Json::Str(base64(data)))
    }

    fn option<T>(value: Option<T>, make: impl FnOnce(T) -> Json) -> Json {
        value.map_or(Json::Null, make)
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(value) => out.push_str(if *value { "true" } else { "false" }),
            Json::Int(value) => {
                let _ = write!(out, "{value}");
            }
            Json::Str(text) => write_string(out, text),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(out, key);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }

    fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }
}

/// A JSON string: quotes, backslash and control characters escaped; the rest raw UTF-8.
fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Standard base64 (RFC 4648 §4) with padding.
fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let byte = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let group = byte(0) << 16 | byte(1) << 8 | byte(2);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(group >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// An object without the keys the library does not expose (`OMITS`): `prefix` is "" for batch
/// and record keys, "control." for the fields of a record's control object.
fn object(fields: Vec<(&'static str, Json)>, prefix: &str) -> Json {
    let omitted = |key: &str| {
        library::OMITS
            .iter()
            .any(|entry| entry.strip_prefix(prefix) == Some(key))
    };
    Json::Object(
        fields
            .into_iter()
            .filter(|(key, _)| !omitted(key))
            .collect(),
    )
}

// ---- the canonical document (docs/canonical-json.md) ----

fn batch_json(batch: &Batch) -> Json {
    let mut fields = vec![
        ("position", Json::count(batch.position)),
        ("sizeInBytes", Json::count(batch.size_in_bytes)),
        ("magic", Json::Int(batch.magic.into())),
        ("crc", Json::Int(batch.crc.into())),
        ("attributes", Json::Int(batch.attributes.into())),
        ("compression", Json::str(&batch.compression)),
        ("timestampType", Json::str(&batch.timestamp_type)),
        ("lastOffset", Json::long(batch.last_offset)),
        ("maxTimestamp", Json::long(batch.max_timestamp)),
    ];
    if batch.magic >= 2 {
        fields.extend([
            ("baseOffset", Json::long(batch.base_offset)),
            ("lastOffsetDelta", Json::Int(batch.last_offset_delta.into())),
            (
                "partitionLeaderEpoch",
                Json::Int(batch.partition_leader_epoch.into()),
            ),
            ("baseTimestamp", Json::long(batch.base_timestamp)),
            (
                "deleteHorizonMs",
                Json::option(batch.delete_horizon_ms, Json::long),
            ),
            ("isTransactional", Json::Bool(batch.is_transactional)),
            ("isControl", Json::Bool(batch.is_control)),
            ("producerId", Json::long(batch.producer_id)),
            ("producerEpoch", Json::Int(batch.producer_epoch.into())),
            ("baseSequence", Json::Int(batch.base_sequence.into())),
            ("lastSequence", Json::Int(batch.last_sequence.into())),
            ("recordsCount", Json::Int(batch.records_count.into())),
        ]);
    }
    fields.push((
        "records",
        Json::Array(batch.records.iter().map(record_json).collect()),
    ));
    object(fields, "")
}

fn record_json(record: &Record) -> Json {
    let headers = record
        .headers
        .iter()
        .map(|header| {
            Json::Object(vec![
                ("key", Json::str(&header.key)),
                ("value", Json::bytes(header.value.as_deref())),
            ])
        })
        .collect();
    let mut fields = vec![
        ("offset", Json::long(record.offset)),
        ("timestamp", Json::long(record.timestamp)),
        ("key", Json::bytes(record.key.as_deref())),
        ("value", Json::bytes(record.value.as_deref())),
        ("headers", Json::Array(headers)),
    ];
    // `control` only in control batches; `coordinatorEpoch` only for ABORT/COMMIT
    if let Some(control) = &record.control {
        let mut control_fields = vec![
            ("typeId", Json::Int(control.type_id.into())),
            ("type", Json::str(&control.type_name)),
        ];
        if let Some(epoch) = control.coordinator_epoch {
            control_fields.push(("coordinatorEpoch", Json::Int(epoch.into())));
        }
        fields.push(("control", object(control_fields, "control.")));
    }
    object(fields, "")
}

/// The canonical document for `decoded`, the library's answer on `input_len` bytes.
fn document(mode: Mode, input_len: usize, decoded: &Decoded) -> String {
    let (outcome, error, tail) = match &decoded.error {
        Some(error) => {
            let error = Json::Object(vec![
                ("kafka_exception", Json::str(&error.kafka_exception)),
                ("message", Json::option(error.message.as_deref(), Json::str)),
                ("batch_index", Json::count(error.batch_index)),
                ("position", Json::count(error.position)),
            ]);
            ("error", error, Json::Null)
        }
        None => {
            // `partial` when bytes after the last complete batch were left unread
            let end = decoded
                .batches
                .last()
                .map_or(0, |batch| batch.position.saturating_add(batch.size_in_bytes));
            if end < input_len {
                let tail = Json::Object(vec![
                    ("position", Json::count(end)),
                    ("bytes", Json::count(input_len - end)),
                ]);
                ("partial", Json::Null, tail)
            } else {
                ("ok", Json::Null, Json::Null)
            }
        }
    };
    Json::Object(vec![
        ("format", Json::str("kafka-conformance/decode/1")),
        ("mode", Json::str(mode.as_str())),
        ("outcome", Json::str(outcome)),
        ("error", error),
        ("tail", tail),
        (
            "batches",
            Json::Array(decoded.batches.iter().map(batch_json).collect()),
        ),
    ])
    .to_text()
}

fn capabilities() -> String {
    let strings = |items: &[&str]| Json::Array(items.iter().map(|s| Json::str(s)).collect());
    Json::Object(vec![
        ("name", Json::str(library::NAME)),
        ("version", Json::str(library::VERSION)),
        (
            "magics",
            Json::Array(
                library::MAGICS
                    .iter()
                    .map(|&m| Json::Int(m.into()))
                    .collect(),
            ),
        ),
        ("codecs", strings(library::CODECS)),
        ("checks_crc", Json::Bool(library::CHECKS_CRC)),
        ("error_semantics", Json::str(library::ERROR_SEMANTICS)),
        ("file_semantics", Json::Bool(library::FILE_SEMANTICS)),
        ("error_classes", Json::str(library::ERROR_CLASSES)),
        ("omits", strings(library::OMITS)),
        (
            "lists_failing_batch",
            Json::Bool(library::LISTS_FAILING_BATCH),
        ),
        ("persistent", Json::Bool(true)),
        ("notes", Json::str(library::NOTES)),
    ])
    .to_text()
}

// ---- the subcommands ----

/// Runs the hook. Its failure (an `Err`, or a panic) is not a verdict: it ends the process
/// with a non-zero exit, which the kit reports as an `error` of the adapter.
fn decode(data: &[u8], mode: Mode) -> Result<String, Box<dyn Error>> {
    let decoded = library::decode(data, mode).map_err(|e| format!("library.rs: {e}"))?;
    Ok(document(mode, data.len(), &decoded))
}

/// `decode --as memory|file`: one input on stdin, one document on stdout.
fn decode_once(mode: Mode) -> Result<(), Box<dyn Error>> {
    let mut data = Vec::new();
    io::stdin().lock().read_to_end(&mut data)?;
    let text = decode(&data, mode)?;
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// `serve`: until EOF, requests of 1 byte mode (0 memory, 1 file) + 4-byte big-endian length +
/// the input; each answered with a 4-byte big-endian length + the UTF-8 document, flushed.
fn serve() -> Result<(), Box<dyn Error>> {
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    loop {
        let mut head = [0u8; 5];
        match input.read_exact(&mut head[..1]) {
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(()),
            result => result?,
        }
        input
            .read_exact(&mut head[1..])
            .map_err(|e| format!("serve: request header cut short: {e}"))?;
        let mode = match head[0] {
            0 => Mode::Memory,
            1 => Mode::File,
            other => return Err(format!("serve: unknown mode byte {other}").into()),
        };
        let length = u32::from_be_bytes([head[1], head[2], head[3], head[4]]);
        let mut data = vec![0u8; usize::try_from(length)?];
        input
            .read_exact(&mut data)
            .map_err(|e| format!("serve: request of {length} bytes cut short: {e}"))?;
        let text = decode(&data, mode)?;
        output.write_all(&u32::try_from(text.len())?.to_be_bytes())?;
        output.write_all(text.as_bytes())?;
        output.flush()?;
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: kafka-adapter capabilities | decode --as memory|file | serve");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["capabilities"] => {
            println!("{}", capabilities());
            Ok(())
        }
        ["decode", "--as", mode] => match Mode::parse(mode) {
            Some(mode) => decode_once(mode),
            None => return usage(),
        },
        ["serve"] => serve(),
        _ => return usage(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kafka-adapter: {e}");
            ExitCode::FAILURE
        }
    }
}
