//! The bash and fish completions that [`crate::generators::completions`] writes, run in the real
//! shells against a folder of known names: every position completes by its meaning (a PATH file
//! names, a boolean `true false`, FILE_TYPE `all file directory`, a TOOL the tool names, free
//! text nothing), the cases people type, and the link names only when opted in.

use std::path::PathBuf;
use std::process::{Command as Process, Stdio};

use readbox::registry::NAMES;

use crate::generators::completions::{Offer, entries, fish_quote, linked, slots};
use crate::generators::{META, generated_in_tempdir};

// ---------------------------------------------------------------------------------------------
// Tests: the committed scripts (equal to the generated ones, which the drift test checks) run in
// the real shells, against a folder of known names.
// ---------------------------------------------------------------------------------------------

/// A folder of known names for the shells to complete, and the generated scripts.
struct Fixture {
    /// Holds `work/` (the shells' working directory) and the generated files.
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let (dir, _) = generated_in_tempdir();
        let work = dir.path().join("work");
        std::fs::create_dir_all(work.join("alps")).expect("mkdir");
        for f in ["alpha.txt", "beta.md", "key=value.txt"] {
            std::fs::write(work.join(f), "x\n").expect("write");
        }
        Fixture { dir }
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn script(&self, name: &str) -> PathBuf {
        self.dir.path().join("completions").join(name)
    }
}

/// The names in the fixture's `work/`, as bash's `compgen -f` gives them.
const BASH_FILES: &[&str] = &["alpha.txt", "alps", "beta.md", "key=value.txt"];

/// The same names as fish offers them (a directory with its `/`).
const FISH_FILES: &[&str] = &["alpha.txt", "alps/", "beta.md", "key=value.txt"];

fn sorted(words: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = words.iter().map(ToString::to_string).collect();
    v.sort();
    v
}

/// The words bash puts in COMP_WORDS for `line` with the cursor at its end, as bash 5 splits
/// them: at blanks outside quotes, and a run of `=` or `:` outside quotes (characters of
/// COMP_WORDBREAKS) is a word of its own; a line that ends in a blank gets an empty last word.
fn bash_comp_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut breaking = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    let mut started = false;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            word.push(c);
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            ' ' | '\t' => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
                continue;
            }
            '=' | ':' if !breaking => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                breaking = true;
            }
            '=' | ':' => {}
            _ => {
                if breaking && started {
                    words.push(std::mem::take(&mut word));
                }
                breaking = false;
                if c == '\'' || c == '"' {
                    quote = Some(c);
                }
                if c == '\\' {
                    word.push(c);
                    if let Some(next) = chars.next() {
                        word.push(next);
                    }
                    started = true;
                    continue;
                }
            }
        }
        word.push(c);
        started = true;
    }
    // The word under the cursor, empty after a blank.
    words.push(word);
    words
}

#[test]
fn bash_comp_words_splits_as_bash_does() {
    // What bash 5.2 put in COMP_WORDS for these lines, typed at a terminal.
    let cases: &[(&str, &[&str])] = &[
        ("rb grep key=val", &["rb", "grep", "key", "=", "val"]),
        ("rb grep 'a b' ", &["rb", "grep", "'a b'", ""]),
        ("rb grep a:b c", &["rb", "grep", "a", ":", "b", "c"]),
        ("rb grep \"x y", &["rb", "grep", "\"x y"]),
        ("rb  x  y", &["rb", "x", "y"]),
        ("rb grep ab\\ c ", &["rb", "grep", "ab\\ c", ""]),
        ("rb grep key=", &["rb", "grep", "key", "="]),
        ("rb grep key= ", &["rb", "grep", "key", "=", ""]),
    ];
    for (line, words) in cases {
        assert_eq!(bash_comp_words(line), *words, "{line:?}");
    }
}

/// `s` as one bash single-quoted word.
fn bash_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// What bash's completion offered for one line.
#[derive(Debug)]
struct BashOffer {
    /// The function registered for the command word, if any.
    registered: bool,
    /// The options the function set with `compopt`.
    options: String,
    /// COMPREPLY, sorted.
    words: Vec<String>,
}

/// Sources `scripts` into one `bash --norc` in the fixture's `work/`, then, for each line (the
/// cursor at its end), calls the function that `complete -p` shows for its command word the way
/// readline does: COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT set, and the command, the
/// word and the word before as arguments. `compopt` answers only inside readline's own
/// completion, so a function of that name records the options instead. The last element of the
/// answer is `complete -p` (every registration).
fn bash_offers(fx: &Fixture, scripts: &[&str], lines: &[&str]) -> (Vec<BashOffer>, String) {
    let mut program = String::from(
        r#"for s in "$@"; do source "$s" || exit 3; done
compopt() { options+=" $*"; }
run() {
    local line=$1 spec
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE=$line
    COMP_POINT=${#line}
    COMPREPLY=()
    options=
    printf '%s\n' '--case--'
    if spec=$(complete -p -- "${COMP_WORDS[0]##*/}" 2>/dev/null) && [[ $spec =~ -F\ ([^ ]+) ]]; then
        "${BASH_REMATCH[1]}" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf 'options:%s\n' "$options"
        ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}"
    else
        printf 'unregistered\n'
    fi
    return 0
}
"#,
    );
    for line in lines {
        let words: Vec<String> = bash_comp_words(line)
            .iter()
            .map(|w| bash_quote(w))
            .collect();
        program.push_str(&format!("run {} {}\n", bash_quote(line), words.join(" ")));
    }
    program.push_str("printf '%s\\n' '--case--'\ncomplete -p\n");
    let out = Process::new("bash")
        .args(["--noprofile", "--norc", "-c", &program, "bash"])
        .args(scripts.iter().map(|s| fx.script(s)))
        .current_dir(fx.work())
        .stdin(Stdio::null())
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "bash failed ({:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "bash wrote on stderr"
    );
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    let mut blocks: Vec<&str> = stdout.split("--case--\n").skip(1).collect();
    let registrations = blocks.pop().expect("complete -p").to_string();
    let offers: Vec<BashOffer> = blocks
        .iter()
        .map(|b| {
            let mut lines = b.lines();
            let head = lines.next().unwrap_or_default();
            let mut words: Vec<String> = lines.map(str::to_string).collect();
            words.sort();
            BashOffer {
                registered: head != "unregistered",
                options: head
                    .strip_prefix("options:")
                    .unwrap_or_default()
                    .to_string(),
                words,
            }
        })
        .collect();
    assert_eq!(offers.len(), lines.len());
    (offers, registrations)
}

/// What `offer` should give in the fixture, for bash or fish (`files` and `dirs` as that shell
/// writes them).
fn expected(offer: Offer, files: &[&str], dirs: &[&str]) -> Vec<String> {
    match offer {
        Offer::Paths => sorted(files),
        Offer::Dirs => sorted(dirs),
        Offer::Words(w) => sorted(w),
        Offer::Tools => sorted(NAMES),
        Offer::Nothing => Vec::new(),
    }
}

/// For every tool and meta command, a line per argument (and one past the last): the line, the
/// command, the argument's position from 1, what it should offer.
fn every_position(prefix: &str, links: bool) -> Vec<(String, &'static str, usize, Offer)> {
    let mut cases = Vec::new();
    for e in entries() {
        if links && !linked().contains(&e.name) {
            continue;
        }
        for i in 0..=e.slots.len() {
            let offer = e.slots.get(i).map_or(Offer::Nothing, |s| s.offer);
            let line = format!("{prefix}{} {}", e.name, "x ".repeat(i));
            cases.push((line, e.name, i + 1, offer));
        }
    }
    cases
}

#[test]
fn bash_completes_every_position_by_its_meaning() {
    let fx = Fixture::new();
    let cases = every_position("readbox ", false);
    let lines: Vec<&str> = cases.iter().map(|c| c.0.as_str()).collect();
    let (offers, registrations) = bash_offers(&fx, &["readbox.bash"], &lines);
    // No fallback to file names: a position that offers nothing offers nothing.
    assert_eq!(registrations, "complete -F _readbox readbox\n");
    for ((line, name, n, offer), got) in cases.iter().zip(&offers) {
        assert_eq!(
            got.words,
            expected(*offer, BASH_FILES, &["alps"]),
            "{name} argument {n}: {line:?}"
        );
        let options = match offer {
            Offer::Paths => " -o filenames -o default",
            Offer::Dirs => " -o filenames -o dirnames",
            _ => "",
        };
        assert_eq!(got.options, options, "{name} argument {n}: {line:?}");
    }
}

#[test]
fn bash_completes_the_cases_people_type() {
    let fx = Fixture::new();
    let mut commands: Vec<&str> = NAMES.to_vec();
    commands.extend(META.iter().map(|m| m.name));
    let cases: &[(&str, Vec<String>)] = &[
        ("readbox ", sorted(&commands)),
        ("readbox gr", sorted(&["grep"])),
        ("readbox -", sorted(&["-h", "--help", "-V", "--version"])),
        ("readbox help he", sorted(&["head"])),
        ("readbox call ", sorted(NAMES)),
        ("readbox call grep ", vec![]),
        // grep's PATTERN is free text; then PATH, RECURSIVE, IGNORE_CASE, FILE_PATTERN.
        ("readbox grep ", vec![]),
        ("readbox grep fo", vec![]),
        ("readbox grep foo ", sorted(BASH_FILES)),
        ("readbox grep foo al", sorted(&["alpha.txt", "alps"])),
        ("readbox grep foo . ", sorted(&["true", "false"])),
        ("readbox grep foo . t", sorted(&["true"])),
        ("readbox grep foo . true ", sorted(&["true", "false"])),
        ("readbox grep foo . true false ", vec![]),
        // A quoted PATTERN, one with = or :, and one after -- are one argument each.
        ("readbox grep 'fn main' ", sorted(BASH_FILES)),
        ("readbox grep \"a b\" b", sorted(&["beta.md"])),
        ("readbox grep key=value ", sorted(BASH_FILES)),
        ("readbox grep a:b ", sorted(BASH_FILES)),
        ("readbox grep -- -x ", sorted(BASH_FILES)),
        ("readbox grep -- ", vec![]),
        // find wants a path first, then its PATTERN, then FILE_TYPE.
        ("readbox find ", sorted(BASH_FILES)),
        ("readbox find . ", vec![]),
        (
            "readbox find . '*.rs' ",
            sorted(&["all", "file", "directory"]),
        ),
        ("readbox find . x d", sorted(&["directory"])),
        ("readbox ls . ", sorted(&["true", "false"])),
        ("readbox cat alpha.txt ", vec![]),
        ("readbox diff alpha.txt b", sorted(&["beta.md"])),
        // bash keeps `key=` of the word and inserts the rest.
        ("readbox cat key=", sorted(&["value.txt"])),
        ("readbox cat key=v", sorted(&["value.txt"])),
        ("readbox install ", sorted(&["alps"])),
        ("readbox version ", vec![]),
        ("readbox nosuchtool ", vec![]),
    ];
    let lines: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let (offers, _) = bash_offers(&fx, &["readbox.bash"], &lines);
    for ((line, want), got) in cases.iter().zip(&offers) {
        assert_eq!(&got.words, want, "{line:?}");
    }
}

#[test]
fn bash_completes_the_link_names_only_when_opted_in() {
    let fx = Fixture::new();
    // readbox.bash alone leaves the system's cat and grep alone.
    let (offers, registrations) = bash_offers(&fx, &["readbox.bash"], &["cat ", "grep x "]);
    assert!(offers.iter().all(|o| !o.registered), "{offers:?}");
    assert_eq!(registrations, "complete -F _readbox readbox\n");

    // readbox-links.bash registers the tools' names, and nothing else.
    let cases = every_position("", true);
    let mut lines: Vec<&str> = cases.iter().map(|c| c.0.as_str()).collect();
    lines.extend(["/opt/agent-bin/grep x ", "grep 'fn main' a", "readbox "]);
    let (offers, registrations) = bash_offers(&fx, &["readbox-links.bash"], &lines);
    // bash lists one registration per name, in an order of its own.
    let mut registered: Vec<&str> = registrations.lines().collect();
    registered.sort_unstable();
    let mut want: Vec<String> = linked()
        .iter()
        .map(|n| format!("complete -F _readbox_link {n}"))
        .collect();
    want.sort();
    assert_eq!(registered, want);
    for ((line, name, n, offer), got) in cases.iter().zip(&offers) {
        assert_eq!(
            got.words,
            expected(*offer, BASH_FILES, &[]),
            "{name} argument {n}: {line:?}"
        );
    }
    let rest = &offers[cases.len()..];
    assert_eq!(rest[0].words, sorted(BASH_FILES), "a link typed as a path");
    assert_eq!(rest[1].words, sorted(&["alpha.txt", "alps"]));
    assert!(!rest[2].registered, "readbox-links.bash registers readbox");

    // Both files together: each name keeps its own function.
    let (offers, _) = bash_offers(
        &fx,
        &["readbox.bash", "readbox-links.bash"],
        &["readbox grep x ", "grep x ", "grep "],
    );
    assert_eq!(offers[0].words, sorted(BASH_FILES));
    assert_eq!(offers[1].words, sorted(BASH_FILES));
    assert_eq!(offers[2].words, Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// fish
// ---------------------------------------------------------------------------------------------

fn fish_installed() -> bool {
    Process::new("fish")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `complete -C LINE` for each line in one fish, set up as a user would be: readbox.fish in
/// `~/.config/fish/completions` (fish loads it when `readbox` is completed, if `readbox` is a
/// command, so `bin/` holds it and links named after the tools), and with `opt_in`, a
/// config.fish that sources readbox-links.fish. The system's own completions (cat.fish, …) load
/// as they would. Answers the candidates of each line, sorted, without their descriptions.
fn fish_offers(fx: &Fixture, opt_in: bool, lines: &[&str]) -> Vec<Vec<String>> {
    let home = fx
        .dir
        .path()
        .join(if opt_in { "home-links" } else { "home" });
    let completions = home.join(".config/fish/completions");
    std::fs::create_dir_all(&completions).expect("mkdir");
    std::fs::copy(fx.script("readbox.fish"), completions.join("readbox.fish")).expect("copy");
    let config = if opt_in {
        format!(
            "source {}\n",
            fish_quote(&fx.script("readbox-links.fish").display().to_string())
        )
    } else {
        String::new()
    };
    std::fs::write(home.join(".config/fish/config.fish"), config).expect("write");
    let bin = fx.dir.path().join("bin");
    if !bin.exists() {
        std::fs::create_dir_all(&bin).expect("mkdir");
        let exe = crate::support::binary();
        for name in std::iter::once("readbox").chain(NAMES.iter().copied()) {
            std::os::unix::fs::symlink(exe, bin.join(name)).expect("symlink");
        }
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Process::new("fish")
        .args([
            "-c",
            "for line in $argv; complete -C $line; echo --end--; end",
        ])
        .args(lines)
        .current_dir(fx.work())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .expect("run fish");
    assert!(
        out.status.success(),
        "fish failed ({:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "fish wrote on stderr"
    );
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    let blocks: Vec<Vec<String>> = stdout
        .split("--end--\n")
        .take(lines.len())
        .map(|b| {
            let mut words: Vec<String> = b
                .lines()
                .map(|l| l.split('\t').next().unwrap_or_default().to_string())
                .collect();
            words.sort();
            words
        })
        .collect();
    assert_eq!(blocks.len(), lines.len());
    blocks
}

#[test]
fn fish_completes_every_position_by_its_meaning() {
    if !fish_installed() {
        eprintln!("skipped: fish is not installed, so its completion cannot be run");
        return;
    }
    let fx = Fixture::new();
    let mut commands: Vec<&str> = NAMES.to_vec();
    commands.extend(META.iter().map(|m| m.name));
    let cases = every_position("readbox ", false);
    let mut lines: Vec<&str> = cases.iter().map(|c| c.0.as_str()).collect();
    let people: &[(&str, Vec<String>)] = &[
        ("readbox ", sorted(&commands)),
        ("readbox gr", sorted(&["grep"])),
        ("readbox --", sorted(&["--help", "--version"])),
        ("readbox help ", sorted(NAMES)),
        ("readbox help he", sorted(&["head"])),
        ("readbox call ", sorted(NAMES)),
        ("readbox call grep ", vec![]),
        ("readbox grep ", vec![]),
        ("readbox grep foo ", sorted(FISH_FILES)),
        ("readbox grep foo . ", sorted(&["true", "false"])),
        ("readbox grep 'fn main' ", sorted(FISH_FILES)),
        ("readbox grep key=value ", sorted(FISH_FILES)),
        ("readbox grep -- -x ", sorted(FISH_FILES)),
        (
            "readbox find . '*.rs' ",
            sorted(&["all", "file", "directory"]),
        ),
        ("readbox find . x d", sorted(&["directory"])),
        ("readbox cat alpha.txt ", vec![]),
        ("readbox install ", sorted(&["alps/"])),
    ];
    lines.extend(people.iter().map(|c| c.0));
    // Without the opt-in, the system's cat is left alone: fish offers files for any argument.
    lines.push("cat alpha.txt ");
    let offers = fish_offers(&fx, false, &lines);
    for ((line, name, n, offer), got) in cases.iter().zip(&offers) {
        assert_eq!(
            got,
            &expected(*offer, FISH_FILES, &["alps/"]),
            "{name} argument {n}: {line:?}"
        );
    }
    for ((line, want), got) in people.iter().zip(&offers[cases.len()..]) {
        assert_eq!(got, want, "{line:?}");
    }
    assert_eq!(offers.last().expect("cat"), &sorted(FISH_FILES));
}

#[test]
fn fish_completes_the_link_names_when_opted_in() {
    if !fish_installed() {
        eprintln!("skipped: fish is not installed, so its completion cannot be run");
        return;
    }
    let fx = Fixture::new();
    let cases = every_position("", true);
    let mut lines: Vec<&str> = cases.iter().map(|c| c.0.as_str()).collect();
    lines.extend(["grep 'fn main' a", "readbox help "]);
    let offers = fish_offers(&fx, true, &lines);
    for ((line, name, n, offer), got) in cases.iter().zip(&offers) {
        assert_eq!(
            got,
            &expected(*offer, FISH_FILES, &[]),
            "{name} argument {n}: {line:?}"
        );
    }
    let rest = &offers[cases.len()..];
    assert_eq!(rest[0], sorted(&["alpha.txt", "alps/"]));
    assert_eq!(
        rest[1],
        sorted(NAMES),
        "readbox's own completion still loads"
    );
}

/// [`slots`] serves the tests the positions of a command by name; check it against the
/// registry's own words for the two commands the faults were found in.
#[test]
fn slots_follow_the_registry() {
    let kinds = |name: &str| slots(name).iter().map(|s| s.kind).collect::<Vec<_>>();
    assert_eq!(
        kinds("grep"),
        ["text", "path", "bool", "bool", "text", "int"]
    );
    assert_eq!(kinds("find"), ["path", "text", "file_type", "int"]);
    assert_eq!(kinds("cat"), ["path", "int"]);
    assert_eq!(kinds("help"), ["tool"]);
    assert_eq!(kinds("call"), ["tool", "text"]);
    assert_eq!(kinds("install"), ["dir"]);
}
