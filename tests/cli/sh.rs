//! `readbox sh` through the binary (docs/contract.md#readbox-sh): pipes, lists, builtins, globs,
//! redirections, one budget per line, the session, and the answer in both formats.

use crate::support::TestEnv;

fn sh(env: &TestEnv, line: &str) -> crate::support::Answer {
    env.readbox(&["sh", "-c", line])
}

fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.write("a.txt", "hello\nneedle\n");
    env.write("sub/b.txt", "bee\nneedle two\n");
    env.write(
        "c.txt",
        (1..=50).map(|i| format!("line {i}\n")).collect::<String>(),
    );
    env
}

#[test]
fn a_stage_after_a_pipe_reads_the_text_of_the_one_before() {
    let env = fixture();
    sh(&env, "cat c.txt | head - 2").ok("line 1\nline 2\n");
    sh(&env, "cat c.txt | tail").ok(&(41..=50).map(|i| format!("line {i}\n")).collect::<String>());
    // wc of piped text counts the text, in the GNU form of the text format.
    sh(&env, "cat a.txt | wc -").ok("      2       2      13 -\n");
    sh(&env, "ls | grep sub").ok("(standard input):3:sub\n");
    sh(&env, "grep needle . | grep two").ok("(standard input):2:sub/b.txt:2:needle two\n");
}

#[test]
fn lists_follow_bashs_status() {
    let env = fixture();
    sh(&env, "false || echo yes && echo and").ok("yes\nand\n");
    sh(&env, "true && false || false").ok_status("", 1);
    sh(&env, "! cat a.txt >/dev/null").ok_status("", 1);
    let a = sh(&env, "cat nope.txt; echo after");
    assert_eq!((a.status, &a.error), (0, &None));
    assert_eq!(a.output, "cat: not found: nope.txt\nafter\n");
}

#[test]
fn a_command_substitution_is_refused_and_nothing_runs() {
    // `$(` was once read as a literal `$` before an operator.
    let env = fixture();
    let a = sh(&env, "cat a.txt; echo $(cat a.txt)");
    a.fails("usage", "$(");
    assert!(!a.output.contains("hello"), "{a:?}");
}

#[test]
fn one_read_budget_for_the_line_but_piped_bytes_are_not_charged_again() {
    let mut env = fixture();
    env.var("READBOX_MAX_READ_BYTES", "13");
    // cat reads 13 bytes; wc reads the same 13 from the pipe, not charged again.
    sh(&env, "cat a.txt | wc -").ok("      2       2      13 -\n");
    let a = sh(&env, "cat a.txt; cat a.txt");
    a.fails("limit", "max_read_bytes");
    assert!(a.output.starts_with("hello\nneedle\n"), "{a:?}");
}

#[test]
fn a_stage_that_stops_early_stops_the_ones_before() {
    let mut env = TestEnv::new();
    let line = "a fairly ordinary line of a large log file\n";
    env.write("big.txt", line.repeat(200_000));
    env.var("READBOX_MAX_READ_BYTES", "1099511627776");
    env.var("READBOX_MAX_OUTPUT_BYTES", "1073741824");
    // Without the stop, cat would copy 8.6 MB into a pipe nobody reads, and block there.
    sh(&env, "cat big.txt | head - 2").ok(&line.repeat(2));
}

#[test]
fn cd_moves_within_the_roots_and_globs_expand_there() {
    let env = fixture();
    sh(&env, "cd sub && echo *.txt && cat b.txt | head - 1").ok("b.txt\nbee\n");
    let a = sh(&env, "cd ..");
    a.fails("denied", "..");
    sh(&env, "echo *.txt").ok("a.txt c.txt\n");
    sh(&env, "echo nothing*").ok("nothing*\n");
}

#[test]
fn excluded_names_never_match_a_glob_and_never_reach_stdin() {
    let env = fixture();
    let canary = env.secret(".env");
    let a = sh(&env, "echo .*; cat .e*");
    assert!(!a.output.contains(&canary), "{a:?}");
    let a = sh(&env, "cat < .env");
    a.fails("denied", ".env");
    assert!(!a.output.contains(&canary), "{a:?}");
}

#[test]
fn the_text_format_keeps_stdout_and_stderr_apart() {
    let mut env = fixture();
    env.var("READBOX_FORMAT", "text");
    let a = sh(&env, "cat nope.txt; cat a.txt");
    assert_eq!(
        (a.status, a.stdout.as_slice()),
        (0, &b"hello\nneedle\n"[..])
    );
    assert_eq!(
        String::from_utf8_lossy(&a.stderr),
        "cat: not found: nope.txt\n"
    );
}

#[test]
fn a_session_answers_each_line_and_keeps_the_directory() {
    let env = fixture();
    let input =
        b"cd sub\ncat b.txt |\n head - 1\n{\"command\": \"pwd\\necho 'x\\ny'\"}\nexit\ncat a.txt\n";
    let out = assert_cmd::Command::from_std(env.readbox_command())
        .arg("sh")
        .write_stdin(&input[..])
        .output()
        .expect("readbox sh runs");
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outputs: Vec<&str> = lines
        .iter()
        .map(|e| e["output"].as_str().unwrap())
        .collect();
    let sub = env.root().canonicalize().unwrap().join("sub");
    assert_eq!(
        outputs,
        ["", "bee\n", &format!("{}\nx\ny\n", sub.display()), ""],
        "the session's answers"
    );
}

/// The audit records of a log, each a JSON object.
fn records(log: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_line_of_a_session_is_in_the_audit_log_with_landlock_on() {
    // Each line once opened the log again, which Landlock refuses: the lines ran unlogged.
    let mut env = fixture();
    let log = env.base().join("audit.jsonl");
    let cfg = env.config(
        "audit.toml",
        &format!("audit_log = {:?}\n", log.display().to_string()),
    );
    env.var("READBOX_CONFIG", cfg.to_str().unwrap());
    let out = assert_cmd::Command::from_std(env.readbox_command())
        .arg("sh")
        .write_stdin(&b"cat a.txt\necho hi\n{\"command\": \"ls sub\"}\n"[..])
        .output()
        .expect("readbox sh runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        3,
        "{out:?}"
    );
    let recs = records(&log);
    let seen: Vec<(&str, &str, &str)> = recs
        .iter()
        .map(|r| {
            (
                r["event"].as_str().unwrap(),
                r["tool"].as_str().unwrap(),
                r["arguments"][0].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("start", "sh", "cat a.txt"),
            ("end", "sh", ""),
            ("start", "sh", "echo hi"),
            ("end", "sh", ""),
            ("start", "sh", "ls sub"),
            ("end", "sh", ""),
        ]
    );
}

#[test]
fn the_audit_log_tells_apart_names_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let mut env = fixture();
    let log = env.base().join("audit.jsonl");
    let cfg = env.config(
        "audit.toml",
        &format!("audit_log = {:?}\n", log.display().to_string()),
    );
    env.var("READBOX_CONFIG", cfg.to_str().unwrap());
    for name in [&b"\xfe.txt"[..], b"\xff.txt"] {
        env.readbox(&[
            std::ffi::OsStr::from_bytes(b"cat"),
            std::ffi::OsStr::from_bytes(name),
        ]);
    }
    let args: Vec<String> = records(&log)
        .iter()
        .filter(|r| r["event"] == "start")
        .map(|r| r["arguments"][0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(args, [r"$'\xfe.txt'", r"$'\xff.txt'"]);
}
