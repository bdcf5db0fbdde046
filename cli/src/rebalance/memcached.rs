//! The memcached backend: keys from `lru_crawler metadump all` (which no
//! client crate speaks, so it is read here as the text protocol's plain
//! lines), values read through the `memcache` crate. A copy is an `add` on
//! the target (it never overwrites a newer value a dual writer put there)
//! with the item's flags and its absolute expiry time, and the source's CAS
//! is read again after it: a value that changed meanwhile has its copy
//! deleted from the target (a miss, never a stale value). A move
//! (`--delete`) deletes the source's copy only once a get shows the key on
//! its new owner.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use memcache::{Client, MemcacheError};

use super::backend::{Backend, Deletion, Failure, Key, Outcome};

/// Memcached servers by address (`host:port`, the node ids).
#[derive(Default)]
pub(crate) struct Memcached {
    clients: HashMap<String, Client>,
    /// Plain connections for pipelined `add`s.
    pipes: HashMap<String, BufReader<TcpStream>>,
}

impl Memcached {
    /// Sends `commands` (text protocol) to `server` on its pipeline
    /// connection and reads `replies` one-line replies.
    fn pipeline(&mut self, server: &str, commands: &[u8], replies: usize) -> Result<Vec<String>, String> {
        let io = |e: std::io::Error| format!("{server}: {e}");
        if !self.pipes.contains_key(server) {
            let stream = TcpStream::connect(server).map_err(io)?;
            stream.set_nodelay(true).map_err(io)?;
            stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(io)?;
            self.pipes.insert(server.to_owned(), BufReader::new(stream));
        }
        let pipe = self.pipes.get_mut(server).expect("inserted above");
        let sent = pipe.get_mut().write_all(commands);
        let mut lines = Vec::with_capacity(replies);
        let read = sent.and_then(|()| {
            for _ in 0..replies {
                let mut line = String::new();
                if pipe.read_line(&mut line)? == 0 {
                    return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed"));
                }
                lines.push(line.trim_end().to_owned());
            }
            Ok(())
        });
        if let Err(error) = read {
            self.pipes.remove(server);
            return Err(io(error));
        }
        Ok(lines)
    }

    /// After the adds: reads the copied keys' CAS on the source again and
    /// deletes from the target each copy whose source changed or went away
    /// meanwhile, turning its outcome into [`Outcome::Changed`].
    fn drop_changed(
        &mut self,
        source: &str,
        target: &str,
        names: &[&str],
        read: &HashMap<String, (Vec<u8>, u32, Option<u64>)>,
        outcomes: &mut [Option<Outcome>],
    ) -> Result<(), Failure> {
        let copied: Vec<usize> =
            (0..names.len()).filter(|&i| matches!(outcomes[i], Some(Outcome::Copied { .. }))).collect();
        if copied.is_empty() {
            return Ok(());
        }
        let again: HashMap<String, (Vec<u8>, u32, Option<u64>)> = self
            .client(source)
            .map_err(Failure::source)?
            .gets(&copied.iter().map(|&i| names[i]).collect::<Vec<_>>())
            .map_err(|e| Failure::source(failed(source, e)))?;
        let cas = |values: &HashMap<String, (Vec<u8>, u32, Option<u64>)>, name: &str| values.get(name).map(|v| v.2);
        let changed: Vec<usize> =
            copied.into_iter().filter(|&i| cas(&again, names[i]) != cas(read, names[i])).collect();
        if changed.is_empty() {
            return Ok(());
        }
        let deletes: Vec<u8> = changed.iter().flat_map(|&i| format!("delete {}\r\n", names[i]).into_bytes()).collect();
        let replies = self.pipeline(target, &deletes, changed.len()).map_err(Failure::target)?;
        for (&i, reply) in changed.iter().zip(replies) {
            if reply != "DELETED" && reply != "NOT_FOUND" {
                return Err(Failure::target(format!("{target}: delete {:?}: {reply}", names[i])));
            }
            outcomes[i] = Some(Outcome::Changed);
        }
        Ok(())
    }

    fn client(&mut self, server: &str) -> Result<&Client, String> {
        if !self.clients.contains_key(server) {
            // The pool waits its connection timeout (30 s by default) for a
            // server that is gone; 2 s reports it sooner.
            let client = Client::builder()
                .add_server(format!("memcache://{server}?tcp_nodelay=true"))
                .and_then(|builder| {
                    builder
                        .with_connection_timeout(Duration::from_secs(2))
                        .with_read_timeout(Duration::from_secs(5))
                        .with_write_timeout(Duration::from_secs(5))
                        .build()
                })
                .map_err(|e| format!("{server}: {e}"))?;
            self.clients.insert(server.to_owned(), client);
        }
        Ok(&self.clients[server])
    }
}

fn text(key: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(key).map_err(|_| "a key that is not UTF-8 (the memcache client takes text keys)".to_owned())
}

fn failed(server: &str, error: MemcacheError) -> String {
    format!("{server}: {error}")
}

impl Backend for Memcached {
    fn name(&self) -> &'static str {
        "memcached"
    }

    /// memcached has no identity of its own (its pid and start time are
    /// not unique across hosts): two nodes on one memcached are caught by
    /// their addresses only.
    fn identity(&mut self, _server: &str) -> Result<Option<String>, Failure> {
        Ok(None)
    }

    /// Every item of `server`, with its expiry, from `lru_crawler metadump all`.
    fn keys(&mut self, server: &str) -> Result<Vec<Key>, Failure> {
        let io = |e: std::io::Error| Failure::source(format!("{server}: {e}"));
        let stream = TcpStream::connect(server).map_err(io)?;
        stream.set_read_timeout(Some(Duration::from_secs(30))).map_err(io)?;
        let mut writer = stream.try_clone().map_err(io)?;
        writer.write_all(b"lru_crawler metadump all\r\n").map_err(io)?;
        let mut keys = Vec::new();
        for line in BufReader::new(stream).lines() {
            let line = line.map_err(io)?;
            if line == "END" {
                return Ok(keys);
            }
            if line.starts_with("ERROR") || line.starts_with("CLIENT_ERROR") || line.starts_with("BUSY") {
                return Err(Failure::source(format!("{server}: lru_crawler metadump: {line}")));
            }
            let mut key = None;
            let mut expiry = None;
            let mut size = 0u64;
            for field in line.split(' ') {
                if let Some(encoded) = field.strip_prefix("key=") {
                    key = Some(percent_encoding::percent_decode_str(encoded).collect::<Vec<u8>>());
                } else if let Some(exp) = field.strip_prefix("exp=") {
                    expiry = exp.parse::<i64>().ok().filter(|&e| e > 0);
                } else if let Some(bytes) = field.strip_prefix("size=") {
                    size = bytes.parse().unwrap_or(0);
                }
            }
            if let Some(bytes) = key {
                keys.push(Key { bytes, expiry, size });
            }
        }
        Err(Failure::source(format!("{server}: the connection closed before the metadump ended")))
    }

    /// A multi-get of the batch on the source and on the target (the
    /// `memcache` crate), then one pipelined write of the `add`s for the
    /// keys the target lacks. The crate sends one `add` per round trip and
    /// reports NOT_STORED as success; measured on this machine, a round trip
    /// costs about 120 us against 14 us per key in a 100-key multi-get, so
    /// the adds go out as one batch of text-protocol commands instead, and
    /// each reply says whether it was STORED. Then a multi-get of the
    /// stored keys on the source again: where a key's CAS changed (a client
    /// wrote it during the copy) or it is gone, one pipelined `delete` on
    /// the target drops the copy, which may be stale. Clients that write a
    /// moving key's old owner and then delete it on its new owner
    /// (docs/transitions.md) thus never leave a stale value there.
    fn copy(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Outcome>, Failure> {
        let names: Vec<&str> =
            keys.iter().map(|k| text(&k.bytes)).collect::<Result<_, _>>().map_err(Failure::source)?;
        let values: HashMap<String, (Vec<u8>, u32, Option<u64>)> = self
            .client(source)
            .map_err(Failure::source)?
            .gets(&names)
            .map_err(|e| Failure::source(failed(source, e)))?;
        let present: HashMap<String, Vec<u8>> = self
            .client(target)
            .map_err(Failure::target)?
            .gets(&names)
            .map_err(|e| Failure::target(failed(target, e)))?;
        let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(keys.len());
        let mut adds = Vec::new();
        let mut pending = Vec::new();
        for (i, (key, name)) in keys.iter().zip(&names).enumerate() {
            match (values.get(*name), present.contains_key(*name)) {
                (None, _) => outcomes.push(Some(Outcome::Gone)),
                (Some(_), true) => outcomes.push(Some(Outcome::Present)),
                (Some((value, flags, _)), false) => {
                    // memcached reads an expiry above 30 days as an absolute
                    // Unix time, which a metadump's `exp` is; 0 is "never".
                    let expiration = key.expiry.map_or(0, |e| u32::try_from(e).unwrap_or(u32::MAX));
                    adds.extend_from_slice(format!("add {name} {flags} {expiration} {}\r\n", value.len()).as_bytes());
                    adds.extend_from_slice(value);
                    adds.extend_from_slice(b"\r\n");
                    pending.push((i, value.len() as u64));
                    outcomes.push(None);
                }
            }
        }
        if !pending.is_empty() {
            let replies = self.pipeline(target, &adds, pending.len()).map_err(Failure::target)?;
            for ((i, bytes), reply) in pending.into_iter().zip(replies) {
                outcomes[i] = Some(match reply.as_str() {
                    "STORED" => Outcome::Copied { bytes },
                    "NOT_STORED" => Outcome::Present,
                    other => return Err(Failure::target(format!("{target}: add {:?}: {other}", names[i]))),
                });
            }
            self.drop_changed(source, target, &names, &values, &mut outcomes)?;
        }
        Ok(outcomes.into_iter().map(|o| o.expect("every key has an outcome")).collect())
    }

    /// A multi-get of the batch on the target, then one pipelined write of
    /// `delete`s on the source for the keys the target holds (`DELETED`, or
    /// `NOT_FOUND` when the key expired or was deleted meanwhile).
    fn delete_moved(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Deletion>, Failure> {
        let names: Vec<&str> =
            keys.iter().map(|k| text(&k.bytes)).collect::<Result<_, _>>().map_err(Failure::source)?;
        let held: HashMap<String, Vec<u8>> = self
            .client(target)
            .map_err(Failure::target)?
            .gets(&names)
            .map_err(|e| Failure::target(failed(target, e)))?;
        let mut deletes = Vec::new();
        let mut deleting = Vec::new();
        let outcomes = names
            .iter()
            .map(|name| {
                if !held.contains_key(*name) {
                    return Deletion::Missing;
                }
                deletes.extend_from_slice(format!("delete {name}\r\n").as_bytes());
                deleting.push(*name);
                Deletion::Deleted
            })
            .collect();
        if !deleting.is_empty() {
            let replies = self.pipeline(source, &deletes, deleting.len()).map_err(Failure::source)?;
            for (name, reply) in deleting.iter().zip(replies) {
                if reply != "DELETED" && reply != "NOT_FOUND" {
                    return Err(Failure::source(format!("{source}: delete {name:?}: {reply}")));
                }
            }
        }
        Ok(outcomes)
    }
}
