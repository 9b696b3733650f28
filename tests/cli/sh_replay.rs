//! Agent replay through `readbox sh` (docs/contract.md#readbox-sh): the commands of the bash
//! replay (`agent_replay.rs`) and the pipelines, `cd`, globs and lists that agents type, each
//! sent to two persistent sessions on the same project, one in the json format and one in the
//! text format, as a harness keeps one session per conversation.
//!
//! Each step states what must hold: the output as a terminal shows it and bash's exit status, an
//! error, a refusal that names the construct, or a refused flag whose whole-line hint (the text
//! after `equivalent: `) is then sent to the same sessions and must give what the refused line
//! meant. The two sessions must agree: the text session's standard output and standard error
//! (one ordered stream) are the json session's `output`, its `sh: note:` lines the `notes`, its
//! `sh: exit N` line the status. No answer may hold a canary. Failures are collected so that one
//! run reports every broken step; the counts are printed.

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::agent_replay::{
    CANARY_MARKS, CARGO_TOML, DEV_TOML, LIB_RS, MAIN_RS, PROD_TOML, README, UTIL_RS, first_lines,
    gnu_wc, last_lines, line_channel, project, stat_is,
};
use crate::support::TestEnv;

/// How long one command line may take before the replay gives up (a hang).
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// One session's answer to a command line.
#[derive(Debug, Default)]
struct Answer {
    /// What a terminal shows: standard output and standard error in order, without notes.
    output: String,
    /// The envelope's error (json) or `None` (text, where the error is a line of `output`).
    error: Option<String>,
    truncated: bool,
    notes: Vec<String>,
    /// The exit status: from `sh: exit N` in text; in json only whether it is 2 or more.
    status: Option<i32>,
}

/// A persistent `readbox sh` session fed through its stdin.
struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Vec<u8>>,
    text: bool,
    count: usize,
}

impl Session {
    /// Starts `readbox sh` in `root` with a clean environment; in the text format its stdout and
    /// stderr share one pipe, so the harness reads them in the order they were written.
    fn spawn(root: &Path, home: &Path, text: bool) -> Session {
        let mut cmd = Command::new(crate::support::binary());
        cmd.arg("sh")
            .env_clear()
            .env("HOME", home)
            .env("LANG", "C.UTF-8")
            .env("READBOX_ROOTS", root)
            .env("READBOX_FORMAT", if text { "text" } else { "json" })
            .current_dir(root)
            .stdin(Stdio::piped());
        let (reader, writer) = std::io::pipe().expect("a pipe");
        if text {
            cmd.stdout(writer.try_clone().unwrap()).stderr(writer);
        } else {
            // The json format writes nothing to stderr; what it would write is lost on purpose.
            cmd.stdout(writer).stderr(Stdio::null());
        }
        let mut child = cmd.spawn().expect("start readbox sh");
        // The command holds the pipe's write end: drop it so that the reader sees the end.
        drop(cmd);
        let stdin = child.stdin.take().unwrap();
        let lines = line_channel(reader);
        Session {
            child,
            stdin,
            lines,
            text,
            count: 0,
        }
    }

    fn next_line(&self, got: &[u8]) -> Result<Vec<u8>, String> {
        match self.lines.recv_timeout(STEP_TIMEOUT) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(format!("no answer within {STEP_TIMEOUT:?}")),
            Err(RecvTimeoutError::Disconnected) => Err(format!(
                "the session ended; it printed {:?}",
                String::from_utf8_lossy(got)
            )),
        }
    }

    /// Sends one command line and reads its answer. In the text format the line is followed by
    /// `echo MARK`, whose line ends the answer.
    fn run(&mut self, cmd: &str) -> Result<Answer, String> {
        self.count += 1;
        let mark = format!("__RB_DONE_{}__\n", self.count);
        let input = if self.text {
            format!("{cmd}\necho {mark}")
        } else {
            format!("{cmd}\n")
        };
        self.stdin
            .write_all(input.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("writing to readbox sh: {e}"))?;
        if !self.text {
            let line = self.next_line(b"")?;
            return envelope(&line);
        }
        let mut got: Vec<u8> = Vec::new();
        loop {
            let line = self.next_line(&got)?;
            // An answer that does not end in a newline runs into the mark's line.
            if let Some(head) = line.strip_suffix(mark.as_bytes()) {
                got.extend_from_slice(head);
                break;
            }
            got.extend_from_slice(&line);
        }
        let got = String::from_utf8(got).map_err(|e| format!("the answer is not UTF-8: {e}"))?;
        let mut a = Answer {
            status: Some(0),
            ..Answer::default()
        };
        for line in got.split_inclusive('\n') {
            if let Some(note) = line.strip_prefix("sh: note: ") {
                a.notes.push(note.trim_end_matches('\n').to_string());
            } else if let Some(n) = line
                .strip_prefix("sh: exit ")
                .and_then(|n| n.trim_end().parse().ok())
            {
                a.status = Some(n);
            } else if line.starts_with("sh: output truncated at ") {
                a.truncated = true;
            } else {
                a.output.push_str(line);
            }
        }
        Ok(a)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Decodes a json session's answer line, checking the envelope's shape and keys in order.
fn envelope(line: &[u8]) -> Result<Answer, String> {
    let text = std::str::from_utf8(line).map_err(|e| format!("not UTF-8: {e}"))?;
    let body = text
        .strip_suffix('\n')
        .ok_or_else(|| format!("not one line: {text:?}"))?;
    let v: serde_json::Map<String, Value> =
        serde_json::from_str(body).map_err(|e| format!("not JSON ({e}): {text:?}"))?;
    let keys: Vec<&str> = v.keys().map(String::as_str).collect();
    if keys != ["output", "error", "truncated"] && keys != ["output", "error", "truncated", "notes"]
    {
        return Err(format!("envelope keys {keys:?}"));
    }
    let error = match &v["error"] {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => return Err(format!("error is {other}")),
    };
    Ok(Answer {
        output: v["output"].as_str().ok_or("output is not a string")?.into(),
        status: None,
        truncated: v["truncated"]
            .as_bool()
            .ok_or("truncated is not a boolean")?,
        notes: match v.get("notes") {
            None => Vec::new(),
            Some(n) => n
                .as_array()
                .ok_or("notes is not an array")?
                .iter()
                .map(|s| s.as_str().map(String::from).ok_or("a note is not a string"))
                .collect::<Result<_, _>>()?,
        },
        error,
    })
}

type Check = Box<dyn Fn(&str) -> Result<(), String>>;

/// What one command line must answer.
enum Want {
    /// Success: this exit status (0, or 1 where grep found nothing, diff differs, `false`) and
    /// exactly this output, no notes.
    Out(i32, String),
    /// As `Out`, with exactly these notes.
    Noted(i32, String, Vec<String>),
    /// Success with status 0, the output checked by a function (stat's timestamp).
    OutWith(Check),
    /// An error that set the status: exactly what the terminal shows and the envelope's error.
    Fails(i32, String, String),
    /// Refused before anything ran, without an equivalent: a `usage:` error holding this text.
    Refused(&'static str),
    /// A command that is neither a tool nor a builtin: `not found: NAME: readbox sh runs …`.
    NotFound(&'static str),
    /// A refused flag whose whole-line hint, sent to the same sessions, answers as this.
    Hint(Box<Want>),
}

fn out(s: &str) -> Want {
    Want::Out(0, s.to_string())
}

fn hint(then: Want) -> Want {
    Want::Hint(Box::new(then))
}

/// An error of `class` about `path`, written by `who` (a tool, `cd`, or `sh` for `<`).
fn fails(who: &str, class: &str, path: &str) -> Want {
    Want::Fails(
        2,
        format!("{who}: {class}: {path}\n"),
        format!("{class}: {path}"),
    )
}

fn denied(who: &str, path: &str) -> Want {
    fails(who, "denied", path)
}

/// What wc prints for text read from a pipe, whose size is not known in advance: GNU wc aligns
/// to seven columns then.
fn wc_piped(s: &str) -> String {
    let (l, w, b) = (
        s.matches('\n').count(),
        s.split_whitespace().count(),
        s.len(),
    );
    format!("{l:>7} {w:>7} {b:>7} -\n")
}

/// grep's lines for matches in piped text: `(standard input):N:LINE`.
fn piped_matches(s: &str, needle: &str) -> String {
    s.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, l)| format!("(standard input):{}:{l}\n", i + 1))
        .collect()
}

/// The commands, in order, each with what it must answer. `root` and `home` are canonical.
fn script(root: &Path, home: &Path) -> Vec<(String, Want)> {
    let root_s = root.display().to_string();
    let readme_len = README.len();
    let readme_mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(root.join("README.md"))
            .unwrap()
            .permissions()
            .mode()
    };
    let diff_u = "--- config/dev.toml\n+++ config/prod.toml\n@@ -1,6 +1,6 @@\n [server]\n-host = \"localhost\"\n-port = 8080\n+host = \"0.0.0.0\"\n+port = 80\n workers = 2\n log = \"debug\"\n timeout = 30\n";
    let diff_u0 = "--- config/dev.toml\n+++ config/prod.toml\n@@ -2,2 +2,2 @@\n-host = \"localhost\"\n-port = 8080\n+host = \"0.0.0.0\"\n+port = 80\n";
    let todo_main = "src/main.rs:4:    // TODO: read the numbers from argv\n";
    let todo_util = "src/util/mod.rs:1:// todo: overflow checks\n";
    // ls in the text format, as GNU ls prints to a pipe: no `/` or `@` marks.
    let ls_root = "Cargo.toml\nREADME.md\nconfig\nlatest.log\nnotes.txt\nsrc\ntarget\ntests\n";
    let ls_all = format!(".git\n.gitignore\n{ls_root}");
    let ls_src = "lib.rs\nmain.rs\nutil\n";
    let rs_files = "src/lib.rs\nsrc/main.rs\nsrc/util/mod.rs\ntests/add.rs\n";
    let all_files = format!(
        ".gitignore\nCargo.toml\nREADME.md\nconfig/dev.toml\nconfig/prod.toml\nnotes.txt\n{rs_files}"
    );
    let find_src = "src/lib.rs\nsrc/main.rs\nsrc/util/\nsrc/util/mod.rs\n";
    let numbered: String = README
        .lines()
        .enumerate()
        .map(|(i, l)| format!("README.md:{}:{l}\n", i + 1))
        .collect();
    let stat_readme =
        move || -> Want { Want::OutWith(Box::new(move |o| stat_is(o, readme_len, readme_mode))) };
    let key = format!("{}/.ssh/id_rsa", home.display());
    let ignored_note = "grep: no line matched; 1 entry left out by .gitignore, .ignore or \
                        .git/info/exclude rules were not looked at: \
                        READBOX_RESPECT_IGNORE_FILES=false includes them"
        .to_string();
    let s = |c: &str| c.to_string();
    vec![
        // The commands of the bash replay, as readbox sh answers them.
        (s("command -v grep"), Want::NotFound("command")),
        (s("pwd"), out(&format!("{root_s}\n"))),
        (s("readbox pwd"), Want::NotFound("readbox")),
        (s("ls"), out(ls_root)),
        // A dropped flag (-l, -f, wc's -l, stat's -c) would answer something else: no hint.
        (s("ls -la"), Want::Refused("no equivalent")),
        (s("ls -a"), hint(out(&ls_all))),
        (s("ls -l src"), Want::Refused("no equivalent")),
        (s("ls -R"), Want::Refused("use find PATH to list a tree")),
        (s("cat README.md"), out(README)),
        (s("cat -n README.md"), hint(out(&numbered))),
        (s("cat Cargo.toml"), out(CARGO_TOML)),
        (s("head src/main.rs"), out(MAIN_RS)),
        (
            s("head -n 20 src/main.rs"),
            hint(out(&first_lines(MAIN_RS, 20))),
        ),
        (
            s("head -5 src/main.rs"),
            hint(out(&first_lines(MAIN_RS, 5))),
        ),
        (s("head -n3 README.md"), hint(out(&first_lines(README, 3)))),
        (s("tail -n 3 README.md"), hint(out(&last_lines(README, 3)))),
        (s("tail -2 src/lib.rs"), hint(out(&last_lines(LIB_RS, 2)))),
        (s("tail -f README.md"), Want::Refused("no equivalent")),
        (
            s("tail -n +2 README.md"),
            hint(out(README.split_once('\n').unwrap().1)),
        ),
        (
            s("head -c 100 README.md"),
            Want::Refused("counts lines only"),
        ),
        (s("wc README.md"), out(&gnu_wc(README, "README.md"))),
        (s("wc -l README.md"), Want::Refused("no equivalent")),
        (s("stat README.md"), stat_readme()),
        (s("stat -c %s README.md"), Want::Refused("no equivalent")),
        (s("grep TODO src/main.rs"), out(todo_main)),
        (s("grep -n TODO src/main.rs"), hint(out(todo_main))),
        (
            s("grep -rn TODO ."),
            hint(out(&format!("README.md:9:## TODO\n{todo_main}"))),
        ),
        (
            s("grep -i todo src"),
            hint(out(&format!("{todo_main}{todo_util}"))),
        ),
        (
            s("grep -rn \"fn main\" ."),
            hint(out("src/main.rs:3:fn main() {\n")),
        ),
        (s("grep -rn --include='*.rs' TODO ."), hint(out(todo_main))),
        (
            s("grep -rl TODO ."),
            Want::Refused("prints matching lines only"),
        ),
        (s("grep -E 'add|twice' src"), Want::Refused("literal text")),
        (
            s("grep -r CANARY ."),
            hint(Want::Noted(1, s(""), vec![ignored_note.clone()])),
        ),
        (s("grep FIXME src"), Want::Out(1, s(""))),
        (s("find . -name '*.rs'"), hint(out(rs_files))),
        (s("find . -type f"), hint(out(&all_files))),
        (
            s("find src -maxdepth 1"),
            hint(Want::Noted(
                0,
                s("src/lib.rs\nsrc/main.rs\nsrc/util/\n"),
                vec![s(
                    "find: 1 directory at MAX_DEPTH 1 was not entered; find src '*' all 100 goes \
                     deeper",
                )],
            )),
        ),
        (
            s("find . -name '*.toml' -type f"),
            hint(out("Cargo.toml\nconfig/dev.toml\nconfig/prod.toml\n")),
        ),
        (
            s("find . -iname readme.md"),
            Want::Refused("give the case you want"),
        ),
        (s("find . -exec cat {} \\;"), Want::Refused("{")),
        (
            s("find . -name '*.rs' -delete"),
            Want::Refused("never runs programs or writes files"),
        ),
        (
            s("diff config/dev.toml config/prod.toml"),
            Want::Out(1, s(diff_u)),
        ),
        (
            s("diff -u config/dev.toml config/prod.toml"),
            hint(Want::Out(1, s(diff_u))),
        ),
        (
            s("diff -U0 config/dev.toml config/prod.toml"),
            hint(Want::Out(1, s(diff_u0))),
        ),
        (s("diff README.md README.md"), out("")),
        (
            s("diff -y config/dev.toml config/prod.toml"),
            Want::Refused("unified diff only"),
        ),
        (s("cat .env"), denied("cat", ".env")),
        (s("cat .env.local"), denied("cat", ".env.local")),
        (s("grep SECRET .env"), denied("grep", ".env")),
        (s("cat latest.log"), denied("cat", "latest.log")),
        (s("cat ../../etc/passwd"), denied("cat", "../../etc/passwd")),
        (s("cat /etc/passwd"), denied("cat", "/etc/passwd")),
        (
            s("cat ../outside/secret.txt"),
            denied("cat", "../outside/secret.txt"),
        ),
        (s("cat ~/.ssh/id_rsa"), Want::Refused("does not expand ~")),
        (format!("cat {key}"), denied("cat", &key)),
        (s("ls .."), denied("ls", "..")),
        (
            s("cat nonexistent.txt"),
            fails("cat", "not found", "nonexistent.txt"),
        ),
        (s("cat src"), fails("cat", "not a file", "src")),
        (s("cd src && ls"), out(ls_src)),
        (s("pwd"), out(&format!("{root_s}/src\n"))),
        (
            s("head -n 2 ../README.md"),
            hint(out(&first_lines(README, 2))),
        ),
        (
            s("grep -r twice"),
            hint(out("util/mod.rs:2:pub fn twice(x: i32) -> i32 {\n")),
        ),
        (s("ls ../.."), denied("ls", "../..")),
        (s("cd .."), out("")),
        // Above the root the directory stays where it was, and nothing after `&&` runs.
        (s("cd .. && ls"), denied("cd", "..")),
        (s("pwd"), out(&format!("{root_s}\n"))),
        (
            s("cat outside/secret.txt"),
            fails("cat", "not found", "outside/secret.txt"),
        ),
        (
            s("cat README.md | head -3"),
            hint(out(&first_lines(README, 3))),
        ),
        (
            s("ls | grep -i cargo"),
            hint(out("(standard input):1:Cargo.toml\n")),
        ),
        (s("sed -n 1,5p README.md"), Want::NotFound("sed")),
        (s("rm -rf target"), Want::NotFound("rm")),
        (s("ls target"), out("debug\n")),
        (s("readbox help grep"), Want::NotFound("readbox")),
        (s("readbox list"), Want::NotFound("readbox")),
        (s("echo done"), out("done\n")),
        // Pipelines: the stage after `|` reads the text of the one before, with PATH `-` or left
        // out.
        (s("ls src | grep main"), out("(standard input):2:main.rs\n")),
        (
            s("ls src | grep main -"),
            out("(standard input):2:main.rs\n"),
        ),
        (
            s("echo hello | grep hello"),
            out("(standard input):1:hello\n"),
        ),
        (s("echo hello | grep bye"), Want::Out(1, s(""))),
        (
            s("cat README.md | grep TODO"),
            out(&piped_matches(README, "TODO")),
        ),
        (
            s("grep fn src/main.rs | head - 1"),
            out("src/main.rs:3:fn main() {\n"),
        ),
        (s("ls src | wc"), out(&wc_piped(ls_src))),
        (s("cat README.md | tail - 1"), out(&last_lines(README, 1))),
        (s("cat README.md | tail"), out(&last_lines(README, 10))),
        (s("cat README.md | head - 2"), out(&first_lines(README, 2))),
        (
            s("cat src/main.rs | grep TODO | wc"),
            out(&wc_piped(&piped_matches(MAIN_RS, "TODO"))),
        ),
        (s("grep TODO src | wc"), out(&wc_piped(todo_main))),
        (s("find . '*.rs' | wc"), out(&wc_piped(rs_files))),
        (
            s("find src | grep util"),
            out(&piped_matches(find_src, "util")),
        ),
        (s("grep -rn TODO src | head -20"), hint(out(todo_main))),
        (s("find . -name '*.rs' | head -5"), hint(out(rs_files))),
        (
            s("head -n 3 README.md | tail -1"),
            hint(out(&last_lines(&first_lines(README, 3), 1))),
        ),
        // A dropped flag changes what flows down the pipe: no equivalent.
        (s("cat README.md | wc -l"), Want::Refused("no equivalent")),
        (s("ls -la | grep toml"), Want::Refused("no equivalent")),
        (
            s("cat src/main.rs | head - 2 | tail - 1"),
            out(&last_lines(&first_lines(MAIN_RS, 2), 1)),
        ),
        (
            s("grep '' src/lib.rs | head - 2"),
            out(&LIB_RS
                .lines()
                .take(2)
                .enumerate()
                .map(|(i, l)| format!("src/lib.rs:{}:{l}\n", i + 1))
                .collect::<String>()),
        ),
        (s("cat README.md | sort"), Want::NotFound("sort")),
        // The first refused part of a line is the answer.
        (
            s("grep -l TODO src | xargs cat"),
            Want::Refused("prints matching lines only"),
        ),
        (s("grep TODO src | xargs cat"), Want::NotFound("xargs")),
        (s("cat README.md | tee out.txt"), Want::NotFound("tee")),
        (
            s("cat nope 2>&1 | grep found"),
            out("(standard input):1:cat: not found: nope\n"),
        ),
        (s("cat nope 2>/dev/null || echo gone"), out("gone\n")),
        (s("ls src >/dev/null && echo listed"), out("listed\n")),
        (s("cat README.md &>/dev/null; echo quiet"), out("quiet\n")),
        (s("ls src | head - 1 && echo ok"), out("lib.rs\nok\n")),
        // Lists follow bash's status.
        (s("true && echo yes"), out("yes\n")),
        (s("false && echo yes"), Want::Out(1, s(""))),
        (s("false || echo fallback"), out("fallback\n")),
        (
            s("cat nope || echo missing"),
            out("cat: not found: nope\nmissing\n"),
        ),
        (
            s("cat nope && echo never"),
            fails("cat", "not found", "nope"),
        ),
        (s("! grep FIXME src"), out("")),
        (s("! grep TODO src/main.rs"), Want::Out(1, s(todo_main))),
        (
            s("grep TODO src/main.rs; grep todo src/util/mod.rs"),
            out(&format!("{todo_main}{todo_util}")),
        ),
        (s("ls src && ls tests"), out(&format!("{ls_src}add.rs\n"))),
        (
            s("head README.md 1; tail README.md 1"),
            out(&format!(
                "{}{}",
                first_lines(README, 1),
                last_lines(README, 1)
            )),
        ),
        (s("grep FIXME src || grep TODO src/main.rs"), out(todo_main)),
        (
            s("echo one; echo two && echo three || echo four"),
            out("one\ntwo\nthree\n"),
        ),
        (
            s("tail -n 2 src/lib.rs && head -n 1 src/lib.rs"),
            hint(out(&format!(
                "{}{}",
                last_lines(LIB_RS, 2),
                first_lines(LIB_RS, 1)
            ))),
        ),
        (s("echo a;echo b&&echo c"), out("a\nb\nc\n")),
        // cd: beneath the roots only; the session keeps the directory.
        (s("cd src && pwd"), out(&format!("{root_s}/src\n"))),
        (s("pwd"), out(&format!("{root_s}/src\n"))),
        (s("cat lib.rs"), out(LIB_RS)),
        (s("cd util; cat mod.rs"), out(UTIL_RS)),
        (s("cd ../.. && pwd"), out(&format!("{root_s}\n"))),
        (s("cd /etc"), denied("cd", "/etc")),
        (s("pwd"), out(&format!("{root_s}\n"))),
        (s("cd .."), denied("cd", "..")),
        (s("cd nope"), fails("cd", "not found", "nope")),
        (
            s("cd README.md"),
            fails("cd", "not a directory", "README.md"),
        ),
        (
            s("cd config && diff dev.toml prod.toml"),
            Want::Out(1, diff_u.replace("config/", "")),
        ),
        (s("cd && pwd"), out(&format!("{root_s}\n"))),
        (
            s("cd src && grep -r twice"),
            hint(out("util/mod.rs:2:pub fn twice(x: i32) -> i32 {\n")),
        ),
        (s("cd"), out("")),
        (s("cd \"$HOME\""), Want::Refused("$HOME")),
        (s("cd ~"), Want::Refused("~")),
        (s("cd src/../config && ls"), out("dev.toml\nprod.toml\n")),
        (s("cd; pwd"), out(&format!("{root_s}\n"))),
        // Globs, expanded beneath the roots: excludes never match, a word that matches nothing
        // stays as written.
        (s("cat *.toml"), out(CARGO_TOML)),
        (s("ls *.md"), out("README.md\n")),
        (s("cat src/*.rs"), hint(out(&format!("{LIB_RS}{MAIN_RS}")))),
        (
            s("wc src/*.rs"),
            hint(out(&format!(
                "{}{}",
                gnu_wc(LIB_RS, "src/lib.rs"),
                gnu_wc(MAIN_RS, "src/main.rs")
            ))),
        ),
        (s("grep TODO *.md"), out("README.md:9:## TODO\n")),
        (s("cat src/?ib.rs"), out(LIB_RS)),
        (s("cat src/[l]*.rs"), out(LIB_RS)),
        (s("cat .gitig*"), out("target/\n")),
        (s("cat .en*"), fails("cat", "not found", ".en*")),
        (s("cat 'src/*.rs'"), fails("cat", "not found", "src/*.rs")),
        (s("cat src/*.py"), fails("cat", "not found", "src/*.py")),
        (s("diff config/*.toml"), Want::Out(1, s(diff_u))),
        (
            s("head -5 src/*.rs"),
            hint(out(&format!(
                "{}{}",
                first_lines(LIB_RS, 5),
                first_lines(MAIN_RS, 5)
            ))),
        ),
        // Two cats in a row would feed grep the same text, but not as one stage: no equivalent.
        (
            s("cat config/*.toml | grep port"),
            Want::Refused("several paths given"),
        ),
        (
            s("cat config/dev.toml | grep port; cat config/prod.toml | grep port"),
            out(&format!(
                "{}{}",
                piped_matches(DEV_TOML, "port"),
                piped_matches(PROD_TOML, "port")
            )),
        ),
        // What bash would run around readbox is refused, and nothing of the line runs.
        (s("echo \"$(<.env)\""), Want::Refused("$(")),
        (
            s("while read l; do echo \"$l\"; done < .env"),
            Want::Refused("$l"),
        ),
        (
            s("echo x > notes.txt"),
            Want::Refused("does not write to a file"),
        ),
        (s("cat README.md >> log"), Want::Refused(">>")),
        (s("X=1 cat README.md"), Want::Refused("assignments")),
        (s("cat README.md &"), Want::Refused("background")),
        (s("(cd src && ls)"), Want::Refused("subshells")),
        (s("source .env"), Want::Refused("source")),
        (s("cat <<EOF"), Want::Refused("<<")),
        (s("cat <(ls)"), Want::Refused("<(")),
        (s("echo $HOME"), Want::Refused("$HOME")),
        (s("eval cat .env"), Want::Refused("eval")),
        (s("exec cat README.md"), Want::Refused("exec")),
        (s("cat nope; echo $?"), Want::Refused("$?")),
        (s("python3 -c 'print(1)'"), Want::NotFound("python3")),
        (s("bash -c 'cat .env'"), Want::NotFound("bash")),
        (s("cat < .env"), denied("sh", ".env")),
        (s("grep KEY - < .env"), denied("sh", ".env")),
        // Quoting, as bash removes it.
        (s("echo 'a b'  \"c\""), out("a b c\n")),
        (s("echo $'tab\\there'"), out("tab\there\n")),
        (s("cat \"src\"/lib.rs"), out(LIB_RS)),
        (
            s("grep \"fn main\" src | head - 1"),
            out("src/main.rs:3:fn main() {\n"),
        ),
        (
            s("cat < README.md | head - 1"),
            out(&first_lines(README, 1)),
        ),
        (s("wc < README.md"), out(&gnu_wc(README, "-"))),
        (
            s("grep TODO - < README.md"),
            out(&piped_matches(README, "TODO")),
        ),
        (
            s("ls src/util && cat src/util/mod.rs | wc"),
            out(&format!("mod.rs\n{}", wc_piped(UTIL_RS))),
        ),
        (s("echo done # a comment"), out("done\n")),
    ]
}

/// What the replay found.
#[derive(Default)]
struct Tally {
    steps: usize,
    answered: usize,
    hinted: usize,
    hints_worked: usize,
    refused: usize,
    not_found: usize,
    failures: Vec<String>,
}

/// The status `want` gives.
fn status_of(want: &Want) -> i32 {
    match want {
        Want::Out(s, _) | Want::Noted(s, _, _) | Want::Fails(s, _, _) => *s,
        Want::OutWith(_) => 0,
        Want::Refused(_) | Want::Hint(_) => 2,
        Want::NotFound(_) => 127,
    }
}

/// Checks the json answer against `want`; the text answer must then be the same answer.
fn check(json: &Answer, text: &Answer, want: &Want) -> Result<(), String> {
    for a in [json, text] {
        let all = format!("{} {:?} {:?}", a.output, a.error, a.notes);
        if let Some(m) = CANARY_MARKS.iter().find(|m| all.contains(*m)) {
            return Err(format!("a canary ({m}) leaked: {all:?}"));
        }
    }
    if (text.output.as_str(), &text.notes, text.truncated)
        != (json.output.as_str(), &json.notes, json.truncated)
    {
        return Err(format!("the text session differs: {text:?}, json {json:?}"));
    }
    let status = status_of(want);
    if text.status != Some(status) {
        return Err(format!("expected exit {status}, got {text:?}"));
    }
    if json.error.is_some() != (status >= 2) {
        return Err(format!("exit {status} with error {:?}", json.error));
    }
    let plain = |o: &str| -> Result<(), String> {
        if json.output != o || json.truncated || !json.notes.is_empty() {
            return Err(format!("expected {o:?}, got {json:?}"));
        }
        Ok(())
    };
    let refusal = |lead: &str| -> Result<&str, String> {
        let e = json.error.as_deref().unwrap_or_default();
        if !e.starts_with(lead) || json.output != format!("sh: {e}\n") {
            return Err(format!("expected a '{lead}' refusal, got {json:?}"));
        }
        Ok(e)
    };
    match want {
        Want::Out(_, o) => plain(o),
        Want::Noted(_, o, notes) => {
            if json.output != *o || json.truncated || json.notes != *notes {
                return Err(format!(
                    "expected {o:?} with the notes {notes:?}, got {json:?}"
                ));
            }
            Ok(())
        }
        Want::OutWith(f) => f(&json.output),
        Want::Fails(_, o, e) => {
            if json.error.as_deref() != Some(e.as_str()) {
                return Err(format!("expected the error {e:?}, got {json:?}"));
            }
            plain(o)
        }
        Want::Refused(why) => {
            let e = refusal("usage: ")?;
            if !e.contains(why) || e.contains("equivalent: ") {
                return Err(format!("expected no equivalent and {why:?}: {e}"));
            }
            Ok(())
        }
        Want::NotFound(name) => {
            refusal(&format!("not found: {name}: readbox sh runs cat ")).map(|_| ())
        }
        Want::Hint(_) => unreachable!("a hint is checked by its step"),
    }
}

/// Runs one command line in both sessions and records what it gave.
fn step(
    sessions: &mut [Session; 2],
    tally: &mut Tally,
    cmd: &str,
    want: &Want,
) -> Result<(), String> {
    tally.steps += 1;
    let [json, text] = sessions;
    let j = json.run(cmd).map_err(|e| format!("`{cmd}` (json): {e}"))?;
    let t = text.run(cmd).map_err(|e| format!("`{cmd}` (text): {e}"))?;
    let verdict = match want {
        Want::Hint(then) => {
            tally.hinted += 1;
            let e = j.error.clone().unwrap_or_default();
            match e.split_once("; equivalent: ") {
                Some((_, line)) if e.starts_with("usage: ") && t.status == Some(2) => {
                    let hj = json
                        .run(line)
                        .map_err(|e| format!("`{line}` (json): {e}"))?;
                    let ht = text
                        .run(line)
                        .map_err(|e| format!("`{line}` (text): {e}"))?;
                    check(&hj, &ht, then)
                        .map(|()| tally.hints_worked += 1)
                        .map_err(|e| format!("the hint `{line}` does not work: {e}"))
                }
                _ => Err(format!("expected a whole-line hint, got {j:?}")),
            }
        }
        Want::Refused(_) => check(&j, &t, want).map(|()| tally.refused += 1),
        Want::NotFound(_) => check(&j, &t, want).map(|()| tally.not_found += 1),
        _ => check(&j, &t, want).map(|()| tally.answered += 1),
    };
    if let Err(e) = verdict {
        tally.failures.push(format!("`{cmd}`: {e}"));
    }
    Ok(())
}

#[test]
fn an_agent_session_replays_through_readbox_sh_in_both_formats() {
    let started = Instant::now();
    let env = TestEnv::new();
    let home = project(&env);
    let root = env.root();
    let mut sessions = [
        Session::spawn(&root, &home, false),
        Session::spawn(&root, &home, true),
    ];
    let script = script(&root, &home);
    assert!(script.len() >= 140, "the script is too short");
    let mut tally = Tally::default();
    for (cmd, want) in &script {
        if let Err(e) = step(&mut sessions, &mut tally, cmd, want) {
            // A hang or a dead session leaves the state unknown: stop here.
            tally.failures.push(e);
            break;
        }
    }
    drop(sessions);
    println!(
        "sh replay: {} command lines in two sessions; {} answered; {} of {} refused lines had a \
         whole-line hint that worked; {} refused without one; {} unknown commands; {} \
         failures; {:?}",
        tally.steps,
        tally.answered,
        tally.hints_worked,
        tally.hinted,
        tally.refused,
        tally.not_found,
        tally.failures.len(),
        started.elapsed()
    );
    assert!(
        tally.failures.is_empty(),
        "{} of {} steps failed:\n{}",
        tally.failures.len(),
        tally.steps,
        tally.failures.join("\n")
    );
}
