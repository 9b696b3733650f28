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
/// A pattern without `/` can only ever match a single component, so it is tried on names; a
/// pattern with `/` is tried on the root-relative path, with `*` and `?` stopping at `/`. The
/// usual name patterns, a whole name (`.env`), a name and `*` (`.env.*`) or `*` and a name
/// (`*.pem`), are compared as bytes ([`Plain`]); only the others are compiled by globset, whose
/// automaton would cost a call more to build than its whole search of the names.
#[derive(Debug, Clone)]
pub struct Excludes {
    plain: Plain,
    names: GlobSet,
    paths: GlobSet,
}

/// Name patterns without a glob character but one leading or trailing `*`, each matched as
/// globset matches it on a name: the whole name, a prefix, or a suffix (a `*` matches any bytes,
/// none too).
#[derive(Debug, Clone, Default)]
struct Plain {
    whole: Vec<Box<[u8]>>,
    prefixes: Vec<Box<[u8]>>,
    suffixes: Vec<Box<[u8]>>,
}

impl Plain {
    /// Takes the case-folded name pattern `glob` when it is one of the three plain shapes.
    fn take(&mut self, glob: &str) -> bool {
        const SPECIAL: &[u8] = b"*?[]{}\\";
        let plain = |s: &str| !s.bytes().any(|b| SPECIAL.contains(&b));
        let (list, text) = if plain(glob) {
            (&mut self.whole, glob)
        } else if let Some(prefix) = glob.strip_suffix('*').filter(|p| plain(p)) {
            (&mut self.prefixes, prefix)
        } else if let Some(suffix) = glob.strip_prefix('*').filter(|s| plain(s)) {
            (&mut self.suffixes, suffix)
        } else {
            return false;
        };
        list.push(text.as_bytes().into());
        true
    }

    fn is_empty(&self) -> bool {
        self.whole.is_empty() && self.prefixes.is_empty() && self.suffixes.is_empty()
    }

    /// Whether the case-folded `name` meets one of the patterns.
    fn matches(&self, name: &[u8]) -> bool {
        self.whole.iter().any(|w| **w == *name)
            || self.prefixes.iter().any(|p| name.starts_with(p))
            || self.suffixes.iter().any(|s| name.ends_with(s))
    }
}

impl Excludes {
    /// Compiles `patterns`.
    ///
    /// # Errors
    /// The first pattern that is out of bounds ([`crate::glob::check`]) or does not compile,
    /// with the reason.
    pub fn new(patterns: &[String]) -> std::result::Result<Excludes, (String, String)> {
        let (mut names, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        let mut plain = Plain::default();
        for p in patterns {
            crate::glob::check(p).map_err(|why| (p.clone(), why))?;
            // Patterns and names are case-folded before they meet, so the globs themselves stay
            // case-sensitive.
            let folded = String::from_utf8_lossy(&case_fold(p.as_bytes())).into_owned();
            let on_path = folded.contains('/');
            if !on_path && plain.take(&folded) {
                continue;
            }
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
            plain,
            names: build(names)?,
            paths: build(paths)?,
        })
    }

    fn is_empty(&self) -> bool {
        self.plain.is_empty() && self.names.is_empty() && self.paths.is_empty()
    }

    /// Whether some pattern holds a `/` and so is matched on root-relative paths: without one,
    /// [`Excludes::matches`] of a name and its path is [`Excludes::matches_name`] of the name.
    pub fn on_paths(&self) -> bool {
        !self.paths.is_empty()
    }

    /// Whether a name pattern excludes the name `name`, as it is (not yet case-folded).
    fn name_matches(&self, name: &[u8]) -> bool {
        if self.plain.is_empty() && self.names.is_empty() {
            return false;
        }
        let folded = case_fold(name);
        self.plain.matches(&folded)
            || (!self.names.is_empty()
                && self.names.is_match(Path::new(OsStr::from_bytes(&folded))))
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
        if self.name_matches(name.as_bytes()) || matched(&self.paths, rel.as_os_str().as_bytes()) {
            return true;
        }
        let trimmed = trim_name(name.as_bytes());
        if trimmed.len() < name.len() && self.name_matches(trimmed) {
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
        self.name_matches(name.as_bytes()) || self.name_matches(trim_name(name.as_bytes()))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain shapes answer as globset does for the same pattern; the shapes next to them (two
    /// `*`, a `?`, a class, an escape) go to globset; both see the folded name.
    #[test]
    fn plain_patterns_match_as_globset_does() {
        let patterns = ".env .env.* *.pem *.KEY * .env* *env ** *.p*m .e?v [.]env \\*.pem id_*.pub";
        let names = ".env .env. .env.local .ENV.Local env x.pem .pem pem a.key A.KEY a.pem.bak \
                     id_rsa.pub id_.pub *.pem d\u{e9}j\u{e0}.pem";
        for p in patterns.split(' ') {
            let excludes = Excludes::new(&[p.to_string()]).unwrap();
            let folded = String::from_utf8_lossy(&case_fold(p.as_bytes())).into_owned();
            let oracle = GlobBuilder::new(&folded)
                .backslash_escape(true)
                .build()
                .unwrap()
                .compile_matcher();
            for n in names.split(' ') {
                // A name is also tried without its trailing dots and spaces.
                let want = [n.as_bytes(), trim_name(n.as_bytes())]
                    .iter()
                    .any(|n| oracle.is_match(OsStr::from_bytes(&case_fold(n))));
                let got = excludes.matches_name(OsStr::new(n));
                assert_eq!(got, want, "pattern {p:?}, name {n:?}");
            }
        }
    }

    /// Which patterns skip globset: the three plain shapes, and nothing with another glob
    /// character in it.
    #[test]
    fn only_plain_shapes_skip_globset() {
        let patterns = ".env .env.* *.pem *.p*m a? b/c"
            .split(' ')
            .map(String::from);
        let excludes = Excludes::new(&patterns.collect::<Vec<_>>()).unwrap();
        assert_eq!(excludes.plain.whole.len(), 1);
        assert_eq!(excludes.plain.prefixes.len(), 1);
        assert_eq!(excludes.plain.suffixes.len(), 1);
        assert_eq!(excludes.names.len(), 2);
        assert_eq!(excludes.paths.len(), 1);
    }
}
