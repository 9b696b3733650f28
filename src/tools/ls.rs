//! `ls [PATH=.] [SHOW_HIDDEN=false]`: the children of a directory, one name per line, sorted by
//! name bytes; directories end with `/`, symlinks with `@` (SPEC §7). Given a file, prints PATH.

use std::os::unix::ffi::OsStrExt;

use super::{Args, Ctx, Effect, Flag, Kind, Outcome, Param, Tool};
use crate::envelope::Stop;
use crate::error::shown;
use crate::resolve::Kind as K;

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "ls",
    summary: "list a directory's entries",
    params: &[
        Param {
            name: "path",
            kind: Kind::Path,
            default: Some("."),
            help: "the directory to list",
        },
        Param {
            name: "show_hidden",
            kind: Kind::Bool,
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
    ],
    on_truncate: Outcome::Success,
    run,
};

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let path = shown(args.bytes(0));
    let show_hidden = args.bool(1);
    let node = ctx.gate.resolve(args.bytes(0))?;
    if node.kind() != K::Directory {
        ctx.out.push(args.bytes(0))?;
        ctx.out.push(b"\n")?;
        return Ok(Outcome::Success);
    }
    let mut text = Vec::new();
    for child in crate::walk::list(ctx, &node, &path)? {
        let name = child.name.as_bytes();
        if name.starts_with(b".") && !show_hidden {
            continue;
        }
        text.extend_from_slice(name);
        match child.kind {
            K::Directory => text.push(b'/'),
            K::Symlink => text.push(b'@'),
            _ => {}
        }
        text.push(b'\n');
    }
    ctx.out.push(&text)?;
    Ok(Outcome::Success)
}
