/*
 * Library.java - THE file you edit: where your Kafka client library is called.
 *
 * Adapter.java does the protocol (capabilities, decode, serve, the canonical JSON); this file
 * declares what your library can do (the constants) and decodes one input (decode()).
 * Rebuild after editing:  javac -d build Adapter.java Library.java
 *
 * Rules (docs/adapter-protocol.md, "Rules for adapters"):
 *  - Report only what the library decoded. Never parse the bytes yourself to fill a field
 *    the library does not expose: leave it out and list its key in OMITS instead.
 *  - The one exception: an entry's length field (bytes 8..11 of the entry, big-endian int32;
 *    size = 12 + length) may be read to compute `position` and `batch_index`:
 *    Adapter.batchPosition(data, index) does exactly that.
 *  - Declare the library's real defaults (a library that checks no CRC by default declares
 *    CHECKS_CRC = false) rather than configure it to look conformant.
 *  - Map the library's exceptions to the Kafka exception class they correspond to (in
 *    DecodeError.kafkaException) and put the library's own text in `message`.
 */

import java.util.List;

final class Library {
    private Library() {}

    /** The implementation's name, shown in reports (e.g. "mykafka-java"). */
    static final String NAME = "my-adapter";

    /** The library's version, shown in reports. */
    static final String VERSION = "";

    /** Message formats (magic values) the library decodes: of 0, 1, 2. Cases with others are unsupported. */
    static final List<Integer> MAGICS = List.of(0, 1, 2);

    /** Compression codecs the library decodes: of none, gzip, snappy, lz4, zstd. */
    static final List<String> CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");

    /** Whether the library verifies checksums (by default). false: CRC-error cases are unsupported. */
    static final boolean CHECKS_CRC = true;

    /**
     * What the library delivers of a batch in which an error happens:
     * "streaming": every record before the error, as Kafka's consumer does;
     * "eager": a compressed batch may deliver a prefix of its records, down to none;
     * "atomic": any batch, compressed or not, may deliver a prefix of its records, down to none.
     */
    static final String ERROR_SEMANTICS = "streaming";

    /** Whether decode(data, "file") follows Kafka's FileRecords rules (docs/format.md §1.3). */
    static final boolean FILE_SEMANTICS = true;

    /**
     * How DecodeError.kafkaException is compared with Kafka's: "exact" (class and message),
     * "class" (class only), "family" (corrupt / compression / resource; see the protocol doc),
     * "none" (any error will do). A library that reports only a bare end-of-input should map it
     * to CorruptRecordException and declare "none".
     */
    static final String ERROR_CLASSES = "class";

    /**
     * false: the library returns an error without the header of the batch that failed, so that
     * batch may be missing from `batches`.
     */
    static final boolean LISTS_FAILING_BATCH = true;

    /**
     * Batch or record keys the library does not expose (e.g. "partitionLeaderEpoch",
     * "headers"); "control.coordinatorEpoch" leaves out one field of a record's `control`.
     * Omitted keys are not written and not compared.
     */
    static final List<String> OMITS = List.of();

    /** Free text for the report (e.g. "CRC checking is off by default in this library"). */
    static final String NOTES = "";

    /**
     * Decodes one input with the library.
     *
     * @param data the raw bytes: a fetch response's records (memory) or a whole .log segment (file)
     * @param mode "memory" (MemoryRecords rules) or "file" (FileRecords rules)
     * @return the batches delivered and the error that ended decoding (null: none). A decoding
     *     error of the bytes is a result (Decoded.error), not an exception: an exception thrown
     *     here is reported as a crash of the adapter.
     *
     * Exceptions to map to (DecodeError.kafkaException), with the library's text as message:
     *   org.apache.kafka.common.errors.CorruptRecordException   corrupt data, bad CRC, bad size
     *   org.apache.kafka.common.InvalidRecordException          an invalid record or batch
     *   java.lang.IllegalArgumentException                      e.g. an unknown compression id
     *   org.apache.kafka.common.KafkaException                  a codec (decompression) failure
     *   java.nio.BufferUnderflowException                       a record running past its batch
     */
    static Adapter.Decoded decode(byte[] data, String mode) throws Exception {
        throw new UnsupportedOperationException(
                "decode is not implemented yet: call your library in Library.java");

        // An example, for an imaginary library `MyKafka`:
        //
        // Adapter.Decoded result = new Adapter.Decoded();
        // int index = 0;
        // try {
        //     for (MyKafka.Batch lb : MyKafka.batches(data, mode.equals("file"))) {
        //         Adapter.Batch b = new Adapter.Batch();
        //         b.position = Adapter.batchPosition(data, index);  // counting, not decoding
        //         b.sizeInBytes = lb.sizeInBytes();
        //         b.magic = lb.magic();
        //         b.crc = Integer.toUnsignedLong(lb.checksum());
        //         b.attributes = lb.attributes();
        //         b.compression = lb.compression().name;          // "none", "gzip", ...
        //         b.timestampType = lb.timestampType().name;      // "CreateTime", ...
        //         b.lastOffset = lb.lastOffset();
        //         b.maxTimestamp = lb.maxTimestamp();
        //         b.baseOffset = lb.baseOffset();                 // and the other magic-2 fields
        //         b.deleteHorizonMs = lb.deleteHorizon().orElse(null);
        //         result.batches.add(b);     // listed before its records: a failing batch stays listed
        //         for (MyKafka.Record lr : lb.records()) {
        //             Adapter.Record r = new Adapter.Record();
        //             r.offset = lr.offset();
        //             r.timestamp = lr.timestamp();
        //             r.key = lr.key();                           // null stays null, empty is byte[0]
        //             r.value = lr.value();
        //             for (MyKafka.Header h : lr.headers()) {
        //                 r.headers.add(new Adapter.Header(h.key(), h.value()));
        //             }
        //             if (lb.isControl()) {                       // ABORT/COMMIT carry an epoch
        //                 r.control = new Adapter.Control(lr.controlType(), lr.controlName(), lr.epoch());
        //             }
        //             b.records.add(r);
        //         }
        //         index++;
        //     }
        // } catch (MyKafka.CorruptException e) {
        //     result.error = new Adapter.DecodeError(
        //             "org.apache.kafka.common.errors.CorruptRecordException", e.getMessage(),
        //             index, Adapter.batchPosition(data, index));
        // }
        // return result;
    }
}
