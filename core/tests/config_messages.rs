//! A config the reader refuses gets a message naming the offending value
//! and where it is. Every binding and the CLI read configs through the
//! core, so each shows these messages as they are.

use shardring::{Ring, RingConfig, RingError};

/// What follows the heading "invalid ring config: " of a reader's message.
fn unheaded(message: String) -> String {
    match message.strip_prefix("invalid ring config: ") {
        Some(rest) => rest.to_owned(),
        None => panic!("a config the reader refuses says so first: {message:?}"),
    }
}

/// The message of the config `json` refuses, after its heading.
fn refused(json: &str) -> String {
    match Ring::from_json(json) {
        Err(RingError::InvalidConfig { message }) => unheaded(message),
        other => panic!("{json:?}: {other:?}"),
    }
}

/// The message of the config bytes `json` refuses, after its heading.
fn refused_bytes(json: &[u8]) -> String {
    match RingConfig::from_json_bytes(json) {
        Err(RingError::InvalidConfig { message }) => unheaded(message),
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(json)),
    }
}

const BOM_ADVICE: &str = "a byte-order mark (U+FEFF, bytes EF BB BF), which JSON text must not contain \
                          (RFC 8259, section 8.1); save the file as UTF-8 without a byte-order mark";

#[test]
fn a_byte_order_mark_is_named_with_its_position() {
    let config = r#"{"format_version":1,"nodes":[{"id":"a"}]}"#;
    assert_eq!(
        refused(&format!("\u{feff}{config}")),
        format!("expected value at line 1 column 1: the text starts with {BOM_ADVICE}")
    );
    // Through bytes, as a file holds it: the same message.
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend_from_slice(config.as_bytes());
    assert_eq!(refused_bytes(&bytes), format!("expected value at line 1 column 1: the text starts with {BOM_ADVICE}"));
    // One inside the text (two files concatenated): its path and position.
    assert_eq!(
        refused("{\"format_version\":1,\"nodes\":[{\"id\":\"a\"},\u{feff}{\"id\":\"b\"}]}"),
        format!("nodes[1]: expected value at line 1 column 41: there is {BOM_ADVICE}")
    );
    // Without it the config reads.
    assert!(Ring::from_json(config).is_ok());
}

/// `1e-400` rounds to 0 in a 64-bit float; read as 0, a node given it as
/// its weight would own nothing without a word. Zeros written as zeros, a
/// subnormal, and digits inside strings still read.
#[test]
fn a_number_too_small_for_a_float_is_named_as_written_with_its_field() {
    let small = "is too small: a 64-bit float rounds it to 0 (the smallest is about 4.9e-324); write 0 if 0 is meant";
    assert_eq!(
        refused("{\"format_version\":1,\n\"nodes\":[{\"id\":\"a\",\"weight\":1e-400}]}"),
        format!("nodes[0].weight: 1e-400 {small}, at line 2 column 29")
    );
    // The second of three zeros by value: the others are written as zeros,
    // and the ids hold digits and an "e" that are not numbers.
    assert_eq!(
        refused(
            r#"{"format_version":1,"nodes":[{"id":"1e-999","weight":0.0},{"id":"b","weight":-0.5e-400},{"id":"c","weight":0e9}]}"#
        ),
        format!("nodes[1].weight: -0.5e-400 {small}, at line 1 column 78")
    );
    let read = |json: &str| Ring::from_json(json).unwrap().nodes().iter().map(|n| n.weight()).collect::<Vec<f64>>();
    assert_eq!(
        read(
            r#"{"format_version":1,"nodes":[{"id":"1e-999","weight":0.0},{"id":"b","weight":1e-310},{"id":"c","weight":0e9}]}"#
        ),
        [0.0, 1e-310, 0.0]
    );
}

#[test]
fn a_number_too_large_for_a_float_is_named_as_written_with_its_field() {
    let range = "is out of range: a number must fit a 64-bit float (at most about 1.8e308 in magnitude)";
    assert_eq!(
        refused("{\"format_version\":1,\n\"nodes\":[{\"id\":\"a\",\"weight\":1e400}]}"),
        format!("nodes[0].weight: 1e400 {range} at line 2 column 33")
    );
    assert_eq!(
        refused(r#"{"format_version":1,"nodes":[{"id":"a","weight":-1.5E+400 }]}"#),
        format!("nodes[0].weight: -1.5E+400 {range} at line 1 column 57")
    );
    // A long literal is cut, with its length.
    let long = format!("1{}", "0".repeat(332));
    assert_eq!(
        refused(&format!(r#"{{"format_version":1,"nodes":[{{"id":"a","weight":{long}}}]}}"#)),
        format!("nodes[0].weight: {}... (333 characters) {range} at line 1 column 381", &long[..40])
    );
    // Any field, not only weights.
    assert_eq!(
        refused(r#"{"format_version":1,"seed":1e999,"nodes":[{"id":"a"}]}"#),
        format!("seed: 1e999 {range} at line 1 column 32")
    );
    // The largest finite double still reads (and is then refused as a weight by the builder, naming it).
    assert!(matches!(
        Ring::from_json(r#"{"format_version":1,"nodes":[{"id":"a","weight":1.7976931348623157e308}]}"#),
        Err(RingError::TooManyPoints { .. })
    ));
}

#[test]
fn a_parse_error_names_the_innermost_value_once() {
    assert_eq!(
        refused(r#"{"format_version":1,"nodes":[{"id":"a", 3}]}"#),
        "nodes[0]: key must be a string at line 1 column 41"
    );
    assert_eq!(
        refused(r#"{"format_version":1,"nodes":[{"id":"a"}"#),
        "nodes: EOF while parsing a list at line 1 column 39"
    );
    assert_eq!(refused("{\"format_version\":1,"), "EOF while parsing a value at line 1 column 20");
    // Errors the reader finds itself keep their one path.
    assert_eq!(
        refused(r#"{"format_version":1,"nodes":[{"id":"a","zone":null}]}"#),
        "nodes[0].zone: null is not a value; leave the field out for its default at line 1 column 50"
    );
    assert_eq!(
        refused(r#"{"format_version":1,"nodes":[{"id":"a","weight":1,"weight":2}]}"#),
        "nodes[0]: duplicate key \"weight\"; a key may appear once at line 1 column 58"
    );
}

#[test]
fn bytes_that_are_not_utf8_are_named_with_their_position() {
    assert_eq!(
        refused_bytes(b"{\"format_version\":1,\n\"nodes\":[{\"id\":\"a\xff\"}]}"),
        "byte 0xFF at line 2 column 18 (offset 38) is not UTF-8: a config is UTF-8 text"
    );
    // A file saved as UTF-16 (PowerShell's `>` writes one) or UTF-32.
    let utf16: Vec<u8> = [0xFF, 0xFE].into_iter().chain("{}".encode_utf16().flat_map(u16::to_le_bytes)).collect();
    assert_eq!(
        refused_bytes(&utf16),
        "the text starts with a UTF-16 byte-order mark (bytes FF FE): a config is UTF-8; save the file as UTF-8"
    );
    assert_eq!(
        refused_bytes(&[0xFE, 0xFF, 0, b'{']),
        "the text starts with a UTF-16 byte-order mark (bytes FE FF): a config is UTF-8; save the file as UTF-8"
    );
    assert_eq!(
        refused_bytes(&[0xFF, 0xFE, 0, 0, b'{', 0, 0, 0]),
        "the text starts with a UTF-32 byte-order mark (bytes FF FE 00 00): a config is UTF-8; save the file as UTF-8"
    );
    assert!(RingConfig::from_json_bytes("{\"format_version\":1,\"nodes\":[{\"id\":\"café\"}]}".as_bytes()).is_ok());
}

/// UTF-16 or UTF-32 text without a byte-order mark has NUL bytes where
/// JSON text has none: named as such, not as a JSON syntax error.
#[test]
fn utf16_without_a_byte_order_mark_is_named() {
    let text = r#"{"format_version": 1, "nodes": []}"#;
    let utf16le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let utf16be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let utf32be: Vec<u8> = text.chars().flat_map(|c| (c as u32).to_be_bytes()).collect();
    for bytes in [utf16le, utf16be, utf32be] {
        let message = refused_bytes(&bytes);
        assert!(message.contains("looks like UTF-16 or UTF-32 without a byte-order mark"), "{message}");
    }
}
