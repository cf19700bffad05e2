package org.kafkaconformance.oracle;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Minimal strict JSON parser for the encode requests. Objects become {@link LinkedHashMap},
 * arrays {@link ArrayList}, strings {@link String}, booleans {@link Boolean}, null {@code null}
 * and numbers a {@link Num} holding the literal text (so 64-bit integers stay exact).
 */
final class JsonReader {
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

    private final String s;
    private int pos;

    private JsonReader(String s) {
        this.s = s;
    }

    static Object parse(String text) throws JsonException {
        JsonReader r = new JsonReader(text);
        r.ws();
        Object v = r.value();
        r.ws();
        if (r.pos != r.s.length())
            throw r.error("trailing characters");
        return v;
    }

    private JsonException error(String what) {
        return new JsonException(what + " at character " + pos);
    }

    private void ws() {
        while (pos < s.length()) {
            char c = s.charAt(pos);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
                pos++;
            else
                break;
        }
    }

    private Object value() throws JsonException {
        if (pos >= s.length())
            throw error("unexpected end of input");
        char c = s.charAt(pos);
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
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

    private Object literal(String word, Object v) throws JsonException {
        if (!s.startsWith(word, pos))
            throw error("bad literal");
        pos += word.length();
        return v;
    }

    private Num number() throws JsonException {
        int start = pos;
        if (s.charAt(pos) == '-')
            pos++;
        int digits = pos;
        while (pos < s.length()) {
            char c = s.charAt(pos);
            if ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
                pos++;
            else
                break;
        }
        if (pos == digits)
            throw error("bad number");
        return new Num(s.substring(start, pos));
    }

    private Map<String, Object> object() throws JsonException {
        Map<String, Object> m = new LinkedHashMap<>();
        pos++; // {
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
            m.put(k, value());
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

    private List<Object> array() throws JsonException {
        List<Object> a = new ArrayList<>();
        pos++; // [
        ws();
        if (pos < s.length() && s.charAt(pos) == ']') {
            pos++;
            return a;
        }
        while (true) {
            ws();
            a.add(value());
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

    private String string() throws JsonException {
        pos++; // opening quote
        StringBuilder sb = new StringBuilder();
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
                case '"':
                case '\\':
                case '/':
                    sb.append(e);
                    break;
                case 'b':
                    sb.append('\b');
                    break;
                case 'f':
                    sb.append('\f');
                    break;
                case 'n':
                    sb.append('\n');
                    break;
                case 'r':
                    sb.append('\r');
                    break;
                case 't':
                    sb.append('\t');
                    break;
                case 'u':
                    if (pos + 4 > s.length())
                        throw error("short \\u escape");
                    try {
                        sb.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                    } catch (NumberFormatException ex) {
                        throw error("bad \\u escape");
                    }
                    pos += 4;
                    break;
                default:
                    throw error("bad escape \\" + e);
            }
        }
    }
}
