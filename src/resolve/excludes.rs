//! The exclude globs and how a name meets them: on every component, regardless of case
//! (docs/contract.md#confinement, docs/security.md#excludes-on-every-component).
//!
//! Invariant: a name is matched as the excludes see it after Unicode case folding, and bytes that
//! are not UTF-8 are kept as they are, so no spelling of an excluded name slips past its rule.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The exclude globs of the policy, matched regardless of case on a component's name and on its
/// root-relative path (docs/contract.md#confinement; globset syntax, `*` and `?` do not cross `/`).
///
/// A pattern without `/` can only ever match a single component, so it is tried on names, where
/// `*` may be compiled as freely crossing (there is no `/` to cross) and globset needs no regex
/// for the usual `.env`, `.env.*` or `*.pem`; a pattern with `/` is tried on the root-relative
/// path, with `*` and `?` stopping at `/`.
#[derive(Debug, Clone)]
pub struct Excludes {
    names: GlobSet,
    paths: GlobSet,
}

impl Excludes {
    /// Compiles `patterns`.
    ///
    /// # Errors
    /// The first pattern that is out of bounds ([`crate::glob::check`]) or does not compile,
    /// with the reason.
    pub fn new(patterns: &[String]) -> std::result::Result<Excludes, (String, String)> {
        let (mut names, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        for p in patterns {
            crate::glob::check(p).map_err(|why| (p.clone(), why))?;
            // Patterns and names are case-folded before they meet, so the globs themselves stay
            // case-sensitive.
            let folded = String::from_utf8_lossy(&case_fold(p.as_bytes())).into_owned();
            let on_path = folded.contains('/');
            let glob = GlobBuilder::new(&folded)
                .literal_separator(on_path)
                .backslash_escape(true)
                .build()
                .map_err(|e| (p.clone(), e.kind().to_string()))?;
            if on_path {
                paths.add(glob)
            } else {
                names.add(glob)
            };
        }
        let build = |b: GlobSetBuilder| b.build().map_err(|e| (String::new(), e.to_string()));
        Ok(Excludes {
            names: build(names)?,
            paths: build(paths)?,
        })
    }

    fn is_empty(&self) -> bool {
        self.names.is_empty() && self.paths.is_empty()
    }

    /// Whether the entry `name`, at root-relative path `rel` (which ends with `name`), is
    /// excluded by itself. Callers test every ancestor below the root too.
    ///
    /// A name is also matched with its trailing dots and spaces taken off, and a path with each
    /// component's: filesystems that drop them in lookups (vfat, exFAT, shares served by
    /// Windows) open `.env ` or `server.pem.` as the excluded file itself
    /// (docs/security.md#excludes-on-every-component).
    pub fn matches(&self, name: &OsStr, rel: &Path) -> bool {
        let matched = |set: &GlobSet, p: &[u8]| {
            !set.is_empty() && set.is_match(Path::new(OsStr::from_bytes(&case_fold(p))))
        };
        if matched(&self.names, name.as_bytes()) || matched(&self.paths, rel.as_os_str().as_bytes())
        {
            return true;
        }
        let trimmed = trim_name(name.as_bytes());
        if trimmed.len() < name.len() && matched(&self.names, trimmed) {
            return true;
        }
        // Path patterns only: each component of `rel` trimmed (callers test every ancestor, so
        // the names alone cost one look at each).
        if self.paths.is_empty() || !rel.iter().any(|c| trim_name(c.as_bytes()).len() < c.len()) {
            return false;
        }
        let rel: PathBuf = rel
            .iter()
            .map(|c| OsStr::from_bytes(trim_name(c.as_bytes())))
            .collect();
        matched(&self.paths, rel.as_os_str().as_bytes())
    }

    /// Whether a name-only pattern (one without `/`) excludes `name`.
    pub fn matches_name(&self, name: &OsStr) -> bool {
        let matched = |n: &[u8]| {
            self.names
                .is_match(Path::new(OsStr::from_bytes(&case_fold(n))))
        };
        !self.names.is_empty() && (matched(name.as_bytes()) || matched(trim_name(name.as_bytes())))
    }

    /// Whether any component of the root-relative path `rel`, with its ancestors, is excluded.
    pub fn matches_any_prefix(&self, rel: &Path) -> bool {
        if self.is_empty() {
            return false;
        }
        let mut prefix = PathBuf::new();
        for c in rel.components() {
            prefix.push(c);
            if let Component::Normal(name) = c
                && self.matches(name, &prefix)
            {
                return true;
            }
        }
        false
    }
}

/// `name` without its trailing dots and spaces, as Windows and the vfat and exFAT drivers look
/// names up; `.`, `..` and a name of nothing else stay as they are.
fn trim_name(name: &[u8]) -> &[u8] {
    let end = name
        .iter()
        .rposition(|&b| b != b'.' && b != b' ')
        .map_or(0, |i| i + 1);
    if end == 0 { name } else { &name[..end] }
}

/// A name or path as the excludes see it: Unicode full case folding between canonical
/// decompositions, recomposed (NFC), so that `ID.KEY`, `id.\u{212A}ey` (KELVIN SIGN) and
/// `\u{17F}erver.pem` (LONG S) all meet `*.key` or `*.pem`; bytes that are not UTF-8 stay as they
/// are, so an undecodable name never slips past a rule
/// (docs/security.md#excludes-on-every-component).
fn case_fold(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    use caseless::Caseless;
    use unicode_normalization::UnicodeNormalization;
    if bytes.is_ascii() {
        return if bytes.iter().any(u8::is_ascii_uppercase) {
            bytes.to_ascii_lowercase().into()
        } else {
            bytes.into()
        };
    }
    let mut out = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        let folded: String = chunk
            .valid()
            .chars()
            .nfd()
            .default_case_fold()
            .nfc()
            .collect();
        out.extend_from_slice(folded.as_bytes());
        out.extend_from_slice(chunk.invalid());
    }
    out.into()
}
