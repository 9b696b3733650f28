//! Pathname expansion for `readbox sh` (docs/contract.md#readbox-sh).
//!
//! An unquoted `*`, `?` or `[…]` in a word matches names beneath the roots, listed through the
//! gate, as bash matches them with its default options (no `dotglob`, `globskipdots` on, no
//! `globstar`, no `nullglob`).
//!
//! Invariant: every directory read goes through [`crate::walk::list`], so excluded names never
//! match, entries count against `max_entries`, and a directory outside the roots lists nothing.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::call::Ctx;
use crate::error::Error;
use crate::resolve::NodeKind;

/// The names that `pattern` (a glob as [`super::parse::Word::glob`] holds it: quoted
/// characters escaped with `\`) matches, in byte order; `None` when it matches none, and the
/// word then stays as written.
///
/// `room` is how many bytes the names may take in all.
///
/// # Errors
/// `limit:` past `max_entries`; `usage:` when the names would take more than `room` bytes; other
/// errors of a directory read make that directory match nothing, as bash's own reads do.
pub fn expand(ctx: &Ctx<'_>, pattern: &[u8], room: usize) -> Result<Option<Vec<Vec<u8>>>, Error> {
    if let Some(what) = collating(pattern) {
        return Err(Error::Usage(format!(
            "readbox sh does not match collating symbols or equivalence classes: {what}…]"
        )));
    }
    let absolute = pattern.starts_with(b"/");
    let parts: Vec<&[u8]> = pattern.split(|&b| b == b'/').collect();
    // Bounds that no path can pass (the resolver's components, a name's 255 bytes, with room for
    // what a bracket expression spells out), so a glob's own size never sets its cost.
    if parts.len() > MAX_PARTS || parts.iter().any(|p| p.len() > MAX_PART) {
        return Err(Error::Usage(format!(
            "a glob longer than {MAX_PARTS} components or with one longer than {MAX_PART} bytes \
             matches no name"
        )));
    }
    // Each candidate is a path prefix as it will be written (`sub/`, `/`, or empty).
    let mut found: Vec<Vec<u8>> = vec![if absolute { b"/".to_vec() } else { Vec::new() }];
    let parts = if absolute { &parts[1..] } else { &parts[..] };
    let last = parts.len().saturating_sub(1);
    let mut any_glob = false;
    for (i, part) in parts.iter().enumerate() {
        let is_last = i == last;
        if part.is_empty() {
            // `a//b` or a trailing `/`: the slash is kept as written.
            if !is_last {
                for f in &mut found {
                    f.push(b'/');
                }
            }
            continue;
        }
        if !has_glob(part) {
            let literal = unescape(part);
            for f in &mut found {
                f.extend_from_slice(&literal);
                if !is_last {
                    f.push(b'/');
                }
            }
            continue;
        }
        any_glob = true;
        let mut next = Vec::new();
        let mut bytes = 0;
        for dir in &found {
            let listed = if dir.is_empty() { b"." as &[u8] } else { dir };
            for name in matches_in(ctx, listed, part)? {
                bytes += dir.len() + name.len() + 1;
                if bytes > room {
                    return Err(too_long());
                }
                let mut path = dir.clone();
                path.extend_from_slice(&name);
                if !is_last {
                    path.push(b'/');
                }
                next.push(path);
            }
        }
        found = next;
        if found.is_empty() {
            return Ok(None);
        }
    }
    if !any_glob {
        return Ok(None);
    }
    // A literal part after the last glob must name something that exists.
    if parts.last().is_some_and(|p| !has_glob(p)) {
        found.retain(|p| ctx.gate.resolve(p).is_ok());
    }
    // Intermediate parts must have been directories: the gate listed them, or they are gone.
    found.sort();
    found.dedup();
    Ok((!found.is_empty()).then_some(found))
}

/// The most bytes the words of one command line take once its globs are expanded (as bash's
/// `ARG_MAX` bounds a program's arguments): memory stays bounded whatever a glob matches.
pub const MAX_WORDS_BYTES: usize = 2 << 20;

/// The most components of a glob, as the resolver takes them.
const MAX_PARTS: usize = 4096;

/// The longest component of a glob.
const MAX_PART: usize = 4096;

/// The error of a line whose words, globs expanded, pass [`MAX_WORDS_BYTES`].
pub fn too_long() -> Error {
    Error::Usage(format!(
        "the command line's words, globs expanded, take more than {MAX_WORDS_BYTES} bytes"
    ))
}

/// The entries of the directory `dir` whose names match `part`.
fn matches_in(ctx: &Ctx<'_>, dir: &[u8], part: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let Ok(node) = ctx.gate.resolve(dir) else {
        return Ok(Vec::new());
    };
    if node.kind() != NodeKind::Directory {
        return Ok(Vec::new());
    }
    let shown = crate::error::shown(dir);
    let listed = match crate::walk::list(ctx, &node, &shown) {
        Ok(l) => l,
        Err(e @ Error::Limit(_)) => return Err(e),
        Err(_) => return Ok(Vec::new()),
    };
    // A leading `.` is matched only by a pattern that starts with one (quoted or not).
    let dot = part.starts_with(b".") || part.starts_with(b"\\.");
    let pat = units(part, true);
    Ok(listed
        .into_iter()
        .map(|c| c.name.as_bytes().to_vec())
        .filter(|n| n != b"." && n != b"..")
        .filter(|n| dot || !n.starts_with(b"."))
        .filter(|n| matches(&pat, &units(n, false)))
        .collect())
}

/// The `[.` or `[=` that opens a collating symbol or an equivalence class inside a bracket
/// expression (`[[.a.]]`, `[[=a=]]`), which readbox does not match as bash does.
fn collating(pattern: &[u8]) -> Option<&'static str> {
    // Bytes, not characters: every byte looked for is ASCII, which UTF-8 never holds inside a
    // character. `\\` escapes the byte after it.
    let mut escaped = vec![false; pattern.len()];
    let mut i = 0;
    while i < pattern.len() {
        if pattern[i] == b'\\' && i + 1 < pattern.len() {
            escaped[i + 1] = true;
            i += 1;
        }
        i += 1;
    }
    let lit = |i: usize, b: u8| pattern.get(i) == Some(&b) && !escaped[i];
    let mut i = 0;
    while i < pattern.len() {
        if !lit(i, b'[') {
            i += 1;
            continue;
        }
        // A bracket expression: `!` or `^`, a first `]` that is a member, then up to `]`.
        let mut j = i + 1;
        if lit(j, b'!') || lit(j, b'^') {
            j += 1;
        }
        if lit(j, b']') {
            j += 1;
        }
        while j < pattern.len() && !lit(j, b']') {
            if lit(j, b'[') && lit(j + 1, b'.') {
                return Some("[.");
            }
            if lit(j, b'[') && lit(j + 1, b'=') {
                return Some("[=");
            }
            if lit(j, b'[') && lit(j + 1, b':') {
                // A class, to its `:]`.
                j += 2;
                while j < pattern.len() && !(lit(j, b':') && lit(j + 1, b']')) {
                    j += 1;
                }
                j += 2;
                continue;
            }
            j += 1;
        }
        i = j + 1;
    }
    None
}

/// Whether a pattern part holds an unescaped `*`, `?` or `[`.
fn has_glob(part: &[u8]) -> bool {
    let mut i = 0;
    while i < part.len() {
        match part[i] {
            b'\\' => i += 2,
            b'*' | b'?' | b'[' => return true,
            _ => i += 1,
        }
    }
    false
}

/// A pattern part with its escapes removed: the literal name.
fn unescape(part: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(part.len());
    let mut i = 0;
    while i < part.len() {
        if part[i] == b'\\' && i + 1 < part.len() {
            i += 1;
        }
        out.push(part[i]);
        i += 1;
    }
    out
}

/// One unit of a name or pattern: a character, or a byte that is not UTF-8 (kept apart from
/// every character); in a pattern, whether it was escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Unit {
    c: u32,
    escaped: bool,
}

/// Splits `bytes` into characters (and lone bytes); in a pattern, `\x` is an escaped `x`.
fn units(bytes: &[u8], pattern: bool) -> Vec<Unit> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut escaped = false;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if pattern && !escaped && c == '\\' {
                escaped = true;
                continue;
            }
            out.push(Unit {
                c: c as u32,
                escaped,
            });
            escaped = false;
        }
        for &b in chunk.invalid() {
            out.push(Unit {
                c: 0x11_0000 + u32::from(b),
                escaped,
            });
            escaped = false;
        }
    }
    out
}

/// Whether `name` matches `pat`: `*` any run, `?` one character, `[…]` a bracket expression
/// (`!` or `^` negates, `a-z` ranges, `[:class:]`), escaped units literal. One backtracking
/// point for the last `*`, so the cost is at most the product of the lengths.
fn matches(pat: &[Unit], name: &[Unit]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pat.len() {
            let u = pat[p];
            if !u.escaped && u.c == '*' as u32 {
                star = Some((p, n));
                p += 1;
                continue;
            }
            let step = if !u.escaped && u.c == '?' as u32 {
                Some(1)
            } else if !u.escaped && u.c == '[' as u32 {
                match bracket(&pat[p + 1..], name[n]) {
                    Some((hit, len)) => hit.then_some(len + 1),
                    // An unclosed `[` is an ordinary character.
                    None => (name[n].c == u.c).then_some(1),
                }
            } else {
                (name[n].c == u.c).then_some(1)
            };
            if let Some(len) = step {
                p += len;
                n += 1;
                continue;
            }
        }
        match star {
            Some((sp, sn)) => {
                p = sp + 1;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    pat[p..].iter().all(|u| !u.escaped && u.c == '*' as u32)
}

/// Matches `c` against the bracket expression that starts after `[` in `pat`: whether it
/// matched and how many pattern units the expression took up to and including its `]`; `None`
/// when there is no closing `]`.
fn bracket(pat: &[Unit], c: Unit) -> Option<(bool, usize)> {
    let lit = |u: &Unit, ch: char| !u.escaped && u.c == ch as u32;
    let mut i = 0;
    let negated = pat.first().is_some_and(|u| lit(u, '!') || lit(u, '^'));
    if negated {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    while i < pat.len() {
        let u = pat[i];
        if lit(&u, ']') && !first {
            return Some((hit != negated, i + 1));
        }
        first = false;
        if lit(&u, '[') && pat.get(i + 1).is_some_and(|v| lit(v, ':')) {
            // A class: `[:alpha:]`.
            let rest = &pat[i + 2..];
            if let Some(end) = rest
                .windows(2)
                .position(|w| lit(&w[0], ':') && lit(&w[1], ']'))
            {
                let name: String = rest[..end]
                    .iter()
                    .filter_map(|u| char::from_u32(u.c))
                    .collect();
                hit |= char::from_u32(c.c).is_some_and(|ch| in_class(&name, ch));
                i += 2 + end + 2;
                continue;
            }
        }
        if pat.get(i + 1).is_some_and(|v| lit(v, '-'))
            && let Some(hi) = pat.get(i + 2)
            && !lit(hi, ']')
        {
            hit |= u.c <= c.c && c.c <= hi.c;
            i += 3;
            continue;
        }
        hit |= u.c == c.c;
        i += 1;
    }
    None
}

/// The POSIX character classes, for ASCII as the C locale has them and for other letters as
/// Unicode does.
fn in_class(name: &str, c: char) -> bool {
    match name {
        "alpha" => c.is_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_alphanumeric(),
        "upper" => c.is_uppercase(),
        "lower" => c.is_lowercase(),
        "space" => c.is_whitespace(),
        "blank" => c == ' ' || c == '\t',
        "punct" => c.is_ascii_punctuation(),
        "xdigit" => c.is_ascii_hexdigit(),
        "cntrl" => c.is_control(),
        "print" => !c.is_control(),
        "graph" => !c.is_control() && !c.is_whitespace(),
        _ => false,
    }
}

/// Whether `name` (a plain file name) matches the glob `pattern` as written in a command line;
/// for tests of the matcher.
pub fn name_matches(pattern: &[u8], name: &OsStr) -> bool {
    matches(&units(pattern, true), &units(name.as_bytes(), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> bool {
        name_matches(p.as_bytes(), OsStr::new(n))
    }

    #[test]
    fn collating_symbols_and_equivalence_classes_are_named() {
        let c = |p: &str| collating(p.as_bytes());
        assert_eq!(c("[[.a.]]"), Some("[."));
        assert_eq!(c("x[![=a=]]"), Some("[="));
        assert_eq!(c("[[:alpha:][.a.]]"), Some("[."));
        assert_eq!(c("[[:alpha:]]*"), None);
        assert_eq!(c("[.]"), None);
        assert_eq!(c("\\[[.a.]]"), None);
        assert_eq!(c("a[b"), None);
    }

    #[test]
    fn stars_questions_and_brackets() {
        assert!(m("*.rs", "main.rs"));
        assert!(!m("*.rs", "main.rsx"));
        assert!(m("a?c", "abc"));
        assert!(m("a?c", "a\u{e9}c"));
        assert!(m("[ab]x", "bx"));
        assert!(!m("[!ab]x", "bx"));
        assert!(m("[^ab]x", "cx"));
        assert!(m("[a-c]*", "beta"));
        assert!(m("[]]", "]"));
        assert!(m("[[:digit:]]*", "1st"));
        assert!(m("a[", "a["));
        assert!(m("*a*b*c*", "xaxbxcx"));
        assert!(!m("*a*b*c*", "xaxcxbx"));
    }

    #[test]
    fn escaped_characters_are_literal() {
        assert!(m("\\*", "*"));
        assert!(!m("\\*", "x"));
        assert!(m("a\\?*", "a?b"));
    }
}
