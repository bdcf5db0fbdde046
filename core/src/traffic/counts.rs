//! Lookup counts per node: how many keys a client placed on each node.
//!
//! A [`LookupCounter`] hands out count tables to the rings it should count
//! ([`LookupCounter::count`], [`LookupCounter::count_transition`]); each
//! lookup on such a ring adds one to the owner's cell. A table has one row
//! per thread (up to [`STRIPES`] threads at a time), written only by its
//! thread with a plain load and store (no locked instruction, so no cache
//! line bounces between threads); threads beyond that share one row with
//! atomic adds. [`LookupCounter::snapshot`] sums the rows, and folds the
//! tables no ring uses any more into per-id totals, so counts survive ring
//! changes (a follower's epochs, a binding's in-place updates).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Threads that count with plain stores, each in a row of its own; the
/// others share one row with atomic adds.
pub const STRIPES: usize = 64;

const UNASSIGNED: usize = usize::MAX;

thread_local! {
    /// This thread's row, [`UNASSIGNED`] before its first count.
    static STRIPE: Cell<usize> = const { Cell::new(UNASSIGNED) };
    /// Gives the row back when the thread ends.
    static HOLD: Cell<Option<StripeHold>> = const { Cell::new(None) };
}

/// Which rows a live thread holds, one bit each: no allocation, so
/// nothing is left for a memory checker when the program ends.
static HELD: AtomicU64 = AtomicU64::new(0);

const _: () = assert!(STRIPES == 64, "HELD has one bit per row");

struct StripeHold(usize);

impl Drop for StripeHold {
    fn drop(&mut self) {
        // A count made by a later destructor of this thread goes to the shared row.
        let _ = STRIPE.try_with(|s| s.set(STRIPES));
        HELD.fetch_and(!(1u64 << self.0), Ordering::AcqRel);
    }
}

#[cold]
fn assign_stripe() -> usize {
    let mut held = HELD.load(Ordering::Acquire);
    let stripe = loop {
        if held == u64::MAX {
            break STRIPES;
        }
        let free = held.trailing_ones() as usize;
        match HELD.compare_exchange_weak(held, held | (1 << free), Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => break free,
            Err(now) => held = now,
        }
    };
    if stripe < STRIPES && HOLD.try_with(|h| h.set(Some(StripeHold(stripe)))).is_err() {
        // The thread is ending: give the row back at once and share.
        HELD.fetch_and(!(1u64 << stripe), Ordering::AcqRel);
        return STRIPES;
    }
    let _ = STRIPE.try_with(|s| s.set(stripe));
    stripe
}

#[inline(always)]
fn stripe() -> usize {
    match STRIPE.try_with(Cell::get) {
        Ok(UNASSIGNED) => assign_stripe(),
        Ok(stripe) => stripe,
        Err(_) => STRIPES,
    }
}

/// One set of node ids and their counts, by thread row.
#[derive(Debug)]
pub(crate) struct CountTable {
    ids: Vec<String>,
    rows: Box<[OnceLock<Box<[AtomicU64]>>]>,
}

impl CountTable {
    fn new(ids: Vec<String>) -> CountTable {
        CountTable { ids, rows: (0..=STRIPES).map(|_| OnceLock::new()).collect() }
    }

    #[inline(always)]
    fn row(&self, stripe: usize) -> &[AtomicU64] {
        self.rows[stripe].get_or_init(|| (0..self.ids.len()).map(|_| AtomicU64::new(0)).collect())
    }

    #[inline(always)]
    fn add(row: &[AtomicU64], stripe: usize, cell: usize) {
        let cell = &row[cell];
        if stripe < STRIPES {
            // Only this thread writes this row: a plain increment is exact.
            cell.store(cell.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
        } else {
            cell.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn sums(&self) -> impl Iterator<Item = (&str, u64)> {
        (0..self.ids.len()).map(|i| {
            let sum = self.rows.iter().filter_map(OnceLock::get).map(|row| row[i].load(Ordering::Relaxed)).sum();
            (self.ids[i].as_str(), sum)
        })
    }
}

/// What a counting ring carries: the table and, per node of the ring, its
/// cell in the table.
#[derive(Debug, Clone)]
pub(crate) struct RingCounts {
    table: Arc<CountTable>,
    cell_of: Arc<[u32]>,
}

impl RingCounts {
    /// Counts into `table`, node `i` of the ring into cell `cell_of[i]`.
    pub(crate) fn new(table: Arc<CountTable>, cell_of: Arc<[u32]>) -> RingCounts {
        RingCounts { table, cell_of }
    }

    /// Counts one lookup that chose node `index` of the ring.
    #[inline(always)]
    pub(crate) fn add(&self, index: usize) {
        let stripe = stripe();
        CountTable::add(self.table.row(stripe), stripe, self.cell_of[index] as usize);
    }

    /// Counts one lookup for each index.
    pub(crate) fn add_all(&self, indices: &[usize]) {
        let stripe = stripe();
        let row = self.table.row(stripe);
        for &index in indices {
            CountTable::add(row, stripe, self.cell_of[index] as usize);
        }
    }
}

/// Lookups per node id, summed over every ring a [`LookupCounter`] counted.
/// `counts` is sorted by id; `total` is their sum.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LookupCounts {
    /// `(node id, lookups that chose it)`, sorted by id. A node appears
    /// once any counted ring held it, with 0 when no lookup chose it.
    pub counts: Vec<(String, u64)>,
    /// Every lookup counted.
    pub total: u64,
}

impl LookupCounts {
    /// The lookups that chose node `id` (0 for an id never seen).
    pub fn get(&self, id: &str) -> u64 {
        self.counts.binary_search_by(|(n, _)| n.as_str().cmp(id)).map_or(0, |i| self.counts[i].1)
    }
}

#[derive(Debug, Default)]
struct CounterState {
    /// Counts of tables no ring holds any more, for ids a live table holds.
    folded: BTreeMap<String, u64>,
    /// Tables rings may still count into.
    live: Vec<Arc<CountTable>>,
}

impl CounterState {
    /// Moves the counts of the tables no ring holds into `folded`, then
    /// drops the ids no live table holds.
    fn fold(&mut self) {
        let CounterState { folded, live } = self;
        live.retain(|table| {
            if Arc::strong_count(table) > 1 {
                return true;
            }
            // The last ring dropped its table on another thread: see its counts.
            std::sync::atomic::fence(Ordering::Acquire);
            for (id, count) in table.sums() {
                *folded.entry(id.to_owned()).or_default() += count;
            }
            false
        });
        let held: std::collections::BTreeSet<&str> =
            live.iter().flat_map(|table| table.ids.iter().map(String::as_str)).collect();
        folded.retain(|id, _| held.contains(id.as_str()));
    }
}

/// Counts lookups per node over the rings it is given, across ring changes.
///
/// Every lookup on a ring returned by [`LookupCounter::count`] (or on the
/// rings of a transition from [`LookupCounter::count_transition`]) adds one
/// to the node it chose: [`Ring::get`] and its variants, each key of a
/// batch ([`Ring::get_indices`], [`Ring::get_indices_by_hash`]), the first
/// node of a preference list ([`Ring::get_n`]), and for a transition the
/// owner under the active members ([`Transition::read_nodes`],
/// [`Transition::write_nodes`]) or the old owner ([`Transition::route`]).
/// Rings derived from a counting ring (`with_node`, ...) do not count until
/// given to the counter. Cost: about 1.7 ns per lookup (`make bench`,
/// *counting*); a ring that does not count pays one predictable branch.
/// `Clone` shares the counts; `Send + Sync`.
///
/// [`Ring::get`]: crate::Ring::get
/// [`Ring::get_indices`]: crate::Ring::get_indices
/// [`Ring::get_indices_by_hash`]: crate::Ring::get_indices_by_hash
/// [`Ring::get_n`]: crate::Ring::get_n
/// [`Transition::read_nodes`]: crate::Transition::read_nodes
/// [`Transition::write_nodes`]: crate::Transition::write_nodes
/// [`Transition::route`]: crate::Transition::route
#[derive(Debug, Clone, Default)]
pub struct LookupCounter {
    state: Arc<Mutex<CounterState>>,
}

impl LookupCounter {
    /// A counter with no counts.
    pub fn new() -> LookupCounter {
        LookupCounter::default()
    }

    /// A new table of `ids`, for rings to count into. Folds the tables no
    /// ring uses any more first, so a counter that nobody reads keeps only
    /// the tables of the rings in use.
    pub(crate) fn table(&self, ids: Vec<String>) -> Arc<CountTable> {
        let table = Arc::new(CountTable::new(ids));
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.fold();
        state.live.push(Arc::clone(&table));
        table
    }

    /// How many count tables rings may still count into (for tests of
    /// memory use; each holds one row per counting thread).
    pub fn live_tables(&self) -> usize {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).live.len()
    }

    /// The lookups counted so far, per node id: those of every node a ring
    /// in use holds (a node that no ring holds any more is dropped, so ids
    /// stay bounded by the rings in use; one that comes back starts at 0).
    pub fn snapshot(&self) -> LookupCounts {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.fold();
        let mut sums = state.folded.clone();
        for table in &state.live {
            for (id, count) in table.sums() {
                *sums.entry(id.to_owned()).or_default() += count;
            }
        }
        let total = sums.values().sum();
        LookupCounts { counts: sums.into_iter().collect(), total }
    }
}
