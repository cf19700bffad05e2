//! The hook of this kafka-conformance producer adapter: the ONE file you edit.
//!
//! Declare what your Kafka client library's producer and batch builder do (the constants
//! below), then send a plan in `produce` and build a batch in `encode`. `src/main.rs` does the
//! rest (the protocol, reading the plan, the produce-result document); see its top comment for
//! how to build, run and check the adapter. `check-producer` starts a real Kafka broker,
//! creates the plan's topic, runs `kafka-produce-adapter produce --bootstrap HOST:PORT --plan
//! FILE`, records what crossed the wire and judges it with the broker's verdict and Kafka's
//! consumer (docs/producer-check.md). The rules (docs/adapter-protocol.md, "Producer side"):
//!
//! * Use the library's real producer with the plan's settings and the library's own defaults
//!   for everything else: what users run is what is judged.
//! * Send every record in plan order; wait until each is acknowledged or failed (flush); end
//!   the transaction if the plan has one; close the producer.
//! * Report per record what the library reported (partition, offset, error text). A record the
//!   library refused before sending keeps `partition`/`offset` `None` and its `error` set.
//! * Leave out of a capability object what the library cannot do (set the field to false or
//!   leave out the codec): those scenarios are then `unsupported`, not failures.
//! * Either side may be absent: set `PRODUCE = None` (no producer) or `ENCODE = None` (no batch
//!   builder exposed), and leave its function as it is.

#[allow(unused_imports)]
use crate::plan::{
    BatchFields, Codec, Defaults, Delivery, EncodeCapabilities, Group, Header, Plan, PlanRecord,
    ProduceCapabilities, Produced, Settings, Transaction, TransactionEnd, NO_SETTING,
};
use std::error::Error;

// ---- capabilities ----

/// The implementation's name in reports (e.g. "my-library-producer").
pub const NAME: &str = "my-producer";
/// The library's version, shown in reports.
pub const VERSION: &str = "";

/// The producer side (`produce`), or `None` if the library has no producer. Its fields:
///   codecs       the compression types it can send, of none, gzip, snappy, lz4, zstd
///   idempotence  whether it has the idempotent producer (enable.idempotence)
///   transactions whether it has transactions (transactional.id, commit, abort)
///   headers      whether records can carry headers
///   magics       the message formats it writes; must hold 2
///   partitioner  the name of its default partitioner for records without a partition, from
///                `kafka-conformance partition --list` (e.g. "java",
///                "librdkafka:consistent_random"), or a composition of its parts when no name
///                fits (e.g. "murmur2|unsigned|mod")
///   defaults     its real defaults: idempotence, acks (-1, 0, 1), linger_ms, batch_size
///                (`NO_SETTING` for a linger or batch size the library does not have: "none")
///   (a plan's groups, `plan.groups`, are runs of records to send as one batch: the kit
///   assumes the library's linger gathers records sent back to back)
///   notes        free text for the report
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

/// The encoder side (`encode`: the library's batch builder on its own), or `None`. The same
/// fields as `PRODUCE` but partitioner and defaults.
pub const ENCODE: Option<EncodeCapabilities> = Some(EncodeCapabilities {
    codecs: &["none", "gzip", "snappy", "lz4", "zstd"],
    idempotence: true,
    transactions: true,
    headers: true,
    magics: &[2],
    notes: "",
});

// ---- produce ----

/// Sends every record of `plan` to `bootstrap` with your library's producer and returns what
/// it reported: one [`Delivery`] per plan record, in plan order.
///
/// Return `Ok` also when records failed (their `error` set) or the transaction could not end
/// (`Produced::error`): that is a verdict. Return `Err` (or panic) only when the adapter itself
/// fails; the kit reports that as an `error`, never a pass.
#[allow(unused_variables)]
pub fn produce(bootstrap: &str, plan: &Plan) -> Result<Produced, Box<dyn Error>> {
    // Replace the `Err` below with your library's producer, for example with rust-rdkafka (in
    // Cargo.toml: rdkafka = "0.36"; its BaseProducer needs no async runtime; its default
    // partitioner is "librdkafka:consistent_random"), whose delivery reports land in a context:
    //
    // use rdkafka::config::ClientConfig;
    // use rdkafka::message::{Header as KafkaHeader, Message, OwnedHeaders};
    // use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
    // use rdkafka::ClientContext;
    // use std::sync::Mutex;
    // use std::time::Duration;
    //
    // struct Reports(Mutex<Vec<Delivery>>); // one per plan record
    // impl ClientContext for Reports {}
    // impl ProducerContext for Reports {
    //     type DeliveryOpaque = usize; // the plan record's index
    //     fn delivery(&self, result: &DeliveryResult<'_>, index: usize) {
    //         self.0.lock().unwrap()[index] = match result {
    //             Ok(m) => Delivery { partition: Some(m.partition()), offset: Some(m.offset()), error: None },
    //             Err((e, m)) => Delivery { partition: Some(m.partition()), offset: None, error: Some(e.to_string()) },
    //         };
    //     }
    // }
    //
    // let s = &plan.settings;
    // let mut config = ClientConfig::new();
    // config
    //     .set("bootstrap.servers", bootstrap)
    //     .set("compression.type", s.codec.as_str())
    //     .set("enable.idempotence", s.idempotence.to_string())
    //     .set("acks", s.acks.to_string())
    //     .set("linger.ms", s.linger_ms.to_string())
    //     .set("batch.size", s.batch_size.to_string())
    //     .set("message.max.bytes", s.max_request_size.to_string())
    //     .set("message.timeout.ms", s.timeout_ms.to_string());
    // if let Some(t) = &s.transaction {
    //     config.set("transactional.id", &t.id);
    // }
    // let unreported = Delivery { error: Some("no delivery report".into()), ..Delivery::default() };
    // let reports = Reports(Mutex::new(vec![unreported; plan.records.len()]));
    // let producer: BaseProducer<Reports> = config.create_with_context(reports)?;
    // let budget = Duration::from_millis(s.timeout_ms as u64);
    // if s.transaction.is_some() {
    //     producer.init_transactions(budget)?;
    //     producer.begin_transaction()?;
    // }
    // let mut refused = Vec::new(); // (index, error) of records refused before sending
    // for (index, r) in plan.records.iter().enumerate() {
    //     let mut headers = OwnedHeaders::new();
    //     for h in &r.headers {
    //         headers = headers.insert(KafkaHeader { key: &h.key, value: h.value.as_deref() });
    //     }
    //     let mut record: BaseRecord<[u8], [u8], usize> =
    //         BaseRecord::with_opaque_to(&plan.topic, index).headers(headers);
    //     if let Some(key) = &r.key { record = record.key(key.as_slice()); }
    //     if let Some(value) = &r.value { record = record.payload(value.as_slice()); }
    //     if let Some(partition) = r.partition { record = record.partition(partition); }
    //     if let Some(timestamp) = r.timestamp { record = record.timestamp(timestamp); }
    //     if let Err((e, _)) = producer.send(record) {
    //         refused.push((index, e.to_string()));
    //     }
    // }
    // let flushed = producer.flush(budget);
    // let mut out = Produced::default();
    // if let Some(t) = &s.transaction {
    //     let ended = match t.end {
    //         TransactionEnd::Commit => producer.commit_transaction(budget),
    //         TransactionEnd::Abort => producer.abort_transaction(budget),
    //     };
    //     out.error = ended.err().map(|e| e.to_string());
    // }
    // if let Err(e) = flushed {
    //     out.error.get_or_insert(e.to_string());
    // }
    // out.records = producer.context().0.lock().unwrap().clone();
    // for (index, error) in refused {
    //     out.records[index] = Delivery { error: Some(error), ..Delivery::default() };
    // }
    // Ok(out) // dropping the producer closes it
    Err("produce() is not implemented: send the plan with your library's producer in src/library.rs".into())
}

// ---- encode ----

/// The bytes of the ONE record batch your library's batch builder makes from the plan's
/// records, with `plan.settings.codec` and the header fields of `plan.batch` (base offset,
/// producer id and epoch, base sequence, transactional, partition leader epoch).
///
/// Replace the `Err` with the builder call; if the library refuses the plan, return `Err` (the
/// adapter exits non-zero with the reason on stderr). A library that builds batches only
/// inside its producer (rust-rdkafka: librdkafka's builder is not exposed) sets
/// `ENCODE = None` instead. With a made-up `kafka_lib`:
///
/// ```text
/// let b = plan.batch.as_ref().ok_or("not an encode plan: no \"batch\"")?;
/// let mut builder = kafka_lib::RecordBatchBuilder::new(b.magic, plan.settings.codec.as_str())?
///     .base_offset(b.base_offset)
///     .producer(b.producer_id, b.producer_epoch, b.base_sequence)
///     .transactional(b.transactional)
///     .partition_leader_epoch(b.partition_leader_epoch);
/// for r in &plan.records {
///     let headers: Vec<(&str, Option<&[u8]>)> =
///         r.headers.iter().map(|h| (h.key.as_str(), h.value.as_deref())).collect();
///     builder.append(r.timestamp, r.key.as_deref(), r.value.as_deref(), &headers)?;
/// }
/// Ok(builder.build()?.to_vec())
/// ```
#[allow(unused_variables)]
pub fn encode(plan: &Plan) -> Result<Vec<u8>, Box<dyn Error>> {
    Err("encode() is not implemented: build the batch with your library's builder in src/library.rs".into())
}
