//! readbox: safe, read-only `cat ls find grep head tail wc stat diff pwd` for AI agents, container
//! images and people, confined beneath chosen roots, with bounded time and output, and one JSON
//! envelope per call. The contract is docs/contract.md; the README explains how to use it.
//!
//! One call flows one way:
//!
//! ```text
//! argv -> dispatch -> policy -> enabled? -> args (typed) -> gate (roots, excludes)
//!      -> tool (reads only through the gate, pushes into the output) -> envelope -> exit status
//! ```
//!
//! Modules in layers: each imports only modules listed below it, so no module imports one that
//! imports it (a test in `tests/cli/repository.rs` keeps this list and the imports in step):
//! - [`mcp`]: `readbox mcp`, which runs each tool call as a child `readbox call`.
//! - [`sh`]: `readbox sh`, the agent's shell: its grammar, globs, lists and pipelines, running the
//!   tools in process.
//! - [`invoke`]: runs one tool with its words (the disabled check, help, arguments).
//! - [`meta`]: `help`, `version`, `list`, `policy`, `schema`, `install`.
//! - [`dispatch`]: `argv[0]` or the first argument -> a tool or a meta command.
//! - [`args`]: the positional parser of every tool, flag refusals with hints, `call`'s JSON form.
//! - [`tools`]: the registry table of the tools and one module per tool.
//! - [`walk`]: the one directory walker (sorted, never follows links, prunes excludes).
//! - [`call`]: what one call hands its tool (the policy, the gate, the budgets, the output).
//! - [`policy`]: settings from defaults, the system file, `READBOX_CONFIG` and the environment,
//!   with the lock.
//! - [`registry`]: the tools' names and the types of their parameters, flags and answers.
//! - [`resolve`]: the gate, the only way to reach an object on disk.
//! - [`glob`]: the length and nesting bounds of every glob.
//! - [`read`]: reading content within the read budget, line by line.
//! - [`audit`]: the audit log.
//! - [`envelope`]: the only writer of stdout (the envelope, and `readbox mcp`'s messages).
//! - [`redact`]: the secret detector the readers pass file content through.
//! - [`names`]: file names quoted as one shell word when they are not plain.
//! - [`sandbox`]: Landlock self-restriction, a second wall behind the gate.
//! - [`limits`]: the read and entry budgets and the timeout watchdog.
//! - [`error`]: the error classes every answer uses.

pub mod args;
pub mod audit;
pub mod call;
pub mod dispatch;
pub mod envelope;
pub mod error;
pub mod glob;
pub mod invoke;
pub mod limits;
pub mod mcp;
pub mod meta;
pub mod names;
pub mod policy;
pub mod read;
pub mod redact;
pub mod registry;
pub mod resolve;
pub mod sandbox;
pub mod sh;
pub mod tools;
pub mod walk;

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use call::{Ctx, Stdin};
use dispatch::{Invocation, Meta};
use envelope::{Format, Output, Stop};
use error::Error;
use invoke::Words;
use limits::{Budget, Deadline, LOCK_GRACE, Watch};
use policy::Policy;
use resolve::Gate;
use sandbox::{Enforcement, Ruleset};
use tools::{Runs, Tool};

pub use error::{EXIT_ERROR, EXIT_NEGATIVE, EXIT_SUCCESS, EXIT_UNKNOWN};

/// The answer of the call in progress, shared by the main thread, the watchdog and the panic
/// hook, so that exactly one of them gives it.
struct Answer {
    out: Output,
    label: String,
    audit: Option<audit::Log>,
    record: audit::Record,
    answered: AtomicBool,
    /// `readbox sh` in the text format has written its error to stderr already, as a shell
    /// does: the end does not write it again.
    error_shown: AtomicBool,
}

/// The call in progress (in a `readbox sh` session, the command line in progress).
static CURRENT: Mutex<Option<Arc<Answer>>> = Mutex::new(None);

impl Answer {
    /// Writes the answer (and the audit line) unless another thread already did. Returns the
    /// exit status, or `None` when the answer was not ours to give.
    ///
    /// The main thread, whose pushes are done, waits for the output (`grace` is `None`). The
    /// watchdog and the panic hook wait only `grace` for a writer that holds it: past that, it is
    /// blocked on a stdout nobody reads (or it is the panicking thread itself), and the call ends
    /// without closing the envelope ([`Output::abandon`]).
    fn give(&self, error: Option<Error>, status: i32, grace: Option<Duration>) -> Option<i32> {
        if self.answered.swap(true, Ordering::SeqCst) {
            return None;
        }
        // Settled before the summary: the log counts the output the envelope holds, not bytes
        // held back that the end may still leave out.
        let closing = match grace {
            None => Some(self.out.close()),
            Some(grace) => self.out.try_close(grace),
        };
        let (mut error, mut status) = (error, status);
        if let Some(log) = &self.audit {
            let summary = closing
                .as_ref()
                .map_or_else(|| self.out.summary_so_far(), envelope::Closing::summary);
            // The output may be out already; a log that fails now still makes the call fail.
            if let Err(e) = log.end(&self.record, status, error.as_ref(), summary) {
                error = Some(e);
                status = EXIT_ERROR;
            }
        }
        let shown = error
            .as_ref()
            .filter(|_| grace.is_some() || !self.error_shown.load(Ordering::SeqCst));
        match closing {
            Some(closing) => closing.finish(&self.label, shown),
            None => self.out.abandon(&self.label, shown),
        }
        Some(status)
    }

    fn new(out: Output, label: &str, audit: Option<audit::Log>, record: audit::Record) -> Answer {
        Answer {
            out,
            label: label.to_string(),
            audit,
            record,
            answered: AtomicBool::new(false),
            error_shown: AtomicBool::new(false),
        }
    }

    /// Makes this the call the watchdog's and the panic hook's answers are for.
    fn make_current(self: &Arc<Answer>) {
        *CURRENT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(self.clone());
    }
}

/// What the standard library's `main` prepares before a Rust `main`, for the binary's C `main`.
///
/// The binary's C `main` starts [`run`] without it (std's own preparation reads `/proc/self/maps`
/// to find the main thread's stack: about 100,000 instructions of a small call).
/// Standard input, output and error that are closed are opened on `/dev/null`, so that no file
/// readbox opens takes their numbers, and SIGPIPE is ignored, so that a write to a closed pipe is
/// an error and not the end of the process (docs/security.md#the-process-start).
///
/// # Panics
/// Aborts the process when `/dev/null` cannot be opened in place of a closed descriptor, as the
/// standard library does.
pub fn start_process() {
    use rustix::event::{PollFd, PollFlags, poll};
    use std::os::fd::BorrowedFd;
    // SAFETY: 0, 1 and 2 are only looked at here, never closed or read; a closed one answers
    // POLLNVAL to poll and EBADF to fcntl.
    let std_fds = unsafe { [0, 1, 2].map(|fd| BorrowedFd::borrow_raw(fd)) };
    let mut fds = std_fds.map(|fd| PollFd::from_borrowed_fd(fd, PollFlags::empty()));
    let closed: [bool; 3] = match poll(&mut fds, Some(&rustix::event::Timespec::default())) {
        Ok(_) => std::array::from_fn(|i| fds[i].revents().contains(PollFlags::NVAL)),
        // poll may be refused (a seccomp filter, no memory): each descriptor is asked on its own.
        Err(_) => std_fds
            .map(|fd| rustix::io::fcntl_getfd(fd).is_err_and(|e| e == rustix::io::Errno::BADF)),
    };
    for _ in closed.iter().filter(|&&c| c) {
        // The lowest free number is the closed one; the descriptor stays open for good.
        match rustix::fs::open(
            "/dev/null",
            rustix::fs::OFlags::RDWR,
            rustix::fs::Mode::empty(),
        ) {
            Ok(null) => std::mem::forget(null),
            Err(_) => std::process::abort(),
        }
    }
    unsafe extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIG_IGN: usize = 1;
    // SAFETY: ignoring a signal installs no handler of ours.
    unsafe { signal(rustix::process::Signal::PIPE.as_raw(), SIG_IGN) };
}

/// Runs one readbox call with the process's arguments and returns its exit status. Everything
/// the call prints goes through [`envelope`].
pub fn run(argv: Vec<OsString>) -> i32 {
    let start = Instant::now();
    install_panic_hook();
    limits::on_out_of_memory(answer_out_of_memory);
    let invocation = dispatch::dispatch(&argv);
    // Before the policy is loaded, only the environment can choose the text format.
    let early = std::env::var("READBOX_FORMAT")
        .ok()
        .and_then(|f| Format::parse(&f))
        .unwrap_or(Format::Json);
    let (label, tool, meta, words) = match invocation {
        Invocation::Bare => {
            let text = meta::usage();
            return answer_now(
                early,
                "readbox",
                &text,
                Some(Error::Usage(
                    "no tool given; usage: readbox TOOL [ARG...] (readbox help)".into(),
                )),
                EXIT_ERROR,
            );
        }
        Invocation::Unknown(name) => {
            let e = Error::Usage(format!(
                "unknown tool '{}'; tools: {}",
                error::shown(name.as_bytes()),
                registry::NAMES.join(" ")
            ));
            return answer_now(early, "readbox", "", Some(e), EXIT_UNKNOWN);
        }
        Invocation::Tool(name, words) => {
            (name.to_string(), Some(dispatch::tool(name)), None, words)
        }
        // The server speaks MCP on stdout, never an envelope; each call it runs is one.
        Invocation::Meta(Meta::Mcp, words) => return mcp::serve(&words),
        Invocation::Meta(m, words) => ("readbox".to_string(), None, Some(m), words),
    };
    // The deadline holds from the first read: a config file, an audit log or a root on a
    // filesystem whose reads block still gets an answer (docs/contract.md#limits).
    let loading = {
        let label = label.clone();
        Deadline::new(start, limits::early_seconds()).watch_start(move |e| {
            let status = answer_now(early, &label, "", Some(e), EXIT_ERROR);
            envelope::release_stdio();
            std::process::exit(status);
        })
    };
    let policy = match Policy::load() {
        Ok(p) => p,
        Err(e) => {
            loading.end();
            return answer_now(early, &label, "", Some(e), EXIT_ERROR);
        }
    };
    // Help and the version are for a person at a terminal: plain text there, unless a format
    // was chosen; a program reading them gets the envelope.
    let help = matches!(meta, Some(Meta::Help | Meta::Version))
        || (tool.is_some() && invoke::is_help_request(&words));
    let format = if help
        && policy.source(crate::policy::Setting::Format) == "default"
        && envelope::stdout_is_terminal()
    {
        Format::Text
    } else {
        policy.format
    };
    let shell = tool.is_some_and(|t| matches!(t.run, Runs::Shell))
        || (meta == Some(Meta::Call) && words.first().is_some_and(|w| w == registry::SHELL));
    let out = new_output(&policy, format, shell);
    let audit = match &policy.audit_log {
        Some(path) => match audit::Log::open(path) {
            Ok(log) => Some(log),
            Err(e) => {
                loading.end();
                return answer_now(policy.format, &label, "", Some(e), EXIT_ERROR);
            }
        },
        None => None,
    };
    let gate = policy.open_gate();
    // A meta command is recorded by its own name, never as `readbox` (docs/contract.md#audit-log).
    let record_tool = meta.map_or_else(|| label.clone(), |m| m.name().to_string());
    // `readbox sh` alone is a session: one call per command line read from standard input.
    let session = shell && words.is_empty();
    let record = audit::Record::new(&record_tool, &words, &policy.workdir, start);
    // The first line goes to the log before any output; a call that cannot log does not run.
    if !session
        && let Some(log) = &audit
        && let Err(e) = log.begin(&record)
    {
        loading.end();
        return answer_now(policy.format, &label, "", Some(e), EXIT_ERROR);
    }
    let call = Arc::new(Answer::new(out, &label, audit, record));
    call.make_current();
    let (error, status) = match gate {
        Err(e) => {
            loading.end();
            (Some(e), EXIT_ERROR)
        }
        Ok(gate) => {
            // Landlock before any other thread starts: threads started later inherit it. The
            // start's watchdog, already there, restricts itself too before the call reads
            // (docs/security.md#budgets-and-the-watchdog).
            let ruleset = if meta == Some(Meta::Install) {
                Ruleset::none("install makes links, so it runs unrestricted".into())
            } else {
                Ruleset::read_only(&gate.root_handles())
            };
            let enforcement = ruleset.enter();
            if let Err(e) = policy.check_sandbox(&enforcement) {
                loading.end();
                (Some(e), EXIT_ERROR)
            } else {
                if session {
                    loading.end();
                    return shell_session(&policy, &gate, &call);
                }
                let _watch = loading.hand_over(
                    entered_as(ruleset, &enforcement),
                    Deadline::new(start, policy.timeout),
                    at_deadline(&call),
                );
                let env = Env {
                    policy: &policy,
                    gate: &gate,
                    out: &call.out,
                    enforcement: &enforcement,
                };
                let (error, status) = env.dispatch(tool, meta, &words);
                if shell && policy.format == Format::Text {
                    call.error_shown.store(true, Ordering::SeqCst);
                }
                (error, status)
            }
        }
    };
    call.give(error, status, None).unwrap_or_else(|| {
        // The watchdog answered first and is ending the process. `park` may return at once (a
        // wake-up left by grep's scoped workers, or none at all): returning would exit under the
        // watchdog's answer.
        loop {
            std::thread::park();
        }
    })
}

/// The answer's output: capped at `max_output_bytes`; under `readbox sh`, its tools write as in
/// the text format whatever the answer's format (docs/contract.md#readbox-sh).
fn new_output(policy: &Policy, format: Format, shell: bool) -> Output {
    let out = Output::new(
        format,
        usize::try_from(policy.max_output_bytes).unwrap_or(usize::MAX),
    );
    if shell {
        out.with_style(Format::Text)
    } else {
        out
    }
}

/// Starts the watchdog of `call`: at the deadline it answers for the call and ends the process.
fn watch(call: &Arc<Answer>, start: Instant, seconds: f64) -> Watch {
    Deadline::new(start, seconds).watch(at_deadline(call))
}

/// What the watchdog of `call` does at the deadline: it answers for the call and ends the process.
fn at_deadline(call: &Arc<Answer>) -> impl FnOnce(Error) + Send + 'static {
    let watched = call.clone();
    move |err| {
        if let Some(status) = watched.give(Some(err), EXIT_ERROR, Some(LOCK_GRACE)) {
            envelope::release_stdio();
            std::process::exit(status);
        }
    }
}

/// How the start's watchdog restricts its own thread as the main thread was restricted
/// (`main`): by `ruleset` where it held, by nothing where it did not (then neither thread is
/// under Landlock). Answers whether it matched the main thread.
fn entered_as(ruleset: Ruleset, main: &Enforcement) -> impl FnOnce() -> bool + Send + 'static {
    let restricted = !matches!(main, Enforcement::None(_));
    move || !restricted || !matches!(ruleset.enter(), Enforcement::None(_))
}

/// The longest command line a `readbox sh` session reads (1 MiB): a longer one is refused,
/// and memory stays bounded whatever standard input holds.
const MAX_COMMAND_LINE: usize = 1 << 20;

/// `readbox sh` alone: command lines read from standard input, as bash reads a script, each a
/// call of its own (its own deadline, budgets, audit records and envelope line); `cd` carries
/// from line to line. `first` is the call object made for the session's start: it answers only
/// if the session cannot start. Returns the status of the last line (0 for none).
fn shell_session(policy: &Policy, gate: &Gate, first: &Arc<Answer>) -> i32 {
    // From now on the lines answer; the first call object never does.
    first.answered.store(true, Ordering::SeqCst);
    let home = gate.workdir();
    let mut input = std::io::stdin().lock();
    let mut status = EXIT_SUCCESS;
    loop {
        let Some((command, eof)) = next_command_line(&mut input) else {
            return status;
        };
        let (line_status, exit) = session_line(policy, gate, first.audit.as_ref(), &home, command);
        status = line_status;
        if exit || eof {
            return status;
        }
    }
}

/// The next command line of a session's `input`: physical lines up to one after which the line
/// does not go on ([`sh::Continuation`]), or one physical line holding a JSON object
/// `{"command": …}`. `None` at the end of input; else the line (its final newline taken off, or
/// a `usage:` error for one longer than [`MAX_COMMAND_LINE`], read to its end but not kept) and
/// whether the input ended with it. Input is read in pieces, so memory stays bounded.
fn next_command_line(input: &mut impl std::io::BufRead) -> Option<(Result<Vec<u8>, Error>, bool)> {
    let mut text: Vec<u8> = Vec::new();
    let mut too_long = false;
    let mut reader = sh::Continuation::new();
    let (mut read_any, mut eof, mut physical) = (false, false, 0);
    loop {
        let (ended, taken) = match input.fill_buf() {
            Ok([]) | Err(_) => {
                eof = true;
                break;
            }
            Ok(buf) => {
                let (piece, ended) = match memchr::memchr(b'\n', buf) {
                    Some(i) => (&buf[..=i], true),
                    None => (buf, false),
                };
                reader.push(piece);
                if text.len() + piece.len() > MAX_COMMAND_LINE + 1 {
                    too_long = true;
                    text = Vec::new();
                } else if !too_long {
                    text.extend_from_slice(piece);
                }
                (ended, piece.len())
            }
        };
        input.consume(taken);
        read_any = true;
        if ended {
            physical += 1;
            if physical == 1 && !too_long && is_json_command(&text) {
                let json = args::parse_json(dispatch::tool(registry::SHELL), text.trim_ascii())
                    .map(|a| a.bytes(0).to_vec());
                return Some((json, false));
            }
            if !reader.goes_on() {
                break;
            }
        }
    }
    if !read_any {
        return None;
    }
    if too_long {
        let e = Error::Usage(format!(
            "the command line is longer than {MAX_COMMAND_LINE} bytes"
        ));
        return Some((Err(e), eof));
    }
    if text.ends_with(b"\n") {
        text.pop();
    }
    Some((Ok(text), eof))
}

/// Whether a session's input line is one JSON object (`{"command": …}`), the form for a
/// harness that relays a model's multi-line commands.
fn is_json_command(line: &[u8]) -> bool {
    let t = line.trim_ascii();
    t.starts_with(b"{")
        && t.ends_with(b"}")
        && serde_json::from_slice::<serde_json::Value>(t).is_ok()
}

/// One command line of a session, as one call; returns its status and whether `exit` ran.
///
/// `log` is the audit log the session opened before Landlock: each line writes through its own
/// handle on it, and a line that cannot log does not run.
fn session_line(
    policy: &Policy,
    gate: &Gate,
    log: Option<&audit::Log>,
    home: &std::path::Path,
    command: Result<Vec<u8>, Error>,
) -> (i32, bool) {
    let start = Instant::now();
    let out = new_output(policy, policy.format, true);
    let audit = match log.map(audit::Log::try_clone).transpose() {
        Ok(audit) => audit,
        Err(e) => {
            answer_now(policy.format, "sh", "", Some(e), EXIT_ERROR);
            return (EXIT_ERROR, false);
        }
    };
    let shown = match &command {
        Ok(c) => OsString::from_vec(c.clone()),
        Err(_) => OsString::new(),
    };
    let record = audit::Record::new("sh", &[shown], &gate.workdir(), start);
    if let Some(log) = &audit
        && let Err(e) = log.begin(&record)
    {
        answer_now(policy.format, "sh", "", Some(e), EXIT_ERROR);
        return (EXIT_ERROR, false);
    }
    let call = Arc::new(Answer::new(out, "sh", audit, record));
    call.make_current();
    let watch = watch(&call, start, policy.timeout);
    let (error, status, exit) = match command {
        Ok(line) => {
            let budget = Budget::new(policy.max_read_bytes, policy.max_entries);
            let ctx = Ctx {
                policy,
                gate,
                out: &call.out,
                budget: &budget,
                stdin: &Stdin::Empty,
                json_calls: false,
            };
            let ended = sh::run_line(&ctx, &line, home);
            (ended.error, ended.status, ended.exit)
        }
        Err(e) => {
            let _ = call.out.diagnostic(&format!("sh: {e}\n"));
            (Some(e), EXIT_ERROR, false)
        }
    };
    if policy.format == Format::Text {
        call.error_shown.store(true, Ordering::SeqCst);
    }
    let status = call.give(error, status, None).unwrap_or(status);
    watch.done();
    if policy.format == Format::Text && status != EXIT_SUCCESS {
        envelope::write_stderr_line(&format!("sh: exit {status}\n"));
    }
    (status, exit)
}

/// What a tool or meta command runs with, once the policy is loaded and the gate is open.
struct Env<'a> {
    policy: &'a Policy,
    gate: &'a Gate,
    out: &'a Output,
    enforcement: &'a Enforcement,
}

impl Env<'_> {
    /// Runs the tool or meta command; returns the error and the exit status.
    fn dispatch(
        &self,
        tool: Option<&'static Tool>,
        meta: Option<Meta>,
        words: &[OsString],
    ) -> (Option<Error>, i32) {
        match (tool, meta) {
            (Some(tool), _) => self.run_tool(tool, Words::Positional(words)),
            (None, Some(Meta::Call)) => match words {
                [name, json] => match name.to_str().and_then(tools::by_name) {
                    Some(tool) => self.run_tool(tool, Words::Json(json.as_bytes())),
                    None => (
                        Some(Error::Usage(format!(
                            "call: unknown tool '{}'; tools: {}",
                            name.to_string_lossy(),
                            registry::NAMES.join(" ")
                        ))),
                        EXIT_UNKNOWN,
                    ),
                },
                _ => (
                    Some(Error::Usage("readbox call TOOL JSON".into())),
                    EXIT_ERROR,
                ),
            },
            (None, Some(m)) => match meta::run(m, words, self.policy, self.out, self.enforcement) {
                Ok(()) | Err(Stop::Truncated) => (None, EXIT_SUCCESS),
                Err(Stop::Error(e)) => (Some(e), EXIT_ERROR),
            },
            (None, None) => unreachable!("an invocation is a tool or a meta command"),
        }
    }

    /// Runs `tool` with one budget; `sh` runs its command line.
    fn run_tool(&self, tool: &'static Tool, words: Words<'_>) -> (Option<Error>, i32) {
        let budget = Budget::new(self.policy.max_read_bytes, self.policy.max_entries);
        let ctx = Ctx {
            policy: self.policy,
            gate: self.gate,
            out: self.out,
            budget: &budget,
            stdin: &Stdin::Process,
            json_calls: matches!(words, Words::Json(_)),
        };
        if !matches!(tool.run, Runs::Shell) {
            return invoke::run_tool(&ctx, tool, words);
        }
        if let Some(answered) = invoke::answer_before_arguments(&ctx, tool, words) {
            return answered;
        }
        match sh::command_of(&ctx, tool, words) {
            Ok(line) => {
                let ended = sh::run_line(&ctx, &line, &self.gate.workdir());
                (ended.error, ended.status)
            }
            Err(e) => (Some(e), EXIT_ERROR),
        }
    }
}

/// Answers a call that ends before the policy and the watchdog exist.
fn answer_now(format: Format, label: &str, output: &str, error: Option<Error>, status: i32) -> i32 {
    let out = Output::new(format, usize::MAX);
    let _ = out.push_str(output);
    out.finish(label, error.as_ref());
    status
}

/// A panic must still end in one envelope, and never print a backtrace (docs/contract.md#envelope,
/// docs/security.md#threat-model). The hook runs before the panicking thread lets go of anything,
/// so it may hold the output itself (a panic inside a push): waiting for it would never end.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        if cfg!(debug_assertions) {
            eprintln!("readbox: internal error: {info}");
        }
        let current = CURRENT.try_lock().ok().and_then(|c| c.clone());
        std::process::exit(answer_panic(current.as_deref()));
    }));
}

/// Ends the process when an allocation failed (see [`limits::Allocator`]): the call in progress
/// answers `io: out of memory` with the output so far, as the panic hook answers, and the
/// process exits 2. `readbox mcp`, whose standard output is no envelope, says so on standard
/// error.
fn answer_out_of_memory() -> ! {
    if mcp::SERVING.load(Ordering::SeqCst) {
        envelope::write_stderr_line("readbox mcp: out of memory\n");
        std::process::exit(EXIT_ERROR);
    }
    let current = CURRENT.try_lock().ok().and_then(|c| c.clone());
    let e = Error::Io("out of memory".into());
    match current.as_deref() {
        Some(call) => {
            call.give(Some(e), EXIT_ERROR, Some(LOCK_GRACE));
        }
        None => {
            answer_now(Format::Json, "readbox", "", Some(e), EXIT_ERROR);
        }
    }
    std::process::exit(EXIT_ERROR)
}

/// The panic hook's answer for `call` (`None` before the call exists), waiting at most
/// [`LOCK_GRACE`] for the output; returns the exit status.
fn answer_panic(call: Option<&Answer>) -> i32 {
    let e = Error::Io("internal error".into());
    match call {
        Some(call) => {
            call.give(Some(e), EXIT_ERROR, Some(LOCK_GRACE));
        }
        None => {
            answer_now(Format::Json, "readbox", "", Some(e), EXIT_ERROR);
        }
    }
    EXIT_ERROR
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> Arc<Answer> {
        let start = Instant::now();
        Arc::new(Answer::new(
            Output::new(Format::Json, 1 << 20),
            "cat",
            None,
            audit::Record::new("cat", &[], std::path::Path::new("/"), start),
        ))
    }

    #[test]
    fn a_panic_while_the_output_is_held_still_ends_the_call() {
        let call = call();
        // As a push that panics holds it while the hook runs (on the same thread).
        let held = call.out.hold();
        let (tx, rx) = std::sync::mpsc::channel();
        let panicking = call.clone();
        std::thread::spawn(move || tx.send(answer_panic(Some(&panicking))));
        let status = rx.recv_timeout(Duration::from_secs(10));
        drop(held);
        assert_eq!(status, Ok(EXIT_ERROR), "the hook waited for the output");
    }
}
