//! The resource report ptxas writes with `-v`: registers, stack, spills, shared memory.
//!
//! The report is text meant for people, so parsing is lenient: unknown lines are ignored and a
//! missing figure stays 0. Lines look like (CUDA 13):
//!
//! ```text
//! ptxas info    : Compiling entry function 'busy' for 'sm_90'
//! ptxas info    : Function properties for busy
//! ptxas         .     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
//! ptxas info    : Used 12 registers, used 0 barriers, 16 bytes smem, 368 bytes cmem[0]
//! ```

use serde::{Deserialize, Serialize};

/// The resources of one compiled function.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    pub function: String,
    pub registers: u32,
    pub stack_frame_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    pub shared_bytes: u32,
    pub constant_bytes: u32,
}

/// Extracts the per-function resources from a ptxas `-v` log.
pub fn parse_report(log: &str) -> Vec<Resources> {
    let mut out: Vec<Resources> = Vec::new();
    for line in log.lines() {
        let line = line.trim();
        let info = line
            .strip_prefix("ptxas info")
            .map(|rest| rest.trim_start().trim_start_matches(':').trim());
        if let Some(rest) = info {
            if let Some(name) = rest
                .strip_prefix("Compiling entry function '")
                .or_else(|| rest.strip_prefix("Function properties for "))
            {
                let name = name.split('\'').next().unwrap_or(name).trim();
                if !out.iter().any(|r| r.function == name) {
                    out.push(Resources {
                        function: name.to_string(),
                        ..Resources::default()
                    });
                }
                // Later figures belong to the most recently named function.
                if let Some(pos) = out.iter().position(|r| r.function == name) {
                    let r = out.remove(pos);
                    out.push(r);
                }
            } else if let Some(used) = rest.strip_prefix("Used ") {
                if let Some(current) = out.last_mut() {
                    for part in used.split(',') {
                        let part = part.trim().trim_start_matches("used ").trim();
                        let number = leading_number(part);
                        if part.ends_with("registers") {
                            current.registers = number;
                        } else if part.ends_with("bytes smem") {
                            current.shared_bytes = number;
                        } else if part.contains("bytes cmem[0]") {
                            current.constant_bytes = number;
                        }
                    }
                }
            }
        } else if line.contains("bytes stack frame") {
            if let Some(current) = out.last_mut() {
                for part in line.split(',') {
                    let part = part.trim();
                    let number = number_before(part, "bytes");
                    if part.ends_with("stack frame") {
                        current.stack_frame_bytes = number;
                    } else if part.ends_with("spill stores") {
                        current.spill_store_bytes = number;
                    } else if part.ends_with("spill loads") {
                        current.spill_load_bytes = number;
                    }
                }
            }
        }
    }
    out
}

/// The number written just before `unit` ("ptxas . 8 bytes stack frame" gives 8).
fn number_before(text: &str, unit: &str) -> u32 {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    tokens
        .iter()
        .position(|&t| t == unit)
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| tokens[i].parse().ok())
        .unwrap_or(0)
}

fn leading_number(text: &str) -> u32 {
    text.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_cuda_13_report() {
        let log = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'busy' for 'sm_90'
ptxas info    : Function properties for busy
ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 16 bytes smem, 368 bytes cmem[0]
ptxas info    : Compiling entry function 'other' for 'sm_90'
ptxas info    : Function properties for other
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]
";
        let r = parse_report(log);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0],
            Resources {
                function: "busy".into(),
                registers: 40,
                stack_frame_bytes: 8,
                spill_store_bytes: 4,
                spill_load_bytes: 12,
                shared_bytes: 16,
                constant_bytes: 368,
            }
        );
        assert_eq!(r[1].function, "other");
        assert_eq!(r[1].registers, 8);
        assert_eq!(r[1].shared_bytes, 0);
    }

    #[test]
    fn ignores_noise() {
        assert!(parse_report("warning: something\n\n").is_empty());
    }
}
