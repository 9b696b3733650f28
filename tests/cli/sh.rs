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
    let log = crate::audit::audit_log(&mut env);
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
    let log = crate::audit::audit_log(&mut env);
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

#[test]
fn a_pipe_is_read_where_path_is_left_out_after_a_double_dash() {
    // `grep -- x` once kept its PATH left out, and grep searched the tree instead of the pipe.
    let env = fixture();
    sh(&env, "echo hello | grep -- hello").ok("(standard input):1:hello\n");
    sh(&env, "echo hello | grep -").ok_status("", 1);
    sh(&env, "echo hi | cat --").ok("hi\n");
    sh(&env, "cat a.txt | wc --").ok("      2       2      13 -\n");
    // With no pipe, grep's PATH left out is the tree, also in a session whose standard input
    // is the command lines.
    let out = assert_cmd::Command::from_std(env.readbox_command())
        .args(["sh"])
        .env("READBOX_FORMAT", "text")
        .write_stdin(&b"grep two\n"[..])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "sub/b.txt:2:needle two\n"
    );
}

#[test]
fn cd_and_exit_in_a_pipeline_of_several_act_on_their_stage_only() {
    // As in bash, where each stage runs in a subshell: the directory stays, the session goes on.
    let env = fixture();
    let root = env.root().canonicalize().unwrap();
    sh(&env, "cd sub | true; pwd").ok(&format!("{}\n", root.display()));
    sh(&env, "cd sub | cat a.txt").ok("hello\nneedle\n");
    sh(&env, "true | exit; echo after").ok("after\n");
}

#[test]
fn a_cd_that_depends_on_an_earlier_status_is_planned_both_ways() {
    let env = fixture();
    env.write("many/x.txt", "x\n");
    env.write("many/y.txt", "y\n");
    env.write("many/only.txt", "");
    // The plan once followed the cd after `||` although it does not run.
    sh(&env, "true || cd many; cat c*.txt | head - 1").ok("line 1\n");
    // A cd after `||` that runs: the hint runs the same cd.
    let a = sh(&env, "false || cd many; cat ?.txt");
    a.fails("usage", "several paths given");
    assert!(
        a.error
            .as_deref()
            .unwrap()
            .ends_with("equivalent: false || cd many; cat x.txt; cat y.txt"),
        "{a:?}"
    );
    // After a tool's status the plan cannot tell which: refused, and no rewrite.
    let a = sh(&env, "cat a.txt >/dev/null && cd many; cat ?.txt");
    a.fails("usage", "depends on whether an earlier command succeeded");
    assert!(
        !a.error.as_deref().unwrap().contains("equivalent: "),
        "{a:?}"
    );
}

#[test]
fn a_session_whose_directory_is_removed_runs_the_next_line_there_not_elsewhere() {
    use std::io::{BufRead, BufReader, Write};
    // A cd later in the line once applied to the commands before it.
    let env = fixture();
    env.mkdir("gone");
    let mut child = env
        .readbox_command()
        .arg("sh")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    writeln!(stdin, "cd gone").unwrap();
    let first: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["error"], serde_json::Value::Null);
    std::fs::remove_dir(env.p("gone")).unwrap();
    writeln!(stdin, "cat b.txt; cd ../sub").unwrap();
    drop(stdin);
    let second: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert!(
        !second["output"].as_str().unwrap().contains("needle two"),
        "{second}"
    );
    child.wait().unwrap();
}

#[test]
fn a_session_reads_a_quote_left_open_in_bounded_memory_and_time() {
    // The input once grew without bound and was parsed again at every line.
    let env = fixture();
    let line = format!("{}\n", "x".repeat(100_000));
    env.write(
        "in.txt",
        format!("echo '\n{}'\necho after\n", line.repeat(40)),
    );
    let (a, kib) = env.measured_output::<&str>("sh", &[], Some("in.txt"));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&a.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{a:?}");
    assert_eq!(
        lines[0]["error"],
        "usage: the command line is longer than 1048576 bytes"
    );
    assert_eq!(lines[1]["output"], "after\n");
    assert!(kib < 16 * 1024, "peak {kib} KiB");
}

#[test]
fn a_line_is_bounded_in_words_stages_and_expanded_bytes() {
    let env = fixture();
    for i in 0..300 {
        env.write(&format!("many/f{i:03}"), "");
    }
    // Globs whose names pass 2 MiB, once 127 MB for this line.
    let prefix = "./".repeat(4000);
    let (a, kib) = env.run_measured("sh", &["-c", &format!("echo {prefix}many/* | wc")]);
    a.fails("usage", "globs expanded, take more than 2097152 bytes");
    assert!(kib < 16 * 1024, "peak {kib} KiB");
    let a = sh(&env, &format!("echo {}many/*", "./".repeat(5000)));
    a.fails("usage", "a glob longer than 4096 components");
    // One thread per stage: a pipeline holds at most 32.
    sh(&env, &format!("cat a.txt{}", " | cat".repeat(31))).ok("hello\nneedle\n");
    let a = sh(&env, &format!("cat a.txt{}", " | cat".repeat(32)));
    a.fails("usage", "at most 32 commands in one pipeline");
    // Words and operators.
    let a = sh(&env, &format!("echo{}", " x".repeat(10_000)));
    a.fails("usage", "more than 10000 words and operators");
}

#[test]
fn words_are_split_and_expanded_as_bash_does_or_refused() {
    let env = fixture();
    // A line continuation is gone before the words are split: `2\<newline>>` is `2>`.
    sh(&env, "cat a.txt 2\\\n>/dev/null").ok("hello\nneedle\n");
    // bash expands `~` after `=` and `:` in a word that reads as an assignment.
    sh(&env, "echo a=~/x").fails("usage", "does not expand ~");
    sh(&env, "echo a=b:~").fails("usage", "does not expand ~");
    sh(&env, "echo x~ a=x~").ok("x~ a=x~\n");
    // Collating symbols and equivalence classes are not matched as bash does.
    sh(&env, "echo [[.a.]].txt").fails("usage", "collating symbols");
    sh(&env, "echo [[:lower:]].txt").ok("a.txt c.txt\n");
}

#[test]
fn globs_list_directories_only_where_ls_or_find_is_enabled() {
    let mut env = fixture();
    env.var("READBOX_TOOLS", "cat,sh");
    sh(&env, "echo sub/*").fails("usage", "only where ls or find is enabled");
    sh(&env, "echo 'sub/*'").ok("sub/*\n");
    env.var("READBOX_TOOLS", "cat,find,sh");
    sh(&env, "echo sub/*").ok("sub/b.txt\n");
}

#[test]
fn the_entry_budget_never_tells_whether_an_excluded_name_exists() {
    // Excluded entries once counted: a line listing a folder again and again told how many
    // excluded names it held.
    let mut env = fixture();
    env.var("READBOX_MAX_ENTRIES", "20");
    for name in ["p/a", "p/b", "q/a", "q/b"] {
        env.write(name, "");
    }
    env.secret("q/.env");
    let line = |d: &str| format!("echo {} >/dev/null; echo ok", format!(" {d}/*").repeat(10));
    sh(&env, &line("p")).ok("ok\n");
    sh(&env, &line("q")).ok("ok\n");
}

#[test]
fn a_hint_writes_a_name_that_is_not_utf8_so_that_it_pastes_back() {
    use std::os::unix::ffi::OsStrExt;
    let env = fixture();
    std::fs::write(
        env.root().join(std::ffi::OsStr::from_bytes(b"\xfe.txt")),
        "x\ny\n",
    )
    .unwrap();
    let a = env.readbox(&[
        std::ffi::OsStr::new("sh"),
        std::ffi::OsStr::new("-c"),
        std::ffi::OsStr::from_bytes(b"cat \xfe.txt | head -n 1 | wc"),
    ]);
    let e = a.error.clone().unwrap();
    let hint = e.split_once("equivalent: ").unwrap().1;
    assert_eq!(hint, r"head $'\xfe.txt' 1 | wc");
    sh(&env, hint).ok("      1       1       2 -\n");
    // A tool's own hint is built as text: for a name that is not UTF-8 it offers none rather than
    // a call on another name.
    let a = env.readbox(&[
        std::ffi::OsStr::new("head"),
        std::ffi::OsStr::new("-n"),
        std::ffi::OsStr::new("1"),
        std::ffi::OsStr::from_bytes(b"\xfe.txt"),
    ]);
    let e = a.error.clone().unwrap();
    assert!(
        e.contains(r"$'\xfe.txt' is not UTF-8") && !e.contains("equivalent: "),
        "{e}"
    );
}
