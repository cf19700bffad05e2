"""Layer 3 — wire: one module per wire structure, its reader and its writer side by side.

==============  ===============================================  ==============================
module          structure                                        Kafka class
==============  ===============================================  ==============================
``layout``      every offset, length, mask and marker            ``Records``,
                                                                 ``DefaultRecordBatch``,
                                                                 ``LegacyRecord`` constants
``record``      one v2 record (varint fields, headers)           ``DefaultRecord``
``batch``       the v2 batch header, CRC-32C, records iteration  ``DefaultRecordBatch``
``legacy``      v0/v1 messages and compressed wrappers           ``LegacyRecord``,
                                                                 ``AbstractLegacyRecordBatch``
``control``     control records (transaction markers, KRaft)     ``ControlRecordType``,
                                                                 ``EndTransactionMarker``
``builder``     whole batches from records                       ``MemoryRecordsBuilder``
==============  ===============================================  ==============================

Imports ``errors``, ``primitives`` and ``codecs`` only (docs/architecture.md).
"""
