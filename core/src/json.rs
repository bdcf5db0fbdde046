//! The strict JSON reader of configs and of the records kept beside them:
//! a key given twice or a `null` is an error, every error names the field's
//! path in JSON terms, and text that is not UTF-8 (a UTF-16 file, a stray
//! byte) is named as such. [`RingConfig`](crate::RingConfig) and the
//! membership records read through it.

use std::cell::{Cell, RefCell};

use crate::error::RingError;

/// A serde error prefixed with the path of the field it concerns
/// (`nodes[1].weight: invalid type: null, expected a number`). An unknown
/// field's path would end in the field itself, which the message already
/// names. Rust type names in serde's messages are spelt as JSON types.
pub(crate) fn with_path(path: &str, message: &str) -> String {
    let path =
        if message.starts_with("unknown field") { path.rfind(['.', '[']).map_or("", |end| &path[..end]) } else { path };
    let mut message = message.to_owned();
    for (rust, json) in [
        ("expected f64", "expected a number"),
        ("expected u32", "expected a whole number from 0 to 4294967295"),
        ("expected u64", "expected a whole number from 0 to 18446744073709551615"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected a sequence", "expected an array"),
    ] {
        message = message.replace(rust, json);
    }
    if path.is_empty() || path == "." { message } else { format!("{path}: {message}") }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Reads JSON into a [`serde_json::Value`] strictly: a key given twice in
/// one object, or a `null` anywhere, is an error naming its path. (serde_json
/// alone keeps the last of two equal keys, so `{"weight": 1, "weight": 0}`
/// would silently drain a node, and `null` would silently mean "default" for
/// some fields and be an error for others; here a field is either left out,
/// meaning its default, or given a valid value.)
struct Strict<'p> {
    path: &'p str,
    /// Set once an error names its path: the innermost value being read
    /// prefixes a parse error with its path, and the values around it pass
    /// the error on unchanged.
    placed: &'p Cell<bool>,
    /// The paths of the fractional numbers read as 0, in document order
    /// (see [`underflow`]).
    zeros: &'p RefCell<Vec<String>>,
}

impl Strict<'_> {
    /// Only an object is a config (serde would also read a struct from a
    /// JSON array, by position).
    fn value<E: serde::de::Error>(&self, value: serde_json::Value) -> Result<serde_json::Value, E> {
        if self.path.is_empty() {
            return Err(self.refuse(format_args!("expected a JSON object, found {}", json_kind(&value))));
        }
        Ok(value)
    }

    fn at(&self, step: std::fmt::Arguments<'_>) -> String {
        format!("{}{step}", self.path)
    }

    fn shown(&self) -> &str {
        if self.path.is_empty() { "the config" } else { self.path }
    }

    /// An error this value found itself, its path already in `message`.
    fn refuse<E: serde::de::Error>(&self, message: std::fmt::Arguments<'_>) -> E {
        self.placed.set(true);
        E::custom(message)
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Strict<'_> {
    type Value = serde_json::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<serde_json::Value, D::Error> {
        use serde::de::Error;
        let (path, placed) = (self.path, self.placed);
        // serde_json's message keeps its " at line L column C", which
        // `custom` reads back as the error's position.
        deserializer.deserialize_any(self).map_err(|e| {
            if placed.replace(true) || path.is_empty() { e } else { D::Error::custom(format_args!("{path}: {e}")) }
        })
    }
}

impl<'de> serde::de::Visitor<'de> for Strict<'_> {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<serde_json::Value, E> {
        self.value(v.into())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<serde_json::Value, E> {
        self.value(v.into())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<serde_json::Value, E> {
        self.value(v.into())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<serde_json::Value, E> {
        if v == 0.0 {
            self.zeros.borrow_mut().push(self.path.to_owned());
        }
        self.value(v.into())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<serde_json::Value, E> {
        self.value(v.into())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<serde_json::Value, E> {
        self.value::<E>(serde_json::Value::Null)?;
        Err(self.refuse(format_args!("{}: null is not a value; leave the field out for its default", self.shown())))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<serde_json::Value, A::Error> {
        self.value::<A::Error>(serde_json::Value::Array(Vec::new()))?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Strict {
            path: &self.at(format_args!("[{}]", items.len())),
            placed: self.placed,
            zeros: self.zeros,
        })? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<serde_json::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() { key.clone() } else { self.at(format_args!(".{key}")) };
            if object.contains_key(&key) {
                return Err(self.refuse(format_args!("{}: duplicate key {key:?}; a key may appear once", self.shown())));
            }
            let value = map.next_value_seed(Strict { path: &path, placed: self.placed, zeros: self.zeros })?;
            object.insert(key, value);
        }
        Ok(serde_json::Value::Object(object))
    }
}

/// Reads a JSON object into `T` by the config rules: a key given twice in
/// one object or a `null` anywhere is an error, and errors name the field's
/// path in JSON terms (`nodes[1].weight: invalid type: string "2", expected
/// a number`), the value when the text shows it (`nodes[0].weight: 1e400 is
/// out of range ...`) and, for malformed JSON, the line and column. Used
/// for ring configs and for the records other crates keep beside them (etcd
/// member records).
///
/// Errors: [`RingError::InvalidConfig`] with that message. A byte-order
/// mark (U+FEFF) is an error naming its position: RFC 8259 (section 8.1)
/// forbids one in JSON text, and an editor that writes one would do so again.
pub fn from_json_strict<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, RingError> {
    use serde::de::DeserializeSeed;
    let invalid = |e: serde_json::Error| RingError::InvalidConfig { message: unreadable(&syntax_message(json, &e)) };
    let mut reader = serde_json::Deserializer::from_str(json);
    let placed = Cell::new(false);
    let zeros = RefCell::new(Vec::new());
    let value = Strict { path: "", placed: &placed, zeros: &zeros }
        .deserialize(&mut reader)
        .and_then(|v| reader.end().map(|()| v))
        .map_err(invalid)?;
    if let Some(message) = underflow(json, &zeros.into_inner()) {
        return Err(RingError::InvalidConfig { message: unreadable(&message) });
    }
    serde_path_to_error::deserialize(value).map_err(|e| RingError::InvalidConfig {
        message: unreadable(&with_path(&e.path().to_string(), &e.inner().to_string())),
    })
}

/// A number written with a non-zero digit that a 64-bit float rounds to 0
/// (`1e-400`): serde_json reads it as 0, which would silently drain a node
/// given it as its weight. The message names its path, as written, and its
/// position. `zeros` are the paths of the fractional numbers read as 0, in
/// document order; the text's fractional literals that read as 0 are the
/// same numbers in the same order.
fn underflow(json: &str, zeros: &[String]) -> Option<String> {
    if zeros.is_empty() {
        return None;
    }
    let bytes = json.as_bytes();
    let (mut i, mut zero) = (0, 0);
    while i < bytes.len() && zero < zeros.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && in_number(bytes[i]) {
                    i += 1;
                }
                let literal = &json[start..i];
                let fractional = literal.contains(['.', 'e', 'E']);
                if !fractional || literal.parse::<f64>().is_ok_and(|v| v != 0.0) {
                    continue;
                }
                let mantissa = literal.split(['e', 'E']).next().unwrap_or_default();
                if mantissa.bytes().any(|b| matches!(b, b'1'..=b'9')) {
                    let (line, column) = line_column(bytes, start);
                    return Some(with_path(
                        &zeros[zero],
                        &format!(
                            "{} is too small: a 64-bit float rounds it to 0 (the smallest is about \
                             4.9e-324); write 0 if 0 is meant, at line {line} column {column}",
                            shown_number(literal)
                        ),
                    ));
                }
                zero += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// The message of a config that could not be read, under the heading
/// "invalid ring config: ".
fn unreadable(what: &str) -> String {
    format!("invalid ring config: {what}")
}

/// The byte offset of serde_json's (1-based) `line` and byte `column`, at
/// most `text.len()`.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (start + column).min(text.len())
}

/// serde_json's message for malformed JSON, with the value it stopped at:
/// a number too large for a 64-bit float is named as written, and a
/// byte-order mark is named as one.
fn syntax_message(json: &str, error: &serde_json::Error) -> String {
    let message = error.to_string();
    if error.line() == 0 {
        return message;
    }
    let at = offset_of(json, error.line(), error.column());
    const BOM: char = '\u{feff}';
    // serde_json's column is the byte it stopped at (1-based), or the one before.
    let before = at.saturating_sub(1);
    if [before, at].iter().any(|&i| json.get(i..).is_some_and(|rest| rest.starts_with(BOM))) {
        let found = if json.starts_with(BOM) { "the text starts with" } else { "there is" };
        return format!(
            "{message}: {found} a byte-order mark (U+FEFF, bytes EF BB BF), which JSON text must not contain \
             (RFC 8259, section 8.1); save the file as UTF-8 without a byte-order mark"
        );
    }
    if message.contains("number out of range") {
        let bytes = json.as_bytes();
        let mut end = before.min(bytes.len());
        while end < bytes.len() && in_number(bytes[end]) {
            end += 1;
        }
        let mut start = end;
        while start > 0 && in_number(bytes[start - 1]) {
            start -= 1;
        }
        return message.replacen(
            "number out of range",
            &format!(
                "{} is out of range: a number must fit a 64-bit float (at most about 1.8e308 in magnitude)",
                shown_number(&json[start..end])
            ),
            1,
        );
    }
    message
}

/// Whether `byte` can be part of a JSON number literal.
fn in_number(byte: u8) -> bool {
    byte.is_ascii_digit() || matches!(byte, b'-' | b'+' | b'.' | b'e' | b'E')
}

/// A number literal as a message shows it: cut after 40 characters, with
/// its length.
fn shown_number(literal: &str) -> String {
    if literal.len() > 40 { format!("{}... ({} characters)", &literal[..40], literal.len()) } else { literal.into() }
}

/// The (1-based) line and column of byte offset `at`, the column counted in bytes.
fn line_column(bytes: &[u8], at: usize) -> (usize, usize) {
    let line_start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    (1 + bytes[..line_start].iter().filter(|&&b| b == b'\n').count(), at - line_start + 1)
}

/// `bytes` as UTF-8 text, or an error naming the first byte that is not
/// UTF-8 and where it is.
pub(crate) fn config_text(bytes: &[u8]) -> Result<&str, RingError> {
    // UTF-32 first: its little-endian mark begins with UTF-16's.
    for (mark, encoding) in [
        (&[0xFF, 0xFE, 0, 0][..], "UTF-32"),
        (&[0, 0, 0xFE, 0xFF][..], "UTF-32"),
        (&[0xFF, 0xFE][..], "UTF-16"),
        (&[0xFE, 0xFF][..], "UTF-16"),
    ] {
        if bytes.starts_with(mark) {
            let shown: Vec<String> = mark.iter().map(|b| format!("{b:02X}")).collect();
            return Err(RingError::InvalidConfig {
                message: unreadable(&format!(
                    "the text starts with a {encoding} byte-order mark (bytes {}): a config is UTF-8; save the file as UTF-8",
                    shown.join(" ")
                )),
            });
        }
    }
    // JSON text holds no NUL byte; UTF-16 or UTF-32 text without a
    // byte-order mark has one in its first four bytes.
    if let Some(at) = bytes.iter().take(4).position(|&b| b == 0) {
        return Err(RingError::InvalidConfig {
            message: unreadable(&format!(
                "byte {at} is NUL: the text looks like UTF-16 or UTF-32 without a byte-order mark; a config is \
                 UTF-8; save the file as UTF-8"
            )),
        });
    }
    let error = match std::str::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(error) => error,
    };
    let at = error.valid_up_to();
    let (line, column) = line_column(bytes, at);
    Err(RingError::InvalidConfig {
        message: unreadable(&format!(
            "byte 0x{:02X} at line {line} column {column} (offset {at}) is not UTF-8: a config is UTF-8 text",
            bytes[at]
        )),
    })
}
