//! TSPLIB's integer distance functions (Reinelt, TSPLIB95), exactly as the library defines
//! them, so that tour lengths match the published optima.
//!
//! `nint(x) = (int)(x + 0.5)`. GEO uses PI = 3.141592 (not `std::f64::consts::PI`) and
//! truncates the degrees with `(int)`; both are what reproduces the optimal tours.

/// How the distance between two cities is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EdgeWeightType {
    /// `nint(sqrt(dx^2 + dy^2))`
    #[serde(rename = "EUC_2D")]
    Euc2d,
    /// `ceil(sqrt(dx^2 + dy^2))`
    #[serde(rename = "CEIL_2D")]
    Ceil2d,
    /// Pseudo-Euclidean (att48, att532).
    Att,
    /// Geographical distance on an idealised sphere (coordinates are DDD.MM).
    Geo,
    /// Distances given as a matrix.
    Explicit,
}

impl EdgeWeightType {
    pub fn name(self) -> &'static str {
        match self {
            EdgeWeightType::Euc2d => "EUC_2D",
            EdgeWeightType::Ceil2d => "CEIL_2D",
            EdgeWeightType::Att => "ATT",
            EdgeWeightType::Geo => "GEO",
            EdgeWeightType::Explicit => "EXPLICIT",
        }
    }
}

#[inline]
fn nint(x: f64) -> i64 {
    (x + 0.5) as i64
}

#[inline]
pub fn euc_2d(a: (f64, f64), b: (f64, f64)) -> i64 {
    let (dx, dy) = (a.0 - b.0, a.1 - b.1);
    nint((dx * dx + dy * dy).sqrt())
}

#[inline]
pub fn ceil_2d(a: (f64, f64), b: (f64, f64)) -> i64 {
    let (dx, dy) = (a.0 - b.0, a.1 - b.1);
    (dx * dx + dy * dy).sqrt().ceil() as i64
}

#[inline]
pub fn att(a: (f64, f64), b: (f64, f64)) -> i64 {
    let (dx, dy) = (a.0 - b.0, a.1 - b.1);
    let r = ((dx * dx + dy * dy) / 10.0).sqrt();
    let t = nint(r);
    if (t as f64) < r {
        t + 1
    } else {
        t
    }
}

/// TSPLIB's PI for GEO distances.
#[allow(clippy::approx_constant)] // TSPLIB's value, not M_PI: it changes distances
pub const GEO_PI: f64 = 3.141592;
/// TSPLIB's earth radius for GEO distances.
pub const GEO_RRR: f64 = 6378.388;

/// A GEO coordinate (DDD.MM, degrees and minutes) in radians, as TSPLIB converts it.
#[inline]
pub fn geo_radians(x: f64) -> f64 {
    let deg = x.trunc();
    let min = x - deg;
    GEO_PI * (deg + 5.0 * min / 3.0) / 180.0
}

/// GEO distance between two points given in radians (latitude, longitude).
#[inline]
pub fn geo(a: (f64, f64), b: (f64, f64)) -> i64 {
    let q1 = (a.1 - b.1).cos();
    let q2 = (a.0 - b.0).cos();
    let q3 = (a.0 + b.0).cos();
    (GEO_RRR * (0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)).acos() + 1.0) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_rules() {
        // 3-4-5 triangle and a non-integer distance sqrt(2) = 1.414...
        assert_eq!(euc_2d((0.0, 0.0), (3.0, 4.0)), 5);
        assert_eq!(euc_2d((0.0, 0.0), (1.0, 1.0)), 1);
        assert_eq!(euc_2d((0.0, 0.0), (1.5, 0.0)), 2);
        assert_eq!(ceil_2d((0.0, 0.0), (1.0, 1.0)), 2);
        assert_eq!(ceil_2d((0.0, 0.0), (3.0, 4.0)), 5);
        // ATT: sqrt(100/10) = 3.162..., nint 3 < r so 4; sqrt(90/10) = 3 exactly.
        assert_eq!(att((0.0, 0.0), (10.0, 0.0)), 4);
        assert_eq!(att((0.0, 0.0), (9.0, 3.0)), 3);
    }

    #[test]
    #[allow(clippy::approx_constant)]
    fn geo_uses_tsplib_pi_and_degree_minutes() {
        // 180 degrees is TSPLIB's PI, not M_PI (the 33 optimal tours do not tell them apart).
        assert_eq!(geo_radians(180.0), 3.141592);
        assert_ne!(geo_radians(180.0), std::f64::consts::PI);
        // 16.47 means 16 degrees 47 minutes.
        let r = geo_radians(16.47);
        assert!((r - GEO_PI * (16.0 + 5.0 * 0.47 / 3.0) / 180.0).abs() < 1e-15);
        let a = (geo_radians(16.47), geo_radians(96.10));
        assert_eq!(geo(a, a), 1, "TSPLIB's GEO adds 1.0 before truncating");
    }
}
