//! `ls [PATH=.] [SHOW_HIDDEN=false]`: the children of a directory, one name per line.
//!
//! They are sorted by name bytes; directories end with `/`, symlinks with `@` (in json format; text
//! format prints bare names) (docs/contract.md#tools). Given a file, prints PATH. Names are quoted
//! as docs/contract.md#names says.

use std::os::unix::ffi::OsStrExt;

use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::{Format, Stop};
use crate::error::shown;
use crate::names::{command, quoted};
use crate::registry::{Args, Effect, Flag, Outcome, Param, ParamKind, params};
use crate::resolve::NodeKind;

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "ls",
    summary: "list a directory's entries",
    params: &[
        Param {
            name: "path",
            kind: ParamKind::Path,
            default: Some("."),
            help: "the directory to list",
        },
        Param {
            name: "show_hidden",
            kind: ParamKind::Bool,
            default: Some("false"),
            help: "also list names that start with a dot",
        },
    ],
    example: "src true",
    flags: &[
        Flag {
            names: &["-a", "-A", "--all", "--almost-all"],
            effect: Effect::Set("show_hidden", "true"),
        },
        Flag {
            names: &["-l", "-h", "-s", "--human-readable"],
            effect: Effect::Dropped("ls prints names only, stat PATH describes one entry"),
        },
        Flag {
            names: &["-1", "-F", "-p", "--classify"],
            effect: Effect::Always,
        },
        Flag {
            names: &["-R", "--recursive"],
            effect: Effect::Never("use find PATH to list a tree"),
        },
        Flag {
            names: &["-t", "-S", "-r", "--reverse"],
            effect: Effect::Never("ls always sorts by name"),
        },
        Flag {
            names: &["-d", "--directory"],
            effect: Effect::Never(
                "ls lists a directory's children; stat PATH describes the directory itself",
            ),
        },
    ],
    on_truncate: Outcome::Success,
    stdin: false,
    run: Runs::Tool(run),
};

params! {
    /// ls's parameters, by name.
    pub struct Params<'a> of TOOL.params;
    /// The directory to list, as the caller named it.
    path: &'a [u8] = bytes,
    /// Whether names that start with `.` are listed.
    show_hidden: bool = bool,
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let p = Params::of(args);
    let path = shown(p.path);
    let show_hidden = p.show_hidden;
    let node = ctx.gate.resolve(p.path)?;
    if node.kind() != NodeKind::Directory {
        let mut line = quoted(p.path).into_owned();
        line.push(b'\n');
        ctx.out.push(&line)?;
        return Ok(Outcome::Success);
    }
    // In text format names stand alone, as `ls -1` writes them into a pipe, so that
    // `for f in $(ls)` sees names that exist.
    let marks = ctx.out.style() == Format::Json;
    let mut line = Vec::new();
    for child in crate::walk::list(ctx, &node, &path)? {
        let name = child.name.as_bytes();
        if name.starts_with(b".") && !show_hidden {
            continue;
        }
        line.clear();
        line.extend_from_slice(&quoted(name));
        match child.kind {
            NodeKind::Directory if marks => line.push(b'/'),
            NodeKind::Symlink if marks => line.push(b'@'),
            _ => {}
        }
        line.push(b'\n');
        if let Err(stop) = ctx.out.push(&line) {
            if stop == Stop::Truncated {
                ctx.out.note_truncation(format!(
                    " before {}; `{}` lists fewer entries",
                    String::from_utf8_lossy(&line[..line.len() - 1]),
                    command("find", &[p.path, b"PATTERN"])
                ));
            }
            return Err(stop);
        }
    }
    Ok(Outcome::Success)
}
