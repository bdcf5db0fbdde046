//! The `simulate --plot` charts: an SVG of two panels under one title, for
//! every simulate mode. Bar charts are horizontal, so category names of any
//! length sit on their own row of the vertical axis; every panel has axis
//! descriptions and a legend under it. Colours are the Okabe–Ito palette
//! (Okabe and Ito, "Color Universal Design", 2008), which stays distinct
//! under every common colour-vision deficiency.

use std::io::Write;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use shardring::Spread;

use crate::error::CliError;

/// What drawing a chart can fail with (the backend's and the builder's errors).
pub type PlotResult = Result<(), Box<dyn std::error::Error>>;

/// The error of a chart that could not be written to `path`.
pub(crate) fn chart_error(path: &Path, error: impl std::fmt::Display) -> CliError {
    CliError::Plot { path: path.display().to_string(), message: error.to_string() }
}

/// Draws a chart with `draw` into `path`, and says where it went.
pub(crate) fn write_chart(
    path: &Path,
    out: &mut impl Write,
    draw: impl FnOnce() -> PlotResult,
) -> Result<(), CliError> {
    draw().map_err(|e| chart_error(path, e))?;
    writeln!(out, "chart written to {}", path.display())?;
    Ok(())
}

/// The Okabe–Ito palette (black is its eighth colour).
pub mod okabe_ito {
    use plotters::style::RGBColor;

    /// Orange, #E69F00.
    pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
    /// Sky blue, #56B4E9.
    pub const SKY_BLUE: RGBColor = RGBColor(86, 180, 233);
    /// Bluish green, #009E73.
    pub const BLUISH_GREEN: RGBColor = RGBColor(0, 158, 115);
    /// Yellow, #F0E442 (too light for lines and text on white: used last).
    pub const YELLOW: RGBColor = RGBColor(240, 228, 66);
    /// Blue, #0072B2.
    pub const BLUE: RGBColor = RGBColor(0, 114, 178);
    /// Vermillion, #D55E00.
    pub const VERMILLION: RGBColor = RGBColor(213, 94, 0);
    /// Reddish purple, #CC79A7.
    pub const REDDISH_PURPLE: RGBColor = RGBColor(204, 121, 167);
    /// The colours series take, in order.
    pub const SERIES: [RGBColor; 7] = [BLUE, ORANGE, BLUISH_GREEN, REDDISH_PURPLE, SKY_BLUE, VERMILLION, YELLOW];
}

const WIDTH: u32 = 1100;
const MIN_HEIGHT: u32 = 380;
const TITLE_HEIGHT: u32 = 36;
const FONT: &str = "sans-serif";
/// Pixels per bar, and between two rows of bars.
const BAR: u32 = 15;
const ROW_GAP: u32 = 14;
const LEGEND_ROW: u32 = 22;
const LEGEND_FONT: f64 = 15.0;

/// A horizontal bar chart: one row per category, named on the vertical
/// axis; in each row one bar per series, coloured as the legend says and
/// labelled with its value at its end.
pub struct Bars {
    /// The panel's caption.
    pub caption: String,
    /// Description of the horizontal (value) axis, with its unit.
    pub value_axis: String,
    /// Description of the vertical (category) axis.
    pub category_axis: String,
    /// Row names, top to bottom.
    pub categories: Vec<String>,
    /// Each series' legend name and its value in each row (same order as
    /// `categories`).
    pub series: Vec<(String, Vec<f64>)>,
    /// A black tick across some rows at a value of that row (`None`: no
    /// tick), with its legend name: a bound or a theoretical value.
    pub marks: Option<(String, Vec<Option<f64>>)>,
    /// A dashed black line across every row at one value, with its legend
    /// name: an ideal or a capacity.
    pub reference: Option<(String, f64)>,
    /// How a bar's value is printed at its end.
    pub format: fn(f64) -> String,
}

impl Bars {
    /// Pixels the chart needs vertically (caption, rows, axis, legend).
    fn height(&self) -> u32 {
        let bars = self.series.len().max(1) as u32;
        let rows = self.categories.len() as u32;
        40 + rows * (bars * BAR + ROW_GAP) + 56 + LEGEND_ROW * 3
    }

    fn legend(&self) -> Vec<(String, Swatch)> {
        let mut items: Vec<(String, Swatch)> = self
            .series
            .iter()
            .zip(okabe_ito::SERIES.iter().cycle())
            .map(|((n, _), c)| (n.clone(), Swatch::Bar(*c)))
            .collect();
        if let Some((name, _)) = &self.marks {
            items.push((name.clone(), Swatch::Tick));
        }
        if let Some((name, _)) = &self.reference {
            items.push((name.clone(), Swatch::Dashed));
        }
        items
    }
}

/// What stands left of a legend entry's name.
#[derive(Clone, Copy)]
enum Swatch {
    Bar(RGBColor),
    Line(RGBColor),
    Tick,
    Dashed,
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws a figure of two panels side by side under `title` into the SVG file `path`.
fn figure(
    path: &Path,
    title: &str,
    height: u32,
    left: impl FnOnce(&Area) -> PlotResult,
    right: impl FnOnce(&Area) -> PlotResult,
) -> PlotResult {
    let height = (height + TITLE_HEIGHT).max(MIN_HEIGHT);
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let body = root.titled(title, (FONT, 25))?;
    let (left_area, right_area) = body.split_horizontally(WIDTH / 2);
    left(&left_area)?;
    right(&right_area)?;
    root.present()?;
    Ok(())
}

/// `simulate`: balance against vnodes (max/mean and min/mean, log scale) on
/// the left, and `moved` (the moved shares of the ring and of `hash % N`)
/// on the right.
pub fn simulation(path: &Path, title: &str, nodes: u32, sweep: &[(u32, Spread)], moved: &Bars) -> PlotResult {
    figure(path, title, moved.height(), |area| balance_by_vnodes(area, nodes, sweep), |area| bars(area, moved))
}

/// `simulate --algorithm` and `--bounded`: two bar charts side by side.
pub fn bar_pair(path: &Path, title: &str, left: &Bars, right: &Bars) -> PlotResult {
    figure(path, title, left.height().max(right.height()), |area| bars(area, left), |area| bars(area, right))
}

/// An axis number without trailing zeros: 10, 2.5, 0.25.
fn tick(value: &f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Splits a panel into the chart and a legend strip under it, and draws the legend.
fn with_legend<'a>(area: &Area<'a>, items: &[(String, Swatch)]) -> Result<Area<'a>, Box<dyn std::error::Error>> {
    let (width, height) = area.dim_in_pixel();
    // About 0.6 em per character of DejaVu Sans (plotters has no font
    // engine here; the SVG's font size is plotters' size / 1.24).
    let text_width = |text: &str| (text.chars().count() as f64 * LEGEND_FONT / 1.24 * 0.6).ceil() as i32;
    let mut rows = vec![Vec::new()];
    let (mut x, max_x) = (0, width as i32 - 24);
    for (name, swatch) in items {
        let item_width = 28 + text_width(name) + 18;
        if x > 0 && x + item_width > max_x {
            rows.push(Vec::new());
            x = 0;
        }
        rows.last_mut().expect("rows is never empty").push((x, name, *swatch));
        x += item_width;
    }
    let strip = LEGEND_ROW * rows.len() as u32 + 8;
    let (chart, legend) = area.split_vertically(height.saturating_sub(strip));
    let style = TextStyle::from((FONT, LEGEND_FONT).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (row, entries) in rows.iter().enumerate() {
        let y = row as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        for &(x, name, swatch) in entries {
            let at = (x + 24, y);
            match swatch {
                Swatch::Bar(color) => {
                    legend.draw(&Rectangle::new([(at.0, y - 6), (at.0 + 18, y + 6)], color.filled()))?
                }
                Swatch::Line(color) => {
                    legend.draw(&PathElement::new(vec![(at.0, y), (at.0 + 18, y)], color.stroke_width(3)))?;
                    legend.draw(&Circle::new((at.0 + 9, y), 3, color.filled()))?;
                }
                Swatch::Tick => {
                    legend.draw(&PathElement::new(vec![(at.0 + 9, y - 8), (at.0 + 9, y + 8)], BLACK.stroke_width(3)))?
                }
                Swatch::Dashed => {
                    for dash in [0, 8, 16] {
                        let end = (dash + 4).min(18);
                        legend
                            .draw(&PathElement::new(vec![(at.0 + dash, y), (at.0 + end, y)], BLACK.stroke_width(2)))?;
                    }
                }
            }
            legend.draw(&Text::new(name.clone(), (at.0 + 26, y), style.clone()))?;
        }
    }
    Ok(chart)
}

/// Max/mean and min/mean of keys per node against vnodes, log scale.
fn balance_by_vnodes(area: &Area, nodes: u32, sweep: &[(u32, Spread)]) -> PlotResult {
    let max_color = okabe_ito::VERMILLION;
    let min_color = okabe_ito::BLUE;
    let legend = [
        ("max/mean (busiest node)".to_owned(), Swatch::Line(max_color)),
        ("min/mean (idlest node)".to_owned(), Swatch::Line(min_color)),
        ("mean: perfect balance".to_owned(), Swatch::Dashed),
    ];
    let area = with_legend(area, &legend)?;
    let max_ratio = sweep.iter().map(|(_, s)| s.max_over_mean).fold(1.0, f64::max);
    let max_vnodes = sweep.iter().map(|(v, _)| f64::from(*v)).fold(10.0, f64::max);
    let mut chart = ChartBuilder::on(&area)
        .caption(format!("keys per node against the mean, {nodes} equal nodes"), (FONT, 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d((1f64..max_vnodes).log_scale(), 0f64..max_ratio * 1.1)?;
    chart
        .configure_mesh()
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .x_desc("vnodes per node (log scale)")
        .y_desc("keys per node / mean")
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .draw()?;
    chart.draw_series(DashedLineSeries::new(vec![(1.0, 1.0), (max_vnodes, 1.0)], 6, 4, BLACK.stroke_width(1)))?;
    for (color, value) in
        [(max_color, (|s: &Spread| s.max_over_mean) as fn(&Spread) -> f64), (min_color, |s: &Spread| s.min_over_mean)]
    {
        let series: Vec<(f64, f64)> = sweep.iter().map(|(v, s)| (f64::from(*v), value(s))).collect();
        chart.draw_series(LineSeries::new(series.clone(), color.stroke_width(2)))?;
        chart.draw_series(series.into_iter().map(|p| Circle::new(p, 4, color.filled())))?;
    }
    Ok(())
}

/// Draws a [`Bars`] chart into `area`.
fn bars(area: &Area, spec: &Bars) -> PlotResult {
    let rows = spec.categories.len();
    if rows == 0 || spec.series.iter().any(|(_, values)| values.len() != rows) {
        return Err(format!("{}: every series needs one value per category", spec.caption).into());
    }
    let area = with_legend(area, &spec.legend())?;
    let values = spec.series.iter().flat_map(|(_, v)| v.iter().copied());
    let marks = spec.marks.iter().flat_map(|(_, m)| m.iter().flatten().copied());
    let most =
        values.chain(marks).chain(spec.reference.as_ref().map(|r| r.1)).filter(|v| v.is_finite()).fold(0.0, f64::max);
    // Room right of the longest bar for its value label.
    let x_max = if most > 0.0 { most * 1.2 } else { 1.0 };
    let longest = spec.categories.iter().map(|c| c.chars().count()).max().unwrap_or(0) as u32;
    // Category i is the row of the vertical axis (which counts upwards)
    // from rows - 1 - i - 1/2 to rows - 1 - i + 1/2, so the first category
    // is on top. Asked for at most `rows` labels on an axis `rows` long,
    // plotters puts them on the whole numbers: the rows' middles, labelled
    // with the category names.
    let row = |i: usize| (rows - 1 - i) as f64 - 0.5;
    let mut chart = ChartBuilder::on(&area)
        .caption(&spec.caption, (FONT, 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size((longest * 15 / 2 + 40).clamp(60, 240))
        .build_cartesian_2d(0f64..x_max, -0.5..rows as f64 - 0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows)
        .y_label_formatter(&|middle| {
            let at = middle.round();
            match (at - middle).abs() < 1e-6 && (0.0..rows as f64).contains(&at) {
                true => spec.categories[rows - 1 - at as usize].clone(),
                false => String::new(),
            }
        })
        .x_labels(8)
        .x_label_formatter(&tick)
        .x_desc(&spec.value_axis)
        .y_desc(&spec.category_axis)
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .draw()?;

    // A value label starts right of its bar, or right of the row's tick or
    // the reference line when one of them is just past the bar's end.
    let label_start = |i: usize, end: f64| {
        let mark = spec.marks.as_ref().and_then(|(_, marks)| marks[i]);
        let reference = spec.reference.as_ref().map(|r| r.1);
        [mark, reference].into_iter().flatten().filter(|&m| m >= end && m - end < 0.12 * x_max).fold(end, f64::max)
    };
    // In each row: a gap of PAD above and below, the series' bars between.
    const PAD: f64 = 0.12;
    let thickness = (1.0 - 2.0 * PAD) / spec.series.len() as f64;
    let value_style = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (j, ((_, values), color)) in spec.series.iter().zip(okabe_ito::SERIES.iter().cycle()).enumerate() {
        // Bar j of row i spans [top - thickness, top] of the axis.
        let top = |i: usize| row(i) + 1.0 - PAD - j as f64 * thickness;
        chart.draw_series(values.iter().enumerate().map(|(i, &value)| {
            Rectangle::new([(0.0, top(i) - thickness), (value.max(0.0), top(i))], color.filled())
        }))?;
        chart.draw_series(values.iter().enumerate().map(|(i, &value)| {
            let at = (label_start(i, value.max(0.0)), top(i) - thickness / 2.0);
            EmptyElement::at(at) + Text::new((spec.format)(value), (6, 0), value_style.clone())
        }))?;
    }
    if let Some((_, marks)) = &spec.marks {
        for (i, mark) in marks.iter().enumerate() {
            if let Some(m) = *mark {
                let tick = vec![(m, row(i) + PAD / 2.0), (m, row(i) + 1.0 - PAD / 2.0)];
                chart.draw_series(std::iter::once(PathElement::new(tick, BLACK.stroke_width(3))))?;
            }
        }
    }
    if let Some((_, value)) = spec.reference {
        let line = vec![(value, -0.5), (value, rows as f64 - 0.5)];
        chart.draw_series(DashedLineSeries::new(line, 6, 4, BLACK.stroke_width(2)))?;
    }
    Ok(())
}
