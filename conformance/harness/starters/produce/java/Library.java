/*
 * Library.java - THE file you edit: where your Kafka client library's producer and batch
 * builder are called.
 *
 * Declare what your library's producer and batch builder do (the constants below), then send
 * a plan in produce() and build a batch in encode(). Adapter.java does the rest (the protocol,
 * reading the plan, the produce-result document); see its top comment for how to run and
 * check the adapter. check-producer starts a real Kafka broker, creates the plan's topic, runs
 * `Adapter produce --bootstrap HOST:PORT --plan FILE`, records what crossed the wire and
 * judges it with the broker's verdict and Kafka's consumer (docs/producer-check.md).
 * Rebuild after editing:  javac -d build Adapter.java Plan.java Library.java
 *
 * Rules (docs/adapter-protocol.md, "Producer side"):
 *  - Use the library's real producer with the plan's settings and the library's own defaults
 *    for everything else: what users run is what is judged.
 *  - Send every record in plan order; wait until each is acknowledged or failed (flush); end
 *    the transaction if the plan has one; close the producer.
 *  - Report per record what the library reported (partition, offset, error text). A record
 *    the library refused before sending has partition and offset null and its error set
 *    (Plan.Delivery.failed).
 *  - Leave out of a capability what the library cannot do (false, or leave out the codec):
 *    those scenarios are then unsupported, not failures.
 *  - Either side may be absent: set PRODUCE = null (no producer) or ENCODE = null (no batch
 *    builder exposed), and leave its method as it is.
 */

import java.util.List;

final class Library {
    private Library() {}

    // -------------------------------------------------------------------------- capabilities

    /** The implementation's name in reports (e.g. "my-library-producer"). */
    static final String NAME = "my-producer";

    /** The library's version, shown in reports. */
    static final String VERSION = "";

    /** The producer side (produce), or null if the library has no producer. */
    static final Adapter.Side PRODUCE = new Adapter.Side(
            // codecs: the compression types it can send, of none, gzip, snappy, lz4, zstd
            List.of("none", "gzip", "snappy", "lz4", "zstd"),
            // idempotence: whether it has the idempotent producer (enable.idempotence)
            true,
            // transactions: whether it has transactions (transactional.id, commit, abort)
            true,
            // headers: whether records can carry headers
            true,
            // magics: the message formats it writes; must hold 2
            List.of(2),
            // partitioner: the name of its default partitioner for records without a
            // partition, from `kafka-conformance partition --list` (e.g. "java",
            // "librdkafka:consistent_random"), or a composition of its parts when no name
            // fits (e.g. "murmur2|unsigned|mod")
            "java",
            // defaults: its real defaults (idempotence, acks -1|0|1, linger.ms, batch.size);
            // Adapter.Defaults.NONE for a linger or batch size the library does not have
            new Adapter.Defaults(true, -1, 5, 16384),
            // notes: free text for the report
            "",
            // batching: how the records of a plan group (plan.groups()) go in one batch:
            // "call" (a batch call), "linger" (sent back to back, a linger gathers them),
            // "none" (it cannot: those scenarios are unsupported)
            "linger");

    /**
     * The encoder side (encode: the library's batch builder on its own), or null. The same
     * fields as PRODUCE but partitioner and defaults (null).
     */
    static final Adapter.Side ENCODE = new Adapter.Side(
            List.of("none", "gzip", "snappy", "lz4", "zstd"), // codecs
            true,       // idempotence
            true,       // transactions
            true,       // headers
            List.of(2), // magics
            null,       // partitioner: produce side only
            null,       // defaults: produce side only
            "");        // notes

    // ------------------------------------------------------------------------------- produce

    /**
     * Sends every record of {@code plan} to {@code bootstrap} with your library's producer and
     * returns what it reported: one Plan.Delivery per plan record, in plan order (and
     * Produced.error for a failure outside any record). A record that failed is a result, not
     * an exception: an exception thrown here is reported as a crash of the adapter.
     */
    static Plan.Produced produce(String bootstrap, Plan plan) throws Exception {
        throw new UnsupportedOperationException(
                "Library.produce is not implemented: send the plan with your library's producer");

        // Replace the throw with your library's producer, for example (Apache Kafka's
        // kafka-clients; imports from org.apache.kafka.clients.producer and
        // org.apache.kafka.common.serialization):
        //
        // Plan.Settings s = plan.settings();
        // Properties props = new Properties();
        // props.put("bootstrap.servers", bootstrap);
        // props.put("key.serializer", ByteArraySerializer.class.getName());
        // props.put("value.serializer", ByteArraySerializer.class.getName());
        // props.put("compression.type", s.codec());
        // props.put("enable.idempotence", Boolean.toString(s.idempotence()));
        // props.put("acks", s.acks() == -1 ? "all" : Integer.toString(s.acks()));
        // props.put("linger.ms", Integer.toString(s.lingerMs()));
        // props.put("batch.size", Integer.toString(s.batchSize()));
        // props.put("max.request.size", Integer.toString(s.maxRequestSize()));
        // props.put("delivery.timeout.ms", Integer.toString(s.timeoutMs()));
        // props.put("request.timeout.ms", Integer.toString(s.timeoutMs() - s.lingerMs()));
        // props.put("max.block.ms", Integer.toString(s.timeoutMs()));
        // if (s.transaction() != null) {
        //     props.put("transactional.id", s.transaction().id());
        // }
        // Plan.Produced out = new Plan.Produced();
        // try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
        //     if (s.transaction() != null) {
        //         producer.initTransactions();
        //         producer.beginTransaction();
        //     }
        //     List<Object> sent = new ArrayList<>();  // a Future<RecordMetadata>, or the refusal
        //     for (Plan.PlanRecord r : plan.records()) {
        //         List<Header> headers = new ArrayList<>();
        //         for (Plan.Header h : r.headers()) {
        //             headers.add(new RecordHeader(h.key(), h.value()));
        //         }
        //         try {
        //             sent.add(producer.send(new ProducerRecord<>(plan.topic(), r.partition(),
        //                     r.timestamp(), r.key(), r.value(), headers)));
        //         } catch (RuntimeException e) {        // refused before sending
        //             sent.add(e);
        //         }
        //     }
        //     producer.flush();
        //     for (Object f : sent) {
        //         if (f instanceof Exception e) {
        //             out.records.add(Plan.Delivery.failed(e.toString()));
        //             continue;
        //         }
        //         try {
        //             RecordMetadata m = ((Future<RecordMetadata>) f).get();
        //             out.records.add(Plan.Delivery.acknowledged(m.partition(), m.offset()));
        //         } catch (ExecutionException e) {
        //             out.records.add(Plan.Delivery.failed(e.getCause().toString()));
        //         }
        //     }
        //     if (s.transaction() != null) {
        //         try {
        //             if (s.transaction().end().equals("commit")) {
        //                 producer.commitTransaction();
        //             } else {
        //                 producer.abortTransaction();
        //             }
        //         } catch (KafkaException e) {
        //             out.error = s.transaction().end() + ": " + e;
        //         }
        //     }
        // }
        // return out;
    }

    // -------------------------------------------------------------------------------- encode

    /**
     * The bytes of the ONE record batch your library's batch builder makes from the plan's
     * records, with plan.settings().codec() and the header fields of plan.batch() (base offset,
     * producer id and epoch, base sequence, transactional, partition leader epoch).
     *
     * Replace the throw with the builder call; if the library refuses the plan, throw (the
     * adapter exits non-zero with the reason on stderr). For example (kafka-clients'
     * MemoryRecords.builder, with a ByteBuffer, the plan's Compression, TimestampType.CREATE_TIME
     * and plan.batch()'s fields; builder.append(timestamp, key, value, headers) per record;
     * then the bytes of builder.build().buffer()).
     */
    static byte[] encode(Plan plan) throws Exception {
        throw new UnsupportedOperationException(
                "Library.encode is not implemented: build the batch with your library's builder");
    }
}
