//! `readbox install DIR` (docs/contract.md#invocation): a link named after each enabled tool,
//! pointing at the real binary, in a folder outside the roots; an existing name is never
//! overwritten, a second install is accepted, and DIR is exactly one word.

use std::path::{Path, PathBuf};

use crate::args::{names_word, usage};
use crate::dispatch::{TOOLS, binary, link_at, run_exe};
use crate::support::TestEnv;

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
