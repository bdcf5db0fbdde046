//! How cost grows: for every algorithm, at 10 to 100,000 nodes, the time of
//! one lookup (key hash included, 20,000 streamed 30-byte keys), of a
//! build, of a derivation (a node added; a node removed), and the heap bytes
//! of the placement per node; and how long a follower's records take to
//! turn one membership change into the next ring, at 10 to 100,000
//! members. Prints the tables and draws them as SVG line charts (log-log)
//! in `docs/` (`make bench`); under `cargo test` (the smoke run of `make
//! test`) it measures a few small sizes and draws into the target directory.

use std::path::{Path, PathBuf};
use std::time::Instant;

use plotters::prelude::*;
use shardring::{Algorithm, Node, Ring, RingBuilder};
use shardring_bench::keys;
use shardring_membership::{Change, Layout, Records};

/// One measured algorithm at one size (`None` where it does not build there).
struct Point {
    nodes: usize,
    lookup_ns: Option<f64>,
    build_ms: Option<f64>,
    add_ms: Option<f64>,
    remove_ms: Option<f64>,
    bytes_per_node: Option<f64>,
}

/// Server-style ids every algorithm accepts (the ketama modes parse them).
fn id(i: usize) -> String {
    format!("10.{}.{}.{}:11211", i >> 16, (i >> 8) & 255, i & 255)
}

/// The smallest prime at least `n`.
fn prime_at_least(mut n: u32) -> u32 {
    let prime = |n: u32| n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d));
    while !prime(n) {
        n += 1;
    }
    n
}

/// The builder of `algorithm` over `n` nodes, with a Maglev table of at
/// least 10 slots per node.
fn builder(algorithm: Algorithm, n: usize) -> RingBuilder {
    let mut builder = Ring::builder().algorithm(algorithm).nodes((0..n).map(|i| Node::new(id(i), 1.0)));
    if matches!(algorithm, Algorithm::Maglev | Algorithm::EnvoyMaglev) {
        builder = builder.table_size(prime_at_least((n as u32 * 10).max(65_537)));
    }
    builder
}

/// Median of `passes` timings of `work`, in nanoseconds.
fn median_ns(passes: usize, mut work: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..passes)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed().as_nanos() as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[passes / 2]
}

fn measure(algorithm: Algorithm, n: usize, keys: &[[u8; 30]], passes: usize) -> Point {
    let mut point =
        Point { nodes: n, lookup_ns: None, build_ms: None, add_ms: None, remove_ms: None, bytes_per_node: None };
    let Ok(ring) = builder(algorithm, n).build() else { return point };
    point.build_ms = Some(median_ns(passes.min(3), || drop(builder(algorithm, n).build())) / 1e6);
    point.bytes_per_node = Some(ring.placement_bytes() as f64 / n as f64);
    // Slow lookups (rendezvous at 100,000 nodes) get fewer keys.
    let mut sink = 0usize;
    let probe = Instant::now();
    for key in keys.iter().take(100) {
        sink += ring.get_index(key).unwrap_or(0);
    }
    let per_key = probe.elapsed().as_nanos() as f64 / 100.0;
    let count = ((2e7 / per_key.max(1.0)) as usize).clamp(100, keys.len());
    let lookups = median_ns(passes, || {
        for key in &keys[..count] {
            sink += ring.get_index(key).unwrap_or(0);
        }
    });
    point.lookup_ns = Some(lookups / count as f64);
    point.add_ms = ring
        .with_node(Node::new(id(n), 1.0))
        .ok()
        .map(|_| median_ns(passes.min(3), || drop(ring.with_node(Node::new(id(n), 1.0)))) / 1e6);
    let middle = id(n / 2);
    point.remove_ms =
        ring.without_node(&middle).ok().map(|_| median_ns(passes.min(3), || drop(ring.without_node(&middle))) / 1e6);
    std::hint::black_box(sink);
    point
}

/// Milliseconds for the records of `members` members to take one member's
/// join into the next ring (`Records::advance`, what a follower does per
/// watch batch before it swaps the ring in): derived from the previous ring
/// where the algorithm allows, rebuilt otherwise.
fn swap_ms(algorithm: Algorithm, members: usize, passes: usize) -> Option<f64> {
    let layout = Layout::new("/bench").ok()?;
    let mut records = Records::new(layout);
    let config = format!(r#"{{"format_version": 1, "algorithm": "{}"}}"#, algorithm.name());
    records.apply(Change::Config(Some(config)));
    for i in 0..members {
        records.apply(Change::Member(id(i), Some("{}".to_owned())));
    }
    let previous = records.rebuild().ok()?;
    let times = median_ns(passes.min(5), || {
        let mut copy = records.clone();
        let (next, _) = copy.advance(Some(&previous), vec![Change::Member(id(members), Some("{}".to_owned()))]);
        assert!(next.is_ok());
    });
    Some(times / 1e6)
}

/// The series of a chart: a name and its (node count, value) points.
type Series = (String, Vec<(f64, f64)>);

/// One chart: its file name, title, y-axis caption and panels (each a
/// caption and its series).
type Chart<'a> = (&'a str, String, &'a str, Vec<(&'a str, Vec<Series>)>);

/// shardring's own algorithms; the rest place keys as their peers do.
const OWN: [Algorithm; 7] = [
    Algorithm::Ring,
    Algorithm::Jump,
    Algorithm::Jumpback,
    Algorithm::Memento,
    Algorithm::Rendezvous,
    Algorithm::Maglev,
    Algorithm::Slots,
];

/// The Okabe-Ito palette, black, then grey; series past these reuse them
/// with another marker.
const COLORS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(0, 0, 0),
    RGBColor(153, 153, 153),
];

/// An SVG of one or two log-log panels side by side (each a caption and its
/// series) of a value against node count.
fn chart(
    path: &Path,
    title: &str,
    y_desc: &str,
    panels: &[(&str, Vec<Series>)],
) -> Result<(), Box<dyn std::error::Error>> {
    let width = 820 * panels.len() as u32;
    let root = SVGBackend::new(path, (width, 680)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 24))?;
    for (area, (caption, series)) in root.split_evenly((1, panels.len())).iter().zip(panels) {
        panel(area, caption, y_desc, series)?;
    }
    root.present()?;
    Ok(())
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let all = series.iter().flat_map(|(_, points)| points.iter());
    let (mut low, mut high) = (f64::MAX, f64::MIN);
    for &(_, y) in all.clone() {
        low = low.min(y);
        high = high.max(y);
    }
    if low > high {
        return Ok(());
    }
    let max_x = all.map(|&(x, _)| x).fold(10.0, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(14)
        .x_label_area_size(46)
        .y_label_area_size(70)
        .build_cartesian_2d((8f64..max_x * 1.25).log_scale(), (low / 1.6..high * 1.6).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("nodes (log scale)")
        .y_desc(y_desc)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| if *y >= 10.0 { format!("{y:.0}") } else { format!("{y}") })
        .draw()?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let marker = i / COLORS.len();
        chart.draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?.label(name.clone()).legend(
            move |(x, y)| {
                let line = PathElement::new(vec![(x - 4, y), (x + 16, y)], color.stroke_width(2));
                let mark: DynElement<DB, (i32, i32)> = match marker {
                    0 => Circle::new((x + 6, y), 3, color.filled()).into_dyn(),
                    1 => TriangleMarker::new((x + 6, y), 5, color.filled()).into_dyn(),
                    _ => Cross::new((x + 6, y), 4, color.stroke_width(2)).into_dyn(),
                };
                EmptyElement::at((0, 0)) + line + mark
            },
        );
        match marker {
            0 => chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?,
            1 => chart.draw_series(points.iter().map(|&p| TriangleMarker::new(p, 5, color.filled())))?,
            _ => chart.draw_series(points.iter().map(|&p| Cross::new(p, 4, color.stroke_width(2))))?,
        };
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()?;
    Ok(())
}

fn cell(value: Option<f64>) -> String {
    match value {
        None => "-".to_owned(),
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 1.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.3}"),
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (sizes, passes, mut out): (&[usize], usize, PathBuf) = if full {
        (&[10, 100, 1_000, 10_000, 100_000], 5, Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs"))
    } else {
        (&[10, 100], 1, std::env::temp_dir().join(format!("shardring-curves-{}", std::process::id())))
    };
    // SHARDRING_CURVES_DIR draws the charts there instead (and keeps them).
    let chosen = std::env::var_os("SHARDRING_CURVES_DIR").map(PathBuf::from);
    if let Some(dir) = &chosen {
        out = dir.clone();
    }
    std::fs::create_dir_all(&out).expect("the charts' directory");
    let keys = keys(if full { 20_000 } else { 500 });
    let mut results: Vec<(Algorithm, Vec<Point>)> = Vec::new();
    for algorithm in Algorithm::ALL {
        let points: Vec<Point> = sizes.iter().map(|&n| measure(algorithm, n, &keys, passes)).collect();
        results.push((algorithm, points));
    }
    let header = sizes.iter().map(|n| format!(" {n} |")).collect::<String>();
    let rule = sizes.iter().map(|_| "---:|").collect::<String>();
    let table = |title: &str, value: &dyn Fn(&Point) -> Option<f64>| {
        println!("\n{title}\n| algorithm |{header}\n|---|{rule}");
        for (algorithm, points) in &results {
            let cells: String = points.iter().map(|p| format!(" {} |", cell(value(p)))).collect();
            println!("| {} |{cells}", algorithm.name());
        }
    };
    table("Lookup, ns (key hash included; 20,000 streamed keys)", &|p| p.lookup_ns);
    table("Build, ms", &|p| p.build_ms);
    table("Derive: add a node, ms", &|p| p.add_ms);
    table("Derive: remove the middle node, ms", &|p| p.remove_ms);
    table("Placement bytes per node", &|p| p.bytes_per_node);
    let swap_algorithms = [Algorithm::Ring, Algorithm::Rendezvous, Algorithm::Maglev, Algorithm::Jumpback];
    let swaps: Vec<(Algorithm, Vec<(f64, f64)>)> = swap_algorithms
        .iter()
        .map(|&a| (a, sizes.iter().filter_map(|&m| swap_ms(a, m, passes).map(|ms| (m as f64, ms))).collect()))
        .collect();
    println!("\nMembership: one member joins, records to the next ring, ms\n| algorithm |{header}\n|---|{rule}");
    for (algorithm, points) in &swaps {
        let at = |m: usize| points.iter().find(|&&(x, _)| x == m as f64).map(|&(_, ms)| ms);
        let cells: String = sizes.iter().map(|&m| format!(" {} |", cell(at(m)))).collect();
        println!("| {} |{cells}", algorithm.name());
    }

    // Per algorithm group: shardring's own, then the peers' modes.
    let series = |own: bool, value: &dyn Fn(&Point) -> Option<f64>| -> Vec<Series> {
        results
            .iter()
            .filter(|(a, _)| OWN.contains(a) == own)
            .map(|(a, points)| {
                (a.name().to_owned(), points.iter().filter_map(|p| Some((p.nodes as f64, value(p)?))).collect())
            })
            .filter(|(_, points): &Series| !points.is_empty())
            .collect()
    };
    let both = |value: &dyn Fn(&Point) -> Option<f64>| -> [(&str, Vec<Series>); 2] {
        [("shardring's algorithms", series(true, value)), ("compatibility modes", series(false, value))]
    };
    let machine = format!("{} cores", std::thread::available_parallelism().map_or(0, |n| n.get()));
    let derive = |value: &dyn Fn(&Point) -> Option<f64>| -> Vec<Series> {
        results
            .iter()
            .filter(|(a, _)| {
                matches!(
                    a,
                    Algorithm::Ring
                        | Algorithm::Maglev
                        | Algorithm::Slots
                        | Algorithm::Memento
                        | Algorithm::Ketama
                        | Algorithm::EnvoyRingHash
                )
            })
            .map(|(a, points)| {
                (a.name().to_owned(), points.iter().filter_map(|p| Some((p.nodes as f64, value(p)?))).collect())
            })
            .collect()
    };
    let charts: [Chart; 5] = [
        (
            "curves-lookup.svg",
            format!("Lookup time against node count ({machine}, 20,000 streamed 30-byte keys)"),
            "ns per lookup, key hash included (log scale)",
            both(&|p| p.lookup_ns).into(),
        ),
        (
            "curves-build.svg",
            format!("Build time against node count ({machine})"),
            "ms (log scale)",
            both(&|p| p.build_ms).into(),
        ),
        (
            "curves-derive.svg",
            format!("Derivation time against node count ({machine})"),
            "ms (log scale)",
            vec![("a node added", derive(&|p| p.add_ms)), ("the middle node removed", derive(&|p| p.remove_ms))],
        ),
        (
            "curves-memory.svg",
            "Placement memory per node".to_owned(),
            "heap bytes of the placement per node (log scale)",
            both(&|p| p.bytes_per_node.filter(|&b| b > 0.0)).into(),
        ),
        (
            "curves-membership.svg",
            format!("A member joins: from the records to the next ring ({machine})"),
            "ms (log scale)",
            vec![(
                "Records::advance, one member joining",
                swaps.iter().map(|(a, points)| (a.name().to_owned(), points.clone())).collect(),
            )],
        ),
    ];
    for (file, title, y_desc, panels) in charts {
        let path = out.join(file);
        chart(&path, &title, y_desc, &panels).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("wrote {}", path.display());
    }
    if !full && chosen.is_none() {
        std::fs::remove_dir_all(&out).ok();
    }
}
