//! Redacts every file of a folder as readbox's readers do (a batch of whole lines that passes
//! the keyword prefilter goes through as it is, otherwise line by line, with long lines in
//! pieces), and writes the redacted copies to another folder, for `benches/redaction/run` to
//! score.
//!
//!     cargo run --release --example redaction-scan IN_DIR OUT_DIR

use std::path::Path;

use readbox::redact::{MAX_LINE, Redactor, Shown};

fn redact(data: &[u8]) -> Vec<u8> {
    let mut r = Redactor::new();
    let mut out = Vec::with_capacity(data.len());
    for line in data.split_inclusive(|&b| b == b'\n') {
        if line.len() > MAX_LINE {
            let mut long = r.long_line();
            for piece in line.chunks(MAX_LINE) {
                out.extend(long.feed(&mut r, piece));
            }
            out.extend(long.finish(&mut r));
            continue;
        }
        if r.clean_prefix(line) == line.len() {
            out.extend_from_slice(line);
            continue;
        }
        match r.line(line) {
            Shown::Same => out.extend_from_slice(line),
            Shown::Replaced(v) => out.extend(v),
            Shown::Hidden => {}
        }
    }
    out
}

fn walk(from: &Path, to: &Path) -> std::io::Result<usize> {
    std::fs::create_dir_all(to)?;
    let mut n = 0;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type()?.is_dir() {
            n += walk(&src, &dst)?;
        } else {
            std::fs::write(&dst, redact(&std::fs::read(&src)?))?;
            n += 1;
        }
    }
    Ok(n)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [from, to] = args.as_slice() else {
        eprintln!("usage: redaction-scan IN_DIR OUT_DIR");
        std::process::exit(2);
    };
    match walk(Path::new(from), Path::new(to)) {
        Ok(n) => eprintln!("redacted {n} files into {to}"),
        Err(e) => {
            eprintln!("redaction-scan: {e}");
            std::process::exit(2);
        }
    }
}
