//! `find [PATH=.] [PATTERN=*] [FILE_TYPE=all] [MAX_DEPTH=20]`: entries below PATH.
//!
//! They are those whose name matches the glob PATTERN, of type FILE_TYPE, to MAX_DEPTH
//! (docs/contract.md#tools). Directories end with `/`; symlinks are listed, not followed, when
//! FILE_TYPE is `all`. Paths are quoted as docs/contract.md#names says.

use super::params::MAX_DEPTH;
use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::Stop;
use crate::error::{Error, shown};
use crate::names::quoted;
use crate::registry::{Args, Effect, FileType, Flag, Outcome, Param, ParamKind, params};
use crate::resolve::NodeKind;
use crate::walk::{self, Entry, Ignores, Skipped, Walk, display_prefix};

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "find",
    summary: "list the entries of a tree whose name matches a glob",
    params: &[
        Param {
            name: "path",
            kind: ParamKind::Path,
            default: Some("."),
            help: "the directory to search",
        },
        Param {
            name: "pattern",
            kind: ParamKind::Text,
            default: Some("*"),
            help: "glob on the entry's name: * ? [..] {a,b}",
        },
        Param {
            name: "file_type",
            kind: ParamKind::FileType,
            default: Some("all"),
            help: "which entries",
        },
        MAX_DEPTH,
    ],
    example: ". '*.rs' file",
    flags: &[
        Flag {
            names: &["-name"],
            effect: Effect::Takes("pattern"),
        },
        Flag {
            names: &["-iname"],
            effect: Effect::Never("PATTERN is matched with case; give the case you want"),
        },
        Flag {
            names: &["-type"],
            effect: Effect::Takes("file_type"),
        },
        Flag {
            names: &["-maxdepth"],
            effect: Effect::Takes("max_depth"),
        },
        Flag {
            names: &["-print"],
            effect: Effect::Always,
        },
        Flag {
            names: &[
                "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
                "-fls",
            ],
            effect: Effect::Never("readbox never runs programs or writes files"),
        },
        Flag {
            names: &["-L", "-follow"],
            effect: Effect::Never("walks never follow symlinks"),
        },
        Flag {
            names: &[
                "-size",
                "-mtime",
                "-mmin",
                "-atime",
                "-ctime",
                "-newer",
                "-path",
                "-wholename",
                "-regex",
                "-iregex",
                "-perm",
                "-user",
                "-group",
                "-empty",
                "-mindepth",
                "-prune",
                "-links",
                "-inum",
                "-samefile",
            ],
            effect: Effect::Never(
                "readbox find chooses entries by name (PATTERN), type (FILE_TYPE) and depth \
                 (MAX_DEPTH) only; stat PATH gives an entry's size and time",
            ),
        },
    ],
    on_truncate: Outcome::Success,
    stdin: false,
    run: Runs::Tool(run),
};

params! {
    /// find's parameters, by name.
    pub struct Params<'a> of TOOL.params;
    /// The directory to search, as the caller named it.
    path @ PATH: &'a [u8] = bytes,
    /// The glob on the entries' names.
    pattern @ PATTERN: &'a [u8] = bytes,
    /// Which entries to list.
    file_type: FileType = file_type,
    /// How deep to go.
    max_depth @ MAX_DEPTH: u64 = int,
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let p = Params::of(args);
    let path = shown(p.path);
    let glob = walk::name_glob("PATTERN", p.pattern, &|folder, name| {
        args.call_with(
            "find",
            &[
                (Params::PATH, &walk::join(p.path, folder)),
                (Params::PATTERN, name),
            ],
        )
    })?;
    let file_type = p.file_type;
    let max_depth = p.max_depth as usize;
    let node = ctx.gate.resolve(p.path)?;
    if node.kind() != NodeKind::Directory {
        return Err(Error::NotADirectory(path).into());
    }
    let ignores = if ctx.policy.respect_ignore_files {
        Ignores::Respect
    } else {
        Ignores::Off
    };
    let prefix = display_prefix(p.path);
    let mut line = Vec::new();
    let mut listed = 0u64;
    let mut visit = |e: &Entry<'_>| -> Result<(), Stop> {
        let kind = e.listed.kind;
        let wanted = match file_type {
            FileType::All => true,
            FileType::File => kind == NodeKind::File,
            FileType::Directory => kind == NodeKind::Directory,
        };
        if wanted && glob.is_match(std::path::Path::new(&e.listed.name)) {
            line.clear();
            line.extend_from_slice(&quoted(e.display));
            if kind == NodeKind::Directory {
                line.push(b'/');
            }
            line.push(b'\n');
            listed += 1;
            if let Err(stop) = ctx.out.push(&line) {
                if stop == Stop::Truncated {
                    ctx.out.note_truncation(format!(
                        " before {}; a narrower PATH or PATTERN lists fewer entries",
                        String::from_utf8_lossy(&line[..line.len() - 1])
                    ));
                }
                return Err(stop);
            }
        }
        Ok(())
    };
    let mut skipped = Skipped::default();
    let walk = Walk {
        start: &node,
        shown: &path,
        prefix: &prefix,
        max_depth,
        ignores,
    };
    let result = walk.run(ctx, &mut skipped, &mut visit);
    skipped.note(ctx.out);
    let deeper = walk::MAX_DEPTH_LIMIT.to_string();
    skipped.note_depth(
        ctx.out,
        max_depth,
        &super::call_with(ctx, "find", args, &[(Params::MAX_DEPTH, deeper.as_bytes())]),
    );
    if result.is_ok() && listed == 0 {
        skipped.note_ignored_when_empty(ctx.out, "entry matched");
    }
    result?;
    Ok(Outcome::Success)
}
