//! Standard input as `-`, several paths, hints that run as written, the text formats a shell
//! expects, and help (docs/contract.md#arguments, #standard-input, #tools).

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::dispatch::{Raw, binary, envelope};
use crate::support::TestEnv;

/// What standard input is for a call.
enum Input<'a> {
    /// A pipe holding these bytes, closed after them.
    Pipe(&'a [u8]),
    /// A pipe that stays open: a call that reads it would hang.
    OpenPipe,
    /// This file, opened by the harness.
    File(std::path::PathBuf),
    /// The slave side of a new pseudo-terminal.
    Terminal,
}

/// The decoded envelope of `readbox WORDS` run in `env` with `input` on its standard input.
fn with_stdin(env: &TestEnv, words: &[&str], input: Input<'_>) -> (i32, Value) {
    let mut c = Command::new(crate::support::binary());
    c.args(words)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(env.root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Held until the call has answered.
    let mut keep: Vec<Box<dyn std::any::Any>> = Vec::new();
    match &input {
        Input::Pipe(_) | Input::OpenPipe => {
            c.stdin(Stdio::piped());
        }
        Input::File(p) => {
            c.stdin(std::fs::File::open(p).unwrap());
        }
        Input::Terminal => {
            use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
            let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
            grantpt(&master).unwrap();
            unlockpt(&master).unwrap();
            let name = ptsname(&master, Vec::new()).unwrap();
            let slave = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(name.to_str().unwrap())
                .unwrap();
            c.stdin(slave);
            keep.push(Box::new(master));
        }
    }
    let mut child = c.spawn().unwrap();
    if let Some(mut stdin) = child.stdin.take() {
        if let Input::Pipe(data) = input {
            // A call that never reads may have exited already.
            match stdin.write_all(data) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                other => other.unwrap(),
            }
        } else {
            keep.push(Box::new(stdin));
        }
    }
    let out = child.wait_with_output().unwrap();
    drop(keep);
    let status = out.status.code().unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    (status, serde_json::from_str(line.trim_end()).unwrap())
}

fn output(v: &Value) -> &str {
    v["output"].as_str().unwrap()
}

fn error(v: &Value) -> &str {
    v["error"].as_str().unwrap_or("")
}

const TEXT: &[u8] = b"one\ntwo words\nthree\n";

#[test]
fn dash_reads_a_pipe_within_the_limits() {
    let env = TestEnv::new();
    for (words, want) in [
        (&["cat", "-"][..], "one\ntwo words\nthree\n"),
        (&["cat", "-", "2"], "two words\nthree\n"),
        (&["head", "-", "1"], "one\n"),
        (&["tail", "-", "2"], "two words\nthree\n"),
        (&["grep", "two", "-"], "(standard input):2:two words\n"),
        (
            &["wc", "-"],
            "{\"lines\": 3, \"words\": 4, \"bytes\": 20}\n",
        ),
    ] {
        env.piped(words, TEXT).ok(want);
    }
    // One side of diff.
    env.write("b.txt", "one\n2\nthree\n");
    env.piped(&["diff", "-", "b.txt", "0"], TEXT)
        .ok_status("--- -\n+++ b.txt\n@@ -2 +2 @@\n-two words\n+2\n", 1);
    env.piped(&["diff", "-", "-"], TEXT).fails("usage", "");
    // The read budget and the cap hold for standard input too.
    let data = b"aaaa\n".repeat(20);
    let mut capped = TestEnv::new();
    capped.var("READBOX_MAX_READ_BYTES", "12");
    let a = capped.piped(&["cat", "-"], &data);
    a.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!(a.output, "aaaa\naaaa\n");
}

#[test]
fn tail_of_a_pipe_keeps_the_end() {
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "30");
    let lines: String = (1..=100).map(|i| format!("line {i:03}\n")).collect();
    let a = env.piped(&["tail", "-", "50"], lines.as_bytes());
    a.ok("line 098\nline 099\nline 100\n");
    assert!(a.truncated);
}

#[test]
fn a_regular_file_on_standard_input_is_checked_by_its_identity() {
    let env = TestEnv::new();
    env.write("a.txt", "inside\n");
    env.secret(".env");
    env.secret("sub/id.pem");
    let (status, v) = with_stdin(&env, &["cat", "-"], Input::File(env.p("a.txt")));
    assert_eq!((status, output(&v)), (0, "inside\n"));
    for path in [
        env.outside().join("secret.txt"),
        env.p(".env"),
        env.p("sub/id.pem"),
    ] {
        for words in [&["cat", "-"][..], &["grep", "CANARY", "-"], &["wc", "-"]] {
            let (status, v) = with_stdin(&env, words, Input::File(path.clone()));
            assert_eq!(
                (status, error(&v)),
                (2, "denied: -"),
                "{words:?} < {path:?}"
            );
            assert!(!v.to_string().contains("CANARY"));
        }
    }
}

#[test]
fn a_terminal_on_standard_input_is_a_usage_error_at_once() {
    let env = TestEnv::new();
    for words in [
        &["cat", "-"][..],
        &["tail", "-"],
        &["wc", "-"],
        &["grep", "x", "-"],
    ] {
        let (status, v) = with_stdin(&env, words, Input::Terminal);
        assert_eq!(status, 2, "{words:?}");
        assert!(
            error(&v).starts_with("usage: standard input is a terminal"),
            "{v}"
        );
    }
    // grep with PATH left out searches the tree when standard input is a terminal.
    env.write("a.txt", "needle\n");
    let (status, v) = with_stdin(&env, &["grep", "needle"], Input::Terminal);
    assert_eq!((status, output(&v)), (0, "a.txt:1:needle\n"));
}

#[test]
fn a_left_out_path_never_reads_standard_input() {
    let env = TestEnv::new();
    env.write("a.txt", "needle\n");
    // grep refuses with both calls rather than search the tree instead of the pipe.
    for input in [
        Input::Pipe(b"needle\n"),
        Input::OpenPipe,
        Input::File(env.p("a.txt")),
    ] {
        let (status, v) = with_stdin(&env, &["grep", "needle"], input);
        assert_eq!(status, 2);
        let e = error(&v);
        assert!(
            e.contains("grep needle - ") && e.contains("grep needle . "),
            "{e}"
        );
    }
    // cat, head, tail and wc name the `-` form, whatever standard input is.
    for tool in ["cat", "head", "tail", "wc"] {
        for input in [Input::Pipe(b"x\n"), Input::OpenPipe] {
            let (status, v) = with_stdin(&env, &[tool], input);
            assert_eq!(status, 2);
            assert!(
                error(&v).ends_with(&format!("{tool} - reads standard input")),
                "{v}"
            );
        }
    }
    // /dev/null (the harness's standard input) is no input: grep searches the tree.
    env.both("grep", &["needle"]).ok("a.txt:1:needle\n");
}

#[test]
fn several_paths_give_the_per_path_calls() {
    let env = TestEnv::new();
    for n in ["a.py", "b.py", "c.py"] {
        env.write(n, "x\n");
    }
    env.both("cat", &["a.py", "b.py"]).fails(
        "usage",
        "one call per path is equivalent: cat a.py; cat b.py",
    );
    env.both("head", &["a.py", "b.py", "c.py"])
        .fails("usage", "head a.py; head b.py; head c.py");
    let a = env.both("grep", &["x", "a.py", "b.py"]);
    a.fails("usage", "grep x a.py; grep x b.py");
    assert!(!a.error.as_deref().unwrap().contains("boolean"));
    // A bad value that names nothing stays the value's error.
    env.both("cat", &["a.py", "5x"])
        .fails("usage", "FROM_LINE: '5x'");
    // An excluded or outside path is not an existing entry to the hint: the answer does not
    // depend on what exists there.
    env.secret(".env");
    let a = env.both("head", &["a.py", ".env"]);
    let b = env.both("head", &["a.py", ".nothing"]);
    assert_eq!(
        a.error.as_deref().map(|e| e.replace(".env", "X")),
        b.error.as_deref().map(|e| e.replace(".nothing", "X"))
    );
}

/// The equivalent call a refusal offers, if any: after `equivalent: `, up to the next `;`.
fn offered(error: &str) -> Option<String> {
    let (_, rest) = error.split_once("equivalent: ")?;
    Some(rest.split(';').next().unwrap_or(rest).trim().to_string())
}

/// A folder `links/` in the sandbox with a link named after each tool, pointing at the binary.
fn links(env: &TestEnv) -> std::path::PathBuf {
    let links = env.base().join("links");
    std::fs::create_dir(&links).unwrap();
    for t in readbox::tools::TOOLS {
        std::os::unix::fs::symlink(crate::support::binary(), links.join(t.name)).unwrap();
    }
    links
}

/// Runs `script` in bash with only `links` on PATH, in the sandbox's root, and decodes the last
/// envelope it prints (None when it printed none), with bash's exit status.
fn in_bash(env: &TestEnv, links: &std::path::Path, script: &str) -> Option<(i32, Value)> {
    // bash's own `pwd` would answer instead of the link.
    let script = format!("enable -n pwd; {script}");
    let out = Command::new("/bin/bash")
        .args(["--noprofile", "--norc", "-c", &script])
        .env_clear()
        .env("PATH", links)
        .current_dir(env.root())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let last = out.stdout.trim_ascii_end().rsplit(|&b| b == b'\n').next()?;
    let answer = serde_json::from_slice(last).ok()?;
    Some((out.status.code().unwrap_or(-1), answer))
}

/// The call a note or an error offers after `marker`, up to the next `;` or the end.
fn call_after<'a>(text: &'a str, marker: &str) -> &'a str {
    let (_, rest) = text
        .split_once(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in {text}"));
    rest.split(';').next().unwrap_or(rest).trim()
}

#[test]
fn hints_and_notes_for_a_name_that_starts_with_a_dash_run_as_written() {
    let mut env = TestEnv::new();
    let text: String = (1..=40).map(|i| format!("line {i:02}\n")).collect();
    env.write("-x", &text);
    env.write("-a", "a\n");
    env.write("-b", "b\n");
    let links = links(&env);
    // The equivalent of a flag.
    let e = env.run("tail", &["-n", "+3", "--", "-x"]);
    let call = offered(e.error.as_deref().unwrap()).unwrap();
    assert_eq!(call, "cat -- -x 3");
    let (status, v) = in_bash(&env, &links, &call).unwrap();
    assert_eq!((status, output(&v)), (0, &text[16..]));
    // One call per path.
    env.run("cat", &["--", "-a", "-b"])
        .fails("usage", "cat -- -a; cat -- -b");
    let (status, v) = in_bash(&env, &links, "cat -- -a; cat -- -b").unwrap();
    assert_eq!((status, output(&v)), (0, "b\n"));
    // The continuation of a cut output.
    env.var("READBOX_MAX_OUTPUT_BYTES", "40");
    let a = env.run("cat", &["--", "-x"]);
    assert_eq!(a.output, &text[..40]);
    let call = call_after(&a.notes.join("\n"), "continue with: ").to_string();
    assert_eq!(call, "cat -- -x 6");
    let (_, v) = in_bash(&env, &links, &format!("READBOX_MAX_OUTPUT_BYTES=40 {call}")).unwrap();
    assert_eq!(output(&v), &text[40..80]);
    // grep with PATH left out names the calls that read the pipe and the tree.
    let (status, v) = with_stdin(&env, &["grep", "--", "-foo"], Input::Pipe(b"-foo\n"));
    assert_eq!(status, 2);
    assert!(
        error(&v).contains("grep -- -foo - searches the piped text")
            && error(&v).contains("grep -- -foo . searches the tree"),
        "{v}"
    );
    // ls's truncation names find with `--`.
    env.mkdir("-d");
    for i in 0..20 {
        env.write(&format!("-d/entry{i:02}"), "");
    }
    let a = env.run("ls", &["--", "-d"]);
    assert!(
        a.notes.iter().any(|n| n.contains("`find -- -d PATTERN`")),
        "{:?}",
        a.notes
    );
}

/// Every flag of every tool's table, in a typical call: the hint it gives, when it gives one,
/// runs as written in a shell whose PATH holds only readbox's links, and succeeds.
#[test]
fn every_hint_of_the_flag_table_runs_as_written() {
    use readbox::registry::Effect;
    use readbox::tools::TOOLS;
    let env = TestEnv::new();
    env.write("f.txt", "alpha\nbeta x\ngamma\n");
    env.write("g.txt", "alpha\nbeta\ngamma\n");
    env.write("d/a.txt", "x here\n");
    let links = links(&env);
    let value_of = |param: &str| match param {
        "lines" | "max_depth" | "context_lines" => "2",
        "pattern" => "x",
        "file_type" => "f",
        "file_pattern" => "*.txt",
        "path" => "f.txt",
        _ => "x",
    };
    let (mut ran, mut failures) = (0, Vec::new());
    for t in TOOLS {
        for flag in t.flags {
            for name in flag.names {
                let mut words: Vec<&str> = vec![name];
                match flag.effect {
                    Effect::Takes(p) => words.push(value_of(p)),
                    Effect::DroppedWithValue(_) => words.push("%s"),
                    _ => {}
                }
                let takes_pattern = matches!(flag.effect, Effect::Takes("pattern"));
                let rest: &[&str] = match t.name {
                    "pwd" => &[],
                    "ls" | "find" => &["d"],
                    "grep" if takes_pattern => &["d"],
                    "grep" => &["x", "d"],
                    "diff" => &["f.txt", "g.txt"],
                    _ => &["f.txt"],
                };
                words.extend(rest);
                let a = env.run(t.name, &words);
                let Some(e) = a.error.as_deref() else {
                    failures.push(format!("{} {words:?} was not refused", t.name));
                    continue;
                };
                let Some(call) = offered(e) else { continue };
                ran += 1;
                let Some((status, answer)) = in_bash(&env, &links, &call) else {
                    failures.push(format!(
                        "`{call}` (from {} {name}) printed no envelope",
                        t.name
                    ));
                    continue;
                };
                if !answer["error"].is_null() || status > 1 {
                    failures.push(format!(
                        "`{call}` (from {} {name}) answers {answer}",
                        t.name
                    ));
                }
            }
        }
    }
    assert!(ran > 40, "only {ran} hints ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn text_format_wc_and_ls_are_what_a_shell_script_expects() {
    let mut env = TestEnv::new();
    env.write("small.txt", "one two\nthree\n");
    env.write("d/inner", "x\n");
    env.symlink("link", "small.txt");
    env.var("READBOX_FORMAT", "text");
    let a = env.both("wc", &["small.txt"]);
    assert_eq!(a.stdout, b" 2  3 14 small.txt\n");
    if let Ok(gnu) = Command::new("wc")
        .arg("small.txt")
        .current_dir(env.root())
        .output()
    {
        assert_eq!(a.stdout, gnu.stdout, "as GNU wc prints it");
    }
    let a = env.both("ls", &[] as &[&str]);
    assert_eq!(a.stdout, b"d\nlink\nsmall.txt\n");
}

#[test]
fn tool_help_answers_help_and_exits_0() {
    let env = TestEnv::new();
    for flag in ["--help", "-h"] {
        let a = env.both("grep", &[flag]);
        assert_eq!((a.status, &a.error), (0, &None));
        assert!(a.output.starts_with("grep - "), "{}", a.output);
    }
    // Among other words it is a refused flag like any other.
    env.both("grep", &["--help", "x"])
        .fails("usage", "'--help'");
}

// ---------------------------------------------------------------------------------------------
// An omitted PATH never reads standard input; `-` does

/// Runs `readbox WORDS` with a pipe on stdin that holds `data` and stays open: a readbox that read
/// its standard input would block here, so a call that does not finish in 5 s fails the test.
fn run_with_open_stdin(env: &TestEnv, words: &[&str], data: &[u8]) -> Raw {
    run_with_stdin(env, words, data, true)
}

/// `readbox WORDS` with `data` piped into its standard input, which stays open (`keep_open`: a
/// call that reads it would hang, and fails the test) or is closed after `data`.
fn run_with_stdin(env: &TestEnv, words: &[&str], data: &[u8], keep_open: bool) -> Raw {
    let shown = format!("readbox {}", words.join(" "));
    let mut child = Command::new(binary())
        .args(words)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(env.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn readbox");
    let mut stdin = child.stdin.take();
    // A call that never reads may have exited already: its closed pipe is no failure here.
    match stdin.as_mut().unwrap().write_all(data) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
    if !keep_open {
        stdin = None;
    }
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(5) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{shown} hung with an open stdin: it reads its standard input");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    drop(stdin);
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    envelope(&stdout, status.code().expect("exited by a signal"), &shown)
}

#[test]
fn an_omitted_path_never_reads_standard_input_and_dash_does() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    env.write("-", "the file named dash\n");
    for words in [
        &["cat"][..],
        &["wc"],
        &["head"],
        &["call", "cat"],
        &["grep"],
    ] {
        let r = run_with_open_stdin(&env, words, b"");
        assert_eq!(r.status, 2, "readbox {words:?}");
        assert!(
            r.error.as_deref().is_some_and(|e| e.starts_with("usage: ")),
            "readbox {words:?}: {:?}",
            r.error
        );
        assert_eq!(r.output, "");
    }
    let r = run_with_open_stdin(&env, &["cat", "a.txt"], b"STDIN DATA\n");
    assert_eq!((r.status, r.output.as_str(), r.error), (0, "x\n", None));
    // `-` is standard input; the file named `-` is reached as `./-`.
    let r = run_with_stdin(&env, &["cat", "-"], b"STDIN DATA\n", false);
    assert_eq!(
        (r.status, r.output.as_str(), r.error),
        (0, "STDIN DATA\n", None)
    );
    let r = run_with_open_stdin(&env, &["cat", "./-"], b"STDIN DATA\n");
    assert_eq!(
        (r.status, r.output.as_str(), r.error),
        (0, "the file named dash\n", None)
    );
}
