//! What a key is on the command line, one rule for arguments, standard
//! input and key files:
//!
//! - A key is bytes, exactly as given: nothing is decoded, trimmed or
//!   normalised, and it need not be UTF-8 (the library hashes bytes).
//! - An argument is one key (its bytes as the operating system passes them).
//! - Standard input and key files hold one key per line; a line ends at LF
//!   (a last line may lack it), and an empty line is the empty key.
//! - A key ending in CR is refused, from an argument or a line alike: it is
//!   almost always a CR LF line end (a file from Windows, or `$(cat file)`),
//!   and placing it with the CR would silently give another owner.
//! - A key argument holding LF is refused too: `lookup` prints one line per
//!   key, and such a key would print as two.
//! - With `--null`, keys end at NUL instead and may hold any other byte
//!   (CR and LF included, in an argument too); output records then end in
//!   NUL too.

use std::ffi::OsStr;
use std::io::BufRead;

use crate::error::CliError;

/// How keys are separated in standard input and key files.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// One key per line, ending at LF; a key ending in CR is refused.
    Lines,
    /// Keys end at NUL (`--null`) and may hold any other byte.
    Nul,
}

impl Framing {
    pub(crate) fn of(null: bool) -> Framing {
        if null { Framing::Nul } else { Framing::Lines }
    }

    /// The byte that ends a key in input, and a record in output.
    pub(crate) fn terminator(self) -> u8 {
        match self {
            Framing::Lines => b'\n',
            Framing::Nul => 0,
        }
    }
}

/// The longest part of a key an error message shows.
const SHOWN: usize = 64;

/// `key` as an error message shows it: printable ASCII as is, other bytes
/// escaped (`\r`, `\xff`), cut after [`SHOWN`] bytes with the full length.
pub(crate) fn shown(key: &[u8]) -> String {
    let text = key[..key.len().min(SHOWN)].escape_ascii().to_string();
    if key.len() > SHOWN { format!("\"{text}\"... ({} bytes)", key.len()) } else { format!("\"{text}\"") }
}

/// Where keys come from: what an error advises for a key that ends in CR
/// depends on it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// `lookup`'s arguments.
    Arguments,
    /// `lookup`'s standard input.
    Stdin,
    /// `stats --keys FILE`.
    KeyFile,
}

impl Source {
    /// How to place a key that really ends in CR (or, for an argument,
    /// holds LF), from this source.
    fn null_advice(self) -> &'static str {
        match self {
            Source::Arguments => {
                "give --null (-0): the arguments are then placed as they are, and each output record ends in NUL"
            }
            Source::Stdin => "pass keys NUL-terminated on standard input with --null (-0)",
            Source::KeyFile => "write the --keys file with each key ending in NUL and give --null (-0)",
        }
    }
}

/// Checks `key` against the rule; `origin` names where it came from
/// ("argument 2", "standard input, line 3").
fn check(key: &[u8], framing: Framing, source: Source, origin: impl FnOnce() -> String) -> Result<(), CliError> {
    if framing == Framing::Nul {
        return Ok(());
    }
    if key.ends_with(b"\r") {
        return Err(CliError::Key {
            origin: origin(),
            message: format!(
                "the key {} ends in CR, almost always what is left of a CR LF line end, and it would be \
                 placed with the CR: remove the CRs (tr -d '\\r'), or, if a key really ends in CR, {}",
                shown(key),
                source.null_advice()
            ),
        });
    }
    // Only an argument can hold LF: in a line, LF ends the key.
    if key.contains(&b'\n') {
        return Err(CliError::Key {
            origin: origin(),
            message: format!(
                "the key {} holds LF, and lookup prints one line per key (the key, a tab, the node ids): \
                 to place keys holding LF, {}",
                shown(key),
                source.null_advice()
            ),
        });
    }
    Ok(())
}

/// The key argument `arg` (the `number`th, from 1) as bytes.
pub(crate) fn argument(arg: &OsStr, number: usize, framing: Framing) -> Result<&[u8], CliError> {
    let origin = || format!("key argument {number}");
    #[cfg(unix)]
    let key = std::os::unix::ffi::OsStrExt::as_bytes(arg);
    // Elsewhere arguments are UTF-16: a key must then be valid Unicode.
    #[cfg(not(unix))]
    let key = arg.to_str().map(str::as_bytes).ok_or_else(|| CliError::Key {
        origin: origin(),
        message: format!("{arg:?} is not valid Unicode; pass such a key on standard input"),
    })?;
    check(key, framing, Source::Arguments, origin)?;
    Ok(key)
}

/// The word naming one key's place in input: a line, or a NUL-terminated record.
fn unit(framing: Framing) -> &'static str {
    match framing {
        Framing::Lines => "line",
        Framing::Nul => "record",
    }
}

/// Calls `each` with every key standard input holds, as it reads them
/// (`input`: standard input, or what a test gives in its place).
pub(crate) fn each(
    input: impl BufRead,
    framing: Framing,
    mut each: impl FnMut(&[u8]) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let name = "standard input";
    for (i, key) in input.split(framing.terminator()).enumerate() {
        let key = key.map_err(|source| CliError::Read { path: name.to_owned(), source })?;
        check(&key, framing, Source::Stdin, || format!("{name}, {} {}", unit(framing), i + 1))?;
        each(&key)?;
    }
    Ok(())
}

/// Every key of `data` (a `--keys` file's bytes), in order; `name` is the
/// file's name in errors.
pub(crate) fn split<'a>(data: &'a [u8], framing: Framing, name: &str) -> Result<Vec<&'a [u8]>, CliError> {
    let end = framing.terminator();
    if data.is_empty() {
        return Ok(Vec::new());
    }
    // A terminator ends the last key; it does not start an empty one.
    let data = data.strip_suffix(&[end]).unwrap_or(data);
    let keys: Vec<&[u8]> = data.split(|&b| b == end).collect();
    for (i, key) in keys.iter().enumerate() {
        check(key, framing, Source::KeyFile, || format!("{name}, {} {}", unit(framing), i + 1))?;
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_at_lf_and_keep_every_other_byte() {
        let keys = split(b"a\n\n\xff b\n", Framing::Lines, "f").unwrap();
        assert_eq!(keys, [&b"a"[..], b"", b"\xff b"]);
        assert_eq!(split(b"a", Framing::Lines, "f").unwrap(), [&b"a"[..]]);
        assert!(split(b"", Framing::Lines, "f").unwrap().is_empty());
        // One LF is one empty key; two are two.
        assert_eq!(split(b"\n", Framing::Lines, "f").unwrap(), [&b""[..]]);
        assert_eq!(split(b"\n\n", Framing::Lines, "f").unwrap(), [&b""[..], b""]);
        let mut streamed = Vec::new();
        each(&b"a\n\n\xff b\n"[..], Framing::Lines, |k| {
            streamed.push(k.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(streamed, [b"a".to_vec(), b"".to_vec(), b"\xff b".to_vec()]);
    }

    #[test]
    fn a_key_ending_in_cr_is_refused_naming_its_line() {
        let error = split(b"a\nb\r\n", Framing::Lines, "keys.txt").unwrap_err().to_string();
        assert!(error.starts_with("keys.txt, line 2: the key \"b\\r\" ends in CR"), "{error}");
        let error = each(&b"a\r\n"[..], Framing::Lines, |_| Ok(())).unwrap_err().to_string();
        assert!(error.starts_with("standard input, line 1: the key \"a\\r\" ends in CR"), "{error}");
        // A CR inside a key is part of it.
        assert_eq!(split(b"a\rb\n", Framing::Lines, "f").unwrap(), [&b"a\rb"[..]]);
    }

    /// The advice for a key ending in CR fits where it came from: a --keys
    /// file is written NUL-terminated, standard input read with --null, an
    /// argument placed as it is with --null.
    #[test]
    fn the_advice_for_a_key_ending_in_cr_fits_its_source() {
        let error = split(b"a\r\n", Framing::Lines, "keys.txt").unwrap_err().to_string();
        assert!(error.ends_with("write the --keys file with each key ending in NUL and give --null (-0)"), "{error}");
        assert!(!error.contains("standard input"), "{error}");
        let error = each(&b"a\r\n"[..], Framing::Lines, |_| Ok(())).unwrap_err().to_string();
        assert!(error.ends_with("pass keys NUL-terminated on standard input with --null (-0)"), "{error}");
        let error = argument(OsStr::new("a\r"), 2, Framing::Lines).unwrap_err().to_string();
        assert!(error.starts_with("key argument 2: the key \"a\\r\" ends in CR"), "{error}");
        assert!(
            error.ends_with(
                "give --null (-0): the arguments are then placed as they are, and each output record ends in NUL"
            ),
            "{error}"
        );
    }

    /// A key argument holding LF would print as two lines: refused, naming
    /// it, unless --null frames the output.
    #[test]
    fn a_key_argument_holding_lf_is_refused_unless_null() {
        let error = argument(OsStr::new("a\nb"), 1, Framing::Lines).unwrap_err().to_string();
        assert_eq!(
            error,
            "key argument 1: the key \"a\\nb\" holds LF, and lookup prints one line per key (the key, a tab, \
             the node ids): to place keys holding LF, give --null (-0): the arguments are then placed as they \
             are, and each output record ends in NUL"
        );
        assert_eq!(argument(OsStr::new("a\nb\r"), 1, Framing::Nul).unwrap(), b"a\nb\r");
    }

    #[test]
    fn nul_framing_takes_any_other_byte() {
        assert_eq!(split(b"a\r\n\0\0b", Framing::Nul, "f").unwrap(), [&b"a\r\n"[..], b"", b"b"]);
    }

    #[test]
    fn errors_show_long_and_binary_keys_escaped_and_cut() {
        assert_eq!(shown(b"a\"\xff\r"), "\"a\\\"\\xff\\r\"");
        let long = [b'x'; 100];
        assert_eq!(shown(&long), format!("\"{}\"... (100 bytes)", "x".repeat(64)));
    }
}
