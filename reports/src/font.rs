//! The font every figure is drawn with, shipped in the repository and embedded in the binary.
//!
//! plotters' default text stack asks fontconfig/freetype for system fonts; with its `ab_glyph`
//! feature it instead draws from fonts registered here, so a report renders the same on a
//! machine with no fonts installed (CI containers, GPU nodes).

use std::sync::OnceLock;

use plotters::style::FontStyle;

/// DejaVu Sans (Bitstream Vera licence, see `fonts/LICENSE-DejaVu.txt`).
static DEJAVU_SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// The family name figures ask for. plotters resolves `FontFamily::SansSerif` to this name, so
/// registering under it also covers `("sans-serif", size)` styles.
pub const FAMILY: &str = "sans-serif";

/// Registers the embedded font with plotters once per process. Returns false when the font
/// bytes do not parse (which a test guards against), in which case drawing text fails later.
pub fn ensure_registered() -> bool {
    static DONE: OnceLock<bool> = OnceLock::new();
    *DONE.get_or_init(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn embedded_font_registers() {
        assert!(super::ensure_registered());
    }
}
