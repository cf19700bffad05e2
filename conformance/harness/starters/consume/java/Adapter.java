/*
 * Adapter.java - the protocol side of a kafka-conformance consumer adapter (Java 17, JDK only).
 *
 * You should not need to edit this file: run your library's consumer in Library.java (the
 * hook) and declare its capabilities there; Consumed.java holds the structures the hook fills.
 * This file does the rest of docs/adapter-protocol.md ("The consumer side"):
 *
 *   java -cp build Adapter capabilities       the hook's constants as one JSON object
 *   java -cp build Adapter consume --bootstrap 127.0.0.1:9092 --topic T --partition 0 \
 *       --from earliest --isolation read_uncommitted --timeout-ms 10000
 *                                             the consume document ("kafka-conformance/consume/1")
 *
 * Build (from this directory):  javac -d build Adapter.java Consumed.java Library.java
 * Check:  kafka-conformance check --side consume --cmd "java -cp $PWD/build Adapter"
 *
 * Exit codes: 0 with one document on stdout (also when the consumer reported an error: that is
 * a verdict); 2 for a usage error; 3 when the hook failed (a crash of the library is no
 * verdict: the reason goes to stderr, nothing to stdout).
 *
 * The document is written by hand (the JDK has no JSON writer): offsets and timestamps as
 * decimal strings, bytes as standard base64 with padding (or null), ASCII output with \\u
 * escapes.
 */

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

public final class Adapter {
    /** The contract id of the document this adapter prints. */
    public static final String FORMAT = "kafka-conformance/consume/1";

    private static final String USAGE = """
            usage: Adapter capabilities
                   Adapter consume --bootstrap HOST:PORT --topic T --partition N --from earliest|OFFSET
                                   --isolation read_uncommitted|read_committed --timeout-ms N [--group G]
            """;

    /** The {@code consume} flags; every one but --group is required. */
    private static final List<String> FLAGS = List.of(
            "--bootstrap", "--topic", "--partition", "--from", "--isolation", "--timeout-ms", "--group");

    private Adapter() {}

    /** A command line that is not one of USAGE's. */
    static final class UsageError extends Exception {
        private static final long serialVersionUID = 1L;

        UsageError(String message) {
            super(message);
        }
    }

    public static void main(String[] args) {
        // The protocol owns stdout; anything the hook or its library prints goes to stderr.
        OutputStream stdout = new FileOutputStream(FileDescriptor.out);
        System.setOut(System.err);
        int code = run(args, stdout);
        System.err.flush();
        System.exit(code); // also ends threads the library left running
    }

    private static int run(String[] args, OutputStream stdout) {
        String command = args.length > 0 ? args[0] : "";
        if (!command.equals("capabilities") && !command.equals("consume")) {
            System.err.print(USAGE);
            return 2;
        }
        Consumed.Options options = null;
        try {
            if (command.equals("consume")) {
                options = readOptions(args);
            } else if (args.length > 1) {
                throw new UsageError("capabilities takes no options");
            }
        } catch (UsageError e) {
            System.err.print("Adapter: " + e.getMessage() + "\n" + USAGE);
            return 2;
        }
        String doc;
        try {
            doc = options == null ? capabilities() : document(Library.consume(options));
        } catch (Throwable e) { // any exception or error of the hook or its library
            // A crash of the hook is not a verdict: say why on stderr, print nothing on stdout.
            System.err.println(options == null ? "Library's capabilities failed:" : "Library.consume failed:");
            e.printStackTrace(System.err);
            return 3;
        }
        try {
            stdout.write((doc + "\n").getBytes(StandardCharsets.US_ASCII));
            stdout.flush();
        } catch (IOException e) {
            System.err.println("Adapter: cannot write the document: " + e);
            return 1;
        }
        return 0;
    }

    /** The {@code consume} command line (args[0] is "consume") as Options. */
    static Consumed.Options readOptions(String[] args) throws UsageError {
        Map<String, String> values = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!FLAGS.contains(args[i]) || i + 1 >= args.length) {
                throw new UsageError("unknown option or missing value: " + args[i]);
            }
            values.put(args[i], args[i + 1]);
        }
        for (String flag : FLAGS) {
            if (!flag.equals("--group") && !values.containsKey(flag)) {
                throw new UsageError("missing " + flag);
            }
        }
        String isolation = values.get("--isolation");
        if (!isolation.equals("read_uncommitted") && !isolation.equals("read_committed")) {
            throw new UsageError("--isolation: one of read_uncommitted, read_committed");
        }
        return new Consumed.Options(values.get("--bootstrap"), values.get("--topic"),
                number(values, "--partition"), values.get("--from"), isolation,
                number(values, "--timeout-ms"), values.get("--group"));
    }

    private static int number(Map<String, String> values, String flag) throws UsageError {
        try {
            return Integer.parseInt(values.get(flag));
        } catch (NumberFormatException e) {
            throw new UsageError(flag + ": not a number: " + values.get(flag));
        }
    }

    // ---------------------------------------------------------------------------------------
    // The JSON documents.
    // ---------------------------------------------------------------------------------------

    /** The consumer side's capabilities (docs/adapter-protocol.md, "Capabilities"). */
    static String capabilities() {
        StringBuilder sb = new StringBuilder(256);
        sb.append("{\"name\":");
        quote(sb, Library.NAME);
        sb.append(",\"version\":");
        quote(sb, Library.VERSION);
        sb.append(",\"magics\":").append(Library.MAGICS.toString().replace(" ", ""));
        sb.append(",\"codecs\":");
        strings(sb, Library.CODECS);
        sb.append(",\"checks_crc\":").append(Library.CHECKS_CRC);
        sb.append(",\"error_semantics\":");
        quote(sb, Library.ERROR_SEMANTICS);
        sb.append(",\"error_classes\":");
        quote(sb, Library.ERROR_CLASSES);
        sb.append(",\"omits\":");
        if (Library.OMITS_BY_MAGIC.isEmpty()) {
            strings(sb, Library.OMITS);
        } else { // the object form: "*" for every magic, then each magic's own
            Map<String, List<String>> byMagic = new TreeMap<>(Library.OMITS_BY_MAGIC);
            if (!Library.OMITS.isEmpty()) {
                byMagic.put("*", Library.OMITS);
            }
            String comma = "{";
            for (Map.Entry<String, List<String>> e : byMagic.entrySet()) {
                sb.append(comma);
                quote(sb, e.getKey());
                sb.append(':');
                strings(sb, e.getValue());
                comma = ",";
            }
            sb.append('}');
        }
        sb.append(",\"notes\":");
        quote(sb, Library.NOTES);
        return sb.append('}').toString();
    }

    /** The consume document (contract FORMAT) of what the hook returned. */
    static String document(Consumed out) {
        if (out == null) {
            throw new NullPointerException("Library.consume returned null");
        }
        StringBuilder sb = new StringBuilder(1024);
        sb.append("{\"format\":");
        quote(sb, FORMAT);
        sb.append(",\"records\":[");
        for (int i = 0; i < out.records.size(); i++) {
            Consumed.Record r = out.records.get(i);
            if (!Consumed.TIMESTAMP_TYPES.contains(r.timestampType())) {
                throw new IllegalArgumentException("timestampType " + r.timestampType()
                        + ": one of " + Consumed.TIMESTAMP_TYPES);
            }
            sb.append(i == 0 ? "{\"offset\":" : ",{\"offset\":");
            quote(sb, Long.toString(r.offset()));
            sb.append(",\"timestamp\":");
            quote(sb, Long.toString(r.timestamp()));
            sb.append(",\"timestampType\":");
            quote(sb, r.timestampType());
            sb.append(",\"key\":");
            base64(sb, r.key());
            sb.append(",\"value\":");
            base64(sb, r.value());
            sb.append(",\"headers\":[");
            for (int j = 0; j < r.headers().size(); j++) {
                Consumed.Header h = r.headers().get(j);
                sb.append(j == 0 ? "{\"key\":" : ",{\"key\":");
                quote(sb, h.key());
                sb.append(",\"value\":");
                base64(sb, h.value());
                sb.append('}');
            }
            sb.append("]}");
        }
        sb.append("],\"error\":");
        if (out.error == null) {
            sb.append("null");
        } else {
            sb.append("{\"class\":");
            quote(sb, out.error.cls());
            sb.append(",\"message\":");
            quote(sb, out.error.message());
            sb.append('}');
        }
        return sb.append('}').toString();
    }

    /** Bytes: standard base64 with padding; null stays null, empty is "". */
    private static void base64(StringBuilder sb, byte[] data) {
        if (data == null) {
            sb.append("null");
        } else {
            sb.append('"').append(Base64.getEncoder().encodeToString(data)).append('"');
        }
    }

    private static void strings(StringBuilder sb, List<String> values) {
        sb.append('[');
        for (int i = 0; i < values.size(); i++) {
            sb.append(i == 0 ? "" : ",");
            quote(sb, values.get(i));
        }
        sb.append(']');
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /**
     * A JSON string (null: null): quote and backslash escaped, control characters and
     * everything outside printable ASCII as \\uXXXX escapes (a Java char is a UTF-16 unit, so
     * characters beyond U+FFFF come out as surrogate pairs, as JSON wants).
     */
    static void quote(StringBuilder sb, String s) {
        if (s == null) {
            sb.append("null");
            return;
        }
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
