//! Hints that do the same (docs/contract.md#arguments): for every flag of the hint table whose
//! hint stands for the flag (it sets a parameter, takes a value, is what readbox always does,
//! or is answered by another call), and for every several-path form, the hinted calls run on a
//! fixture and the GNU command runs on the same fixture, and their answers are compared: the
//! lines, the counts and their order.
//!
//! What readbox prints differently by design is taken out of both sides before they are
//! compared, and nothing else: GNU's `==> PATH <==` and `PATH:` headers between files, find's
//! start directory (readbox lists the entries below PATH) and readbox's `/` after a directory,
//! `.` and `..` of `ls -a` (readbox lists a directory's children), wc's `total` line, names and
//! column widths (readbox's wc is one JSON line), diff's timestamps, and grep's
//! format (GNU runs with `-H -n` added, so that each line is `path:N:text` as readbox prints it).
//! A recursive grep or find lists a directory in the order GNU reads it, which is not sorted:
//! those answers are compared as sorted lines. A flag whose hint drops it (`wc -l`, `ls -l`)
//! names what it drops and is not compared; one with no equivalent gives none.

use std::process::Command;

use readbox::registry::Effect;
use readbox::tools::TOOLS;

use crate::support::TestEnv;

/// The fixture: text files with words, blank lines and a line that repeats, and a tree.
fn fixture(env: &TestEnv) {
    env.write("f.txt", "alpha\nbeta x\n\ngamma x\ndelta\nx\nepsilon\n");
    env.write("g.txt", "alpha\nbeta\n\ngamma x\ndelta x\nzeta\n");
    env.write("d/a.txt", "x here\nnone\n");
    env.write("d/.hidden", "x hidden\n");
    env.write("d/b.md", "b x\n");
    env.write("d/sub/c.txt", "deep x\n");
    env.write("e/one.txt", "x one\n");
    env.write("e/two.txt", "two\n");
}

/// How two answers are made comparable.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Norm {
    /// Byte for byte.
    Same,
    /// GNU's `==> PATH <==` headers (and the blank line before each) taken out.
    Headers,
    /// `cat -n`'s `     N\tline` and grep's `path:N:line`, each as `N:line`.
    Numbered,
    /// Sorted lines (a walk in GNU's order).
    Sorted,
    /// ls: `.`, `..`, the `PATH:` headers and blank lines out; readbox's `/` and `@` marks out.
    Ls,
    /// ls -F and -p: marks kept.
    LsMarked,
    /// find: the start directories out, sorted.
    Find,
    /// wc: the numbers of each file, `total` out.
    Wc,
    /// stat: the size.
    Stat,
    /// diff: the timestamps of the `---` and `+++` lines out.
    Diff,
}

/// The hinted calls of a refusal: the calls after `equivalent: `, without the notes that follow
/// them.
fn hinted(error: &str) -> Option<Vec<String>> {
    let (_, rest) = error.split_once("equivalent: ")?;
    let rest = rest.split("; or, for all").next().unwrap_or(rest);
    let calls: Vec<String> = rest
        .split("; ")
        .filter(|c| {
            c.split(' ')
                .next()
                .is_some_and(|t| readbox::registry::NAMES.contains(&t))
        })
        .map(str::to_string)
        .collect();
    (!calls.is_empty()).then_some(calls)
}

/// A hint's words, as a shell splits them (plain words and `'…'` quoting, which is all that
/// readbox writes for these names).
fn shell_words(call: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = call.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// readbox's answer to the hinted calls, one after the other: their outputs joined.
fn run_hint(env: &TestEnv, calls: &[String]) -> String {
    let mut out = String::new();
    for call in calls {
        let words = shell_words(call);
        let a = env.run(&words[0], &words[1..]);
        assert!(
            a.error.is_none(),
            "the hinted `{call}` fails: {:?}",
            a.error
        );
        out.push_str(&a.output);
    }
    out
}

/// The GNU command's standard output in the fixture (C locale, so that ls sorts by bytes).
fn gnu(env: &TestEnv, argv: &[&str]) -> String {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(env.root())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .output()
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    String::from_utf8(out.stdout).unwrap()
}

/// `text` made comparable as `norm` says; `gnu_side` tells which side it is.
fn normalized(text: &str, norm: Norm, gnu_side: bool, starts: &[&str]) -> Vec<String> {
    let lines = text.lines().map(str::to_string);
    let mut v: Vec<String> = match norm {
        Norm::Same | Norm::Sorted => lines.collect(),
        Norm::Headers => {
            let mut kept: Vec<String> = Vec::new();
            for l in lines {
                if l.starts_with("==> ") && l.ends_with(" <==") {
                    if kept.last().is_some_and(String::is_empty) {
                        kept.pop();
                    }
                    continue;
                }
                kept.push(l);
            }
            kept
        }
        Norm::Numbered => lines
            .map(|l| {
                if gnu_side {
                    let (n, text) = l.trim_start().split_once('\t').unwrap();
                    format!("{n}:{text}")
                } else {
                    let (_, rest) = l.split_once(':').unwrap();
                    rest.to_string()
                }
            })
            .collect(),
        Norm::Ls | Norm::LsMarked => lines
            .filter(|l| !l.is_empty() && l != "." && l != ".." && !l.ends_with(':'))
            .map(|l| {
                if norm == Norm::Ls && !gnu_side {
                    l.trim_end_matches(['/', '@']).to_string()
                } else {
                    l
                }
            })
            .collect(),
        Norm::Find => lines
            .filter(|l| !starts.contains(&l.as_str()))
            .map(|l| {
                if gnu_side {
                    l
                } else {
                    l.trim_end_matches('/').to_string()
                }
            })
            .collect(),
        Norm::Wc => lines
            .filter(|l| !l.ends_with(" total"))
            .map(|l| {
                if gnu_side {
                    // Lines, words, bytes; the name after them is readbox's call's own PATH.
                    l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
                } else {
                    // {"lines": L, "words": W, "bytes": B} of one file, in the order called.
                    let v: serde_json::Value = serde_json::from_str(&l).unwrap();
                    format!("{} {} {}", v["lines"], v["words"], v["bytes"])
                }
            })
            .collect(),
        Norm::Stat => lines
            .filter_map(|l| {
                if gnu_side {
                    let at = l.find("Size: ")?;
                    l[at + 6..].split_whitespace().next().map(str::to_string)
                } else {
                    let v: serde_json::Value = serde_json::from_str(&l).ok()?;
                    Some(v["size_bytes"].to_string())
                }
            })
            .collect(),
        Norm::Diff => lines
            .map(|l| {
                if l.starts_with("--- ") || l.starts_with("+++ ") {
                    l.split('\t').next().unwrap().to_string()
                } else {
                    l
                }
            })
            .collect(),
    };
    if matches!(norm, Norm::Sorted | Norm::Find) {
        v.sort();
    }
    v
}

/// One comparison: the flag-style `words` of `tool`, the GNU command, how to compare, and the
/// start directories that find lists and readbox does not.
struct Case {
    words: Vec<&'static str>,
    gnu: Vec<&'static str>,
    norm: Norm,
    starts: &'static [&'static str],
}

fn case(words: &[&'static str], gnu: &[&'static str], norm: Norm) -> Case {
    Case {
        words: words.to_vec(),
        gnu: gnu.to_vec(),
        norm,
        starts: &[],
    }
}

/// The comparison of `flag` of `tool` in a typical call, or `None` with why it is not one
/// (docs/contract.md#arguments).
fn flag_case(tool: &'static str, flag: &'static str, effect: Effect) -> Result<Case, &'static str> {
    use Norm::*;
    let takes = |value: &'static str, rest: &[&'static str]| {
        let mut w = vec![flag, value];
        w.extend(rest);
        w
    };
    let plain = |rest: &[&'static str]| {
        let mut w = vec![flag];
        w.extend(rest);
        w
    };
    let with = |prefix: &[&'static str], w: &[&'static str]| {
        let mut v = prefix.to_vec();
        v.extend(w);
        v
    };
    Ok(match (tool, effect) {
        (_, Effect::Dropped(_) | Effect::DroppedWithValue(_) | Effect::Never(_)) => {
            return Err("no hint stands for it");
        }
        ("cat", Effect::OtherCall(_)) => {
            let w = plain(&["f.txt"]);
            case(&w, &with(&["cat"], &w), Numbered)
        }
        ("cat", _) => {
            let w = plain(&["f.txt"]);
            case(&w, &with(&["cat"], &w), Same)
        }
        ("head" | "tail", Effect::Takes(_)) => {
            let w = takes("3", &["f.txt"]);
            case(&w, &with(&[tool], &w), Same)
        }
        ("head" | "tail", _) => {
            let w = plain(&["f.txt"]);
            case(&w, &with(&[tool], &w), Same)
        }
        ("ls", _) => {
            let w = plain(&["d"]);
            let marked = matches!(flag, "-F" | "-p" | "--classify");
            case(&w, &with(&["ls"], &w), if marked { LsMarked } else { Ls })
        }
        ("find", Effect::Takes("pattern")) => Case {
            words: takes("*.txt", &["d"]),
            gnu: vec!["find", "d", flag, "*.txt"],
            norm: Find,
            starts: &["d"],
        },
        ("find", Effect::Takes("file_type")) => Case {
            words: takes("f", &["d"]),
            gnu: vec!["find", "d", flag, "f"],
            norm: Find,
            starts: &["d"],
        },
        ("find", Effect::Takes(_)) => Case {
            words: takes("1", &["d"]),
            gnu: vec!["find", "d", flag, "1"],
            norm: Find,
            starts: &["d"],
        },
        ("find", _) => Case {
            words: plain(&["d"]),
            gnu: vec!["find", "d", flag],
            norm: Find,
            starts: &["d"],
        },
        ("grep", Effect::Takes("pattern")) => {
            let w = takes("x", &["f.txt"]);
            case(&w, &with(&["grep", "-H", "-n"], &w), Same)
        }
        ("grep", Effect::Takes(_)) => {
            let w = takes("*.txt", &["-r", "x", "d"]);
            case(&w, &with(&["grep", "-H", "-n"], &w), Sorted)
        }
        ("grep", Effect::Set("recursive", _)) => {
            let w = plain(&["x", "d"]);
            case(&w, &with(&["grep", "-H", "-n"], &w), Sorted)
        }
        ("grep", _) => {
            let w = plain(&["X", "f.txt"]);
            case(&w, &with(&["grep", "-H", "-n"], &w), Same)
        }
        ("stat", _) => {
            let w = plain(&["f.txt"]);
            case(&w, &with(&["stat"], &w), Stat)
        }
        ("diff", Effect::Takes(_)) => {
            let w = takes("1", &["f.txt", "g.txt"]);
            case(&w, &with(&["diff"], &w), Diff)
        }
        ("diff", _) => {
            // GNU diff's own default is not unified: -u says it.
            let w = plain(&["f.txt", "g.txt"]);
            case(&w, &with(&["diff", "-u"], &w), Diff)
        }
        ("pwd", _) => {
            let w = plain(&[]);
            case(&w, &with(&["pwd"], &w), Same)
        }
        _ => return Err("no typical call"),
    })
}

/// The forms with several paths where the tool takes one, with and without flags.
fn several_path_cases() -> Vec<Case> {
    use Norm::*;
    let seven = [
        "f.txt",
        "g.txt",
        "d/a.txt",
        "d/b.md",
        "d/sub/c.txt",
        "e/one.txt",
        "e/two.txt",
    ];
    let mut grep_seven = vec!["x"];
    grep_seven.extend(seven);
    let mut gnu_grep_seven = vec!["grep", "-H", "-n", "x"];
    gnu_grep_seven.extend(seven);
    vec![
        case(&["f.txt", "g.txt"], &["cat", "f.txt", "g.txt"], Same),
        case(&["f.txt", "g.txt"], &["head", "f.txt", "g.txt"], Headers),
        case(
            &["f.txt", "g.txt", "3"],
            &["head", "-n", "3", "f.txt", "g.txt"],
            Headers,
        ),
        case(
            &["-n", "3", "f.txt", "g.txt"],
            &["head", "-n", "3", "f.txt", "g.txt"],
            Headers,
        ),
        case(
            &["-3", "f.txt", "g.txt"],
            &["head", "-3", "f.txt", "g.txt"],
            Headers,
        ),
        case(
            &["-n", "2", "f.txt", "g.txt"],
            &["tail", "-n", "2", "f.txt", "g.txt"],
            Headers,
        ),
        case(
            &["f.txt", "g.txt", "2"],
            &["tail", "-n", "2", "f.txt", "g.txt"],
            Headers,
        ),
        case(
            &["-n", "+5", "f.txt", "g.txt"],
            &["tail", "-n", "+5", "f.txt", "g.txt"],
            Headers,
        ),
        case(&["f.txt", "g.txt"], &["wc", "f.txt", "g.txt"], Wc),
        case(&["f.txt", "g.txt"], &["stat", "f.txt", "g.txt"], Stat),
        case(&grep_seven, &gnu_grep_seven, Same),
        case(
            &["x", "f.txt", "g.txt"],
            &["grep", "-H", "-n", "x", "f.txt", "g.txt"],
            Same,
        ),
        case(
            &["-i", "X", "f.txt", "g.txt"],
            &["grep", "-H", "-n", "-i", "X", "f.txt", "g.txt"],
            Same,
        ),
        case(
            &["-r", "x", "d", "e"],
            &["grep", "-H", "-n", "-r", "x", "d", "e"],
            Sorted,
        ),
        case(
            &["-rn", "--include=*.txt", "--include=*.md", "x", "d"],
            &[
                "grep",
                "-H",
                "-n",
                "-r",
                "--include=*.txt",
                "--include=*.md",
                "x",
                "d",
            ],
            Sorted,
        ),
        case(&["d", "e"], &["ls", "d", "e"], Ls),
        case(&["-A", "d", "e"], &["ls", "-A", "d", "e"], Ls),
        Case {
            words: vec!["d", "e", "-name", "*.txt"],
            gnu: vec!["find", "d", "e", "-name", "*.txt"],
            norm: Find,
            starts: &["d", "e"],
        },
        // (`find d e` is a valid call: PATH d, PATTERN e.)
        Case {
            words: vec!["d", "e", "-type", "f"],
            gnu: vec!["find", "d", "e", "-type", "f"],
            norm: Find,
            starts: &["d", "e"],
        },
    ]
}

/// The tool of a several-path case, from its GNU command.
fn tool_of(c: &Case) -> &'static str {
    c.gnu[0]
}

#[test]
fn every_hint_does_what_the_gnu_command_does() {
    if !gnu(&TestEnv::new(), &["grep", "--version"]).starts_with("grep (GNU grep)") {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "every_hint_does_what_the_gnu_command_does skipped: no GNU grep on PATH"
        );
        return;
    }
    let env = TestEnv::new();
    fixture(&env);
    let (mut compared, mut failures) = (0, Vec::new());
    let check = |tool: &str, c: &Case, failures: &mut Vec<String>| {
        let a = env.run(tool, &c.words);
        let Some(error) = a.error.as_deref() else {
            failures.push(format!("{tool} {:?} was not refused", c.words));
            return false;
        };
        let Some(calls) = hinted(error) else {
            failures.push(format!("{tool} {:?} gives no call: {error}", c.words));
            return false;
        };
        let ours = normalized(&run_hint(&env, &calls), c.norm, false, c.starts);
        let theirs = normalized(&gnu(&env, &c.gnu), c.norm, true, c.starts);
        if ours != theirs {
            failures.push(format!(
                "{tool} {:?}: the hint `{}` answers {ours:?}, `{}` answers {theirs:?}",
                c.words,
                calls.join("; "),
                c.gnu.join(" ")
            ));
        }
        true
    };
    for t in TOOLS {
        for flag in t.flags {
            for name in flag.names {
                let Ok(c) = flag_case(t.name, name, flag.effect) else {
                    continue;
                };
                compared += usize::from(check(t.name, &c, &mut failures));
            }
        }
    }
    for c in several_path_cases() {
        compared += usize::from(check(tool_of(&c), &c, &mut failures));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared > 60, "only {compared} hints were compared");
}

#[test]
fn a_refusal_without_an_equivalent_gives_no_call() {
    let env = TestEnv::new();
    fixture(&env);
    for (tool, words) in [
        // GNU numbers the lines of both files in one sequence.
        ("cat", &["-n", "f.txt", "g.txt"][..]),
        ("cat", &["-b", "f.txt"]),
        // Two PATTERNs, or two of find's tests: no one call prints the lines as GNU does.
        ("grep", &["-e", "x", "-e", "alpha", "f.txt"]),
        ("find", &["d", "-name", "*.txt", "-name", "a*"]),
        // A process substitution is a pipe of the shell's.
        ("diff", &["-u", "/dev/fd/63", "f.txt"]),
        // The shell expanded find's PATTERN into names.
        ("find", &[".", "f.txt", "g.txt", "all", "2"]),
        // GNU grep's PATTERN is a regular expression unless -F: a literal call is the same only
        // for one without special characters.
        ("grep", &["-rn", "x$", "."]),
        ("grep", &["-e", "^beta", "f.txt"]),
        ("grep", &["-E", "x|alpha", "f.txt"]),
        ("grep", &["-i", "b.ta", "f.txt"]),
    ] {
        let a = env.run(tool, words);
        let e = a.error.unwrap_or_default();
        assert!(
            e.starts_with("usage: ") && hinted(&e).is_none(),
            "{tool} {words:?}: {e}"
        );
    }
    // `use --` follows only a word that is no flag of the tool.
    for (tool, words) in [
        ("grep", &["-A3", "x", "f.txt"][..]),
        ("grep", &["-B2", "x", "f.txt"]),
        ("ls", &["-d", "d"]),
        ("find", &["d", "-size", "1"]),
    ] {
        let e = env.run(tool, words).error.unwrap_or_default();
        assert!(!e.contains("use -- before"), "{tool} {words:?}: {e}");
    }
    let e = env.run("cat", &["-zz"]).error.unwrap_or_default();
    assert!(e.contains("use -- before a path that starts with -"), "{e}");
    // The literal search is named, not offered as the equivalent; with -F it is one.
    let e = env.run("grep", &["-i", "b.ta", "f.txt"]).error.unwrap();
    assert!(
        e.ends_with("the literal search: grep b.ta f.txt true true"),
        "{e}"
    );
    let e = env.run("grep", &["-F", "b.ta", "f.txt"]).error.unwrap();
    assert!(e.ends_with("equivalent: grep b.ta f.txt"), "{e}");
}

#[test]
fn a_pipe_from_cat_is_hinted_as_the_call_that_reads_the_file() {
    let env = TestEnv::new();
    // Longer than the cap: the pipe from cat holds only its first 32 KiB.
    let log: String = (0..5000).map(|i| format!("line {i} TODO\n")).collect();
    env.write("app.log", &log);
    for (line, call) in [
        ("cat app.log | tail -n 2", "tail app.log 2"),
        (
            "cat app.log | grep -i 'todo'",
            "grep todo app.log true true",
        ),
    ] {
        let e = env.run("sh", &["-c", line]).error.unwrap_or_default();
        assert!(e.ends_with(&format!("equivalent: {call}")), "{line}: {e}");
    }
    let words = shell_words("tail app.log 2");
    env.run(&words[0], &words[1..])
        .ok("line 4998 TODO\nline 4999 TODO\n");
    // In a command line run outside readbox sh, the hint that reads the pipe says so.
    let e = env
        .piped(&["wc", "-l"], log.as_bytes())
        .error
        .unwrap_or_default();
    assert!(
        e.contains("equivalent: wc -;") && e.contains("wc FILE reads a file whole"),
        "{e}"
    );
}
