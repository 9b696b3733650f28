//! Agent replay: one persistent `bash` whose PATH holds only readbox links replays a script of
//! the commands an agent types in a project, and every answer is checked.
//!
//! The shell is driven as Anthropic's bash tool drives it: each command is written to the
//! shell's stdin and followed by a sentinel line, `printf '\n__RB_DONE_N__%s\n' "$?"`, so the
//! harness knows where an answer ends and with which exit status. State carries over between
//! commands (`cd src` affects the next one), as it does for an agent.
//!
//! Each step states what must hold: an exact output, a denial, an error class, or, for a command
//! with flags, a usage error that names the flag and either gives the positional call (the text
//! after `equivalent: ` up to the next `;`), which is then run in the same shell and must give
//! what the flag form meant, or says why there is none. No answer may ever hold a canary.
//! Failures are collected so that one run reports every broken step, then the test fails.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{OUTSIDE_CANARY, TestEnv};

/// How long one command may take before the replay gives up; readbox answers in milliseconds,
/// so reaching this means a hang (a tool reading the shell's stdin, say).
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// The canary in the fake `~/.ssh/id_rsa`, outside the root.
pub(crate) const HOME_CANARY: &str = "CANARY-HOME-5d1e";

/// Texts that must never appear in any answer: the outside secret, every excluded secret that
/// `TestEnv::secret` plants, and the home key.
pub(crate) const CANARY_MARKS: [&str; 3] = [OUTSIDE_CANARY, "CANARY-SECRET", HOME_CANARY];

// ---------------------------------------------------------------------------------------------
// The shell.

/// One answer of the shell: everything the command printed (stdout and stderr) and `$?`.
#[derive(Debug)]
struct Reply {
    text: String,
    status: i32,
}

/// A persistent bash fed through its stdin. Killed on drop, so a failing assertion never leaves
/// it behind.
struct Shell {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Vec<u8>>,
    count: usize,
}

impl Shell {
    /// Starts `bash --noprofile --norc` with a clean environment: PATH is the links directory
    /// only, so every tool an agent types reaches readbox (or nothing).
    fn spawn(cwd: &Path, links: &Path, home: &Path, root: &Path) -> Shell {
        Shell::spawn_with(cwd, links, home, root, &[])
    }

    /// As [`Shell::spawn`], with more variables in the environment.
    fn spawn_with(
        cwd: &Path,
        links: &Path,
        home: &Path,
        root: &Path,
        vars: &[(&str, &str)],
    ) -> Shell {
        let mut child = Command::new("/bin/bash")
            .args(["--noprofile", "--norc"])
            .env_clear()
            .env("PATH", links)
            .env("HOME", home)
            .env("LANG", "C.UTF-8")
            // The root stays the project even after `cd src`: without it, readbox would take
            // the current directory as its root.
            .env("READBOX_ROOTS", root)
            .envs(vars.iter().copied())
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start bash");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let lines = line_channel(stdout);
        let mut shell = Shell {
            child,
            stdin,
            lines,
            count: 0,
        };
        // The shell's own messages (`command not found`, syntax errors) are part of what the
        // agent sees, so stderr joins stdout in one ordered stream.
        let r = shell.run("exec 2>&1").expect("bash answers");
        assert_eq!((r.text.as_str(), r.status), ("", 0), "bash setup");
        shell
    }

    /// Writes `cmd` and the sentinel, and reads up to the sentinel. `Err` on a timeout or when
    /// bash went away.
    fn run(&mut self, cmd: &str) -> Result<Reply, String> {
        self.count += 1;
        let mark = format!("__RB_DONE_{}__", self.count);
        let script = format!("{cmd}\nprintf '\\n{mark}%s\\n' \"$?\"\n");
        self.stdin
            .write_all(script.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("writing to bash: {e}"))?;
        let deadline = Instant::now() + STEP_TIMEOUT;
        let mut text: Vec<u8> = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no answer within {STEP_TIMEOUT:?}"));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!(
                        "bash exited; it printed {:?}",
                        String::from_utf8_lossy(&text)
                    ));
                }
            };
            if let Some(rest) = line.strip_prefix(mark.as_bytes()) {
                let status = String::from_utf8_lossy(rest).trim().parse().unwrap();
                // The sentinel starts with its own newline; that one is not the command's.
                if text.last() == Some(&b'\n') {
                    text.pop();
                }
                let text =
                    String::from_utf8(text).map_err(|e| format!("the answer is not UTF-8: {e}"))?;
                return Ok(Reply { text, status });
            }
            text.extend_from_slice(&line);
        }
    }
}

/// The lines `reader` gives, each with its newline, on a channel that a reader thread fills, so
/// that a harness can wait with a timeout instead of blocking forever on a hung command.
pub(crate) fn line_channel(reader: impl std::io::Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(reader);
        loop {
            let mut line = Vec::new();
            match r.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    lines
}

impl Drop for Shell {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// What an answer must be.

/// A readbox answer, decoded from its envelope.
#[derive(Debug)]
struct Envelope {
    output: String,
    error: Option<String>,
    truncated: bool,
}

/// Decodes the one-line envelope, checking its shape: exactly the three keys, in order.
fn envelope(r: &Reply) -> Result<Envelope, String> {
    if !r.text.starts_with("{\"output\":") {
        return Err(format!("not an envelope: exit {} {:?}", r.status, r.text));
    }
    let body = r
        .text
        .strip_suffix('\n')
        .ok_or_else(|| format!("not an envelope line: {:?}", r.text))?;
    if body.contains('\n') {
        return Err(format!("more than one line: {:?}", r.text));
    }
    let v: serde_json::Map<String, Value> =
        serde_json::from_str(body).map_err(|e| format!("not JSON ({e}): {:?}", r.text))?;
    let keys: Vec<&str> = v.keys().map(String::as_str).collect();
    if keys != ["output", "error", "truncated"] && keys != ["output", "error", "truncated", "notes"]
    {
        return Err(format!("envelope keys {keys:?}"));
    }
    let e = Envelope {
        output: v["output"].as_str().ok_or("output is not a string")?.into(),
        error: match &v["error"] {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => return Err(format!("error is {other}")),
        },
        truncated: v["truncated"]
            .as_bool()
            .ok_or("truncated is not a boolean")?,
    };
    // Exit 0 or 1 exactly when there is no error (docs/contract.md#envelope).
    if e.error.is_none() != (r.status == 0 || r.status == 1) {
        return Err(format!("exit {} with error {:?}", r.status, e.error));
    }
    Ok(e)
}

type Check = Box<dyn Fn(&str) -> Result<(), String>>;

/// The expectation of one step.
enum Want {
    /// Success, exactly this output, this exit status (1: grep found nothing, diff differs).
    Out(i32, String),
    /// Success with exit 0, the output checked by a function (for stat's timestamp).
    OutWith(Check),
    /// Exactly `denied: PATH`, no output.
    Denied(String),
    /// An error of this class (`not found`, `not a file`) holding this text, no output.
    Fails(&'static str, String),
    /// Not an envelope: a shell builtin or bash's own message; exit status and exact text.
    Raw(i32, String),
    /// Not an envelope: exit status and a text the answer holds.
    RawHas(i32, String),
    /// A refused flag with a positional equivalent: the usage error names `flag`, and its hint,
    /// run in the same shell, answers as `then`.
    Hint { flag: &'static str, then: Box<Want> },
    /// A refused flag whose hint is exactly `call`, not run (it would read the shell's own
    /// standard input outside the pipe it was given for).
    HintText {
        flag: &'static str,
        call: &'static str,
    },
    /// A refused flag without equivalent: the usage error names `flag` and gives `why`.
    NoHint {
        flag: &'static str,
        why: &'static str,
    },
}

fn out(s: &str) -> Want {
    Want::Out(0, s.to_string())
}

fn hint(flag: &'static str, then: Want) -> Want {
    Want::Hint {
        flag,
        then: Box::new(then),
    }
}

/// Checks a reply that is not a flag refusal against `want`.
fn check_plain(r: &Reply, want: &Want) -> Result<(), String> {
    match want {
        Want::Raw(status, text) => {
            if (r.status, r.text.as_str()) != (*status, text.as_str()) {
                return Err(format!(
                    "expected exit {status} {text:?}, got exit {} {:?}",
                    r.status, r.text
                ));
            }
            Ok(())
        }
        Want::RawHas(status, text) => {
            if r.status != *status || !r.text.contains(text.as_str()) {
                return Err(format!(
                    "expected exit {status} with {text:?}, got exit {} {:?}",
                    r.status, r.text
                ));
            }
            Ok(())
        }
        Want::Out(status, text) => {
            let e = envelope(r)?;
            if e.error.is_some() || e.truncated || r.status != *status || e.output != *text {
                return Err(format!(
                    "expected exit {status} output {text:?}, got exit {} {e:?}",
                    r.status
                ));
            }
            Ok(())
        }
        Want::OutWith(f) => {
            let e = envelope(r)?;
            if e.error.is_some() || e.truncated || r.status != 0 {
                return Err(format!("expected success, got exit {} {e:?}", r.status));
            }
            f(&e.output)
        }
        Want::Denied(path) => {
            let e = envelope(r)?;
            let want = format!("denied: {path}");
            if e.error.as_deref() != Some(want.as_str()) || !e.output.is_empty() {
                return Err(format!("expected {want:?}, got exit {} {e:?}", r.status));
            }
            Ok(())
        }
        Want::Fails(class, needle) => {
            let e = envelope(r)?;
            let ok = e.error.as_deref().is_some_and(|m| {
                m.starts_with(&format!("{class}: ")) && m.contains(needle.as_str())
            });
            if !ok || !e.output.is_empty() || r.status != 2 {
                return Err(format!(
                    "expected a '{class}:' error with {needle:?}, got exit {} {e:?}",
                    r.status
                ));
            }
            Ok(())
        }
        Want::Hint { .. } | Want::HintText { .. } | Want::NoHint { .. } => {
            unreachable!("a hint inside a hint")
        }
    }
}

/// The usage error of a refused flag, which must name the flag: quoted as the refused word, or
/// as the subject of the reason when an earlier flag of the call was the refused word.
fn refusal(r: &Reply, flag: &str) -> Result<String, String> {
    let e = envelope(r)?;
    let msg = e.error.unwrap_or_default();
    if !msg.starts_with("usage: ") || r.status != 2 || !e.output.is_empty() {
        return Err(format!(
            "expected a usage error, got exit {} {:?}",
            r.status, r.text
        ));
    }
    if !msg.contains(&format!("'{flag}'")) && !msg.contains(&format!("{flag}:")) {
        return Err(format!("the usage error does not name '{flag}': {msg}"));
    }
    Ok(msg)
}

/// The positional call a usage error offers: after `equivalent: `, up to the next `;`.
fn hinted_call(msg: &str) -> Option<&str> {
    let (_, rest) = msg.split_once("equivalent: ")?;
    Some(rest.split(';').next().unwrap_or(rest).trim())
}

/// A word quoted for the shell, so that the hint reaches `eval` exactly as printed.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

// ---------------------------------------------------------------------------------------------
// The fixture.

pub(crate) const README: &str = "# demo\n\nA small demo crate that adds numbers.\n\n## Usage\n\n    cargo run\n\n## TODO\n\n- read input from argv\n";
pub(crate) const MAIN_RS: &str = "use demo::add;\n\nfn main() {\n    // TODO: read the numbers from argv\n    println!(\"{}\", add(2, 3));\n}\n";
pub(crate) const LIB_RS: &str =
    "/// Adds two numbers.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
pub(crate) const UTIL_RS: &str =
    "// todo: overflow checks\npub fn twice(x: i32) -> i32 {\n    x * 2\n}\n";
pub(crate) const TEST_RS: &str =
    "use demo::add;\n\n#[test]\nfn two_and_three() {\n    assert_eq!(add(2, 3), 5);\n}\n";
pub(crate) const CARGO_TOML: &str =
    "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
pub(crate) const DEV_TOML: &str =
    "[server]\nhost = \"localhost\"\nport = 8080\nworkers = 2\nlog = \"debug\"\ntimeout = 30\n";
pub(crate) const PROD_TOML: &str =
    "[server]\nhost = \"0.0.0.0\"\nport = 80\nworkers = 2\nlog = \"debug\"\ntimeout = 30\n";
pub(crate) const NOTES: &str = "meeting notes\n- ship v0.2\n- todo: write docs\n";

/// A small project: sources, tests, config, an ignored `target/`, a `.git/`, a `.env` with a
/// canary and a symlink that leads outside. Sibling `home/` holds a fake `~/.ssh/id_rsa`.
pub(crate) fn project(env: &TestEnv) -> PathBuf {
    env.write("README.md", README);
    env.write("Cargo.toml", CARGO_TOML);
    env.write(".gitignore", "target/\n");
    env.write("notes.txt", NOTES);
    env.write("src/main.rs", MAIN_RS);
    env.write("src/lib.rs", LIB_RS);
    env.write("src/util/mod.rs", UTIL_RS);
    env.write("tests/add.rs", TEST_RS);
    env.write("config/dev.toml", DEV_TOML);
    env.write("config/prod.toml", PROD_TOML);
    // Build junk and git metadata hold a TODO, so a recursive grep that failed to skip them
    // would show it.
    env.write("target/debug/demo.d", "TODO junk from the build\n");
    env.write(".git/HEAD", "ref: refs/heads/main\n");
    env.write(".git/COMMIT_EDITMSG", "TODO: squash\n");
    env.secret(".env");
    env.symlink("latest.log", env.outside().join("secret.txt"));
    let home = env.base().join("home");
    env.write(
        home.join(".ssh/id_rsa").to_str().unwrap(),
        format!("{HOME_CANARY}\n"),
    );
    home
}

/// The links directory, made as a user would: `readbox install DIR`, plus `readbox` itself for
/// the meta commands.
fn links(env: &TestEnv) -> PathBuf {
    let dir = env.base().join("links");
    std::fs::create_dir(&dir).unwrap();
    let bin = crate::support::binary();
    let out = Command::new(bin)
        .arg("install")
        .arg(&dir)
        .env_clear()
        .current_dir(env.root())
        .output()
        .expect("run readbox install");
    assert_eq!(out.status.code(), Some(0), "install: {out:?}");
    std::os::unix::fs::symlink(bin, dir.join("readbox")).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "cat", "diff", "find", "grep", "head", "ls", "pwd", "readbox", "stat", "tail", "wc"
        ]
    );
    dir
}

/// The first `n` lines of `s`, each with its newline.
pub(crate) fn first_lines(s: &str, n: usize) -> String {
    s.split_inclusive('\n').take(n).collect()
}

/// The last `n` lines of `s`, each with its newline.
pub(crate) fn last_lines(s: &str, n: usize) -> String {
    let all: Vec<&str> = s.split_inclusive('\n').collect();
    all[all.len().saturating_sub(n)..].concat()
}

/// wc's line for `s`.
fn wc_of(s: &str) -> String {
    format!(
        "{{\"lines\": {}, \"words\": {}, \"bytes\": {}}}\n",
        s.matches('\n').count(),
        s.split_whitespace().count(),
        s.len()
    )
}

// ---------------------------------------------------------------------------------------------
// The script.

/// The commands, in order, each with what it must answer. `root`, `home` and `links` are
/// canonical.
fn script(root: &Path, home: &Path, links: &Path) -> Vec<(String, Want)> {
    let root_s = root.display().to_string();
    let key = format!("{}/.ssh/id_rsa", home.display());
    let readme_mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(root.join("README.md"))
            .unwrap()
            .permissions()
            .mode()
    };
    let readme_len = README.len();
    let diff_u = "--- config/dev.toml\n+++ config/prod.toml\n@@ -1,6 +1,6 @@\n [server]\n-host = \"localhost\"\n-port = 8080\n+host = \"0.0.0.0\"\n+port = 80\n workers = 2\n log = \"debug\"\n timeout = 30\n";
    let diff_u0 = "--- config/dev.toml\n+++ config/prod.toml\n@@ -2,2 +2,2 @@\n-host = \"localhost\"\n-port = 8080\n+host = \"0.0.0.0\"\n+port = 80\n";
    let todo_main = "src/main.rs:4:    // TODO: read the numbers from argv\n";
    let ls_root = "Cargo.toml\nREADME.md\nconfig/\nlatest.log@\nnotes.txt\nsrc/\ntarget/\ntests/\n";
    let ls_all = format!(".git/\n.gitignore\n{ls_root}");
    let rs_files = "src/lib.rs\nsrc/main.rs\nsrc/util/mod.rs\ntests/add.rs\n";
    let all_files = format!(
        ".gitignore\nCargo.toml\nREADME.md\nconfig/dev.toml\nconfig/prod.toml\nnotes.txt\n{rs_files}"
    );
    let s = |c: &str| c.to_string();
    vec![
        // Where am I, what is here.
        (
            s("command -v grep"),
            Want::Raw(0, format!("{}/grep\n", links.display())),
        ),
        (s("pwd"), Want::Raw(0, format!("{root_s}\n"))),
        (s("readbox pwd"), out(&format!("{root_s}\n"))),
        (s("ls"), out(ls_root)),
        (s("ls -la"), hint("-la", out(&ls_all))),
        (s("ls -a"), hint("-a", out(&ls_all))),
        (s("ls -l src"), hint("-l", out("lib.rs\nmain.rs\nutil/\n"))),
        (
            s("ls -R"),
            Want::NoHint {
                flag: "-R",
                why: "use find PATH to list a tree",
            },
        ),
        // Reading files.
        (s("cat README.md"), out(README)),
        // The way to line numbers: the refusal's hint, `grep '' README.md`, run as given.
        (
            s("cat -n README.md"),
            hint(
                "-n",
                out(&README
                    .lines()
                    .enumerate()
                    .map(|(i, l)| format!("README.md:{}:{l}\n", i + 1))
                    .collect::<String>()),
            ),
        ),
        (s("cat Cargo.toml"), out(CARGO_TOML)),
        (s("head src/main.rs"), out(MAIN_RS)),
        (
            s("head -n 20 src/main.rs"),
            hint("-n", out(&first_lines(MAIN_RS, 20))),
        ),
        (
            s("head -5 src/main.rs"),
            hint("-5", out(&first_lines(MAIN_RS, 5))),
        ),
        (
            s("head -n3 README.md"),
            hint("-n3", out(&first_lines(README, 3))),
        ),
        (
            s("tail -n 3 README.md"),
            hint("-n", out(&last_lines(README, 3))),
        ),
        (
            s("tail -2 src/lib.rs"),
            hint("-2", out(&last_lines(LIB_RS, 2))),
        ),
        // readbox never follows a file: the hint is the plain tail.
        (
            s("tail -f README.md"),
            hint("-f", out(&last_lines(README, 10))),
        ),
        // From line 2 on is cat's FROM_LINE.
        (
            s("tail -n +2 README.md"),
            hint("-n", out(README.split_once('\n').unwrap().1)),
        ),
        (
            s("head -c 100 README.md"),
            Want::NoHint {
                flag: "-c",
                why: "counts lines only",
            },
        ),
        (s("wc README.md"), out(&wc_of(README))),
        (s("wc -l README.md"), hint("-l", out(&wc_of(README)))),
        (
            s("stat README.md"),
            Want::OutWith(Box::new(move |o| stat_is(o, readme_len, readme_mode))),
        ),
        (
            s("stat -c %s README.md"),
            hint(
                "-c",
                Want::OutWith(Box::new(move |o| stat_is(o, readme_len, readme_mode))),
            ),
        ),
        // Searching.
        (s("grep TODO src/main.rs"), out(todo_main)),
        (s("grep -n TODO src/main.rs"), hint("-n", out(todo_main))),
        (
            s("grep -rn TODO ."),
            hint("-rn", out(&format!("README.md:9:## TODO\n{todo_main}"))),
        ),
        (
            s("grep -i todo src"),
            hint(
                "-i",
                out(&format!(
                    "{todo_main}src/util/mod.rs:1:// todo: overflow checks\n"
                )),
            ),
        ),
        (
            s("grep -rn \"fn main\" ."),
            hint("-rn", out("src/main.rs:3:fn main() {\n")),
        ),
        (
            s("grep -rn --include='*.rs' TODO ."),
            hint("-rn", out(todo_main)),
        ),
        (
            s("grep -rl TODO ."),
            Want::NoHint {
                flag: "-rl",
                why: "prints matching lines only",
            },
        ),
        (
            s("grep -E 'add|twice' src"),
            Want::NoHint {
                flag: "-E",
                why: "literal text",
            },
        ),
        (s("grep -r CANARY ."), hint("-r", Want::Out(1, s("")))),
        (s("grep FIXME src"), Want::Out(1, s(""))),
        (s("find . -name '*.rs'"), hint("-name", out(rs_files))),
        (s("find . -type f"), hint("-type", out(&all_files))),
        (
            s("find src -maxdepth 1"),
            hint("-maxdepth", out("src/lib.rs\nsrc/main.rs\nsrc/util/\n")),
        ),
        (
            s("find . -name '*.toml' -type f"),
            hint(
                "-name",
                out("Cargo.toml\nconfig/dev.toml\nconfig/prod.toml\n"),
            ),
        ),
        (
            s("find . -iname readme.md"),
            Want::NoHint {
                flag: "-iname",
                why: "give the case you want",
            },
        ),
        (
            s("find . -exec cat {} \\;"),
            Want::NoHint {
                flag: "-exec",
                why: "never runs programs",
            },
        ),
        (
            s("find . -name '*.rs' -delete"),
            Want::NoHint {
                flag: "-delete",
                why: "never runs programs or writes files",
            },
        ),
        // Comparing.
        (
            s("diff config/dev.toml config/prod.toml"),
            Want::Out(1, s(diff_u)),
        ),
        (
            s("diff -u config/dev.toml config/prod.toml"),
            hint("-u", Want::Out(1, s(diff_u))),
        ),
        (
            s("diff -U0 config/dev.toml config/prod.toml"),
            hint("-U0", Want::Out(1, s(diff_u0))),
        ),
        (s("diff README.md README.md"), out("")),
        (
            s("diff -y config/dev.toml config/prod.toml"),
            Want::NoHint {
                flag: "-y",
                why: "unified diff only",
            },
        ),
        // Secrets and escapes.
        (s("cat .env"), Want::Denied(s(".env"))),
        (s("cat .env.local"), Want::Denied(s(".env.local"))),
        (s("grep SECRET .env"), Want::Denied(s(".env"))),
        (s("cat latest.log"), Want::Denied(s("latest.log"))),
        (
            s("cat ../../etc/passwd"),
            Want::Denied(s("../../etc/passwd")),
        ),
        (s("cat /etc/passwd"), Want::Denied(s("/etc/passwd"))),
        (
            s("cat ../outside/secret.txt"),
            Want::Denied(s("../outside/secret.txt")),
        ),
        (s("cat ~/.ssh/id_rsa"), Want::Denied(key)),
        (s("ls .."), Want::Denied(s(".."))),
        (
            s("cat nonexistent.txt"),
            Want::Fails("not found", s("nonexistent.txt")),
        ),
        (s("cat src"), Want::Fails("not a file", s("src"))),
        // Moving around: the shell's cwd is readbox's working directory.
        (s("cd src && ls"), out("lib.rs\nmain.rs\nutil/\n")),
        (s("readbox pwd"), out(&format!("{root_s}/src\n"))),
        (
            s("head -n 2 ../README.md"),
            hint("-n", out(&first_lines(README, 2))),
        ),
        (
            s("grep -r twice"),
            hint("-r", out("util/mod.rs:2:pub fn twice(x: i32) -> i32 {\n")),
        ),
        (s("ls ../.."), Want::Denied(s("../.."))),
        (s("cd .."), Want::Raw(0, s(""))),
        // Outside every root, relative paths are denied (docs/contract.md#policy): the shell may
        // wander, the reads may not, and none answers for another directory.
        (
            s("cd .. && ls"),
            Want::Fails("denied", s(".: the working directory is outside the roots")),
        ),
        (
            s("cat outside/secret.txt"),
            Want::Fails(
                "denied",
                s("outside/secret.txt: the working directory is outside the roots"),
            ),
        ),
        (
            s("ls root"),
            Want::Fails("denied", s("root: the working directory")),
        ),
        (s(&format!("ls {root_s}")), out(ls_root)),
        (s("cd root && pwd"), Want::Raw(0, format!("{root_s}\n"))),
        // Pipes and other programs: there is nothing else on PATH.
        // A flag call that leaves PATH out reads the pipe, as GNU head would.
        (
            s("cat README.md | head -3"),
            Want::HintText {
                flag: "-3",
                call: "head - 3",
            },
        ),
        (
            s("ls | grep -i cargo"),
            Want::HintText {
                flag: "-i",
                call: "grep cargo - true true",
            },
        ),
        (
            s("sed -n 1,5p README.md"),
            Want::RawHas(127, s("sed: command not found")),
        ),
        (
            s("rm -rf target"),
            Want::RawHas(127, s("rm: command not found")),
        ),
        (s("ls target"), out("debug/\n")),
        // Meta commands and builtins.
        (
            s("readbox help grep"),
            Want::OutWith(Box::new(|o| {
                has(
                    o,
                    "usage: grep PATTERN [PATH=.] [RECURSIVE=true] [IGNORE_CASE=false]",
                )
            })),
        ),
        (
            s("readbox list"),
            out("cat\npwd\nls\nfind\ngrep\nhead\ntail\nwc\nstat\ndiff\nsh\n"),
        ),
        (s("echo done"), Want::Raw(0, s("done\n"))),
    ]
}

pub(crate) fn has(o: &str, needle: &str) -> Result<(), String> {
    if o.contains(needle) {
        Ok(())
    } else {
        Err(format!("output lacks {needle:?}: {o:?}"))
    }
}

/// stat's line for README.md: keys in order, the real size and mode, an RFC 3339 UTC time.
pub(crate) fn stat_is(o: &str, size: usize, mode: u32) -> Result<(), String> {
    let v: serde_json::Map<String, Value> =
        serde_json::from_str(o).map_err(|e| format!("stat output is not JSON ({e}): {o:?}"))?;
    let keys: Vec<&str> = v.keys().map(String::as_str).collect();
    if keys != ["path", "type", "size_bytes", "permissions", "modified_at"] {
        return Err(format!("stat keys {keys:?}"));
    }
    let perms: String = std::iter::once('-')
        .chain((0..9).rev().map(|bit| {
            if mode & (1 << bit) == 0 {
                '-'
            } else {
                ['x', 'w', 'r'][bit % 3]
            }
        }))
        .collect();
    let when = v["modified_at"].as_str().unwrap_or_default();
    if v["path"] != "README.md"
        || v["type"] != "file"
        || v["size_bytes"] != size
        || v["permissions"] != perms.as_str()
        || !(when.len() == 30 && when.ends_with('Z') && when.as_bytes()[10] == b'T')
    {
        return Err(format!(
            "stat of README.md: want size {size}, {perms}, got {o:?}"
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The replay.

/// What the replay found.
#[derive(Default)]
struct Tally {
    steps: usize,
    /// Refused flags that have a positional equivalent, and how many of their hints worked.
    hinted: usize,
    hints_worked: usize,
    /// Refused flags without equivalent.
    unhinted: usize,
    failures: Vec<String>,
}

/// Asserts that no canary is in `text`; returns the failure otherwise.
fn no_canary(cmd: &str, text: &str) -> Result<(), String> {
    match CANARY_MARKS.iter().find(|m| text.contains(*m)) {
        Some(m) => Err(format!("`{cmd}`: a canary ({m}) leaked: {text:?}")),
        None => Ok(()),
    }
}

/// Runs one command and records whether it passed. `Err` only when the shell stopped answering.
fn step(shell: &mut Shell, tally: &mut Tally, cmd: &str, want: &Want) -> Result<(), String> {
    tally.steps += 1;
    let r = shell.run(cmd).map_err(|e| format!("`{cmd}`: {e}"))?;
    if let Err(e) = no_canary(cmd, &r.text) {
        tally.failures.push(e);
    }
    let verdict = match want {
        Want::Hint { flag, then } => {
            tally.hinted += 1;
            follow_hint(shell, tally, &r, flag, then)?
        }
        Want::HintText { flag, call } => {
            tally.hinted += 1;
            refusal(&r, flag).and_then(|msg| match hinted_call(&msg) {
                Some(c) if c == *call => Ok(()),
                _ => Err(format!("expected the hint {call:?}: {msg}")),
            })
        }
        Want::NoHint { flag, why } => {
            tally.unhinted += 1;
            refusal(&r, flag).and_then(|msg| {
                if msg.contains(why) && !msg.contains("equivalent: ") {
                    Ok(())
                } else {
                    Err(format!(
                        "expected no equivalent and the reason {why:?}: {msg}"
                    ))
                }
            })
        }
        _ => check_plain(&r, want),
    };
    if let Err(e) = verdict {
        tally.failures.push(format!("`{cmd}`: {e}"));
    }
    Ok(())
}

/// Checks the refusal of `flag`, runs the call its hint offers in the same shell and checks that
/// answer against `then`. The outer `Err` is a shell that stopped answering; the inner one a
/// failed check.
fn follow_hint(
    shell: &mut Shell,
    tally: &mut Tally,
    r: &Reply,
    flag: &str,
    then: &Want,
) -> Result<Result<(), String>, String> {
    let msg = match refusal(r, flag) {
        Ok(msg) => msg,
        Err(e) => return Ok(Err(e)),
    };
    let Some(call) = hinted_call(&msg) else {
        return Ok(Err(format!("expected an equivalent call, got: {msg}")));
    };
    // `eval` runs the hint as typed in this same shell, but a hint that is not valid shell
    // syntax fails there instead of making bash exit and ending the replay.
    let h = shell
        .run(&format!("eval {}", sh_quote(call)))
        .map_err(|e| format!("`{call}`: {e}"))?;
    if let Err(e) = no_canary(call, &h.text) {
        tally.failures.push(e);
    }
    let Err(e) = check_plain(&h, then) else {
        tally.hints_worked += 1;
        return Ok(Ok(()));
    };
    // Say whether the call itself is right once a trailing note is cut off, so the report
    // tells a wrong call from an unrunnable hint text.
    let mut note = String::new();
    if let Some((bare, _)) = call.split_once(" (") {
        let b = shell
            .run(&format!("eval {}", sh_quote(bare)))
            .map_err(|e| format!("`{bare}`: {e}"))?;
        note = match check_plain(&b, then) {
            Ok(()) => format!(" (without its note, `{bare}` gives the right answer)"),
            Err(e) => format!(" (without its note, `{bare}` is wrong too: {e})"),
        };
    }
    Ok(Err(format!("the hint `{call}` does not work: {e}{note}")))
}

#[test]
fn an_agent_session_replays_through_one_shell() {
    let started = Instant::now();
    let env = TestEnv::new();
    let home = project(&env);
    let links = links(&env);
    let root = env.root();
    let mut shell = Shell::spawn(&root, &links, &home, &root);
    let script = script(&root, &home, &links);
    assert!(script.len() >= 30, "the script is too short");

    let mut tally = Tally::default();
    for (cmd, want) in &script {
        if let Err(e) = step(&mut shell, &mut tally, cmd, want) {
            // A hang or a dead shell leaves the session in an unknown state: stop here.
            tally.failures.push(e);
            break;
        }
    }
    drop(shell);

    println!(
        "agent replay: {} commands; {} of {} refused flags with an equivalent had a working \
         hint; {} refused flags without one; {} failures; {:?}",
        tally.steps,
        tally.hints_worked,
        tally.hinted,
        tally.unhinted,
        tally.failures.len(),
        started.elapsed()
    );
    assert!(
        tally.failures.is_empty(),
        "{} of {} steps failed ({} of {} hints worked):\n{}",
        tally.failures.len(),
        tally.steps,
        tally.hints_worked,
        tally.hinted,
        tally.failures.join("\n")
    );
}

/// What GNU `wc NAME` prints for a regular file holding `s`: the counts right-aligned to the
/// width of the byte count.
pub(crate) fn gnu_wc(s: &str, name: &str) -> String {
    let (l, w, b) = (
        s.matches('\n').count(),
        s.split_whitespace().count(),
        s.len(),
    );
    let width = b.to_string().len();
    format!("{l:>width$} {w:>width$} {b:>width$} {name}\n")
}

/// The text of a text-format answer without readbox's notes and truncation line (stderr joins
/// stdout in the shell), and the `cat PATH K` that a note gives.
fn split_notes(text: &str, tool: &str) -> (String, Option<String>) {
    let (mut body, mut next) = (String::new(), None);
    for line in text.split_inclusive('\n') {
        if let Some(note) = line.strip_prefix(&format!("{tool}: note: ")) {
            if let Some(at) = note.find("cat ") {
                next = Some(note[at..].trim_end().to_string());
            }
        } else if !line.starts_with(&format!("{tool}: output truncated at ")) {
            body.push_str(line);
        }
    }
    (body, next)
}

/// The same shell as a container gives it: text format, so that pipes carry plain text. Pipes into
/// `-`, several paths from a glob, hints run as given, and a truncated cat read to its end by
/// following its notes.
#[test]
fn a_shell_session_with_pipes_replays_in_text_format() {
    let env = TestEnv::new();
    let home = project(&env);
    let links = links(&env);
    let root = env.root();
    let big: String = (1..=400).map(|i| format!("log line {i:04}\n")).collect();
    env.write("big.log", &big);
    let mut shell = Shell::spawn_with(&root, &links, &home, &root, &[("READBOX_FORMAT", "text")]);
    let mut failures = Vec::new();
    let mut expect = |shell: &mut Shell, cmd: &str, status: i32, want: &str| match shell.run(cmd) {
        Ok(r) if r.status == status && r.text == want => {}
        Ok(r) => failures.push(format!(
            "`{cmd}`: expected exit {status} {want:?}, got exit {} {:?}",
            r.status, r.text
        )),
        Err(e) => failures.push(format!("`{cmd}`: {e}")),
    };
    // Text piped into `-`.
    expect(
        &mut shell,
        "ls src | grep main -",
        0,
        "(standard input):2:main.rs\n",
    );
    expect(
        &mut shell,
        "echo hello | grep hello -",
        0,
        "(standard input):1:hello\n",
    );
    expect(&mut shell, "echo hello | grep bye -", 1, "");
    expect(
        &mut shell,
        "cat README.md | grep TODO -",
        0,
        "(standard input):9:## TODO\n",
    );
    expect(
        &mut shell,
        "grep fn src/main.rs | head - 1",
        0,
        "src/main.rs:3:fn main() {\n",
    );
    // A pipe's size is not known in advance: GNU wc aligns to 7 columns then.
    expect(
        &mut shell,
        "ls src | wc -",
        0,
        "      3       3      20 -\n",
    );
    expect(
        &mut shell,
        "cat README.md | tail - 1",
        0,
        "- read input from argv\n",
    );
    expect(&mut shell, "wc README.md", 0, &gnu_wc(README, "README.md"));
    // A flag call that leaves PATH out is told the `-` form, which reads the pipe.
    let r = shell.run("cat README.md | head -2").unwrap();
    assert!(r.text.ends_with("equivalent: head - 2\n"), "{r:?}");
    expect(
        &mut shell,
        "cat README.md | head - 2",
        0,
        &first_lines(README, 2),
    );
    // A pipe into grep without `-` is refused: grep would otherwise search the tree.
    expect(
        &mut shell,
        "ls src | grep main",
        2,
        "grep: usage: grep reads standard input only when PATH is -: grep main - searches the \
         piped text, grep main . searches the tree\n",
    );
    // Several paths from a glob: one call per path, each runnable.
    let r = shell.run("wc src/*.rs").unwrap();
    assert_eq!(r.status, 2, "{r:?}");
    assert!(
        r.text
            .contains("one call per path is equivalent: wc src/lib.rs; wc src/main.rs"),
        "{r:?}"
    );
    expect(
        &mut shell,
        "wc src/lib.rs",
        0,
        &gnu_wc(LIB_RS, "src/lib.rs"),
    );
    // The flag hints run as written.
    let r = shell.run("tail -n +10 README.md").unwrap();
    assert!(r.text.ends_with("equivalent: cat README.md 10\n"), "{r:?}");
    expect(
        &mut shell,
        "cat README.md 10",
        0,
        "\n- read input from argv\n",
    );
    // A truncated cat, read to its end by following its notes.
    let mut got = String::new();
    let mut call = "READBOX_MAX_OUTPUT_BYTES=300 cat big.log".to_string();
    for _ in 0..40 {
        let r = shell.run(&call).unwrap();
        assert_eq!(r.status, 0, "{call}: {r:?}");
        let (body, next) = split_notes(&r.text, "cat");
        got.push_str(&body);
        match next {
            Some(next) => call = format!("READBOX_MAX_OUTPUT_BYTES=300 {next}"),
            None => break,
        }
    }
    assert_eq!(got, big, "the pages of the notes make the whole file");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
