//! The output cap (docs/contract.md#envelope, #notes): `max_output_bytes` stops after the last
//! whole line that fits and cuts inside a line only when no line fits or the line is longer
//! than 64 KiB (the model of it is `support::capped`), always on a character boundary, counting
//! the UTF-8 bytes of `output`; tail keeps the end; a truncated answer exits 0 (diff's 1), its
//! note gives the call that continues, and the meta commands obey the cap too.

use crate::envelope::five_byte_lines;
use crate::support::{Answer, TestEnv, capped};

// ---------------------------------------------------------------------------------------------
// Where the cap cuts

#[test]
fn output_cap_cuts_on_a_character_boundary() {
    let text = "ab\u{20ac}cd\n";
    for (cap, expected) in [
        (1, "a"),
        (2, "ab"),
        (3, "ab"),
        (4, "ab"),
        (5, "ab\u{20ac}"),
        (6, "ab\u{20ac}c"),
        (7, "ab\u{20ac}cd"),
    ] {
        let mut env = TestEnv::new();
        env.write("e.txt", text);
        env.var("READBOX_MAX_OUTPUT_BYTES", &cap.to_string());
        let a = env.run("cat", &["e.txt"]);
        a.ok(expected);
        assert!(a.truncated, "cap {cap} cuts the output");
    }
}

#[test]
fn output_of_exactly_the_cap_is_not_truncated() {
    let mut env = TestEnv::new();
    env.write("a.txt", "abcd\n");
    env.var("READBOX_MAX_OUTPUT_BYTES", "5");
    let a = env.both("cat", &["a.txt"]);
    a.ok("abcd\n");
    assert!(!a.truncated);
    let mut env = TestEnv::new();
    env.write("a.txt", "abcd\n");
    env.var("READBOX_MAX_OUTPUT_BYTES", "4");
    let a = env.both("cat", &["a.txt"]);
    a.ok("abcd");
    assert!(a.truncated);
}

#[test]
fn output_cap_counts_utf8_bytes_of_output_not_json_escapes() {
    let mut env = TestEnv::new();
    env.write("ff.bin", b"\xff".repeat(100));
    env.write("del.txt", "\u{7f}".repeat(100));
    env.write("quote.txt", "\"".repeat(100));
    env.var("READBOX_MAX_OUTPUT_BYTES", "10");
    // U+FFFD is 3 bytes of output; DEL and `"` are one byte each though escaped longer in JSON.
    let a = env.run("cat", &["ff.bin"]);
    a.ok(&"\u{FFFD}".repeat(3));
    assert!(a.truncated);
    let a = env.run("cat", &["del.txt"]);
    a.ok(&"\u{7f}".repeat(10));
    assert!(a.truncated);
    let a = env.run("cat", &["quote.txt"]);
    a.ok(&"\"".repeat(10));
    assert!(a.truncated);
}

/// 199 lines of varying length, some with two-byte characters, so no cap falls on a line end by
/// chance.
pub(crate) fn varied_lines() -> String {
    (1..200)
        .map(|i| format!("line {i:03} {}{}\n", "x".repeat(i % 7), "é".repeat(i % 3)))
        .collect()
}

pub(crate) fn cut_to(env: &mut TestEnv, cap: usize) {
    env.var("READBOX_MAX_OUTPUT_BYTES", &cap.to_string());
}

#[test]
fn output_is_cut_after_the_last_whole_line_that_fits() {
    let text = varied_lines();
    for cap in [100, 257, 1000, 2049, text.len() - 1] {
        let mut env = TestEnv::new();
        env.write("f.txt", &text);
        cut_to(&mut env, cap);
        for tool in ["cat", "head"] {
            let args: &[&str] = if tool == "head" {
                &["f.txt", "10000"]
            } else {
                &["f.txt"]
            };
            let a = env.both(tool, args);
            a.ok(capped(&text, cap));
            assert!(a.truncated && !a.notes.is_empty(), "{tool} with cap {cap}");
        }
        let grep_full: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| format!("f.txt:{}:{l}\n", i + 1))
            .collect();
        let a = env.both("grep", &["line", "f.txt"]);
        a.ok(capped(&grep_full, cap));
        assert!(a.truncated);
    }
}

#[test]
fn only_a_first_or_long_line_is_cut_inside() {
    let mut env = TestEnv::new();
    env.write("e.txt", "ab\u{20ac}cd\nsecond\n");
    for (cap, want) in [
        (1, "a"),
        (4, "ab"),
        (5, "ab\u{20ac}"),
        (7, "ab\u{20ac}cd"),
        (8, "ab\u{20ac}cd\n"),
        (13, "ab\u{20ac}cd\n"),
    ] {
        cut_to(&mut env, cap);
        let a = env.both("cat", &["e.txt"]);
        a.ok(want);
        assert!(a.truncated, "cap {cap}");
    }
    // A line over 64 KiB is cut at the cap; one under it is left out whole.
    let mut env = TestEnv::new();
    env.write("long.txt", format!("short\n{}\nend\n", "y".repeat(70_000)));
    env.write("mid.txt", format!("short\n{}\nend\n", "y".repeat(50_000)));
    env.var("READBOX_MAX_OUTPUT_BYTES", "40000")
        .var("READBOX_MAX_READ_BYTES", "1048576");
    env.both("cat", &["long.txt"])
        .ok(&format!("short\n{}", "y".repeat(39_994)));
    env.both("cat", &["mid.txt"]).ok("short\n");
}

#[test]
fn tail_keeps_the_last_whole_lines_that_fit() {
    let mut log: String = (1..=300)
        .map(|i| format!("INFO request {i:04} ok {}\n", "x".repeat(40)))
        .collect();
    log.push_str("FATAL: connection pool exhausted\n");
    let mut env = TestEnv::new();
    env.write("app.log", &log);
    cut_to(&mut env, 1024);
    let lines: Vec<&str> = log.split_inclusive('\n').collect();
    let a = env.both("tail", &["app.log", "50"]);
    a.ok(&lines[285..].concat());
    assert!(a.truncated && !a.notes.is_empty());
    assert!(a.output.ends_with("FATAL: connection pool exhausted\n"));
    env.both("tail", &["app.log", "10"])
        .ok(&lines[291..].concat());

    // One line far longer than the cap: its end, cut to the cap. (Under redaction, a line
    // that is one run of what a secret's value could hold is not shown from inside: see
    // redaction.rs.)
    let mut env = TestEnv::new();
    let line = format!("{}END\n", "a, ".repeat(1 << 18));
    env.write("one.txt", &line);
    cut_to(&mut env, 100);
    let a = env.both("tail", &["one.txt", "1"]);
    a.ok(&line[line.len() - 100..]);
    assert!(a.truncated);
}

#[test]
fn meta_commands_obey_the_output_cap() {
    let mut env = TestEnv::new();
    let full_help = env.readbox(&["help"]).output;
    let full_schema = env.readbox(&["schema"]).output;
    env.var("READBOX_MAX_OUTPUT_BYTES", "20");
    // Cut inside the first line, which alone is longer than the cap.
    let a = env.readbox(&["help"]);
    assert_eq!((a.status, &a.error, a.truncated), (0, &None, true));
    assert_eq!(a.output, capped(&full_help, 20));
    let a = env.readbox(&["schema"]);
    assert_eq!((a.status, &a.error, a.truncated), (0, &None, true));
    assert_eq!(a.output, capped(&full_schema, 20));
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "6");
    let a = env.readbox(&["list"]);
    // Cut after the last whole line that fits.
    a.ok("cat\n");
    assert!(a.truncated);
}

// ---------------------------------------------------------------------------------------------
// What a truncated answer does

#[test]
fn truncation_stops_the_work_before_the_read_budget_runs_out() {
    let mut env = TestEnv::new();
    env.write("big.txt", format!("{}\n", "y".repeat(4_000_000)));
    env.write("lines.txt", "z\n".repeat(2_000_000));
    env.var("READBOX_MAX_OUTPUT_BYTES", "100")
        .var("READBOX_MAX_READ_BYTES", "1048576");
    let a = env.run("cat", &["big.txt"]);
    a.ok(&"y".repeat(100));
    assert!(a.truncated);
    let a = env.run("grep", &["z", "lines.txt"]);
    assert_eq!(a.status, 0);
    assert_eq!(a.error, None, "truncation ends grep before the budget");
    assert!(a.truncated);
    assert!(a.output.starts_with("lines.txt:1:z\nlines.txt:2:z\n"));
}

#[test]
fn a_truncated_call_exits_0_and_a_truncated_diff_exits_1() {
    let mut env = TestEnv::new();
    env.write("a.txt", five_byte_lines(50));
    env.write("b.txt", five_byte_lines(50).replace("lin", "LIN"));
    env.var("READBOX_MAX_OUTPUT_BYTES", "30");
    let a = env.both("grep", &["lin", "a.txt"]);
    assert_eq!((a.status, a.error.as_deref(), a.truncated), (0, None, true));
    // Whole `a.txt:N:line` records only: two of 13 bytes fit in 30.
    assert_eq!(a.output.len(), 26);
    assert!(a.output.ends_with('\n'));
    let d = env.both("diff", &["a.txt", "b.txt"]);
    assert_eq!((d.status, d.error.as_deref(), d.truncated), (1, None, true));
    assert!(
        d.output.starts_with("--- a.txt\n+++ b.txt\n"),
        "{}",
        d.output
    );
    assert!(d.output.len() <= 30);
}

/// The `cat PATH K` of a note, if one gives it.
fn continuation(a: &Answer, path: &str) -> Option<u64> {
    a.notes.iter().find_map(|n| {
        let at = n.find(&format!("cat {path} "))?;
        let rest = &n[at + 5 + path.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    })
}

#[test]
fn the_continuation_note_reads_the_whole_file_page_by_page() {
    let data = format!("{}no final newline", varied_lines());
    let mut env = TestEnv::new();
    env.write("app.log", &data);
    cut_to(&mut env, 500);
    let (mut got, mut k, mut calls) = (String::new(), None::<u64>, 0);
    loop {
        let from = k.map(|k| k.to_string());
        let mut args = vec!["app.log"];
        args.extend(from.as_deref());
        let a = env.both("cat", &args);
        assert_eq!(a.error, None);
        got.push_str(&a.output);
        calls += 1;
        if !a.truncated {
            break;
        }
        let next = continuation(&a, "app.log").expect("a truncated cat has a note with cat PATH K");
        // K is the first line not shown.
        assert_eq!(next as usize, data[..got.len()].matches('\n').count() + 1);
        k = Some(next);
        assert!(calls < 40);
    }
    assert_eq!(got, data);
    assert!(calls > 3);

    // head's note gives the cat call that continues it.
    let a = env.both("head", &["app.log", "100"]);
    let k = continuation(&a, "app.log").expect("a note with cat PATH K");
    assert_eq!(k as usize, a.output.matches('\n').count() + 1);
    env.var("READBOX_MAX_OUTPUT_BYTES", "1048576");
    let rest = env.both("cat", &["app.log", &k.to_string()]);
    assert_eq!(format!("{}{}", a.output, rest.output), data);
}
