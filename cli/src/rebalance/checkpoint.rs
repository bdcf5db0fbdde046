//! The checkpoint file of `rebalance --resume`: one line naming the plan
//! (the backend and both rings' fingerprints), whatever the number of keys.
//! A run that finds it is a resumed run: before reading a value it asks the
//! key's new owner whether it holds the key already (`EXISTS`, memcached's
//! `mg`), and counts such a key as done before. So a killed run resumes
//! without copying anything twice, and the file stays one line for ten
//! million keys. (The file used to hold one line per finished key, about
//! 80 MB for 2,000,000 moved keys, all of them held in memory by the run;
//! such a file resumes its plan too, its key lines unread.)

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use crate::error::CliError;

/// Whether a run resumes an earlier run of its plan.
pub(super) struct Checkpoint {
    /// A checkpoint of this plan existed: an earlier run may have copied
    /// keys, so each key's new owner is asked first.
    pub(super) resumed: bool,
}

impl Checkpoint {
    /// No checkpoint: a fresh run.
    pub(super) fn none() -> Checkpoint {
        Checkpoint { resumed: false }
    }

    /// Opens `path` for a plan of `backend` from the ring with fingerprint
    /// `from` to the one with `to`: resumed when it names this plan,
    /// created (and a fresh run) when it does not exist. A checkpoint of
    /// another plan is an error naming both.
    pub(super) fn open(path: Option<&PathBuf>, from: u64, to: u64, backend: &str) -> Result<Checkpoint, CliError> {
        let Some(path) = path else { return Ok(Checkpoint::none()) };
        let header = format!("# shardring rebalance checkpoint: {backend} from {from:016x} to {to:016x}");
        if let Ok(existing) = File::open(path) {
            let first = BufReader::new(existing).lines().next().transpose()?.unwrap_or_default();
            if first.is_empty() {
                // Created by a run killed before it wrote the line.
                std::fs::write(path, format!("{header}\n"))?;
                return Ok(Checkpoint { resumed: true });
            }
            if first != header {
                return Err(CliError::Rebalance(format!(
                    "{}: a checkpoint of another rebalance ({first:?}); this one is {header:?}",
                    path.display()
                )));
            }
            return Ok(Checkpoint { resumed: true });
        }
        let mut file = OpenOptions::new().create_new(true).write(true).open(path)?;
        writeln!(file, "{header}")?;
        file.sync_all()?;
        Ok(Checkpoint { resumed: false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_is_one_line_and_a_rerun_of_its_plan_resumes() {
        let dir = tempfile::tempdir().expect("a temporary dir");
        let path = dir.path().join("moves.ckpt");
        assert!(!Checkpoint::open(Some(&path), 1, 2, "redis").expect("created").resumed);
        assert!(Checkpoint::open(Some(&path), 1, 2, "redis").expect("reopened").resumed);
        let text = std::fs::read_to_string(&path).expect("written");
        assert_eq!(text, "# shardring rebalance checkpoint: redis from 0000000000000001 to 0000000000000002\n");
        let Err(CliError::Rebalance(message)) = Checkpoint::open(Some(&path), 1, 3, "redis") else {
            panic!("another plan's checkpoint was taken");
        };
        assert!(message.contains("to 0000000000000003"), "{message}");
        assert!(!Checkpoint::open(None, 1, 2, "redis").expect("no file").resumed);
    }
}
