//! A kafka-conformance consumer adapter: the protocol side (docs/adapter-protocol.md of
//! kafka-conformance, "The consumer side").
//!
//! This file speaks the adapter protocol's consumer side and writes the consume document. You
//! should not need to edit it: run your library's consumer in `src/library.rs` (the hook) and
//! declare its capabilities there; `src/consumed.rs` holds the structures the hook fills.
//!
//! Build and run:
//!
//! ```text
//! cargo build --release --offline
//! target/release/kafka-consume-adapter capabilities
//! target/release/kafka-consume-adapter consume --bootstrap 127.0.0.1:9092 --topic T \
//!     --partition 0 --from earliest --isolation read_uncommitted --timeout-ms 10000
//! kafka-conformance check --side consume --cmd "$PWD/target/release/kafka-consume-adapter"
//! ```
//!
//! Exit codes: 0 with one document on stdout (also when the consumer reported an error: that
//! is a verdict); 2 for a usage error; 3 when the hook returned `Err`, 101 (Rust's own) when it
//! panicked: a crash of the library is no verdict, and the reason is on stderr.
//!
//! It uses the standard library only (base64 and JSON are written by hand below), so it builds
//! offline; add your library to `Cargo.toml`.

mod consumed;
mod library;

use consumed::{Consumed, Isolation, Omits, Options, Start};
use std::collections::HashMap;
use std::env;
use std::error::Error;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::process::ExitCode;
use std::str::FromStr;

/// The contract id of the document this adapter prints.
const FORMAT: &str = "kafka-conformance/consume/1";

const USAGE: &str = "\
usage: kafka-consume-adapter capabilities
       kafka-consume-adapter consume --bootstrap HOST:PORT --topic T --partition N
           --from earliest|OFFSET --isolation read_uncommitted|read_committed --timeout-ms N
           [--group G]";

/// The exit code of a usage error.
const EXIT_USAGE: u8 = 2;
/// The exit code when the hook failed (no verdict).
const EXIT_HOOK_FAILED: u8 = 3;

// ---- the command line ----

/// The `consume` options: every one but the last (`--group`) is required.
const FLAGS: [&str; 7] = [
    "--bootstrap",
    "--topic",
    "--partition",
    "--from",
    "--isolation",
    "--timeout-ms",
    "--group",
];

/// The `consume` command line (`argv` after "consume") as [`Options`], or what is wrong with it.
fn read_options(argv: &[String]) -> Result<Options, String> {
    let mut values: HashMap<&str, &str> = HashMap::new();
    for pair in argv.chunks(2) {
        match pair {
            [flag, value] if FLAGS.contains(&flag.as_str()) => {
                values.insert(flag, value);
            }
            _ => return Err(format!("unknown option or missing value: {}", pair[0])),
        }
    }
    let missing: Vec<&str> = FLAGS[..6]
        .iter()
        .copied()
        .filter(|flag| !values.contains_key(flag))
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing {}", missing.join(", ")));
    }
    fn number<T: FromStr>(values: &HashMap<&str, &str>, flag: &str) -> Result<T, String> {
        let text = values[flag];
        text.parse()
            .map_err(|_| format!("{flag}: not a number: {text:?}"))
    }
    Ok(Options {
        bootstrap: values["--bootstrap"].to_string(),
        topic: values["--topic"].to_string(),
        partition: number(&values, "--partition")?,
        start: Start::parse(values["--from"]).ok_or("--from: earliest or an offset")?,
        isolation: Isolation::parse(values["--isolation"])
            .ok_or("--isolation: one of read_uncommitted, read_committed")?,
        timeout_ms: number(&values, "--timeout-ms")?,
        group: values.get("--group").map(|group| group.to_string()),
    })
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

    /// 64-bit integers (offsets, timestamps) are decimal strings in the consume document
    fn long(value: i64) -> Json {
        Json::Str(value.to_string())
    }

    /// bytes: standard base64 with padding, `None` as null
    fn bytes(value: Option<&[u8]>) -> Json {
        value.map_or(Json::Null, |data| Json::Str(base64(data)))
    }

    fn strings(items: &[&str]) -> Json {
        Json::Array(items.iter().map(|s| Json::str(s)).collect())
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

// ---- the documents ----

/// The consume document (contract [`FORMAT`]) of what the hook returned.
fn document(out: &Consumed) -> String {
    let records = out
        .records
        .iter()
        .map(|r| {
            let headers = r
                .headers
                .iter()
                .map(|h| {
                    Json::Object(vec![
                        ("key", Json::str(&h.key)),
                        ("value", Json::bytes(h.value.as_deref())),
                    ])
                })
                .collect();
            Json::Object(vec![
                ("offset", Json::long(r.offset)),
                ("timestamp", Json::long(r.timestamp)),
                ("timestampType", Json::str(r.timestamp_type.as_str())),
                ("key", Json::bytes(r.key.as_deref())),
                ("value", Json::bytes(r.value.as_deref())),
                ("headers", Json::Array(headers)),
            ])
        })
        .collect();
    let error = out.error.as_ref().map_or(Json::Null, |e| {
        Json::Object(vec![
            ("class", Json::str(&e.class)),
            (
                "message",
                e.message.as_deref().map_or(Json::Null, Json::str),
            ),
        ])
    });
    Json::Object(vec![
        ("format", Json::str(FORMAT)),
        ("records", Json::Array(records)),
        ("error", error),
    ])
    .to_text()
}

/// The consumer side's capabilities (docs/adapter-protocol.md, "Capabilities").
fn capabilities() -> String {
    let omits = match library::OMITS {
        Omits::All(keys) => Json::strings(keys),
        Omits::PerMagic(magics) => Json::Object(
            magics
                .iter()
                .map(|&(magic, keys)| (magic, Json::strings(keys)))
                .collect(),
        ),
    };
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
        ("codecs", Json::strings(library::CODECS)),
        ("checks_crc", Json::Bool(library::CHECKS_CRC)),
        ("error_semantics", Json::str(library::ERROR_SEMANTICS)),
        ("error_classes", Json::str(library::ERROR_CLASSES)),
        ("omits", omits),
        ("notes", Json::str(library::NOTES)),
    ])
    .to_text()
}

// ---- the subcommands ----

fn write_line(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Runs the hook and prints its document. Its failure (an `Err`, or a panic) is not a verdict:
/// it ends the process with a non-zero exit and nothing on stdout, which the kit reports as an
/// `error` of the adapter.
fn consume(options: &Options) -> Result<(), Box<dyn Error>> {
    let consumed = library::consume(options).map_err(|e| format!("library.rs: {e}"))?;
    write_line(&document(&consumed))?;
    Ok(())
}

fn usage(problem: Option<&str>) -> ExitCode {
    if let Some(problem) = problem {
        eprintln!("kafka-consume-adapter: {problem}");
    }
    eprintln!("{USAGE}");
    ExitCode::from(EXIT_USAGE)
}

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("capabilities") if args.len() == 1 => write_line(&capabilities()).map_err(Into::into),
        Some("consume") => match read_options(&args[1..]) {
            Ok(options) => consume(&options),
            Err(problem) => return usage(Some(&problem)),
        },
        _ => return usage(None),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kafka-consume-adapter: {e}");
            ExitCode::from(EXIT_HOOK_FAILED)
        }
    }
}
