//! grep's note on a PATTERN that reads as a regular expression (docs/contract.md#tools): grep
//! stays literal, and when no line matched, the note says which signs show that one was meant
//! and gives the literal calls that come closest.

use memchr::memmem;

use crate::call::Ctx;
use crate::registry::Args;

/// What in a PATTERN shows that a regular expression was meant, in the order the note names them
/// (docs/contract.md#tools): a `^` first, a `$` last, `.*`, `\|`, `\b \d \s \w` (and their
/// capitals), a `[…]` class, an alternation in parentheses.
fn regex_signs(p: &[u8]) -> Vec<&'static str> {
    let mut signs = Vec::new();
    if p.len() > 1 && p.starts_with(b"^") {
        signs.push("`^` first");
    }
    if p.len() > 1 && p.ends_with(b"$") && !p.ends_with(b"\\$") {
        signs.push("`$` last");
    }
    if memmem::find(p, b".*").is_some() {
        signs.push("`.*`");
    }
    if memmem::find(p, b"\\|").is_some() {
        signs.push("`\\|`");
    }
    if p.windows(2)
        .any(|w| w[0] == b'\\' && b"bBdDsSwW".contains(&w[1]))
    {
        signs.push("a `\\b`, `\\d`, `\\s` or `\\w`");
    }
    if class_at(p).is_some() {
        signs.push("a `[…]` class");
    }
    if group_alternation(p).is_some() {
        signs.push("`(a|b)`");
    }
    signs
}

/// The first `[…]` class of `p` (a `[`, at least one character, a `]`): its start and end.
fn class_at(p: &[u8]) -> Option<(usize, usize)> {
    let open = memchr::memchr(b'[', p)?;
    let close = open + 2 + memchr::memchr(b']', p.get(open + 2..)?)?;
    Some((open, close))
}

/// An alternation in parentheses, `prefix(a|b|…)suffix`.
struct Group<'p> {
    prefix: &'p [u8],
    alternatives: Vec<&'p [u8]>,
    suffix: &'p [u8],
}

/// The first `(a|b|…)` of `p`.
fn group_alternation(p: &[u8]) -> Option<Group<'_>> {
    let open = memchr::memchr(b'(', p)?;
    let close = open + memchr::memchr(b')', &p[open..])?;
    let inside = &p[open + 1..close];
    if !inside.contains(&b'|') {
        return None;
    }
    Some(Group {
        prefix: &p[..open],
        alternatives: inside.split(|b| *b == b'|').collect(),
        suffix: &p[close + 1..],
    })
}

/// The literal patterns that come closest to what the regular expression `p` would find, one
/// call each; empty when no literal text does (`\d+`, a class).
fn closest_literals(p: &[u8]) -> Vec<Vec<u8>> {
    let alternatives: Vec<Vec<u8>> = if memmem::find(p, b"\\|").is_some() {
        let mut parts = Vec::new();
        let mut rest = p;
        while let Some(i) = memmem::find(rest, b"\\|") {
            parts.push(rest[..i].to_vec());
            rest = &rest[i + 2..];
        }
        parts.push(rest.to_vec());
        parts
    } else if let Some(g) = group_alternation(p) {
        g.alternatives
            .iter()
            .map(|a| [g.prefix, a, g.suffix].concat())
            .collect()
    } else {
        vec![p.to_vec()]
    };
    let mut literals = Vec::new();
    for alt in alternatives {
        let mut a = alt.as_slice();
        a = a.strip_prefix(b"^").unwrap_or(a);
        if !a.ends_with(b"\\$") {
            a = a.strip_suffix(b"$").unwrap_or(a);
        }
        let mut text = Vec::new();
        let mut i = 0;
        while i < a.len() {
            if a[i] == b'\\' && matches!(a.get(i + 1), Some(b'b' | b'B')) {
                i += 2;
            } else {
                text.push(a[i]);
                i += 1;
            }
        }
        // `.*` joins pieces that must all be on the line: the longest finds the fewest others.
        let piece = text
            .split(|b| *b == b'.')
            .map(|s| s.strip_prefix(b"*").unwrap_or(s))
            .max_by_key(|s| s.len())
            .unwrap_or(&[])
            .to_vec();
        let piece = if memmem::find(&text, b".*").is_some() {
            piece
        } else {
            text
        };
        let special = |b: &u8| b"\\[]().*+?{}|^$".contains(b);
        if piece.is_empty() || piece.iter().any(special) {
            return Vec::new();
        }
        if !literals.contains(&piece) {
            literals.push(piece);
        }
    }
    literals
}

/// The note of a search that matched no line with a PATTERN that reads as a regular
/// expression: that PATTERN is literal, and the literal calls that come closest.
pub(super) fn note_literal(ctx: &Ctx<'_>, args: &Args) {
    let pattern = super::Params::of(args).pattern;
    let signs = regex_signs(pattern);
    if signs.is_empty() {
        return;
    }
    let calls: Vec<String> = closest_literals(pattern)
        .iter()
        .take(8)
        .map(|l| crate::tools::call_with(ctx, "grep", args, &[(super::Params::PATTERN, l)]))
        .collect();
    let closest = if calls.is_empty() {
        String::new()
    } else {
        format!("; the closest literal search: {}", calls.join("; "))
    };
    ctx.out.note(format!(
        "PATTERN is matched as literal text, not as a regular expression, and it holds {}{closest}",
        signs.join(", ")
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signs_of_a_regular_expression_and_the_closest_literals() {
        let lits = |p: &[u8]| -> Vec<String> {
            closest_literals(p)
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect()
        };
        assert_eq!(lits(b"^use"), ["use"]);
        assert_eq!(lits(b"TODO\\|FIXME"), ["TODO", "FIXME"]);
        assert_eq!(lits(b"x(ab|cd)y"), ["xaby", "xcdy"]);
        assert_eq!(lits(b"impl.*Display"), ["Display"]);
        assert_eq!(lits(b"\\bword\\b"), ["word"]);
        assert!(lits(b"\\d+").is_empty() && lits(b"[Tt]odo").is_empty());
        assert!(regex_signs(b"plain words").is_empty());
        assert!(regex_signs(b"a.b").is_empty() && regex_signs(b"$5").is_empty());
        assert_eq!(regex_signs(b"^a$"), ["`^` first", "`$` last"]);
    }
}
