//! A bar chart per measure of the lab, drawn with `plotters` into SVG:
//! one bar per cell, labelled `key/writers`.

use plotters::prelude::*;
use std::path::Path;
use uuidforge_lab::{CellResult, MEASURES};

/// Writes `DIR/<measure>.svg` for every measure some cell has.
pub fn write_all(dir: &Path, results: &[CellResult]) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("invalid value '{}' for '--svg-dir': {e}", dir.display()))?;
    for (stem, title, value) in MEASURES {
        let bars: Vec<(String, f64)> = results
            .iter()
            .filter_map(|r| value(r).map(|v| (format!("{}/{}", r.label, r.cell.writers), v)))
            .collect();
        if bars.is_empty() {
            continue;
        }
        let svg = chart(title, &bars).map_err(|e| format!("drawing {stem}: {e}"))?;
        let path = dir.join(format!("{stem}.svg"));
        std::fs::write(&path, svg).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(())
}

fn chart(title: &str, bars: &[(String, f64)]) -> Result<String, Box<dyn std::error::Error>> {
    let mut svg = String::new();
    {
        let width = (120 + 28 * bars.len() as u32).max(480);
        let root = SVGBackend::with_string(&mut svg, (width, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        let top = bars.iter().map(|b| b.1).fold(0.0f64, f64::max).max(1e-9) * 1.1;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(90)
            .y_label_area_size(70)
            .build_cartesian_2d((0..bars.len()).into_segmented(), 0f64..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(bars.len())
            .x_label_style(
                ("sans-serif", 11)
                    .into_font()
                    .transform(FontTransform::Rotate90),
            )
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) => bars.get(*i).map(|b| b.0.clone()).unwrap_or_default(),
                _ => String::new(),
            })
            .y_desc(title)
            .draw()?;
        chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
            let mut bar = Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), *v),
                ],
                RGBColor(0x2b, 0x6c, 0xb0).filled(),
            );
            bar.set_margin(0, 0, 3, 3);
            bar
        }))?;
        root.present()?;
    }
    Ok(svg)
}
