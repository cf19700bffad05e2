//! A kafka-conformance producer adapter: the protocol side (docs/adapter-protocol.md of
//! kafka-conformance, "Producer side").
//!
//! This file reads the plan, calls the hook and writes the produce-result document, or the
//! encoded batch. You should not need to edit it: call your library in `src/library.rs` (the
//! hook) and declare its capabilities there; `src/plan.rs` holds the structures and reads the
//! plan, `src/json.rs` reads and writes JSON.
//!
//! Build and run:
//!
//! ```text
//! cargo build --release --offline
//! target/release/kafka-produce-adapter capabilities
//! target/release/kafka-produce-adapter produce --bootstrap 127.0.0.1:9092 --plan sample-plan.json
//! target/release/kafka-produce-adapter encode --plan sample-plan.json > batch.bin
//! kafka-conformance check-producer --cmd "$PWD/target/release/kafka-produce-adapter"
//! ```
//!
//! Exit codes: 0 with the document (produce; also when records failed: that is a verdict) or
//! the batch's bytes (encode) on stdout; 2 for a usage error or a plan that cannot be read; 3
//! when the hook returned `Err` (encode: the library refused the plan), 101 (Rust's own) when it
//! panicked: a crash of the library is no verdict, and the reason is on stderr.
//!
//! It uses the standard library only (JSON is read and written by `src/json.rs`), so it builds
//! offline; add your library to `Cargo.toml`.

mod json;
mod library;
mod plan;

use json::Value;
use plan::{Plan, Produced};
use std::env;
use std::error::Error;
use std::fs;
use std::io::{self, Write};
use std::process::ExitCode;

/// The contract id of the document `produce` prints.
const RESULT_FORMAT: &str = "kafka-conformance/produce-result/1";

const USAGE: &str = "\
usage: kafka-produce-adapter capabilities
       kafka-produce-adapter produce --bootstrap HOST:PORT --plan FILE
       kafka-produce-adapter encode --plan FILE";

/// The exit code of a usage error (or a plan that cannot be read).
const EXIT_USAGE: u8 = 2;
/// The exit code when the hook failed (no verdict).
const EXIT_HOOK_FAILED: u8 = 3;

// ---- the command line ----

/// `--flag value` pairs: exactly the flags `needed`, each once, in any order.
fn read_arguments<'a>(
    argv: &'a [String],
    needed: &[&str],
) -> Result<Vec<(&'a str, &'a str)>, String> {
    let mut values: Vec<(&str, &str)> = Vec::new();
    for pair in argv.chunks(2) {
        match pair {
            [flag, value] if needed.contains(&flag.as_str()) => {
                values.retain(|(f, _)| f != flag);
                values.push((flag, value));
            }
            _ => return Err(format!("unknown option or missing value: {}", pair[0])),
        }
    }
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|flag| values.iter().all(|(f, _)| f != flag))
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing {}", missing.join(", ")));
    }
    Ok(values)
}

fn read_plan_file(path: &str) -> Result<Plan, String> {
    fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| plan::read_plan(&text))
        .map_err(|e| format!("{path}: cannot read the plan: {e}"))
}

// ---- the documents ----

/// The produce-result document (contract [`RESULT_FORMAT`]): one entry per plan record.
fn result_document(out: &Produced, plan: &Plan) -> Result<String, String> {
    if out.records.len() != plan.records.len() {
        return Err(format!(
            "the hook reported {} records for a plan of {}",
            out.records.len(),
            plan.records.len()
        ));
    }
    let records = out
        .records
        .iter()
        .map(|d| {
            Value::object([
                (
                    "partition",
                    Value::option(d.partition, |p| Value::Int(p.into())),
                ),
                ("offset", Value::option(d.offset, Value::Int)),
                ("error", Value::option(d.error.as_deref(), Value::str)),
            ])
        })
        .collect();
    Ok(Value::object([
        ("format", Value::str(RESULT_FORMAT)),
        ("records", Value::Array(records)),
        ("error", Value::option(out.error.as_deref(), Value::str)),
    ])
    .to_text())
}

fn strings(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|s| Value::str(s)).collect())
}

fn magics(items: &[u8]) -> Value {
    Value::Array(items.iter().map(|&m| Value::Int(m.into())).collect())
}

/// A default: the number, or "none" for `plan::NO_SETTING` (the library has no such setting).
fn setting(value: i64) -> Value {
    if value == i64::from(plan::NO_SETTING) {
        Value::str("none")
    } else {
        Value::Int(value)
    }
}

/// The producer side's capabilities: a `produce` and an `encode` object (either may be absent:
/// that side is not offered).
fn capabilities() -> String {
    let mut doc = vec![
        ("name".to_string(), Value::str(library::NAME)),
        ("version".to_string(), Value::str(library::VERSION)),
    ];
    if let Some(p) = &library::PRODUCE {
        let d = &p.defaults;
        let side = Value::object([
            ("codecs", strings(p.codecs)),
            ("idempotence", Value::Bool(p.idempotence)),
            ("transactions", Value::Bool(p.transactions)),
            ("headers", Value::Bool(p.headers)),
            ("magics", magics(p.magics)),
            ("partitioner", Value::str(p.partitioner)),
            (
                "defaults",
                Value::object([
                    ("idempotence", Value::Bool(d.idempotence)),
                    ("acks", Value::Int(d.acks.into())),
                    ("linger_ms", setting(d.linger_ms)),
                    ("batch_size", setting(d.batch_size.into())),
                ]),
            ),
            ("notes", Value::str(p.notes)),
        ]);
        doc.push(("produce".to_string(), side));
    }
    if let Some(e) = &library::ENCODE {
        let side = Value::object([
            ("codecs", strings(e.codecs)),
            ("idempotence", Value::Bool(e.idempotence)),
            ("transactions", Value::Bool(e.transactions)),
            ("headers", Value::Bool(e.headers)),
            ("magics", magics(e.magics)),
            ("notes", Value::str(e.notes)),
        ]);
        doc.push(("encode".to_string(), side));
    }
    Value::Object(doc).to_text()
}

// ---- the subcommands ----

fn write_out(data: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(data)?;
    out.flush()
}

// The hook's failure (an `Err`, or a panic) is not a verdict: it ends the process with a
// non-zero exit and nothing on stdout, which the kit reports as an `error` of the adapter.

/// `produce`: the hook sends the plan; one produce-result document on stdout.
fn produce(bootstrap: &str, plan: &Plan) -> Result<(), Box<dyn Error>> {
    let produced = library::produce(bootstrap, plan).map_err(|e| format!("library.rs: {e}"))?;
    write_out(format!("{}\n", result_document(&produced, plan)?).as_bytes())?;
    Ok(())
}

/// `encode`: the hook builds the batch; its bytes on stdout.
fn encode(plan: &Plan) -> Result<(), Box<dyn Error>> {
    let batch = library::encode(plan).map_err(|e| format!("library.rs: {e}"))?;
    write_out(&batch)?;
    Ok(())
}

fn usage(problem: Option<&str>) -> ExitCode {
    if let Some(problem) = problem {
        eprintln!("kafka-produce-adapter: {problem}");
    }
    eprintln!("{USAGE}");
    ExitCode::from(EXIT_USAGE)
}

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let command = args.first().map_or("", String::as_str);
    let needed: &[&str] = match command {
        "capabilities" => &[],
        "produce" => &["--bootstrap", "--plan"],
        "encode" => &["--plan"],
        _ => return usage(None),
    };
    let values = match read_arguments(&args[1..], needed) {
        Ok(values) => values,
        Err(problem) => return usage(Some(&problem)),
    };
    let value = |flag: &str| {
        values
            .iter()
            .find(|(f, _)| *f == flag)
            .map_or("", |(_, v)| *v)
    };
    let result = if command == "capabilities" {
        write_out(format!("{}\n", capabilities()).as_bytes()).map_err(Into::into)
    } else {
        let plan = match read_plan_file(value("--plan")) {
            Ok(plan) => plan,
            Err(problem) => return usage(Some(&problem)),
        };
        if command == "produce" {
            produce(value("--bootstrap"), &plan)
        } else {
            encode(&plan)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kafka-produce-adapter: {e}");
            ExitCode::from(EXIT_HOOK_FAILED)
        }
    }
}
