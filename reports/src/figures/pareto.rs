//! Pareto front of one class for a pair of metrics (gap vs energy, time vs power, ...).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{color, err, font, padded_range, ticks_for, Plot, Scale};
use crate::data::{Metric, ParetoData};

/// Scatter of every evaluated point, the front joined and highlighted, the front re-measured
/// on fresh seeds as hollow circles, baseline and exported bundles marked.
pub struct ParetoPlot<'a> {
    pub data: &'a ParetoData,
}

impl ParetoPlot<'_> {
    /// Display scales of the x and y axes.
    pub fn scales(&self) -> (Scale, Scale) {
        let d = self.data;
        let scale = |metric: Metric, values: Vec<f64>| match metric {
            Metric::Energy => Scale::for_values(values, "J"),
            Metric::Power => Scale::unit("W"),
            Metric::Gap => Scale::unit("%"),
            Metric::Time => Scale::for_values(values, "s"),
        };
        (
            scale(d.x_metric, d.points.iter().map(|p| p.x).collect()),
            scale(d.y_metric, d.points.iter().map(|p| p.y).collect()),
        )
    }
}

/// An axis's description.
pub fn axis_desc(metric: Metric, unit: &str) -> String {
    match metric {
        Metric::Power => format!("average power ({unit})"),
        Metric::Gap => format!("mean gap ({unit})"),
        Metric::Energy => format!("energy per production run ({unit})"),
        Metric::Time => format!("time per production run ({unit})"),
    }
}

impl Plot for ParetoPlot<'_> {
    fn size(&self) -> (u32, u32) {
        (800, 560)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let d = self.data;
        let (xs, ys) = self.scales();
        root.fill(&WHITE).map_err(err)?;
        let all_x = d
            .points
            .iter()
            .map(|p| p.x)
            .chain(d.remeasured.iter().map(|r| r.1));
        let all_y = d
            .points
            .iter()
            .map(|p| p.y)
            .chain(d.remeasured.iter().map(|r| r.2));
        let xr = padded_range(all_x.map(|x| x * xs.factor), false);
        let yr = padded_range(all_y.map(|y| y * ys.factor), false);
        let title = format!(
            "{}: {} vs {}",
            d.class,
            d.x_metric.name(),
            d.y_metric.name()
        );
        let mut chart = ChartBuilder::on(root)
            .caption(title, font(20))
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(axis_desc(d.x_metric, xs.unit))
            .y_desc(axis_desc(d.y_metric, ys.unit))
            .label_style(font(13))
            .axis_desc_style(font(15))
            .x_label_formatter(&ticks_for(xr))
            .y_label_formatter(&ticks_for(yr))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;

        let grey = RGBColor(150, 150, 150);
        let ok: Vec<(f64, f64)> = d
            .points
            .iter()
            .filter(|p| !p.rejected)
            .map(|p| (p.x * xs.factor, p.y * ys.factor))
            .collect();
        chart
            .draw_series(
                ok.iter()
                    .map(|&c| Circle::new(c, 3, grey.mix(0.7).filled())),
            )
            .map_err(err)?
            .label("evaluated point")
            .legend(move |(x, y)| Circle::new((x + 8, y), 3, grey.filled()));
        let rejected: Vec<(f64, f64)> = d
            .points
            .iter()
            .filter(|p| p.rejected)
            .map(|p| (p.x * xs.factor, p.y * ys.factor))
            .collect();
        if !rejected.is_empty() {
            chart
                .draw_series(rejected.iter().map(|&c| Cross::new(c, 4, grey)))
                .map_err(err)?
                .label("rejected (quality guard)")
                .legend(move |(x, y)| Cross::new((x + 8, y), 4, grey));
        }

        let front_color = color(0);
        let front: Vec<(f64, f64)> = d
            .front
            .iter()
            .filter_map(|&i| d.points.get(i))
            .map(|p| (p.x * xs.factor, p.y * ys.factor))
            .collect();
        chart
            .draw_series(LineSeries::new(front.clone(), front_color.stroke_width(2)))
            .map_err(err)?
            .label("Pareto front")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], front_color.stroke_width(2))
            });
        chart
            .draw_series(
                front
                    .iter()
                    .map(|&c| Circle::new(c, 5, front_color.filled())),
            )
            .map_err(err)?;

        if !d.remeasured.is_empty() {
            // Each re-measured point joined to its search value: how far the search's own
            // seeds flattered it.
            let joins: Vec<PathElement<(f64, f64)>> = d
                .remeasured
                .iter()
                .filter_map(|(key, x, y)| {
                    let p = d.points.iter().find(|p| &p.key == key)?;
                    Some(PathElement::new(
                        vec![
                            (p.x * xs.factor, p.y * ys.factor),
                            (x * xs.factor, y * ys.factor),
                        ],
                        front_color.mix(0.5).stroke_width(1),
                    ))
                })
                .collect();
            chart.draw_series(joins).map_err(err)?;
            chart
                .draw_series(d.remeasured.iter().map(|(_, x, y)| {
                    Circle::new(
                        (x * xs.factor, y * ys.factor),
                        6,
                        front_color.stroke_width(2),
                    )
                }))
                .map_err(err)?
                .label("front re-measured on fresh seeds")
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, front_color.stroke_width(2)));
        }

        if let Some((bx, by)) = d.baseline {
            let red = color(5);
            chart
                .draw_series(std::iter::once(TriangleMarker::new(
                    (bx * xs.factor, by * ys.factor),
                    9,
                    red.filled(),
                )))
                .map_err(err)?
                .label("baseline")
                .legend(move |(x, y)| TriangleMarker::new((x + 8, y), 6, red.filled()));
        }
        for (i, (label, x, y)) in d.exports.iter().enumerate() {
            let c = color(2 + i % 2);
            // A hollow diamond around the exported point, drawn in pixels so it keeps its
            // size whatever the axis ranges.
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((x * xs.factor, y * ys.factor))
                        + PathElement::new(
                            vec![(0, -10), (10, 0), (0, 10), (-10, 0), (0, -10)],
                            c.stroke_width(3),
                        ),
                ))
                .map_err(err)?
                .label(label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(
                        vec![
                            (x + 8, y - 6),
                            (x + 14, y),
                            (x + 8, y + 6),
                            (x + 2, y),
                            (x + 8, y - 6),
                        ],
                        c.stroke_width(2),
                    )
                });
        }
        chart
            .configure_series_labels()
            .label_font(font(13))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}
