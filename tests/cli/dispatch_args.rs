//! Invocation and arguments (docs/contract.md#invocation, #arguments and the
//! #decisions-on-details on them): how argv[0] or the first word picks the tool, the meta commands (`help`, `version`, `list`, `policy`, `schema`, `call`,
//! `install`), the positional parser (counts, booleans, integers, ranges, FILE_TYPE, globs), the
//! refusal of flags with the equivalent positional call, `--`, `-` alone as a path, standard input
//! never read, the named form of `readbox call`, and the order in which the checks come.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Answer, TestEnv, capped};

const TOOLS: [&str; 10] = [
    "cat", "pwd", "ls", "find", "grep", "head", "tail", "wc", "stat", "diff",
];

/// The registry's names: the ten tools and the shell that runs them.
const ALL: [&str; 11] = [
    "cat", "pwd", "ls", "find", "grep", "head", "tail", "wc", "stat", "diff", "sh",
];

/// The exact unknown-tool error of §9, for `name`.
fn unknown_tool(name: &str) -> String {
    format!("usage: unknown tool '{name}'; tools: cat pwd ls find grep head tail wc stat diff sh")
}

fn binary() -> PathBuf {
    crate::support::binary().to_path_buf()
}

/// True when `text` holds `word` as a whole word: the flag itself, not a longer flag that merely
/// starts with it (`-n` must not be satisfied by `-name`).
fn names_word(text: &str, word: &str) -> bool {
    let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_'));
    text.match_indices(word).any(|(i, _)| {
        edge(text[..i].chars().next_back()) && edge(text[i + word.len()..].chars().next())
    })
}

/// A usage error that names `word`, with empty output (nothing was read), exit 2.
#[track_caller]
fn refused(a: &Answer, word: &str) {
    a.fails("usage", word);
    let e = a.error.as_deref().unwrap();
    assert!(
        names_word(e, word),
        "the error of {} should name {word:?}: {e}",
        a.shown
    );
    assert_eq!(a.output, "", "output of a refused call {}", a.shown);
}

/// A usage error with empty output, exit 2.
#[track_caller]
fn usage(a: &Answer) {
    a.fails("usage", "");
    assert_eq!(a.output, "", "output of a usage error for {}", a.shown);
}

/// One call of a program that is not reached through the harness (a renamed binary, an installed
/// link, a hard link), run in `root/` with a clean environment.
struct Raw {
    status: i32,
    output: String,
    error: Option<String>,
}

fn envelope(stdout: &[u8], status: i32, shown: &str) -> Raw {
    let text =
        std::str::from_utf8(stdout).unwrap_or_else(|_| panic!("stdout of {shown} is not UTF-8"));
    let body = text
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("no envelope line for {shown}: {text:?}"));
    assert!(!body.contains('\n'), "more than one line for {shown}");
    let v: Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}) for {shown}: {body}"));
    Raw {
        status,
        output: v["output"]
            .as_str()
            .expect("output is a string")
            .to_string(),
        error: v["error"].as_str().map(str::to_string),
    }
}

fn run_exe(env: &TestEnv, exe: &Path, args: &[&str]) -> Raw {
    let out = Command::new(exe)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(env.root())
        .stdin(Stdio::null())
        .output()
        .expect("run the program");
    let shown = format!("{} {}", exe.display(), args.join(" "));
    envelope(
        &out.stdout,
        out.status.code().expect("exited by a signal"),
        &shown,
    )
}

/// Runs `readbox WORDS` with a pipe on stdin that holds `data` and stays open: a readbox that read
/// its standard input would block here, so a call that does not finish in 5 s fails the test.
fn run_with_open_stdin(env: &TestEnv, words: &[&str], data: &[u8]) -> Raw {
    run_with_stdin(env, words, data, true)
}

/// `readbox WORDS` with `data` piped into its standard input, which stays open (`keep_open`: a
/// call that reads it would hang, and fails the test) or is closed after `data`.
fn run_with_stdin(env: &TestEnv, words: &[&str], data: &[u8], keep_open: bool) -> Raw {
    let shown = format!("readbox {}", words.join(" "));
    let mut child = Command::new(binary())
        .args(words)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(env.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn readbox");
    let mut stdin = child.stdin.take();
    // A call that never reads may have exited already: its closed pipe is no failure here.
    match stdin.as_mut().unwrap().write_all(data) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.unwrap(),
    }
    if !keep_open {
        stdin = None;
    }
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(5) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{shown} hung with an open stdin: it reads its standard input");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    drop(stdin);
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    envelope(&stdout, status.code().expect("exited by a signal"), &shown)
}

/// A link to the binary at `base/rel` (any file name), made by the test itself.
fn link_at(env: &TestEnv, rel: &str) -> PathBuf {
    let p = env.base().join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(binary(), &p).unwrap();
    p
}

// ---------------------------------------------------------------------------------------------
// §1 dispatch

#[test]
fn bare_readbox_prints_usage_in_envelope_and_exits_2() {
    let env = TestEnv::new();
    let a = env.readbox::<&str>(&[]);
    assert_eq!(a.status, 2);
    a.fails("usage", "");
    for t in TOOLS {
        assert!(
            names_word(&a.output, t),
            "the usage text should list {t}: {}",
            a.output
        );
    }
}

#[test]
fn unknown_tool_is_named_with_the_tool_list_and_exits_127() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    for name in ["frobnicate", "CAT", "cat.exe", "--bogus"] {
        let a = env.readbox(&[name, "a.txt"]);
        assert_eq!(a.status, 127, "exit status of readbox {name}");
        assert_eq!(a.error.as_deref(), Some(unknown_tool(name).as_str()));
        assert_eq!(a.output, "");
    }
}

#[test]
fn non_utf8_tool_name_and_flag_are_named_lossily() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let a = env.readbox(&[OsStr::from_bytes(b"\xff"), OsStr::new("a")]);
    assert_eq!(a.status, 127);
    assert_eq!(a.error.as_deref(), Some(unknown_tool("\u{fffd}").as_str()));
    refused(
        &env.both("cat", &[OsStr::from_bytes(b"-\xff")]),
        "-\u{fffd}",
    );
}

#[test]
fn link_named_tool_answers_as_multicall() {
    let env = TestEnv::new();
    env.write("a.txt", "one\ntwo\nthree\n");
    env.write("b.txt", "one\n2\nthree\n");
    env.mkdir("d");
    env.both("cat", &["a.txt"]).ok("one\ntwo\nthree\n");
    env.both("head", &["a.txt", "1"]).ok("one\n");
    env.both("tail", &["a.txt", "1"]).ok("three\n");
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", env.root().display()));
    env.both("diff", &["a.txt", "b.txt", "0"])
        .ok_status("--- a.txt\n+++ b.txt\n@@ -2 +2 @@\n-two\n+2\n", 1);
    env.both("cat", &["missing.txt"])
        .fails("not found", "missing.txt");
    env.both("head", &["d"]).fails("not a file", "d");
}

#[test]
fn renamed_binary_works_in_multicall_form() {
    let env = TestEnv::new();
    env.write("a.txt", "hello\n");
    env.run_link("readbox-1.2", &["cat", "a.txt"]).ok("hello\n");
    env.run_link("readbox-1.2", &["head", "a.txt", "0"]).ok("");
    let rb = link_at(&env, "my-tools/rb");
    let r = run_exe(&env, &rb, &["wc", "a.txt"]);
    assert_eq!((r.status, r.error), (0, None));
    let wc: Value = serde_json::from_str(&r.output).unwrap();
    assert_eq!(wc, serde_json::json!({"lines": 1, "words": 1, "bytes": 6}));
    // Meta commands are part of the multicall form, whatever the binary is called.
    let r = run_exe(&env, &rb, &["version"]);
    assert_eq!(r.status, 0);
    assert!(
        r.output.contains(env!("CARGO_PKG_VERSION")),
        "version through a renamed binary: {:?}",
        r.output
    );
}

#[test]
fn argv0_picks_the_tool_only_on_an_exact_file_name() {
    let env = TestEnv::new();
    env.write("a.txt", "hello\n");
    // The directories in argv[0] do not matter, only its file name.
    let nested = link_at(&env, "some/where/cat");
    let r = run_exe(&env, &nested, &["a.txt"]);
    assert_eq!((r.status, r.output.as_str(), r.error), (0, "hello\n", None));
    for name in ["cat.exe", "uu-cat", "xcat", "CAT", "cat "] {
        let a = env.run_link(name, &["a.txt"]);
        assert_eq!(a.status, 127, "a link named {name:?} is not cat");
        assert_eq!(
            a.error.as_deref(),
            Some(unknown_tool("a.txt").as_str()),
            "link named {name:?}"
        );
        env.run_link(name, &["cat", "a.txt"]).ok("hello\n");
    }
}

#[test]
fn hard_link_or_copy_named_tool_works() {
    let env = TestEnv::new();
    env.write("a.txt", "one\ntwo\n");
    let dir = env.base().join("hard");
    std::fs::create_dir_all(&dir).unwrap();
    let head = dir.join("head");
    if std::fs::hard_link(binary(), &head).is_err() {
        std::fs::copy(binary(), &head).unwrap();
    }
    let r = run_exe(&env, &head, &["a.txt", "1"]);
    assert_eq!((r.status, r.output.as_str(), r.error), (0, "one\n", None));
}

#[test]
fn meta_commands_exist_only_in_multicall_form() {
    let env = TestEnv::new();
    env.write("list/inside.txt", "x\n");
    env.write("version", "a file named version\n");
    env.write("call", "a file named call\n");
    env.run_link("ls", &["list"]).ok("inside.txt\n");
    env.run_link("cat", &["version"])
        .ok("a file named version\n");
    env.run_link("head", &["call", "1"])
        .ok("a file named call\n");
    env.run_link("cat", &["help"]).fails("not found", "help");
    env.run_link("wc", &["schema"]).fails("not found", "schema");
    // Through a link `--help` alone is the tool's own help, as in coreutils; `-V` is a flag
    // like any other.
    let help = env.run_link("cat", &["--help"]);
    assert!(help.output.starts_with("cat - "), "{}", help.output);
    refused(&env.run_link("head", &["-V"]), "-V");
    // In multicall form the meta command wins over a file of the same name.
    let a = env.readbox(&["list"]);
    assert_eq!(a.status, 0);
    assert_eq!(sorted(a.lines()), sorted(ALL.to_vec()));
}

fn sorted(mut v: Vec<&str>) -> Vec<&str> {
    v.sort_unstable();
    v
}

// ---------------------------------------------------------------------------------------------
// §1 meta commands: help, version, list, policy

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

/// The subtree under the first key named `key`, anywhere in `v`.
fn find_key<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Object(m) => m
            .get(key)
            .or_else(|| m.values().find_map(|c| find_key(c, key))),
        Value::Array(a) => a.iter().find_map(|c| find_key(c, key)),
        _ => None,
    }
}

/// True when `v` is, or holds, the number `n`.
fn has_number(v: &Value, n: f64) -> bool {
    match v {
        Value::Number(x) => x.as_f64() == Some(n),
        Value::Object(m) => m.values().any(|c| has_number(c, n)),
        Value::Array(a) => a.iter().any(|c| has_number(c, n)),
        _ => false,
    }
}

#[test]
fn policy_is_json_with_values_and_their_sources() {
    let mut env = TestEnv::new();
    env.mkdir("sub");
    let cfg = env.config("c.toml", "timeout = 7\n");
    env.var("READBOX_CONFIG", cfg.to_str().unwrap());
    env.var("READBOX_MAX_OUTPUT_BYTES", "1234");
    env.var("READBOX_ROOTS", env.p("sub").to_str().unwrap());
    let a = env.readbox(&["policy"]);
    assert_eq!((a.status, &a.error), (0, &None));
    let doc = a.json();
    let roots = find_key(&doc, "allowed_directories").expect("policy shows allowed_directories");
    let sub = env.p("sub").display().to_string();
    assert!(
        roots.to_string().contains(&sub),
        "roots should be {sub}: {roots}"
    );
    let cap = find_key(&doc, "max_output_bytes")
        .expect("policy shows max_output_bytes")
        .to_string();
    assert!(
        has_number(find_key(&doc, "max_output_bytes").unwrap(), 1234.0),
        "max_output_bytes: {cap}"
    );
    assert!(
        cap.contains("READBOX_MAX_OUTPUT_BYTES") || cap.to_lowercase().contains("env"),
        "max_output_bytes should say it came from the environment: {cap}"
    );
    let timeout = find_key(&doc, "timeout")
        .expect("policy shows timeout")
        .to_string();
    assert!(
        has_number(find_key(&doc, "timeout").unwrap(), 7.0),
        "timeout: {timeout}"
    );
    assert!(
        timeout.contains(cfg.to_str().unwrap()),
        "timeout should say it came from {}: {timeout}",
        cfg.display()
    );
    let entries = find_key(&doc, "max_entries")
        .expect("policy shows max_entries")
        .to_string();
    assert!(
        has_number(find_key(&doc, "max_entries").unwrap(), 10000.0),
        "max_entries default: {entries}"
    );
    assert!(
        !entries.to_lowercase().contains("env"),
        "max_entries was not set in the environment: {entries}"
    );
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

#[test]
fn meta_commands_obey_the_output_cap() {
    let mut env = TestEnv::new();
    let full_help = env.readbox(&["help"]).output;
    let full_schema = env.readbox(&["schema"]).output;
    env.var("READBOX_MAX_OUTPUT_BYTES", "20");
    let a = env.readbox(&["help"]);
    assert_eq!((a.status, &a.error, a.truncated), (0, &None, true));
    assert_eq!(a.output, capped(&full_help, 20));
    let a = env.readbox(&["schema"]);
    assert_eq!((a.status, &a.error, a.truncated), (0, &None, true));
    assert_eq!(a.output, capped(&full_schema, 20));
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

// ---------------------------------------------------------------------------------------------
// §8 install

#[test]
fn install_links_each_enabled_tool_to_the_binary_outside_the_roots() {
    let mut env = TestEnv::new();
    env.write("a.txt", "hello\n");
    // DIR lies outside the root: install is not confined.
    let dir = env.base().join("links");
    std::fs::create_dir(&dir).unwrap();
    env.var("READBOX_TOOLS", "cat,ls,wc");
    let a = env.readbox(&["install", dir.to_str().unwrap()]);
    assert_eq!(
        (a.status, &a.error),
        (0, &None),
        "install output: {}",
        a.output
    );
    let real = binary().canonicalize().unwrap();
    for t in ["cat", "ls", "wc"] {
        let link = dir.join(t);
        let meta =
            std::fs::symlink_metadata(&link).unwrap_or_else(|_| panic!("install made no {t}"));
        assert!(meta.file_type().is_symlink(), "{t} should be a symlink");
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            real,
            "{t} points at the binary's real path"
        );
    }
    for t in ["grep", "find", "pwd", "head", "tail", "stat", "diff"] {
        assert!(
            std::fs::symlink_metadata(dir.join(t)).is_err(),
            "install made {t}, which is disabled"
        );
    }
    let r = run_exe(&env, &dir.join("cat"), &["a.txt"]);
    assert_eq!((r.status, r.output.as_str(), r.error), (0, "hello\n", None));
}

#[test]
fn install_never_overwrites_an_existing_name_and_reports_it_as_io() {
    let mut env = TestEnv::new();
    let dir = env.base().join("links");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("ls"), "precious\n").unwrap();
    std::os::unix::fs::symlink("/bin/true", dir.join("grep")).unwrap();
    env.var("READBOX_TOOLS", "cat,ls,wc,grep");
    let a = env.readbox(&["install", dir.to_str().unwrap()]);
    a.fails("io", "ls");
    let e = a.error.clone().unwrap();
    assert!(
        names_word(&e, "ls") && names_word(&e, "grep"),
        "the error should name ls and grep: {e}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("ls")).unwrap(),
        "precious\n"
    );
    assert_eq!(
        std::fs::read_link(dir.join("grep")).unwrap(),
        Path::new("/bin/true")
    );
    // The others are made even so.
    let real = binary().canonicalize().unwrap();
    for t in ["cat", "wc"] {
        assert_eq!(
            std::fs::read_link(dir.join(t)).unwrap(),
            real,
            "{t} made despite the clash"
        );
    }
}

#[test]
fn install_twice_is_accepted() {
    let mut env = TestEnv::new();
    let dir = env.base().join("links");
    std::fs::create_dir(&dir).unwrap();
    env.var("READBOX_TOOLS", "cat,head");
    let d = dir.to_str().unwrap();
    let first = env.readbox(&["install", d]);
    assert_eq!((first.status, &first.error), (0, &None));
    let second = env.readbox(&["install", d]);
    assert_eq!(
        (second.status, &second.error),
        (0, &None),
        "a second install: {}",
        second.output
    );
    let real = binary().canonicalize().unwrap();
    for t in ["cat", "head"] {
        assert_eq!(std::fs::read_link(dir.join(t)).unwrap(), real);
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["cat", "head"]);
}

#[test]
fn install_through_a_link_points_at_the_real_binary() {
    let env = TestEnv::new();
    let dir = env.base().join("links");
    std::fs::create_dir(&dir).unwrap();
    let rb = link_at(&env, "elsewhere/rb");
    let r = run_exe(&env, &rb, &["install", dir.to_str().unwrap()]);
    assert_eq!((r.status, &r.error), (0, &None), "install: {}", r.output);
    let real = binary().canonicalize().unwrap();
    for t in TOOLS {
        assert_eq!(std::fs::read_link(dir.join(t)).unwrap(), real, "{t}");
    }
    // A link named sh would take over every script that runs sh.
    assert!(!dir.join("sh").exists(), "install linked sh");
}

#[test]
fn install_accepts_an_existing_relative_link_to_the_binary() {
    let mut env = TestEnv::new();
    let dir = env.base().join("links");
    std::fs::create_dir(&dir).unwrap();
    let real = binary().canonicalize().unwrap();
    let up = "../".repeat(dir.components().count() - 1);
    let relative = PathBuf::from(format!("{up}{}", real.strip_prefix("/").unwrap().display()));
    std::os::unix::fs::symlink(&relative, dir.join("cat")).unwrap();
    env.var("READBOX_TOOLS", "cat,wc");
    let a = env.readbox(&["install", dir.to_str().unwrap()]);
    assert_eq!((a.status, &a.error), (0, &None), "install: {}", a.output);
    assert_eq!(
        std::fs::read_link(dir.join("cat")).unwrap(),
        relative,
        "left as it was"
    );
    assert_eq!(std::fs::read_link(dir.join("wc")).unwrap(), real);
}

#[test]
fn install_needs_exactly_one_dir() {
    let env = TestEnv::new();
    usage(&env.readbox(&["install"]));
    let a = env.base().join("a");
    let b = env.base().join("b");
    usage(&env.readbox(&["install", a.to_str().unwrap(), b.to_str().unwrap()]));
    assert!(!a.exists() && !b.exists());
}

// ---------------------------------------------------------------------------------------------
// §1 never starts a program, never writes, never reads stdin

fn tree(dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let m = std::fs::symlink_metadata(e.path()).unwrap();
        out.push(format!(
            "{} {} {:?}",
            e.path().display(),
            m.len(),
            m.modified().ok()
        ));
        if m.is_dir() {
            tree(&e.path(), out);
        }
    }
}

#[test]
fn no_call_starts_a_program_or_writes_a_file() {
    let mut env = TestEnv::new();
    let fake = env.base().join("fakebin");
    std::fs::create_dir(&fake).unwrap();
    let marker = env.base().join("started");
    for name in [
        "sh", "bash", "cat", "ls", "find", "grep", "rg", "fd", "git", "diff", "head", "tail", "wc",
        "stat", "patch", "file", "less", "sed", "id", "uname",
    ] {
        let p = fake.join(name);
        std::fs::write(
            &p,
            format!("#!/bin/sh\necho {name} >> {}\n", marker.display()),
        )
        .unwrap();
        let mut perm = std::fs::metadata(&p).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&p, perm).unwrap();
    }
    env.write("a.txt", "one\ntwo\n");
    env.write("b.txt", "one\n2\n");
    env.var("PATH", &format!("{}:/usr/bin:/bin", fake.display()));
    // The harness's own link, made before the snapshot so that it is not taken for a write.
    env.tool_link("cat");
    let mut before = Vec::new();
    tree(&env.base(), &mut before);
    let calls: &[(&[&str], i32)] = &[
        (&["cat", "a.txt"], 0),
        (&["head", "a.txt", "1"], 0),
        (&["tail", "a.txt", "1"], 0),
        (&["wc", "a.txt"], 0),
        (&["stat", "a.txt"], 0),
        (&["pwd"], 0),
        (&["ls"], 0),
        (&["find", "."], 0),
        (&["grep", "one"], 0),
        (&["diff", "a.txt", "b.txt"], 1),
        (&["list"], 0),
        (&["version"], 0),
        (&["help"], 0),
        (&["policy"], 0),
        (&["schema"], 0),
        (&["call", "cat", "{\"path\":\"a.txt\"}"], 0),
        (&["cat", "-n", "a.txt"], 2),
        (&["cat", "nope"], 2),
    ];
    for (words, status) in calls {
        let a = env.readbox(words);
        assert_eq!(a.status, *status, "{}: {:?}", a.shown, a.error);
    }
    env.run_link("cat", &["a.txt"]).ok("one\ntwo\n");
    assert!(
        !marker.exists(),
        "readbox started a program from PATH: {:?}",
        std::fs::read_to_string(&marker)
    );
    let mut after = Vec::new();
    tree(&env.base(), &mut after);
    assert_eq!(before, after, "the sandbox changed");
}

#[test]
fn an_omitted_path_never_reads_standard_input_and_dash_does() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    env.write("-", "the file named dash\n");
    for words in [
        &["cat"][..],
        &["wc"],
        &["head"],
        &["call", "cat"],
        &["grep"],
    ] {
        let r = run_with_open_stdin(&env, words, b"");
        assert_eq!(r.status, 2, "readbox {words:?}");
        assert!(
            r.error.as_deref().is_some_and(|e| e.starts_with("usage: ")),
            "readbox {words:?}: {:?}",
            r.error
        );
        assert_eq!(r.output, "");
    }
    let r = run_with_open_stdin(&env, &["cat", "a.txt"], b"STDIN DATA\n");
    assert_eq!((r.status, r.output.as_str(), r.error), (0, "x\n", None));
    // `-` is standard input; the file named `-` is reached as `./-`.
    let r = run_with_stdin(&env, &["cat", "-"], b"STDIN DATA\n", false);
    assert_eq!(
        (r.status, r.output.as_str(), r.error),
        (0, "STDIN DATA\n", None)
    );
    let r = run_with_open_stdin(&env, &["cat", "./-"], b"STDIN DATA\n");
    assert_eq!(
        (r.status, r.output.as_str(), r.error),
        (0, "the file named dash\n", None)
    );
}

// ---------------------------------------------------------------------------------------------
// §2 positional arguments: counts and defaults

#[test]
fn wrong_argument_counts_are_usage_errors_before_any_path_is_looked_at() {
    let env = TestEnv::new();
    env.write("a", "x\n");
    env.secret(".env");
    let cases: &[(&str, &[&str])] = &[
        ("cat", &[]),
        ("cat", &["a", "a"]),
        ("pwd", &["a"]),
        ("ls", &[".", "true", "x"]),
        ("find", &[".", "*", "all", "1", "x"]),
        ("grep", &[]),
        ("grep", &["p", ".", "true", "false", "*", "1", "x"]),
        ("head", &[]),
        ("head", &["a", "1", "x"]),
        ("tail", &[]),
        ("tail", &["a", "1", "x"]),
        ("wc", &[]),
        ("wc", &["a", "a"]),
        ("stat", &[]),
        ("stat", &["a", "a"]),
        ("diff", &[]),
        ("diff", &["a"]),
        ("diff", &["a", "a", "3", "x"]),
        // Paths that would be not found or denied: the count is checked first.
        ("cat", &["nope", "x"]),
        ("cat", &[".env", "x"]),
        ("head", &["nope", "1", "x"]),
        ("wc", &["../outside/secret.txt", "x"]),
    ];
    for (tool, args) in cases {
        usage(&env.both(tool, args));
    }
}

#[test]
fn left_off_arguments_take_their_defaults() {
    let env = TestEnv::new();
    let twelve: String = (1..=12).map(|i| format!("{i}\n")).collect();
    env.write("n.txt", &twelve);
    env.write(".hidden", "h\n");
    env.write("d/deep.txt", "needle\n");
    env.write("m.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nX\n");
    env.both("head", &["n.txt"])
        .ok("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
    env.both("tail", &["n.txt"])
        .ok("3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n");
    env.both("ls", &[] as &[&str]).ok("d/\nm.txt\nn.txt\n");
    let pairs: &[(&str, &[&str], &[&str])] = &[
        ("ls", &[], &[".", "false"]),
        ("find", &[], &[".", "*", "all", "20"]),
        (
            "grep",
            &["needle"],
            &["needle", ".", "true", "false", "*", "20"],
        ),
        ("head", &["n.txt"], &["n.txt", "10"]),
        ("diff", &["n.txt", "m.txt"], &["n.txt", "m.txt", "3"]),
    ];
    for (tool, short, long) in pairs {
        let a = env.run(tool, short);
        let b = env.run(tool, long);
        assert_eq!(
            (a.status, &a.stdout),
            (b.status, &b.stdout),
            "{tool} {short:?} vs {long:?}"
        );
    }
    env.both("grep", &["needle"]).ok("d/deep.txt:1:needle\n");
}

// ---------------------------------------------------------------------------------------------
// §2 values: booleans, integers, ranges, FILE_TYPE, globs

#[test]
fn booleans_accept_every_spelling_in_any_case() {
    let env = TestEnv::new();
    env.write(".hidden", "h\n");
    env.write("shown", "s\n");
    for w in [
        "true", "TRUE", "True", "1", "yes", "YES", "Yes", "on", "ON", "oN",
    ] {
        env.both("ls", &[".", w]).ok(".hidden\nshown\n");
    }
    for w in [
        "false", "FALSE", "False", "0", "no", "NO", "No", "off", "OFF", "Off",
    ] {
        env.both("ls", &[".", w]).ok("shown\n");
    }
    env.write("g.txt", "Foo\n");
    env.both("grep", &["foo", "g.txt", "TRUE", "Yes"])
        .ok("g.txt:1:Foo\n");
    env.both("grep", &["foo", "g.txt", "On", "OFF"]).no_match();
}

#[test]
fn bad_booleans_are_usage_errors() {
    let env = TestEnv::new();
    env.write("g.txt", "x\n");
    for w in ["maybe", "2", "t", "y", "", "tru", "truee", " true", "yes "] {
        usage(&env.both("ls", &[".", w]));
        // One parser serves every tool and both forms; the link form is checked on ls above.
        usage(&env.run("grep", &["x", ".", w]));
        usage(&env.run("grep", &["x", ".", "true", w]));
    }
}

#[test]
fn integers_are_plain_decimal_digits() {
    let env = TestEnv::new();
    env.write("a", "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
    // `[0-9]+`: leading zeros are still decimal.
    env.both("head", &["a", "007"]).ok("1\n2\n3\n4\n5\n6\n7\n");
    env.both("tail", &["a", "02"]).ok("8\n9\n");
    for w in [
        "x",
        "1.5",
        "0x10",
        "",
        "+5",
        " 5",
        "5 ",
        "1e3",
        "5x",
        "\u{663}",
        "99999999999999999999999",
    ] {
        usage(&env.both("head", &["a", w]));
        // One parser serves every tool and both forms; the link form is checked on head above.
        usage(&env.run("tail", &["a", w]));
        usage(&env.run("diff", &["a", "a", w]));
        usage(&env.run("find", &[".", "*", "all", w]));
    }
}

#[test]
fn ranges_accept_their_ends_and_refuse_one_past() {
    let env = TestEnv::new();
    env.write("a", "1\n2\n");
    env.write("b", "1\n3\n");
    env.write("d/e.txt", "1\n");
    env.both("head", &["a", "0"]).ok("");
    env.both("tail", &["a", "0"]).ok("");
    env.both("head", &["a", "10000"]).ok("1\n2\n");
    env.both("tail", &["a", "10000"]).ok("1\n2\n");
    usage(&env.both("head", &["a", "10001"]));
    usage(&env.both("tail", &["a", "10001"]));
    env.both("find", &["d", "*", "all", "0"]).ok("");
    env.both("find", &["d", "*", "all", "100"]).ok("d/e.txt\n");
    usage(&env.both("find", &["d", "*", "all", "101"]));
    env.both("grep", &["1", "d", "true", "false", "*", "0"])
        .no_match();
    env.both("grep", &["1", "d", "true", "false", "*", "100"])
        .ok("d/e.txt:1:1\n");
    usage(&env.both("grep", &["1", "d", "true", "false", "*", "101"]));
    env.both("diff", &["a", "b", "0"])
        .ok_status("--- a\n+++ b\n@@ -2 +2 @@\n-2\n+3\n", 1);
    env.both("diff", &["a", "b", "100"])
        .ok_status("--- a\n+++ b\n@@ -1,2 +1,2 @@\n 1\n-2\n+3\n", 1);
    usage(&env.both("diff", &["a", "b", "101"]));
}

#[test]
fn file_type_accepts_all_file_directory_f_d_in_any_case() {
    let env = TestEnv::new();
    env.write("t/f.txt", "x\n");
    env.mkdir("t/sub");
    for w in ["file", "FILE", "File", "f", "F"] {
        env.both("find", &["t", "*", w]).ok("t/f.txt\n");
    }
    for w in ["directory", "DIRECTORY", "Directory", "d", "D"] {
        env.both("find", &["t", "*", w]).ok("t/sub/\n");
    }
    for w in ["all", "ALL", "All"] {
        env.both("find", &["t", "*", w]).ok("t/f.txt\nt/sub/\n");
    }
    for w in ["link", "l", "dir", "files", "", "a", "symlink"] {
        usage(&env.run("find", &["t", "*", w]));
    }
}

#[test]
fn glob_that_does_not_compile_is_a_usage_error() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    usage(&env.both("find", &[".", "["]));
    usage(&env.both("find", &[".", "a{b"]));
    usage(&env.both("grep", &["x", ".", "true", "false", "["]));
    usage(&env.readbox(&["call", "find", r#"{"pattern":"["}"#]));
    usage(&env.readbox(&["call", "grep", r#"{"pattern":"x","file_pattern":"["}"#]));
}

#[test]
fn bad_values_are_refused_before_the_path_is_opened() {
    let env = TestEnv::new();
    env.fifo("pipe");
    env.secret(".env");
    // A bad value on a FIFO, a missing file or a denied one: usage, never the path's error.
    usage(&env.both("head", &["pipe", "1.5"]));
    usage(&env.both("tail", &["nope", "x"]));
    usage(&env.both("head", &[".env", "-1"]));
    usage(&env.both("ls", &["../outside", "maybe"]));
    usage(&env.both("diff", &["nope", ".env", "101"]));
}

#[test]
fn empty_path_is_not_found() {
    let env = TestEnv::new();
    for tool in ["cat", "wc", "stat", "head", "tail", "ls"] {
        let a = env.both(tool, &[""]);
        assert_eq!(a.error.as_deref(), Some("not found: "), "{tool} \"\"");
        assert_eq!(a.status, 2);
    }
    let a = env.readbox(&["call", "cat", r#"{"path":""}"#]);
    assert_eq!(a.error.as_deref(), Some("not found: "));
}

// ---------------------------------------------------------------------------------------------
// §2 flags: refused, named, with the equivalent positional call

#[test]
fn grep_dash_i_hint_gives_positional_call() {
    let env = TestEnv::new();
    env.write("src/a.txt", "foo\n");
    let a = env.both("grep", &["-i", "foo", "src"]);
    refused(&a, "-i");
    a.fails("usage", "grep foo src true true");
}

#[test]
fn head_dash_n_hint_gives_positional_call() {
    let env = TestEnv::new();
    env.write("f", "1\n2\n");
    let a = env.both("head", &["-n", "5", "f"]);
    refused(&a, "-n");
    a.fails("usage", "head f 5");
}

#[test]
fn common_flags_hint_their_positional_call() {
    let env = TestEnv::new();
    env.write("f", "1\n2\n3\n4\n");
    env.write("src/a.txt", "foo\n");
    env.mkdir("d");
    let cases: &[(&str, &[&str], &str, &str)] = &[
        ("tail", &["-n", "3", "f"], "-n", "tail f 3"),
        ("head", &["-5", "f"], "-5", "head f 5"),
        ("ls", &["-a", "d"], "-a", "ls d true"),
        ("grep", &["-r", "foo", "src"], "-r", "grep foo src true"),
        (
            "grep",
            &["-ri", "foo", "src"],
            "-ri",
            "grep foo src true true",
        ),
        (
            "grep",
            &["foo", "src", "-i"],
            "-i",
            "grep foo src true true",
        ),
    ];
    for (tool, args, word, hint) in cases {
        let a = env.both(tool, args);
        refused(&a, word);
        a.fails("usage", hint);
    }
}

/// The call a refusal offers after `equivalent: `, as words (POSIX single quotes undone).
fn offered_call(error: &str) -> Option<Vec<String>> {
    let rest = &error[error.find("equivalent: ")? + "equivalent: ".len()..];
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = rest.chars().peekable();
    let mut started = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                started = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '\\' => {
                started = true;
                word.extend(chars.next());
            }
            ' ' | ';' => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
                // A note in parentheses or the next clause ends the call.
                if c == ';' || chars.peek() == Some(&'(') {
                    break;
                }
            }
            _ => {
                started = true;
                word.push(c);
            }
        }
    }
    if started {
        words.push(word);
    }
    Some(words)
}

/// Runs the call that the refusal of `tool args` offers and returns its answer, or None when
/// the refusal offers no call.
#[track_caller]
fn run_offered(env: &TestEnv, tool: &str, args: &[&str]) -> Option<Answer> {
    let a = env.run(tool, args);
    a.fails("usage", "");
    let words = offered_call(a.error.as_deref().unwrap())?;
    // The offered call may be of another tool (`tail -n +2 f` -> `cat f 2`).
    Some(env.run(&words[0], &words[1..]))
}

#[test]
fn hint_keeps_double_dash_before_dash_words() {
    let env = TestEnv::new();
    env.write("-f", "1\n2\n");
    env.write("src/-x.txt", "a -x b\n");
    env.write("-x", "a -x b\n");
    // The offered call must do what was asked, so a word after `--` that starts with `-` keeps
    // its `--` (else the offered call is refused in turn).
    let cases: &[(&str, &[&str], &str)] = &[
        ("head", &["-n", "1", "--", "-f"], "1\n"),
        ("grep", &["-i", "--", "-X", "-x"], "-x:1:a -x b\n"),
        ("ls", &["-a", "--", "-x"], "-x\n"),
    ];
    let mut bad = Vec::new();
    for (tool, args, want) in cases {
        match run_offered(&env, tool, args) {
            None => bad.push(format!("{tool} {args:?} offers no positional call")),
            Some(o) if o.error.is_some() || o.output != *want => bad.push(format!(
                "{tool} {args:?} offers `{}`, which answers {:?} {:?} instead of {want:?}",
                o.shown, o.output, o.error
            )),
            Some(_) => {}
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn hint_never_offers_a_call_that_is_refused() {
    let env = TestEnv::new();
    env.write("f", "1\n2\n3\n");
    env.write("src/a.txt", "foo\n");
    // `head -n -2` (all but the last 2) has no positional form: a hint may say so, but must not
    // offer `head f -2`, which is a usage error itself; `tail -n +2` is offered as `cat f 2`.
    let cases: &[(&str, &[&str])] = &[
        ("tail", &["-n", "+2", "f"]),
        ("head", &["-n", "-2", "f"]),
        ("grep", &["-i", "foo", "src"]),
        ("head", &["-n", "2", "f"]),
        ("find", &[".", "-name", "*.txt", "-type", "f"]),
    ];
    let mut offered_any = 0;
    let mut bad = Vec::new();
    for (tool, args) in cases {
        if let Some(offered) = run_offered(&env, tool, args) {
            offered_any += 1;
            if let Some(e) = offered
                .error
                .as_deref()
                .filter(|e| e.starts_with("usage: "))
            {
                bad.push(format!(
                    "{tool} {args:?} offers `{}`, which is refused: {e}",
                    offered.shown
                ));
            }
        }
    }
    // The plain cases (grep -i, head -n 2, find -name -type) do offer a call.
    assert!(
        offered_any >= 3,
        "only {offered_any} refusals offered a call"
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn every_dash_word_is_refused_and_shows_the_positional_form() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    let cases: &[(&str, &[&str], &str, &[&str])] = &[
        ("cat", &["-n", "a.txt"], "-n", &["PATH"]),
        ("ls", &["-la"], "-la", &["PATH", "SHOW_HIDDEN"]),
        (
            "find",
            &[".", "-name", "x"],
            "-name",
            &["PATH", "PATTERN", "FILE_TYPE", "MAX_DEPTH"],
        ),
        ("tail", &["-f", "a.txt"], "-f", &["PATH", "LINES"]),
        ("wc", &["-l", "a.txt"], "-l", &["PATH"]),
        ("stat", &["--format=%s", "a.txt"], "--format", &["PATH"]),
        (
            "diff",
            &["-u", "a.txt", "a.txt"],
            "-u",
            &["PATH_A", "PATH_B", "CONTEXT_LINES"],
        ),
        ("pwd", &["-P"], "-P", &[]),
        (
            "grep",
            &["x", "a.txt", "--color"],
            "--color",
            &["PATTERN", "PATH", "RECURSIVE", "IGNORE_CASE"],
        ),
        ("head", &["a.txt", "-1"], "-1", &["PATH", "LINES"]),
        ("cat", &["-\u{e9}"], "-\u{e9}", &["PATH"]),
        ("cat", &["---"], "---", &["PATH"]),
        // A flag is refused before its path is looked at.
        ("cat", &["-n", "nope"], "-n", &["PATH"]),
        ("cat", &["../outside/secret.txt", "-v"], "-v", &["PATH"]),
    ];
    for (tool, args, word, params) in cases {
        let a = env.both(tool, args);
        refused(&a, word);
        let e = a.error.as_deref().unwrap();
        for p in *params {
            assert!(
                names_word(e, p),
                "{tool} {args:?}: the error should show the positional form ({p}): {e}"
            );
        }
    }
}

#[test]
fn double_dash_makes_later_words_literal() {
    let env = TestEnv::new();
    env.write("-n", "dash file\n");
    env.write("--", "double dash file\n");
    env.write("-x", "1\n2\n");
    env.write("notes.txt", "a\na -x b\n");
    env.both("cat", &["--", "-n"]).ok("dash file\n");
    env.both("cat", &["--", "--"]).ok("double dash file\n");
    env.both("head", &["--", "-x", "1"]).ok("1\n");
    env.both("grep", &["--", "-x", "notes.txt"])
        .ok("notes.txt:2:a -x b\n");
    env.both("diff", &["--", "-n", "-n"]).ok("");
    // `--` is no argument itself: it neither fills a place nor lifts the count.
    usage(&env.both("cat", &["--"]));
    usage(&env.both("cat", &["--", "-n", "-x"]));
    env.both("head", &["notes.txt", "--", "1"]).ok("a\n");
    // A flag before `--` is still refused.
    refused(&env.both("head", &["-x", "--"]), "-x");
    refused(&env.both("head", &["-n", "--", "-x"]), "-n");
}

#[test]
fn a_file_named_dash_is_reached_as_dot_slash_dash() {
    let env = TestEnv::new();
    env.write("-", "one\ntwo\n");
    env.write("b", "one\n2\n");
    env.both("cat", &["./-"]).ok("one\ntwo\n");
    env.both("head", &["./-", "1"]).ok("one\n");
    env.both("grep", &["two", "./-"]).ok("./-:2:two\n");
    // For ls, find and stat `-` is an ordinary name.
    env.both("ls", &["-"]).ok("-\n");
    assert_eq!(
        env.both("stat", &["-"]).json()["path"],
        serde_json::json!("-")
    );
    // As PATTERN, `-` is literal text like any other.
    env.write("n.txt", "a-b\nc\n");
    env.both("grep", &["-", "n.txt"]).ok("n.txt:1:a-b\n");
    env.both("diff", &["./-", "b", "0"])
        .ok_status("--- ./-\n+++ b\n@@ -2 +2 @@\n-two\n+2\n", 1);
    // Standard input here is /dev/null, neither a pipe nor a file: `-` is refused, and the
    // error says why and how to reach the file named `-`.
    env.both("cat", &["-"])
        .fails("not a file", "- (standard input here is a device")
        .fails("not a file", "a file named - is ./-");
}

// ---------------------------------------------------------------------------------------------
// §2 `readbox call TOOL JSON`

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

// ---------------------------------------------------------------------------------------------
// §9 order of checks: dispatch, policy, disabled tool, arguments, paths

#[test]
fn unknown_tool_is_found_before_a_bad_policy() {
    let mut env = TestEnv::new();
    env.var("READBOX_TIMEOUT", "abc");
    let a = env.readbox(&["frobnicate"]);
    assert_eq!(a.status, 127);
    assert_eq!(
        a.error.as_deref(),
        Some(unknown_tool("frobnicate").as_str())
    );
}

#[test]
fn bad_policy_is_found_before_bad_arguments() {
    let mut env = TestEnv::new();
    env.var("READBOX_TIMEOUT", "abc");
    env.both("cat", &[] as &[&str])
        .fails("config", "READBOX_TIMEOUT");
    env.both("head", &["-n", "5", "f"])
        .fails("config", "READBOX_TIMEOUT");
    env.readbox(&["call", "head", "{}"])
        .fails("config", "READBOX_TIMEOUT");
    env.readbox(&["list"]).fails("config", "READBOX_TIMEOUT");
    env.readbox(&["schema"]).fails("config", "READBOX_TIMEOUT");
}

#[test]
fn disabled_tool_is_found_before_bad_arguments() {
    let mut env = TestEnv::new();
    env.write("a", "x\n");
    env.var("READBOX_TOOLS", "cat");
    for args in [
        &["-n", "5", "a"][..],
        &[],
        &["a", "1", "x"],
        &["a", "zz"],
        &["a"],
    ] {
        let a = env.both("head", args);
        assert_eq!(
            a.error.as_deref(),
            Some("disabled: head is not enabled"),
            "head {args:?}"
        );
        assert_eq!((a.status, a.output.as_str()), (2, ""));
    }
    let a = env.readbox(&["call", "head", r#"{"bogus":1}"#]);
    assert_eq!(a.error.as_deref(), Some("disabled: head is not enabled"));
    env.both("cat", &["a"]).ok("x\n");
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
