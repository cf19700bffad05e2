package org.kafkaconformance.brokeroracle;

import java.io.File;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import kafka.log.UnifiedLog;
import kafka.server.BrokerTopicStats;
import kafka.server.KafkaConfig;
import kafka.server.LogAppendResult;
import kafka.server.ReplicaManager;
import kafka.server.RequestLocal;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.InvalidPidMappingException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse.PartitionResponse;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.RecordValidationException;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import scala.Option;

/**
 * Kafka 3.x (written for 3.9.2): {@code kafka.log.UnifiedLog} (Scala) made by
 * {@code UnifiedLog.apply}, records in {@code org.apache.kafka.common.record}. The broker runs in
 * ZooKeeper mode (zookeeper.connect is set but never contacted) unless the broker config sets
 * process.roles: ZooKeeper mode is where {@code inter.broker.protocol.version} takes effect.
 *
 * <p>Called: KafkaConfig.fromProps, KafkaConfig.extractLogConfigMap, LogConfig.validate /
 * fromProps, UnifiedLog.apply, RequestUtils.hasTransactionalRecords,
 * ProduceRequest.validateRecords, UnifiedLog.maybeStartTransactionVerification, the verification
 * callback's error mapping (ReplicaManager.$anonfun$handleProduceAppend$4),
 * UnifiedLog.appendAsLeader (analyzeAndValidateRecords, LogValidator, producer state),
 * LogAppendInfo's unknown-info factories, kafka.server.LogAppendResult (error, errorMessage).
 * Mirrored (each place says from where): the order of KafkaApis.handleProduceRequest and
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
        if (!broker.containsKey("process.roles"))
            props.put("zookeeper.connect", "127.0.0.1:2181"); // never contacted
        props.put("broker.id", "0");
        props.put("log.dirs", logDirs.getPath());
        props.putAll(broker);
        return KafkaConfig.fromProps(props, false);
    }

    @Override
    public Map<String, Object> describe(Map<String, String> broker) {
        KafkaConfig config = kafkaConfig(new File("/nonexistent"), broker);
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("kafka", AppInfoParser.getVersion());
        doc.put("sourceSet", "kafka-3");
        short max = ApiKeys.PRODUCE.latestVersion(config.unstableApiVersionsEnabled());
        doc.put("produceVersions", List.of((int) ApiKeys.PRODUCE.oldestVersion(), (int) max));
        doc.put("advertisedProduceVersions", List.of((int) ApiKeys.PRODUCE.oldestVersion(), (int) max));
        doc.put("log", "kafka.log.UnifiedLog.apply");
        return doc;
    }

    @Override
    public PartitionLog open(File logDir, Map<String, String> topic, Map<String, String> broker, OracleTime time)
            throws Exception {
        KafkaConfig config = kafkaConfig(logDir.getParentFile(), broker);
        // LogManager.apply: the broker's log defaults
        Map<String, Object> defaultProps = config.extractLogConfigMap();
        LogConfig.validateBrokerLogConfigValues(defaultProps,
                config.remoteLogManagerConfig().isRemoteStorageSystemEnabled());
        // topic creation validates the topic's overrides (AdminZkClient.validateTopicConfig)
        Properties overrides = new Properties();
        overrides.putAll(topic);
        LogConfig.validate(overrides);
        // LogManager.fetchTopicConfigOverrides: message.format.version is dropped when the
        // inter-broker protocol is 3.0 or later
        String mfv = overrides.getProperty(TopicConfig.MESSAGE_FORMAT_VERSION_CONFIG);
        if (mfv != null && new LogConfig.MessageFormatVersion(mfv,
                config.interBrokerProtocolVersion().version()).shouldIgnore())
            overrides.remove(TopicConfig.MESSAGE_FORMAT_VERSION_CONFIG);
        LogConfig logConfig = overrides.isEmpty() ? new LogConfig(defaultProps)
                : LogConfig.fromProps(defaultProps, overrides);
        // LogManager.getOrCreateLog
        UnifiedLog log = UnifiedLog.apply(logDir, logConfig, 0L, 0L, scheduler, brokerTopicStats, time,
                config.transactionMaxTimeoutMs(),
                new ProducerStateManagerConfig(config.producerIdExpirationMs(),
                        config.transactionPartitionVerificationEnable()),
                NEVER, new LogDirFailureChannel(1), true, Option.empty(), true, new ConcurrentHashMap<>(),
                false, LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
        return new Partition(log, config);
    }

    /**
     * The body of ReplicaManager.handleProduceAppend's postVerificationCallback mapping (the Scala
     * lambda {@code $anonfun$handleProduceAppend$4}: a synthetic method, which javac does not let
     * Java code name, hence reflection); looked up once, a missing method is an oracle failure.
     */
    private static final java.lang.reflect.Method VERIFICATION_ERROR_MAPPING =
            Broker.kafkaMethod(ReplicaManager.class, "$anonfun$handleProduceAppend$4", scala.Tuple2.class);

    private static final class Partition implements PartitionLog {
        private final UnifiedLog log;
        private final KafkaConfig config;

        Partition(UnifiedLog log, KafkaConfig config) {
            this.log = log;
            this.config = config;
        }

        @Override
        public void close() {
            log.close();
        }

        @Override
        public Answer produce(short version, String transactionalId, byte[] bytes, int leaderEpoch,
                Errors coordinator) {
            // SocketServer.Processor.parseRequestHeader: a version the broker does not enable
            // fails there, and the connection is closed (no response)
            if (!ApiKeys.PRODUCE.isVersionEnabled(version, config.unstableApiVersionsEnabled()))
                return Answer.request(new InvalidRequestException("Received request api key "
                        + ApiKeys.PRODUCE + " with version " + version + " which is not enabled"));
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
                // KafkaApis.handle: case e: Throwable => requestHelper.handleError(request, e)
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
            // KafkaApis.handleProduceRequest: val transactionSupportedOperation =
            //   if (request.header.apiVersion > 10) genericError else defaultError
            boolean genericError = version > 10;
            return handleProduceAppend(request.transactionalId(), records, leaderEpoch, coordinator, genericError);
        }

        /** ReplicaManager.handleProduceAppend, then appendRecords for the one partition. */
        private Answer handleProduceAppend(String transactionalId, MemoryRecords records, int leaderEpoch,
                Errors coordinator, boolean genericError) {
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
            // maybeStartTransactionVerificationForPartitions: only with a transactional id and
            // transaction.partition.verification.enable
            if (!transactionalProducers.isEmpty() && transactionalId != null
                    && config.transactionPartitionVerificationEnable()) {
                Map.Entry<Long, Short> producer = transactionalProducers.iterator().next();
                try {
                    // Partition.maybeStartTransactionVerification
                    guard = log.maybeStartTransactionVerification(producer.getKey(),
                            baseSequence, producer.getValue());
                } catch (Exception e) {
                    return preAppendError(Errors.forException(e), e);
                }
                // A guard other than SENTINEL goes to the transaction coordinator
                // (AddPartitionsToTxnManager.verifyTransaction); SENTINEL (a transaction is
                // ongoing) asks no one. There is no coordinator here: the request's "coordinator"
                // is its answer for the partition (NONE: the partition is in the transaction, and
                // the append gets the guard).
                if (guard != VerificationGuard.SENTINEL && coordinator != Errors.NONE)
                    return preAppendError(coordinatorError(coordinator, genericError), null);
            }
            return appendToLocalLog(records, leaderEpoch, guard);
        }

        /**
         * AddPartitionsToTxnManager.AddPartitionsToTxnHandler.onComplete (mirrored: it runs on the
         * manager's network thread; AddPartitionsToTxnManager.scala, "Producers expect to handle
         * INVALID_PRODUCER_EPOCH in this scenario"): the coordinator's partition error as the
         * verification callback gets it.
         */
        private static Errors coordinatorError(Errors error, boolean genericError) {
            if (error == Errors.PRODUCER_FENCED)
                return Errors.INVALID_PRODUCER_EPOCH;
            if (error == Errors.TRANSACTION_ABORTABLE && !genericError) // for backward compatibility with clients
                return Errors.INVALID_TXN_STATE;
            return error;
        }

        /**
         * ReplicaManager.handleProduceAppend's postVerificationCallback for a partition whose
         * verification failed: coordinator errors become produce errors. Called: the body of the
         * callback's {@code preAppendErrors.map { case (topicPartition, error) => ... }}, the
         * Scala lambda {@code ReplicaManager.$anonfun$handleProduceAppend$4} of 3.9.2 (INVALID_TXN_STATE:
         * "Partition was not added to the transaction"; CONCURRENT_TRANSACTIONS, NETWORK_EXCEPTION,
         * COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR:
         * NotEnoughReplicasException "Unable to verify ..."; others: error.exception()). The
         * exception reported is the result's, or {@code cause} (what the log threw) when the
         * result's is the error's default one.
         */
        private Answer preAppendError(Errors error, Throwable cause) {
            scala.Tuple2<?, ?> mapped = (scala.Tuple2<?, ?>) Broker.invokeStatic(VERIFICATION_ERROR_MAPPING,
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
                // min.insync.replicas)
                LogAppendInfo info = log.appendAsLeader(records, leaderEpoch, AppendOrigin.CLIENT,
                        config.interBrokerProtocolVersion(), RequestLocal.NoCaching(), guard);
                result = new LogAppendResult(info, Option.empty(), false);
            } catch (UnknownTopicOrPartitionException | NotLeaderOrFollowerException | RecordTooLargeException
                    | RecordBatchTooLargeException | CorruptRecordException | KafkaStorageException e) {
                exception = e;
                result = new LogAppendResult(LogAppendInfo.UNKNOWN_LOG_APPEND_INFO, Option.apply(e), false);
            } catch (RecordValidationException rve) {
                exception = rve.invalidException();
                // processFailedRecord: the partition's log start offset
                result = new LogAppendResult(
                        LogAppendInfo.unknownLogAppendInfoWithAdditionalInfo(log.logStartOffset(), rve.recordErrors()),
                        Option.apply(rve.invalidException()), true);
            } catch (Throwable t) {
                exception = t;
                result = new LogAppendResult(LogAppendInfo.unknownLogAppendInfoWithLogStartOffset(log.logStartOffset()),
                        Option.apply(t), false);
            }
            Answer answer = Answer.partition(partitionResponse(result), exception);
            if (exception == null && log.logEndOffset() != endOffset) // not a duplicate
                answer.stored = Appended.read(log.logSegments(), activeBase, activeSize,
                        LogSegment::baseOffset, LogSegment::size, s -> s.log().channel());
            return answer;
        }

        /** ReplicaManager.buildProducePartitionStatus. */
        private static PartitionResponse partitionResponse(LogAppendResult result) {
            LogAppendInfo info = result.info();
            return new PartitionResponse(result.error(), info.firstOffset(), info.lastOffset(), info.logAppendTime(),
                    info.logStartOffset(), info.recordErrors(), result.errorMessage());
        }
    }
}
