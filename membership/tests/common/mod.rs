//! The Rust tests' launcher of real etcd servers: `etcd` (Debian's
//! etcd-server) on free loopback ports with a temporary data dir, stopped by
//! PID when the guard drops, also when a test fails. A server that cannot
//! start fails the test with etcd's own output.

#![allow(dead_code, reason = "each test file uses part of the launcher")]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running etcd; killed on drop.
pub struct Etcd {
    child: Option<Child>,
    pub client_port: u16,
    peer_port: u16,
    data: tempfile::TempDir,
    log: PathBuf,
    /// When the current etcd process was spawned.
    pub spawned: Instant,
    /// When it first answered.
    pub ready: Instant,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind a loopback port").local_addr().unwrap().port()
}

impl Etcd {
    /// Starts etcd and waits until it answers (at most 15 s).
    pub fn start() -> Etcd {
        let data = tempfile::tempdir().expect("a temporary data dir");
        let log = data.path().join("etcd.log");
        let now = Instant::now();
        let mut etcd =
            Etcd { child: None, client_port: free_port(), peer_port: free_port(), data, log, spawned: now, ready: now };
        etcd.spawn();
        etcd
    }

    /// The client URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }

    fn spawn(&mut self) {
        let (client, peer) =
            (format!("http://127.0.0.1:{}", self.client_port), format!("http://127.0.0.1:{}", self.peer_port));
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).unwrap();
        let child = Command::new("etcd")
            .args(["--name", "t", "--data-dir"])
            .arg(self.data.path().join("data"))
            .args(["--listen-client-urls", &client, "--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &format!("t={peer}")])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start etcd (install Debian's etcd-server): {e}"));
        self.spawned = Instant::now();
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let ok = Command::new("etcdctl")
                .env("ETCDCTL_API", "3")
                .args(["--endpoints", &self.url(), "--dial-timeout", "1s", "endpoint", "health"])
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                self.ready = Instant::now();
                return;
            }
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                panic!("etcd exited with {status}:\n{}", std::fs::read_to_string(&self.log).unwrap_or_default());
            }
            assert!(
                Instant::now() < deadline,
                "etcd did not answer within 15 s:\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the server (SIGKILL), keeping its data.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same ports and data.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// Runs etcdctl against this server; panics when it fails.
    pub fn etcdctl(&self, args: &[&str]) -> String {
        let output = Command::new("etcdctl")
            .env("ETCDCTL_API", "3")
            .args(["--endpoints", &self.url()])
            .args(args)
            .output()
            .expect("etcdctl runs");
        assert!(output.status.success(), "etcdctl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    pub fn data_dir(&self) -> &Path {
        self.data.path()
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Waits until `condition` holds, polling every 10 ms, or panics after `timeout` with `what`.
pub fn eventually(timeout: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
