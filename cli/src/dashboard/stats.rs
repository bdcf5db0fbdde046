//! What a cache server says about itself: its key count and memory, read
//! from the server (memcached's `stats`: `curr_items`, `bytes`; Redis's
//! `INFO`: the `keys=` of each `db*` line, `used_memory`) with a short
//! timeout, so a dead server is reported, not waited for. The connection
//! is the rebalancer's ([`server_access::open`]): over TLS and as a user
//! when the flags ask for it. The answer is read here, bounded in time and
//! size (a client crate would read any answer whole, however slow or long).

use std::io::{BufRead, BufReader, Read};
use std::time::{Duration, Instant};

use crate::server_access::{self, Credentials, ServerKind};

/// Longest wait for one connect, write or read.
const TIMEOUT: Duration = Duration::from_millis(400);

/// Longest time one server's answer may take in all (a server that
/// trickles bytes is cut off here).
const DEADLINE: Duration = Duration::from_secs(1);

/// Most bytes read from one server's answer (memcached's `stats` is about
/// 3 KiB, Redis's `INFO` about 6 KiB).
const MAX_ANSWER: u64 = 1 << 20;

/// A server's key count and memory in bytes.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub(crate) struct ServerStats {
    pub(crate) keys: u64,
    pub(crate) bytes: u64,
}

/// At most 80 characters of a server's `line`, for an error.
fn shown(line: &str) -> String {
    line.chars().take(80).collect()
}

/// What an error adds when a server requires a user none was given for.
fn needs_user(kind: ServerKind) -> String {
    let env = match kind {
        ServerKind::Redis => server_access::REDIS_PASSWORD_ENV,
        ServerKind::Memcached => server_access::MEMCACHED_PASSWORD_ENV,
    };
    let name = kind.name();
    format!(" (the server requires a user: --{name}-user, with --{name}-password-file or {env})")
}

/// A server that ended the connection before answering, for `reason` (it
/// closed it, or reset it): over plain TCP, likely a TLS port.
fn ended(address: &str, credentials: &Credentials, reason: impl std::fmt::Display) -> String {
    let hint = if credentials.tls.is_none() { " (does it speak TLS only? then --tls)" } else { "" };
    format!("{address}: {reason}{hint}")
}

/// A read that failed before the first byte of the answer.
fn unanswered(address: &str, credentials: &Credentials, error: std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::ConnectionReset => ended(address, credentials, error),
        _ => format!("{address}: {error}"),
    }
}

/// [`ended`] for a connection closed without an answer.
const CLOSED: &str = "the connection closed without an answer";

/// Reads `address`'s stats (a member id that is `host:port`), within
/// about [`DEADLINE`] and [`MAX_ANSWER`] bytes, connecting with
/// `credentials`.
///
/// Errors: the server cannot be reached, refuses the TLS handshake or the
/// authentication (a wrong password: `authentication failed`; a user
/// needed and none given: its `NOAUTH` or `unauthenticated`), answers
/// something else, too much or too slowly, as text naming the address,
/// never the password.
pub(crate) fn read(kind: ServerKind, address: &str, credentials: &Credentials) -> Result<ServerStats, String> {
    let started = Instant::now();
    let late = || started.elapsed() > DEADLINE;
    let mut stream = server_access::open(address, kind, credentials, TIMEOUT, TIMEOUT)?;
    match kind {
        ServerKind::Memcached => {
            stream.send(b"stats\r\n", None).map_err(|e| format!("{address}: {e}"))?;
            let (mut keys, mut bytes, mut answered) = (None, None, false);
            for line in BufReader::new(stream.take(MAX_ANSWER)).lines() {
                let line = match line {
                    Ok(line) => line,
                    Err(error) if !answered => return Err(unanswered(address, credentials, error)),
                    Err(error) => return Err(format!("{address}: {error}")),
                };
                answered = true;
                if late() {
                    return Err(format!("{address}: no whole answer within {DEADLINE:?}"));
                }
                let line = line.trim_end();
                if line == "END" {
                    break;
                }
                let mut words = line.split(' ');
                match (words.next(), words.next(), words.next()) {
                    (Some("STAT"), Some("curr_items"), Some(value)) => keys = value.parse().ok(),
                    (Some("STAT"), Some("bytes"), Some(value)) => bytes = value.parse().ok(),
                    _ if line == "CLIENT_ERROR unauthenticated" => {
                        return Err(format!("{address}: {line}{}", needs_user(kind)));
                    }
                    _ if line.starts_with("ERROR") || line.starts_with("CLIENT_ERROR") => {
                        return Err(format!("{address}: {}", shown(line)));
                    }
                    _ => {}
                }
            }
            match (keys, bytes) {
                (Some(keys), Some(bytes)) => Ok(ServerStats { keys, bytes }),
                _ if !answered => Err(ended(address, credentials, CLOSED)),
                _ => Err(format!("{address}: no curr_items and bytes in its stats")),
            }
        }
        ServerKind::Redis => {
            stream.send(b"INFO\r\n", None).map_err(|e| format!("{address}: {e}"))?;
            let mut reader = BufReader::new(stream.take(MAX_ANSWER));
            let mut header = String::new();
            reader.read_line(&mut header).map_err(|e| unanswered(address, credentials, e))?;
            let header = header.trim_end();
            if header.is_empty() {
                return Err(ended(address, credentials, CLOSED));
            }
            // An error answer: NOAUTH without credentials, NOPERM for a user without INFO.
            if let Some(error) = header.strip_prefix('-') {
                let hint = if error.starts_with("NOAUTH") { needs_user(kind) } else { String::new() };
                return Err(format!("{address}: INFO refused: {}{hint}", shown(error)));
            }
            let length = header.strip_prefix('$').and_then(|n| n.parse::<u64>().ok());
            let Some(length) = length.filter(|&n| n < MAX_ANSWER) else {
                return Err(format!("{address}: not an INFO answer: {:?}", shown(header)));
            };
            let mut body = Vec::new();
            while (body.len() as u64) < length {
                let mut chunk = [0u8; 8192];
                let want = chunk.len().min((length - body.len() as u64) as usize);
                match reader.read(&mut chunk[..want]) {
                    Ok(0) => return Err(format!("{address}: the answer ended early")),
                    Ok(n) => body.extend_from_slice(&chunk[..n]),
                    Err(e) => return Err(format!("{address}: {e}")),
                }
                if late() {
                    return Err(format!("{address}: no whole answer within {DEADLINE:?}"));
                }
            }
            let text = String::from_utf8_lossy(&body);
            let mut stats = ServerStats { keys: 0, bytes: 0 };
            for line in text.lines() {
                if let Some(memory) = line.strip_prefix("used_memory:") {
                    stats.bytes = memory.trim().parse().unwrap_or(0);
                } else if line.starts_with("db") && line.contains(":keys=") {
                    let keys = line.split(":keys=").nth(1).and_then(|rest| rest.split(',').next());
                    stats.keys += keys.and_then(|k| k.parse::<u64>().ok()).unwrap_or(0);
                }
            }
            Ok(stats)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::TcpListener;

    use super::*;

    /// A server on loopback that answers every connection with `answer`
    /// (repeated `times` times), then closes.
    fn answering(answer: &'static [u8], times: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(1) {
                let Ok(mut stream) = stream else { return };
                // Read the command first: closing with it unread would reset the connection.
                let mut command = [0u8; 64];
                let _ = stream.read(&mut command);
                for _ in 0..times {
                    if stream.write_all(answer).is_err() {
                        return;
                    }
                }
            }
        });
        address
    }

    /// A server on loopback that, for each `(command, answer)` step in
    /// turn, reads until what it got ends with `command`, then writes
    /// `answer`; then it reads until the client closes (so no write of the
    /// client meets a closed socket).
    fn scripted(steps: Vec<(&'static [u8], Vec<u8>)>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let Some(Ok(mut stream)) = listener.incoming().next() else { return };
            let mut got = Vec::new();
            for (command, answer) in steps {
                while !got.ends_with(command) {
                    let mut byte = [0u8; 1];
                    if !matches!(stream.read(&mut byte), Ok(1)) {
                        return;
                    }
                    got.push(byte[0]);
                }
                if stream.write_all(&answer).is_err() {
                    return;
                }
            }
            let _ = std::io::copy(&mut stream, &mut std::io::sink());
        });
        address
    }

    fn user(user: &str, password: &str) -> Credentials {
        let password = Some(shardring_membership::Secret::new(password).unwrap());
        Credentials { user: Some(user.to_owned()), password, tls: None }
    }

    #[test]
    fn a_server_that_answers_badly_is_an_error_within_the_deadline() {
        let none = Credentials::default();
        let cases: [(ServerKind, &'static [u8], usize, &str); 7] = [
            (ServerKind::Redis, b"$99999999999999\r\n", 1, "not an INFO answer"),
            (ServerKind::Redis, b"-NOAUTH Authentication required.\r\n", 1, "INFO refused: NOAUTH"),
            (ServerKind::Redis, b"$100\r\nshort", 1, "ended early"),
            (ServerKind::Redis, b"", 1, "closed without an answer (does it speak TLS only? then --tls)"),
            // 12 MB of stats: cut off at MAX_ANSWER.
            (ServerKind::Memcached, b"STAT pid 1\r\n", 1_000_000, "no curr_items and bytes"),
            (ServerKind::Memcached, b"ERROR\r\n", 1, "ERROR"),
            (ServerKind::Memcached, b"CLIENT_ERROR unauthenticated\r\n", 1, "requires a user: --memcached-user"),
        ];
        for (kind, answer, times, reason) in cases {
            let address = answering(answer, times);
            let started = Instant::now();
            let error = read(kind, &address, &none).unwrap_err();
            assert!(error.contains(reason) && error.contains(&address), "{kind:?} {error}");
            assert!(started.elapsed() < DEADLINE + TIMEOUT * 3, "{kind:?} took {:?}", started.elapsed());
        }
        // A server that trickles a line every 50 ms: cut off at the deadline.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let Some(Ok(mut stream)) = listener.incoming().next() else { return };
            let _ = stream.read(&mut [0u8; 64]);
            while stream.write_all(b"STAT pid 1\r\n").is_ok() {
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let started = Instant::now();
        let error = read(ServerKind::Memcached, &address, &none).unwrap_err();
        assert!(error.contains("no whole answer within"), "{error}");
        assert!(started.elapsed() < DEADLINE + TIMEOUT, "{:?}", started.elapsed());
        let error = read(ServerKind::Memcached, "127.0.0.1:1", &none).unwrap_err();
        assert!(error.starts_with("127.0.0.1:1: "), "{error}");
    }

    #[test]
    fn memcached_and_redis_answers_are_read() {
        let none = Credentials::default();
        let memcached = answering(b"STAT pid 1\r\nSTAT curr_items 42\r\nSTAT bytes 4096\r\nEND\r\n", 1);
        let stats = read(ServerKind::Memcached, &memcached, &none).unwrap();
        assert_eq!((stats.keys, stats.bytes), (42, 4096));
        let body = "# Memory\r\nused_memory:123456\r\n# Keyspace\r\ndb0:keys=7,expires=0\r\ndb3:keys=5,expires=1\r\n";
        let info = format!("${}\r\n{body}\r\n", body.len()).into_bytes();
        let answer: &'static [u8] = Box::leak(info.clone().into_boxed_slice());
        let stats = read(ServerKind::Redis, &answering(answer, 1), &none).unwrap();
        assert_eq!((stats.keys, stats.bytes), (12, 123456));
        // As an ACL user: AUTH, then INFO.
        let auth = &b"*3\r\n$4\r\nAUTH\r\n$5\r\nmover\r\n$9\r\npw-S3cret\r\n"[..];
        let server = scripted(vec![(auth, b"+OK\r\n".to_vec()), (b"INFO\r\n", info)]);
        let stats = read(ServerKind::Redis, &server, &user("mover", "pw-S3cret")).unwrap();
        assert_eq!((stats.keys, stats.bytes), (12, 123456));
    }

    #[test]
    fn a_refused_authentication_names_the_server_and_never_the_password() {
        let refusals: [(ServerKind, &[u8], &str); 4] = [
            (
                ServerKind::Redis,
                b"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
                "Redis authentication failed as user \"mover\": WRONGPASS",
            ),
            // A server that echoes the password: redacted.
            (ServerKind::Redis, b"-ERR no such password pw-S3cret\r\n", "no such password <redacted>"),
            (ServerKind::Memcached, b"VERSION 1.6.18\r\n", "does not require authentication"),
            (
                ServerKind::Memcached,
                b"CLIENT_ERROR unauthenticated\r\nCLIENT_ERROR authentication failure\r\n",
                "failed",
            ),
        ];
        for (kind, answer, reason) in refusals {
            let command: &[u8] = if kind == ServerKind::Redis { b"pw-S3cret\r\n" } else { b"version\r\n" };
            let address = scripted(vec![(command, answer.to_vec())]);
            let error = read(kind, &address, &user("mover", "pw-S3cret")).unwrap_err();
            assert!(error.starts_with(&format!("{address}: ")) && error.contains(reason), "{kind:?} {error}");
            assert!(!error.contains("pw-S3cret"), "{error}");
        }
    }
}
