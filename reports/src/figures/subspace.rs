//! The compiler sub-space around the baseline (the paper's Fig. 2): speedups sorted, power
//! sorted, and speedup in order of power.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{color, err, font, padded_range, tick, Plot};
use crate::data::SubspacePoint;

/// Three panels side by side; without power only the first.
pub struct SubspacePlot<'a> {
    pub class: &'a str,
    pub points: &'a [SubspacePoint],
}

impl SubspacePlot<'_> {
    fn has_power(&self) -> bool {
        self.points.iter().all(|p| p.power_w.is_some())
    }

    /// The series of each panel: (title, y description, values in x order).
    pub fn panels(&self) -> Vec<(String, &'static str, Vec<f64>)> {
        let mut by_speed: Vec<f64> = self.points.iter().map(|p| p.speedup).collect();
        by_speed.sort_by(f64::total_cmp);
        let mut panels = vec![(
            "(a) speedups, sorted".to_string(),
            "speedup over baseline (x)",
            by_speed,
        )];
        if self.has_power() {
            let mut by_power: Vec<(f64, f64)> = self
                .points
                .iter()
                .filter_map(|p| Some((p.power_w?, p.speedup)))
                .collect();
            by_power.sort_by(|a, b| a.0.total_cmp(&b.0));
            panels.push((
                "(b) power, sorted".into(),
                "average power (W)",
                by_power.iter().map(|p| p.0).collect(),
            ));
            panels.push((
                "(c) speedup in order of power".into(),
                "speedup over baseline (x)",
                by_power.iter().map(|p| p.1).collect(),
            ));
        }
        panels
    }
}

impl Plot for SubspacePlot<'_> {
    fn size(&self) -> (u32, u32) {
        if self.has_power() {
            (1200, 420)
        } else {
            (600, 420)
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(err)?;
        let root = root
            .titled(
                &format!("{}: compiler sub-space around the baseline", self.class),
                font(20),
            )
            .map_err(err)?;
        let panels = self.panels();
        let areas = root.split_evenly((1, panels.len()));
        for (i, ((title, desc, values), area)) in panels.iter().zip(areas.iter()).enumerate() {
            let n = values.len() as f64;
            let yr = padded_range(values.iter().copied(), false);
            let mut chart = ChartBuilder::on(area)
                .caption(title, font(15))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(0.5..n + 0.5, yr.0..yr.1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc(if i == 2 { "rank by power" } else { "rank" })
                .y_desc(*desc)
                .label_style(font(12))
                .axis_desc_style(font(13))
                .x_label_formatter(&|v| format!("{v:.0}"))
                .y_label_formatter(&|v| tick(*v))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(err)?;
            let c = color(if i == 1 { 1 } else { 0 });
            let pts: Vec<(f64, f64)> = values
                .iter()
                .enumerate()
                .map(|(k, v)| (k as f64 + 1.0, *v))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.mix(0.6)))
                .map_err(err)?;
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(err)?;
        }
        Ok(())
    }
}
