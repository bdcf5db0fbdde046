//! The Rust tests' launcher of real servers: `etcd` (Debian's etcd-server)
//! and `redis-server` on free loopback ports with a temporary data dir,
//! stopped by PID when the guard drops, also when a test fails. A server
//! that cannot start fails the test with its own output.

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

    /// Starts etcd on its ports. A port another test process took meanwhile
    /// (`make test` runs suites side by side, each picking free ports; a
    /// restart reuses this server's) makes etcd exit with "address already
    /// in use": tried again for up to 10 s.
    fn spawn(&mut self) {
        for _ in 0..50 {
            let logged = std::fs::metadata(&self.log).map_or(0, |m| m.len());
            self.spawn_once();
            if self.wait_ready() {
                return;
            }
            let log = std::fs::read(&self.log).unwrap_or_default();
            let tail = String::from_utf8_lossy(&log[(logged as usize).min(log.len())..]).into_owned();
            assert!(tail.contains("address already in use"), "etcd exited:\n{tail}");
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("etcd's ports stayed taken for 10 s:\n{}", std::fs::read_to_string(&self.log).unwrap_or_default());
    }

    fn spawn_once(&mut self) {
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
    }

    /// Waits until etcd answers (true) or exits (false).
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let ok = Command::new("etcdctl")
                .env("ETCDCTL_API", "3")
                .args(["--endpoints", &self.url(), "--dial-timeout", "1s", "endpoint", "health"])
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                self.ready = Instant::now();
                return true;
            }
            if self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()).is_some() {
                self.child = None;
                return false;
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

    /// Stops the server, deletes its data and starts an empty one on the same
    /// ports, name and peer URL (so with the same cluster id), as after a
    /// wipe or a restore from an early snapshot.
    pub fn wipe_and_restart(&mut self) {
        self.stop();
        std::fs::remove_dir_all(self.data.path().join("data")).expect("remove etcd's data dir");
        self.spawn();
    }

    /// Freezes the server (SIGSTOP): its sockets stay open and the kernel
    /// still accepts connections, but nothing answers, as with a hung
    /// server or a network that drops packets. Only keepalive pings tell.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused server run again (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("etcd is running").id().to_string();
        let status = Command::new("kill").args([signal, &pid]).status().expect("kill runs");
        assert!(status.success(), "kill {signal} {pid}: {status}");
    }

    /// The local ports of every established TCP connection to this
    /// server's client port (read from Linux's `/proc/net/tcp`): a client
    /// whose connection etcd closed shows up as a port gone, and its
    /// reconnection as a new one.
    pub fn client_connections(&self) -> std::collections::BTreeSet<u16> {
        const ESTABLISHED: &str = "01";
        let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp is readable");
        let port = |address: &str| address.rsplit_once(':').and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
        table
            .lines()
            .skip(1)
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let (local, remote, state) = (fields.get(1)?, fields.get(2)?, fields.get(3)?);
                (*state == ESTABLISHED && port(remote) == Some(self.client_port)).then(|| port(local)).flatten()
            })
            .collect()
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

/// A running redis-server (Debian's redis-server) on a free loopback port,
/// without persistence, its files in a temporary dir; killed on drop, also
/// when a test fails. A server that cannot start fails the test with its log.
pub struct Redis {
    child: Child,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl Redis {
    /// Starts a redis-server on 127.0.0.1 and waits until it answers PING.
    pub fn start() -> Redis {
        Redis::start_on(&["127.0.0.1"])
    }

    /// Starts a redis-server listening on each of `hosts` (loopback
    /// addresses, such as 127.0.0.1 and 127.0.0.2: one server that two
    /// addresses reach), one port, and waits until it answers PING.
    pub fn start_on(hosts: &[&str]) -> Redis {
        let dir = tempfile::tempdir().expect("a temporary dir");
        let log = dir.path().join("redis.log");
        let port = free_port();
        let child = Command::new("redis-server")
            .arg("--bind")
            .args(hosts)
            .args(["--port", &port.to_string(), "--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(dir.path())
            .arg("--logfile")
            .arg(&log)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start redis-server (install Debian's redis-server): {e}"));
        let mut redis = Redis { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(15);
        while !redis.answers() {
            if let Ok(Some(status)) = redis.child.try_wait() {
                panic!("redis-server exited with {status}:\n{}", redis.log());
            }
            assert!(Instant::now() < deadline, "redis-server did not answer within 15 s:\n{}", redis.log());
            std::thread::sleep(Duration::from_millis(20));
        }
        redis
    }

    /// `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn answers(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else { return false };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let mut reply = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok() && stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("redis.log")).unwrap_or_default()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `condition` holds, polling every 10 ms, and returns how long
/// that took; panics after `timeout` with `what`. Give a deadline that a
/// loaded 2-core machine meets with room to spare, and print the time
/// returned rather than asserting a tighter bound on it.
pub fn eventually(timeout: Duration, what: &str, mut condition: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < timeout, "timed out after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
    started.elapsed()
}
