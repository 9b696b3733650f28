//! The bash and fish completions, generated here from the registry and the meta commands of
//! [`super`]; the tests that run them in the real shells are in `completions.rs` beside the
//! generators' folder.
//!
//! They complete **by meaning**, position by position, since readbox takes positional words
//! only (docs/contract.md#arguments): the N-th word after the tool is its N-th parameter, so
//! a PATH position offers file names, a boolean `true false`, FILE_TYPE `all file directory`,
//! `help` and `call` the tool names, and a PATTERN, a glob, JSON or a number nothing at all
//! (not even file names). clap_complete describes positional values by a flat list per
//! subcommand in bash and leaves positions out in fish, so these two scripts are written here;
//! zsh's `_arguments` handles positions, and stays clap_complete's (see `man.rs`).
//!
//! Each shell also gets an opt-in file that completes the tools under their own names (`cat`,
//! `grep`, …, the links `readbox install DIR` makes): loading it replaces the completion of the
//! system's own `cat` in that shell, so nothing registers those names unless asked.
//!
//! Invariant: every position the registry defines has exactly one offer, and the scripts and
//! the tests both take it from [`slots`], never from a list of their own.

use std::collections::BTreeMap;
use std::path::PathBuf;

use readbox::registry::{NAMES, Param, ParamKind, SHELL};

/// The names that `readbox install` links, and so that the links' completions register: every
/// name but the shell's (a completion for `sh` would change how the system's own shell completes).
pub(crate) fn linked() -> Vec<&'static str> {
    NAMES.iter().copied().filter(|n| *n != SHELL).collect()
}
use readbox::tools::TOOLS;

use super::{FLAGS, META, MetaArg, meta_signature};

/// The words completion offers for a boolean: the canonical two. The other spellings
/// (`1 0 yes no on off`) are accepted but would only crowd the list.
pub(crate) const BOOL_WORDS: &[&str] = &["true", "false"];

/// The words completion offers for FILE_TYPE (`f` and `d` are accepted too).
pub(crate) const FILE_TYPE_WORDS: &[&str] = &["all", "file", "directory"];

/// What a shell offers at one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offer {
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
pub(crate) struct Slot {
    /// The kind of word, as the bash script names it (`path`, `bool`, …).
    pub kind: &'static str,
    /// What is offered there.
    pub offer: Offer,
    /// The argument's help, the description fish shows beside the words.
    pub help: &'static str,
}

/// The slot of a tool's parameter.
pub(crate) fn param_slot(p: &Param) -> Slot {
    let (kind, offer) = match p.kind {
        ParamKind::Path => ("path", Offer::Paths),
        ParamKind::Bool => ("bool", Offer::Words(BOOL_WORDS)),
        ParamKind::FileType => ("file_type", Offer::Words(FILE_TYPE_WORDS)),
        ParamKind::Int { .. } => ("int", Offer::Nothing),
        ParamKind::Text => ("text", Offer::Nothing),
    };
    Slot {
        kind,
        offer,
        help: p.help,
    }
}

/// The slot of a meta command's argument, by its name in the synopsis: a TOOL is a tool name, a
/// DIR a directory, anything else (JSON) free text.
pub(crate) fn meta_slot(a: &MetaArg) -> Slot {
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
pub(crate) struct Entry {
    pub(crate) name: &'static str,
    /// What it does, the description fish shows beside the name.
    about: &'static str,
    /// `grep PATTERN [PATH=.] …`, a comment in the scripts.
    signature: String,
    pub(crate) slots: Vec<Slot>,
}

/// Every command of the multicall form: the tools in the registry's order, then the meta
/// commands.
pub(crate) fn entries() -> Vec<Entry> {
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
pub(crate) fn slots(name: &str) -> Vec<Slot> {
    entries()
        .into_iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no command {name}"))
        .slots
}

/// The generated files this module owns, by path relative to the package root.
pub(crate) fn scripts() -> BTreeMap<PathBuf, String> {
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
const FISH_TOOLS_FUNCTION: &str = r"
# The tools, each with what it prints.
function __fish_readbox_tools
    printf '%s\t%s\n' \
@TOOL_LINES@
end
";

/// `s` as one fish single-quoted word.
pub(crate) fn fish_quote(s: &str) -> String {
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
