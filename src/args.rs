//! Positional arguments (SPEC §2): the one parser of every tool's words, the refusal of flags
//! with the equivalent positional call, and the named form of `readbox call`.
//!
//! Invariant: a tool's `run` only ever sees [`Args`] that this module built and checked against
//! the tool's parameters; nothing is read before that.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use serde_json::Value as Json;

use crate::error::{Error, Result};
use crate::policy::{parse_bool, parse_uint};
use crate::tools::{Args, Effect, FileType, Kind, Param, Tool, Value};

/// Parses the words after the tool name.
///
/// # Errors
/// `usage:` for a word that starts with `-` before `--` (naming it, with the equivalent
/// positional call where the flag has one), for too many or too few words, and for a bad value.
pub fn parse(tool: &Tool, words: &[OsString]) -> Result<Args> {
    let mut positional: Vec<&[u8]> = Vec::new();
    let mut literal = false;
    for w in words {
        let b = w.as_bytes();
        if !literal && b == b"--" {
            literal = true;
        } else if !literal && b.len() > 1 && b[0] == b'-' {
            return Err(Error::Usage(refusal(tool, words, b)));
        } else {
            positional.push(b);
        }
    }
    from_words(tool, &positional)
}

/// Builds the arguments from positional words, filling in defaults.
fn from_words(tool: &Tool, words: &[&[u8]]) -> Result<Args> {
    let required = tool.params.iter().filter(|p| p.default.is_none()).count();
    if words.len() < required || words.len() > tool.params.len() {
        let what = if words.len() < required {
            "too few"
        } else {
            "too many"
        };
        return Err(Error::Usage(format!(
            "{what} arguments ({} given); usage: {}",
            words.len(),
            tool.signature()
        )));
    }
    let mut values = Vec::with_capacity(tool.params.len());
    for (i, p) in tool.params.iter().enumerate() {
        let word = match words.get(i) {
            Some(w) => *w,
            None => p.default.unwrap_or_default().as_bytes(),
        };
        values.push(value_of(tool, p, word)?);
    }
    Ok(Args::new(values))
}

fn value_of(tool: &Tool, p: &Param, word: &[u8]) -> Result<Value> {
    let text = || String::from_utf8_lossy(word).into_owned();
    let bad = |what: &str| {
        Error::Usage(format!(
            "{}: '{}' is not {what}; usage: {}",
            p.name.to_ascii_uppercase(),
            crate::error::shown(word),
            tool.signature()
        ))
    };
    match p.kind {
        Kind::Path | Kind::Text => Ok(Value::Bytes(word.to_vec())),
        Kind::Bool => parse_bool(&text())
            .map(Value::Bool)
            .ok_or_else(|| bad("a boolean (true false 1 0 yes no on off)")),
        Kind::Int { min, max } => match parse_uint(&text()) {
            Some(n) if (min..=max).contains(&n) => Ok(Value::Int(n)),
            _ => Err(bad(&format!("an integer from {min} to {max}"))),
        },
        Kind::FileType => parse_file_type(&text())
            .map(Value::FileType)
            .ok_or_else(|| bad("a file type (all, file, directory, f, d)")),
    }
}

/// Parses `all`, `file`, `directory`, `f`, `d` in any case.
pub fn parse_file_type(s: &str) -> Option<FileType> {
    match s.to_ascii_lowercase().as_str() {
        "all" => Some(FileType::All),
        "file" | "f" => Some(FileType::File),
        "directory" | "d" => Some(FileType::Directory),
        _ => None,
    }
}

/// The text of a usage error for the flag-like `word`: it names the word, shows the signature
/// and, when every flag of the call has a positional equivalent, the equivalent call.
fn refusal(tool: &Tool, words: &[OsString], word: &[u8]) -> String {
    let shown_word = crate::error::shown(word.split(|&b| b == b'=').next().unwrap_or(word));
    let mut text = format!(
        "'{shown_word}' is not accepted: {} takes positional arguments only ({})",
        tool.name,
        tool.signature()
    );
    match equivalent(tool, words) {
        Ok(call) => text.push_str(&format!("; equivalent: {call}")),
        Err(why) => text.push_str(&format!("; {why}")),
    }
    text.push_str("; use -- before a path that starts with -");
    text
}

/// Rewrites a flag-style call as the positional call, or says why it cannot be.
fn equivalent(tool: &Tool, words: &[OsString]) -> std::result::Result<String, String> {
    let mut set: Vec<Option<String>> = vec![None; tool.params.len()];
    let mut notes: Vec<String> = Vec::new();
    let mut positional: Vec<String> = Vec::new();
    let index = |name: &str| tool.params.iter().position(|p| p.name == name);
    let mut i = 0;
    let mut literal = false;
    while i < words.len() {
        let w = words[i].to_string_lossy().into_owned();
        i += 1;
        if literal || w == "-" || !w.starts_with('-') {
            positional.push(w);
            continue;
        }
        if w == "--" {
            literal = true;
            continue;
        }
        // `-5` is head's and tail's `-n 5`.
        if w.len() > 1
            && w[1..].bytes().all(|b| b.is_ascii_digit())
            && let Some(p) = index("lines")
        {
            set[p] = Some(w[1..].to_string());
            continue;
        }
        let (name, attached) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (w.clone(), None),
        };
        let flags: Vec<(String, Option<String>)> = if find_flag(tool, &name).is_some() {
            vec![(name, attached)]
        } else if !name.starts_with("--") && name.len() > 2 {
            // A bundle of short flags (`-rni`), or a short flag with its value (`-n5`).
            let mut out = Vec::new();
            let chars: Vec<char> = name[1..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let short = format!("-{}", chars[k]);
                match find_flag(tool, &short) {
                    Some(Effect::Takes(_)) if k + 1 < chars.len() => {
                        out.push((short, Some(chars[k + 1..].iter().collect())));
                        k = chars.len();
                    }
                    Some(_) => {
                        out.push((short, None));
                        k += 1;
                    }
                    None => return Err(format!("{} has no equivalent of {name}", tool.name)),
                }
            }
            out
        } else {
            return Err(format!("{} has no equivalent of {name}", tool.name));
        };
        for (flag, attached) in flags {
            match find_flag(tool, &flag).expect("checked above") {
                Effect::Set(param, value) => {
                    if let Some(p) = index(param) {
                        set[p] = Some(value.to_string());
                    }
                }
                Effect::Takes(param) => {
                    let v = match attached {
                        Some(v) => v,
                        None if i < words.len() => {
                            i += 1;
                            words[i - 1].to_string_lossy().into_owned()
                        }
                        None => return Err(format!("{flag} needs a value")),
                    };
                    if let Some(p) = index(param) {
                        set[p] = Some(v);
                    }
                }
                Effect::Always => {}
                Effect::Dropped(why) => notes.push(format!("{flag} dropped: {why}")),
                Effect::DroppedWithValue(why) => {
                    // The flag's own value (`stat -c %s`) goes with it.
                    if attached.is_none() && i < words.len() {
                        i += 1;
                    }
                    notes.push(format!("{flag} dropped: {why}"));
                }
                Effect::Never(why) => return Err(format!("{flag}: {why}")),
            }
        }
    }
    // Fill the parameters that no flag set with the positional words, in order.
    let mut words_left = positional.into_iter();
    let mut values: Vec<Option<String>> = Vec::with_capacity(set.len());
    for s in set {
        values.push(s.or_else(|| words_left.next()));
    }
    if words_left.next().is_some() {
        return Err(format!("too many arguments; usage is {}", tool.signature()));
    }
    let last = values.iter().rposition(Option::is_some);
    let mut call: Vec<String> = Vec::new();
    if let Some(last) = last {
        for (p, v) in tool.params.iter().zip(&values).take(last + 1) {
            match (v, p.default) {
                (Some(v), _) => call.push(v.clone()),
                (None, Some(d)) => call.push(d.to_string()),
                (None, None) => return Err(format!("usage is {}", tool.signature())),
            }
        }
    }
    if tool
        .params
        .iter()
        .zip(&values)
        .any(|(p, v)| p.default.is_none() && v.is_none())
    {
        return Err(format!("usage is {}", tool.signature()));
    }
    // Offer only a call that the parser accepts (`tail -n +2` and `head -n -2` have none).
    let words: Vec<&[u8]> = call.iter().map(|w| w.as_bytes()).collect();
    if from_words(tool, &words).is_err() {
        return Err(format!(
            "this call has no positional equivalent; usage is {}",
            tool.signature()
        ));
    }
    // A word that starts with `-` needs `--` before it, and `--` may stand first.
    let dash = call.iter().any(|w| w.starts_with('-') && w != "-");
    let mut text = tool.name.to_string();
    if dash {
        text.push_str(" --");
    }
    for w in &call {
        text.push(' ');
        text.push_str(&quote(w));
    }
    // Notes follow the call as parts of their own, so that the call can be copied as it is.
    for note in notes {
        text.push_str("; ");
        text.push_str(&note);
    }
    Ok(text)
}

fn find_flag(tool: &Tool, name: &str) -> Option<Effect> {
    tool.flags
        .iter()
        .find(|f| f.names.contains(&name))
        .map(|f| f.effect)
}

/// A word as a POSIX shell would need it quoted.
pub fn quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// The fields of `call`'s JSON object, each name at most once. serde_json's own map keeps the
/// last of repeated names silently; a call that names a parameter twice is ambiguous, so it is
/// refused. Values are kept as JSON (serde_json bounds their nesting).
struct Fields(serde_json::Map<String, Json>);

/// Why `call`'s JSON was refused, before it is put in words.
#[derive(Debug)]
enum Refusal {
    NotAnObject,
    Duplicate(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotAnObject => f.write_str("expected a JSON object of named parameters"),
            Refusal::Duplicate(k) => write!(f, "field '{k}' is given twice"),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Fields {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Fields, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Fields;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object of named parameters")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Fields, A::Error> {
                let mut fields = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let value: Json = map.next_value()?;
                    if fields.contains_key(&key) {
                        return Err(serde::de::Error::custom(Refusal::Duplicate(key)));
                    }
                    fields.insert(key, value);
                }
                Ok(Fields(fields))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// Reads `call`'s JSON text as an object of fields.
fn fields_of(text: &[u8]) -> std::result::Result<serde_json::Map<String, Json>, String> {
    use serde_json::error::Category;
    match serde_json::from_slice::<Fields>(text) {
        Ok(Fields(fields)) => Ok(fields),
        // The visitor's own refusals and a document that is not an object.
        Err(e) if e.classify() == Category::Data => {
            let text = e.to_string();
            let text = text.split(" at line ").next().unwrap_or(&text);
            if text.starts_with("invalid type") {
                Err(Refusal::NotAnObject.to_string())
            } else {
                Err(text.to_string())
            }
        }
        Err(e) => Err(format!("not valid JSON: {e}")),
    }
}

/// Parses the named form of `readbox call TOOL JSON` (SPEC §2): one JSON object whose fields are
/// the parameter names with JSON types; `null` means the default.
///
/// # Errors
/// `usage:` for text that is not a JSON object, an unknown, repeated or mistyped field, a missing
/// required field, or a value out of range.
pub fn parse_json(tool: &Tool, text: &[u8]) -> Result<Args> {
    let usage = |msg: String| Error::Usage(format!("call {}: {msg}", tool.name));
    let fields = fields_of(text).map_err(usage)?;
    if let Some(k) = fields
        .keys()
        .find(|k| !tool.params.iter().any(|p| p.name == k.as_str()))
    {
        return Err(usage(format!("unknown field '{k}'")));
    }
    let mut values = Vec::with_capacity(tool.params.len());
    for p in tool.params {
        let field = fields.get(p.name).filter(|v| !v.is_null());
        let Some(v) = field else {
            match p.default {
                Some(d) => {
                    values.push(value_of(tool, p, d.as_bytes())?);
                    continue;
                }
                None => return Err(usage(format!("missing required field '{}'", p.name))),
            }
        };
        let mistyped = |want: &str| usage(format!("field '{}' must be {want}", p.name));
        let value = match p.kind {
            Kind::Path | Kind::Text => Value::Bytes(
                v.as_str()
                    .ok_or_else(|| mistyped("a string"))?
                    .as_bytes()
                    .to_vec(),
            ),
            Kind::Bool => Value::Bool(v.as_bool().ok_or_else(|| mistyped("a boolean"))?),
            Kind::Int { min, max } => {
                let n = v.as_u64().filter(|n| (min..=max).contains(n));
                Value::Int(n.ok_or_else(|| mistyped(&format!("an integer from {min} to {max}")))?)
            }
            Kind::FileType => Value::FileType(
                v.as_str()
                    .and_then(parse_file_type)
                    .ok_or_else(|| mistyped("\"all\", \"file\" or \"directory\""))?,
            ),
        };
        values.push(value);
    }
    Ok(Args::new(values))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::by_name;

    fn words(ws: &[&str]) -> Vec<OsString> {
        ws.iter().map(OsString::from).collect()
    }

    fn usage_of(tool: &str, ws: &[&str]) -> String {
        match parse(by_name(tool).unwrap(), &words(ws)) {
            Err(Error::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn flags_get_their_positional_equivalent() {
        assert!(
            usage_of("grep", &["-i", "foo", "src"]).contains("equivalent: grep foo src true true")
        );
        assert!(usage_of("head", &["-n", "5", "f"]).contains("equivalent: head f 5"));
        assert!(usage_of("head", &["-5", "f"]).contains("equivalent: head f 5"));
        assert!(usage_of("tail", &["-n20", "f"]).contains("equivalent: tail f 20"));
        assert!(
            usage_of("grep", &["-rni", "TODO", "."]).contains("equivalent: grep TODO . true true")
        );
        assert!(
            usage_of("find", &[".", "-name", "*.rs", "-type", "f"])
                .contains("equivalent: find . '*.rs' f")
        );
        assert!(usage_of("ls", &["-la"]).contains("equivalent: ls . true"));
        assert!(usage_of("wc", &["-l", "f"]).contains("equivalent: wc f; -l dropped"));
        assert!(usage_of("stat", &["-c", "%s", "f"]).contains("equivalent: stat f;"));
        assert!(usage_of("stat", &["--format=%s", "f"]).contains("equivalent: stat f;"));
    }

    #[test]
    fn hints_keep_dash_words_literal_and_offer_only_valid_calls() {
        assert!(usage_of("head", &["-n", "1", "--", "-f"]).contains("equivalent: head -- -f 1"));
        let m = usage_of("tail", &["-n", "+2", "f"]);
        assert!(
            m.contains("no positional equivalent") && !m.contains("equivalent: tail"),
            "{m}"
        );
        let m = usage_of("head", &["-n", "-2", "f"]);
        assert!(!m.contains("equivalent: head"), "{m}");
    }

    #[test]
    fn flags_without_equivalent_say_so() {
        let m = usage_of("cat", &["-n", "a.txt"]);
        assert!(m.contains("'-n'") && !m.contains("equivalent:"), "{m}");
        let m = usage_of("tail", &["-f", "a.txt"]);
        assert!(m.contains("'-f'"), "{m}");
    }

    #[test]
    fn double_dash_ends_the_check() {
        let a = parse(by_name("cat").unwrap(), &words(&["--", "-n"])).unwrap();
        assert_eq!(a.bytes(0), b"-n");
        assert!(parse(by_name("head").unwrap(), &words(&["-x", "--"])).is_err());
    }

    #[test]
    fn values_are_checked() {
        let head = by_name("head").unwrap();
        assert!(parse(head, &words(&["a", "10001"])).is_err());
        assert!(parse(head, &words(&["a", "0x10"])).is_err());
        assert_eq!(parse(head, &words(&["a", "10000"])).unwrap().int(1), 10000);
        assert!(parse(by_name("ls").unwrap(), &words(&[".", "maybe"])).is_err());
        assert!(parse(by_name("find").unwrap(), &words(&[".", "*", "D"])).is_ok());
    }

    #[test]
    fn json_form_checks_types() {
        let head = by_name("head").unwrap();
        assert_eq!(
            parse_json(head, br#"{"path":"f","lines":2}"#)
                .unwrap()
                .int(1),
            2
        );
        for bad in [
            r#"{"path":"f","lines":"2"}"#,
            r#"{"path":"f","lines":2.5}"#,
            "{}",
            "[1]",
            r#"{"x":1,"path":"f"}"#,
            r#"{"path":"f","path":"g"}"#,
        ] {
            assert!(parse_json(head, bad.as_bytes()).is_err(), "{bad}");
        }
        assert_eq!(
            parse_json(head, br#"{"path":"-n","lines":null}"#)
                .unwrap()
                .int(1),
            10
        );
    }

    #[test]
    fn json_form_refuses_repeated_fields_and_non_objects_by_name() {
        let cat = by_name("cat").unwrap();
        let m = |text: &str| match parse_json(cat, text.as_bytes()) {
            Err(Error::Usage(m)) => m,
            other => panic!("expected a usage error for {text}, got {other:?}"),
        };
        assert_eq!(
            m(r#"{"path":"a","path":"b"}"#),
            "call cat: field 'path' is given twice"
        );
        // Also when the first value is null (the default) or of another type.
        assert_eq!(
            m(r#"{"path":null,"from_line":1,"path":"b"}"#),
            "call cat: field 'path' is given twice"
        );
        assert_eq!(
            m("[1]"),
            "call cat: expected a JSON object of named parameters"
        );
        assert_eq!(
            m("\"x\""),
            "call cat: expected a JSON object of named parameters"
        );
        assert!(m("{").starts_with("call cat: not valid JSON: "));
        let deep = format!("{{\"path\":{}{}}}", "[".repeat(60_000), "]".repeat(60_000));
        assert!(m(&deep).contains("recursion limit"), "{}", m(&deep));
    }
}
