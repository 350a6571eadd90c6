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

/// Taillard's flowshop instance for `jobs` x `machines` from `time_seed`: times in 1..=99,
/// drawn machine by machine, each machine's jobs in order.
///
/// The name is `gen-{jobs}x{machines}-{time_seed}`; the seed is kept in `time_seed`.
/// Taillard's seeds lie in 1..2^31-1; others are first reduced modulo 2^31 - 1 so that every
/// seed gives a valid instance (0 is a fixed point of the generator: all times are 1).
///
/// # Panics
/// If `jobs` or `machines` is 0 (a caller error, not a user input error).
pub fn generate(jobs: usize, machines: usize, time_seed: i64) -> Instance {
    assert!(
        jobs >= 1 && machines >= 1,
        "generate needs at least one job and one machine"
    );
    let mut seed = time_seed.rem_euclid(MODULUS);
    let times: Vec<i64> = (0..jobs * machines)
        .map(|_| unif(&mut seed, 1, 99))
        .collect();
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
