package org.kafkaconformance.brokeroracle;

import java.io.File;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import kafka.network.Processor$;
import kafka.server.KafkaConfig;
import kafka.server.ReplicaManager;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.InvalidPidMappingException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse.PartitionResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.coordinator.transaction.TransactionLogConfig;
import org.apache.kafka.coordinator.transaction.TransactionStateManagerConfig;
import org.apache.kafka.server.LogAppendResult;
import org.apache.kafka.server.SimpleApiVersionManager;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.transaction.AddPartitionsToTxnManager;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.RecordValidationException;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Kafka 4.x (written for 4.3.1): {@code org.apache.kafka.storage.internals.log.UnifiedLog} (Java)
 * made by {@code UnifiedLog.create}, records in {@code org.apache.kafka.common.record.internal}
 * (4.3), a KRaft broker (process.roles=broker; its controller is never contacted). There is no
 * inter.broker.protocol.version and no message.format.version any more: the log is always
 * magic 2.
 *
 * <p>Called: KafkaConfig.fromProps, KafkaConfig.extractLogConfigMap, TransactionLogConfig,
 * TransactionStateManagerConfig, LogConfig.validate / fromProps, UnifiedLog.create,
 * Processor.parseRequestHeader with a SimpleApiVersionManager (the Produce version check),
 * RequestUtils.hasTransactionalRecords, ProduceRequest.validateRecords,
 * AddPartitionsToTxnManager.produceRequestVersionToTransactionSupportedOperation,
 * UnifiedLog.maybeStartTransactionVerification, the verification callback's error mapping
 * (ReplicaManager.$anonfun$handleProduceAppend$5), UnifiedLog.appendAsLeader
 * (analyzeAndValidateRecords, LogValidator, producer state), LogAppendInfo's unknown-info
 * factories, org.apache.kafka.server.LogAppendResult (error, errorMessage). Mirrored (each place
 * says from where): the order of KafkaApis.handleProduceRequest and
 * ReplicaManager.handleProduceAppend, AddPartitionsToTxnManager's translation of the coordinator's
 * partition errors, and the catch clauses of ReplicaManager.appendToLocalLog.
 */
final class KafkaBroker implements Broker {
    /** LogManager's producer-id expiration check never runs: answers must not depend on how long the JVM has run. */
    private static final int NEVER = Integer.MAX_VALUE;

    private final KafkaScheduler scheduler = new KafkaScheduler(1, true, "broker-oracle-scheduler-");
    private final BrokerTopicStats brokerTopicStats = new BrokerTopicStats(false);

    KafkaBroker() {
        scheduler.startup();
    }

    private static KafkaConfig kafkaConfig(File logDirs, Map<String, String> broker) {
        Properties props = new Properties();
        props.put("process.roles", "broker");
        props.put("node.id", "0");
        props.put("controller.quorum.bootstrap.servers", "127.0.0.1:9093"); // never contacted
        props.put("controller.listener.names", "CONTROLLER");
        props.put("listeners", "PLAINTEXT://127.0.0.1:9092");
        props.put("log.dirs", logDirs.getPath());
        props.putAll(broker);
        return KafkaConfig.fromProps(props, false);
    }

    @Override
    public Map<String, Object> describe(Map<String, String> broker) {
        KafkaConfig config = kafkaConfig(new File("/nonexistent"), broker);
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("kafka", AppInfoParser.getVersion());
        doc.put("sourceSet", "kafka-4");
        short max = ApiKeys.PRODUCE.latestVersion(config.unstableApiVersionsEnabled());
        doc.put("produceVersions", List.of((int) ApiKeys.PRODUCE.oldestVersion(), (int) max));
        // ApiKeys.toApiVersion: a broker listener advertises Produce from v0 (KAFKA-18659)
        doc.put("advertisedProduceVersions", List.of(0, (int) max));
        doc.put("log", "org.apache.kafka.storage.internals.log.UnifiedLog.create");
        return doc;
    }

    @Override
    public PartitionLog open(File logDir, Map<String, String> topic, Map<String, String> broker, OracleTime time)
            throws Exception {
        KafkaConfig config = kafkaConfig(logDir.getParentFile(), broker);
        // LogManager.apply: the broker's log defaults and transaction settings
        Map<String, Object> defaultProps = config.extractLogConfigMap();
        LogConfig.validateBrokerLogConfigValues(defaultProps,
                config.remoteLogManagerConfig().isRemoteStorageSystemEnabled());
        TransactionLogConfig transactionLogConfig = new TransactionLogConfig(config);
        // topic creation validates the topic's overrides (ControllerConfigurationValidator)
        LogConfig.validate(topic);
        // LogManager.getOrCreateLog -> fetchLogConfig
        Properties overrides = new Properties();
        overrides.putAll(topic);
        LogConfig logConfig = overrides.isEmpty() ? new LogConfig(defaultProps)
                : LogConfig.fromProps(defaultProps, overrides);
        UnifiedLog log = UnifiedLog.create(logDir, logConfig, 0L, 0L, scheduler, brokerTopicStats, time,
                new TransactionStateManagerConfig(config).transactionMaxTimeoutMs(),
                new ProducerStateManagerConfig(transactionLogConfig.producerIdExpirationMs(),
                        transactionLogConfig.transactionPartitionVerificationEnable()),
                NEVER, new LogDirFailureChannel(1), true, Optional.empty(), new ConcurrentHashMap<>(), false,
                LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
        return new Partition(log, config, transactionLogConfig.transactionPartitionVerificationEnable());
    }

    /**
     * The body of ReplicaManager.handleProduceAppend's postVerificationCallback mapping (the Scala
     * lambda {@code $anonfun$handleProduceAppend$5}: a synthetic method, which javac does not let
     * Java code name, hence reflection); looked up once, a missing method is an oracle failure.
     */
    private static final java.lang.reflect.Method VERIFICATION_ERROR_MAPPING =
            Broker.kafkaMethod(ReplicaManager.class, "$anonfun$handleProduceAppend$5", AddPartitionsToTxnManager.TransactionSupportedOperation.class, scala.collection.immutable.Map.class, scala.Tuple2.class);

    private static final class Partition implements PartitionLog {
        private final UnifiedLog log;
        private final KafkaConfig config;
        private final boolean verificationEnabled;
        private final SimpleApiVersionManager apiVersionManager;

        Partition(UnifiedLog log, KafkaConfig config, boolean verificationEnabled) {
            this.log = log;
            this.config = config;
            this.verificationEnabled = verificationEnabled;
            // the broker listener's (BrokerServer: ApiMessageType.ListenerType.BROKER)
            this.apiVersionManager = new SimpleApiVersionManager(ApiMessageType.ListenerType.BROKER,
                    config.unstableApiVersionsEnabled(), () -> null);
        }

        @Override
        public void close() {
            log.close();
        }

        @Override
        public Answer produce(short version, String transactionalId, byte[] bytes, int leaderEpoch,
                Errors coordinator) {
            // SocketServer's Processor.parseRequestHeader: a version the broker does not enable
            // (4.x: v0-v2, advertised but removed by KIP-896) throws UnsupportedVersionException
            // there, and the connection is closed (no response)
            RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, version, "broker-oracle", 1);
            ByteBuffer headerBytes = MessageUtil.toByteBufferAccessor(header.data(),
                    ApiKeys.PRODUCE.requestHeaderVersion(version)).buffer();
            try {
                Processor$.MODULE$.parseRequestHeader(apiVersionManager, headerBytes);
            } catch (Throwable t) {
                return Answer.request(t);
            }
            MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(bytes));
            if (version < 3)
                transactionalId = null; // ProduceRequest.json: transactionalId is a v3+ field
            ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30000)
                    .setTransactionalId(transactionalId)
                    .setTopicData(new ProduceRequestData.TopicProduceDataCollection(Collections.singletonList(
                            new ProduceRequestData.TopicProduceData().setName(TOPIC).setPartitionData(
                                    Collections.singletonList(new ProduceRequestData.PartitionProduceData()
                                            .setIndex(PARTITION).setRecords(records)))).iterator()));
            try {
                return handleProduceRequest(new ProduceRequest(data, version), version, records, leaderEpoch,
                        coordinator);
            } catch (OracleFailure e) {
                throw e;
            } catch (Throwable t) {
                // KafkaApis.handle: case e: Throwable => handleError(e, request)
                return Answer.request(t);
            }
        }

        /** KafkaApis.handleProduceRequest, for one authorized partition of an existing topic. */
        private Answer handleProduceRequest(ProduceRequest request, short version, MemoryRecords records,
                int leaderEpoch, Errors coordinator) {
            // transactional records need a transactional id (authorize() is true: no authorizer)
            if (RequestUtils.hasTransactionalRecords(request) && request.transactionalId() == null)
                return Answer.request(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.exception());
            try {
                ProduceRequest.validateRecords(version, records);
            } catch (ApiException e) {
                return Answer.partition(new PartitionResponse(Errors.forException(e)), e);
            }
            return handleProduceAppend(request.transactionalId(), records, leaderEpoch,
                    AddPartitionsToTxnManager.produceRequestVersionToTransactionSupportedOperation(version), coordinator);
        }

        /** ReplicaManager.handleProduceAppend, then appendRecords for the one partition. */
        private Answer handleProduceAppend(String transactionalId, MemoryRecords records, int leaderEpoch,
                AddPartitionsToTxnManager.TransactionSupportedOperation operation, Errors coordinator) {
            // as Kafka reads them, outside any try (an exception fails the request): every batch
            // filtered first (Iterable.filter is strict), then the producers' ids and epochs, then
            // the first batch's base sequence, whatever the transactional id
            List<RecordBatch> transactionalBatches = new ArrayList<>();
            for (RecordBatch batch : records.batches())
                if (batch.hasProducerId() && batch.isTransactional())
                    transactionalBatches.add(batch);
            Set<Map.Entry<Long, Short>> transactionalProducers = new LinkedHashSet<>();
            for (RecordBatch batch : transactionalBatches)
                transactionalProducers.add(Map.entry(batch.producerId(), batch.producerEpoch()));
            int baseSequence = transactionalBatches.isEmpty() ? RecordBatch.NO_SEQUENCE
                    : records.firstBatch().baseSequence();
            if (transactionalProducers.size() > 1)
                throw new InvalidPidMappingException("Transactional records contained more than one producer ID");

            VerificationGuard guard = VerificationGuard.SENTINEL;
            // maybeSendPartitionsToTransactionCoordinator: with a transactional id, when the
            // request's version adds partitions itself (v12+, transactions V2) or
            // transaction.partition.verification.enable
            if (!transactionalProducers.isEmpty() && transactionalId != null
                    && (operation.supportsEpochBump || verificationEnabled)) {
                Map.Entry<Long, Short> producer = transactionalProducers.iterator().next();
                try {
                    // ReplicaManager.maybeStartTransactionVerificationForPartition ->
                    // Partition.maybeStartTransactionVerification
                    guard = log.maybeStartTransactionVerification(producer.getKey(),
                            baseSequence, producer.getValue(), operation.supportsEpochBump);
                } catch (Exception e) {
                    return preAppendError(Errors.forException(e), e, operation);
                }
                // A guard other than SENTINEL goes to the transaction coordinator
                // (AddPartitionsToTxnManager.addOrVerifyTransaction: verify for v11 and older, add
                // the partition for v12+); SENTINEL (a transaction is ongoing for this epoch) asks
                // no one. There is no coordinator here: the request's "coordinator" is its answer
                // for the partition (NONE: the partition is in the transaction, and the append gets
                // the guard). For v12+ ReplicaManager retries CONCURRENT_TRANSACTIONS
                // (maybeRetryOnConcurrentTransactions, each retry starting the verification again
                // with the same producer, sequence and epoch) until
                // min(add.partitions.to.txn.retry.backoff.max.ms, request.timeout.ms) has passed;
                // a coordinator that keeps answering it gets the error to the callback, as here.
                if (guard != VerificationGuard.SENTINEL && coordinator != Errors.NONE)
                    return preAppendError(coordinatorError(coordinator, operation), null, operation);
            }
            return appendToLocalLog(records, leaderEpoch, guard);
        }

        /**
         * AddPartitionsToTxnManager.AddPartitionsToTxnHandler.onComplete (mirrored: it runs on the
         * manager's network thread): the coordinator's partition error as the verification
         * callback gets it (PRODUCER_FENCED: INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE:
         * INVALID_TXN_STATE for DEFAULT_ERROR, Produce v10 and older).
         */
        private static Errors coordinatorError(Errors error,
                AddPartitionsToTxnManager.TransactionSupportedOperation operation) {
            if (error == Errors.PRODUCER_FENCED)
                return Errors.INVALID_PRODUCER_EPOCH;
            if (error == Errors.TRANSACTION_ABORTABLE
                    && operation == AddPartitionsToTxnManager.TransactionSupportedOperation.DEFAULT_ERROR)
                return Errors.INVALID_TXN_STATE;
            return error;
        }

        /**
         * ReplicaManager.handleProduceAppend's postVerificationCallback for a partition whose
         * verification failed: coordinator errors become produce errors. Called: the body of the
         * callback's {@code preAppendErrors.map { case (topicPartition, error) => ... }}, the
         * Scala lambda {@code ReplicaManager.$anonfun$handleProduceAppend$5} of 4.3.1 (INVALID_TXN_STATE:
         * "Partition was not added to the transaction"; NETWORK_EXCEPTION, COORDINATOR_LOAD_IN_PROGRESS,
         * COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, and CONCURRENT_TRANSACTIONS unless the
         * operation supports an epoch bump: NotEnoughReplicasException "Unable to verify ...";
         * others: error.exception()). The exception reported is the result's, or {@code cause} (what
         * the log threw) when the result's is the error's default one.
         */
        private Answer preAppendError(Errors error, Throwable cause,
                AddPartitionsToTxnManager.TransactionSupportedOperation operation) {
            scala.Tuple2<?, ?> mapped = (scala.Tuple2<?, ?>) Broker.invokeStatic(VERIFICATION_ERROR_MAPPING, operation,
                    scala.collection.immutable.Map$.MODULE$.empty(),
                    new scala.Tuple2<>(new TopicPartition(TOPIC, PARTITION), error));
            LogAppendResult result = (LogAppendResult) mapped._2();
            Throwable reported = result.hasCustomErrorMessage() || cause == null ? result.exception().get() : cause;
            return Answer.partition(partitionResponse(result), reported);
        }

        /** ReplicaManager.appendToLocalLog for one partition ("t" is not an internal topic). */
        private Answer appendToLocalLog(MemoryRecords records, int leaderEpoch, VerificationGuard guard) {
            LogSegment active = log.activeSegment();
            long activeBase = active.baseOffset();
            long activeSize = active.size();
            long endOffset = log.logEndOffset();
            LogAppendResult result;
            Throwable exception = null;
            try {
                // Partition.appendRecordsToLeader (this broker is the leader; its ISR meets
                // min.insync.replicas); ReplicaManager passes transactionVersion -1
                // (appendRecords' default) for client produce requests
                LogAppendInfo info = log.appendAsLeader(records, leaderEpoch, AppendOrigin.CLIENT,
                        RequestLocal.noCaching(), guard, (short) -1);
                result = new LogAppendResult(LogAppendResult.LogAppendSummary.fromAppendInfo(info), Optional.empty(),
                        false);
            } catch (UnknownTopicOrPartitionException | NotLeaderOrFollowerException | RecordTooLargeException
                    | RecordBatchTooLargeException | CorruptRecordException | KafkaStorageException
                    | UnknownTopicIdException e) {
                exception = e;
                result = new LogAppendResult(
                        LogAppendResult.LogAppendSummary.fromAppendInfo(LogAppendInfo.UNKNOWN_LOG_APPEND_INFO),
                        Optional.of(e), false);
            } catch (RecordValidationException rve) {
                exception = rve.invalidException();
                // processFailedRecord: the partition's log start offset
                result = new LogAppendResult(LogAppendResult.LogAppendSummary.fromAppendInfo(
                        LogAppendInfo.unknownLogAppendInfoWithAdditionalInfo(log.logStartOffset(), rve.recordErrors())),
                        Optional.of(rve.invalidException()), true);
            } catch (Throwable t) {
                exception = t;
                result = new LogAppendResult(LogAppendResult.LogAppendSummary.fromAppendInfo(
                        LogAppendInfo.unknownLogAppendInfoWithLogStartOffset(log.logStartOffset())),
                        Optional.of(t), false);
            }
            Answer answer = Answer.partition(partitionResponse(result), exception);
            if (exception == null && log.logEndOffset() != endOffset) // not a duplicate
                answer.stored = Appended.read(log.logSegments(), activeBase, activeSize, LogSegment::baseOffset,
                        LogSegment::size, s -> s.log().channel());
            return answer;
        }

        /** ReplicaManager.buildProducePartitionStatus. */
        private static PartitionResponse partitionResponse(LogAppendResult result) {
            LogAppendResult.LogAppendSummary summary = result.logAppendSummary();
            return new PartitionResponse(result.error(), summary.firstOffset(), summary.logAppendTime(),
                    summary.logStartOffset(), summary.recordErrors(), result.errorMessage());
        }
    }
}
