//! Text in UTF-16 or UTF-32, declared by a byte order mark, decoded to UTF-8 before any tool
//! looks at it (docs/contract.md#tools), as ripgrep decodes it for search: so redaction, grep,
//! line numbers and the cap all work on the text, not on bytes with a NUL between every two.
//!
//! Invariant: only a file that starts with a byte order mark is decoded, whole, from its first
//! byte to its last; every other file is read as it is (one with NULs and no mark stays binary).
//! Memory stays bounded: a thread decodes a block at a time into a pipe, which the tool reads as
//! it reads standard input.
//!
//! Why no crate: encoding_rs, which ripgrep uses, has no UTF-32, and both decoders are a loop
//! over `char::decode_utf16` and `char::from_u32`.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;

use crate::error::{Error, Result};

/// An encoding that a byte order mark declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-16, little-endian.
    Utf16Le,
    /// UTF-16, big-endian.
    Utf16Be,
    /// UTF-32, little-endian.
    Utf32Le,
    /// UTF-32, big-endian.
    Utf32Be,
}

impl Encoding {
    /// The encoding's name, as a note gives it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf16Le => "UTF-16LE",
            Encoding::Utf16Be => "UTF-16BE",
            Encoding::Utf32Le => "UTF-32LE",
            Encoding::Utf32Be => "UTF-32BE",
        }
    }

    /// The encoding whose byte order mark `head` (a file's first bytes) starts with, if any. A
    /// UTF-32LE mark starts as a UTF-16LE one does, so it is tried first.
    pub fn of_mark(head: &[u8]) -> Option<Encoding> {
        match head {
            [0xFF, 0xFE, 0, 0, ..] => Some(Encoding::Utf32Le),
            [0, 0, 0xFE, 0xFF, ..] => Some(Encoding::Utf32Be),
            [0xFF, 0xFE, ..] => Some(Encoding::Utf16Le),
            [0xFE, 0xFF, ..] => Some(Encoding::Utf16Be),
            _ => None,
        }
    }

    fn mark_len(self) -> usize {
        match self {
            Encoding::Utf16Le | Encoding::Utf16Be => 2,
            Encoding::Utf32Le | Encoding::Utf32Be => 4,
        }
    }

    fn unit(self) -> usize {
        self.mark_len()
    }
}

/// The encoding that `file`'s byte order mark declares, if it has one.
///
/// # Errors
/// `io:` naming `shown` when the file cannot be read.
pub fn sniff(file: &File, shown: &str) -> Result<Option<Encoding>> {
    let mut head = [0u8; 4];
    let mut n = 0;
    while n < head.len() {
        match file.read_at(&mut head[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(shown, &e)),
        }
    }
    Ok(Encoding::of_mark(&head[..n]))
}

/// The text of `file`, in `encoding`, as UTF-8 without its mark: the read end of a pipe that a
/// thread fills, a block at a time, until the file ends or the reader goes away. Invalid units
/// (a lone surrogate, a code point past U+10FFFF, a unit cut by the end of the file) become
/// U+FFFD.
///
/// # Errors
/// `io:` naming `shown` when no pipe or thread can be made.
pub fn decoded(file: File, encoding: Encoding, shown: &str) -> Result<File> {
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| Error::io(shown, &std::io::Error::from_raw_os_error(e.raw_os_error())))?;
    let mut write = File::from(write);
    std::thread::Builder::new()
        .name("readbox-decode".into())
        .spawn(move || {
            let mut at = encoding.mark_len() as u64;
            let mut raw = vec![0u8; super::BLOCK];
            let mut carry: Vec<u8> = Vec::new();
            let mut text = String::new();
            loop {
                let n = match file.read_at(&mut raw, at) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    // The reader sees the text end early; nothing more can be read.
                    Err(_) => return,
                };
                at += n as u64;
                carry.extend_from_slice(&raw[..n]);
                let whole = if n == 0 {
                    carry.len()
                } else {
                    carry.len() - carry.len() % encoding.unit()
                };
                text.clear();
                let used = decode(encoding, &carry[..whole], n == 0, &mut text);
                carry.drain(..used);
                if write.write_all(text.as_bytes()).is_err() || n == 0 {
                    return;
                }
            }
        })
        .map_err(|e| Error::io(shown, &e))?;
    Ok(File::from(read))
}

/// Decodes whole units of `bytes` into `out`; returns the bytes used. A UTF-16 high surrogate
/// at the end is kept for the next block unless `last`.
fn decode(encoding: Encoding, bytes: &[u8], last: bool, out: &mut String) -> usize {
    match encoding {
        Encoding::Utf16Le | Encoding::Utf16Be => {
            let unit = |c: &[u8]| match encoding {
                Encoding::Utf16Le => u16::from_le_bytes([c[0], c[1]]),
                _ => u16::from_be_bytes([c[0], c[1]]),
            };
            let units: Vec<u16> = bytes.chunks_exact(2).map(unit).collect();
            let mut len = units.len();
            if !last && units.last().is_some_and(|u| (0xD800..0xDC00).contains(u)) {
                len -= 1;
            }
            out.extend(
                char::decode_utf16(units[..len].iter().copied())
                    .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)),
            );
            if last && bytes.len() % 2 == 1 {
                out.push(char::REPLACEMENT_CHARACTER);
            }
            if last { bytes.len() } else { len * 2 }
        }
        Encoding::Utf32Le | Encoding::Utf32Be => {
            let mut chunks = bytes.chunks_exact(4);
            for c in &mut chunks {
                let v = match encoding {
                    Encoding::Utf32Le => u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                    _ => u32::from_be_bytes([c[0], c[1], c[2], c[3]]),
                };
                out.push(char::from_u32(v).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            if last && !chunks.remainder().is_empty() {
                out.push(char::REPLACEMENT_CHARACTER);
            }
            bytes.len()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(encoding: Encoding, bytes: &[u8]) -> String {
        let mut out = String::new();
        decode(encoding, bytes, true, &mut out);
        out
    }

    #[test]
    fn marks_name_their_encodings_and_utf32_is_tried_first() {
        assert_eq!(Encoding::of_mark(b"\xFF\xFEa\0"), Some(Encoding::Utf16Le));
        assert_eq!(Encoding::of_mark(b"\xFE\xFF\0a"), Some(Encoding::Utf16Be));
        assert_eq!(Encoding::of_mark(b"\xFF\xFE\0\0"), Some(Encoding::Utf32Le));
        assert_eq!(Encoding::of_mark(b"\0\0\xFE\xFF"), Some(Encoding::Utf32Be));
        assert_eq!(Encoding::of_mark(b"a\0b\0"), None);
        assert_eq!(Encoding::of_mark(b"\xEF\xBB\xBFa"), None);
    }

    #[test]
    fn every_encoding_decodes_and_invalid_units_become_replacement_characters() {
        let text = "caf\u{e9} \u{1F600}\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(all(Encoding::Utf16Le, &le), text);
        assert_eq!(all(Encoding::Utf16Be, &be), text);
        let le32: Vec<u8> = text
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        let be32: Vec<u8> = text
            .chars()
            .flat_map(|c| (c as u32).to_be_bytes())
            .collect();
        assert_eq!(all(Encoding::Utf32Le, &le32), text);
        assert_eq!(all(Encoding::Utf32Be, &be32), text);
        assert_eq!(all(Encoding::Utf16Le, b"\x00\xD8a\x00"), "\u{FFFD}a");
        assert_eq!(all(Encoding::Utf32Le, b"\x00\x00\x11\x00"), "\u{FFFD}");
        assert_eq!(all(Encoding::Utf16Le, b"a\x00b"), "a\u{FFFD}");
    }

    #[test]
    fn a_surrogate_pair_cut_by_a_block_is_decoded_whole() {
        let pair: Vec<u8> = "\u{1F600}"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let mut out = String::new();
        let used = decode(Encoding::Utf16Le, &pair[..2], false, &mut out);
        assert_eq!((used, out.as_str()), (0, ""));
        assert_eq!(all(Encoding::Utf16Le, &pair), "\u{1F600}");
    }
}
