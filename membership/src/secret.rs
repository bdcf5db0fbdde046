//! Credentials: read from a file or an environment variable, never taken
//! from a command-line flag (which `ps` shows to every user), and never
//! printed: [`Secret`]'s `Debug` and `Display` hide the value, and no error
//! names it. Shared by the follower, `Member`/`Admin` and the CLI.

use std::fmt;
use std::path::{Path, PathBuf};

/// A password or token. `Debug` prints `Secret(<redacted>)` and `Display`
/// `<redacted>`; the value is reached through [`Secret::expose`] only,
/// where it goes to the server.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Secret {
    /// A secret the application already holds (from its vault, say).
    ///
    /// Errors: [`SecretError::Empty`] for an empty value.
    pub fn new(value: impl Into<String>) -> Result<Secret, SecretError> {
        let value = value.into();
        if value.is_empty() {
            return Err(SecretError::Empty { origin: "the password given".into() });
        }
        Ok(Secret(value))
    }

    /// The secret in the file at `path`: its first line, without the line
    /// end. Refused when group or others may read the file (mode & 0o077
    /// not 0), as ssh refuses such a key, and when it is empty.
    ///
    /// Errors: [`SecretError::Exposed`], [`SecretError::Unreadable`],
    /// [`SecretError::Empty`], [`SecretError::NotText`], each naming the
    /// file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Secret, SecretError> {
        let path = path.as_ref();
        let bytes = read_private(path)?;
        let text = String::from_utf8(bytes).map_err(|_| SecretError::NotText { origin: path.display().to_string() })?;
        let line = text.lines().next().unwrap_or("");
        if line.is_empty() {
            return Err(SecretError::Empty { origin: path.display().to_string() });
        }
        Ok(Secret(line.to_owned()))
    }

    /// The secret in the environment variable `name`, if it is set.
    ///
    /// Errors: [`SecretError::Empty`] or [`SecretError::NotText`] naming
    /// the variable.
    pub fn from_env(name: &str) -> Result<Option<Secret>, SecretError> {
        match std::env::var(name) {
            Ok(value) if value.is_empty() => Err(SecretError::Empty { origin: name.to_owned() }),
            Ok(value) => Ok(Some(Secret(value))),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(SecretError::NotText { origin: name.to_owned() }),
        }
    }

    /// The value, for the request that carries it to the server.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Why a credential cannot be read. Each names the file or variable, never
/// the value.
#[derive(Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// Group or others may read the file.
    #[error("{}: readable by group or others (mode {mode:03o}): make it readable by its owner alone (chmod 600)", path.display())]
    Exposed {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file cannot be read (missing, a directory, no permission).
    #[error("{}: cannot read it: {message}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The file's first line, or the variable, is empty.
    #[error("{origin}: empty")]
    Empty {
        /// The file or variable.
        origin: String,
    },
    /// The file or variable is not UTF-8.
    #[error("{origin}: not UTF-8")]
    NotText {
        /// The file or variable.
        origin: String,
    },
}

/// The most a credential, key or certificate file may hold: 1 MiB (a CA
/// bundle of a few hundred certificates); `/dev/zero` is refused, not read
/// until memory runs out.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The bytes of a regular file of at most [`MAX_FILE_BYTES`]: a FIFO, a
/// device or a directory is refused at once instead of blocking or
/// reading forever.
///
/// Errors: [`SecretError::Unreadable`] naming the file and why.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>, SecretError> {
    let unreadable = |message: String| SecretError::Unreadable { path: path.to_owned(), message };
    let metadata = std::fs::metadata(path).map_err(|e| unreadable(e.to_string()))?;
    if !metadata.is_file() {
        return Err(unreadable("not a regular file".into()));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(unreadable(format!("{} bytes, more than the {MAX_FILE_BYTES} allowed", metadata.len())));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    use std::io::Read;
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| unreadable(e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(unreadable(format!("more than the {MAX_FILE_BYTES} bytes allowed")));
    }
    Ok(bytes)
}

/// The bytes of a file that holds a secret (a password, a TLS private
/// key), refused when group or others may read it, and as
/// [`read_bounded`] refuses. On Windows, which has no mode bits, the
/// file's access control list alone protects it: it is not checked.
///
/// Errors: [`SecretError::Exposed`] (Unix) or [`SecretError::Unreadable`],
/// naming the file.
pub fn read_private(path: &Path) -> Result<Vec<u8>, SecretError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let unreadable = |e: std::io::Error| SecretError::Unreadable { path: path.to_owned(), message: e.to_string() };
        let mode = std::fs::metadata(path).map_err(unreadable)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(SecretError::Exposed { path: path.to_owned(), mode });
        }
    }
    read_bounded(path)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn file(mode: u32, content: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("password");
        std::fs::write(&path, content).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        (dir, path)
    }

    #[test]
    fn a_secret_file_must_be_its_owners_alone_and_errors_never_show_the_value() {
        let (_dir, path) = file(0o600, "hunter2\n");
        let secret = Secret::from_file(&path).unwrap();
        assert_eq!(secret.expose(), "hunter2");
        assert_eq!(format!("{secret:?}"), "Secret(<redacted>)");
        for mode in [0o640, 0o604, 0o644, 0o666] {
            let (_dir, path) = file(mode, "hunter2\n");
            let error = Secret::from_file(&path).unwrap_err();
            assert_eq!(error, SecretError::Exposed { path: path.clone(), mode });
            let message = error.to_string();
            assert!(message.contains(&path.display().to_string()) && !message.contains("hunter2"), "{message}");
        }
        let (_dir, path) = file(0o600, "\n");
        assert_eq!(Secret::from_file(&path).unwrap_err(), SecretError::Empty { origin: path.display().to_string() });
        let missing = Path::new("/nonexistent/password");
        assert!(matches!(Secret::from_file(missing), Err(SecretError::Unreadable { .. })));
    }
}
