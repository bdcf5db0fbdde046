//! `shardring simulate --plot` in every mode: the SVG is rendered to PNG
//! with resvg and the system fonts, and every label the chart must carry
//! (title, captions, axis descriptions, category names, legend entries)
//! has to be in the SVG and to put ink on the image: rendering the same SVG
//! without its text elements must change the pixels inside each label's
//! box. Colours must all be Okabe–Ito (or black and white). The PNGs are
//! left in the test's temporary target directory for a look.

use std::path::PathBuf;

use assert_cmd::Command;
use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg::{self, Node, Rect};

/// The Okabe–Ito palette with black, and the white background.
const ALLOWED_COLOURS: [&str; 9] =
    ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000", "#FFFFFF"];

/// Runs `shardring simulate ARGS --plot FILE` and returns the SVG text and
/// the report on stdout.
fn simulate(name: &str, args: &[&str]) -> (String, String) {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.svg"));
    let output = Command::new(assert_cmd::cargo::cargo_bin!("shardring"))
        .arg("simulate")
        .args(args)
        .arg("--plot")
        .arg(&path)
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.ends_with(&format!("chart written to {}\n", path.display())), "{stdout}");
    (std::fs::read_to_string(&path).unwrap(), stdout)
}

/// usvg options with the system fonts, `sans-serif` being DejaVu Sans
/// (Debian's fonts-dejavu-core, installed by `make system-deps`).
fn options() -> usvg::Options<'static> {
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_system_fonts();
    fonts.set_sans_serif_family("DejaVu Sans");
    assert!(fonts.faces().any(|f| f.families.iter().any(|(name, _)| name == "DejaVu Sans")), "no DejaVu Sans");
    options
}

fn render(svg: &str, options: &usvg::Options) -> (usvg::Tree, Pixmap) {
    let tree = usvg::Tree::from_str(svg, options).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(&tree, Transform::identity(), &mut pixmap.as_mut());
    (tree, pixmap)
}

/// Every text element of the tree: its text and its box on the canvas.
fn texts(group: &usvg::Group, found: &mut Vec<(String, Rect)>) {
    for node in group.children() {
        match node {
            Node::Group(group) => texts(group, found),
            Node::Text(text) => {
                let content: String = text.chunks().iter().map(|c| c.text()).collect();
                found.push((content.trim().to_owned(), text.abs_bounding_box()));
            }
            _ => {}
        }
    }
}

/// The SVG without its `<text>` elements, and the contents of those.
fn without_text(svg: &str) -> (String, Vec<String>) {
    let (mut out, mut contents) = (String::new(), Vec::new());
    let mut rest = svg;
    while let Some(start) = rest.find("<text") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("</text>").expect("every <text> is closed") + start;
        let open = rest[start..end].find('>').expect("a <text> tag ends") + start + 1;
        contents.push(rest[open..end].trim().to_owned());
        rest = &rest[end + "</text>".len()..];
    }
    out.push_str(rest);
    (out, contents)
}

/// Pixels inside `rect` that differ between the two images.
fn changed_pixels(a: &Pixmap, b: &Pixmap, rect: Rect) -> (usize, usize) {
    let (x0, y0) = (rect.left().floor().max(0.0) as u32, rect.top().floor().max(0.0) as u32);
    let x1 = (rect.right().ceil() as u32).min(a.width());
    let y1 = (rect.bottom().ceil() as u32).min(a.height());
    let (mut changed, mut total) = (0, 0);
    for y in y0..y1 {
        for x in x0..x1 {
            total += 1;
            changed += usize::from(a.pixel(x, y) != b.pixel(x, y));
        }
    }
    (changed, total)
}

/// Whether a pixel of colour `hex` lies within `distance` pixels left of `rect`.
fn swatch_left_of(image: &Pixmap, rect: Rect, hex: &str, distance: f32) -> bool {
    let rgb = u32::from_str_radix(&hex[1..], 16).unwrap();
    let (r, g, b) = ((rgb >> 16) as u8, (rgb >> 8) as u8, rgb as u8);
    let (x0, x1) = ((rect.left() - distance).max(0.0) as u32, rect.left() as u32);
    let (y0, y1) = (rect.top() as u32, rect.bottom().ceil() as u32);
    (y0..y1).any(|y| {
        (x0..x1).any(|x| {
            let p = image.pixel(x, y).unwrap().demultiply();
            p.red().abs_diff(r) < 8 && p.green().abs_diff(g) < 8 && p.blue().abs_diff(b) < 8
        })
    })
}

/// Checks one chart: `labels` are drawn text; `legend` entries (name,
/// colour of their swatch) are drawn with their swatch beside them; no two
/// labels overlap; only allowed colours; no empty text element.
fn check_chart(name: &str, svg: &str, labels: &[&str], legend: &[(&str, &str)]) {
    let options = options();
    let (tree, with) = render(svg, &options);
    let (bare, contents) = without_text(svg);
    assert!(contents.iter().all(|text| !text.is_empty()), "{name}: an empty label");
    let (_, without) = render(&bare, &options);
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    with.save_png(out.join(format!("{name}.png"))).unwrap();
    without.save_png(out.join(format!("{name}-without-text.png"))).unwrap();

    let mut found = Vec::new();
    texts(tree.root(), &mut found);
    let lookup = |label: &str| {
        found.iter().find(|(text, _)| text == label).map(|(_, rect)| *rect).unwrap_or_else(|| {
            let all: Vec<&str> = found.iter().map(|(t, _)| t.as_str()).collect();
            panic!("{name}: no label {label:?} among {all:?}")
        })
    };
    for label in labels.iter().chain(legend.iter().map(|(label, _)| label)) {
        let rect = lookup(label);
        let (changed, total) = changed_pixels(&with, &without, rect);
        // Glyphs cover a fifth to a half of their box.
        assert!(changed * 10 >= total && changed >= 20, "{name}: {label:?} draws {changed} of {total} pixels");
    }
    for (label, colour) in legend {
        assert!(swatch_left_of(&with, lookup(label), colour, 32.0), "{name}: no {colour} swatch before {label:?}");
    }
    for (i, (a, ra)) in found.iter().enumerate() {
        for (b, rb) in &found[i + 1..] {
            assert!(
                ra.intersect(rb).is_none_or(|r| r.width() < 1.0 || r.height() < 1.0),
                "{name}: {a:?} overlaps {b:?}"
            );
        }
    }
    let mut rest = svg;
    while let Some(at) = rest.find("=\"#") {
        let colour = &rest[at + 2..at + 9];
        assert!(ALLOWED_COLOURS.contains(&colour), "{name}: colour {colour} is not Okabe–Ito");
        rest = &rest[at + 9..];
    }
}

const BLUE: &str = "#0072B2";
const ORANGE: &str = "#E69F00";
const GREEN: &str = "#009E73";
const VERMILLION: &str = "#D55E00";

#[test]
fn simulate_plot_labels_the_sweep_and_the_moved_shares() {
    let (svg, _) = simulate("plain", &["--keys", "20000", "--nodes", "10", "--vnodes", "100"]);
    check_chart(
        "plain",
        &svg,
        &[
            "shardring simulate: 10 nodes, 20000 keys, 100 vnodes",
            "keys per node against the mean, 10 equal nodes",
            "vnodes per node (log scale)",
            "keys per node / mean",
            "share of keys moved by one node more or less",
            "% of keys moved",
            "scale-out 10 → 11",
            "scale-in 10 → 9",
            "mean: perfect balance",
            "ring in theory: 1/(N+1), 1/N",
        ],
        &[
            ("max/mean (busiest node)", VERMILLION),
            ("min/mean (idlest node)", BLUE),
            ("shardring ring", BLUE),
            ("hash % N", ORANGE),
        ],
    );
}

#[test]
fn simulate_algorithm_plot_labels_one_algorithm() {
    let (svg, out) = simulate("jump", &["--algorithm", "jump", "--keys", "20000", "--nodes", "10"]);
    let moved = out.lines().find(|l| l.starts_with("jump ")).unwrap().split_whitespace().nth(1).unwrap();
    check_chart(
        "jump",
        &svg,
        &[
            "shardring simulate --algorithm: 10 → 11 equal nodes, 20000 keys",
            "keys moved from 10 to 11 nodes",
            "balance of keys over 10 equal nodes",
            "% of keys",
            "% of the mean keys per node",
            "algorithm",
            "jump",
            // The bar's value, as the report prints it.
            moved,
        ],
        &[
            ("moved", BLUE),
            ("moved to the new node", ORANGE),
            ("ideal: 1/(N+1) = 9.09%", "#000000"),
            ("busiest node above the mean (max/mean - 1)", BLUE),
            ("coefficient of variation", ORANGE),
        ],
    );
}

#[test]
fn simulate_algorithm_all_plot_names_every_algorithm() {
    let (svg, _) = simulate("all", &["--algorithm", "all", "--keys", "20000", "--nodes", "5"]);
    let mut labels =
        vec!["shardring simulate --algorithm: 5 → 6 equal nodes, 20000 keys", "keys moved from 5 to 6 nodes"];
    let names = shardring::Algorithm::ALL.map(|a| a.name());
    labels.extend(names);
    check_chart("all", &svg, &labels, &[("moved", BLUE), ("moved to the new node", ORANGE)]);
    // Each name labels a row in both panels.
    for name in names {
        assert_eq!(svg.matches(&format!("\n{name}\n</text>")).count(), 2, "{name}");
    }
}

#[test]
fn simulate_bounded_plot_labels_every_epsilon_and_workload() {
    let (svg, _) = simulate("bounded", &["--bounded", "0.05,0.25,1", "--keys", "20000"]);
    check_chart(
        "bounded",
        &svg,
        &[
            "shardring simulate --bounded: 10 nodes × 160 vnodes, 20000 requests",
            "busiest node against the mean",
            "the busiest node fails at 80% utilisation",
            "max/mean load (requests held per node)",
            "busiest survivor, % of its capacity",
            "placement",
            "plain ring",
            "ε = 0.05",
            "ε = 0.25",
            "ε = 1",
        ],
        &[
            ("uniform (every request a new key)", BLUE),
            ("Zipf s = 1.1 over 100,000 keys", ORANGE),
            ("80% of requests on 10% of keys", GREEN),
            ("bound: ceil((1 + ε) × mean) / mean", "#000000"),
            ("a server's capacity", "#000000"),
        ],
    );
}

#[test]
fn an_unwritable_chart_fails_before_the_experiments_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing-dir").join("chart.svg");
    let output = Command::new(assert_cmd::cargo::cargo_bin!("shardring"))
        .args(["simulate", "--keys", "1000", "--plot", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        format!("shardring: {}: cannot draw the chart: No such file or directory (os error 2)\n", path.display())
    );
    // A run that fails after the chart was opened leaves no empty file behind.
    let path = dir.path().join("chart.svg");
    let output = Command::new(assert_cmd::cargo::cargo_bin!("shardring"))
        .args(["simulate", "--keys", "1", "--nodes", "10000", "--vnodes", "100000", "--plot", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(!path.exists());
}
