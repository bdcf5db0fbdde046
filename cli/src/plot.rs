//! The `simulate --plot` chart: balance against vnodes, and moved shares.

use std::path::Path;

use plotters::prelude::*;
use shardring::Spread;

/// Draws two panels into an SVG file: max/mean and min/mean against vnodes
/// (log scale), and the moved share of each scale-out and scale-in run.
pub fn simulation(
    path: &Path,
    sweep: &[(u32, Spread)],
    moved: &[(&str, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (960, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(520);

    let max_ratio = sweep.iter().map(|(_, s)| s.max_over_mean).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&left)
        .caption("keys per node against the mean", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(44)
        .build_cartesian_2d((1f64..1000f64).log_scale(), 0f64..max_ratio * 1.1)?;
    chart.configure_mesh().x_desc("vnodes").y_desc("ratio").draw()?;
    for (label, color, value) in [
        ("max/mean", RED, (|s: &Spread| s.max_over_mean) as fn(&Spread) -> f64),
        ("min/mean", BLUE, |s: &Spread| s.min_over_mean),
    ] {
        let series: Vec<(f64, f64)> = sweep.iter().map(|(v, s)| (f64::from(*v), value(s))).collect();
        chart
            .draw_series(LineSeries::new(series.clone(), color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        chart.draw_series(series.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
    }
    chart.configure_series_labels().border_style(BLACK).background_style(WHITE).draw()?;

    let mut bars = ChartBuilder::on(&right)
        .caption("share of keys moved", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(44)
        .build_cartesian_2d(0f64..moved.len() as f64, 0f64..100f64)?;
    bars.configure_mesh()
        .disable_x_mesh()
        .x_labels(moved.len() * 2)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.01 && i < moved.len() { moved[i].0.to_owned() } else { String::new() }
        })
        .y_desc("% moved")
        .draw()?;
    bars.draw_series(moved.iter().enumerate().map(|(i, (name, share))| {
        let color = if name.starts_with("ring") { GREEN } else { RED };
        Rectangle::new([(i as f64 + 0.15, 0.0), (i as f64 + 0.85, 100.0 * share)], color.filled())
    }))?;
    root.present()?;
    Ok(())
}
