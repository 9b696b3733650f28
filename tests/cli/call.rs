//! `readbox call TOOL JSON` (docs/contract.md#arguments): the named form answers as the
//! positional one, `null` means the default, values that start with `-` are no flags, and
//! unknown or mistyped fields, a missing document and an unknown tool are refused.

use crate::args::{names_word, usage};
use crate::dispatch::TOOLS;
use crate::support::TestEnv;

#[test]
fn call_answers_as_the_positional_form() {
    let env = TestEnv::new();
    env.write("f.txt", "a\nB\nc\n");
    env.write("g.txt", "a\nb\nc\n");
    env.write(".hidden", "h\n");
    env.write("d/x.txt", "b\n");
    env.write("d/y.md", "B\n");
    env.secret(".env");
    let pairs: &[(&str, &str, &[&str])] = &[
        ("cat", r#"{"path":"f.txt"}"#, &["f.txt"]),
        ("cat", r#"{"path":"nope"}"#, &["nope"]),
        ("cat", r#"{"path":".env"}"#, &[".env"]),
        ("pwd", "{}", &[]),
        ("ls", r#"{"path":".","show_hidden":true}"#, &[".", "true"]),
        ("ls", "{}", &[]),
        // Deep enough for the whole tree: a note that gives a call (MAX_DEPTH's) gives it as
        // each form writes calls (tests/cli/mcp.rs).
        (
            "find",
            r#"{"path":".","pattern":"*.txt","file_type":"file","max_depth":2}"#,
            &[".", "*.txt", "file", "2"],
        ),
        (
            "find",
            r#"{"file_type":"directory"}"#,
            &[".", "*", "directory"],
        ),
        (
            "grep",
            r#"{"pattern":"b","path":"d","recursive":false,"ignore_case":true,"file_pattern":"*.md","max_depth":5}"#,
            &["b", "d", "false", "true", "*.md", "5"],
        ),
        ("grep", r#"{"pattern":"zzz"}"#, &["zzz"]),
        ("head", r#"{"path":"f.txt","lines":2}"#, &["f.txt", "2"]),
        ("tail", r#"{"path":"f.txt","lines":1}"#, &["f.txt", "1"]),
        ("wc", r#"{"path":"f.txt"}"#, &["f.txt"]),
        ("stat", r#"{"path":"f.txt"}"#, &["f.txt"]),
        (
            "diff",
            r#"{"path_a":"f.txt","path_b":"g.txt","context_lines":0}"#,
            &["f.txt", "g.txt", "0"],
        ),
        (
            "diff",
            r#"{"path_a":"f.txt","path_b":"f.txt"}"#,
            &["f.txt", "f.txt"],
        ),
    ];
    for (tool, json, args) in pairs {
        let named = env.readbox(&["call", tool, json]);
        let positional = env.run(tool, args);
        assert_eq!(
            (named.status, &named.stdout),
            (positional.status, &positional.stdout),
            "call {tool} {json} vs {tool} {args:?}"
        );
    }
    // The comparisons above include real answers, not only errors.
    env.readbox(&["call", "head", r#"{"path":"f.txt","lines":2}"#])
        .ok("a\nB\n");
    env.readbox(&["call", "grep", r#"{"pattern":"zzz"}"#])
        .no_match();
}

#[test]
fn call_null_means_the_default() {
    let env = TestEnv::new();
    let twelve: String = (1..=12).map(|i| format!("{i}\n")).collect();
    env.write("n.txt", &twelve);
    env.write(".hidden", "h\n");
    let pairs: &[(&str, &str, &[&str])] = &[
        ("head", r#"{"path":"n.txt","lines":null}"#, &["n.txt"]),
        ("ls", r#"{"path":null,"show_hidden":null}"#, &[]),
        (
            "find",
            r#"{"path":null,"pattern":null,"file_type":null,"max_depth":null}"#,
            &[".", "*", "all", "20"],
        ),
        (
            "grep",
            r#"{"pattern":"1","path":null,"recursive":null,"ignore_case":null,"file_pattern":null,"max_depth":null}"#,
            &["1"],
        ),
    ];
    for (tool, json, args) in pairs {
        let named = env.readbox(&["call", tool, json]);
        let positional = env.run(tool, args);
        assert_eq!(
            (named.status, &named.stdout),
            (positional.status, &positional.stdout),
            "call {tool} {json}"
        );
    }
    env.readbox(&["call", "head", r#"{"path":"n.txt","lines":null}"#])
        .ok("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
    // A required field has no default, so null leaves it missing.
    usage(&env.readbox(&["call", "head", r#"{"path":null}"#]));
    usage(&env.readbox(&["call", "grep", r#"{"pattern":null}"#]));
}

#[test]
fn call_values_starting_with_dash_are_not_flags() {
    let env = TestEnv::new();
    env.write("-n", "dash file\n");
    env.write("--", "double\n");
    env.write("notes.txt", "a\na -x b\n");
    env.readbox(&["call", "cat", r#"{"path":"-n"}"#])
        .ok("dash file\n");
    env.readbox(&["call", "cat", r#"{"path":"--"}"#])
        .ok("double\n");
    env.readbox(&["call", "grep", r#"{"pattern":"-x","path":"notes.txt"}"#])
        .ok("notes.txt:2:a -x b\n");
    env.readbox(&["call", "grep", r#"{"pattern":"--help"}"#])
        .no_match();
}

#[test]
fn call_unknown_or_mistyped_fields_are_usage_errors() {
    let env = TestEnv::new();
    env.write("f.txt", "a\n");
    let cases: &[(&str, &str)] = &[
        ("head", r#"{"path":"f.txt","bogus":1}"#),
        ("head", r#"{"path":"f.txt","lines":"2"}"#),
        ("head", r#"{"path":"f.txt","lines":2.5}"#),
        ("head", r#"{"path":"f.txt","lines":2.0}"#),
        ("head", r#"{"path":"f.txt","lines":1e1}"#),
        ("head", r#"{"path":"f.txt","lines":-1}"#),
        ("head", r#"{"path":"f.txt","lines":10001}"#),
        ("head", r#"{"path":"f.txt","lines":true}"#),
        ("head", r#"{"path":5}"#),
        ("head", r#"{"path":["f.txt"]}"#),
        ("head", r#"{"PATH":"f.txt"}"#),
        ("head", "{}"),
        ("head", r#"{"path":"f.txt""#),
        ("head", r#"["f.txt"]"#),
        ("head", r#""f.txt""#),
        ("head", "null"),
        ("head", ""),
        ("head", "f.txt"),
        ("ls", r#"{"show_hidden":"true"}"#),
        ("ls", r#"{"show_hidden":1}"#),
        ("find", r#"{"file_type":"link"}"#),
        ("find", r#"{"file_type":1}"#),
        ("find", r#"{"max_depth":101}"#),
        ("grep", r#"{"pattern":"a","recursive":"yes"}"#),
        ("grep", r#"{"pattern":1}"#),
        (
            "diff",
            r#"{"path_a":"f.txt","path_b":"f.txt","context_lines":101}"#,
        ),
        ("diff", r#"{"path_a":"f.txt"}"#),
        ("pwd", r#"{"path":"."}"#),
        // Positional words are not the named form.
        ("cat", r#"{"path":"f.txt","0":"f.txt"}"#),
    ];
    for (tool, json) in cases {
        usage(&env.readbox(&["call", tool, json]));
    }
}

#[test]
fn call_needs_exactly_a_tool_and_one_json_document() {
    let env = TestEnv::new();
    env.write("f.txt", "a\n");
    usage(&env.readbox(&["call"]));
    usage(&env.readbox(&["call", "cat"]));
    usage(&env.readbox(&["call", "cat", r#"{"path":"f.txt"}"#, "extra"]));
    usage(&env.readbox(&["call", "cat", "f.txt"]));
}

#[test]
fn call_unknown_tool_exits_127_naming_it() {
    let env = TestEnv::new();
    let a = env.readbox(&["call", "frobnicate", "{}"]);
    assert_eq!(a.status, 127);
    a.fails("usage", "frobnicate");
    for t in TOOLS {
        assert!(
            names_word(a.error.as_deref().unwrap(), t),
            "the error should list {t}"
        );
    }
}
