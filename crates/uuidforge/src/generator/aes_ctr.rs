//! AES-128 in counter mode as a keystream: the random source's cipher where
//! the CPU has AES instructions (x86-64 AES-NI, ARMv8 crypto). Each block
//! is the encryption of the next value of a 128-bit counter; key and
//! counter's start come from the operating system, and the owner rekeys
//! long before the counter could matter (every 16 MiB: 2^20 blocks of the
//! 2^64 after which CTR output is told from random). NIST SP 800-90A's
//! CTR_DRBG makes its output the same way.

use aes::cipher::array::Array;
use aes::cipher::{BlockCipherEncrypt, KeyInit};

/// Blocks made at once (the cipher runs eight in parallel).
const BLOCKS: usize = 16;

/// An AES-128-CTR keystream, read in any sizes.
pub(crate) struct AesCtr {
    cipher: aes::Aes128,
    counter: u128,
    /// Made and not yet handed out: `buffer[next..]`.
    buffer: [[u8; 16]; BLOCKS],
    next: usize,
}

impl AesCtr {
    /// A keystream under `seed`: the key is its first 16 bytes, the counter
    /// starts at its last 16.
    pub(crate) fn new(seed: &[u8; 32]) -> AesCtr {
        let (key, start) = seed.split_at(16);
        AesCtr {
            cipher: aes::Aes128::new(&Array(key.try_into().expect("16 bytes"))),
            counter: u128::from_le_bytes(start.try_into().expect("16 bytes")),
            buffer: [[0; 16]; BLOCKS],
            next: BLOCKS * 16,
        }
    }

    /// Whether this CPU runs AES in hardware (else a software AES is slower
    /// than ChaCha8, and ChaCha8 is used instead).
    pub(crate) fn in_hardware() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::is_x86_feature_detected!("aes") && std::is_x86_feature_detected!("sse2")
        }
        #[cfg(target_arch = "aarch64")]
        {
            std::arch::is_aarch64_feature_detected!("aes")
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            false
        }
    }

    /// The keystream's next blocks into `blocks`: counters written in
    /// place, then encrypted together.
    #[inline]
    fn blocks(&mut self, blocks: &mut [[u8; 16]]) {
        for block in blocks.iter_mut() {
            self.counter = self.counter.wrapping_add(1);
            *block = self.counter.to_le_bytes();
        }
        self.cipher
            .encrypt_blocks(Array::cast_slice_from_core_mut(blocks));
    }

    /// Fills `dst` with the keystream's next bytes: what the buffer holds,
    /// then whole blocks made in `dst` itself, then the buffer again for
    /// the rest.
    pub(crate) fn fill(&mut self, mut dst: &mut [u8]) {
        let held = (BLOCKS * 16 - self.next).min(dst.len());
        let (from_buffer, rest) = dst.split_at_mut(held);
        from_buffer.copy_from_slice(&self.buffer.as_flattened()[self.next..self.next + held]);
        self.next += held;
        dst = rest;
        let (whole, tail) = dst.as_chunks_mut::<16>();
        self.blocks(whole);
        if !tail.is_empty() {
            let mut buffer = self.buffer;
            self.blocks(&mut buffer);
            self.buffer = buffer;
            tail.copy_from_slice(&self.buffer.as_flattened()[..tail.len()]);
            self.next = tail.len();
        }
    }

    /// The keystream's next 8 bytes as a word: one read from the buffer
    /// (the shared generator takes one per value).
    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        let bytes = self.buffer.as_flattened();
        if let Some(word) = bytes.get(self.next..self.next + 8) {
            self.next += 8;
            return u64::from_le_bytes(word.try_into().expect("8 bytes"));
        }
        self.next_u64_across()
    }

    #[cold]
    fn next_u64_across(&mut self) -> u64 {
        let mut word = [0u8; 8];
        self.fill(&mut word);
        u64::from_le_bytes(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fips_197_vector_and_the_stream_read_in_any_sizes() {
        // FIPS-197 Appendix C.1 (AES-128): the key 000102…0f encrypts the
        // block 00112233…ff to 69c4e0d8…5a. As a counter of 0x…ff eeddcc
        // (little-endian bytes 00 11 22 …), one below it is where it starts.
        let mut seed = [0u8; 32];
        for (i, b) in seed[..16].iter_mut().enumerate() {
            *b = i as u8;
        }
        let block: Vec<u8> = (0..16).map(|i| (i * 0x11) as u8).collect();
        let start = u128::from_le_bytes(block.clone().try_into().unwrap()) - 1;
        seed[16..].copy_from_slice(&start.to_le_bytes());
        let mut ctr = AesCtr::new(&seed);
        let mut first = [0u8; 16];
        ctr.fill(&mut first);
        assert_eq!(
            first,
            [
                0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4,
                0xc5, 0x5a
            ]
        );
        // The same stream whole and in odd pieces.
        let mut whole = vec![0u8; 1000];
        AesCtr::new(&seed).fill(&mut whole);
        let mut pieces = Vec::new();
        let mut ctr = AesCtr::new(&seed);
        for size in [1, 7, 16, 255, 3, 300, 8, 410] {
            let mut part = vec![0u8; size];
            ctr.fill(&mut part);
            pieces.extend(part);
        }
        assert_eq!(pieces, whole);
        let mut ctr = AesCtr::new(&seed);
        let words: Vec<u8> = (0..125)
            .flat_map(|_| ctr.next_u64().to_le_bytes())
            .collect();
        assert_eq!(words, whole);
    }
}
