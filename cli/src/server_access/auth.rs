//! Authentication on a connection of our own ([`super::open`]):
//! memcached's text-protocol users (`memcached -Y`) and Redis's `AUTH`.
//! (The rebalancer's Redis connections come from the `redis` crate, which
//! sends the same `AUTH` from the same [`super::Credentials`].) Errors name
//! the server and its answer, never the password.

use std::io::{Read, Write};

use shardring_membership::Secret;

use super::tls::Stream;

/// The longest reply line read here: a server that sends more without a
/// line end is not one we speak to.
const MAX_LINE: usize = 4096;

/// One reply line from `stream`, without its CRLF, read byte by byte
/// (before the connection gets a buffered reader, which would take bytes
/// past it).
pub(super) fn line(server: &str, stream: &mut Stream) -> Result<String, String> {
    let mut reply = Vec::new();
    let mut byte = [0u8; 1];
    while !reply.ends_with(b"\r\n") {
        if stream.read(&mut byte).map_err(|e| format!("{server}: {e}"))? == 0 {
            return Err(format!("{server}: the connection closed during authentication"));
        }
        reply.push(byte[0]);
        if reply.len() > MAX_LINE {
            return Err(format!("{server}: no line end in the first {MAX_LINE} bytes of its answer"));
        }
    }
    Ok(String::from_utf8_lossy(&reply).trim_end().to_owned())
}

/// `reply` as an error shows it: at most 200 characters, the password
/// redacted should a server echo it.
fn shown(reply: &str, password: &Secret) -> String {
    let reply = reply.replace(password.expose(), "<redacted>");
    reply.chars().take(200).collect()
}

/// memcached's text-protocol authentication (`memcached -Y`): the first
/// command is a `set` whose value is `user password`; `STORED` says the
/// connection may go on. A `version` goes first: a server that answers
/// it does not require authentication, and would store the password as
/// an ordinary item for every client to read, so it is refused instead.
pub(super) fn memcached(server: &str, stream: &mut Stream, user: &str, password: &Secret) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{server}: {e}");
    stream.send(b"version\r\n", None).map_err(io)?;
    let probe = line(server, stream)?;
    if probe != "CLIENT_ERROR unauthenticated" {
        return Err(format!(
            "{server}: memcached does not require authentication (it answered {:?}, not \
             \"CLIENT_ERROR unauthenticated\"): the password is not sent; start it with -Y, or drop \
             --memcached-user",
            shown(&probe, password)
        ));
    }
    let value = format!("{user} {}", password.expose());
    let mut request = format!("set shardring-auth 0 0 {}\r\n", value.len()).into_bytes();
    request.extend_from_slice(value.as_bytes());
    request.extend_from_slice(b"\r\n");
    stream.send(&request, None).map_err(io)?;
    match line(server, stream)?.as_str() {
        "STORED" => Ok(()),
        other => Err(format!("{server}: memcached authentication as {user:?} failed: {}", shown(other, password))),
    }
}

/// Redis's `AUTH user password` (an ACL user), or `AUTH password` (the
/// `default` user's); `+OK` says the connection may go on. Any other answer
/// (`-WRONGPASS`, a server without that user or password) is an
/// `authentication failed` error naming the server and the user.
pub(super) fn redis(server: &str, stream: &mut Stream, user: Option<&str>, password: &Secret) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{server}: {e}");
    let mut command = redis::cmd("AUTH");
    if let Some(user) = user {
        command.arg(user);
    }
    command.arg(password.expose());
    stream.write_all(&command.get_packed_command()).map_err(io)?;
    stream.flush().map_err(io)?;
    let reply = line(server, stream)?;
    if reply == "+OK" {
        return Ok(());
    }
    let who = user.map_or_else(|| "the default user".to_owned(), |user| format!("user {user:?}"));
    let reason = shown(reply.strip_prefix('-').unwrap_or(&reply), password);
    Err(format!("{server}: Redis authentication failed as {who}: {reason}"))
}
