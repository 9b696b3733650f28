//! The meta commands (docs/contract.md#invocation): `help` and its aliases, `version`, `list`,
//! their text format, and `schema`, whose calls the parser takes with the bounds exactly as the
//! schema states them. `readbox policy` is tested in `policy.rs`, `install` in `install.rs`,
//! `call` in `call.rs`, and the output cap on the meta commands in `output_cap.rs`.

use serde_json::{Value, json};

use crate::args::{names_word, usage};
use crate::dispatch::{ALL, TOOLS, sorted, unknown_tool};
use crate::support::TestEnv;

// ---------------------------------------------------------------------------------------------
// §1 meta commands: help, version, list

#[test]
fn help_and_its_aliases_print_the_same_usage() {
    let env = TestEnv::new();
    let help = env.readbox(&["help"]);
    assert_eq!((help.status, &help.error), (0, &None));
    for t in TOOLS {
        assert!(names_word(&help.output, t), "help should list {t}");
    }
    for alias in ["--help", "-h"] {
        let a = env.readbox(&[alias]);
        assert_eq!((a.status, &a.stdout), (0, &help.stdout), "readbox {alias}");
    }
}

#[test]
fn version_and_its_aliases_print_the_package_version() {
    let env = TestEnv::new();
    let v = env.readbox(&["version"]);
    assert_eq!((v.status, &v.error), (0, &None));
    assert!(
        v.output.contains(env!("CARGO_PKG_VERSION")),
        "version output: {:?}",
        v.output
    );
    assert!(v.output.ends_with('\n'));
    for alias in ["--version", "-V"] {
        let a = env.readbox(&[alias]);
        assert_eq!((a.status, &a.stdout), (0, &v.stdout), "readbox {alias}");
    }
}

#[test]
fn help_tool_describes_its_positional_arguments() {
    let env = TestEnv::new();
    let params: [(&str, &[&str]); 10] = [
        ("cat", &["PATH"]),
        ("pwd", &[]),
        ("ls", &["PATH", "SHOW_HIDDEN"]),
        ("find", &["PATH", "PATTERN", "FILE_TYPE", "MAX_DEPTH"]),
        (
            "grep",
            &[
                "PATTERN",
                "PATH",
                "RECURSIVE",
                "IGNORE_CASE",
                "FILE_PATTERN",
                "MAX_DEPTH",
            ],
        ),
        ("head", &["PATH", "LINES"]),
        ("tail", &["PATH", "LINES"]),
        ("wc", &["PATH"]),
        ("stat", &["PATH"]),
        ("diff", &["PATH_A", "PATH_B", "CONTEXT_LINES"]),
    ];
    let general = env.readbox(&["help"]);
    for (tool, names) in params {
        let a = env.readbox(&["help", tool]);
        assert_eq!((a.status, &a.error), (0, &None), "readbox help {tool}");
        assert!(
            names_word(&a.output, tool),
            "help {tool} should name the tool"
        );
        assert_ne!(
            a.output, general.output,
            "help {tool} should describe {tool}, not everything"
        );
        for n in names {
            assert!(
                names_word(&a.output, n),
                "help {tool} should describe {n}: {}",
                a.output
            );
        }
    }
}

#[test]
fn help_for_unknown_tool_is_a_usage_error_naming_it() {
    let env = TestEnv::new();
    let a = env.readbox(&["help", "frobnicate"]);
    a.fails("usage", "frobnicate");
    assert_eq!(a.output, "");
}

#[test]
fn list_prints_enabled_tools_one_per_line() {
    let mut env = TestEnv::new();
    let all = env.readbox(&["list"]);
    assert_eq!((all.status, &all.error), (0, &None));
    assert!(all.output.ends_with('\n'));
    assert_eq!(sorted(all.lines()), sorted(ALL.to_vec()));
    env.var("READBOX_TOOLS", "grep,cat");
    let some = env.readbox(&["list"]);
    assert_eq!(some.status, 0);
    assert_eq!(sorted(some.lines()), ["cat", "grep"]);
    assert!(some.output.ends_with('\n'));
}

#[test]
fn meta_commands_refuse_extra_words() {
    let env = TestEnv::new();
    usage(&env.readbox(&["version", "x"]));
    usage(&env.readbox(&["list", "x"]));
    usage(&env.readbox(&["schema", "x"]));
    usage(&env.readbox(&["policy", "x"]));
    usage(&env.readbox(&["help", "cat", "ls"]));
}

#[test]
fn meta_commands_answer_in_text_format_too() {
    let mut env = TestEnv::new();
    let list = env.readbox(&["list"]).output;
    let version = env.readbox(&["version"]).output;
    env.var("READBOX_FORMAT", "text");
    let a = env.readbox(&["list"]);
    assert_eq!((a.status, a.stdout.as_slice()), (0, list.as_bytes()));
    let a = env.readbox(&["version"]);
    assert_eq!((a.status, a.stdout.as_slice()), (0, version.as_bytes()));
    let a = env.readbox(&["frobnicate"]);
    assert_eq!((a.status, a.stdout.as_slice()), (127, &b""[..]));
    let err = String::from_utf8_lossy(&a.stderr);
    assert!(err.contains(&unknown_tool("frobnicate")), "stderr: {err}");
}

// ---------------------------------------------------------------------------------------------
// §8 schema

/// Each tool's parameters from the §2 table: (name, JSON type, required).
fn params_of(tool: &str) -> Vec<(&'static str, &'static str, bool)> {
    match tool {
        "cat" => vec![("path", "string", true), ("from_line", "integer", false)],
        "wc" | "stat" => vec![("path", "string", true)],
        "pwd" => vec![],
        "ls" => vec![("path", "string", false), ("show_hidden", "boolean", false)],
        "find" => vec![
            ("path", "string", false),
            ("pattern", "string", false),
            ("file_type", "string", false),
            ("max_depth", "integer", false),
        ],
        "grep" => vec![
            ("pattern", "string", true),
            ("path", "string", false),
            ("recursive", "boolean", false),
            ("ignore_case", "boolean", false),
            ("file_pattern", "string", false),
            ("max_depth", "integer", false),
        ],
        "head" | "tail" => vec![("path", "string", true), ("lines", "integer", false)],
        "diff" => vec![
            ("path_a", "string", true),
            ("path_b", "string", true),
            ("context_lines", "integer", false),
        ],
        "sh" => vec![("command", "string", true)],
        _ => unreachable!(),
    }
}

#[test]
fn schema_defines_every_enabled_tool_with_its_parameters() {
    let env = TestEnv::new();
    let a = env.readbox(&["schema"]);
    assert_eq!((a.status, &a.error), (0, &None));
    let doc = a.json();
    let defs = doc.as_array().expect("schema is a JSON array");
    let mut names: Vec<&str> = defs
        .iter()
        .map(|d| d["name"].as_str().expect("name is a string"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, sorted(ALL.to_vec()));
    for d in defs {
        let name = d["name"].as_str().unwrap();
        let desc = d["description"].as_str().unwrap_or_default();
        assert!(
            !desc.trim().is_empty(),
            "{name}: description must be a non-empty string"
        );
        let s = &d["input_schema"];
        assert_eq!(s["type"], "object", "{name}: input_schema type");
        let props = s["properties"].as_object().cloned().unwrap_or_default();
        let want = params_of(name);
        let mut got_props: Vec<&str> = props.keys().map(String::as_str).collect();
        got_props.sort_unstable();
        let want_props = sorted(want.iter().map(|p| p.0).collect());
        assert_eq!(got_props, want_props, "{name}: properties");
        for (p, ty, _) in &want {
            assert_eq!(props[*p]["type"], *ty, "{name}.{p}: JSON type");
        }
        let mut required: Vec<&str> = s["required"]
            .as_array()
            .map(|r| r.iter().map(|x| x.as_str().unwrap()).collect())
            .unwrap_or_default();
        required.sort_unstable();
        let want_required = sorted(want.iter().filter(|p| p.2).map(|p| p.0).collect());
        assert_eq!(required, want_required, "{name}: required");
    }
}

#[test]
fn schema_lists_only_tools_enabled_by_readbox_tools() {
    let mut env = TestEnv::new();
    env.var("READBOX_TOOLS", "wc,stat");
    let a = env.readbox(&["schema"]);
    assert_eq!(a.status, 0);
    let doc = a.json();
    let mut names: Vec<&str> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["stat", "wc"]);
}

/// A value of the right JSON type for every required parameter, so that each generated call
/// is complete.
fn required_sample(name: &str, schema: &Value) -> Value {
    match (name, schema["type"].as_str()) {
        ("pattern", _) => json!("x"),
        (_, Some("string")) => json!("a.txt"),
        (_, Some("integer")) => schema["minimum"].clone(),
        (_, Some("boolean")) => json!(false),
        other => panic!("no sample for {other:?}"),
    }
}

#[test]
fn calls_generated_from_the_schema_are_accepted_by_the_parser_and_its_bounds_are_exact() {
    // The schema is what a model calls with: every value it allows must parse, and the values
    // just past its bounds must not, or the schema and the parser have drifted apart.
    let env = TestEnv::new();
    env.write("a.txt", "x\ny\n");
    env.mkdir("d");
    let doc: Value = serde_json::from_str(&env.readbox(&["schema"]).output).unwrap();
    let mut calls = 0;
    for def in doc.as_array().unwrap() {
        let tool = def["name"].as_str().unwrap();
        let schema = &def["input_schema"];
        let props = schema["properties"].as_object().unwrap();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let base: serde_json::Map<String, Value> = required
            .iter()
            .map(|r| (r.to_string(), required_sample(r, &props[*r])))
            .collect();
        let run = |obj: &serde_json::Map<String, Value>| {
            let text = Value::Object(obj.clone()).to_string();
            (env.readbox(&["call", tool, &text]), text)
        };
        let (a, text) = run(&base);
        assert!(
            !a.error.as_deref().unwrap_or("").starts_with("usage:"),
            "{tool} {text}: {:?}",
            a.error
        );
        calls += 1;
        for (name, p) in props {
            let mut good: Vec<Value> = Vec::new();
            let mut bad: Vec<Value> = vec![json!([1])];
            match p["type"].as_str().unwrap() {
                "boolean" => {
                    good.extend([json!(true), json!(false)]);
                    bad.push(json!("true"));
                }
                "integer" => {
                    // No `maximum` means no upper bound (cat's FROM_LINE).
                    let (min, max) = (
                        p["minimum"].as_u64().unwrap(),
                        p["maximum"].as_u64().unwrap_or(u64::MAX),
                    );
                    good.extend([json!(min), json!(max), p["default"].clone()]);
                    bad.extend([json!(-1), json!(1.5), json!("1")]);
                    if let Some(over) = max.checked_add(1) {
                        bad.push(json!(over));
                    }
                }
                "string" => match p.get("enum") {
                    Some(Value::Array(values)) => {
                        good.extend(values.iter().cloned());
                        bad.push(json!("bogus"));
                    }
                    _ => {
                        good.push(
                            p.get("default")
                                .cloned()
                                .unwrap_or_else(|| required_sample(name, p)),
                        );
                        bad.push(json!(5));
                    }
                },
                other => panic!("{tool}.{name}: unexpected type {other}"),
            }
            good.retain(|v| !v.is_null());
            for v in good {
                let mut obj = base.clone();
                obj.insert(name.clone(), v);
                let (a, text) = run(&obj);
                assert!(
                    !a.error.as_deref().unwrap_or("").starts_with("usage:"),
                    "{tool} {text}: the schema allows it, the parser refused: {:?}",
                    a.error
                );
                calls += 1;
            }
            for v in bad {
                let mut obj = base.clone();
                obj.insert(name.clone(), v);
                let (a, text) = run(&obj);
                assert!(
                    a.error.as_deref().unwrap_or("").starts_with("usage:"),
                    "{tool} {text}: outside the schema, but accepted"
                );
            }
        }
    }
    assert!(calls > 40, "only {calls} calls generated");
}
