//! The promise "objectives are exact `i64`" made checkable: every instance constructor bounds
//! the largest objective any solution could have and refuses the instance when that bound
//! leaves too little headroom, instead of letting sums wrap around silently.
//!
//! The headroom is a factor of four below `i64::MAX`: solvers form differences of two
//! objectives (swap and flip deltas), sums of a head and a tail (flowshop insertion), and
//! S + C (HW/SW), and each of those must stay exact too.

/// The largest worst-case objective an instance may have: 2^61.
pub const MAX_OBJECTIVE: i128 = 1 << 61;

/// Fails with one line naming the bound when `worst` (a bound on |objective| over all
/// solutions, computed in `i128`) exceeds [`MAX_OBJECTIVE`]; `how` says how it was formed.
pub fn check_worst_case(worst: i128, how: &str) -> Result<(), String> {
    if worst > MAX_OBJECTIVE {
        let shown = if worst == i128::MAX {
            "beyond 1.7e38".to_string()
        } else {
            format!("= {worst}")
        };
        return Err(format!(
            "the worst-case objective {how} {shown} exceeds 2^61 = {MAX_OBJECTIVE}, so \
             objectives could not be computed exactly in 64-bit integers"
        ));
    }
    Ok(())
}

/// `a * b` saturated at `i128::MAX` (inputs are non-negative magnitudes).
pub fn mul(a: i128, b: i128) -> i128 {
    a.saturating_mul(b)
}

/// The sum of the magnitudes, saturated at `i128::MAX`.
pub fn sum_abs(values: impl IntoIterator<Item = i64>) -> i128 {
    values
        .into_iter()
        .fold(0i128, |acc, v| acc.saturating_add(i128::from(v).abs()))
}

/// The largest magnitude (0 for no values).
pub fn max_abs(values: impl IntoIterator<Item = i64>) -> i128 {
    values
        .into_iter()
        .map(|v| i128::from(v).abs())
        .max()
        .unwrap_or(0)
}
