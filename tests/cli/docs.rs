//! The man pages in `man/` and the shell completions in `completions/` are generated from the
//! registry by [`crate::generators`] and committed so that packagers need no build step; the
//! test [`committed_docs_match_the_registry`] fails when they drift from what is generated, and
//! `READBOX_REGENERATE_DOCS=1 cargo test --test cli docs` rewrites them instead. The other tests
//! here render the pages with `man` and check what they say against the registry, the usage
//! text and the policy. (The completions run in the real shells in `completions.rs`.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use readbox::registry::ParamKind;
use readbox::tools::TOOLS;

use crate::generators::man::{default_settings, example_call, settings, usage_headline};
use crate::generators::{GENERATED_DIRS, META, generate, generated_in_tempdir, meta_signature};

/// The variable that turns the drift test into the regenerator.
const REGENERATE: &str = "READBOX_REGENERATE_DOCS";

/// The command that regenerates, as the drift test's message shows it.
const REGENERATE_COMMAND: &str = "READBOX_REGENERATE_DOCS=1 cargo test --test cli docs";

fn package_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The first line where two texts differ, 1-based, for the drift message.
fn first_difference(a: &str, b: &str) -> usize {
    a.lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or_else(|| a.lines().count().min(b.lines().count()))
        + 1
}

/// The files now in the generated folders, relative to the package root.
fn committed_files() -> BTreeSet<PathBuf> {
    let mut found = BTreeSet::new();
    for dir in GENERATED_DIRS {
        let Ok(entries) = std::fs::read_dir(package_root().join(dir)) else {
            continue;
        };
        for e in entries {
            let e = e.expect("read_dir entry");
            found.insert(Path::new(dir).join(e.file_name()));
        }
    }
    found
}

#[test]
fn committed_docs_match_the_registry() {
    let root = package_root();
    let files = generate();
    if std::env::var_os(REGENERATE).is_some_and(|v| v == "1") {
        for dir in GENERATED_DIRS {
            std::fs::create_dir_all(root.join(dir)).expect("create the generated folder");
        }
        for stale in committed_files() {
            if !files.contains_key(&stale) {
                std::fs::remove_file(root.join(&stale)).expect("remove a stale generated file");
            }
        }
        for (rel, text) in &files {
            // Written beside and renamed, so that a test reading the folder meanwhile sees a
            // whole file, old or new.
            let path = root.join(rel);
            let tmp = path.with_extension("tmp-regenerate");
            std::fs::write(&tmp, text).expect("write a generated file");
            std::fs::rename(&tmp, &path).expect("rename a generated file");
        }
        eprintln!("docs: rewrote {} files", files.len());
        return;
    }
    let mut problems = Vec::new();
    for (rel, text) in &files {
        match std::fs::read_to_string(root.join(rel)) {
            Ok(committed) if committed == *text => {}
            Ok(committed) => problems.push(format!(
                "{}: differs from line {}",
                rel.display(),
                first_difference(&committed, text)
            )),
            Err(e) => problems.push(format!("{}: {e}", rel.display())),
        }
    }
    for extra in committed_files() {
        if !files.contains_key(&extra) {
            problems.push(format!("{}: no longer generated", extra.display()));
        }
    }
    assert!(
        problems.is_empty(),
        "the man pages and completions are out of date with the registry:\n  {}\n\
         run `{REGENERATE_COMMAND}` and commit the result",
        problems.join("\n  ")
    );
}

#[test]
fn one_page_per_tool_and_the_completions_of_three_shells() {
    let names: Vec<String> = generate().keys().map(|p| p.display().to_string()).collect();
    let mut expected = vec![
        "completions/_readbox".to_string(),
        "completions/readbox-links.bash".into(),
        "completions/readbox-links.fish".into(),
        "completions/readbox-links.zsh".into(),
        "completions/readbox.bash".into(),
        "completions/readbox.fish".into(),
        "man/readbox.1".into(),
    ];
    expected.extend(TOOLS.iter().map(|t| format!("man/readbox-{}.1", t.name)));
    expected.sort();
    assert_eq!(names, expected);
}

fn man_installed() -> bool {
    Process::new("man")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `MANWIDTH=80 man -l PAGE`: (the page as text, what man and groff said on stderr).
fn render_page(path: &Path) -> (String, String) {
    let out = Process::new("man")
        .arg("-l")
        .arg(path)
        .env("MANWIDTH", "80")
        // Plain text: no pager, no bold or underline sequences.
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MAN_KEEP_FORMATTING", "")
        .stdin(Stdio::null())
        .output()
        .expect("run man");
    assert!(out.status.success(), "man -l {} failed", path.display());
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_man_page_renders_without_warnings() {
    if !man_installed() {
        eprintln!("skipped: `man` is not installed, so the pages cannot be rendered");
        return;
    }
    let (dir, files) = generated_in_tempdir();
    let mut pages = 0;
    for rel in files.keys().filter(|p| p.starts_with("man")) {
        let (text, warnings) = render_page(&dir.path().join(rel));
        assert_eq!(warnings, "", "man -l {} warned", rel.display());
        assert!(
            text.lines().all(|l| l.chars().count() <= 80),
            "{} has a line wider than 80 columns:\n{text}",
            rel.display()
        );
        pages += 1;
    }
    assert_eq!(pages, TOOLS.len() + 1);
}

/// The rendered page with its lines joined, so that a check does not depend on where a line
/// was broken.
fn flattened(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn tool_pages_show_the_registry() {
    if !man_installed() {
        eprintln!("skipped: `man` is not installed, so the pages cannot be rendered");
        return;
    }
    let (dir, _) = generated_in_tempdir();
    for t in TOOLS {
        let (text, _) = render_page(&dir.path().join(format!("man/readbox-{}.1", t.name)));
        let text = flattened(&text);
        assert!(
            text.contains(&format!("readbox-{} - {}", t.name, t.summary)),
            "{}: NAME line in {text}",
            t.name
        );
        assert!(
            text.contains(&format!("readbox {}", t.signature())),
            "{}: multicall synopsis in {text}",
            t.name
        );
        let link = if matches!(t.run, readbox::tools::Runs::Shell) {
            format!("a link named {} made by hand", t.name)
        } else {
            format!(
                "link (symbolic link, hard link or copy) whose file name is {}",
                t.name
            )
        };
        assert!(text.contains(&link), "{}: the link form in {text}", t.name);
        for p in t.params {
            assert!(
                text.contains(&flattened(p.help)),
                "{}: help of {} in {text}",
                t.name,
                p.name
            );
            if let Some(d) = p.default {
                assert!(
                    text.contains(&format!("{}] [default: {d}]", p.name.to_ascii_uppercase())),
                    "{}: default of {} in {text}",
                    t.name,
                    p.name
                );
            }
        }
        assert!(
            text.contains(&example_call(t)),
            "{}: example in {text}",
            t.name
        );
    }
}

#[test]
fn main_page_says_what_readbox_help_says() {
    if !man_installed() {
        eprintln!("skipped: `man` is not installed, so the pages cannot be rendered");
        return;
    }
    let (dir, _) = generated_in_tempdir();
    let (text, _) = render_page(&dir.path().join("man/readbox.1"));
    let text = flattened(&text);
    assert!(text.contains(&format!("readbox - {}", usage_headline())));
    assert!(text.contains("Arguments are positional only: no options."));
    assert!(text.contains(
        r#"Every call prints one JSON line {"output": ..., "error": ..., "truncated": ...};"#
    ));
    assert!(text.contains("2 error, 127 unknown tool."));
    for t in TOOLS {
        assert!(text.contains(&format!("{}; see readbox-{}(1).", t.summary, t.name)));
    }
    for m in META {
        assert!(
            text.contains(&meta_signature(m)),
            "{}: {text}",
            meta_signature(m)
        );
        assert!(
            text.contains(&flattened(m.about)),
            "{}: {}",
            m.name,
            m.about
        );
    }
    for s in settings() {
        let shown = if s.var.is_empty() { s.key } else { s.var };
        assert!(text.contains(shown), "{shown} in {text}");
    }
    assert!(text.contains("READBOX_CONFIG"));
    assert!(text.contains("FILES /etc/readbox/config.toml"));
    // Defaults taken from the code, not written here.
    assert!(text.contains("default: 32768)"), "{text}");
    assert!(
        text.contains("default: .env .env.* .ssh .aws *.pem *.key)"),
        "{text}"
    );
    assert!(text.contains(&format!("default: {})", readbox::registry::NAMES.join(" "))));
}

#[test]
fn every_policy_setting_is_documented() {
    let code: BTreeSet<String> = default_settings().keys().cloned().collect();
    let documented: BTreeSet<String> = settings().iter().map(|s| s.key.to_string()).collect();
    assert_eq!(
        documented, code,
        "the policy's table against `readbox policy`"
    );
    for s in settings() {
        assert!(!s.meaning.is_empty(), "{} says what it means", s.key);
    }
}

/// The man pages and `readbox help` show an integer's range only through `Param.help`, so the
/// words there must match the bounds the parser enforces.
#[test]
fn integer_help_states_the_parsers_range() {
    let mut checked = 0;
    for t in TOOLS {
        for p in t.params {
            if let ParamKind::Int { min, max } = p.kind {
                let range = if max == u64::MAX {
                    format!("(from {min})")
                } else {
                    format!("({min} to {max})")
                };
                assert!(
                    p.help.contains(&range),
                    "{} {}: help {:?} does not say {range}",
                    t.name,
                    p.name,
                    p.help
                );
                checked += 1;
            }
        }
    }
    // from_line (cat), lines (head, tail), max_depth (find, grep), context_lines (diff).
    assert_eq!(checked, 6);
}
