//! A small, strict JSON reader and writer (RFC 8259), enough for the plan and the documents:
//! objects, arrays, strings (every escape, `\uXXXX` surrogate pairs included), true, false,
//! null, and numbers that are 64-bit integers (a plan holds no other numbers: a fraction or an
//! exponent is refused, as is an integer out of range). A duplicate key, a raw control
//! character in a string, a lone surrogate or text after the value is an error too.

use std::fmt::Write as _;

/// A JSON value; objects keep their keys in the order read (or given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

/// How deep arrays and objects may nest (a plan needs 4): deeper input is refused rather than
/// overflowing the stack.
const MAX_DEPTH: usize = 64;

/// The one JSON value of `text` (whitespace around it allowed), or what is wrong and where.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut reader = Reader { text, pos: 0 };
    let value = reader.value(0)?;
    reader.skip_whitespace();
    if reader.pos < text.len() {
        return Err(reader.error("text after the JSON value"));
    }
    Ok(value)
}

struct Reader<'a> {
    text: &'a str,
    /// byte offset of the next character
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> String {
        format!("JSON: {what} at byte {}", self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Consumes `c` after optional whitespace, or says what was expected.
    fn expect(&mut self, c: u8) -> Result<(), String> {
        self.skip_whitespace();
        if self.peek() != Some(c) {
            return Err(self.error(&format!("expected '{}'", char::from(c))));
        }
        self.pos += 1;
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        self.skip_whitespace();
        let rest = &self.text[self.pos..];
        let literal = [
            ("null", Value::Null),
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
        ]
        .into_iter()
        .find(|(word, _)| rest.starts_with(word));
        if let Some((word, value)) = literal {
            self.pos += word.len();
            return Ok(value);
        }
        match self.peek() {
            Some(b'{' | b'[') if depth >= MAX_DEPTH => Err(self.error("nested too deep")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::Str),
            Some(b'-' | b'0'..=b'9') => self.integer().map(Value::Int),
            Some(_) => Err(self.error("expected a JSON value")),
            None => Err(self.error("the text ended where a value was expected")),
        }
    }

    /// `{` "key": value, ... `}` (the reader is at `{`)
    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.pos += 1;
        let mut fields: Vec<(String, Value)> = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(fields));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key"));
            }
            let key = self.string()?;
            if fields.iter().any(|(k, _)| *k == key) {
                return Err(self.error(&format!("duplicate key {key:?}")));
            }
            self.expect(b':')?;
            let value = self.value(depth + 1)?;
            fields.push((key, value));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(fields));
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    /// `[` value, ... `]` (the reader is at `[`)
    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    /// A string (the reader is at its opening quote).
    fn string(&mut self) -> Result<String, String> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            // copy the run up to the next quote, backslash or control character: all ASCII, so
            // the run ends on a character boundary
            let run = self.text.as_bytes()[self.pos..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or_else(|| self.error("unterminated string"))?;
            out.push_str(&self.text[self.pos..self.pos + run]);
            self.pos += run;
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    out.push(self.escape()?);
                }
                _ => return Err(self.error("control character in a string")),
            }
        }
    }

    /// The character of an escape (the reader is after its backslash).
    fn escape(&mut self) -> Result<char, String> {
        let c = self
            .peek()
            .ok_or_else(|| self.error("unterminated string"))?;
        self.pos += 1;
        Ok(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                let code = match unit {
                    0xD800..=0xDBFF => {
                        // a high surrogate: its low half must follow as \uDC00..\uDFFF
                        if !self.text[self.pos..].starts_with("\\u") {
                            return Err(self.error("lone surrogate in a string"));
                        }
                        self.pos += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(self.error("lone surrogate in a string"));
                        }
                        0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err(self.error("lone surrogate in a string")),
                    _ => unit,
                };
                char::from_u32(code).ok_or_else(|| self.error("bad \\u escape"))?
            }
            _ => return Err(self.error("unknown escape in a string")),
        })
    }

    /// Four hexadecimal digits.
    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.text.as_bytes().get(self.pos..self.pos + 4);
        let digits = digits.filter(|d| d.iter().all(u8::is_ascii_hexdigit));
        let digits = digits.ok_or_else(|| self.error("expected 4 hex digits after \\u"))?;
        let value = digits.iter().fold(0, |acc, &d| {
            acc << 4 | char::from(d).to_digit(16).unwrap_or(0)
        });
        self.pos += 4;
        Ok(value)
    }

    /// `-?(0|[1-9][0-9]*)` as an i64; a fraction or an exponent is refused.
    fn integer(&mut self) -> Result<i64, String> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = self.text.as_bytes()[self.pos..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 || (digits > 1 && self.peek() == Some(b'0')) {
            return Err(self.error("malformed number"));
        }
        self.pos += digits;
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return Err(self.error("not an integer (the plan's numbers are integers)"));
        }
        self.text[start..self.pos]
            .parse()
            .map_err(|_| self.error("integer out of the 64-bit range"))
    }
}

// ---- writing ----

impl Value {
    /// A string value.
    pub fn str(text: &str) -> Value {
        Value::Str(text.to_owned())
    }

    /// An object of `(key, value)` pairs, in this order.
    pub fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
        Value::Object(fields.map(|(k, v)| (k.to_owned(), v)).into())
    }

    /// `None` as null.
    pub fn option<T>(value: Option<T>, make: impl FnOnce(T) -> Value) -> Value {
        value.map_or(Value::Null, make)
    }

    /// The compact JSON text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(value) => out.push_str(if *value { "true" } else { "false" }),
            Value::Int(value) => {
                let _ = write!(out, "{value}");
            }
            Value::Str(text) => write_string(out, text),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Value::Object(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(out, key);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// A JSON string: quotes, backslash and control characters escaped; the rest raw UTF-8.
fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
