//! The HPACK Huffman code (RFC 7541, Appendix B) and its decoder. The code table is the one the
//! h2 crate generated from the RFC (MIT licence); the decoding trie, and a table that walks it
//! four bits at a time, are built from it at compile time. Decoding only: spate's own request
//! headers are sent as plain literals.

use super::hpack::HpackError;

/// The code of each byte value, right-aligned in `CODE_LENGTHS[b]` bits.
const CODES: [u32; 256] = [
    0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7, 0xfffffe8,
    0xffffea, 0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec, 0xfffffed,
    0xfffffee, 0xfffffef, 0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3, 0xffffff4,
    0xffffff5, 0xffffff6, 0xffffff7, 0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb, 0x14, 0x3f8,
    0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa, 0x3fa, 0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18,
    0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x5c, 0xfb, 0x7ffc, 0x20, 0xffb,
    0x3fc, 0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
    0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0,
    0x1ffc, 0x3ffc, 0x22, 0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26, 0x27, 0x6, 0x74, 0x75,
    0x28, 0x29, 0x2a, 0x7, 0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78, 0x79, 0x7a, 0x7b, 0x7ffe,
    0x7fc, 0x3ffd, 0x1ffd, 0xffffffc, 0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4,
    0x3fffd5, 0x7fffd9, 0x3fffd6, 0x7fffda, 0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb,
    0x7fffdf, 0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0, 0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3,
    0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9, 0x7fffe6, 0x7fffe7, 0xffffef, 0x3fffda,
    0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde, 0x7fffea, 0x3fffdd,
    0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb, 0x7fffec, 0x1fffe0, 0x1fffe1, 0x3fffe0,
    0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef, 0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4,
    0x7ffff0, 0x3fffe5, 0x3fffe6, 0x7ffff1, 0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7,
    0x7ffff2, 0x3fffe8, 0x1ffffec, 0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf,
    0x3ffffe5, 0xfffff1, 0x1ffffed, 0x7fff2, 0x1fffe3, 0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7,
    0x7ffffe2, 0xfffff2, 0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9, 0xffffffd, 0x7ffffe3, 0x7ffffe4,
    0x7ffffe5, 0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7, 0x1fffe8, 0x7ffff3,
    0x3fffea, 0x3fffeb, 0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4, 0x3ffffeb,
    0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea, 0x7ffffeb,
    0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee,
];

/// The length in bits of the code of each byte value.
const CODE_LENGTHS: [u8; 256] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28,
    28, 28, 28, 28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5,
    5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6,
    6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22,
    23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22,
    21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20,
    22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19,
    21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22,
    22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
];

/// A child in `TRIE` that is a leaf: the symbol is in the low bits (256 is EOS).
const LEAF: u16 = 0x8000;
const EOS: u16 = 256;

/// The code as a binary trie: `TRIE[node][bit]` is the next node, or `LEAF | symbol`. A
/// complete prefix code of 257 symbols has 256 inner nodes; node 0 is the root.
static TRIE: [[u16; 2]; 256] = build();

const fn build() -> [[u16; 2]; 256] {
    let mut t = [[0u16; 2]; 256];
    let mut next = 1usize;
    let mut sym = 0usize;
    while sym <= 256 {
        let (code, len) = if sym == 256 {
            (0x3fff_ffff_u32, 30u32)
        } else {
            (CODES[sym], CODE_LENGTHS[sym] as u32)
        };
        let mut node = 0usize;
        let mut i = len;
        while i > 1 {
            i -= 1;
            let bit = ((code >> i) & 1) as usize;
            if t[node][bit] == 0 {
                t[node][bit] = next as u16;
                next += 1;
            }
            node = t[node][bit] as usize;
        }
        t[node][(code & 1) as usize] = LEAF | sym as u16;
        sym += 1;
    }
    assert!(next == 256, "the code is not a complete prefix code");
    t
}

/// One step of the decoder: from a trie node, four bits lead to `next`, having emitted `sym`
/// (when `EMIT` is set; a code is at least 5 bits long, so at most one symbol per step), or to
/// an error (`FAIL`: the bits spell EOS).
#[derive(Clone, Copy)]
struct Step {
    next: u8,
    sym: u8,
    flags: u8,
}

const EMIT: u8 = 1;
const FAIL: u8 = 2;

/// The trie walked four bits at a time: `STEPS[node * 16 + nibble]`.
static STEPS: [Step; 256 * 16] = steps();

/// Nodes that end a valid padding: reached from the root by at most 7 one-bits.
static PADDING: [bool; 256] = padding();

const fn steps() -> [Step; 256 * 16] {
    let mut t = [Step {
        next: 0,
        sym: 0,
        flags: 0,
    }; 256 * 16];
    let mut node = 0;
    while node < 256 {
        let mut nibble = 0;
        while nibble < 16 {
            let mut cur = node;
            let mut step = Step {
                next: 0,
                sym: 0,
                flags: 0,
            };
            let mut bit = 4;
            while bit > 0 {
                bit -= 1;
                let child = TRIE[cur][(nibble >> bit) & 1];
                if child & LEAF == 0 {
                    cur = child as usize;
                    continue;
                }
                if child & !LEAF == EOS {
                    step.flags = FAIL;
                    break;
                }
                step.sym = (child & !LEAF) as u8;
                step.flags = EMIT;
                cur = 0;
            }
            step.next = cur as u8;
            t[node * 16 + nibble] = step;
            nibble += 1;
        }
        node += 1;
    }
    t
}

const fn padding() -> [bool; 256] {
    let mut p = [false; 256];
    let mut node = 0usize;
    let mut depth = 0;
    while depth <= 7 {
        p[node] = true;
        let child = TRIE[node][1];
        if child & LEAF != 0 {
            break;
        }
        node = child as usize;
        depth += 1;
    }
    p
}

/// Appends the decoding of `src` to `out`. The padding after the last symbol must be the start
/// of EOS (all ones) and shorter than a byte; EOS itself must not appear (RFC 7541, 5.2).
pub fn decode(src: &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
    let mut node = 0usize;
    for &byte in src {
        for nibble in [byte >> 4, byte & 0x0f] {
            let step = STEPS[node * 16 + usize::from(nibble)];
            if step.flags & FAIL != 0 {
                return Err(HpackError::Huffman);
            }
            if step.flags & EMIT != 0 {
                out.push(step.sym);
            }
            node = usize::from(step.next);
        }
    }
    if !PADDING[node] {
        return Err(HpackError::Huffman);
    }
    Ok(())
}

/// The Huffman encoding of `src`, padded with ones (for tests: spate sends plain literals).
#[cfg(test)]
pub fn encode(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u64, 0u32);
    for &b in src {
        acc = (acc << CODE_LENGTHS[usize::from(b)]) | u64::from(CODES[usize::from(b)]);
        bits += u32::from(CODE_LENGTHS[usize::from(b)]);
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        out.push(((acc << (8 - bits)) | (0xff >> bits)) as u8);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::h2::hpack::tests::hex;

    fn dec(src: &[u8]) -> Result<Vec<u8>, HpackError> {
        let mut out = Vec::new();
        decode(src, &mut out).map(|()| out)
    }

    #[test]
    fn the_rfc_examples_decode() {
        // RFC 7541, C.4 and C.6.
        for (code, text) in [
            ("f1e3 c2e5 f23a 6ba0 ab90 f4ff", "www.example.com"),
            ("a8eb 1064 9cbf", "no-cache"),
            ("25a8 49e9 5ba9 7d7f", "custom-key"),
            ("25a8 49e9 5bb8 e8b4 bf", "custom-value"),
            ("6402", "302"),
            ("aec3 771a 4b", "private"),
            (
                "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff",
                "Mon, 21 Oct 2013 20:13:21 GMT",
            ),
            (
                "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3",
                "https://www.example.com",
            ),
        ] {
            assert_eq!(dec(&hex(code)).unwrap(), text.as_bytes(), "{text}");
            assert_eq!(encode(text.as_bytes()), hex(code), "{text}");
        }
    }

    #[test]
    fn every_byte_value_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(dec(&encode(&all)).unwrap(), all);
        for b in 0..=255u8 {
            assert_eq!(dec(&encode(&[b, b, b])).unwrap(), [b, b, b]);
        }
        assert_eq!(dec(&[]).unwrap(), b"");
    }

    /// The decoder one bit at a time, straight from the trie: the reference for the table.
    fn decode_bits(src: &[u8]) -> Result<Vec<u8>, HpackError> {
        let mut out = Vec::new();
        let (mut node, mut pending, mut ones) = (0usize, 0u32, true);
        for &byte in src {
            for shift in (0..8).rev() {
                let bit = (byte >> shift) & 1;
                let next = TRIE[node][usize::from(bit)];
                pending += 1;
                ones &= bit == 1;
                if next & LEAF == 0 {
                    node = usize::from(next);
                } else if next & !LEAF == EOS {
                    return Err(HpackError::Huffman);
                } else {
                    out.push((next & !LEAF) as u8);
                    (node, pending, ones) = (0, 0, true);
                }
            }
        }
        if pending > 7 || !ones {
            return Err(HpackError::Huffman);
        }
        Ok(out)
    }

    #[test]
    fn the_table_decoder_agrees_with_the_bitwise_one() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for len in 0..40 {
            for _ in 0..500 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        // Mostly ones: long codes, padding and EOS are where decoders differ.
                        if x.is_multiple_of(3) {
                            0xff
                        } else {
                            (x >> 8) as u8
                        }
                    })
                    .collect();
                assert_eq!(dec(&bytes), decode_bits(&bytes), "{bytes:02x?}");
                let text: Vec<u8> = bytes.iter().map(|b| b.wrapping_mul(31)).collect();
                assert_eq!(dec(&encode(&text)).unwrap(), text);
            }
        }
    }

    #[test]
    fn bad_padding_and_eos_are_refused() {
        // 'a' is 00011 (5 bits): three bits of padding must be ones.
        assert_eq!(dec(&[0b0001_1111]).unwrap(), b"a");
        assert!(dec(&[0b0001_1011]).is_err(), "padding with a zero");
        // A whole byte of ones is padding of 8 bits (longer than 7).
        assert!(dec(&[0b0001_1111, 0xff]).is_err());
        // EOS (30 ones) inside the string.
        assert!(dec(&[0xff, 0xff, 0xff, 0xff]).is_err());
    }
}
