//! `ring_follower_t`: a ring kept current from etcd or a config file by the
//! `shardring-membership` crate's follower thread.

use std::ffi::{c_char, c_void};
use std::sync::Arc;
use std::time::Duration;

use shardring_membership::{EtcdAccess, EtcdCredentials, Event, Follower, FollowerOptions, MembershipError, Secret};

use crate::boundary::{boundary, free_handle, handle_ref, into_handle, non_null, text, write, write_fingerprint_hex};
use crate::error::fail;
use crate::error::ring_result::{self, *};
use crate::ring::ring_t;
use crate::ring::shared_handle;

/// An event kind: the ring changed; `revision` and `fingerprint` are the new epoch's.
pub const RING_FOLLOWER_CHANGED: u32 = 1;
/// An event kind: the ring is unchanged but current at a later `revision`.
pub const RING_FOLLOWER_REVISION: u32 = 2;
/// An event kind: a record was left out of the ring; `message` names its key and why.
pub const RING_FOLLOWER_REJECTED: u32 = 3;
/// An event kind: the source cannot be read; the last ring is kept; `message` says why.
pub const RING_FOLLOWER_DISCONNECTED: u32 = 4;
/// An event kind: the source answers again, resynchronised at `revision`.
pub const RING_FOLLOWER_RECONNECTED: u32 = 5;

/// A function the follower calls on its own thread for every event:
/// `kind` is a `RING_FOLLOWER_*` constant; `revision` and `fingerprint`
/// describe the current epoch; `message` (`message_len` bytes, not
/// NUL-terminated, valid during the call only) is empty except for
/// `RING_FOLLOWER_REJECTED` and `RING_FOLLOWER_DISCONNECTED`. It must not
/// call `ring_follower_free` on its own follower.
pub type ring_follower_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        kind: u32,
        revision: i64,
        fingerprint: u64,
        message: *const c_char,
        message_len: usize,
    ),
>;

/// A ring kept current by a background thread. Create with
/// `ring_follower_new_etcd` or `ring_follower_new_file`; read the current
/// ring with `ring_follower_ring`; release with `ring_follower_free`. Safe
/// to use from many threads at once.
pub struct ring_follower_t {
    follower: Follower,
}

/// The C callback and its userdata, moved to the follower's thread.
struct Callback {
    function: unsafe extern "C" fn(*mut c_void, u32, i64, u64, *const c_char, usize),
    userdata: *mut c_void,
}

// SAFETY: the caller of ring_follower_new_* promises that the callback may be
// called from another thread with this userdata until ring_follower_free returns.
unsafe impl Send for Callback {}
// SAFETY: as above; the follower calls it from one thread at a time.
unsafe impl Sync for Callback {}

impl Callback {
    fn call(&self, event: &Event, revision: i64, fingerprint: u64) {
        let (kind, message) = match event {
            Event::Epoch { changed: true, .. } => (RING_FOLLOWER_CHANGED, String::new()),
            Event::Epoch { .. } => (RING_FOLLOWER_REVISION, String::new()),
            Event::Rejected(rejected) => (RING_FOLLOWER_REJECTED, format!("{}: {}", rejected.key, rejected.message)),
            Event::Disconnected { message } => (RING_FOLLOWER_DISCONNECTED, message.clone()),
            Event::Reconnected { .. } => (RING_FOLLOWER_RECONNECTED, String::new()),
            _ => return,
        };
        // A panic must not cross into C, nor a C callback's unwinding into Rust.
        // SAFETY: the function and userdata are the caller's, valid until ring_follower_free.
        unsafe { (self.function)(self.userdata, kind, revision, fingerprint, message.as_ptr().cast(), message.len()) };
    }
}

fn options(timeout_ms: u32, callback: ring_follower_callback, userdata: *mut c_void) -> FollowerOptions {
    let hook = callback.map(|function| {
        let callback = Callback { function, userdata };
        Box::new(move |event: &Event, epoch: &Arc<shardring_membership::Epoch>| {
            let (revision, fingerprint) = match event {
                Event::Epoch { revision, fingerprint, .. } => (*revision, *fingerprint),
                _ => (epoch.revision, epoch.fingerprint),
            };
            callback.call(event, revision, fingerprint);
        }) as shardring_membership::Hook
    });
    FollowerOptions {
        initial_timeout: Duration::from_millis(u64::from(timeout_ms)),
        hook,
        ..FollowerOptions::default()
    }
}

/// A membership error as a result code, with the message in `ring_last_error`.
fn membership_error(error: MembershipError) -> ring_result {
    let code = match &error {
        MembershipError::Timeout { .. } | MembershipError::Stopped => RING_TIMEOUT,
        MembershipError::File { .. } | MembershipError::Secret(_) => RING_FILE,
        MembershipError::Refused { .. } => RING_REFUSED,
        _ => RING_INVALID_CONFIG,
    };
    fail(code, format_args!("{error}"))
}

/// # Safety
/// `handle` must be NULL or a live follower handle.
pub(crate) unsafe fn follower_ref<'a>(handle: *const ring_follower_t) -> Result<&'a Follower, ring_result> {
    // SAFETY: forwarded contract.
    Ok(unsafe { &handle_ref(handle, "follower")?.follower })
}

fn hand_out(follower: Follower, out: *mut *mut ring_follower_t) {
    let handle = into_handle(ring_follower_t { follower });
    // SAFETY: every caller checks `out` non-NULL first; it is writable by contract.
    unsafe { write(out, handle) }
}

/// Starts following the ring under `prefix` (`prefix_len` bytes of UTF-8,
/// e.g. `/shardring/cache`) in the etcd cluster at `endpoints`
/// (`endpoints_len` bytes: `http://127.0.0.1:2379`, comma-separated for
/// several), as `core/SPEC.md` *Membership in etcd* lays it out. Returns
/// once the first ring is read. `callback` (or NULL) is called on the
/// follower's thread for every event, with `userdata`.
///
/// On success writes a new handle to `*out_follower`; release it with
/// `ring_follower_free`. Errors: `RING_NULL_ARGUMENT`, `RING_INVALID_UTF8`,
/// `RING_INVALID_CONFIG` (a bad endpoint or prefix), `RING_REFUSED` (no
/// ring within `timeout_ms` milliseconds, and the last error was etcd
/// refusing this client: its auth requires a user, or `http://` to a
/// TLS-only etcd, or the reverse),
/// `RING_TIMEOUT` (no ring within `timeout_ms` milliseconds otherwise:
/// etcd unreachable, or an invalid ring config record).
///
/// # Safety
/// `endpoints` and `prefix` must be valid for their lengths; `out_follower`
/// writable; `callback` (if not NULL) callable from another thread with
/// `userdata` until `ring_follower_free` returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_new_etcd(
    endpoints: *const c_char,
    endpoints_len: usize,
    prefix: *const c_char,
    prefix_len: usize,
    timeout_ms: u32,
    callback: ring_follower_callback,
    userdata: *mut c_void,
    out_follower: *mut *mut ring_follower_t,
) -> ring_result {
    // SAFETY: forwarded contract; NULL security is plain TCP without a user.
    unsafe {
        ring_follower_new_etcd_secure(
            endpoints,
            endpoints_len,
            prefix,
            prefix_len,
            std::ptr::null(),
            timeout_ms,
            callback,
            userdata,
            out_follower,
        )
    }
}

/// TLS files and an etcd user for `ring_follower_new_etcd_secure`. Every
/// field is a NUL-terminated UTF-8 string, or NULL when not given.
#[repr(C)]
pub struct ring_etcd_security_t {
    /// PEM CA bundle that signed etcd's server certificate (turns TLS on).
    pub ca_file: *const c_char,
    /// PEM client certificate, with `key_file` (mutual TLS).
    pub cert_file: *const c_char,
    /// PEM private key of `cert_file`, readable by its owner alone.
    pub key_file: *const c_char,
    /// etcd user (etcd's auth), with `password` or `password_file`.
    pub user: *const c_char,
    /// The user's password.
    pub password: *const c_char,
    /// A file holding the user's password (its first line), readable by
    /// its owner alone.
    pub password_file: *const c_char,
}

/// A NUL-terminated field of `ring_etcd_security_t`, or `None` for NULL.
///
/// # Safety
/// `ptr` must be NULL or a NUL-terminated string.
unsafe fn field<'a>(ptr: *const c_char, name: &str) -> Result<Option<&'a str>, ring_result> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: NUL-terminated by contract.
    let raw = unsafe { std::ffi::CStr::from_ptr(ptr) };
    // The position of the bad byte would tell something of a password: not given.
    raw.to_str().map(Some).map_err(|_| fail(RING_INVALID_UTF8, format_args!("`security->{name}` is not valid UTF-8")))
}

/// The credentials `security` gives.
///
/// # Safety
/// As `ring_follower_new_etcd_secure`'s `security`.
unsafe fn credentials(security: &ring_etcd_security_t) -> Result<EtcdCredentials, ring_result> {
    // SAFETY: each field NULL or NUL-terminated by contract.
    let path = |ptr, name| unsafe { field(ptr, name) }.map(|f| f.map(std::path::PathBuf::from));
    // SAFETY: as above.
    let user = unsafe { field(security.user, "user")? }.map(str::to_owned);
    // SAFETY: as above.
    let password = match unsafe { field(security.password, "password")? } {
        Some(password) => Some(Secret::new(password).map_err(|e| membership_error(e.into()))?),
        None => None,
    };
    Ok(EtcdCredentials {
        ca_file: path(security.ca_file, "ca_file")?,
        cert_file: path(security.cert_file, "cert_file")?,
        key_file: path(security.key_file, "key_file")?,
        user,
        password,
        password_file: path(security.password_file, "password_file")?,
    })
}

/// As `ring_follower_new_etcd`, over TLS and with etcd's auth as
/// `security` says (NULL: as `ring_follower_new_etcd`): TLS when an
/// endpoint is `https://` or a CA or client certificate is given; the
/// server's certificate is checked against `ca_file` (else the system's
/// roots) and must name the endpoint's host; with `user`, the client
/// authenticates and renews its token whenever etcd reports it expired.
/// Errors, besides `ring_follower_new_etcd`'s: `RING_FILE` for a CA,
/// certificate, key or password file that cannot be used (missing, not a
/// regular file, no PEM block, a key that is not the certificate's, an
/// expired certificate, a key or password file readable by group or
/// others), a certificate without its key or a key without its
/// certificate, an empty password, naming the file; `RING_INVALID_CONFIG`
/// for a user without a password or the reverse, `http://` beside TLS
/// settings, an endpoint with user information; `RING_REFUSED` with the
/// TLS or auth reason and the endpoint in `ring_last_error` (an unknown
/// issuer, an expired or refused certificate, TLS against a plain etcd or
/// the reverse, a wrong password, a permission denied). No password
/// appears in any message.
///
/// # Safety
/// As `ring_follower_new_etcd`; `security` NULL or pointing to a struct
/// whose fields are NULL or NUL-terminated strings, read during the call
/// only.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ring_follower_new_etcd_secure(
    endpoints: *const c_char,
    endpoints_len: usize,
    prefix: *const c_char,
    prefix_len: usize,
    security: *const ring_etcd_security_t,
    timeout_ms: u32,
    callback: ring_follower_callback,
    userdata: *mut c_void,
    out_follower: *mut *mut ring_follower_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_follower);
        // SAFETY: readable for their lengths by contract.
        let (endpoints, prefix) =
            unsafe { (text(endpoints, endpoints_len, "endpoints")?, text(prefix, prefix_len, "prefix")?) };
        let list: Vec<&str> = endpoints.split(',').collect();
        let mut access = EtcdAccess::new(&list);
        if !security.is_null() {
            // SAFETY: a valid struct by contract.
            let credentials = unsafe { credentials(&*security)? };
            access = access.with_credentials(&credentials).map_err(membership_error)?;
        }
        let follower =
            Follower::etcd(access, prefix, options(timeout_ms, callback, userdata)).map_err(membership_error)?;
        hand_out(follower, out_follower);
        Ok(())
    })
}

/// Starts following a JSON ring config file at `path` (`path_len` bytes of
/// UTF-8), re-read whenever it is replaced (write a temporary file, then
/// rename it over) or written; revision `n` is its `n`-th successful read.
/// As `ring_follower_new_etcd` otherwise, except: `RING_FILE` at once when
/// the file cannot be read (missing, a directory) or its config is refused
/// (broken JSON, a byte-order mark, a refused parameter), with
/// `ring_last_error` naming the path and why. A later reload that fails
/// keeps the last ring and is reported to `callback`.
///
/// # Safety
/// As `ring_follower_new_etcd`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_new_file(
    path: *const c_char,
    path_len: usize,
    timeout_ms: u32,
    callback: ring_follower_callback,
    userdata: *mut c_void,
    out_follower: *mut *mut ring_follower_t,
) -> ring_result {
    boundary(|| {
        non_null!(out_follower);
        // SAFETY: readable for its length by contract.
        let path = unsafe { text(path, path_len, "path")? };
        let follower = Follower::file(path, options(timeout_ms, callback, userdata)).map_err(membership_error)?;
        hand_out(follower, out_follower);
        Ok(())
    })
}

/// Writes a new handle to the follower's current ring to `*out_ring`
/// (release it with `ring_free`; it stays valid, unchanged, after later
/// epochs) and, when `out_revision` is not NULL, that ring's revision.
/// Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `follower` must be a live handle; `out_ring` and a non-NULL `out_revision` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_ring(
    follower: *const ring_follower_t,
    out_ring: *mut *mut ring_t,
    out_revision: *mut i64,
) -> ring_result {
    boundary(|| {
        non_null!(out_ring);
        // SAFETY: a live handle by contract.
        let epoch = unsafe { follower_ref(follower)? }.epoch();
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_ring, shared_handle(Arc::clone(&epoch.ring))) };
        if !out_revision.is_null() {
            // SAFETY: non-NULL and writable by contract.
            unsafe { write(out_revision, epoch.revision) };
        }
        Ok(())
    })
}

/// Writes a new handle to the follower's current transition to
/// `*out_transition` (release it with `ring_transition_free`; with every
/// member active its three rings are the current ring) and, when
/// `out_revision` is not NULL, its revision: use its read and write sets
/// while members warm up or drain. Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `follower` must be a live handle; `out_transition` and a non-NULL `out_revision` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_transition(
    follower: *const ring_follower_t,
    out_transition: *mut *mut crate::transition::ring_transition_t,
    out_revision: *mut i64,
) -> ring_result {
    boundary(|| {
        non_null!(out_transition);
        // SAFETY: a live handle by contract.
        let epoch = unsafe { follower_ref(follower)? }.epoch();
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_transition, crate::transition::transition_handle(Arc::clone(&epoch.transition))) };
        if !out_revision.is_null() {
            // SAFETY: non-NULL and writable by contract.
            unsafe { write(out_revision, epoch.revision) };
        }
        Ok(())
    })
}

/// Writes the follower's state through each non-NULL out-parameter: the
/// current `revision` and `fingerprint`, whether the source answered at the
/// last attempt (`connected`, 1 or 0), how many seconds it has been out of
/// touch with it (`stale_seconds`, 0 while connected), and how many epochs
/// it has published (`epochs`: poll it to notice changes without a callback).
/// Errors: `RING_NULL_ARGUMENT` (a NULL `follower`).
///
/// # Safety
/// `follower` must be a live handle; each non-NULL out-parameter writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_status(
    follower: *const ring_follower_t,
    out_revision: *mut i64,
    out_fingerprint: *mut u64,
    out_connected: *mut u8,
    out_stale_seconds: *mut f64,
    out_epochs: *mut u64,
) -> ring_result {
    boundary(|| {
        // SAFETY: a live handle by contract.
        let status = unsafe { follower_ref(follower)? }.status();
        // SAFETY: each written pointer is non-NULL and writable by contract.
        unsafe {
            if !out_revision.is_null() {
                write(out_revision, status.revision);
            }
            if !out_fingerprint.is_null() {
                write(out_fingerprint, status.fingerprint);
            }
            if !out_connected.is_null() {
                write(out_connected, u8::from(status.connected));
            }
            if !out_stale_seconds.is_null() {
                write(out_stale_seconds, status.stale_for.as_secs_f64());
            }
            if !out_epochs.is_null() {
                write(out_epochs, status.epochs);
            }
        }
        Ok(())
    })
}

/// Writes the follower's current epoch number to `*out_epoch`: it only
/// grows for the life of the follower, across an etcd restore too (when the
/// revision of `ring_follower_status` and of the callback's events can go
/// down); equal to the revision while the follower has read one store from
/// its start (`core/SPEC.md`, *Epochs*). Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `follower` must be a live handle; `out_epoch` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_epoch(follower: *const ring_follower_t, out_epoch: *mut u64) -> ring_result {
    boundary(|| {
        non_null!(out_epoch);
        // SAFETY: a live handle by contract.
        let epoch = unsafe { follower_ref(follower)? }.epoch();
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_epoch, epoch.number) };
        Ok(())
    })
}

/// Writes the follower's current fingerprint (the `fingerprint` of
/// `ring_follower_status` and of its events: the current ring's, or with
/// members warming or draining the transition's) as text into `out_hex`:
/// 16 lowercase hexadecimal digits, zero-padded, then a NUL
/// (`RING_FINGERPRINT_HEX_LEN` = 17 bytes), as `ring_fingerprint_hex`
/// writes a ring's and the CLI prints an epoch's.
///
/// Errors: `RING_NULL_ARGUMENT`, `RING_BUFFER_TOO_SMALL` (`out_hex_len`
/// below 17). Nothing is written on error.
///
/// # Safety
/// `follower` must be a live handle; `out_hex` writable for `out_hex_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_fingerprint_hex(
    follower: *const ring_follower_t,
    out_hex: *mut c_char,
    out_hex_len: usize,
) -> ring_result {
    boundary(|| {
        // SAFETY: a live handle by contract.
        let fingerprint = unsafe { follower_ref(follower)? }.status().fingerprint;
        // SAFETY: writable for `out_hex_len` bytes by contract.
        unsafe { write_fingerprint_hex(fingerprint, out_hex, out_hex_len) }
    })
}

/// Writes to `*out_count` how many lookups on this follower's rings chose
/// the node `id` (`id_len` bytes) so far: `ring_get` and its variants on a
/// ring from `ring_follower_ring`, each key of a batch, the first node of a
/// preference list, the owner of `ring_transition_read_nodes` /
/// `..._write_nodes` on its transition. 0 for an id no ring held. Counting
/// costs about 1.7 ns per lookup.
///
/// Errors: `RING_NULL_ARGUMENT`.
///
/// # Safety
/// `follower` must be a live handle; `id` readable for `id_len` bytes;
/// `out_count` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_lookup_count(
    follower: *const ring_follower_t,
    id: *const c_char,
    id_len: usize,
    out_count: *mut u64,
) -> ring_result {
    boundary(|| {
        non_null!(out_count);
        // SAFETY: readable for `id_len` bytes by contract.
        let id = unsafe { crate::boundary::bytes(id.cast(), id_len, "id") }?;
        // SAFETY: a live handle by contract.
        let counts = unsafe { follower_ref(follower)? }.lookup_counts().unwrap_or_default();
        let count = std::str::from_utf8(id).map_or(0, |id| counts.get(id));
        // SAFETY: checked non-NULL; writable by contract.
        unsafe { write(out_count, count) };
        Ok(())
    })
}

/// Writes the follower's metrics as OpenMetrics text (NUL-terminated; its
/// length without the NUL to `*out_len`) to `*out_text`, allocated by the
/// library: release it with `ring_string_free`. Serve it at `/metrics`
/// with the program's own HTTP server; the list of metrics is in
/// docs/operating.md.
///
/// Errors: `RING_NULL_ARGUMENT`; `RING_INVALID_CONFIG` when a node id holds
/// a NUL byte, which no C string carries.
///
/// # Safety
/// `follower` must be a live handle; the out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_metrics(
    follower: *const ring_follower_t,
    out_text: *mut *mut c_char,
    out_len: *mut usize,
) -> ring_result {
    boundary(|| {
        non_null!(out_text, out_len);
        // SAFETY: a live handle by contract.
        let text = unsafe { follower_ref(follower)? }.metrics();
        let len = text.len();
        // A node id may hold a NUL byte, which a C string cannot carry.
        let text = std::ffi::CString::new(text).map_err(|e| {
            let at = e.nul_position();
            fail(RING_INVALID_CONFIG, format_args!("a node id holds a NUL byte (byte {at} of the metrics text)"))
        })?;
        // SAFETY: both out-pointers are non-NULL and writable by contract.
        unsafe {
            write(out_text, text.into_raw());
            write(out_len, len);
        }
        Ok(())
    })
}

/// Blocks until the follower holds `revision` or a later one (asking etcd
/// to confirm its progress) and writes the revision held to `*out_revision`
/// (if not NULL). Errors: `RING_NULL_ARGUMENT`, `RING_TIMEOUT` after
/// `timeout_ms` milliseconds.
///
/// # Safety
/// `follower` must be a live handle; a non-NULL `out_revision` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_wait(
    follower: *const ring_follower_t,
    revision: i64,
    timeout_ms: u32,
    out_revision: *mut i64,
) -> ring_result {
    boundary(|| {
        // SAFETY: a live handle by contract.
        let follower = unsafe { follower_ref(follower)? };
        let epoch = follower
            .wait_for_revision(revision, Duration::from_millis(u64::from(timeout_ms)))
            .map_err(membership_error)?;
        if !out_revision.is_null() {
            // SAFETY: non-NULL and writable by contract.
            unsafe { write(out_revision, epoch.revision) };
        }
        Ok(())
    })
}

/// Stops the follower's thread (waiting for a callback in progress) and
/// releases the handle; rings taken with `ring_follower_ring` stay valid.
/// NULL is a no-op.
///
/// # Safety
/// `follower` must be NULL or a live handle, not used afterwards, and not
/// freed from within its own callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ring_follower_free(follower: *mut ring_follower_t) {
    // SAFETY: NULL or a live handle from hand_out, released once by contract.
    unsafe { free_handle(follower) }
}
