//! The only writer of stdout: the JSON envelope or the text format, the output cap and the exit
//! status (SPEC §3, §5).
//!
//! Tools never print. They push bytes into the call's [`Output`], which decodes them lossily (json
//! format), counts them against `max_output_bytes` and cuts on a character boundary. At the end,
//! [`Output::finish`] writes exactly one answer, once: whichever of the main thread and the
//! timeout watchdog comes first writes it, the other writes nothing.

use std::io::Write;
use std::sync::Mutex;

use crate::error::Error;

/// How answers are written (SPEC §3).
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
    /// The output reached `max_output_bytes`; the work ends cleanly.
    Truncated,
    /// The call failed; the output so far is kept.
    Error(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Error(e)
    }
}

/// Text-format output is flushed to stdout in pieces of about this size, so that memory stays
/// bounded however large `max_output_bytes` is.
const TEXT_FLUSH_BYTES: usize = 64 * 1024;

/// The output of one call, shared by the tool (which pushes) and the watchdog (which may finish).
pub struct Output {
    format: Format,
    /// `max_output_bytes`: the cap on the UTF-8 bytes (json) or raw bytes (text) of `output`.
    cap: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// json: valid UTF-8 not yet written; text: raw bytes not yet flushed.
    buf: Vec<u8>,
    /// json: the start of a UTF-8 sequence that the next push may complete (at most 3 bytes).
    carry: Vec<u8>,
    /// Bytes of `output` so far, as counted against the cap.
    len: usize,
    truncated: bool,
}

/// What a finished call reports, e.g. to the audit log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// The bytes of `output` (UTF-8 in json format, raw in text format).
    pub output_bytes: usize,
    /// Whether `output` was cut at the cap.
    pub truncated: bool,
}

impl Output {
    /// An empty output written in `format`, capped at `cap` bytes.
    pub fn new(format: Format, cap: usize) -> Output {
        Output {
            format,
            cap,
            state: Mutex::new(State::default()),
        }
    }

    /// The format this output is written in.
    pub fn format(&self) -> Format {
        self.format
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means another thread panicked mid-push; the bytes are still ours.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `bytes` to the output.
    ///
    /// # Errors
    /// [`Stop::Truncated`] once the output would pass the cap: what fits (on a character
    /// boundary) was kept, and the caller must stop working.
    pub fn push(&self, bytes: &[u8]) -> Result<(), Stop> {
        let mut st = self.lock();
        if st.truncated {
            return Err(Stop::Truncated);
        }
        match self.format {
            Format::Text => {
                let fit = self.cap - st.len;
                let chunk = if bytes.len() <= fit {
                    bytes
                } else {
                    st.truncated = true;
                    &bytes[..text_boundary(bytes, fit)]
                };
                st.len += chunk.len();
                // A closed stdout (a pipe whose reader left) is not our error: carry on.
                if st.buf.is_empty() && chunk.len() >= TEXT_FLUSH_BYTES / 2 {
                    // Large pieces go out as they are, without a copy.
                    let _ = std::io::stdout().lock().write_all(chunk);
                } else {
                    st.buf.extend_from_slice(chunk);
                    if st.buf.len() >= TEXT_FLUSH_BYTES {
                        let _ = std::io::stdout().lock().write_all(&st.buf);
                        st.buf.clear();
                    }
                }
            }
            Format::Json => {
                if st.carry.is_empty() {
                    return self.push_lossy(&mut st, bytes);
                }
                let mut joined = std::mem::take(&mut st.carry);
                joined.extend_from_slice(bytes);
                return self.push_lossy(&mut st, &joined);
            }
        }
        if st.truncated {
            Err(Stop::Truncated)
        } else {
            Ok(())
        }
    }

    /// Pushes a piece of text (already valid UTF-8).
    pub fn push_str(&self, s: &str) -> Result<(), Stop> {
        self.push(s.as_bytes())
    }

    /// Decodes `bytes` as `String::from_utf8_lossy` does, keeping an unfinished sequence at the
    /// end for the next push, and appends the text within the cap.
    fn push_lossy(&self, st: &mut State, mut bytes: &[u8]) -> Result<(), Stop> {
        loop {
            match std::str::from_utf8(bytes) {
                Ok(s) => return self.append_json(st, s),
                Err(e) => {
                    let valid = e.valid_up_to();
                    // SAFETY-free: from_utf8 said these bytes are valid.
                    let head = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
                    self.append_json(st, head)?;
                    match e.error_len() {
                        None => {
                            st.carry = bytes[valid..].to_vec();
                            return Ok(());
                        }
                        Some(n) => {
                            self.append_json(st, "\u{FFFD}")?;
                            bytes = &bytes[valid + n..];
                        }
                    }
                }
            }
        }
    }

    fn append_json(&self, st: &mut State, s: &str) -> Result<(), Stop> {
        let fit = self.cap - st.len;
        if s.len() <= fit {
            st.buf.extend_from_slice(s.as_bytes());
            st.len += s.len();
            return Ok(());
        }
        let mut cut = fit;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        st.buf.extend_from_slice(&s.as_bytes()[..cut]);
        st.len += cut;
        st.truncated = true;
        st.carry.clear();
        Err(Stop::Truncated)
    }

    /// Bytes that may still be added before the output is cut.
    pub fn room(&self) -> usize {
        self.cap - self.lock().len
    }

    /// The size of the output so far and whether it was cut.
    pub fn summary(&self) -> Summary {
        let st = self.lock();
        Summary {
            output_bytes: st.len,
            truncated: st.truncated,
        }
    }

    /// Drops the output not yet written: the call answers with an error and no output.
    pub fn discard(&self) {
        let mut st = self.lock();
        st.buf.clear();
        st.carry.clear();
        st.len = 0;
        st.truncated = false;
    }

    /// Writes the answer of this call: the envelope (json) or the output and the error line
    /// (text). `label` names the tool in text-format messages (`cat: not found: x`).
    pub fn finish(&self, label: &str, error: Option<&Error>) {
        let mut st = self.lock();
        if !st.carry.is_empty() && !st.truncated {
            // An unfinished sequence at the very end is one replacement character.
            st.carry.clear();
            let _ = self.append_json(&mut st, "\u{FFFD}");
        }
        let truncated = st.truncated && error.is_none();
        match self.format {
            Format::Json => {
                let text = String::from_utf8_lossy(&st.buf);
                let line = envelope_line(&text, error, truncated);
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
            }
            Format::Text => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&st.buf).and_then(|()| out.flush());
                let mut err = std::io::stderr().lock();
                if let Some(e) = error {
                    let _ = writeln!(err, "{label}: {}", escape_controls(&e.to_string()));
                } else if truncated {
                    let _ = writeln!(err, "{label}: output truncated at {} bytes", self.cap);
                }
            }
        }
        st.buf.clear();
    }
}

/// The largest cut `<= fit` that does not split a UTF-8 character of `bytes` (raw bytes that are
/// not UTF-8 are cut at `fit`).
fn text_boundary(bytes: &[u8], fit: usize) -> usize {
    if fit >= bytes.len() {
        return bytes.len();
    }
    for i in (fit.saturating_sub(3)..fit).rev() {
        let width = match bytes[i] {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => continue,
        };
        let end = i + width;
        if end > fit && end <= bytes.len() && std::str::from_utf8(&bytes[i..end]).is_ok() {
            return i;
        }
    }
    fit
}

/// The one line of the json format, with its newline.
fn envelope_line(output: &str, error: Option<&Error>, truncated: bool) -> String {
    let mut line = String::with_capacity(output.len() + 64);
    line.push_str("{\"output\":");
    line.push_str(&json_string(output));
    line.push_str(",\"error\":");
    match error {
        Some(e) => line.push_str(&json_string(&e.to_string())),
        None => line.push_str("null"),
    }
    line.push_str(",\"truncated\":");
    line.push_str(if truncated { "true" } else { "false" });
    line.push_str("}\n");
    line
}

/// True for characters that must not reach a reader raw: DEL, the C1 controls and the
/// bidirectional controls (SPEC §3).
pub fn is_hidden_control(c: char) -> bool {
    matches!(c, '\u{7F}'..='\u{9F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` as a JSON string literal, with DEL, C1 and bidi controls as `\uXXXX` escapes on top of
/// what `serde_json` escapes (quote, backslash, C0 controls).
pub fn json_string(s: &str) -> String {
    let plain = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string());
    if !plain.chars().any(is_hidden_control) {
        return plain;
    }
    let mut out = String::with_capacity(plain.len() + 16);
    for c in plain.chars() {
        if is_hidden_control(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A JSON document (from `serde_json`) with the same extra escapes as [`json_string`].
pub fn json_document(value: &serde_json::Value) -> String {
    let plain = value.to_string();
    if !plain.chars().any(is_hidden_control) {
        return plain;
    }
    plain
        .chars()
        .map(|c| {
            if is_hidden_control(c) {
                format!("\\u{:04x}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Text for a terminal line (text-format errors): C0, DEL, C1 and bidi controls as `\xNN` or
/// `\u{XXXX}`, so that an error never moves the cursor or flips the text direction.
pub fn escape_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if (c as u32) < 0x20 || is_hidden_control(c) {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(out: &Output) -> String {
        String::from_utf8(out.lock().buf.clone()).unwrap()
    }

    #[test]
    fn lossy_decoding_survives_split_sequences() {
        let out = Output::new(Format::Json, 1 << 20);
        let euro = "€".as_bytes();
        out.push(&euro[..1]).unwrap();
        out.push(&euro[1..2]).unwrap();
        out.push(&euro[2..]).unwrap();
        out.push(b"\xff|").unwrap();
        assert_eq!(collect(&out), "€\u{FFFD}|");
    }

    #[test]
    fn cap_cuts_on_a_character_boundary() {
        let out = Output::new(Format::Json, 4);
        assert_eq!(out.push("ab€cd".as_bytes()), Err(Stop::Truncated));
        assert_eq!(collect(&out), "ab");
        let out = Output::new(Format::Json, 5);
        assert_eq!(out.push("ab€cd".as_bytes()), Err(Stop::Truncated));
        assert_eq!(collect(&out), "ab€");
    }

    #[test]
    fn exact_fit_is_not_truncated() {
        let out = Output::new(Format::Json, 3);
        assert_eq!(out.push(b"abc"), Ok(()));
        assert!(!out.lock().truncated);
    }

    #[test]
    fn text_cut_keeps_characters_whole() {
        assert_eq!(text_boundary("ab€".as_bytes(), 3), 2);
        assert_eq!(text_boundary(b"ab\xff\xff", 3), 3);
    }

    #[test]
    fn hidden_controls_are_escaped() {
        assert_eq!(
            json_string("a\u{7f}b\u{85}\u{202e}"),
            "\"a\\u007fb\\u0085\\u202e\""
        );
        assert_eq!(json_string("\u{200f}"), "\"\u{200f}\"");
    }
}
