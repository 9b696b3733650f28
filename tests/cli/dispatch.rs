//! Dispatch (docs/contract.md#invocation and the #decisions-on-details on it): how argv[0] or
//! the first word picks the tool (a link, a renamed binary, a hard link or a copy), an unknown
//! tool named with the tool list and exit status 127, meta commands only in multicall form, no
//! call that starts a program or writes a file, and the order in which the checks come
//! (dispatch, policy, disabled tool, arguments, paths).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::args::{names_word, refused};
use crate::support::TestEnv;

pub(crate) const TOOLS: [&str; 10] = [
    "cat", "pwd", "ls", "find", "grep", "head", "tail", "wc", "stat", "diff",
];

/// The registry's names: the ten tools and the shell that runs them.
pub(crate) const ALL: [&str; 11] = [
    "cat", "pwd", "ls", "find", "grep", "head", "tail", "wc", "stat", "diff", "sh",
];

/// The exact unknown-tool error of §9, for `name`.
pub(crate) fn unknown_tool(name: &str) -> String {
    format!("usage: unknown tool '{name}'; tools: cat pwd ls find grep head tail wc stat diff sh")
}

pub(crate) fn binary() -> PathBuf {
    crate::support::binary().to_path_buf()
}

/// One call of a program that is not reached through the harness (a renamed binary, an installed
/// link, a hard link), run in `root/` with a clean environment.
pub(crate) struct Raw {
    pub(crate) status: i32,
    pub(crate) output: String,
    pub(crate) error: Option<String>,
}

pub(crate) fn envelope(stdout: &[u8], status: i32, shown: &str) -> Raw {
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

pub(crate) fn run_exe(env: &TestEnv, exe: &Path, args: &[&str]) -> Raw {
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

/// A link to the binary at `base/rel` (any file name), made by the test itself.
pub(crate) fn link_at(env: &TestEnv, rel: &str) -> PathBuf {
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

pub(crate) fn sorted(mut v: Vec<&str>) -> Vec<&str> {
    v.sort_unstable();
    v
}

// ---------------------------------------------------------------------------------------------
// §1 never starts a program, never writes

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
