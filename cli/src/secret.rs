//! Credentials: read from a file or an environment variable, never taken
//! from a command-line flag (which `ps` shows to every user), and never
//! printed: [`Secret`]'s `Debug` hides the value, and no error names it.

use std::fmt;
use std::path::{Path, PathBuf};

/// A password or token. `Debug` prints `Secret(<redacted>)`; the value is
/// reached through [`Secret::expose`] only, where it goes to the server.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Secret {
    /// The value, for the request that carries it to the server.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

/// Why a credential cannot be read. Each names the file or variable, never
/// the value.
#[derive(Debug, PartialEq, thiserror::Error)]
pub(crate) enum SecretError {
    #[error("{}: readable by group or others (mode {mode:03o}): make it readable by its owner alone (chmod 600)", path.display())]
    Exposed { path: PathBuf, mode: u32 },
    #[error("{}: cannot read it: {message}", path.display())]
    Unreadable { path: PathBuf, message: String },
    #[error("{origin}: empty")]
    Empty { origin: String },
    #[error("{origin}: not UTF-8")]
    NotText { origin: String },
}

/// The secret in the file at `path`: its first line, without the line end.
/// Refused when group or others may read the file (mode & 0o077 not 0), as
/// ssh refuses such a key, and when it is empty.
pub(crate) fn from_file(path: &Path) -> Result<Secret, SecretError> {
    use std::os::unix::fs::PermissionsExt;
    let unreadable = |e: std::io::Error| SecretError::Unreadable { path: path.to_owned(), message: e.to_string() };
    let mode = std::fs::metadata(path).map_err(unreadable)?.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(SecretError::Exposed { path: path.to_owned(), mode });
    }
    let bytes = std::fs::read(path).map_err(unreadable)?;
    let text = String::from_utf8(bytes).map_err(|_| SecretError::NotText { origin: path.display().to_string() })?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        return Err(SecretError::Empty { origin: path.display().to_string() });
    }
    Ok(Secret(line.to_owned()))
}

/// The secret in the environment variable `name`, if it is set.
pub(crate) fn from_env(name: &str) -> Result<Option<Secret>, SecretError> {
    match std::env::var(name) {
        Ok(value) if value.is_empty() => Err(SecretError::Empty { origin: name.to_owned() }),
        Ok(value) => Ok(Some(Secret(value))),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(SecretError::NotText { origin: name.to_owned() }),
    }
}

/// `--*-password-file`'s parser: the secret, or why not (clap prints it
/// after the path, which is not secret).
pub(crate) fn parse_file(text: &str) -> Result<Secret, String> {
    from_file(Path::new(text)).map_err(|e| e.to_string())
}

#[cfg(test)]
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
        let secret = from_file(&path).unwrap();
        assert_eq!(secret.expose(), "hunter2");
        assert_eq!(format!("{secret:?}"), "Secret(<redacted>)");
        for mode in [0o640, 0o604, 0o644, 0o666] {
            let (_dir, path) = file(mode, "hunter2\n");
            let error = from_file(&path).unwrap_err();
            assert_eq!(error, SecretError::Exposed { path: path.clone(), mode });
            let message = error.to_string();
            assert!(message.contains(&path.display().to_string()) && !message.contains("hunter2"), "{message}");
        }
        let (_dir, path) = file(0o600, "\n");
        assert_eq!(from_file(&path).unwrap_err(), SecretError::Empty { origin: path.display().to_string() });
        let missing = Path::new("/nonexistent/password");
        assert!(matches!(from_file(missing), Err(SecretError::Unreadable { .. })));
    }
}
