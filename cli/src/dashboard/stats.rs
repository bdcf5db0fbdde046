//! What a cache server says about itself: its key count and memory, read
//! from the server (memcached's `stats`: `curr_items`, `bytes`; Redis's
//! `INFO`: the `keys=` of each `db*` line, `used_memory`), over plain TCP
//! with a short timeout, so a dead server is reported, not waited for.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_millis(400);

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
    let target = address
        .to_socket_addrs()
        .map_err(|e| format!("{address}: {e}"))?
        .next()
        .ok_or_else(|| format!("{address}: no address"))?;
    let stream = TcpStream::connect_timeout(&target, TIMEOUT).map_err(|e| format!("{address}: {e}"))?;
    stream.set_read_timeout(Some(TIMEOUT)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(TIMEOUT)).map_err(|e| e.to_string())?;
    Ok(stream)
}

/// Reads `address`'s stats (a member id that is `host:port`).
///
/// Errors: the server cannot be reached or answers something else, as text.
pub(crate) fn read(kind: ServerKind, address: &str) -> Result<ServerStats, String> {
    let mut stream = connect(address)?;
    match kind {
        ServerKind::Memcached => {
            stream.write_all(b"stats\r\n").map_err(|e| format!("{address}: {e}"))?;
            let (mut keys, mut bytes) = (None, None);
            for line in BufReader::new(stream).lines() {
                let line = line.map_err(|e| format!("{address}: {e}"))?;
                let line = line.trim_end();
                if line == "END" {
                    break;
                }
                let mut words = line.split(' ');
                match (words.next(), words.next(), words.next()) {
                    (Some("STAT"), Some("curr_items"), Some(value)) => keys = value.parse().ok(),
                    (Some("STAT"), Some("bytes"), Some(value)) => bytes = value.parse().ok(),
                    _ if line.starts_with("ERROR") || line.starts_with("CLIENT_ERROR") => {
                        return Err(format!("{address}: {line}"));
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
            let mut reader = BufReader::new(stream);
            let mut header = String::new();
            reader.read_line(&mut header).map_err(|e| format!("{address}: {e}"))?;
            let Some(length) = header.trim_end().strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) else {
                return Err(format!("{address}: {}", header.trim_end()));
            };
            let mut body = vec![0u8; length];
            reader.read_exact(&mut body).map_err(|e| format!("{address}: {e}"))?;
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
