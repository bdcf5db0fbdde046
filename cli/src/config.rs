//! Reading the files the tool is given: ring configs (the core's JSON
//! configs, read as bytes so that a file that is not UTF-8 is refused
//! naming the byte and its position) and key files.

use std::path::Path;

use shardring::{Ring, RingConfig, RingError};

use crate::error::CliError;

/// The bytes of `path`; errors name the file.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|source| CliError::Read { path: path.display().to_string(), source })
}

/// The ring of the config file `path`; errors name the file, then the
/// field, value and position as the core's reader gives them.
pub(crate) fn load(path: &Path) -> Result<Ring, CliError> {
    let ring = RingConfig::from_json_bytes(&read(path)?).and_then(|config| config.build());
    ring.map_err(|source| CliError::Ring { path: path.display().to_string(), source })
}

/// A ring that can place keys: errors name the config file when it has no points.
pub(crate) fn load_placing(path: &Path) -> Result<Ring, CliError> {
    let ring = load(path)?;
    if ring.live_node_count() == 0 {
        return Err(CliError::Ring { path: path.display().to_string(), source: RingError::EmptyRing });
    }
    Ok(ring)
}
