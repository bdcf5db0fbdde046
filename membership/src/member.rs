//! The node side: [`Member`], an agent that registers one member under a
//! lease and keeps the lease alive, and [`Admin`], the one-shot operations
//! (list, leave, set a weight, write the ring parameters).
//!
//! A member's record lives exactly as long as its lease: when the agent
//! stops it revokes the lease and the member leaves at once; when the
//! process dies the lease expires after its TTL and the member drops out of
//! every follower's ring. An agent cut off from etcd for longer than its TTL
//! registers again once etcd answers; an agent whose lease is revoked while
//! it is connected (`Admin::leave`) has been removed and stops.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use etcd_client::{Client, Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp};
use tokio::sync::watch;

use crate::access::EtcdAccess;
use crate::error::MembershipError;
use crate::etcd::{REQUEST_TIMEOUT, connect};
use crate::records::{Layout, MemberRecord, ParamsRecord};

/// The state of a member agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberState {
    /// Registered under this lease, kept alive.
    Registered {
        /// The etcd lease id.
        lease: i64,
    },
    /// Cut off from etcd; the record may have expired. Re-registers when etcd answers.
    Disconnected {
        /// What failed.
        message: String,
    },
    /// Its lease was revoked by someone else while connected: removed from the ring.
    Removed,
    /// Stopped by [`Member::leave`] (the lease is revoked).
    Left,
}

/// A member agent: registers `P/members/<id>` under a lease with TTL `ttl`
/// and keeps the lease alive from a background thread (a keep-alive every
/// `ttl / 3`).
pub struct Member {
    id: String,
    state: Arc<Mutex<MemberState>>,
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member").field("id", &self.id).field("state", &self.state()).finish()
    }
}

/// Runs `future` on a fresh current-thread runtime.
fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime builds")
        .block_on(future)
}

/// The cluster an agent or admin talks to: its endpoints (as the client
/// takes them) and how it proves who it is.
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) endpoints: Vec<String>,
    pub(crate) access: EtcdAccess,
}

impl Target {
    /// A membership error naming the endpoints, `message` explained for
    /// this access ([`EtcdAccess::explain`]): [`MembershipError::Refused`]
    /// for a refusal, else [`MembershipError::Etcd`].
    fn error(&self, message: String) -> MembershipError {
        MembershipError::etcd(&self.endpoints, self.access.explain(message))
    }
}

pub(crate) async fn timed<T>(
    target: &Target,
    future: impl std::future::Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, MembershipError> {
    match tokio::time::timeout(REQUEST_TIMEOUT, future).await {
        Ok(result) => result.map_err(|error| target.error(crate::etcd::describe(&error))),
        Err(_) => Err(target.error(format!("no answer within {REQUEST_TIMEOUT:?}"))),
    }
}

/// Grants a lease of `ttl` and writes the record under it, unless a move
/// holds `P/move` ([`MembershipError::MoveInProgress`]).
async fn register(
    client: &mut Client,
    endpoints: &Target,
    layout: &Layout,
    key: &str,
    record: &MemberRecord,
    ttl: Duration,
) -> Result<i64, MembershipError> {
    let seconds = ttl.as_secs().max(1) as i64;
    let lease = timed(endpoints, client.lease_grant(seconds, None)).await?.id();
    let put = TxnOp::put(key, record.to_json(), Some(PutOptions::new().with_lease(lease)));
    let move_key = layout.move_key();
    let txn = Txn::new().when([no_move(&move_key)]).and_then([put]).or_else([TxnOp::get(move_key, None)]);
    let response = timed(endpoints, client.txn(txn)).await?;
    if !response.succeeded() {
        let _ = timed(endpoints, client.lease_revoke(lease)).await;
        let revision = held_since(&response).unwrap_or(0);
        return Err(MembershipError::MoveInProgress { prefix: layout.prefix().to_owned(), revision });
    }
    Ok(lease)
}

/// The compare that holds when no move is under way: `P/move`
/// ([`crate::MoveLock`]) absent.
pub(crate) fn no_move(move_key: &str) -> Compare {
    Compare::create_revision(move_key, CompareOp::Equal, 0)
}

/// The create revision of the key (`P/move`, or the mover's `P/mover`)
/// read by a failed transaction's `or_else` get: `Some` when it existed.
pub(crate) fn held_since(response: &etcd_client::TxnResponse) -> Option<i64> {
    response.op_responses().into_iter().find_map(|op| match op {
        etcd_client::TxnOpResponse::Get(get) => get.kvs().first().map(|kv| kv.create_revision()),
        _ => None,
    })
}

impl Member {
    /// Registers member `id` with `record` under a lease of `ttl` (at least
    /// 1 s, whole seconds) and starts keeping it alive. Returns once the
    /// record is written.
    ///
    /// Errors: [`MembershipError::InvalidPrefix`],
    /// [`MembershipError::InvalidEndpoint`], [`MembershipError::Record`] for
    /// an empty id or an invalid record, [`MembershipError::Etcd`] when etcd
    /// does not answer, [`MembershipError::Refused`] when it refuses the
    /// client (TLS, a wrong user or password, a permission denied),
    /// [`MembershipError::MoveInProgress`] while a rebalancer moves keys (an
    /// agent that registers again after its record expired retries then).
    pub fn join(
        access: impl Into<EtcdAccess>,
        prefix: &str,
        id: &str,
        record: MemberRecord,
        ttl: Duration,
    ) -> Result<Member, MembershipError> {
        let access = access.into();
        let layout = Layout::new(prefix)?;
        let target = Target { endpoints: access.urls()?, access };
        check_member(&layout, id, &record)?;
        let key = layout.member_key(id);
        let (lease, client) = block_on(async {
            let mut client = connect(&target.endpoints, &target.access).await.map_err(|e| target.error(e))?;
            let lease = register(&mut client, &target, &layout, &key, &record, ttl).await?;
            Ok::<_, MembershipError>((lease, client))
        })?;
        drop(client);
        let state = Arc::new(Mutex::new(MemberState::Registered { lease }));
        let (stop, stop_receiver) = watch::channel(false);
        let agent = Agent { target, layout, key, record, ttl, state: Arc::clone(&state), lease };
        let thread = std::thread::Builder::new()
            .name("shardring-member".into())
            .spawn(move || block_on(agent.run(stop_receiver)))
            .map_err(|e| MembershipError::File { path: "<thread>".into(), message: e.to_string() })?;
        Ok(Member { id: id.to_owned(), state, stop, thread: Some(thread) })
    }

    /// The member id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The agent's current state.
    pub fn state(&self) -> MemberState {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Stops keeping the lease alive and revokes it: the member leaves every
    /// follower's ring at once. A member already removed just stops.
    pub fn leave(mut self) {
        self.stop_agent();
    }

    fn stop_agent(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.stop_agent();
    }
}

/// Checks an id and record before writing them.
fn check_member(layout: &Layout, id: &str, record: &MemberRecord) -> Result<(), MembershipError> {
    let key = layout.member_key(id);
    if id.is_empty() || id.contains('/') {
        let error = shardring::RingError::InvalidConfig {
            message: format!("member id {id:?} must be non-empty and hold no '/'"),
        };
        return Err(MembershipError::Record { key, error });
    }
    shardring::Ring::builder()
        .nodes([shardring::Node::new(id, record.weight)])
        .build()
        .map(drop)
        .map_err(|error| MembershipError::Record { key, error })
}

/// The agent's thread: keep-alives, re-registration, revocation on stop.
struct Agent {
    target: Target,
    layout: Layout,
    key: String,
    record: MemberRecord,
    ttl: Duration,
    state: Arc<Mutex<MemberState>>,
    lease: i64,
}

impl Agent {
    fn set(&self, state: MemberState) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = state;
    }

    async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let interval = (self.ttl / 3).max(Duration::from_millis(300));
        let mut backoff = Duration::from_millis(100);
        // When the lease was last confirmed alive: a revocation seen within
        // the TTL of it was done by someone else while connected.
        let mut confirmed = Instant::now();
        loop {
            let outcome = self.keep_alive(&mut stop, interval, &mut confirmed).await;
            match outcome {
                Outcome::Stop => {
                    // Leave at once: revoke the lease (best effort; else it expires).
                    let _ = tokio::time::timeout(REQUEST_TIMEOUT, async {
                        if let Ok(mut client) = connect(&self.target.endpoints, &self.target.access).await {
                            let _ = client.lease_revoke(self.lease).await;
                        }
                    })
                    .await;
                    self.set(MemberState::Left);
                    return;
                }
                Outcome::Removed => {
                    self.set(MemberState::Removed);
                    return;
                }
                Outcome::Failed(message) => {
                    self.set(MemberState::Disconnected { message });
                    tokio::select! {
                        _ = stop.changed() => {
                            // Stopping while disconnected: the lease expires on its own.
                            self.set(MemberState::Left);
                            return;
                        }
                        () = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// One connection: checks the lease (re-registering if it expired),
    /// then sends keep-alives until stopped or failed.
    async fn keep_alive(
        &mut self,
        stop: &mut watch::Receiver<bool>,
        interval: Duration,
        confirmed: &mut Instant,
    ) -> Outcome {
        let mut client = match connect(&self.target.endpoints, &self.target.access).await {
            Ok(client) => client,
            Err(message) => return Outcome::Failed(self.target.access.explain(message)),
        };
        let alive = match timed(&self.target, client.lease_time_to_live(self.lease, None)).await {
            Ok(response) => response.ttl() > 0,
            Err(error) => return Outcome::Failed(error.to_string()),
        };
        if !alive {
            if confirmed.elapsed() < self.ttl {
                return Outcome::Removed;
            }
            // Cut off longer than the TTL: the record expired; register again.
            match register(&mut client, &self.target, &self.layout, &self.key, &self.record, self.ttl).await {
                Ok(lease) => self.lease = lease,
                Err(error) => return Outcome::Failed(error.to_string()),
            }
        }
        *confirmed = Instant::now();
        self.set(MemberState::Registered { lease: self.lease });
        let (mut keeper, mut responses) = match timed(&self.target, client.lease_keep_alive(self.lease)).await {
            Ok(pair) => pair,
            Err(error) => return Outcome::Failed(error.to_string()),
        };
        let mut tick = tokio::time::interval(interval);
        loop {
            tokio::select! {
                _ = stop.changed() => return Outcome::Stop,
                _ = tick.tick() => {
                    if let Err(error) = keeper.keep_alive().await {
                        return Outcome::Failed(crate::etcd::describe(&error));
                    }
                }
                response = responses.message() => match response {
                    Ok(Some(response)) if response.ttl() > 0 => *confirmed = Instant::now(),
                    // TTL 0: the lease is gone although we kept it alive: revoked.
                    Ok(Some(_)) => return Outcome::Removed,
                    Ok(None) => return Outcome::Failed("etcd closed the keep-alive stream".into()),
                    Err(error) => return Outcome::Failed(crate::etcd::describe(&error)),
                },
            }
        }
    }
}

enum Outcome {
    Stop,
    Removed,
    Failed(String),
}

/// One member as [`Admin::members`] lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberEntry {
    /// The member id.
    pub id: String,
    /// Its record, or why it does not parse.
    pub record: Result<MemberRecord, String>,
    /// The lease it is bound to (0 for a member written without one).
    pub lease: i64,
    /// The etcd revision of its last change.
    pub mod_revision: i64,
}

/// One-shot operations on a ring in etcd: each call connects, acts, and
/// returns (blocking), for the CLI and for tools.
pub struct Admin {
    pub(crate) target: Target,
    pub(crate) layout: Layout,
    pub(crate) runtime: tokio::runtime::Runtime,
    pub(crate) client: Client,
}

impl std::fmt::Debug for Admin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin").field("access", &self.target.access).field("prefix", &self.layout.prefix()).finish()
    }
}

impl Admin {
    /// Connects to etcd for the ring under `prefix`.
    ///
    /// Errors: [`MembershipError::InvalidPrefix`],
    /// [`MembershipError::InvalidEndpoint`], [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    pub fn connect(access: impl Into<EtcdAccess>, prefix: &str) -> Result<Admin, MembershipError> {
        let access = access.into();
        let layout = Layout::new(prefix)?;
        let target = Target { endpoints: access.urls()?, access };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| target.error(e.to_string()))?;
        let client = runtime.block_on(connect(&target.endpoints, &target.access)).map_err(|e| target.error(e))?;
        Ok(Admin { target, layout, runtime, client })
    }

    /// The layout of the ring's keys.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Writes the ring parameters at `P/config` and returns the revision.
    /// Errors: [`MembershipError::Record`] when the parameters cannot build
    /// a ring or name an algorithm a fleet cannot follow in etcd
    /// ([`ParamsRecord::check`]), [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    pub fn set_config(&mut self, params: &ParamsRecord) -> Result<i64, MembershipError> {
        let key = self.layout.config_key();
        let probe = params.to_config(Vec::new());
        params
            .check()
            .and_then(|()| probe.build())
            .map_err(|error| MembershipError::Record { key: key.clone(), error })?;
        self.write(Vec::new(), vec![TxnOp::put(key, params.to_json(), None)]).map(|r| r.unwrap_or(0))
    }

    /// The members under the prefix, in id order.
    pub fn members(&mut self) -> Result<Vec<MemberEntry>, MembershipError> {
        let prefix = self.layout.members_prefix();
        let (endpoints, client) = (&self.target, &mut self.client);
        let response = self
            .runtime
            .block_on(timed(endpoints, client.get(prefix.clone(), Some(GetOptions::new().with_prefix()))))?;
        Ok(response
            .kvs()
            .iter()
            .map(|kv| MemberEntry {
                id: String::from_utf8_lossy(&kv.key()[prefix.len()..]).into_owned(),
                record: MemberRecord::from_stored(kv.value()),
                lease: kv.lease(),
                mod_revision: kv.mod_revision(),
            })
            .collect())
    }

    /// Writes member `id` without a lease (a static member, which stays
    /// until removed) and returns the revision.
    /// Errors: [`MembershipError::Record`], [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    pub fn put_member(&mut self, id: &str, record: &MemberRecord) -> Result<i64, MembershipError> {
        check_member(&self.layout, id, record)?;
        let key = self.layout.member_key(id);
        self.write(Vec::new(), vec![TxnOp::put(key, record.to_json(), None)]).map(|r| r.unwrap_or(0))
    }

    /// Writes many members without leases in one transaction (one revision,
    /// so followers see them as one change); at most 128 per call, etcd's
    /// default limit of operations per transaction. Returns the revision.
    /// Errors: [`MembershipError::Record`] naming the first invalid member,
    /// [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    pub fn put_members(&mut self, members: &[(&str, MemberRecord)]) -> Result<i64, MembershipError> {
        let mut operations = Vec::with_capacity(members.len());
        for (id, record) in members {
            check_member(&self.layout, id, record)?;
            operations.push(TxnOp::put(self.layout.member_key(id), record.to_json(), None));
        }
        self.write(Vec::new(), operations).map(|r| r.unwrap_or(0))
    }

    /// Removes member `id`: deletes its record and revokes its lease (a
    /// running agent then stops, as removed). Returns the revision.
    /// Errors: [`MembershipError::UnknownMember`], [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    pub fn leave(&mut self, id: &str) -> Result<i64, MembershipError> {
        let entry = self.member(id)?;
        let key = self.layout.member_key(id);
        let revision = self.write(Vec::new(), vec![TxnOp::delete(key, None)])?.unwrap_or(0);
        if entry.lease != 0 {
            let (endpoints, client) = (&self.target, &mut self.client);
            let _ = self.runtime.block_on(timed(endpoints, client.lease_revoke(entry.lease)));
        }
        Ok(revision)
    }

    /// Sets member `id`'s weight, keeping its lease, zone and state; the
    /// write fails with [`MembershipError::Conflict`] if the record changed
    /// since it was read. Returns the revision.
    /// Errors: [`MembershipError::UnknownMember`],
    /// [`MembershipError::Record`] (an invalid weight or record),
    /// [`MembershipError::Conflict`], [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    pub fn set_weight(&mut self, id: &str, weight: f64) -> Result<i64, MembershipError> {
        self.update(id, |record| record.weight = weight)
    }

    /// Sets member `id`'s state (`warming` while a rebalancer copies its
    /// keys to it, `active`, `draining` while its keys are copied away),
    /// keeping its lease, weight and zone, as [`Admin::set_weight`] does.
    /// Errors as [`Admin::set_weight`].
    pub fn set_state(&mut self, id: &str, state: shardring::NodeState) -> Result<i64, MembershipError> {
        self.update(id, |record| record.state = state)
    }

    /// Rewrites member `id`'s record changed by `change`, under its lease, if
    /// it did not change meanwhile.
    fn update(&mut self, id: &str, change: impl FnOnce(&mut MemberRecord)) -> Result<i64, MembershipError> {
        let entry = self.member(id)?;
        let key = self.layout.member_key(id);
        let mut record = entry.record.map_err(|message| MembershipError::Record {
            key: key.clone(),
            error: shardring::RingError::InvalidConfig { message },
        })?;
        change(&mut record);
        check_member(&self.layout, id, &record)?;
        let put = PutOptions::new().with_lease(entry.lease);
        let when = vec![Compare::mod_revision(key.clone(), CompareOp::Equal, entry.mod_revision)];
        self.write(when, vec![TxnOp::put(key, record.to_json(), Some(put))])?
            .ok_or_else(|| MembershipError::Conflict { id: id.to_owned() })
    }

    /// Runs `operations` in one transaction when `when` holds and no move
    /// holds `P/move`; returns the revision, or `None` when `when` failed.
    /// Errors: [`MembershipError::MoveInProgress`], [`MembershipError::Etcd`],
    /// [`MembershipError::Refused`].
    fn write(&mut self, mut when: Vec<Compare>, operations: Vec<TxnOp>) -> Result<Option<i64>, MembershipError> {
        let move_key = self.layout.move_key();
        when.push(no_move(&move_key));
        let txn = Txn::new().when(when).and_then(operations).or_else([TxnOp::get(move_key, None)]);
        let (endpoints, client) = (&self.target, &mut self.client);
        let response = self.runtime.block_on(timed(endpoints, client.txn(txn)))?;
        if response.succeeded() {
            return Ok(Some(response.header().map_or(0, |h| h.revision())));
        }
        match held_since(&response) {
            Some(since) => Err(self.move_in_progress(since)),
            None => Ok(None),
        }
    }

    fn member(&mut self, id: &str) -> Result<MemberEntry, MembershipError> {
        self.members()?.into_iter().find(|m| m.id == id).ok_or_else(|| MembershipError::UnknownMember {
            id: id.to_owned(),
            prefix: self.layout.prefix().to_owned(),
        })
    }
}
