//! The checkpoint file of `rebalance --resume`: what is done, one line per
//! key, read back on a rerun so nothing is copied twice.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use crate::error::CliError;

/// Records what is done, one line per key, and reads it back on a rerun.
pub(super) struct Checkpoint {
    file: Option<File>,
    done: HashSet<(String, Vec<u8>, bool)>,
}

impl Checkpoint {
    /// No checkpoint: nothing done before, nothing recorded.
    pub(super) fn none() -> Checkpoint {
        Checkpoint { file: None, done: HashSet::new() }
    }

    /// Opens (or creates) `path` for a plan from `from` to `to`.
    pub(super) fn open(path: Option<&PathBuf>, from: u64, to: u64, backend: &str) -> Result<Checkpoint, CliError> {
        let Some(path) = path else { return Ok(Checkpoint::none()) };
        let header = format!("# shardring rebalance checkpoint: {backend} from {from:016x} to {to:016x}");
        let mut done = HashSet::new();
        if let Ok(existing) = File::open(path) {
            let mut lines = BufReader::new(existing).lines();
            let first = lines.next().transpose()?.unwrap_or_default();
            if first != header {
                return Err(CliError::Rebalance(format!(
                    "{}: a checkpoint of another rebalance ({first:?}); this one is {header:?}",
                    path.display()
                )));
            }
            for line in lines {
                let line = line?;
                let mut parts = line.splitn(3, ' ');
                let (Some(action), Some(server), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
                    continue;
                };
                let Ok(key) = hex::decode(key) else { continue };
                done.insert((server.to_owned(), key, action == "deleted"));
            }
        }
        let mut file = OpenOptions::new().create(true).append(true).open(path)?;
        if file.metadata()?.len() == 0 {
            writeln!(file, "{header}")?;
        }
        Ok(Checkpoint { file: Some(file), done })
    }

    pub(super) fn is_done(&self, server: &str, key: &[u8], deletion: bool) -> bool {
        self.done.contains(&(server.to_owned(), key.to_vec(), deletion))
    }

    /// Appends one line, written at once (a killed run loses at most it).
    pub(super) fn record(&mut self, action: &str, server: &str, key: &[u8]) -> Result<(), CliError> {
        if let Some(file) = &mut self.file {
            file.write_all(format!("{action} {server} {}\n", hex::encode(key)).as_bytes())?;
        }
        Ok(())
    }
}
