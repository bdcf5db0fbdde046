//! What removing nodes costs, beside the lookup times of `peers.rs`: memory
//! per bucket (heap bytes, counted by this binary's allocator) of memento,
//! the `anchorhash` crate, our `ring` and the stateless jumps, at 1,000
//! buckets after 0%, 10% and 50% random removals (and memento at
//! 1,000,000); and the share of keys each removal moves against the ideal
//! (the removed node's share, 1/w of w working nodes) for memento,
//! anchorhash, ring, and jump (which can only renumber); and how memento's
//! lookup slows as removed buckets come to outnumber working ones.
//!
//! `cargo bench -p shardring-bench --bench removals` prints the tables;
//! under `cargo test` (the smoke run of `make test`) it runs a small version.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use shardring::{Algorithm, Node, Ring};

/// The system allocator, counting the bytes held.
struct Counting;

static HELD: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counter only records sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HELD.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc`, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract for `dealloc`, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        HELD.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract for `realloc`, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Heap bytes `make` leaves held, and what it made.
fn measured<T>(make: impl FnOnce() -> T) -> (T, usize) {
    let before = HELD.load(Ordering::Relaxed);
    let made = make();
    (made, (HELD.load(Ordering::Relaxed) - before).max(0) as usize)
}

fn ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("node-{i}")).collect()
}

fn ring(algorithm: Algorithm, ids: &[String]) -> Ring {
    Ring::builder().algorithm(algorithm).nodes(ids.iter().map(|id| Node::new(id, 1.0))).build().unwrap()
}

/// A ring and its placement's heap bytes: the core's own count
/// ([`Ring::placement_bytes`], from capacities), checked against what this
/// binary's allocator saw the build hold (which also holds the node list).
fn placement_bytes(make: impl FnOnce() -> Ring) -> (Ring, usize) {
    let (ring, held) = measured(make);
    assert!(ring.placement_bytes() <= held, "placement_bytes counts more than was allocated");
    let bytes = ring.placement_bytes();
    (ring, bytes)
}

fn memory(n: usize, big: usize) {
    println!(
        "\nMemory per bucket: heap bytes of the placement (shardring: Ring::placement_bytes; anchorhash: \
         counted by the allocator, its bucket -> resource map included) over the {n} buckets:"
    );
    println!("| removed | memento | anchorhash | ring (160 vnodes) | jump, jumpback |");
    println!("|---:|---:|---:|---:|---:|");
    let names = ids(n);
    let order = shardring_bench::removal_order(n, 0x5eed);
    for percent in [0usize, 10, 50] {
        let gone = &order[..n * percent / 100];
        let (_memento, memento) = placement_bytes(|| {
            gone.iter().fold(ring(Algorithm::Memento, &names), |r, &i| r.without_node(&names[i]).unwrap())
        });
        let (_anchor, anchor) = measured(|| {
            let mut anchor = shardring_bench::anchor::<&[u8]>(n);
            gone.iter().for_each(|i| anchor.remove_resource(i).unwrap());
            anchor
        });
        let survivors: Vec<String> = (0..n).filter(|i| !gone.contains(i)).map(|i| names[i].clone()).collect();
        let (_ring, vnodes) = placement_bytes(|| ring(Algorithm::Ring, &survivors));
        let (_jump, jump) = placement_bytes(|| ring(Algorithm::Jumpback, &survivors));
        let per = |bytes: usize| bytes as f64 / n as f64;
        println!("| {percent}% | {:.1} | {:.1} | {:.1} | {:.1} |", per(memento), per(anchor), per(vnodes), per(jump));
    }
    let names = ids(big);
    let order = shardring_bench::removal_order(big, 0x5eed);
    let mut cells = Vec::new();
    for percent in [0usize, 10, 50] {
        let gone = &order[..big * percent / 100];
        let mut left = vec![true; big];
        gone.iter().for_each(|&i| left[i] = false);
        let (_memento, bytes) = placement_bytes(|| {
            // Derived one removal at a time is O(buckets) each; the same
            // history through the builder is one pass.
            let removed = gone.iter().map(|&i| i as u32);
            let survivors = (0..big).filter(|&i| left[i]).map(|i| Node::new(&names[i], 1.0));
            let mut builder = Ring::builder().algorithm(Algorithm::Memento).nodes(survivors).removed_buckets(removed);
            for i in (0..big).filter(|&i| left[i]) {
                builder = builder.bucket(&names[i], i as u32);
            }
            builder.build().unwrap()
        });
        cells.push(format!("{percent}% removed: {:.2}", bytes as f64 / big as f64));
    }
    println!("memento at {big} buckets: {} bytes per bucket", cells.join(", "));
}

/// Per removal: the share of keys that changed owner, over the ideal share
/// (1/w before the removal), and the share that moved though its owner stayed.
struct Moves {
    ratios: Vec<f64>,
    collateral: f64,
}

impl Moves {
    fn row(&self, name: &str) {
        let mut sorted = self.ratios.clone();
        sorted.sort_by(f64::total_cmp);
        let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2}% |",
            mean,
            at(0.0),
            at(0.5),
            at(1.0),
            100.0 * self.collateral
        );
    }
}

/// Removes `steps` nodes in `order` from `start`, one at a time, by
/// `remove`, placing `keys` with `place` before and after each.
fn moves<S>(
    start: S,
    order: &[usize],
    steps: usize,
    keys: &[String],
    place: impl Fn(&S, &str) -> usize,
    remove: impl Fn(&S, usize) -> S,
) -> Moves {
    let n = order.len();
    let mut state = start;
    let mut owners: Vec<usize> = keys.iter().map(|k| place(&state, k)).collect();
    let (mut ratios, mut collateral) = (Vec::new(), 0.0);
    for (step, &gone) in order[..steps].iter().enumerate() {
        let next = remove(&state, gone);
        let now: Vec<usize> = keys.iter().map(|k| place(&next, k)).collect();
        let moved = owners.iter().zip(&now).filter(|(a, b)| a != b).count();
        let stray = owners.iter().zip(&now).filter(|(a, b)| a != b && **a != gone).count();
        let ideal = 1.0 / (n - step) as f64;
        ratios.push(moved as f64 / keys.len() as f64 / ideal);
        collateral += stray as f64 / keys.len() as f64 / steps as f64;
        (state, owners) = (next, now);
    }
    Moves { ratios, collateral }
}

fn movement(n: usize, steps: usize, key_count: usize) {
    println!(
        "\nShare of keys moved by each of {steps} random removals from {n} nodes, over the ideal (the removed \
         node's 1/w), on {key_count} keys (1.000 is ideal; the sampling error of one removal is about \
         {:.0}%); stray: keys moved though their owner stayed, per removal:",
        100.0 / ((key_count / n) as f64).sqrt()
    );
    println!("| algorithm | mean | min | median | max | stray |");
    println!("|---|---:|---:|---:|---:|---:|");
    let names = ids(n);
    let keys: Vec<String> = (0..key_count).map(|i| format!("key:{i:08}")).collect();
    let order = shardring_bench::removal_order(n, 0x5eed);
    // The owner as its number in `names`, which stays put as nodes leave.
    let by_id =
        |ring: &Ring, k: &str| -> usize { ring.get(k).unwrap().id().strip_prefix("node-").unwrap().parse().unwrap() };
    let removing = |ring: &Ring, i: usize| ring.without_node(&names[i]).unwrap();
    moves(ring(Algorithm::Memento, &names), &order, steps, &keys, by_id, removing).row("memento");
    // Owned keys here, where only placement counts (peers.rs times it on borrowed ones).
    type Anchor = anchorhash::AnchorHash<String, usize, xxhash_rust::xxh3::Xxh3DefaultBuilder>;
    let anchor: Anchor = shardring_bench::anchor(n);
    let place_anchor = |a: &Anchor, k: &str| *a.get_resource(k.to_owned()).unwrap();
    let remove_anchor = |a: &Anchor, i: usize| {
        let mut next = a.clone();
        next.remove_resource(&i).unwrap();
        next
    };
    moves(anchor, &order, steps, &keys, place_anchor, remove_anchor).row("anchorhash");
    moves(ring(Algorithm::Ring, &names), &order, steps, &keys, by_id, removing).row("ring (160 vnodes)");
    moves(ring(Algorithm::Jump, &names), &order, steps, &keys, by_id, removing).row("jump (renumbers)");
}

/// Memento's lookup time when most buckets are removed: `size` buckets of
/// which the given shares were removed in random order, each ring built
/// through the builder, timed as the best of 5 passes over `key_count` keys.
fn heavy_removals(sizes: &[usize], key_count: usize) {
    println!(
        "\nMemento lookup as removals outnumber working buckets (random removal order; ns per get_index, \
         best of 5 passes over {key_count} keys; removing the last bucket shrinks the array instead):"
    );
    println!("| buckets | 50% removed | 90% removed | 99% removed | 99.9% removed |");
    println!("|---:|---:|---:|---:|---:|");
    let keys: Vec<String> = (0..key_count).map(|i| format!("key:{i:08}")).collect();
    for &size in sizes {
        let order = shardring_bench::removal_order(size, 0x5eed);
        let mut cells = Vec::new();
        for permille in [500usize, 900, 990, 999] {
            let gone = &order[..size * permille / 1000];
            let mut left = vec![true; size];
            gone.iter().for_each(|&i| left[i] = false);
            let working: Vec<usize> = (0..size).filter(|&i| left[i]).collect();
            let mut builder = Ring::builder()
                .algorithm(Algorithm::Memento)
                .nodes(working.iter().map(|i| Node::new(format!("node-{i}"), 1.0)))
                .removed_buckets(gone.iter().map(|&i| i as u32));
            for &i in &working {
                builder = builder.bucket(format!("node-{i}"), i as u32);
            }
            let ring = builder.build().unwrap();
            let mut best = f64::INFINITY;
            for _ in 0..5 {
                let start = std::time::Instant::now();
                let sum: usize = keys.iter().map(|k| ring.get_index(k).unwrap()).sum();
                std::hint::black_box(sum);
                best = best.min(start.elapsed().as_nanos() as f64 / key_count as f64);
            }
            cells.push(if best < 1000.0 { format!("{best:.0} ns") } else { format!("{:.1} µs", best / 1000.0) });
        }
        println!("| {size} | {} |", cells.join(" | "));
    }
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` runs a small version.
    if std::env::args().any(|a| a == "--bench") {
        memory(1_000, 1_000_000);
        movement(1_000, 500, 200_000);
        heavy_removals(&[10_000, 1_000_000], 20_000);
    } else {
        memory(100, 10_000);
        movement(100, 10, 5_000);
        heavy_removals(&[10_000], 200);
    }
}
