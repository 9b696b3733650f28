//! The repository explains itself: every place the code, the tests or the README cite a section
//! of the design documents (`docs/contract.md#limits`, a bare `#limits` continuing such a
//! citation, a Markdown link `[…](security.md#landlock)`), that section exists, so a renamed
//! heading cannot leave a comment pointing nowhere; and nothing cites a document that is not in
//! the repository.

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
            .map(|(_, a)| a)
            .unwrap_or_else(|| panic!("no design document {doc}"))
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
