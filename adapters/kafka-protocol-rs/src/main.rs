//! kafka-conformance adapter for the Rust crate `kafka-protocol` (pinned =0.18.0, default features:
//! client, broker, gzip, snappy, lz4, zstd). Protocol: docs/adapter-protocol.md (one-shot mode, and
//! the persistent `serve`).
//!
//! API called: `kafka_protocol::records::RecordBatchDecoder::decode(&mut Bytes)`, one batch per
//! call, in the loop `RecordBatchDecoder::decode_all` itself runs (records.rs `decode_all`:
//! `while buf.has_remaining() { batches.push(Self::decode(buf)?) }`). Running the loop here keeps
//! the batches decoded before an error (decode_all drops them) and gives batch_index/position.
//! The header of each decoded batch comes from `RecordBatchDecoder::decode_batch_info` on exactly
//! the bytes `decode` consumed (both public API of the crate); records from `RecordSet::records`.
//! When `decode` fails after consuming a whole batch and `decode_batch_info` accepts those bytes,
//! that batch is listed with its header and no records (the crate delivers none of them).
//! deleteHorizonMs = baseTimestamp when the crate reports `delete_horizon`, as Kafka derives it.
//!
//! Declares: magics [2] (v0/v1 are rejected: "message sets v{n} are unsupported"), CRC always
//! checked (no option), eager error semantics (a batch whose records fail is returned as Err,
//! nothing of it is delivered), no FileRecords rules, error families mapped from the crate's
//! anyhow messages, and omits the fields the crate does not expose (crc, attributes,
//! lastOffsetDelta/lastOffset, maxTimestamp, lastSequence, control-record parsing).
//!
//! Crash guard: `decode --as X` re-runs this binary as a worker (`decode-worker --as X`). The
//! worker catches panics (catch_unwind; the panic hook writes to stderr only). An allocation
//! failure aborts the process (Rust's `handle_alloc_error`), which no in-process code can catch;
//! the parent then passes the worker's stderr on and exits as it did: a crash is no verdict.
//! `serve` decodes in its own process (panics caught the same way): an abort ends the server,
//! which the kit reports as the adapter's crash for that input and starts again.

use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::process::{Command, Stdio};

use bytes::Bytes;
use kafka_protocol::records::{Compression, RecordBatchDecoder, RecordSet, TimestampType};

const LIB_VERSION: &str = "0.18.0";
const CORRUPT: &str = "org.apache.kafka.common.errors.CorruptRecordException";
const COMPRESSION: &str = "org.apache.kafka.common.KafkaException";
const ILLEGAL_ARG: &str = "java.lang.IllegalArgumentException";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = match args.iter().position(|a| a == "--as") {
        Some(i) => args.get(i + 1).cloned().unwrap_or_default(),
        None => String::new(),
    };
    match args.get(1).map(String::as_str) {
        Some("capabilities") => println!("{}", capabilities()),
        Some("decode") if mode == "memory" || mode == "file" => std::process::exit(parent(&mode)),
        Some("decode-worker") if mode == "memory" || mode == "file" => worker(),
        Some("serve") if args.len() == 2 => std::process::exit(serve()),
        _ => {
            eprintln!("usage: {} capabilities | decode --as memory|file | serve", args[0]);
            std::process::exit(2);
        }
    }
}

fn capabilities() -> String {
    let omits = [
        "crc",
        "attributes",
        "lastOffset",
        "lastOffsetDelta",
        "maxTimestamp",
        "lastSequence",
        "control",
    ];
    format!(
        concat!(
            "{{\"name\":\"kafka-protocol-rs\",\"version\":\"{}\",\"magics\":[2],",
            "\"codecs\":[\"none\",\"gzip\",\"snappy\",\"lz4\",\"zstd\"],\"checks_crc\":true,",
            // RecordBatchDecoder::decode returns Err with no records (and for a header it
            // rejects, no header) of a batch that fails, compressed or not
            "\"error_semantics\":\"atomic\",\"lists_failing_batch\":false,",
            "\"file_semantics\":false,\"error_classes\":\"family\",",
            "\"omits\":[{}],\"persistent\":true,\"notes\":{}}}"
        ),
        LIB_VERSION,
        omits.iter().map(|o| json_str(o)).collect::<Vec<_>>().join(","),
        json_str(concat!(
            "kafka-protocol decodes magic 2 only; CRC-32C is always verified; a batch is decoded ",
            "all-or-nothing (RecordBatchDecoder::decode returns Err and no records or header for a ",
            "batch that fails), and a truncated trailing batch is an error, not an ignored tail. ",
            "Batch header fields come from decode_batch_info; deleteHorizonMs is baseTimestamp when ",
            "the crate reports delete_horizon (as Kafka's DefaultRecordBatch.deleteHorizonMs()). ",
            "Error classes are mapped from the crate's anyhow messages (decompression -> ",
            "KafkaException, unknown codec -> IllegalArgumentException, else CorruptRecordException). ",
            "Decoding runs in a child process: an abort (failed allocation from an untrusted count) ",
            "is passed on as the adapter's crash (its stderr, its exit status), not as a verdict."
        ))
    )
}

/// One-shot mode: run the worker on stdin's bytes, pass its document through, or, when it
/// crashed (abort on a failed allocation, OOM kill, ...), its stderr and its exit status.
fn parent(mode: &str) -> i32 {
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("reading stdin: {e}");
        return 1;
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("current_exe: {e}");
            return 1;
        }
    };
    let child = Command::new(exe)
        .args(["decode-worker", "--as", mode])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            eprintln!("spawning worker: {e}");
            return 1;
        }
    };
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input); // a worker that died early closes the pipe: ignore
    });
    let out = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("waiting for worker: {e}");
            return 1;
        }
    };
    let _ = writer.join();
    let stderr = String::from_utf8_lossy(&out.stderr);
    std::io::stderr().write_all(stderr.as_bytes()).ok();
    // the worker's stdout: "B <batch json>" per batch listed, then "E <error json>" or
    // "E null"
    let (mut batches, mut end) = (Vec::new(), None);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(b) = line.strip_prefix("B ") {
            batches.push(b.to_string());
        } else if let Some(e) = line.strip_prefix("E ") {
            end = Some(e.to_string());
        }
    }
    match (out.status.success(), end) {
        (true, Some(error)) => {
            println!("{}", document(mode, &batches, &error));
            0
        }
        _ => {
            // the library crashed the process (e.g. "memory allocation of 377957121872 bytes
            // failed": handle_alloc_error aborts): that is no verdict, so the adapter fails as
            // the library did (the kit reports an `error` with the worker's stderr, above)
            let why = match out.status.code() {
                Some(c) => format!("exit status {c}"),
                None => format!("killed by signal {}", signal_of(&out.status)),
            };
            eprintln!("kafka-protocol-rs adapter: the decoding worker crashed ({why})");
            out.status.code().unwrap_or(128 + signal_of(&out.status))
        }
    }
}

#[cfg(unix)]
fn signal_of(s: &std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.signal().unwrap_or(0)
}
#[cfg(not(unix))]
fn signal_of(_: &std::process::ExitStatus) -> i32 {
    0
}

fn document(mode: &str, batches: &[String], error: &str) -> String {
    let outcome = if error == "null" { "ok" } else { "error" };
    format!(
        "{{\"format\":\"kafka-conformance/decode/1\",\"mode\":\"{mode}\",\"outcome\":\"{outcome}\",\"error\":{error},\"tail\":null,\"batches\":[{}]}}",
        batches.join(",")
    )
}

fn panic_hook() {
    panic::set_hook(Box::new(|info| {
        eprintln!("panic in kafka-protocol: {info}")
    }));
}

/// The worker: decode stdin batch by batch, streaming each decoded batch as a line.
fn worker() {
    panic_hook();
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).expect("stdin");
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let error = decode_batches(input, |b| {
        writeln!(out, "B {b}").ok();
        out.flush().ok();
    });
    writeln!(out, "E {error}").ok();
    out.flush().ok();
}

/// Persistent mode: requests (1 byte mode + 4-byte big-endian length + input) until EOF, each
/// answered with a 4-byte big-endian length and the document.
fn serve() -> i32 {
    panic_hook();
    let (stdin, stdout) = (std::io::stdin(), std::io::stdout());
    let (mut inp, mut out) = (stdin.lock(), stdout.lock());
    loop {
        let mut head = [0u8; 5];
        if let Err(e) = inp.read_exact(&mut head) {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                return 0;
            }
            eprintln!("serve: reading a request: {e}");
            return 2;
        }
        let mode = match head[0] {
            0 => "memory",
            1 => "file",
            m => {
                eprintln!("serve: bad mode byte {m}");
                return 2;
            }
        };
        let size = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        let mut input = vec![0u8; size];
        if let Err(e) = inp.read_exact(&mut input) {
            eprintln!("serve: input cut short: {e}");
            return 2;
        }
        let mut batches = Vec::new();
        let error = decode_batches(input, |b| batches.push(b));
        let doc = document(mode, &batches, &error);
        let answer = (doc.len() as u32).to_be_bytes();
        if out.write_all(&answer).and_then(|_| out.write_all(doc.as_bytes())).and_then(|_| out.flush()).is_err() {
            return 0; // the kit went away
        }
    }
}

/// Decode ``input`` batch by batch: each decoded batch's JSON to ``emit``; returns the error's
/// JSON ("null": none).
fn decode_batches(input: Vec<u8>, mut emit: impl FnMut(String)) -> String {
    let mut buf = Bytes::from(input);
    let (mut index, mut position) = (0usize, 0u64);
    loop {
        if buf.is_empty() {
            break "null".to_string();
        }
        let before = buf.clone();
        let result = panic::catch_unwind(AssertUnwindSafe(|| RecordBatchDecoder::decode(&mut buf)));
        let set = match result {
            Ok(Ok(set)) => set,
            Ok(Err(e)) => {
                // `decode` advances `buf` past the whole batch (try_get_bytes(batch_length))
                // before it checks the CRC and decodes the records. If decode_batch_info accepts
                // exactly those bytes, the header was valid and the error came from the records:
                // list the batch (header only: the crate delivers none of its records).
                let consumed = before.len() - buf.len();
                if let Ok(v) = RecordBatchDecoder::decode_batch_info(&mut before.slice(0..consumed))
                {
                    if v.len() == 1 {
                        let empty = RecordSet {
                            compression: v[0].compression,
                            version: v[0].version,
                            records: vec![],
                        };
                        emit(batch_json(position, consumed, &v[0], &empty));
                    }
                }
                let msg = format!("{e:#}");
                break error_json(classify(&msg), &msg, index, position);
            }
            Err(payload) => {
                let text = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(non-string panic payload)".into());
                break error_json(CORRUPT, &format!("panic: {text}"), index, position);
            }
        };
        let consumed = before.len() - buf.len();
        let mut exact = before.slice(0..consumed);
        let info = match RecordBatchDecoder::decode_batch_info(&mut exact) {
            Ok(v) if v.len() == 1 => v.into_iter().next().unwrap(),
            other => {
                let msg = format!("adapter: decode_batch_info disagrees with decode: {other:?}");
                break error_json(CORRUPT, &msg, index, position);
            }
        };
        emit(batch_json(position, consumed, &info, &set));
        index += 1;
        position += consumed as u64;
    }
}

/// Error family from the crate's message (it has no error types: anyhow strings only).
fn classify(msg: &str) -> &'static str {
    let m = msg.to_ascii_lowercase();
    if m.contains("unknown compression algorithm") {
        ILLEGAL_ARG
    } else if m.contains("compress") || m.contains("snappy") || m.contains("for block") {
        COMPRESSION
    } else {
        CORRUPT
    }
}

fn error_json(class: &str, msg: &str, index: usize, position: u64) -> String {
    format!(
        "{{\"kafka_exception\":{},\"message\":{},\"batch_index\":{index},\"position\":{position}}}",
        json_str(class),
        json_str(msg)
    )
}

fn batch_json(
    position: u64,
    size: usize,
    info: &kafka_protocol::records::BatchDecodeInfo,
    set: &RecordSet,
) -> String {
    let compression = match set.compression {
        Compression::None => "none",
        Compression::Gzip => "gzip",
        Compression::Snappy => "snappy",
        Compression::Lz4 => "lz4",
        Compression::Zstd => "zstd",
    };
    let ts_type = match info.timestamp_type {
        TimestampType::Creation => "CreateTime",
        TimestampType::LogAppend => "LogAppendTime",
    };
    let delete_horizon = if info.delete_horizon {
        format!("\"{}\"", info.min_timestamp)
    } else {
        "null".into()
    };
    let records: Vec<String> = set
        .records
        .iter()
        .map(|r| {
            let headers: Vec<String> = r
                .headers
                .iter()
                .map(|(k, v)| format!("{{\"key\":{},\"value\":{}}}", json_str(k.as_str()), b64_opt(v.as_deref())))
                .collect();
            format!(
                "{{\"offset\":\"{}\",\"timestamp\":\"{}\",\"key\":{},\"value\":{},\"headers\":[{}]}}",
                r.offset,
                r.timestamp,
                b64_opt(r.key.as_deref()),
                b64_opt(r.value.as_deref()),
                headers.join(",")
            )
        })
        .collect();
    format!(
        concat!(
            "{{\"position\":{},\"sizeInBytes\":{},\"magic\":{},\"compression\":\"{}\",",
            "\"timestampType\":\"{}\",\"baseOffset\":\"{}\",\"partitionLeaderEpoch\":{},",
            "\"baseTimestamp\":\"{}\",\"deleteHorizonMs\":{},\"isTransactional\":{},\"isControl\":{},",
            "\"producerId\":\"{}\",\"producerEpoch\":{},\"baseSequence\":{},\"recordsCount\":{},",
            "\"records\":[{}]}}"
        ),
        position,
        size,
        set.version,
        compression,
        ts_type,
        info.min_offset,
        info.partition_leader_epoch,
        info.min_timestamp,
        delete_horizon,
        info.transactional,
        info.control,
        info.producer_id,
        info.producer_epoch,
        info.base_sequence,
        info.record_count,
        records.join(",")
    )
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn b64_opt(b: Option<&[u8]>) -> String {
    match b {
        None => "null".into(),
        Some(b) => format!("\"{}\"", base64(b)),
    }
}

fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
