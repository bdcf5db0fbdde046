//! `Follower`: a ring kept current from etcd or a config file by the
//! `shardring-membership` crate's follower thread. `shardring.js` wraps the
//! native follower in an `EventEmitter`: the thread reports each event
//! through a threadsafe function, and on the JS thread the wrapper moves
//! the new ring into the follower's `Ring` (`_sync`) before it emits
//! `'change'`, so a JS caller never sees a ring torn between two epochs.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use napi::bindgen_prelude::{AsyncTask, BigInt, Function};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Error, Result, Status, Task, Unknown, ValueType};
use napi_derive::napi;

use shardring_membership::{EtcdAccess, EtcdCredentials, Event, Follower, FollowerOptions, MembershipError, Secret};

use crate::analysis::Flow;
use crate::errors::{js_type, number, text, type_error};
use crate::ring::{Ring, RingCell, fingerprint_hex};

/// An event of a follower, as the `'change'`, `'epoch'`, `'rejected'`,
/// `'disconnected'` and `'reconnected'` events carry it.
#[napi(object)]
pub struct FollowerEvent {
    /// `"epoch"`, `"rejected"`, `"disconnected"` or `"reconnected"`.
    pub kind: String,
    /// The new epoch's number: it only grows, across an etcd restore too
    /// (`core/SPEC.md`, *Epochs*).
    pub epoch: Option<f64>,
    /// The revision of a new epoch or of a resynchronisation.
    pub revision: Option<f64>,
    /// The new ring's fingerprint.
    pub fingerprint: Option<BigInt>,
    /// The new ring's fingerprint as text, 16 lowercase hex digits,
    /// zero-padded (as `Ring.fingerprintHex` and the CLI give it).
    pub fingerprint_hex: Option<String>,
    /// Whether the ring changed (an epoch can also just confirm a later revision).
    pub changed: Option<bool>,
    /// Share of keys that moved, when the ring changed.
    pub moved_share: Option<f64>,
    /// Who gave keys to whom, when the ring changed.
    pub flows: Option<Vec<Flow>>,
    /// The key of a rejected record.
    pub key: Option<String>,
    /// What is wrong (rejected) or what failed (disconnected).
    pub message: Option<String>,
    /// Seconds out of touch, on reconnection.
    pub down_for: Option<f64>,
}

impl FollowerEvent {
    fn of(event: &Event) -> FollowerEvent {
        let mut out = FollowerEvent {
            kind: String::new(),
            epoch: None,
            revision: None,
            fingerprint: None,
            fingerprint_hex: None,
            changed: None,
            moved_share: None,
            flows: None,
            key: None,
            message: None,
            down_for: None,
        };
        match event {
            Event::Epoch { epoch, revision, fingerprint, changed, diff } => {
                out.kind = "epoch".into();
                out.epoch = Some(*epoch as f64);
                out.revision = Some(*revision as f64);
                out.fingerprint = Some(BigInt::from(*fingerprint));
                out.fingerprint_hex = Some(fingerprint_hex(*fingerprint));
                out.changed = Some(*changed);
                out.moved_share = diff.as_ref().map(|d| d.moved_share);
                out.flows = diff.as_ref().map(|d| {
                    d.flows.iter().map(|f| Flow { from: f.from.clone(), to: f.to.clone(), share: f.share }).collect()
                });
            }
            Event::Rejected(rejected) => {
                out.kind = "rejected".into();
                out.key = Some(rejected.key.clone());
                out.message = Some(rejected.message.clone());
            }
            Event::Disconnected { message } => {
                out.kind = "disconnected".into();
                out.message = Some(message.clone());
            }
            Event::Reconnected { revision, down_for } => {
                out.kind = "reconnected".into();
                out.revision = Some(*revision as f64);
                out.down_for = Some(down_for.as_secs_f64());
            }
            _ => out.kind = "other".into(),
        }
        out
    }
}

/// TLS files and an etcd user for `Follower.etcd` (all optional): TLS when
/// an endpoint is `https://` or a CA or client certificate is given (PEM
/// files; the key file must be its owner's alone); etcd's auth with `user`
/// and its password (a string, or the first line of an owner-only file),
/// the token renewed when it expires.
#[napi(object)]
pub struct EtcdSecurity {
    /// PEM CA bundle that signed etcd's server certificate.
    pub ca_file: Option<String>,
    /// PEM client certificate (with `keyFile`).
    pub cert_file: Option<String>,
    /// PEM private key of `certFile`, mode 600.
    pub key_file: Option<String>,
    /// etcd user.
    pub user: Option<String>,
    /// The user's password.
    pub password: Option<String>,
    /// A file holding the user's password (first line), mode 600.
    pub password_file: Option<String>,
    /// Report the follower as `<prefix>/clients/<reportAs>` (for
    /// `shardring fleet status`).
    pub report_as: Option<String>,
    /// Seconds between reports (default 10).
    pub report_interval: Option<f64>,
    /// Find the hot keys of the follower's lookups (a 64 KiB sketch;
    /// `follower.hotKeys()`) and report them, for `shardring hot publish`
    /// (default false).
    pub hot_keys: Option<bool>,
}

impl EtcdSecurity {
    fn access(self, endpoints: &[String]) -> std::result::Result<EtcdAccess, MembershipError> {
        let password = self.password.map(Secret::new).transpose()?;
        let credentials = EtcdCredentials {
            ca_file: self.ca_file.map(Into::into),
            cert_file: self.cert_file.map(Into::into),
            key_file: self.key_file.map(Into::into),
            user: self.user,
            password,
            password_file: self.password_file.map(Into::into),
        };
        EtcdAccess::new(endpoints).with_credentials(&credentials)
    }
}

/// The JS callback events go to.
type Listener = ThreadsafeFunction<FollowerEvent, (), FollowerEvent, Status, false>;

/// Where a follower reads its ring from.
enum Source {
    Etcd { endpoints: Vec<String>, prefix: String, security: Option<Box<EtcdSecurity>> },
    File { path: String },
}

/// `_startFollower`'s work on the libuv pool: start the follower, which
/// blocks until the first ring.
pub struct Starting {
    source: Option<Source>,
    timeout: Duration,
    listener: Option<Arc<Listener>>,
}

impl Task for Starting {
    type Output = Follower;
    type JsValue = NativeFollower;

    fn compute(&mut self) -> Result<Follower> {
        let listener = self.listener.take().expect("started once");
        let options = FollowerOptions {
            initial_timeout: self.timeout,
            hook: Some(Box::new(move |event, _epoch| {
                listener.call(FollowerEvent::of(event), ThreadsafeFunctionCallMode::NonBlocking);
            })),
            ..FollowerOptions::default()
        };
        let started = match self.source.take().expect("started once") {
            Source::Etcd { endpoints, prefix, mut security } => {
                let seconds = security.as_mut().and_then(|s| s.report_interval.take()).unwrap_or(10.0);
                let Ok(interval) = Duration::try_from_secs_f64(seconds) else {
                    let message = format!("reportInterval {seconds} must be a number of seconds > 0");
                    return Err(Error::new(Status::GenericFailure, format!("RING_INVALID_CONFIG: {message}")));
                };
                let report = security.as_mut().and_then(|s| s.report_as.take());
                let report = report.map(|client_id| shardring_membership::ClientReport { client_id, interval });
                let hot = security.as_ref().and_then(|s| s.hot_keys).unwrap_or(false);
                let hot_keys = hot.then(shardring::HotKeysOptions::default);
                let options = FollowerOptions { report, hot_keys, ..options };
                let access = match security {
                    Some(security) => security.access(&endpoints),
                    None => Ok(EtcdAccess::new(&endpoints)),
                };
                access.and_then(|access| Follower::etcd(access, &prefix, options))
            }
            Source::File { path } => Follower::file(path, options),
        };
        started.map_err(|e| Error::new(Status::GenericFailure, describe(&e)))
    }

    fn resolve(&mut self, _env: Env, follower: Follower) -> Result<NativeFollower> {
        let epoch = follower.epoch();
        let cell = Ring::shared(Arc::clone(&epoch.ring)).cell;
        let transition = Mutex::new(Arc::clone(&epoch.transition));
        Ok(NativeFollower { follower: Mutex::new(Some(Arc::new(follower))), cell, transition })
    }
}

/// A membership error's message, prefixed with its code for `shardring.js`
/// (`RING_TIMEOUT: ...`, `RING_INVALID_CONFIG: ...`, `RING_ETCD: ...`,
/// `RING_FILE: ...` for a config file that cannot be read), and a refusal
/// with its kind (`RING_REFUSED(tls): ...`, `(authentication)`,
/// `(permission)`), which `shardring.js` puts in `error.refusal`.
fn describe(error: &MembershipError) -> String {
    if let MembershipError::Refused { refusal, .. } = error {
        return format!("RING_REFUSED({}): {error}", refusal.name());
    }
    let code = match error {
        MembershipError::Timeout { .. } => "RING_TIMEOUT",
        MembershipError::InvalidPrefix { .. }
        | MembershipError::InvalidEndpoint { .. }
        | MembershipError::Record { .. }
        | MembershipError::InvalidUser { .. }
        | MembershipError::InvalidClientReport(_)
        | MembershipError::InvalidHotKeys(_) => "RING_INVALID_CONFIG",
        MembershipError::Stopped => "RING_STOPPED",
        MembershipError::File { .. } | MembershipError::Secret(_) => "RING_FILE",
        _ => "RING_ETCD",
    };
    format!("{code}: {error}")
}

/// Starts a follower (see `Follower.etcd` and `Follower.file` in
/// `shardring.js`): `kind` `"etcd"` with `source` the endpoints
/// (comma-separated), `prefix` and `security` (or undefined), or `"file"`
/// with `source` the path.
#[napi(js_name = "_startFollower", skip_typescript)]
pub fn start_follower(
    env: Env,
    kind: Unknown<'_>,
    source: Unknown<'_>,
    prefix: Unknown<'_>,
    timeout: Unknown<'_>,
    security: Option<EtcdSecurity>,
    listener: Function<'_, FollowerEvent, ()>,
) -> Result<AsyncTask<Starting>> {
    let kind = text(&env, kind, "kind")?;
    let source_text = text(&env, source, "source")?;
    let seconds = match timeout.get_type()? {
        ValueType::Undefined => 5.0,
        _ => number(&env, timeout, "timeout")?,
    };
    let timeout = Duration::try_from_secs_f64(seconds).map_err(|_| {
        crate::errors::range_error(&env, format!("timeout must be a number of seconds >= 0, got {seconds}"))
    })?;
    let source = match kind.as_str() {
        "etcd" => Source::Etcd {
            endpoints: source_text.split(',').map(str::to_owned).collect(),
            prefix: text(&env, prefix, "prefix")?,
            security: security.map(Box::new),
        },
        "file" => Source::File { path: source_text },
        other => return Err(type_error(&env, format!("unknown follower source {other:?}"))),
    };
    let listener: Listener = listener.build_threadsafe_function().build()?;
    Ok(AsyncTask::new(Starting { source: Some(source), timeout, listener: Some(Arc::new(listener)) }))
}

/// The native half of a follower (see `Follower` in `shardring.js`).
#[napi]
pub struct NativeFollower {
    /// Shared with waits in flight, which keep it alive until they end.
    follower: Mutex<Option<Arc<Follower>>>,
    /// The cell of the follower's `Ring`, updated only on the JS thread.
    cell: RingCell,
    /// The transition of the ring in `cell`, updated with it.
    transition: Mutex<Arc<shardring::Transition>>,
}

impl NativeFollower {
    fn with<T>(&self, env: &Env, use_it: impl FnOnce(&Follower) -> T) -> Result<T> {
        Ok(use_it(self.follower_arc(env)?.as_ref()))
    }

    fn follower_arc(&self, env: &Env) -> Result<Arc<Follower>> {
        let guard = self.follower.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(follower) => Ok(Arc::clone(follower)),
            None => Err(crate::errors::pending(env.throw_error("the follower is closed", Some("RING_STOPPED")))),
        }
    }
}

#[napi]
impl NativeFollower {
    /// The follower's ring (read-only: its in-place methods throw).
    #[napi(js_name = "_ring")]
    pub fn ring(&self) -> Ring {
        Ring::followed(Arc::clone(&self.cell))
    }

    /// Moves the follower's current ring into its `Ring`; true when it changed.
    #[napi(js_name = "_sync")]
    pub fn sync(&self, env: Env) -> Result<bool> {
        let epoch = self.with(&env, Follower::epoch)?;
        *self.transition.lock().unwrap_or_else(|p| p.into_inner()) = Arc::clone(&epoch.transition);
        if Arc::ptr_eq(&self.cell.load(), &epoch.ring) {
            return Ok(false);
        }
        self.cell.store(Arc::clone(&epoch.ring));
        Ok(true)
    }

    /// The transition of the follower's `Ring` (with every member active, just the ring).
    #[napi(getter)]
    pub fn transition(&self) -> crate::transition::Transition {
        crate::transition::Transition {
            transition: Arc::clone(&self.transition.lock().unwrap_or_else(|p| p.into_inner())),
        }
    }

    /// The revision the follower holds: the etcd revision its ring was read
    /// at, or the number of successful reads of the file. It can go down
    /// when etcd is restored from an older snapshot; `epoch` does not.
    #[napi(getter)]
    pub fn revision(&self, env: Env) -> Result<f64> {
        self.with(&env, |f| f.revision() as f64)
    }

    /// The current epoch number: it only grows, across an etcd restore too;
    /// equal to `revision` while the follower has read one store from its
    /// start (`core/SPEC.md`, *Epochs*).
    #[napi(getter)]
    pub fn epoch(&self, env: Env) -> Result<f64> {
        self.with(&env, |f| f.epoch().number as f64)
    }

    /// The fingerprint of the follower's current ring.
    #[napi(getter)]
    pub fn fingerprint(&self, env: Env) -> Result<BigInt> {
        self.with(&env, |f| BigInt::from(f.epoch().fingerprint))
    }

    /// The fingerprint of the follower's current ring as text (16 lowercase
    /// hex digits, zero-padded), as `shardring watch` prints it.
    #[napi(getter)]
    pub fn fingerprint_hex(&self, env: Env) -> Result<String> {
        self.with(&env, |f| fingerprint_hex(f.epoch().fingerprint))
    }

    /// Lookups made on this follower's rings so far, per node id.
    #[napi]
    pub fn lookup_counts(&self, env: Env) -> Result<std::collections::HashMap<String, f64>> {
        self.with(&env, |f| {
            f.lookup_counts().unwrap_or_default().counts.into_iter().map(|(id, c)| (id, c as f64)).collect()
        })
    }

    /// The hot keys of this follower's lookups, most requested first;
    /// `null` unless started with `hotKeys: true`.
    #[napi]
    pub fn hot_keys(&self, env: Env) -> Result<Option<Vec<crate::sketch::HotKey>>> {
        self.with(&env, |f| {
            f.hot_keys().map(|top| {
                let row = |k: shardring::HotKey| crate::sketch::HotKey {
                    key: k.key.into(),
                    requests: k.requests as f64,
                    rate: k.rate,
                };
                top.into_iter().map(row).collect()
            })
        })
    }

    /// The fleet's hot set as last read from `<prefix>/hot`.
    #[napi]
    pub fn hot_set(&self, env: Env) -> Result<crate::hot::HotSet> {
        self.with(&env, |f| crate::hot::HotSet { set: f.hot_set() })
    }

    /// Where to read and write `key` now, by the fleet's hot set.
    #[napi(ts_args_type = "key: string | Buffer")]
    pub fn plan(&self, env: Env, key: Unknown<'_>) -> Result<crate::hot::SpreadPlan> {
        let planned = self.with(&env, |f| crate::keys::with_key(&env, key, |bytes| f.plan(bytes)))??;
        let (ring, plan) = planned.map_err(|e| crate::errors::throw(&env, e))?;
        Ok(crate::hot::SpreadPlan::of(&ring, plan))
    }

    /// The metrics report `cache` (its hits, misses, entries, capacity and
    /// hit ratio); a later call replaces it.
    #[napi]
    pub fn report_near_cache(&self, env: Env, cache: &crate::hot::NearCache) -> Result<()> {
        self.with(&env, |f| f.report_near_cache(std::sync::Arc::clone(&cache.cache)))
    }

    /// The follower's metrics as OpenMetrics text.
    #[napi]
    pub fn metrics(&self, env: Env) -> Result<String> {
        self.with(&env, |f| f.metrics())
    }

    /// `{ epoch, revision, fingerprint, fingerprintHex, connected, staleFor (seconds), lastError, epochs }`.
    #[napi]
    pub fn status(&self, env: Env) -> Result<FollowerStatus> {
        self.with(&env, |f| {
            let s = f.status();
            FollowerStatus {
                epoch: s.epoch as f64,
                revision: s.revision as f64,
                fingerprint: BigInt::from(s.fingerprint),
                fingerprint_hex: fingerprint_hex(s.fingerprint),
                connected: s.connected,
                stale_for: s.stale_for.as_secs_f64(),
                last_error: s.last_error,
                epochs: s.epochs as f64,
            }
        })
    }

    /// Waits on the libuv pool until the follower holds `revision` or later;
    /// resolves with the revision held.
    #[napi(js_name = "_wait", skip_typescript)]
    pub fn wait(&self, env: Env, revision: Unknown<'_>, timeout: Unknown<'_>) -> Result<AsyncTask<Waiting>> {
        let revision = crate::errors::whole(&env, revision, "revision", crate::errors::MAX_SAFE_INTEGER)? as i64;
        let seconds = match timeout.get_type()? {
            ValueType::Undefined => 5.0,
            ValueType::Number => number(&env, timeout, "timeout")?,
            kind => return Err(type_error(&env, format!("timeout must be a number, not {}", js_type(kind)))),
        };
        let timeout = Duration::try_from_secs_f64(seconds)
            .map_err(|_| crate::errors::range_error(&env, format!("timeout must be >= 0, got {seconds}")))?;
        Ok(AsyncTask::new(Waiting { follower: self.follower_arc(&env)?, revision, timeout }))
    }

    /// Stops the follower's thread (and its events); the ring keeps its last snapshot.
    #[napi]
    pub fn close(&self) {
        let follower = self.follower.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(follower);
    }
}

/// A follower's status.
#[napi(object)]
pub struct FollowerStatus {
    /// The current epoch number (it only grows).
    pub epoch: f64,
    /// The revision held.
    pub revision: f64,
    /// The current ring's fingerprint.
    pub fingerprint: BigInt,
    /// The current ring's fingerprint as text (16 lowercase hex digits, zero-padded).
    pub fingerprint_hex: String,
    /// Whether the source answered at the last attempt.
    pub connected: bool,
    /// Seconds out of touch with the source (0 while connected).
    pub stale_for: f64,
    /// The last error from the source since the last reconnection.
    pub last_error: Option<String>,
    /// Epochs published so far.
    pub epochs: f64,
}

/// `waitForRevision`'s work on the libuv pool.
pub struct Waiting {
    follower: Arc<Follower>,
    revision: i64,
    timeout: Duration,
}

impl Task for Waiting {
    type Output = i64;
    type JsValue = f64;

    fn compute(&mut self) -> Result<i64> {
        self.follower
            .wait_for_revision(self.revision, self.timeout)
            .map(|epoch| epoch.revision)
            .map_err(|e| Error::new(Status::GenericFailure, describe(&e)))
    }

    fn resolve(&mut self, _env: Env, revision: i64) -> Result<f64> {
        Ok(revision as f64)
    }
}
