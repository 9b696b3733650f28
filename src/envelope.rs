//! The only writer of stdout: the envelope of every call, and the messages of `readbox mcp`.
//!
//! It writes the JSON envelope or the text format, the output cap, the whole-line cut, notes and
//! the exit status (docs/contract.md#envelope, #limits), and the line-framed messages of
//! `readbox mcp` ([`write_line`]). No other module touches fd 1, so the escapes of
//! `envelope/escape.rs` hold for everything a reader of stdout sees.
//!
//! Tools never print. They push bytes into the call's [`Output`], which streams them: in json
//! format the envelope's head `{"output":"` goes out first, then the output, escaped, as it is
//! produced, then the closing fields. Memory therefore does not grow with `max_output_bytes`: at
//! most [`LONG_LINE`] bytes of a line are held back, and only near the cap, where the cut must
//! fall after the last whole line that fits.
//!
//! Invariant: exactly one answer is written per call, once. Whichever of the main thread and the
//! timeout watchdog calls [`Output::finish`] first closes the envelope; pushes after that are
//! refused, so nothing follows the closing brace. A push holds the output while it writes, so a
//! stdout that nobody reads can hold it for good: the watchdog and the panic hook therefore wait
//! only so long for it ([`Output::try_close`]), and then leave the envelope unclosed
//! ([`Output::abandon`]) rather than wait with it.

use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::redact::Tally;

mod escape;

use escape::{cut_escaped, decode, text_boundary};
pub use escape::{escape_controls, escape_json, is_hidden_control, json_document, json_string};

/// How answers are written (docs/contract.md#envelope).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One line of JSON on stdout: `{"output": …, "error": …, "truncated": …}`.
    Json,
    /// The output's raw bytes on stdout, the error on stderr as `TOOL: error text`.
    Text,
}

impl Format {
    /// Parses `json` or `text` (the values of `READBOX_FORMAT` and `format`).
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "json" => Some(Format::Json),
            "text" => Some(Format::Text),
            _ => None,
        }
    }

    /// The setting's spelling, as `parse` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Text => "text",
        }
    }
}

/// Why a tool stopped before its natural end: truncation (not an error) or an [`Error`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The output reached `max_output_bytes` (or stdout was closed); the work ends cleanly.
    Truncated,
    /// The call failed; the output so far is kept.
    Error(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Error(e)
    }
}

/// A line longer than this many bytes (counting its `\n`) may be cut inside when the cap falls
/// in it; a shorter one is left out whole (docs/contract.md#envelope).
pub const LONG_LINE: usize = 64 * 1024;

/// Stdout is written in pieces of about this size.
const FLUSH: usize = 64 * 1024;

/// The most one `write` to stdout takes, unless stdout is the null device ([`write_piece`]): a
/// reader that is slow but reads takes one in well under the watchdog's grace
/// ([`crate::limits::LOCK_GRACE`]), and the deadline is looked at between them.
const PIECE: usize = 16 * 1024;

/// How long output that waits to be written still goes out once the deadline passed: all of it
/// for a reader that keeps up, a part for a slow one, and the envelope is whole in time either way
/// for a reader that takes a [`PIECE`] within the rest of [`crate::limits::LOCK_GRACE`].
const WRITE_GRACE: Duration = Duration::from_millis(50);

/// The head of the json envelope, written before any output.
const HEAD: &[u8] = b"{\"output\":\"";

/// The output of one call, shared by the tool (which pushes) and the watchdog (which may finish).
pub struct Output {
    format: Format,
    /// How tools write into it ([`Output::style`]): the format, except under `readbox sh`, whose
    /// tools always write as in the text format.
    style: Format,
    /// `max_output_bytes`: the cap on the UTF-8 bytes (json) or raw bytes (text) of `output`.
    cap: usize,
    state: Mutex<State>,
    /// The summary as of the last push, readable while a writer holds `state`.
    so_far: SoFar,
    /// When the end began to wait for the output ([`Output::try_close`]): pushes are refused from
    /// then on, without waiting for `state`, so that a writer that pushes again and again lets go
    /// of it for the end, and a long write stops within [`WRITE_GRACE`] (shared with the sink).
    ending: Arc<OnceLock<Instant>>,
}

/// What [`Output::summary_so_far`] reports, kept outside the lock.
#[derive(Default)]
struct SoFar {
    output_bytes: AtomicUsize,
    truncated: AtomicBool,
    redactions: AtomicU64,
}

#[derive(Default)]
struct State {
    sink: Sink,
    /// Bytes of `output` so far, as counted against the cap, held-back bytes included.
    len: usize,
    /// Bytes of the current line so far (shown, held back, or past the cap).
    line_len: usize,
    /// Whether a whole line was shown: from then on a cut falls between lines.
    has_line: bool,
    /// The held-back end of the current line (decoded UTF-8 in json format), at most
    /// [`LONG_LINE`] bytes.
    pending: Vec<u8>,
    /// json: the start of a UTF-8 sequence that the next push may complete (at most 3 bytes).
    carry: Vec<u8>,
    /// The cap fell inside the current line; it is held to learn whether it is a long line.
    over: bool,
    truncated: bool,
    /// The cut fell inside a line (the first one, or a long one) rather than between lines.
    cut_inside: bool,
    finished: bool,
    notes: Vec<String>,
    /// The tool's note on where truncated output stopped, written first among the notes.
    truncation_note: Option<String>,
    /// Secret values replaced in the output (docs/contract.md#redaction).
    redactions: Tally,
    /// Under `readbox sh`: the name of the tool whose notes are being added, put before each.
    note_prefix: Option<&'static str>,
}

/// Where a sink's bytes go.
#[derive(Default)]
enum Target {
    /// Standard output (fd 1): a call's answer.
    #[default]
    Stdout,
    /// The write end of a pipe to the next stage of a `readbox sh` pipeline; every byte written
    /// is added to the counter, the read budget's allowance for what the next stage reads
    /// ([`crate::limits::Budget::piped`]).
    Pipe(std::os::fd::OwnedFd, Arc<AtomicU64>),
    /// Nowhere: `>/dev/null` in `readbox sh`.
    Null,
}

/// Where committed output goes: stdout (or a stage's pipe), through one buffer.
#[derive(Default)]
struct Sink {
    json: bool,
    target: Target,
    buf: Vec<u8>,
    /// json: the envelope's head is in `buf` or written.
    opened: bool,
    /// Something was written to stdout (json: the head at least).
    sent: bool,
    /// Stdout was closed by its reader: nothing more is written.
    closed: bool,
    /// [`Output::ending`]: when the end began to wait for the output.
    ending: Arc<OnceLock<Instant>>,
    /// Output left unwritten when a write stopped at the deadline, as the cap counts it (decoded
    /// UTF-8 in json, raw bytes in text); the output takes it back from what it counted.
    dropped: usize,
    /// A write was cut at the deadline with output left out: later output would be out of place
    /// after the gap, so none is written (only the envelope's end).
    cut: bool,
    /// The most one `write` takes ([`write_piece`]).
    piece: usize,
    /// Unit tests: how long each write takes, as for a slow reader.
    #[cfg(test)]
    pace: Duration,
    /// Unit tests read what would have gone to stdout here.
    #[cfg(test)]
    written: Vec<u8>,
}

impl Sink {
    fn open(&mut self) {
        if self.json && !self.opened {
            self.buf.extend_from_slice(HEAD);
            self.opened = true;
        }
    }

    /// Appends output that is already counted: escaped in json format (where it is valid UTF-8),
    /// raw in text format.
    fn text(&mut self, text: &[u8]) {
        self.open();
        if self.json {
            escape_json(&mut self.buf, text, true);
        } else if text.len() >= FLUSH / 2 {
            // Large pieces (cat's batches of whole lines, a little under a read block) go out
            // as they are, without a copy.
            self.flush();
            self.write_until_ending(text);
            return;
        } else {
            self.buf.extend_from_slice(text);
        }
        if self.buf.len() >= FLUSH {
            self.flush();
        }
    }

    /// Writes what `buf` holds, or, once the call is ending, as much as [`Sink::write_until_ending`]
    /// lets through.
    fn flush(&mut self) {
        if !self.buf.is_empty() {
            let buf = std::mem::take(&mut self.buf);
            self.write_until_ending(&buf);
            self.buf = buf;
            self.buf.clear();
        }
    }

    /// Writes all of `buf`, whatever the time: the end of the answer.
    fn flush_all(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        self.write(&buf);
    }

    /// Writes `bytes` (output as `buf` holds it: whole escapes and characters in json) in pieces
    /// of at most `piece` bytes. Once the call has been ending for [`WRITE_GRACE`], it stops at
    /// the end of the character or escape the last piece ended in (never inside the json head),
    /// and counts what it left out in `dropped`: a reader that reads slowly still gets a whole
    /// envelope, in time.
    fn write_until_ending(&mut self, bytes: &[u8]) {
        if self.cut {
            self.dropped += self.unwritten(bytes);
            return;
        }
        let mut at = 0;
        while at < bytes.len() && !self.closed {
            if self
                .ending
                .get()
                .is_some_and(|t| t.elapsed() >= WRITE_GRACE)
            {
                let keep = if self.json && !self.sent {
                    HEAD.len()
                } else {
                    at
                };
                let end = if self.json {
                    cut_escaped(bytes, keep.max(at)).0
                } else {
                    // To the end of the character in progress, as the text goes.
                    let mut end = at;
                    while end < bytes.len().min(at + 3) && bytes[end] & 0xC0 == 0x80 {
                        end += 1;
                    }
                    end
                };
                let left = self.unwritten(&bytes[end..]);
                self.write(&bytes[at..end]);
                self.dropped += left;
                self.cut = left > 0;
                return;
            }
            let end = at.saturating_add(self.piece).min(bytes.len());
            self.write(&bytes[at..end]);
            at = end;
        }
    }

    /// What `rest`, left unwritten, counts for against the cap: decoded UTF-8 in json, raw
    /// bytes in text.
    fn unwritten(&self, rest: &[u8]) -> usize {
        if self.json {
            cut_escaped(rest, 0).1
        } else {
            rest.len()
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        self.sent |= !bytes.is_empty();
        match &self.target {
            Target::Stdout => {
                #[cfg(test)]
                {
                    std::thread::sleep(self.pace);
                    self.written.extend_from_slice(bytes);
                }
                #[cfg(not(test))]
                if !self.closed && !write_stdout(bytes) {
                    // The answer cannot be delivered, so the work stops quietly, as coreutils'
                    // tools do on EPIPE.
                    self.closed = true;
                }
            }
            Target::Pipe(fd, written) => {
                // Allowed before they are written: the next stage may read and charge them
                // before this write returns. The next stage stopped reading (head has its
                // lines): this one stops too.
                if !self.closed {
                    written.fetch_add(bytes.len() as u64, Ordering::SeqCst);
                }
                if self.closed || !write_all(fd.as_fd(), bytes) {
                    self.closed = true;
                }
            }
            Target::Null => {}
        }
    }
}

/// Writes all of `bytes` to standard output (fd 1, unbuffered); `false` when it cannot take
/// them: a closed pipe (its reader left) or another failure.
fn write_stdout(bytes: &[u8]) -> bool {
    write_all(rustix::stdio::stdout(), bytes)
}

/// Writes all of `bytes` to `stdout` (standard output, or a pipe of `readbox sh`); `false` when
/// it cannot take them.
fn write_all(stdout: std::os::fd::BorrowedFd<'_>, mut bytes: &[u8]) -> bool {
    use rustix::io::Errno;
    while !bytes.is_empty() {
        match rustix::io::write(stdout, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => {
                // A non-blocking stdout: wait until it takes more.
                let mut fds = [rustix::event::PollFd::new(
                    &stdout,
                    rustix::event::PollFlags::OUT,
                )];
                let _ = rustix::event::poll(&mut fds, None);
            }
            Err(_) => return false,
        }
    }
    true
}

/// Writes `msg` to standard output as one line of JSON: the framing of `readbox mcp`'s messages.
///
/// The line has the envelope's escapes ([`json_document`]); the messages are `readbox mcp`'s
/// JSON-RPC ones (docs/contract.md#mcp). The line goes out in as few writes as the pipe takes, not
/// atomically: callers that write from several threads hold one lock around each call, so that
/// lines never interleave.
///
/// Returns `false` when standard output cannot take it (its reader left); nothing written later
/// can reach the reader either.
pub fn write_line(msg: &serde_json::Value) -> bool {
    let mut line = json_document(msg);
    line.push('\n');
    write_stdout(line.as_bytes())
}

/// The most one `write` to standard output takes. The null device takes any write at once: one
/// `write` per block, as `cat` makes. Anything else may take what it is given only as fast as
/// its reader reads (a pipe, a socket, a terminal) or its file system stores it (a regular file
/// on FUSE or NFS), so writes to it are [`PIECE`] bytes at most, and the deadline is looked at
/// between them.
fn write_piece() -> usize {
    use rustix::fs::{FileType, fstat, major, minor};
    // The unit tests pace their writes as a slow reader of a pipe would.
    if cfg!(test) {
        return PIECE;
    }
    let Ok(st) = fstat(rustix::stdio::stdout()) else {
        return PIECE;
    };
    let null = |dev| major(dev) == 1 && minor(dev) == 3;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::CharacterDevice if null(st.st_rdev) => usize::MAX,
        _ => PIECE,
    }
}

/// Whether standard output is a terminal (help and the version are plain text there).
pub fn stdout_is_terminal() -> bool {
    rustix::termios::isatty(rustix::stdio::stdout())
}

/// What a finished call reports, e.g. to the audit log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// The bytes of `output` (UTF-8 in json format, raw in text format).
    pub output_bytes: usize,
    /// Whether `output` was cut at the cap.
    pub truncated: bool,
    /// Secret values replaced by `[REDACTED:RULE]`.
    pub redactions: u64,
}

impl Output {
    /// An empty output written in `format`, capped at `cap` bytes.
    pub fn new(format: Format, cap: usize) -> Output {
        Output::to(Target::Stdout, format, cap)
    }

    /// The output of a stage of a `readbox sh` pipeline that the next stage reads: text, uncapped
    /// (the answer's own output caps what is shown), written to the pipe `fd`, each byte added
    /// to `written`. A push fails with [`Stop::Truncated`] once the next stage stopped reading.
    pub fn to_pipe(fd: std::os::fd::OwnedFd, written: Arc<AtomicU64>) -> Output {
        Output::to(Target::Pipe(fd, written), Format::Text, usize::MAX)
    }

    /// An output that discards what it is given (`>/dev/null` in `readbox sh`).
    pub fn discard() -> Output {
        Output::to(Target::Null, Format::Text, usize::MAX)
    }

    fn to(target: Target, format: Format, cap: usize) -> Output {
        let ending = Arc::new(OnceLock::new());
        let piece = match target {
            Target::Stdout => write_piece(),
            _ => PIECE,
        };
        Output {
            format,
            style: format,
            cap,
            state: Mutex::new(State {
                sink: Sink {
                    json: format == Format::Json,
                    target,
                    ending: ending.clone(),
                    piece,
                    ..Sink::default()
                },
                ..State::default()
            }),
            so_far: SoFar::default(),
            ending,
        }
    }

    /// This output, with tools writing into it as in `style` whatever it is encoded in:
    /// `readbox sh` answers in json with the text its tools print (docs/contract.md#readbox-sh).
    pub fn with_style(mut self, style: Format) -> Output {
        self.style = style;
        self
    }

    /// The format this output is encoded in (what the cap counts: decoded UTF-8 in json, raw
    /// bytes in text).
    pub fn format(&self) -> Format {
        self.format
    }

    /// How a tool writes its answer into this output: wc's line, ls's marks
    /// (docs/contract.md#tools). The format itself, except under `readbox sh`.
    pub fn style(&self) -> Format {
        self.style
    }

    /// `max_output_bytes`.
    pub fn cap(&self) -> usize {
        self.cap
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means another thread panicked mid-push; the bytes are still ours.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds the output as a push does, for tests of what waits on it.
    #[cfg(test)]
    pub(crate) fn hold(&self) -> impl Sized + '_ {
        self.lock()
    }

    /// Appends `bytes` to the output: raw file content or text (json format decodes it as
    /// `String::from_utf8_lossy` does, across pushes).
    ///
    /// # Errors
    /// [`Stop::Truncated`] once the output is complete: the cap was reached (what fits was kept,
    /// cut after the last whole line, docs/contract.md#envelope), the answer was already written,
    /// or stdout was closed. The caller must stop working.
    pub fn push(&self, bytes: &[u8]) -> Result<(), Stop> {
        // The mutex is not fair: a writer that pushes in a loop could take it back every time
        // before the watchdog, which waits only so long.
        if self.ending.get().is_some() {
            return Err(Stop::Truncated);
        }
        let mut st = self.lock();
        let pushed = self.push_locked(&mut st, bytes);
        let dropped = std::mem::take(&mut st.sink.dropped);
        st.len = st.len.saturating_sub(dropped);
        // Held-back bytes are not out (yet): they may still be left out.
        let out = st.len.saturating_sub(st.pending.len());
        self.so_far.output_bytes.store(out, Ordering::Relaxed);
        self.so_far.truncated.store(st.truncated, Ordering::Relaxed);
        pushed
    }

    fn push_locked(&self, st: &mut State, bytes: &[u8]) -> Result<(), Stop> {
        if st.finished || st.sink.closed || (st.truncated && !st.over) {
            return Err(Stop::Truncated);
        }
        match self.format {
            Format::Text => {
                if st.pending.is_empty()
                    && !st.over
                    && st.len + bytes.len() <= self.cap.saturating_sub(LONG_LINE)
                {
                    // Far from the cap no cut can fall in these bytes: they go out as they are.
                    self.note_lines(st, bytes);
                    st.sink.text(bytes);
                    st.len += bytes.len();
                } else {
                    self.take(st, bytes)?;
                }
            }
            Format::Json => {
                if st.carry.is_empty()
                    && st.pending.is_empty()
                    && !st.over
                    && st.len.saturating_add(bytes.len().saturating_mul(3))
                        <= self.cap.saturating_sub(LONG_LINE)
                {
                    // Decoding can at most triple the size (a lone byte becomes U+FFFD), so no cut
                    // can fall here: decode and escape in one pass, straight into the sink.
                    st.sink.open();
                    let (used, decoded) = escape_json(&mut st.sink.buf, bytes, false);
                    st.carry.extend_from_slice(&bytes[used..]);
                    st.len += decoded;
                    self.note_lines(st, bytes);
                    if st.sink.buf.len() >= FLUSH {
                        st.sink.flush();
                    }
                } else {
                    let text = decode(&mut st.carry, bytes, false);
                    self.take(st, text.as_bytes())?;
                }
            }
        }
        if st.sink.closed {
            return Err(Stop::Truncated);
        }
        Ok(())
    }

    /// Pushes a piece of text (already valid UTF-8).
    ///
    /// # Errors
    /// As [`Output::push`].
    pub fn push_str(&self, s: &str) -> Result<(), Stop> {
        self.push(s.as_bytes())
    }

    /// Keeps the line state right after `bytes` were shown far from the cap. A line left
    /// unfinished there is counted as a long line: its shown bytes lie more than [`LONG_LINE`]
    /// before the cap, so if the cap ever falls in it, it is longer than that, and a cut inside is
    /// the right one.
    fn note_lines(&self, st: &mut State, bytes: &[u8]) {
        match memchr::memrchr(b'\n', bytes) {
            Some(i) => {
                st.has_line = true;
                st.line_len = if i + 1 == bytes.len() {
                    0
                } else {
                    LONG_LINE + 1
                };
            }
            None if !bytes.is_empty() => st.line_len = LONG_LINE + 1,
            None => {}
        }
    }

    /// Adds output units (decoded UTF-8 in json format, raw bytes in text format) near the cap,
    /// where the cut must fall after the last whole line that fits: only the first line, or a line
    /// longer than [`LONG_LINE`], is cut inside (on a character boundary).
    fn take(&self, st: &mut State, mut text: &[u8]) -> Result<(), Stop> {
        while !text.is_empty() {
            let (seg, complete) = match memchr::memchr(b'\n', text) {
                Some(i) => (&text[..=i], true),
                None => (text, false),
            };
            text = &text[seg.len()..];
            st.line_len += seg.len();
            if st.over {
                // The line that crossed the cap: long lines are cut inside, others left out.
                if st.line_len > LONG_LINE {
                    self.show_pending(st);
                    st.over = false;
                    st.cut_inside = true;
                    return Err(Stop::Truncated);
                }
                if complete {
                    self.drop_pending(st);
                    st.over = false;
                    return Err(Stop::Truncated);
                }
                continue;
            }
            let fit = self.cap - st.len;
            if seg.len() <= fit {
                st.len += seg.len();
                if complete {
                    self.show_pending(st);
                    st.sink.text(seg);
                    st.has_line = true;
                    st.line_len = 0;
                } else if !st.has_line
                    || st.line_len > LONG_LINE
                    || st.len <= self.cap.saturating_sub(LONG_LINE)
                {
                    // A cut can only fall inside this line where a cut inside is allowed.
                    self.show_pending(st);
                    st.sink.text(seg);
                } else {
                    st.pending.extend_from_slice(seg);
                }
                continue;
            }
            // This segment crosses the cap.
            st.truncated = true;
            let cut = self.boundary(seg, fit);
            if !st.has_line || st.line_len > LONG_LINE {
                self.show_pending(st);
                st.sink.text(&seg[..cut]);
                st.len += cut;
                st.cut_inside = true;
                return Err(Stop::Truncated);
            }
            if complete {
                self.drop_pending(st);
                return Err(Stop::Truncated);
            }
            // The line goes on: it is cut inside only if it turns out longer than LONG_LINE.
            st.pending.extend_from_slice(&seg[..cut]);
            st.len += cut;
            st.over = true;
        }
        Ok(())
    }

    /// The largest cut `<= fit` of `seg` (longer than `fit`) on a character boundary: json
    /// output is valid UTF-8; raw text is not split inside a valid UTF-8 sequence.
    fn boundary(&self, seg: &[u8], fit: usize) -> usize {
        match self.format {
            Format::Json => {
                let mut cut = fit;
                while cut > 0 && (seg[cut] & 0xC0) == 0x80 {
                    cut -= 1;
                }
                cut
            }
            Format::Text => text_boundary(seg, fit),
        }
    }

    fn show_pending(&self, st: &mut State) {
        if !st.pending.is_empty() {
            let pending = std::mem::take(&mut st.pending);
            st.sink.text(&pending);
            st.pending = pending;
            st.pending.clear();
        }
    }

    fn drop_pending(&self, st: &mut State) {
        st.len -= st.pending.len();
        st.pending.clear();
    }

    /// Bytes that may still be added before the output is cut.
    pub fn room(&self) -> usize {
        self.cap - self.lock().len.min(self.cap)
    }

    /// Whether the output was cut at the cap (so far).
    pub fn is_truncated(&self) -> bool {
        self.lock().truncated
    }

    /// Whether the cut fell inside a line (the first line, or one longer than [`LONG_LINE`])
    /// rather than after the last whole line that fits.
    pub fn cut_inside(&self) -> bool {
        self.lock().cut_inside
    }

    /// Whether `len` more bytes of content are so far from the cap that no cut can fall in them:
    /// then they are shown whole and at once, without any per-line work.
    pub fn far_from_cap(&self, len: usize) -> bool {
        let st = self.lock();
        let need = match self.format {
            // Decoding can at most triple the size (a lone byte becomes U+FFFD).
            Format::Json => len.saturating_mul(3),
            Format::Text => len,
        };
        st.pending.is_empty()
            && !st.over
            && st.carry.is_empty()
            && st.len.saturating_add(need) <= self.cap.saturating_sub(LONG_LINE)
    }

    /// Marks the output as cut at the cap by the tool itself, at its start (tail leaves out the
    /// lines at the start that do not fit), with `detail` for the note as in
    /// [`Output::note_truncation`].
    pub fn truncate_front(&self, detail: impl Into<String>) {
        let mut st = self.lock();
        st.truncated = true;
        st.truncation_note = Some(detail.into().replace(['\n', '\r'], " "));
        self.so_far.truncated.store(true, Ordering::Relaxed);
    }

    /// The end of `text` (raw content, decoded as this format writes it) that fits in `room`
    /// bytes, starting on a character boundary: what tail shows of a last line that does not fit.
    pub fn end_that_fits(&self, text: &[u8], room: usize) -> Vec<u8> {
        match self.format {
            Format::Text => {
                let mut start = text.len().saturating_sub(room);
                while start < text.len() && (text[start] & 0xC0) == 0x80 {
                    start += 1;
                }
                text[start..].to_vec()
            }
            Format::Json => {
                let decoded = decode(&mut Vec::new(), text, true);
                let mut start = decoded.len().saturating_sub(room);
                while !decoded.is_char_boundary(start) {
                    start += 1;
                }
                decoded.as_bytes()[start..].to_vec()
            }
        }
    }

    /// Sets what the truncation note says after `output truncated at max_output_bytes (N bytes;
    /// READBOX_MAX_OUTPUT_BYTES)`: where the output stopped and how to see the rest (for cat and
    /// head, the call that continues it), as `" before line 9; continue with: cat f 9"` or
    /// `": the diff is incomplete"`. Without it, the note names the cap alone.
    pub fn note_truncation(&self, detail: impl Into<String>) {
        self.lock().truncation_note = Some(detail.into().replace(['\n', '\r'], " "));
    }

    /// Adds an input's redactions to the call's: the note and the audit log report them.
    pub fn add_redactions(&self, tally: &Tally) {
        let mut st = self.lock();
        st.redactions.add(tally);
        let total = st.redactions.total();
        self.so_far.redactions.store(total, Ordering::Relaxed);
    }

    /// Adds a note (docs/contract.md#notes): one line the caller should see, without the call
    /// being an error. Notes are written after `truncated`, in the order they were added; the
    /// same note is kept once.
    pub fn note(&self, text: impl Into<String>) {
        let mut text = text.into().replace(['\n', '\r'], " ");
        let mut st = self.lock();
        if let Some(tool) = st.note_prefix {
            text = format!("{tool}: {text}");
        }
        Self::add_note(&mut st, text);
    }

    /// Adds a note of `tool` under `readbox sh`: `tool: text` (a stage's notes, handed back by
    /// [`Output::drain`]).
    pub fn note_of(&self, tool: &str, text: impl Into<String>) {
        let text = format!("{tool}: {}", text.into().replace(['\n', '\r'], " "));
        Self::add_note(&mut self.lock(), text);
    }

    fn add_note(st: &mut State, text: String) {
        if !st.notes.contains(&text) {
            st.notes.push(text);
        }
    }

    /// Under `readbox sh`: notes added from now on are prefixed with `tool` (`None`: not).
    pub fn set_note_prefix(&self, tool: Option<&'static str>) {
        self.lock().note_prefix = tool;
    }

    /// Writes `line` (a diagnostic such as `cat: not found: x`, with its newline) where a
    /// terminal shows a command's standard error under `readbox sh`: into the output in json
    /// format, so that it stands in order among the output; to stderr in text format, after the
    /// output so far.
    ///
    /// # Errors
    /// [`Stop::Truncated`] as [`Output::push`], in json format.
    pub fn diagnostic(&self, line: &str) -> Result<(), Stop> {
        let line = format!("{}\n", escape_controls(line.trim_end_matches('\n')));
        match self.format {
            Format::Json => self.push_str(&line),
            Format::Text => {
                let mut st = self.lock();
                st.sink.flush();
                write_stderr(line.as_bytes());
                Ok(())
            }
        }
    }

    /// Ends the output of a stage of a `readbox sh` pipeline ([`Output::to_pipe`],
    /// [`Output::discard`]): everything held is written, the pipe is closed (the next stage reads
    /// its end), and the notes and the redactions are handed back for the answer to report.
    pub fn drain(&self) -> (Vec<String>, Tally) {
        let mut st = self.lock();
        if !st.finished {
            self.settle(&mut st);
        }
        st.finished = true;
        st.sink.flush_all();
        st.sink.target = Target::Null;
        (
            std::mem::take(&mut st.notes),
            std::mem::take(&mut st.redactions),
        )
    }

    /// Holds the output for its end, once a push in progress is done, and settles it: what
    /// [`Closing::summary`] reports is then exactly what [`Closing::finish`] writes.
    pub fn close(&self) -> Closing<'_> {
        self.closing(self.lock())
    }

    /// As [`Output::close`], but `None` when a writer still holds the output after `grace`: it is
    /// blocked on a stdout that nobody reads, or it is the caller's own thread, panicking in a
    /// push. Either way, waiting longer could be waiting for ever. Pushes are refused from the
    /// moment this is called, so a writer that is only busy lets go after its current write.
    pub fn try_close(&self, grace: Duration) -> Option<Closing<'_>> {
        let _ = self.ending.set(Instant::now());
        let start = Instant::now();
        loop {
            match self.state.try_lock() {
                Ok(st) => return Some(self.closing(st)),
                Err(TryLockError::Poisoned(e)) => return Some(self.closing(e.into_inner())),
                Err(TryLockError::WouldBlock) if start.elapsed() < grace => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(TryLockError::WouldBlock) => return None,
            }
        }
    }

    fn closing<'a>(&'a self, mut st: MutexGuard<'a, State>) -> Closing<'a> {
        if !st.finished {
            self.settle(&mut st);
        }
        Closing { out: self, st }
    }

    /// The summary as of the last push, for an end that could not hold the output
    /// ([`Output::try_close`] gave up): the output that went into the writes before the one
    /// that blocked, which its reader may not all have taken.
    pub fn summary_so_far(&self) -> Summary {
        Summary {
            output_bytes: self.so_far.output_bytes.load(Ordering::Relaxed),
            truncated: self.so_far.truncated.load(Ordering::Relaxed),
            redactions: self.so_far.redactions.load(Ordering::Relaxed),
        }
    }

    /// Writes the end of this call's answer ([`Closing::finish`]), waiting for a push in progress.
    pub fn finish(&self, label: &str, error: Option<&Error>) {
        self.close().finish(label, error);
    }

    /// Ends a call whose output could not be held ([`Output::try_close`] gave up): nothing more
    /// goes to stdout, whose reader has stopped taking what is there, so the envelope stays
    /// unclosed. The error goes to stderr as the text format writes it (`cat: timeout: …`), if
    /// stderr takes it without waiting.
    pub fn abandon(&self, label: &str, error: Option<&Error>) {
        if let Some(e) = error {
            let line = format!("{label}: {}\n", escape_controls(&e.to_string()));
            write_stderr_if_ready(line.as_bytes());
        }
    }
}

/// The output of a call held for its end ([`Output::close`]): no push comes in between.
pub struct Closing<'a> {
    out: &'a Output,
    st: MutexGuard<'a, State>,
}

impl Closing<'_> {
    /// The size of the output, settled (held-back bytes are shown or left out by now), whether it
    /// was cut, and the secrets redacted.
    pub fn summary(&self) -> Summary {
        Summary {
            output_bytes: self.st.len,
            truncated: self.st.truncated,
            redactions: self.st.redactions.total(),
        }
    }

    /// Writes the end of this call's answer: the closing fields of the envelope (json) or the
    /// last of the output, the notes and the error line (text). `label` names the tool in
    /// text-format messages (`cat: not found: x`). Only the first call writes anything.
    pub fn finish(mut self, label: &str, error: Option<&Error>) {
        let out = self.out;
        let st = &mut *self.st;
        if st.finished {
            return;
        }
        st.finished = true;
        let truncated = st.truncated && error.is_none();
        let mut notes = Vec::new();
        if truncated && !st.sink.closed {
            notes.push(format!(
                "output truncated at max_output_bytes ({} bytes; READBOX_MAX_OUTPUT_BYTES){}",
                out.cap,
                st.truncation_note.take().unwrap_or_default()
            ));
        }
        notes.extend(st.redactions.note());
        notes.append(&mut st.notes);
        match out.format {
            Format::Json => {
                st.sink.open();
                let tail = envelope_tail(error, truncated, &notes);
                st.sink.flush();
                st.sink.buf.extend_from_slice(tail.as_bytes());
                st.sink.flush_all();
            }
            Format::Text => {
                st.sink.flush();
                let mut lines = String::new();
                for n in &notes {
                    lines.push_str(&format!("{label}: note: {}\n", escape_controls(n)));
                }
                if let Some(e) = error {
                    lines.push_str(&format!("{label}: {}\n", escape_controls(&e.to_string())));
                } else if truncated && !st.sink.closed {
                    lines.push_str(&format!("{label}: output truncated at {} bytes\n", out.cap));
                }
                write_stderr(lines.as_bytes());
            }
        }
    }
}

impl Output {
    /// Ends the output: an unfinished UTF-8 sequence becomes U+FFFD, the line that crossed the
    /// cap (it ended within LONG_LINE bytes) is left out, a held-back last line is shown.
    fn settle(&self, st: &mut State) {
        if !st.carry.is_empty() {
            st.carry.clear();
            if !st.truncated || st.over {
                let _ = self.take(st, "\u{FFFD}".as_bytes());
            }
        }
        if st.over {
            self.drop_pending(st);
            st.over = false;
        } else {
            self.show_pending(st);
        }
    }
}

/// Lets go of standard output and error once the answer is written.
///
/// Both become a pipe that nothing reads, so a reader of the answer sees its end at once, even
/// while the process cannot exit yet (a thread blocked in the kernel, in a read that a FUSE daemon
/// has taken, holds the exit until the read returns; docs/security.md#budgets-and-the-watchdog).
pub fn release_stdio() {
    if let Ok((read, write)) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC) {
        drop(read);
        let _ = rustix::stdio::dup2_stdout(&write);
        let _ = rustix::stdio::dup2_stderr(&write);
    }
}

/// Writes `line` to stderr as it is: `readbox sh`'s `sh: exit N` after a session's line in the
/// text format.
pub fn write_stderr_line(line: &str) {
    write_stderr(line.as_bytes());
}

/// Unit tests read what would have gone to stderr here, so that their output stays quiet.
#[cfg(test)]
static STDERR_WRITTEN: Mutex<Vec<u8>> = Mutex::new(Vec::new());

#[cfg(test)]
fn write_stderr(bytes: &[u8]) {
    STDERR_WRITTEN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .extend_from_slice(bytes);
}

#[cfg(not(test))]
fn write_stderr(mut bytes: &[u8]) {
    let stderr = rustix::stdio::stderr();
    while !bytes.is_empty() {
        match rustix::io::write(stderr, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return,
        }
    }
}

/// Writes `bytes` (a short line) to stderr only if it can take them at once: a stderr that nobody
/// reads must not hold a call that is ending because its stdout is not read.
#[cfg(test)]
fn write_stderr_if_ready(bytes: &[u8]) {
    write_stderr(bytes);
}

#[cfg(not(test))]
fn write_stderr_if_ready(bytes: &[u8]) {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let stderr = rustix::stdio::stderr();
    let mut fds = [PollFd::new(&stderr, PollFlags::OUT)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    if rustix::event::poll(&mut fds, Some(&now)).is_ok_and(|n| n > 0)
        && fds[0].revents().contains(PollFlags::OUT)
    {
        // A pipe with room for a page takes a line this short without waiting.
        let _ = rustix::io::write(stderr, bytes);
    }
}

/// Measures the output size of content pushed in pieces: raw bytes in text format, the UTF-8
/// size of the lossy decoding in json format (across pieces, as [`Output::push`] decodes).
#[derive(Debug, Clone)]
pub struct Measure {
    json: bool,
    carry: Vec<u8>,
}

impl Measure {
    /// A measure for `format`.
    pub fn new(format: Format) -> Measure {
        Measure {
            json: format == Format::Json,
            carry: Vec::new(),
        }
    }

    /// The output size of the next piece `bytes` (`last` when it ends the content).
    pub fn add(&mut self, bytes: &[u8], last: bool) -> usize {
        if !self.json {
            return bytes.len();
        }
        if self.carry.is_empty() && bytes.is_ascii() {
            return bytes.len();
        }
        decode(&mut self.carry, bytes, last).len()
    }
}

/// The closing fields of the json envelope, after the output's text.
fn envelope_tail(error: Option<&Error>, truncated: bool, notes: &[String]) -> String {
    let mut tail = String::from("\",\"error\":");
    match error {
        Some(e) => tail.push_str(&json_string(&e.to_string())),
        None => tail.push_str("null"),
    }
    tail.push_str(",\"truncated\":");
    tail.push_str(if truncated { "true" } else { "false" });
    if !notes.is_empty() {
        tail.push_str(",\"notes\":[");
        for (i, n) in notes.iter().enumerate() {
            if i > 0 {
                tail.push(',');
            }
            tail.push_str(&json_string(n));
        }
        tail.push(']');
    }
    tail.push_str("}\n");
    tail
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an unfinished json Output has shown so far, decoded.
    fn shown(out: &Output) -> String {
        let st = out.lock();
        let all = [st.sink.written.as_slice(), st.sink.buf.as_slice()].concat();
        let body = all.strip_prefix(b"{\"output\":\"").unwrap_or(&all);
        serde_json::from_slice(&[b"\"", body, b"\""].concat()).unwrap()
    }

    /// What an unfinished text Output has shown so far.
    fn raw(out: &Output) -> Vec<u8> {
        let st = out.lock();
        [st.sink.written.as_slice(), st.sink.buf.as_slice()].concat()
    }

    #[test]
    fn large_text_pieces_go_out_in_order_with_what_was_buffered() {
        let out = Output::new(Format::Text, 1 << 20);
        let large: Vec<u8> = b"0123456789abcde\n".repeat(FLUSH / 2 / 16 + 1);
        out.push(b"first\n").unwrap();
        out.push(&large).unwrap();
        out.push(b"last\n").unwrap();
        out.push(&large).unwrap();
        let st = out.lock();
        // The large pieces were written, not buffered; what was buffered before them went first.
        assert_eq!(st.sink.buf, b"");
        let want = [&b"first\n"[..], &large, b"last\n", &large].concat();
        assert_eq!(st.sink.written, want);
    }

    #[test]
    fn after_a_cut_at_the_deadline_no_later_output_is_written() {
        let ending = Arc::new(OnceLock::new());
        let mut sink = Sink {
            ending: ending.clone(),
            piece: PIECE,
            ..Sink::default()
        };
        // A character begun in one push and ended in the next; the first push's bytes are cut
        // at the deadline, the second goes out without the buffer.
        sink.text(b"aaaa\xe6");
        let past = Instant::now().checked_sub(WRITE_GRACE).unwrap();
        ending.set(past).unwrap();
        let large = [&b"\xbc\xa2"[..], &vec![b'b'; FLUSH]].concat();
        sink.text(&large);
        assert_eq!(sink.written, b"");
        assert_eq!(sink.dropped, 5 + large.len());
    }

    #[test]
    fn lossy_decoding_survives_split_sequences() {
        let out = Output::new(Format::Json, 1 << 20);
        let euro = "€".as_bytes();
        out.push(&euro[..1]).unwrap();
        out.push(&euro[1..2]).unwrap();
        out.push(&euro[2..]).unwrap();
        out.push(b"\xff|").unwrap();
        assert_eq!(shown(&out), "€\u{FFFD}|");
    }

    #[test]
    fn the_first_line_is_cut_on_a_character_boundary() {
        for (cap, want) in [
            (1, "a"),
            (4, "ab"),
            (5, "ab€"),
            (7, "ab€cd"),
            (8, "ab€cd\n"),
        ] {
            let out = Output::new(Format::Json, cap);
            assert_eq!(out.push("ab€cd\nsecond\n".as_bytes()), Err(Stop::Truncated));
            assert_eq!(shown(&out), want, "cap {cap}");
        }
    }

    #[test]
    fn later_lines_are_left_out_whole() {
        let out = Output::new(Format::Json, 13);
        assert_eq!(out.push(b"ab\ncdef\nghijklmn\n"), Err(Stop::Truncated));
        assert_eq!(shown(&out), "ab\ncdef\n");
        // Pushed in pieces, the line that crosses the cap is held, then dropped at its end.
        let out = Output::new(Format::Text, 13);
        out.push(b"ab\ncdef\nghi").unwrap();
        assert_eq!(out.push(b"jklmn"), Ok(()));
        assert_eq!(out.push(b"op\nq"), Err(Stop::Truncated));
        assert_eq!(raw(&out), b"ab\ncdef\n");
    }

    #[test]
    fn a_long_line_is_cut_inside() {
        let cap = 40_000;
        let out = Output::new(Format::Text, cap);
        out.push(b"short\n").unwrap();
        let long = vec![b'y'; 70_000];
        assert_eq!(out.push(&long[..30_000]), Ok(()));
        assert_eq!(out.push(&long[30_000..]), Err(Stop::Truncated));
        assert_eq!(raw(&out).len(), cap);
        assert!(out.lock().pending.is_empty());
    }

    #[test]
    fn a_line_under_the_long_limit_that_ends_the_input_is_left_out() {
        let out = Output::new(Format::Text, 10);
        out.push(b"one\n").unwrap();
        out.push(b"twotwotwo").unwrap();
        assert!(out.is_truncated());
        let mut st = out.lock();
        out.settle(&mut st);
        assert_eq!(st.len, 4);
        drop(st);
        assert_eq!(raw(&out), b"one\n");
    }

    #[test]
    fn the_summary_counts_only_output_that_is_out() {
        // "twotwo" is held back (it might become a long line), then left out at the end.
        let out = Output::new(Format::Json, 10);
        out.push(b"one\n").unwrap();
        out.push(b"twotwotwo").unwrap();
        assert_eq!(out.summary_so_far().output_bytes, 4);
        let closing = out.close();
        assert_eq!(closing.summary().output_bytes, 4);
        assert!(closing.summary().truncated);
        closing.finish("cat", None);
        let answer: serde_json::Value = serde_json::from_slice(&raw(&out)).unwrap();
        assert_eq!(answer["output"], "one\n");
    }

    #[test]
    fn a_write_cut_at_the_deadline_ends_on_a_whole_escape_or_character() {
        let mut escaped = Vec::new();
        escape_json(&mut escaped, "a\0\u{e9}\n\u{202e}z".as_bytes(), true);
        assert_eq!(escaped, "a\\u0000\u{e9}\\n\\u202ez".as_bytes());
        // Inside `\u0000`, inside `é`, inside `\n`, inside `\u202e`: to the end of each.
        assert_eq!(cut_escaped(&escaped, 3), (7, 2 + 1 + 3 + 1));
        assert_eq!(cut_escaped(&escaped, 8), (9, 1 + 3 + 1));
        assert_eq!(cut_escaped(&escaped, 10), (11, 3 + 1));
        assert_eq!(cut_escaped(&escaped, 12), (17, 1));
        assert_eq!(cut_escaped(&escaped, 17), (17, 1));
        assert_eq!(cut_escaped(&escaped, 0), (0, 1 + 1 + 2 + 1 + 3 + 1));
        assert_eq!(cut_escaped(&escaped, escaped.len()), (escaped.len(), 0));
    }

    #[test]
    fn past_the_deadline_a_slow_reader_still_gets_a_whole_envelope() {
        let out = Output::new(Format::Json, usize::MAX);
        out.push(b"first\n").unwrap();
        let waiting = 40 * PIECE / 6;
        {
            let mut st = out.lock();
            // Forty pieces' worth of escapes wait when the deadline passes, for a reader that
            // takes a piece every 30 ms: some go out within the grace, the rest is left out.
            escape_json(&mut st.sink.buf, &vec![0u8; waiting], true);
            st.len += waiting;
            st.sink.pace = Duration::from_millis(30);
        }
        let start = Instant::now();
        let closing = out.try_close(Duration::from_millis(50)).unwrap();
        assert!(start.elapsed() < WRITE_GRACE + Duration::from_millis(500));
        // The summary, taken before any write that could block, counts what was produced.
        assert_eq!(closing.summary().output_bytes, 6 + waiting);
        closing.finish("cat", Some(&Error::Timeout("t".into())));
        let answer: serde_json::Value = serde_json::from_slice(&raw(&out)).unwrap();
        let text = answer["output"].as_str().unwrap();
        assert!(text.starts_with("first\n") && text[6..].bytes().all(|b| b == 0));
        assert!(text.len() > 6 && text.len() < 6 + waiting, "{}", text.len());
        assert_eq!(answer["error"], "timeout: t");
    }

    #[test]
    fn past_the_deadline_text_is_cut_at_the_end_of_a_character() {
        let out = Output::new(Format::Text, usize::MAX);
        {
            let mut st = out.lock();
            // Three-byte characters that no piece boundary falls between.
            let text = "\u{6f22}".repeat(20 * PIECE / 3 + 1);
            st.sink.buf.extend_from_slice(text.as_bytes());
            st.len += text.len();
            st.sink.pace = Duration::from_millis(30);
        }
        out.try_close(Duration::from_millis(50))
            .unwrap()
            .finish("cat", Some(&Error::Timeout("t".into())));
        let written = raw(&out);
        let text = std::str::from_utf8(&written).expect("whole characters");
        assert!(
            !text.is_empty() && text.len() < 20 * PIECE,
            "{}",
            text.len()
        );
    }

    #[test]
    fn pushes_are_refused_once_the_end_is_waiting() {
        // A writer that pushes in a loop must not win the (unfair) lock back from the end.
        let out = Output::new(Format::Json, 100);
        out.push(b"a\n").unwrap();
        drop(out.try_close(Duration::from_millis(50)).unwrap());
        assert_eq!(out.push(b"b\n"), Err(Stop::Truncated));
        out.finish("cat", None);
        let answer: serde_json::Value = serde_json::from_slice(&raw(&out)).unwrap();
        assert_eq!(answer["output"], "a\n");
    }

    #[test]
    fn closing_gives_up_on_an_output_held_past_the_grace() {
        let out = Output::new(Format::Json, 100);
        out.push(b"a\n").unwrap();
        let held = out.hold();
        let start = Instant::now();
        assert!(out.try_close(Duration::from_millis(50)).is_none());
        assert!(start.elapsed() >= Duration::from_millis(50));
        drop(held);
        assert!(out.try_close(Duration::from_millis(50)).is_some());
    }

    #[test]
    fn a_line_begun_far_from_the_cap_is_cut_inside() {
        // 70,000 bytes of the line are shown far from a 200,000-byte cap; the cap then falls in
        // the same line, which is longer than LONG_LINE: cut at the cap.
        let out = Output::new(Format::Text, 200_000);
        out.push(b"a\n").unwrap();
        out.push(&vec![b'x'; 70_000]).unwrap();
        assert_eq!(out.push(&vec![b'x'; 200_000]), Err(Stop::Truncated));
        assert_eq!(out.close().summary().output_bytes, 200_000);
        assert_eq!(raw(&out).len(), 200_000);
    }

    #[test]
    fn exact_fit_is_not_truncated() {
        let out = Output::new(Format::Json, 3);
        assert_eq!(out.push(b"ab\n"), Ok(()));
        assert!(!out.is_truncated());
    }
}
