package org.kafkaconformance.brokeroracle;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Utils;

/**
 * The broker oracle: what a real Kafka broker of one version answers to one partition's records
 * in a Produce request, by running that version's own classes (see {@code KafkaBroker} of the
 * version's source set). JSON lines over stdin/stdout, one request object per line, one response
 * object per line (docs/broker-oracle.md):
 *
 * <pre>
 * {"op": "produce", "session": "s", "produceVersion": 9, "now": "1700000000000", "leaderEpoch": 0,
 *  "topic": {...topic config...}, "broker": {...broker config...}, "records": "base64",
 *  "transactionalId": "id" (optional; null: the request has none),
 *  "coordinator": "NONE" (optional: the transaction coordinator's answer to a verification, an Errors name)}
 * {"op": "reset", "session": "s"}            -> {"ok": true}
 * {"op": "murmur2", "keys": ["base64", ...]} -> {"hashes": [int, ...]}
 * {"op": "version", "broker": {...}}         -> {"kafka": "3.9.2", "produceVersions": [min, max], ...}
 * </pre>
 *
 * A line that is not a valid request gets {@code {"protocolError": "..."}}, a failure of the
 * oracle itself {@code {"internalError": "..."}}; the JVM goes on either way. Anything Kafka's
 * code throws for the records is an answer, never a crash.
 *
 * <p>Usage: {@code BrokerOracle serve LOG_ROOT} (LOG_ROOT: an existing directory, the oracle's
 * own; each session gets LOG_ROOT/session-N/t-0, deleted on reset; at the end of input or on
 * SIGTERM the sessions and LOG_ROOT itself, if then empty, are deleted).
 */
public final class BrokerOracle {
    /** The transactional id of a request that does not say: what a correct client sends. */
    static final String DEFAULT_TRANSACTIONAL_ID = "broker-oracle";

    private static final class ProtocolError extends Exception {
        private static final long serialVersionUID = 1L;

        ProtocolError(String message) {
            super(message);
        }
    }

    private static final class Session {
        final File dir;
        final Map<String, String> topic;
        final Map<String, String> broker;
        final Broker.PartitionLog log;

        Session(File dir, Map<String, String> topic, Map<String, String> broker, Broker.PartitionLog log) {
            this.dir = dir;
            this.topic = topic;
            this.broker = broker;
            this.log = log;
        }
    }

    private final File root;
    private final Broker broker = new KafkaBroker();
    private final OracleTime time = new OracleTime(0L);
    private final Map<String, Session> sessions = new LinkedHashMap<>();
    private int nextSession;

    private BrokerOracle(File root) {
        this.root = root;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2 || !args[0].equals("serve")) {
            System.err.println("usage: BrokerOracle serve LOG_ROOT");
            System.exit(2);
        }
        File root = new File(args[1]).getAbsoluteFile();
        if (!root.isDirectory()) {
            System.err.println("broker oracle: not a directory: " + root);
            System.exit(2);
        }
        // the protocol owns stdout: anything else that prints goes to stderr
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        BrokerOracle oracle = new BrokerOracle(root);
        Thread cleanup = new Thread(oracle::deleteSessionDirs, "broker-oracle-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank())
                continue;
            out.print(oracle.answer(line) + "\n");
            out.flush();
        }
        oracle.closeAll();
        System.exit(0);
    }

    /** One response line for one request line; never throws. */
    private String answer(String line) {
        try {
            return Json.write(handle(line));
        } catch (ProtocolError e) {
            return Json.write(Map.of("protocolError", e.getMessage()));
        } catch (Broker.OracleFailure e) {
            e.printStackTrace();
            return Json.write(Map.of("internalError", String.valueOf(e.getMessage())));
        } catch (Throwable t) { // the oracle's own failure (e.g. out of memory writing the answer)
            System.err.println("broker oracle: internal error");
            t.printStackTrace();
            return "{\"internalError\":" + Json.write(String.valueOf(t)) + "}";
        }
    }

    private Map<String, Object> handle(String line) throws Exception {
        Object parsed;
        try {
            parsed = Json.read(line);
        } catch (Json.JsonException e) {
            throw new ProtocolError("malformed JSON: " + e.getMessage());
        }
        if (!(parsed instanceof Map))
            throw new ProtocolError("a request is a JSON object");
        @SuppressWarnings("unchecked")
        Map<String, Object> request = (Map<String, Object>) parsed;
        String op = string(request, "op", null);
        if (op == null)
            throw new ProtocolError("missing \"op\"");
        switch (op) {
            case "produce":
                return produce(request);
            case "reset":
                reset(string(request, "session", "default"));
                return Map.of("ok", true);
            case "murmur2":
                return murmur2(request);
            case "version":
                return broker.describe(stringMap(request, "broker"));
            default:
                throw new ProtocolError("unknown op: " + op);
        }
    }

    private Map<String, Object> produce(Map<String, Object> request) throws Exception {
        String name = string(request, "session", "default");
        long version = integer(request, "produceVersion", null);
        if (version < Short.MIN_VALUE || version > Short.MAX_VALUE)
            throw new ProtocolError("produceVersion is an INT16: " + version);
        long now = integer(request, "now", null);
        long leaderEpoch = integer(request, "leaderEpoch", 0L);
        if (leaderEpoch < Integer.MIN_VALUE || leaderEpoch > Integer.MAX_VALUE)
            throw new ProtocolError("leaderEpoch is an INT32: " + leaderEpoch);
        Map<String, String> topic = stringMap(request, "topic");
        Map<String, String> brokerConfig = stringMap(request, "broker");
        String records = string(request, "records", null);
        if (records == null)
            throw new ProtocolError("missing \"records\" (base64)");
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(records);
        } catch (IllegalArgumentException e) {
            throw new ProtocolError("\"records\" is not base64: " + e.getMessage());
        }
        String transactionalId = DEFAULT_TRANSACTIONAL_ID;
        if (request.containsKey("transactionalId"))
            transactionalId = string(request, "transactionalId", null);
        String coordinatorName = string(request, "coordinator", "NONE");
        Errors coordinator;
        try {
            coordinator = Errors.valueOf(coordinatorName);
        } catch (IllegalArgumentException e) {
            throw new ProtocolError("\"coordinator\" is not an error name of this Kafka version's Errors: "
                    + coordinatorName);
        }

        time.set(now);
        Session session = session(name, topic, brokerConfig);
        return session.log.produce((short) version, transactionalId, bytes, (int) leaderEpoch, coordinator)
                .toJson();
    }

    /** The session's log, created on first use; later requests must bring the same config. */
    private Session session(String name, Map<String, String> topic, Map<String, String> brokerConfig)
            throws ProtocolError {
        Session s = sessions.get(name);
        if (s != null) {
            if (!s.topic.equals(topic) || !s.broker.equals(brokerConfig))
                throw new ProtocolError("session \"" + name + "\" was created with topic config " + s.topic
                        + " and broker config " + s.broker + "; this request has topic config " + topic
                        + " and broker config " + brokerConfig + " (reset the session to change them)");
            return s;
        }
        File dir = new File(root, "session-" + nextSession++);
        File logDir = new File(dir, Broker.TOPIC + "-" + Broker.PARTITION);
        try {
            Files.createDirectories(dir.toPath());
            Broker.PartitionLog log = broker.open(logDir, topic, brokerConfig, time);
            s = new Session(dir, topic, brokerConfig, log);
        } catch (Exception | LinkageError e) {
            deleteTree(dir);
            throw new ProtocolError("cannot create session \"" + name + "\": " + e.getClass().getName()
                    + ": " + e.getMessage());
        }
        sessions.put(name, s);
        return s;
    }

    private void reset(String name) {
        Session s = sessions.remove(name);
        if (s != null)
            closeAndDelete(s);
    }

    private void closeAll() {
        for (Session s : new ArrayList<>(sessions.values()))
            closeAndDelete(s);
        sessions.clear();
    }

    private static void closeAndDelete(Session s) {
        try {
            s.log.close();
        } catch (Throwable t) {
            System.err.println("broker oracle: closing " + s.dir + ": " + t);
        }
        deleteTree(s.dir);
    }

    /** Shutdown hook (e.g. SIGTERM): the session directories go, whatever state the logs are in. */
    private void deleteSessionDirs() {
        File[] dirs = root.listFiles((d, n) -> n.startsWith("session-"));
        if (dirs != null)
            for (File d : dirs)
                deleteTree(d);
        root.delete(); // only if empty
    }

    private static void deleteTree(File dir) {
        if (!dir.exists())
            return;
        try (Stream<Path> paths = Files.walk(dir.toPath())) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            System.err.println("broker oracle: cannot delete " + dir + ": " + e);
        }
    }

    private static Map<String, Object> murmur2(Map<String, Object> request) throws ProtocolError {
        Object keys = request.get("keys");
        if (!(keys instanceof List))
            throw new ProtocolError("\"keys\" is a list of base64 strings");
        List<Object> hashes = new ArrayList<>();
        for (Object k : (List<?>) keys) {
            if (!(k instanceof String))
                throw new ProtocolError("\"keys\" is a list of base64 strings");
            byte[] key;
            try {
                key = Base64.getDecoder().decode((String) k);
            } catch (IllegalArgumentException e) {
                throw new ProtocolError("a key is not base64: " + e.getMessage());
            }
            hashes.add(Utils.murmur2(key));
        }
        return Map.of("hashes", hashes);
    }

    // ------------------------------------------------------------------------------------
    // request members

    private static String string(Map<String, Object> m, String key, String dflt) throws ProtocolError {
        if (!m.containsKey(key))
            return dflt;
        Object v = m.get(key);
        if (v != null && !(v instanceof String))
            throw new ProtocolError("\"" + key + "\" is a string");
        return (String) v;
    }

    /** An integer given as a JSON number or a decimal string (64-bit values are strings). */
    private static long integer(Map<String, Object> m, String key, Long dflt) throws ProtocolError {
        Object v = m.get(key);
        if (v == null) {
            if (dflt == null)
                throw new ProtocolError("missing \"" + key + "\"");
            return dflt;
        }
        if (!(v instanceof String) && !(v instanceof Json.Num))
            throw new ProtocolError("\"" + key + "\" is an integer");
        try {
            return Long.parseLong(v.toString());
        } catch (NumberFormatException e) {
            throw new ProtocolError("\"" + key + "\" is not a 64-bit integer: " + v);
        }
    }

    private static Map<String, String> stringMap(Map<String, Object> m, String key) throws ProtocolError {
        Object v = m.get(key);
        Map<String, String> out = new LinkedHashMap<>();
        if (v == null)
            return out;
        if (!(v instanceof Map))
            throw new ProtocolError("\"" + key + "\" is an object of strings");
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
            if (!(e.getValue() instanceof String))
                throw new ProtocolError("\"" + key + "\"." + e.getKey() + " is a string (configs are strings)");
            out.put((String) e.getKey(), (String) e.getValue());
        }
        return out;
    }
}
