/*
 * Adapter.java - the protocol side of a kafka-conformance decoder adapter (Java 17, JDK only).
 *
 * You should not need to edit this file: call your Kafka client library in Library.java (the
 * hook) and this file does the rest of docs/adapter-protocol.md:
 *
 *   java -cp build Adapter capabilities               the hook's constants as one JSON object
 *   java -cp build Adapter decode --as memory|file    stdin -> one canonical JSON document
 *   java -cp build Adapter serve                      the persistent mode (framed requests)
 *
 * Build (from this directory):  javac -d build Adapter.java Library.java
 * Check:  kafka-conformance check --cmd "java -cp $PWD/build Adapter"
 *
 * The document is the one of docs/canonical-json.md ("kafka-conformance/decode/1"), written by
 * hand (the JDK has no JSON writer): keys in the canonical order, 64-bit integers as decimal
 * strings, bytes as standard base64, ASCII output with \\u escapes.
 */

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

public final class Adapter {
    /** The contract id of the document. */
    public static final String FORMAT = "kafka-conformance/decode/1";

    private Adapter() {}

    // ---------------------------------------------------------------------------------------
    // The data the hook fills (Library.decode returns a Decoded).
    // ---------------------------------------------------------------------------------------

    /** The result of decoding one input: the batches delivered, then the error that ended it. */
    public static final class Decoded {
        /** In input order, including the batch during which the error happened (if listed). */
        public final List<Batch> batches = new ArrayList<>();
        /** null: no error (the outcome is then "ok" or "partial", computed from the batches). */
        public DecodeError error;
    }

    /** One batch (v2) or one top-level message / compressed wrapper (v0, v1). */
    public static final class Batch {
        /** Byte position of the batch in the input (Adapter.batchPosition computes it). */
        public int position;
        /** 12 + the batch's length field. */
        public int sizeInBytes;
        public int magic;
        /** The stored CRC, unsigned (a Java int checksum is accepted too: only 32 bits are written). */
        public long crc;
        /** v2: the int16 attributes as stored (signed); v0/v1: the int8 attributes (signed). */
        public int attributes;
        /** "none", "gzip", "snappy", "lz4", "zstd", or "unknown-5" / "unknown-6" / "unknown-7". */
        public String compression;
        /** "CreateTime", "LogAppendTime" or (v0) "NoTimestampType". */
        public String timestampType;
        public long lastOffset;
        /** -1 for v0. */
        public long maxTimestamp;

        // Magic 2 only (not written for magic 0 and 1).
        public long baseOffset;
        public int lastOffsetDelta;
        public int partitionLeaderEpoch;
        /** The raw base timestamp field. */
        public long baseTimestamp;
        /** null when the batch has no delete horizon. */
        public Long deleteHorizonMs;
        public boolean isTransactional;
        public boolean isControl;
        public long producerId;
        public int producerEpoch;
        public int baseSequence;
        public int lastSequence;
        /** The raw records count field. */
        public int recordsCount;

        /** The records the library delivered, in order. */
        public final List<Record> records = new ArrayList<>();
    }

    /** One record. key and value: null for a null field, an empty array for an empty one. */
    public static final class Record {
        public long offset;
        public long timestamp;
        public byte[] key;
        public byte[] value;
        public final List<Header> headers = new ArrayList<>();
        /** Only in control batches (null otherwise). */
        public Control control;
    }

    /** A record header; value null for a null header value. */
    public record Header(String key, byte[] value) {}

    /** The parsed control record: type "ABORT", "COMMIT", ...; coordinatorEpoch for ABORT/COMMIT. */
    public record Control(int typeId, String type, Integer coordinatorEpoch) {}

    /**
     * The error that ended decoding: the Kafka exception class it corresponds to, the library's
     * own text, and the batch during which it happened (index and byte position).
     */
    public record DecodeError(String kafkaException, String message, int batchIndex, int position) {}

    // ---------------------------------------------------------------------------------------
    // The one read of the input bytes an adapter may do itself.
    // ---------------------------------------------------------------------------------------

    /**
     * The byte position of entry {@code index}: walks the entries from 0, each of size
     * 12 + the big-endian int32 at its position + 8 (the batch length field), and stops at the
     * end of {@code data} (returns data.length when entry {@code index} is not reached).
     * This is counting, not decoding (docs/adapter-protocol.md, "Rules for adapters").
     */
    public static int batchPosition(byte[] data, int index) {
        long position = 0;
        for (int i = 0; i < index; i++) {
            if (position + 12 > data.length) {
                return data.length;
            }
            int at = (int) position + 8;
            int length = ((data[at] & 0xff) << 24) | ((data[at + 1] & 0xff) << 16)
                    | ((data[at + 2] & 0xff) << 8) | (data[at + 3] & 0xff);
            if (length < 0) {
                return data.length; // not a batch: nothing after it can be reached
            }
            position += 12L + length;
        }
        return (int) Math.min(position, data.length);
    }

    // ---------------------------------------------------------------------------------------
    // Commands.
    // ---------------------------------------------------------------------------------------

    private static final String USAGE =
            "usage: Adapter capabilities | Adapter decode --as memory|file | Adapter serve";

    public static void main(String[] args) {
        // The protocol owns stdout; anything the hook or its library prints goes to stderr.
        OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        System.setOut(System.err);
        int code;
        try {
            code = run(args, out);
            out.flush();
        } catch (HookFailure failure) {
            // A crash of the hook is not a verdict: report it and exit non-zero (an `error`).
            System.err.println("Library.decode failed:");
            failure.getCause().printStackTrace(System.err);
            code = 1;
        } catch (IOException | RuntimeException e) {
            System.err.print("adapter: ");
            e.printStackTrace(System.err);
            code = 2;
        }
        System.err.flush();
        System.exit(code);
    }

    private static int run(String[] args, OutputStream out) throws IOException, HookFailure {
        if (args.length == 1 && args[0].equals("capabilities")) {
            out.write((capabilities() + "\n").getBytes(StandardCharsets.UTF_8));
            return 0;
        }
        if (args.length == 3 && args[0].equals("decode") && args[1].equals("--as")
                && (args[2].equals("memory") || args[2].equals("file"))) {
            byte[] data = System.in.readAllBytes();
            out.write((decode(data, args[2]) + "\n").getBytes(StandardCharsets.UTF_8));
            return 0;
        }
        if (args.length == 1 && args[0].equals("serve")) {
            return serve(new DataInputStream(new BufferedInputStream(System.in, 1 << 16)),
                    new DataOutputStream(out));
        }
        System.err.println(USAGE);
        return 2;
    }

    /**
     * The persistent mode: until EOF, read 1 byte mode (0 memory, 1 file), a 4-byte big-endian
     * length and the input; answer a 4-byte big-endian length and the UTF-8 document; flush.
     */
    private static int serve(DataInputStream in, DataOutputStream out) throws IOException, HookFailure {
        while (true) {
            int modeByte = in.read();
            if (modeByte < 0) {
                return 0; // EOF between requests: the runner is done
            }
            if (modeByte > 1) {
                System.err.println("serve: bad mode byte " + modeByte);
                return 2;
            }
            int length = in.readInt();
            if (length < 0) {
                System.err.println("serve: bad length " + length);
                return 2;
            }
            byte[] data = new byte[length];
            try {
                in.readFully(data);
            } catch (EOFException e) {
                System.err.println("serve: request cut short");
                return 2;
            }
            byte[] doc = decode(data, modeByte == 0 ? "memory" : "file").getBytes(StandardCharsets.UTF_8);
            out.writeInt(doc.length);
            out.write(doc);
            out.flush();
        }
    }

    /** Thrown when Library.decode throws or returns null. */
    private static final class HookFailure extends Exception {
        private static final long serialVersionUID = 1L;

        HookFailure(Throwable cause) {
            super(cause);
        }
    }

    // ---------------------------------------------------------------------------------------
    // The JSON documents.
    // ---------------------------------------------------------------------------------------

    /** The capabilities object (docs/adapter-protocol.md, "Capabilities"). */
    static String capabilities() {
        StringBuilder sb = new StringBuilder(256);
        JsonObject o = new JsonObject(sb, Set.of());
        o.string("name", Library.NAME);
        o.string("version", Library.VERSION);
        if (o.key("magics")) {
            sb.append('[');
            for (int i = 0; i < Library.MAGICS.size(); i++) {
                sb.append(i == 0 ? "" : ",").append(Library.MAGICS.get(i).intValue());
            }
            sb.append(']');
        }
        o.strings("codecs", Library.CODECS);
        o.bool("checks_crc", Library.CHECKS_CRC);
        o.string("error_semantics", Library.ERROR_SEMANTICS);
        o.bool("file_semantics", Library.FILE_SEMANTICS);
        o.string("error_classes", Library.ERROR_CLASSES);
        o.strings("omits", Library.OMITS);
        o.bool("lists_failing_batch", Library.LISTS_FAILING_BATCH);
        o.bool("persistent", true);
        o.string("notes", Library.NOTES);
        o.end();
        return sb.toString();
    }

    /** Calls the hook on one input and returns the canonical document (one line). */
    static String decode(byte[] data, String mode) throws HookFailure {
        Decoded decoded;
        try {
            decoded = Library.decode(data, mode);
        } catch (Throwable e) { // any exception or error of the hook or its library
            throw new HookFailure(e);
        }
        if (decoded == null) {
            throw new HookFailure(new NullPointerException("Library.decode returned null"));
        }
        return document(decoded, data.length, mode);
    }

    /** The document for {@code decoded}; {@code length} is the input's size (for the tail). */
    static String document(Decoded decoded, int length, String mode) {
        Set<String> omits = new HashSet<>(Library.OMITS);
        Set<String> controlOmits = new HashSet<>();
        for (String omit : Library.OMITS) {
            if (omit.startsWith("control.")) {
                controlOmits.add(omit.substring("control.".length()));
            }
        }
        StringBuilder sb = new StringBuilder(1024);
        JsonObject doc = new JsonObject(sb, Set.of());
        doc.string("format", FORMAT);
        doc.string("mode", mode);

        // outcome: "error" when the hook reported one; otherwise "partial" when bytes follow
        // the last batch (end = its position + size, 0 without batches), else "ok". A last
        // batch of a negative size (a length field of 0x80000000 or more, as the library gave
        // it) ends nowhere: no tail is made of it, and the kit shows the size it reported.
        DecodeError error = decoded.error;
        long start = 0;
        long end = 0;
        if (!decoded.batches.isEmpty()) {
            Batch last = decoded.batches.get(decoded.batches.size() - 1);
            start = last.position;
            end = start + last.sizeInBytes;
        }
        String outcome = error != null ? "error" : start <= end && end < length ? "partial" : "ok";
        doc.string("outcome", outcome);
        if (doc.key("error")) {
            if (error == null) {
                sb.append("null");
            } else {
                JsonObject e = new JsonObject(sb, Set.of());
                e.string("kafka_exception", error.kafkaException());
                e.string("message", error.message());
                e.number("batch_index", error.batchIndex());
                e.number("position", error.position());
                e.end();
            }
        }
        if (doc.key("tail")) {
            if (outcome.equals("partial")) {
                JsonObject t = new JsonObject(sb, Set.of());
                t.number("position", end);
                t.number("bytes", length - end);
                t.end();
            } else {
                sb.append("null");
            }
        }
        if (doc.key("batches")) {
            sb.append('[');
            for (int i = 0; i < decoded.batches.size(); i++) {
                sb.append(i == 0 ? "" : ",");
                writeBatch(sb, decoded.batches.get(i), omits, controlOmits);
            }
            sb.append(']');
        }
        doc.end();
        return sb.toString();
    }

    /** A batch object: keys in the order of docs/canonical-json.md, OMITS left out. */
    private static void writeBatch(StringBuilder sb, Batch b, Set<String> omits, Set<String> controlOmits) {
        JsonObject o = new JsonObject(sb, omits);
        o.number("position", b.position);
        o.number("sizeInBytes", b.sizeInBytes);
        o.number("magic", b.magic);
        o.number("crc", b.crc & 0xffffffffL); // unsigned 32-bit
        o.number("attributes", b.attributes);
        o.string("compression", b.compression);
        o.string("timestampType", b.timestampType);
        o.int64("lastOffset", b.lastOffset);
        o.int64("maxTimestamp", b.maxTimestamp);
        if (b.magic >= 2) {
            o.int64("baseOffset", b.baseOffset);
            o.number("lastOffsetDelta", b.lastOffsetDelta);
            o.number("partitionLeaderEpoch", b.partitionLeaderEpoch);
            o.int64("baseTimestamp", b.baseTimestamp);
            if (o.key("deleteHorizonMs")) {
                if (b.deleteHorizonMs == null) {
                    sb.append("null");
                } else {
                    JsonObject.quote(sb, Long.toString(b.deleteHorizonMs));
                }
            }
            o.bool("isTransactional", b.isTransactional);
            o.bool("isControl", b.isControl);
            o.int64("producerId", b.producerId);
            o.number("producerEpoch", b.producerEpoch);
            o.number("baseSequence", b.baseSequence);
            o.number("lastSequence", b.lastSequence);
            o.number("recordsCount", b.recordsCount);
        }
        if (o.key("records")) {
            sb.append('[');
            for (int i = 0; i < b.records.size(); i++) {
                sb.append(i == 0 ? "" : ",");
                writeRecord(sb, b.records.get(i), omits, controlOmits);
            }
            sb.append(']');
        }
        o.end();
    }

    /** A record object; `control` only when the record has one. */
    private static void writeRecord(StringBuilder sb, Record r, Set<String> omits, Set<String> controlOmits) {
        JsonObject o = new JsonObject(sb, omits);
        o.int64("offset", r.offset);
        o.int64("timestamp", r.timestamp);
        o.bytes("key", r.key);
        o.bytes("value", r.value);
        if (o.key("headers")) {
            sb.append('[');
            for (int i = 0; i < r.headers.size(); i++) {
                Header h = r.headers.get(i);
                sb.append(i == 0 ? "" : ",");
                JsonObject ho = new JsonObject(sb, Set.of());
                ho.string("key", h.key());
                ho.bytes("value", h.value());
                ho.end();
            }
            sb.append(']');
        }
        if (r.control != null && o.key("control")) {
            JsonObject c = new JsonObject(sb, controlOmits);
            c.number("typeId", r.control.typeId());
            c.string("type", r.control.type());
            if (r.control.coordinatorEpoch() != null) {
                c.number("coordinatorEpoch", r.control.coordinatorEpoch());
            }
            c.end();
        }
        o.end();
    }

    /** Writes one JSON object member by member into a StringBuilder, skipping omitted keys. */
    private static final class JsonObject {
        private static final char[] HEX = "0123456789abcdef".toCharArray();
        private final StringBuilder sb;
        private final Set<String> omits;
        private boolean first = true;

        JsonObject(StringBuilder sb, Set<String> omits) {
            this.sb = sb;
            this.omits = omits;
            sb.append('{');
        }

        /** Starts member {@code key} (comma, quoted key, colon); false when the key is omitted. */
        boolean key(String key) {
            if (omits.contains(key)) {
                return false;
            }
            if (!first) {
                sb.append(',');
            }
            first = false;
            quote(sb, key);
            sb.append(':');
            return true;
        }

        void number(String key, long value) {
            if (key(key)) {
                sb.append(value);
            }
        }

        /** A 64-bit integer: a decimal string (docs/canonical-json.md, "Conventions"). */
        void int64(String key, long value) {
            if (key(key)) {
                quote(sb, Long.toString(value));
            }
        }

        void bool(String key, boolean value) {
            if (key(key)) {
                sb.append(value);
            }
        }

        void string(String key, String value) {
            if (key(key)) {
                if (value == null) {
                    sb.append("null");
                } else {
                    quote(sb, value);
                }
            }
        }

        void strings(String key, List<String> values) {
            if (key(key)) {
                sb.append('[');
                for (int i = 0; i < values.size(); i++) {
                    sb.append(i == 0 ? "" : ",");
                    quote(sb, values.get(i));
                }
                sb.append(']');
            }
        }

        /** Bytes: standard base64 with padding; null stays null, empty is "". */
        void bytes(String key, byte[] value) {
            if (key(key)) {
                if (value == null) {
                    sb.append("null");
                } else {
                    sb.append('"').append(Base64.getEncoder().encodeToString(value)).append('"');
                }
            }
        }

        void end() {
            sb.append('}');
        }

        /**
         * A JSON string: quote and backslash escaped, control characters and everything
         * outside printable ASCII as \\u00XX escapes (a Java char is a UTF-16 unit, so
         * characters beyond U+FFFF come out as surrogate pairs, as JSON wants).
         */
        static void quote(StringBuilder sb, String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '"' || c == '\\') {
                    sb.append('\\').append(c);
                } else if (c < 0x20 || c > 0x7e) {
                    sb.append("\\u").append(HEX[c >> 12]).append(HEX[(c >> 8) & 15])
                            .append(HEX[(c >> 4) & 15]).append(HEX[c & 15]);
                } else {
                    sb.append(c);
                }
            }
            sb.append('"');
        }
    }
}
