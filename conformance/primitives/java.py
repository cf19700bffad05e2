"""Java's lenient UTF-8 decoding (``new String(bytes, UTF_8)``, JDK 17 ``String.decodeUTF8_UTF16``).

Kafka decodes header keys this way. Python's ``errors="replace"`` replaces malformed input
differently in places (an encoded surrogate ``ED A0 80`` is one U+FFFD in Java, three in
Python), so the slow path below follows the JDK's byte-by-byte rules.
"""

from __future__ import annotations

import re

from conformance.errors import NumberFormatError

REPL = "\ufffd"
_INT = re.compile(r"[+-]?\d+\Z")


def _cont(b: int) -> bool:
    return (b & 0xC0) == 0x80


def java_utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")  # well-formed UTF-8 is decoded identically
    except UnicodeDecodeError:
        return _decode_lenient(data)


def _decode_lenient(src: bytes) -> str:
    out: list[str] = []
    sp, sl = 0, len(src)
    while sp < sl:
        b1 = src[sp]
        sp += 1
        if b1 < 0x80:
            out.append(chr(b1))
        elif 0xC2 <= b1 <= 0xDF:
            if sp < sl:
                b2 = src[sp]
                sp += 1
                if not _cont(b2):
                    out.append(REPL)
                    sp -= 1
                else:
                    out.append(chr(((b1 & 0x1F) << 6) | (b2 & 0x3F)))
                continue
            out.append(REPL)
            break
        elif 0xE0 <= b1 <= 0xEF:
            if sp + 1 < sl:
                b2, b3 = src[sp], src[sp + 1]
                sp += 2
                if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _cont(b2) or not _cont(b3):
                    out.append(REPL)
                    sp -= 3
                    # malformed3: length 1 or 2
                    c1, c2 = src[sp], src[sp + 1]
                    sp += 1 if ((c1 == 0xE0 and (c2 & 0xE0) == 0x80) or not _cont(c2)) else 2
                else:
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    out.append(REPL if 0xD800 <= c <= 0xDFFF else chr(c))
                continue
            if sp < sl:
                b2 = src[sp]
                if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _cont(b2):
                    out.append(REPL)
                    continue
            out.append(REPL)
            break
        elif 0xF0 <= b1 <= 0xF7:
            if sp + 2 < sl:
                b2, b3, b4 = src[sp], src[sp + 1], src[sp + 2]
                sp += 3
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if not (_cont(b2) and _cont(b3) and _cont(b4)) or not 0x10000 <= uc < 0x110000:
                    out.append(REPL)
                    sp -= 4
                    c1, c2 = src[sp], src[sp + 1]
                    sp += 1
                    if (
                        c1 > 0xF4
                        or (c1 == 0xF0 and (c2 < 0x90 or c2 > 0xBF))
                        or (c1 == 0xF4 and (c2 & 0xF0) != 0x80)
                        or not _cont(c2)
                    ):
                        pass  # length 1
                    elif not _cont(src[sp + 1]):
                        sp += 1  # length 2
                    else:
                        sp += 2  # length 3
                else:
                    out.append(chr(uc))
                continue
            if b1 > 0xF4 or (
                sp < sl
                and (
                    (b1 == 0xF0 and (src[sp] < 0x90 or src[sp] > 0xBF))
                    or (b1 == 0xF4 and (src[sp] & 0xF0) != 0x80)
                    or not _cont(src[sp])
                )
            ):
                out.append(REPL)
                continue
            sp += 1
            out.append(REPL)
            if sp < sl and not _cont(src[sp]):
                continue
            break
        else:
            out.append(REPL)
    return "".join(out)


def java_parse_int(s: str, bits: int = 32) -> int:
    """``Integer.parseInt`` / ``Long.parseLong``: no spaces or underscores, int range."""
    if _INT.match(s):
        v = int(s)
        if -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
            return v
    raise NumberFormatError(f'For input string: "{s}"')


MIN64 = -(1 << 63)
MAX64 = (1 << 63) - 1


def wrap64(x: int) -> int:
    """Java ``long`` arithmetic: ``x`` wrapped into [-2^63, 2^63)."""
    if MIN64 <= x <= MAX64:
        return x
    return (x - MIN64) % (1 << 64) + MIN64


def wrap32(x: int) -> int:
    """Java ``int`` arithmetic: ``x`` wrapped into [-2^31, 2^31)."""
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)
