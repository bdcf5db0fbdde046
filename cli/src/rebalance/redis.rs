//! The Redis backend, through the `redis` crate: keys from `SCAN`, copies by
//! pipelined `DUMP` + `PTTL` on the source and `RESTORE` (without `REPLACE`,
//! so a newer value a dual writer put on the target is never overwritten)
//! on the target. A move deletes the source's copy only once `EXISTS` shows the
//! key on its new owner. `--migrate` moves keys with `MIGRATE ... REPLACE KEYS`
//! instead, atomic per key on the source (the handoff protocol's mover).

use std::collections::HashMap;

use redis::{Connection, ConnectionLike, IntoConnectionInfo, RedisError, Value};

use shardring::handoff::MARK_PREFIX;

use super::backend::{Backend, Deletion, Failure, Key, Outcome};
use crate::server_access::Credentials;

/// Redis servers by address (`host:port`, the node ids).
#[derive(Default)]
pub(crate) struct Redis {
    connections: HashMap<String, Connection>,
    credentials: Credentials,
    /// `SCAN`'s `COUNT` ([`SCAN_COUNT`] or [`PACED_SCAN_COUNT`]).
    scan_count: u64,
}

fn failed(server: &str, error: RedisError) -> String {
    format!("{server}: {error}")
}

impl Redis {
    /// A backend that authenticates with `credentials` (none: no AUTH);
    /// `paced` (a `--rate` run) lists in pages of [`PACED_SCAN_COUNT`].
    pub(crate) fn new(credentials: Credentials, paced: bool) -> Redis {
        let scan_count = if paced { PACED_SCAN_COUNT } else { SCAN_COUNT };
        Redis { connections: HashMap::new(), credentials, scan_count }
    }

    fn connection(&mut self, server: &str) -> Result<&mut Connection, String> {
        if !self.connections.contains_key(server) {
            // Built field by field: the info's Debug shows the password, so it is never printed.
            let scheme = if self.credentials.tls.is_some() { "rediss" } else { "redis" };
            let mut info = format!("{scheme}://{server}/").into_connection_info().map_err(|e| failed(server, e))?;
            info.redis.username = self.credentials.user.clone();
            info.redis.password = self.credentials.password.as_ref().map(|p| p.expose().to_owned());
            let client = match &self.credentials.tls {
                Some(tls) => {
                    let certificates = redis::TlsCertificates {
                        client_tls: tls.identity.as_ref().map(|(cert, key)| redis::ClientTlsConfig {
                            client_cert: cert.clone(),
                            client_key: key.clone(),
                        }),
                        root_cert: tls.ca.clone(),
                    };
                    redis::Client::build_with_tls(info, certificates)
                }
                None => redis::Client::open(info),
            }
            .map_err(|e| failed(server, e))?;
            let connection =
                client.get_connection_with_timeout(std::time::Duration::from_secs(5)).map_err(|e| failed(server, e))?;
            self.connections.insert(server.to_owned(), connection);
        }
        Ok(self.connections.get_mut(server).expect("inserted above"))
    }

    /// Runs `command` on `server`: `Err` when it cannot be reached, else the
    /// server's answer (its error included). A failed connection is dropped
    /// (the next call reconnects).
    fn answer<T: redis::FromRedisValue>(
        &mut self,
        server: &str,
        command: &redis::Cmd,
    ) -> Result<Result<T, RedisError>, String> {
        let connection = self.connection(server)?;
        let result = command.query(connection);
        if result.as_ref().is_err_and(|e| e.is_io_error() || e.is_connection_dropped()) {
            self.connections.remove(server);
        }
        Ok(result)
    }

    /// [`Redis::answer`], an error answer being a failure too.
    fn run<T: redis::FromRedisValue>(&mut self, server: &str, command: &redis::Cmd) -> Result<T, String> {
        self.answer(server, command)?.map_err(|e| failed(server, e))
    }
}

impl Redis {
    /// Sends `pipeline` to `server` and returns one reply per command, an
    /// error reply among them (a `Value::ServerError`); `Err` when the
    /// server cannot be reached.
    fn pipelined(&mut self, server: &str, pipeline: &redis::Pipeline, count: usize) -> Result<Vec<Value>, String> {
        let connection = self.connection(server)?;
        let replies = connection.req_packed_commands(&pipeline.get_packed_pipeline(), 0, count);
        if replies.as_ref().is_err_and(|e| e.is_io_error() || e.is_connection_dropped()) {
            self.connections.remove(server);
        }
        replies.map_err(|e| failed(server, e))
    }
}

impl Backend for Redis {
    fn name(&self) -> &'static str {
        "redis"
    }

    /// The `run_id` of `INFO server`: random per server process.
    fn identity(&mut self, server: &str) -> Result<Option<String>, Failure> {
        let info: String = self.run(server, redis::cmd("INFO").arg("server")).map_err(Failure::source)?;
        Ok(info.lines().find_map(|line| line.strip_prefix("run_id:")).map(|id| format!("run_id {}", id.trim())))
    }

    fn keys(&mut self, server: &str) -> Result<Vec<Key>, Failure> {
        let mut keys = Vec::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, page) = self.page(server, cursor, None)?;
            keys.extend(page);
            if next == 0 {
                // SCAN may return a key twice.
                keys.sort_unstable_by(|a, b| a.bytes.cmp(&b.bytes));
                keys.dedup_by(|a, b| a.bytes == b.bytes);
                return Ok(keys);
            }
            cursor = next;
        }
    }

    /// `SCAN cursor COUNT n` ([`Redis::new`]), without handoff marks (the mover's, not
    /// data); with `mark`, one `DEL` of the other marks the page holds.
    /// (Deleting them as the move's first listing finds them, rather than in
    /// a `SCAN ... MATCH` of its own before it, spares each source a whole
    /// extra walk of its keyspace: about 130 ms of its CPU at 250,000 keys.)
    fn page(&mut self, server: &str, cursor: u64, mark: Option<&str>) -> Result<(u64, Vec<Key>), Failure> {
        let (next, batch): (u64, Vec<Vec<u8>>) = self
            .run(server, redis::cmd("SCAN").arg(cursor).arg("COUNT").arg(self.scan_count))
            .map_err(Failure::source)?;
        let (marks, data): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
            batch.into_iter().partition(|bytes| bytes.starts_with(MARK_PREFIX.as_bytes()));
        if let Some(mark) = mark {
            let others: Vec<&Vec<u8>> = marks.iter().filter(|other| other.as_slice() != mark.as_bytes()).collect();
            if !others.is_empty() {
                let _: i64 = self.run(server, redis::cmd("DEL").arg(others)).map_err(Failure::source)?;
            }
        }
        Ok((next, data.into_iter().map(|bytes| Key { bytes, expiry: None, size: 0 }).collect()))
    }

    /// One pipeline of `DUMP` and `PTTL` per key on the source, then one of
    /// `RESTORE` (without `REPLACE`) for what it holds on the target: two
    /// round trips per batch. A `BUSYKEY` reply means the target holds the
    /// key already.
    fn copy(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Outcome>, Failure> {
        let mut reads = redis::pipe();
        for key in keys {
            reads.cmd("DUMP").arg(&key.bytes).cmd("PTTL").arg(&key.bytes);
        }
        let replies = self.pipelined(source, &reads, 2 * keys.len()).map_err(Failure::source)?;
        let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(keys.len());
        let mut writes = redis::pipe();
        let mut pending = Vec::new();
        for (i, (key, pair)) in keys.iter().zip(replies.chunks(2)).enumerate() {
            match pair {
                // -2: gone since the DUMP; -1: no expiry (RESTORE's 0).
                [Value::Nil, _] | [_, Value::Int(-2)] => outcomes.push(Some(Outcome::Gone)),
                [Value::BulkString(dump), Value::Int(ttl)] => {
                    writes.cmd("RESTORE").arg(&key.bytes).arg((*ttl).max(0)).arg(dump);
                    pending.push((i, dump.len() as u64));
                    outcomes.push(None);
                }
                [Value::ServerError(error), _] | [_, Value::ServerError(error)] => {
                    return Err(Failure::source(failed(source, error.clone().into())));
                }
                other => return Err(Failure::source(format!("{source}: DUMP and PTTL answered {other:?}"))),
            }
        }
        if !pending.is_empty() {
            let replies = self.pipelined(target, &writes, pending.len()).map_err(Failure::target)?;
            for ((i, bytes), reply) in pending.into_iter().zip(replies) {
                outcomes[i] = Some(match reply {
                    Value::Okay => Outcome::Copied { bytes },
                    Value::ServerError(error) if error.code() == "BUSYKEY" => Outcome::Present,
                    Value::ServerError(error) => return Err(Failure::target(failed(target, error.into()))),
                    other => return Err(Failure::target(format!("{target}: RESTORE answered {other:?}"))),
                });
            }
        }
        Ok(outcomes.into_iter().map(|o| o.expect("every key has an outcome")).collect())
    }

    /// One pipeline of `EXISTS`.
    fn held(&mut self, server: &str, keys: &[&Key]) -> Result<Vec<bool>, Failure> {
        let mut checks = redis::pipe();
        for key in keys {
            checks.cmd("EXISTS").arg(&key.bytes);
        }
        let replies = self.pipelined(server, &checks, keys.len()).map_err(Failure::target)?;
        replies
            .into_iter()
            .map(|reply| match reply {
                Value::Int(count) => Ok(count > 0),
                other => Err(Failure::target(format!("{server}: EXISTS answered {other:?}"))),
            })
            .collect()
    }

    /// One pipeline of `EXISTS` on the target, then one of `DEL` on the
    /// source for the keys the target holds.
    fn delete_moved(&mut self, source: &str, target: &str, keys: &[&Key]) -> Result<Vec<Deletion>, Failure> {
        let held = self.held(target, keys)?;
        let mut deletes = redis::pipe();
        let mut outcomes = Vec::with_capacity(keys.len());
        for (key, held) in keys.iter().zip(held) {
            if held {
                deletes.cmd("DEL").arg(&key.bytes);
                outcomes.push(Deletion::Deleted);
            } else {
                outcomes.push(Deletion::Missing);
            }
        }
        let count = outcomes.iter().filter(|o| matches!(o, Deletion::Deleted)).count();
        if count > 0 {
            for reply in self.pipelined(source, &deletes, count).map_err(Failure::source)? {
                if let Value::ServerError(error) = reply {
                    return Err(Failure::source(failed(source, error.into())));
                }
            }
        }
        Ok(outcomes)
    }

    /// Three round trips on the source: [`DOUBT`] (which keys are there,
    /// those put in doubt), answered before `MIGRATE host port "" 0 10000
    /// REPLACE KEYS k...` is sent; once that answers, [`END_DOUBT`].
    /// Redis restores each key on the target and deletes it from the source
    /// in that one command, which blocks the source meanwhile: no client
    /// sees the key on both or on neither. An `IOERR` (the target failed
    /// mid-command) can leave a key on both: the source's copy is the live
    /// one, and a rerun's `REPLACE` settles it; but should a client delete
    /// the key on the source first, the target's copy would come back. So
    /// the keys stay in doubt, the guard answers `SHARDRING_TRYAGAIN` for
    /// those the source lacks, and [`Backend::drop_doubts`] deletes their
    /// copies on the target.
    fn migrate(&mut self, source: &str, target: &str, mark: &str, keys: &[&Key]) -> Result<Vec<Outcome>, Failure> {
        let (host, port) = target.rsplit_once(':').ok_or_else(|| Failure::target(format!("{target}: no port")))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        // The doubt first, on its own: a source that dies during MIGRATE
        // must come back (append-only file) with its keys in doubt, and it
        // writes that file only between the commands it is sent.
        let mut doubt = redis::cmd("EVAL");
        doubt.arg(DOUBT).arg(keys.len() + 1).arg(mark);
        for key in keys {
            doubt.arg(&key.bytes);
        }
        let found: Vec<i64> = self.run(source, &doubt).map_err(|error| {
            if error.contains(NO_MARK) {
                Failure::source(format!(
                    "{source}: the handoff mark {mark:?} is gone (evicted, flushed or deleted): guards no longer send \
                     its moved keys on, so no more keys move from it, and a moved key a client wrote there since may be \
                     on both servers; give old owners maxmemory-policy noeviction or volatile-*, and run the move again"
                ))
            } else {
                Failure::source(error)
            }
        })?;
        if found.len() != keys.len() {
            return Err(Failure::source(format!(
                "{source}: the doubt script answered {} of {} keys",
                found.len(),
                keys.len()
            )));
        }
        let mut pipeline = redis::pipe();
        let migrate = pipeline.cmd("MIGRATE").arg(host).arg(port).arg("").arg(0).arg(MIGRATE_TIMEOUT_MS);
        migrate.arg("REPLACE");
        // The target authenticates the source's connection as the rebalancer's own.
        match (&self.credentials.user, &self.credentials.password) {
            (Some(user), Some(password)) => migrate.arg("AUTH2").arg(user).arg(password.expose()),
            (None, Some(password)) => migrate.arg("AUTH").arg(password.expose()),
            _ => migrate,
        };
        migrate.arg("KEYS");
        for key in keys {
            migrate.arg(&key.bytes);
        }
        let replies = self.pipelined(source, &pipeline, 1).map_err(Failure::source)?;
        match &replies[0] {
            Value::Okay => {}
            Value::SimpleString(status) if status == "NOKEY" => {}
            Value::ServerError(error) => {
                return Err(Failure::target(format!("{source} -> {target}: MIGRATE: {error:?}")));
            }
            other => return Err(Failure::target(format!("{source} -> {target}: MIGRATE answered {other:?}"))),
        }
        let mut settled = redis::cmd("EVAL");
        settled.arg(END_DOUBT).arg(keys.len() + 1).arg(mark);
        for key in keys {
            settled.arg(&key.bytes);
        }
        let _: i64 = self.run(source, &settled).map_err(Failure::source)?;
        Ok(found.into_iter().map(|held| if held == 1 { Outcome::Copied { bytes: 0 } } else { Outcome::Gone }).collect())
    }

    /// `HSET mark mark 1`: the mark is a hash whose other fields are the
    /// keys in doubt ([`Backend::migrate`]); this field keeps it when none is.
    fn mark(&mut self, server: &str, mark: &str) -> Result<(), Failure> {
        self.run::<()>(server, redis::cmd("HSET").arg(mark).arg(mark).arg(1)).map_err(Failure::source)
    }

    /// [`SETTLE`], one script: the keys in doubt a client deleted, and on
    /// a source that evicts ([`evicts`]) every key in doubt it lacks.
    fn doubts(&mut self, source: &str, mark: &str) -> Result<Vec<Key>, Failure> {
        let info: String = self.run(source, redis::cmd("INFO").arg("memory")).map_err(Failure::source)?;
        let evicting = if evicts(&info) { "1" } else { "0" };
        let stale: Vec<Vec<u8>> =
            self.run(source, redis::cmd("EVAL").arg(SETTLE).arg(1).arg(mark).arg(evicting)).map_err(Failure::source)?;
        Ok(stale.into_iter().map(|bytes| Key { bytes, expiry: None, size: 0 }).collect())
    }

    /// `DEL k...` on the target, then `HDEL mark k...` on the source. No
    /// client wrote these keys on the target since they were deleted on the
    /// source: the guard held them back, so what `DEL` removes is a stale
    /// copy.
    fn drop_doubts(&mut self, source: &str, target: Option<&str>, mark: &str, keys: &[&Key]) -> Result<(), Failure> {
        let mut stale = redis::cmd("DEL");
        let mut settled = redis::cmd("HDEL");
        settled.arg(mark);
        for key in keys {
            stale.arg(&key.bytes);
            settled.arg(&key.bytes);
        }
        if let Some(target) = target {
            let _: i64 = self.run(target, &stale).map_err(Failure::target)?;
        }
        let _: i64 = self.run(source, &settled).map_err(Failure::source)?;
        Ok(())
    }
}

/// The mover's script before a `MIGRATE` (KEYS: the mark, then the keys):
/// each key the source holds goes in doubt (`1`, replacing a `deleted`:
/// `MIGRATE ... REPLACE` will overwrite any copy), one it lacks keeps its
/// state (a key a client deleted keeps `deleted`). Answers `EXISTS` per
/// key, or the error [`NO_MARK`] when the mark's own field is gone (the
/// mark evicted, flushed or deleted): guards then no longer send moved keys
/// on, and no key may move.
const DOUBT: &str = "\
if redis.call('HEXISTS', KEYS[1], KEYS[1]) == 0 then
  return redis.error_reply('SHARDRING_NOMARK')
end
local found = {}
for i = 2, #KEYS do
  found[i - 1] = redis.call('EXISTS', KEYS[i])
  if found[i - 1] == 1 then redis.call('HSET', KEYS[1], KEYS[i], 1) end
end
return found
";

/// [`DOUBT`]'s error when the source has lost its handoff mark.
const NO_MARK: &str = "SHARDRING_NOMARK";

/// The mover's script once a `MIGRATE` answered (KEYS: the mark, then the
/// keys): the doubt of each key ends unless a client deleted it since
/// [`DOUBT`] (its state `deleted`: the target's copy, if any, is stale and
/// [`Backend::drop_doubts`] deletes it).
const END_DOUBT: &str = "\
for i = 2, #KEYS do
  if redis.call('HGET', KEYS[1], KEYS[i]) == '1' then redis.call('HDEL', KEYS[1], KEYS[i]) end
end
return 0
";

/// The mover's script after each listing (KEYS: the mark; ARGV: `1` when
/// the source evicts, else `0`), one atomic step: of the keys in doubt,
/// those marked `deleted` are returned (their copies on the target are
/// stale: [`Backend::drop_doubts`]); one the source lacks otherwise ends
/// its doubt, as moved by a `MIGRATE` before it failed (Redis deletes each
/// key whose `RESTORE` the target confirmed), or, on a source that evicts,
/// is returned too: evicted or moved cannot be told apart, and a cache
/// may miss a key but must not serve a stale one. One the source holds
/// stays for the next listing to move.
const SETTLE: &str = "\
local stale = {}
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local key, state = fields[i], fields[i + 1]
  if key ~= KEYS[1] then
    if state == 'deleted' then
      stale[#stale + 1] = key
    elseif redis.call('EXISTS', key) == 0 then
      if ARGV[1] == '1' then
        stale[#stale + 1] = key
      else
        redis.call('HDEL', KEYS[1], key)
      end
    end
  end
end
return stale
";

/// Whether a server whose `INFO memory` is `info` evicts keys: a memory
/// limit (`maxmemory` above 0) and a `maxmemory_policy` other than
/// `noeviction`. Without a limit no policy evicts.
fn evicts(info: &str) -> bool {
    let field = |name: &str| info.lines().find_map(|line| line.strip_prefix(name)).map(str::trim);
    let limited = field("maxmemory:").and_then(|bytes| bytes.parse::<u64>().ok()).is_some_and(|bytes| bytes > 0);
    limited && field("maxmemory_policy:").is_some_and(|policy| policy != "noeviction")
}

/// Keys `SCAN` examines per call (a hint), unlimited: a call of 10,000
/// keys blocks the server for about 1.5 ms (250,000 keys of 100 bytes here).
const SCAN_COUNT: u64 = 10_000;

/// Keys `SCAN` examines per call under `--rate`: a call blocks the server
/// for about 80 us, so a client's command waits little behind a listing
/// (the listing that finds nothing left to copy runs unpaced). The
/// listing's server time grows by about 20% (197 against 164 ms for
/// 250,000 keys); with pages of 1,000, a reader's p99 at `--rate 10000` was
/// still 2.1-2.9x its idle value, with 100, 1.0-1.5x.
const PACED_SCAN_COUNT: u64 = 100;

/// How long `MIGRATE` waits for the target, in milliseconds.
const MIGRATE_TIMEOUT_MS: u64 = 10_000;

#[cfg(test)]
mod tests {
    use super::evicts;

    #[test]
    fn a_server_evicts_with_a_memory_limit_and_a_policy_other_than_noeviction() {
        let info = |bytes: u64, policy: &str| {
            format!("# Memory\r\nmaxmemory:{bytes}\r\nmaxmemory_human:{bytes}B\r\nmaxmemory_policy:{policy}\r\n")
        };
        assert!(evicts(&info(100 << 20, "allkeys-lru")));
        assert!(evicts(&info(1, "volatile-ttl")));
        assert!(!evicts(&info(100 << 20, "noeviction")));
        assert!(!evicts(&info(0, "allkeys-lru")), "no limit: nothing is evicted");
        assert!(!evicts("# Memory\r\n"), "an INFO without the fields");
    }
}
