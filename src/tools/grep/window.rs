//! grep's windows (docs/contract.md#tools): a matched line longer than the cap is shown as the
//! part around its first match, cut on character boundaries with `…` at each cut end, and a note
//! says which bytes of the line it shows.

/// The most bytes of a line that a window around its match shows: enough context to read the
/// match, and room left for the matches after it.
pub(super) const WINDOW: usize = 4096;

/// The mark at each end of a window where the line was cut.
pub(super) const ELLIPSIS: &str = "…";

/// `text[from..to]` with `…` at each end that cuts the text, cut on character boundaries, and
/// the range of `text` it shows.
pub(super) fn windowed(text: &[u8], from: usize, to: usize) -> (Vec<u8>, (usize, usize)) {
    let (out, (s, e)) = mark_cuts(&text[from..to], from > 0, to < text.len());
    (out, (from + s, from + e))
}

/// `piece` with `…` before it when `cut_start` and after it when `cut_end`, and the range of
/// `piece` it shows: a character cut at either end is left out.
pub(super) fn mark_cuts(piece: &[u8], cut_start: bool, cut_end: bool) -> (Vec<u8>, (usize, usize)) {
    let mut skip = 0;
    if cut_start {
        skip = piece
            .iter()
            .take(3)
            .take_while(|b| (0x80..0xC0).contains(*b))
            .count();
    }
    let mut p = &piece[skip..];
    if cut_end {
        p = without_partial_char(p);
    }
    let kept = (skip, skip + p.len());
    let mut out = Vec::with_capacity(p.len() + 2 * ELLIPSIS.len());
    if cut_start {
        out.extend_from_slice(ELLIPSIS.as_bytes());
    }
    out.extend_from_slice(p);
    if cut_end {
        out.extend_from_slice(ELLIPSIS.as_bytes());
    }
    (out, kept)
}

/// `t` without a UTF-8 sequence that its end cuts short.
fn without_partial_char(t: &[u8]) -> &[u8] {
    for back in 1..=t.len().min(4) {
        let b = t[t.len() - back];
        if b < 0x80 {
            return t;
        }
        if b >= 0xC0 {
            let need = match b {
                0xF0.. => 4,
                0xE0.. => 3,
                _ => 2,
            };
            return if back >= need {
                t
            } else {
                &t[..t.len() - back]
            };
        }
    }
    t
}

/// The note of a line shown as a window: which line, which bytes of it, where its match is.
pub(super) fn window_note(line_no: &str, display: &[u8], at: u64, from: u64, to: u64) -> String {
    format!(
        "line {line_no} of {} is longer than the room left under the cap: shown from byte {from} \
         to byte {to} of it, around its first match at byte {at}",
        String::from_utf8_lossy(display)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_character_boundaries_and_are_marked() {
        let text = "aéb".as_bytes();
        // From inside `é`: it is left out at the start; to inside it: left out at the end.
        assert_eq!(windowed(text, 2, 4), ("…b".as_bytes().to_vec(), (3, 4)));
        assert_eq!(windowed(text, 0, 2), ("a…".as_bytes().to_vec(), (0, 1)));
        assert_eq!(windowed(text, 0, 4), (text.to_vec(), (0, 4)));
        assert_eq!(
            mark_cuts(b"xy", true, true),
            ("…xy…".as_bytes().to_vec(), (0, 2))
        );
    }
}
