//! Names in output (docs/contract.md#names): an unsafe name is written whole in `$'…'` quoting.
//!
//! A path or file name that could forge a record or reach a terminal raw is written whole in the
//! shell's ANSI-C quoting, `$'…'`, so that one line is always one record and a shell turns the text
//! back into the exact name.
//!
//! Invariant: every tool that prints a name (ls, find, grep's `path:`, diff's headers, stat's
//! `path`, notes) passes it through [`quoted`] first; file content never goes through here.

use std::borrow::Cow;

/// Whether `c` is a bidirectional control (U+202A–U+202E, U+2066–U+2069).
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Whether `c` must not appear raw in a name: a C0 control (newline and tab included), DEL, a C1
/// control or a bidirectional control.
fn is_unsafe(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1F}' | '\u{7F}'..='\u{9F}') || is_bidi(c)
}

/// Whether `name` must be written in `$'…'` quoting: it holds an unsafe character or bytes that
/// are not UTF-8, or contains `$'` (which would otherwise read as the start of such a quote).
pub fn needs_quoting(name: &[u8]) -> bool {
    if name.windows(2).any(|w| w == b"$'") {
        return true;
    }
    if name.is_ascii() {
        return name.iter().any(|&b| b < 0x20 || b == 0x7F);
    }
    name.utf8_chunks()
        .any(|chunk| !chunk.invalid().is_empty() || chunk.valid().chars().any(is_unsafe))
}

/// `name` as output writes it: unchanged, or whole in `$'…'` quoting.
///
/// The quoting writes `\\`, `\'`, `\n`, `\t`, `\r`, and `\xHH` for every other unsafe or invalid
/// byte (a C1 control as the two bytes of its UTF-8 form, a bidi control as its three), as bash's
/// `printf %q` and `ls --quoting-style=c` family do.
pub fn quoted(name: &[u8]) -> Cow<'_, [u8]> {
    if !needs_quoting(name) {
        return Cow::Borrowed(name);
    }
    let mut out = Vec::with_capacity(name.len() + 8);
    out.extend_from_slice(b"$'");
    let hex = |out: &mut Vec<u8>, b: u8| out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.extend_from_slice(b"\\\\"),
                '\'' => out.extend_from_slice(b"\\'"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\t' => out.extend_from_slice(b"\\t"),
                '\r' => out.extend_from_slice(b"\\r"),
                c if is_unsafe(c) => {
                    let mut buf = [0u8; 4];
                    for &b in c.encode_utf8(&mut buf).as_bytes() {
                        hex(&mut out, b);
                    }
                }
                c => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        for &b in chunk.invalid() {
            hex(&mut out, b);
        }
    }
    out.push(b'\'');
    Cow::Owned(out)
}

/// `name` as one word of a shell command in a hint or note: `$'…'` quoted where [`quoted`] says,
/// else as it is when it holds only plain characters, else in single quotes.
pub fn shell_word(name: &[u8]) -> String {
    if needs_quoting(name) {
        return String::from_utf8_lossy(&quoted(name)).into_owned();
    }
    let text = String::from_utf8_lossy(name);
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// A call of `tool` with `words` as a hint or note writes it, so that it runs as written.
///
/// Each word is as [`shell_word`] gives it, and `--` follows the tool's name when a word other than
/// `-` starts with `-` (it would read as a flag otherwise; `-` alone is standard input either way).
pub fn command(tool: &str, words: &[&[u8]]) -> String {
    let mut text = tool.to_string();
    if words.iter().any(|w| w.starts_with(b"-") && *w != b"-") {
        text.push_str(" --");
    }
    for w in words {
        text.push(' ');
        text.push_str(&shell_word(w));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(name: &[u8]) -> String {
        String::from_utf8(quoted(name).into_owned()).unwrap()
    }

    #[test]
    fn plain_names_are_unchanged() {
        for name in ["a.txt", "with space", "é€", "x$y", "it's"] {
            assert_eq!(q(name.as_bytes()), name);
        }
    }

    #[test]
    fn unsafe_names_are_quoted_whole() {
        assert_eq!(q(b"a\nb"), r"$'a\nb'");
        assert_eq!(q(b"e\xfff"), r"$'e\xfff'");
        assert_eq!(q("c1\u{9b}".as_bytes()), r"$'c1\xc2\x9b'");
        assert_eq!(q("inv\u{202e}txt".as_bytes()), r"$'inv\xe2\x80\xaetxt'");
        assert_eq!(q(b"del\x7f"), r"$'del\x7f'");
        assert_eq!(q(b"$'dollar"), r"$'$\'dollar'");
        assert_eq!(q(b"t\tb\\s\r"), r"$'t\tb\\s\r'");
    }

    #[test]
    fn shell_words_quote_what_a_shell_would_split() {
        assert_eq!(shell_word(b"src/a.rs"), "src/a.rs");
        assert_eq!(shell_word(b"my file"), "'my file'");
        assert_eq!(shell_word(b"it's"), r"'it'\''s'");
        assert_eq!(shell_word(b"a\nb"), r"$'a\nb'");
    }

    #[test]
    fn a_command_puts_double_dash_before_a_word_that_looks_like_a_flag() {
        assert_eq!(command("cat", &[b"a.txt", b"37"]), "cat a.txt 37");
        assert_eq!(command("cat", &[b"-x", b"37"]), "cat -- -x 37");
        assert_eq!(command("grep", &[b"-foo", b"-"]), "grep -- -foo -");
        assert_eq!(command("grep", &[b"foo", b"-"]), "grep foo -");
        assert_eq!(command("grep", &[b"", b"a b"]), "grep '' 'a b'");
    }
}
