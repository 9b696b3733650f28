//! grep's matcher: PATTERN as literal text, found by a SIMD substring search (`memchr::memmem`),
//! or under Unicode simple case folding (the `regex` crate's `(?i)`, as `rg -i`) with
//! IGNORE_CASE (docs/contract.md#tools).

use memchr::memmem;
use regex::bytes::{Regex, RegexBuilder};

use crate::error::Error;

/// How lines are matched.
pub(super) enum Matcher {
    /// The pattern holds a newline: no line can contain it.
    Never,
    /// The empty pattern: every line.
    Every,
    /// Case-sensitive literal.
    Literal(Box<memmem::Finder<'static>>),
    /// Literal under Unicode simple case folding.
    Folded(Regex),
}

impl Matcher {
    /// The matcher of PATTERN, folded when `ignore_case`.
    ///
    /// # Errors
    /// `usage:` when the folded search cannot be built.
    pub(super) fn new(pattern: &[u8], ignore_case: bool) -> Result<Matcher, Error> {
        if pattern.contains(&b'\n') {
            return Ok(Matcher::Never);
        }
        if pattern.is_empty() {
            return Ok(Matcher::Every);
        }
        if !ignore_case {
            return Ok(Matcher::Literal(Box::new(
                memmem::Finder::new(pattern).into_owned(),
            )));
        }
        let mut re = String::new();
        for chunk in pattern.utf8_chunks() {
            re.push_str(&regex::escape(chunk.valid()));
            for b in chunk.invalid() {
                re.push_str(&format!("(?-u:\\x{b:02X})"));
            }
        }
        RegexBuilder::new(&re)
            .case_insensitive(true)
            .unicode(true)
            .build()
            .map(Matcher::Folded)
            .map_err(|e| {
                Error::Usage(format!(
                    "PATTERN: cannot search for it regardless of case: {e}"
                ))
            })
    }

    /// The start of the first match at or after `at`.
    pub(super) fn find_at(&self, hay: &[u8], at: usize) -> Option<usize> {
        match self {
            Matcher::Never => None,
            Matcher::Every => (at <= hay.len()).then_some(at),
            Matcher::Literal(f) => f.find(&hay[at..]).map(|i| i + at),
            Matcher::Folded(r) => r.find_at(hay, at).map(|m| m.start()),
        }
    }

    /// Bytes a match can span, at most: a folded character may take up to 4 bytes.
    pub(super) fn max_len(&self, pattern: &[u8]) -> usize {
        match self {
            Matcher::Folded(_) => 4 * pattern.len(),
            _ => pattern.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_matcher_uses_simple_case_folding() {
        let m = Matcher::new("300k".as_bytes(), true).unwrap();
        assert!(m.find_at("temp 300\u{212A}".as_bytes(), 0).is_some());
        let m = Matcher::new("straße".as_bytes(), true).unwrap();
        assert!(m.find_at(b"STRASSE", 0).is_none());
    }

    #[test]
    fn literal_matcher_is_not_a_regex() {
        let m = Matcher::new(b"a.c", false).unwrap();
        assert!(m.find_at(b"abc", 0).is_none());
        assert_eq!(m.find_at(b"xa.c", 0), Some(1));
        assert!(
            Matcher::new(b"a\nb", false)
                .unwrap()
                .find_at(b"a\nb", 0)
                .is_none()
        );
    }
}
