//! The pure text transforms of the envelope, which touch no writer: JSON string escaping
//! ([`escape_json`], with DEL, C1 and bidi controls escaped on top of what JSON requires), the
//! lossy UTF-8 decoding of text pushed in pieces, the character-safe cuts, and the escaping of
//! controls for a terminal line (docs/contract.md#envelope).

/// Where a write of `escaped` (json string content as [`escape_json`] writes it, from the start
/// of an escape or character) that has written `at` bytes may stop: the end of the escape or
/// character that holds byte `at` (or `at` itself when one starts there). Also returns the UTF-8
/// size of the text that the rest stands for, as the cap counts it.
pub(super) fn cut_escaped(escaped: &[u8], at: usize) -> (usize, usize) {
    let unit = |i: usize| -> usize {
        let n = match escaped[i] {
            b'\\' if escaped.get(i + 1) == Some(&b'u') => 6,
            b'\\' => 2,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xFF => 4,
            _ => 1,
        };
        n.min(escaped.len() - i)
    };
    let mut i = 0;
    while i < at.min(escaped.len()) {
        i += unit(i);
    }
    let end = i;
    let mut left = 0;
    while i < escaped.len() {
        let n = unit(i);
        left += match &escaped[i..i + n] {
            [b'\\', b'u', hex @ ..] => std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .and_then(char::from_u32)
                .map_or(3, char::len_utf8),
            [b'\\', _] => 1,
            unit => unit.len(),
        };
        i += n;
    }
    (end, left)
}

/// The largest cut `<= fit` of `bytes` that does not split a valid UTF-8 sequence (bytes that
/// are not UTF-8 are cut anywhere).
pub(super) fn text_boundary(bytes: &[u8], fit: usize) -> usize {
    if fit >= bytes.len() {
        return bytes.len();
    }
    for i in (fit.saturating_sub(3)..fit).rev() {
        let width = match bytes[i] {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => continue,
        };
        let end = i + width;
        if end > fit && end <= bytes.len() && std::str::from_utf8(&bytes[i..end]).is_ok() {
            return i;
        }
    }
    fit
}

/// Decodes `bytes` as `String::from_utf8_lossy` does, after the unfinished sequence `carry` of
/// the previous piece; an unfinished sequence at the end is kept in `carry` unless `last`.
pub(super) fn decode(carry: &mut Vec<u8>, bytes: &[u8], last: bool) -> String {
    let joined;
    let input: &[u8] = if carry.is_empty() {
        bytes
    } else {
        let mut j = std::mem::take(carry);
        j.extend_from_slice(bytes);
        joined = j;
        &joined
    };
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                // from_utf8 said these bytes are valid.
                out.push_str(std::str::from_utf8(&rest[..valid]).unwrap_or_default());
                match e.error_len() {
                    None if !last => {
                        carry.extend_from_slice(&rest[valid..]);
                        break;
                    }
                    None => {
                        out.push('\u{FFFD}');
                        break;
                    }
                    Some(n) => {
                        out.push('\u{FFFD}');
                        rest = &rest[valid + n..];
                    }
                }
            }
        }
    }
    out
}

/// True for characters that must not reach a reader raw: DEL, the C1 controls and the
/// bidirectional controls (docs/contract.md#envelope).
pub fn is_hidden_control(c: char) -> bool {
    matches!(c, '\u{7F}'..='\u{9F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Whether `b` needs attention in a JSON string: a C0 control, `"`, `\`, DEL, or any byte of a
/// multi-byte sequence (which may be invalid, a C1 or a bidi control).
#[inline(always)]
fn needs_work(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7F
}

/// The positions of the bytes of `block` that need work, as a bit mask (bit k for `block[k]`).
#[inline(always)]
fn work_mask(block: &[u8; 16]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of the x86_64 baseline, so these instructions always exist; the
        // load is unaligned and reads exactly the 16 bytes of `block`.
        unsafe {
            let v = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
            // A signed compare with 0x20 catches the C0 controls and, as negative numbers, every
            // byte from 0x80 up.
            let low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            let del = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F));
            let any = _mm_or_si128(_mm_or_si128(low, quote), _mm_or_si128(backslash, del));
            _mm_movemask_epi8(any) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut mask = 0;
        for (k, &b) in block.iter().enumerate() {
            mask |= u32::from(needs_work(b)) << k;
        }
        mask
    }
}

/// Appends `raw` to `out` as the inside of a JSON string literal, decoded and escaped.
///
/// It is decoded as `String::from_utf8_lossy` does (U+FFFD per maximal invalid sequence), with `"`
/// and `\` escaped, C0 controls as `\n`, `\t`, `\r`, `\b`, `\f` or `\u00XX`, and DEL, C1 and bidi
/// controls as `\uXXXX`. Returns the bytes of `raw` consumed (all of them, unless `last` is false
/// and `raw` ends inside a UTF-8 sequence) and the UTF-8 size of the decoded text.
///
/// The text goes sixteen bytes at a time: each block is copied whole into `out`'s spare capacity
/// and then cut back to its first byte that needs work, which is escaped in place. A clean run
/// thus costs one 16-byte move per block, however short the runs between escapes are (in text,
/// each line is a run).
#[expect(
    clippy::missing_panics_doc,
    reason = "its one `expect` converts a slice of exactly 16 bytes"
)]
pub fn escape_json(out: &mut Vec<u8>, raw: &[u8], last: bool) -> (usize, usize) {
    /// Input bytes per reservation of spare capacity, to bound what a stretch of escapes takes.
    const STRETCH: usize = 8192;
    let n = raw.len();
    let mut decoded = 0;
    let mut i = 0; // bytes before `i` are written to `out`
    while i + 16 <= n {
        let end = n.min(i + STRETCH);
        // Every input byte becomes at most six output bytes, and a write may run 16 bytes past
        // what it keeps. So the capacity left never falls below what the next write needs.
        out.reserve(6 * (end - i) + 16);
        let mut spare = out.spare_capacity_mut();
        let mut o = 0; // bytes of `spare` written
        while i < end && i + 16 <= n {
            let block: &[u8; 16] = raw[i..i + 16].try_into().expect("16 bytes");
            let mask = work_mask(block);
            for (slot, &b) in spare[o..o + 16].iter_mut().zip(block) {
                slot.write(b);
            }
            if mask == 0 {
                i += 16;
                o += 16;
                decoded += 16;
                continue;
            }
            let k = mask.trailing_zeros() as usize;
            i += k;
            o += k;
            decoded += k;
            let b = raw[i];
            if b < 0x80 {
                let (bytes, len) = &ASCII_ESCAPES[usize::from(b)];
                for (slot, &b) in spare[o..o + 8].iter_mut().zip(bytes) {
                    slot.write(b);
                }
                o += usize::from(*len);
                i += 1;
                decoded += 1;
                continue;
            }
            // SAFETY: the loop wrote each of the first `o` bytes of the spare capacity (every
            // advance of `o` follows a write of at least as many bytes at `o`), and `o` lies
            // within it, as the slices written were indexed with bounds checks.
            unsafe { out.set_len(out.len() + o) };
            match escape_one(out, raw, i, last) {
                Some((len, size)) => {
                    i += len;
                    decoded += size;
                }
                None => return (i, decoded),
            }
            spare = out.spare_capacity_mut();
            o = 0;
        }
        // SAFETY: as above.
        unsafe { out.set_len(out.len() + o) };
    }
    // The last few bytes, one at a time.
    while i < n {
        let at = raw[i..]
            .iter()
            .position(|&b| needs_work(b))
            .map_or(n, |k| i + k);
        out.extend_from_slice(&raw[i..at]);
        decoded += at - i;
        i = at;
        if i == n {
            break;
        }
        match escape_one(out, raw, i, last) {
            Some((len, size)) => {
                i += len;
                decoded += size;
            }
            None => return (i, decoded),
        }
    }
    (n, decoded)
}

/// Hexadecimal digits of `\uXXXX` escapes, in lowercase as serde_json writes them.
const HEX: &[u8; 16] = b"0123456789abcdef";

/// The JSON escape of each ASCII byte, padded to eight bytes, and its length: the byte itself for
/// those that need none, `\"`, `\\`, `\n`, `\t`, `\r`, `\b`, `\f`, and `\u00XX` for the other C0
/// controls and DEL (RFC 8259, section 7, and docs/contract.md#envelope).
static ASCII_ESCAPES: [([u8; 8], u8); 128] = {
    let mut table = [([0; 8], 0); 128];
    let mut b = 0;
    while b < 128 {
        let short = match b as u8 {
            b'"' => b'"',
            b'\\' => b'\\',
            b'\n' => b'n',
            b'\t' => b't',
            b'\r' => b'r',
            0x08 => b'b',
            0x0C => b'f',
            _ => 0,
        };
        table[b] = if short != 0 {
            ([b'\\', short, 0, 0, 0, 0, 0, 0], 2)
        } else if b < 0x20 || b == 0x7F {
            let hex = [b'\\', b'u', b'0', b'0', HEX[b >> 4], HEX[b & 15], 0, 0];
            (hex, 6)
        } else {
            ([b as u8, 0, 0, 0, 0, 0, 0, 0], 1)
        };
        b += 1;
    }
    table
};

/// Writes the escape of the byte or character at `raw[i]`, which needs work; returns the bytes
/// of `raw` it took and their decoded UTF-8 size, or `None` for a sequence that `raw` ends inside
/// of (when not `last`).
#[inline]
fn escape_one(out: &mut Vec<u8>, raw: &[u8], i: usize, last: bool) -> Option<(usize, usize)> {
    let b = raw[i];
    if b < 0x80 {
        let (bytes, len) = &ASCII_ESCAPES[usize::from(b)];
        out.extend_from_slice(&bytes[..usize::from(*len)]);
        return Some((1, 1));
    }
    // A multi-byte sequence: valid, invalid, or cut off by the end of `raw`.
    let window = &raw[i..raw.len().min(i + 4)];
    let (len, ch) = match std::str::from_utf8(window) {
        Ok(s) => first_char(s),
        Err(e) if e.valid_up_to() > 0 => {
            first_char(std::str::from_utf8(&window[..e.valid_up_to()]).unwrap_or_default())
        }
        Err(e) => match e.error_len() {
            Some(bad) => (bad, None),
            None if !last => return None,
            None => (window.len(), None),
        },
    };
    match ch {
        Some(c) if is_hidden_control(c) => {
            let v = c as u32;
            out.extend_from_slice(b"\\u");
            for shift in [12, 8, 4, 0] {
                out.push(HEX[((v >> shift) & 15) as usize]);
            }
            Some((len, len))
        }
        Some(_) => {
            out.extend_from_slice(&raw[i..i + len]);
            Some((len, len))
        }
        None => {
            out.extend_from_slice("\u{FFFD}".as_bytes());
            Some((len, 3))
        }
    }
}

/// The byte length and value of the first character of a non-empty `s`.
fn first_char(s: &str) -> (usize, Option<char>) {
    match s.chars().next() {
        Some(c) => (c.len_utf8(), Some(c)),
        None => (1, None),
    }
}

/// `s` as a JSON string literal, with DEL, C1 and bidi controls as `\uXXXX` escapes on top of
/// what JSON requires (quote, backslash, C0 controls).
pub fn json_string(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    out.push(b'"');
    escape_json(&mut out, s.as_bytes(), true);
    out.push(b'"');
    // escape_json turns valid UTF-8 into valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// A JSON document (from `serde_json`) with the same extra escapes as [`json_string`].
pub fn json_document(value: &serde_json::Value) -> String {
    let plain = value.to_string();
    if !plain.chars().any(is_hidden_control) {
        return plain;
    }
    let mut out = String::with_capacity(plain.len() + 16);
    for c in plain.chars() {
        if is_hidden_control(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Text for a terminal line (text-format errors and notes): C0, DEL, C1 and bidi controls as
/// `\u{XXXX}`, so that a message never moves the cursor or flips the text direction.
pub fn escape_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if (c as u32) < 0x20 || is_hidden_control(c) {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(raw: &[u8]) -> String {
        let mut out = Vec::new();
        escape_json(&mut out, raw, true);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escaping_matches_lossy_decoding_and_serde_json() {
        let samples: &[&[u8]] = &[
            b"plain ascii text that is long enough for words",
            b"quote\" back\\slash \n\t\r\x08\x0c\x01\x1f end",
            "é€😀 mixed ünïcödé and ascii padding".as_bytes(),
            b"bad \xff\xfe bytes \xe2\x82 cut \xf0\x9f\x98",
            b"\x00\x00\x00\x00\x00\x00\x00\x00\x00",
        ];
        for raw in samples {
            let lossy = String::from_utf8_lossy(raw);
            let want = serde_json::to_string(&lossy).unwrap();
            assert_eq!(format!("\"{}\"", escaped(raw)), want, "{raw:?}");
            let mut out = Vec::new();
            assert_eq!(escape_json(&mut out, raw, true), (raw.len(), lossy.len()));
        }
    }

    /// The reference: serde_json's escaping of the lossy decoding, with DEL, C1 and bidi
    /// controls as `\uXXXX` on top.
    fn reference(raw: &[u8]) -> String {
        json_document(&String::from_utf8_lossy(raw).into_owned().into())
    }

    /// Escapes `raw` whole and in two pieces split at `split`, with the unfinished sequence
    /// carried over, and checks both against the reference, and the decoded size.
    fn check_escaping(
        raw: &[u8],
        split: usize,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut out = vec![b'"'];
        let (used, decoded) = escape_json(&mut out, raw, true);
        out.push(b'"');
        proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), reference(raw));
        proptest::prop_assert_eq!(
            (used, decoded),
            (raw.len(), String::from_utf8_lossy(raw).len())
        );
        let split = split.min(raw.len());
        let mut out = vec![b'"'];
        let (used, _) = escape_json(&mut out, &raw[..split], false);
        escape_json(&mut out, &raw[used..], true);
        out.push(b'"');
        proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), reference(raw));
        Ok(())
    }

    proptest::proptest! {
        #[test]
        fn escaping_agrees_with_the_reference_on_any_bytes(
            raw in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::num::u8::ANY,
                    proptest::sample::select(b"\n\"\\\x7f\xc2\x9b\xe2\x80\xaeab".to_vec()),
                ],
                0..200,
            ),
            split in 0usize..200,
        ) {
            check_escaping(&raw, split)?;
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(32))]
        /// Texts of several reservation stretches, mostly plain, so that most blocks are clean and
        /// escapes and multi-byte sequences fall at every offset, across the stretches' seams too.
        #[test]
        fn escaping_agrees_with_the_reference_on_long_texts(
            raw in proptest::collection::vec(
                proptest::prop_oneof![
                    30 => proptest::sample::select(b"abcdefgh ".to_vec()),
                    1 => proptest::sample::select(b"\n\"\\\t\x01\x7f\xc2\x9b\xe2\x80\xae\xff".to_vec()),
                ],
                8_000..40_000,
            ),
            split in 0usize..40_000,
        ) {
            check_escaping(&raw, split)?;
        }
    }

    #[test]
    fn hidden_controls_are_escaped() {
        assert_eq!(
            json_string("a\u{7f}b\u{85}\u{202e}"),
            "\"a\\u007fb\\u0085\\u202e\""
        );
        assert_eq!(json_string("\u{200f}"), "\"\u{200f}\"");
    }

    #[test]
    fn an_unfinished_sequence_waits_for_the_next_piece() {
        let mut out = Vec::new();
        assert_eq!(escape_json(&mut out, b"ab\xe2\x82", false), (2, 2));
    }

    #[test]
    fn text_cut_keeps_characters_whole() {
        assert_eq!(text_boundary("ab€".as_bytes(), 3), 2);
        assert_eq!(text_boundary("ab€".as_bytes(), 5), 5);
        assert_eq!(text_boundary(b"ab\xff\xff", 3), 3);
    }
}
