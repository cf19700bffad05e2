/*
 * Consumed.java - the structures the hook (Library.java) fills: what the library's consumer
 * delivered, and the options the kit asked for (Java 17, JDK only).
 *
 * Plain data; Adapter.java writes them as the consume document (docs/adapter-protocol.md of
 * kafka-conformance, "The consumer side").
 */

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** Every record delivered, in delivery order, and the error that stopped the consumer. */
final class Consumed {
    /** The timestamp types Kafka reports ({@code ConsumerRecord.timestampType()}). */
    static final List<String> TIMESTAMP_TYPES = List.of("CreateTime", "LogAppendTime", "NoTimestampType");

    /** In delivery order. */
    final List<Record> records = new ArrayList<>();
    /** The error that stopped the consumer; null: it reached the end of the partition. */
    ConsumeError error;

    /**
     * What the kit asked for: {@code consume --bootstrap ... --topic ... --partition ...}.
     *
     * @param bootstrap "127.0.0.1:PORT": the kit's fake broker
     * @param start "earliest", or an offset to start from (the kit passes "earliest")
     * @param isolation "read_uncommitted" or "read_committed" (the consumer's isolation.level)
     * @param timeoutMs stop at this budget (milliseconds) and report {@code new ConsumeError("timeout", null)}
     * @param group the group id to use when the consumer subscribes (joins a group) instead
     *     of assigning the partition; the kit's check never passes it (null: use any id).
     *     Either way works: the fake broker is also the group coordinator, of a group of one
     */
    record Options(String bootstrap, String topic, int partition, String start, String isolation,
            int timeoutMs, String group) {}

    /** A record header; value null for a null header value. */
    record Header(String key, byte[] value) {
        Header {
            Objects.requireNonNull(key, "a header key is never null");
        }
    }

    /**
     * One delivered record, as the library's consumer handed it out. key and value: null for a
     * null field, an empty array for an empty one.
     *
     * @param timestamp -1 when the record has none, as Kafka reports it
     * @param timestampType one of {@link #TIMESTAMP_TYPES}
     */
    record Record(long offset, long timestamp, String timestampType, byte[] key, byte[] value,
            List<Header> headers) {
        Record {
            headers = List.copyOf(headers);
        }
    }

    /**
     * The error that stopped the consumer: {@code cls} is the library's error name (or Kafka's
     * class name, e.g. "org.apache.kafka.common.KafkaException", when Library.ERROR_CLASSES is
     * not "none"); {@code message} its text (may be null).
     */
    record ConsumeError(String cls, String message) {
        ConsumeError {
            Objects.requireNonNull(cls, "an error has a class");
        }
    }
}
