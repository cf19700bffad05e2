// The reference producer adapter: Apache Kafka's own KafkaProducer (`produce`) and
// MemoryRecordsBuilder (`encode`) from kafka-clients, speaking the producer side of
// docs/adapter-protocol.md ("Producer side: `produce` and `encode`").
//
//   ProducerAdapter capabilities
//   ProducerAdapter produce --bootstrap HOST:PORT --plan FILE
//   ProducerAdapter encode --plan FILE
//
// stdout carries only the JSON document (capabilities, produce) or the batch bytes (encode);
// diagnostics and the client's own logging go to stderr.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;

public final class ProducerAdapter {
    private static final String RESULT_FORMAT = "kafka-conformance/produce-result/1";
    private static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};
    /** Slack beyond settings.timeout_ms before the watchdog reports and exits. */
    private static final long GRACE_MS = 5_000;
    /** Upper bound of producer.close(). */
    private static final long CLOSE_MS = 5_000;

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The real stdout; System.out is pointed at stderr so nothing else can reach stdout. */
    private static final PrintStream STDOUT = System.out;

    private ProducerAdapter() {}

    public static void main(String[] args) {
        System.setOut(System.err);
        int code;
        try {
            code = run(args);
        } catch (Throwable t) {
            System.err.println("java-producer adapter: " + t);
            t.printStackTrace(System.err);
            code = 2;
        }
        STDOUT.flush();
        System.exit(code);
    }

    private static int run(String[] args) throws Exception {
        if (args.length == 0) return usage("no command");
        String command = args[0];
        String bootstrap = null;
        String plan = null;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if ((a.equals("--bootstrap") || a.equals("--plan")) && i + 1 < args.length) {
                if (a.equals("--bootstrap")) bootstrap = args[++i];
                else plan = args[++i];
            } else {
                return usage("unexpected argument " + a);
            }
        }
        switch (command) {
            case "capabilities":
                emit(capabilities());
                return 0;
            case "produce":
                if (bootstrap == null || plan == null) return usage("produce needs --bootstrap and --plan");
                return produce(bootstrap, JSON.readTree(new File(plan)));
            case "encode":
                if (plan == null) return usage("encode needs --plan");
                return encode(JSON.readTree(new File(plan)));
            default:
                return usage("unknown command " + command);
        }
    }

    private static int usage(String why) {
        System.err.println("java-producer adapter: " + why);
        System.err.println("usage: capabilities | produce --bootstrap HOST:PORT --plan FILE | encode --plan FILE");
        return 2;
    }

    private static synchronized void emit(JsonNode doc) throws IOException {
        STDOUT.write(JSON.writeValueAsBytes(doc));
        STDOUT.write('\n');
        STDOUT.flush();
    }

    // ---------------------------------------------------------------------------------------
    // capabilities

    private static ObjectNode capabilities() {
        Map<String, Object> d = ProducerConfig.configDef().defaultValues();
        ObjectNode defaults = JSON.createObjectNode();
        defaults.put("idempotence", (Boolean) d.get(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG));
        String acks = String.valueOf(d.get(ProducerConfig.ACKS_CONFIG));
        defaults.put("acks", acks.equals("all") ? -1 : Integer.parseInt(acks));
        defaults.put("linger_ms", ((Number) d.get(ProducerConfig.LINGER_MS_CONFIG)).longValue());
        defaults.put("batch_size", ((Number) d.get(ProducerConfig.BATCH_SIZE_CONFIG)).intValue());

        ObjectNode produce = side(new int[] {2});
        produce.put("partitioner", "java");
        // a plan group: its records sent back to back, gathered by linger.ms into one batch
        produce.put("batching", "linger");
        produce.set("defaults", defaults);
        produce.put("notes",
            "KafkaProducer<byte[], byte[]> (ByteArraySerializer), default partitioner (murmur2 for keys, "
            + "sticky for null keys). Always set explicitly: enable.idempotence, acks, compression.type, "
            + "linger.ms, batch.size, max.request.size; delivery.timeout.ms = max.block.ms = timeout_ms, "
            + "request.timeout.ms = min(30000, timeout_ms - linger_ms). A transaction is "
            + "initTransactions/beginTransaction, sends, flush, commitTransaction or abortTransaction. "
            + "Per record: the callback's RecordMetadata partition and offset (acks=0: offset -1, as Java "
            + "reports it); on an error the exception as class: message, partition and offset null; "
            + "ProducerRecord refuses a negative timestamp (IllegalArgumentException) before sending.");

        ObjectNode encode = side(new int[] {0, 1, 2});
        encode.put("notes",
            "MemoryRecords.builder (MemoryRecordsBuilder) with TimestampType.CREATE_TIME (as the producer's "
            + "RecordAccumulator), logAppendTime NO_TIMESTAMP, the plan's batch fields, default compression "
            + "levels; records appended in order with append(timestamp, key, value, headers). A null "
            + "timestamp is written as RecordBatch.NO_TIMESTAMP (-1): the builder has no clock; other "
            + "negative timestamps are refused by the builder, as are headers and zstd with magic 0/1.");

        ObjectNode caps = JSON.createObjectNode();
        caps.put("name", "java");
        caps.put("version", AppInfoParser.getVersion());
        caps.set("produce", produce);
        caps.set("encode", encode);
        return caps;
    }

    private static ObjectNode side(int[] magics) {
        ObjectNode s = JSON.createObjectNode();
        ArrayNode codecs = s.putArray("codecs");
        for (String c : CODECS) codecs.add(c);
        s.put("idempotence", true);
        s.put("transactions", true);
        s.put("headers", true);
        ArrayNode m = s.putArray("magics");
        for (int v : magics) m.add(v);
        return s;
    }

    // ---------------------------------------------------------------------------------------
    // plan helpers

    private static byte[] b64(JsonNode node) {
        if (node == null || node.isNull()) return null;
        return Base64.getDecoder().decode(node.asText());
    }

    private static boolean has(JsonNode obj, String key) {
        return obj != null && obj.has(key) && !obj.get(key).isNull();
    }

    private static Header[] headers(JsonNode record) {
        List<Header> out = new ArrayList<>();
        for (JsonNode h : record.path("headers")) {
            out.add(new RecordHeader(h.get("key").asText(), b64(h.get("value"))));
        }
        return out.toArray(new Header[0]);
    }

    private static String describe(Throwable t) {
        while ((t instanceof ExecutionException) && t.getCause() != null) t = t.getCause();
        return t.toString();
    }

    // ---------------------------------------------------------------------------------------
    // produce

    /** What Java reported for one record (guarded by the Results instance). */
    private static final class Results {
        final Integer[] partition;
        final Long[] offset;
        final String[] error;
        final boolean[] done;
        String fatal;
        boolean emitted;

        Results(int n) {
            partition = new Integer[n];
            offset = new Long[n];
            error = new String[n];
            done = new boolean[n];
        }

        synchronized void success(int i, RecordMetadata m) {
            if (done[i]) return;
            done[i] = true;
            partition[i] = m.partition();
            offset[i] = m.offset();
        }

        /** An exception: no position (Java's callback then gets only a placeholder metadata). */
        synchronized void failure(int i, Throwable e) {
            if (done[i]) return;
            done[i] = true;
            error[i] = describe(e);
        }

        synchronized void setFatal(String why) {
            if (fatal == null) fatal = why;
        }

        synchronized boolean isDone(int i) {
            return done[i];
        }

        /** Prints the document once (main thread or watchdog, whichever is first). */
        synchronized boolean emitOnce(String missing) throws IOException {
            if (emitted) return false;
            emitted = true;
            ObjectNode doc = JSON.createObjectNode();
            doc.put("format", RESULT_FORMAT);
            ArrayNode records = doc.putArray("records");
            for (int i = 0; i < done.length; i++) {
                ObjectNode r = records.addObject();
                if (partition[i] == null) r.putNull("partition");
                else r.put("partition", partition[i]);
                if (offset[i] == null) r.putNull("offset");
                else r.put("offset", offset[i]);
                String e = done[i] ? error[i] : missing;
                if (e == null) r.putNull("error");
                else r.put("error", e);
            }
            if (fatal == null) doc.putNull("error");
            else doc.put("error", fatal);
            emit(doc);
            return true;
        }
    }

    private static int produce(String bootstrap, JsonNode plan) throws Exception {
        final long started = System.nanoTime();
        JsonNode settings = plan.path("settings");
        JsonNode records = plan.path("records");
        String topic = plan.path("topic").asText();
        int n = records.size();
        long timeoutMs = has(settings, "timeout_ms") ? settings.get("timeout_ms").asLong() : 30_000;
        final long deadline = started + TimeUnit.MILLISECONDS.toNanos(timeoutMs + GRACE_MS);
        final Results results = new Results(n);

        Thread watchdog = new Thread(() -> {
            try {
                long left;
                while ((left = deadline - System.nanoTime()) > 0) {
                    TimeUnit.NANOSECONDS.sleep(left);
                }
                results.setFatal("adapter deadline: KafkaProducer did not finish within timeout_ms + "
                    + GRACE_MS + " ms");
                if (results.emitOnce("no result from KafkaProducer within timeout_ms + " + GRACE_MS + " ms")) {
                    STDOUT.flush();
                    Runtime.getRuntime().halt(0);
                }
            } catch (InterruptedException | IOException ignored) {
                // the main thread finished first
            }
        }, "adapter-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();

        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        if (has(settings, "codec")) props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, settings.get("codec").asText());
        // explicit either way: 3.x turns idempotence on by default
        if (has(settings, "idempotence")) {
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, String.valueOf(settings.get("idempotence").asBoolean()));
        }
        if (has(settings, "acks")) props.put(ProducerConfig.ACKS_CONFIG, String.valueOf(settings.get("acks").asInt()));
        long lingerMs = 0;
        if (has(settings, "linger_ms")) {
            lingerMs = settings.get("linger_ms").asLong();
            props.put(ProducerConfig.LINGER_MS_CONFIG, String.valueOf(lingerMs));
        }
        if (has(settings, "batch_size")) props.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(settings.get("batch_size").asInt()));
        if (has(settings, "max_request_size")) {
            props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(settings.get("max_request_size").asInt()));
        }
        // the budget: delivery.timeout.ms >= linger.ms + request.timeout.ms must hold
        long requestTimeout = Math.max(1, Math.min(30_000, timeoutMs - lingerMs));
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, String.valueOf(requestTimeout));
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(Math.max(timeoutMs, lingerMs + requestTimeout)));
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(timeoutMs));
        JsonNode txn = settings.get("transaction");
        boolean transactional = txn != null && !txn.isNull();
        if (transactional) props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txn.get("id").asText());

        KafkaProducer<byte[], byte[]> producer;
        try {
            producer = new KafkaProducer<>(props);
        } catch (Throwable t) {
            results.setFatal("KafkaProducer could not start: " + describe(t));
            results.emitOnce("not sent: the producer could not start");
            return 0;
        }
        String notSent = null;
        try {
            if (transactional) {
                try {
                    producer.initTransactions();
                    producer.beginTransaction();
                } catch (Throwable t) {
                    results.setFatal("initTransactions/beginTransaction: " + describe(t));
                    notSent = "not sent: the transaction could not begin";
                }
            }
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < n && notSent == null; i++) {
                final int index = i;
                JsonNode r = records.get(i);
                Future<RecordMetadata> future = null;
                try {
                    Integer partition = has(r, "partition") ? r.get("partition").asInt() : null;
                    Long timestamp = has(r, "timestamp") ? r.get("timestamp").asLong() : null;
                    ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(
                        topic, partition, timestamp, b64(r.get("key")), b64(r.get("value")),
                        java.util.Arrays.asList(headers(r)));
                    future = producer.send(record, (metadata, exception) -> {
                        if (exception == null) results.success(index, metadata);
                        else results.failure(index, exception);
                    });
                } catch (Throwable t) {
                    results.failure(index, t);
                }
                futures.add(future);
            }
            if (notSent == null) {
                producer.flush();
                for (int i = 0; i < futures.size(); i++) {
                    Future<RecordMetadata> f = futures.get(i);
                    if (f == null || results.isDone(i)) continue;
                    long left = deadline - System.nanoTime();
                    try {
                        results.success(i, f.get(Math.max(0, left), TimeUnit.NANOSECONDS));
                    } catch (TimeoutException e) {
                        break; // the watchdog reports the rest
                    } catch (Throwable t) {
                        results.failure(i, t);
                    }
                }
                if (transactional) {
                    String end = txn.path("end").asText("commit");
                    try {
                        if (end.equals("abort")) producer.abortTransaction();
                        else producer.commitTransaction();
                    } catch (Throwable t) {
                        results.setFatal((end.equals("abort") ? "abortTransaction: " : "commitTransaction: ") + describe(t));
                    }
                }
            }
        } finally {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            try {
                producer.close(Duration.ofMillis(Math.max(0, Math.min(CLOSE_MS, left))));
            } catch (Throwable t) {
                System.err.println("java-producer adapter: close: " + describe(t));
            }
        }
        results.emitOnce(notSent != null ? notSent : "no result from KafkaProducer");
        return 0;
    }

    // ---------------------------------------------------------------------------------------
    // encode

    private static int encode(JsonNode plan) throws IOException {
        JsonNode settings = plan.path("settings");
        JsonNode batch = plan.path("batch");
        String codec = has(settings, "codec") ? settings.get("codec").asText() : "none";
        byte magic = (byte) batch.path("magic").asInt(RecordBatch.CURRENT_MAGIC_VALUE);
        // CREATE_TIME for every magic, as the producer's RecordAccumulator does (magic 0 has no
        // timestamp type: the bytes are the same as with NO_TIMESTAMP_TYPE)
        TimestampType timestampType = TimestampType.CREATE_TIME;
        MemoryRecordsBuilder builder;
        MemoryRecords built;
        try {
            Compression compression = Compression.of(CompressionType.forName(codec)).build();
            builder = MemoryRecords.builder(
                ByteBuffer.allocate(1024),
                magic,
                compression,
                timestampType,
                batch.path("base_offset").asLong(0),
                RecordBatch.NO_TIMESTAMP,
                batch.path("producer_id").asLong(RecordBatch.NO_PRODUCER_ID),
                (short) batch.path("producer_epoch").asInt(RecordBatch.NO_PRODUCER_EPOCH),
                batch.path("base_sequence").asInt(RecordBatch.NO_SEQUENCE),
                batch.path("transactional").asBoolean(false),
                batch.path("partition_leader_epoch").asInt(RecordBatch.NO_PARTITION_LEADER_EPOCH));
            for (JsonNode r : plan.path("records")) {
                long timestamp = has(r, "timestamp") ? r.get("timestamp").asLong() : RecordBatch.NO_TIMESTAMP;
                builder.append(timestamp, b64(r.get("key")), b64(r.get("value")), headers(r));
            }
            built = builder.build();
        } catch (RuntimeException e) {
            System.err.println("MemoryRecordsBuilder refused the plan: " + e);
            return 1;
        }
        ByteBuffer buf = built.buffer();
        byte[] out = new byte[buf.remaining()];
        buf.duplicate().get(out);
        STDOUT.write(out);
        STDOUT.flush();
        return 0;
    }
}
