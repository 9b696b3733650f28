//! `diff PATH_A PATH_B [CONTEXT_LINES=3]` through the real binary
//! (docs/contract.md#tools, with #arguments, #envelope, #limits, #confinement and
//! #decisions-on-details).
//!
//! What is guarded here:
//! - the unified format exactly as GNU `diff -u --label PATH_A --label PATH_B` writes it: headers
//!   with the paths as given, hunk ranges (`-5`, `-0,0`, `-k,0`), hunk merging at 2 x CONTEXT_LINES,
//!   the `\ No newline at end of file` marker, CRLF lines that differ from LF ones; fixed expected
//!   texts, plus a byte-for-byte comparison with `/usr/bin/diff` where GNU diff is installed;
//! - exit statuses: identical 0, different 1, errors 2 (also in text format and when truncated);
//! - errors: `not found:`, `denied:`, `not a file:`, `not a directory:`, `usage:` for arguments,
//!   `limit:` for files over 2000 lines and for the read budget, which both files share;
//! - the round trip the contract promises: `patch` applied to PATH_A with readbox's output gives
//!   PATH_B, over 200 seeded random pairs (edits, missing final newlines, empty files, CRLF, context
//!   0 to 5), and the diffs are minimal (as long as `diff --minimal`'s).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::{Answer, Rng, TestEnv, capped};

const GNU_DIFF: &str = "/usr/bin/diff";
const PATCH: &str = "/usr/bin/patch";

/// The headers of a diff of `a.txt` against `b.txt`.
const H: &str = "--- a.txt\n+++ b.txt\n";

/// `l1\n` .. `ln\n`: lines that are all different, so every single edit has exactly one minimal
/// diff and the expected text is not a matter of taste.
fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("l{i}\n")).collect()
}

/// Writes `a.txt` and `b.txt` beneath root/.
fn pair(env: &TestEnv, a: impl AsRef<[u8]>, b: impl AsRef<[u8]>) {
    env.write("a.txt", a);
    env.write("b.txt", b);
}

/// `diff a.txt b.txt CONTEXT` in multicall form (one process).
fn diff_ab(env: &TestEnv, context: usize) -> Answer {
    env.run(
        "diff",
        &[
            "a.txt".to_string(),
            "b.txt".to_string(),
            context.to_string(),
        ],
    )
}

/// `diff a.txt b.txt CONTEXT`, with a failed harness check (a crash, a broken envelope) turned
/// into an `Err` so that a loop over many pairs can say which pair it was and go on.
fn try_diff_ab(env: &TestEnv, context: usize) -> Result<Answer, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| diff_ab(env, context))).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(ToString::to_string))
            .unwrap_or_default()
    })
}

/// A folder for helper programs' files, inside the sandbox but outside root/, so nothing they
/// write can show up in a readbox answer.
fn scratch(env: &TestEnv) -> PathBuf {
    let dir = env.base().join("scratch");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether `/usr/bin/diff` is GNU diff (busybox or BSD diff write other hunks).
fn have_gnu_diff() -> bool {
    Command::new(GNU_DIFF)
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU diffutils"))
}

/// GNU `diff -U CONTEXT --label a.txt --label b.txt` (plus `extra` options) of two byte strings.
fn gnu_diff(env: &TestEnv, a: &[u8], b: &[u8], context: usize, extra: &[&str]) -> Vec<u8> {
    let dir = scratch(env);
    let (pa, pb) = (dir.join("gnu-a"), dir.join("gnu-b"));
    std::fs::write(&pa, a).unwrap();
    std::fs::write(&pb, b).unwrap();
    let out = Command::new(GNU_DIFF)
        .args(extra)
        .arg(format!("-U{context}"))
        .args(["--label", "a.txt", "--label", "b.txt"])
        .arg(&pa)
        .arg(&pb)
        .output()
        .expect("run GNU diff");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "GNU diff failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Fails with a clear message when `patch` is not installed: the round trip is a contract
/// requirement and must not pass silently.
fn require_patch() {
    assert!(
        Path::new(PATCH).is_file(),
        "{PATCH} is missing: install the `patch` package (apt-get install patch) to run the diff \
         round-trip tests (CI installs it)"
    );
}

/// Applies `diff` to a copy of `a` with GNU patch (no fuzz, CRLF taken literally) in scratch/ and
/// returns the patched bytes.
fn apply_patch(env: &TestEnv, a: &[u8], diff: &[u8]) -> Result<Vec<u8>, String> {
    let dir = scratch(env);
    let (orig, out, patch_file, rej) = (
        dir.join("orig"),
        dir.join("patched"),
        dir.join("change.diff"),
        dir.join("rejects"),
    );
    std::fs::write(&orig, a).unwrap();
    std::fs::write(&patch_file, diff).unwrap();
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&rej);
    // --binary: no CRLF heuristics (the CRs are part of the lines); --fuzz=0: every context line
    // must match exactly; -f: never ask, never guess "reversed".
    let res = Command::new(PATCH)
        .args([
            "--binary",
            "--fuzz=0",
            "-f",
            "-s",
            "--no-backup-if-mismatch",
        ])
        .arg("-r")
        .arg(&rej)
        .arg("-o")
        .arg(&out)
        .arg("-i")
        .arg(&patch_file)
        .arg(&orig)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("run patch");
    if !res.status.success() {
        return Err(format!(
            "patch exited {:?}: {}{}",
            res.status.code(),
            String::from_utf8_lossy(&res.stdout),
            String::from_utf8_lossy(&res.stderr)
        ));
    }
    Ok(std::fs::read(&out).unwrap_or_default())
}

/// The number of removed and added lines in a unified diff's hunks.
fn changed_lines(diff: &[u8]) -> (usize, usize) {
    let mut minus = 0;
    let mut plus = 0;
    // The two header lines are skipped; in hunks every line starts with its mark.
    for line in diff.split(|&b| b == b'\n').skip(2) {
        match line.first() {
            Some(b'-') => minus += 1,
            Some(b'+') => plus += 1,
            _ => {}
        }
    }
    (minus, plus)
}

/// One random line with its terminator. The pool is small so that equal lines recur and the
/// diff has to choose between several alignments; an empty line and a CRLF one in eight test
/// that terminators are part of the line.
fn random_line(rng: &mut Rng) -> Vec<u8> {
    const POOL: [&str; 7] = ["alpha", "beta", "gamma", "", "delta", "x", "alpha beta"];
    let mut line = POOL[rng.below(POOL.len())].as_bytes().to_vec();
    if rng.one_in(8) {
        line.extend_from_slice(b"\r\n");
    } else {
        line.push(b'\n');
    }
    line
}

/// A random pair: A of 0 to 25 lines (sometimes empty), B made from A by up to four inserts,
/// deletes and replaces (sometimes empty), each side losing its final newline one time in five.
fn random_pair(rng: &mut Rng) -> (Vec<u8>, Vec<u8>) {
    let n = if rng.one_in(10) { 0 } else { rng.below(26) };
    let a_lines: Vec<Vec<u8>> = (0..n).map(|_| random_line(rng)).collect();
    let mut b_lines = a_lines.clone();
    if rng.one_in(10) {
        b_lines.clear();
    } else {
        for _ in 0..rng.below(5) {
            // Half the edits land on the first or last line: the file's edges are where hunk
            // ranges have no context line to lean on.
            let len = b_lines.len();
            let at = |rng: &mut Rng, slots: usize| match rng.below(4) {
                0 => 0,
                1 => slots - 1,
                _ => rng.below(slots),
            };
            match rng.below(3) {
                0 => {
                    let i = at(rng, len + 1);
                    b_lines.insert(i, random_line(rng));
                }
                1 if len > 0 => {
                    let i = at(rng, len);
                    b_lines.remove(i);
                }
                _ if len > 0 => {
                    let i = at(rng, len);
                    b_lines[i] = random_line(rng);
                }
                _ => b_lines.push(random_line(rng)),
            }
        }
    }
    let mut a = a_lines.concat();
    let mut b = b_lines.concat();
    for side in [&mut a, &mut b] {
        // Dropping only the `\n` of a CRLF line leaves a last line ending in a bare CR: a case a
        // careless line splitter gets wrong.
        if !side.is_empty() && rng.one_in(5) {
            side.pop();
        }
    }
    (a, b)
}

/// The 200 seeded pairs with their context, shared by the round-trip and minimality tests.
fn random_cases() -> Vec<(Vec<u8>, Vec<u8>, usize)> {
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    (0..200)
        .map(|_| {
            let (a, b) = random_pair(&mut rng);
            (a, b, rng.below(6))
        })
        .collect()
}

#[test]
fn unified_format_matches_gnu_diff_u_for_fixed_cases() {
    // Expected texts as GNU diff 3.8 writes them with `-U N --label a.txt --label b.txt`, kept
    // literal so the test also runs where GNU diff is not installed.
    let ten = numbered(10);
    let cases: Vec<(&str, String, String, usize, String)> = vec![
        (
            "replace in the middle",
            ten.clone(),
            ten.replace("l5\n", "L5\n"),
            3,
            format!("{H}@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n"),
        ),
        (
            "one-line ranges are written without a count",
            ten.clone(),
            ten.replace("l5\n", "L5\n"),
            0,
            format!("{H}@@ -5 +5 @@\n-l5\n+L5\n"),
        ),
        (
            "insertion after line 4 with no context is -4,0",
            ten.clone(),
            ten.replace("l4\n", "l4\nnew\n"),
            0,
            format!("{H}@@ -4,0 +5 @@\n+new\n"),
        ),
        (
            "deletion of line 7 with no context is +6,0",
            ten.clone(),
            ten.replace("l7\n", ""),
            0,
            format!("{H}@@ -7 +6,0 @@\n-l7\n"),
        ),
        (
            "insertion at the start",
            ten.clone(),
            format!("new\n{ten}"),
            3,
            format!("{H}@@ -1,3 +1,4 @@\n+new\n l1\n l2\n l3\n"),
        ),
        (
            "insertion at the start with no context is -0,0",
            ten.clone(),
            format!("new\n{ten}"),
            0,
            format!("{H}@@ -0,0 +1 @@\n+new\n"),
        ),
        (
            "deletion at the end",
            ten.clone(),
            ten.replace("l10\n", ""),
            3,
            format!("{H}@@ -7,4 +7,3 @@\n l7\n l8\n l9\n-l10\n"),
        ),
        (
            "context 1",
            ten.clone(),
            ten.replace("l5\n", "L5\n"),
            1,
            format!("{H}@@ -4,3 +4,3 @@\n l4\n-l5\n+L5\n l6\n"),
        ),
        (
            "several lines replaced by one",
            ten.clone(),
            ten.replace("l4\nl5\nl6\n", "mid\n"),
            1,
            format!("{H}@@ -3,5 +3,3 @@\n l3\n-l4\n-l5\n-l6\n+mid\n l7\n"),
        ),
        (
            "empty A is -0,0",
            String::new(),
            "x\ny\n".to_string(),
            3,
            format!("{H}@@ -0,0 +1,2 @@\n+x\n+y\n"),
        ),
        (
            "empty B is +0,0",
            "x\ny\n".to_string(),
            String::new(),
            3,
            format!("{H}@@ -1,2 +0,0 @@\n-x\n-y\n"),
        ),
        (
            "a file holding one empty line against an empty one",
            "\n".to_string(),
            String::new(),
            3,
            format!("{H}@@ -1 +0,0 @@\n-\n"),
        ),
    ];
    let env = TestEnv::new();
    for (name, a, b, context, expected) in cases {
        pair(&env, &a, &b);
        let r = diff_ab(&env, context);
        assert_eq!(r.error, None, "{name}: error");
        assert_eq!(r.output, expected, "{name}: diff output");
        assert_eq!(r.status, 1, "{name}: differences exit 1");
        assert!(!r.truncated, "{name}: not truncated");
    }
}

#[test]
fn default_context_is_three_lines_in_both_invocation_forms() {
    let env = TestEnv::new();
    let ten = numbered(10);
    pair(&env, &ten, ten.replace("l5\n", "L5\n"));
    // No CONTEXT_LINES: the 3-line hunk; `both` also checks that `readbox diff` and a link named
    // diff answer alike.
    env.both("diff", &["a.txt", "b.txt"]).ok_status(
        &format!("{H}@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n"),
        1,
    );
}

#[test]
fn hunks_merge_when_at_most_twice_context_equal_lines_separate_changes() {
    let env = TestEnv::new();
    for context in 0..=4usize {
        for gap in [2 * context, 2 * context + 1] {
            if gap == 0 {
                // Two changes with no equal line between them are one change, not a merge.
                continue;
            }
            // Line 1 and line 2 + gap change; `gap` equal lines lie between them.
            let a = numbered(gap + 10);
            let b = a
                .replacen("l1\n", "C1\n", 1)
                .replace(&format!("\nl{}\n", gap + 2), &format!("\nC{}\n", gap + 2));
            pair(&env, &a, &b);
            let r = diff_ab(&env, context);
            assert_eq!(r.status, 1, "context {context}, gap {gap}: exit status");
            let hunks = r.lines().iter().filter(|l| l.starts_with("@@ ")).count();
            let expected = if gap <= 2 * context { 1 } else { 2 };
            assert_eq!(
                hunks, expected,
                "context {context}, gap {gap}: hunks in\n{}",
                r.output
            );
        }
    }
    // The exact text at the boundary, context 2: a gap of 4 is one hunk, a gap of 5 two.
    let ten = numbered(10);
    pair(
        &env,
        &ten,
        ten.replace("l2\n", "L2\n").replace("l7\n", "L7\n"),
    );
    diff_ab(&env, 2).ok_status(
        &format!("{H}@@ -1,9 +1,9 @@\n l1\n-l2\n+L2\n l3\n l4\n l5\n l6\n-l7\n+L7\n l8\n l9\n"),
        1,
    );
    pair(
        &env,
        &ten,
        ten.replace("l2\n", "L2\n").replace("l8\n", "L8\n"),
    );
    diff_ab(&env, 2).ok_status(
        &format!(
            "{H}@@ -1,4 +1,4 @@\n l1\n-l2\n+L2\n l3\n l4\n@@ -6,5 +6,5 @@\n l6\n l7\n-l8\n+L8\n l9\n l10\n"
        ),
        1,
    );
}

#[test]
fn no_newline_marker_follows_the_side_that_lacks_it() {
    const NL: &str = "\\ No newline at end of file\n";
    let env = TestEnv::new();
    let cases = [
        // Only A lacks it: the same text is still a change, marked after the `-` line.
        ("foo", "foo\n", format!("{H}@@ -1 +1 @@\n-foo\n{NL}+foo\n")),
        // Only B lacks it: marked after the `+` line.
        ("foo\n", "foo", format!("{H}@@ -1 +1 @@\n-foo\n+foo\n{NL}")),
        // Both lack it and the last lines differ: a marker on each side.
        (
            "a\nb\nc",
            "a\nb\nC",
            format!("{H}@@ -1,3 +1,3 @@\n a\n b\n-c\n{NL}+C\n{NL}"),
        ),
        // Both lack it and the last line is shared context: one marker after the context line.
        (
            "a\nb\nc\nd",
            "a\nB\nc\nd",
            format!("{H}@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n d\n{NL}"),
        ),
        // Empty A, B without a final newline.
        ("", "x\ny", format!("{H}@@ -0,0 +1,2 @@\n+x\n+y\n{NL}")),
    ];
    for (a, b, expected) in cases {
        pair(&env, a, b);
        diff_ab(&env, 3).ok_status(&expected, 1);
    }
}

#[test]
fn crlf_lines_differ_from_lf_lines() {
    let env = TestEnv::new();
    env.write("crlf.txt", "a\r\nb\r\n");
    env.write("lf.txt", "a\nb\n");
    // Lines are compared with their terminators, so every line changes; the CRs stay in the
    // output so that patch reproduces them.
    env.both("diff", &["crlf.txt", "lf.txt"]).ok_status(
        "--- crlf.txt\n+++ lf.txt\n@@ -1,2 +1,2 @@\n-a\r\n-b\r\n+a\n+b\n",
        1,
    );
    // One CRLF line among LF ones is one change.
    env.write("mixed.txt", "a\nb\r\n");
    env.run("diff", &["lf.txt", "mixed.txt", "0"])
        .ok_status("--- lf.txt\n+++ mixed.txt\n@@ -2 +2 @@\n-b\n+b\r\n", 1);
    // A CRLF file equals itself.
    env.write("crlf2.txt", "a\r\nb\r\n");
    env.run("diff", &["crlf.txt", "crlf2.txt"]).ok("");
}

#[test]
fn identical_files_give_empty_output_and_exit_0() {
    let env = TestEnv::new();
    env.write("a.txt", "x\ny\n");
    env.write("copy.txt", "x\ny\n");
    env.write("nonl1.txt", "x\ny");
    env.write("nonl2.txt", "x\ny");
    env.write("e1", "");
    env.write("e2", "");
    // No headers alone: empty output, no error, exit 0, whatever the context.
    env.both("diff", &["a.txt", "copy.txt"]).ok("");
    env.both("diff", &["a.txt", "a.txt"]).ok("");
    env.both("diff", &["nonl1.txt", "nonl2.txt", "0"]).ok("");
    env.both("diff", &["e1", "e2"]).ok("");
    env.both("diff", &["a.txt", "./a.txt", "100"]).ok("");
}

#[test]
fn headers_name_the_paths_exactly_as_given() {
    let env = TestEnv::new();
    env.write("a.txt", "1\n");
    env.write("sub/b.txt", "2\n");
    env.symlink("link.txt", "sub/b.txt");
    env.run("diff", &["./a.txt", "sub/../sub/b.txt"]).ok_status(
        "--- ./a.txt\n+++ sub/../sub/b.txt\n@@ -1 +1 @@\n-1\n+2\n",
        1,
    );
    // An absolute path stays absolute; a symlink is named, not its target.
    let abs = env.p("a.txt").display().to_string();
    env.run("diff", &[abs.as_str(), "link.txt"]).ok_status(
        &format!("--- {abs}\n+++ link.txt\n@@ -1 +1 @@\n-1\n+2\n"),
        1,
    );
    // From a subfolder (the root stays root/, which the default root would not), `..` paths are
    // shown as typed.
    let mut env = env;
    let root = env.root().display().to_string();
    env.var("READBOX_ROOTS", &root);
    env.cd("sub");
    env.run("diff", &["../a.txt", "b.txt"])
        .ok_status("--- ../a.txt\n+++ b.txt\n@@ -1 +1 @@\n-1\n+2\n", 1);
}

#[test]
fn context_lines_accepts_0_to_100_and_refuses_the_rest_before_reading() {
    let env = TestEnv::new();
    pair(&env, "x\n", "y\n");
    let one = format!("{H}@@ -1 +1 @@\n-x\n+y\n");
    env.run("diff", &["a.txt", "b.txt", "0"]).ok_status(&one, 1);
    env.run("diff", &["a.txt", "b.txt", "100"])
        .ok_status(&one, 1);
    // Context larger than the files: the whole files in one hunk.
    let ten = numbered(10);
    pair(&env, &ten, ten.replace("l5\n", "L5\n"));
    let r = env.run("diff", &["a.txt", "b.txt", "100"]);
    assert_eq!(r.status, 1);
    assert_eq!(
        r.lines()[2],
        "@@ -1,10 +1,10 @@",
        "context 100 covers the whole file"
    );
    for bad in ["101", "1000", "x", "3.0", "+3", " 3", ""] {
        env.run("diff", &["a.txt", "b.txt", bad]).fails("usage", "");
        // Arguments are checked before paths: missing and outside files are not even looked at.
        env.run("diff", &["nope.txt", "../outside/secret.txt", bad])
            .fails("usage", "");
    }
    let r = env.run("diff", &["a.txt", "b.txt", "101"]);
    assert_eq!(r.output, "", "a usage error reads nothing");
}

#[test]
fn wrong_argument_counts_are_usage_errors() {
    let env = TestEnv::new();
    pair(&env, "x\n", "y\n");
    env.both::<&str>("diff", &[]).fails("usage", "");
    env.both("diff", &["a.txt"]).fails("usage", "");
    env.both("diff", &["a.txt", "b.txt", "3", "4"])
        .fails("usage", "");
}

#[test]
fn call_form_takes_path_a_path_b_and_context_lines_by_name() {
    let env = TestEnv::new();
    let ten = numbered(10);
    pair(&env, &ten, ten.replace("l5\n", "L5\n"));
    env.readbox(&[
        "call",
        "diff",
        r#"{"path_a":"a.txt","path_b":"b.txt","context_lines":0}"#,
    ])
    .ok_status(&format!("{H}@@ -5 +5 @@\n-l5\n+L5\n"), 1);
    // `null` and a left-out field both mean the default, 3.
    let three = format!("{H}@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n");
    env.readbox(&[
        "call",
        "diff",
        r#"{"path_a":"a.txt","path_b":"b.txt","context_lines":null}"#,
    ])
    .ok_status(&three, 1);
    env.readbox(&["call", "diff", r#"{"path_a":"a.txt","path_b":"b.txt"}"#])
        .ok_status(&three, 1);
    // The same range and type checks as the positional form.
    for bad in [
        r#"{"path_a":"a.txt","path_b":"b.txt","context_lines":101}"#,
        r#"{"path_a":"a.txt","path_b":"b.txt","context_lines":"3"}"#,
        r#"{"path_a":"a.txt","path_b":"b.txt","context_lines":1.5}"#,
        r#"{"path_a":"a.txt"}"#,
        r#"{"path_a":"a.txt","path_b":"b.txt","context":3}"#,
    ] {
        env.readbox(&["call", "diff", bad]).fails("usage", "");
    }
}

#[test]
fn flags_are_refused_with_the_positional_equivalent() {
    let env = TestEnv::new();
    pair(&env, "x\n", "y\n");
    env.run("diff", &["-u", "a.txt", "b.txt"])
        .fails("usage", "'-u'");
    // `-U 5` is a common flag: the error shows the positional call that does the same.
    env.run("diff", &["-U", "5", "a.txt", "b.txt"])
        .fails("usage", "diff a.txt b.txt 5");
    // `--` ends the flag check: a file named `-x.txt` can be compared, and is named as given.
    env.write("-x.txt", "x\n");
    env.run("diff", &["--", "-x.txt", "b.txt"])
        .ok_status("--- -x.txt\n+++ b.txt\n@@ -1 +1 @@\n-x\n+y\n", 1);
}

#[test]
fn missing_files_are_not_found_naming_the_path_as_given() {
    let env = TestEnv::new();
    env.write("a.txt", "1\n");
    env.both("diff", &["a.txt", "nope.txt"])
        .fails("not found", "nope.txt");
    env.both("diff", &["nope.txt", "a.txt"])
        .fails("not found", "nope.txt");
    env.run("diff", &["a.txt", "sub/../gone.txt"])
        .fails("not found", "sub/../gone.txt");
    let r = env.run("diff", &["a.txt", ""]);
    assert_eq!(
        r.error.as_deref(),
        Some("not found: "),
        "an empty PATH is not found"
    );
    assert_eq!((r.status, r.output.as_str()), (2, ""));
}

#[test]
fn outside_and_excluded_files_are_denied_on_either_side() {
    let env = TestEnv::new();
    env.write("a.txt", "1\n");
    env.secret(".env");
    env.secret("keys/server.PEM");
    env.symlink("out-link", env.outside().join("secret.txt"));
    env.symlink("env-link", ".env");
    let outside_abs = env.outside().join("secret.txt").display().to_string();
    // The canaries must never show: the harness checks every answer for them.
    for path in [
        "../outside/secret.txt",
        outside_abs.as_str(),
        "../outside/missing.txt",
        ".env",
        "keys/server.PEM",
        "out-link",
        "env-link",
    ] {
        env.run("diff", &["a.txt", path]).denied(path);
        env.run("diff", &[path, "a.txt"]).denied(path);
    }
}

#[test]
fn directories_and_fifos_are_not_files() {
    let mut env = TestEnv::new();
    // A FIFO opened for reading would block; a short timeout turns a regression into a failure
    // instead of a hang.
    env.var("READBOX_TIMEOUT", "5");
    env.write("a.txt", "1\n");
    env.mkdir("dir");
    env.fifo("pipe");
    for path in ["dir", ".", "pipe"] {
        env.run("diff", &["a.txt", path]).fails("not a file", path);
        env.run("diff", &[path, "a.txt"]).fails("not a file", path);
    }
    // A file used as a folder.
    env.run("diff", &["a.txt", "a.txt/"])
        .fails("not a directory", "a.txt/");
}

#[test]
fn files_over_2000_lines_hit_the_line_limit() {
    let env = TestEnv::new();
    env.write("ok.txt", "line\n".repeat(2000));
    env.write("ok2.txt", "line\n".repeat(1999) + "last\n");
    env.write("long.txt", "line\n".repeat(2001));
    // 2000 terminated lines and one more without a newline make 2001 lines.
    env.write("long-nonl.txt", "line\n".repeat(2000) + "x");
    env.write("small.txt", "line\n");
    // Exactly 2000 lines fit, and line numbers near the end come out right.
    env.run("diff", &["ok.txt", "ok2.txt"]).ok_status(
        "--- ok.txt\n+++ ok2.txt\n@@ -1997,4 +1997,4 @@\n line\n line\n line\n-line\n+last\n",
        1,
    );
    // 1999 terminated lines and an unterminated one are 2000 lines: still within the limit.
    env.write("ok-nonl.txt", "line\n".repeat(1999) + "x");
    env.run("diff", &["ok.txt", "ok-nonl.txt", "0"]).ok_status(
        "--- ok.txt\n+++ ok-nonl.txt\n@@ -2000 +2000 @@\n-line\n+x\n\\ No newline at end of file\n",
        1,
    );
    for (a, b, culprit) in [
        ("long.txt", "small.txt", "long.txt"),
        ("small.txt", "long.txt", "long.txt"),
        ("small.txt", "long-nonl.txt", "long-nonl.txt"),
        ("long.txt", "long.txt", "long.txt"),
    ] {
        let r = env.run("diff", &[a, b]);
        r.fails("limit", culprit);
        assert_eq!(r.output, "", "no partial diff for {a} {b}");
    }
}

#[test]
fn both_files_count_against_one_read_budget() {
    // 60 bytes each: each alone is far under the budgets used below, only their sum is not.
    let a = "a\n".repeat(30);
    let b = "b\n".repeat(30);
    let within = {
        let mut env = TestEnv::new();
        env.var("READBOX_MAX_READ_BYTES", "120");
        env
    };
    pair(&within, &a, &b);
    within.write("a2.txt", &a);
    // A sum of exactly the budget fits.
    let r = diff_ab(&within, 0);
    assert_eq!((r.error.as_deref(), r.status), (None, 1), "{r:?}");
    assert!(r.output.starts_with(H), "{}", r.output);
    within.run("diff", &["a.txt", "a2.txt"]).ok("");

    let over = {
        let mut env = TestEnv::new();
        env.var("READBOX_MAX_READ_BYTES", "119");
        env
    };
    pair(&over, &a, &b);
    over.write("a2.txt", &a);
    let r = diff_ab(&over, 0);
    r.fails("limit", "");
    assert_eq!(r.output, "", "no partial diff when over the budget");
    // Identical files are still read whole: diff charges every byte.
    over.run("diff", &["a.txt", "a2.txt"]).fails("limit", "");
}

#[test]
fn text_format_prints_the_raw_diff_with_the_same_exit_statuses() {
    let mut env = TestEnv::new();
    env.var("READBOX_FORMAT", "text");
    pair(&env, "x\n", "y\n");
    env.write("same.txt", "x\n");
    let r = env.both("diff", &["a.txt", "b.txt"]);
    assert_eq!(
        (r.status, r.stdout.as_slice(), r.stderr.as_slice()),
        (1, format!("{H}@@ -1 +1 @@\n-x\n+y\n").as_bytes(), &b""[..])
    );
    let r = env.run("diff", &["a.txt", "same.txt"]);
    assert_eq!((r.status, r.stdout.as_slice()), (0, &b""[..]), "identical");
    let r = env.run("diff", &["a.txt", "nope.txt"]);
    assert_eq!(r.status, 2, "error exit status");
    assert_eq!(r.stdout, b"", "nothing on stdout for an error");
    assert_eq!(
        String::from_utf8_lossy(&r.stderr).trim_end(),
        "diff: not found: nope.txt"
    );
}

#[test]
fn non_utf8_and_control_bytes_are_raw_in_text_and_escaped_in_json() {
    let a: &[u8] = b"caf\xe9\n\x7f del\nsame\n";
    let b: &[u8] = b"cafe\n\x7f del!\nsame\n";
    let raw_expected: Vec<u8> = [
        H.as_bytes(),
        b"@@ -1,3 +1,3 @@\n-caf\xe9\n-\x7f del\n+cafe\n+\x7f del!\n same\n",
    ]
    .concat();
    let mut text = TestEnv::new();
    text.var("READBOX_FORMAT", "text");
    pair(&text, a, b);
    // Text format: the bytes untouched, as GNU diff writes them.
    let r = diff_ab(&text, 3);
    assert_eq!(r.status, 1);
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&raw_expected)
    );
    assert_eq!(r.stdout, raw_expected);
    if have_gnu_diff() {
        assert_eq!(
            r.stdout,
            gnu_diff(&text, a, b, 3, &[]),
            "text format vs GNU diff"
        );
    }
    // json: U+FFFD for the invalid byte; DEL reaches the reader only as an escape (the harness
    // checks that no raw DEL is in the envelope).
    let json = TestEnv::new();
    pair(&json, a, b);
    diff_ab(&json, 3).ok_status(
        &format!("{H}@@ -1,3 +1,3 @@\n-caf\u{fffd}\n-\u{7f} del\n+cafe\n+\u{7f} del!\n same\n"),
        1,
    );
}

#[test]
fn a_long_diff_is_truncated_after_its_last_whole_line_and_exits_1() {
    // 300 changed lines of two-byte characters: far more than the cap.
    let a: String = (0..300).map(|i| format!("é{i}\n")).collect();
    let b: String = (0..300).map(|i| format!("ü{i}\n")).collect();
    let full = {
        let env = TestEnv::new();
        pair(&env, &a, &b);
        let r = diff_ab(&env, 3);
        assert_eq!((r.status, r.truncated), (1, false));
        r.output
    };
    assert!(full.len() > 4000, "the full diff is long");
    let cap = 1001;
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", &cap.to_string());
    pair(&env, &a, &b);
    let r = diff_ab(&env, 3);
    assert_eq!(r.error, None, "truncation is not an error");
    assert!(r.truncated, "truncated flag");
    assert_eq!(r.status, 1, "a truncated diff still reports differences");
    assert_eq!(
        r.output,
        capped(&full, cap),
        "the longest prefix of whole lines that fits the cap"
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("does not apply with patch")),
        "{:?}",
        r.notes
    );

    // Text format: the same prefix on stdout, the notice as the last stderr line, exit 1.
    let ascii_a = "a\n".repeat(500);
    let ascii_b = "b\n".repeat(500);
    let mut text = TestEnv::new();
    text.var("READBOX_FORMAT", "text");
    text.var("READBOX_MAX_OUTPUT_BYTES", "200");
    pair(&text, &ascii_a, &ascii_b);
    let r = diff_ab(&text, 3);
    let expected: String = format!("{H}@@ -1,500 +1,500 @@\n") + &"-a\n".repeat(500);
    assert_eq!(r.status, 1, "text format truncated diff exit status");
    assert_eq!(String::from_utf8_lossy(&r.stdout), capped(&expected, 200));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(
        stderr.trim_end().lines().last(),
        Some("diff: output truncated at 200 bytes"),
        "stderr: {stderr}"
    );
}

#[test]
fn single_change_cases_agree_byte_for_byte_with_gnu_diff() {
    if !have_gnu_diff() {
        // The fixed-text tests above cover the format; this one needs the reference program.
        eprintln!("note: {GNU_DIFF} is not GNU diff; byte-for-byte comparison skipped");
        return;
    }
    let env = TestEnv::new();
    let n = 9;
    let base: Vec<String> = (1..=n).map(|i| format!("l{i}\n")).collect();
    // Every single edit of a 9-line file of distinct lines: replace, insert before, delete at
    // each position. With distinct lines there is exactly one minimal diff, so the outputs must
    // be identical.
    let mut edits: Vec<(String, Vec<String>)> = Vec::new();
    for i in 0..n {
        let mut v = base.clone();
        v[i] = "NEW\n".to_string();
        edits.push((format!("replace line {}", i + 1), v));
        let mut v = base.clone();
        v.remove(i);
        edits.push((format!("delete line {}", i + 1), v));
    }
    for i in 0..=n {
        let mut v = base.clone();
        v.insert(i, "NEW\n".to_string());
        edits.push((format!("insert before line {}", i + 1), v));
        let mut v = base.clone();
        v.splice(i..i, ["N1\n".to_string(), "N2\n".to_string()]);
        edits.push((format!("insert two before line {}", i + 1), v));
    }
    let a_text = base.concat();
    let mut cases: Vec<(String, String, String)> = edits
        .into_iter()
        .map(|(name, v)| (name, a_text.clone(), v.concat()))
        .collect();
    // The final newline: missing on A, on B, on both with a change near the end.
    let nonl = a_text.trim_end_matches('\n').to_string();
    cases.push((
        "A lacks the final newline".into(),
        nonl.clone(),
        a_text.clone(),
    ));
    cases.push((
        "B lacks the final newline".into(),
        a_text.clone(),
        nonl.clone(),
    ));
    cases.push((
        "both lack it, change before the last line".into(),
        nonl.clone(),
        nonl.replace("l8\n", "L8\n"),
    ));
    cases.push(("empty A".into(), String::new(), a_text.clone()));
    cases.push(("empty B".into(), a_text.clone(), String::new()));
    cases.push((
        "empty A, B without newline".into(),
        String::new(),
        "x".into(),
    ));
    for (name, a, b) in &cases {
        pair(&env, a, b);
        for context in [0, 1, 3] {
            let ours = diff_ab(&env, context);
            let gnu = gnu_diff(&env, a.as_bytes(), b.as_bytes(), context, &[]);
            assert_eq!(ours.status, 1, "{name}, context {context}: exit status");
            assert_eq!(
                ours.output,
                String::from_utf8(gnu).unwrap(),
                "{name}, context {context}: readbox (left) vs GNU diff -U{context} (right)"
            );
        }
    }
}

#[test]
fn patch_turns_path_a_into_path_b_for_200_random_pairs() {
    require_patch();
    let env = TestEnv::new();
    let mut kinds = [0usize; 4]; // identical, A empty, B empty, CRLF present: the generator's reach
    // Every failing pair is collected, so one run tells how widespread a bug is.
    let mut failures: Vec<String> = Vec::new();
    let cases = random_cases();
    for (i, (a, b, context)) in cases.iter().enumerate() {
        let (a, b, context) = (a.as_slice(), b.as_slice(), *context);
        pair(&env, a, b);
        let what = format!(
            "pair {i} (context {context})\nA = {:?}\nB = {:?}",
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(b)
        );
        let r = match try_diff_ab(&env, context) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{what}\nthe call failed: {e}"));
                continue;
            }
        };
        if a == b {
            kinds[0] += 1;
            r.ok("");
            continue;
        }
        kinds[1] += usize::from(a.is_empty());
        kinds[2] += usize::from(b.is_empty());
        kinds[3] += usize::from(a.windows(2).chain(b.windows(2)).any(|w| w == b"\r\n"));
        if r.error.is_some() || r.status != 1 || r.truncated || !r.output.starts_with(H) {
            failures.push(format!(
                "{what}\nanswer: exit {}, error {:?}, truncated {}, output:\n{}",
                r.status, r.error, r.truncated, r.output
            ));
            continue;
        }
        // The generator only makes ASCII, so the envelope's text is the diff's bytes.
        match apply_patch(&env, a, r.output.as_bytes()) {
            Err(e) => failures.push(format!("{what}\ndiff:\n{}{e}", r.output)),
            Ok(patched) if patched != b => failures.push(format!(
                "{what}\ndiff:\n{}patch(A, diff) gave {:?}",
                r.output,
                String::from_utf8_lossy(&patched)
            )),
            Ok(_) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} pairs do not round-trip through patch; the first ones:\n\n{}",
        failures.len(),
        cases.len(),
        failures[..failures.len().min(3)].join("\n\n")
    );
    // Guard the generator itself: a change that made it produce only easy pairs would hollow
    // the test out.
    assert!(kinds.iter().all(|&k| k > 0), "generator coverage {kinds:?}");
}

/// A pair where a first line is deleted and copies of the lines after it are appended: the equal
/// lines sit at different indices in A and B, so hunk ranges must be counted on the right side.
const SHIFTED_A: &str = "beta\nalpha\ngamma\n";
const SHIFTED_B: &str = "alpha\ngamma\nalpha\ngamma\n";

#[test]
fn hunk_ranges_stay_right_when_a_change_shifts_repeated_lines() {
    require_patch();
    let env = TestEnv::new();
    pair(&env, SHIFTED_A, SHIFTED_B);
    let r = diff_ab(&env, 3);
    assert_eq!((r.error.as_deref(), r.status), (None, 1), "context 3");
    // With context 3 one hunk covers both whole files (3 old lines, 4 new ones), whichever
    // alignment is chosen.
    assert_eq!(
        r.lines().get(2).copied(),
        Some("@@ -1,3 +1,4 @@"),
        "diff:\n{}",
        r.output
    );
    for context in [1, 3] {
        let r = diff_ab(&env, context);
        assert_eq!(r.error, None, "context {context}");
        let patched = apply_patch(&env, SHIFTED_A.as_bytes(), r.output.as_bytes())
            .unwrap_or_else(|e| panic!("context {context}: diff:\n{}{e}", r.output));
        assert_eq!(
            String::from_utf8_lossy(&patched),
            SHIFTED_B,
            "context {context}"
        );
    }
}

#[test]
fn context_0_with_shifted_repeated_lines_is_a_diff_not_an_internal_error() {
    require_patch();
    // Without context the two changes of the pair above are separate hunks; computing their
    // ranges must not fail (the mistake seen: an arithmetic overflow reported as `io:`).
    let env = TestEnv::new();
    pair(&env, SHIFTED_A, SHIFTED_B);
    let r = diff_ab(&env, 0);
    assert_eq!(
        (r.error.as_deref(), r.status),
        (None, 1),
        "answer {r:?}, stderr {}",
        String::from_utf8_lossy(&r.stderr)
    );
    let patched = apply_patch(&env, SHIFTED_A.as_bytes(), r.output.as_bytes())
        .unwrap_or_else(|e| panic!("diff:\n{}{e}", r.output));
    assert_eq!(String::from_utf8_lossy(&patched), SHIFTED_B);
}

#[test]
fn random_diffs_are_as_small_as_gnu_diff_minimal() {
    // docs/contract.md#tools: any of several minimal diffs may be printed, but it must be minimal,
    // so its removed and added line counts equal those of GNU `diff --minimal`.
    if !have_gnu_diff() {
        eprintln!("note: {GNU_DIFF} is not GNU diff; minimality comparison skipped");
        return;
    }
    let env = TestEnv::new();
    let mut failures: Vec<String> = Vec::new();
    let mut compared = 0;
    // The first 100 of the round-trip pairs keep the module fast; the line counts do not
    // depend on the context.
    for (i, (a, b, context)) in random_cases().into_iter().take(100).enumerate() {
        if a == b {
            continue;
        }
        pair(&env, &a, &b);
        let what = format!(
            "pair {i} (context {context})\nA = {:?}\nB = {:?}",
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b)
        );
        let r = match try_diff_ab(&env, context) {
            Ok(r) if r.error.is_none() && r.status == 1 => r,
            Ok(r) => {
                failures.push(format!("{what}\nanswer {r:?}"));
                continue;
            }
            Err(e) => {
                failures.push(format!("{what}\nthe call failed: {e}"));
                continue;
            }
        };
        compared += 1;
        let gnu = gnu_diff(&env, &a, &b, context, &["--minimal"]);
        if changed_lines(r.output.as_bytes()) != changed_lines(&gnu) {
            failures.push(format!(
                "{what}\n(removed, added) lines: readbox {:?}, GNU diff --minimal {:?}\n\
                 readbox:\n{}\nGNU:\n{}",
                changed_lines(r.output.as_bytes()),
                changed_lines(&gnu),
                r.output,
                String::from_utf8_lossy(&gnu)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} pairs failed ({compared} compared); the first ones:\n\n{}",
        failures.len(),
        failures[..failures.len().min(3)].join("\n\n")
    );
}
