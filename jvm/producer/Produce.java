// Deterministic test producer for conformance captures (single-file source program).
// Run: java -cp <kafka classpath> jvm/producer/Produce.java <spec.json>
// The spec: {"bootstrap": "127.0.0.1:9092", "topic": "t", "config": {producer properties},
//            "steps": [{"op": "send", "key": "k"|null, "value": "v"|null, "timestamp": 1700000000000,
//                       "value_size": N (value = N bytes 'x' instead of "value"),
//                       "headers": [["h", "v"|null], ...]},
//                      {"op": "flush"}, {"op": "init"}, {"op": "begin"}, {"op": "commit"},
//                      {"op": "abort"}, {"op": "sleep", "ms": 200}]}
// Prints one JSON line with the client version on success; any failure exits non-zero.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;

public class Produce {
    private static byte[] bytes(JsonNode node) {
        if (node == null || node.isNull()) return null;
        return node.asText().getBytes(StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        JsonNode spec = new ObjectMapper().readTree(new File(args[0]));
        String topic = spec.get("topic").asText();
        Properties props = new Properties();
        props.put("bootstrap.servers", spec.get("bootstrap").asText());
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        Iterator<Map.Entry<String, JsonNode>> it = spec.path("config").fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            props.put(e.getKey(), e.getValue().asText());
        }
        List<Future<RecordMetadata>> pending = new ArrayList<>();
        int sent = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (JsonNode step : spec.get("steps")) {
                String op = step.get("op").asText();
                switch (op) {
                    case "send": {
                        byte[] value = step.has("value_size")
                            ? repeat(step.get("value_size").asInt())
                            : bytes(step.get("value"));
                        List<Header> headers = new ArrayList<>();
                        for (JsonNode h : step.path("headers")) {
                            headers.add(new RecordHeader(h.get(0).asText(), bytes(h.get(1))));
                        }
                        Long ts = step.has("timestamp") ? step.get("timestamp").asLong() : null;
                        pending.add(producer.send(new ProducerRecord<>(
                            topic, 0, ts, bytes(step.get("key")), value, headers)));
                        sent++;
                        break;
                    }
                    case "flush":
                        producer.flush();
                        for (Future<RecordMetadata> f : pending) f.get();
                        pending.clear();
                        break;
                    case "init": producer.initTransactions(); break;
                    case "begin": producer.beginTransaction(); break;
                    case "commit": producer.commitTransaction(); pending.clear(); break;
                    case "abort": producer.abortTransaction(); pending.clear(); break;
                    case "sleep": Thread.sleep(step.get("ms").asLong()); break;
                    default: throw new IllegalArgumentException("unknown op " + op);
                }
            }
            producer.flush();
            for (Future<RecordMetadata> f : pending) f.get();
        }
        System.out.println("{\"name\": \"java\", \"version\": \"" + AppInfoParser.getVersion()
            + "\", \"sent\": " + sent + "}");
    }

    private static byte[] repeat(int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) 'x');
        return b;
    }
}
