//! The name/value pairs written over two lines (Kubernetes' `- name: AWS_SECRET_ACCESS_KEY`
//! then `value: …`, an `Authorization:` header folded after its scheme): which line is a name
//! line, whose rules are then looked for only at the start of the next
//! ([`Rule::name`](super::Rule::name)).

use std::sync::OnceLock;

use regex::bytes::Regex;

use super::{RULE_COUNT, RULES, compile, keywords, split_terminator};

/// Each rule's name pattern ([`Rule::name`](super::Rule::name)), compiled on first use
/// ([`names`]).
static NAMES: [OnceLock<Regex>; RULE_COUNT] = [const { OnceLock::new() }; RULE_COUNT];

/// The rules whose values follow a name line ([`Rule::name`](super::Rule::name)), one bit per
/// index into [`RULES`]: their patterns are looked for only at the start of the line after one.
pub(super) static PAIRS: u32 = {
    let (mut bits, mut i) = (0, 0);
    while i < RULE_COUNT {
        if RULES[i].name.is_some() {
            bits |= 1 << i;
        }
        i += 1;
    }
    bits
};

/// The longest name line ([`Rule::name`](super::Rule::name)), in bytes without its terminator:
/// a longer line is none (the tests check that no name pattern matches more).
pub(super) const NAME_MAX: usize = 256;

/// The rules with a name pattern in `mask` (the rules whose keywords occur in `body`, one bit
/// per index into [`RULES`]) of which `body`, a line without its terminator, is the name line,
/// in the same form.
pub(super) fn names(body: &[u8], mask: u32) -> u32 {
    match mask & PAIRS != 0 && may_name(body) {
        true => name_matches(body, mask & PAIRS),
        false => 0,
    }
}

/// The rules among `pairs` (rules with a name pattern, one bit per index into [`RULES`]) whose
/// name pattern `body` matches.
fn name_matches(body: &[u8], pairs: u32) -> u32 {
    let mut found = pairs;
    let mut bits = pairs;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let pattern = RULES[i].name.expect("a rule in PAIRS has a name pattern");
        if !NAMES[i].get_or_init(|| compile(pattern)).is_match(body) {
            found &= !(1 << i);
        }
    }
    found
}

/// Whether `body` (a line without its terminator) could be a name line, at a glance, as every
/// name pattern requires: it is at most [`NAME_MAX`] bytes long, and the text before its first
/// `:`, less the spaces, tabs and quotes at its end, ends in `name` or `key`, or is a header
/// name that ends in `authorization` (folded over two lines), ignoring ASCII case. Most lines
/// fail here, before any pattern.
fn may_name(body: &[u8]) -> bool {
    if body.len() > NAME_MAX {
        return false;
    }
    let Some(colon) = memchr::memchr(b':', body) else {
        return false;
    };
    let field = body[..colon]
        .iter()
        .rposition(|b| !matches!(b, b' ' | b'\t' | b'"' | b'\''))
        .map_or(&b""[..], |i| &body[..=i]);
    let ends = |word: &[u8]| {
        field.len() >= word.len() && field[field.len() - word.len()..].eq_ignore_ascii_case(word)
    };
    ends(b"name") || ends(b"key") || ends(b"authorization")
}

/// The rules of which the last line of `lines` (whole lines) is the name line, one bit per
/// index into [`RULES`]. The keyword scan runs only on a line that [`may_name`] lets through.
pub(super) fn names_at_end(lines: &[u8]) -> u32 {
    let head = &lines[..lines.len().saturating_sub(1)];
    let start = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
    let (body, _) = split_terminator(&lines[start..]);
    match may_name(body) {
        true => name_matches(body, keywords::rules_in(body) & PAIRS),
        false => 0,
    }
}
