//! The man pages, `readbox.1` and one `readbox-TOOL.1` per tool, rendered with `clap_mangen`
//! from a clap description of the interface, which zsh's completion shares (see `mod.rs`).
//!
//! The clap `Command` built here only describes the interface: readbox never parses with clap (it
//! takes positional words only, docs/contract.md#arguments), so the command exists to feed the
//! generators.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, Command, ValueHint};
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, italic, roman};
use readbox::meta;
use readbox::policy::{self, Inputs, Policy};
use readbox::registry::ParamKind;
use readbox::tools::{TOOLS, Tool};

use super::completions::{self, Offer};
use super::{FLAGS, META, meta_signature};

/// The `.TH` manual name, shared by every page.
const MANUAL: &str = "User Commands";

/// One setting of the policy as the man page describes it.
pub(crate) struct Setting {
    /// The config file key (the key `readbox policy` shows).
    pub(crate) key: &'static str,
    /// The environment variable, or `""` when the setting is for config files only.
    pub(crate) var: &'static str,
    /// What it means.
    pub(crate) meaning: &'static str,
    /// The default in words, where the policy's default value depends on the process (the
    /// current directory) or is absent; `None` takes the default from the code.
    pub(crate) default: Option<&'static str>,
}

/// The settings, in the order `readbox policy` shows them, from the policy's own table (their
/// keys, variables, meanings and defaults in words). The defaults not written there come from a
/// policy loaded with no file and no variable, so they cannot drift from the code either.
pub(crate) fn settings() -> Vec<Setting> {
    readbox::policy::Setting::all()
        .map(|s| Setting {
            key: s.key(),
            var: s.var().unwrap_or(""),
            meaning: s.help(),
            default: s.default_in_words(),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The clap description of the interface.
// ---------------------------------------------------------------------------------------------

/// The whole interface as one clap command: a subcommand per tool, then the meta commands.
pub(crate) fn readbox_command() -> Command {
    let synopsis: Vec<String> = ["readbox TOOL [ARG...]".to_string(), "TOOL [ARG...]".into()]
        .into_iter()
        .chain(META.iter().map(meta_signature))
        .collect();
    Command::new("readbox")
        .version(env!("CARGO_PKG_VERSION"))
        .about(usage_headline())
        .long_about(meta::usage())
        .override_usage(synopsis.join("\n"))
        .subcommand_value_name("TOOL")
        // The meta command `help` is ours, with its own argument; clap's would shadow it.
        .disable_help_subcommand(true)
        // readbox accepts -h/--help and -V/--version as aliases of its meta commands
        // (docs/contract.md#invocation); these are plain flags so that the help text says what
        // readbox does, not clap.
        .disable_help_flag(true)
        .disable_version_flag(true)
        .args(FLAGS.iter().map(|f| {
            Arg::new(f.long)
                .short(f.short)
                .long(f.long)
                .action(ArgAction::SetTrue)
                .help(f.help)
        }))
        .subcommands(TOOLS.iter().map(tool_command))
        .subcommands(META.iter().map(|m| {
            let mut c = Command::new(m.name).about(m.about).disable_help_flag(true);
            for (i, arg) in m.args.iter().enumerate() {
                let a = Arg::new(arg.value.to_ascii_lowercase())
                    .value_name(arg.value)
                    .index(i + 1)
                    .required(arg.required)
                    .help(arg.help);
                c = c.arg(offer_to_clap(a, completions::meta_slot(arg).offer));
            }
            c
        }))
}

/// One tool as a subcommand: its positional parameters in order, its summary, its example.
fn tool_command(t: &'static Tool) -> Command {
    let signature = t.signature();
    Command::new(t.name)
        .about(t.summary)
        .long_about(tool_description(t))
        .after_help(format!("example: {}", example_call(t)))
        // Both ways to reach a tool: the multicall form and a link named after it.
        .override_usage(format!("readbox {signature}\n{signature}"))
        // A tool takes no flags at all; clap's -h would be a lie.
        .disable_help_flag(true)
        .args(t.params.iter().enumerate().map(|(i, p)| {
            let mut a = Arg::new(p.name)
                .value_name(p.name.to_ascii_uppercase())
                .index(i + 1)
                .action(ArgAction::Set)
                .required(p.default.is_none())
                .help(p.help)
                .help_heading("Arguments");
            if let Some(d) = p.default {
                a = a.default_value(d);
            }
            offer_to_clap(a, completions::param_slot(p).offer)
        }))
}

/// What completion offers for an argument, as clap says it (zsh's completion is clap's): the
/// same offers as the bash and fish scripts.
fn offer_to_clap(a: Arg, offer: Offer) -> Arg {
    match offer {
        Offer::Paths => a.value_hint(ValueHint::AnyPath),
        Offer::Dirs => a.value_hint(ValueHint::DirPath),
        Offer::Nothing => a.value_hint(ValueHint::Other),
        // Only the canonical words: completion offers them, and the description names the
        // other spellings once.
        Offer::Words(words) => a.value_parser(PossibleValuesParser::new(words.iter().copied())),
        Offer::Tools => a.value_parser(PossibleValuesParser::new(
            readbox::registry::NAMES.iter().copied(),
        )),
    }
}

/// Every spelling of a boolean (docs/contract.md#arguments), the canonical two first.
const BOOL_SPELLINGS: [&str; 8] = ["true", "false", "1", "0", "yes", "no", "on", "off"];

/// The first line of the usage text, without the leading `readbox: `.
pub(crate) fn usage_headline() -> String {
    let usage = meta::usage();
    let first = usage.lines().next().unwrap_or_default();
    first.strip_prefix("readbox: ").unwrap_or(first).to_string()
}

/// The tool's example as typed in the multicall form.
pub(crate) fn example_call(t: &Tool) -> String {
    if t.example.is_empty() {
        format!("readbox {}", t.name)
    } else {
        format!("readbox {} {}", t.name, t.example)
    }
}

/// The DESCRIPTION of a tool's page: how it is reached and how its words are read. Lines are
/// joined into filled paragraphs; an empty line starts a new one.
fn tool_description(t: &Tool) -> String {
    let name = t.name;
    if matches!(t.run, readbox::tools::Runs::Shell) {
        return format!(
            "The {name} tool of readbox(1): {summary}. It is reached as readbox {name}, as the\n\
             tool {name} of readbox call, readbox schema and readbox mcp, or through a link named\n\
             {name} made by hand (readbox install DIR does not make one: it would take over every\n\
             script that runs sh).\n\
             \n\
             readbox sh -c COMMAND runs one command line; readbox sh alone reads command lines from\n\
             standard input, one answer each. It parses them as bash does and runs only readbox's\n\
             enabled tools and the builtins cd, pwd, echo, true, false and exit, in its own process:\n\
             quotes, $'...', globs (expanded beneath the roots), pipes, && || ; and ! work;\n\
             expansions, substitutions, assignments, subshells, compound commands and redirections\n\
             other than < FILE, >/dev/null, 2>/dev/null, &>/dev/null and 2>&1 refuse the whole line\n\
             before anything runs. A stage after | reads the pipe where its PATH is - or left out.\n\
             \n\
             The answer is one JSON line per command line; see readbox(1) for the envelope, the\n\
             roots, the limits and the exit status.\n",
            summary = t.summary,
        );
    }
    let mut s = format!(
        "The {name} tool of readbox(1): {summary}. It is reached as readbox {name}, or through a\n\
         link (symbolic link, hard link or copy) whose file name is {name}, such as the links\n\
         readbox install DIR makes.\n",
        summary = t.summary,
    );
    if !t.params.is_empty() {
        s.push_str(&format!(
            "readbox help {name} prints the same synopsis and arguments.\n"
        ));
        s.push_str(
            "\nArguments are positional only, in the order below; optional ones may be left off\n\
             from the right. A word that starts with - (other than - alone) is refused with a\n\
             usage error that shows the positional form; after the word --, every word is taken\n\
             literally.\n",
        );
    }
    if t.params.iter().any(|p| p.kind == ParamKind::Bool) {
        s.push_str(&format!(
            "Booleans are one of {}, in any case.\n",
            BOOL_SPELLINGS.join(" ")
        ));
    }
    if t.params.iter().any(|p| p.kind == ParamKind::FileType) {
        s.push_str("FILE_TYPE is all, file or directory (also f, d), in any case.\n");
    }
    s.push_str(
        "\nThe answer is one JSON line on standard output; see readbox(1) for the envelope, the\n\
         roots, the limits and the exit status.\n",
    );
    s
}

// ---------------------------------------------------------------------------------------------
// Man pages.
// ---------------------------------------------------------------------------------------------

fn man_for(cmd: &Command) -> Man {
    Man::new(cmd.clone())
        .source(format!("readbox {}", env!("CARGO_PKG_VERSION")))
        .manual(MANUAL)
}

/// Renders one of clap_mangen's sections; each carries roff's apostrophe preamble, which a page
/// needs once, so it is taken off here and put back at the top of the page.
fn section(render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> String {
    let mut buf = Vec::new();
    render(&mut buf).expect("rendering to memory");
    let text = String::from_utf8(buf).expect("roff is UTF-8");
    text.strip_prefix(&preamble())
        .expect("clap_mangen's sections start with roff's preamble")
        .to_string()
}

/// roff's preamble: what an empty document renders to.
fn preamble() -> String {
    Roff::new().render()
}

/// Our own sections, rendered without the preamble.
fn own(roff: &Roff) -> String {
    let text = roff.render();
    text.strip_prefix(&preamble())
        .expect("roff output starts with its preamble")
        .to_string()
}

/// After the title: no hyphenation and a ragged right margin, since the pages are mostly names
/// and signatures (readbox-grep(1), FILE_PATTERN) that must read as typed.
const LAYOUT: &str = ".nh\n.ad l\n";

/// `readbox.1`: the synopsis, the usage text, the commands, the exit status, the environment,
/// the files.
pub(crate) fn main_page(cmd: &Command) -> String {
    let man = man_for(cmd);
    let mut page = preamble();
    page.push_str(&section(|w| man.render_title(w)));
    page.push_str(LAYOUT);
    page.push_str(&section(|w| man.render_name_section(w)));
    page.push_str(&section(|w| man.render_synopsis_section(w)));

    let mut r = Roff::new();
    r.control("SH", ["DESCRIPTION"]);
    usage_to_roff(
        &mut r,
        &cmd.get_long_about().expect("long_about").to_string(),
    );
    page.push_str(&own(&r));

    page.push_str(&section(|w| man.render_options_section(w)));

    let mut r = Roff::new();
    r.control("SH", ["TOOLS"]);
    r.text([roman(
        "Each tool has its own page, readbox-TOOL(1), and is also reached through a link named \
         TOOL.",
    )]);
    for t in TOOLS {
        r.control("TP", []);
        r.text(signature_inlines(&format!("readbox {}", t.name), t));
        r.text([roman(format!("{}; see readbox-{}(1).", t.summary, t.name))]);
    }
    r.control("SH", ["COMMANDS"]);
    r.text([roman(
        "The meta commands exist only in the multicall form (readbox list, never ls list). Their \
         answers go through the envelope like a tool's, except mcp, whose standard output \
         carries protocol messages only.",
    )]);
    for m in META {
        r.control("TP", []);
        let mut head = vec![bold(format!("readbox {}", m.name))];
        for a in m.args {
            head.push(roman(" "));
            if a.required {
                head.push(italic(a.value));
            } else {
                head.extend([roman("["), italic(a.value), roman("]")]);
            }
        }
        r.text(head);
        r.text([roman(m.about)]);
    }

    r.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in [
        ("0", "success"),
        (
            "1",
            "a negative answer that is not an error: grep found no line, diff found differences",
        ),
        ("2", "an error, named in the envelope's error field"),
        ("127", "an unknown tool"),
    ] {
        r.control("TP", []);
        r.text([bold(code)]);
        r.text([roman(meaning)]);
    }

    r.control("SH", ["ENVIRONMENT"]);
    r.text([roman(
        "Each variable overrides the configuration files; an empty variable counts as unset, \
         except READBOX_EXCLUDE and READBOX_NARROW_ROOTS.",
    )]);
    r.control("TP", []);
    r.text([bold("READBOX_CONFIG")]);
    r.text([roman(
        "a TOML configuration file, read after the system file; the same keys as the system file",
    )]);
    r.control("TP", []);
    r.text([bold(policy::NARROW_ROOTS_VAR)]);
    r.text([roman(
        "absolute directories, separated by colons, applied after every other layer: the roots \
         become these, each of which must lie within the allowed directories (else a config \
         error); set but empty, no root is left and every path is denied. It can only narrow; \
         readbox mcp hands a client's roots to each call this way",
    )]);
    let defaults = default_settings();
    for s in settings().iter().filter(|s| !s.var.is_empty()) {
        r.control("TP", []);
        r.text([bold(s.var)]);
        r.text([roman(format!(
            "{} (key {}; default: {})",
            s.meaning,
            s.key,
            default_in_words(s, &defaults)
        ))]);
    }

    r.control("SH", ["FILES"]);
    r.control("TP", []);
    r.text([bold(policy::SYSTEM_CONFIG)]);
    r.text([roman(
        "The system configuration, TOML, read when it exists. Layers, each overriding the one \
         before: the defaults, this file, the file named by READBOX_CONFIG, the READBOX_* \
         variables. A file that sets lock = true makes every later layer narrow-only, and a \
         locked system file must be owned by root and writable by no one else. An unknown key or \
         a bad value is a config error that names the file and key. Keys without a variable:",
    )]);
    r.control("RS", []);
    for s in settings().iter().filter(|s| s.var.is_empty()) {
        r.control("TP", []);
        r.text([bold(s.key)]);
        r.text([roman(format!(
            "{} (default: {})",
            s.meaning,
            default_in_words(s, &defaults)
        ))]);
    }
    r.control("RE", []);

    r.control("SH", ["SEE ALSO"]);
    let refs: Vec<String> = TOOLS
        .iter()
        .map(|t| format!("readbox-{}(1)", t.name))
        .collect();
    r.text([roman(refs.join(", "))]);
    page.push_str(&own(&r));
    page
}

/// The usage text of `readbox help` as roff: the headline is the NAME, the `usage:` lines are the
/// SYNOPSIS and the `tools:` list is the TOOLS section, so they are left out here; every other
/// paragraph is kept, filled when it is prose and as it is when it is indented (a table).
fn usage_to_roff(r: &mut Roff, usage: &str) {
    for para in usage.split("\n\n").skip(1) {
        let para = para.trim_end_matches('\n');
        if para.is_empty() || para.starts_with("usage:") || para.starts_with("tools:") {
            continue;
        }
        r.control("PP", []);
        if para.lines().any(|l| l.starts_with(' ')) {
            r.control("nf", []);
            for line in para.lines() {
                r.text([roman(line)]);
            }
            r.control("fi", []);
        } else {
            for line in para.lines() {
                r.text([roman(line)]);
            }
        }
    }
}

/// `readbox grep PATTERN [PATH=.] ...` with the command in bold and the parameters in italics.
fn signature_inlines(command: &str, t: &Tool) -> Vec<clap_mangen::roff::Inline> {
    let mut out = vec![bold(command)];
    for p in t.params {
        out.push(roman(" "));
        let name = p.name.to_ascii_uppercase();
        match p.default {
            None => out.push(italic(name)),
            Some(d) => out.extend([roman("["), italic(name), roman(format!("={d}]"))]),
        }
    }
    out
}

/// `readbox-TOOL.1`: clap_mangen's name, synopsis, description and arguments, then the example.
pub(crate) fn tool_page(t: &Tool, sub: &Command) -> String {
    let man = man_for(sub);
    let mut page = preamble();
    page.push_str(&section(|w| man.render_title(w)));
    page.push_str(LAYOUT);
    page.push_str(&section(|w| man.render_name_section(w)));
    page.push_str(&section(|w| man.render_synopsis_section(w)));
    page.push_str(&section(|w| man.render_description_section(w)));
    if !t.params.is_empty() {
        page.push_str(&section(|w| man.render_options_section(w)));
    }
    let mut r = Roff::new();
    // The example is the subcommand's after_help ("example: readbox ..."); clap_mangen would
    // file it under a heading named EXTRA, so it gets its own section here.
    let after = sub.get_after_help().expect("after_help").to_string();
    let example = after.strip_prefix("example: ").unwrap_or(&after);
    r.control("SH", ["EXAMPLE"]);
    r.control("PP", []);
    r.control("RS", ["4"]);
    r.control("nf", []);
    r.text([roman(example)]);
    r.text([roman(example.strip_prefix("readbox ").unwrap_or(example))]);
    r.control("fi", []);
    r.control("RE", []);
    r.control("PP", []);
    r.text([roman(
        "The second form runs through a link named after the tool.",
    )]);
    r.control("SH", ["SEE ALSO"]);
    r.text([roman("readbox(1)")]);
    page.push_str(&own(&r));
    page
}

/// The settings of a policy loaded with no system file, no variable, in this package's folder:
/// the built-in defaults, by config key.
pub(crate) fn default_settings() -> serde_json::Map<String, serde_json::Value> {
    let inputs = Inputs {
        system_file: PathBuf::from("/nonexistent/readbox/config.toml"),
        vars: BTreeMap::new(),
        cwd: Some(PathBuf::from(env!("CARGO_MANIFEST_DIR"))),
    };
    let p = Policy::load_from(&inputs).expect("the defaults load");
    let doc = p.to_json(serde_json::Value::Null);
    let settings = doc["settings"].as_object().expect("policy settings object");
    settings
        .iter()
        .map(|(k, v)| (k.clone(), v["value"].clone()))
        .collect()
}

/// A setting's default as the man page says it: the written words, else the code's value.
fn default_in_words(s: &Setting, defaults: &serde_json::Map<String, serde_json::Value>) -> String {
    if let Some(words) = s.default {
        return words.to_string();
    }
    match defaults.get(s.key) {
        Some(serde_json::Value::String(v)) => v.clone(),
        // A whole number of seconds reads as one (10, not 10.0).
        Some(serde_json::Value::Number(n)) if n.is_f64() => {
            format!("{}", n.as_f64().unwrap_or_default())
        }
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(" "),
        Some(other) => other.to_string(),
        None => panic!("setting {} has no default in readbox policy", s.key),
    }
}
