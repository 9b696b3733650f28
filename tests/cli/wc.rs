//! wc (docs/contract.md#tools): one JSON line of lines, words and bytes, words split on every
//! Unicode White_Space character (also across a read block) and on nothing that only looks
//! blank, and invalid bytes counted as word characters.

use crate::support::{Answer, TestEnv};

/// The wc output as `[lines, words, bytes]`, after checking that it is one line of JSON with
/// exactly those keys, in that order, holding integers.
#[track_caller]
pub(crate) fn wc_of(a: &Answer) -> [u64; 3] {
    assert_eq!(a.error, None, "wc failed for {}", a.shown);
    let body = a.output.strip_suffix('\n').unwrap_or(&a.output);
    assert!(
        !body.contains('\n'),
        "wc output is not one line: {:?}",
        a.output
    );
    let v = a.json();
    let obj = v.as_object().expect("wc prints a JSON object");
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["lines", "words", "bytes"],
        "wc keys in order for {}",
        a.shown
    );
    let n = |k: &str| {
        obj[k]
            .as_u64()
            .unwrap_or_else(|| panic!("wc {k} is not an integer: {}", obj[k]))
    };
    [n("lines"), n("words"), n("bytes")]
}

/// What wc must count, straight from the contract: `\n` bytes, maximal runs of characters that are
/// not White_Space in the lossily decoded text (Rust's `char::is_whitespace` is exactly that
/// property), raw bytes.
#[expect(
    clippy::naive_bytecount,
    reason = "the reference counts as plainly as the contract says, by no code the tool shares"
)]
pub(crate) fn wc_reference(data: &[u8]) -> [u64; 3] {
    let lines = data.iter().filter(|&&b| b == b'\n').count();
    let words = String::from_utf8_lossy(data)
        .split(char::is_whitespace)
        .filter(|w| !w.is_empty())
        .count();
    [lines as u64, words as u64, data.len() as u64]
}

#[test]
fn wc_prints_one_json_line_of_lines_words_bytes() {
    let env = TestEnv::new();
    env.write("notes.txt", "hello world\nsecond line\nlast");
    assert_eq!(wc_of(&env.both("wc", &["notes.txt"])), [2, 5, 28]);
    let cases: [(&str, &[u8], [u64; 3]); 6] = [
        ("empty", b"", [0, 0, 0]),
        ("nl", b"\n", [1, 0, 1]),
        ("only", b"only", [0, 1, 4]),
        ("crlf", b"a\r\nb\r\n", [2, 2, 6]),
        ("spaces", b"  a  b\t\tc \n\n d", [2, 4, 14]),
        ("utf8", "日本 語\n".as_bytes(), [1, 2, 11]),
    ];
    for (name, data, want) in cases {
        env.write(name, data);
        assert_eq!(wc_of(&env.both("wc", &[name])), want, "wc {name}");
    }
}

/// Unicode's White_Space property (PropList.txt), the word separators of docs/contract.md#tools,
/// wc.
const WHITE_SPACE: [char; 25] = [
    '\u{9}', '\u{a}', '\u{b}', '\u{c}', '\u{d}', ' ', '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}',
    '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}',
    '\u{2009}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}',
];

#[test]
fn wc_splits_words_on_every_unicode_white_space_character() {
    // The reference counter relies on char::is_whitespace being White_Space: check that first.
    let from_std: Vec<char> = (0..=0x10_FFFFu32)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .collect();
    assert_eq!(
        from_std, WHITE_SPACE,
        "char::is_whitespace is not White_Space"
    );
    let env = TestEnv::new();
    for (i, c) in WHITE_SPACE.iter().enumerate() {
        let text = format!("a{c}b{c}{c}c");
        env.write(&format!("w{i}"), &text);
        let got = wc_of(&env.run("wc", &[format!("w{i}").as_str()]));
        assert_eq!(got[1], 3, "U+{:04X} must separate words", *c as u32);
        assert_eq!(got[2], text.len() as u64, "bytes for U+{:04X}", *c as u32);
    }
}

#[test]
fn wc_does_not_split_on_characters_that_only_look_blank() {
    let env = TestEnv::new();
    for (i, c) in [
        '\u{200b}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{1f}', '\u{feff}', '\u{180e}', '\u{2060}',
        '\u{ad}', '\u{200c}', '\u{200d}', '\u{3164}', '\u{2800}', '\u{0}',
    ]
    .iter()
    .enumerate()
    {
        let text = format!("a{c}b\n");
        env.write(&format!("n{i}"), &text);
        let got = wc_of(&env.run("wc", &[format!("n{i}").as_str()]));
        assert_eq!(
            got,
            [1, 1, text.len() as u64],
            "U+{:04X} is not White_Space",
            *c as u32
        );
    }
}

#[test]
fn wc_classifies_every_code_point_like_white_space() {
    // Each code point once, after an `x`: any character misread as a separator (or a separator
    // missed) changes the word count. Astral planes are sampled to keep the file small.
    let env = TestEnv::new();
    let mut text = String::new();
    for cp in (0..=0xFFFFu32).chain((0x1_0000..=0x10_FFFF).step_by(7)) {
        if let Some(c) = char::from_u32(cp) {
            text.push('x');
            text.push(c);
        }
    }
    env.write("all", &text);
    assert_eq!(
        wc_of(&env.both("wc", &["all"])),
        wc_reference(text.as_bytes())
    );
}

#[test]
fn wc_white_space_split_by_a_read_block_still_separates_words() {
    // A dense run of multibyte separators, shifted through every alignment, so that each block
    // edge cuts each separator at each of its bytes somewhere.
    let env = TestEnv::new();
    let unit = "a\u{3000}b\u{85}c\u{2028}d\u{a0}e\u{1680}f\u{205f}";
    for phase in 0..unit.len() {
        let mut text = "y".repeat(phase);
        while text.len() < 140_000 {
            text.push_str(unit);
        }
        let name = format!("s{phase}");
        env.write(&name, &text);
        assert_eq!(
            wc_of(&env.run("wc", &[name.as_str()])),
            wc_reference(text.as_bytes()),
            "wc of phase {phase}"
        );
    }
}

#[test]
fn wc_counts_invalid_bytes_as_word_characters() {
    let env = TestEnv::new();
    let cases: [(&[u8], u64); 8] = [
        (b"a\xffb c\n", 2),
        (b"\xff \xfe", 2),
        (b"\xc2\xa0x\xc2", 1),
        (b"\xe3\x80\x80a\xe3\x80", 1),
        (b"\x00\x00 \x00", 2),
        // A truncated U+3000 is not a separator, nor is a lone lead byte before a space's tail.
        (b"a\xe3\x80b", 1),
        (b"a\xe3\xe3\x80\x80b", 2),
        (b"\xe2\xc2\xa0", 1),
    ];
    for (i, (data, words)) in cases.iter().enumerate() {
        let name = format!("b{i}");
        env.write(&name, data);
        let got = wc_of(&env.both("wc", &[name.as_str()]));
        assert_eq!(got, wc_reference(data), "wc of {data:?}");
        assert_eq!(got[1], *words, "words of {data:?}");
    }
}
