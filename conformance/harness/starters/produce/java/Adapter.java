/*
 * Adapter.java - the protocol side of a kafka-conformance producer adapter (Java 17, JDK only).
 *
 * You should not need to edit this file: call your library in Library.java (the hook) and
 * declare its capabilities there; Plan.java holds the structures (and reads the plan). This
 * file does the rest of docs/adapter-protocol.md ("Producer side"):
 *
 *   java -cp build Adapter capabilities                  the hook's constants as one JSON object
 *   java -cp build Adapter produce --bootstrap 127.0.0.1:9092 --plan sample-plan.json
 *                                                        the produce-result document
 *   java -cp build Adapter encode --plan sample-plan.json > batch.bin
 *                                                        the batch's raw bytes
 *
 * Build (from this directory):  javac -d build Adapter.java Plan.java Library.java
 * Check:  kafka-conformance check-producer --cmd "java -cp $PWD/build Adapter"
 *
 * Exit codes: 0 with the document (produce; also when records failed: that is a verdict) or
 * the batch's bytes (encode) on stdout; 2 for a usage error or a plan that cannot be read; 3
 * when the hook failed (a crash of the library is no verdict; encode: the library refused the
 * plan): the reason goes to stderr, nothing to stdout.
 */

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class Adapter {
    /** The contract id of the document {@code produce} prints. */
    public static final String RESULT_FORMAT = "kafka-conformance/produce-result/1";

    private static final String USAGE = """
            usage: Adapter capabilities
                   Adapter produce --bootstrap HOST:PORT --plan FILE
                   Adapter encode --plan FILE
            """;

    private Adapter() {}

    /**
     * What one side (produce or encode) offers, written as the capabilities' "produce" or
     * "encode" object (Library.PRODUCE, Library.ENCODE; the keys are described there).
     * partitioner and defaults are read on the produce side only: null leaves them out.
     */
    record Side(List<String> codecs, boolean idempotence, boolean transactions, boolean headers,
            List<Integer> magics, String partitioner, Defaults defaults, String notes,
            String batching) {

        /** A side that does not declare batching (the kit then assumes "linger"). */
        Side(List<String> codecs, boolean idempotence, boolean transactions, boolean headers,
                List<Integer> magics, String partitioner, Defaults defaults, String notes) {
            this(codecs, idempotence, transactions, headers, magics, partitioner, defaults, notes,
                    null);
        }
    }

    /**
     * The library's real producer defaults (enable.idempotence, acks, linger.ms, batch.size);
     * {@link #NONE} as lingerMs or batchSize: the library has no such setting ("none").
     */
    record Defaults(boolean idempotence, int acks, int lingerMs, int batchSize) {
        static final int NONE = -1;
    }

    /** A command line that is not one of USAGE's, or a plan that cannot be read. */
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
        List<String> needed = switch (command) {
            case "capabilities" -> List.of();
            case "produce" -> List.of("--bootstrap", "--plan");
            case "encode" -> List.of("--plan");
            default -> null;
        };
        if (needed == null) {
            System.err.print(USAGE);
            return 2;
        }
        Map<String, String> arguments;
        Plan plan = null;
        try {
            arguments = readArguments(args, needed);
            if (arguments.containsKey("--plan")) {
                plan = readPlanFile(arguments.get("--plan"));
            }
        } catch (UsageError e) {
            System.err.print("Adapter: " + e.getMessage() + "\n" + USAGE);
            return 2;
        }
        byte[] out;
        try {
            out = switch (command) {
                case "produce" -> document(Library.produce(arguments.get("--bootstrap"), plan), plan)
                        .getBytes(StandardCharsets.US_ASCII);
                case "encode" -> encoded(Library.encode(plan));
                default -> capabilities().getBytes(StandardCharsets.US_ASCII);
            };
        } catch (Throwable e) { // any exception or error of the hook or its library
            // A crash of the hook is not a verdict: say why on stderr, print nothing on stdout.
            System.err.println(command.equals("capabilities") ? "Library's capabilities failed:"
                    : "Library." + command + " failed:");
            e.printStackTrace(System.err);
            return 3;
        }
        try {
            stdout.write(out);
            stdout.flush();
        } catch (IOException e) {
            System.err.println("Adapter: cannot write to stdout: " + e);
            return 1;
        }
        return 0;
    }

    /** {@code --flag value} pairs after the command: exactly the flags {@code needed}. */
    static Map<String, String> readArguments(String[] args, List<String> needed) throws UsageError {
        Map<String, String> values = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!needed.contains(args[i]) || i + 1 >= args.length) {
                throw new UsageError("unknown option or missing value: " + args[i]);
            }
            values.put(args[i], args[i + 1]);
        }
        for (String flag : needed) {
            if (!values.containsKey(flag)) {
                throw new UsageError("missing " + flag);
            }
        }
        return values;
    }

    static Plan readPlanFile(String path) throws UsageError {
        try {
            return Plan.read(Files.readAllBytes(Path.of(path)));
        } catch (Plan.Invalid e) {
            throw new UsageError(path + ": cannot read the plan: " + e.getMessage());
        } catch (IOException | RuntimeException e) {
            throw new UsageError(path + ": cannot read the plan: " + e);
        }
    }

    private static byte[] encoded(byte[] batch) {
        if (batch == null) {
            throw new NullPointerException("Library.encode returned null");
        }
        return batch;
    }

    // ---------------------------------------------------------------------------------------
    // The JSON documents.
    // ---------------------------------------------------------------------------------------

    /** The produce-result document (contract RESULT_FORMAT): one entry per plan record. */
    static String document(Plan.Produced out, Plan plan) {
        if (out == null) {
            throw new NullPointerException("Library.produce returned null");
        }
        if (out.records.size() != plan.records().size()) {
            throw new IllegalStateException("the hook reported " + out.records.size()
                    + " records for a plan of " + plan.records().size());
        }
        StringBuilder sb = new StringBuilder(256);
        sb.append("{\"format\":");
        quote(sb, RESULT_FORMAT);
        sb.append(",\"records\":[");
        for (int i = 0; i < out.records.size(); i++) {
            Plan.Delivery d = out.records.get(i);
            sb.append(i == 0 ? "" : ",").append("{\"partition\":").append(d.partition())
                    .append(",\"offset\":").append(d.offset()).append(",\"error\":");
            quote(sb, d.error());
            sb.append('}');
        }
        sb.append("],\"error\":");
        quote(sb, out.error);
        return sb.append("}\n").toString();
    }

    /**
     * The producer side's capabilities: a "produce" and an "encode" object (either left out
     * when the hook sets it to null: that side is not offered).
     */
    static String capabilities() {
        StringBuilder sb = new StringBuilder(512);
        sb.append("{\"name\":");
        quote(sb, Library.NAME);
        sb.append(",\"version\":");
        quote(sb, Library.VERSION);
        side(sb, "produce", Library.PRODUCE);
        side(sb, "encode", Library.ENCODE);
        return sb.append("}\n").toString();
    }

    private static void side(StringBuilder sb, String name, Side side) {
        if (side == null) {
            return;
        }
        sb.append(",\"").append(name).append("\":{\"codecs\":[");
        for (int i = 0; i < side.codecs().size(); i++) {
            sb.append(i == 0 ? "" : ",");
            quote(sb, side.codecs().get(i));
        }
        sb.append("],\"idempotence\":").append(side.idempotence())
                .append(",\"transactions\":").append(side.transactions())
                .append(",\"headers\":").append(side.headers())
                .append(",\"magics\":[");
        for (int i = 0; i < side.magics().size(); i++) {
            sb.append(i == 0 ? "" : ",").append(side.magics().get(i).intValue());
        }
        sb.append(']');
        if (side.partitioner() != null) {
            sb.append(",\"partitioner\":");
            quote(sb, side.partitioner());
        }
        Defaults d = side.defaults();
        if (d != null) {
            sb.append(",\"defaults\":{\"idempotence\":").append(d.idempotence())
                    .append(",\"acks\":").append(d.acks())
                    .append(",\"linger_ms\":").append(setting(d.lingerMs()))
                    .append(",\"batch_size\":").append(setting(d.batchSize())).append('}');
        }
        if (side.batching() != null) {
            sb.append(",\"batching\":");
            quote(sb, side.batching());
        }
        sb.append(",\"notes\":");
        quote(sb, side.notes() == null ? "" : side.notes());
        sb.append('}');
    }

    /** A default's JSON: the number, or "none" for Defaults.NONE. */
    private static String setting(int value) {
        return value == Defaults.NONE ? "\"none\"" : Integer.toString(value);
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
