package org.kafkaconformance.brokeroracle;

import java.io.File;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import kafka.common.RecordValidationException;
import kafka.log.AppendOrigin;
import kafka.log.Log;
import kafka.log.LogAppendInfo;
import kafka.log.LogAppendInfo$;
import kafka.log.LogConfig;
import kafka.log.LogConfig$;
import kafka.log.LogSegment;
import kafka.server.BrokerTopicStats;
import kafka.server.KafkaConfig;
import kafka.server.LogAppendResult;
import kafka.server.LogDirFailureChannel;
import kafka.utils.KafkaScheduler;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse.PartitionResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.AppInfoParser;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Kafka 2.8 (written for 2.8.2): {@code kafka.log.Log} (Scala) made by {@code Log.apply}, a
 * ZooKeeper-mode broker (zookeeper.connect is set but never contacted). No transaction
 * verification exists yet (KIP-890 came in 3.6): a transactional batch is appended as it comes.
 *
 * <p>Called: KafkaConfig.fromProps, LogConfig.extractLogConfigMap / validateValues / validate /
 * fromProps, Log.apply, RequestContext.parseRequest (for a version the broker does not support),
 * RequestUtils.hasTransactionalRecords, ProduceRequest.validateRecords, Log.appendAsLeader
 * (analyzeAndValidateRecords, LogValidator, producer state), LogAppendInfo's unknown-info
 * factories, kafka.server.LogAppendResult (error). Mirrored (each place says from where): the
 * order of KafkaApis.handleProduceRequest and the catch clauses of
 * ReplicaManager.appendToLocalLog.
 */
final class KafkaBroker implements Broker {
    /** LogManager's producer-id expiration check never runs: answers must not depend on how long the JVM has run. */
    private static final int NEVER = Integer.MAX_VALUE;
    /** The connection a RequestContext names in its errors (SocketServer's id: local-remote-index). */
    private static final String CONNECTION_ID = "127.0.0.1:9092-127.0.0.1:50000-0";

    private final KafkaScheduler scheduler = new KafkaScheduler(1, "broker-oracle-scheduler-", true);
    private final BrokerTopicStats brokerTopicStats = new BrokerTopicStats();

    KafkaBroker() {
        scheduler.startup();
    }

    private static KafkaConfig kafkaConfig(File logDirs, Map<String, String> broker) {
        Properties props = new Properties();
        props.put("zookeeper.connect", "127.0.0.1:2181"); // never contacted
        props.put("broker.id", "0");
        props.put("log.dirs", logDirs.getPath());
        props.putAll(broker);
        return KafkaConfig.fromProps(props, false);
    }

    @Override
    public Map<String, Object> describe(Map<String, String> broker) {
        kafkaConfig(new File("/nonexistent"), broker); // the config is valid
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("kafka", AppInfoParser.getVersion());
        doc.put("sourceSet", "kafka-2.8");
        List<Integer> versions = List.of((int) ApiKeys.PRODUCE.oldestVersion(), (int) ApiKeys.PRODUCE.latestVersion());
        doc.put("produceVersions", versions);
        doc.put("advertisedProduceVersions", versions);
        doc.put("log", "kafka.log.Log.apply");
        return doc;
    }

    @Override
    public PartitionLog open(File logDir, Map<String, String> topic, Map<String, String> broker, OracleTime time)
            throws Exception {
        KafkaConfig config = kafkaConfig(logDir.getParentFile(), broker);
        // LogManager.apply: the broker's log defaults
        Map<String, Object> defaultProps = LogConfig$.MODULE$.extractLogConfigMap(config);
        LogConfig$.MODULE$.validateValues(defaultProps);
        // topic creation validates the topic's overrides (AdminZkClient.validateTopicCreate)
        Properties overrides = new Properties();
        overrides.putAll(topic);
        LogConfig$.MODULE$.validate(overrides);
        // LogManager.getOrCreateLog -> fetchLogConfig
        LogConfig logConfig = LogConfig$.MODULE$.fromProps(defaultProps, overrides);
        Log log = Log.apply(logDir, logConfig, 0L, 0L, scheduler, brokerTopicStats, time,
                config.transactionalIdExpirationMs(), NEVER, new LogDirFailureChannel(1), true, true);
        return new Partition(log, config);
    }

    private static final class Partition implements PartitionLog {
        private final Log log;
        private final KafkaConfig config;

        Partition(Log log, KafkaConfig config) {
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
            // coordinator: 2.8 does not verify transactions (KIP-890 came in 3.6), so it is never asked
            // SocketServer: RequestChannel.Request parses the body (RequestContext.parseRequest);
            // for a version the broker does not support that throws, and the connection is
            // closed (no response)
            if (!ApiKeys.PRODUCE.isVersionSupported(version)) {
                RequestContext context = new RequestContext(new RequestHeader(ApiKeys.PRODUCE, version,
                        "broker-oracle", 1), CONNECTION_ID, InetAddress.getLoopbackAddress(),
                        KafkaPrincipal.ANONYMOUS, ListenerName.forSecurityProtocol(SecurityProtocol.PLAINTEXT),
                        SecurityProtocol.PLAINTEXT, ClientInformation.EMPTY, false);
                try {
                    context.parseRequest(ByteBuffer.allocate(0));
                } catch (Throwable t) {
                    return Answer.request(t);
                }
                throw new OracleFailure("RequestContext.parseRequest accepted produce v" + version, null);
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
                return handleProduceRequest(new ProduceRequest(data, version), version, records, leaderEpoch);
            } catch (OracleFailure e) {
                throw e;
            } catch (Throwable t) {
                // KafkaApis.handle: case e: Throwable => requestHelper.handleError(request, e)
                return Answer.request(t);
            }
        }

        /** KafkaApis.handleProduceRequest, for one authorized partition of an existing topic. */
        private Answer handleProduceRequest(ProduceRequest request, short version, MemoryRecords records,
                int leaderEpoch) {
            // transactional records need a transactional id (authorize() is true: no authorizer)
            if (RequestUtils.hasTransactionalRecords(request) && request.transactionalId() == null)
                return Answer.request(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.exception());
            try {
                ProduceRequest.validateRecords(version, records);
            } catch (ApiException e) {
                return Answer.partition(new PartitionResponse(Errors.forException(e)), e);
            }
            // ReplicaManager.appendRecords -> appendToLocalLog
            return appendToLocalLog(records, leaderEpoch);
        }

        /** ReplicaManager.appendToLocalLog for one partition ("t" is not an internal topic). */
        private Answer appendToLocalLog(MemoryRecords records, int leaderEpoch) {
            LogSegment active = log.activeSegment();
            long activeBase = active.baseOffset();
            long activeSize = active.size();
            long endOffset = log.logEndOffset();
            LogAppendResult result;
            Throwable exception = null;
            try {
                // Partition.appendRecordsToLeader (this broker is the leader; its ISR meets
                // min.insync.replicas)
                LogAppendInfo info = log.appendAsLeader(records, leaderEpoch, AppendOrigin.Client$.MODULE$,
                        config.interBrokerProtocolVersion());
                result = new LogAppendResult(info, Option.empty());
            } catch (UnknownTopicOrPartitionException | NotLeaderOrFollowerException | RecordTooLargeException
                    | RecordBatchTooLargeException | CorruptRecordException | KafkaStorageException e) {
                exception = e;
                result = new LogAppendResult(LogAppendInfo$.MODULE$.UnknownLogAppendInfo(), Option.apply(e));
            } catch (RecordValidationException rve) {
                exception = rve.invalidException();
                // processFailedRecord: the partition's log start offset
                result = new LogAppendResult(LogAppendInfo$.MODULE$.unknownLogAppendInfoWithAdditionalInfo(
                        log.logStartOffset(), rve.recordErrors(), rve.invalidException().getMessage()),
                        Option.apply(rve.invalidException()));
            } catch (Throwable t) {
                exception = t;
                result = new LogAppendResult(
                        LogAppendInfo$.MODULE$.unknownLogAppendInfoWithLogStartOffset(log.logStartOffset()),
                        Option.apply(t));
            }
            Answer answer = Answer.partition(partitionResponse(result), exception);
            if (exception == null && log.logEndOffset() != endOffset) // not a duplicate
                answer.stored = Appended.read(CollectionConverters.asJava(log.logSegments()), activeBase, activeSize,
                        LogSegment::baseOffset, LogSegment::size, s -> s.log().channel());
            return answer;
        }

        /** ReplicaManager.appendRecords: the PartitionResponse of a LogAppendResult. */
        private static PartitionResponse partitionResponse(LogAppendResult result) {
            LogAppendInfo info = result.info();
            long baseOffset = info.firstOffset().isDefined() ? info.firstOffset().get().messageOffset() : -1L;
            return new PartitionResponse(result.error(), baseOffset, info.logAppendTime(), info.logStartOffset(),
                    CollectionConverters.asJava(info.recordErrors()), info.errorMessage());
        }
    }
}
