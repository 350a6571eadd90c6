//! Memory a solver is about to allocate, checked against what the process may still get.
//!
//! A solver whose matrices grow with the input (the Ant System's n x n trails: 8 GB at 16,000
//! cities) estimates its need first and is refused with that need named, instead of aborting
//! on a failed allocation or pushing the machine into swap. What the process may get is the
//! least of the memory the kernel reports available (`MemAvailable`) and what the address
//! space and data limits (`ulimit -v`, `ulimit -d`) leave above the current use. Where none of
//! these can be read (not Linux), nothing is refused.

/// The bytes this process may still allocate, if the system says.
pub fn available_bytes() -> Option<u64> {
    let mut least: Option<u64> = None;
    let mut take = |v: u64| least = Some(least.map_or(v, |l| l.min(v)));
    if let Ok(text) = std::fs::read_to_string("/proc/meminfo") {
        if let Some(kib) = field_kib(&text, "MemAvailable:") {
            take(kib.saturating_mul(1024));
        }
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Ok(limits) = std::fs::read_to_string("/proc/self/limits") {
        for (limit, used) in [
            ("Max address space", "VmSize:"),
            ("Max data size", "VmData:"),
        ] {
            if let Some(max) = soft_limit(&limits, limit) {
                let used = field_kib(&status, used).unwrap_or(0).saturating_mul(1024);
                take(max.saturating_sub(used));
            }
        }
    }
    least
}

/// `KEY:   123 kB` in /proc's status-style files.
fn field_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// The soft limit of one row of /proc/self/limits, in bytes; `None` when unlimited.
fn soft_limit(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// Bytes in GB with one decimal, as messages name them.
pub fn gb(bytes: u128) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

/// Refuses `need` bytes for `what` (a plural: "the matrices ...") when the process cannot
/// get them; the message names the need, what is available and what to change.
pub fn check(need: u128, what: &str) -> Result<(), String> {
    let Some(available) = available_bytes() else {
        return Ok(());
    };
    if need > u128::from(available) {
        return Err(format!(
            "{what} take {} of memory, and only {} is available to this process; use a \
             smaller instance (or fewer ants), or free memory",
            gb(need),
            gb(u128::from(available))
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_proc_formats() {
        assert_eq!(
            field_kib(
                "MemTotal: 10 kB\nMemAvailable:   2048 kB\n",
                "MemAvailable:"
            ),
            Some(2048)
        );
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max data size             unlimited            unlimited            bytes\n\
                      Max address space         4096000000           unlimited            bytes\n";
        assert_eq!(soft_limit(limits, "Max address space"), Some(4_096_000_000));
        assert_eq!(soft_limit(limits, "Max data size"), None);
        assert!(check(u128::MAX, "a test").is_err() || available_bytes().is_none());
        assert!(check(1, "a test").is_ok());
    }
}
