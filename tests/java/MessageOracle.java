// Kafka's own generated message classes as an oracle for conformance.messages
// (tests/test_messages_java.py). Run with a Kafka version's jars on the classpath:
//
//   java -cp <kafka jars> tests/java/MessageOracle.java < cases.tsv > answers.jsonl
//
// One case per input line, tab-separated; one JSON answer per line, in order:
//
//   read <class> <version> <hex>
//       new <class>().read(new ByteBufferAccessor(wrap(bytes)), version), then
//       MessageUtil.toByteBuffer(message, version) and <class>JsonConverter.write(message,
//       version).toString()
//   json <class> <version> <write version> <json text>
//       <class>JsonConverter.read(tree, version), then written (bytes and JSON) at the write
//       version
//   build <class> <version> <spec>
//       new <class>() with the spec's fields set through the generated setters
//       (set<FieldName>(value), the schema's field names; nested objects and arrays of objects built the same way;
//       bytes, records as base64; uuids as Uuid strings; "_unknown": [[tag, base64], ...]
//       as unknown tagged fields), then written at the version
//
// Answer: {"read_error": "<java class>: <message>" | absent, "pos": <buffer position after
// the read>, "bytes": "<hex>" | "write_error": ..., "json": "<text>" | "json_error": ...}
// ("json" absent where the class has no converter: Kafka 2.x's coordinator records).
// Our own code; it uses only Kafka's public generated classes, reflectively, so the same
// source runs against every Kafka version.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.RawTaggedField;

public class MessageOracle {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            ObjectNode answer = MAPPER.createObjectNode();
            try {
                String[] parts = line.split("\t", -1);
                if (parts[0].equals("read")) {
                    read(parts[1], Short.parseShort(parts[2]), hex(parts[3]), answer);
                } else if (parts[0].equals("build")) {
                    Class<?> cls = Class.forName(parts[1]);
                    Message message = (Message) build(cls, MAPPER.readTree(parts[3]));
                    write(cls, message, Short.parseShort(parts[2]), answer);
                } else if (parts[0].equals("json")) {
                    fromJson(parts[1], Short.parseShort(parts[2]), Short.parseShort(parts[3]),
                        parts[4], answer);
                } else {
                    answer.put("oracle_error", "unknown op " + parts[0]);
                }
            } catch (Throwable t) {
                answer.put("oracle_error", describe(t));
            }
            out.println(MAPPER.writeValueAsString(answer));
        }
        out.flush();
    }

    private static void read(String className, short version, byte[] data, ObjectNode answer)
            throws Exception {
        Class<?> cls = Class.forName(className);
        Message message = (Message) cls.getConstructor().newInstance();
        ByteBuffer buffer = ByteBuffer.wrap(data);
        try {
            message.read(new ByteBufferAccessor(buffer), version);
        } catch (Throwable t) {
            answer.put("read_error", describe(t));
            return;
        }
        answer.put("pos", buffer.position());
        write(cls, message, version, answer);
    }

    private static void fromJson(String className, short version, short writeVersion,
                                 String json, ObjectNode answer) throws Exception {
        Class<?> cls = Class.forName(className);
        Class<?> converter = Class.forName(className + "JsonConverter");
        Method read = converter.getMethod("read", JsonNode.class, short.class);
        Message message;
        try {
            message = (Message) read.invoke(null, MAPPER.readTree(json), version);
        } catch (InvocationTargetException e) {
            answer.put("read_error", describe(e.getCause()));
            return;
        }
        write(cls, message, writeVersion, answer);
    }

    private static void write(Class<?> cls, Message message, short version, ObjectNode answer)
            throws Exception {
        try {
            // MessageUtil.toByteBuffer(message, version), spelled out (4.x removed it)
            ObjectSerializationCache cache = new ObjectSerializationCache();
            int size = message.size(cache, version);
            ByteBufferAccessor accessor = new ByteBufferAccessor(ByteBuffer.allocate(size));
            message.write(accessor, cache, version);
            ByteBuffer written = accessor.buffer();
            written.flip();
            byte[] bytes = new byte[written.remaining()];
            written.get(bytes);
            answer.put("bytes", hex(bytes));
        } catch (Throwable t) {
            answer.put("write_error", describe(t));
        }
        Class<?> converter;
        try {
            converter = Class.forName(cls.getName() + "JsonConverter");
        } catch (ClassNotFoundException e) {
            return; // Kafka 2.x's coordinator records have no converter
        }
        Method write = converter.getMethod("write", cls, short.class);
        try {
            JsonNode node = (JsonNode) write.invoke(null, message, version);
            answer.put("json", node.toString());
        } catch (InvocationTargetException e) {
            answer.put("json_error", describe(e.getCause()));
        }
    }

    private static Object build(Class<?> cls, JsonNode spec) throws Exception {
        Object object = cls.getConstructor().newInstance();
        Iterator<Map.Entry<String, JsonNode>> fields = spec.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> field = fields.next();
            if (field.getKey().equals("_unknown")) {
                List<RawTaggedField> unknown = ((Message) object).unknownTaggedFields();
                for (JsonNode pair : field.getValue()) {
                    unknown.add(new RawTaggedField(pair.get(0).asInt(),
                        Base64.getDecoder().decode(pair.get(1).asText())));
                }
                continue;
            }
            String name = field.getKey();
            String setterName = "set" + Character.toUpperCase(name.charAt(0)) + name.substring(1);
            Method setter = null;
            for (Method m : cls.getMethods()) {
                if (m.getName().equals(setterName) && m.getParameterCount() == 1) {
                    setter = m;
                }
            }
            if (setter == null) {
                throw new IllegalArgumentException(cls.getName() + " has no setter for " + field.getKey());
            }
            setter.invoke(object, convert(setter.getParameterTypes()[0],
                setter.getGenericParameterTypes()[0], field.getValue()));
        }
        return object;
    }

    @SuppressWarnings("unchecked")
    private static Object convert(Class<?> type, Type generic, JsonNode value) throws Exception {
        if (value.isNull()) return null;
        if (type == int.class || type == Integer.class) return value.asInt();
        if (type == short.class || type == Short.class) return (short) value.asInt();
        if (type == byte.class || type == Byte.class) return (byte) value.asInt();
        if (type == long.class || type == Long.class) return value.asLong();
        if (type == boolean.class || type == Boolean.class) return value.asBoolean();
        if (type == double.class || type == Double.class) return value.asDouble();
        if (type == String.class) return value.asText();
        if (type == byte[].class) return Base64.getDecoder().decode(value.asText());
        if (type == ByteBuffer.class) return ByteBuffer.wrap(Base64.getDecoder().decode(value.asText()));
        if (type == Uuid.class) return Uuid.fromString(value.asText());
        if (type.getSimpleName().equals("BaseRecords")) { // its package moved in 4.x
            Class<?> memoryRecords = Class.forName(type.getPackageName() + ".MemoryRecords");
            return memoryRecords.getMethod("readableRecords", ByteBuffer.class)
                .invoke(null, ByteBuffer.wrap(Base64.getDecoder().decode(value.asText())));
        }
        if (List.class.isAssignableFrom(type)) {
            Type element = ((ParameterizedType) generic).getActualTypeArguments()[0];
            List<Object> list = new ArrayList<>();
            for (JsonNode item : value) list.add(convert((Class<?>) element, element, item));
            return list;
        }
        if (Collection.class.isAssignableFrom(type)) { // FooCollection: ImplicitLinkedHashMultiCollection<Foo>
            Type element = ((ParameterizedType) type.getGenericSuperclass()).getActualTypeArguments()[0];
            Collection<Object> collection = (Collection<Object>) type.getConstructor().newInstance();
            for (JsonNode item : value) collection.add(convert((Class<?>) element, element, item));
            return collection;
        }
        if (value.isObject()) return build(type, value);
        throw new IllegalArgumentException("cannot make a " + type.getName() + " of " + value);
    }

    private static String describe(Throwable t) {
        return t.getClass().getName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    private static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            sb.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
        }
        return sb.toString();
    }
}
