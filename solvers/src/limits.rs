//! The ranges of numbers users hand to mats (campaign keys, bundle manifests, flags,
//! daemon requests), checked where they are parsed, with one error format: the key, the
//! value (cut to a readable length) and the allowed range. `mats tune`, `mats submit` and
//! the daemon share these checks because they share the parsers that call them.

use std::time::Duration;

/// The longest wall-clock quantity (a run's budget, a campaign's wall time): about 31
/// years, far beyond any run and far below where `Duration` and `Instant` arithmetic
/// overflow (1e308 used to panic in a duration conversion).
pub const MAX_SECONDS: f64 = 1e9;

/// The most production runs (seeds) per instance: each is a measured run, and the seed list
/// is allocated up front (2,147,483,648 seeds asked for 16 GiB and aborted).
pub const MAX_SEEDS: u32 = 10_000;

/// How much of a user's value an error quotes.
const QUOTE_CHARS: usize = 40;

/// A value as an error quotes it: whole when short, else its head and its length.
pub fn cut(value: &str) -> String {
    if value.chars().count() <= QUOTE_CHARS {
        value.to_string()
    } else {
        let head: String = value.chars().take(QUOTE_CHARS).collect();
        format!("{head}... ({} bytes)", value.len())
    }
}

/// The one format of a value outside its range, for callers that name the key themselves
/// (a campaign's `error_at` adds the file, line and key).
pub fn range_message(value: impl std::fmt::Display, range: &str) -> String {
    format!(
        "{} is out of range; allowed: {range}",
        cut(&value.to_string())
    )
}

/// `` `key` = value is out of range; allowed: range ``
pub fn out_of_range(key: &str, value: impl std::fmt::Display, range: &str) -> String {
    format!("`{}` = {}", cut(key), range_message(value, range))
}

/// The allowed range of [`seconds`], as messages write it.
pub fn seconds_range() -> String {
    format!("a number of seconds > 0 and <= {MAX_SECONDS:e}")
}

/// A number as errors show it: exponent form where plain digits would run long (`1e308`,
/// not 309 digits).
pub fn number(value: f64) -> String {
    if value != 0.0 && !(1e-6..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// A positive, finite number of seconds up to [`MAX_SECONDS`], as a `Duration`; the error is
/// [`range_message`]'s.
pub fn seconds(value: f64) -> Result<Duration, String> {
    if value.is_finite() && value > 0.0 && value <= MAX_SECONDS {
        Duration::try_from_secs_f64(value)
            .map_err(|_| range_message(number(value), &seconds_range()))
    } else {
        Err(range_message(number(value), &seconds_range()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_bounded_and_errors_quote_briefly() {
        assert_eq!(seconds(2.5).unwrap(), Duration::from_millis(2500));
        for bad in [0.0, -1.0, 1e308, f64::NAN, f64::INFINITY, 2e9] {
            let e = seconds(bad).unwrap_err();
            assert!(e.contains("out of range") && e.contains("1e9"), "{e}");
            assert!(e.len() < 100, "{e}");
        }
        let long = "x".repeat(100_000);
        let e = out_of_range("key", &long, "1 to 2");
        assert!(e.len() < 120, "{e}");
        assert!(
            e.starts_with("`key` = xxx") && e.contains("(100000 bytes)"),
            "{e}"
        );
    }
}
