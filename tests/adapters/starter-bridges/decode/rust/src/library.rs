//! Test bridge for the Rust starter (tests/test_init_adapter.py): replaces the starter's hook
//! with the kit's reference decoder, run as `$STARTER_BRIDGE_PYTHON $STARTER_BRIDGE_SCRIPT mode`
//! (tests/adapters/starter_bridge.py, whose docstring gives the B/R/C/E line format), so that
//! the starter's protocol code is what the test exercises.

use crate::{Batch, Control, DecodeError, Decoded, Header, Mode, Record};
use std::env;
use std::error::Error;
use std::io::Write;
use std::process::{Command, Stdio};
use std::thread;

pub const NAME: &str = "rust-starter-bridge";
pub const VERSION: &str = "";
pub const MAGICS: &[u8] = &[0, 1, 2];
pub const CODECS: &[&str] = &["none", "gzip", "snappy", "lz4", "zstd"];
pub const CHECKS_CRC: bool = true;
pub const ERROR_SEMANTICS: &str = "streaming";
pub const FILE_SEMANTICS: bool = true;
pub const ERROR_CLASSES: &str = "class";
pub const LISTS_FAILING_BATCH: bool = true;
pub const OMITS: &[&str] = &[];
pub const NOTES: &str = "";

type Res<T> = Result<T, Box<dyn Error>>;

pub fn decode(data: &[u8], mode: Mode) -> Res<Decoded> {
    let mut child = Command::new(env::var("STARTER_BRIDGE_PYTHON")?)
        .arg(env::var("STARTER_BRIDGE_SCRIPT")?)
        .arg(mode.as_str())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    // write from another thread so a large answer cannot block the input
    let output = thread::scope(|scope| {
        scope.spawn(move || stdin.write_all(data));
        child.wait_with_output()
    })?;
    if !output.status.success() {
        return Err(format!("starter_bridge.py failed: {}", output.status).into());
    }
    let mut decoded = Decoded::default();
    for line in String::from_utf8(output.stdout)?.lines() {
        let mut f = line.split(' ');
        match f.next() {
            Some("B") => decoded.batches.push(batch(&mut f)?),
            Some("R") => {
                let record = record(&mut f)?;
                last_batch(&mut decoded)?.records.push(record);
            }
            Some("C") => {
                let control = Control {
                    type_id: num(&mut f)?,
                    type_name: text(&mut f)?.ok_or("null control type")?,
                    coordinator_epoch: opt_num(&mut f)?,
                };
                let batch = last_batch(&mut decoded)?;
                batch.records.last_mut().ok_or("C before R")?.control = Some(control);
            }
            Some("E") => {
                decoded.error = Some(DecodeError {
                    kafka_exception: text(&mut f)?.ok_or("null exception")?,
                    message: text(&mut f)?,
                    batch_index: num(&mut f)?,
                    position: num(&mut f)?,
                })
            }
            _ => return Err(format!("bad line {line:?}").into()),
        }
    }
    Ok(decoded)
}

type Fields<'a> = std::str::Split<'a, char>;

fn last_batch(decoded: &mut Decoded) -> Res<&mut Batch> {
    Ok(decoded.batches.last_mut().ok_or("R before B")?)
}

fn word<'a>(f: &mut Fields<'a>) -> Res<&'a str> {
    Ok(f.next().ok_or("line too short")?)
}

fn num<T: std::str::FromStr>(f: &mut Fields) -> Res<T>
where
    T::Err: Error + 'static,
{
    Ok(word(f)?.parse()?)
}

fn opt_num<T: std::str::FromStr>(f: &mut Fields) -> Res<Option<T>>
where
    T::Err: Error + 'static,
{
    match word(f)? {
        "-" => Ok(None),
        w => Ok(Some(w.parse()?)),
    }
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
    Ok(bytes(f)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

fn batch(f: &mut Fields) -> Res<Batch> {
    let mut b = Batch {
        position: num(f)?,
        size_in_bytes: num(f)?,
        magic: num(f)?,
        crc: num(f)?,
        attributes: num(f)?,
        compression: word(f)?.to_string(),
        timestamp_type: word(f)?.to_string(),
        last_offset: num(f)?,
        max_timestamp: num(f)?,
        ..Batch::default()
    };
    if b.magic >= 2 {
        b.base_offset = num(f)?;
        b.last_offset_delta = num(f)?;
        b.partition_leader_epoch = num(f)?;
        b.base_timestamp = num(f)?;
        b.delete_horizon_ms = opt_num(f)?;
        b.is_transactional = word(f)? == "1";
        b.is_control = word(f)? == "1";
        b.producer_id = num(f)?;
        b.producer_epoch = num(f)?;
        b.base_sequence = num(f)?;
        b.last_sequence = num(f)?;
        b.records_count = num(f)?;
    }
    Ok(b)
}

fn record(f: &mut Fields) -> Res<Record> {
    let mut r = Record {
        offset: num(f)?,
        timestamp: num(f)?,
        key: bytes(f)?,
        value: bytes(f)?,
        ..Record::default()
    };
    for _ in 0..num::<usize>(f)? {
        r.headers.push(Header {
            key: text(f)?.ok_or("null header key")?,
            value: bytes(f)?,
        });
    }
    Ok(r)
}
