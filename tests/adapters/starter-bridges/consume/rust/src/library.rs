//! Test bridge for the Rust consumer starter (tests/test_starter_sides.py): a replacement of the
//! hook whose `consume` runs Kafka's own consumer (`$STARTER_BRIDGE_PYTHON
//! $STARTER_BRIDGE_SCRIPT consume ...`, tests/adapters/starter_bridge.py, whose docstring gives
//! the R/E line format) and fills the starter's structures from its lines, so that the
//! starter's protocol side is what the test exercises.

use crate::consumed::{ConsumeError, Consumed, Header, Omits, Options, Record, TimestampType};
use std::env;
use std::error::Error;
use std::process::{Command, Stdio};

pub const NAME: &str = "rust-consume-starter-bridge";
pub const VERSION: &str = "";
pub const MAGICS: &[u8] = &[0, 1, 2];
pub const CODECS: &[&str] = &["none", "gzip", "snappy", "lz4", "zstd"];
pub const CHECKS_CRC: bool = true;
pub const ERROR_SEMANTICS: &str = "streaming";
pub const ERROR_CLASSES: &str = "class";
pub const OMITS: Omits = Omits::All(&[]);
pub const NOTES: &str = "";

type Res<T> = Result<T, Box<dyn Error>>;

pub fn consume(options: &Options) -> Res<Consumed> {
    let output = Command::new(env::var("STARTER_BRIDGE_PYTHON")?)
        .arg(env::var("STARTER_BRIDGE_SCRIPT")?)
        .args([
            "consume",
            "--bootstrap",
            &options.bootstrap,
            "--topic",
            &options.topic,
        ])
        .args(["--partition", &options.partition.to_string()])
        .args(["--from", &options.start.to_string()])
        .args(["--isolation", options.isolation.as_str()])
        .args(["--timeout-ms", &options.timeout_ms.to_string()])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()?;
    if !output.status.success() {
        return Err(format!("starter_bridge.py consume failed: {}", output.status).into());
    }
    let mut out = Consumed::default();
    for line in String::from_utf8(output.stdout)?.lines() {
        let mut f = line.split(' ');
        match f.next() {
            Some("R") => {
                let mut record = Record {
                    offset: num(&mut f)?,
                    timestamp: num(&mut f)?,
                    timestamp_type: TimestampType::parse(word(&mut f)?)
                        .ok_or("bad timestamp type")?,
                    key: bytes(&mut f)?,
                    value: bytes(&mut f)?,
                    headers: Vec::new(),
                };
                for _ in 0..num::<usize>(&mut f)? {
                    record.headers.push(Header {
                        key: text(&mut f)?.ok_or("null header key")?,
                        value: bytes(&mut f)?,
                    });
                }
                out.records.push(record);
            }
            Some("E") => {
                out.error = Some(ConsumeError {
                    class: text(&mut f)?.ok_or("null error class")?,
                    message: text(&mut f)?,
                })
            }
            _ => return Err(format!("bad line {line:?}").into()),
        }
    }
    Ok(out)
}

type Fields<'a> = std::str::Split<'a, char>;

fn word<'a>(f: &mut Fields<'a>) -> Res<&'a str> {
    Ok(f.next().ok_or("line too short")?)
}

fn num<T: std::str::FromStr>(f: &mut Fields) -> Res<T>
where
    T::Err: Error + 'static,
{
    Ok(word(f)?.parse()?)
}

/// hex bytes; "~" is empty, "-" null
fn bytes(f: &mut Fields) -> Res<Option<Vec<u8>>> {
    match word(f)? {
        "-" => Ok(None),
        "~" => Ok(Some(Vec::new())),
        w => (0..w.len())
            .step_by(2)
            .map(|i| Ok(u8::from_str_radix(w.get(i..i + 2).ok_or("odd hex")?, 16)?))
            .collect::<Res<Vec<u8>>>()
            .map(Some),
    }
}

fn text(f: &mut Fields) -> Res<Option<String>> {
    match bytes(f)? {
        None => Ok(None),
        Some(b) => Ok(Some(String::from_utf8(b)?)),
    }
}
