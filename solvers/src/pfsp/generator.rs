//! Taillard's 1993 instance generator, in exact integer arithmetic.
//!
//! Taillard draws with the Park–Miller "minimal standard" generator (multiplier 16807,
//! modulus 2^31 - 1) in Schrage's form, and maps a draw to `low + floor(seed / M * (high -
//! low + 1))` in double precision. We compute `low + floor(seed * (high - low + 1) / M)` in
//! integers instead, which gives the same value for every draw:
//!
//! - `seed * w / M` (w = high - low + 1 <= 99 here, any w < M in general) is never an
//!   integer, since M is prime and 0 < seed < M, 0 < w < M; so its distance to the nearest
//!   integer is at least 1 / M ~ 4.7e-10.
//! - The double computation rounds twice (the division and the product), each with a
//!   relative error of at most 2^-53; for values below 99 that is an absolute error below
//!   99 * 2^-52 ~ 2.2e-14, far below 1 / M, so the floor cannot move.
//!
//! The float32 pitfall noted in PROVENANCE.md (ta120 differs) is exactly this margin
//! failing in single precision. The tests reproduce all 120 Taillard instances.

use super::instance::Instance;

const MODULUS: i64 = 2_147_483_647; // 2^31 - 1
const MULTIPLIER: i64 = 16_807;
const SCHRAGE_Q: i64 = 127_773; // MODULUS / MULTIPLIER
const SCHRAGE_R: i64 = 2_836; // MODULUS % MULTIPLIER

/// One draw of Taillard's `unif(seed, low, high)`; updates `seed` in place.
pub fn unif(seed: &mut i64, low: i64, high: i64) -> i64 {
    let k = *seed / SCHRAGE_Q;
    *seed = MULTIPLIER * (*seed % SCHRAGE_Q) - k * SCHRAGE_R;
    if *seed < 0 {
        *seed += MODULUS;
    }
    let width = (high - low + 1) as i128;
    low + ((*seed as i128 * width) / MODULUS as i128) as i64
}

/// The most processing times a generated instance may hold (jobs x machines): what the
/// parser accepts too, and 800 MB of times.
pub const MAX_GENERATED_TIMES: usize = 100_000_000;

/// Refuses sizes and seeds [`generate`] must not be asked for, in one line naming the
/// parameter (`--jobs` and `jobs` alike: `what` gives the user's spelling of each).
pub fn check_request(
    jobs: usize,
    machines: usize,
    seed: i64,
    what: impl Fn(&str) -> String,
) -> Result<(), String> {
    if jobs == 0 || machines == 0 {
        return Err(format!(
            "{} and {} must be at least 1",
            what("jobs"),
            what("machines")
        ));
    }
    if jobs.saturating_mul(machines) > MAX_GENERATED_TIMES {
        return Err(format!(
            "{} x {} must be at most 10^8, found {jobs} x {machines}",
            what("jobs"),
            what("machines")
        ));
    }
    if !(1..MODULUS).contains(&seed) {
        return Err(format!(
            "{} must be between 1 and 2147483646 (Taillard's generator), found {seed}",
            what("seed")
        ));
    }
    Ok(())
}

/// Taillard's flowshop instance for `jobs` x `machines` from `time_seed`: times in 1..=99,
/// drawn machine by machine, each machine's jobs in order.
///
/// The name is `gen-{jobs}x{machines}-{time_seed}`; the seed is kept in `time_seed`.
/// Taillard's seeds lie in 1..2^31-1; others are first reduced modulo 2^31 - 1 so that every
/// seed gives a valid instance (0 is a fixed point of the generator: all times are 1).
///
/// # Panics
/// If `jobs` or `machines` is 0 or their product overflows (user requests go through
/// [`check_request`] first).
pub fn generate(jobs: usize, machines: usize, time_seed: i64) -> Instance {
    assert!(
        jobs >= 1 && machines >= 1,
        "generate needs at least one job and one machine"
    );
    let mut seed = time_seed.rem_euclid(MODULUS);
    let cells = jobs
        .checked_mul(machines)
        .expect("generate's sizes are checked by check_request");
    let times: Vec<i64> = (0..cells).map(|_| unif(&mut seed, 1, 99)).collect();
    let mut inst = Instance::new(
        format!("gen-{jobs}x{machines}-{time_seed}"),
        jobs,
        machines,
        times,
    )
    .expect("generated times are in 1..=99 and the sizes match");
    inst.time_seed = Some(time_seed);
    inst
}

#[cfg(test)]
mod tests {
    #[test]
    fn requests_beyond_the_caps_are_refused_naming_the_parameter() {
        let check = |j, m, s| super::check_request(j, m, s, |k: &str| format!("--{k}"));
        assert!(check(20, 5, 873_654_221).is_ok());
        assert!(check(0, 5, 1).unwrap_err().contains("--jobs"));
        let huge = check(1 << 32, 1 << 32, 1).unwrap_err();
        assert!(
            huge.contains("10^8") && huge.contains("--machines"),
            "{huge}"
        );
        assert!(check(1_000_000, 1_000_000, 1).is_err());
        assert!(check(10, 10, 0).unwrap_err().contains("--seed"));
        assert!(check(10, 10, 2_147_483_647).is_err());
    }
}
