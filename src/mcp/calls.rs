//! Each `tools/call` as a child `readbox call TOOL JSON` of this binary (docs/contract.md#mcp):
//! the workers that run the queued calls, the child and its deadline, and the child's envelope
//! mapped to a tool result.
//!
//! Invariant: a child's process id is known to the cancelling side only until the child is
//! waited for, so a kill never reaches a reused id; a cancelled call is never answered.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::roots::Narrowing;
use super::{Shared, lock, response, stateless};
use crate::error::Error;
use crate::limits::{Deadline, format_seconds};
use crate::policy::NARROW_ROOTS_VAR;
use crate::tools::Tool;

/// How long past its timeout a child may take to answer before it is killed and the call
/// answers `timeout:` (its own watchdog answers within 0.4 s of its deadline; docs/contract.md#mcp).
const KILL_MARGIN: Duration = Duration::from_millis(500);

/// How long a killed child is waited for before it is left to a thread that reaps it: a process
/// blocked in the kernel may take long to die, and its call's answer and slot must not wait.
const REAP_WAIT: Duration = Duration::from_millis(100);

/// A call in flight: whether it was cancelled, and its child while it runs (set only until the
/// child is waited for, so that a kill never reaches a reused process id).
#[derive(Debug, Default)]
pub(super) struct Slot {
    pub(super) cancelled: bool,
    pub(super) child: Option<rustix::process::Pid>,
}

/// A queued call.
pub(super) struct Job {
    pub(super) id: Value,
    pub(super) key: String,
    pub(super) tool: &'static Tool,
    pub(super) arguments: String,
    /// The roots the request itself offers (stateless form), if any; the session's roots,
    /// once known, narrow the call too, never fewer (docs/contract.md#mcp).
    pub(super) narrowing: Option<Narrowing>,
    pub(super) stateless: bool,
    pub(super) slot: Arc<Mutex<Slot>>,
}

/// The calls waiting for a worker, in the order they came.
#[derive(Default)]
pub(super) struct Queue {
    pub(super) jobs: VecDeque<Job>,
}

impl Shared {
    /// A worker: runs queued calls until the server shuts down.
    pub(super) fn work(&self) {
        loop {
            let job = {
                let mut q = lock(&self.queue);
                loop {
                    if self.shutdown.load(Ordering::SeqCst) {
                        return;
                    }
                    if let Some(j) = q.jobs.pop_front() {
                        break j;
                    }
                    q = self
                        .queue_cv
                        .wait(q)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            self.run(job);
        }
    }

    /// Waits until the session's roots are known, at most until `deadline`.
    fn session_roots(&self, deadline: Instant) -> Option<Narrowing> {
        let mut r = lock(&self.roots);
        loop {
            if self.shutdown.load(Ordering::SeqCst) {
                return None;
            }
            if !r.capability {
                return Some(Narrowing::Configured);
            }
            if r.pending.is_none()
                && let Some(n) = &r.known
            {
                return Some(n.clone());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            r = self
                .roots_cv
                .wait_timeout(r, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Runs one call and answers it, unless it was cancelled.
    fn run(&self, job: Job) {
        let wait = Duration::try_from_secs_f64(self.timeout).unwrap_or(KILL_MARGIN);
        let narrowing =
            self.session_roots(Instant::now() + wait)
                .map(|session| match &job.narrowing {
                    Some(own) => own.and(&session),
                    None => session,
                });
        let result = match narrowing {
            None => tool_error(Error::Timeout(format!(
                "the client did not answer roots/list within {} s",
                format_seconds(self.timeout)
            ))),
            Some(n) => self.execute(&job, &n),
        };
        let cancelled = lock(&job.slot).cancelled;
        lock(&self.calls).remove(&job.key);
        if cancelled || self.shutdown.load(Ordering::SeqCst) {
            return;
        }
        let result = if job.stateless {
            stateless(result)
        } else {
            result
        };
        self.out.send(&response(&job.id, result));
    }

    /// Starts the child, reads its envelope (killing it past its timeout and the margin), and
    /// maps the envelope to a tool result.
    fn execute(&self, job: &Job, narrowing: &Narrowing) -> Value {
        let mut cmd = Command::new(&self.exe);
        cmd.arg0("readbox")
            .arg("call")
            .arg(job.tool.name)
            .arg(&job.arguments)
            // The envelope is what is parsed here, whatever format the policy names.
            .env("READBOX_FORMAT", "json")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let join = |dirs: &[PathBuf]| -> OsString {
            let joined: Vec<&[u8]> = dirs.iter().map(|d| d.as_os_str().as_bytes()).collect();
            OsStr::from_bytes(&joined.join(&b':')).to_os_string()
        };
        // The roots the call reads beneath: the configured ones, narrowed to the client's; or,
        // when none are configured, the client's own (docs/contract.md#mcp).
        let roots: &[PathBuf] = match (narrowing, &self.configured) {
            (Narrowing::To(dirs), Some(_)) => {
                cmd.env(NARROW_ROOTS_VAR, join(dirs));
                dirs
            }
            (Narrowing::Configured, Some(configured)) => configured,
            (Narrowing::To(dirs), None) if !dirs.is_empty() => {
                cmd.env("READBOX_ROOTS", join(dirs));
                dirs
            }
            (_, None) => {
                let why = match narrowing {
                    Narrowing::To(_) => format!(
                        "none of the roots the client offers is a directory readbox may read; {}",
                        super::NO_ROOTS
                    ),
                    Narrowing::Configured => super::NO_ROOTS.to_string(),
                };
                return tool_error(Error::Denied(why));
            }
        };
        if !roots.iter().any(|r| self.workdir.starts_with(r))
            && let Some(first) = roots.first()
        {
            cmd.env("READBOX_WORKDIR", first);
        }
        let start = Instant::now();
        let mut child: Child = {
            let mut slot = lock(&job.slot);
            if slot.cancelled {
                return json!({});
            }
            match cmd.spawn() {
                Ok(c) => {
                    slot.child = Some(rustix::process::Pid::from_child(&c));
                    c
                }
                Err(e) => {
                    return tool_error(Error::Io(format!("cannot start readbox call: {e}")));
                }
            }
        };
        let kill_at = start
            + Duration::try_from_secs_f64(self.timeout).unwrap_or(Duration::from_secs(86400))
            + KILL_MARGIN;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (read, bytes) = read_until(stdout, kill_at, self.max_envelope);
        {
            let slot = lock(&job.slot);
            if read != Reading::Done
                && let Some(pid) = slot.child
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        // A child that closed its output but cannot exit (a thread of it blocked in the kernel)
        // is killed at the deadline and left to a reaper: its answer and its slot do not wait.
        let ended = if read == Reading::Done {
            exited_by(&mut child, &job.slot, kill_at)
        } else {
            None
        };
        let status = match ended {
            Some(status) => status,
            None => {
                // From here the pid is forgotten: the reaper may reap it at any time.
                if let Some(pid) = lock(&job.slot).child.take() {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
                match reap_soon(child) {
                    Some(status) => status,
                    // Not reaped yet: an envelope read whole speaks for itself (an error in it
                    // is exit status 2); otherwise killed by SIGKILL (its wait status).
                    None if read == Reading::Done => Ok(ExitStatus::from_raw(2 << 8)),
                    None => Ok(ExitStatus::from_raw(9)),
                }
            }
        };
        match (read, status) {
            (Reading::Overdue, _) => tool_error(Deadline::new(start, self.timeout).error()),
            (Reading::TooLong, _) => tool_error(Error::Io("the answer was too long".into())),
            (Reading::Failed, _) => tool_error(Error::Io("the answer could not be read".into())),
            (Reading::Done, Ok(st)) => envelope_to_result(job.tool, &bytes, st),
            (Reading::Done, Err(e)) => tool_error(Error::Io(format!("readbox call: {e}"))),
        }
    }
}

/// The status of `child` once it exits, if that is before `deadline`. It is waited for under
/// the slot's lock, and its pid taken from the slot with it, so a cancel never kills a pid that
/// was reaped.
fn exited_by(
    child: &mut Child,
    slot: &Mutex<Slot>,
    deadline: Instant,
) -> Option<std::io::Result<ExitStatus>> {
    loop {
        {
            let mut slot = lock(slot);
            match child.try_wait() {
                Ok(None) => {}
                done => {
                    slot.child = None;
                    return done.transpose();
                }
            }
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The status of a killed `child` if it ends within [`REAP_WAIT`]; otherwise a thread waits for
/// it (so it does not stay a zombie) and `None` says the call goes on without it.
fn reap_soon(mut child: Child) -> Option<std::io::Result<ExitStatus>> {
    let until = Instant::now() + REAP_WAIT;
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Some(Ok(st)),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => break,
            Err(e) => return Some(Err(e)),
        }
    }
    let spawned = std::thread::Builder::new()
        .name("readbox-mcp-reaper".into())
        .spawn(move || {
            let _ = child.wait();
        });
    drop(spawned);
    None
}

/// How reading a child's answer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// End of file: the child closed its output (it is ending).
    Done,
    /// The child outlived its timeout and the margin.
    Overdue,
    /// More than an envelope can hold.
    TooLong,
    /// A read error.
    Failed,
}

/// Reads `pipe` to its end, or until `kill_at`, or past `max` bytes.
fn read_until(
    mut pipe: std::process::ChildStdout,
    kill_at: Instant,
    max: u64,
) -> (Reading, Vec<u8>) {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let left = kill_at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (Reading::Overdue, bytes);
        }
        let timeout = Timespec::try_from(left).ok();
        let mut fds = [PollFd::new(&pipe, PollFlags::IN)];
        match poll(&mut fds, timeout.as_ref()) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return (Reading::Failed, bytes),
        }
        match pipe.read(&mut chunk) {
            Ok(0) => return (Reading::Done, bytes),
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() as u64 > max {
                    return (Reading::TooLong, bytes);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return (Reading::Failed, bytes),
        }
    }
}

/// A tool result that carries only an error (the call could not give its own answer).
fn tool_error(e: Error) -> Value {
    json!({
        "content": [{"type": "text", "text": e.to_string()}],
        "isError": true,
    })
}

/// What an empty output means, per tool, said in a few words.
fn empty_answer(tool: &str) -> &'static str {
    match tool {
        "grep" => "no line matched",
        "diff" => "no differences",
        "ls" | "find" => "no entries",
        "cat" | "head" | "tail" => "no lines",
        _ => "no output",
    }
}

/// Maps a child's envelope to a `tools/call` result (docs/contract.md#mcp): `output` is the
/// first text block, followed in the same block by the error line when there is one
/// (`isError: true`); the notes, one per line, are a second text block; wc and stat also give
/// their JSON as `structuredContent`; the exit status and truncation go in `_meta`.
fn envelope_to_result(tool: &Tool, stdout: &[u8], status: ExitStatus) -> Value {
    let code = status.code();
    let ended = || match (code, status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(sig)) => format!("signal {sig}"),
        (None, None) => "no status".to_string(),
    };
    let envelope: Option<Map<String, Value>> = std::str::from_utf8(stdout)
        .ok()
        .and_then(|s| serde_json::from_str(s.trim_end()).ok());
    let parsed = envelope.as_ref().and_then(|e| {
        let output = e.get("output")?.as_str()?;
        let error = match e.get("error")? {
            Value::Null => None,
            Value::String(s) => Some(s.as_str()),
            _ => return None,
        };
        let truncated = e.get("truncated")?.as_bool()?;
        let notes: Vec<&str> = match e.get("notes") {
            None => Vec::new(),
            Some(Value::Array(a)) => a.iter().map(Value::as_str).collect::<Option<_>>()?,
            Some(_) => return None,
        };
        Some((output, error, truncated, notes))
    });
    let Some((output, error, truncated, notes)) = parsed else {
        return tool_error(Error::Io(format!(
            "readbox call ended without an answer ({})",
            ended()
        )));
    };
    let mut text = output.to_string();
    // An empty text block reads as nothing at all to a model: the empty answer is said in
    // words, and `_meta.exitStatus` keeps the status (docs/contract.md#mcp).
    if text.is_empty() && error.is_none() {
        text = empty_answer(tool.name).to_string();
    }
    // `sh`'s output holds its error line already, where a terminal shows it (a timeout's is
    // the watchdog's, and is not there).
    let shell = matches!(tool.run, crate::tools::Runs::Shell);
    if let Some(e) = error.filter(|e| !(shell && text.contains(e))) {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(e);
    }
    let mut content = vec![json!({"type": "text", "text": text})];
    if !notes.is_empty() {
        content.push(json!({"type": "text", "text": notes.join("\n")}));
    }
    let mut result = json!({
        "content": content,
        "isError": error.is_some(),
    });
    if error.is_none()
        && !truncated
        && crate::meta::output_schema(tool).is_some()
        && let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(output.trim_end())
    {
        result["structuredContent"] = v;
    }
    result["_meta"] = json!({"exitStatus": code, "truncated": truncated});
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools;

    fn status(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    #[test]
    fn the_error_line_of_sh_is_shown_once() {
        let tool = tools::by_name("sh").unwrap();
        let env =
            br#"{"output":"a\ncat: not found: x\n","error":"not found: x","truncated":false}"#;
        let r = envelope_to_result(tool, env, status(2));
        assert_eq!(r["content"][0]["text"], json!("a\ncat: not found: x\n"));
        assert_eq!(r["isError"], json!(true));
        let env = br#"{"output":"a\n","error":"timeout: the call took longer than 1 s","truncated":false}"#;
        let r = envelope_to_result(tool, env, status(2));
        assert_eq!(
            r["content"][0]["text"],
            json!("a\ntimeout: the call took longer than 1 s")
        );
    }

    #[test]
    fn an_error_follows_the_partial_output_in_the_first_block() {
        let tool = tools::by_name("grep").unwrap();
        let env = br#"{"output":"a:1:x","error":"timeout: the call took longer than 1 s","truncated":false}"#;
        let r = envelope_to_result(tool, env, status(2));
        assert_eq!(
            r["content"],
            json!([{"type": "text", "text": "a:1:x\ntimeout: the call took longer than 1 s"}])
        );
        assert_eq!(r["isError"], json!(true));
        assert_eq!(r["_meta"], json!({"exitStatus": 2, "truncated": false}));
        let env = br#"{"output":"","error":"denied: ../x","truncated":false}"#;
        let r = envelope_to_result(tool, env, status(2));
        assert_eq!(r["content"][0]["text"], json!("denied: ../x"));
    }

    #[test]
    fn notes_are_one_second_block() {
        let tool = tools::by_name("cat").unwrap();
        let env = br#"{"output":"a\n","error":null,"truncated":true,"notes":["one","two"]}"#;
        let r = envelope_to_result(tool, env, status(0));
        assert_eq!(
            r["content"],
            json!([{"type": "text", "text": "a\n"}, {"type": "text", "text": "one\ntwo"}])
        );
        assert_eq!(r["isError"], json!(false));
        assert_eq!(r["_meta"], json!({"exitStatus": 0, "truncated": true}));
        assert!(r.get("structuredContent").is_none());
    }

    #[test]
    fn wc_gives_structured_content_unless_cut() {
        let tool = tools::by_name("wc").unwrap();
        let env = br#"{"output":"{\"lines\": 1, \"words\": 2, \"bytes\": 8}\n","error":null,"truncated":false}"#;
        let r = envelope_to_result(tool, env, status(0));
        assert_eq!(
            r["structuredContent"],
            json!({"lines": 1, "words": 2, "bytes": 8})
        );
        let env = br#"{"output":"{\"lines\": 1","error":null,"truncated":true}"#;
        let r = envelope_to_result(tool, env, status(0));
        assert!(r.get("structuredContent").is_none());
    }

    #[test]
    fn no_envelope_is_an_io_error() {
        let tool = tools::by_name("cat").unwrap();
        let r = envelope_to_result(tool, b"", ExitStatus::from_raw(9));
        assert_eq!(
            r["content"][0]["text"],
            json!("io: readbox call ended without an answer (signal 9)")
        );
        assert_eq!(r["isError"], json!(true));
    }

    #[test]
    fn a_child_that_outlives_the_deadline_is_given_up() {
        let mut child = Command::new("sleep")
            .arg("30")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let pipe = child.stdout.take().unwrap();
        let (how, bytes) = read_until(pipe, Instant::now() + Duration::from_millis(100), 10);
        assert_eq!((how, bytes.len()), (Reading::Overdue, 0));
        child.kill().unwrap();
        child.wait().unwrap();
        let mut child = Command::new("printf")
            .arg("0123456789abc")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let pipe = child.stdout.take().unwrap();
        let far = Instant::now() + Duration::from_secs(60);
        assert_eq!(read_until(pipe, far, 10).0, Reading::TooLong);
        child.wait().unwrap();
    }
}
