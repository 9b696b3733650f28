//! The envelope, the policy and its layers, the limits and the audit log
//! (docs/contract.md#envelope, #policy, #limits, #audit-log), checked through the real binary: what
//! a caller sees on stdout, stderr and in the exit status, and which settings win.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Answer, TestEnv, capped};

/// A path as a string, for variables and error texts.
fn s(p: &Path) -> String {
    p.to_str().expect("sandbox paths are UTF-8").to_string()
}

/// A TOML basic string holding `text` (a JSON string literal is one for the paths used here).
fn toml_str(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// `lin0\n` .. `lin{n-1}\n`: lines of exactly 5 bytes, so budgets are easy to place.
fn five_byte_lines(n: usize) -> String {
    (0..n).map(|i| format!("lin{i}\n")).collect()
}

fn stderr_text(a: &Answer) -> String {
    String::from_utf8(a.stderr.clone()).expect("stderr is UTF-8")
}

/// A `config:` error with no output that mentions every needle (file, key or variable).
#[track_caller]
fn config_error(a: &Answer, needles: &[&str]) {
    a.fails("config", needles.first().copied().unwrap_or(""));
    assert_eq!(
        a.output, "",
        "a config error reads nothing, for {}",
        a.shown
    );
    let e = a.error.as_deref().unwrap();
    for n in needles {
        assert!(
            e.contains(n),
            "config error of {} should name {n:?}: {e}",
            a.shown
        );
    }
}

/// Runs the binary without the harness, for calls whose format comes from a config file (the
/// harness only knows the text format when `READBOX_FORMAT=text` is set).
fn plain(cwd: &Path, vars: &[(&str, &str)], words: &[&str]) -> Output {
    Command::new(crate::support::binary())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .envs(vars.iter().copied())
        .current_dir(cwd)
        .args(words)
        .stdin(Stdio::null())
        .output()
        .expect("run readbox")
}

// ---------------------------------------------------------------------------------------------
// The envelope
// ---------------------------------------------------------------------------------------------

#[test]
fn success_is_exactly_one_line_with_output_null_error_and_truncated_false() {
    let env = TestEnv::new();
    env.write("a.txt", "he said \"hi\"\\\n");
    let a = env.both("cat", &["a.txt"]);
    a.ok("he said \"hi\"\\\n");
    assert_eq!(
        a.stdout,
        b"{\"output\":\"he said \\\"hi\\\"\\\\\\n\",\"error\":null,\"truncated\":false}\n"
    );
    assert!(a.stderr.is_empty(), "json format writes nothing to stderr");
}

#[test]
fn errors_start_with_their_class_word_and_exit_2() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    env.mkdir("sub");
    let cases: &[(&str, &[&str], &str)] = &[
        ("cat", &["nope.txt"], "not found: nope.txt"),
        ("cat", &["sub"], "not a file: sub"),
        ("cat", &["a.txt/x"], "not a directory: a.txt/x"),
        (
            "cat",
            &["../outside/secret.txt"],
            "denied: ../outside/secret.txt",
        ),
        ("ls", &["nope"], "not found: nope"),
    ];
    for (tool, args, error) in cases {
        let a = env.both(tool, args);
        assert_eq!(a.error.as_deref(), Some(*error), "for {}", a.shown);
        assert_eq!(a.status, 2);
        assert_eq!(a.output, "");
    }
    let a = env.both("tail", &["a.txt", "x"]);
    a.fails("usage", "x");
    assert_eq!(a.output, "");
}

#[test]
fn invalid_utf8_becomes_one_replacement_per_maximal_invalid_sequence() {
    let env = TestEnv::new();
    let data: &[u8] =
        b"ok \xff|\xc3(|\xe3\x81|\xf0\x9f\x98|\xed\xa0\x80|\xc0\xaf|\xf4\x90\x80\x80|\
        \xe2\x82\xac|\xf0\x9f\x98\x80|\x80\x80|\xfe\n";
    env.write("bad.txt", data);
    let expected = String::from_utf8_lossy(data).into_owned();
    // 16 replacements: one per maximal invalid sequence (`\xed\xa0\x80` is three of them, a
    // surrogate), neither one per byte nor one per run of bad bytes.
    assert_eq!(expected.matches('\u{FFFD}').count(), 16);
    env.both("cat", &["bad.txt"]).ok(&expected);
}

#[test]
fn unfinished_sequence_at_end_of_file_is_one_replacement() {
    let env = TestEnv::new();
    env.write("cut.txt", b"ab\xe2\x82");
    env.both("cat", &["cut.txt"]).ok("ab\u{FFFD}");
    env.write("cut4.txt", b"\xf0\x9f\x98");
    env.both("cat", &["cut4.txt"]).ok("\u{FFFD}");
}

#[test]
fn lossy_decoding_holds_across_read_block_boundaries() {
    let mut env = TestEnv::new();
    // An 11-byte pattern puts a character across the 128 KiB and 256 KiB read boundaries.
    let pattern: &[u8] = b"a\xe2\x82\xac\xf0\x9f\x98\x80\xff\xc3\xa9";
    let mut data = pattern.repeat(30_000);
    data.push(b'\n');
    data.extend_from_slice(&pattern.repeat(30_000));
    env.write("long.txt", &data);
    env.var("READBOX_MAX_OUTPUT_BYTES", "2000000");
    let a = env.run("cat", &["long.txt"]);
    a.ok(&String::from_utf8_lossy(&data));
    assert!(!a.truncated);
}

#[test]
fn non_utf8_names_are_quoted_in_output_and_replaced_in_errors() {
    let env = TestEnv::new();
    env.mkdir("d");
    std::fs::write(env.p("d").join(OsStr::from_bytes(b"n\xffme.txt")), "x\n").unwrap();
    // In output, a name that is not UTF-8 is written whole in `$'…'` quoting.
    env.both("ls", &["d"]).ok("$'n\\xffme.txt'\n");
    env.both("cat", &[OsStr::from_bytes(b"d/n\xffme.txt")])
        .ok("x\n");
    env.both("cat", &[OsStr::from_bytes(b"nope\xff\xfe")])
        .fails("not found", "nope\u{FFFD}\u{FFFD}");
}

#[test]
fn del_c1_and_bidi_controls_are_written_as_escapes() {
    let env = TestEnv::new();
    let text = "a\u{7f}b\u{85}c\u{9b}d\u{202a}e\u{202e}f\u{2066}g\u{2069}h\n";
    env.write("ctl.txt", text);
    // The harness refuses any raw control of these ranges in stdout, so decoding back to `text`
    // proves they travelled as escapes.
    let a = env.both("cat", &["ctl.txt"]);
    a.ok(text);
    let raw = String::from_utf8(a.stdout.clone()).unwrap().to_lowercase();
    for esc in [
        "\\u007f", "\\u0085", "\\u009b", "\\u202a", "\\u202e", "\\u2066", "\\u2069",
    ] {
        assert!(raw.contains(esc), "stdout lacks the escape {esc}: {raw}");
    }
    let a = env.both("cat", &["missing\u{202e}txt.exe"]);
    a.fails("not found", "missing\u{202e}txt.exe");
    assert!(
        String::from_utf8(a.stdout.clone())
            .unwrap()
            .to_lowercase()
            .contains("\\u202e")
    );
}

#[test]
fn c0_controls_and_nul_come_back_exactly() {
    let env = TestEnv::new();
    let mut data: Vec<u8> = (0u8..32).collect();
    data.extend_from_slice(b"\x1b[2J\x1b]0;title\x07ok\r\n");
    env.write("c0.bin", &data);
    env.both("cat", &["c0.bin"])
        .ok(std::str::from_utf8(&data).unwrap());
}

#[test]
fn errors_name_the_path_as_given_never_the_resolved_target() {
    let env = TestEnv::new();
    env.mkdir("sub");
    env.symlink("dang", "target-name-xyz");
    env.symlink("sublink", "sub");
    env.both("cat", &["sub/../nope.txt"])
        .fails("not found", "sub/../nope.txt");
    let a = env.both("cat", &["dang"]);
    assert_eq!(a.error.as_deref(), Some("not found: dang"));
    let a = env.both("cat", &["sublink"]);
    assert_eq!(a.error.as_deref(), Some("not a file: sublink"));
    let a = env.both("cat", &["./sublink/missing.txt"]);
    assert_eq!(a.error.as_deref(), Some("not found: ./sublink/missing.txt"));
    // An absolute path is named as given too (it was the caller's own text).
    let abs = s(&env.p("sub/none"));
    let a = env.both("cat", &[abs.as_str()]);
    assert_eq!(a.error, Some(format!("not found: {abs}")));
}

#[test]
fn exit_status_is_0_success_1_negative_2_error_127_unknown_tool() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    env.write("b.txt", "y\n");
    env.both("cat", &["a.txt"]).ok_status("x\n", 0);
    env.both("grep", &["zzz", "a.txt"]).no_match();
    let d = env.both("diff", &["a.txt", "b.txt"]);
    assert_eq!((d.status, d.error.as_deref()), (1, None));
    assert!(d.output.contains("-x\n+y\n"), "{}", d.output);
    env.both("diff", &["a.txt", "a.txt"]).ok("");
    env.both("head", &["missing"]).fails("not found", "missing");
    let u = env.readbox(&["nosuchtool"]);
    assert_eq!(u.status, 127);
    u.fails("usage", "nosuchtool");
}

// ---------------------------------------------------------------------------------------------
// Text format
// ---------------------------------------------------------------------------------------------

#[test]
fn text_format_writes_raw_bytes_without_replacement_or_escaping() {
    let mut env = TestEnv::new();
    let data: &[u8] = b"caf\xe9 \x7f\xc2\x85 \xe2\x80\xae ok\x00\n\xff\xfe";
    env.write("raw.bin", data);
    env.var("READBOX_FORMAT", "text");
    let a = env.both("cat", &["raw.bin"]);
    assert_eq!(a.status, 0);
    assert_eq!(a.stdout, data);
    assert!(a.stderr.is_empty(), "stderr: {}", stderr_text(&a));
}

#[test]
fn text_format_error_goes_to_stderr_as_tool_colon_error() {
    let mut env = TestEnv::new();
    env.var("READBOX_FORMAT", "text");
    let a = env.run("cat", &["missing.txt"]);
    assert_eq!((a.status, a.stdout.as_slice()), (2, &b""[..]));
    assert_eq!(stderr_text(&a), "cat: not found: missing.txt\n");
    let a = env.run_link("head", &["missing.txt"]);
    assert_eq!((a.status, a.stdout.as_slice()), (2, &b""[..]));
    assert_eq!(stderr_text(&a), "head: not found: missing.txt\n");
}

#[test]
fn text_format_keeps_the_output_so_far_when_an_error_stops_the_work() {
    let mut env = TestEnv::new();
    env.write("f.txt", five_byte_lines(10));
    env.var("READBOX_FORMAT", "text")
        .var("READBOX_MAX_READ_BYTES", "23");
    let a = env.both("cat", &["f.txt"]);
    assert_eq!(a.status, 2);
    assert_eq!(a.stdout, five_byte_lines(4).as_bytes());
    let err = stderr_text(&a);
    assert!(
        err.starts_with("cat: limit: ") && err.ends_with('\n'),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn text_format_reports_truncation_as_the_last_stderr_line() {
    let mut env = TestEnv::new();
    env.write("a.txt", "0123456789abcdefghij\n");
    env.var("READBOX_FORMAT", "text")
        .var("READBOX_MAX_OUTPUT_BYTES", "10");
    let a = env.both("cat", &["a.txt"]);
    assert_eq!(a.status, 0);
    assert_eq!(a.stdout, b"0123456789");
    assert_eq!(
        stderr_text(&a).lines().last(),
        Some("cat: output truncated at 10 bytes")
    );
    let a = env.run_link("cat", &["a.txt"]);
    assert_eq!(
        stderr_text(&a).lines().last(),
        Some("cat: output truncated at 10 bytes")
    );

    let mut cut = TestEnv::new();
    cut.write("e.txt", "ab\u{20ac}cd\n");
    cut.var("READBOX_FORMAT", "text")
        .var("READBOX_MAX_OUTPUT_BYTES", "4");
    // The cut never splits a character, in text format too.
    let a = cut.both("cat", &["e.txt"]);
    assert_eq!(a.stdout, b"ab");
    // The note says where the output stopped; the truncation line stays last.
    assert_eq!(
        stderr_text(&a),
        "cat: note: output truncated at max_output_bytes (4 bytes; READBOX_MAX_OUTPUT_BYTES) \
         inside line 1, which does not fit; the lines after it: cat e.txt 2\n\
         cat: output truncated at 4 bytes\n"
    );
    let mut fit = TestEnv::new();
    fit.write("fit.txt", "abcd\n");
    fit.var("READBOX_FORMAT", "text")
        .var("READBOX_MAX_OUTPUT_BYTES", "5");
    let a = fit.both("cat", &["fit.txt"]);
    assert_eq!((a.status, a.stdout.as_slice()), (0, &b"abcd\n"[..]));
    assert!(
        a.stderr.is_empty(),
        "an exact fit is not truncated: {}",
        stderr_text(&a)
    );
}

#[test]
fn text_format_keeps_the_exit_statuses() {
    let mut env = TestEnv::new();
    env.write("a.txt", "x\n");
    env.write("b.txt", "y\n");
    env.var("READBOX_FORMAT", "text");
    let a = env.both("grep", &["zzz", "a.txt"]);
    assert_eq!((a.status, a.stdout.len(), a.stderr.len()), (1, 0, 0));
    let a = env.both("grep", &["x", "a.txt"]);
    assert_eq!((a.status, a.stdout.as_slice()), (0, &b"a.txt:1:x\n"[..]));
    let a = env.both("diff", &["a.txt", "b.txt"]);
    assert_eq!(a.status, 1);
    assert!(a.stderr.is_empty());
    assert!(String::from_utf8_lossy(&a.stdout).starts_with("--- a.txt\n+++ b.txt\n"));
    let a = env.readbox(&["nosuchtool"]);
    assert_eq!((a.status, a.stdout.len()), (127, 0));
    assert!(stderr_text(&a).contains("usage: unknown tool 'nosuchtool'"));
}

#[test]
fn text_format_from_a_config_file_and_config_errors_on_stderr() {
    let env = TestEnv::new();
    env.write("a.txt", "\u{7f}raw\n");
    let cfg = env.config("text.toml", "format = \"text\"\n");
    let out = plain(
        &env.root(),
        &[("READBOX_CONFIG", &s(&cfg))],
        &["cat", "a.txt"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, "\u{7f}raw\n".as_bytes());
    // The environment, a later layer, turns the config file's text format back to json.
    let out = plain(
        &env.root(),
        &[("READBOX_CONFIG", &s(&cfg)), ("READBOX_FORMAT", "json")],
        &["cat", "a.txt"],
    );
    assert_eq!(
        out.stdout,
        b"{\"output\":\"\\u007fraw\\n\",\"error\":null,\"truncated\":false}\n"
    );
    let out = plain(
        &env.root(),
        &[("READBOX_FORMAT", "text"), ("READBOX_TIMEOUT", "soon")],
        &["cat", "a.txt"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("cat: config: READBOX_TIMEOUT"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Output cap
// ---------------------------------------------------------------------------------------------

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
// Read budget
// ---------------------------------------------------------------------------------------------

#[test]
fn a_file_of_exactly_the_read_budget_fits() {
    let mut env = TestEnv::new();
    env.write("f.txt", five_byte_lines(10));
    env.var("READBOX_MAX_READ_BYTES", "50");
    env.both("cat", &["f.txt"]).ok(&five_byte_lines(10));
    env.both("wc", &["f.txt"])
        .ok("{\"lines\": 10, \"words\": 10, \"bytes\": 50}\n");
    env.both("grep", &["lin9", "f.txt"]).ok("f.txt:10:lin9\n");
    env.both("head", &["f.txt", "10"]).ok(&five_byte_lines(10));
    env.both("tail", &["f.txt", "10"]).ok(&five_byte_lines(10));
}

#[test]
fn the_line_that_crosses_the_read_budget_is_not_emitted() {
    for (budget, kept) in [(49, 9), (23, 4), (4, 0)] {
        let mut env = TestEnv::new();
        env.write("f.txt", five_byte_lines(10));
        env.var("READBOX_MAX_READ_BYTES", &budget.to_string());
        let a = env.both("cat", &["f.txt"]);
        a.fails("limit", "max_read_bytes");
        assert_eq!(a.output, five_byte_lines(kept), "budget {budget}");
        assert!(!a.truncated);
        let w = env.both("wc", &["f.txt"]);
        w.fails("limit", "max_read_bytes");
        assert_eq!(w.output, "", "wc counts every byte before it answers");
    }
}

#[test]
fn a_long_line_from_a_pipe_that_crosses_the_read_budget_is_not_emitted() {
    // A file is looked ahead in; from a pipe, the end of a line longer than a block is known
    // only once it is read, so the line is held back until then.
    let data = format!("short\n{}\nafter\n", "x".repeat(200_000));
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1000000");
    env.var("READBOX_MAX_READ_BYTES", "150000");
    for words in [["cat", "-"], ["head", "-"]] {
        let a = env.piped(&words, data.as_bytes());
        a.fails("limit", "max_read_bytes");
        assert!(
            a.output == "short\n",
            "{words:?}: {} bytes shown",
            a.output.len()
        );
    }
    env.var("READBOX_MAX_READ_BYTES", "250000");
    let whole = env.piped(&["cat", "-"], data.as_bytes());
    assert!(
        whole.error.is_none() && whole.output == data,
        "{}",
        whole.shown
    );
    // Under a cap that comes first, the line is cut at the cap as from a file.
    env.var("READBOX_MAX_OUTPUT_BYTES", "100000");
    let c = env.piped(&["cat", "-"], data.as_bytes());
    assert!(
        c.truncated && c.output.starts_with("short\nxxx"),
        "{}",
        c.shown
    );
}

#[test]
fn the_read_budget_is_summed_over_all_files_of_a_call() {
    let mut env = TestEnv::new();
    env.write("d/a.txt", "hit 1\nmiss\n"); // 11 bytes
    env.write("d/b.txt", "hit 2\nmiss\n"); // 11 bytes
    env.var("READBOX_MAX_READ_BYTES", "22");
    env.both("grep", &["hit", "d"])
        .ok("d/a.txt:1:hit 1\nd/b.txt:1:hit 2\n");
    let d = env.both("diff", &["d/a.txt", "d/b.txt"]);
    assert_eq!((d.status, d.error.as_deref()), (1, None));

    let mut env = TestEnv::new();
    env.write("d/a.txt", "hit 1\nmiss\n");
    env.write("d/b.txt", "hit 2\nmiss\n");
    env.var("READBOX_MAX_READ_BYTES", "21");
    // b.txt's last line crosses the budget: the first file's lines and b's first line stay.
    let a = env.both("grep", &["hit", "d"]);
    a.fails("limit", "max_read_bytes");
    assert_eq!(a.output, "d/a.txt:1:hit 1\nd/b.txt:1:hit 2\n");
    env.both("diff", &["d/a.txt", "d/b.txt"])
        .fails("limit", "max_read_bytes");
}

#[test]
fn head_and_tail_are_charged_only_for_the_lines_they_use() {
    let mut env = TestEnv::new();
    env.write("f.txt", five_byte_lines(10));
    env.var("READBOX_MAX_READ_BYTES", "10");
    env.both("head", &["f.txt", "2"]).ok("lin0\nlin1\n");
    env.both("tail", &["f.txt", "2"]).ok("lin8\nlin9\n");
    env.both("cat", &["f.txt"]).fails("limit", "max_read_bytes");

    let mut env = TestEnv::new();
    env.write("f.txt", five_byte_lines(10));
    env.var("READBOX_MAX_READ_BYTES", "9");
    let h = env.both("head", &["f.txt", "2"]);
    h.fails("limit", "max_read_bytes");
    assert_eq!(h.output, "lin0\n");
    let t = env.both("tail", &["f.txt", "2"]);
    t.fails("limit", "max_read_bytes");
    assert!(
        !t.output.contains("lin8"),
        "the crossing line was emitted: {:?}",
        t.output
    );
}

#[test]
fn tail_past_the_read_budget_answers_limit_even_when_the_cap_cuts_too() {
    // Once the budget runs out, tail answers `limit:` with the last lines that fit the cap, of a
    // file and of a pipe alike: never a success, which would pass the lines of a pipe read
    // before the budget ran out off as its last ones.
    let text: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    let mut env = TestEnv::new();
    env.write("n.txt", &text);
    env.var("READBOX_MAX_READ_BYTES", "20");
    env.var("READBOX_MAX_OUTPUT_BYTES", "10");
    let f = env.both("tail", &["n.txt", "10"]);
    f.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!((f.output.as_str(), f.truncated), ("100000\n", false));

    let mut env = TestEnv::new();
    env.var("READBOX_MAX_READ_BYTES", "200000");
    env.var("READBOX_MAX_OUTPUT_BYTES", "30");
    let p = env.piped(&["tail", "-", "10"], text.as_bytes());
    p.fails("limit", "READBOX_MAX_READ_BYTES");
    assert!(!p.truncated && p.notes.is_empty(), "{:?}", p.notes);
    let shown: Vec<u32> = p.lines().iter().map(|l| l.parse().unwrap()).collect();
    assert!(!shown.is_empty() && shown.len() <= 5, "{shown:?}");
    assert!(shown.windows(2).all(|w| w[1] == w[0] + 1), "{shown:?}");
    assert!(
        *shown.last().unwrap() < 40_000,
        "only lines read within the budget: {shown:?}"
    );

    // The lines shown are the last ones read within the budget, as cat of the same pipe ends:
    // of a batch that crosses it, the whole lines that fit count.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_READ_BYTES", "150");
    let small: String = (1..=100).map(|i| format!("{i}\n")).collect();
    let cat = env.piped(&["cat", "-"], small.as_bytes());
    cat.fails("limit", "READBOX_MAX_READ_BYTES");
    assert!(cat.output.ends_with("\n53\n"), "{}", cat.output);
    let tail = env.piped(&["tail", "-", "5"], small.as_bytes());
    tail.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!(tail.output, "49\n50\n51\n52\n53\n");
    // A long line in progress when the budget runs out is not shown.
    let long = format!("1\n2\n{}\n", "y".repeat(100_000));
    let tail = env.piped(&["tail", "-", "5"], long.as_bytes());
    tail.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!(tail.output, "1\n2\n");

    // A last line longer than the budget is not shown, not even its end.
    let mut env = TestEnv::new();
    env.write("one.txt", format!("{}\n", "x".repeat(300)));
    env.var("READBOX_MAX_READ_BYTES", "200");
    env.var("READBOX_MAX_OUTPUT_BYTES", "50");
    let f = env.both("tail", &["one.txt", "1"]);
    f.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!(f.output, "");
    let p = env.piped(&["tail", "-", "1"], "x".repeat(300).as_bytes());
    p.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!(p.output, "");
}

#[test]
fn head_and_tail_of_a_file_far_larger_than_the_budget() {
    let mut env = TestEnv::new();
    let text: String = (1..=200_000).map(|i| format!("line {i}\n")).collect();
    assert!(text.len() > 2 * 1_048_576);
    env.write("big.txt", &text);
    env.var("READBOX_MAX_READ_BYTES", "1048576");
    env.run("head", &["big.txt", "3"])
        .ok("line 1\nline 2\nline 3\n");
    env.run("tail", &["big.txt", "2"])
        .ok("line 199999\nline 200000\n");
}

#[test]
fn grep_is_charged_for_the_lines_it_looked_at() {
    let mut env = TestEnv::new();
    env.write("g.txt", "aaa\nbbb\nccc\n");
    env.var("READBOX_MAX_READ_BYTES", "8");
    let a = env.both("grep", &["bbb", "g.txt"]);
    a.fails("limit", "max_read_bytes");
    assert_eq!(a.output, "g.txt:2:bbb\n");
    let mut env = TestEnv::new();
    env.write("g.txt", "aaa\nbbb\nccc\n");
    env.var("READBOX_MAX_READ_BYTES", "12");
    env.both("grep", &["bbb", "g.txt"]).ok("g.txt:2:bbb\n");
}

// ---------------------------------------------------------------------------------------------
// Directory entries
// ---------------------------------------------------------------------------------------------

#[test]
fn max_entries_exactly_n_is_fine_and_one_more_is_a_limit() {
    // 4 entries at the top that count (.hid hidden counts; .env excluded does not, so that the
    // budget never tells it exists) and 2 in d/.
    let build = |max: &str| {
        let mut env = TestEnv::new();
        for f in ["a", "b", ".hid", ".env", "d/x", "d/y"] {
            env.write(f, "t\n");
        }
        env.var("READBOX_MAX_ENTRIES", max);
        env
    };
    let env = build("4");
    env.both("ls", &["."]).ok("a\nb\nd/\n");
    let env = build("3");
    env.both("ls", &["."]).fails("limit", "max_entries");
    let env = build("2");
    env.both("ls", &["d"]).ok("x\ny\n");
    let env = build("6");
    env.both("find", &["."]).ok(".hid\na\nb\nd/\nd/x\nd/y\n");
    env.both("grep", &["t", "."])
        .ok(".hid:1:t\na:1:t\nb:1:t\nd/x:1:t\nd/y:1:t\n");
    let env = build("5");
    let a = env.both("find", &["."]);
    a.fails("limit", "max_entries");
    assert!(
        ".hid\na\nb\nd/\nd/x\nd/y\n".starts_with(&a.output),
        "{:?}",
        a.output
    );
    assert!(a.output.starts_with(".hid\na\nb\nd/\n"), "{:?}", a.output);
    env.both("grep", &["t", "."]).fails("limit", "max_entries");
}

// ---------------------------------------------------------------------------------------------
// Timeout
// ---------------------------------------------------------------------------------------------

fn sparse_tebibyte(env: &TestEnv) {
    let f = std::fs::File::create(env.p("sparse.bin")).unwrap();
    f.set_len(1 << 40).unwrap();
}

#[test]
fn timeout_answers_at_the_deadline_even_while_reading() {
    let mut env = TestEnv::new();
    sparse_tebibyte(&env);
    env.var("READBOX_TIMEOUT", "0.5")
        .var("READBOX_MAX_READ_BYTES", &(1u64 << 42).to_string());
    let t = Instant::now();
    let a = env.run("wc", &["sparse.bin"]);
    let took = t.elapsed();
    assert_eq!(
        a.error.as_deref(),
        Some("timeout: the call took longer than 0.5 s")
    );
    assert_eq!((a.status, a.output.as_str(), a.truncated), (2, "", false));
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
}

#[test]
fn timeout_from_a_config_file_answers_in_text_format() {
    let env = TestEnv::new();
    sparse_tebibyte(&env);
    let cfg = env.config("t.toml", "timeout = 0.5\nformat = \"text\"\n");
    let t = Instant::now();
    let out = plain(
        &env.root(),
        &[
            ("READBOX_CONFIG", &s(&cfg)),
            ("READBOX_MAX_READ_BYTES", &(1u64 << 42).to_string()),
        ],
        &["wc", "sparse.bin"],
    );
    let took = t.elapsed();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "wc: timeout: the call took longer than 0.5 s\n"
    );
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
}

// ---------------------------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------------------------

#[test]
fn by_default_the_current_directory_is_the_only_root() {
    let mut env = TestEnv::new();
    env.write("x.txt", "x\n");
    env.write("sub/a.txt", "a\n");
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.root())));
    env.both("cat", &["../outside/secret.txt"])
        .denied("../outside/secret.txt");
    env.cd("sub");
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.p("sub"))));
    env.both("cat", &["a.txt"]).ok("a\n");
    // The root follows the current directory: its parent is now outside.
    env.both("cat", &["../x.txt"]).denied("../x.txt");
}

#[test]
fn default_excludes_cover_env_files_ssh_aws_and_keys_in_any_case() {
    let env = TestEnv::new();
    for f in [
        ".env",
        ".env.local",
        ".ssh/id_rsa",
        ".aws/credentials",
        "tls.pem",
        "ID.KEY",
        ".ENV",
    ] {
        env.secret(f);
        env.both("cat", &[f]).denied(f);
    }
    env.write("env.txt", "fine\n");
    env.both("cat", &["env.txt"]).ok("fine\n");
}

#[test]
fn default_output_cap_is_32768_bytes() {
    let env = TestEnv::new();
    env.write("big.txt", "x".repeat(40_000));
    let a = env.run("cat", &["big.txt"]);
    assert_eq!((a.output.len(), a.truncated, a.status), (32_768, true, 0));
    env.write("fit.txt", "x".repeat(32_768));
    let a = env.run("cat", &["fit.txt"]);
    assert_eq!((a.output.len(), a.truncated), (32_768, false));
}

#[test]
fn default_read_budget_is_8_mebibytes() {
    let env = TestEnv::new();
    // 8192 lines of 1024 bytes: exactly 8 MiB, read whole by a grep that finds nothing.
    let line = format!("{}\n", "a".repeat(1023));
    let fit = line.repeat(8192);
    env.write("fit.txt", &fit);
    env.write("over.txt", format!("{fit}b"));
    env.run("grep", &["zzz", "fit.txt"]).no_match();
    env.run("grep", &["zzz", "over.txt"])
        .fails("limit", "max_read_bytes");
}

#[test]
fn policy_reports_the_built_in_defaults() {
    let env = TestEnv::new();
    let doc = env.readbox(&["policy"]).json();
    let settings = &doc["settings"];
    let root = s(&env.root());
    for (key, value) in [
        ("working_directory", serde_json::json!(root)),
        ("allowed_directories", serde_json::json!([root])),
        (
            "allowed_tools",
            serde_json::json!([
                "cat", "pwd", "ls", "find", "grep", "head", "tail", "wc", "stat", "diff", "sh"
            ]),
        ),
        (
            "exclude_patterns",
            serde_json::json!([".env", ".env.*", ".ssh", ".aws", "*.pem", "*.key"]),
        ),
        ("timeout", serde_json::json!(10.0)),
        ("max_output_bytes", serde_json::json!(32768)),
        ("max_read_bytes", serde_json::json!(8388608)),
        ("max_entries", serde_json::json!(10000)),
        ("format", serde_json::json!("json")),
        ("respect_ignore_files", serde_json::json!(true)),
        ("audit_log", Value::Null),
        ("lock", serde_json::json!(false)),
        ("redact", serde_json::json!(true)),
    ] {
        assert_eq!(settings[key]["value"], value, "default of {key}");
        assert_eq!(settings[key]["source"], "default", "source of {key}");
    }
}

// ---------------------------------------------------------------------------------------------
// Roots and the working directory
// ---------------------------------------------------------------------------------------------

#[test]
fn several_roots_from_the_roots_variable() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    let r2 = env.base().join("root2");
    std::fs::create_dir_all(&r2).unwrap();
    std::fs::write(r2.join("f.txt"), "second\n").unwrap();
    env.var("READBOX_ROOTS", &format!("{}:{}", s(&env.root()), s(&r2)));
    env.both("cat", &[s(&r2.join("f.txt"))]).ok("second\n");
    env.both("cat", &["../root2/f.txt"]).ok("second\n");
    env.both("cat", &["a.txt"]).ok("a\n");
    let secret = s(&env.outside().join("secret.txt"));
    env.both("cat", &[&secret]).denied(&secret);
}

#[test]
fn current_directory_outside_every_root_denies_relative_paths() {
    let mut env = TestEnv::new();
    env.write("a.txt", "in root\n");
    let r2 = env.base().join("root2");
    std::fs::create_dir_all(&r2).unwrap();
    env.var("READBOX_ROOTS", &format!("{}:{}", s(&env.root()), s(&r2)));
    env.cd(&s(&env.outside()));
    let why = "the working directory is outside the roots";
    env.both("pwd", &[] as &[&str]).fails("denied", why);
    env.both("cat", &["a.txt"]).fails("denied", why);
    env.both("cat", &["secret.txt"])
        .fails("denied", &format!("secret.txt: {why}"));
    env.both("cat", &[s(&env.p("a.txt"))]).ok("in root\n");
}

/// A sandbox whose roots are `root/` and whose working directory is set to `outside/`, by the
/// environment or by a config file; returns the config file's path in the second case.
fn workdir_outside(by_file: bool) -> (TestEnv, String) {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    if by_file {
        let cfg = env.config(
            "wd.toml",
            &format!(
                "allowed_directories = [{}]\nworking_directory = {}\n",
                toml_str(&s(&env.root())),
                toml_str(&s(&env.outside()))
            ),
        );
        env.var("READBOX_CONFIG", &s(&cfg));
        (env, s(&cfg))
    } else {
        env.var("READBOX_ROOTS", &s(&env.root()));
        env.var("READBOX_WORKDIR", &s(&env.outside()));
        (env, String::new())
    }
}

#[test]
fn an_explicit_working_directory_outside_every_root_is_a_config_error() {
    for by_file in [false, true] {
        let (env, _) = workdir_outside(by_file);
        config_error(&env.both("pwd", &[] as &[&str]), &[]);
        config_error(&env.both("cat", &["a.txt"]), &[]);
        config_error(&env.both("cat", &["secret.txt"]), &[]);
    }
}

#[test]
fn a_working_directory_outside_every_root_is_blamed_on_its_variable_or_file_and_key() {
    let (env, _) = workdir_outside(false);
    config_error(&env.both("pwd", &[] as &[&str]), &["READBOX_WORKDIR"]);
    let (env, cfg) = workdir_outside(true);
    config_error(
        &env.both("pwd", &[] as &[&str]),
        &[&cfg, "working_directory"],
    );
}

#[test]
fn the_working_directory_variable_sets_where_relative_paths_start() {
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    env.var("READBOX_WORKDIR", &s(&env.p("sub")));
    // Without roots the working directory is the only root.
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.p("sub"))));
    env.both("cat", &["x.txt"]).ok("x\n");
    env.both("cat", &["../a.txt"]).denied("../a.txt");
    env.var("READBOX_ROOTS", &s(&env.root()));
    env.both("cat", &["../a.txt"]).ok("top\n");
}

#[test]
fn a_missing_working_directory_or_root_is_a_config_error_naming_it() {
    let mut env = TestEnv::new();
    env.var("READBOX_WORKDIR", &s(&env.base().join("nope")));
    config_error(&env.both("pwd", &[] as &[&str]), &["READBOX_WORKDIR"]);
    let mut env = TestEnv::new();
    env.var(
        "READBOX_ROOTS",
        &format!("{}:{}", s(&env.root()), s(&env.base().join("nope"))),
    );
    config_error(&env.both("pwd", &[] as &[&str]), &["READBOX_ROOTS"]);
    let mut env = TestEnv::new();
    env.write("file.txt", "f\n");
    env.var("READBOX_ROOTS", &s(&env.p("file.txt")));
    config_error(&env.both("pwd", &[] as &[&str]), &["READBOX_ROOTS"]);
}

#[test]
fn relative_roots_are_taken_from_the_working_directory_not_the_current_one() {
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    env.cd(&s(&env.outside()));
    env.var("READBOX_WORKDIR", &s(&env.p("sub")))
        .var("READBOX_ROOTS", "..");
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.p("sub"))));
    env.both("cat", &["../a.txt"]).ok("top\n");
    env.both("cat", &["../../outside/secret.txt"])
        .denied("../../outside/secret.txt");
}

#[test]
fn relative_roots_in_a_config_file_use_the_working_directory_of_their_layer() {
    // A config file's relative root is taken from the current directory, not the file's folder.
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    let cfg = env.config("rel.toml", "allowed_directories = [\".\"]\n");
    env.cd("sub").var("READBOX_CONFIG", &s(&cfg));
    env.both("cat", &["x.txt"]).ok("x\n");
    env.both("cat", &["../a.txt"]).denied("../a.txt");
    let c = s(&cfg);
    env.both("cat", &[&c]).denied(&c);

    // With the file's own working directory, `..` is taken from there.
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    let cfg = env.config(
        "wd.toml",
        &format!(
            "working_directory = {}\nallowed_directories = [\"..\"]\n",
            toml_str(&s(&env.p("sub")))
        ),
    );
    env.cd(&s(&env.outside())).var("READBOX_CONFIG", &s(&cfg));
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.p("sub"))));
    env.both("cat", &["../a.txt"]).ok("top\n");

    // A later layer's relative roots start from the working directory the file set.
    env.var("READBOX_ROOTS", ".");
    env.both("cat", &["x.txt"]).ok("x\n");
    env.both("cat", &["../a.txt"]).denied("../a.txt");
}

#[test]
fn roots_and_working_directory_are_canonicalised() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    let link = env.base().join("rootlink");
    std::os::unix::fs::symlink(env.root(), &link).unwrap();
    env.var("READBOX_ROOTS", &s(&link))
        .var("READBOX_WORKDIR", &s(&link));
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.root())));
    env.both("cat", &["a.txt"]).ok("a\n");
    env.both("cat", &[s(&link.join("a.txt"))]).ok("a\n");
    env.both("cat", &["../outside/secret.txt"])
        .denied("../outside/secret.txt");
}

// ---------------------------------------------------------------------------------------------
// Enabled tools
// ---------------------------------------------------------------------------------------------

#[test]
fn a_disabled_tool_answers_before_its_arguments_are_checked() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.var("READBOX_TOOLS", "cat,head");
    let cases: &[(&str, &[&str])] = &[
        ("grep", &[]),
        ("ls", &["-la"]),
        ("tail", &["a.txt", "x"]),
        ("pwd", &["extra"]),
        ("stat", &["a", "b", "c"]),
        ("diff", &["../outside/secret.txt", "a.txt"]),
    ];
    for (tool, args) in cases {
        let a = env.both(tool, args);
        assert_eq!(
            a.error,
            Some(format!("disabled: {tool} is not enabled")),
            "for {}",
            a.shown
        );
        assert_eq!((a.status, a.output.as_str()), (2, ""));
    }
    let a = env.readbox(&["call", "grep", "not json"]);
    assert_eq!(a.error.as_deref(), Some("disabled: grep is not enabled"));
    env.both("cat", &["a.txt"]).ok("a\n");
    env.both("head", &["a.txt", "1"]).ok("a\n");
    env.readbox(&["list"]).ok("cat\nhead\n");
}

#[test]
fn a_config_error_comes_before_the_disabled_check() {
    let mut env = TestEnv::new();
    env.var("READBOX_TOOLS", "cat")
        .var("READBOX_MAX_ENTRIES", "lots");
    config_error(&env.both("grep", &[] as &[&str]), &["READBOX_MAX_ENTRIES"]);
}

#[test]
fn the_tools_variable_rejects_unknown_names() {
    let mut env = TestEnv::new();
    env.var("READBOX_TOOLS", "cat,bash");
    config_error(&env.both("cat", &["x"]), &["READBOX_TOOLS", "bash"]);
}

// ---------------------------------------------------------------------------------------------
// Config files and layers
// ---------------------------------------------------------------------------------------------

#[test]
fn a_config_file_sets_tools_excludes_limits_and_ignore_handling() {
    let mut env = TestEnv::new();
    env.write("a.txt", "abcdefghij\n");
    env.write("x.md", "md\n");
    env.write(".env", "plain\n");
    env.write(".gitignore", "ign.txt\n");
    env.write("ign.txt", "i\n");
    let cfg = env.config(
        "c.toml",
        "allowed_tools = [\"cat\", \"find\"]\nexclude_patterns = [\"*.md\"]\n\
         max_output_bytes = 5\nrespect_ignore_files = false\n",
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    let a = env.both("cat", &["a.txt"]);
    a.ok("abcde");
    assert!(a.truncated);
    env.both("cat", &["x.md"]).denied("x.md");
    // The file's excludes replace the defaults.
    env.both("cat", &[".env"]).ok("plain");
    env.both("wc", &["a.txt"])
        .fails("disabled", "wc is not enabled");
    let f = env.both("find", &[".", "ign.txt"]);
    f.ok("ign.t");
}

#[test]
fn ignore_files_are_honoured_unless_the_setting_turns_them_off() {
    let mut env = TestEnv::new();
    env.write(".gitignore", "ign.txt\n");
    env.write("ign.txt", "i\n");
    env.write("keep.txt", "k\n");
    env.both("find", &[".", "*.txt"]).ok("keep.txt\n");
    env.var("READBOX_RESPECT_IGNORE_FILES", "false");
    env.both("find", &[".", "*.txt"]).ok("ign.txt\nkeep.txt\n");
}

#[test]
fn the_environment_overrides_the_config_file() {
    let mut env = TestEnv::new();
    env.write("a.txt", "abcdefghij\n");
    env.write("x.md", "md\n");
    let cfg = env.config(
        "c.toml",
        "max_output_bytes = 5\nallowed_tools = [\"cat\"]\nexclude_patterns = [\"*.md\"]\n",
    );
    env.var("READBOX_CONFIG", &s(&cfg))
        .var("READBOX_MAX_OUTPUT_BYTES", "100")
        .var("READBOX_TOOLS", "cat,wc")
        .var("READBOX_EXCLUDE", "*.txt");
    let a = env.both("cat", &["x.md"]);
    a.ok("md\n");
    env.both("cat", &["a.txt"]).denied("a.txt");
    env.both("wc", &["x.md"])
        .ok("{\"lines\": 1, \"words\": 1, \"bytes\": 3}\n");
    let mut env = TestEnv::new();
    env.write("a.txt", "abcdefghij\n");
    env.var("READBOX_CONFIG", &s(&cfg))
        .var("READBOX_MAX_OUTPUT_BYTES", "7");
    let a = env.both("cat", &["a.txt"]);
    a.ok("abcdefg");
    assert!(a.truncated);
}

#[test]
fn empty_variables_count_as_unset() {
    let mut env = TestEnv::new();
    env.write("a.txt", "abcdefghij\n");
    let cfg = env.config(
        "c.toml",
        "max_output_bytes = 5\nallowed_tools = [\"cat\", \"pwd\"]\nmax_read_bytes = 100\n\
         exclude_patterns = [\"*.md\"]\n",
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    for v in [
        "READBOX_WORKDIR",
        "READBOX_ROOTS",
        "READBOX_TOOLS",
        "READBOX_TIMEOUT",
        "READBOX_MAX_OUTPUT_BYTES",
        "READBOX_MAX_READ_BYTES",
        "READBOX_MAX_ENTRIES",
        "READBOX_FORMAT",
        "READBOX_RESPECT_IGNORE_FILES",
    ] {
        env.var(v, "");
    }
    let a = env.both("cat", &["a.txt"]);
    a.ok("abcde");
    assert!(
        a.truncated,
        "the file's cap holds when the variable is empty"
    );
    env.both("wc", &["a.txt"])
        .fails("disabled", "wc is not enabled");
    // Empty READBOX_ROOTS and READBOX_WORKDIR leave the current directory as the only root.
    env.both("cat", &["../outside/secret.txt"])
        .denied("../outside/secret.txt");

    // An empty READBOX_CONFIG names no file: the defaults apply.
    let mut env = TestEnv::new();
    env.write("a.txt", "abcdefghij\n");
    env.var("READBOX_CONFIG", "");
    env.both("cat", &["a.txt"]).ok("abcdefghij\n");
    env.both("wc", &["a.txt"])
        .ok("{\"lines\": 1, \"words\": 1, \"bytes\": 11}\n");
}

#[test]
fn an_empty_exclude_variable_means_no_excludes() {
    let mut env = TestEnv::new();
    env.write(".env", "KEY=plain\n");
    env.write("x.md", "md\n");
    env.both("cat", &[".env"]).denied(".env");
    env.var("READBOX_EXCLUDE", "");
    env.both("cat", &[".env"]).ok("KEY=plain\n");
    // It also clears an unlocked config file's excludes.
    let cfg = env.config("c.toml", "exclude_patterns = [\"*.md\"]\n");
    env.var("READBOX_CONFIG", &s(&cfg));
    env.both("cat", &["x.md"]).ok("md\n");
}

#[test]
fn the_exclude_variable_replaces_the_defaults() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.write(".env", "plain\n");
    env.var("READBOX_EXCLUDE", "*.txt:nothing");
    env.both("cat", &["a.txt"]).denied("a.txt");
    env.both("cat", &[".env"]).ok("plain\n");
}

#[test]
fn config_file_errors_name_the_file_and_the_key() {
    let env = TestEnv::new();
    env.write("a.txt", "a\n");
    let nope = s(&env.base().join("nope"));
    let cases: Vec<(&str, String)> = vec![
        ("bogus_setting", "bogus_setting = 1\n".into()),
        ("max_output_bytes", "max_output_bytes = \"lots\"\n".into()),
        ("max_read_bytes", "max_read_bytes = -1\n".into()),
        ("max_entries", "max_entries = 1.5\n".into()),
        ("timeout", "timeout = -1\n".into()),
        ("timeout", "timeout = 0\n".into()),
        ("timeout", "timeout = nan\n".into()),
        ("timeout", "timeout = inf\n".into()),
        (
            "allowed_tools",
            "allowed_tools = [\"cat\", \"bash\"]\n".into(),
        ),
        ("allowed_tools", "allowed_tools = \"cat\"\n".into()),
        ("format", "format = \"xml\"\n".into()),
        (
            "respect_ignore_files",
            "respect_ignore_files = \"perhaps\"\n".into(),
        ),
        ("exclude_patterns", "exclude_patterns = [\"[ab\"]\n".into()),
        ("lock", "lock = \"yes\"\n".into()),
        ("audit_log", "audit_log = 3\n".into()),
        (
            "allowed_directories",
            format!("allowed_directories = [{}]\n", toml_str(&nope)),
        ),
        (
            "working_directory",
            format!("working_directory = {}\n", toml_str(&nope)),
        ),
    ];
    for (i, (key, text)) in cases.iter().enumerate() {
        let mut e = TestEnv::new();
        let cfg = env.config(&format!("bad{i}.toml"), text);
        e.var("READBOX_CONFIG", &s(&cfg));
        let a = e.both("pwd", &[] as &[&str]);
        config_error(&a, &[&s(&cfg), key]);
    }
}

#[test]
fn an_unreadable_or_invalid_config_file_is_a_config_error_naming_it() {
    let mut env = TestEnv::new();
    let missing = s(&env.base().join("cfg/missing.toml"));
    env.var("READBOX_CONFIG", &missing);
    config_error(&env.both("pwd", &[] as &[&str]), &[&missing]);
    let mut env = TestEnv::new();
    let bad = env.config("bad.toml", "max_entries = = 3\n");
    env.var("READBOX_CONFIG", &s(&bad));
    config_error(&env.both("pwd", &[] as &[&str]), &[&s(&bad)]);
}

#[test]
fn environment_errors_name_the_variable() {
    let cases = [
        ("READBOX_TIMEOUT", "0"),
        ("READBOX_TIMEOUT", "-1"),
        ("READBOX_TIMEOUT", "nan"),
        ("READBOX_TIMEOUT", "inf"),
        ("READBOX_TIMEOUT", "soon"),
        ("READBOX_MAX_OUTPUT_BYTES", "lots"),
        ("READBOX_MAX_READ_BYTES", "-5"),
        ("READBOX_MAX_ENTRIES", "1e3"),
        ("READBOX_FORMAT", "xml"),
        ("READBOX_TOOLS", "cat,bash"),
        ("READBOX_RESPECT_IGNORE_FILES", "perhaps"),
        ("READBOX_EXCLUDE", "[ab"),
    ];
    for (var, value) in cases {
        let mut env = TestEnv::new();
        env.write("a.txt", "a\n");
        env.var(var, value);
        config_error(&env.both("cat", &["a.txt"]), &[var]);
    }
}

// ---------------------------------------------------------------------------------------------
// The lock
// ---------------------------------------------------------------------------------------------

/// A sandbox whose READBOX_CONFIG is locked with `extra` settings.
fn locked(extra: &str) -> TestEnv {
    let mut env = TestEnv::new();
    let cfg = env.config("lock.toml", &format!("lock = true\n{extra}"));
    env.var("READBOX_CONFIG", &s(&cfg));
    env
}

/// A sandbox whose READBOX_CONFIG locks the roots to its `root/`.
pub(crate) fn locked_to_root() -> TestEnv {
    let mut env = TestEnv::new();
    let cfg = env.config(
        "lock.toml",
        &format!(
            "lock = true\nallowed_directories = [{}]\n",
            toml_str(&s(&env.root()))
        ),
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    env.write("a.txt", "a\n");
    env.write("sub/x.txt", "x\n");
    env
}

#[test]
fn under_a_lock_roots_may_only_narrow() {
    let wider: [fn(&TestEnv) -> String; 4] = [
        |env| s(&env.base()),
        |_| "/".to_string(),
        |env| format!("{}:{}", s(&env.root()), s(&env.outside())),
        |_| "..".to_string(),
    ];
    for value in wider {
        let mut env = locked_to_root();
        env.both("cat", &["a.txt"]).ok("a\n");
        let v = value(&env);
        env.var("READBOX_ROOTS", &v);
        config_error(&env.both("cat", &["a.txt"]), &["READBOX_ROOTS"]);
    }
    let mut env = locked_to_root();
    env.var("READBOX_ROOTS", &s(&env.root()));
    env.both("cat", &["a.txt"]).ok("a\n");
    let mut env = locked_to_root();
    env.var("READBOX_ROOTS", &s(&env.p("sub")));
    // The current directory is outside the narrowed root: relative paths are denied, and the
    // narrowed root answers for absolute ones.
    let why = "the working directory is outside the roots";
    env.both("cat", &["x.txt"]).fails("denied", why);
    env.both("cat", &[s(&env.p("sub/x.txt"))]).ok("x\n");
    env.both("cat", &[s(&env.p("a.txt"))])
        .denied(&s(&env.p("a.txt")));
    let sub = s(&env.p("sub"));
    env.cd(&sub);
    env.both("cat", &["x.txt"]).ok("x\n");
    env.both("cat", &["../a.txt"]).denied("../a.txt");
}

#[test]
fn a_lock_without_roots_locks_the_working_directory() {
    let mut env = locked("");
    env.write("a.txt", "a\n");
    env.both("cat", &["a.txt"]).ok("a\n");
    env.var("READBOX_ROOTS", &s(&env.base()));
    config_error(&env.both("cat", &["a.txt"]), &["READBOX_ROOTS"]);
}

#[test]
fn under_a_lock_the_working_directory_stays_within_the_locked_roots() {
    // The lock's roots are the working directory it had; a later working directory elsewhere
    // must not carry the default root along with it.
    let mut env = locked("");
    env.var("READBOX_WORKDIR", &s(&env.outside()));
    config_error(&env.both("cat", &["secret.txt"]), &[]);
    config_error(&env.both("pwd", &[] as &[&str]), &[]);

    let mut env = locked_to_root();
    env.var("READBOX_WORKDIR", &s(&env.outside()));
    config_error(&env.both("cat", &["secret.txt"]), &[]);
}

#[test]
fn under_a_lock_redaction_stays_on_unless_the_locked_file_turns_it_off() {
    let mut env = locked("");
    env.write("a.txt", "a\n");
    env.both("cat", &["a.txt"]).ok("a\n");
    for v in ["false", "OFF", "0"] {
        env.var("READBOX_REDACT", v);
        config_error(&env.both("cat", &["a.txt"]), &["READBOX_REDACT"]);
    }
    env.var("READBOX_REDACT", "true");
    env.both("cat", &["a.txt"]).ok("a\n");
    let doc = env.readbox(&["policy"]).json();
    assert_eq!(doc["settings"]["redact"]["value"], true);

    let mut env = locked("redact = false\n");
    let doc = env.readbox(&["policy"]).json();
    assert_eq!(doc["settings"]["redact"]["value"], false);
    env.var("READBOX_REDACT", "on");
    let doc = env.readbox(&["policy"]).json();
    assert_eq!(doc["settings"]["redact"]["value"], true);
    assert_eq!(doc["settings"]["redact"]["source"], "env READBOX_REDACT");
}

#[test]
fn redact_takes_a_boolean_and_policy_shows_where_it_came_from() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.var("READBOX_REDACT", "perhaps");
    config_error(
        &env.both("cat", &["a.txt"]),
        &["READBOX_REDACT", "'perhaps'"],
    );
    env.var("READBOX_REDACT", "no");
    let doc = env.readbox(&["policy"]).json();
    assert_eq!(doc["settings"]["redact"]["value"], false);
    assert_eq!(doc["settings"]["redact"]["source"], "env READBOX_REDACT");
}

#[test]
fn under_a_lock_tools_may_only_narrow() {
    let mut env = locked("allowed_tools = [\"cat\", \"head\"]\n");
    env.write("a.txt", "a\n");
    env.both("grep", &["a", "a.txt"])
        .fails("disabled", "grep is not enabled");
    env.var("READBOX_TOOLS", "cat");
    env.both("head", &["a.txt"])
        .fails("disabled", "head is not enabled");
    env.both("cat", &["a.txt"]).ok("a\n");
    let mut env = locked("allowed_tools = [\"cat\", \"head\"]\n");
    env.var("READBOX_TOOLS", "cat,grep");
    config_error(&env.both("cat", &["a.txt"]), &["READBOX_TOOLS"]);
}

#[test]
fn under_a_lock_limits_may_only_go_down() {
    let lock = "max_output_bytes = 10\ntimeout = 5\nmax_read_bytes = 100\nmax_entries = 50\n";
    for (var, equal, higher) in [
        ("READBOX_MAX_OUTPUT_BYTES", "10", "11"),
        ("READBOX_TIMEOUT", "5", "5.5"),
        ("READBOX_MAX_READ_BYTES", "100", "101"),
        ("READBOX_MAX_ENTRIES", "50", "51"),
    ] {
        let mut env = locked(lock);
        env.write("a.txt", "abcdefghijklmnopqrstuvwxyz\n");
        env.var(var, equal);
        env.both("cat", &["a.txt"]).ok("abcdefghij");
        let mut env = locked(lock);
        env.var(var, higher);
        config_error(&env.both("cat", &["a.txt"]), &[var]);
    }
    let mut env = locked(lock);
    env.write("a.txt", "abcdefghijklmnopqrstuvwxyz\n");
    env.var("READBOX_MAX_OUTPUT_BYTES", "4");
    env.both("cat", &["a.txt"]).ok("abcd");
    let mut env = locked(lock);
    env.write("a.txt", "abcdefghijklmnopqrstuvwxyz\n");
    env.var("READBOX_MAX_READ_BYTES", "26");
    // wc reads every byte (cat would stop at the 10-byte cap first).
    env.both("wc", &["a.txt"]).fails("limit", "max_read_bytes");
}

#[test]
fn under_a_lock_excludes_are_only_added_to() {
    let mut env = locked("exclude_patterns = [\"*.md\"]\n");
    env.write("a.txt", "a\n");
    env.write("b.md", "b\n");
    env.secret("secret.md");
    env.both("cat", &["b.md"]).denied("b.md");
    env.var("READBOX_EXCLUDE", "*.txt");
    env.both("cat", &["a.txt"]).denied("a.txt");
    env.both("cat", &["b.md"]).denied("b.md");
    env.both("head", &["secret.md"]).denied("secret.md");
    let mut env = locked("exclude_patterns = [\"*.md\"]\n");
    env.secret("secret.md");
    env.var("READBOX_EXCLUDE", "");
    // An empty variable may be refused or ignored, but it never uncovers a locked exclude.
    let a = env.both("cat", &["secret.md"]);
    let e = a.error.as_deref().unwrap_or("");
    assert!(e == "denied: secret.md" || e.starts_with("config: "), "{e}");
    assert_eq!((a.status, a.output.as_str()), (2, ""));
}

// ---------------------------------------------------------------------------------------------
// Audit log
// ---------------------------------------------------------------------------------------------

fn audit_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line is not JSON ({e}): {l}"))
        })
        .collect()
}

#[test]
fn the_audit_log_gets_a_start_and_an_end_line_per_call() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.write("long.txt", "0123456789abcdef\n");
    let log = env.base().join("audit.jsonl");
    // The log is appended to, never truncated.
    std::fs::write(&log, "{\"earlier\":true}\n").unwrap();
    let cfg = env.config(
        "audit.toml",
        &format!("audit_log = {}\nmax_output_bytes = 8\n", toml_str(&s(&log))),
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    env.run("cat", &["a.txt"]).ok("a\n");
    env.run_link("cat", &["nope.txt"])
        .fails("not found", "nope.txt");
    env.run("grep", &["zzz", "a.txt"]).no_match();
    let t = env.run("cat", &["long.txt"]);
    assert!(t.truncated);
    let lines = audit_lines(&log);
    assert_eq!(lines.len(), 9, "{lines:?}");
    assert_eq!(lines[0], serde_json::json!({"earlier": true}));
    let root = s(&env.root());
    let mut ids = std::collections::BTreeSet::new();
    let expect = [
        ("cat", vec!["a.txt"], 0, Value::Null, 2, false),
        (
            "cat",
            vec!["nope.txt"],
            2,
            Value::from("not found: nope.txt"),
            0,
            false,
        ),
        ("grep", vec!["zzz", "a.txt"], 1, Value::Null, 0, false),
        ("cat", vec!["long.txt"], 0, Value::Null, 8, true),
    ];
    for (pair, (tool, args, status, error, bytes, truncated)) in lines[1..].chunks(2).zip(expect) {
        let (start, end) = (&pair[0], &pair[1]);
        // The start line is written before the work: it knows the call, not its outcome.
        assert_eq!(start["event"], "start", "{start}");
        assert_eq!(start["tool"], tool, "{start}");
        assert_eq!(start["arguments"], serde_json::json!(args), "{start}");
        assert_eq!(start["working_directory"], root.as_str(), "{start}");
        assert!(start.get("exit_status").is_none(), "{start}");
        assert_eq!(end["event"], "end", "{end}");
        assert_eq!(end["id"], start["id"], "{end}");
        assert_eq!(end["exit_status"], status, "{end}");
        assert_eq!(end["error"], error, "{end}");
        assert_eq!(end["output_bytes"], bytes, "{end}");
        assert_eq!(end["truncated"], truncated, "{end}");
        assert_eq!(end["redactions"], 0, "{end}");
        assert!(end["duration_ms"].is_u64(), "{end}");
        for rec in pair {
            let time = rec["time"]
                .as_str()
                .unwrap_or_else(|| panic!("no time in {rec}"));
            assert!(time.contains('T') && time.ends_with('Z'), "time {time}");
        }
        assert!(
            ids.insert(start["id"].as_str().unwrap().to_string()),
            "ids differ by call"
        );
    }
}

#[test]
fn the_audit_log_counts_only_the_output_written() {
    // The last line crosses the cap and ends the file: it is held back while it could still turn
    // out a long line (cut inside), then left out whole. Only "one\n" is written.
    for format in ["json", "text"] {
        let mut env = TestEnv::new();
        env.write("f.txt", "one\ntwotwotwo");
        let log = env.base().join("audit.jsonl");
        let cfg = env.config(
            "audit.toml",
            &format!(
                "audit_log = {}\nmax_output_bytes = 10\n",
                toml_str(&s(&log))
            ),
        );
        env.var("READBOX_CONFIG", &s(&cfg))
            .var("READBOX_FORMAT", format);
        let a = env.run("cat", &["f.txt"]);
        assert_eq!(a.status, 0, "{format}");
        match format {
            "json" => {
                a.ok("one\n");
                assert!(a.truncated);
            }
            _ => assert_eq!(a.stdout, b"one\n"),
        }
        let lines = audit_lines(&log);
        assert_eq!(lines.len(), 2, "{format}: {lines:?}");
        assert_eq!(lines[1]["output_bytes"], 4, "{format}: {}", lines[1]);
        assert_eq!(lines[1]["truncated"], true, "{format}: {}", lines[1]);
    }
}

#[test]
fn a_relative_audit_log_is_taken_from_the_config_files_folder() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    let cfg = env.config("audit.toml", "audit_log = \"rel.jsonl\"\n");
    env.var("READBOX_CONFIG", &s(&cfg));
    env.run("cat", &["a.txt"]).ok("a\n");
    assert_eq!(audit_lines(&env.base().join("cfg/rel.jsonl")).len(), 2);
    assert!(
        !env.p("rel.jsonl").exists(),
        "the log was made in the working directory"
    );
}

#[test]
fn an_audit_log_that_cannot_be_written_is_an_io_error_with_no_output() {
    let targets = [
        |env: &TestEnv| s(&env.base().join("cfg")),
        |env: &TestEnv| s(&env.base().join("nodir/a.log")),
        // Opens fine but every write fails: the tool has run, yet its output must not appear.
        |_: &TestEnv| "/dev/full".to_string(),
    ];
    for target in targets {
        let mut env = TestEnv::new();
        env.write("a.txt", "a\n");
        let t = target(&env);
        let cfg = env.config("audit.toml", &format!("audit_log = {}\n", toml_str(&t)));
        env.var("READBOX_CONFIG", &s(&cfg));
        let a = env.both("cat", &["a.txt"]);
        a.fails("io", "audit");
        assert_eq!(a.output, "", "output despite a failed audit log ({t})");
        env.var("READBOX_FORMAT", "text");
        let a = env.both("cat", &["a.txt"]);
        assert_eq!(
            (a.status, a.stdout.as_slice()),
            (2, &b""[..]),
            "text format, log {t}"
        );
        assert!(
            stderr_text(&a).starts_with("cat: io: "),
            "{}",
            stderr_text(&a)
        );
    }
}

/// The subtree under the first key named `key`, anywhere in `v`.
fn find_key<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Object(m) => m
            .get(key)
            .or_else(|| m.values().find_map(|c| find_key(c, key))),
        Value::Array(a) => a.iter().find_map(|c| find_key(c, key)),
        _ => None,
    }
}

/// True when `v` is, or holds, the number `n`.
fn has_number(v: &Value, n: f64) -> bool {
    match v {
        Value::Number(x) => x.as_f64() == Some(n),
        Value::Object(m) => m.values().any(|c| has_number(c, n)),
        Value::Array(a) => a.iter().any(|c| has_number(c, n)),
        _ => false,
    }
}

#[test]
fn policy_is_json_with_values_and_their_sources() {
    let mut env = TestEnv::new();
    env.mkdir("sub");
    let cfg = env.config("c.toml", "timeout = 7\n");
    env.var("READBOX_CONFIG", cfg.to_str().unwrap());
    env.var("READBOX_MAX_OUTPUT_BYTES", "1234");
    env.var("READBOX_ROOTS", env.p("sub").to_str().unwrap());
    let a = env.readbox(&["policy"]);
    assert_eq!((a.status, &a.error), (0, &None));
    let doc = a.json();
    let roots = find_key(&doc, "allowed_directories").expect("policy shows allowed_directories");
    let sub = env.p("sub").display().to_string();
    assert!(
        roots.to_string().contains(&sub),
        "roots should be {sub}: {roots}"
    );
    let cap = find_key(&doc, "max_output_bytes")
        .expect("policy shows max_output_bytes")
        .to_string();
    assert!(
        has_number(find_key(&doc, "max_output_bytes").unwrap(), 1234.0),
        "max_output_bytes: {cap}"
    );
    assert!(
        cap.contains("READBOX_MAX_OUTPUT_BYTES") || cap.to_lowercase().contains("env"),
        "max_output_bytes should say it came from the environment: {cap}"
    );
    let timeout = find_key(&doc, "timeout")
        .expect("policy shows timeout")
        .to_string();
    assert!(
        has_number(find_key(&doc, "timeout").unwrap(), 7.0),
        "timeout: {timeout}"
    );
    assert!(
        timeout.contains(cfg.to_str().unwrap()),
        "timeout should say it came from {}: {timeout}",
        cfg.display()
    );
    let entries = find_key(&doc, "max_entries")
        .expect("policy shows max_entries")
        .to_string();
    assert!(
        has_number(find_key(&doc, "max_entries").unwrap(), 10000.0),
        "max_entries default: {entries}"
    );
    assert!(
        !entries.to_lowercase().contains("env"),
        "max_entries was not set in the environment: {entries}"
    );
}
