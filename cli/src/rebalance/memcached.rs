//! The memcached backend: keys from `lru_crawler metadump hash` (`all` on a
//! memcached too old to know the hash walk), values and
//! writes in memcached's text protocol, pipelined on one connection per
//! server. (The `memcache` crate, used before, wrote each field of a
//! request in its own syscall, one TCP packet each: copies ran at 4,600
//! keys/s at 200,000 keys here, and no client crate speaks the metadump.)
//! A copy is an `add` on
//! the target (it never overwrites a newer value a dual writer put there)
//! with the item's flags and its absolute expiry time, and the source's CAS
//! is read again after it: a value that changed meanwhile has its copy
//! deleted from the target (a miss, never a stale value). A move
//! (`--delete`) deletes the source's copy only once a get shows the key on
//! its new owner.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::time::Duration;

use super::backend::{Backend, Deletion, Failure, Key, Outcome};
use crate::server_access::tls::Stream;
use crate::server_access::{Credentials, ServerKind};

/// A value read with `gets`: its bytes, flags and CAS unique.
type Item = (Vec<u8>, u32, u64);

/// How long a connection may take: a server that is gone is reported
/// within it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest `gets` line sent: memcached reads a command line of up to
/// 2,048 bytes in one piece, so a batch's keys go out in several `gets`.
const GETS_LINE: usize = 2000;

/// Items per page of a metadump listing.
const DUMP_PAGE: usize = 10_000;

/// The metadump asked for first: a walk of the hash table. `all` walks the
/// LRU lists instead, and the LRU maintainer moves items between those
/// lists during the walk, so an item can be passed over: measured here, 1
/// of 20,000 items written just before a dry run was missing from both of
/// its scans. A hash bucket's items stay in it unless the table grows.
const DUMP_HASH: &[u8] = b"lru_crawler metadump hash\r\n";

/// The metadump of a server that does not know `hash` (an older memcached
/// reads it as a slab class and answers with an error).
const DUMP_LRU: &[u8] = b"lru_crawler metadump all\r\n";

/// A metadump being read: the bytes [`Memcached::start_dump`] read to see
/// its first line whole, then the rest of its connection.
type Dump = BufReader<std::io::Chain<std::io::Cursor<Vec<u8>>, Stream>>;

/// How a memcached without the hash walk refuses `metadump hash`: it reads
/// `hash` as a slab class (`BADCLASS invalid class id`, as Debian's 1.6.18
/// answers `metadump 999x`), or, older still, does not know the command.
const REFUSALS: [&[u8]; 3] = [b"BADCLASS", b"CLIENT_ERROR", b"ERROR"];

/// What else a dump may answer in place of items: a crawler already busy,
/// or one that could not start.
const DUMP_FAILURES: [&[u8]; 2] = [b"BUSY", b"NOTSTARTED"];

/// Memcached servers by address (`host:port`, the node ids).
#[derive(Default)]
pub(crate) struct Memcached {
    /// One text-protocol connection per server, requests pipelined on it.
    pipes: HashMap<String, BufReader<Stream>>,
    /// The metadump under way on each server being listed, on its own connection.
    dumps: HashMap<String, Dump>,
    /// TLS to every server (memcached's `-Z`) or plain TCP, and the user
    /// of memcached's text-protocol authentication (`-Y`), if any.
    access: Credentials,
}

impl Memcached {
    /// A backend that speaks TLS to every server when `access` has TLS
    /// settings, and authenticates as its user when it has one.
    pub(crate) fn new(access: Credentials) -> Memcached {
        Memcached { access, ..Memcached::default() }
    }

    /// A connection to `server` with `timeout` on reads and writes, TLS
    /// when the run asks for it (the handshake done here) and authenticated
    /// as its user ([`crate::server_access::open`]).
    fn open(&self, server: &str, timeout: Duration) -> Result<Stream, String> {
        crate::server_access::open(server, ServerKind::Memcached, &self.access, CONNECT_TIMEOUT, timeout)
    }

    /// A connection to `server` on which a metadump has started: `command`,
    /// or [`DUMP_LRU`] when the server refuses a hash walk ([`REFUSALS`])
    /// on its first line, which is read whole for that. (A dump cannot be
    /// pipelined behind another command, so the fallback opens a
    /// connection of its own.)
    fn start_dump(&self, server: &str, command: &[u8]) -> Result<Dump, Failure> {
        let io = |e: std::io::Error| Failure::source(format!("{server}: {e}"));
        let mut stream = self.open(server, Duration::from_secs(30)).map_err(Failure::source)?;
        stream.write_all(command).map_err(io)?;
        let mut first = Vec::new();
        if command == DUMP_HASH {
            let mut chunk = [0u8; 4096];
            while !first.contains(&b'\n') {
                let read = stream.read(&mut chunk).map_err(io)?;
                if read == 0 {
                    break;
                }
                first.extend_from_slice(&chunk[..read]);
            }
            if REFUSALS.iter().any(|refusal| first.starts_with(refusal)) {
                return self.start_dump(server, DUMP_LRU);
            }
        }
        Ok(BufReader::new(std::io::Cursor::new(first).chain(stream)))
    }

    /// The connection to `server`, opened on first use.
    fn pipe(&mut self, server: &str) -> Result<&mut BufReader<Stream>, String> {
        if !self.pipes.contains_key(server) {
            let stream = self.open(server, Duration::from_secs(10))?;
            self.pipes.insert(server.to_owned(), BufReader::new(stream));
        }
        Ok(self.pipes.get_mut(server).expect("inserted above"))
    }

    /// `gets` of `names` on `server`, pipelined: each found key's value,
    /// flags and CAS unique (a key missing from the map is a miss).
    fn gets(&mut self, server: &str, names: &[&str]) -> Result<HashMap<String, Item>, String> {
        let mut request = Vec::new();
        let mut commands = 0;
        let mut line = 0;
        for name in names {
            if line == 0 || line + 1 + name.len() > GETS_LINE {
                if line > 0 {
                    request.extend_from_slice(b"\r\n");
                }
                request.extend_from_slice(b"gets");
                line = 4;
                commands += 1;
            }
            request.push(b' ');
            request.extend_from_slice(name.as_bytes());
            line += 1 + name.len();
        }
        if commands == 0 {
            return Ok(HashMap::new());
        }
        request.extend_from_slice(b"\r\n");
        let pipe = self.pipe(server)?;
        let read = (|| -> Result<HashMap<String, Item>, String> {
            pipe.get_mut().send(&request, None).map_err(|e| e.to_string())?;
            let mut items = HashMap::with_capacity(names.len());
            let mut ended = 0;
            while ended < commands {
                let mut header = String::new();
                if pipe.read_line(&mut header).map_err(|e| e.to_string())? == 0 {
                    return Err("connection closed".into());
                }
                let header = header.trim_end();
                if header == "END" {
                    ended += 1;
                    continue;
                }
                // VALUE <key> <flags> <bytes> <cas>
                let fields: Vec<&str> = header.split(' ').collect();
                let parsed = match fields.as_slice() {
                    ["VALUE", key, flags, bytes, cas] => flags
                        .parse::<u32>()
                        .ok()
                        .zip(bytes.parse::<usize>().ok())
                        .zip(cas.parse::<u64>().ok())
                        .map(|((flags, bytes), cas)| ((*key).to_owned(), flags, bytes, cas)),
                    _ => None,
                };
                let Some((key, flags, bytes, cas)) = parsed else {
                    return Err(format!("gets: unexpected reply {header:?}"));
                };
                let mut data = vec![0; bytes + 2];
                pipe.read_exact(&mut data).map_err(|e| e.to_string())?;
                data.truncate(bytes);
                items.insert(key, (data, flags, cas));
            }
            Ok(items)
        })();
        read.map_err(|error| {
            self.pipes.remove(server);
            format!("{server}: {error}")
        })
    }

    fn pipeline(
        &mut self,
        server: &str,
        commands: &[u8],
        ends: Option<&[usize]>,
        replies: usize,
    ) -> Result<Vec<String>, String> {
        let io = |e: std::io::Error| format!("{server}: {e}");
        let pipe = self.pipe(server)?;
        let sent = pipe.get_mut().send(commands, ends);
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
        read: &HashMap<String, Item>,
        outcomes: &mut [Option<Outcome>],
    ) -> Result<(), Failure> {
        let copied: Vec<usize> =
            (0..names.len()).filter(|&i| matches!(outcomes[i], Some(Outcome::Copied { .. }))).collect();
        if copied.is_empty() {
            return Ok(());
        }
        let again =
            self.gets(source, &copied.iter().map(|&i| names[i]).collect::<Vec<_>>()).map_err(Failure::source)?;
        let cas = |values: &HashMap<String, Item>, name: &str| values.get(name).map(|v| v.2);
        let changed: Vec<usize> =
            copied.into_iter().filter(|&i| cas(&again, names[i]) != cas(read, names[i])).collect();
        if changed.is_empty() {
            return Ok(());
        }
        let deletes: Vec<u8> = changed.iter().flat_map(|&i| format!("delete {}\r\n", names[i]).into_bytes()).collect();
        let replies = self.pipeline(target, &deletes, None, changed.len()).map_err(Failure::target)?;
        for (&i, reply) in changed.iter().zip(replies) {
            if reply != "DELETED" && reply != "NOT_FOUND" {
                return Err(Failure::target(format!("{target}: delete {:?}: {reply}", names[i])));
            }
            outcomes[i] = Some(Outcome::Changed);
        }
        Ok(())
    }
}

fn text(key: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(key).map_err(|_| "a key that is not UTF-8 (the memcache client takes text keys)".to_owned())
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

    /// Every item of `server`, with its expiry, from `lru_crawler metadump
    /// hash` (or `all`, see [`DUMP_HASH`]).
    fn keys(&mut self, server: &str) -> Result<Vec<Key>, Failure> {
        let mut keys = Vec::new();
        let mut cursor = 0;
        loop {
            let (next, page) = self.page(server, cursor, None)?;
            keys.extend(page);
            if next == 0 {
                return Ok(keys);
            }
            cursor = next;
        }
    }

    /// The next [`DUMP_PAGE`] items of a metadump of `server`, read as it
    /// streams on its own connection: cursor 0 starts the dump, the cursor
    /// returned is the number of items read so far, 0 once the dump ended.
    /// (memcached's crawler waits while the connection is not read, so the
    /// dump is paced by the copies between pages.) memcached has no handoff
    /// mark.
    fn page(&mut self, server: &str, cursor: u64, _mark: Option<&str>) -> Result<(u64, Vec<Key>), Failure> {
        let io = |e: std::io::Error| Failure::source(format!("{server}: {e}"));
        if cursor == 0 {
            let reader = self.start_dump(server, DUMP_HASH)?;
            self.dumps.insert(server.to_owned(), reader);
        }
        let Some(dump) = self.dumps.get_mut(server) else {
            return Err(Failure::source(format!("{server}: no metadump under way at item {cursor}")));
        };
        let mut keys = Vec::new();
        let mut line = String::new();
        while keys.len() < DUMP_PAGE {
            line.clear();
            let read = dump.read_line(&mut line);
            let line = match read {
                Ok(0) => {
                    self.dumps.remove(server);
                    return Err(Failure::source(format!("{server}: the connection closed before the metadump ended")));
                }
                Ok(_) => line.trim_end(),
                Err(error) => {
                    self.dumps.remove(server);
                    return Err(io(error));
                }
            };
            if line == "END" {
                self.dumps.remove(server);
                return Ok((0, keys));
            }
            if REFUSALS.iter().chain(&DUMP_FAILURES).any(|answer| line.as_bytes().starts_with(answer)) {
                self.dumps.remove(server);
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
        Ok((cursor + keys.len() as u64, keys))
    }

    /// A pipelined `gets` of the batch on the source and on the target,
    /// then one pipelined write of the `add`s for the keys the target lacks,
    /// each reply saying whether it was STORED. Then a `gets` of the
    /// stored keys on the source again: where a key's CAS changed (a client
    /// wrote it during the copy) or it is gone, one pipelined `delete` on
    /// the target drops the copy, which may be stale. Clients that write a
    /// moving key's old owner and then delete it on its new owner
    /// (docs/transitions.md) thus never leave a stale value there.
    fn copy(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Outcome>, Failure> {
        let names: Vec<&str> =
            keys.iter().map(|k| text(&k.bytes)).collect::<Result<_, _>>().map_err(Failure::source)?;
        let values = self.gets(source, &names).map_err(Failure::source)?;
        let present = self.gets(target, &names).map_err(Failure::target)?;
        let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(keys.len());
        let mut adds = Vec::new();
        let mut ends = Vec::new();
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
                    ends.push(adds.len());
                    pending.push((i, value.len() as u64));
                    outcomes.push(None);
                }
            }
        }
        if !pending.is_empty() {
            let replies = self.pipeline(target, &adds, Some(&ends), pending.len()).map_err(Failure::target)?;
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

    /// One pipelined `mg <key> k` per key: memcached answers `HD` when it
    /// holds the key (`OK` before 1.6.10) and `EN` when it does not; one
    /// without meta commands (before 1.6) answers `ERROR`, and then a
    /// `gets` of the keys tells. (1.6 before 1.6.18 refuses `mg` with no
    /// flag, hence the `k`.)
    fn held(&mut self, server: &str, keys: &[&Key]) -> Result<Vec<bool>, Failure> {
        let names: Vec<&str> =
            keys.iter().map(|k| text(&k.bytes)).collect::<Result<_, _>>().map_err(Failure::source)?;
        let checks: Vec<u8> = names.iter().flat_map(|name| format!("mg {name} k\r\n").into_bytes()).collect();
        let replies = self.pipeline(server, &checks, None, names.len()).map_err(Failure::target)?;
        let mut held = Vec::with_capacity(names.len());
        for (name, reply) in names.iter().zip(&replies) {
            match reply.split(' ').next().unwrap_or_default() {
                "HD" | "OK" => held.push(true),
                "EN" => held.push(false),
                "ERROR" => {
                    let values = self.gets(server, &names).map_err(Failure::target)?;
                    return Ok(names.iter().map(|name| values.contains_key(*name)).collect());
                }
                _ => return Err(Failure::target(format!("{server}: mg {name:?} answered {reply:?}"))),
            }
        }
        Ok(held)
    }

    /// [`Backend::held`] on the target (no values read), then one
    /// pipelined write of `delete`s on the source for the keys the target
    /// holds (`DELETED`, or `NOT_FOUND` when the key expired or was deleted
    /// meanwhile).
    fn delete_moved(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Deletion>, Failure> {
        let names: Vec<&str> =
            keys.iter().map(|k| text(&k.bytes)).collect::<Result<_, _>>().map_err(Failure::source)?;
        let held = self.held(target, keys)?;
        let mut deletes = Vec::new();
        let mut deleting = Vec::new();
        let outcomes = names
            .iter()
            .zip(held)
            .map(|(name, held)| {
                if !held {
                    return Deletion::Missing;
                }
                deletes.extend_from_slice(format!("delete {name}\r\n").as_bytes());
                deleting.push(*name);
                Deletion::Deleted
            })
            .collect();
        if !deleting.is_empty() {
            let replies = self.pipeline(source, &deletes, None, deleting.len()).map_err(Failure::source)?;
            for (name, reply) in deleting.iter().zip(replies) {
                if reply != "DELETED" && reply != "NOT_FOUND" {
                    return Err(Failure::source(format!("{source}: delete {name:?}: {reply}")));
                }
            }
        }
        Ok(outcomes)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    use super::*;

    /// A memcached too old for the hash walk (none installs here: Debian's
    /// answers both): a loopback listener that refuses `metadump hash` as
    /// such a server reads it, as a slab class list, and lists one item for
    /// `metadump all`; each command comes on a connection of its own.
    #[test]
    fn a_memcached_without_the_hash_walk_is_listed_with_metadump_all() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let address = listener.local_addr().expect("bound").to_string();
        let server = std::thread::spawn(move || {
            let mut commands = Vec::new();
            for stream in listener.incoming().take(2) {
                let mut stream = BufReader::new(stream.expect("a connection"));
                let mut line = String::new();
                stream.read_line(&mut line).expect("a command");
                let reply: &[u8] = match line.as_str() {
                    "lru_crawler metadump hash\r\n" => b"BADCLASS invalid class id\r\n",
                    "lru_crawler metadump all\r\n" => {
                        b"key=old%20key exp=-1 la=1 cas=7 fetch=no cls=1 size=70\nEND\r\n"
                    }
                    _ => b"ERROR\r\n",
                };
                stream.get_mut().write_all(reply).expect("a reply");
                commands.push(line);
            }
            commands
        });
        let keys = Memcached::default().keys(&address).expect("listed");
        assert_eq!(keys.len(), 1);
        assert_eq!((keys[0].bytes.as_slice(), keys[0].expiry, keys[0].size), (&b"old key"[..], None, 70));
        let commands = server.join().expect("the listener ran");
        assert_eq!(commands, ["lru_crawler metadump hash\r\n", "lru_crawler metadump all\r\n"]);
    }
}
