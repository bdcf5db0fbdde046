//! A running rebalance, as others see it: its progress (keys and bytes
//! moved and failed per source and target, scans, rate, ETA), shared with
//! the metrics endpoint (`--metrics-listen`, OpenMetrics text) and, when
//! the run follows etcd, published as `P/rebalance` for the dashboard.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use shardring_membership::metrics::{EscapedLabel, Labels};

use super::report::Tally;

/// What moved between one source and one target.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub(crate) struct FlowCount {
    pub(crate) keys: u64,
    pub(crate) bytes: u64,
    pub(crate) failed: u64,
}

/// The run's progress so far.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Progress {
    /// Keys found to move, and those handled (moved, found done, or failed).
    pub(crate) to_move: u64,
    pub(crate) handled: u64,
    pub(crate) scans: usize,
    /// Keys listed on each source by the first scan.
    pub(crate) scanned: BTreeMap<String, u64>,
    /// `source -> target` moves.
    pub(crate) flows: BTreeMap<String, FlowCount>,
    pub(crate) elapsed_seconds: f64,
    pub(crate) finished: bool,
    #[serde(skip)]
    started: Instant,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress {
            to_move: 0,
            handled: 0,
            scans: 0,
            scanned: BTreeMap::new(),
            flows: BTreeMap::new(),
            elapsed_seconds: 0.0,
            finished: false,
            started: Instant::now(),
        }
    }
}

/// The progress, shared between the run and its readers.
pub(crate) type SharedProgress = Arc<Mutex<Progress>>;

/// The progress, whatever a thread that held it did.
pub(crate) fn lock(progress: &SharedProgress) -> std::sync::MutexGuard<'_, Progress> {
    progress.lock().unwrap_or_else(|p| p.into_inner())
}

impl Progress {
    /// Records one batch from `source` to `target`: the source's tally
    /// before and after it.
    pub(crate) fn batch(&mut self, source: &str, target: &str, keys: u64, before: &Tally, after: &Tally) {
        let flow = self.flows.entry(format!("{source} -> {target}")).or_default();
        flow.keys += (after.copied + after.present).saturating_sub(before.copied + before.present);
        flow.bytes += after.bytes.saturating_sub(before.bytes);
        flow.failed += after.failed.saturating_sub(before.failed);
        self.handled += keys;
        self.elapsed_seconds = self.started.elapsed().as_secs_f64();
    }

    /// Records a page of a listing of `source` (scan number `scan`):
    /// `listed` keys, `leaving` of them to move.
    pub(crate) fn listed(&mut self, source: &str, scan: usize, listed: u64, leaving: u64) {
        self.scans = self.scans.max(scan);
        if scan == 1 {
            *self.scanned.entry(source.to_owned()).or_default() += listed;
        }
        self.to_move += leaving;
        self.elapsed_seconds = self.started.elapsed().as_secs_f64();
    }

    /// Keys handled per second since the start.
    pub(crate) fn rate(&self) -> f64 {
        if self.elapsed_seconds > 0.0 { self.handled as f64 / self.elapsed_seconds } else { 0.0 }
    }

    /// Seconds left at the rate so far (None before any key was handled).
    pub(crate) fn eta_seconds(&self) -> Option<f64> {
        let rate = self.rate();
        (rate > 0.0).then(|| self.to_move.saturating_sub(self.handled) as f64 / rate)
    }
}

fn gauge(value: f64) -> Gauge<f64, AtomicU64> {
    let gauge = Gauge::<f64, AtomicU64>::default();
    gauge.set(value);
    gauge
}

/// The progress as OpenMetrics text (`shardring_rebalance_*`).
pub(crate) fn render(progress: &Progress) -> String {
    let mut registry = Registry::with_prefix("shardring_rebalance");
    let moved = Family::<Labels, Counter>::default();
    let bytes = Family::<Labels, Counter>::default();
    let failed = Family::<Labels, Counter>::default();
    for (flow, count) in &progress.flows {
        let (source, target) = flow.split_once(" -> ").unwrap_or((flow, ""));
        let labels: Labels =
            vec![("source", EscapedLabel(source.to_owned())), ("target", EscapedLabel(target.to_owned()))];
        moved.get_or_create(&labels).inc_by(count.keys);
        bytes.get_or_create(&labels).inc_by(count.bytes);
        failed.get_or_create(&labels).inc_by(count.failed);
    }
    registry.register("keys_moved", "Keys now on their new owner, per source and target", moved);
    registry.register_with_unit("moved", "Value bytes moved, per source and target", Unit::Bytes, bytes);
    registry.register("keys_failed", "Keys that could not be moved, per source and target", failed);
    let scanned = Family::<Labels, Counter>::default();
    for (source, count) in &progress.scanned {
        scanned.get_or_create(&vec![("source", EscapedLabel(source.clone()))]).inc_by(*count);
    }
    registry.register("keys_scanned", "Keys the first scan listed, per source", scanned);
    let scans = Counter::<u64>::default();
    scans.inc_by(progress.scans as u64);
    registry.register("scans", "Listings of the sources so far", scans);
    registry.register("keys_to_move", "Keys found to move so far", gauge(progress.to_move as f64));
    registry.register(
        "keys_handled",
        "Keys handled so far (moved, already done, or failed)",
        gauge(progress.handled as f64),
    );
    registry.register("rate_keys_per_second", "Keys handled per second since the start", gauge(progress.rate()));
    if let Some(eta) = progress.eta_seconds() {
        registry.register_with_unit("eta", "Time left at the rate so far", Unit::Seconds, gauge(eta));
    }
    registry.register(
        "running",
        "1 while the run moves keys, 0 once it has finished",
        gauge(f64::from(u8::from(!progress.finished))),
    );
    let mut text = String::new();
    encode(&mut text, &registry).expect("writing to a String cannot fail");
    text
}

/// Publishes a run's progress while it lives; dropped (however the run
/// ends), it publishes the finished progress once more and stops.
pub(crate) struct Publisher {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Publishes the progress as `P/rebalance` every 500 ms from a thread
/// until the [`Publisher`] is dropped, then once more (finished) under a
/// lease of 30 s, so a dashboard shows the finished run for a while. A
/// failed write is retried at the next tick: the run never waits for etcd.
pub(crate) fn publish(access: shardring_membership::EtcdAccess, prefix: String, progress: SharedProgress) -> Publisher {
    use std::sync::atomic::Ordering;
    use std::time::Duration;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        let stop = stopped;
        let mut admin = None;
        let mut lease = None;
        loop {
            let finished = stop.load(Ordering::Acquire);
            if admin.is_none() {
                admin = shardring_membership::Admin::connect(access.clone(), &prefix).ok();
            }
            if let Some(etcd) = admin.as_mut() {
                let json = {
                    let mut progress = lock(&progress);
                    progress.finished |= finished;
                    published(&progress)
                };
                let ttl = Duration::from_secs(if finished { 30 } else { 10 });
                match etcd.put_rebalance(&json, ttl, lease) {
                    Ok(granted) => lease = Some(granted),
                    Err(_) => admin = None,
                }
            }
            if finished {
                return;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    Publisher { stop, thread: Some(thread) }
}

/// The JSON of `P/rebalance`: the progress with its rate and ETA.
fn published(progress: &Progress) -> String {
    let mut value = serde_json::to_value(progress).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        object.insert("rate_keys_per_second".into(), progress.rate().into());
        object.insert("eta_seconds".into(), progress.eta_seconds().into());
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        object.insert("updated_at_ms".into(), (now as u64).into());
    }
    value.to_string()
}
