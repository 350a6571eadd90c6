//! A compact Gaussian-process regression for the surrogate strategy: Matérn 5/2 kernel with one
//! length scale (chosen by marginal likelihood from a short grid at every fit), standardised
//! targets, a Cholesky factor, and expected improvement. Hand-written because the models are
//! tiny (at most a few hundred points) and the Rust GP crates pull in a linear-algebra stack
//! larger than this file for one Cholesky factorisation.

/// Length scales tried at each fit (inputs are in [0, 1] per dimension, scaled by sqrt(dims)).
const LENGTH_SCALES: [f64; 6] = [0.1, 0.2, 0.3, 0.5, 0.8, 1.2];
/// Noise variance relative to the standardised signal: measurements repeat to ~1%.
const NOISE: f64 = 1e-3;

pub(crate) struct Gp {
    dims: usize,
    x: Vec<f64>,
    /// Lower-triangular Cholesky factor of K + noise, row-major n x n.
    l: Vec<f64>,
    alpha: Vec<f64>,
    mean: f64,
    scale: f64,
    length: f64,
    n: usize,
}

fn matern52(r: f64) -> f64 {
    let s = 5f64.sqrt() * r;
    (1.0 + s + s * s / 3.0) * (-s).exp()
}

fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q) * (p - q))
        .sum::<f64>()
        .sqrt()
}

/// In-place Cholesky of a symmetric positive-definite n x n matrix; None when it is not.
fn cholesky(a: &mut [f64], n: usize) -> Option<()> {
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= a[j * n + k] * a[j * n + k];
        }
        if d <= 0.0 || !d.is_finite() {
            return None;
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / d;
        }
        for k in j + 1..n {
            a[j * n + k] = 0.0;
        }
    }
    Some(())
}

/// Solves L z = b (forward substitution).
fn forward(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= l[i * n + k] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
}

/// Solves L^T z = b (back substitution).
fn backward(l: &[f64], n: usize, b: &mut [f64]) {
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= l[k * n + i] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
}

impl Gp {
    /// Fits `y` at `x` (n rows of `dims`); None when there are no points.
    pub fn fit(x: &[f64], y: &[f64], dims: usize) -> Option<Gp> {
        let n = y.len();
        if n == 0 || x.len() != n * dims {
            return None;
        }
        let mean = y.iter().sum::<f64>() / n as f64;
        let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
        let scale = if var > 1e-12 { var.sqrt() } else { 1.0 };
        let ys: Vec<f64> = y.iter().map(|v| (v - mean) / scale).collect();
        let root = (dims.max(1) as f64).sqrt();
        let mut best: Option<(f64, Gp)> = None;
        for &ls in &LENGTH_SCALES {
            let length = ls * root;
            let mut k = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..=i {
                    let v = matern52(
                        distance(&x[i * dims..(i + 1) * dims], &x[j * dims..(j + 1) * dims])
                            / length,
                    );
                    k[i * n + j] = v;
                    k[j * n + i] = v;
                }
                k[i * n + i] += NOISE;
            }
            if cholesky(&mut k, n).is_none() {
                continue;
            }
            let mut alpha = ys.clone();
            forward(&k, n, &mut alpha);
            // log marginal likelihood up to a constant: -1/2 y^T K^-1 y - sum ln L_ii
            let fit = -0.5 * alpha.iter().map(|a| a * a).sum::<f64>()
                - (0..n).map(|i| k[i * n + i].ln()).sum::<f64>();
            backward(&k, n, &mut alpha);
            if best.as_ref().is_none_or(|(b, _)| fit > *b) {
                best = Some((
                    fit,
                    Gp {
                        dims,
                        x: x.to_vec(),
                        l: k,
                        alpha,
                        mean,
                        scale,
                        length,
                        n,
                    },
                ));
            }
        }
        best.map(|(_, g)| g)
    }

    /// Predictive mean and standard deviation at `z`, in the units of the fitted `y`.
    pub fn predict(&self, z: &[f64]) -> (f64, f64) {
        let mut k: Vec<f64> = (0..self.n)
            .map(|i| {
                matern52(distance(&self.x[i * self.dims..(i + 1) * self.dims], z) / self.length)
            })
            .collect();
        let mu: f64 = k.iter().zip(&self.alpha).map(|(a, b)| a * b).sum();
        forward(&self.l, self.n, &mut k);
        let var = (1.0 + NOISE - k.iter().map(|v| v * v).sum::<f64>()).max(1e-12);
        (self.mean + mu * self.scale, var.sqrt() * self.scale)
    }
}

/// Expected improvement below `best` of a normal prediction (mean `mu`, deviation `sigma`).
pub(crate) fn expected_improvement(mu: f64, sigma: f64, best: f64) -> f64 {
    if sigma <= 0.0 {
        return (best - mu).max(0.0);
    }
    let z = (best - mu) / sigma;
    (best - mu) * normal_cdf(z) + sigma * normal_pdf(z)
}

fn normal_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Abramowitz and Stegun 7.1.26 through erf; error below 1.5e-7, ample for ranking points.
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_and_is_uncertain_far_away() {
        let x = [0.0, 0.25, 0.5, 0.75, 1.0];
        let y: Vec<f64> = x.iter().map(|v: &f64| (v - 0.4).powi(2)).collect();
        let gp = Gp::fit(&x, &y, 1).expect("fits");
        for (xi, yi) in x.iter().zip(&y) {
            let (m, s) = gp.predict(&[*xi]);
            assert!((m - yi).abs() < 0.02, "mean {m} at {xi}, want {yi}");
            assert!(s < 0.05);
        }
        let (_, far) = gp.predict(&[3.0]);
        let (_, near) = gp.predict(&[0.5]);
        assert!(far > 5.0 * near);
    }

    #[test]
    fn expected_improvement_prefers_low_mean_and_high_spread() {
        assert!(expected_improvement(0.0, 1.0, 1.0) > expected_improvement(0.5, 1.0, 1.0));
        assert!(expected_improvement(1.0, 2.0, 1.0) > expected_improvement(1.0, 1.0, 1.0));
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-4);
    }
}
