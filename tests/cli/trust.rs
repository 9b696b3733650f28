//! Output a reader can trust (docs/contract.md#names, #notes, #ignore-files, #limits): names that
//! cannot forge records, binary diffs, ignore files read as git reads them, skips that are
//! visible, and limits that name their setting.

use crate::support::TestEnv;

#[test]
fn a_name_holding_a_newline_is_one_record_in_every_tool() {
    let env = TestEnv::new();
    let forged = "a\nconfig.py:12:DEBUG = False";
    env.write(forged, "needle\n");
    env.write("real.txt", "needle\n");
    let quoted = r"$'a\nconfig.py:12:DEBUG = False'";
    env.both("grep", &["needle"])
        .ok(&format!("{quoted}:1:needle\nreal.txt:1:needle\n"));
    env.both("ls", &[] as &[&str])
        .ok(&format!("{quoted}\nreal.txt\n"));
    env.both("find", &[] as &[&str])
        .ok(&format!("{quoted}\nreal.txt\n"));
    assert_eq!(
        env.both("stat", &[forged]).json()["path"],
        serde_json::json!(quoted)
    );
    env.write("b.txt", "other\n");
    let a = env.both("diff", &[forged, "b.txt"]);
    assert!(
        a.output.starts_with(&format!("--- {quoted}\n+++ b.txt\n")),
        "{}",
        a.output
    );
}

#[test]
fn a_terminal_escape_in_a_name_never_reaches_the_terminal_raw() {
    let mut env = TestEnv::new();
    env.write("red\x1b[31m.txt", "x\n");
    env.var("READBOX_FORMAT", "text");
    for tool in ["ls", "find"] {
        let a = env.both(tool, &[] as &[&str]);
        assert_eq!(a.stdout, b"$'red\\x1b[31m.txt'\n");
    }
    // Plain names are written as they are, in both formats.
    let mut plain = TestEnv::new();
    plain.write("with space.txt", "x\n");
    plain.write("caf\u{e9}.txt", "x\n");
    plain
        .both("ls", &[] as &[&str])
        .ok("caf\u{e9}.txt\nwith space.txt\n");
    plain.var("READBOX_FORMAT", "text");
    assert_eq!(
        plain.both("ls", &[] as &[&str]).stdout,
        "caf\u{e9}.txt\nwith space.txt\n".as_bytes()
    );
}

#[test]
fn pwd_writes_a_working_directory_with_a_control_in_its_name_as_one_record() {
    let mut env = TestEnv::new();
    env.mkdir("a\nb\x1b[31m");
    env.cd("a\nb\x1b[31m");
    let root = env.root();
    let want = format!("$'{}/a\\nb\\x1b[31m'\n", root.display());
    env.both("pwd", &[] as &[&str]).ok(&want);
    env.var("READBOX_FORMAT", "text");
    assert_eq!(env.both("pwd", &[] as &[&str]).stdout, want.as_bytes());
}

#[test]
fn binary_files_diff_as_gnu_diff_says_it() {
    let env = TestEnv::new();
    env.write("a.bin", b"v1\0\xff\n");
    env.write("b.bin", b"v1\0\xfe\n");
    env.write("c.bin", b"v1\0\xff\n");
    env.write("t.txt", "v1\n");
    env.both("diff", &["a.bin", "b.bin"])
        .ok_status("Binary files a.bin and b.bin differ\n", 1);
    env.both("diff", &["a.bin", "c.bin"]).ok("");
    env.both("diff", &["t.txt", "a.bin"])
        .ok_status("Binary files t.txt and a.bin differ\n", 1);
    // The check comes before the line limit.
    let mut long = b"\0".to_vec();
    long.extend(b"x\n".repeat(3000));
    env.write("long.bin", &long);
    env.both("diff", &["long.bin", "a.bin"])
        .ok_status("Binary files long.bin and a.bin differ\n", 1);
}

#[test]
fn gitignore_with_a_byte_order_mark_and_crlf_line_ends_is_read_as_git_reads_it() {
    let env = TestEnv::new();
    // A byte order mark, and CRLF line ends.
    env.write(".gitignore", b"\xef\xbb\xbfnode_modules/\r\n*.log\r\n");
    env.write("node_modules/pkg/index.js", "TODO\n");
    env.write("src/app.js", "TODO\n");
    env.write("debug.log", "TODO\n");
    env.both("grep", &["TODO"]).ok("src/app.js:1:TODO\n");
    env.both("find", &[".", "*.js"]).ok("src/app.js\n");
}

#[test]
fn a_nested_repository_starts_its_own_ignore_rules() {
    let env = TestEnv::new();
    env.mkdir(".git");
    env.write(".gitignore", "*.log\n");
    env.write("top.log", "needle\n");
    // A repository of its own (git init there): the outer rules stop at its root.
    env.mkdir("vendor/lib/.git/info");
    env.write("vendor/lib/build.log", "needle\n");
    env.write("vendor/lib/main.c", "needle\n");
    // A worktree or submodule: `.git` is a file that says where the repository lives.
    env.write("vendor/wt/.git", "gitdir: ../../.git/worktrees/wt\n");
    env.write("vendor/wt/x.log", "needle\n");
    // A file named .git that is no pointer does not start a repository.
    env.write("vendor/fake/.git", "not a repository\n");
    env.write("vendor/fake/y.log", "needle\n");
    env.both("grep", &["needle"]).ok(
        "vendor/lib/build.log:1:needle\nvendor/lib/main.c:1:needle\nvendor/wt/x.log:1:needle\n",
    );
    // `.ignore` files keep applying across a repository's root, as in ripgrep and fd.
    env.write(".ignore", "main.c\n");
    env.both("grep", &["needle"])
        .ok("vendor/lib/build.log:1:needle\nvendor/wt/x.log:1:needle\n");
    // A nested repository's own exclude file applies within it.
    env.write("vendor/lib/.git/info/exclude", "build.log\n");
    env.both("grep", &["needle"])
        .ok("vendor/wt/x.log:1:needle\n");
}

#[test]
fn skips_are_visible_in_notes() {
    let env = TestEnv::new();
    env.write("a.bin", b"needle\0\n");
    env.write("b.bin", b"needle\0\n");
    let a = env.both("grep", &["needle"]);
    a.no_match();
    assert!(
        a.notes
            .iter()
            .any(|n| n.starts_with("2 binary files skipped")),
        "{:?}",
        a.notes
    );
    // Ignore rules that left out every candidate are named, with the setting that turns them off.
    let ignored = TestEnv::new();
    ignored.write(".gitignore", "*.txt\n");
    ignored.write("a.txt", "needle\n");
    let a = ignored.both("grep", &["needle"]);
    a.no_match();
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("READBOX_RESPECT_IGNORE_FILES=false")),
        "{:?}",
        a.notes
    );
    let a = ignored.both("find", &[".", "*.txt"]);
    assert!(
        a.notes.iter().any(|n| n.contains("1 entry left out")),
        "{:?}",
        a.notes
    );
    // Excluded entries are never counted or named.
    let excluded = TestEnv::new();
    excluded.secret(".env");
    let a = excluded.both("grep", &["CANARY"]);
    a.no_match();
    assert!(a.notes.is_empty(), "{:?}", a.notes);
}

#[test]
fn a_mount_point_beneath_a_root_is_listed_named_and_not_entered() {
    let env = TestEnv::new();
    env.write("a.txt", "needle\n");
    env.mkdir("data");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "tmpfs"])
        .arg(env.p("data"))
        .output();
    if !mounted.is_ok_and(|o| o.status.success()) {
        eprintln!("note: mounting a tmpfs is not permitted here; the mount-point test is skipped");
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(env.p("data"));
    env.write("data/b.txt", "needle\n");
    let a = env.both("grep", &["needle"]);
    a.ok("a.txt:1:needle\n");
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("mount point data") && n.contains("cross_mounts")),
        "{:?}",
        a.notes
    );
    env.both("cat", &["data/b.txt"]).fails(
        "denied",
        "data/b.txt: crosses the mount point data (cross_mounts is off)",
    );
}

#[test]
fn limit_errors_name_their_setting_and_variable() {
    let mut env = TestEnv::new();
    env.write("f.txt", "lin0\nlin1\nlin2\n");
    for i in 0..5 {
        env.write(&format!("d/{i}"), "x\n");
    }
    env.var("READBOX_MAX_READ_BYTES", "7");
    env.both("cat", &["f.txt"]).fails(
        "limit",
        "read more than max_read_bytes (7 bytes; READBOX_MAX_READ_BYTES)",
    );
    let mut env2 = TestEnv::new();
    for i in 0..5 {
        env2.write(&format!("d/{i}"), "x\n");
    }
    env2.var("READBOX_MAX_ENTRIES", "3");
    env2.both("ls", &["d"]).fails(
        "limit",
        "examined more than max_entries (3 directory entries; READBOX_MAX_ENTRIES)",
    );
}
