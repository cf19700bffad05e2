package org.kafkaconformance.oracle;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

import java.io.File;
import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.OptionalLong;

/**
 * Decodes one input with Kafka's own classes, following the "Decoding algorithm" of
 * docs/canonical-json.md literally, and renders the canonical JSON document (contract v1).
 *
 * <p>Every value that Kafka exposes through a non-throwing accessor comes from that accessor.
 * Raw fields Kafka does not expose (or exposes only through an accessor that can throw) are read
 * from the input bytes at the batch's position: v2 attributes int16 @21, lastOffsetDelta @23,
 * baseTimestamp @27, recordsCount @57; legacy attributes int8 @17; the codec id (attributes &amp; 7)
 * because {@code compressionType()} throws for ids 5-7.
 */
final class Decoder {
    static final String FORMAT = "kafka-conformance/decode/1";

    private Decoder() {
    }

    /**
     * @param input the input bytes (in file mode: the content of {@code file}, used for the raw fields only)
     * @param fileMode false: {@code MemoryRecords.readableRecords(...)}; true: {@code FileRecords.open(file)}
     * @param file the file to open in file mode (ignored in memory mode)
     */
    static String decode(byte[] input, boolean fileMode, File file) {
        ByteBuffer raw = ByteBuffer.wrap(input).asReadOnlyBuffer();
        JsonWriter batches = new JsonWriter();
        batches.beginArray();

        int position = 0;
        int index = 0;
        Throwable error = null;
        FileRecords fileRecords = null;
        try {
            Iterator<? extends RecordBatch> it;
            if (fileMode) {
                // mutable=false: the channel is opened read-only (FileChannel.open(path)).
                fileRecords = FileRecords.open(file, false);
                it = fileRecords.batches().iterator();
            } else {
                it = MemoryRecords.readableRecords(ByteBuffer.wrap(input)).batches().iterator();
            }

            while (true) {
                // --- splitting: errors are reported against (index, position) = the batch not yet split
                if (!it.hasNext())
                    break;
                RecordBatch batch = it.next();

                // --- batch validation: an error here means the batch is NOT listed
                byte magic = batch.magic();
                if (magic >= RecordBatch.MAGIC_VALUE_V2)
                    batch.ensureValid();

                // --- header (all values computed before anything is written)
                BatchHeader header = BatchHeader.read(batch, magic, raw, position);
                batches.beginObject();
                header.write(batches);
                batches.name("records").beginArray();
                try {
                    decodeRecords(batch, magic, batches);
                } finally {
                    // the batch in progress keeps the records it yielded, also on error
                    batches.endArray().endObject();
                }

                position += batch.sizeInBytes();
                index++;
            }
        } catch (Throwable t) {
            error = t;
        } finally {
            if (fileRecords != null) {
                try {
                    // closeHandlers(): only closes the channel (close() would flush and trim the file)
                    fileRecords.closeHandlers();
                } catch (Throwable ignored) {
                    // never part of the verdict
                }
            }
        }
        batches.endArray();

        String outcome;
        if (error != null)
            outcome = "error";
        else if (position < input.length)
            outcome = "partial";
        else
            outcome = "ok";

        JsonWriter doc = new JsonWriter(new StringBuilder(batches.builder().length() + 256));
        doc.beginObject();
        doc.name("format").value(FORMAT);
        doc.name("mode").value(fileMode ? "file" : "memory");
        doc.name("outcome").value(outcome);
        doc.name("error");
        if (error != null) {
            doc.beginObject();
            doc.name("kafka_exception").value(error.getClass().getName());
            doc.name("message").value(safeMessage(error));
            doc.name("batch_index").number(index);
            doc.name("position").number(position);
            doc.endObject();
        } else {
            doc.nullValue();
        }
        doc.name("tail");
        if (error == null && position < input.length) {
            doc.beginObject();
            doc.name("position").number(position);
            doc.name("bytes").number(input.length - position);
            doc.endObject();
        } else {
            doc.nullValue();
        }
        doc.name("batches").raw(batches.builder());
        doc.endObject();
        return doc.toString();
    }

    private static String safeMessage(Throwable t) {
        try {
            return t.getMessage();
        } catch (Throwable e) {
            return "<getMessage() threw " + e.getClass().getName() + ">";
        }
    }

    private static void decodeRecords(RecordBatch batch, byte magic, JsonWriter out) {
        boolean control = batch.isControlBatch();
        BufferSupplier bufferSupplier = BufferSupplier.create();
        CloseableIterator<Record> it = batch.streamingIterator(bufferSupplier);
        try {
            while (it.hasNext()) {
                Record record = it.next();
                if (magic < RecordBatch.MAGIC_VALUE_V2)
                    record.ensureValid();
                long offset = record.offset();
                long timestamp = record.timestamp();
                ByteBuffer key = record.key();
                ByteBuffer value = record.value();
                Header[] headers = record.headers();

                boolean hasControl = false;
                short typeId = 0;
                String typeName = null;
                boolean hasEpoch = false;
                int coordinatorEpoch = 0;
                if (control) {
                    typeId = ControlRecordType.parseTypeId(key);
                    ControlRecordType type = ControlRecordType.fromTypeId(typeId);
                    typeName = type.name();
                    if (type == ControlRecordType.ABORT || type == ControlRecordType.COMMIT) {
                        // EndTransactionMarker.deserializeValue(type, value) is package-private in
                        // 3.9; deserialize(record) is the public entry point: it re-parses the same
                        // key (same result as above) and then calls deserializeValue(type, value()).
                        coordinatorEpoch = EndTransactionMarker.deserialize(record).coordinatorEpoch();
                        hasEpoch = true;
                    }
                    hasControl = true;
                }

                // render only once everything about the record is known (an error drops the record)
                String[] headerKeys = new String[headers.length];
                byte[][] headerValues = new byte[headers.length][];
                for (int i = 0; i < headers.length; i++) {
                    headerKeys[i] = headers[i].key();
                    headerValues[i] = headers[i].value();
                }
                out.beginObject();
                out.name("offset").int64(offset);
                out.name("timestamp").int64(timestamp);
                out.name("key").base64(key);
                out.name("value").base64(value);
                out.name("headers").beginArray();
                for (int i = 0; i < headerKeys.length; i++) {
                    out.beginObject();
                    out.name("key").value(headerKeys[i]);
                    out.name("value").base64(headerValues[i]);
                    out.endObject();
                }
                out.endArray();
                if (hasControl) {
                    out.name("control").beginObject();
                    out.name("typeId").number(typeId);
                    out.name("type").value(typeName);
                    if (hasEpoch)
                        out.name("coordinatorEpoch").number(coordinatorEpoch);
                    out.endObject();
                }
                out.endObject();
            }
        } catch (Throwable t) {
            try {
                it.close();
            } catch (Throwable suppressed) {
                // the first exception is the verdict
            }
            bufferSupplier.close();
            throw t;
        }
        it.close();
        bufferSupplier.close();
    }

    /** The batch header values, gathered before anything is written. */
    private static final class BatchHeader {
        int position;
        int sizeInBytes;
        byte magic;
        long crc;
        int attributes;
        String compression;
        String timestampType;
        long lastOffset;
        long maxTimestamp;
        // magic >= 2 only
        boolean v2;
        long baseOffset;
        int lastOffsetDelta;
        int partitionLeaderEpoch;
        long baseTimestamp;
        OptionalLong deleteHorizonMs;
        boolean isTransactional;
        boolean isControl;
        long producerId;
        short producerEpoch;
        int baseSequence;
        int lastSequence;
        int recordsCount;

        static BatchHeader read(RecordBatch batch, byte magic, ByteBuffer raw, int position) {
            BatchHeader h = new BatchHeader();
            h.position = position;
            h.sizeInBytes = batch.sizeInBytes();
            h.magic = magic;
            if (magic >= RecordBatch.MAGIC_VALUE_V2) {
                // after ensureValid() the batch has >= 61 bytes: no accessor below can throw
                h.v2 = true;
                h.crc = batch.checksum();
                h.attributes = raw.getShort(position + 21);
                h.compression = compressionName(h.attributes & 7);
                h.timestampType = batch.timestampType().name;
                h.lastOffset = batch.lastOffset();
                h.maxTimestamp = batch.maxTimestamp();
                h.baseOffset = batch.baseOffset();
                h.lastOffsetDelta = raw.getInt(position + 23);
                h.partitionLeaderEpoch = batch.partitionLeaderEpoch();
                h.baseTimestamp = raw.getLong(position + 27);
                h.deleteHorizonMs = batch.deleteHorizonMs();
                h.isTransactional = batch.isTransactional();
                h.isControl = batch.isControlBatch();
                h.producerId = batch.producerId();
                h.producerEpoch = batch.producerEpoch();
                h.baseSequence = batch.baseSequence();
                h.lastSequence = batch.lastSequence();
                h.recordsCount = raw.getInt(position + 57);
            } else {
                h.attributes = raw.get(position + 17);
                h.compression = compressionName(h.attributes & 7);
                h.lastOffset = batch.lastOffset();
                if (magic == RecordBatch.MAGIC_VALUE_V0 || magic == RecordBatch.MAGIC_VALUE_V1) {
                    h.crc = batch.checksum();
                    h.timestampType = batch.timestampType().name;
                    h.maxTimestamp = batch.maxTimestamp();
                } else {
                    // Only reachable in file mode (FileLogInputStream does not range-check magic;
                    // a negative magic gives a legacy batch). Its lazy header load calls
                    // LegacyRecord.headerSize(magic), which throws, so the accessors cannot be used;
                    // apply LegacyRecord's own rules (magic != 0 behaves like v1) to the raw bytes.
                    h.crc = raw.getInt(position + 12) & 0xFFFFFFFFL;
                    h.timestampType = ((h.attributes & 0x08) == 0 ? TimestampType.CREATE_TIME
                            : TimestampType.LOG_APPEND_TIME).name;
                    h.maxTimestamp = raw.getLong(position + 18);
                }
            }
            return h;
        }

        void write(JsonWriter out) {
            out.name("position").number(position);
            out.name("sizeInBytes").number(sizeInBytes);
            out.name("magic").number(magic);
            out.name("crc").number(crc);
            out.name("attributes").number(attributes);
            out.name("compression").value(compression);
            out.name("timestampType").value(timestampType);
            out.name("lastOffset").int64(lastOffset);
            out.name("maxTimestamp").int64(maxTimestamp);
            if (v2) {
                out.name("baseOffset").int64(baseOffset);
                out.name("lastOffsetDelta").number(lastOffsetDelta);
                out.name("partitionLeaderEpoch").number(partitionLeaderEpoch);
                out.name("baseTimestamp").int64(baseTimestamp);
                out.name("deleteHorizonMs");
                if (deleteHorizonMs.isPresent())
                    out.int64(deleteHorizonMs.getAsLong());
                else
                    out.nullValue();
                out.name("isTransactional").bool(isTransactional);
                out.name("isControl").bool(isControl);
                out.name("producerId").int64(producerId);
                out.name("producerEpoch").number(producerEpoch);
                out.name("baseSequence").number(baseSequence);
                out.name("lastSequence").number(lastSequence);
                out.name("recordsCount").number(recordsCount);
            }
        }
    }

    /** Kafka's codec names for ids 0-4 ({@code CompressionType.forId(id).name}); "unknown-N" for 5-7. */
    static String compressionName(int id) {
        if (id >= 0 && id <= 4)
            return CompressionType.forId(id).name;
        return "unknown-" + id;
    }
}
