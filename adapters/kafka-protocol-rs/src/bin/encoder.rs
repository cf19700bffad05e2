//! kafka-conformance encode adapter for the Rust crate `kafka-protocol` (pinned =0.18.0, default
//! features: client, broker, gzip, snappy, lz4, zstd). Protocol: docs/adapter-protocol.md,
//! "Producer side: `produce` and `encode`" (encode only: the crate is a protocol library and has
//! no producer).
//!
//! API called: `kafka_protocol::records::RecordBatchEncoder::encode(&mut BytesMut, &[Record],
//! &RecordEncodeOptions { version: batch.magic, compression: settings.codec })`; the bytes it
//! writes go to stdout unchanged. The crate derives the whole batch header from the records:
//! baseOffset = min(offset), lastOffsetDelta = max(offset) - min(offset), baseTimestamp =
//! min(timestamp), maxTimestamp = max(timestamp), baseSequence = first.sequence - (first.offset -
//! baseOffset), attributes from the first record's flags and the codec. So each plan record i
//! becomes a `Record` with the plan's batch fields, offset = base_offset + i and sequence =
//! base_sequence + i (wrapping, also when base_sequence is -1: the crate's own decoder reports
//! sequence = baseSequence + offsetDelta, and the encoder starts a new batch whenever
//! offset - sequence changes, so a constant -1 would give one batch per record).
//!
//! Mapping limits (declared in the capabilities' notes): a null plan timestamp is
//! `NO_TIMESTAMP` (-1; the crate has no clock); headers are an `IndexMap<StrBytes, Option<Bytes>>`,
//! so a record with a repeated header key cannot be represented and the plan is refused (exit 1).

use std::io::Write;

use bytes::{Bytes, BytesMut};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType, NO_TIMESTAMP,
};
use serde_json::Value;

const LIB_VERSION: &str = "0.18.0";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("capabilities") => println!("{}", capabilities()),
        Some("encode") => {
            let plan = match args.iter().position(|a| a == "--plan") {
                Some(i) if i + 1 < args.len() => args[i + 1].clone(),
                _ => usage(&args[0]),
            };
            match encode(&plan) {
                Ok(bytes) => {
                    let mut out = std::io::stdout().lock();
                    if let Err(e) = out.write_all(&bytes).and_then(|_| out.flush()) {
                        eprintln!("writing stdout: {e}");
                        std::process::exit(1);
                    }
                }
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(1);
                }
            }
        }
        _ => usage(&args[0]),
    }
}

fn usage(argv0: &str) -> ! {
    eprintln!("usage: {argv0} capabilities | encode --plan FILE");
    std::process::exit(2);
}

fn capabilities() -> String {
    serde_json::json!({
        "name": "kafka-protocol-rs",
        "version": LIB_VERSION,
        "encode": {
            "codecs": ["none", "gzip", "snappy", "lz4", "zstd"],
            "idempotence": true,
            "transactions": true,
            "headers": true,
            "magics": [2],
            "notes": concat!(
                "kafka_protocol::records::RecordBatchEncoder::encode (default features gzip, ",
                "snappy, lz4, zstd); magic 0/1 are refused by the crate ('message sets v{n} are ",
                "unsupported'). The crate builds the header from the records: baseTimestamp is the ",
                "minimum record timestamp (not the first record's), maxTimestamp the maximum, ",
                "lastOffsetDelta max-min offset, baseSequence from the first record's sequence. ",
                "A null plan timestamp is NO_TIMESTAMP (-1): the crate has no clock. Negative ",
                "timestamps are not refused by the crate. Record headers are an IndexMap keyed by ",
                "header key: a record with a repeated header key cannot be represented and the ",
                "plan is refused. No produce side: the crate is a protocol library without a producer."
            )
        }
    })
    .to_string()
}

fn encode(path: &str) -> Result<Vec<u8>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading plan {path}: {e}"))?;
    let plan: Value = serde_json::from_str(&text).map_err(|e| format!("plan is not JSON: {e}"))?;

    let codec = plan["settings"]["codec"]
        .as_str()
        .ok_or("plan: settings.codec missing")?;
    let compression = match codec {
        "none" => Compression::None,
        "gzip" => Compression::Gzip,
        "snappy" => Compression::Snappy,
        "lz4" => Compression::Lz4,
        "zstd" => Compression::Zstd,
        other => return Err(format!("plan: unknown codec {other:?}")),
    };
    let batch = &plan["batch"];
    let magic = int(&batch["magic"], "batch.magic")?;
    let version = i8::try_from(magic).map_err(|_| format!("plan: batch.magic {magic} out of range"))?;
    let base_offset = int(&batch["base_offset"], "batch.base_offset")?;
    let producer_id = int(&batch["producer_id"], "batch.producer_id")?;
    let producer_epoch = i16::try_from(int(&batch["producer_epoch"], "batch.producer_epoch")?)
        .map_err(|_| "plan: batch.producer_epoch out of range".to_string())?;
    let base_sequence = i32::try_from(int(&batch["base_sequence"], "batch.base_sequence")?)
        .map_err(|_| "plan: batch.base_sequence out of range".to_string())?;
    let partition_leader_epoch =
        i32::try_from(int(&batch["partition_leader_epoch"], "batch.partition_leader_epoch")?)
            .map_err(|_| "plan: batch.partition_leader_epoch out of range".to_string())?;
    let transactional = batch["transactional"]
        .as_bool()
        .ok_or("plan: batch.transactional missing")?;

    let plan_records = plan["records"].as_array().ok_or("plan: records missing")?;
    let mut records = Vec::with_capacity(plan_records.len());
    for (i, r) in plan_records.iter().enumerate() {
        let timestamp = match &r["timestamp"] {
            Value::Null => NO_TIMESTAMP,
            v => int(v, &format!("records[{i}].timestamp"))?,
        };
        let mut record = Record {
            transactional,
            control: false,
            delete_horizon: false,
            partition_leader_epoch,
            producer_id,
            producer_epoch,
            timestamp_type: TimestampType::Creation,
            offset: base_offset.wrapping_add(i as i64),
            sequence: base_sequence.wrapping_add(i as i32),
            timestamp,
            key: b64_opt(&r["key"], &format!("records[{i}].key"))?,
            value: b64_opt(&r["value"], &format!("records[{i}].value"))?,
            headers: Default::default(),
        };
        if let Some(headers) = r["headers"].as_array() {
            for (j, h) in headers.iter().enumerate() {
                let key = h["key"]
                    .as_str()
                    .ok_or_else(|| format!("plan: records[{i}].headers[{j}].key missing"))?;
                let value = b64_opt(&h["value"], &format!("records[{i}].headers[{j}].value"))?;
                let previous = record
                    .headers
                    .insert(StrBytes::from_string(key.to_string()), value);
                if previous.is_some() {
                    return Err(format!(
                        "records[{i}]: header key {key:?} repeats; kafka_protocol::records::Record.headers \
                         is an IndexMap<StrBytes, Option<Bytes>> and cannot hold two headers with one key"
                    ));
                }
            }
        }
        records.push(record);
    }

    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &records,
        &RecordEncodeOptions {
            version,
            compression,
        },
    )
    .map_err(|e| format!("RecordBatchEncoder::encode: {e:#}"))?;
    Ok(buf.to_vec())
}

fn int(v: &Value, what: &str) -> Result<i64, String> {
    v.as_i64()
        .ok_or_else(|| format!("plan: {what} is not an integer: {v}"))
}

fn b64_opt(v: &Value, what: &str) -> Result<Option<Bytes>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => base64_decode(s)
            .map(|b| Some(Bytes::from(b)))
            .ok_or_else(|| format!("plan: {what} is not base64")),
        other => Err(format!("plan: {what} is neither base64 nor null: {other}")),
    }
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 {
        return None; // a single leftover base64 digit: not valid
    }
    Some(out)
}
