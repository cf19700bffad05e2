package org.kafkaconformance.oracle;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.BufferedReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Java oracle of the Kafka conformance kit.
 *
 * <pre>
 * java -XX:-ShowCodeDetailsInExceptionMessages -jar oracle.jar decode [--as memory|file] FILE...
 *     one compact canonical JSON document per FILE, one per line, in argument order; without
 *     FILE the input is stdin (one document: the one-shot mode of docs/adapter-protocol.md)
 * java -jar oracle.jar consume --bootstrap HOST:PORT --topic T --partition P --from OFFSET|earliest
 *     Kafka's KafkaConsumer reading one partition ({@link Consumer}): one consume document
 * java -jar oracle.jar capabilities
 *     the adapter capabilities (docs/adapter-protocol.md): this is the built-in "java" adapter
 * java -XX:-ShowCodeDetailsInExceptionMessages -jar oracle.jar encode
 *     one batch spec (JSON, see {@link Encoder}) per stdin line; one output line each: the bytes
 *     Kafka's MemoryRecordsBuilder built, as hex, or {"error": "..."} / {"specError": "..."}
 * java -XX:-ShowCodeDetailsInExceptionMessages -jar oracle.jar serve
 *     framed protocol on stdin/stdout until EOF on stdin:
 *       request  = 1 byte mode (0 memory, 1 file, 2 encode, 3 consume) + int32 BE length + payload
 *       response = int32 BE length + UTF-8 body
 *     modes 0/1: payload = bytes to decode, body = the canonical JSON document;
 *     mode 2: payload = UTF-8 batch specs, one per line; body = the encode output lines joined
 *     by '\n' (no trailing newline; blank input lines are skipped);
 *     mode 3: payload = the consume command's arguments, one per line; body = its document
 * </pre>
 *
 * The JVM flag makes JVM-raised NullPointerExceptions carry a null message, as the contract
 * expects (JDK 15+ otherwise computes "helpful" messages).
 *
 * Nothing but the documents is ever written to stdout: System.out is redirected to stderr at
 * start-up and the documents go to the original stdout file descriptor.
 */
public final class Oracle {
    private static final String USAGE =
            "usage: oracle decode [--as memory|file] [FILE...]   (no FILE: decode stdin)\n"
          + "       oracle capabilities\n"
          + Consumer.USAGE
          + "       oracle encode  (stdin: one JSON batch spec per line; stdout: one hex or JSON line each)\n"
          + "       oracle serve   (framed: request = u8 mode (0 memory, 1 file, 2 encode, 3 consume) + i32 BE length\n"
          + "                       + payload; response = i32 BE length + UTF-8 body)\n";

    private Oracle() {
    }

    public static void main(String[] args) {
        OutputStream stdout = new FileOutputStream(FileDescriptor.out);
        // keep stray prints of any library (or of the JVM) away from the document stream
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        checkNpeMessages();
        int rc;
        try {
            rc = run(args, stdout);
        } catch (UsageException e) {
            System.err.println("oracle: " + e.getMessage());
            System.err.print(USAGE);
            rc = 2;
        } catch (IOException e) {
            System.err.println("oracle: I/O error: " + e);
            rc = 1;
        }
        System.exit(rc);
    }

    private static int run(String[] args, OutputStream stdout) throws IOException, UsageException {
        if (args.length == 0)
            throw new UsageException("missing command");
        switch (args[0]) {
            case "decode":
                return decodeCommand(args, stdout);
            case "encode":
                if (args.length != 1)
                    throw new UsageException("encode takes no arguments (batch specs come on stdin)");
                return encodeCommand(stdout);
            case "capabilities":
                if (args.length != 1)
                    throw new UsageException("capabilities takes no arguments");
                stdout.write(capabilities().getBytes(StandardCharsets.UTF_8));
                stdout.flush();
                return 0;
            case "consume":
                return Consumer.command(args, stdout);
            case "serve":
                if (args.length != 1)
                    throw new UsageException("serve takes no arguments");
                return serve(stdout);
            case "-h":
            case "--help":
            case "help":
                System.err.print(USAGE);
                return 0;
            default:
                throw new UsageException("unknown command: " + args[0]);
        }
    }

    private static int decodeCommand(String[] args, OutputStream stdout) throws IOException, UsageException {
        boolean fileMode = false;
        List<String> files = new ArrayList<>();
        boolean options = true;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (options && a.equals("--")) {
                options = false;
            } else if (options && (a.equals("--as") || a.startsWith("--as="))) {
                String v;
                if (a.equals("--as")) {
                    if (++i >= args.length)
                        throw new UsageException("--as needs a value (memory or file)");
                    v = args[i];
                } else {
                    v = a.substring("--as=".length());
                }
                fileMode = parseMode(v);
            } else if (options && a.startsWith("-") && a.length() > 1) {
                throw new UsageException("unknown option: " + a);
            } else {
                files.add(a);
            }
        }
        if (files.isEmpty())
            return decodeStdin(fileMode, stdout);

        // read every input up front: a missing/unreadable file is a usage error, not a verdict
        List<byte[]> contents = new ArrayList<>(files.size());
        for (String f : files) {
            Path p = Path.of(f);
            if (!Files.isRegularFile(p))
                throw new UsageException("not a regular file: " + f);
            contents.add(Files.readAllBytes(p));
        }

        OutputStream out = new BufferedOutputStream(stdout, 1 << 16);
        for (int i = 0; i < files.size(); i++) {
            // the File is built from the argument as given: Kafka's file-mode messages print it
            String json = Decoder.decode(contents.get(i), fileMode, new File(files.get(i)));
            out.write(json.getBytes(StandardCharsets.UTF_8));
            out.write('\n');
        }
        out.flush();
        return 0;
    }

    /** One-shot adapter mode: the input on stdin, one document on stdout. */
    private static int decodeStdin(boolean fileMode, OutputStream stdout) throws IOException {
        byte[] input = System.in.readAllBytes();
        String json;
        if (fileMode) {
            // FileRecords needs a file: a private temporary copy, deleted afterwards
            Path tmp = Files.createTempFile("kafka-conformance-oracle-", ".log");
            try {
                Files.write(tmp, input);
                json = Decoder.decode(input, true, tmp.toFile());
            } finally {
                Files.deleteIfExists(tmp);
            }
        } else {
            json = Decoder.decode(input, false, null);
        }
        stdout.write(json.getBytes(StandardCharsets.UTF_8));
        stdout.write('\n');
        stdout.flush();
        return 0;
    }

    /** The capabilities document of the built-in "java" adapter (docs/adapter-protocol.md). */
    static String capabilities() {
        String version = org.apache.kafka.common.utils.AppInfoParser.getVersion();
        return "{\"name\":\"java\",\"version\":\"kafka-clients " + version + "\","
                + "\"magics\":[0,1,2],\"codecs\":[\"none\",\"gzip\",\"snappy\",\"lz4\",\"zstd\"],"
                + "\"checks_crc\":true,\"error_semantics\":\"streaming\",\"file_semantics\":true,"
                + "\"error_classes\":\"exact\",\"omits\":[],\"persistent\":true,"
                + "\"notes\":\"Apache Kafka's own classes (MemoryRecords, FileRecords, streamingIterator),"
                + " the reference\"}\n";
    }

    private static int encodeCommand(OutputStream stdout) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        OutputStream out = new BufferedOutputStream(stdout, 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank())
                continue;
            out.write(Encoder.encodeLine(line).getBytes(StandardCharsets.UTF_8));
            out.write('\n');
        }
        out.flush();
        return 0;
    }

    private static String encodeLines(byte[] payload) {
        StringBuilder sb = new StringBuilder();
        boolean first = true;
        for (String line : new String(payload, StandardCharsets.UTF_8).split("\n")) {
            if (line.isBlank())
                continue;
            if (!first)
                sb.append('\n');
            first = false;
            sb.append(Encoder.encodeLine(line));
        }
        return sb.toString();
    }

    private static boolean parseMode(String v) throws UsageException {
        switch (v) {
            case "memory":
                return false;
            case "file":
                return true;
            default:
                throw new UsageException("--as must be memory or file, not " + v);
        }
    }

    private static int serve(OutputStream stdout) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(stdout, 1 << 16));
        Path tmp = null;
        try {
            while (true) {
                int mode = in.read();
                if (mode < 0)
                    return 0; // clean EOF between requests
                int length;
                byte[] payload;
                try {
                    length = in.readInt();
                    if (length < 0) {
                        System.err.println("oracle serve: negative payload length " + length);
                        return 2;
                    }
                    payload = in.readNBytes(length);
                } catch (EOFException e) {
                    System.err.println("oracle serve: EOF inside a request frame");
                    return 2;
                }
                if (payload.length != length) {
                    System.err.println("oracle serve: EOF inside a request payload");
                    return 2;
                }
                String json;
                if (mode == 0) {
                    json = Decoder.decode(payload, false, null);
                } else if (mode == 1) {
                    if (tmp == null) {
                        tmp = Files.createTempFile("kafka-conformance-oracle-", ".log");
                        tmp.toFile().deleteOnExit();
                    }
                    Files.write(tmp, payload, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING,
                            StandardOpenOption.CREATE);
                    json = Decoder.decode(payload, true, tmp.toFile());
                } else if (mode == 2) {
                    json = encodeLines(payload);
                } else if (mode == 3) {
                    json = consumeLine(payload);
                } else {
                    System.err.println("oracle serve: unknown mode byte " + mode);
                    return 2;
                }
                byte[] body = json.getBytes(StandardCharsets.UTF_8);
                out.writeInt(body.length);
                out.write(body);
                out.flush();
            }
        } finally {
            out.flush();
            if (tmp != null)
                Files.deleteIfExists(tmp);
        }
    }

    /**
     * One {@code consume} in this JVM: the payload is its arguments, one per line (UTF-8),
     * the answer its document; a usage error is answered {"format": "usage", "message": ...}.
     */
    private static String consumeLine(byte[] payload) throws IOException {
        String[] args = ("consume\n" + new String(payload, StandardCharsets.UTF_8)).split("\n", -1);
        java.io.ByteArrayOutputStream doc = new java.io.ByteArrayOutputStream();
        try {
            Consumer.command(args, doc);
        } catch (UsageException | NumberFormatException e) {
            JsonWriter w = new JsonWriter();
            w.beginObject().name("format").value("usage").name("message").value(String.valueOf(e.getMessage()))
                    .endObject();
            return w.toString();
        }
        return doc.toString(StandardCharsets.UTF_8).trim();
    }

    /** Warns (on stderr) when JVM-raised NullPointerExceptions carry "helpful" messages. */
    private static void checkNpeMessages() {
        try {
            Object o = null;
            o.hashCode();
        } catch (NullPointerException e) {
            if (e.getMessage() != null)
                System.err.println("oracle: warning: run the JVM with -XX:-ShowCodeDetailsInExceptionMessages;"
                        + " NullPointerException messages will not be null as the contract expects");
        }
    }

    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }
}
