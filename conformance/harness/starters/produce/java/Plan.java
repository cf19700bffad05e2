/*
 * Plan.java - the plan the kit hands a producer adapter, and what the hook returns
 * (Java 17, JDK only).
 *
 * Plan.read turns the plan document (contract "kafka-conformance/produce-plan/1",
 * docs/adapter-protocol.md of kafka-conformance, "Producer side") into the records below;
 * Adapter.java writes Produced as the produce-result document. sample-plan.json is a plan to
 * try the adapter on by hand. The JDK has no JSON reader: Plan.Json is a small strict one.
 */

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A plan: the records to send, in plan order, with the producer's settings.
 *
 * @param topic created by the kit before the adapter runs
 * @param batch encode plans only (null otherwise)
 * @param groups runs of records to send as one batch each (the library's batch call, or back
 *     to back for its linger to gather them); empty when the plan has none
 */
record Plan(String scenario, String topic, int partitions, Settings settings,
        List<PlanRecord> records, BatchFields batch, List<Group> groups) {

    /** A run of plan records, records().subList(first, first + count), to send as one batch. */
    record Group(int first, int count) {}

    static final String PLAN_FORMAT = "kafka-conformance/produce-plan/1";

    /** A record header; value null for a null header value. */
    record Header(String key, byte[] value) {}

    /**
     * One record to send, in plan order. key and value: null for a null field, an empty array
     * for an empty one.
     *
     * @param timestamp milliseconds; null: let the library choose (its clock)
     * @param partition null: the library's partitioner chooses
     */
    record PlanRecord(byte[] key, byte[] value, List<Header> headers, Long timestamp, Integer partition) {}

    /**
     * @param id the transactional.id
     * @param end "commit" or "abort": how the transaction ends after every record is sent
     */
    record Transaction(String id, String end) {}

    /**
     * The producer's settings.
     *
     * @param codec compression type: none, gzip, snappy, lz4, zstd
     * @param idempotence enable.idempotence
     * @param acks -1 (all), 0 or 1
     * @param batchSize bytes
     * @param maxRequestSize bytes
     * @param transaction null: no transaction
     * @param timeoutMs the budget for the whole plan (delivery and request timeouts, flush)
     */
    record Settings(String codec, boolean idempotence, int acks, int lingerMs, int batchSize,
            int maxRequestSize, Transaction transaction, int timeoutMs) {}

    /** encode only: the header fields of the one batch to build. */
    record BatchFields(int magic, long baseOffset, long producerId, int producerEpoch,
            int baseSequence, boolean transactional, int partitionLeaderEpoch) {}

    /**
     * What the library reported for one plan record: the partition and offset it was written
     * at (null: not reported), and its error text (null: acknowledged).
     */
    record Delivery(Integer partition, Long offset, String error) {
        /** A record acknowledged at partition, offset. */
        static Delivery acknowledged(int partition, long offset) {
            return new Delivery(partition, offset, null);
        }

        /** A record that failed (or was refused before sending) with no partition or offset. */
        static Delivery failed(String error) {
            return new Delivery(null, null, error);
        }
    }

    /**
     * One Delivery per plan record, in plan order, and a failure outside any record (the
     * producer could not start, the transaction could not commit), else null.
     */
    static final class Produced {
        final List<Delivery> records = new ArrayList<>();
        String error;
    }

    // ---------------------------------------------------------------------------------------
    // Reading the plan document.
    // ---------------------------------------------------------------------------------------

    /** A plan file that is not a plan: invalid UTF-8 or JSON, another format, a field missing
     * or of the wrong type. The message says where ($.records[2].key: ...). */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super(message);
        }
    }

    /** The plan in {@code data} (the file's bytes: UTF-8 JSON). */
    static Plan read(byte[] data) throws Invalid {
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(data)).toString();
        } catch (CharacterCodingException e) {
            throw new Invalid("not UTF-8: " + e);
        }
        Map<String, Object> doc = object(Json.parse(text), "$");
        Object format = doc.get("format");
        if (!PLAN_FORMAT.equals(format)) {
            throw new Invalid("not a plan: format " + (format instanceof String s ? '"' + s + '"' : format)
                    + ", expected " + PLAN_FORMAT);
        }
        Map<String, Object> s = object(get(doc, "settings", "$"), "$.settings");
        Object t = s.get("transaction"); // null or absent: no transaction
        Transaction transaction = null;
        if (t != null) {
            Map<String, Object> txn = object(t, "$.settings.transaction");
            String end = string(get(txn, "end", "$.settings.transaction"), "$.settings.transaction.end");
            if (!end.equals("commit") && !end.equals("abort")) {
                throw new Invalid("$.settings.transaction.end: \"commit\" or \"abort\", not \"" + end + '"');
            }
            transaction = new Transaction(string(get(txn, "id", "$.settings.transaction"),
                    "$.settings.transaction.id"), end);
        }
        Settings settings = new Settings(
                string(get(s, "codec", "$.settings"), "$.settings.codec"),
                bool(get(s, "idempotence", "$.settings"), "$.settings.idempotence"),
                integer(get(s, "acks", "$.settings"), "$.settings.acks"),
                integer(get(s, "linger_ms", "$.settings"), "$.settings.linger_ms"),
                integer(get(s, "batch_size", "$.settings"), "$.settings.batch_size"),
                integer(get(s, "max_request_size", "$.settings"), "$.settings.max_request_size"),
                transaction,
                integer(get(s, "timeout_ms", "$.settings"), "$.settings.timeout_ms"));
        List<PlanRecord> records = new ArrayList<>();
        List<Object> rs = array(get(doc, "records", "$"), "$.records");
        for (int i = 0; i < rs.size(); i++) {
            String where = "$.records[" + i + "]";
            Map<String, Object> r = object(rs.get(i), where);
            List<Header> headers = new ArrayList<>();
            List<Object> hs = array(get(r, "headers", where), where + ".headers");
            for (int j = 0; j < hs.size(); j++) {
                String at = where + ".headers[" + j + "]";
                Map<String, Object> h = object(hs.get(j), at);
                headers.add(new Header(string(get(h, "key", at), at + ".key"),
                        base64(get(h, "value", at), at + ".value")));
            }
            Object timestamp = get(r, "timestamp", where);
            Object partition = get(r, "partition", where);
            records.add(new PlanRecord(base64(get(r, "key", where), where + ".key"),
                    base64(get(r, "value", where), where + ".value"), List.copyOf(headers),
                    timestamp == null ? null : int64(timestamp, where + ".timestamp"),
                    partition == null ? null : integer(partition, where + ".partition")));
        }
        BatchFields batch = null;
        if (doc.get("batch") != null) {
            Map<String, Object> b = object(doc.get("batch"), "$.batch");
            batch = new BatchFields(
                    integer(get(b, "magic", "$.batch"), "$.batch.magic"),
                    int64(get(b, "base_offset", "$.batch"), "$.batch.base_offset"),
                    int64(get(b, "producer_id", "$.batch"), "$.batch.producer_id"),
                    integer(get(b, "producer_epoch", "$.batch"), "$.batch.producer_epoch"),
                    integer(get(b, "base_sequence", "$.batch"), "$.batch.base_sequence"),
                    bool(get(b, "transactional", "$.batch"), "$.batch.transactional"),
                    integer(get(b, "partition_leader_epoch", "$.batch"), "$.batch.partition_leader_epoch"));
        }
        List<Group> groups = new ArrayList<>();
        if (doc.get("groups") != null) {
            List<Object> gs = array(doc.get("groups"), "$.groups");
            for (int i = 0; i < gs.size(); i++) {
                String where = "$.groups[" + i + "]";
                Map<String, Object> g = object(gs.get(i), where);
                groups.add(new Group(integer(get(g, "first", where), where + ".first"),
                        integer(get(g, "count", where), where + ".count")));
            }
        }
        return new Plan(string(get(doc, "scenario", "$"), "$.scenario"),
                string(get(doc, "topic", "$"), "$.topic"),
                integer(get(doc, "partitions", "$"), "$.partitions"),
                settings, List.copyOf(records), batch, List.copyOf(groups));
    }

    /** A required key's value (JSON null is Java null). */
    private static Object get(Map<String, Object> o, String key, String where) throws Invalid {
        if (!o.containsKey(key)) {
            throw new Invalid(where + ": missing \"" + key + '"');
        }
        return o.get(key);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object v, String where) throws Invalid {
        if (v instanceof Map) {
            return (Map<String, Object>) v;
        }
        throw new Invalid(where + ": not an object");
    }

    @SuppressWarnings("unchecked")
    private static List<Object> array(Object v, String where) throws Invalid {
        if (v instanceof List) {
            return (List<Object>) v;
        }
        throw new Invalid(where + ": not an array");
    }

    private static String string(Object v, String where) throws Invalid {
        if (v instanceof String s) {
            return s;
        }
        throw new Invalid(where + ": not a string");
    }

    private static boolean bool(Object v, String where) throws Invalid {
        if (v instanceof Boolean b) {
            return b;
        }
        throw new Invalid(where + ": not true or false");
    }

    private static long int64(Object v, String where) throws Invalid {
        if (v instanceof Long n) {
            return n;
        }
        throw new Invalid(where + ": not an integer");
    }

    private static int integer(Object v, String where) throws Invalid {
        long n = int64(v, where);
        if (n != (int) n) {
            throw new Invalid(where + ": " + n + " is out of the 32-bit range");
        }
        return (int) n;
    }

    /** Standard base64 with padding (null: null). */
    private static byte[] base64(Object v, String where) throws Invalid {
        if (v == null) {
            return null;
        }
        String s = string(v, where);
        try {
            if (s.length() % 4 != 0) {
                throw new IllegalArgumentException("incorrect padding");
            }
            return Base64.getDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            throw new Invalid(where + ": not base64: " + e.getMessage());
        }
    }

    /**
     * A small strict JSON reader (RFC 8259): objects (a LinkedHashMap, keys in document order,
     * a key repeated is refused), arrays (a List), strings (escapes, \\uXXXX with surrogate
     * pairs; a lone surrogate is refused), numbers (a Long: 64-bit integers only, a fraction or
     * exponent is refused), true/false (a Boolean) and null (Java null).
     */
    static final class Json {
        private static final int MAX_DEPTH = 64;
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Object parse(String text) throws Invalid {
            Json json = new Json(text);
            Object value = json.value(0);
            json.space();
            if (json.i != text.length()) {
                throw json.error("text after the JSON value");
            }
            return value;
        }

        private Invalid error(String what) {
            return new Invalid("invalid JSON at character " + i + ": " + what);
        }

        private void space() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
        }

        /** Skips white space, then consumes {@code c} if it is next. */
        private boolean eat(char c) {
            space();
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        private void expect(char c) throws Invalid {
            if (!eat(c)) {
                throw error("expected '" + c + "'");
            }
        }

        private Object value(int depth) throws Invalid {
            space();
            if (i >= s.length()) {
                throw error("unexpected end of the text");
            }
            if (depth > MAX_DEPTH) {
                throw error("nested deeper than " + MAX_DEPTH);
            }
            char c = s.charAt(i);
            if (c == '{') {
                i++;
                Map<String, Object> o = new LinkedHashMap<>();
                if (eat('}')) {
                    return o;
                }
                do {
                    space();
                    if (i >= s.length() || s.charAt(i) != '"') {
                        throw error("expected a string key");
                    }
                    String key = string();
                    expect(':');
                    if (o.containsKey(key)) {
                        throw error("key \"" + key + "\" repeated");
                    }
                    o.put(key, value(depth + 1));
                } while (eat(','));
                expect('}');
                return o;
            }
            if (c == '[') {
                i++;
                List<Object> a = new ArrayList<>();
                if (eat(']')) {
                    return a;
                }
                do {
                    a.add(value(depth + 1));
                } while (eat(','));
                expect(']');
                return a;
            }
            if (c == '"') {
                return string();
            }
            if (c == '-' || (c >= '0' && c <= '9')) {
                return number();
            }
            for (String word : new String[] {"true", "false", "null"}) {
                if (s.startsWith(word, i)) {
                    i += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word.equals("true"));
                }
            }
            throw error("unexpected character " + (c >= 0x20 && c < 0x7f ? "'" + c + "'"
                    : String.format("U+%04X", (int) c)));
        }

        /** -?(0|[1-9][0-9]*) as a long. */
        private Long number() throws Invalid {
            int start = i;
            if (s.charAt(i) == '-') {
                i++;
            }
            int digits = i;
            while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                i++;
            }
            if (i == digits || (s.charAt(digits) == '0' && i - digits > 1)) {
                throw error("invalid number");
            }
            if (i < s.length() && ".eE".indexOf(s.charAt(i)) >= 0) {
                throw error("only integers are expected");
            }
            try {
                return Long.parseLong(s.substring(start, i));
            } catch (NumberFormatException e) {
                throw error("integer out of the 64-bit range");
            }
        }

        /** A string; s.charAt(i) is its opening quote. */
        private String string() throws Invalid {
            StringBuilder out = new StringBuilder();
            i++;
            while (true) {
                if (i >= s.length()) {
                    throw error("unterminated string");
                }
                char c = s.charAt(i++);
                if (c == '"') {
                    return out.toString();
                }
                if (c < 0x20) {
                    throw error("control character in a string");
                }
                if (c != '\\') {
                    out.append(c); // a raw surrogate pair came from valid UTF-8: kept as it is
                    continue;
                }
                if (i >= s.length()) {
                    throw error("unterminated string");
                }
                char e = s.charAt(i++);
                switch (e) {
                    case '"', '\\', '/' -> out.append(e);
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        char u = hex4();
                        if (Character.isHighSurrogate(u)) {
                            if (!s.startsWith("\\u", i)) {
                                throw error("high surrogate without its low surrogate");
                            }
                            i += 2;
                            char low = hex4();
                            if (!Character.isLowSurrogate(low)) {
                                throw error("high surrogate without its low surrogate");
                            }
                            out.append(u).append(low);
                        } else if (Character.isLowSurrogate(u)) {
                            throw error("low surrogate without a high surrogate");
                        } else {
                            out.append(u);
                        }
                    }
                    default -> throw error("invalid escape \\" + e);
                }
            }
        }

        /** The four hex digits of a \\u escape. */
        private char hex4() throws Invalid {
            if (i + 4 > s.length()) {
                throw error("truncated \\u escape");
            }
            int v = 0;
            for (int k = 0; k < 4; k++) {
                int d = "0123456789abcdefABCDEF".indexOf(s.charAt(i++));
                if (d < 0) {
                    throw error("invalid \\u escape");
                }
                v = v * 16 + (d < 16 ? d : d - 6);
            }
            return (char) v;
        }
    }
}
