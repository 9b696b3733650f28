//! What describes a tool, below the tools themselves.
//!
//! It holds the ten names, the kinds of positional parameters, the flags a tool refuses and what
//! each becomes, the parsed arguments and a tool's outcome. The policy, the argument parser and the
//! walker take these without importing the tools; the table of the ten tools, with the function
//! each runs, is in [`crate::tools`].

/// The names of the ten tools and of `sh`, the shell that runs them (docs/contract.md#readbox-sh),
/// in the registry's order.
pub const NAMES: &[&str] = &[
    "cat", "pwd", "ls", "find", "grep", "head", "tail", "wc", "stat", "diff", "sh",
];

/// The name of the shell among [`NAMES`].
///
/// It is a tool like the others for the policy, `list`, `schema` and MCP, but not one that
/// `install` links (a link named `sh` would take over every script that runs `sh`).
pub const SHELL: &str = "sh";

/// How a finished tool answers when it did not fail: exit 0 or exit 1 (docs/contract.md#envelope).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// Exit 1: a negative answer that is not an error (grep found no line, diff found
    /// differences), as POSIX grep and diff.
    Negative,
}

/// The type of a positional parameter (docs/contract.md#arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A path, resolved by the gate.
    Path,
    /// A boolean word: `true false 1 0 yes no on off`, any case.
    Bool,
    /// A decimal integer in `min..=max`.
    Int {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// `all`, `file`, `directory` (or `f`, `d`), any case.
    FileType,
    /// Free text (a literal search pattern or a glob).
    Text,
}

/// One positional parameter.
pub struct Param {
    /// The parameter's name, as `readbox call` and `schema` use it (`path`, `lines`, …).
    pub name: &'static str,
    /// Its type.
    pub kind: ParamKind,
    /// The default, as it would be typed; `None` when the parameter is required.
    pub default: Option<&'static str>,
    /// One line for help, schema and man pages.
    pub help: &'static str,
}

/// A flag of the classic tool, and what it becomes in readbox's positional form.
pub struct Flag {
    /// Its spellings (`-i`, `--ignore-case`). A one-letter short flag may be bundled (`-rni`).
    pub names: &'static [&'static str],
    /// What it means here.
    pub effect: Effect,
}

/// The positional equivalent of a flag.
#[derive(Debug, Clone, Copy)]
pub enum Effect {
    /// Sets parameter `param` to the word `value`.
    Set(&'static str, &'static str),
    /// Sets parameter `param` to the next word (or the text after `=`, or after a short flag).
    Takes(&'static str),
    /// What readbox always does (grep's `-n`, diff's `-u`).
    Always,
    /// Left out of the equivalent call, which still answers the question; the text says what
    /// differs (ls's `-l`: names only).
    Dropped(&'static str),
    /// Like `Dropped`, for a flag that takes a value (`stat -c FORMAT`): the value goes too.
    DroppedWithValue(&'static str),
    /// Has no equivalent here; the text says why.
    Never(&'static str),
    /// Answered by another call, a template in which `{param}` stands for the caller's word for
    /// that parameter (`cat -n f` -> `grep '' {path}` -> `grep '' f`).
    OtherCall(&'static str),
}

/// `find`'s FILE_TYPE (docs/contract.md#arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// Every entry.
    All,
    /// Regular files only.
    File,
    /// Directories only.
    Directory,
}

/// A parsed argument value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Raw bytes of a path or text argument.
    Bytes(Vec<u8>),
    /// A boolean.
    Bool(bool),
    /// An integer within its range.
    Int(u64),
    /// A file type.
    FileType(FileType),
}

/// The parsed arguments of one call, one value per parameter (defaults filled in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    values: Vec<Value>,
    /// How many of the values the caller gave (the rest are defaults).
    given: usize,
}

impl Args {
    /// Arguments from values in parameter order, the first `given` of them from the caller.
    pub fn new(values: Vec<Value>, given: usize) -> Args {
        Args { values, given }
    }

    /// How many parameters the caller gave, in order (the others took their defaults).
    pub fn given(&self) -> usize {
        self.given
    }

    /// The bytes of the path or text parameter at `i`.
    pub fn bytes(&self, i: usize) -> &[u8] {
        match &self.values[i] {
            Value::Bytes(b) => b,
            other => unreachable!("parameter {i} is not text: {other:?}"),
        }
    }

    /// The boolean parameter at `i`.
    pub fn bool(&self, i: usize) -> bool {
        match self.values[i] {
            Value::Bool(b) => b,
            ref other => unreachable!("parameter {i} is not a boolean: {other:?}"),
        }
    }

    /// The integer parameter at `i`.
    pub fn int(&self, i: usize) -> u64 {
        match self.values[i] {
            Value::Int(n) => n,
            ref other => unreachable!("parameter {i} is not an integer: {other:?}"),
        }
    }

    /// The file-type parameter at `i`.
    pub fn file_type(&self, i: usize) -> FileType {
        match self.values[i] {
            Value::FileType(t) => t,
            ref other => unreachable!("parameter {i} is not a file type: {other:?}"),
        }
    }

    /// The call of `tool` with these arguments, some replaced (`(index, word)`), as a runnable
    /// shell command: the words the caller gave, and the defaults up to the last one replaced.
    pub fn call_with(&self, tool: &str, replaced: &[(usize, &[u8])]) -> String {
        let words = self.words_with(replaced);
        let words: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
        crate::names::command(tool, &words)
    }

    /// The words of [`Args::call_with`]'s call, in parameter order.
    pub fn words_with(&self, replaced: &[(usize, &[u8])]) -> Vec<Vec<u8>> {
        let upto = replaced
            .iter()
            .map(|&(i, _)| i + 1)
            .fold(self.given, usize::max);
        self.values[..upto]
            .iter()
            .enumerate()
            .map(|(i, v)| match replaced.iter().find(|&&(r, _)| r == i) {
                Some((_, w)) => w.to_vec(),
                None => match v {
                    Value::Bytes(b) => b.clone(),
                    Value::Bool(b) => b.to_string().into_bytes(),
                    Value::Int(n) => n.to_string().into_bytes(),
                    Value::FileType(FileType::All) => b"all".to_vec(),
                    Value::FileType(FileType::File) => b"file".to_vec(),
                    Value::FileType(FileType::Directory) => b"directory".to_vec(),
                },
            })
            .collect()
    }
}

/// The position of the parameter named `name` in `params`, evaluated at compile time where a
/// tool's named parameters are read ([`params!`]): a name not in the table does not compile.
///
/// # Panics
/// When no parameter of `params` is named `name` (at compile time, where it is evaluated in a
/// constant).
pub const fn position(params: &[Param], name: &str) -> usize {
    let mut i = 0;
    while i < params.len() {
        if same(params[i].name.as_bytes(), name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("no parameter of that name in the table");
}

/// Whether `a` and `b` hold the same bytes, in a `const fn`.
const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Declares a tool's parameters as a struct with one named field per row of its parameter
/// table, and `of`, which reads them from the parsed [`Args`] once, before any work (as uutils
/// builds its settings). Each field is read at the position of the row of the same name, found
/// at compile time; a field that names no row, or a table with a row no field reads, does not
/// compile. `name: Type = accessor` reads with that [`Args`] method; `@ CONST` adds the row's
/// position as an associated constant, for the hints that replace a word of the call
/// ([`Args::call_with`]).
macro_rules! params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident<$a:lifetime> of $table:expr;
        $(
            $(#[$fmeta:meta])*
            $field:ident $(@ $at:ident)?: $ty:ty = $read:ident,
        )*
    ) => {
        $(#[$meta])*
        pub struct $name<$a> {
            $(
                $(#[$fmeta])*
                pub $field: $ty,
            )*
        }

        impl<$a> $name<$a> {
            $($(
                #[doc = concat!("The position of `", stringify!($field), "` in the table.")]
                pub const $at: usize =
                    $crate::registry::position($table, stringify!($field));
            )?)*

            /// The parameters of one call, read from its parsed arguments.
            pub fn of(args: &$a $crate::registry::Args) -> $name<$a> {
                $name {
                    $(
                        $field: args.$read({
                            const AT: usize =
                                $crate::registry::position($table, stringify!($field));
                            AT
                        }),
                    )*
                }
            }
        }

        const _: () = assert!(
            $table.len() == [$(stringify!($field)),*].len(),
            "every row of the parameter table has a field"
        );
    };
}
pub(crate) use params;

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[Param] = &[
        Param {
            name: "path",
            kind: ParamKind::Path,
            default: None,
            help: "",
        },
        Param {
            name: "lines",
            kind: ParamKind::Int { min: 0, max: 9 },
            default: Some("1"),
            help: "",
        },
    ];

    params! {
        /// A tool's parameters.
        pub struct Named<'a> of TABLE;
        /// Read by the name of its row, whatever the order of the fields.
        lines @ LINES: u64 = int,
        /// The path.
        path: &'a [u8] = bytes,
    }

    #[test]
    fn named_parameters_follow_the_names_of_the_rows() {
        assert_eq!((position(TABLE, "path"), position(TABLE, "lines")), (0, 1));
        let args = Args::new(vec![Value::Bytes(b"f".to_vec()), Value::Int(3)], 1);
        let named = Named::of(&args);
        assert_eq!((named.path, named.lines, Named::LINES), (&b"f"[..], 3, 1));
    }
}
