//! `stat PATH`: one line of JSON with the path, type, size, permissions and time of modification.
//!
//! Its fields are `path`, `type`, `size_bytes`, `permissions`, `modified_at`
//! (docs/contract.md#tools); `path` as the caller gave it, quoted as docs/contract.md#names says. A
//! symlink is followed after the check; only metadata is read, so FIFOs and devices are described
//! without being opened.

use rustix::fs::Stat;

use super::{Runs, Tool};
use crate::call::Ctx;
use crate::envelope::{Stop, json_string};
use crate::names::quoted;
use crate::registry::{Args, Effect, Flag, Outcome, Param, ParamKind, params};

/// The registry entry.
pub const TOOL: Tool = Tool {
    name: "stat",
    summary: "describe a file: type, size, permissions, modification time",
    params: &[Param {
        name: "path",
        kind: ParamKind::Path,
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
    run: Runs::Tool(run),
};

/// `ls -l` style permissions of `mode`, with `s S t T` for set-id and sticky bits
/// (POSIX `ls`, file mode string).
pub fn permissions(mode: u32, kind: crate::resolve::NodeKind) -> String {
    use crate::resolve::NodeKind;
    let type_char = match kind {
        NodeKind::File => '-',
        NodeKind::Directory => 'd',
        NodeKind::Symlink => 'l',
        NodeKind::Fifo => 'p',
        NodeKind::Socket => 's',
        NodeKind::CharDevice => 'c',
        NodeKind::BlockDevice => 'b',
        // As GNU ls marks a type it does not know.
        NodeKind::Unknown => '?',
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

/// Seconds in 400 Gregorian years, after which the calendar repeats exactly.
const GREGORIAN_CYCLE: i64 = 146_097 * 86_400;

/// RFC 3339 in UTC with nine fraction digits: `2026-11-30T00:25:30.123456789Z`.
///
/// A time outside the years 0000 to 9999, which RFC 3339 cannot write (a file's mtime can be any
/// 64-bit number of seconds), takes ISO 8601's expanded form, a signed year of five digits or more:
/// `+292277026596-12-04T15:30:07.000000000Z`.
#[expect(
    clippy::missing_panics_doc,
    reason = "its `expect`s hold for every input: a time within 400 years of 1970, a year of four digits"
)]
pub fn rfc3339(seconds: i64, nanos: u32) -> String {
    // The calendar repeats every 400 years: format the time moved into 1970..2370, then put the
    // cycles back into the year.
    let cycles = seconds.div_euclid(GREGORIAN_CYCLE);
    let ts = jiff::Timestamp::from_second(seconds.rem_euclid(GREGORIAN_CYCLE))
        .expect("a time within 400 years of 1970 is in range");
    let text = ts.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    let (year, rest) = text.split_at(4);
    let year = year.parse::<i64>().expect("four digits") + 400 * cycles;
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        format!("{year:+05}")
    };
    format!("{year}{rest}.{nanos:09}Z")
}

fn describe(path: &str, st: &Stat) -> String {
    let kind = crate::resolve::NodeKind::of(st);
    let modified = json_string(&rfc3339(st.st_mtime, st.st_mtime_nsec as u32));
    format!(
        "{{\"path\": {}, \"type\": {}, \"size_bytes\": {}, \"permissions\": {}, \"modified_at\": {}}}\n",
        json_string(path),
        json_string(kind.name()),
        st.st_size,
        json_string(&permissions(st.st_mode, kind)),
        modified
    )
}

params! {
    /// stat's parameters, by name.
    pub struct Params<'a> of TOOL.params;
    /// The entry to describe, as the caller named it.
    path: &'a [u8] = bytes,
}

fn run(ctx: &Ctx<'_>, args: &Args) -> Result<Outcome, Stop> {
    let p = Params::of(args);
    let path = String::from_utf8_lossy(&quoted(p.path)).into_owned();
    let node = ctx.gate.resolve(p.path)?;
    ctx.out.push_str(&describe(&path, node.stat()))?;
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::NodeKind;

    #[test]
    fn permissions_show_special_bits() {
        assert_eq!(permissions(0o4755, NodeKind::File), "-rwsr-xr-x");
        assert_eq!(permissions(0o4644, NodeKind::File), "-rwSr--r--");
        assert_eq!(permissions(0o1777, NodeKind::Directory), "drwxrwxrwt");
        assert_eq!(permissions(0o7666, NodeKind::File), "-rwSrwSrwT");
    }

    #[test]
    fn times_have_nine_fraction_digits() {
        assert_eq!(
            rfc3339(1_700_000_000, 123_456_789),
            "2023-11-14T22:13:20.123456789Z"
        );
        assert_eq!(rfc3339(0, 1), "1970-01-01T00:00:00.000000001Z");
        assert_eq!(rfc3339(-1, 0), "1969-12-31T23:59:59.000000000Z");
    }

    #[test]
    fn times_beyond_four_digit_years_have_an_expanded_year() {
        // Checked against GNU date (`date -u -d @SECONDS`) where it has an answer, and against the
        // days-to-civil algorithm beyond.
        assert_eq!(
            rfc3339(253_402_300_799, 0),
            "9999-12-31T23:59:59.000000000Z"
        );
        assert_eq!(
            rfc3339(253_402_300_800, 0),
            "+10000-01-01T00:00:00.000000000Z"
        );
        assert_eq!(
            rfc3339(-62_167_219_200, 0),
            "0000-01-01T00:00:00.000000000Z"
        );
        assert_eq!(
            rfc3339(-62_167_219_201, 0),
            "-0001-12-31T23:59:59.000000000Z"
        );
        assert_eq!(
            rfc3339(400_000_000_000, 0),
            "+14645-06-30T15:06:40.000000000Z"
        );
        // Any 64-bit time has an answer.
        assert!(rfc3339(i64::MAX, 999_999_999).starts_with("+292277026596-12-04T15:30:07."));
        assert_eq!(
            rfc3339(i64::MIN, 0),
            "-292277022657-01-27T08:29:52.000000000Z"
        );
    }
}
