//! Convergence: best-so-far improvement over the baseline against tuning cost.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{color, err, font, padded_range, ticks_for, Plot};
use crate::data::{ConvergenceLine, Metric, MetricFigures as _};

/// One step line per run.
pub struct ConvergencePlot<'a> {
    pub class: &'a str,
    pub metric: Metric,
    pub lines: &'a [ConvergenceLine],
}

/// Y axis description for a metric's improvement ratio.
pub fn improvement_label(metric: Metric) -> &'static str {
    match metric {
        Metric::Time => "best-so-far speedup over baseline (x)",
        Metric::Power => "best-so-far power reduction (baseline / point)",
        Metric::Energy => "best-so-far energy reduction (baseline / point)",
        Metric::Gap => "best-so-far gap reduction over baseline (points of %)",
    }
}

impl Plot for ConvergencePlot<'_> {
    fn size(&self) -> (u32, u32) {
        (800, 520)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(err)?;
        let all = || self.lines.iter().flat_map(|l| l.points.iter());
        let xr = padded_range(all().map(|p| p.0), true);
        // The baseline's level always in view, so the gain reads against it.
        let level = self.metric.baseline_level();
        let yr = padded_range(all().map(|p| p.1).chain([level]), false);
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("{}: convergence ({})", self.class, self.metric.name()),
                font(20),
            )
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("tuning cost (% of production runs)")
            .y_desc(improvement_label(self.metric))
            .label_style(font(13))
            .axis_desc_style(font(15))
            .x_label_formatter(&ticks_for(xr))
            .y_label_formatter(&ticks_for(yr))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        let grey = RGBColor(120, 120, 120);
        chart
            .draw_series(LineSeries::new(vec![(xr.0, level), (xr.1, level)], grey))
            .map_err(err)?;
        for (i, line) in self.lines.iter().enumerate() {
            let c = color(i);
            // Best-so-far is a step function: hold each value until the next improvement.
            let mut steps = Vec::with_capacity(line.points.len() * 2);
            for (j, &(x, y)) in line.points.iter().enumerate() {
                if j > 0 {
                    steps.push((x, line.points[j - 1].1));
                }
                steps.push((x, y));
            }
            chart
                .draw_series(LineSeries::new(steps, c.stroke_width(2)))
                .map_err(err)?
                .label(line.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                });
            if let Some(&last) = line.points.last() {
                chart
                    .draw_series(std::iter::once(Circle::new(last, 4, c.filled())))
                    .map_err(err)?;
            }
        }
        chart
            .configure_series_labels()
            .label_font(font(13))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}
