//! Grouped horizontal bars: one group per class, one bar per series (Figs. 3 to 6).
//!
//! Horizontal, so class names of any length sit in the label area instead of colliding
//! under the x axis.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{color, err, font, padded_range, tick, Plot, Scale};
use crate::data::Bars;

/// What a bar without a value (failed, rejected by the quality guard, not measured) shows.
pub const NO_VALUE: &str = "no value";

/// Height of the legend strip under the panels.
const LEGEND_H: u32 = 40;

/// One or more bar panels side by side under one title.
pub struct BarsPlot<'a> {
    pub title: String,
    pub panels: &'a [Bars],
}

/// Display scale of a panel (time panels pick s/ms/µs).
pub fn bar_scale(b: &Bars) -> Scale {
    if b.is_time {
        Scale::for_values(
            b.series
                .iter()
                .flat_map(|(_, v)| v.iter().flatten().copied()),
            "s",
        )
    } else {
        Scale::unit("")
    }
}

/// X axis description of a panel, with the unit of its scale.
pub fn bar_desc(b: &Bars) -> String {
    if b.is_time {
        format!("{} ({})", b.y_label, bar_scale(b).unit)
    } else {
        b.y_label.clone()
    }
}

impl BarsPlot<'_> {
    fn categories(&self) -> usize {
        self.panels
            .iter()
            .map(|b| b.categories.len())
            .max()
            .unwrap_or(0)
    }

    fn series(&self) -> usize {
        self.panels
            .iter()
            .map(|b| b.series.len())
            .max()
            .unwrap_or(0)
    }

    /// Width of the class-name label area: about 7.5 px a character in the 13 px font.
    fn label_width(&self) -> u32 {
        let longest = self
            .panels
            .iter()
            .flat_map(|b| b.categories.iter())
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(4);
        (longest as u32 * 15 / 2 + 16).clamp(60, 320)
    }
}

impl BarsPlot<'_> {
    /// One legend for all panels, outside the plotting areas so it never hides a bar.
    fn draw_legend<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let mut entries: Vec<(String, RGBColor, bool)> = Vec::new();
        if let Some(b) = self.panels.first() {
            for (s, (name, _)) in b.series.iter().enumerate() {
                entries.push((name.clone(), color(s), true));
            }
            if let Some(r) = b.reference {
                entries.push((
                    format!("baseline = {}", tick(r)),
                    RGBColor(90, 90, 90),
                    false,
                ));
            }
        }
        let style = font(13);
        let mut x = 20i32;
        for (name, c, filled) in entries {
            if filled {
                area.draw(&Rectangle::new([(x, 14), (x + 14, 26)], c.filled()))
                    .map_err(err)?;
            } else {
                area.draw(&PathElement::new(
                    vec![(x + 7, 10), (x + 7, 30)],
                    c.stroke_width(2),
                ))
                .map_err(err)?;
            }
            area.draw(&Text::new(name.clone(), (x + 20, 13), style.clone()))
                .map_err(err)?;
            let (w, _) = area.estimate_text_size(&name, &style).map_err(err)?;
            x += 20 + w as i32 + 28;
        }
        Ok(())
    }
}

impl Plot for BarsPlot<'_> {
    fn size(&self) -> (u32, u32) {
        let group = 14 * self.series().max(1) as u32 + 12;
        let h = (120 + LEGEND_H + group * self.categories() as u32).max(320);
        let w = 260 + 520 * self.panels.len().max(1) as u32;
        (w.min(1600), h.min(4000))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(&self.title, font(20)).map_err(err)?;
        let (_, h) = root.dim_in_pixel();
        let (panels_area, legend_area) = root.split_vertically(h.saturating_sub(LEGEND_H));
        self.draw_legend(&legend_area)?;
        let areas = panels_area.split_evenly((1, self.panels.len().max(1)));
        for (b, area) in self.panels.iter().zip(areas.iter()) {
            let scale = bar_scale(b);
            let n = b.categories.len();
            let values = b
                .series
                .iter()
                .flat_map(|(_, v)| v.iter().flatten().map(|x| x * scale.factor));
            let xr = padded_range(values.chain(b.reference), true);
            let mut chart = ChartBuilder::on(area)
                .margin(12)
                .x_label_area_size(44)
                .y_label_area_size(self.label_width())
                .build_cartesian_2d(xr.0..xr.1, -0.5..n as f64 - 0.5)
                .map_err(err)?;
            let cats = b.categories.clone();
            // Category i sits at y = n - 1 - i (the first class on top, as in the table); the
            // mesh asks for n labels so its step is exactly 1 and every class gets its name,
            // nothing in between.
            let name = move |v: &f64| {
                let i = v.round();
                if (v - i).abs() < 1e-6 && i >= 0.0 && i < n as f64 {
                    cats.get(n - 1 - i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            };
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(n.max(1))
                .y_label_formatter(&name)
                .x_label_formatter(&|v| tick(*v))
                .x_desc(bar_desc(b))
                .label_style(font(13))
                .axis_desc_style(font(14))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(err)?;
            let k = b.series.len().max(1) as f64;
            let band = 0.8 / k;
            for (s, (_, vals)) in b.series.iter().enumerate() {
                let c = color(s);
                // Series top to bottom in legend order within each group.
                let top = |i: usize| (n - 1 - i) as f64 + 0.4 - s as f64 * band;
                let rects: Vec<Rectangle<(f64, f64)>> = vals
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| {
                        let v = (*v)? * scale.factor;
                        Some(Rectangle::new(
                            [(0.0, top(i)), (v, top(i) - band * 0.92)],
                            c.filled(),
                        ))
                    })
                    .collect();
                chart.draw_series(rects).map_err(err)?;
                // A bar of 0 has no width and a missing value no bar: without a mark the two
                // (and a failed or rejected point, which has no value) look alike.
                let width = (xr.1 - xr.0).abs().max(f64::MIN_POSITIVE);
                let mut zeros = Vec::new();
                let mut missing = Vec::new();
                for (i, v) in vals.iter().enumerate() {
                    let middle = top(i) - band * 0.46;
                    match v {
                        Some(v) if (v * scale.factor).abs() <= width * 0.002 => {
                            zeros.push(PathElement::new(
                                vec![(0.0, top(i)), (0.0, top(i) - band * 0.92)],
                                c.stroke_width(3),
                            ))
                        }
                        Some(_) => {}
                        None => missing.push(Text::new(
                            NO_VALUE,
                            (xr.0.max(0.0) + width * 0.01, middle + band * 0.3),
                            font(11).color(&c),
                        )),
                    }
                }
                chart.draw_series(zeros).map_err(err)?;
                chart.draw_series(missing).map_err(err)?;
            }
            if let Some(r) = b.reference {
                let grey = RGBColor(90, 90, 90);
                chart
                    .draw_series(LineSeries::new(vec![(r, -0.5), (r, n as f64 - 0.5)], grey))
                    .map_err(err)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A missing value says so in the figure; a value of 0 draws a mark of its own.
    #[test]
    fn missing_values_and_zeros_are_marked() {
        let bars = Bars {
            y_label: "gap (%)".into(),
            is_time: false,
            categories: vec!["a".into(), "b".into(), "c".into()],
            series: vec![("tuned".into(), vec![Some(0.5), None, Some(0.0)])],
            reference: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bars.svg");
        let plot = BarsPlot {
            title: "t".into(),
            panels: std::slice::from_ref(&bars),
        };
        crate::figures::save(&plot, &path, crate::ImageFormat::Svg).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert_eq!(svg.matches(NO_VALUE).count(), 1, "{svg}");
        let everything = Bars {
            series: vec![("tuned".into(), vec![Some(0.5), Some(0.2), Some(0.1)])],
            ..bars
        };
        let plot = BarsPlot {
            title: "t".into(),
            panels: std::slice::from_ref(&everything),
        };
        crate::figures::save(&plot, &path, crate::ImageFormat::Svg).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(!svg.contains(NO_VALUE), "{svg}");
    }
}
