package org.kafkaconformance.brokeroracle;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Minimal strict JSON for the broker oracle's protocol (plain Java, no Kafka class): one
 * document per line. Reading gives {@link LinkedHashMap}, {@link ArrayList}, {@link String},
 * {@link Boolean}, {@code null} and numbers as {@link Num} (the literal text, so 64-bit integers
 * stay exact). Writing takes the same kinds plus {@link Number}; the output is pure ASCII (every
 * other character as a {@code \\uXXXX} escape), so it is one valid UTF-8 line whatever the
 * strings hold.
 */
final class Json {
    private Json() {}

    /** A JSON number, kept as its literal text. */
    static final class Num {
        final String text;

        Num(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    static final class JsonException extends Exception {
        private static final long serialVersionUID = 1L;

        JsonException(String message) {
            super(message);
        }
    }

    // ------------------------------------------------------------------------------------
    // reading

    static Object read(String text) throws JsonException {
        Reader r = new Reader(text);
        r.ws();
        Object v = r.value(0);
        r.ws();
        if (r.pos != text.length())
            throw r.error("trailing characters");
        return v;
    }

    private static final class Reader {
        private static final int MAX_DEPTH = 64;
        private final String s;
        private int pos;

        Reader(String s) {
            this.s = s;
        }

        JsonException error(String what) {
            return new JsonException(what + " at character " + pos);
        }

        void ws() {
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
                    break;
                pos++;
            }
        }

        Object value(int depth) throws JsonException {
            if (depth > MAX_DEPTH)
                throw error("nested too deeply");
            if (pos >= s.length())
                throw error("unexpected end of input");
            char c = s.charAt(pos);
            switch (c) {
                case '{':
                    return object(depth);
                case '[':
                    return array(depth);
                case '"':
                    return string();
                case 't':
                    return literal("true", Boolean.TRUE);
                case 'f':
                    return literal("false", Boolean.FALSE);
                case 'n':
                    return literal("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9'))
                        return number();
                    throw error("unexpected character '" + c + "'");
            }
        }

        Object literal(String word, Object v) throws JsonException {
            if (!s.startsWith(word, pos))
                throw error("bad literal");
            pos += word.length();
            return v;
        }

        Num number() throws JsonException {
            int start = pos;
            if (s.charAt(pos) == '-')
                pos++;
            int digits = pos;
            while (pos < s.length() && "0123456789.eE+-".indexOf(s.charAt(pos)) >= 0)
                pos++;
            if (pos == digits)
                throw error("bad number");
            return new Num(s.substring(start, pos));
        }

        Map<String, Object> object(int depth) throws JsonException {
            Map<String, Object> m = new LinkedHashMap<>();
            pos++;
            ws();
            if (pos < s.length() && s.charAt(pos) == '}') {
                pos++;
                return m;
            }
            while (true) {
                ws();
                if (pos >= s.length() || s.charAt(pos) != '"')
                    throw error("expected a member name");
                String k = string();
                ws();
                if (pos >= s.length() || s.charAt(pos) != ':')
                    throw error("expected ':'");
                pos++;
                ws();
                if (m.containsKey(k))
                    throw error("duplicate member \"" + k + "\"");
                m.put(k, value(depth + 1));
                ws();
                if (pos >= s.length())
                    throw error("unterminated object");
                char c = s.charAt(pos++);
                if (c == '}')
                    return m;
                if (c != ',')
                    throw error("expected ',' or '}'");
            }
        }

        List<Object> array(int depth) throws JsonException {
            List<Object> a = new ArrayList<>();
            pos++;
            ws();
            if (pos < s.length() && s.charAt(pos) == ']') {
                pos++;
                return a;
            }
            while (true) {
                ws();
                a.add(value(depth + 1));
                ws();
                if (pos >= s.length())
                    throw error("unterminated array");
                char c = s.charAt(pos++);
                if (c == ']')
                    return a;
                if (c != ',')
                    throw error("expected ',' or ']'");
            }
        }

        String string() throws JsonException {
            StringBuilder sb = new StringBuilder();
            pos++;
            while (true) {
                if (pos >= s.length())
                    throw error("unterminated string");
                char c = s.charAt(pos++);
                if (c == '"')
                    return sb.toString();
                if (c < 0x20)
                    throw error("control character in string");
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                if (pos >= s.length())
                    throw error("unterminated escape");
                char e = s.charAt(pos++);
                switch (e) {
                    case '"': sb.append('"'); break;
                    case '\\': sb.append('\\'); break;
                    case '/': sb.append('/'); break;
                    case 'b': sb.append('\b'); break;
                    case 'f': sb.append('\f'); break;
                    case 'n': sb.append('\n'); break;
                    case 'r': sb.append('\r'); break;
                    case 't': sb.append('\t'); break;
                    case 'u':
                        if (pos + 4 > s.length())
                            throw error("bad \\u escape");
                        try {
                            sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw error("bad \\u escape");
                        }
                        pos += 4;
                        break;
                    default:
                        throw error("bad escape");
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------
    // writing

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    static String write(Object value) {
        StringBuilder sb = new StringBuilder(256);
        write(sb, value);
        return sb.toString();
    }

    @SuppressWarnings("unchecked")
    private static void write(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String) {
            quote(sb, (String) v);
        } else if (v instanceof Boolean || v instanceof Number || v instanceof Num) {
            sb.append(v);
        } else if (v instanceof Map) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                if (!first)
                    sb.append(',');
                first = false;
                quote(sb, e.getKey());
                sb.append(':');
                write(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof List) {
            sb.append('[');
            boolean first = true;
            for (Object o : (List<Object>) v) {
                if (!first)
                    sb.append(',');
                first = false;
                write(sb, o);
            }
            sb.append(']');
        } else {
            throw new IllegalArgumentException("not a JSON value: " + v.getClass().getName());
        }
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20 || c >= 0x7f) {
                        sb.append("\\u").append(HEX[(c >> 12) & 0xf]).append(HEX[(c >> 8) & 0xf])
                          .append(HEX[(c >> 4) & 0xf]).append(HEX[c & 0xf]);
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }
}
