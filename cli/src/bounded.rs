//! `shardring simulate --bounded EPSILON[,EPSILON...]`: consistent hashing
//! with bounded loads against the plain ring, under uniform and skewed
//! request keys, and when a node fails at 80% utilisation.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use shardring::{LoadTracker, Node, Ring};

use crate::error::CliError;
use crate::plot::{Bars, write_chart};

/// Distinct keys the skewed workloads draw from.
const KEY_SPACE: usize = 100_000;

/// Request keys of one workload, as indices into the key space (uniform:
/// every request its own key).
fn workloads(requests: usize) -> Vec<(&'static str, Vec<usize>)> {
    let mut rng = StdRng::seed_from_u64(2017);
    let zipf = Zipf::new(KEY_SPACE as f64, 1.1).expect("valid Zipf parameters");
    let zipf_keys = (0..requests).map(|_| zipf.sample(&mut rng) as usize - 1).collect();
    let hot = KEY_SPACE / 10;
    let hot_keys = (0..requests)
        .map(|_| if rng.random::<f64>() < 0.8 { rng.random_range(0..hot) } else { rng.random_range(hot..KEY_SPACE) })
        .collect();
    vec![
        ("uniform (every request a new key)", (0..requests).collect()),
        ("Zipf s = 1.1 over 100,000 keys", zipf_keys),
        ("80% of requests on 10% of keys", hot_keys),
    ]
}

fn key(i: usize) -> String {
    format!("key:{i:08}")
}

/// Max load over mean load of the nodes that can own keys.
fn max_over_mean(loads: &[u64], live: usize) -> f64 {
    let total: u64 = loads.iter().sum();
    *loads.iter().max().unwrap_or(&0) as f64 / (total as f64 / live as f64)
}

/// Per workload, one value per placement (the plain ring, then each epsilon).
type ByPlacement = Vec<Vec<f64>>;

/// Runs the bounded-loads experiments for each epsilon, and charts them
/// into `plot`.
pub fn run(
    nodes: u32,
    vnodes: u32,
    requests: usize,
    epsilons: &[f64],
    plot: Option<&Path>,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let ring = Arc::new(
        Ring::builder().vnodes(vnodes).nodes((0..nodes).map(|i| Node::new(format!("node-{i:02}"), 1.0))).build()?,
    );
    let n = ring.nodes().len();
    writeln!(out, "{nodes} nodes x {vnodes} vnodes, {requests} requests held at once")?;
    writeln!(
        out,
        "{:<36} {:>10} {:>10} {:>11} {:>10}",
        "keys / placement", "max/mean", "bound", "mean probes", "max probes"
    )?;
    let workloads = workloads(requests);
    let mut max_over_means: ByPlacement = Vec::new();
    let bounds: Vec<f64> = epsilons
        .iter()
        .map(|epsilon| ((1.0 + epsilon) * requests as f64 / n as f64).ceil() / (requests as f64 / n as f64))
        .collect();
    for (name, keys) in &workloads {
        let keys: Vec<String> = keys.iter().map(|&k| key(k)).collect();
        let mut loads = vec![0u64; n];
        for k in &keys {
            loads[ring.get_index(k)?] += 1;
        }
        writeln!(out, "{name}")?;
        let mut row = vec![max_over_mean(&loads, n)];
        writeln!(out, "  {:<34} {:>10.3} {:>10} {:>11.2} {:>10}", "plain ring", row[0], "-", 1.0, 1)?;
        for (&epsilon, &bound) in epsilons.iter().zip(&bounds) {
            let tracker = LoadTracker::new(ring.clone(), epsilon)?;
            let (mut probes, mut max_probes) = (0u64, 0u32);
            for k in &keys {
                // Requests stay in flight: each keeps its load.
                let lease = tracker.acquire(k)?.detach();
                probes += u64::from(lease.probes);
                max_probes = max_probes.max(lease.probes);
            }
            row.push(max_over_mean(&tracker.loads(), n));
            writeln!(
                out,
                "  {:<34} {:>10.3} {:>10.3} {:>11.3} {:>10}",
                format!("bounded, epsilon {epsilon}"),
                row[row.len() - 1],
                bound,
                probes as f64 / requests as f64,
                max_probes
            )?;
        }
        max_over_means.push(row);
    }
    let survivors = cascade(&ring, &workloads, epsilons, out)?;
    if let Some(path) = plot {
        let names: Vec<String> = workloads.iter().map(|(name, _)| (*name).to_owned()).collect();
        let mut placements = vec!["plain ring".to_owned()];
        placements.extend(epsilons.iter().map(|e| format!("ε = {e}")));
        let series = |values: ByPlacement| names.iter().cloned().zip(values).collect();
        let load = Bars {
            caption: "busiest node against the mean".to_owned(),
            value_axis: "max/mean load (requests held per node)".to_owned(),
            category_axis: "placement".to_owned(),
            categories: placements.clone(),
            series: series(max_over_means),
            marks: Some((
                "bound: ceil((1 + ε) × mean) / mean".to_owned(),
                std::iter::once(None).chain(bounds.iter().copied().map(Some)).collect(),
            )),
            reference: None,
            format: |v| format!("{v:.3}"),
        };
        let failure = Bars {
            caption: "the busiest node fails at 80% utilisation".to_owned(),
            value_axis: "busiest survivor, % of its capacity".to_owned(),
            category_axis: "placement".to_owned(),
            categories: placements,
            series: series(survivors),
            marks: None,
            reference: Some(("a server's capacity".to_owned(), 100.0)),
            format: |v| format!("{v:.1}%"),
        };
        let title = format!("shardring simulate --bounded: {nodes} nodes × {vnodes} vnodes, {requests} requests");
        write_chart(path, out, || crate::plot::bar_pair(path, &title, &load, &failure))?;
    }
    Ok(())
}

/// A node fails while the cluster runs at 80% of its capacity: where do its
/// requests go, and does any survivor go over its own capacity? Returns the
/// busiest survivor's load in % of its capacity, per workload and placement.
fn cascade(
    ring: &Arc<Ring>,
    workloads: &[(&'static str, Vec<usize>)],
    epsilons: &[f64],
    out: &mut impl Write,
) -> Result<ByPlacement, CliError> {
    let mut survivors_by_workload = Vec::new();
    let n = ring.nodes().len();
    writeln!(out, "\nfailure of one node at 80% utilisation (server capacity = requests / (0.8 x nodes))")?;
    writeln!(
        out,
        "{:<36} {:>16} {:>18} {:>14}",
        "keys / placement", "busiest before", "busiest survivor", "over capacity"
    )?;
    for (name, keys) in workloads {
        let keys: Vec<String> = keys.iter().map(|&k| key(k)).collect();
        let capacity = keys.len() as f64 / (0.8 * n as f64);
        let mut loads = vec![0u64; n];
        for k in &keys {
            loads[ring.get_index(k)?] += 1;
        }
        // The failing node: the busiest one under the plain ring.
        let failed = (0..n).max_by_key(|&i| loads[i]).unwrap_or(0);
        let failed_id = ring.nodes()[failed].id().to_owned();
        let survivors = Arc::new(ring.without_node(&failed_id)?);
        writeln!(out, "{name} (fails {failed_id})")?;
        let report = |out: &mut dyn Write, label: &str, before: &[u64], after: &[u64]| -> std::io::Result<()> {
            let busiest_before = *before.iter().max().unwrap_or(&0) as f64 / capacity;
            let busiest_after = *after.iter().max().unwrap_or(&0) as f64 / capacity;
            let over = after.iter().filter(|&&l| l as f64 > capacity).count();
            writeln!(
                out,
                "  {label:<34} {:>15.1}% {:>17.1}% {:>9} of {}",
                100.0 * busiest_before,
                100.0 * busiest_after,
                over,
                after.len()
            )
        };
        let mut after = vec![0u64; n - 1];
        for k in &keys {
            after[survivors.get_index(k)?] += 1;
        }
        let busiest = |after: &[u64]| 100.0 * *after.iter().max().unwrap_or(&0) as f64 / capacity;
        let mut row = vec![busiest(&after)];
        report(out, "plain ring", &loads, &after)?;
        for &epsilon in epsilons {
            let tracker = LoadTracker::new(ring.clone(), epsilon)?;
            let placed: Vec<usize> =
                keys.iter().map(|k| tracker.acquire(k).map(|l| l.detach().index)).collect::<Result<_, _>>()?;
            let before = tracker.loads();
            tracker.swap(survivors.clone());
            // The failed node's requests come back and are placed again.
            for (k, &node) in keys.iter().zip(&placed) {
                if node == failed {
                    tracker.acquire(k)?.detach();
                }
            }
            let after = tracker.loads();
            row.push(busiest(&after));
            report(out, &format!("bounded, epsilon {epsilon}"), &before, &after)?;
        }
        survivors_by_workload.push(row);
    }
    Ok(survivors_by_workload)
}
