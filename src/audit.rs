//! The audit log (docs/contract.md#audit-log): two JSON lines per call.
//!
//! Each line is appended with a single `write` to a file opened with `O_APPEND`, so that concurrent
//! calls never interleave within a line. The first line is written when the call starts, before any
//! output; the second, with the same `id`, when it ends (also at the deadline, by the watchdog).
//!
//! The file is opened and the first line written before the tool runs: a log that cannot be
//! opened or written makes the call an `io:` error with no output.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};

use crate::envelope::Summary;
use crate::error::Error;

/// An open audit log.
#[derive(Debug)]
pub struct Log {
    file: File,
}

/// What the log says of a call, gathered when it starts.
#[derive(Debug, Clone)]
pub struct Record {
    id: String,
    tool: String,
    arguments: Value,
    workdir: PathBuf,
    start: Instant,
}

impl Record {
    /// The record of a call of `tool` (or a meta command) with `words`, in `workdir`. For `call`,
    /// whose words are a tool name and a JSON object, the tool is that name and the arguments
    /// that object.
    pub fn new(tool: &str, words: &[OsString], workdir: &Path, start: Instant) -> Record {
        // A word that is not UTF-8 is written in `$'…'` quoting, so the record tells apart the
        // names it was given (docs/contract.md#names).
        let text: Vec<String> = words
            .iter()
            .map(|w| match w.to_str() {
                Some(t) => t.to_string(),
                None => String::from_utf8_lossy(&crate::names::quoted(w.as_bytes())).into_owned(),
            })
            .collect();
        let (tool, arguments) = match (tool, text.as_slice()) {
            ("call", [name, object]) => (
                name.clone(),
                serde_json::from_str::<Value>(object).unwrap_or_else(|_| json!(object)),
            ),
            _ => (tool.to_string(), json!(text)),
        };
        Record {
            id: call_id(),
            tool,
            arguments,
            workdir: workdir.to_path_buf(),
            start,
        }
    }

    /// The call's id, as both of its lines carry it.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// 128 random bits in hex; the process id and the clock where the kernel gives no randomness.
fn call_id() -> String {
    let mut bytes = [0u8; 16];
    match rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty()) {
        Ok(16) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        _ => {
            let now = jiff::Timestamp::now();
            format!("{:x}-{:x}", std::process::id(), now.as_nanosecond())
        }
    }
}

impl std::os::fd::AsFd for Log {
    /// The open file (for a Landlock rule that leaves it, and only it, writable).
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl Log {
    /// Opens (creating if needed) the log for appending.
    ///
    /// # Errors
    /// `io: audit log: …` when it cannot be opened (a folder, a missing parent, no permission) or
    /// is not a regular file.
    pub fn open(path: &Path) -> Result<Log, Error> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(
                (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32,
            )
            .open(path)
            .map_err(|e| Error::Io(format!("audit log: {}", crate::error::describe_io(&e))))?;
        // A FIFO or a device is never written to (nor waited on).
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err(Error::Io("audit log: not a regular file".into()));
        }
        Ok(Log { file })
    }

    /// Another handle on the same open log, for a call that starts once Landlock is in force,
    /// which refuses opening the file again (each command line of a `readbox sh` session).
    ///
    /// # Errors
    /// `io: audit log: …` when the descriptor cannot be duplicated (too many open files).
    pub fn try_clone(&self) -> Result<Log, Error> {
        let file = self
            .file
            .try_clone()
            .map_err(|e| Error::Io(format!("audit log: {}", crate::error::describe_io(&e))))?;
        Ok(Log { file })
    }

    /// Appends the first line of a call: its id, the time, the tool, its arguments, the working
    /// directory and the uid.
    ///
    /// # Errors
    /// `io: audit log: …` when the line cannot be written whole.
    pub fn begin(&self, rec: &Record) -> Result<(), Error> {
        self.append(&json!({
            "id": rec.id,
            "event": "start",
            "time": jiff::Timestamp::now().to_string(),
            "tool": rec.tool,
            "arguments": rec.arguments,
            "working_directory": rec.workdir.to_string_lossy(),
            "uid": rustix::process::getuid().as_raw(),
        }))
    }

    /// Appends the last line of a call: its id, the exit status, the error, the output's size,
    /// whether it was cut, the secrets redacted and the duration.
    ///
    /// # Errors
    /// `io: audit log: …` when the line cannot be written whole.
    pub fn end(
        &self,
        rec: &Record,
        status: i32,
        error: Option<&Error>,
        summary: Summary,
    ) -> Result<(), Error> {
        self.append(&json!({
            "id": rec.id,
            "event": "end",
            "time": jiff::Timestamp::now().to_string(),
            "tool": rec.tool,
            "exit_status": status,
            "error": error.map(ToString::to_string),
            "output_bytes": summary.output_bytes,
            "truncated": summary.truncated && error.is_none(),
            "redactions": summary.redactions,
            "duration_ms": rec.start.elapsed().as_millis() as u64,
        }))
    }

    fn append(&self, line: &Value) -> Result<(), Error> {
        let mut text = crate::envelope::json_document(line);
        text.push('\n');
        let written = (&self.file)
            .write(text.as_bytes())
            .map_err(|e| Error::Io(format!("audit log: {}", crate::error::describe_io(&e))))?;
        if written != text.len() {
            return Err(Error::Io("audit log: short write".into()));
        }
        Ok(())
    }
}
