//! The parameter rows and flags that more than one tool has: each is written once here, and the
//! tools' tables take it from here rather than from a sibling tool (docs/contract.md#arguments).

use crate::registry::{Effect, Flag, Param, ParamKind};
use crate::walk::MAX_DEPTH_LIMIT;

/// The PATH of head and tail: the one file they read.
pub const FILE: Param = Param {
    name: "path",
    kind: ParamKind::Path,
    default: None,
    help: "the file to read",
};

/// The LINES parameter of head and tail.
pub const LINES: Param = Param {
    name: "lines",
    kind: ParamKind::Int {
        min: 0,
        max: 10_000,
    },
    default: Some("10"),
    help: "how many lines to print (0 to 10000)",
};

/// The MAX_DEPTH parameter of find and grep.
pub const MAX_DEPTH: Param = Param {
    name: "max_depth",
    kind: ParamKind::Int {
        min: 0,
        max: MAX_DEPTH_LIMIT,
    },
    default: Some("20"),
    help: "how deep to go: 1 = direct children, 0 = nothing (0 to 100)",
};

/// The flags head and tail share.
pub const LINE_FLAGS: &[Flag] = &[
    Flag {
        names: &["-n", "--lines"],
        effect: Effect::Takes("lines"),
    },
    Flag {
        names: &["-c", "--bytes"],
        effect: Effect::Never("readbox counts lines only"),
    },
    Flag {
        names: &["-q", "--quiet", "--silent"],
        effect: Effect::Always,
    },
    Flag {
        names: &["-v", "--verbose"],
        effect: Effect::Dropped("readbox prints no `==> PATH <==` header"),
    },
    Flag {
        names: &["-f", "-F", "--follow", "--retry"],
        effect: Effect::Dropped("readbox never follows a growing file"),
    },
];
