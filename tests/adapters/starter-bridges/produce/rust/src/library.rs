//! Test bridge for the Rust producer starter (tests/test_starter_sides.py): a replacement of the
//! hook that writes the plan the starter read back as lines to Kafka's own producer and batch
//! builder (`$STARTER_BRIDGE_PYTHON $STARTER_BRIDGE_SCRIPT produce|encode`,
//! tests/adapters/starter_bridge.py, whose docstring gives the P/S/R/B and D/F/X line formats)
//! and fills the starter's structures from the answer, so that the starter's protocol side
//! (the plan it reads, the document it writes) is what the test exercises.

use crate::plan::{Defaults, Delivery, EncodeCapabilities, Plan, ProduceCapabilities, Produced};
use std::env;
use std::error::Error;
use std::io::Write;
use std::process::{Command, Stdio};
use std::thread;

pub const NAME: &str = "rust-produce-starter-bridge";
pub const VERSION: &str = "";
pub const PRODUCE: Option<ProduceCapabilities> = Some(ProduceCapabilities {
    codecs: &["none", "gzip", "snappy", "lz4", "zstd"],
    idempotence: true,
    transactions: true,
    headers: true,
    magics: &[2],
    partitioner: "java",
    defaults: Defaults {
        idempotence: true,
        acks: -1,
        linger_ms: 5,
        batch_size: 16384,
    },
    notes: "",
});
pub const ENCODE: Option<EncodeCapabilities> = Some(EncodeCapabilities {
    codecs: &["none", "gzip", "snappy", "lz4", "zstd"],
    idempotence: true,
    transactions: true,
    headers: true,
    magics: &[2],
    notes: "",
});

type Res<T> = Result<T, Box<dyn Error>>;

/// bytes as lowercase hex; "~" is empty, "-" null
fn hex(data: Option<&[u8]>) -> String {
    match data {
        None => "-".to_string(),
        Some([]) => "~".to_string(),
        Some(data) => data.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

fn hex_text(text: Option<&str>) -> String {
    hex(text.map(str::as_bytes))
}

fn or_dash<T: ToString>(value: Option<T>) -> String {
    value.map_or("-".to_string(), |v| v.to_string())
}

/// The plan as the bridge's lines.
fn lines(plan: &Plan) -> String {
    let s = &plan.settings;
    let txn = s.transaction.as_ref();
    let mut out = vec![
        format!(
            "P {} {} {}",
            hex_text(Some(&plan.scenario)),
            hex_text(Some(&plan.topic)),
            plan.partitions
        ),
        format!(
            "S {} {} {} {} {} {} {} {} {}",
            s.codec.as_str(),
            u8::from(s.idempotence),
            s.acks,
            s.linger_ms,
            s.batch_size,
            s.max_request_size,
            s.timeout_ms,
            hex_text(txn.map(|t| t.id.as_str())),
            txn.map_or("-", |t| t.end.as_str()),
        ),
    ];
    for r in &plan.records {
        let mut line = format!(
            "R {} {} {} {} {}",
            hex(r.key.as_deref()),
            hex(r.value.as_deref()),
            or_dash(r.timestamp),
            or_dash(r.partition),
            r.headers.len()
        );
        for h in &r.headers {
            line += &format!(" {} {}", hex_text(Some(&h.key)), hex(h.value.as_deref()));
        }
        out.push(line);
    }
    if let Some(b) = &plan.batch {
        out.push(format!(
            "B {} {} {} {} {} {} {}",
            b.magic,
            b.base_offset,
            b.producer_id,
            b.producer_epoch,
            b.base_sequence,
            u8::from(b.transactional),
            b.partition_leader_epoch
        ));
    }
    out.iter().map(|line| format!("{line}\n")).collect()
}

/// Runs starter_bridge.py with `args` and the plan's lines on stdin; its output lines, split.
fn bridge(args: &[&str], plan: &Plan) -> Res<Vec<Vec<String>>> {
    let mut child = Command::new(env::var("STARTER_BRIDGE_PYTHON")?)
        .arg(env::var("STARTER_BRIDGE_SCRIPT")?)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let input = lines(plan);
    // write from another thread so a large answer cannot block the input
    let output = thread::scope(|scope| {
        scope.spawn(move || stdin.write_all(input.as_bytes()));
        child.wait_with_output()
    })?;
    if !output.status.success() {
        return Err(format!("starter_bridge.py {} failed: {}", args[0], output.status).into());
    }
    Ok(String::from_utf8(output.stdout)?
        .lines()
        .map(|line| line.split(' ').map(str::to_string).collect())
        .collect())
}

/// hex bytes; "~" is empty, "-" null
fn bytes(field: &str) -> Res<Option<Vec<u8>>> {
    match field {
        "-" => Ok(None),
        "~" => Ok(Some(Vec::new())),
        w => (0..w.len())
            .step_by(2)
            .map(|i| Ok(u8::from_str_radix(w.get(i..i + 2).ok_or("odd hex")?, 16)?))
            .collect::<Res<Vec<u8>>>()
            .map(Some),
    }
}

fn text(field: &str) -> Res<Option<String>> {
    match bytes(field)? {
        None => Ok(None),
        Some(b) => Ok(Some(String::from_utf8(b)?)),
    }
}

fn opt_num<T: std::str::FromStr>(field: &str) -> Res<Option<T>>
where
    T::Err: Error + 'static,
{
    match field {
        "-" => Ok(None),
        w => Ok(Some(w.parse()?)),
    }
}

pub fn produce(bootstrap: &str, plan: &Plan) -> Res<Produced> {
    let mut out = Produced::default();
    for f in bridge(&["produce", bootstrap], plan)? {
        match f.as_slice() {
            [tag, partition, offset, error] if tag == "D" => out.records.push(Delivery {
                partition: opt_num(partition)?,
                offset: opt_num(offset)?,
                error: text(error)?,
            }),
            [tag, error] if tag == "F" => out.error = text(error)?,
            _ => return Err(format!("bad line {f:?}").into()),
        }
    }
    Ok(out)
}

pub fn encode(plan: &Plan) -> Res<Vec<u8>> {
    match bridge(&["encode"], plan)?.as_slice() {
        [f] if f.len() == 2 && f[0] == "X" => Ok(bytes(&f[1])?.unwrap_or_default()),
        other => Err(format!("bad answer {other:?}").into()),
    }
}
