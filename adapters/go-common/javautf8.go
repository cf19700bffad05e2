// JavaUTF8: header keys decoded as Kafka decodes them (Java's lenient UTF-8).

package adaptercommon

import (
	"strings"
	"unicode/utf8"
)

// JavaUTF8 decodes like Java's new String(bytes, UTF_8) (JDK 17 String.decodeUTF8_UTF16, as
// the kit's conformance/primitives/java.py does), which Kafka uses for header keys: malformed
// input becomes U+FFFD by the JDK's rules, not Go's (one U+FFFD per byte).
func JavaUTF8(src []byte) string {
	if utf8.Valid(src) {
		return string(src)
	}
	cont := func(b byte) bool { return b&0xC0 == 0x80 }
	var out strings.Builder
	const repl = utf8.RuneError
	sp, sl := 0, len(src)
	for sp < sl {
		b1 := src[sp]
		sp++
		switch {
		case b1 < 0x80:
			out.WriteByte(b1)
		case b1 >= 0xC2 && b1 <= 0xDF:
			if sp < sl {
				if b2 := src[sp]; cont(b2) {
					out.WriteRune(rune(b1&0x1F)<<6 | rune(b2&0x3F))
					sp++
				} else {
					out.WriteRune(repl)
				}
				continue
			}
			out.WriteRune(repl)
			sp = sl
		case b1 >= 0xE0 && b1 <= 0xEF:
			bad2 := func(b2 byte) bool { return (b1 == 0xE0 && b2&0xE0 == 0x80) || !cont(b2) }
			if sp+1 < sl {
				b2, b3 := src[sp], src[sp+1]
				if bad2(b2) || !cont(b3) {
					out.WriteRune(repl)
					if !bad2(b2) {
						sp++
					}
					continue
				}
				sp += 2
				c := rune(b1&0x0F)<<12 | rune(b2&0x3F)<<6 | rune(b3&0x3F)
				if c >= 0xD800 && c <= 0xDFFF {
					c = repl
				}
				out.WriteRune(c)
				continue
			}
			out.WriteRune(repl)
			if !(sp < sl && bad2(src[sp])) {
				sp = sl
			}
		case b1 >= 0xF0 && b1 <= 0xF7:
			bad2 := func(b2 byte) bool {
				return b1 > 0xF4 || (b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) ||
					(b1 == 0xF4 && b2&0xF0 != 0x80) || !cont(b2)
			}
			if sp+2 < sl {
				b2, b3, b4 := src[sp], src[sp+1], src[sp+2]
				uc := rune(b1&0x07)<<18 | rune(b2&0x3F)<<12 | rune(b3&0x3F)<<6 | rune(b4&0x3F)
				if cont(b2) && cont(b3) && cont(b4) && uc >= 0x10000 && uc < 0x110000 {
					out.WriteRune(uc)
					sp += 3
					continue
				}
				out.WriteRune(repl)
				if !bad2(b2) {
					if cont(b3) {
						sp += 2
					} else {
						sp++
					}
				}
				continue
			}
			out.WriteRune(repl)
			if b1 > 0xF4 || (sp < sl && bad2(src[sp])) {
				continue
			}
			sp++
			if !(sp < sl && !cont(src[sp])) {
				sp = sl
			}
		default:
			out.WriteRune(repl)
		}
	}
	return out.String()
}
