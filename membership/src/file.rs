//! The file source of a follower: a JSON ring config on the local disk (its
//! nodes may carry states: a transition),
//! re-read when its directory reports a change to it (inotify, through the
//! `notify` crate) and, as a safety net, when its modification time or size
//! changes (checked every second).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use notify::{RecursiveMode, Watcher};
use shardring::{RingConfig, Transition};

use crate::follower::Context;
use crate::records::Rejected;

/// What identifies one version of the file, for the polling safety net.
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}

/// Follows the config at `path` until stopped.
pub(crate) async fn follow(path: PathBuf, mut context: Context) {
    let shared = Arc::clone(&context.shared);
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
    let mut generation = 0i64;
    let mut seen = None;
    let mut last_text = None;
    let mut poll = tokio::time::interval(Duration::from_secs(1));
    loop {
        let current = stamp(&path);
        if current != seen || generation == 0 {
            seen = current;
            read(&path, &mut generation, &mut last_text, &context);
        }
        tokio::select! {
            _ = context.stop.changed() => return,
            Some(()) = changes.recv() => {
                // Let a burst of writes (or a rename) settle into one read.
                tokio::time::sleep(Duration::from_millis(5)).await;
                while changes.try_recv().is_ok() {}
                seen = None;
            }
            _ = poll.tick() => {}
            Some(()) = context.progress.recv() => {}
        }
    }
}

/// Reads and publishes the file when its text changed; reports a failure
/// and keeps the last ring.
fn read(path: &Path, generation: &mut i64, last_text: &mut Option<String>, context: &Context) {
    let shared = &context.shared;
    let key = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => {
            shared.disconnected(format!("{key}: {error}"));
            return;
        }
    };
    shared.connected(*generation);
    if last_text.as_deref() == Some(text.as_str()) {
        return;
    }
    match RingConfig::from_json(&text).and_then(|config| Transition::from_config(&config)) {
        Ok(transition) => {
            *generation += 1;
            *last_text = Some(text);
            shared.publish(*generation, Some(Arc::new(transition)));
        }
        Err(error) => shared.reject(Rejected { key, message: error.to_string() }),
    }
}
