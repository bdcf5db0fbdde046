//! A follower process, as every application server runs one: follows the
//! ring in etcd (or a config file) and prints each epoch as a JSON line,
//! `{"lang": "rust", "revision": R, "fingerprint": "16 hex digits", "at_us": T}`
//! (`at_us`: wall clock in microseconds when the new ring was in place; an
//! epoch may also confirm the same ring at a later revision).
//! On stdin, `digest N` prints `{"digest": "16 hex digits", "revision": R}`:
//! XXH3-64 (seed 0) of the owners of keys `key-0` .. `key-(N-1)`, each
//! followed by a newline, so processes in any language can compare their
//! placement. `quit` or end of input exits.
//!
//! Usage: follow --etcd URL --prefix P | follow --file PATH
//! (the same protocol as examples/c/follow.c, examples/python/follow.py and
//! examples/node/follow.mjs).

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use shardring_membership::{Event, Follower, FollowerOptions};

fn now_us() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros())
}

fn print(out: &Mutex<std::io::Stdout>, line: String) {
    let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Prints an epoch once: the hook also reports the first ring, read while
/// `Follower::etcd` waits. `printed` is the last revision printed.
fn print_epoch(out: &Mutex<std::io::Stdout>, printed: &Mutex<i64>, revision: i64, fingerprint: u64) {
    let mut last = printed.lock().unwrap_or_else(|p| p.into_inner());
    if revision > *last {
        *last = revision;
        print(
            out,
            format!(
                r#"{{"lang": "rust", "revision": {revision}, "fingerprint": "{fingerprint:016x}", "at_us": {}}}"#,
                now_us()
            ),
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let printed = Arc::new(Mutex::new(-1));
    let (hook_out, hook_printed) = (Arc::clone(&out), Arc::clone(&printed));
    let options = FollowerOptions {
        hook: Some(Box::new(move |event, _| {
            if let Event::Epoch { revision, fingerprint, .. } = event {
                print_epoch(&hook_out, &hook_printed, *revision, *fingerprint);
            }
        })),
        ..FollowerOptions::default()
    };
    let follower = match (value("--etcd"), value("--prefix"), value("--file")) {
        (Some(etcd), Some(prefix), None) => Follower::etcd(&etcd.split(',').collect::<Vec<_>>(), &prefix, options),
        (None, None, Some(path)) => Follower::file(path, options),
        _ => {
            eprintln!("usage: follow --etcd URL --prefix P | follow --file PATH");
            std::process::exit(2);
        }
    };
    let follower = follower.unwrap_or_else(|e| {
        eprintln!("follow: {e}");
        std::process::exit(2);
    });
    let epoch = follower.epoch();
    print_epoch(&out, &printed, epoch.revision, epoch.fingerprint);
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["digest", n] => {
                let n: usize = n.parse().unwrap_or(0);
                let epoch = follower.epoch();
                let mut owners = Vec::with_capacity(n * 16);
                for i in 0..n {
                    let owner = epoch.ring.get(format!("key-{i}")).map(|node| node.id().to_owned()).unwrap_or_default();
                    owners.extend_from_slice(owner.as_bytes());
                    owners.push(b'\n');
                }
                let digest = shardring::hash_key(&owners, 0);
                print(&out, format!(r#"{{"digest": "{digest:016x}", "revision": {}}}"#, epoch.revision));
            }
            ["quit"] => break,
            _ => {}
        }
    }
}
