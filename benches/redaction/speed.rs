//! The detector's speed, measured through its library API: how fast clean text passes the
//! keyword prefilter (the cost every byte that cat and grep read pays), and how fast text dense
//! with secrets is redacted line by line.
//!
//!     cargo run --release --example redaction-speed [MiB [WORD]] [-- FILE...]
//!
//! WORD keeps only the texts whose name contains it.
//! Each text is cut into batches of whole lines of at most 64 KiB, as the readers hand them
//! out. Prints one table in Markdown: how fast whole batches pass, and how fast a reader that
//! shows a batch's clean lines as they are and redacts the others gets through the text. The
//! files after `--` are measured too.

use std::time::Instant;

use readbox::redact::{Redactor, Shown};

/// A deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick(&mut self, n: usize, chars: &[u8]) -> String {
        (0..n)
            .map(|_| chars[(self.next() % chars.len() as u64) as usize] as char)
            .collect()
    }
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B32: &[u8] = concat!("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "234567").as_bytes();

/// Source-like lines of common words, as `benches/corpus.py` writes them.
fn words(rng: &mut Rng, size: usize) -> Vec<u8> {
    let words: Vec<&str> = "fn let mut match impl struct enum trait where self return if else for \
        while loop break continue pub use mod crate super async await move ref type const static \
        unsafe extern dyn Box Vec String Option Some None Result Ok Err println format iter map \
        filter collect into clone unwrap expect len push insert remove get config reader writer \
        buffer handle parse token value error index count offset"
        .split_whitespace()
        .collect();
    let mut out = Vec::with_capacity(size + 200);
    while out.len() < size {
        let n = 2 + rng.next() % 12;
        out.extend(std::iter::repeat_n(b' ', 4 * (rng.next() % 4) as usize));
        for i in 0..n {
            out.extend_from_slice(words[(rng.next() % words.len() as u64) as usize].as_bytes());
            out.push(if i + 1 == n { b'\n' } else { b' ' });
        }
    }
    out
}

fn repeat(line: &str, size: usize) -> Vec<u8> {
    line.repeat(size / line.len() + 1).into_bytes()
}

/// Config lines, each with a fake credential of one of several families.
fn dense(rng: &mut Rng, size: usize) -> Vec<u8> {
    let mut out = String::with_capacity(size + 200);
    let mut k = 0;
    while out.len() < size {
        let line = match k % 5 {
            0 => format!(
                "aws_access_key_id = {}{}\n",
                concat!("AK", "IA"),
                rng.pick(16, B32)
            ),
            1 => format!(
                "github_token: {}{}\n",
                concat!("gh", "p_"),
                rng.pick(36, ALNUM)
            ),
            2 => format!(
                "url: postgres://app:{}@db.internal:5432/app\n",
                rng.pick(16, ALNUM)
            ),
            3 => format!("Authorization: Bearer {}\n", rng.pick(40, ALNUM)),
            _ => format!("npm: {}{}\n", concat!("np", "m_"), rng.pick(36, ALNUM)),
        };
        out.push_str(&line);
        k += 1;
    }
    out.into_bytes()
}

/// Whole-line batches of at most 64 KiB.
fn batches(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let end = (at + 65536).min(text.len());
        let cut = match memchr::memrchr(b'\n', &text[at..end]) {
            Some(i) if end < text.len() => at + i + 1,
            _ => end,
        };
        out.push(&text[at..cut]);
        at = cut;
    }
    out
}

/// Redacts `text` as a reader would (the clean lines at the start of a batch as they are, the
/// next line through `line`, and again); returns the bytes shown and the values replaced.
fn redact(text: &[u8]) -> (usize, u64) {
    let mut r = Redactor::new();
    let mut shown = 0;
    for b in batches(text) {
        let mut rest = b;
        while !rest.is_empty() {
            let n = r.clean_prefix(rest);
            shown += n;
            rest = &rest[n..];
            let Some(line) = rest.split_inclusive(|&c| c == b'\n').next() else {
                break;
            };
            shown += match r.line(line) {
                Shown::Same => line.len(),
                Shown::Replaced(v) => v.len(),
                Shown::Hidden => 0,
            };
            rest = &rest[line.len()..];
        }
    }
    (shown, r.tally().total())
}

fn main() {
    // The first call pays for the keyword table: what a call that reads one small file adds.
    let _ = Instant::now().elapsed();
    let t = Instant::now();
    let clean = Redactor::new().passes(b"hello\n");
    let first = t.elapsed();
    let t = Instant::now();
    let mut r = Redactor::new();
    let shown = r.line(format!("k = {}{}\n", concat!("gh", "p_"), "a1".repeat(18)).as_bytes());
    let compile = t.elapsed();
    // The first large text builds the SIMD searcher.
    let block = vec![b'x'; 64 * 1024];
    let t = Instant::now();
    let large = Redactor::new().passes(&block);
    let searcher = t.elapsed();
    assert!(clean && large && matches!(shown, Shown::Replaced(_)));
    println!(
        "first passes() on a 6-byte file: {:.1} us; on a 64 KiB block (builds the searcher): {:.0} us; \
         first line with a secret (compiles its rule): {:.0} us\n",
        first.as_secs_f64() * 1e6,
        searcher.as_secs_f64() * 1e6,
        compile.as_secs_f64() * 1e6
    );
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (opts, files) = (&args[..split], args.get(split + 1..).unwrap_or_default());
    let mib: usize = opts.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let only = opts.get(1).cloned().unwrap_or_default();
    let size = mib << 20;
    let mut rng = Rng(0x5EED);
    let mut texts: Vec<(String, Vec<u8>)> = vec![
        (
            "clean: prose (cat.txt)".into(),
            repeat("the quick brown fox jumps over the lazy dog\n", size),
        ),
        ("clean: source-like words".into(), words(&mut rng, size)),
        (
            "clean: log lines".into(),
            repeat(
                "2026-11-30T00:00:00.000Z INFO handled GET /api/v1/items in 12 ms status=200\n",
                size,
            ),
        ),
        ("clean: x repeated, no newline".into(), vec![b'x'; size]),
        (
            "dense: a secret on every line".into(),
            dense(&mut rng, size / 10),
        ),
        // A token's tail that holds a match every few bytes (a JWT's dots, headers inside a
        // header): each match must be looked at a bounded number of times, or this is quadratic.
        (
            "dense: 60 KB tokens full of matches".into(),
            repeat(
                &format!(
                    "{}{} x\n",
                    concat!("eyJhbGciOiJIUzI1NiJ9", ".eyJzdWIiOiIx"),
                    concat!(".ey", "Jabcd").repeat(7500)
                ),
                size / 10,
            ),
        ),
    ];
    println!(
        "| text | MiB | passes(), MiB/s | redacted as a reader does, MiB/s | values replaced |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for f in files {
        match std::fs::read(f) {
            Ok(data) => texts.push((format!("file: {f}"), data)),
            Err(e) => eprintln!("{f}: {e}"),
        }
    }
    for (name, text) in texts.iter().filter(|(n, _)| n.contains(&only)) {
        let bs = batches(text);
        let r = Redactor::new();
        // Best of five: the machine may be shared.
        let mut best = f64::MAX;
        let mut passing = 0;
        for _ in 0..5 {
            let t = Instant::now();
            passing = bs.iter().filter(|b| r.passes(b)).count();
            best = best.min(t.elapsed().as_secs_f64());
        }
        let mut best_full = f64::MAX;
        let mut replaced = 0;
        for _ in 0..5 {
            let t = Instant::now();
            let (shown, n) = redact(text);
            best_full = best_full.min(t.elapsed().as_secs_f64());
            replaced = n;
            assert!(shown > 0);
        }
        let m = text.len() as f64 / f64::from(1 << 20);
        // passes() is the fast path only where batches pass; elsewhere it answers early.
        let fast = if passing == bs.len() {
            format!("{:.0}", m / best)
        } else {
            "-".to_string()
        };
        println!(
            "| {name} | {m:.0} | {fast} | {:.0} | {replaced} |",
            m / best_full
        );
    }
}
