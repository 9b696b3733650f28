//! `stat PATH`: one line of JSON with `path`, `type`, `size_bytes`, `permissions`,
//! `modified_at` (docs/contract.md#tools); `path` as the caller gave it, quoted as
//! docs/contract.md#names says. A symlink is followed after the check; only metadata is read, so FIFOs
//! and devices are described without being opened.

use rustix::fs::Stat;

use super::Tool;
use crate::call::Ctx;
use crate::envelope::{Stop, json_string};
use crate::names::quoted;
use crate::registry::{Args, Effect, Flag, Kind, Outcome, Param};

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "stat",
    summary: "describe a file: type, size, permissions, modification time",
    params: &[Param {
        name: "path",
        kind: Kind::Path,
        default: None,
        help: "the object to describe",
    }],
    example: "Cargo.toml",
    flags: &[
        Flag {
            names: &["-L", "--dereference"],
            effect: Effect::Always,
        },
        Flag {
            names: &["-c", "--format", "--printf"],
            effect: Effect::DroppedWithValue("stat always prints its JSON line"),
        },
        Flag {
            names: &["-f", "--file-system", "-t", "--terse"],
            effect: Effect::Dropped("stat always prints its JSON line"),
        },
    ],
    on_truncate: Outcome::Success,
    stdin: false,
    run,
};

/// `ls -l` style permissions of `mode`, with `s S t T` for set-id and sticky bits
/// (POSIX `ls`, file mode string).
pub fn permissions(mode: u32, kind: crate::resolve::Kind) -> String {
    use crate::resolve::Kind as K;
    let type_char = match kind {
        K::File => '-',
        K::Directory => 'd',
        K::Symlink => 'l',
        K::Fifo => 'p',
        K::Socket => 's',
        K::CharDevice => 'c',
        K::BlockDevice => 'b',
        // As GNU ls marks a type it does not know.
        K::Unknown => '?',
    };
    let bit = |m: u32, c: char| if mode & m != 0 { c } else { '-' };
    let special = |exec: u32, special: u32, set: char| match (mode & exec != 0, mode & special != 0)
    {
        (true, true) => set,
        (false, true) => set.to_ascii_uppercase(),
        (true, false) => 'x',
        (false, false) => '-',
    };
    [
        type_char,
        bit(0o400, 'r'),
        bit(0o200, 'w'),
        special(0o100, 0o4000, 's'),
        bit(0o040, 'r'),
        bit(0o020, 'w'),
        special(0o010, 0o2000, 's'),
        bit(0o004, 'r'),
        bit(0o002, 'w'),
        special(0o001, 0o1000, 't'),
    ]
    .iter()
    .collect()
}

/// RFC 3339 in UTC with nine fraction digits: `2026-11-30T00:25:30.123456789Z`.
pub fn rfc3339(seconds: i64, nanos: u32) -> Option<String> {
    let ts = jiff::Timestamp::from_second(seconds).ok()?;
    Some(format!("{}.{nanos:09}Z", ts.strftime("%Y-%m-%dT%H:%M:%S")))
}

fn describe(path: &str, st: &Stat) -> String {
    let kind = crate::resolve::Kind::of(st);
    let modified = rfc3339(st.st_mtime, st.st_mtime_nsec as u32)
        .map_or_else(|| "null".to_string(), |t| json_string(&t));
    format!(
        "{{\"path\": {}, \"type\": {}, \"size_bytes\": {}, \"permissions\": {}, \"modified_at\": {}}}\n",
        json_string(path),
        json_string(kind.name()),
        st.st_size,
        json_string(&permissions(st.st_mode, kind)),
        modified
    )
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let path = String::from_utf8_lossy(&quoted(args.bytes(0))).into_owned();
    let node = ctx.gate.resolve(args.bytes(0))?;
    ctx.out.push_str(&describe(&path, node.stat()))?;
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::Kind as K;

    #[test]
    fn permissions_show_special_bits() {
        assert_eq!(permissions(0o4755, K::File), "-rwsr-xr-x");
        assert_eq!(permissions(0o4644, K::File), "-rwSr--r--");
        assert_eq!(permissions(0o1777, K::Directory), "drwxrwxrwt");
        assert_eq!(permissions(0o7666, K::File), "-rwSrwSrwT");
    }

    #[test]
    fn times_have_nine_fraction_digits() {
        assert_eq!(
            rfc3339(1_700_000_000, 123_456_789).unwrap(),
            "2023-11-14T22:13:20.123456789Z"
        );
        assert_eq!(rfc3339(0, 1).unwrap(), "1970-01-01T00:00:00.000000001Z");
    }
}
