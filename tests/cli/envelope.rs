//! The envelope (docs/contract.md#envelope): one JSON line of `output`, `error` and `truncated`,
//! errors that start with their class word, bytes that are not UTF-8 decoded lossily (also
//! across read blocks), control characters written as escapes, paths named as given, the exit
//! statuses, and the text format for people at a terminal.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::policy::{plain, s};
use crate::support::{Answer, TestEnv};

/// `lin0\n` .. `lin{n-1}\n`: lines of exactly 5 bytes, so budgets are easy to place.
pub(crate) fn five_byte_lines(n: usize) -> String {
    (0..n).map(|i| format!("lin{i}\n")).collect()
}

pub(crate) fn stderr_text(a: &Answer) -> String {
    String::from_utf8(a.stderr.clone()).expect("stderr is UTF-8")
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
