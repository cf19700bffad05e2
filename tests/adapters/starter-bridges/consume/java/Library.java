/*
 * Test bridge for the Java consumer starter (tests/test_starter_sides.py): a replacement of
 * the hook whose consume() runs Kafka's own consumer ($STARTER_BRIDGE_PYTHON
 * $STARTER_BRIDGE_SCRIPT consume ..., tests/adapters/starter_bridge.py, its docstring gives
 * the line format) and fills the starter's structures from its R/E lines, so that the
 * starter's protocol side is what the test exercises.
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

final class Library {
    private Library() {}

    static final String NAME = "java-consume-starter-bridge";
    static final String VERSION = "";
    static final List<Integer> MAGICS = List.of(0, 1, 2);
    static final List<String> CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");
    static final boolean CHECKS_CRC = true;
    static final String ERROR_SEMANTICS = "streaming";
    static final String ERROR_CLASSES = "class";
    static final List<String> OMITS = List.of();
    static final Map<String, List<String>> OMITS_BY_MAGIC = Map.of();
    static final String NOTES = "";

    static Consumed consume(Consumed.Options options) throws Exception {
        Process proc = new ProcessBuilder(env("STARTER_BRIDGE_PYTHON"),
                env("STARTER_BRIDGE_SCRIPT"), "consume",
                "--bootstrap", options.bootstrap(), "--topic", options.topic(),
                "--partition", Integer.toString(options.partition()), "--from", options.start(),
                "--isolation", options.isolation(), "--timeout-ms", Integer.toString(options.timeoutMs()))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        proc.getOutputStream().close(); // nothing on its stdin
        Consumed out = new Consumed();
        try (BufferedReader lines = new BufferedReader(
                new InputStreamReader(proc.getInputStream(), StandardCharsets.US_ASCII))) {
            String line;
            while ((line = lines.readLine()) != null) {
                String[] f = line.split(" ");
                switch (f[0]) {
                    case "R" -> {
                        List<Consumed.Header> headers = new ArrayList<>();
                        for (int i = 0; i < Integer.parseInt(f[6]); i++) {
                            headers.add(new Consumed.Header(text(f[7 + 2 * i]), bytes(f[8 + 2 * i])));
                        }
                        out.records.add(new Consumed.Record(Long.parseLong(f[1]), Long.parseLong(f[2]),
                                f[3], bytes(f[4]), bytes(f[5]), headers));
                    }
                    case "E" -> out.error = new Consumed.ConsumeError(text(f[1]), text(f[2]));
                    default -> throw new IllegalStateException("unexpected line: " + line);
                }
            }
        }
        int code = proc.waitFor();
        if (code != 0) {
            throw new IllegalStateException("starter_bridge.py consume exited with " + code);
        }
        return out;
    }

    /** Hex bytes; "~" is empty, "-" is null. */
    private static byte[] bytes(String field) {
        return switch (field) {
            case "-" -> null;
            case "~" -> new byte[0];
            default -> HexFormat.of().parseHex(field);
        };
    }

    /** Hex of UTF-8; "~" is empty, "-" is null. */
    private static String text(String field) {
        byte[] raw = bytes(field);
        return raw == null ? null : new String(raw, StandardCharsets.UTF_8);
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
