//! The test environment: a fresh sandbox per test and a runner that calls the real binary, both
//! as `readbox TOOL` and through a symlink named TOOL, and checks the envelope's invariants on
//! every call.
//!
//! The binary is the one cargo built for these tests (assert_cmd's `cargo_bin!`), and every
//! answer goes through assert_cmd's output assertions, so a failing check prints the call with
//! its stdout, stderr and exit status. A call that feeds standard input runs through assert_cmd's
//! `Command` (`write_stdin`, with a timeout); the others run through std's `Command` with standard
//! input from `/dev/null`: assert_cmd's `Command` always gives the child a pipe, and a pipe on
//! standard input is itself an input readbox answers (`grep PATTERN` with PATH left out refuses
//! it, `cat -` reads it), so it would not be the call the test means.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use assert_cmd::assert::{Assert, OutputAssertExt};
use predicates::prelude::*;
use serde_json::Value;

/// How long a call that feeds standard input may run before the harness kills it.
const PIPED_TIMEOUT: Duration = Duration::from_secs(60);

/// The readbox binary cargo built for the integration tests.
pub fn binary() -> &'static Path {
    assert_cmd::cargo::cargo_bin!("readbox")
}

/// The canary planted outside the root; it must never appear in any answer.
pub const OUTSIDE_CANARY: &str = "CANARY-OUTSIDE-7f3a";

/// A fresh sandbox: `root/` (the working directory and default root), `outside/` (with a canary),
/// `bin/` (links to the binary), `cfg/` (config files).
pub struct TestEnv {
    dir: tempfile::TempDir,
    vars: Vec<(String, String)>,
    cwd: PathBuf,
    setup: Option<ChildSetup>,
}

/// Runs in the child between fork and exec (a seccomp filter, a resource limit): only
/// async-signal-safe system calls, nothing that allocates.
pub type ChildSetup = std::sync::Arc<dyn Fn() -> std::io::Result<()> + Send + Sync>;

/// One finished call.
#[derive(Debug, Clone)]
pub struct Answer {
    /// What the process left, for assert_cmd's assertions.
    raw: Output,
    pub status: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// json format only.
    pub output: String,
    pub error: Option<String>,
    pub truncated: bool,
    /// The envelope's `notes` (json format), empty when it has none.
    pub notes: Vec<String>,
    pub shown: String,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let dir = tempfile::tempdir().expect("tempdir");
        for d in ["root", "outside", "bin", "cfg"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::fs::write(
            dir.path().join("outside/secret.txt"),
            format!("{OUTSIDE_CANARY}\n"),
        )
        .unwrap();
        let cwd = dir.path().join("root");
        TestEnv {
            dir,
            vars: Vec::new(),
            cwd,
            setup: None,
        }
    }

    /// Runs `setup` in every later child of this environment just before it starts readbox.
    pub fn child_setup(&mut self, setup: ChildSetup) -> &mut Self {
        self.setup = Some(setup);
        self
    }

    /// The sandbox's top folder (holds root/ and outside/).
    pub fn base(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// The canonical root.
    pub fn root(&self) -> PathBuf {
        self.base().join("root")
    }

    /// The canonical `outside/`.
    pub fn outside(&self) -> PathBuf {
        self.base().join("outside")
    }

    /// Absolute path of `rel` beneath root/ (or `rel` itself when absolute).
    pub fn p(&self, rel: &str) -> PathBuf {
        let rel = Path::new(rel);
        if rel.is_absolute() {
            rel.to_path_buf()
        } else {
            self.root().join(rel)
        }
    }

    /// Sets a variable for every later call of this environment.
    pub fn var(&mut self, k: &str, v: &str) -> &mut Self {
        self.vars.push((k.to_string(), v.to_string()));
        self
    }

    /// Whether `k` is set for the calls of this environment.
    pub fn has_var(&self, k: &str) -> bool {
        self.vars.iter().any(|(name, _)| name == k)
    }

    /// Runs later calls in `rel` (beneath root/, or absolute).
    pub fn cd(&mut self, rel: &str) -> &mut Self {
        self.cwd = self.p(rel);
        self
    }

    pub fn write(&self, rel: &str, data: impl AsRef<[u8]>) -> PathBuf {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, data).unwrap();
        p
    }

    pub fn mkdir(&self, rel: &str) -> PathBuf {
        let p = self.p(rel);
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    pub fn symlink(&self, rel: &str, target: impl AsRef<Path>) -> PathBuf {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, &p).unwrap();
        p
    }

    pub fn fifo(&self, rel: &str) -> PathBuf {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &p,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        p
    }

    /// Writes a config file into cfg/ and returns its path.
    pub fn config(&self, name: &str, text: &str) -> PathBuf {
        let p = self.base().join("cfg").join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Plants a canary file at `rel` (for excluded paths) and returns its text.
    pub fn secret(&self, rel: &str) -> String {
        let text = format!("CANARY-SECRET-{}", rel.replace('/', "_"));
        self.write(rel, format!("{text}\n"));
        text
    }

    /// A symlink named `name` in bin/ that points at the binary.
    pub fn tool_link(&self, name: &str) -> PathBuf {
        let link = self.base().join("bin").join(name);
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(binary(), &link).unwrap();
        }
        link
    }

    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.env_clear();
        c.env("PATH", "/usr/bin:/bin");
        c.env("LANG", "C.UTF-8");
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c.current_dir(&self.cwd);
        c.stdin(std::process::Stdio::null());
        if let Some(setup) = self.setup.clone() {
            use std::os::unix::process::CommandExt;
            // SAFETY: `setup` only makes system calls (see ChildSetup).
            unsafe { c.pre_exec(move || setup()) };
        }
        c
    }

    /// `/bin/sh -c SCRIPT` started as every call is (clean environment, the variables, the
    /// working directory), for pipelines around the binary.
    pub fn shell(&self, script: &str) -> Command {
        let mut c = self.command(Path::new("/bin/sh"));
        c.arg("-c").arg(script);
        c
    }

    /// The binary as every call starts it (clean environment, the variables, the working
    /// directory, standard input from /dev/null), for callers that run it themselves.
    pub fn readbox_command(&self) -> Command {
        self.command(binary())
    }

    /// `readbox WORDS...` (meta commands and multicall form).
    pub fn readbox<S: AsRef<OsStr>>(&self, words: &[S]) -> Answer {
        let mut c = self.command(binary());
        c.args(words);
        self.finish(c, words)
    }

    /// `readbox TOOL ARGS...`.
    pub fn run<S: AsRef<OsStr>>(&self, tool: &str, args: &[S]) -> Answer {
        let mut words: Vec<&OsStr> = vec![OsStr::new(tool)];
        words.extend(args.iter().map(AsRef::as_ref));
        self.readbox(&words)
    }

    /// `TOOL ARGS...` through a symlink named TOOL.
    pub fn run_link<S: AsRef<OsStr>>(&self, tool: &str, args: &[S]) -> Answer {
        let mut c = self.command(&self.tool_link(tool));
        c.args(args);
        self.finish(c, args)
    }

    /// `readbox TOOL ARGS...` and readbox's own peak resident memory in KiB. The child is forked
    /// by a small Python launcher (`python3 -I -S`): a process forked from this test binary would
    /// carry the test binary's memory in its high-water mark.
    pub fn run_measured<S: AsRef<OsStr>>(&self, tool: &str, args: &[S]) -> (Answer, u64) {
        self.measured(tool, args, None)
    }

    /// [`TestEnv::run_measured`] with the file `stdin` (beneath the test's folder) written into
    /// a pipe on the call's standard input.
    pub fn run_measured_piped<S: AsRef<OsStr>>(
        &self,
        tool: &str,
        args: &[S],
        stdin: &str,
    ) -> (Answer, u64) {
        self.measured(tool, args, Some(stdin))
    }

    fn measured<S: AsRef<OsStr>>(
        &self,
        tool: &str,
        args: &[S],
        stdin: Option<&str>,
    ) -> (Answer, u64) {
        let (out, kib) = self.measured_output(tool, args, stdin);
        let mut words: Vec<&OsStr> = vec![OsStr::new(tool)];
        words.extend(args.iter().map(AsRef::as_ref));
        (self.answer(out, &words), kib)
    }

    /// As [`TestEnv::run_measured_piped`], for a call that answers with more than one envelope
    /// (a `readbox sh` session): what it wrote, unchecked.
    pub fn measured_output<S: AsRef<OsStr>>(
        &self,
        tool: &str,
        args: &[S],
        stdin: Option<&str>,
    ) -> (Output, u64) {
        // The data file is empty when standard input is left as it is.
        const LAUNCHER: &str = "import os, sys\n\
            rss, data, exe = sys.argv[1], sys.argv[2], sys.argv[3]\n\
            if data:\n\
            \x20   r, w = os.pipe()\n\
            pid = os.fork()\n\
            if pid == 0:\n\
            \x20   if data:\n\
            \x20       os.dup2(r, 0)\n\
            \x20       os.close(w)\n\
            \x20   os.execv(exe, [exe] + sys.argv[4:])\n\
            if data:\n\
            \x20   os.close(r)\n\
            \x20   with open(data, 'rb') as f:\n\
            \x20       while chunk := f.read(1 << 20):\n\
            \x20           try:\n\
            \x20               os.write(w, chunk)\n\
            \x20           except BrokenPipeError:\n\
            \x20               break\n\
            \x20   os.close(w)\n\
            _, status, usage = os.wait4(pid, 0)\n\
            open(rss, 'w').write(str(usage.ru_maxrss))\n\
            sys.exit(os.waitstatus_to_exitcode(status))\n";
        let rss = self.base().join("rss.txt");
        let data = stdin.map(|rel| self.p(rel)).unwrap_or_default();
        let mut c = self.command(Path::new("python3"));
        c.args(["-I", "-S", "-c", LAUNCHER]);
        c.arg(&rss).arg(data).arg(binary()).arg(tool).args(args);
        let mut words: Vec<&OsStr> = vec![OsStr::new(tool)];
        words.extend(args.iter().map(AsRef::as_ref));
        let out = c.output().expect("run readbox");
        let kib = std::fs::read_to_string(&rss)
            .expect("the launcher wrote the peak memory")
            .trim()
            .parse()
            .expect("a number of KiB");
        (out, kib)
    }

    /// Runs the call both ways, asserts that they answer alike, and returns the answer.
    pub fn both<S: AsRef<OsStr>>(&self, tool: &str, args: &[S]) -> Answer {
        let a = self.run(tool, args);
        let b = self.run_link(tool, args);
        assert_eq!(
            (a.status, &a.stdout),
            (b.status, &b.stdout),
            "`readbox {tool}` and a link named {tool} answer differently for {}",
            a.shown
        );
        a
    }

    /// `readbox WORDS...` with `data` on its standard input, a pipe closed after `data`.
    pub fn piped<S: AsRef<OsStr>>(&self, words: &[S], data: &[u8]) -> Answer {
        let mut c = self.readbox_command();
        c.args(words);
        let out = assert_cmd::Command::from_std(c)
            .write_stdin(data)
            .timeout(PIPED_TIMEOUT)
            .output()
            .expect("run readbox");
        self.answer(out, words)
    }

    fn finish<S: AsRef<OsStr>>(&self, mut c: Command, words: &[S]) -> Answer {
        let out = c.output().expect("run readbox");
        self.answer(out, words)
    }

    fn answer<S: AsRef<OsStr>>(&self, out: Output, words: &[S]) -> Answer {
        let shown = words
            .iter()
            .map(|w| String::from_utf8_lossy(w.as_ref().as_bytes()).into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        let status = out.status.code().expect("readbox exited by a signal");
        let mut a = Answer {
            raw: out.clone(),
            status,
            stdout: out.stdout,
            stderr: out.stderr,
            output: String::new(),
            error: None,
            truncated: false,
            notes: Vec::new(),
            shown,
        };
        a.check_invariants(self);
        a
    }
}

/// Output (any bytes, not only UTF-8) that holds none of `needles`.
fn lacks(needles: &'static [&'static str]) -> impl Predicate<[u8]> {
    predicate::function(move |out: &[u8]| {
        let out = String::from_utf8_lossy(out);
        !needles.iter().any(|n| out.contains(n))
    })
    .fn_name("lacks")
}

impl Answer {
    fn text_mode(&self) -> bool {
        !self.stdout.starts_with(b"{\"output\":")
    }

    /// assert_cmd's assertions on this answer, with the call as their context.
    pub fn assert(&self) -> Assert {
        self.raw
            .clone()
            .assert()
            .append_context("call", self.shown.clone())
    }

    fn check_invariants(&mut self, env: &TestEnv) {
        self.assert()
            .code(predicate::in_iter([0, 1, 2, 127]))
            .stderr(lacks(&[
                "panicked",
                "RUST_BACKTRACE",
                OUTSIDE_CANARY,
                "CANARY-SECRET",
            ]))
            .stdout(lacks(&[OUTSIDE_CANARY, "CANARY-SECRET"]));
        if self.text_mode()
            && env
                .vars
                .iter()
                .any(|(k, v)| k == "READBOX_FORMAT" && v == "text")
        {
            return;
        }
        let line = std::str::from_utf8(&self.stdout)
            .unwrap_or_else(|_| panic!("stdout is not UTF-8 for {}", self.shown));
        let body = line
            .strip_suffix('\n')
            .expect("the envelope ends with a newline");
        assert!(
            !body.contains('\n'),
            "more than one line for {}",
            self.shown
        );
        for c in body.chars() {
            assert!(
                !matches!(c, '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'),
                "raw control {c:?} in the envelope of {}",
                self.shown
            );
        }
        let v: serde_json::Map<String, Value> = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("not JSON ({e}) for {}: {body}", self.shown));
        let keys: Vec<&str> = v.keys().map(String::as_str).collect();
        if keys.len() == 4 {
            assert_eq!(
                keys,
                ["output", "error", "truncated", "notes"],
                "envelope keys"
            );
            let notes = v["notes"].as_array().expect("notes is an array");
            assert!(!notes.is_empty(), "notes is present only when non-empty");
            self.notes = notes
                .iter()
                .map(|n| {
                    let n = n.as_str().expect("a note is a string");
                    assert!(!n.contains('\n'), "a note is one line");
                    n.to_string()
                })
                .collect();
        } else {
            assert_eq!(keys, ["output", "error", "truncated"], "envelope keys");
        }
        self.output = v["output"]
            .as_str()
            .expect("output is a string")
            .to_string();
        self.error = match &v["error"] {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => panic!("error is {other:?}"),
        };
        self.truncated = v["truncated"].as_bool().expect("truncated is a boolean");
        assert_eq!(
            self.error.is_none(),
            self.status == 0 || self.status == 1,
            "exit status {} does not fit error {:?} for {}",
            self.status,
            self.error,
            self.shown
        );
    }

    /// Success with exactly `output` and exit 0.
    #[track_caller]
    pub fn ok(&self, output: &str) -> &Self {
        self.ok_status(output, 0)
    }

    /// Success with exactly `output` and exit `status` (0 or 1).
    #[track_caller]
    pub fn ok_status(&self, output: &str, status: i32) -> &Self {
        assert_eq!(self.error, None, "unexpected error for {}", self.shown);
        assert_eq!(self.output, output, "output of {}", self.shown);
        self.assert().code(status);
        self
    }

    /// A negative answer: empty output, no error, exit 1.
    #[track_caller]
    pub fn no_match(&self) -> &Self {
        self.ok_status("", 1)
    }

    /// An error of class `class` (`not found`, `denied`, ...) that contains `needle`, exit 2.
    #[track_caller]
    pub fn fails(&self, class: &str, needle: &str) -> &Self {
        let e = self.error.as_deref().unwrap_or_else(|| {
            panic!(
                "expected a '{class}:' error for {}, got output {:?}",
                self.shown, self.output
            )
        });
        assert!(
            e.starts_with(&format!("{class}: ")),
            "error class of {}: {e}",
            self.shown
        );
        assert!(
            e.contains(needle),
            "error of {} should contain {needle:?}: {e}",
            self.shown
        );
        assert!(!e.contains('\n'), "error of {} is not one line", self.shown);
        self.assert().code(predicate::in_iter([2, 127]));
        self
    }

    /// The uniform denial: exactly `denied: PATH`, no output.
    #[track_caller]
    pub fn denied(&self, path: &str) -> &Self {
        assert_eq!(
            self.error.as_deref(),
            Some(format!("denied: {path}").as_str()),
            "for {}",
            self.shown
        );
        assert_eq!(self.output, "", "output of a denial for {}", self.shown);
        self.assert().code(2);
        self
    }

    /// The output as lines.
    pub fn lines(&self) -> Vec<&str> {
        self.output.lines().collect()
    }

    /// The output parsed as one JSON document.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.output).unwrap_or_else(|e| {
            panic!(
                "output of {} is not JSON ({e}): {}",
                self.shown, self.output
            )
        })
    }
}

/// The tests' one pseudo-random generator, xorshift64* (Vigna's shifts 12, 25, 27 and its
/// multiplier): seeded, so every fixture it builds is the same on every run and a failing case
/// can be reproduced, and small enough to need no crate.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`; a seed of 0 (xorshift's one fixed point) is taken as 1.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next number of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// A duration in `[0, max)` (`[0, 1ns)` when `max` is zero), to the nanosecond.
    pub fn duration_below(&mut self, max: Duration) -> Duration {
        let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX).max(1);
        Duration::from_nanos(self.next_u64() % nanos)
    }
}

/// What `max_output_bytes` leaves of `full`, the whole output of a line-based tool
/// (docs/contract.md#envelope): all of it when it fits; else the longest prefix made of whole
/// lines that fits in `cap` bytes, or `full` cut on a character boundary when not even the
/// first line fits, or when the line that the cap falls in is longer than 64 KiB with its `\n`.
/// (tail keeps the end instead, and grep shows a long matching line as a window.)
pub fn capped(full: &str, cap: usize) -> &str {
    if full.len() <= cap {
        return full;
    }
    let bytes = full.as_bytes();
    let start = bytes[..cap]
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| i + 1);
    let line_end = bytes[cap..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(full.len(), |i| cap + i + 1);
    match start {
        Some(s) if line_end - s <= 64 * 1024 => &full[..s],
        _ => char_prefix(full, cap),
    }
}

/// `s` cut to at most `n` bytes on a character boundary, as the cap cuts inside a line.
pub fn char_prefix(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
