//! Positional arguments (docs/contract.md#arguments and the #decisions-on-details on them):
//! counts and defaults; booleans, integers, ranges, FILE_TYPE and globs; the refusal of every
//! flag with the equivalent positional call; `--`; and a file named `-`.

use crate::support::{Answer, TestEnv};

/// True when `text` holds `word` as a whole word: the flag itself, not a longer flag that merely
/// starts with it (`-n` must not be satisfied by `-name`).
pub(crate) fn names_word(text: &str, word: &str) -> bool {
    let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_'));
    text.match_indices(word).any(|(i, _)| {
        edge(text[..i].chars().next_back()) && edge(text[i + word.len()..].chars().next())
    })
}

/// A usage error that names `word`, with empty output (nothing was read), exit 2.
#[track_caller]
pub(crate) fn refused(a: &Answer, word: &str) {
    a.fails("usage", word);
    let e = a.error.as_deref().unwrap();
    assert!(
        names_word(e, word),
        "the error of {} should name {word:?}: {e}",
        a.shown
    );
    assert_eq!(a.output, "", "output of a refused call {}", a.shown);
}

/// A usage error with empty output, exit 2.
#[track_caller]
pub(crate) fn usage(a: &Answer) {
    a.fails("usage", "");
    assert_eq!(a.output, "", "output of a usage error for {}", a.shown);
}

// ---------------------------------------------------------------------------------------------
// §2 positional arguments: counts and defaults

#[test]
fn wrong_argument_counts_are_usage_errors_before_any_path_is_looked_at() {
    let env = TestEnv::new();
    env.write("a", "x\n");
    env.secret(".env");
    let cases: &[(&str, &[&str])] = &[
        ("cat", &[]),
        ("cat", &["a", "a"]),
        ("pwd", &["a"]),
        ("ls", &[".", "true", "x"]),
        ("find", &[".", "*", "all", "1", "x"]),
        ("grep", &[]),
        ("grep", &["p", ".", "true", "false", "*", "1", "x"]),
        ("head", &[]),
        ("head", &["a", "1", "x"]),
        ("tail", &[]),
        ("tail", &["a", "1", "x"]),
        ("wc", &[]),
        ("wc", &["a", "a"]),
        ("stat", &[]),
        ("stat", &["a", "a"]),
        ("diff", &[]),
        ("diff", &["a"]),
        ("diff", &["a", "a", "3", "x"]),
        // Paths that would be not found or denied: the count is checked first.
        ("cat", &["nope", "x"]),
        ("cat", &[".env", "x"]),
        ("head", &["nope", "1", "x"]),
        ("wc", &["../outside/secret.txt", "x"]),
    ];
    for (tool, args) in cases {
        usage(&env.both(tool, args));
    }
}

#[test]
fn left_off_arguments_take_their_defaults() {
    let env = TestEnv::new();
    let twelve: String = (1..=12).map(|i| format!("{i}\n")).collect();
    env.write("n.txt", &twelve);
    env.write(".hidden", "h\n");
    env.write("d/deep.txt", "needle\n");
    env.write("m.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nX\n");
    env.both("head", &["n.txt"])
        .ok("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
    env.both("tail", &["n.txt"])
        .ok("3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n");
    env.both("ls", &[] as &[&str]).ok("d/\nm.txt\nn.txt\n");
    let pairs: &[(&str, &[&str], &[&str])] = &[
        ("ls", &[], &[".", "false"]),
        ("find", &[], &[".", "*", "all", "20"]),
        (
            "grep",
            &["needle"],
            &["needle", ".", "true", "false", "*", "20"],
        ),
        ("head", &["n.txt"], &["n.txt", "10"]),
        ("diff", &["n.txt", "m.txt"], &["n.txt", "m.txt", "3"]),
    ];
    for (tool, short, long) in pairs {
        let a = env.run(tool, short);
        let b = env.run(tool, long);
        assert_eq!(
            (a.status, &a.stdout),
            (b.status, &b.stdout),
            "{tool} {short:?} vs {long:?}"
        );
    }
    env.both("grep", &["needle"]).ok("d/deep.txt:1:needle\n");
}

// ---------------------------------------------------------------------------------------------
// §2 values: booleans, integers, ranges, FILE_TYPE, globs

#[test]
fn booleans_accept_every_spelling_in_any_case() {
    let env = TestEnv::new();
    env.write(".hidden", "h\n");
    env.write("shown", "s\n");
    for w in [
        "true", "TRUE", "True", "1", "yes", "YES", "Yes", "on", "ON", "oN",
    ] {
        env.both("ls", &[".", w]).ok(".hidden\nshown\n");
    }
    for w in [
        "false", "FALSE", "False", "0", "no", "NO", "No", "off", "OFF", "Off",
    ] {
        env.both("ls", &[".", w]).ok("shown\n");
    }
    env.write("g.txt", "Foo\n");
    env.both("grep", &["foo", "g.txt", "TRUE", "Yes"])
        .ok("g.txt:1:Foo\n");
    env.both("grep", &["foo", "g.txt", "On", "OFF"]).no_match();
}

#[test]
fn bad_booleans_are_usage_errors() {
    let env = TestEnv::new();
    env.write("g.txt", "x\n");
    for w in ["maybe", "2", "t", "y", "", "tru", "truee", " true", "yes "] {
        usage(&env.both("ls", &[".", w]));
        // One parser serves every tool and both forms; the link form is checked on ls above.
        usage(&env.run("grep", &["x", ".", w]));
        usage(&env.run("grep", &["x", ".", "true", w]));
    }
}

#[test]
fn integers_are_plain_decimal_digits() {
    let env = TestEnv::new();
    env.write("a", "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
    // `[0-9]+`: leading zeros are still decimal.
    env.both("head", &["a", "007"]).ok("1\n2\n3\n4\n5\n6\n7\n");
    env.both("tail", &["a", "02"]).ok("8\n9\n");
    for w in [
        "x",
        "1.5",
        "0x10",
        "",
        "+5",
        " 5",
        "5 ",
        "1e3",
        "5x",
        "\u{663}",
        "99999999999999999999999",
    ] {
        usage(&env.both("head", &["a", w]));
        // One parser serves every tool and both forms; the link form is checked on head above.
        usage(&env.run("tail", &["a", w]));
        usage(&env.run("diff", &["a", "a", w]));
        usage(&env.run("find", &[".", "*", "all", w]));
    }
}

#[test]
fn ranges_accept_their_ends_and_refuse_one_past() {
    let env = TestEnv::new();
    env.write("a", "1\n2\n");
    env.write("b", "1\n3\n");
    env.write("d/e.txt", "1\n");
    env.both("head", &["a", "0"]).ok("");
    env.both("tail", &["a", "0"]).ok("");
    env.both("head", &["a", "10000"]).ok("1\n2\n");
    env.both("tail", &["a", "10000"]).ok("1\n2\n");
    usage(&env.both("head", &["a", "10001"]));
    usage(&env.both("tail", &["a", "10001"]));
    env.both("find", &["d", "*", "all", "0"]).ok("");
    env.both("find", &["d", "*", "all", "100"]).ok("d/e.txt\n");
    usage(&env.both("find", &["d", "*", "all", "101"]));
    env.both("grep", &["1", "d", "true", "false", "*", "0"])
        .no_match();
    env.both("grep", &["1", "d", "true", "false", "*", "100"])
        .ok("d/e.txt:1:1\n");
    usage(&env.both("grep", &["1", "d", "true", "false", "*", "101"]));
    env.both("diff", &["a", "b", "0"])
        .ok_status("--- a\n+++ b\n@@ -2 +2 @@\n-2\n+3\n", 1);
    env.both("diff", &["a", "b", "100"])
        .ok_status("--- a\n+++ b\n@@ -1,2 +1,2 @@\n 1\n-2\n+3\n", 1);
    usage(&env.both("diff", &["a", "b", "101"]));
}

#[test]
fn file_type_accepts_all_file_directory_f_d_in_any_case() {
    let env = TestEnv::new();
    env.write("t/f.txt", "x\n");
    env.mkdir("t/sub");
    for w in ["file", "FILE", "File", "f", "F"] {
        env.both("find", &["t", "*", w]).ok("t/f.txt\n");
    }
    for w in ["directory", "DIRECTORY", "Directory", "d", "D"] {
        env.both("find", &["t", "*", w]).ok("t/sub/\n");
    }
    for w in ["all", "ALL", "All"] {
        env.both("find", &["t", "*", w]).ok("t/f.txt\nt/sub/\n");
    }
    for w in ["link", "l", "dir", "files", "", "a", "symlink"] {
        usage(&env.run("find", &["t", "*", w]));
    }
}

#[test]
fn glob_that_does_not_compile_is_a_usage_error() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    usage(&env.both("find", &[".", "["]));
    usage(&env.both("find", &[".", "a{b"]));
    usage(&env.both("grep", &["x", ".", "true", "false", "["]));
    usage(&env.readbox(&["call", "find", r#"{"pattern":"["}"#]));
    usage(&env.readbox(&["call", "grep", r#"{"pattern":"x","file_pattern":"["}"#]));
}

#[test]
fn bad_values_are_refused_before_the_path_is_opened() {
    let env = TestEnv::new();
    env.fifo("pipe");
    env.secret(".env");
    // A bad value on a FIFO, a missing file or a denied one: usage, never the path's error.
    usage(&env.both("head", &["pipe", "1.5"]));
    usage(&env.both("tail", &["nope", "x"]));
    usage(&env.both("head", &[".env", "-1"]));
    usage(&env.both("ls", &["../outside", "maybe"]));
    usage(&env.both("diff", &["nope", ".env", "101"]));
}

#[test]
fn empty_path_is_not_found() {
    let env = TestEnv::new();
    for tool in ["cat", "wc", "stat", "head", "tail", "ls"] {
        let a = env.both(tool, &[""]);
        assert_eq!(a.error.as_deref(), Some("not found: "), "{tool} \"\"");
        assert_eq!(a.status, 2);
    }
    let a = env.readbox(&["call", "cat", r#"{"path":""}"#]);
    assert_eq!(a.error.as_deref(), Some("not found: "));
}

// ---------------------------------------------------------------------------------------------
// §2 flags: refused, named, with the equivalent positional call

#[test]
fn grep_dash_i_hint_gives_positional_call() {
    let env = TestEnv::new();
    env.write("src/a.txt", "foo\n");
    let a = env.both("grep", &["-i", "foo", "src"]);
    refused(&a, "-i");
    a.fails("usage", "grep foo src true true");
}

#[test]
fn head_dash_n_hint_gives_positional_call() {
    let env = TestEnv::new();
    env.write("f", "1\n2\n");
    let a = env.both("head", &["-n", "5", "f"]);
    refused(&a, "-n");
    a.fails("usage", "head f 5");
}

#[test]
fn common_flags_hint_their_positional_call() {
    let env = TestEnv::new();
    env.write("f", "1\n2\n3\n4\n");
    env.write("src/a.txt", "foo\n");
    env.mkdir("d");
    let cases: &[(&str, &[&str], &str, &str)] = &[
        ("tail", &["-n", "3", "f"], "-n", "tail f 3"),
        ("head", &["-5", "f"], "-5", "head f 5"),
        ("ls", &["-a", "d"], "-a", "ls d true"),
        ("grep", &["-r", "foo", "src"], "-r", "grep foo src true"),
        (
            "grep",
            &["-ri", "foo", "src"],
            "-ri",
            "grep foo src true true",
        ),
        (
            "grep",
            &["foo", "src", "-i"],
            "-i",
            "grep foo src true true",
        ),
    ];
    for (tool, args, word, hint) in cases {
        let a = env.both(tool, args);
        refused(&a, word);
        a.fails("usage", hint);
    }
}

/// The call a refusal offers after `equivalent: `, as words (POSIX single quotes undone).
fn offered_call(error: &str) -> Option<Vec<String>> {
    let rest = &error[error.find("equivalent: ")? + "equivalent: ".len()..];
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = rest.chars().peekable();
    let mut started = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                started = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '\\' => {
                started = true;
                word.extend(chars.next());
            }
            ' ' | ';' => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
                // A note in parentheses or the next clause ends the call.
                if c == ';' || chars.peek() == Some(&'(') {
                    break;
                }
            }
            _ => {
                started = true;
                word.push(c);
            }
        }
    }
    if started {
        words.push(word);
    }
    Some(words)
}

/// Runs the call that the refusal of `tool args` offers and returns its answer, or None when
/// the refusal offers no call.
#[track_caller]
fn run_offered(env: &TestEnv, tool: &str, args: &[&str]) -> Option<Answer> {
    let a = env.run(tool, args);
    a.fails("usage", "");
    let words = offered_call(a.error.as_deref().unwrap())?;
    // The offered call may be of another tool (`tail -n +2 f` -> `cat f 2`).
    Some(env.run(&words[0], &words[1..]))
}

#[test]
fn hint_keeps_double_dash_before_dash_words() {
    let env = TestEnv::new();
    env.write("-f", "1\n2\n");
    env.write("src/-x.txt", "a -x b\n");
    env.write("-x", "a -x b\n");
    // The offered call must do what was asked, so a word after `--` that starts with `-` keeps
    // its `--` (else the offered call is refused in turn).
    let cases: &[(&str, &[&str], &str)] = &[
        ("head", &["-n", "1", "--", "-f"], "1\n"),
        ("grep", &["-i", "--", "-X", "-x"], "-x:1:a -x b\n"),
        ("ls", &["-a", "--", "-x"], "-x\n"),
    ];
    let mut bad = Vec::new();
    for (tool, args, want) in cases {
        match run_offered(&env, tool, args) {
            None => bad.push(format!("{tool} {args:?} offers no positional call")),
            Some(o) if o.error.is_some() || o.output != *want => bad.push(format!(
                "{tool} {args:?} offers `{}`, which answers {:?} {:?} instead of {want:?}",
                o.shown, o.output, o.error
            )),
            Some(_) => {}
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn hint_never_offers_a_call_that_is_refused() {
    let env = TestEnv::new();
    env.write("f", "1\n2\n3\n");
    env.write("src/a.txt", "foo\n");
    // `head -n -2` (all but the last 2) has no positional form: a hint may say so, but must not
    // offer `head f -2`, which is a usage error itself; `tail -n +2` is offered as `cat f 2`.
    let cases: &[(&str, &[&str])] = &[
        ("tail", &["-n", "+2", "f"]),
        ("head", &["-n", "-2", "f"]),
        ("grep", &["-i", "foo", "src"]),
        ("head", &["-n", "2", "f"]),
        ("find", &[".", "-name", "*.txt", "-type", "f"]),
    ];
    let mut offered_any = 0;
    let mut bad = Vec::new();
    for (tool, args) in cases {
        if let Some(offered) = run_offered(&env, tool, args) {
            offered_any += 1;
            if let Some(e) = offered
                .error
                .as_deref()
                .filter(|e| e.starts_with("usage: "))
            {
                bad.push(format!(
                    "{tool} {args:?} offers `{}`, which is refused: {e}",
                    offered.shown
                ));
            }
        }
    }
    // The plain cases (grep -i, head -n 2, find -name -type) do offer a call.
    assert!(
        offered_any >= 3,
        "only {offered_any} refusals offered a call"
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn every_dash_word_is_refused_and_shows_the_positional_form() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    let cases: &[(&str, &[&str], &str, &[&str])] = &[
        ("cat", &["-n", "a.txt"], "-n", &["PATH"]),
        ("ls", &["-la"], "-la", &["PATH", "SHOW_HIDDEN"]),
        (
            "find",
            &[".", "-name", "x"],
            "-name",
            &["PATH", "PATTERN", "FILE_TYPE", "MAX_DEPTH"],
        ),
        ("tail", &["-f", "a.txt"], "-f", &["PATH", "LINES"]),
        ("wc", &["-l", "a.txt"], "-l", &["PATH"]),
        ("stat", &["--format=%s", "a.txt"], "--format", &["PATH"]),
        (
            "diff",
            &["-u", "a.txt", "a.txt"],
            "-u",
            &["PATH_A", "PATH_B", "CONTEXT_LINES"],
        ),
        ("pwd", &["-P"], "-P", &[]),
        (
            "grep",
            &["x", "a.txt", "--color"],
            "--color",
            &["PATTERN", "PATH", "RECURSIVE", "IGNORE_CASE"],
        ),
        ("head", &["a.txt", "-1"], "-1", &["PATH", "LINES"]),
        ("cat", &["-\u{e9}"], "-\u{e9}", &["PATH"]),
        ("cat", &["---"], "---", &["PATH"]),
        // A flag is refused before its path is looked at.
        ("cat", &["-n", "nope"], "-n", &["PATH"]),
        ("cat", &["../outside/secret.txt", "-v"], "-v", &["PATH"]),
    ];
    for (tool, args, word, params) in cases {
        let a = env.both(tool, args);
        refused(&a, word);
        let e = a.error.as_deref().unwrap();
        for p in *params {
            assert!(
                names_word(e, p),
                "{tool} {args:?}: the error should show the positional form ({p}): {e}"
            );
        }
    }
}

#[test]
fn double_dash_makes_later_words_literal() {
    let env = TestEnv::new();
    env.write("-n", "dash file\n");
    env.write("--", "double dash file\n");
    env.write("-x", "1\n2\n");
    env.write("notes.txt", "a\na -x b\n");
    env.both("cat", &["--", "-n"]).ok("dash file\n");
    env.both("cat", &["--", "--"]).ok("double dash file\n");
    env.both("head", &["--", "-x", "1"]).ok("1\n");
    env.both("grep", &["--", "-x", "notes.txt"])
        .ok("notes.txt:2:a -x b\n");
    env.both("diff", &["--", "-n", "-n"]).ok("");
    // `--` is no argument itself: it neither fills a place nor lifts the count.
    usage(&env.both("cat", &["--"]));
    usage(&env.both("cat", &["--", "-n", "-x"]));
    env.both("head", &["notes.txt", "--", "1"]).ok("a\n");
    // A flag before `--` is still refused.
    refused(&env.both("head", &["-x", "--"]), "-x");
    refused(&env.both("head", &["-n", "--", "-x"]), "-n");
}

#[test]
fn a_file_named_dash_is_reached_as_dot_slash_dash() {
    let env = TestEnv::new();
    env.write("-", "one\ntwo\n");
    env.write("b", "one\n2\n");
    env.both("cat", &["./-"]).ok("one\ntwo\n");
    env.both("head", &["./-", "1"]).ok("one\n");
    env.both("grep", &["two", "./-"]).ok("./-:2:two\n");
    // For ls, find and stat `-` is an ordinary name.
    env.both("ls", &["-"]).ok("-\n");
    assert_eq!(
        env.both("stat", &["-"]).json()["path"],
        serde_json::json!("-")
    );
    // As PATTERN, `-` is literal text like any other.
    env.write("n.txt", "a-b\nc\n");
    env.both("grep", &["-", "n.txt"]).ok("n.txt:1:a-b\n");
    env.both("diff", &["./-", "b", "0"])
        .ok_status("--- ./-\n+++ b\n@@ -2 +2 @@\n-two\n+2\n", 1);
    // Standard input here is /dev/null, neither a pipe nor a file: `-` is refused, and the
    // error says why and how to reach the file named `-`.
    env.both("cat", &["-"])
        .fails("not a file", "- (standard input here is a device")
        .fails("not a file", "a file named - is ./-");
}
