//! The hook of this kafka-conformance consumer adapter: the ONE file you edit.
//!
//! Declare what your Kafka client library's consumer does (the constants below) and run it in
//! `consume`. `src/main.rs` does the rest (the protocol, the consume document); see its top
//! comment for how to build, run and check the adapter. The kit starts a fake broker on
//! 127.0.0.1 that serves one partition, then runs
//! `kafka-consume-adapter consume --bootstrap 127.0.0.1:PORT ...`; what your consumer delivers is
//! compared with what Kafka's own KafkaConsumer delivers from the same partition. The rules
//! (docs/adapter-protocol.md, "The consumer side"):
//!
//! * Run the library's real consumer with the library's own defaults (its CRC setting, its
//!   fetch sizes): what users run is what is judged.
//! * Assign the one partition, or subscribe to the topic: the fake broker is also the group
//!   coordinator and serves a group of one (the member that joins leads it and assigns itself
//!   the partition; commits are accepted, not stored), so a consumer that always joins a
//!   group works too (`options.group`: the group id, when given).
//! * Report only what the library delivered. A record field the library does not expose is
//!   left at any value and its key listed in `OMITS` (never filled with a guess).
//! * Stop when the position reaches the end of the partition (the high watermark; the last
//!   stable offset for read_committed), when the library reports an error (return it in
//!   `Consumed::error`), or at `options.timeout_ms` (`ConsumeError::timeout()`).
//! * A library that crashes or hangs gives no verdict: return `Err` (or let it panic; the
//!   adapter then exits non-zero), never dress a crash as a clean error.

#[allow(unused_imports)]
use crate::consumed::{
    ConsumeError, Consumed, Header, Isolation, Omits, Options, Record, Start, TimestampType,
};
use std::error::Error;

// ---- capabilities ----

/// The implementation's name in reports (e.g. "my-library-consumer").
pub const NAME: &str = "my-consumer";
/// The library's version, shown in reports.
pub const VERSION: &str = "";
/// Message formats (magics) the consumer reads; a scenario whose partition holds a batch of
/// another magic is `unsupported`.
pub const MAGICS: &[u8] = &[0, 1, 2];
/// Compression codecs the consumer reads, of "none", "gzip", "snappy", "lz4", "zstd"; a
/// scenario whose partition holds a batch of another codec is `unsupported`.
pub const CODECS: &[&str] = &["none", "gzip", "snappy", "lz4", "zstd"];
/// Whether the consumer verifies checksums with the library's defaults (librdkafka's
/// check.crcs=false: false); if false, a scenario whose only fault is a checksum error is
/// `unsupported`.
pub const CHECKS_CRC: bool = true;
/// What the consumer delivers from a batch in which an error happens:
/// "streaming": the records before the error, as Kafka's consumer does;
/// "eager": from a compressed batch, possibly fewer of them, down to none;
/// "atomic": from any batch, possibly fewer of them, down to none.
pub const ERROR_SEMANTICS: &str = "streaming";
/// How `ConsumeError::class` is compared with Kafka's consumer's exception class: "none" (any
/// error will do: the default, libraries name their errors differently), "family", "class",
/// "exact" (docs/adapter-protocol.md); anything but "none" means `class` holds Kafka's class
/// names.
pub const ERROR_CLASSES: &str = "none";
/// Record keys the library does not expose, of "offset", "timestamp", "timestampType", "key",
/// "value", "headers" (e.g. `Omits::All(&["timestampType"])` for a message type without a
/// timestamp type); not compared. `Omits::PerMagic` says it per magic of the record's batch.
pub const OMITS: Omits = Omits::All(&[]);
/// Free text for the report (e.g. "check.crcs is off by default in this library").
pub const NOTES: &str = "";

// ---- consume ----

/// Reads `options.partition` of `options.topic` from `options.bootstrap` with your library's
/// consumer, from `options.start` to the end offset, and returns what it delivered.
///
/// Return `Ok` also when the library reported an error: that is a verdict, put it in
/// `Consumed::error` (with the records delivered before it). Return `Err` (or panic) only when
/// the adapter itself fails; the kit reports that as an `error`, never a pass.
#[allow(unused_variables)]
pub fn consume(options: &Options) -> Result<Consumed, Box<dyn Error>> {
    // Replace the `Err` below with your library's consumer loop, for example with rust-rdkafka
    // (in Cargo.toml: rdkafka = "0.36"; its BaseConsumer needs no async runtime):
    //
    // use rdkafka::config::ClientConfig;
    // use rdkafka::consumer::{BaseConsumer, Consumer};
    // use rdkafka::error::KafkaError;
    // use rdkafka::message::{Headers, Message, Timestamp};
    // use rdkafka::{Offset, TopicPartitionList};
    // use std::time::{Duration, Instant};
    //
    // let consumer: BaseConsumer = ClientConfig::new()
    //     .set("bootstrap.servers", &options.bootstrap)
    //     .set("group.id", options.group.as_deref().unwrap_or("kafka-conformance"))
    //     .set("isolation.level", options.isolation.as_str())
    //     .set("enable.auto.commit", "false")
    //     .set("enable.partition.eof", "true") // say when the position reaches the end
    //     .create()?;
    // let start = match options.start {
    //     Start::Earliest => Offset::Beginning,
    //     Start::Offset(offset) => Offset::Offset(offset),
    // };
    // let mut assignment = TopicPartitionList::new();
    // assignment.add_partition_offset(&options.topic, options.partition, start)?;
    // consumer.assign(&assignment)?;
    // let deadline = Instant::now() + Duration::from_millis(options.timeout_ms);
    // let mut out = Consumed::default();
    // loop {
    //     if Instant::now() > deadline {
    //         out.error = Some(ConsumeError::timeout());
    //         break;
    //     }
    //     let message = match consumer.poll(Duration::from_millis(200)) {
    //         None => continue,
    //         Some(Err(KafkaError::PartitionEOF(_))) => break, // the end offset: done
    //         Some(Err(e)) => {
    //             out.error = Some(ConsumeError {
    //                 class: format!("{:?}", e.rdkafka_error_code()),
    //                 message: Some(e.to_string()),
    //             });
    //             break;
    //         }
    //         Some(Ok(message)) => message,
    //     };
    //     let (timestamp_type, timestamp) = match message.timestamp() {
    //         Timestamp::CreateTime(t) => (TimestampType::CreateTime, t),
    //         Timestamp::LogAppendTime(t) => (TimestampType::LogAppendTime, t),
    //         Timestamp::NotAvailable => (TimestampType::NoTimestampType, -1),
    //     };
    //     let headers = message.headers().map_or_else(Vec::new, |headers| {
    //         headers
    //             .iter()
    //             .map(|h| Header { key: h.key.to_string(), value: h.value.map(<[u8]>::to_vec) })
    //             .collect()
    //     });
    //     out.records.push(Record {
    //         offset: message.offset(),
    //         timestamp,
    //         timestamp_type,
    //         key: message.key().map(<[u8]>::to_vec), // None = null, empty = ""
    //         value: message.payload().map(<[u8]>::to_vec),
    //         headers,
    //     });
    // }
    // Ok(out)
    Err("consume() is not implemented: run your library's consumer in src/library.rs".into())
}
