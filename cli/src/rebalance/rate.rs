//! `--rate`: the limit of keys per second, as given and checked, and the
//! pacer that keeps a run under it.

use std::time::{Duration, Instant};

/// `--rate`: keys per second, from [`Rate::MIN`] to [`Rate::MAX`], so
/// that the pause between keys is a [`Duration`] (and `BATCH` of them too).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rate(f64);

/// Why a `--rate` is refused: it names the value as given.
#[derive(Debug, PartialEq, thiserror::Error)]
pub(crate) enum RateError {
    #[error("{0:?} is not a number of keys per second")]
    NotANumber(String),
    #[error("{0} is not a number of keys per second from 0.001 to 1e9 (leave --rate out for no limit)")]
    OutOfRange(String),
}

impl Rate {
    /// One key every 1,000 seconds.
    pub(crate) const MIN: f64 = 1e-3;
    /// One key a nanosecond: beyond it the pause rounds to nothing.
    pub(crate) const MAX: f64 = 1e9;

    /// `text` as keys per second: a number (not NaN or infinite) from
    /// [`Rate::MIN`] to [`Rate::MAX`].
    pub(crate) fn parse(text: &str) -> Result<Rate, RateError> {
        let keys_per_second: f64 = text.trim().parse().map_err(|_| RateError::NotANumber(text.to_owned()))?;
        if (Rate::MIN..=Rate::MAX).contains(&keys_per_second) {
            Ok(Rate(keys_per_second))
        } else {
            Err(RateError::OutOfRange(text.to_owned()))
        }
    }

    /// This rate shared by `ways` runners running at once: each gets an
    /// equal part (below [`Rate::MIN`] if it must; the pause stays finite).
    pub(crate) fn share(self, ways: usize) -> Rate {
        Rate(self.0 / ways.max(1) as f64)
    }

    /// The pause between two keys.
    pub(super) fn interval(self) -> Duration {
        Duration::from_secs_f64(1.0 / self.0)
    }
}

/// A paced batch's share of the rate: at 10,000 keys/s, batches of 30
/// keys. Batches of 256 kept a source busy for bursts of about 0.5 ms, in
/// which a reader's p99 fell once the rate kept the source busy for over 1%
/// of the time (Redis, 100-byte values, `py/bench/rebalance_latency.py`).
const PACED_BATCH_TIME: Duration = Duration::from_millis(3);

/// Spaces calls at most `rate` per second.
pub(super) struct Pacer {
    interval: Option<Duration>,
    next: Instant,
}

impl Pacer {
    pub(super) fn new(rate: Option<Rate>) -> Pacer {
        Pacer { interval: rate.map(Rate::interval), next: Instant::now() }
    }

    /// The most keys one batch may hold: under a rate, the keys of
    /// [`PACED_BATCH_TIME`] at that rate (at least one), so that the load
    /// comes in short bursts a server's other clients barely wait behind;
    /// unlimited, `usize::MAX`.
    pub(super) fn batch_limit(&self) -> usize {
        match self.interval {
            Some(interval) => (PACED_BATCH_TIME.as_secs_f64() / interval.as_secs_f64()).max(1.0) as usize,
            None => usize::MAX,
        }
    }

    /// Waits until `keys` more keys may go.
    pub(super) fn wait(&mut self, keys: usize) {
        let Some(interval) = self.interval else { return };
        let now = Instant::now();
        if self.next > now {
            std::thread::sleep(self.next - now);
        }
        self.next = self.next.max(now) + interval * keys as u32;
    }
}
