package org.kafkaconformance.oracle;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.ByteBufferOutputStream;

/**
 * The {@code encode} command: builds record batches with Kafka's own {@link MemoryRecordsBuilder}.
 *
 * <p>Input, one JSON object per batch:
 * <pre>
 * {"magic":0|1|2, "compression":"none|gzip|snappy|lz4|zstd", "timestampType":"CreateTime|LogAppendTime",
 *  "baseOffset":"int64", "logAppendTime":"int64", "producerId":"int64", "producerEpoch":n, "baseSequence":n,
 *  "isTransactional":bool, "isControl":bool, "partitionLeaderEpoch":n, "deleteHorizonMs":"int64",
 *  "records":[{"offset":"int64","timestamp":"int64","key":base64|null,"value":base64|null,
 *              "headers":[{"key":str,"value":base64|null}]}],
 *  "endTxnMarker":{"commit":bool,"coordinatorEpoch":n,"timestamp":"int64"}}   (optional)
 * </pre>
 * Every member is optional (defaults: magic 2, none, CreateTime, 0, -1, -1, -1, -1, false, false,
 * -1, -1, no records); 64-bit integers may be JSON strings or numbers.
 *
 * <p>Without {@code endTxnMarker} the batch is {@code MemoryRecords.builder(buffer, magic,
 * Compression.of(compression).build(), timestampType, baseOffset, logAppendTime, producerId,
 * producerEpoch, baseSequence, isTransactional, isControl, partitionLeaderEpoch)} (the
 * {@code MemoryRecordsBuilder} constructor that takes {@code deleteHorizonMs} when that is not -1),
 * then {@code appendWithOffset(offset, timestamp, key, value, headers)} per record, then
 * {@code build()}. With {@code endTxnMarker} (records must then be empty) it is
 * {@code MemoryRecords.withEndTransactionMarker(baseOffset, marker.timestamp, partitionLeaderEpoch,
 * producerId, producerEpoch, new EndTransactionMarker(COMMIT|ABORT, coordinatorEpoch))}.
 *
 * <p>Output, one line per input: the built bytes as lowercase hex (empty line for no bytes), or
 * {@code {"error":"<java class>: <message>"}} when Kafka throws (the class alone for a null
 * message), or {@code {"specError":"..."}} when the input itself is malformed.
 */
final class Encoder {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private static final Set<String> BATCH_KEYS = Set.of("magic", "compression", "timestampType", "baseOffset",
            "logAppendTime", "producerId", "producerEpoch", "baseSequence", "isTransactional", "isControl",
            "partitionLeaderEpoch", "deleteHorizonMs", "records", "endTxnMarker");
    private static final Set<String> RECORD_KEYS = Set.of("offset", "timestamp", "key", "value", "headers");
    private static final Set<String> HEADER_KEYS = Set.of("key", "value");
    private static final Set<String> MARKER_KEYS = Set.of("commit", "coordinatorEpoch", "timestamp");

    private Encoder() {
    }

    static final class SpecException extends Exception {
        private static final long serialVersionUID = 1L;

        SpecException(String message) {
            super(message);
        }
    }

    /** One input line (a JSON object) to one output line (no newline). */
    static String encodeLine(String line) {
        Map<String, Object> spec;
        try {
            Object parsed = JsonReader.parse(line);
            if (!(parsed instanceof Map))
                throw new SpecException("a batch spec must be a JSON object");
            spec = asObject(parsed, "batch", BATCH_KEYS);
        } catch (JsonReader.JsonException e) {
            return errorJson("specError", "malformed JSON: " + e.getMessage());
        } catch (SpecException e) {
            return errorJson("specError", e.getMessage());
        }
        try {
            return hex(encode(spec));
        } catch (SpecException e) {
            return errorJson("specError", e.getMessage());
        } catch (Exception | LinkageError | AssertionError e) {
            String m = e.getMessage();
            return errorJson("error", e.getClass().getName() + (m == null ? "" : ": " + m));
        }
    }

    private static String errorJson(String key, String message) {
        return new JsonWriter().beginObject().name(key).value(message).endObject().toString();
    }

    static ByteBuffer encode(Map<String, Object> spec) throws SpecException {
        byte magic = (byte) intIn(spec, "magic", 2, 0, 2);
        String compressionName = str(spec, "compression", "none");
        CompressionType ctype;
        try {
            ctype = CompressionType.forName(compressionName);
        } catch (IllegalArgumentException e) {
            throw new SpecException("unknown compression " + compressionName);
        }
        String tsName = str(spec, "timestampType", "CreateTime");
        TimestampType timestampType;
        switch (tsName) {
            case "CreateTime":
                timestampType = TimestampType.CREATE_TIME;
                break;
            case "LogAppendTime":
                timestampType = TimestampType.LOG_APPEND_TIME;
                break;
            case "NoTimestampType":
                timestampType = TimestampType.NO_TIMESTAMP_TYPE;
                break;
            default:
                throw new SpecException("unknown timestampType " + tsName);
        }
        long baseOffset = int64(spec, "baseOffset", 0L);
        long logAppendTime = int64(spec, "logAppendTime", RecordBatch.NO_TIMESTAMP);
        long producerId = int64(spec, "producerId", RecordBatch.NO_PRODUCER_ID);
        short producerEpoch = (short) intIn(spec, "producerEpoch", RecordBatch.NO_PRODUCER_EPOCH,
                Short.MIN_VALUE, Short.MAX_VALUE);
        int baseSequence = (int) intIn(spec, "baseSequence", RecordBatch.NO_SEQUENCE,
                Integer.MIN_VALUE, Integer.MAX_VALUE);
        boolean isTransactional = bool(spec, "isTransactional", false);
        boolean isControl = bool(spec, "isControl", false);
        int partitionLeaderEpoch = (int) intIn(spec, "partitionLeaderEpoch", RecordBatch.NO_PARTITION_LEADER_EPOCH,
                Integer.MIN_VALUE, Integer.MAX_VALUE);
        long deleteHorizonMs = int64(spec, "deleteHorizonMs", RecordBatch.NO_TIMESTAMP);
        List<Object> records = list(spec, "records");

        Object markerSpec = spec.get("endTxnMarker");
        if (markerSpec != null) {
            Map<String, Object> m = asObject(markerSpec, "endTxnMarker", MARKER_KEYS);
            if (!records.isEmpty())
                throw new SpecException("endTxnMarker and records are mutually exclusive");
            boolean commit = bool(m, "commit", true);
            int coordinatorEpoch = (int) intIn(m, "coordinatorEpoch", 0, Integer.MIN_VALUE, Integer.MAX_VALUE);
            long timestamp = int64(m, "timestamp", RecordBatch.NO_TIMESTAMP);
            EndTransactionMarker marker = new EndTransactionMarker(
                    commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, coordinatorEpoch);
            return MemoryRecords.withEndTransactionMarker(baseOffset, timestamp, partitionLeaderEpoch, producerId,
                    producerEpoch, marker).buffer();
        }

        // parse every record before touching Kafka, so a spec error is never reported as Kafka's
        int n = records.size();
        long[] offsets = new long[n];
        long[] timestamps = new long[n];
        byte[][] keys = new byte[n][];
        byte[][] values = new byte[n][];
        Header[][] headers = new Header[n][];
        for (int i = 0; i < n; i++) {
            Map<String, Object> r = asObject(records.get(i), "records[" + i + "]", RECORD_KEYS);
            offsets[i] = int64(r, "offset", i == 0 ? baseOffset : offsets[i - 1] + 1);
            timestamps[i] = int64(r, "timestamp", RecordBatch.NO_TIMESTAMP);
            keys[i] = base64(r, "key");
            values[i] = base64(r, "value");
            List<Object> hs = list(r, "headers");
            headers[i] = new Header[hs.size()];
            for (int j = 0; j < hs.size(); j++) {
                Map<String, Object> h = asObject(hs.get(j), "header", HEADER_KEYS);
                Object k = h.get("key");
                if (k != null && !(k instanceof String))
                    throw new SpecException("header key must be a string or null");
                headers[i][j] = new HeaderSpec((String) k, base64(h, "value"));
            }
        }

        Compression compression = Compression.of(ctype).build();
        ByteBuffer buffer = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder builder;
        if (deleteHorizonMs == RecordBatch.NO_TIMESTAMP) {
            builder = MemoryRecords.builder(buffer, magic, compression, timestampType, baseOffset, logAppendTime,
                    producerId, producerEpoch, baseSequence, isTransactional, isControl, partitionLeaderEpoch);
        } else {
            builder = new MemoryRecordsBuilder(new ByteBufferOutputStream(buffer), magic, compression, timestampType,
                    baseOffset, logAppendTime, producerId, producerEpoch, baseSequence, isTransactional, isControl,
                    partitionLeaderEpoch, buffer.remaining(), deleteHorizonMs);
        }
        boolean built = false;
        try {
            for (int i = 0; i < n; i++)
                builder.appendWithOffset(offsets[i], timestamps[i], keys[i], values[i], headers[i]);
            MemoryRecords result = builder.build();
            built = true;
            return result.buffer();
        } finally {
            if (!built) {
                try {
                    builder.closeForRecordAppends(); // release codec resources
                } catch (RuntimeException ignored) {
                    // the batch is discarded anyway
                }
            }
        }
    }

    /**
     * A header whose key may be null (Kafka's RecordHeader refuses a null key itself;
     * this lets the builder's own "null header key" check be observed).
     */
    private static final class HeaderSpec implements Header {
        private final String key;
        private final byte[] value;

        HeaderSpec(String key, byte[] value) {
            this.key = key;
            this.value = value;
        }

        @Override
        public String key() {
            return key;
        }

        @Override
        public byte[] value() {
            return value;
        }
    }

    static String hex(ByteBuffer buf) {
        ByteBuffer dup = buf.duplicate();
        StringBuilder sb = new StringBuilder(dup.remaining() * 2);
        while (dup.hasRemaining()) {
            int b = dup.get() & 0xff;
            sb.append(HEX[b >> 4]).append(HEX[b & 0xf]);
        }
        return sb.toString();
    }

    // ---- spec accessors ---------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asObject(Object o, String what, Set<String> allowed) throws SpecException {
        if (!(o instanceof Map))
            throw new SpecException(what + " must be a JSON object");
        Map<String, Object> m = (Map<String, Object>) o;
        for (String k : m.keySet())
            if (!allowed.contains(k))
                throw new SpecException("unknown member \"" + k + "\" in " + what);
        return m;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Map<String, Object> m, String key) throws SpecException {
        Object o = m.get(key);
        if (o == null)
            return List.of();
        if (!(o instanceof List))
            throw new SpecException(key + " must be a JSON array");
        return (List<Object>) o;
    }

    private static String str(Map<String, Object> m, String key, String dflt) throws SpecException {
        Object o = m.get(key);
        if (o == null)
            return dflt;
        if (!(o instanceof String))
            throw new SpecException(key + " must be a string");
        return (String) o;
    }

    private static boolean bool(Map<String, Object> m, String key, boolean dflt) throws SpecException {
        Object o = m.get(key);
        if (o == null)
            return dflt;
        if (!(o instanceof Boolean))
            throw new SpecException(key + " must be true or false");
        return (Boolean) o;
    }

    private static long int64(Map<String, Object> m, String key, long dflt) throws SpecException {
        return intIn(m, key, dflt, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    private static long intIn(Map<String, Object> m, String key, long dflt, long min, long max)
            throws SpecException {
        Object o = m.get(key);
        if (o == null)
            return dflt;
        String text;
        if (o instanceof JsonReader.Num || o instanceof String)
            text = o.toString();
        else
            throw new SpecException(key + " must be an integer (number or decimal string)");
        BigInteger v;
        try {
            v = new BigInteger(text);
        } catch (NumberFormatException e) {
            throw new SpecException(key + " is not an integer: " + text);
        }
        if (v.compareTo(BigInteger.valueOf(min)) < 0 || v.compareTo(BigInteger.valueOf(max)) > 0)
            throw new SpecException(key + " out of range [" + min + ", " + max + "]: " + text);
        return v.longValueExact();
    }

    private static byte[] base64(Map<String, Object> m, String key) throws SpecException {
        Object o = m.get(key);
        if (o == null)
            return null;
        if (!(o instanceof String))
            throw new SpecException(key + " must be base64 text or null");
        try {
            return Base64.getDecoder().decode(((String) o).getBytes(StandardCharsets.US_ASCII));
        } catch (IllegalArgumentException e) {
            throw new SpecException(key + " is not valid base64: " + e.getMessage());
        }
    }
}
