//! The structures the hook (`src/library.rs`) fills: what the library's consumer delivered.
//!
//! Plain data; `src/main.rs` reads the command line into [`Options`] and writes [`Consumed`] as
//! the consume document (docs/adapter-protocol.md of kafka-conformance, "The consumer side").

// Most of these are built by the hook only, hence `allow(dead_code)` while the hook is the
// unfinished stub.
#![allow(dead_code)]

use std::fmt;

/// What the kit asked for: `consume --bootstrap ... --topic ... --partition ...`.
#[derive(Debug, Clone)]
pub struct Options {
    /// "127.0.0.1:PORT": the kit's fake broker
    pub bootstrap: String,
    pub topic: String,
    pub partition: i32,
    /// where to start reading (the kit passes `--from earliest`)
    pub start: Start,
    /// the consumer's isolation.level
    pub isolation: Isolation,
    /// stop at this budget (milliseconds) and report [`ConsumeError::timeout`]
    pub timeout_ms: u64,
    /// the group id to use when the consumer subscribes (joins a group) instead of assigning
    /// the partition; the kit's check never passes it (`None`: use any id). Either way works:
    /// the fake broker is also the group coordinator, of a group of one
    pub group: Option<String>,
}

/// `--from`: the partition's earliest offset, or an offset to start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Earliest,
    Offset(i64),
}

impl Start {
    /// "earliest" or a non-negative decimal offset
    pub fn parse(text: &str) -> Option<Start> {
        match text {
            "earliest" => Some(Start::Earliest),
            _ => text
                .parse()
                .ok()
                .filter(|&o: &i64| o >= 0)
                .map(Start::Offset),
        }
    }
}

impl fmt::Display for Start {
    /// as on the command line: "earliest" or the offset
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Start::Earliest => f.write_str("earliest"),
            Start::Offset(offset) => write!(f, "{offset}"),
        }
    }
}

/// `--isolation`: Kafka's isolation.level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    ReadUncommitted,
    ReadCommitted,
}

impl Isolation {
    /// the config value: "read_uncommitted" or "read_committed"
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "read_uncommitted",
            Isolation::ReadCommitted => "read_committed",
        }
    }

    pub fn parse(text: &str) -> Option<Isolation> {
        match text {
            "read_uncommitted" => Some(Isolation::ReadUncommitted),
            "read_committed" => Some(Isolation::ReadCommitted),
            _ => None,
        }
    }
}

/// The timestamp types Kafka reports (`ConsumerRecord.timestampType()`), by Kafka's names.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampType {
    CreateTime,
    LogAppendTime,
    /// a magic 0 record (its timestamp is -1)
    NoTimestampType,
}

impl TimestampType {
    /// Kafka's name: "CreateTime", "LogAppendTime", "NoTimestampType"
    pub fn as_str(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
            TimestampType::NoTimestampType => "NoTimestampType",
        }
    }

    pub fn parse(text: &str) -> Option<TimestampType> {
        match text {
            "CreateTime" => Some(TimestampType::CreateTime),
            "LogAppendTime" => Some(TimestampType::LogAppendTime),
            "NoTimestampType" => Some(TimestampType::NoTimestampType),
            _ => None,
        }
    }
}

/// A record header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    pub key: String,
    /// `None` is a null value; `Some(vec![])` an empty one
    pub value: Option<Vec<u8>>,
}

/// One delivered record, as the library's consumer handed it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub offset: i64,
    /// -1 when the record has none, as Kafka reports it
    pub timestamp: i64,
    pub timestamp_type: TimestampType,
    /// `None` is a null key; `Some(vec![])` an empty one (they are never conflated)
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<Header>,
}

/// The error that stopped the consumer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsumeError {
    /// the library's error name (or Kafka's class name, e.g.
    /// "org.apache.kafka.common.KafkaException", when the capabilities declare `ERROR_CLASSES`
    /// other than "none")
    pub class: String,
    /// its text
    pub message: Option<String>,
}

impl ConsumeError {
    /// The consumer did not reach the end offset within `Options::timeout_ms`.
    pub fn timeout() -> ConsumeError {
        ConsumeError {
            class: "timeout".to_string(),
            message: None,
        }
    }
}

/// Every record delivered, in delivery order, and the error that stopped the consumer
/// (`None`: it reached the end of the partition).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Consumed {
    pub records: Vec<Record>,
    pub error: Option<ConsumeError>,
}

/// Record keys the library does not expose (the capability `omits`), of "offset", "timestamp",
/// "timestampType", "key", "value", "headers".
#[derive(Debug, Clone, Copy)]
pub enum Omits {
    /// the same keys for every message format: `Omits::All(&["timestampType"])`
    All(&'static [&'static str]),
    /// per magic of the record's batch ("0", "1", "2", or "*" for every magic):
    /// `Omits::PerMagic(&[("0", &["timestampType"]), ("1", &[])])`
    PerMagic(&'static [(&'static str, &'static [&'static str])]),
}
