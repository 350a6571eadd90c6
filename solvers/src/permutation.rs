//! Permutations: the solution representation of QAP (facility -> location) and PFSP (job order).

use rand::seq::SliceRandom;
use rand::Rng;

/// Why a sequence is not a permutation of 0..n.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PermutationError {
    #[error("has {found} entries, expected {expected}")]
    Length { expected: usize, found: usize },
    #[error("entry {position} is {value}, outside 0..{n}")]
    OutOfRange {
        position: usize,
        value: usize,
        n: usize,
    },
    #[error("value {value} appears twice (positions {first} and {second})")]
    Duplicate {
        value: usize,
        first: usize,
        second: usize,
    },
}

impl PermutationError {
    /// The complaint in the numbering a user wrote: positions count from 1, values from
    /// `base` (1 for QAPLIB and TSPLIB files, 0 for 0-based ones).
    pub fn describe(&self, base: usize) -> String {
        match *self {
            PermutationError::Length { expected, found } => {
                format!("it has {found} values, the instance needs {expected}")
            }
            PermutationError::OutOfRange { position, value, n } => format!(
                "the value at position {} is {}, outside {base}..={}",
                position + 1,
                value + base,
                n - 1 + base
            ),
            PermutationError::Duplicate {
                value,
                first,
                second,
            } => format!(
                "{} appears twice (at positions {} and {})",
                value + base,
                first + 1,
                second + 1
            ),
        }
    }
}

/// Checks that `p` is a permutation of 0..n.
pub fn check(p: &[usize], n: usize) -> Result<(), PermutationError> {
    if p.len() != n {
        return Err(PermutationError::Length {
            expected: n,
            found: p.len(),
        });
    }
    let mut seen = vec![usize::MAX; n];
    for (position, &value) in p.iter().enumerate() {
        if value >= n {
            return Err(PermutationError::OutOfRange { position, value, n });
        }
        if seen[value] != usize::MAX {
            return Err(PermutationError::Duplicate {
                value,
                first: seen[value],
                second: position,
            });
        }
        seen[value] = position;
    }
    Ok(())
}

/// The identity permutation of size n.
pub fn identity(n: usize) -> Vec<usize> {
    (0..n).collect()
}

/// A uniformly random permutation of size n.
pub fn random<R: Rng + ?Sized>(n: usize, rng: &mut R) -> Vec<usize> {
    let mut p = identity(n);
    p.shuffle(rng);
    p
}

/// The inverse permutation: `inverse(p)[p[i]] == i`.
pub fn inverse(p: &[usize]) -> Vec<usize> {
    let mut q = vec![0; p.len()];
    for (i, &v) in p.iter().enumerate() {
        q[v] = i;
    }
    q
}

/// Formats a 0-based permutation 1-based, as benchmark files and papers write them.
pub fn one_based(p: &[usize]) -> Vec<usize> {
    p.iter().map(|&v| v + 1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_rejects_each_defect() {
        assert!(check(&[2, 0, 1], 3).is_ok());
        assert!(matches!(
            check(&[0, 1], 3),
            Err(PermutationError::Length { .. })
        ));
        assert!(matches!(
            check(&[0, 1, 3], 3),
            Err(PermutationError::OutOfRange { value: 3, .. })
        ));
        assert!(matches!(
            check(&[0, 1, 1], 3),
            Err(PermutationError::Duplicate {
                value: 1,
                first: 1,
                second: 2
            })
        ));
    }

    #[test]
    fn inverse_inverts() {
        let p = vec![3, 0, 2, 1];
        let q = inverse(&p);
        for i in 0..4 {
            assert_eq!(q[p[i]], i);
        }
    }
}
