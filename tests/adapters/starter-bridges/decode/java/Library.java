/*
 * Test bridge for the Java starter (tests/test_init_adapter.py): replaces the starter's hook
 * with a correct decoder, the kit's reference decoder run as a subprocess
 * ($STARTER_BRIDGE_PYTHON $STARTER_BRIDGE_SCRIPT mode), whose B/R/C/E lines
 * (tests/adapters/starter_bridge.py) are turned into the starter's structures. What is tested
 * is the starter's protocol file.
 */

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

final class Library {
    private Library() {}

    static final String NAME = "java-starter-bridge";
    static final String VERSION = "";
    static final List<Integer> MAGICS = List.of(0, 1, 2);
    static final List<String> CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");
    static final boolean CHECKS_CRC = true;
    static final String ERROR_SEMANTICS = "streaming";
    static final boolean FILE_SEMANTICS = true;
    static final String ERROR_CLASSES = "class";
    static final boolean LISTS_FAILING_BATCH = true;
    static final List<String> OMITS = List.of();
    static final String NOTES = "";

    static Adapter.Decoded decode(byte[] data, String mode) throws Exception {
        Process proc = new ProcessBuilder(System.getenv("STARTER_BRIDGE_PYTHON"),
                System.getenv("STARTER_BRIDGE_SCRIPT"), mode)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        Thread feeder = new Thread(() -> {
            try (OutputStream in = proc.getOutputStream()) {
                in.write(data);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        feeder.start();
        Adapter.Decoded result = new Adapter.Decoded();
        try (BufferedReader out = new BufferedReader(
                new InputStreamReader(proc.getInputStream(), StandardCharsets.US_ASCII))) {
            String line;
            while ((line = out.readLine()) != null) {
                parse(line.split(" "), result);
            }
        }
        feeder.join();
        int code = proc.waitFor();
        if (code != 0) {
            throw new IllegalStateException("starter_bridge.py exited with " + code);
        }
        return result;
    }

    private static void parse(String[] f, Adapter.Decoded result) {
        List<Adapter.Batch> batches = result.batches;
        switch (f[0]) {
            case "B" -> {
                Adapter.Batch b = new Adapter.Batch();
                b.position = Integer.parseInt(f[1]);
                b.sizeInBytes = Integer.parseInt(f[2]);
                b.magic = Integer.parseInt(f[3]);
                b.crc = Long.parseLong(f[4]);
                b.attributes = Integer.parseInt(f[5]);
                b.compression = f[6];
                b.timestampType = f[7];
                b.lastOffset = Long.parseLong(f[8]);
                b.maxTimestamp = Long.parseLong(f[9]);
                if (b.magic >= 2) {
                    b.baseOffset = Long.parseLong(f[10]);
                    b.lastOffsetDelta = Integer.parseInt(f[11]);
                    b.partitionLeaderEpoch = Integer.parseInt(f[12]);
                    b.baseTimestamp = Long.parseLong(f[13]);
                    b.deleteHorizonMs = f[14].equals("-") ? null : Long.valueOf(f[14]);
                    b.isTransactional = f[15].equals("1");
                    b.isControl = f[16].equals("1");
                    b.producerId = Long.parseLong(f[17]);
                    b.producerEpoch = Integer.parseInt(f[18]);
                    b.baseSequence = Integer.parseInt(f[19]);
                    b.lastSequence = Integer.parseInt(f[20]);
                    b.recordsCount = Integer.parseInt(f[21]);
                }
                batches.add(b);
            }
            case "R" -> {
                Adapter.Record r = new Adapter.Record();
                r.offset = Long.parseLong(f[1]);
                r.timestamp = Long.parseLong(f[2]);
                r.key = bytes(f[3]);
                r.value = bytes(f[4]);
                int count = Integer.parseInt(f[5]);
                for (int i = 0; i < count; i++) {
                    r.headers.add(new Adapter.Header(text(f[6 + 2 * i]), bytes(f[7 + 2 * i])));
                }
                batches.get(batches.size() - 1).records.add(r);
            }
            case "C" -> {
                List<Adapter.Record> records = batches.get(batches.size() - 1).records;
                records.get(records.size() - 1).control = new Adapter.Control(Integer.parseInt(f[1]),
                        text(f[2]), f[3].equals("-") ? null : Integer.valueOf(f[3]));
            }
            case "E" -> result.error = new Adapter.DecodeError(text(f[1]), text(f[2]),
                    Integer.parseInt(f[3]), Integer.parseInt(f[4]));
            default -> throw new IllegalStateException("unexpected line: " + String.join(" ", f));
        }
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
}
