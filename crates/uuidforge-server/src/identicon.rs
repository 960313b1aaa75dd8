//! UUID identicons (D10): a 5×5 mirrored pattern and two colours computed
//! from a hash of all 128 bits, so values that differ in one bit — two
//! UUIDv7 of the same millisecond — look clearly different.
//!
//! `web/static/uuid-chips.js` draws the same picture in the browser; both
//! implementations check `web/identicon-vectors.json`.
//!
//! ```text
//! h1 = fmix32(fnv1a32(bytes, 0x811c9dc5))                 pattern and background
//! h2 = fmix32(fnv1a32(bytes, 0x050c5d1f) ^ 0x9e3779b9)    foreground colour
//!
//! pattern: bit (c·5 + r) of h1 fills cell (row r, column c) for c in 0..3,
//!          mirrored to column 4 − c
//! fg: hsl(h2 mod 360, 55 + (h2 >> 9) mod 30 %, 38 + (h2 >> 14) mod 18 %)
//! bg: hsl((h1 >> 15) mod 360, 40%, 90%)
//! ```

use uuid::Uuid;

const FNV_PRIME: u32 = 0x0100_0193;

fn fnv1a32(bytes: &[u8], basis: u32) -> u32 {
    bytes
        .iter()
        .fold(basis, |h, &b| (h ^ b as u32).wrapping_mul(FNV_PRIME))
}

/// MurmurHash3's finaliser: every input bit affects every output bit.
const fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// The two 32-bit hashes of a UUID's 16 bytes that the picture is made of.
///
/// ```
/// let (h1, h2) = uuidforge_server::identicon::hashes(&uuid::Uuid::nil());
/// assert_ne!(h1, h2);
/// ```
pub fn hashes(uuid: &Uuid) -> (u32, u32) {
    let bytes = uuid.as_bytes();
    (
        fmix32(fnv1a32(bytes, 0x811c_9dc5)),
        fmix32(fnv1a32(bytes, 0x050c_5d1f) ^ 0x9e37_79b9),
    )
}

/// Which of the 25 cells are filled, row by row (bit `r·5 + c`).
pub fn cells(h1: u32) -> u32 {
    let mut filled = 0u32;
    for r in 0..5 {
        for c in 0..3 {
            if h1 >> (c * 5 + r) & 1 == 1 {
                filled |= 1 << (r * 5 + c);
                filled |= 1 << (r * 5 + (4 - c));
            }
        }
    }
    filled
}

/// The identicon as a standalone SVG document, 5×5 user units (the page
/// sets its size).
///
/// ```
/// let svg = uuidforge_server::identicon::svg(&uuid::Uuid::max());
/// assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
/// ```
pub fn svg(uuid: &Uuid) -> String {
    let (h1, h2) = hashes(uuid);
    let filled = cells(h1);
    let mut path = String::new();
    for i in 0..25 {
        if filled >> i & 1 == 1 {
            path.push_str(&format!("M{} {}h1v1h-1z", i % 5, i / 5));
        }
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 5 5\" shape-rendering=\"crispEdges\">\
<rect width=\"5\" height=\"5\" fill=\"hsl({} 40% 90%)\"/>\
<path fill=\"hsl({} {}% {}%)\" d=\"{path}\"/></svg>",
        (h1 >> 15) % 360,
        h2 % 360,
        55 + (h2 >> 9) % 30,
        38 + (h2 >> 14) % 18,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_is_mirrored() {
        for h in [0u32, 1, 0x7fff, 0xdead_beef] {
            let f = cells(h);
            for r in 0..5 {
                for c in 0..5 {
                    assert_eq!(f >> (r * 5 + c) & 1, f >> (r * 5 + 4 - c) & 1);
                }
            }
        }
        assert_eq!(cells(0x7fff).count_ones(), 25);
    }

    #[test]
    fn uuids_of_one_millisecond_look_different() {
        // Consecutive values of one generator in one millisecond differ only
        // in their counter and random bits: their pictures must still differ.
        let g = uuidforge::generator::global_profile("default").unwrap();
        let ids: Vec<Uuid> = (0..2000).map(|_| g.generate_or_continue()).collect();
        let mut same_pattern = 0;
        let mut close_hue = 0;
        for w in ids.windows(2) {
            let (a1, a2) = hashes(&w[0]);
            let (b1, b2) = hashes(&w[1]);
            if cells(a1) == cells(b1) {
                same_pattern += 1;
            }
            let d = (a2 % 360).abs_diff(b2 % 360);
            if d.min(360 - d) < 10 {
                close_hue += 1;
            }
        }
        // 2^-15 chance per pair for the pattern; about 1 in 18 for the hue.
        assert!(
            same_pattern <= 2,
            "{same_pattern} neighbours share a pattern"
        );
        assert!(close_hue < 250, "{close_hue} neighbours have close hues");
    }
}
