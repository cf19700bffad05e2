/*
 * Test bridge for the Java producer starter (tests/test_starter_sides.py): a replacement of
 * the hook that writes the plan the starter read back as P/S/R/B lines to Kafka's own producer
 * and batch builder ($STARTER_BRIDGE_PYTHON $STARTER_BRIDGE_SCRIPT produce BOOTSTRAP | encode,
 * tests/adapters/starter_bridge.py, its docstring gives the line format) and fills the
 * starter's structures from the D/F/X answer, so that the starter's protocol side (the plan it
 * reads, the document it writes) is what the test exercises.
 */

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

final class Library {
    private Library() {}

    static final String NAME = "java-produce-starter-bridge";
    static final String VERSION = "";
    static final Adapter.Side PRODUCE = new Adapter.Side(
            List.of("none", "gzip", "snappy", "lz4", "zstd"), true, true, true, List.of(2),
            "java", new Adapter.Defaults(true, -1, 5, 16384), "");
    static final Adapter.Side ENCODE = new Adapter.Side(
            List.of("none", "gzip", "snappy", "lz4", "zstd"), true, true, true, List.of(2),
            null, null, "");

    static Plan.Produced produce(String bootstrap, Plan plan) throws Exception {
        Plan.Produced out = new Plan.Produced();
        for (String[] f : bridge(plan, "produce", bootstrap)) {
            switch (f[0]) {
                case "D" -> out.records.add(new Plan.Delivery(
                        f[1].equals("-") ? null : Integer.valueOf(f[1]),
                        f[2].equals("-") ? null : Long.valueOf(f[2]), textOf(f[3])));
                case "F" -> out.error = textOf(f[1]);
                default -> throw new IllegalStateException("unexpected line: " + String.join(" ", f));
            }
        }
        return out;
    }

    static byte[] encode(Plan plan) throws Exception {
        List<String[]> lines = bridge(plan, "encode");
        if (lines.size() != 1 || !lines.get(0)[0].equals("X") || lines.get(0).length != 2) {
            throw new IllegalStateException("starter_bridge.py encode: expected one X line");
        }
        return HexFormat.of().parseHex(lines.get(0)[1]);
    }

    /** Runs starter_bridge.py with the plan's lines on stdin; its lines, split. */
    private static List<String[]> bridge(Plan plan, String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of(env("STARTER_BRIDGE_PYTHON"),
                env("STARTER_BRIDGE_SCRIPT")));
        argv.addAll(List.of(args));
        Process proc = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        byte[] input = lines(plan).getBytes(StandardCharsets.US_ASCII);
        Thread feeder = new Thread(() -> {
            try (OutputStream in = proc.getOutputStream()) {
                in.write(input);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        feeder.start();
        List<String[]> out = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(proc.getInputStream(), StandardCharsets.US_ASCII))) {
            String line;
            while ((line = reader.readLine()) != null) {
                out.add(line.split(" "));
            }
        }
        feeder.join();
        int code = proc.waitFor();
        if (code != 0) {
            throw new IllegalStateException("starter_bridge.py " + args[0] + " exited with " + code);
        }
        return out;
    }

    /** The plan as P/S/R/B lines. */
    private static String lines(Plan plan) {
        Plan.Settings s = plan.settings();
        Plan.Transaction txn = s.transaction();
        StringBuilder sb = new StringBuilder();
        sb.append("P ").append(text(plan.scenario())).append(' ').append(text(plan.topic()))
                .append(' ').append(plan.partitions()).append('\n');
        sb.append("S ").append(s.codec()).append(' ').append(s.idempotence() ? 1 : 0)
                .append(' ').append(s.acks()).append(' ').append(s.lingerMs())
                .append(' ').append(s.batchSize()).append(' ').append(s.maxRequestSize())
                .append(' ').append(s.timeoutMs())
                .append(' ').append(txn == null ? "-" : text(txn.id()))
                .append(' ').append(txn == null ? "-" : txn.end()).append('\n');
        for (Plan.PlanRecord r : plan.records()) {
            sb.append("R ").append(hex(r.key())).append(' ').append(hex(r.value()))
                    .append(' ').append(r.timestamp() == null ? "-" : r.timestamp().toString())
                    .append(' ').append(r.partition() == null ? "-" : r.partition().toString())
                    .append(' ').append(r.headers().size());
            for (Plan.Header h : r.headers()) {
                sb.append(' ').append(text(h.key())).append(' ').append(hex(h.value()));
            }
            sb.append('\n');
        }
        Plan.BatchFields b = plan.batch();
        if (b != null) {
            sb.append("B ").append(b.magic()).append(' ').append(b.baseOffset())
                    .append(' ').append(b.producerId()).append(' ').append(b.producerEpoch())
                    .append(' ').append(b.baseSequence()).append(' ').append(b.transactional() ? 1 : 0)
                    .append(' ').append(b.partitionLeaderEpoch()).append('\n');
        }
        return sb.toString();
    }

    /** Bytes as hex; "~" for empty, "-" for null. */
    private static String hex(byte[] data) {
        return data == null ? "-" : data.length == 0 ? "~" : HexFormat.of().formatHex(data);
    }

    /** A string as hex of UTF-8 ("~" empty, "-" null). */
    private static String text(String s) {
        return s == null ? "-" : hex(s.getBytes(StandardCharsets.UTF_8));
    }

    /** Hex of UTF-8 back to a string ("~" empty, "-" null). */
    private static String textOf(String field) {
        return switch (field) {
            case "-" -> null;
            case "~" -> "";
            default -> new String(HexFormat.of().parseHex(field), StandardCharsets.UTF_8);
        };
    }

    /** A variable the test sets (tests/test_starter_sides.py). */
    private static String env(String name) {
        String value = System.getenv(name);
        if (value == null) {
            throw new IllegalStateException(name + " is not set (the test sets it)");
        }
        return value;
    }
}
