package org.kafkaconformance.brokeroracle;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.ProduceResponse;

/**
 * One Kafka version's broker, as far as one partition's records in a Produce request go. Each
 * API generation has its own implementation, {@code KafkaBroker} (oracle/broker/kafka-2.8,
 * kafka-3, kafka-4), compiled against that version's jars; this file and the rest of
 * oracle/broker/common use only the JDK and kafka-clients classes that every supported version
 * has unchanged ({@code Time}, {@code Utils.murmur2}, {@code ApiError},
 * {@code ProduceResponse.PartitionResponse}).
 */
interface Broker {
    /** The topic-partition every session's log holds: error messages name it "t-0". */
    String TOPIC = "t";
    int PARTITION = 0;

    /**
     * {@code {"kafka": version, "produceVersions": [min, max] accepted, "advertisedProduceVersions":
     * [min, max] in ApiVersions, "sourceSet": ...}} for a broker with {@code brokerConfig}.
     */
    Map<String, Object> describe(Map<String, String> brokerConfig) throws Exception;

    /**
     * A new, empty log for "t-0" in the fresh directory {@code logDir} (its parent is the
     * broker's log.dirs entry), made as that version's LogManager makes it.
     *
     * @throws IllegalArgumentException when the topic or broker config is invalid (the caller
     *     answers with a protocolError)
     */
    PartitionLog open(File logDir, Map<String, String> topic, Map<String, String> broker, OracleTime time)
            throws Exception;

    /** One partition's log with its producer state; used by one thread at a time. */
    interface PartitionLog {
        /**
         * What the broker answers to {@code records} as this partition's data in a Produce request;
         * {@code coordinator}: what the transaction coordinator answers when the broker asks it
         * whether the partition is in the producer's transaction (KIP-890, 3.6+; NONE: it is).
         */
        Answer produce(short produceVersion, String transactionalId, byte[] records, int leaderEpoch,
                org.apache.kafka.common.protocol.Errors coordinator);

        void close();
    }

    /**
     * A static method of Kafka's own (a compiler-named lambda body where Kafka keeps the logic
     * there), found by reflection; an OracleFailure when that Kafka version has it elsewhere.
     */
    static java.lang.reflect.Method kafkaMethod(Class<?> owner, String name, Class<?>... parameters) {
        try {
            return owner.getMethod(name, parameters);
        } catch (NoSuchMethodException e) {
            throw new OracleFailure(owner.getSimpleName() + "." + name + " is not where it was: " + e, e);
        }
    }

    /** Calls a static {@link #kafkaMethod}; a failure to call it is an OracleFailure. */
    static Object invokeStatic(java.lang.reflect.Method method, Object... args) {
        try {
            return method.invoke(null, args);
        } catch (ReflectiveOperationException e) {
            throw new OracleFailure("calling " + method.getName() + ": " + e, e);
        }
    }

    /**
     * A failure of the oracle itself (not an answer of Kafka's code): the request gets an
     * internalError, never an answer that could be mistaken for the broker's.
     */
    final class OracleFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        OracleFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The bytes an append added to the log. */
    final class Appended {
        private Appended() {}

        /**
         * For each segment from the one that was active before the append ({@code activeBase},
         * then {@code activeSize} bytes long), its file's bytes from the old size (0 for a segment
         * the append rolled) to its size now; null when that is nothing.
         */
        static <S> byte[] read(Iterable<S> segments, long activeBase, long activeSize, ToLongFunction<S> baseOffset,
                ToLongFunction<S> size, Function<S, FileChannel> channel) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try {
                for (S segment : segments) {
                    long base = baseOffset.applyAsLong(segment);
                    if (base < activeBase)
                        continue;
                    long from = base == activeBase ? activeSize : 0;
                    ByteBuffer buf = ByteBuffer.allocate((int) Math.max(0, size.applyAsLong(segment) - from));
                    FileChannel ch = channel.apply(segment);
                    long pos = from;
                    while (buf.hasRemaining()) {
                        int n = ch.read(buf, pos);
                        if (n < 0)
                            throw new IOException("segment " + base + " ends at byte " + pos);
                        pos += n;
                    }
                    out.write(buf.array(), 0, buf.position());
                }
            } catch (IOException e) {
                throw new OracleFailure("cannot read what the append stored: " + e, e);
            }
            return out.size() == 0 ? null : out.toByteArray();
        }
    }

    /** One RecordError of a ProduceResponse partition. */
    final class RecordError {
        final int batchIndex;
        final String message;

        RecordError(int batchIndex, String message) {
            this.batchIndex = batchIndex;
            this.message = message;
        }
    }

    /** The answer for one produce: the partition's response and what the log stored. */
    final class Answer {
        /** "partition": a partition error or success; "request": the whole request failed. */
        String scope = "partition";
        int errorCode;
        String errorName;
        String errorMessage;
        long baseOffset = -1;
        long logAppendTimeMs = -1;
        long logStartOffset = -1;
        final List<RecordError> recordErrors = new ArrayList<>();
        /** The Java exception behind a non-NONE error (null on success). */
        Throwable exception;
        /** The bytes this append added to the log (null when it added none, e.g. a duplicate). */
        byte[] stored;

        /** A partition's ProduceResponse as ReplicaManager/KafkaApis built it. */
        static Answer partition(ProduceResponse.PartitionResponse r, Throwable exception) {
            Answer a = new Answer();
            a.errorCode = r.error.code();
            a.errorName = r.error.name();
            a.errorMessage = r.errorMessage;
            a.baseOffset = r.baseOffset;
            a.logAppendTimeMs = r.logAppendTime;
            a.logStartOffset = r.logStartOffset;
            if (r.recordErrors != null)
                for (ProduceResponse.RecordError e : r.recordErrors)
                    a.recordErrors.add(new RecordError(e.batchIndex, e.message));
            a.exception = r.error.code() == 0 ? null : exception;
            return a;
        }

        /**
         * The whole request failed with {@code e}: what the client gets for the partition is what
         * every supported version's {@code ProduceRequest.getErrorResponse(throttle, e)} puts in
         * each partition (RequestHandlerHelper.handleError / sendErrorResponseMaybeThrottle):
         * ApiError.fromThrowable's code and message, offsets and times -1, no record errors.
         */
        static Answer request(Throwable e) {
            ApiError error = ApiError.fromThrowable(e);
            Answer a = new Answer();
            a.scope = "request";
            a.errorCode = error.error().code();
            a.errorName = error.error().name();
            a.errorMessage = error.message();
            a.exception = e;
            return a;
        }

        Map<String, Object> toJson() {
            Map<String, Object> response = new LinkedHashMap<>();
            response.put("errorCode", errorCode);
            response.put("errorName", errorName);
            response.put("errorMessage", errorMessage);
            response.put("baseOffset", Long.toString(baseOffset));
            response.put("logAppendTimeMs", Long.toString(logAppendTimeMs));
            response.put("logStartOffset", Long.toString(logStartOffset));
            List<Object> errors = new ArrayList<>();
            for (RecordError e : recordErrors) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("batchIndex", e.batchIndex);
                m.put("batchIndexErrorMessage", e.message);
                errors.add(m);
            }
            response.put("recordErrors", errors);
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("scope", scope);
            doc.put("response", response);
            if (exception == null) {
                doc.put("exception", null);
            } else {
                Map<String, Object> ex = new LinkedHashMap<>();
                ex.put("class", exception.getClass().getName());
                ex.put("message", exception.getMessage());
                doc.put("exception", ex);
            }
            doc.put("stored", stored == null ? null : Base64.getEncoder().encodeToString(stored));
            return doc;
        }
    }
}
