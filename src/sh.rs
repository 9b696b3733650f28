//! `readbox sh` (docs/contract.md#readbox-sh): the shell an agent types into.
//!
//! It parses a command line as bash would ([`parse`]), checks all of it, and runs only readbox's
//! enabled tools and a few builtins, in this process, under the call's one policy, gate, deadline
//! and budgets.
//!
//! A line runs in two passes:
//!
//! 1. **Plan**: every command is classified (tool, builtin, unknown), its globs are expanded
//!    through the gate ([`glob`]), and every tool's words are checked by the tools' own parser.
//!    A construct outside the grammar or a refused word (a flag, several paths) refuses the whole
//!    line, with the line rewritten when every refused command has an equivalent. Nothing has
//!    run yet.
//! 2. **Run**: lists and pipelines as bash runs them. The stages of a pipeline run on threads of
//!    their own, joined by pipes: each writes text into the next stage's standard input, the last
//!    writes into the answer, and the kernel's pipe buffer bounds what is in flight. When the last
//!    stage ends, the stages before it stop at their next read, write or directory entry.
//!
//! Invariant: the shell never starts a program and never opens a file for writing; every path it
//! touches (arguments, globs, `cd`, `< FILE`) goes through the gate.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

use crate::call::{Ctx, Stdin};
use crate::envelope::{Output, Stop};
use crate::error::{EXIT_ERROR, EXIT_NEGATIVE, EXIT_SUCCESS, EXIT_UNKNOWN, Error};
use crate::invoke::{self, Words};
use crate::registry::ParamKind;
use crate::resolve::NodeKind;
use crate::tools::{self, Tool};

pub mod glob;
pub mod parse;

pub use parse::Continuation;

use parse::{AndOr, Command, Connector, Line, Pipeline, Redirect};

/// The builtins, besides the tools (pwd is the tool).
const BUILTINS: &[&str] = &["cd", "echo", "true", "false", "exit"];

/// How a command line ended.
#[derive(Debug)]
pub struct Ended {
    /// bash's exit status: the last pipeline's, 2 for a refused line, 127 for an unknown command.
    pub status: i32,
    /// The error that set a status of 2 or more, as that tool's own envelope gives it.
    pub error: Option<Error>,
    /// `exit` ran: a session ends.
    pub exit: bool,
}

impl Ended {
    fn new(status: i32, error: Option<Error>) -> Ended {
        Ended {
            status,
            error: error.filter(|_| status >= EXIT_ERROR),
            exit: false,
        }
    }
}

/// The command line of a call of `sh`: `-c COMMAND` or `call`'s `{"command": …}`.
///
/// # Errors
/// `usage:` for any other words (a script file is not run) and for a bad JSON object.
pub fn command_of(ctx: &Ctx<'_>, tool: &Tool, words: Words<'_>) -> Result<Vec<u8>, Error> {
    match words {
        Words::Positional([c, line]) if c == "-c" => Ok(line.as_bytes().to_vec()),
        Words::Positional([c]) if c == "-c" => Err(Error::Usage(
            "-c needs a command line: readbox sh -c COMMAND".into(),
        )),
        Words::Positional(_) => Err(Error::Usage(
            "readbox sh runs a command line given with -c (readbox sh -c COMMAND), or command \
             lines read from standard input; it runs no script file"
                .into(),
        )),
        Words::Json(_) => {
            let args = invoke::arguments(ctx, tool, words)?;
            Ok(args.bytes(0).to_vec())
        }
    }
}

/// Runs one command line with `ctx` (its output is the answer) and returns how it ended. `home`
/// is the directory `cd` alone goes back to.
pub fn run_line(ctx: &Ctx<'_>, line: &[u8], home: &std::path::Path) -> Ended {
    let parsed = match parse::parse(line) {
        Ok(l) => l,
        Err(e) => return refused(ctx, e.into_error()),
    };
    let shell = Shell {
        ctx,
        home,
        expanded: std::sync::atomic::AtomicUsize::new(0),
    };
    let plans = match shell.plan(&parsed) {
        Ok(p) => p,
        Err(e) => return refused(ctx, e),
    };
    shell.run(&parsed, &plans)
}

/// A line refused before anything ran: its error is the answer's, and shown in the output as a
/// terminal would show it.
fn refused(ctx: &Ctx<'_>, e: Error) -> Ended {
    let _ = ctx.out.diagnostic(&format!("sh: {e}\n"));
    Ended::new(EXIT_ERROR, Some(e))
}

/// What a command runs.
#[derive(Clone)]
enum What {
    Tool(&'static Tool),
    Builtin(&'static str),
    Unknown(Vec<u8>),
}

/// A command as planned: what runs, with which words, expanded in which directory.
struct Plan {
    what: What,
    /// The words after the command name, globs expanded.
    words: Vec<OsString>,
    /// The working directory the globs were expanded in: a `cd` that went elsewhere before the
    /// command runs means expanding them again.
    expanded_in: PathBuf,
    /// A glob of the command was expanded.
    globbed: bool,
}

/// One refused command, for the answer and the whole-line hint.
struct Refusal {
    /// The command's index in plan order.
    index: usize,
    /// The tool's name.
    tool: &'static str,
    /// The usage error's text.
    message: String,
    /// The call that does the same, if the refusal offers one.
    equivalent: Option<String>,
}

/// Where a command's standard output or standard error goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dest {
    /// Standard output: the pipe to the next stage, or the answer.
    Out,
    /// Standard error as a terminal shows it ([`Output::diagnostic`]).
    Diag,
    /// `/dev/null`.
    Null,
}

struct Shell<'a> {
    ctx: &'a Ctx<'a>,
    home: &'a std::path::Path,
    /// The bytes of the words expanded so far for this line, within [`glob::MAX_WORDS_BYTES`].
    expanded: std::sync::atomic::AtomicUsize,
}

fn pipelines(list: &AndOr) -> impl Iterator<Item = &Pipeline> {
    std::iter::once(&list.first).chain(list.rest.iter().map(|(_, p)| p))
}

/// The most working directories a line's plan follows at once: more than one where a `cd` runs
/// only after an earlier command whose status the plan cannot know (`grep -q x f && cd a`).
const MAX_PLACES: usize = 4;

/// One pipeline as planned in one working directory.
struct Planned {
    plans: Vec<Plan>,
    refusals: Vec<Refusal>,
    /// Its status, where the plan can tell it (builtins alone, an unknown command).
    status: Option<i32>,
    /// Where a `cd` alone in the pipeline leads, if it does.
    cd_to: Option<PathBuf>,
}

impl Shell<'_> {
    /// The plan of every command, or the line's refusal.
    fn plan(&self, line: &Line) -> Result<Vec<Plan>, Error> {
        let gate = self.ctx.gate;
        let start = gate.workdir();
        let planned = self.plan_all(line);
        // The plan followed `cd`s to expand and check in the right directory; the run goes
        // back to where the line started (even if that is gone now).
        gate.restore_workdir(start);
        let (plans, refusals, uncertain) = planned?;
        if refusals.is_empty() {
            return Ok(plans);
        }
        Err(Error::Usage(whole_line_refusal(line, &refusals, uncertain)))
    }

    /// Plans every pipeline in every working directory it may run in (as bash would: a `cd` in
    /// a pipeline of several commands runs in a subshell of its own and moves nothing). Returns
    /// the plans (made in the first of those directories; the run expands again where it is),
    /// the refusals, and whether one was found where the directory was not certain.
    fn plan_all(&self, line: &Line) -> Result<(Vec<Plan>, Vec<Refusal>, bool), Error> {
        let gate = self.ctx.gate;
        let mut places = vec![gate.workdir()];
        let (mut plans, mut refusals) = (Vec::new(), Vec::<Refusal>::new());
        let mut uncertain = false;
        let mut index = 0;
        for list in &line.lists {
            // The status so far, where the plan can tell it.
            let mut so_far = Some(EXIT_SUCCESS);
            for (k, p) in pipelines(list).enumerate() {
                let runs = match k {
                    0 => Some(true),
                    _ => so_far.map(|s| match list.rest[k - 1].0 {
                        Connector::And => s == EXIT_SUCCESS,
                        Connector::Or => s != EXIT_SUCCESS,
                    }),
                };
                let (mut after, mut statuses) = (Vec::new(), Vec::new());
                for (n, place) in places.iter().enumerate() {
                    gate.restore_workdir(place.clone());
                    let planned = self.plan_pipeline(p, index)?;
                    if n == 0 {
                        plans.extend(planned.plans);
                    }
                    for r in planned.refusals {
                        if !refusals.iter().any(|x| x.index == r.index) {
                            uncertain |= places.len() > 1;
                            refusals.push(r);
                        }
                    }
                    statuses.push(planned.status);
                    after.push(planned.cd_to.unwrap_or_else(|| place.clone()));
                }
                index += p.commands.len();
                let status = statuses[0].filter(|s| statuses.iter().all(|t| *t == Some(*s)));
                match runs {
                    Some(true) => {
                        places = after;
                        so_far = status;
                    }
                    // Skipped: the status so far stays.
                    Some(false) => {}
                    None => places.extend(after),
                }
                places.sort();
                places.dedup();
                if places.len() > MAX_PLACES {
                    return Err(Error::Usage(format!(
                        "readbox sh follows at most {MAX_PLACES} working directories in one \
                         line: its cds depend on the status of too many commands before them"
                    )));
                }
            }
        }
        Ok((plans, refusals, uncertain))
    }

    /// Plans the commands of `p` in the current working directory; `index` is the first one's
    /// place in plan order.
    fn plan_pipeline(&self, p: &Pipeline, index: usize) -> Result<Planned, Error> {
        let alone = p.commands.len() == 1;
        let mut planned = Planned {
            plans: Vec::with_capacity(p.commands.len()),
            refusals: Vec::new(),
            status: None,
            cd_to: None,
        };
        for (i, cmd) in p.commands.iter().enumerate() {
            let piped = i > 0
                || cmd
                    .redirects
                    .iter()
                    .any(|r| matches!(r, Redirect::Input(_)));
            let (mut words, globbed) = self.expand(cmd)?;
            let name = words.remove(0);
            let mut plan = Plan {
                what: classify(name.as_bytes()),
                words,
                expanded_in: self.ctx.gate.workdir(),
                globbed,
            };
            match plan.what {
                What::Tool(tool) => {
                    if let Some(r) = self.check_tool(tool, &mut plan.words, piped) {
                        planned.refusals.push(Refusal {
                            index: index + i,
                            ..r
                        });
                    }
                }
                What::Builtin(b) => {
                    check_builtin(b, &plan.words)?;
                    if alone {
                        planned.status = match b {
                            "true" | "echo" => Some(EXIT_SUCCESS),
                            "false" => Some(EXIT_NEGATIVE),
                            "cd" => match self.cd_target(&plan.words) {
                                Ok(node) if node.kind() == NodeKind::Directory => {
                                    // Later commands are planned where this cd leads.
                                    self.ctx.gate.set_workdir(&node);
                                    planned.cd_to = Some(self.ctx.gate.workdir());
                                    Some(EXIT_SUCCESS)
                                }
                                _ => Some(EXIT_ERROR),
                            },
                            _ => None,
                        };
                    }
                }
                What::Unknown(_) => planned.status = alone.then_some(EXIT_UNKNOWN),
            }
            planned.plans.push(plan);
        }
        if p.negated {
            planned.status = planned.status.map(|s| {
                if s == EXIT_SUCCESS {
                    EXIT_NEGATIVE
                } else {
                    EXIT_SUCCESS
                }
            });
        }
        Ok(planned)
    }

    /// The words of `cmd`, each glob expanded (or kept as written when it matches nothing), and
    /// whether any glob matched.
    fn expand(&self, cmd: &Command) -> Result<(Vec<OsString>, bool), Error> {
        let mut words = Vec::with_capacity(cmd.words.len());
        let mut globbed = false;
        for w in &cmd.words {
            let before = words.len();
            match &w.glob {
                // A glob lists directories: only where a tool that lists them is enabled.
                Some(_)
                    if !["ls", "find"]
                        .iter()
                        .any(|t| self.ctx.policy.tools.contains(t)) =>
                {
                    return Err(Error::Usage(format!(
                        "readbox sh expands globs only where ls or find is enabled: {} (quote \
                         it to keep it as written)",
                        w.source
                    )));
                }
                Some(pattern) => {
                    let room = glob::MAX_WORDS_BYTES.saturating_sub(self.expanded.load(Relaxed));
                    match glob::expand(self.ctx, pattern, room)? {
                        Some(names) => {
                            globbed = true;
                            words.extend(names.into_iter().map(OsString::from_vec));
                        }
                        None => words.push(OsString::from_vec(w.text.clone())),
                    }
                }
                None => words.push(OsString::from_vec(w.text.clone())),
            }
            let added: usize = words[before..].iter().map(|w| w.len() + 1).sum();
            let used = self.expanded.fetch_add(added, Relaxed) + added;
            if used > glob::MAX_WORDS_BYTES {
                return Err(glob::too_long());
            }
        }
        Ok((words, globbed))
    }

    /// Checks a tool's words as its parser would; a stage that reads a pipe reads it where PATH is
    /// left out (`ls | grep x`, `cat f | head`).
    fn check_tool(
        &self,
        tool: &'static Tool,
        words: &mut Vec<OsString>,
        piped: bool,
    ) -> Option<Refusal> {
        if !self.ctx.policy.tools.contains(&tool.name) || invoke::is_help_request(words) {
            // A disabled tool answers `disabled:` when it runs; help is help.
            return None;
        }
        if piped {
            pipe_path(tool, words);
        }
        let world = crate::args::World {
            exists: &|p| self.ctx.gate.resolve(p).is_ok(),
            is_dir: &|p| {
                self.ctx
                    .gate
                    .resolve(p)
                    .is_ok_and(|n| n.kind() == NodeKind::Directory)
            },
            piped: &|| piped,
        };
        match crate::args::parse(tool, words, &world) {
            Ok(_) => None,
            Err(e) => Some(Refusal {
                index: 0,
                tool: tool.name,
                message: match e {
                    Error::Usage(m) => m,
                    other => other.to_string(),
                },
                equivalent: crate::args::equivalent_call(tool, words, &world),
            }),
        }
    }

    /// Resolves `cd`'s DIR (its home when left out).
    fn cd_target(&self, words: &[OsString]) -> Result<crate::resolve::Node, Error> {
        let gate = self.ctx.gate;
        match words {
            // A home beneath no root is not named (docs/contract.md#policy).
            [] => gate
                .resolve(self.home.as_os_str().as_bytes())
                .map_err(|e| match e {
                    Error::Denied(_) => {
                        Error::Denied(format!("~: {}", crate::resolve::WORKDIR_OUTSIDE))
                    }
                    e => e,
                }),
            [dir] => gate.resolve(dir.as_bytes()),
            _ => Err(Error::Usage("cd takes one DIR".into())),
        }
    }

    /// Runs the planned line.
    fn run(&self, line: &Line, plans: &[Plan]) -> Ended {
        let mut at = 0;
        let mut ended = Ended::new(EXIT_SUCCESS, None);
        for list in &line.lists {
            let count = |p: &Pipeline| p.commands.len();
            let mut status_so_far: Option<i32> = None;
            let mut pipes = vec![(None, &list.first)];
            pipes.extend(list.rest.iter().map(|(c, p)| (Some(*c), p)));
            for (connector, p) in pipes {
                let runs = match (connector, status_so_far) {
                    (None, _) => true,
                    (Some(Connector::And), Some(s)) => s == EXIT_SUCCESS,
                    (Some(Connector::Or), Some(s)) => s != EXIT_SUCCESS,
                    (Some(_), None) => true,
                };
                let mine = &plans[at..at + count(p)];
                at += count(p);
                if !runs {
                    continue;
                }
                ended = self.pipeline(p, mine);
                status_so_far = Some(ended.status);
                if ended.exit || self.ctx.out.is_truncated() {
                    return ended;
                }
            }
        }
        ended
    }

    /// Runs one pipeline and returns its status (the last stage's, inverted by `!`).
    fn pipeline(&self, p: &Pipeline, plans: &[Plan]) -> Ended {
        let mut ended = if p.commands.len() == 1 {
            match self.stdin_of(&p.commands[0], None) {
                Ok(stdin) => self.stage(&p.commands[0], &plans[0], stdin, None, true),
                Err(e) => self.failed_redirect(&p.commands[0], e),
            }
        } else {
            self.stages(p, plans)
        };
        if p.negated {
            ended.status = if ended.status == EXIT_SUCCESS {
                EXIT_NEGATIVE
            } else {
                EXIT_SUCCESS
            };
            ended.error = None;
        }
        ended
    }

    /// The stages of a pipeline on threads of their own, joined by pipes.
    fn stages(&self, p: &Pipeline, plans: &[Plan]) -> Ended {
        let n = p.commands.len();
        let mut readers: Vec<Option<std::fs::File>> = Vec::with_capacity(n);
        let mut writers: Vec<Option<std::os::fd::OwnedFd>> = Vec::with_capacity(n);
        readers.push(None);
        for _ in 1..n {
            match rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC) {
                Ok((r, w)) => {
                    readers.push(Some(std::fs::File::from(r)));
                    writers.push(Some(w));
                }
                Err(e) => {
                    let e = Error::io("|", &std::io::Error::from_raw_os_error(e.raw_os_error()));
                    return refused(self.ctx, e);
                }
            }
        }
        writers.push(None);
        let budget = self.ctx.budget;
        let last = std::thread::scope(|scope| {
            let mut handles = Vec::with_capacity(n - 1);
            let mut last = None;
            let mut unstarted = None;
            for (i, (reader, writer)) in readers.into_iter().zip(writers).enumerate() {
                let cmd = &p.commands[i];
                let plan = &plans[i];
                let piped = reader.map(Stdin::Pipe);
                if i + 1 == n {
                    last = Some((cmd, plan, piped));
                    break;
                }
                let writer = writer.expect("every stage but the last writes into a pipe");
                let started = std::thread::Builder::new().spawn_scoped(scope, move || {
                    let out = Output::to_pipe(writer, budget.piped());
                    let ended = match self.stdin_of(cmd, piped) {
                        Ok(stdin) => self.stage(cmd, plan, stdin, Some(&out), false),
                        Err(e) => self.failed_redirect(cmd, e),
                    };
                    drop(out.drain());
                    ended
                });
                match started {
                    Ok(h) => handles.push(h),
                    // No thread left for a stage (a memory or process limit): nothing more
                    // starts, and the line fails with the reason.
                    Err(e) => {
                        unstarted = Some(Error::io("|", &e));
                        break;
                    }
                }
            }
            let ended = match (unstarted, last) {
                (Some(e), _) => {
                    let _ = self.ctx.out.diagnostic(&format!("sh: {e}\n"));
                    Ended::new(EXIT_ERROR, Some(e))
                }
                (None, Some((cmd, plan, piped))) => match self.stdin_of(cmd, piped) {
                    Ok(stdin) => self.stage(cmd, plan, stdin, None, false),
                    Err(e) => self.failed_redirect(cmd, e),
                },
                (None, None) => unreachable!("a pipeline has a last stage"),
            };
            // The stages before stop at their next read, write or directory entry.
            budget.cancel();
            for h in handles {
                let _ = h.join();
            }
            ended
        });
        budget.resume();
        last
    }

    /// A command's standard input: its `< FILE`, else the pipe from the stage before, else
    /// nothing.
    fn stdin_of(&self, cmd: &Command, piped: Option<Stdin>) -> Result<Stdin, Error> {
        let mut stdin = piped.unwrap_or(Stdin::Empty);
        for r in &cmd.redirects {
            if let Redirect::Input(w) = r {
                // `< -` names a file called `-`, as in bash: never standard input.
                let input = self.ctx.open_file(&w.text)?;
                stdin = Stdin::File {
                    file: input.file,
                    size: input.size.unwrap_or(0),
                };
            }
        }
        Ok(stdin)
    }

    /// A command whose `< FILE` failed: it does not run, and the error is shown as its own.
    fn failed_redirect(&self, cmd: &Command, e: Error) -> Ended {
        let err = destinations(cmd).1;
        if err != Dest::Null {
            let _ = self.ctx.out.diagnostic(&format!("sh: {e}\n"));
        }
        Ended::new(EXIT_ERROR, Some(e))
    }

    /// Runs one command: `to` is the pipe to the next stage, `None` for the answer. `alone`: the
    /// command is a pipeline of its own; in a pipeline of several, `cd` and `exit` act on their
    /// stage only, as in bash's subshells.
    fn stage(
        &self,
        cmd: &Command,
        plan: &Plan,
        stdin: Stdin,
        to: Option<&Output>,
        alone: bool,
    ) -> Ended {
        let (out_dest, err_dest) = destinations(cmd);
        let discard;
        let out: &Output = if out_dest == Dest::Null {
            discard = Output::discard();
            &discard
        } else {
            to.unwrap_or(self.ctx.out)
        };
        let answer = std::ptr::eq(out, self.ctx.out);
        let err = |line: &str| {
            let _ = match err_dest {
                Dest::Diag => self.ctx.out.diagnostic(line),
                Dest::Out => out.push_str(line),
                Dest::Null => Ok(()),
            };
        };
        let replanned;
        let words = if plan.globbed && plan.expanded_in != self.ctx.gate.workdir() {
            replanned = match self.expand(cmd) {
                Ok((mut w, _)) => {
                    w.remove(0);
                    if let What::Tool(tool) = plan.what
                        && !matches!(stdin, Stdin::Empty)
                    {
                        pipe_path(tool, &mut w);
                    }
                    w
                }
                Err(e) => {
                    err(&format!("sh: {e}\n"));
                    return Ended::new(EXIT_ERROR, Some(e));
                }
            };
            &replanned
        } else {
            &plan.words
        };
        let ended = match &plan.what {
            What::Builtin(b) => self.builtin(b, words, out, &err, alone),
            What::Unknown(name) => {
                let e = Error::NotFound(format!(
                    "{}: readbox sh runs {}",
                    crate::error::shown(name),
                    self.offered()
                ));
                err(&format!("sh: {e}\n"));
                Ended::new(EXIT_UNKNOWN, Some(e))
            }
            What::Tool(tool) => {
                if answer {
                    out.set_note_prefix(Some(tool.name));
                }
                let ctx = Ctx {
                    policy: self.ctx.policy,
                    gate: self.ctx.gate,
                    out,
                    budget: self.ctx.budget,
                    stdin: &stdin,
                    json_calls: false,
                };
                let (e, status) = invoke::run_tool(&ctx, tool, Words::Positional(words));
                if answer {
                    out.set_note_prefix(None);
                }
                let cancelled = to.is_some() && self.ctx.budget.is_cancelled();
                if let Some(e) = &e
                    && !cancelled
                {
                    err(&format!("{}: {e}\n", tool.name));
                }
                if !answer {
                    let (notes, tally) = out.drain();
                    if !cancelled {
                        for n in notes {
                            self.ctx.out.note_of(tool.name, n);
                        }
                    }
                    self.ctx.out.add_redactions(&tally);
                }
                Ended::new(status, e)
            }
        };
        if out_dest == Dest::Null {
            let (_, tally) = out.drain();
            self.ctx.out.add_redactions(&tally);
        }
        ended
    }

    /// The tools and builtins a command may name, for the answer to an unknown one.
    fn offered(&self) -> String {
        let mut names: Vec<&str> = tools::TOOLS
            .iter()
            .map(|t| t.name)
            .filter(|n| *n != crate::registry::SHELL && self.ctx.policy.tools.contains(n))
            .collect();
        names.extend(BUILTINS.iter().filter(|b| **b != "exit"));
        names.join(" ")
    }

    fn builtin(
        &self,
        name: &str,
        words: &[OsString],
        out: &Output,
        err: &dyn Fn(&str),
        alone: bool,
    ) -> Ended {
        match name {
            "true" => Ended::new(EXIT_SUCCESS, None),
            "false" => Ended::new(EXIT_NEGATIVE, None),
            "echo" => {
                let mut line = words
                    .iter()
                    .map(|w| w.as_bytes())
                    .collect::<Vec<_>>()
                    .join(&b' ');
                line.push(b'\n');
                match out.push(&line) {
                    Ok(()) | Err(Stop::Truncated) => Ended::new(EXIT_SUCCESS, None),
                    Err(Stop::Error(e)) => Ended::new(EXIT_ERROR, Some(e)),
                }
            }
            "exit" => {
                let status = match words.first().map(|w| w.as_bytes()) {
                    Some(b"1") => EXIT_NEGATIVE,
                    _ => EXIT_SUCCESS,
                };
                Ended {
                    exit: alone,
                    ..Ended::new(status, None)
                }
            }
            "cd" => match self.cd_target(words) {
                Ok(node) if node.kind() == NodeKind::Directory => {
                    if alone {
                        self.ctx.gate.set_workdir(&node);
                    }
                    Ended::new(EXIT_SUCCESS, None)
                }
                Ok(_) => {
                    let e = Error::NotADirectory(crate::error::shown(
                        words.first().map_or(&b""[..], |w| w.as_bytes()),
                    ));
                    err(&format!("cd: {e}\n"));
                    Ended::new(EXIT_ERROR, Some(e))
                }
                Err(e) => {
                    err(&format!("cd: {e}\n"));
                    Ended::new(EXIT_ERROR, Some(e))
                }
            },
            _ => unreachable!("BUILTINS lists every builtin"),
        }
    }
}

/// What a command's first word names.
fn classify(name: &[u8]) -> What {
    let text = std::str::from_utf8(name).unwrap_or("");
    if let Some(b) = BUILTINS.iter().find(|b| **b == text) {
        return What::Builtin(b);
    }
    match tools::by_name(text) {
        Some(t) if t.name != crate::registry::SHELL => What::Tool(t),
        _ => What::Unknown(name.to_vec()),
    }
}

/// Refuses builtin words that readbox sh's builtins do not take.
fn check_builtin(name: &str, words: &[OsString]) -> Result<(), Error> {
    match name {
        "echo" => {
            if let Some(w) = words.first().and_then(|w| w.to_str())
                && w.len() > 1
                && w.starts_with('-')
                && w[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
            {
                return Err(Error::Usage(format!(
                    "echo takes no options here: {w}; it prints its words and a newline"
                )));
            }
        }
        "cd" if words.len() > 1 => return Err(Error::Usage("cd takes one DIR".into())),
        "cd" if words.first().is_some_and(|w| w == "-") => {
            return Err(Error::Usage(
                "cd - is not taken: name the directory (pwd shows where you are)".into(),
            ));
        }
        "exit" => match words {
            [] => {}
            [w] if w == "0" || w == "1" => {}
            _ => {
                return Err(Error::Usage(
                    "exit takes no argument, 0 or 1: readbox sh answers 0, 1, 2 or 127".into(),
                ));
            }
        },
        _ => {}
    }
    Ok(())
}

/// Where a stage reads a pipe or a `< FILE` and `tool` reads one file, a PATH left out is that
/// input: `-` goes in its place (`cat` is `cat -`, `head` is `head -`; `head 5` is not `head - 5`,
/// and grep's PATH comes after its PATTERN). The words are counted as the tool's parser counts
/// them: `--` is no word, `-` alone is one.
fn pipe_path(tool: &Tool, words: &mut Vec<OsString>) {
    if !tool.stdin {
        return;
    }
    let mut paths = tool
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kind == ParamKind::Path);
    let (Some((one_path, _)), None) = (paths.next(), paths.next()) else {
        return;
    };
    if crate::args::positional(words).is_ok_and(|p| p.len() == one_path) {
        words.push(OsString::from("-"));
    }
}

/// Where a command's standard output and standard error go after its redirections, applied
/// left to right as bash applies them (`>/dev/null 2>&1` discards both; `2>&1 >/dev/null` keeps
/// the errors).
fn destinations(cmd: &Command) -> (Dest, Dest) {
    let (mut out, mut err) = (Dest::Out, Dest::Diag);
    for r in &cmd.redirects {
        match r {
            Redirect::DiscardOut => out = Dest::Null,
            Redirect::DiscardErr => err = Dest::Null,
            Redirect::DiscardBoth => (out, err) = (Dest::Null, Dest::Null),
            Redirect::ErrToOut => err = out,
            Redirect::Input(_) => {}
        }
    }
    (out, err)
}

/// The usage error of a refused line: the first refusal, and the whole line rewritten when every
/// refused command has an equivalent that does the same in its place.
///
/// `uncertain`: a refused command was planned where the directory depends on the status of an
/// earlier command, so no rewrite can be said to do the same.
fn whole_line_refusal(line: &Line, refusals: &[Refusal], uncertain: bool) -> String {
    let first = &refusals[0];
    let cut = ["; equivalent: ", "; one call per path is equivalent: "]
        .iter()
        .filter_map(|m| first.message.find(m))
        .min()
        .unwrap_or(first.message.len());
    let mut text = format!("{}: {}", first.tool, &first.message[..cut]);
    match rewrite(line, refusals).filter(|_| !uncertain) {
        Some(hint) => text.push_str(&format!("; equivalent: {hint}")),
        None if uncertain => text.push_str(
            "; the line has no equivalent, since where it runs depends on whether an earlier command \
             succeeded",
        ),
        None => text.push_str("; the line has no equivalent"),
    }
    text
}

/// The FILE of a stage that is `cat FILE` and nothing else.
fn plain_cat(stage: &str) -> Option<&str> {
    let file = stage.strip_prefix("cat ")?;
    (!file.is_empty() && !file.contains([' ', '<', '>', '&', '|']) && file != "-").then_some(file)
}

/// A call split around its one `-` word (the piped input), when it has exactly one.
fn pipe_word(call: &str) -> Option<(&str, &str)> {
    let at = call
        .find(" - ")
        .map(|i| i + 1)
        .or_else(|| call.strip_suffix(" -").map(|rest| rest.len() + 1))?;
    let (before, after) = (&call[..at], &call[at + 1..]);
    (!after.contains(" - ") && !after.ends_with(" -") && !before.contains(" -- "))
        .then_some((before, after))
}

/// The line with each refused command replaced by its equivalent, when every one has an
/// equivalent that does the same there: a call that drops a flag does not, and several calls
/// joined by `;` only stand for a command that is a list of its own.
fn rewrite(line: &Line, refusals: &[Refusal]) -> Option<String> {
    let mut index = 0;
    let mut lists = Vec::new();
    for list in &line.lists {
        let alone = list.rest.is_empty() && !list.first.negated && list.first.commands.len() == 1;
        let mut text = String::new();
        for (k, p) in pipelines(list).enumerate() {
            if k > 0 {
                text.push_str(match list.rest[k - 1].0 {
                    Connector::And => " && ",
                    Connector::Or => " || ",
                });
            }
            if p.negated {
                text.push_str("! ");
            }
            let mut stages: Vec<String> = Vec::new();
            for c in &p.commands {
                let mut words = match refusals.iter().find(|r| r.index == index) {
                    Some(r) => {
                        let eq = r.equivalent.as_deref()?;
                        let eq = eq
                            .split("; or, for all the folder's files")
                            .next()
                            .unwrap_or(eq);
                        // The line shows what the pipe carries: the caution is for a caller
                        // who cannot see it.
                        let eq = eq.split("; - reads the pipe").next().unwrap_or(eq);
                        if eq.contains("dropped:") || eq.contains(" (and ") {
                            return None;
                        }
                        if eq.contains("; ") && !alone {
                            return None;
                        }
                        // `cat FILE | wc -l`: the pipe holds what cat's cap let through, so the
                        // call that reads the pipe is the call that reads FILE itself.
                        let cat_file = stages.last().and_then(|s| plain_cat(s)).map(str::to_string);
                        match (cat_file, pipe_word(eq)) {
                            (Some(file), Some((before, after))) => {
                                stages.pop();
                                format!("{before}{file}{after}")
                            }
                            _ => eq.to_string(),
                        }
                    }
                    None => c
                        .words
                        .iter()
                        .map(|w| w.source.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                };
                for r in &c.redirects {
                    words.push(' ');
                    words.push_str(&match r {
                        Redirect::Input(w) => format!("< {}", w.source),
                        Redirect::DiscardOut => ">/dev/null".into(),
                        Redirect::DiscardErr => "2>/dev/null".into(),
                        Redirect::DiscardBoth => "&>/dev/null".into(),
                        Redirect::ErrToOut => "2>&1".into(),
                    });
                }
                index += 1;
                stages.push(words);
            }
            text.push_str(&stages.join(" | "));
        }
        lists.push(text);
    }
    Some(lists.join("; "))
}
