package org.kafkaconformance.oracle;

import java.nio.ByteBuffer;
import java.util.Base64;

/**
 * Minimal compact JSON writer. Keys are written in call order; output is pure ASCII
 * (every non-ASCII or control character is written as a \\uXXXX escape), so the
 * document is valid UTF-8 whatever the strings contain (even lone surrogates).
 */
final class JsonWriter {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private final StringBuilder sb;
    private boolean needComma;

    JsonWriter() {
        this(new StringBuilder(256));
    }

    JsonWriter(StringBuilder sb) {
        this.sb = sb;
    }

    private void sep() {
        if (needComma)
            sb.append(',');
    }

    JsonWriter beginObject() {
        sep();
        sb.append('{');
        needComma = false;
        return this;
    }

    JsonWriter endObject() {
        sb.append('}');
        needComma = true;
        return this;
    }

    JsonWriter beginArray() {
        sep();
        sb.append('[');
        needComma = false;
        return this;
    }

    JsonWriter endArray() {
        sb.append(']');
        needComma = true;
        return this;
    }

    JsonWriter name(String name) {
        sep();
        quote(name);
        sb.append(':');
        needComma = false;
        return this;
    }

    JsonWriter value(String s) {
        sep();
        if (s == null)
            sb.append("null");
        else
            quote(s);
        needComma = true;
        return this;
    }

    /** A JSON number (8/16/32-bit ints and the unsigned 32-bit crc). */
    JsonWriter number(long n) {
        sep();
        sb.append(n);
        needComma = true;
        return this;
    }

    /** A 64-bit integer, as a decimal string. */
    JsonWriter int64(long n) {
        return value(Long.toString(n));
    }

    JsonWriter bool(boolean b) {
        sep();
        sb.append(b ? "true" : "false");
        needComma = true;
        return this;
    }

    JsonWriter nullValue() {
        sep();
        sb.append("null");
        needComma = true;
        return this;
    }

    /** Splices an already-serialised JSON value. */
    JsonWriter raw(CharSequence json) {
        sep();
        sb.append(json);
        needComma = true;
        return this;
    }

    JsonWriter base64(byte[] bytes) {
        if (bytes == null)
            return nullValue();
        return value(Base64.getEncoder().encodeToString(bytes));
    }

    /** Base64 of the remaining bytes of {@code buf} (the buffer itself is not consumed). */
    JsonWriter base64(ByteBuffer buf) {
        if (buf == null)
            return nullValue();
        ByteBuffer dup = buf.duplicate();
        byte[] bytes = new byte[dup.remaining()];
        dup.get(bytes);
        return base64(bytes);
    }

    private void quote(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    sb.append("\\\"");
                    break;
                case '\\':
                    sb.append("\\\\");
                    break;
                case '\n':
                    sb.append("\\n");
                    break;
                case '\r':
                    sb.append("\\r");
                    break;
                case '\t':
                    sb.append("\\t");
                    break;
                case '\b':
                    sb.append("\\b");
                    break;
                case '\f':
                    sb.append("\\f");
                    break;
                default:
                    if (c < 0x20 || c >= 0x7f) {
                        sb.append("\\u")
                          .append(HEX[(c >> 12) & 0xf])
                          .append(HEX[(c >> 8) & 0xf])
                          .append(HEX[(c >> 4) & 0xf])
                          .append(HEX[c & 0xf]);
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    StringBuilder builder() {
        return sb;
    }

    @Override
    public String toString() {
        return sb.toString();
    }
}
