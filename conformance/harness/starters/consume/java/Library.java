/*
 * Library.java - THE file you edit: where your Kafka client library's consumer is run.
 *
 * Declare what your library's consumer does (the constants below) and run it in consume().
 * Adapter.java does the rest (the protocol, the consume document); see its top comment for
 * how to run and check the adapter. The kit starts a fake broker on 127.0.0.1 that serves one
 * partition, then runs `Adapter consume --bootstrap 127.0.0.1:PORT ...`; what your consumer
 * delivers is compared with what Kafka's own KafkaConsumer delivers from the same partition.
 * Rebuild after editing:  javac -d build Adapter.java Consumed.java Library.java
 *
 * Rules (docs/adapter-protocol.md, "The consumer side"):
 *  - Run the library's real consumer with the library's own defaults (its CRC setting, its
 *    fetch sizes): what users run is what is judged.
 *  - Assign the one partition, or subscribe to the topic: the fake broker is also the group
 *    coordinator and serves a group of one (the member that joins leads it and assigns itself
 *    the partition; commits are accepted, not stored), so a consumer that always joins a
 *    group works too (options.group(): the group id, when given).
 *  - Report only what the library delivered. A record field the library does not expose is
 *    left at any value and its key listed in OMITS (never filled with a guess).
 *  - Stop when the position reaches the end of the partition (the high watermark; the last
 *    stable offset for read_committed), when the library reports an error (return it in
 *    Consumed.error), or at options.timeoutMs() (new Consumed.ConsumeError("timeout", null)).
 *  - A library that crashes or hangs gives no verdict: let the exception escape (the adapter
 *    then exits non-zero), never dress a crash as a clean error.
 */

import java.util.List;
import java.util.Map;

final class Library {
    private Library() {}

    // -------------------------------------------------------------------------- capabilities

    /** The implementation's name in reports (e.g. "my-library-consumer"). */
    static final String NAME = "my-consumer";

    /** The library's version, shown in reports. */
    static final String VERSION = "";

    /**
     * Message formats (magics) the consumer reads, of 0, 1, 2; a scenario whose partition holds
     * a batch of another magic is unsupported.
     */
    static final List<Integer> MAGICS = List.of(0, 1, 2);

    /**
     * Compression codecs the consumer reads, of none, gzip, snappy, lz4, zstd; a scenario whose
     * partition holds a batch of another codec is unsupported.
     */
    static final List<String> CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");

    /**
     * Whether the consumer verifies checksums with the library's defaults (librdkafka's
     * check.crcs=false: false); if false, a scenario whose only fault is a checksum error is
     * unsupported.
     */
    static final boolean CHECKS_CRC = true;

    /**
     * What the consumer delivers from a batch in which an error happens:
     * "streaming": the records before the error, as Kafka's consumer does;
     * "eager": from a compressed batch, possibly fewer of them, down to none;
     * "atomic": from any batch, possibly fewer of them, down to none.
     */
    static final String ERROR_SEMANTICS = "streaming";

    /**
     * How ConsumeError.cls is compared with Kafka's consumer's exception class: "none" (any
     * error will do: the default, libraries name their errors differently), "family", "class",
     * "exact" (docs/adapter-protocol.md); anything but "none" means ConsumeError.cls holds
     * Kafka's class names (org.apache.kafka.common.KafkaException, ...).
     */
    static final String ERROR_CLASSES = "none";

    /**
     * Record keys the library does not expose, for every magic, of offset, timestamp,
     * timestampType, key, value, headers (e.g. List.of("timestampType") for a message type
     * without a timestamp type); not compared.
     */
    static final List<String> OMITS = List.of();

    /**
     * The same per magic of the record's batch, added to OMITS: e.g.
     * Map.of("0", List.of("timestampType")). Empty: OMITS applies to every magic.
     */
    static final Map<String, List<String>> OMITS_BY_MAGIC = Map.of();

    /** Free text for the report (e.g. "check.crcs is off by default in this library"). */
    static final String NOTES = "";

    // ------------------------------------------------------------------------------- consume

    /**
     * Reads options.partition() of options.topic() from options.bootstrap() with your library's
     * consumer, from options.start() to the end offset, and returns what it delivered.
     *
     * An error the library reports while consuming is a result (Consumed.error), not an
     * exception: an exception thrown here is reported as a crash of the adapter.
     */
    static Consumed consume(Consumed.Options options) throws Exception {
        throw new UnsupportedOperationException(
                "Library.consume is not implemented: run your library's consumer in Library.java");

        // Replace the throw with your library's consumer loop, for example (Apache Kafka's
        // kafka-clients; imports from org.apache.kafka.clients.consumer,
        // org.apache.kafka.common and org.apache.kafka.common.serialization):
        //
        // Properties props = new Properties();
        // props.put("bootstrap.servers", options.bootstrap());
        // props.put("isolation.level", options.isolation());
        // props.put("auto.offset.reset", "earliest");
        // props.put("enable.auto.commit", "false");
        // props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        // props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        // Consumed out = new Consumed();
        // TopicPartition tp = new TopicPartition(options.topic(), options.partition());
        // try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
        //     consumer.assign(List.of(tp));
        //     if (!options.start().equals("earliest")) {
        //         consumer.seek(tp, Long.parseLong(options.start()));
        //     }
        //     long end = consumer.endOffsets(List.of(tp)).get(tp);  // the LSO when read_committed
        //     long deadline = System.nanoTime() + options.timeoutMs() * 1_000_000L;
        //     try {
        //         while (consumer.position(tp) < end) {
        //             if (System.nanoTime() > deadline) {
        //                 out.error = new Consumed.ConsumeError("timeout", null);
        //                 break;
        //             }
        //             for (ConsumerRecord<byte[], byte[]> m : consumer.poll(Duration.ofMillis(200))) {
        //                 List<Consumed.Header> headers = new ArrayList<>();
        //                 for (org.apache.kafka.common.header.Header h : m.headers()) {
        //                     headers.add(new Consumed.Header(h.key(), h.value()));
        //                 }
        //                 out.records.add(new Consumed.Record(m.offset(), m.timestamp(),
        //                         m.timestampType().name, m.key(), m.value(), headers));
        //             }
        //         }
        //     } catch (KafkaException e) {
        //         out.error = new Consumed.ConsumeError(e.getClass().getName(), e.getMessage());
        //     }
        // }
        // return out;
    }
}
