//! The plan the kit hands a producer adapter, what the hook returns, and the shape of the
//! capabilities it declares.
//!
//! [`read_plan`] turns the plan document (contract `kafka-conformance/produce-plan/1`,
//! docs/adapter-protocol.md of kafka-conformance, "Producer side") into the structures below;
//! `src/main.rs` writes [`Produced`] as the produce-result document. `sample-plan.json` is a
//! plan to try the adapter on by hand.

// Some of these are used by the hook only, hence `allow(dead_code)` while the hook is the
// unfinished stub.
#![allow(dead_code)]

use crate::json::Value;

pub const PLAN_FORMAT: &str = "kafka-conformance/produce-plan/1";

/// A record header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub key: String,
    /// `None` is a null value; `Some(vec![])` an empty one
    pub value: Option<Vec<u8>>,
}

/// One record to send, in plan order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRecord {
    /// `None` is a null key; `Some(vec![])` an empty one (they are never conflated)
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<Header>,
    /// milliseconds; `None`: let the library choose (its clock)
    pub timestamp: Option<i64>,
    /// `None`: the library's partitioner chooses
    pub partition: Option<i32>,
}

/// The producer's compression type (`compression.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

impl Codec {
    pub const ALL: [Codec; 5] = [
        Codec::None,
        Codec::Gzip,
        Codec::Snappy,
        Codec::Lz4,
        Codec::Zstd,
    ];

    /// Kafka's name: "none", "gzip", "snappy", "lz4", "zstd"
    pub fn as_str(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Gzip => "gzip",
            Codec::Snappy => "snappy",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
        }
    }
}

/// How the transaction ends after every record is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionEnd {
    Commit,
    Abort,
}

impl TransactionEnd {
    /// "commit" or "abort"
    pub fn as_str(self) -> &'static str {
        match self {
            TransactionEnd::Commit => "commit",
            TransactionEnd::Abort => "abort",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    /// the transactional.id
    pub id: String,
    pub end: TransactionEnd,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub codec: Codec,
    /// enable.idempotence
    pub idempotence: bool,
    /// -1 (all), 0 or 1
    pub acks: i32,
    pub linger_ms: i64,
    /// bytes
    pub batch_size: i32,
    /// bytes
    pub max_request_size: i32,
    /// `None`: no transaction
    pub transaction: Option<Transaction>,
    /// the budget for the whole plan (delivery and request timeouts, flush)
    pub timeout_ms: i64,
}

/// `encode` only: the header fields of the one batch to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchFields {
    pub magic: i8,
    pub base_offset: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub transactional: bool,
    pub partition_leader_epoch: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub scenario: String,
    /// created by the kit before the adapter runs
    pub topic: String,
    pub partitions: i32,
    pub settings: Settings,
    pub records: Vec<PlanRecord>,
    /// encode plans only
    pub batch: Option<BatchFields>,
    /// runs of `records` to send as one batch each (the library's batch call, or back to back
    /// for its linger to gather them); empty when the plan has none
    pub groups: Vec<Group>,
}

/// A run of plan records, `records[first..first + count]`, to send as one batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    pub first: usize,
    pub count: usize,
}

/// What the library reported for one plan record: the partition and offset it was written at
/// (`None`: not reported), and its error text (`None`: acknowledged).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivery {
    pub partition: Option<i32>,
    pub offset: Option<i64>,
    pub error: Option<String>,
}

/// One [`Delivery`] per plan record, in plan order, and a failure outside any record (the
/// producer could not start, the transaction could not commit), else `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Produced {
    pub records: Vec<Delivery>,
    pub error: Option<String>,
}

// ---- capabilities (the hook declares them: `PRODUCE`, `ENCODE`) ----

/// What the producer can do (the capability object `produce`).
pub struct ProduceCapabilities {
    /// the compression types it can send, of "none", "gzip", "snappy", "lz4", "zstd"
    pub codecs: &'static [&'static str],
    /// whether it has the idempotent producer (enable.idempotence)
    pub idempotence: bool,
    /// whether it has transactions (transactional.id, commit, abort)
    pub transactions: bool,
    /// whether records can carry headers
    pub headers: bool,
    /// the message formats it writes; must hold 2
    pub magics: &'static [u8],
    /// the name of its default partitioner for records without a partition, from
    /// `kafka-conformance partition --list` (e.g. "java", "librdkafka:consistent_random"),
    /// or a composition of its parts when no name fits (e.g. "murmur2|unsigned|mod")
    pub partitioner: &'static str,
    /// its real defaults
    pub defaults: Defaults,
    /// free text for the report
    pub notes: &'static str,
}

/// `Defaults::linger_ms` or `batch_size` of a library without such a setting (the
/// capabilities say "none"): `linger_ms: NO_SETTING as i64, batch_size: NO_SETTING`.
pub const NO_SETTING: i32 = -1;

/// The producer's real defaults (what it does when the plan does not say).
pub struct Defaults {
    pub idempotence: bool,
    /// -1 (all), 0 or 1
    pub acks: i8,
    pub linger_ms: i64,
    pub batch_size: i32,
}

/// What the batch builder can do (the capability object `encode`): the same fields as
/// [`ProduceCapabilities`] but `partitioner` and `defaults`.
pub struct EncodeCapabilities {
    pub codecs: &'static [&'static str],
    pub idempotence: bool,
    pub transactions: bool,
    pub headers: bool,
    pub magics: &'static [u8],
    pub notes: &'static str,
}

// ---- reading the plan ----

/// The plan document's text as a [`Plan`], or what is wrong with it (the first problem, with
/// its place: "records[2].headers[0].value: not base64").
pub fn read_plan(text: &str) -> Result<Plan, String> {
    let doc = crate::json::parse(text)?;
    let doc = Fields::of(&doc, "plan")?;
    let format = doc.get("format")?;
    if *format != Value::str(PLAN_FORMAT) {
        return Err(format!(
            "not a plan: format {}, expected {PLAN_FORMAT}",
            format.to_text()
        ));
    }
    let s = doc.object("settings")?;
    let codec = s.string("codec")?;
    let codec = Codec::ALL
        .into_iter()
        .find(|c| c.as_str() == codec)
        .ok_or_else(|| s.problem("codec", "one of none, gzip, snappy, lz4, zstd"))?;
    let transaction = match s.optional_object("transaction")? {
        None => None,
        Some(t) => Some(Transaction {
            id: t.string("id")?,
            end: match t.string("end")?.as_str() {
                "commit" => TransactionEnd::Commit,
                "abort" => TransactionEnd::Abort,
                _ => return Err(t.problem("end", "commit or abort")),
            },
        }),
    };
    let settings = Settings {
        codec,
        idempotence: s.boolean("idempotence")?,
        acks: s.int("acks")?,
        linger_ms: s.int("linger_ms")?,
        batch_size: s.int("batch_size")?,
        max_request_size: s.int("max_request_size")?,
        transaction,
        timeout_ms: s.int("timeout_ms")?,
    };
    let records = doc
        .objects("records")?
        .into_iter()
        .map(|r| {
            let headers = r.objects("headers")?.into_iter().map(|h| {
                Ok(Header {
                    key: h.string("key")?,
                    value: h.bytes("value")?,
                })
            });
            Ok(PlanRecord {
                key: r.bytes("key")?,
                value: r.bytes("value")?,
                headers: headers.collect::<Result<_, String>>()?,
                timestamp: r.nullable_int("timestamp")?,
                partition: r.nullable_int("partition")?,
            })
        })
        .collect::<Result<_, String>>()?;
    let batch = match doc.optional_object("batch")? {
        None => None,
        Some(b) => Some(BatchFields {
            magic: b.int("magic")?,
            base_offset: b.int("base_offset")?,
            producer_id: b.int("producer_id")?,
            producer_epoch: b.int("producer_epoch")?,
            base_sequence: b.int("base_sequence")?,
            transactional: b.boolean("transactional")?,
            partition_leader_epoch: b.int("partition_leader_epoch")?,
        }),
    };
    let groups = match doc.fields.iter().any(|(k, _)| k == "groups") {
        false => Vec::new(),
        true => doc
            .objects("groups")?
            .into_iter()
            .map(|g| {
                Ok(Group {
                    first: g.int("first")?,
                    count: g.int("count")?,
                })
            })
            .collect::<Result<_, String>>()?,
    };
    Ok(Plan {
        scenario: doc.string("scenario")?,
        topic: doc.string("topic")?,
        partitions: doc.int("partitions")?,
        settings,
        records,
        batch,
        groups,
    })
}

/// A JSON object of the plan and its place in it, for messages. Keys it does not know are
/// ignored (a later plan may add some).
struct Fields<'a> {
    path: String,
    fields: &'a [(String, Value)],
}

impl<'a> Fields<'a> {
    fn of(value: &'a Value, path: &str) -> Result<Fields<'a>, String> {
        match value {
            Value::Object(fields) => Ok(Fields {
                path: path.to_owned(),
                fields,
            }),
            _ => Err(format!("{path}: not an object")),
        }
    }

    fn problem(&self, key: &str, what: &str) -> String {
        format!("{}.{key}: {what}", self.path)
    }

    /// The value of a required key (null included).
    fn get(&self, key: &str) -> Result<&'a Value, String> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .ok_or_else(|| self.problem(key, "missing"))
    }

    fn string(&self, key: &str) -> Result<String, String> {
        match self.get(key)? {
            Value::Str(text) => Ok(text.clone()),
            _ => Err(self.problem(key, "not a string")),
        }
    }

    fn boolean(&self, key: &str) -> Result<bool, String> {
        match self.get(key)? {
            Value::Bool(value) => Ok(*value),
            _ => Err(self.problem(key, "not true or false")),
        }
    }

    /// An integer that fits `T` (`i8` ... `i64`).
    fn int<T: TryFrom<i64>>(&self, key: &str) -> Result<T, String> {
        self.nullable_int(key)?
            .ok_or_else(|| self.problem(key, "not an integer"))
    }

    /// An integer that fits `T`, or null.
    fn nullable_int<T: TryFrom<i64>>(&self, key: &str) -> Result<Option<T>, String> {
        match self.get(key)? {
            Value::Null => Ok(None),
            Value::Int(value) => T::try_from(*value)
                .map(Some)
                .map_err(|_| self.problem(key, &format!("{value} is out of range"))),
            _ => Err(self.problem(key, "not an integer")),
        }
    }

    /// Base64 (standard, with padding), or null.
    fn bytes(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        match self.get(key)? {
            Value::Null => Ok(None),
            Value::Str(text) => base64_decode(text)
                .map(Some)
                .map_err(|e| self.problem(key, &e)),
            _ => Err(self.problem(key, "not a base64 string or null")),
        }
    }

    fn object(&self, key: &str) -> Result<Fields<'a>, String> {
        Fields::of(self.get(key)?, &format!("{}.{key}", self.path))
    }

    /// An object, or null or absent (`None`).
    fn optional_object(&self, key: &str) -> Result<Option<Fields<'a>>, String> {
        match self.fields.iter().find(|(k, _)| k == key) {
            None | Some((_, Value::Null)) => Ok(None),
            Some(_) => self.object(key).map(Some),
        }
    }

    /// An array of objects.
    fn objects(&self, key: &str) -> Result<Vec<Fields<'a>>, String> {
        match self.get(key)? {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| Fields::of(item, &format!("{}.{key}[{i}]", self.path)))
                .collect(),
            _ => Err(self.problem(key, "not an array")),
        }
    }
}

/// Standard base64 (RFC 4648 §4) with padding: a length that is a multiple of 4, the 64
/// characters, and at most two `=` at the very end.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    fn sextet(c: u8) -> Result<u32, String> {
        Ok(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("not base64: {:?}", char::from(c))),
        }
        .into())
    }
    let data = text.as_bytes();
    let mut out = Vec::with_capacity(data.len() / 4 * 3);
    for (i, chunk) in data.chunks(4).enumerate() {
        if chunk.len() < 4 {
            return Err("not base64: its length is not a multiple of 4".to_string());
        }
        let padding = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && (i + 1) * 4 != data.len()) {
            return Err("not base64: misplaced '='".to_string());
        }
        let mut group = 0u32;
        for &c in &chunk[..4 - padding] {
            group = group << 6 | sextet(c)?;
        }
        group <<= 6 * padding;
        out.extend_from_slice(&group.to_be_bytes()[1..4 - padding]);
    }
    Ok(out)
}
