package org.kafkaconformance.oracle;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The consumer side of the adapter protocol for Kafka's own {@code KafkaConsumer}
 * (docs/adapter-protocol.md, "consume"): assign one partition, seek, poll until the position
 * reaches the end offset of the isolation level (or an exception, or the deadline), and print
 * one "kafka-conformance/consume/1" document.
 *
 * <pre>
 * oracle consume --bootstrap HOST:PORT --topic T --partition P --from OFFSET|earliest
 *                [--isolation read_uncommitted|read_committed] [--timeout-ms N] [--group G]
 * </pre>
 *
 * The consumer runs with its defaults (check.crcs=true, fetch sizes), no group, no commits.
 * With --group it is a member of group G instead: it subscribes to the topic, waits for the
 * partition to be assigned, polls 300 ms more at the end (it heartbeats every 100 ms, so that
 * even a short run sends some), commits its position and leaves the group on close.
 * After an exception it is polled again, and "afterError" says what it did then.
 */
final class Consumer {
    private Consumer() {
    }

    static final String USAGE =
            "       oracle consume --bootstrap HOST:PORT --topic T --partition P --from OFFSET|earliest\n"
          + "                      [--isolation read_uncommitted|read_committed] [--timeout-ms N]\n"
          + "                      [--group G]\n";

    static int command(String[] args, OutputStream stdout) throws IOException, Oracle.UsageException {
        String bootstrap = null, topic = null, from = null, isolation = "read_uncommitted";
        String group = null;
        int partition = -1;
        long timeoutMs = 30_000;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length)
                throw new Oracle.UsageException(a + " needs a value");
            String v = args[++i];
            switch (a) {
                case "--bootstrap": bootstrap = v; break;
                case "--topic": topic = v; break;
                case "--partition": partition = Integer.parseInt(v); break;
                case "--from": from = v; break;
                case "--isolation": isolation = v; break;
                case "--timeout-ms": timeoutMs = Long.parseLong(v); break;
                case "--group": group = v; break;
                default: throw new Oracle.UsageException("unknown option: " + a);
            }
        }
        if (bootstrap == null || topic == null || partition < 0 || from == null)
            throw new Oracle.UsageException("consume needs --bootstrap, --topic, --partition and --from");
        if (!isolation.equals("read_uncommitted") && !isolation.equals("read_committed"))
            throw new Oracle.UsageException("--isolation is read_uncommitted or read_committed");

        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "kafka-conformance-java");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        if (group != null) {
            props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "100");
        }

        JsonWriter w = new JsonWriter();
        w.beginObject().name("format").value("kafka-conformance/consume/1");
        w.name("records").beginArray();
        String errorClass = null, errorMessage = null, afterError = null;
        long deadline = System.currentTimeMillis() + timeoutMs;
        boolean reachedEnd = false;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            TopicPartition tp = new TopicPartition(topic, partition);
            if (group == null)
                consumer.assign(Collections.singletonList(tp));
            else
                joinGroup(consumer, tp, deadline, w);
            if (from.equals("earliest")) {
                if (group == null)  // a member starts there through auto.offset.reset
                    consumer.seekToBeginning(Collections.singletonList(tp));
            } else
                consumer.seek(tp, Long.parseLong(from));
            Map<TopicPartition, Long> ends = consumer.endOffsets(Collections.singletonList(tp),
                    Duration.ofMillis(Math.max(1, deadline - System.currentTimeMillis())));
            long end = ends.get(tp);
            while (System.currentTimeMillis() < deadline) {
                if (consumer.position(tp) >= end) {
                    reachedEnd = true;
                    break;
                }
                ConsumerRecords<byte[], byte[]> polled;
                try {
                    polled = consumer.poll(Duration.ofMillis(200));
                } catch (RuntimeException e) {
                    errorClass = e.getClass().getName();
                    errorMessage = e.getMessage();
                    afterError = nextPolls(consumer, tp);
                    break;
                }
                List<ConsumerRecord<byte[], byte[]>> records = polled.records(tp);
                for (ConsumerRecord<byte[], byte[]> r : records)
                    record(w, r);
            }
            if (group != null && reachedEnd) {
                // a member stays a little longer (heartbeats every 100 ms), commits, and leaves
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(300)).records(tp))
                    record(w, r);
                consumer.commitSync(Duration.ofMillis(Math.max(1, deadline - System.currentTimeMillis())));
            }
        } catch (RuntimeException e) {
            errorClass = e.getClass().getName();
            errorMessage = e.getMessage();
        }
        w.endArray();
        w.name("error");
        if (errorClass != null) {
            w.beginObject().name("class").value(errorClass).name("message");
            if (errorMessage == null)
                w.raw("null");
            else
                w.value(errorMessage);
            w.endObject();
        } else if (!reachedEnd) {
            w.beginObject().name("class").value("timeout").name("message")
                    .value("the position did not reach the end offset in " + timeoutMs + " ms").endObject();
        } else {
            w.raw("null");
        }
        if (afterError != null)
            w.name("afterError").value(afterError);
        w.endObject();
        stdout.write((w.toString() + "\n").getBytes(StandardCharsets.UTF_8));
        stdout.flush();
        return 0;
    }

    /** Subscribe and poll until {@code tp} is assigned (what those polls deliver is written). */
    private static void joinGroup(KafkaConsumer<byte[], byte[]> consumer, TopicPartition tp, long deadline,
                                  JsonWriter w) {
        consumer.subscribe(Collections.singletonList(tp.topic()));
        while (!consumer.assignment().contains(tp)) {
            if (System.currentTimeMillis() >= deadline)
                throw new org.apache.kafka.common.errors.TimeoutException("not assigned " + tp + " in time");
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(50)).records(tp))
                record(w, r);
        }
    }

    /**
     * What the consumer does when polled again after raising: "raises again" (the same
     * exception, the position unchanged), "delivers" (records after the bad batch) or
     * "delivers nothing" (three polls of 200 ms). Informational: not compared.
     */
    private static String nextPolls(KafkaConsumer<byte[], byte[]> consumer, TopicPartition tp) {
        for (int i = 0; i < 3; i++) {
            try {
                if (!consumer.poll(Duration.ofMillis(200)).records(tp).isEmpty())
                    return "delivers";
            } catch (RuntimeException e) {
                return "raises again";
            }
        }
        return "delivers nothing";
    }

    private static void record(JsonWriter w, ConsumerRecord<byte[], byte[]> r) {
        w.beginObject();
        w.name("offset").value(Long.toString(r.offset()));
        w.name("timestamp").value(Long.toString(r.timestamp()));
        w.name("timestampType").value(timestampType(r.timestampType().name));
        w.name("key");
        if (r.key() == null) w.raw("null"); else w.base64(r.key());
        w.name("value");
        if (r.value() == null) w.raw("null"); else w.base64(r.value());
        w.name("headers").beginArray();
        for (Header h : r.headers()) {
            w.beginObject().name("key").value(h.key()).name("value");
            if (h.value() == null) w.raw("null"); else w.base64(h.value());
            w.endObject();
        }
        w.endArray();
        w.endObject();
    }

    /** "CreateTime" / "LogAppendTime" / "NoTimestampType", as the decode documents name them. */
    private static String timestampType(String name) {
        switch (name.toLowerCase(Locale.ROOT)) {
            case "createtime": return "CreateTime";
            case "logappendtime": return "LogAppendTime";
            default: return "NoTimestampType";
        }
    }
}
