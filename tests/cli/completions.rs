//! The bash and fish completions, generated here from the registry and the meta commands of
//! [`super::docs`], and the tests that run them in the real shells.
//!
//! They complete **by meaning**, position by position, since readbox takes positional words
//! only (docs/contract.md#arguments): the N-th word after the tool is its N-th parameter, so
//! a PATH position offers file names, a boolean `true false`, FILE_TYPE `all file directory`,
//! `help` and `call` the tool names, and a PATTERN, a glob, JSON or a number nothing at all
//! (not even file names). clap_complete describes positional values by a flat list per
//! subcommand in bash and leaves positions out in fish, so these two scripts are written here;
//! zsh's `_arguments` handles positions, and stays clap_complete's (see `docs.rs`).
//!
//! Each shell also gets an opt-in file that completes the tools under their own names (`cat`,
//! `grep`, …, the links `readbox install DIR` makes): loading it replaces the completion of the
//! system's own `cat` in that shell, so nothing registers those names unless asked.
//!
//! Invariant: every position the registry defines has exactly one offer, and the scripts and
//! the tests both take it from [`slots`], never from a list of their own.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command as Process, Stdio};

use readbox::registry::{Kind, NAMES, Param, SHELL};

/// The names that `readbox install` links, and so that the links' completions register: every
/// name but the shell's (a completion for `sh` would change how the system's own shell completes).
fn linked() -> Vec<&'static str> {
    NAMES.iter().copied().filter(|n| *n != SHELL).collect()
}
use readbox::tools::TOOLS;

use super::docs::{FLAGS, META, MetaArg, generated_in_tempdir, meta_signature};

/// The words completion offers for a boolean: the canonical two. The other spellings
/// (`1 0 yes no on off`) are accepted but would only crowd the list.
pub(super) const BOOL_WORDS: &[&str] = &["true", "false"];

/// The words completion offers for FILE_TYPE (`f` and `d` are accepted too).
pub(super) const FILE_TYPE_WORDS: &[&str] = &["all", "file", "directory"];

/// What a shell offers at one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Offer {
    /// File and directory names: a PATH.
    Paths,
    /// Directory names: install's DIR.
    Dirs,
    /// These words only.
    Words(&'static [&'static str]),
    /// The tool names: the TOOL of `help` and `call`.
    Tools,
    /// Nothing: free text (a PATTERN, a glob, JSON) or a number.
    Nothing,
}

/// One positional argument as completion sees it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    /// The kind of word, as the bash script names it (`path`, `bool`, …).
    pub kind: &'static str,
    /// What is offered there.
    pub offer: Offer,
    /// The argument's help, the description fish shows beside the words.
    pub help: &'static str,
}

/// The slot of a tool's parameter.
pub(super) fn param_slot(p: &Param) -> Slot {
    let (kind, offer) = match p.kind {
        Kind::Path => ("path", Offer::Paths),
        Kind::Bool => ("bool", Offer::Words(BOOL_WORDS)),
        Kind::FileType => ("file_type", Offer::Words(FILE_TYPE_WORDS)),
        Kind::Int { .. } => ("int", Offer::Nothing),
        Kind::Text => ("text", Offer::Nothing),
    };
    Slot {
        kind,
        offer,
        help: p.help,
    }
}

/// The slot of a meta command's argument, by its name in the synopsis: a TOOL is a tool name, a
/// DIR a directory, anything else (JSON) free text.
pub(super) fn meta_slot(a: &MetaArg) -> Slot {
    let (kind, offer) = match a.value {
        "TOOL" => ("tool", Offer::Tools),
        "DIR" => ("dir", Offer::Dirs),
        _ => ("text", Offer::Nothing),
    };
    Slot {
        kind,
        offer,
        help: a.help,
    }
}

/// A tool or meta command with the slots of its arguments.
struct Entry {
    name: &'static str,
    /// What it does, the description fish shows beside the name.
    about: &'static str,
    /// `grep PATTERN [PATH=.] …`, a comment in the scripts.
    signature: String,
    slots: Vec<Slot>,
}

/// Every command of the multicall form: the tools in the registry's order, then the meta
/// commands.
fn entries() -> Vec<Entry> {
    let tools = TOOLS.iter().map(|t| Entry {
        name: t.name,
        about: t.summary,
        signature: t.signature(),
        slots: t.params.iter().map(param_slot).collect(),
    });
    let metas = META.iter().map(|m| Entry {
        name: m.name,
        about: m.about,
        signature: meta_signature(m)
            .strip_prefix("readbox ")
            .expect("meta signatures start with readbox")
            .to_string(),
        slots: m.args.iter().map(meta_slot).collect(),
    });
    let all: Vec<Entry> = tools.chain(metas).collect();
    for e in &all {
        // The names go into the scripts unquoted (case patterns, word lists).
        assert!(
            !e.name.is_empty() && e.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "command name {:?} is not a plain word",
            e.name
        );
    }
    all
}

/// The argument slots of the tool or meta command `name`.
fn slots(name: &str) -> Vec<Slot> {
    entries()
        .into_iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no command {name}"))
        .slots
}

/// The generated files this module owns, by path relative to the package root.
pub(super) fn scripts() -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    files.insert(
        PathBuf::from("completions/readbox.bash"),
        bash_script(false),
    );
    files.insert(
        PathBuf::from("completions/readbox-links.bash"),
        bash_script(true),
    );
    files.insert(
        PathBuf::from("completions/readbox.fish"),
        fish_script(false),
    );
    files.insert(
        PathBuf::from("completions/readbox-links.fish"),
        fish_script(true),
    );
    files.insert(
        PathBuf::from("completions/readbox-links.zsh"),
        zsh_links_script(),
    );
    files
}

// ---------------------------------------------------------------------------------------------
// bash
// ---------------------------------------------------------------------------------------------

const BASH_MAIN_HEAD: &str = "\
# bash completion for readbox, generated from its tool registry by tests/cli/docs.rs: do not
# edit. Load it with `source`, or install it as readbox in bash-completion's completions folder.
#
# It completes by meaning, one position after another: file names where a tool takes a PATH,
# true or false for a boolean, all, file or directory for FILE_TYPE, the tool names after help
# and call, and nothing where free text or a number goes (a PATTERN, a glob, JSON, LINES).
";

const BASH_LINKS_HEAD: &str = "\
# bash completion for readbox's tools under their own names (cat, grep, ...): the links that
# readbox install DIR makes. Generated from readbox's tool registry by tests/cli/docs.rs: do not
# edit.
#
# Opt-in: a shell that sources this file completes cat, grep, ls ... as readbox's tools, in place
# of the system's own cat, grep, ls. Source it where those names are readbox (after
# bash-completion, whose registrations it replaces). It stands alone: readbox.bash is not needed.
";

/// The part shared by both bash files: everything but the registration.
const BASH_BODY: &str = r#"
# Sets `words` to the words before the one under the cursor, as readbox will receive them, `cur`
# to that word up to the cursor, and `pre` to the start of `cur` that bash keeps when it inserts
# a completion. bash splits COMP_WORDS at the characters of COMP_WORDBREAKS too (key=value, a:b);
# the pieces that touch in the line are joined back, so that a PATTERN key=value counts as one
# argument.
_readbox_split() {
    local line=${COMP_LINE:0:COMP_POINT} piece i n=-1
    words=()
    for ((i = 0; i <= COMP_CWORD; i++)); do
        piece=${COMP_WORDS[i]}
        if ((n < 0)) || [[ $line == [[:space:]]* ]]; then
            line=${line#"${line%%[![:space:]]*}"}
            n=$((n + 1))
            words[n]=
        fi
        if ((i == COMP_CWORD)); then
            piece=$line
            pre=${words[n]}
            # After a lone = or :, bash completes an empty word.
            if [[ -n $piece && -z ${piece//[=:]/} ]]; then
                pre+=$piece
            fi
        fi
        words[n]+=$piece
        line=${line:${#piece}}
    done
    cur=${words[n]}
    unset "words[n]"
}

# Offers the words of $1 that start with `cur`.
_readbox_words() {
    local IFS=$' \t\n'
    COMPREPLY=($(compgen -W "$1" -- "$cur"))
}

# Offers the names `compgen $1` finds for `cur` (-f files and directories, -d directories), less
# the start that bash keeps. When it finds none, readline's own completion of names ($2: default
# or dirnames) takes over, which also understands quotes and backslashes.
_readbox_names() {
    local name
    COMPREPLY=()
    compopt -o filenames -o "$2" 2>/dev/null
    while IFS= read -r name; do
        COMPREPLY+=("${name#"$pre"}")
    done < <(compgen "$1" -- "$cur")
}

# Offers what argument $2 (from 0) of the tool or meta command $1 takes.
_readbox_offer() {
    local -a kinds=()
    case $1 in
@KINDS@
    esac
    case ${kinds[$2]} in
@OFFERS@
    esac
}

# Completes the argument under the cursor of the tool or meta command $1, whose arguments start
# at words[$2]. The first -- ends readbox's flag check and is not an argument.
_readbox_args() {
    local i n=0 ended=
    for ((i = $2; i < ${#words[@]}; i++)); do
        if [[ -z $ended && ${words[i]} == -- ]]; then
            ended=1
        else
            n=$((n + 1))
        fi
    done
    _readbox_offer "$1" "$n"
}

# readbox TOOL ARG..., readbox help TOOL, ...
_readbox() {
    local cur pre
    local -a words
    _readbox_split
    if ((${#words[@]} <= 1)); then
        if [[ $cur == -* ]]; then
            _readbox_words '@FLAGS@'
        else
            _readbox_words '@COMMANDS@'
        fi
    else
        _readbox_args "${words[1]}" 2
    fi
}

# TOOL ARG... through a link named after the tool ($1: the command as typed, /opt/bin/cat).
_readbox_link() {
    local cur pre
    local -a words
    _readbox_split
    _readbox_args "${1##*/}" 1
}

"#;

fn bash_script(links: bool) -> String {
    let all = entries();
    let kinds: Vec<String> = all
        .iter()
        .map(|e| {
            let kinds: Vec<&str> = e.slots.iter().map(|s| s.kind).collect();
            format!(
                "        {name}) kinds=({kinds}) ;; # {sig}",
                name = e.name,
                kinds = kinds.join(" "),
                sig = e.signature
            )
        })
        .collect();
    // One branch per kind that offers something, in the order the kinds are first met; the
    // others fall to the last branch, which offers nothing.
    let mut offers: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut silent: Vec<&str> = Vec::new();
    for slot in all.iter().flat_map(|e| e.slots.iter()) {
        if seen.contains(&slot.kind) {
            continue;
        }
        seen.push(slot.kind);
        let action = match slot.offer {
            Offer::Paths => "_readbox_names -f default".to_string(),
            Offer::Dirs => "_readbox_names -d dirnames".to_string(),
            Offer::Words(w) => format!("_readbox_words '{}'", w.join(" ")),
            Offer::Tools => format!("_readbox_words '{}'", NAMES.join(" ")),
            Offer::Nothing => {
                silent.push(slot.kind);
                continue;
            }
        };
        offers.push(format!("        {}) {action} ;;", slot.kind));
    }
    offers.push(format!(
        "        *) COMPREPLY=() ;; # {}, or past the last argument",
        silent.join(", ")
    ));
    let flags: Vec<String> = FLAGS
        .iter()
        .flat_map(|f| [format!("-{}", f.short), format!("--{}", f.long)])
        .collect();
    let commands: Vec<&str> = all.iter().map(|e| e.name).collect();
    let body = BASH_BODY
        .replace("@KINDS@", &kinds.join("\n"))
        .replace("@OFFERS@", &offers.join("\n"))
        .replace("@FLAGS@", &flags.join(" "))
        .replace("@COMMANDS@", &commands.join(" "));
    let (head, register) = if links {
        (
            BASH_LINKS_HEAD,
            format!("complete -F _readbox_link {}\n", linked().join(" ")),
        )
    } else {
        (BASH_MAIN_HEAD, "complete -F _readbox readbox\n".to_string())
    };
    format!("{head}{body}{register}")
}

// ---------------------------------------------------------------------------------------------
// fish
// ---------------------------------------------------------------------------------------------

const FISH_MAIN_HEAD: &str = "\
# fish completion for readbox, generated from its tool registry by tests/cli/docs.rs: do not
# edit. Install it as readbox.fish in a folder of $fish_complete_path.
#
# It completes by meaning, one position after another: file names where a tool takes a PATH,
# true or false for a boolean, all, file or directory for FILE_TYPE, the tool names after help
# and call, and nothing where free text or a number goes (a PATTERN, a glob, JSON, LINES).
";

const FISH_LINKS_HEAD: &str = "\
# fish completion for readbox's tools under their own names (cat, grep, ...): the links that
# readbox install DIR makes. Generated from readbox's tool registry by tests/cli/docs.rs: do not
# edit.
#
# Opt-in: a shell that sources this file (from config.fish) completes the arguments of cat, grep,
# ls ... as readbox's tools take them, in place of the system's own; fish's option completions
# for those names still appear after a -, and readbox refuses those options with the call that
# does the same. It stands alone: readbox.fish is not needed.
";

/// The function shared by both fish files. `@TOOLS@` is the list of tool names.
const FISH_FUNCTIONS: &str = r#"
# Succeeds when the word under the cursor is argument $argv[2] (from 1) of $argv[1], a tool or
# meta command reached as `readbox NAME ...` or through a link named NAME; with no arguments,
# when it is the command word after readbox. The first -- ends readbox's flag check and is not
# an argument.
function __fish_readbox_at
    set -l words (commandline -opc)
    set -l name (string replace -r -- '.*/' '' $words[1])
    set -e words[1]
    if not contains -- $name @TOOLS@
        if not set -q words[1]
            not set -q argv[1]
            return
        end
        set name $words[1]
        set -e words[1]
    end
    set -q argv[1]
    and test "$name" = "$argv[1]"
    or return 1
    if set -l i (contains -i -- -- $words)
        set -e words[$i]
    end
    test (count $words) -eq (math $argv[2] - 1)
end
"#;

/// The function that lists the tools for `help` and `call`, in the main fish file only.
/// `@TOOL_LINES@` is the tools with their summaries.
const FISH_TOOLS_FUNCTION: &str = r#"
# The tools, each with what it prints.
function __fish_readbox_tools
    printf '%s\t%s\n' \
@TOOL_LINES@
end
"#;

/// `s` as one fish single-quoted word.
fn fish_quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The `complete` lines of one command's arguments, for the command name `command` (`readbox`,
/// or the tool's own name for a link).
fn fish_argument_lines(command: &str, e: &Entry) -> Vec<String> {
    let mut lines = vec![format!("# {}", e.signature)];
    for (i, slot) in e.slots.iter().enumerate() {
        let at = fish_quote(&format!("__fish_readbox_at {} {}", e.name, i + 1));
        let line = match slot.offer {
            Offer::Paths => format!("complete -c {command} -n {at} -F"),
            Offer::Dirs => format!(
                "complete -c {command} -n {at} -a '(__fish_complete_directories (commandline -ct))'"
            ),
            Offer::Words(w) => format!(
                "complete -c {command} -n {at} -a {} -d {}",
                fish_quote(&w.join(" ")),
                fish_quote(slot.help)
            ),
            Offer::Tools => format!("complete -c {command} -n {at} -a '(__fish_readbox_tools)'"),
            Offer::Nothing => continue,
        };
        lines.push(line);
    }
    lines
}

fn fish_script(links: bool) -> String {
    let all = entries();
    let tool_lines: Vec<String> = TOOLS
        .iter()
        .map(|t| format!("        {} {}", t.name, fish_quote(t.summary)))
        .collect();
    let mut out = String::from(if links {
        FISH_LINKS_HEAD
    } else {
        FISH_MAIN_HEAD
    });
    out.push_str(&FISH_FUNCTIONS.replace("@TOOLS@", &linked().join(" ")));
    if links {
        out.push_str(
            "\n# For each name, -f keeps file names out where a PATTERN or a number goes, and -F\n\
             # lets them in where a PATH goes.\n",
        );
        for e in all.iter().filter(|e| linked().contains(&e.name)) {
            let mut lines = fish_argument_lines(e.name, e);
            lines.insert(1, format!("complete -c {} -f", e.name));
            out.push('\n');
            for line in lines {
                out.push_str(&line);
                out.push('\n');
            }
        }
        return out;
    }
    out.push_str(&FISH_TOOLS_FUNCTION.replace("@TOOL_LINES@", &tool_lines.join(" \\\n")));
    out.push_str(
        "\n# Only what is offered below: no file names where a PATTERN, a glob or a number goes.\n\
         complete -c readbox -f\n\n# The command: a tool or a meta command.\n",
    );
    for e in &all {
        out.push_str(&format!(
            "complete -c readbox -n __fish_readbox_at -a {} -d {}\n",
            e.name,
            fish_quote(e.about)
        ));
    }
    for f in FLAGS {
        out.push_str(&format!(
            "complete -c readbox -n __fish_readbox_at -s {} -l {} -d {}\n",
            f.short,
            f.long,
            fish_quote(f.help)
        ));
    }
    for e in &all {
        out.push('\n');
        for line in fish_argument_lines("readbox", e) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// zsh
// ---------------------------------------------------------------------------------------------

const ZSH_LINKS: &str = r#"# zsh completion for readbox's tools under their own names (cat, grep, ...): the links that
# readbox install DIR makes. Generated from readbox's tool registry by tests/cli/docs.rs: do not
# edit.
#
# Opt-in: a shell that sources this file after compinit completes cat, grep, ls ... as
# readbox's tools, in place of the system's own. It hands each line to _readbox (the file
# _readbox, which must be on $fpath) as if it had been typed as readbox TOOL ....

_readbox_link() {
    words=(readbox "${words[1]:t}" "${(@)words[2,-1]}")
    (( CURRENT += 1 ))
    _readbox "$@"
}

compdef _readbox_link @TOOLS@
"#;

fn zsh_links_script() -> String {
    ZSH_LINKS.replace("@TOOLS@", &linked().join(" "))
}

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
    let mut v: Vec<String> = words.iter().map(|w| w.to_string()).collect();
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
    registered.sort();
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
