//! Defences against what an attack run found (docs/security.md): the audit log out of every
//! tool's reach, writes and records under a lock, the lock's directory chain, and more; each test
//! is named after what it guards.

use std::path::Path;

use crate::support::TestEnv;

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A TOML basic string holding `text`.
fn toml_str(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

#[test]
fn the_audit_log_is_never_read_listed_or_matched_beneath_a_root() {
    let mut env = TestEnv::new();
    env.write("a.txt", "hello\n");
    env.mkdir("logs");
    let log = env.p("logs/audit.jsonl");
    let cfg = env.config(
        "audit.toml",
        &format!(
            "audit_log = {}\nexclude_patterns = []\n",
            toml_str(&s(&log))
        ),
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    env.run("cat", &["a.txt"]).ok("hello\n");
    assert!(std::fs::read_to_string(&log).unwrap().contains("a.txt"));
    env.run("cat", &["logs/audit.jsonl"])
        .denied("logs/audit.jsonl");
    env.run("stat", &["logs/audit.jsonl"])
        .denied("logs/audit.jsonl");
    env.run("cat", &[s(&log)]).denied(&s(&log));
    env.run("ls", &["logs"]).ok("");
    env.run("find", &["logs"]).ok("");
    env.run("grep", &["a.txt", "logs"]).no_match();
    env.run("grep", &["a.txt", "."]).no_match();
    // Another name of the same file (a hard link) is the same file.
    std::fs::hard_link(&log, env.p("copy.jsonl")).unwrap();
    env.run("cat", &["copy.jsonl"]).denied("copy.jsonl");
    env.run("ls", &["."]).ok("a.txt\nlogs/\n");
}
