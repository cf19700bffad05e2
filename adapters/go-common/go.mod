module kafkaconformance.local/adaptercommon

go 1.26.0
