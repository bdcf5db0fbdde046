//! The handoff protocol: during a transition each key is served by exactly
//! one server, whatever the command (`core/SPEC.md`, *Handoff*).
//!
//! A key whose arc moves lives on its old owner until the mover takes it
//! to its new owner with Redis's `MIGRATE` (atomic per key: it leaves the
//! old owner as it lands on the new one). A client sends every command on
//! such a key first to the old owner through [`REDIS_GUARD`], a script that
//! runs the command there when the key is there and otherwise answers
//! [`MOVED_REPLY`]; on that answer the client sends the command, unguarded,
//! to the new owner. The script and `MIGRATE` each run atomically on the
//! old owner, so the decision "here or there" is taken where the key is.
//! Modelled after Redis Cluster's `MIGRATE` and `ASK` redirection, on plain
//! Redis servers.

use crate::node::Node;

/// Where a key is and where it goes during a transition: its owner under
/// the old ring (active and draining members) and under the new ring
/// (active and warming members). See [`crate::Transition::route`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Route<'t> {
    /// The key's owner under the old ring: where it is now.
    pub old: &'t Node,
    /// The key's owner under the new ring: where it goes.
    pub new: &'t Node,
}

impl Route<'_> {
    /// Whether the key's arc moves: its old and new owners differ. A key
    /// that does not move is sent to its owner directly; a moving one
    /// through [`REDIS_GUARD`] on [`Route::old`], then to [`Route::new`]
    /// when the guard answers [`MOVED_REPLY`].
    pub fn is_moving(&self) -> bool {
        self.old.id() != self.new.id()
    }
}

/// The Lua source of the guard a client runs on a moving key's old owner
/// (Redis 2.6 and later; `EVAL` or `EVALSHA` with [`REDIS_GUARD_SHA1`]).
///
/// Call: `EVALSHA <REDIS_GUARD_SHA1> 2 <key> <mark> <command> [arguments after the key]`,
/// `mark` being [`crate::Transition::handoff_mark`]; for example
/// `EVALSHA … 2 user:7 shardring:handoff:… HINCRBY visits 1` runs
/// `HINCRBY user:7 visits 1`. When the key exists on the server, or the
/// mover has not yet marked the server (created the hash `mark` there), the
/// command runs there and its reply is the script's. Otherwise nothing runs
/// and the reply is an error: [`MOVED_REPLY`], send the command itself to
/// the key's new owner; or [`TRYAGAIN_REPLY`] while the mark holds the key
/// *in doubt* (a `MIGRATE` of it whose answer never came, so the new owner
/// may hold a stale copy), send the guarded command again a little later.
/// A command that deletes a key in doubt (`DEL`, or `LPOP` of its last
/// element) marks it deleted in `mark`, and the mover deletes the new
/// owner's copy before the doubt ends.
/// (Without the mark, a key deleted before the mover starts and then
/// written by a client that knows the transition would land on the new
/// owner while a client still on the old ring writes the old one; without
/// the doubt, a key deleted after an interrupted `MIGRATE` comes back from
/// the new owner's copy. The model checker in `core/tests/handoff_model.rs`
/// finds the first loss.) Only commands that name one key, as their first
/// argument, may go through the guard (not `MSET`, `RENAME`, `SMOVE` or
/// blocking commands such as `BLPOP`, which a script cannot block on).
pub const REDIS_GUARD: &str = "\
-- shardring handoff guard 3: run the command where the key is; once the mover
-- has marked this server (the hash KEYS[2]), a key missing here has moved,
-- unless the mark holds it in doubt (a MIGRATE of it got no answer); a key
-- in doubt that the command deletes here is marked deleted.
local doubted = redis.call('HEXISTS', KEYS[2], KEYS[1]) == 1
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 1 then
  if doubted then
    return redis.error_reply('SHARDRING_TRYAGAIN')
  end
  return redis.error_reply('SHARDRING_MOVED')
end
local reply = redis.call(ARGV[1], KEYS[1], unpack(ARGV, 2))
if doubted and redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[2], KEYS[1], 'deleted')
end
return reply
";

/// SHA-1 of [`REDIS_GUARD`] in lowercase hex, the name `EVALSHA` takes
/// once the script is loaded (`SCRIPT LOAD`, or a first `EVAL`); a server
/// that answers `NOSCRIPT` has not loaded it yet.
pub const REDIS_GUARD_SHA1: &str = "26a3477e39a9a146745bc4001a912b644f93f37f";

/// The prefix of every mark key ([`crate::Transition::handoff_mark`]): the
/// mover skips keys with it when it lists a server.
pub const MARK_PREFIX: &str = "shardring:handoff:";

/// The error message [`REDIS_GUARD`] answers when the key is not on the
/// server. Redis 7.0 sends it with its generic code, as the error reply
/// `-ERR SHARDRING_MOVED`; some clients strip `ERR ` (redis-py), others
/// keep it (node-redis): recognise a message equal to this text, or to it
/// after `ERR `.
pub const MOVED_REPLY: &str = "SHARDRING_MOVED";

/// The error message [`REDIS_GUARD`] answers when the key is not on the
/// server and the mover holds it in doubt: a `MIGRATE` of it got no answer
/// (the target failed mid-command), so the new owner may hold a stale copy
/// until the mover settles it (deletes that copy, usually within one of
/// its listings; for as long as the new owner is unreachable). Nothing ran:
/// send the guarded command again after a short wait (Redis Cluster's
/// `TRYAGAIN`). Sent as `-ERR SHARDRING_TRYAGAIN` by Redis 7.0; recognise
/// it as [`MOVED_REPLY`].
pub const TRYAGAIN_REPLY: &str = "SHARDRING_TRYAGAIN";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sha1_names_the_guard() {
        assert_eq!(sha1_smol::Sha1::from(REDIS_GUARD).digest().to_string(), REDIS_GUARD_SHA1);
    }

    /// SPEC gives the guard byte for byte, and its SHA-1.
    #[test]
    fn the_spec_gives_this_guard() {
        let spec = include_str!("../../SPEC.md");
        assert!(spec.contains(&format!("```lua\n{REDIS_GUARD}```")), "core/SPEC.md, Handoff, differs from REDIS_GUARD");
        assert!(spec.contains(REDIS_GUARD_SHA1));
    }
}
