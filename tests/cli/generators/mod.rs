//! The generators of `man/` and `completions/` (docs/contract.md#man-pages-and-completions):
//! every file there is made here from the registry (`readbox::tools::TOOLS`), the usage text
//! (`readbox::meta::usage`), the meta commands listed here and the policy's defaults. The man
//! pages and the zsh completion come from a clap description of the interface through
//! `clap_mangen` and `clap_complete` (dev-dependencies, so the shipped binary carries no clap),
//! in `man.rs`; the bash and fish completions are written by `completions.rs`. The files are
//! committed so that packagers need no build step; the tests that compare them with what is
//! generated here, render the pages and run the scripts in the real shells are `docs.rs` and
//! `completions.rs` beside this folder.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap_complete::Shell;
use readbox::tools::TOOLS;

pub(crate) mod completions;
pub(crate) mod man;

/// A meta command of the multicall form (docs/contract.md#invocation).
pub(crate) struct Meta {
    pub name: &'static str,
    /// Its positional arguments, in order.
    pub args: &'static [MetaArg],
    /// What it does.
    pub about: &'static str,
}

/// A positional argument of a meta command.
pub(crate) struct MetaArg {
    /// As the synopsis shows it (`TOOL`); completion goes by it (`completions::meta_slot`).
    pub value: &'static str,
    pub required: bool,
    pub help: &'static str,
}

/// The meta commands. `src/dispatch.rs` has no table of them to derive from, so they are
/// written here; the man page and the completions take them from here.
pub(crate) const META: &[Meta] = &[
    Meta {
        name: "help",
        args: &[MetaArg {
            value: "TOOL",
            required: false,
            help: "the tool to describe",
        }],
        about: "print the usage, or the help of one tool",
    },
    Meta {
        name: "version",
        args: &[],
        about: "print the version",
    },
    Meta {
        name: "list",
        args: &[],
        about: "print the enabled tools, one per line",
    },
    Meta {
        name: "policy",
        args: &[],
        about: "print the effective policy as JSON, with where each setting came from",
    },
    Meta {
        name: "schema",
        args: &[],
        about: "print the enabled tools' definitions (name, description, input_schema as JSON \
                Schema) for function calling",
    },
    Meta {
        name: "call",
        args: &[
            MetaArg {
                value: "TOOL",
                required: true,
                help: "the tool to run",
            },
            MetaArg {
                value: "JSON",
                required: true,
                help: "the tool's parameters by name, as one JSON object",
            },
        ],
        about: "run a tool with its parameters given by name; a value may start with - here",
    },
    Meta {
        name: "install",
        args: &[MetaArg {
            value: "DIR",
            required: true,
            help: "the directory to put the links in (not confined to the roots)",
        }],
        about: "make a symlink named after each enabled tool in DIR, pointing at this binary; \
                existing names are left alone",
    },
    Meta {
        name: "mcp",
        args: &[],
        about: "serve the enabled tools as a Model Context Protocol server: JSON-RPC on standard \
                input and output, one message per line, each tool call run as readbox call; \
                roots a client offers only narrow the allowed directories",
    },
];

/// A flag `readbox` accepts as its only argument, an alias of a meta command.
pub(crate) struct Flag {
    pub short: char,
    pub long: &'static str,
    pub help: &'static str,
}

/// `-h`/`--help` and `-V`/`--version` (docs/contract.md#invocation).
pub(crate) const FLAGS: &[Flag] = &[
    Flag {
        short: 'h',
        long: "help",
        help: "the same as readbox help",
    },
    Flag {
        short: 'V',
        long: "version",
        help: "the same as readbox version",
    },
];

/// `readbox install DIR`, `readbox help [TOOL]`.
pub(crate) fn meta_signature(m: &Meta) -> String {
    let mut s = format!("readbox {}", m.name);
    for a in m.args {
        if a.required {
            s.push_str(&format!(" {}", a.value));
        } else {
            s.push_str(&format!(" [{}]", a.value));
        }
    }
    s
}

/// The folders these generators own: every file in them is generated, so a file that is no
/// longer generated (a tool removed) is drift too.
pub(crate) const GENERATED_DIRS: &[&str] = &["man", "completions"];

/// Every generated file, by its path relative to the package root.
pub(crate) fn generate() -> BTreeMap<PathBuf, String> {
    let mut cmd = man::readbox_command();
    // Building sets each subcommand's display name (readbox-grep) and bin name (readbox grep).
    cmd.build();
    let mut files = BTreeMap::new();
    files.insert(PathBuf::from("man/readbox.1"), man::main_page(&cmd));
    for t in TOOLS {
        let sub = cmd
            .find_subcommand(t.name)
            .expect("every tool is a subcommand");
        files.insert(
            PathBuf::from(format!("man/readbox-{}.1", t.name)),
            man::tool_page(t, sub),
        );
    }
    // zsh's _arguments completes each position by its own spec, so clap's script is right
    // there; bash and fish get scripts of their own (completions.rs).
    let mut buf = Vec::new();
    clap_complete::generate(Shell::Zsh, &mut cmd.clone(), "readbox", &mut buf);
    files.insert(
        PathBuf::from("completions/_readbox"),
        String::from_utf8(buf).expect("completions are UTF-8"),
    );
    files.extend(completions::scripts());
    files
}

/// The generated files written to a fresh folder: the tests of the pages and of the completions
/// read what the code generates (equal to the committed files, which the drift test checks) so
/// that they never race a regeneration running beside them.
pub(crate) fn generated_in_tempdir() -> (tempfile::TempDir, BTreeMap<PathBuf, String>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = generate();
    for (rel, text) in &files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    (dir, files)
}
