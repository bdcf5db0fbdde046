//! `shardring simulate`: the classic consistent-hashing experiments on
//! synthetic keys, ring against `hash % N`.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;

use shardring::{Algorithm, Node, Ring, RingError, hash_key};

use crate::error::CliError;
use crate::plot::{Bars, chart_error, write_chart};

/// Options of `shardring simulate`.
#[derive(clap::Args)]
pub struct Args {
    /// Nodes before the scale-out.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=10_000))]
    nodes: u32,
    /// Synthetic keys ("key:00000000", ...).
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    keys: u64,
    /// vnodes of the ring in the scale-out, failure and weight experiments.
    #[arg(long, default_value_t = 160, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    vnodes: u32,
    /// Also draw the results as an SVG chart into this file: the vnode
    /// sweep and the moved shares; with --algorithm, keys moved and balance
    /// per algorithm; with --bounded, load and failure per epsilon.
    #[arg(long)]
    plot: Option<std::path::PathBuf>,
    /// Instead of the classic experiments, compare algorithms on N -> N+1
    /// nodes: one algorithm, or "all" of them.
    #[arg(long, value_name = "NAME|all", value_parser = selection(), conflicts_with = "bounded")]
    algorithm: Option<Selection>,
    /// Instead of the classic experiments, run consistent hashing with
    /// bounded loads at these epsilons (comma-separated, each > 0) against
    /// the plain ring: uniform and skewed keys, and a node failing at 80%
    /// utilisation. --keys is the number of requests held at once.
    #[arg(long, value_name = "EPSILON[,EPSILON...]", value_delimiter = ',', value_parser = epsilon)]
    bounded: Option<Vec<f64>>,
}

fn epsilon(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|_| format!("{text:?} is not a number"))?;
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(format!("epsilon must be finite and > 0, got {text}"))
    }
}

/// The algorithms `--algorithm` names.
#[derive(Clone)]
struct Selection(Vec<Algorithm>);

/// Parses `--algorithm`: every name of [`Algorithm::ALL`], which `--help`
/// lists, or "all".
fn selection() -> impl clap::builder::TypedValueParser<Value = Selection> {
    use clap::builder::TypedValueParser;
    let names = Algorithm::ALL.iter().map(|a| a.name()).chain(["all"]);
    clap::builder::PossibleValuesParser::new(names).map(|name| match name.as_str() {
        "all" => Selection(Algorithm::ALL.to_vec()),
        _ => Selection(vec![name.parse().expect("a possible value is an algorithm name")]),
    })
}

fn ring(count: u32, vnodes: u32) -> Result<Ring, RingError> {
    Ring::builder().vnodes(vnodes).nodes((0..count).map(|i| Node::new(format!("node-{i:02}"), 1.0))).build()
}

fn progress(len: u64, message: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(len).with_message(message);
    bar.set_style(ProgressStyle::with_template("{msg:24} {wide_bar} {pos}/{len}").expect("a valid template"));
    bar
}

/// Share of the `count` keys whose owner differs between two placements
/// (each a function of the key's number).
fn moved(count: usize, before: impl Fn(usize) -> usize, after: impl Fn(usize) -> usize, bar: ProgressBar) -> f64 {
    let mut moved = 0usize;
    for i in 0..count {
        moved += usize::from(before(i) != after(i));
        if i % 65_536 == 0 {
            bar.set_position(i as u64);
        }
    }
    bar.finish_and_clear();
    moved as f64 / count as f64
}

/// Runs the experiments, writing the report to `out`.
pub fn run(args: &Args, out: &mut impl Write) -> Result<(), CliError> {
    // A chart that cannot be written fails before the experiments run, and
    // a run that fails leaves no empty chart behind.
    let Some(path) = &args.plot else { return experiments(args, out) };
    std::fs::File::create(path).map_err(|e| chart_error(path, e))?;
    let result = experiments(args, out);
    if result.is_err() {
        let _ = std::fs::remove_file(path);
    }
    result
}

/// The experiments `args` ask for, each drawing its chart when asked.
fn experiments(args: &Args, out: &mut impl Write) -> Result<(), CliError> {
    if let Some(Selection(algorithms)) = &args.algorithm {
        return compare(args, algorithms, out);
    }
    if let Some(epsilons) = &args.bounded {
        let plot = args.plot.as_deref();
        return crate::bounded::run(args.nodes, args.vnodes, args.keys as usize, epsilons, plot, out);
    }
    let (n, vnodes) = (args.nodes, args.vnodes);
    let keys: Vec<String> = (0..args.keys).map(|i| format!("key:{i:08}")).collect();
    let hashes: Vec<u64> = keys.iter().map(|k| hash_key(k.as_bytes(), 0)).collect();
    let (count, total) = (keys.len(), keys.len() as u64);
    writeln!(out, "{n} nodes, {count} keys, vnodes {vnodes}")?;

    let base = ring(n, vnodes)?;
    let grown = base.with_node(Node::new(format!("node-{n:02}"), 1.0))?;
    let shrunk = base.without_node(&format!("node-{:02}", n - 1))?;
    let owner = |ring: &Ring, i: usize| ring.index_by_hash(hashes[i]).unwrap_or(usize::MAX);
    let modulo = |nodes: u32, i: usize| (hashes[i] % u64::from(nodes)) as usize;
    let pct = |share: f64| 100.0 * share;

    writeln!(
        out,
        "\nscale-out {n} -> {} (theory: ring {:.2}%, modulo {:.2}%)",
        n + 1,
        100.0 / f64::from(n + 1),
        100.0 * f64::from(n) / f64::from(n + 1)
    )?;
    let ring_out = moved(count, |i| owner(&base, i), |i| owner(&grown, i), progress(total, "ring scale-out"));
    let mod_out = moved(count, |i| modulo(n, i), |i| modulo(n + 1, i), progress(total, "modulo scale-out"));
    writeln!(out, "  ring:     {:6.2}% moved (exact {:.2}%)", pct(ring_out), pct(base.diff(&grown)?.moved_share))?;
    writeln!(out, "  hash % N: {:6.2}% moved", pct(mod_out))?;
    writeln!(
        out,
        "scale-in {n} -> {} (theory: ring {:.2}%, modulo {:.2}%)",
        n - 1,
        100.0 / f64::from(n),
        100.0 * f64::from(n - 1) / f64::from(n)
    )?;
    let ring_in = moved(count, |i| owner(&base, i), |i| owner(&shrunk, i), progress(total, "ring scale-in"));
    let mod_in = moved(count, |i| modulo(n, i), |i| modulo(n - 1, i), progress(total, "modulo scale-in"));
    writeln!(out, "  ring:     {:6.2}% moved (exact {:.2}%)", pct(ring_in), pct(base.diff(&shrunk)?.moved_share))?;
    writeln!(out, "  hash % N: {:6.2}% moved", pct(mod_in))?;

    writeln!(out, "\nbalance of {n} equal nodes by vnodes (keys per node against the mean)")?;
    writeln!(out, "  {:>6}  {:>8}  {:>8}  {:>6}", "vnodes", "max/mean", "min/mean", "CV")?;
    let mut sweep_points = Vec::new();
    for sweep in [1, 10, 100, 160, 1000] {
        let bar = progress(total, "vnode sweep");
        let balance = ring(n, sweep)?.balance(&keys)?;
        bar.finish_and_clear();
        let s = balance.by_node;
        writeln!(out, "  {sweep:>6}  {:>8.3}  {:>8.3}  {:>6.3}", s.max_over_mean, s.min_over_mean, s.cv)?;
        sweep_points.push((sweep, s));
    }

    let counts = base.balance(&keys)?.counts;
    let busiest = (0..counts.len()).max_by_key(|&i| counts[i]).unwrap_or(0);
    let id = base.nodes()[busiest].id().to_owned();
    let failed = base.diff(&base.without_node(&id)?)?;
    writeln!(
        out,
        "\nfailure of the most loaded node ({id}, {} keys): its {:.2}% spreads over {} of {} nodes, the largest taker gets {:.2}%",
        counts[busiest],
        100.0 * failed.moved_share,
        failed.flows.len(),
        n - 1,
        100.0 * failed.flows.first().map_or(0.0, |f| f.share)
    )?;

    let weighted = Ring::builder().vnodes(vnodes).node("a", 1.0).node("b", 2.0).node("c", 1.0).build()?;
    writeln!(out, "\nweights 1:2:1 (ideal 25% / 50% / 25%)")?;
    for (node, share) in weighted.ownership() {
        writeln!(out, "  {} weight {}: {:.2}% of the hash space", node.id(), node.weight(), 100.0 * share)?;
    }
    if let Some(path) = &args.plot {
        let moved = Bars {
            caption: "share of keys moved by one node more or less".to_owned(),
            value_axis: "% of keys moved".to_owned(),
            category_axis: "cluster change".to_owned(),
            categories: vec![format!("scale-out {n} → {}", n + 1), format!("scale-in {n} → {}", n - 1)],
            series: vec![
                ("shardring ring".to_owned(), vec![pct(ring_out), pct(ring_in)]),
                ("hash % N".to_owned(), vec![pct(mod_out), pct(mod_in)]),
            ],
            marks: Some((
                "ring in theory: 1/(N+1), 1/N".to_owned(),
                vec![Some(100.0 / f64::from(n + 1)), Some(100.0 / f64::from(n))],
            )),
            reference: None,
            format: |v| format!("{v:.2}%"),
        };
        let title = format!("shardring simulate: {n} nodes, {count} keys, {vnodes} vnodes");
        write_chart(path, out, || crate::plot::simulation(path, &title, n, &sweep_points, &moved))?;
    }
    Ok(())
}

/// Each algorithm on N -> N+1 equal nodes: what moves, balance, and costs;
/// and what moves when a node in the middle of the list leaves instead
/// (jump and jumpback renumber the nodes after it; memento moves its keys only).
fn compare(args: &Args, algorithms: &[Algorithm], out: &mut impl Write) -> Result<(), CliError> {
    let n = args.nodes;
    let keys: Vec<String> = (0..args.keys).map(|i| format!("key:{i:08}")).collect();
    let total = keys.len() as u64;
    // Server-style ids, which every algorithm accepts (ketama parses them).
    let id = |i: u32| format!("10.0.{}.{}:11211", i / 250, i % 250 + 1);
    writeln!(out, "{n} -> {} equal nodes, {} keys (ideal move {:.2}%)", n + 1, keys.len(), 100.0 / f64::from(n + 1))?;
    // The name column fits the longest name compared.
    let width = algorithms.iter().map(|a| a.name().len()).max().unwrap_or(0).max("algorithm".len());
    writeln!(
        out,
        "{:<width$} {:>7} {:>7} {:>8} {:>9} {:>6} {:>10} {:>10} {:>10}",
        "algorithm", "moved", "to new", "mid out", "max/mean", "CV", "build", "lookup", "memory"
    )?;
    // Per algorithm: moved %, moved to the new node %, max/mean and CV of the balance.
    let mut rows = Vec::new();
    for &algorithm in algorithms {
        let vnodes = (algorithm == Algorithm::Ring).then_some(args.vnodes);
        let build = || {
            let mut builder = Ring::builder().algorithm(algorithm).nodes((0..n).map(|i| Node::new(id(i), 1.0)));
            if let Some(v) = vnodes {
                builder = builder.vnodes(v);
            }
            builder.build()
        };
        let started = std::time::Instant::now();
        let base = build()?;
        let build_time = started.elapsed();
        let grown = base.with_node(Node::new(id(n), 1.0))?;
        let bar = progress(total, algorithm.name());
        let mut before = vec![0usize; keys.len()];
        let started = std::time::Instant::now();
        base.get_indices(&keys, &mut before)?;
        let lookup = started.elapsed().as_secs_f64() * 1e9 / keys.len() as f64;
        let mut after = vec![0usize; keys.len()];
        grown.get_indices(&keys, &mut after)?;
        bar.finish_and_clear();
        let moved = before.iter().zip(&after).filter(|(b, a)| grown.nodes()[**a].id() != base.nodes()[**b].id());
        let (moved, to_new) = moved.fold((0u64, 0u64), |(m, t), (_, &a)| (m + 1, t + u64::from(a == n as usize)));
        // The middle node leaves instead (with one node, it is that one, and nothing can move).
        let middle = base.nodes()[(n / 2) as usize].id();
        let mid_out = match base.without_node(middle) {
            Ok(shrunk) if shrunk.live_node_count() > 0 => {
                let mut left = vec![0usize; keys.len()];
                shrunk.get_indices(&keys, &mut left)?;
                let changed =
                    before.iter().zip(&left).filter(|(b, l)| shrunk.nodes()[**l].id() != base.nodes()[**b].id());
                100.0 * changed.count() as f64 / total as f64
            }
            _ => f64::NAN,
        };
        let balance = base.balance(&keys)?.by_node;
        let (moved, to_new) = (100.0 * moved as f64 / total as f64, 100.0 * to_new as f64 / total as f64);
        rows.push((algorithm.name(), moved, to_new, balance.max_over_mean, balance.cv));
        writeln!(
            out,
            "{:<width$} {:>6.2}% {:>6.2}% {:>7.2}% {:>9.3} {:>6.3} {:>8.2}ms {:>7.1} ns {:>7.1} KiB",
            algorithm.name(),
            moved,
            to_new,
            mid_out,
            balance.max_over_mean,
            balance.cv,
            build_time.as_secs_f64() * 1e3,
            lookup,
            base.placement_bytes() as f64 / 1024.0
        )?;
    }
    writeln!(
        out,
        "mid out: keys moved when node {} of {n} leaves instead (ideal 1/N = {:.2}%); lookup: batch placement of every key (hash included); memory: the placement structure",
        n / 2,
        100.0 / f64::from(n)
    )?;
    if let Some(path) = &args.plot {
        let categories: Vec<String> = rows.iter().map(|r| r.0.to_owned()).collect();
        let ideal = 100.0 / f64::from(n + 1);
        let moved = Bars {
            caption: format!("keys moved from {n} to {} nodes", n + 1),
            value_axis: "% of keys".to_owned(),
            category_axis: "algorithm".to_owned(),
            categories: categories.clone(),
            series: vec![
                ("moved".to_owned(), rows.iter().map(|r| r.1).collect()),
                ("moved to the new node".to_owned(), rows.iter().map(|r| r.2).collect()),
            ],
            marks: None,
            reference: Some((format!("ideal: 1/(N+1) = {ideal:.2}%"), ideal)),
            format: |v| format!("{v:.2}%"),
        };
        let balance = Bars {
            caption: format!("balance of keys over {n} equal nodes"),
            value_axis: "% of the mean keys per node".to_owned(),
            category_axis: "algorithm".to_owned(),
            categories,
            series: vec![
                (
                    "busiest node above the mean (max/mean - 1)".to_owned(),
                    rows.iter().map(|r| 100.0 * (r.3 - 1.0)).collect(),
                ),
                ("coefficient of variation".to_owned(), rows.iter().map(|r| 100.0 * r.4).collect()),
            ],
            marks: None,
            reference: None,
            format: |v| format!("{v:.1}%"),
        };
        let title = format!("shardring simulate --algorithm: {n} → {} equal nodes, {} keys", n + 1, keys.len());
        write_chart(path, out, || crate::plot::bar_pair(path, &title, &moved, &balance))?;
    }
    Ok(())
}
