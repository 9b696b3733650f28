//! The meta commands of the multicall form (docs/contract.md#invocation).
//!
//! They are `help`, `version`, `list`, `policy`, `schema` and `install`. (`call` runs a tool, so it
//! lives with the tools' path in `lib.rs`; `mcp` is a server, in `mcp.rs`, whose tool list is built
//! from [`description`], [`input_schema`] and [`output_schema`] here.) Their answers go through the
//! envelope and obey the caps like any tool's.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::dispatch::Meta;
use crate::envelope::{Output, Stop, json_document};
use crate::error::{Error, shown};
use crate::policy::Policy;
use crate::registry::ParamKind;
use crate::sandbox::Enforcement;
use crate::tools::{self, Tool};

/// The version line: `readbox X.Y.Z`.
pub fn version() -> String {
    format!("readbox {}\n", env!("CARGO_PKG_VERSION"))
}

/// The usage text of `readbox` alone and `readbox help`.
pub fn usage() -> String {
    let mut s = String::from(
        "readbox: safe, read-only file tools for agents and people\n\
         \n\
         usage: readbox TOOL [ARG...]     (or TOOL [ARG...] through a link named TOOL)\n\
         \x20      readbox help [TOOL] | version | list | policy | schema | call TOOL JSON | install DIR\n\
         \x20      readbox mcp               (a Model Context Protocol server on stdin/stdout)\n\
         \n\
         Arguments are positional only: no options. Paths are confined beneath the roots\n\
         (READBOX_ROOTS, default: the working directory); excluded names (READBOX_EXCLUDE,\n\
         default: .env .env.* .ssh .aws *.pem *.key) are never read.\n\
         \n\
         tools:\n",
    );
    let width = tools::TOOLS.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for t in tools::TOOLS {
        s.push_str(&format!("  {:width$}  {}\n", t.name, t.summary));
    }
    s.push_str("\nEvery call prints one JSON line {\"output\": ..., \"error\": ..., \"truncated\": ...};\n");
    s.push_str(
        "READBOX_FORMAT=text prints the output as it is. Exit status: 0 success, 1 no match or\n",
    );
    s.push_str("differences, 2 error, 127 unknown tool. `readbox help TOOL` describes one tool.\n");
    s
}

/// The help text of one tool: signature, parameters with defaults and ranges, an example.
pub fn tool_help(t: &Tool) -> String {
    let mut s = format!("{} - {}\n\nusage: {}\n", t.name, t.summary, t.signature());
    if !t.params.is_empty() {
        s.push_str("\narguments (positional, in this order; optional ones may be left off from the right):\n");
        for p in t.params {
            let mut line = format!("  {:14} {}", p.name.to_ascii_uppercase(), p.help);
            match p.kind {
                ParamKind::Bool => line.push_str(" (true/false)"),
                ParamKind::FileType => line.push_str(" (all, file, directory)"),
                _ => {}
            }
            if let Some(d) = p.default {
                line.push_str(&format!(" [default: {d}]"));
            }
            s.push_str(&line);
            s.push('\n');
        }
    }
    s.push_str(&format!(
        "\nexample: {}{}{}\n",
        t.name,
        if t.example.is_empty() { "" } else { " " },
        t.example
    ));
    s
}

/// The JSON Schema of a tool's parameters, from the registry (so it cannot drift from the parser).
pub fn input_schema(t: &Tool) -> Value {
    let mut props = serde_json::Map::new();
    for p in t.params {
        let mut s = match p.kind {
            ParamKind::Path | ParamKind::Text => json!({ "type": "string" }),
            ParamKind::Bool => json!({ "type": "boolean" }),
            ParamKind::Int { min, max } if max == u64::MAX => {
                json!({ "type": "integer", "minimum": min })
            }
            ParamKind::Int { min, max } => {
                json!({ "type": "integer", "minimum": min, "maximum": max })
            }
            ParamKind::FileType => {
                json!({ "type": "string", "enum": ["all", "file", "directory"] })
            }
        };
        s["description"] = json!(p.help);
        if let Some(d) = p.default {
            s["default"] = match p.kind {
                ParamKind::Bool => json!(crate::policy::parse_bool(d).unwrap_or(false)),
                ParamKind::Int { .. } => json!(crate::policy::parse_uint(d).unwrap_or(0)),
                _ => json!(d),
            };
        }
        props.insert(p.name.to_string(), s);
    }
    let required: Vec<&str> = t
        .params
        .iter()
        .filter(|p| p.default.is_none())
        .map(|p| p.name)
        .collect();
    json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}

/// The JSON Schema of what wc and stat print (their `output` is one JSON object), for MCP's
/// `outputSchema`; `None` for the tools that print text.
pub fn output_schema(t: &Tool) -> Option<Value> {
    let count = |what: &str| json!({ "type": "integer", "minimum": 0, "description": what });
    let schema = match t.name {
        "wc" => json!({
            "type": "object",
            "properties": {
                "lines": count("newline bytes"),
                "words": count("words separated by Unicode white space"),
                "bytes": count("bytes"),
            },
            "required": ["lines", "words", "bytes"],
            "additionalProperties": false,
        }),
        "stat" => json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "the path as given" },
                "type": {
                    "type": "string",
                    "enum": [
                        "file", "directory", "fifo", "socket", "char_device", "block_device",
                        "unknown",
                    ],
                },
                "size_bytes": count("size in bytes"),
                "permissions": { "type": "string", "description": "as ls -l shows them" },
                "modified_at": { "type": "string", "description": "RFC 3339, UTC, nanoseconds" },
            },
            "required": ["path", "type", "size_bytes", "permissions", "modified_at"],
            "additionalProperties": false,
        }),
        _ => return None,
    };
    Some(schema)
}

/// The enabled tools, in the registry's order.
pub fn enabled_tools(policy: &Policy) -> impl Iterator<Item = &'static Tool> + '_ {
    tools::TOOLS
        .iter()
        .filter(|t| policy.tools.contains(&t.name))
}

/// The description of a tool for function calling.
pub fn description(t: &Tool) -> String {
    format!(
        "{} (read-only, confined to the allowed directories). Positional form: {}",
        t.summary,
        t.signature()
    )
}

/// Runs a meta command other than `call`.
///
/// # Errors
/// `usage:` for wrong words, `io:` for `install` names that exist already, or truncation.
pub fn run(
    m: Meta,
    words: &[OsString],
    policy: &Policy,
    out: &Output,
    enforcement: &Enforcement,
) -> Result<(), Stop> {
    let no_words = |name: &str| {
        if words.is_empty() {
            Ok(())
        } else {
            Err(Stop::Error(Error::Usage(format!(
                "readbox {name} takes no arguments"
            ))))
        }
    };
    match m {
        Meta::Help => match words {
            [] => out.push_str(&usage()),
            [name] => match name.to_str().and_then(tools::by_name) {
                Some(t) => out.push_str(&tool_help(t)),
                None => Err(Error::Usage(format!(
                    "help: unknown tool '{}'; tools: {}",
                    shown(name.as_bytes()),
                    crate::registry::NAMES.join(" ")
                ))
                .into()),
            },
            _ => Err(Error::Usage("readbox help [TOOL]".into()).into()),
        },
        Meta::Version => {
            no_words("version")?;
            out.push_str(&version())
        }
        Meta::List => {
            no_words("list")?;
            let mut s = String::new();
            for t in &policy.tools {
                s.push_str(t);
                s.push('\n');
            }
            out.push_str(&s)
        }
        Meta::Policy => {
            no_words("policy")?;
            let doc = policy.to_json(json!({ "landlock": enforcement.describe() }));
            out.push_str(&json_document(&doc))?;
            out.push_str("\n")
        }
        Meta::Schema => {
            no_words("schema")?;
            let defs: Vec<Value> = enabled_tools(policy)
                .map(|t| {
                    json!({
                        "name": t.name,
                        "description": description(t),
                        "input_schema": input_schema(t),
                    })
                })
                .collect();
            out.push_str(&json_document(&Value::Array(defs)))?;
            out.push_str("\n")
        }
        Meta::Install => match words {
            // A lock says what may be read; links made anywhere would be writes it never
            // allowed (docs/contract.md#lock).
            _ if policy.lock => Err(Error::Disabled(
                "install makes links, which a locked policy does not allow".into(),
            )
            .into()),
            [dir] if !dir.is_empty() => install(Path::new(dir), policy, out),
            _ => Err(Error::Usage("readbox install DIR".into()).into()),
        },
        Meta::Call => unreachable!("call runs a tool"),
        Meta::Mcp => unreachable!("mcp is a server, started before any envelope"),
    }
}

/// Makes a symlink named after each enabled tool in `dir`, pointing at this binary's real path;
/// not for `sh`, which would take over every script that runs `sh` (docs/contract.md#readbox-sh).
/// An existing link to the binary is accepted; any other existing name is left alone and reported.
fn install(dir: &Path, policy: &Policy, out: &Output) -> Result<(), Stop> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| Error::io("readbox", &e))?;
    let mut refused: Vec<String> = Vec::new();
    let mut made = String::new();
    for t in policy
        .tools
        .iter()
        .filter(|t| **t != crate::registry::SHELL)
    {
        let link: PathBuf = dir.join(t);
        match std::fs::symlink_metadata(&link) {
            Ok(_) => {
                let same = std::fs::read_link(&link)
                    .ok()
                    .and_then(|target| dir.join(target).canonicalize().ok())
                    .is_some_and(|target| target == exe);
                if same {
                    made.push_str(&format!("{} (already there)\n", link.display()));
                } else {
                    refused.push(link.display().to_string());
                }
            }
            Err(_) => match std::os::unix::fs::symlink(&exe, &link) {
                Ok(()) => made.push_str(&format!("{}\n", link.display())),
                Err(e) => {
                    return Err(Error::io(&dir.display().to_string(), &e).into());
                }
            },
        }
    }
    out.push_str(&made)?;
    if !refused.is_empty() {
        return Err(Error::Io(format!(
            "left alone, not a link to readbox: {}",
            refused.join(" ")
        ))
        .into());
    }
    Ok(())
}
