//! The bounds every glob keeps before it reaches globset (docs/contract.md#confinement).
//!
//! They hold for find's PATTERN, grep's FILE_PATTERN, the excludes, and the lines of ignore files
//! found in the tree. globset turns nested `{…}` alternatives into a regular expression, and drops
//! them, by recursion, one level of the stack per level of braces: a pattern nested thousands deep
//! would overflow the stack and end the process without an answer. A very long pattern makes a
//! large automaton for nothing.
//!
//! Invariant: a pattern that passes [`check`] is at most [`MAX_BYTES`] long and nests its
//! alternatives at most [`MAX_NESTING`] deep, counted as globset parses them.

/// The longest glob accepted, in bytes.
pub const MAX_BYTES: usize = 4096;

/// The deepest nesting of `{…}` alternatives accepted.
pub const MAX_NESTING: usize = 32;

/// Checks `pattern` against the bounds. Callers turn the reason into a `usage:` error
/// (arguments) or a `config:` error (excludes), or skip the pattern (ignore files).
///
/// # Errors
/// Why the pattern is refused, as a phrase (`it is longer than 4096 bytes`).
pub fn check(pattern: &str) -> Result<(), String> {
    if pattern.len() > MAX_BYTES {
        return Err(format!("it is longer than {MAX_BYTES} bytes"));
    }
    if nesting(pattern) > MAX_NESTING {
        return Err(format!("its braces nest deeper than {MAX_NESTING} levels"));
    }
    Ok(())
}

/// The deepest nesting of `{…}` in `pattern` as globset reads it with backslash escapes on: a
/// `\` makes the next character literal; braces inside a `[…]` class are literal (a `]` right
/// after `[`, `[!` or `[^` belongs to the class); a `[` that is never closed is literal, and so
/// is every later `[`. A `}` with nothing open is a syntax error for globset; here it changes
/// nothing.
fn nesting(pattern: &str) -> usize {
    let cs: Vec<char> = pattern.chars().collect();
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut classes = true;
    let mut i = 0;
    while i < cs.len() {
        match cs[i] {
            '\\' => i += 1,
            '[' if classes => match class_end(&cs, i + 1) {
                Some(end) => i = end,
                None => classes = false,
            },
            '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    deepest
}

/// The index of the `]` that closes the class whose content starts at `from`, if any.
fn class_end(cs: &[char], from: usize) -> Option<usize> {
    let mut i = from;
    if matches!(cs.get(i), Some('!' | '^')) {
        i += 1;
    }
    let first = i;
    while i < cs.len() {
        if cs[i] == ']' && i > first {
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_open_alternatives_as_globset_does() {
        assert_eq!(nesting("*.rs"), 0);
        assert_eq!(nesting("{a,b}{c,d}"), 1);
        assert_eq!(nesting("{a,{b,{c,d}}}"), 3);
        assert_eq!(nesting(r"\{\{a"), 0);
        assert_eq!(nesting("[{][{]{a}"), 1);
        assert_eq!(nesting("[]{]{a}"), 1);
        assert_eq!(nesting("[!]{]{a}"), 1);
        // An unclosed class is literal: the braces after it count.
        assert_eq!(nesting("[{{"), 2);
        assert_eq!(nesting("}}}{"), 1);
    }

    #[test]
    fn a_class_cannot_hide_open_braces() {
        // `}` inside a class closes nothing: the depth keeps growing.
        let sneaky = "{[}]".repeat(40);
        assert_eq!(nesting(&sneaky), 40);
        assert!(check(&sneaky).is_err());
    }

    #[test]
    fn bounds_are_inclusive() {
        let deep = |n: usize| format!("{}a{}", "{".repeat(n), "}".repeat(n));
        assert!(check(&deep(MAX_NESTING)).is_ok());
        assert!(check(&deep(MAX_NESTING + 1)).is_err());
        assert!(check(&"a".repeat(MAX_BYTES)).is_ok());
        assert_eq!(
            check(&"a".repeat(MAX_BYTES + 1)),
            Err("it is longer than 4096 bytes".to_string())
        );
    }

    #[test]
    fn every_pattern_within_bounds_compiles_without_overflow() {
        // The deepest accepted nesting, in the shapes globset recurses on, on a small stack.
        let worst = format!("{}a{}", "{x,".repeat(MAX_NESTING), "}".repeat(MAX_NESTING));
        assert!(check(&worst).is_ok());
        let compiled = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || globset::Glob::new(&worst).is_ok())
            .unwrap()
            .join()
            .unwrap();
        assert!(compiled);
    }
}
