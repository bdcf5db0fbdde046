//! Text and JSON renderings of ring statistics and diffs.

use std::io::{self, Write};

use serde::Serialize;
use shardring::{Balance, Ring, RingDiff};

const BAR_WIDTH: f64 = 40.0;

/// The widest a name column grows, in characters. Longer ids are printed
/// whole and push only their own row to the right; without a cap one long id
/// would pad every row to its length (and a format width of 65,536 or more
/// panics in `std::fmt`).
const MAX_COLUMN: usize = 64;

/// Width of a column holding these texts: the longest, in characters (what
/// `{:<width$}` pads by), at least `min` and at most [`MAX_COLUMN`].
fn column<'a>(texts: impl Iterator<Item = &'a str>, min: usize) -> usize {
    texts.map(|t| t.chars().count()).max().unwrap_or(0).clamp(min, MAX_COLUMN)
}

/// `count` and its noun, singular for 1: `1 node`, `3 nodes`.
pub(crate) fn counted(count: impl TryInto<u64>, noun: &str) -> String {
    let count: u64 = count.try_into().unwrap_or(u64::MAX);
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

/// A bar of `value / max` of the full width, in eighth-blocks.
pub fn bar(value: f64, max: f64) -> String {
    const PARTS: [char; 8] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];
    if max <= 0.0 || value <= 0.0 {
        return String::new();
    }
    let eighths = (value / max * BAR_WIDTH * 8.0).round() as usize;
    let mut text = "█".repeat(eighths / 8);
    if let Some(part) = (eighths % 8).checked_sub(1) {
        text.push(PARTS[part]);
    }
    text
}

/// Per-node exact shares and, with a sample, counts and spread.
pub fn stats(out: &mut impl Write, ring: &Ring, sample: Option<&Balance>) -> io::Result<()> {
    let shares = ring.ownership();
    // A server marked down (nginx) has its weight but no fair share.
    let down = ring.down_nodes();
    let counted_weight = |node: &shardring::Node| if down.contains(&node.id()) { 0.0 } else { node.weight() };
    let total_weight: f64 = ring.nodes().iter().map(counted_weight).sum();
    let max = shares.iter().map(|(_, s)| *s).fold(0.0, f64::max);
    let width = column(ring.nodes().iter().map(|n| n.id()), "node".len());
    let parameters = match (ring.vnodes(), ring.table_size()) {
        (Some(vnodes), _) => format!("{} points, vnodes {vnodes}", ring.point_count()),
        (None, Some(size)) => format!("algorithm {}, table size {size}", ring.algorithm()),
        (None, None) if ring.distribution().is_some() => format!(
            "algorithm {}, distribution {}, key hash {}, {} points",
            ring.algorithm(),
            ring.distribution().expect("checked"),
            ring.named_key_hash().expect("libmemcached names its key hash"),
            ring.point_count()
        ),
        (None, None) if ring.point_count() > 0 => {
            format!("algorithm {}, {} points", ring.algorithm(), ring.point_count())
        }
        (None, None) => format!("algorithm {}", ring.algorithm()),
    };
    writeln!(
        out,
        "{}, {parameters}, seed {}, fingerprint {:016x}",
        counted(ring.nodes().len(), "node"),
        ring.seed(),
        ring.fingerprint()
    )?;
    write!(out, "{:<width$}  {:>7}  {:>8}  {:>8}", "node", "weight", "fair", "owns")?;
    if sample.is_some() {
        write!(out, "  {:>9}  {:>8}", "keys", "of keys")?;
    }
    writeln!(out)?;
    for (i, (node, share)) in shares.iter().enumerate() {
        let fair = if total_weight > 0.0 { counted_weight(node) / total_weight } else { 0.0 };
        write!(out, "{:<width$}  {:>7}  {:>7.3}%  {:>7.3}%", node.id(), node.weight(), 100.0 * fair, 100.0 * share)?;
        if let Some(balance) = sample {
            let count = balance.counts[i];
            write!(out, "  {:>9}  {:>7.3}%", count, 100.0 * count as f64 / balance.keys.max(1) as f64)?;
        }
        writeln!(out, "  {}", bar(*share, max))?;
    }
    if let Some(balance) = sample {
        writeln!(out, "{}", counted(balance.keys, "key"))?;
        for (name, spread) in [("per node", &balance.by_node), ("against weight", &balance.by_weight)] {
            writeln!(
                out,
                "{name:>15}: CV {:.4}, max/mean {:.4}, min/mean {:.4}",
                spread.cv, spread.max_over_mean, spread.min_over_mean
            )?;
        }
    }
    Ok(())
}

/// The moved share, the from -> to matrix and a summary of the arcs.
pub fn diff(out: &mut impl Write, diff: &RingDiff) -> io::Result<()> {
    writeln!(out, "moved: {:.4}% of keys, in {} arcs", 100.0 * diff.moved_share, diff.arcs.len())?;
    let pairs: Vec<String> = diff.flows.iter().map(|f| format!("{} -> {}", f.from, f.to)).collect();
    let width = column(pairs.iter().map(String::as_str), 0);
    for (flow, pair) in diff.flows.iter().zip(&pairs) {
        writeln!(out, "  {pair:<width$}  {:>8.4}%", 100.0 * flow.share)?;
    }
    for arc in diff.arcs.iter().take(10) {
        writeln!(out, "  arc [{:016x}, {:016x}]  {} -> {}", arc.start, arc.end, arc.from, arc.to)?;
    }
    if diff.arcs.len() > 10 {
        writeln!(out, "  ... {} more arcs (--json lists them all)", diff.arcs.len() - 10)?;
    }
    Ok(())
}

/// `shardring diff --json`: positions as decimal strings, since JSON numbers
/// above 2^53 lose precision in many readers.
#[derive(Serialize)]
pub struct DiffJson {
    moved_share: f64,
    flows: Vec<FlowJson>,
    arcs: Vec<ArcJson>,
}

#[derive(Serialize)]
struct FlowJson {
    from: String,
    to: String,
    share: f64,
}

#[derive(Serialize)]
struct ArcJson {
    start: String,
    end: String,
    from: String,
    to: String,
}

impl From<&RingDiff> for DiffJson {
    fn from(diff: &RingDiff) -> DiffJson {
        DiffJson {
            moved_share: diff.moved_share,
            flows: diff
                .flows
                .iter()
                .map(|f| FlowJson { from: f.from.clone(), to: f.to.clone(), share: f.share })
                .collect(),
            arcs: diff
                .arcs
                .iter()
                .map(|a| ArcJson {
                    start: a.start.to_string(),
                    end: a.end.to_string(),
                    from: a.from.clone(),
                    to: a.to.clone(),
                })
                .collect(),
        }
    }
}
