//! The repository explains itself: every place the code, the tests or the README cite a section
//! of the design documents (`docs/contract.md#limits`, a bare `#limits` continuing such a
//! citation, a Markdown link `[…](security.md#landlock)`), that section exists, so a renamed
//! heading cannot leave a comment pointing nowhere; nothing cites a document that is not in
//! the repository; the modules keep the layers `src/lib.rs` lists; and only `src/envelope.rs`
//! touches standard output.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The design documents, by the name citations use.
const DOCS: &[&str] = &["contract.md", "security.md"];

/// The folders and files whose citations are checked, relative to the crate root.
const CITING: &[&str] = &["src", "tests", "benches", "README.md", "docs"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The anchor GitHub gives a heading: lower case, punctuation other than `-` and `_` dropped,
/// spaces made hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of one document: the slugs of its headings outside code blocks.
fn anchors(doc: &str) -> BTreeSet<String> {
    let text = fs::read_to_string(root().join("docs").join(doc)).expect("a design document");
    let mut fenced = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.insert(slug(line.trim_start_matches('#')));
        }
    }
    found
}

fn files_under(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<_> = fs::read_dir(path)
            .expect("a readable folder")
            .map(|e| e.expect("an entry").path())
            .collect();
        entries.sort();
        for entry in entries {
            files_under(&entry, out);
        }
    } else if matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("rs" | "md" | "py" | "sh")
    ) {
        out.push(path.to_path_buf());
    }
}

/// Every `#anchor` that follows `at` in `text`: the anchor itself, then the bare `#anchor`s that
/// continue the citation (`docs/contract.md#policy, #limits and the #notes`).
fn cited_after(text: &str) -> (String, Vec<String>) {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
            .collect()
    };
    let first = word(text);
    let mut more = Vec::new();
    // A continuation is a bare `#word` before the citation's closing parenthesis or full stop.
    let end = text.find([')', '.']).unwrap_or(text.len());
    let mut rest = &text[first.len()..end];
    while let Some(at) = rest.find('#') {
        let anchor = word(&rest[at + 1..]);
        if !anchor.is_empty() {
            more.push(anchor.clone());
        }
        rest = &rest[at + 1 + anchor.len()..];
    }
    (first, more)
}

#[test]
fn every_cited_section_of_the_design_documents_exists() {
    let known: Vec<(&str, BTreeSet<String>)> = DOCS.iter().map(|d| (*d, anchors(d))).collect();
    let of = |doc: &str| {
        known
            .iter()
            .find(|(d, _)| *d == doc)
            .map_or_else(|| panic!("no design document {doc}"), |(_, a)| a)
    };
    let mut files = Vec::new();
    for place in CITING {
        files_under(&root().join(place), &mut files);
    }
    let mut checked = 0;
    let mut missing = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("a text file");
        // Comments wrap citations across lines; join a file's lines so a continuation on the next
        // line stays with its citation.
        let joined = text
            .lines()
            .map(|l| {
                l.trim_start()
                    .trim_start_matches("//!")
                    .trim_start_matches("//")
            })
            .collect::<Vec<_>>()
            .join(" ");
        let here = file
            .strip_prefix(root())
            .unwrap_or(file)
            .display()
            .to_string();
        let own = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        for doc in DOCS {
            for (at, _) in joined.match_indices(&format!("{doc}#")) {
                let (first, more) = cited_after(&joined[at + doc.len() + 1..]);
                for anchor in std::iter::once(first).chain(more) {
                    checked += 1;
                    if !of(doc).contains(&anchor) {
                        missing.push(format!("{here}: {doc}#{anchor}"));
                    }
                }
            }
        }
        // A document's links to its own sections: `](#anchor)`.
        if DOCS.contains(&own) && file.parent() == Some(&root().join("docs")) {
            for (at, _) in joined.match_indices("](#") {
                let (anchor, _) = cited_after(&joined[at + 3..]);
                checked += 1;
                if !of(own).contains(&anchor) {
                    missing.push(format!("{here}: #{anchor}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "cited sections that do not exist:\n{}",
        missing.join("\n")
    );
    assert!(
        checked > 50,
        "only {checked} citations were found: is the scan still reading the sources?"
    );
}

#[test]
fn nothing_cites_a_document_outside_the_repository() {
    // The names are built so that this file does not cite them itself.
    let outside = [
        ["SP", "EC.md"].concat(),
        ["THR", "EATS"].concat(),
        ["SP", "EC §"].concat(),
    ];
    let mut files = Vec::new();
    for place in CITING {
        files_under(&root().join(place), &mut files);
    }
    files_under(&root().join("man"), &mut files);
    let mut found = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("a text file");
        for (n, line) in text.lines().enumerate() {
            if outside.iter().any(|o| line.contains(o.as_str())) {
                found.push(format!("{}:{}: {line}", file.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "citations of documents outside the repository:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_slug_of_a_heading_is_githubs() {
    assert_eq!(
        slug(" Checks bracket the reads"),
        "checks-bracket-the-reads"
    );
    assert_eq!(slug("Decisions on details"), "decisions-on-details");
    assert_eq!(
        slug("Strict dispatch and arguments"),
        "strict-dispatch-and-arguments"
    );
    assert_eq!(
        slug("Ignore files (`.gitignore`)"),
        "ignore-files-gitignore"
    );
}

/// The modules of the library in the order of `src/lib.rs`'s list of layers.
fn layers() -> Vec<String> {
    let lib = fs::read_to_string(root().join("src/lib.rs")).expect("src/lib.rs");
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! - [`"))
        .filter_map(|l| l.split_once('`').map(|(m, _)| m.to_string()))
        .collect()
}

/// The top-level modules that the files of module `module` (`src/M.rs` and `src/M/…`) import
/// with `crate::`, outside their unit tests and comments.
fn imports(module: &str) -> BTreeSet<String> {
    let mut files = Vec::new();
    for place in [format!("{module}.rs"), module.to_string()] {
        let path = root().join("src").join(place);
        if path.exists() {
            files_under(&path, &mut files);
        }
    }
    let mut found = BTreeSet::new();
    for file in files {
        let text = fs::read_to_string(&file).expect("a source file");
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (at, _) in line.match_indices("crate::") {
                let name: String = line[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if name != module {
                    found.insert(name);
                }
            }
        }
    }
    found
}

#[test]
fn modules_import_only_the_layers_below_them() {
    let layers = layers();
    let on_disk: BTreeSet<String> = fs::read_dir(root().join("src"))
        .expect("src/")
        .filter_map(|e| {
            let path = e.expect("an entry").path();
            let name = path.file_name()?.to_str()?;
            let module = match name.strip_suffix(".rs") {
                Some(m) => m,
                None if path.join("mod.rs").exists() => name,
                None => return None,
            };
            (module != "lib" && module != "main").then(|| module.to_string())
        })
        .collect();
    assert_eq!(
        layers.iter().cloned().collect::<BTreeSet<_>>(),
        on_disk,
        "src/lib.rs's list of layers and the modules in src/ differ"
    );
    let mut upward = Vec::new();
    for (i, module) in layers.iter().enumerate() {
        for import in imports(module) {
            let at = layers.iter().position(|l| *l == import);
            match at {
                Some(at) if at > i => {}
                _ => upward.push(format!("{module} imports {import}")),
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports of a layer above or beside (reorder src/lib.rs's list, or move the code):\n{}",
        upward.join("\n")
    );
}

/// The code of `src/` that goes into the program: every `.rs` file but the unit tests' own
/// files, each cut before its `mod tests` block.
fn program_code() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    files_under(&root().join("src"), &mut files);
    files
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
        .map(|f| {
            let text = fs::read_to_string(&f).expect("a source file");
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
            (f, code.to_string())
        })
        .collect()
}

#[test]
fn only_the_envelope_touches_standard_output() {
    // Every answer, the envelope and `readbox mcp`'s messages alike, is written by one module,
    // so its escapes and its whole-line writes hold for all of them.
    let envelope = root().join("src/envelope.rs");
    let mut found = Vec::new();
    for (file, code) in program_code() {
        if file == envelope {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            // `print!` and `println!`, but not `eprint!` and `eprintln!` (standard error).
            let prints = ["print!(", "println!("].iter().any(|t| {
                line.match_indices(t)
                    .any(|(at, _)| !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
            });
            if prints || line.contains("stdout()") || line.contains("STDOUT") {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "standard output touched outside src/envelope.rs:\n{}",
        found.join("\n")
    );
}
