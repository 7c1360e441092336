//! PNG line charts for bench reports (plotters, bitmap backend, with a font kept in the
//! repository so no system library is needed).

use crate::error::{PgError, Result};
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, include_bytes!("../../assets/DejaVuSans.ttf"));
    });
}

/// One line: a label and (x, y) points.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Draws `series` as lines over a log2 x axis (session counts).
pub fn line_chart(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> Result<()> {
    register_font();
    let err = |e: String| PgError::internal(format!("could not draw \"{}\": {e}", path.display()));
    let root = BitMapBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0.max(1.0).log2())).collect();
    let ys: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect();
    let (x0, x1) = (xs.iter().cloned().fold(f64::INFINITY, f64::min).min(0.0), xs.iter().cloned().fold(0.0, f64::max).max(1.0));
    let y1 = ys.iter().cloned().fold(0.0, f64::max).max(1e-9) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_labels(((x1 - x0).round() as usize + 1).max(2))
        .x_label_formatter(&|x| format!("{}", 2f64.powf(*x).round()))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0.max(1.0).log2(), p.1)).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| err(e.to_string()))?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled()))).map_err(|e| err(e.to_string()))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}
