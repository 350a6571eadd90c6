//! FNV-1a (64-bit): a small stable hash of bytes, the same on every machine and version, for
//! what must not change between runs (an instance's content fingerprint in best-known tables,
//! a class's random stream in the tuner).

/// FNV-1a of `bytes`.
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    /// The published test vectors of 64-bit FNV-1a.
    #[test]
    fn known_values() {
        assert_eq!(super::fnv1a(*b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(super::fnv1a(*b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(super::fnv1a(*b"foobar"), 0x8594_4171_f739_67e8);
    }
}
