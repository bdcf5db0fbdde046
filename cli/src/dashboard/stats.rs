//! What a cache server says about itself: its key count and memory, read
//! from the server (memcached's `stats`: `curr_items`, `bytes`; Redis's
//! `INFO`: the `keys=` of each `db*` line, `used_memory`), over plain TCP
//! with a short timeout, so a dead server is reported, not waited for.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Longest wait for one connect, write or read.
const TIMEOUT: Duration = Duration::from_millis(400);

/// Longest time one server's answer may take in all (a server that
/// trickles bytes is cut off here).
const DEADLINE: Duration = Duration::from_secs(1);

/// Most bytes read from one server's answer (memcached's `stats` is about
/// 3 KiB, Redis's `INFO` about 6 KiB).
const MAX_ANSWER: u64 = 1 << 20;

/// Which protocol the members' servers speak.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum ServerKind {
    Memcached,
    Redis,
}

/// A server's key count and memory in bytes.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub(crate) struct ServerStats {
    pub(crate) keys: u64,
    pub(crate) bytes: u64,
}

fn connect(address: &str) -> Result<TcpStream, String> {
    // An IP address and port need no resolver; a host name goes through it.
    let target = match address.parse() {
        Ok(target) => target,
        Err(_) => address
            .to_socket_addrs()
            .map_err(|e| format!("{address}: {e}"))?
            .next()
            .ok_or_else(|| format!("{address}: no address"))?,
    };
    let stream = TcpStream::connect_timeout(&target, TIMEOUT).map_err(|e| format!("{address}: {e}"))?;
    stream.set_read_timeout(Some(TIMEOUT)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(TIMEOUT)).map_err(|e| e.to_string())?;
    Ok(stream)
}

/// Reads `address`'s stats (a member id that is `host:port`), within
/// about [`DEADLINE`] and [`MAX_ANSWER`] bytes.
///
/// Errors: the server cannot be reached, answers something else, too much
/// or too slowly, as text naming the address.
pub(crate) fn read(kind: ServerKind, address: &str) -> Result<ServerStats, String> {
    let mut stream = connect(address)?;
    let started = Instant::now();
    let late = || started.elapsed() > DEADLINE;
    match kind {
        ServerKind::Memcached => {
            stream.write_all(b"stats\r\n").map_err(|e| format!("{address}: {e}"))?;
            let (mut keys, mut bytes) = (None, None);
            for line in BufReader::new(stream.take(MAX_ANSWER)).lines() {
                let line = line.map_err(|e| format!("{address}: {e}"))?;
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
                    _ if line.starts_with("ERROR") || line.starts_with("CLIENT_ERROR") => {
                        let shown: String = line.chars().take(80).collect();
                        return Err(format!("{address}: {shown}"));
                    }
                    _ => {}
                }
            }
            match (keys, bytes) {
                (Some(keys), Some(bytes)) => Ok(ServerStats { keys, bytes }),
                _ => Err(format!("{address}: no curr_items and bytes in its stats")),
            }
        }
        ServerKind::Redis => {
            stream.write_all(b"INFO\r\n").map_err(|e| format!("{address}: {e}"))?;
            let mut reader = BufReader::new(stream.take(MAX_ANSWER));
            let mut header = String::new();
            reader.read_line(&mut header).map_err(|e| format!("{address}: {e}"))?;
            let length = header.trim_end().strip_prefix('$').and_then(|n| n.parse::<u64>().ok());
            let Some(length) = length.filter(|&n| n < MAX_ANSWER) else {
                let shown: String = header.trim_end().chars().take(80).collect();
                return Err(format!("{address}: not an INFO answer: {shown:?}"));
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

    #[test]
    fn a_server_that_answers_badly_is_an_error_within_the_deadline() {
        let cases: [(ServerKind, &'static [u8], usize, &str); 5] = [
            (ServerKind::Redis, b"$99999999999999\r\n", 1, "not an INFO answer"),
            (ServerKind::Redis, b"-NOAUTH Authentication required.\r\n", 1, "not an INFO answer"),
            (ServerKind::Redis, b"$100\r\nshort", 1, "ended early"),
            // 12 MB of stats: cut off at MAX_ANSWER.
            (ServerKind::Memcached, b"STAT pid 1\r\n", 1_000_000, "no curr_items and bytes"),
            (ServerKind::Memcached, b"ERROR\r\n", 1, "ERROR"),
        ];
        for (kind, answer, times, reason) in cases {
            let address = answering(answer, times);
            let started = Instant::now();
            let error = read(kind, &address).unwrap_err();
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
        let error = read(ServerKind::Memcached, &address).unwrap_err();
        assert!(error.contains("no whole answer within"), "{error}");
        assert!(started.elapsed() < DEADLINE + TIMEOUT, "{:?}", started.elapsed());
        let error = read(ServerKind::Memcached, "127.0.0.1:1").unwrap_err();
        assert!(error.starts_with("127.0.0.1:1: "), "{error}");
    }

    #[test]
    fn memcached_and_redis_answers_are_read() {
        let memcached = answering(b"STAT pid 1\r\nSTAT curr_items 42\r\nSTAT bytes 4096\r\nEND\r\n", 1);
        let stats = read(ServerKind::Memcached, &memcached).unwrap();
        assert_eq!((stats.keys, stats.bytes), (42, 4096));
        let body = "# Memory\r\nused_memory:123456\r\n# Keyspace\r\ndb0:keys=7,expires=0\r\ndb3:keys=5,expires=1\r\n";
        let answer: &'static [u8] = Box::leak(format!("${}\r\n{body}\r\n", body.len()).into_bytes().into_boxed_slice());
        let stats = read(ServerKind::Redis, &answering(answer, 1)).unwrap();
        assert_eq!((stats.keys, stats.bytes), (12, 123456));
    }
}
