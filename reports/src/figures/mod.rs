//! Drawing: one file per figure kind, each a [`Plot`] that draws on any plotters backend, so
//! the same code writes SVG and PNG.

pub mod bars;
pub mod convergence;
pub mod pareto;
pub mod subspace;

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::font::FAMILY;
use crate::ImageFormat;

/// A figure that can draw itself on a plotters drawing area.
pub trait Plot {
    /// Pixel size (SVG user units).
    fn size(&self) -> (u32, u32);
    /// Draws the whole figure on `root` (already sized, not yet filled).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Writes `plot` to `path` in `format`.
pub fn save(plot: &impl Plot, path: &Path, format: ImageFormat) -> Result<(), String> {
    crate::font::ensure_registered();
    let size = plot.size();
    match format {
        ImageFormat::Svg => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            plot.draw(&root)?;
            root.present().map_err(err)
        }
        ImageFormat::Png => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            plot.draw(&root)?;
            root.present().map_err(err)
        }
    }
}

/// plotters errors carry the backend's error type; the report only needs their text.
pub(crate) fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Text style of the given size in the shipped font.
pub(crate) fn font(size: u32) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(&BLACK)
}

/// Series colours: a colour-blind-friendly qualitative set (Okabe-Ito), then plotters'
/// palette for runs beyond it.
pub(crate) fn color(i: usize) -> RGBColor {
    const OKABE_ITO: [RGBColor; 7] = [
        RGBColor(0, 114, 178),
        RGBColor(230, 159, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(86, 180, 233),
        RGBColor(213, 94, 0),
        RGBColor(240, 228, 66),
    ];
    match OKABE_ITO.get(i) {
        Some(c) => *c,
        None => {
            let (r, g, b) = Palette99::pick(i).rgb();
            RGBColor(r, g, b)
        }
    }
}

/// A display unit for a quantity: values are multiplied by `factor` and labelled `unit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub factor: f64,
    pub unit: &'static str,
}

impl Scale {
    /// The unit in which the largest of `values` (in seconds or joules, per `base`) reads
    /// best: s/ms/µs or J/mJ/µJ.
    pub fn for_values(values: impl IntoIterator<Item = f64>, base: &'static str) -> Scale {
        let max = values.into_iter().fold(0.0_f64, f64::max);
        let (factor, unit) = match (base, max) {
            ("s", m) if m > 0.0 && m < 1e-3 => (1e6, "µs"),
            ("s", m) if m > 0.0 && m < 1.0 => (1e3, "ms"),
            ("J", m) if m > 0.0 && m < 1e-3 => (1e6, "µJ"),
            ("J", m) if m > 0.0 && m < 1.0 => (1e3, "mJ"),
            _ => (1.0, base),
        };
        Scale { factor, unit }
    }

    /// No scaling.
    pub fn unit(unit: &'static str) -> Scale {
        Scale { factor: 1.0, unit }
    }
}

/// An axis range that contains every value with a margin, and never collapses to a point.
pub(crate) fn padded_range(values: impl IntoIterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * 0.08
    } else {
        hi.abs().max(1.0) * 0.1
    };
    if !from_zero || lo < 0.0 {
        lo -= pad;
    }
    hi += pad;
    (lo, hi)
}

/// Short number for axis labels: at most three decimals, trailing zeros dropped, so a
/// mesh reads 5, 10, 15 rather than 5.00, 10.0, 15.0.
pub(crate) fn tick(v: f64) -> String {
    let a = v.abs();
    let text = if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if text.contains('.') {
        let t = text.trim_end_matches('0').trim_end_matches('.');
        if t == "-0" {
            "0".into()
        } else {
            t.to_string()
        }
    } else {
        text
    }
}

/// Axis labels for an axis spanning `range`: [`tick`]'s, with as many more decimals as a
/// narrow axis needs to tell its labels apart (gaps of a few cost units on a large instance
/// span 1e-4 %, and every label read "0").
pub(crate) fn ticks_for(range: (f64, f64)) -> impl Fn(&f64) -> String {
    let span = (range.1 - range.0).abs();
    let decimals = if span.is_finite() && span > 0.0 && span < 1.0 {
        Some(((2.0 - span.log10().floor()) as usize).clamp(3, 12))
    } else {
        None
    };
    move |v: &f64| match decimals {
        None => tick(*v),
        Some(d) => {
            let text = format!("{v:.d$}");
            let t = text.trim_end_matches('0').trim_end_matches('.');
            if t == "-0" {
                "0".to_string()
            } else {
                t.to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_axes_get_the_decimals_they_need() {
        let t = ticks_for((0.0, 4e-4));
        assert_eq!(t(&0.0), "0");
        assert_eq!(t(&1e-4), "0.0001");
        assert_eq!(t(&2.5e-5), "0.000025");
        assert_eq!(t(&-1e-18), "0");
        let wide = ticks_for((0.0, 300.0));
        assert_eq!(wide(&280.0), "280");
        assert_eq!(ticks_for((0.0, 0.5))(&0.125), "0.125");
    }

    #[test]
    fn scales_pick_readable_units() {
        assert_eq!(Scale::for_values([0.004, 0.02], "s").unit, "ms");
        assert_eq!(Scale::for_values([2.0], "s").unit, "s");
        assert_eq!(Scale::for_values([0.0004], "s").unit, "µs");
        assert_eq!(Scale::for_values([0.5], "J").unit, "mJ");
        assert_eq!(Scale::for_values([], "J").unit, "J");
    }

    #[test]
    fn ticks_drop_trailing_zeros() {
        assert_eq!(tick(5.0), "5");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.125), "0.125");
        assert_eq!(tick(280.0), "280");
        assert_eq!(tick(-0.0001), "0");
        assert_eq!(tick(12345.6), "12346");
    }

    #[test]
    fn ranges_never_collapse() {
        let (lo, hi) = padded_range([2.0, 2.0], false);
        assert!(lo < 2.0 && hi > 2.0);
        assert_eq!(padded_range([], true), (0.0, 1.0));
        let (lo, _) = padded_range([1.0, 3.0], true);
        assert_eq!(lo, 0.0);
    }
}
