//! Mutations of an input: byte-level (flip, set, delete, duplicate, truncate), token-level
//! (replace a number with an extreme one, insert a keyword of the format, repeat a line) and
//! splicing two inputs. One to four are stacked per input.

use rand::Rng;

/// Numbers at the edges of what parsers and arithmetic handle.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "3",
    "-0",
    "4294967296",
    "2147483648",
    "46341",
    "65536",
    "1000000",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "18446744073709551616",
    "99999999999999999999999",
    "1e19",
    "1e308",
    "-1e308",
    "1e-300",
    "NaN",
    "inf",
    "0.5",
    "1.5",
    "2305843009213693952",
];

/// Bytes that matter to the formats.
const BYTES: &[u8] = b"\0\n\r\t -+.:#\"'[]{}()=!&|,0123456789eE\xff\xc3";

/// Applies one to four mutations to `input`; `other` is another corpus entry for splicing and
/// `dictionary` the format's keywords. The result is at most `max_len` bytes.
pub fn mutate(
    rng: &mut impl Rng,
    input: &[u8],
    other: &[u8],
    dictionary: &[&str],
    max_len: usize,
) -> Vec<u8> {
    let mut data = input.to_vec();
    let rounds = rng.random_range(1..=4);
    for _ in 0..rounds {
        match rng.random_range(0..10) {
            0 => flip_bit(rng, &mut data),
            1 => set_byte(rng, &mut data),
            2 => delete_range(rng, &mut data),
            3 => duplicate_range(rng, &mut data),
            4 | 5 => replace_number(rng, &mut data),
            6 => insert_word(rng, &mut data, dictionary),
            7 => repeat_line(rng, &mut data),
            8 => splice(rng, &mut data, other),
            _ => truncate(rng, &mut data),
        }
    }
    data.truncate(max_len);
    data
}

fn position(rng: &mut impl Rng, data: &[u8]) -> usize {
    if data.is_empty() {
        0
    } else {
        rng.random_range(0..=data.len())
    }
}

fn flip_bit(rng: &mut impl Rng, data: &mut [u8]) {
    if !data.is_empty() {
        let i = rng.random_range(0..data.len());
        data[i] ^= 1 << rng.random_range(0..8);
    }
}

fn set_byte(rng: &mut impl Rng, data: &mut Vec<u8>) {
    let b = BYTES[rng.random_range(0..BYTES.len())];
    if data.is_empty() || rng.random_bool(0.3) {
        let at = position(rng, data);
        data.insert(at, b);
    } else {
        let i = rng.random_range(0..data.len());
        data[i] = b;
    }
}

fn delete_range(rng: &mut impl Rng, data: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    let start = rng.random_range(0..data.len());
    let len = rng.random_range(1..=64.min(data.len() - start));
    data.drain(start..start + len);
}

fn duplicate_range(rng: &mut impl Rng, data: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    let start = rng.random_range(0..data.len());
    let len = rng.random_range(1..=1024.min(data.len() - start));
    let chunk = data[start..start + len].to_vec();
    let at = position(rng, data);
    data.splice(at..at, chunk);
}

/// Replaces a run of digits (with its sign and fraction) by an extreme number.
fn replace_number(rng: &mut impl Rng, data: &mut Vec<u8>) {
    let starts: Vec<usize> = (0..data.len())
        .filter(|&i| data[i].is_ascii_digit() && (i == 0 || !data[i - 1].is_ascii_digit()))
        .collect();
    let number = NUMBERS[rng.random_range(0..NUMBERS.len())].as_bytes();
    if starts.is_empty() {
        let at = position(rng, data);
        data.splice(at..at, number.iter().copied());
        return;
    }
    let mut start = starts[rng.random_range(0..starts.len())];
    if start > 0 && data[start - 1] == b'-' {
        start -= 1;
    }
    let mut end = start + 1;
    while end < data.len()
        && (data[end].is_ascii_digit() || matches!(data[end], b'.' | b'e' | b'E'))
    {
        end += 1;
    }
    data.splice(start..end, number.iter().copied());
}

fn insert_word(rng: &mut impl Rng, data: &mut Vec<u8>, dictionary: &[&str]) {
    if dictionary.is_empty() {
        return;
    }
    let word = dictionary[rng.random_range(0..dictionary.len())].as_bytes();
    let at = position(rng, data);
    data.splice(at..at, word.iter().copied());
}

/// Repeats one line many times: long sections, deep nesting, many declarations.
fn repeat_line(rng: &mut impl Rng, data: &mut Vec<u8>) {
    let breaks: Vec<usize> = (0..data.len()).filter(|&i| data[i] == b'\n').collect();
    if breaks.len() < 2 {
        return;
    }
    let k = rng.random_range(0..breaks.len() - 1);
    let line = data[breaks[k] + 1..=breaks[k + 1]].to_vec();
    let times = rng.random_range(2..=200);
    let at = breaks[k + 1] + 1;
    let repeated: Vec<u8> = line
        .iter()
        .copied()
        .cycle()
        .take(line.len() * times)
        .collect();
    data.splice(at..at, repeated);
}

fn splice(rng: &mut impl Rng, data: &mut Vec<u8>, other: &[u8]) {
    let cut = position(rng, data);
    let from = position(rng, other);
    data.truncate(cut);
    data.extend_from_slice(&other[from.min(other.len())..]);
}

fn truncate(rng: &mut impl Rng, data: &mut Vec<u8>) {
    let at = position(rng, data);
    data.truncate(at);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn mutations_change_inputs_and_respect_the_length_cap() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let input = b"12\n1 2 3\n4 5 6\n7 8 9\n".to_vec();
        let mut changed = 0;
        for _ in 0..200 {
            let out = mutate(&mut rng, &input, b"HWSW 1 0 0\n", &["EOF"], 64);
            assert!(out.len() <= 64);
            changed += usize::from(out != input);
        }
        assert!(
            changed > 150,
            "only {changed} of 200 mutations changed the input"
        );
    }
}
