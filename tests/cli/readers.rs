//! cat, head and tail (docs/contract.md#tools): their output byte for byte, and the places where
//! streaming readers go wrong: characters and invalid sequences split by internal buffer edges,
//! a missing final newline, reading a huge file from the end, and stopping early within a small
//! read budget.

use std::os::unix::fs::FileExt;

use crate::confinement::{READERS, fixture, names_only_the_argument};
use crate::support::{Answer, TestEnv};
use crate::wc::{wc_of, wc_reference};

/// The lines of `data`, each with its own `\n` (the last one may have none).
fn lines_of(data: &[u8]) -> Vec<&[u8]> {
    data.split_inclusive(|&b| b == b'\n').collect()
}

fn head_reference(data: &[u8], n: usize) -> String {
    String::from_utf8_lossy(
        &lines_of(data)[..]
            .iter()
            .take(n)
            .copied()
            .collect::<Vec<_>>()
            .concat(),
    )
    .into_owned()
}

fn tail_reference(data: &[u8], n: usize) -> String {
    let lines = lines_of(data);
    let from = lines.len().saturating_sub(n);
    String::from_utf8_lossy(&lines[from..].concat()).into_owned()
}

/// Internal buffer sizes that readers commonly use; files are built around them.
const EDGES: [usize; 4] = [4096, 8192, 65536, 131_072];

/// `size` bytes of ASCII lines of `line_len` bytes (one line when 0), in which the character `c`
/// straddles every edge of [`EDGES`] counted from the start and from the end, with `before` of
/// its bytes before the edge (where two such places would overlap, the first one wins).
fn straddling(size: usize, line_len: usize, c: char, before: usize) -> Vec<u8> {
    let mut data: Vec<u8> = (0..size)
        .map(|i| {
            if line_len > 0 && i % line_len == line_len - 1 {
                b'\n'
            } else {
                b'a' + (i % 23) as u8
            }
        })
        .collect();
    let mut buf = [0u8; 4];
    let enc = c.encode_utf8(&mut buf).as_bytes();
    let mut taken: Vec<usize> = Vec::new();
    for e in EDGES {
        for edge in [Some(e), size.checked_sub(e)] {
            let Some(at) = edge.and_then(|edge| edge.checked_sub(before)) else {
                continue;
            };
            if at + enc.len() > size || taken.iter().any(|&t| t.abs_diff(at) < 4) {
                continue;
            }
            data[at..at + enc.len()].copy_from_slice(enc);
            taken.push(at);
        }
    }
    data
}

/// Every way a character can be cut: (character, bytes of it before the edge).
const SPLITS: [(char, usize); 6] = [
    ('\u{e9}', 1),
    ('\u{65e5}', 1),
    ('\u{65e5}', 2),
    ('\u{1F600}', 1),
    ('\u{1F600}', 2),
    ('\u{1F600}', 3),
];

/// cat, head, tail and wc of the file `name` holding `data`, against the contract: cat the whole
/// file, head every line but the last, tail every line (so that reading backwards crosses every
/// edge), wc the three counts.
#[track_caller]
fn check_readers(env: &TestEnv, name: &str, data: &[u8]) {
    let lines = lines_of(data).len();
    assert!(
        lines <= 10_000,
        "{name}: more lines than one call may ask for"
    );
    env.run("cat", &[name]).ok(&String::from_utf8_lossy(data));
    let most = lines.saturating_sub(1).max(1);
    env.run("head", &[name, most.to_string().as_str()])
        .ok(&head_reference(data, most));
    env.run("tail", &[name, lines.to_string().as_str()])
        .ok(&tail_reference(data, lines));
    assert_eq!(
        wc_of(&env.run("wc", &[name])),
        wc_reference(data),
        "wc of {name}"
    );
}

/// Files of `size + delta` bytes for each delta, with each kind of split at every edge, plus one
/// file that is a single line, all checked with [`check_readers`].
fn check_edges_near(size: usize, deltas: &[isize]) {
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1048576");
    for &delta in deltas {
        let len = size.checked_add_signed(delta).unwrap();
        for (c, before) in SPLITS {
            let data = straddling(len, 40, c, before);
            let name = format!("f{len}_{}_{before}", c.len_utf8());
            env.write(&name, &data);
            check_readers(&env, &name, &data);
        }
        // One long line: the reader must hold it across its blocks.
        let data = straddling(len, 0, '\u{1F600}', 2);
        // The construction really cuts a character at each edge from the start.
        for e in EDGES.iter().filter(|&&e| e + 2 <= len) {
            assert_eq!(
                data[*e] & 0xC0,
                0x80,
                "no character straddles byte {e} of {len}"
            );
        }
        let name = format!("line{len}");
        env.write(&name, &data);
        check_readers(&env, &name, &data);
    }
}

/// A deterministic mix of `len` bytes drawn from `alphabet` (a small LCG, so that failures repeat).
fn byte_soup(len: usize, seed: u64, alphabet: &[&[u8]]) -> Vec<u8> {
    let mut state = seed;
    let mut out = Vec::with_capacity(len + 4);
    while out.len() < len {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let pick = (state >> 33) as usize % alphabet.len();
        out.extend_from_slice(alphabet[pick]);
    }
    out.truncate(len);
    out
}

// ---------------------------------------------------------------------------------------------
// §7 cat
// ---------------------------------------------------------------------------------------------

#[test]
fn cat_returns_the_content_unchanged() {
    let env = TestEnv::new();
    let text = "crlf\r\nlone\rcr\n\ttab \t\n\u{e9}t\u{e9} \u{65e5}\u{672c} \u{1F600}\n\n\nno final newline";
    env.write("f.txt", text);
    env.both("cat", &["f.txt"]).ok(text);
    env.write("empty", "");
    env.both("cat", &["empty"]).ok("");
    env.write("nl", "\n");
    env.both("cat", &["nl"]).ok("\n");
    // C1 and bidi controls reach `output` as the same characters (escaped only on the wire).
    let controls = "a\u{85}b\u{9b}c\u{202e}d\u{2066}e\u{7f}\n";
    env.write("ctl", controls);
    env.both("cat", &["ctl"]).ok(controls);
}

#[test]
fn cat_decodes_bytes_that_are_not_utf8_lossily() {
    let env = TestEnv::new();
    let mut data: Vec<u8> = (0..=255u8).collect::<Vec<_>>().repeat(3);
    data.extend_from_slice(
        b"\xe6\x97\xa5\xe6\x97\n\xf0\x9f\x98\x80\xf0\x9f\x98\xed\xa0\x80\x00end\xe3",
    );
    env.write("all.bin", &data);
    env.both("cat", &["all.bin"])
        .ok(&String::from_utf8_lossy(&data));
}

#[test]
fn cat_follows_a_symlink_inside_the_root() {
    let env = fixture();
    env.symlink("to_x", "sub/x");
    env.symlink("sub/to_a", "../a.txt");
    env.symlink("abs_a", env.root().join("a.txt"));
    env.both("cat", &["to_x"]).ok("S1\n");
    env.both("cat", &["sub/to_a"]).ok("hello\n");
    env.both("cat", &["abs_a"]).ok("hello\n");
}

#[test]
fn missing_paths_are_not_found() {
    let env = fixture();
    env.mkdir("d");
    for tool in READERS {
        for p in ["nope", "d/nope", "nodir/x", "sub/nope/.."] {
            let a = env.run(tool, &[p]);
            a.fails("not found", p);
            names_only_the_argument(&a, &env, p, &[]);
        }
    }
    env.both("cat", &[""]).fails("not found", "");
}

// ---------------------------------------------------------------------------------------------
// §7 head and tail
// ---------------------------------------------------------------------------------------------

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn head_prints_the_first_lines_with_their_own_endings() {
    let env = TestEnv::new();
    env.write("f", numbered(20));
    env.both("head", &["f"]).ok(&numbered(10));
    env.both("head", &["f", "3"]).ok(&numbered(3));
    env.both("head", &["f", "1"]).ok("line 1\n");
    env.both("head", &["f", "20"]).ok(&numbered(20));
    env.both("head", &["f", "25"]).ok(&numbered(20));
    env.write("crlf", "a\r\nb\r\nc\r\n");
    env.both("head", &["crlf", "2"]).ok("a\r\nb\r\n");
    // A lone CR does not end a line.
    env.write("cr", "a\rb\rc\nd\n");
    env.both("head", &["cr", "1"]).ok("a\rb\rc\n");
    env.write("blank", "\n\n\nx\n");
    env.both("head", &["blank", "2"]).ok("\n\n");
    env.write("empty", "");
    env.both("head", &["empty", "3"]).ok("");
}

#[test]
fn tail_prints_the_last_lines_with_their_own_endings() {
    let env = TestEnv::new();
    env.write("f", numbered(20));
    let last = |n: usize| -> String { (21 - n..=20).map(|i| format!("line {i}\n")).collect() };
    env.both("tail", &["f"]).ok(&last(10));
    env.both("tail", &["f", "1"]).ok("line 20\n");
    env.both("tail", &["f", "2"]).ok(&last(2));
    env.both("tail", &["f", "20"]).ok(&numbered(20));
    env.both("tail", &["f", "25"]).ok(&numbered(20));
    env.write("crlf", "a\r\nb\r\nc\r\n");
    env.both("tail", &["crlf", "1"]).ok("c\r\n");
    env.write("cr", "x\na\rb\rc\n");
    env.both("tail", &["cr", "1"]).ok("a\rb\rc\n");
    env.write("blank", "\n\n\n");
    env.both("tail", &["blank", "2"]).ok("\n\n");
    env.write("trail", "a\n\n");
    env.both("tail", &["trail", "1"]).ok("\n");
    env.write("empty", "");
    env.both("tail", &["empty", "3"]).ok("");
}

#[test]
fn a_missing_final_newline_stays_missing() {
    let env = TestEnv::new();
    env.write("one", "foo");
    env.write("two", "foo\nbar");
    env.both("head", &["one", "1"]).ok("foo");
    env.both("head", &["two", "1"]).ok("foo\n");
    env.both("head", &["two", "2"]).ok("foo\nbar");
    env.both("head", &["two", "5"]).ok("foo\nbar");
    env.both("tail", &["one", "1"]).ok("foo");
    env.both("tail", &["two", "1"]).ok("bar");
    env.both("tail", &["two", "2"]).ok("foo\nbar");
    env.both("tail", &["two", "5"]).ok("foo\nbar");
    env.both("cat", &["two"]).ok("foo\nbar");
}

#[test]
fn zero_lines_is_empty_only_after_the_checks_pass() {
    let env = fixture();
    env.write("f", numbered(5));
    for tool in ["head", "tail"] {
        env.both(tool, &["f", "0"]).ok("");
        env.both(tool, &["nope", "0"]).fails("not found", "nope");
        env.both(tool, &[".env", "0"]).denied(".env");
        env.both(tool, &["../outside/secret.txt", "0"])
            .denied("../outside/secret.txt");
        env.both(tool, &["a.txt/", "0"])
            .fails("not a directory", "a.txt/");
    }
}

#[test]
fn head_and_tail_take_up_to_ten_thousand_lines() {
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1000000");
    let text = numbered(10_001);
    env.write("f", &text);
    let head = env.both("head", &["f", "10000"]);
    assert_eq!(head.error, None);
    assert_eq!(head.output, numbered(10_000), "head 10000");
    let tail = env.both("tail", &["f", "10000"]);
    assert_eq!(tail.error, None);
    assert_eq!(tail.output, text["line 1\n".len()..], "tail 10000");
}

// ---------------------------------------------------------------------------------------------
// Buffer edges

// A character split by a block edge must come out whole. File sizes sit a few bytes either side
// of common buffer sizes, and each character is cut at each of its bytes at every edge, counted
// from the start (cat, head, wc) and from the end (tail). Three tests, so that they run in
// parallel.

#[test]
fn multibyte_characters_survive_buffer_edges_near_4k_and_8k() {
    check_edges_near(4096, &[-1, 0, 1]);
    check_edges_near(8192, &[0, 2]);
}

#[test]
fn multibyte_characters_survive_buffer_edges_near_64k() {
    check_edges_near(65536, &[0, 1]);
}

#[test]
fn multibyte_characters_survive_buffer_edges_near_128k() {
    check_edges_near(131_072, &[-2, 3]);
}

/// Bytes rich in UTF-8 fragments: valid 2-, 3- and 4-byte characters (some of them White_Space),
/// their loose lead and continuation bytes, surrogates, NUL and line breaks.
const FRAGMENTS: &[&[u8]] = &[
    b"a",
    b"b",
    b" ",
    b"\n",
    b"\r\n",
    b"\t",
    b"\x00",
    b"\xff",
    b"\xc2",
    b"\xc2\xa0",
    b"\xc2\x85",
    b"\xe3",
    b"\xe3\x80",
    b"\xe3\x80\x80",
    b"\xe2\x80\xa8",
    b"\xe2\x80\x8b",
    b"\xe2\x80",
    b"\x80",
    b"\xbf",
    b"\xf0\x9f\x98\x80",
    b"\xf0\x9f",
    b"\xf0\x9f\x98",
    b"\xed\xa0\x80",
    b"\xe1\x9a\x80",
    b"\xef\xbb\xbf",
    b"\xc3\xa9",
    b"\xe6\x97\xa5",
];

#[test]
fn invalid_utf8_across_buffer_edges_decodes_as_from_utf8_lossy() {
    // One U+FFFD per maximal invalid sequence, wherever the reader's blocks happen to end.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "4194304");
    for seed in 1..=3u64 {
        let data = byte_soup(135_000, seed, FRAGMENTS);
        let name = format!("soup{seed}");
        env.write(&name, &data);
        check_readers(&env, &name, &data);
    }
}

// ---------------------------------------------------------------------------------------------
// Huge files and small read budgets

/// A sparse file: `head`, then a hole of `hole` zero bytes, then `tail`; it occupies almost no
/// disk, so a file far over the read budget costs nothing to make.
fn sparse(env: &TestEnv, rel: &str, head: &[u8], hole: u64, tail: &[u8]) {
    let f = std::fs::File::create(env.p(rel)).unwrap();
    f.write_all_at(head, 0).unwrap();
    f.write_all_at(tail, head.len() as u64 + hole).unwrap();
}

#[test]
fn tail_of_a_huge_file_reads_from_the_end() {
    // 1 GiB, far over the default 8 MiB read budget: only a tail that reads from the end succeeds.
    let env = TestEnv::new();
    sparse(&env, "huge", b"", 1 << 30, b"\nlast1\nlast2\n");
    env.both("tail", &["huge", "2"]).ok("last1\nlast2\n");
    env.both("tail", &["huge", "1"]).ok("last2\n");
}

/// A call stopped by the read budget: `limit:`, with an output among `allowed` (whole lines only;
/// the line that crossed the budget never appears, not even in part).
#[track_caller]
fn over_budget(a: &Answer, allowed: &[&str]) {
    a.fails("limit", "");
    assert!(
        allowed.contains(&a.output.as_str()),
        "{}: output over the budget should be one of {allowed:?}, got {:?}",
        a.shown,
        &a.output[..a.output.len().min(60)]
    );
}

/// A sandbox whose read budget is `budget` bytes.
fn with_budget(budget: u64) -> TestEnv {
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_READ_BYTES", &budget.to_string());
    env
}

#[test]
fn tail_succeeds_within_a_small_read_budget() {
    // tail is charged for the lines it returns, so a budget of a few bytes covers the last lines
    // of a 64 MiB file; the line of zeros before them would cross the budget and is not emitted.
    let tail = b"\nlast1\nlast2\n";
    for budget in [64, 12] {
        let env = with_budget(budget);
        sparse(&env, "big", b"", 64 << 20, tail);
        env.both("tail", &["big", "2"]).ok("last1\nlast2\n");
        env.both("tail", &["big", "1"]).ok("last2\n");
        over_budget(&env.both("tail", &["big", "4"]), &["", "last1\nlast2\n"]);
    }
    // One byte short of the two lines: only the last one may come out.
    let env = with_budget(11);
    sparse(&env, "big", b"", 64 << 20, tail);
    over_budget(&env.both("tail", &["big", "2"]), &["", "last2\n"]);
}

#[test]
fn head_stops_early_within_a_small_read_budget() {
    // head is charged for the lines it looked at, not for the file or its buffers: 13 bytes are
    // enough for the first two lines of a 64 MiB file.
    for budget in [64, 13] {
        let env = with_budget(budget);
        sparse(&env, "big", b"first\nsecond\n", 64 << 20, b"\nend\n");
        env.both("head", &["big", "2"]).ok("first\nsecond\n");
        // The third line is 64 MiB of zeros: over the budget, it is not emitted.
        over_budget(&env.both("head", &["big", "3"]), &["first\nsecond\n"]);
    }
    let env = with_budget(12);
    sparse(&env, "big", b"first\nsecond\n", 64 << 20, b"\nend\n");
    over_budget(&env.both("head", &["big", "2"]), &["first\n"]);
}
