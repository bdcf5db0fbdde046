//! The file source of a follower: a JSON ring config on the local disk (its
//! nodes may carry states: a transition),
//! re-read when its directory reports a change to it (inotify, through the
//! `notify` crate) and, as a safety net, when its modification time or size
//! changes (checked every second).
//!
//! The file is read as bytes and built as every other config reader builds
//! it ([`RingConfig::from_json_bytes`], then [`Transition::from_config`]):
//! a file that is not UTF-8 or starts with a byte-order mark is refused
//! naming the byte and its position, as the CLI refuses it. The first read
//! happens in [`Follower::file`](crate::Follower::file), before the thread
//! starts, so a file that cannot be read or is refused fails the
//! constructor at once with the reason ([`load`]); later reads that fail
//! keep the last ring and report why (`Disconnected` for a file that cannot
//! be read, `Rejected` for a config the core refuses).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use notify::{RecursiveMode, Watcher};
use shardring::{RingConfig, RingError, Transition};

use crate::records::Rejected;
use crate::state::Context;

/// What identifies one version of the file, for the polling safety net.
pub(crate) type Stamp = Option<(SystemTime, u64)>;

/// The stamp of the file at `path` now (`None` when it cannot be read).
pub(crate) fn stamp(path: &Path) -> Stamp {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}

/// Why one read of the file gave no ring.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// The file cannot be read (missing, a directory, no permission).
    Read(std::io::Error),
    /// The core refuses its config (not UTF-8, a byte-order mark, bad JSON,
    /// a field or value the algorithm refuses).
    Refused(RingError),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Read(error) => write!(f, "cannot read it: {error}"),
            LoadError::Refused(error) => error.fmt(f),
        }
    }
}

/// One version of the file: its bytes and the transition they describe.
pub(crate) struct Version {
    /// The stamp taken before the bytes were read: a change after the read
    /// shows as another stamp.
    pub(crate) stamp: Stamp,
    pub(crate) bytes: Vec<u8>,
    pub(crate) transition: Transition,
}

/// Reads the config at `path` and builds its transition.
pub(crate) fn load(path: &Path) -> Result<Version, LoadError> {
    let stamp = stamp(path);
    let bytes = std::fs::read(path).map_err(LoadError::Read)?;
    let transition = build(&bytes).map_err(LoadError::Refused)?;
    Ok(Version { stamp, bytes, transition })
}

/// The transition of a config file's bytes.
fn build(bytes: &[u8]) -> Result<Transition, RingError> {
    RingConfig::from_json_bytes(bytes).and_then(|config| Transition::from_config(&config))
}

/// Publishes `first` (read by the constructor) as revision 1, then follows
/// the config at `path` until stopped.
pub(crate) async fn follow(path: PathBuf, first: Version, mut context: Context) {
    let shared = Arc::clone(&context.shared);
    let mut generation = 1i64;
    shared.connected(0);
    shared.publish(generation, Some(Arc::new(shared.counted(first.transition))));
    let mut seen = first.stamp;
    let mut judged = Judged { accepted: first.bytes, refused: None };
    let (sender, mut changes) = tokio::sync::mpsc::unbounded_channel();
    let name = path.file_name().map(|n| n.to_os_string());
    let watched = name.clone();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let touches = event.is_ok_and(|e| e.paths.iter().any(|p| p.file_name().map(|n| n.to_os_string()) == watched));
        if touches {
            let _ = sender.send(());
        }
    });
    let directory = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let _watcher = match watcher {
        Ok(mut watcher) => match watcher.watch(&directory, RecursiveMode::NonRecursive) {
            Ok(()) => Some(watcher),
            Err(error) => {
                shared.disconnected(format!("cannot watch {}: {error}; polling every second", directory.display()));
                None
            }
        },
        Err(error) => {
            shared.disconnected(format!("cannot watch files: {error}; polling every second"));
            None
        }
    };
    // A write between the constructor's read and the watch is seen here:
    // read once more now that changes are reported.
    let mut force = true;
    let mut poll = tokio::time::interval(Duration::from_secs(1));
    loop {
        let current = stamp(&path);
        if current != seen || force {
            seen = current;
            force = false;
            reload(&path, &mut generation, &mut judged, &context);
        }
        tokio::select! {
            _ = context.stop.changed() => return,
            Some(()) = changes.recv() => {
                // Let a burst of writes (or a rename) settle into one read.
                tokio::time::sleep(Duration::from_millis(5)).await;
                while changes.try_recv().is_ok() {}
                force = true;
            }
            _ = poll.tick() => {}
            Some(()) = context.progress.recv() => {}
        }
    }
}

/// The file's bytes as the follower last judged them.
struct Judged {
    /// The bytes of the published ring.
    accepted: Vec<u8>,
    /// Bytes refused since (reported once: the watcher may report one write
    /// as several events, each a read of the same bytes).
    refused: Option<Vec<u8>>,
}

/// Reads the file again and publishes it when its bytes changed; a file
/// that cannot be read is reported as `Disconnected`, a config the core
/// refuses as `Rejected` (once per refused version, until the file changes
/// or cannot be read), each with the reason, and the last ring stays.
fn reload(path: &Path, generation: &mut i64, judged: &mut Judged, context: &Context) {
    let shared = &context.shared;
    let key = path.display().to_string();
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => {
            judged.refused = None;
            shared.disconnected(format!("{key}: {}", LoadError::Read(error)));
            return;
        }
    };
    shared.connected(*generation);
    if judged.accepted == bytes {
        judged.refused = None;
        return;
    }
    if judged.refused.as_ref() == Some(&bytes) {
        return;
    }
    let started = std::time::Instant::now();
    let built = build(&bytes);
    shared.rebuilt_in(started.elapsed());
    match built {
        Ok(transition) => {
            *generation += 1;
            *judged = Judged { accepted: bytes, refused: None };
            shared.publish(*generation, Some(Arc::new(shared.counted(transition))));
        }
        Err(error) => {
            judged.refused = Some(bytes);
            shared.reject(Rejected { key, message: error.to_string() });
        }
    }
}
