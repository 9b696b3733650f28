//! The lock (docs/contract.md#lock): under a locked system file, roots, tools and limits may only
//! narrow, excludes are only added to, the working directory stays within the locked roots, and
//! redaction stays on unless the locked file itself turns it off.

use crate::policy::{config_error, s, toml_str};
use crate::support::TestEnv;

/// A sandbox whose READBOX_CONFIG is locked with `extra` settings.
fn locked(extra: &str) -> TestEnv {
    let mut env = TestEnv::new();
    let cfg = env.config("lock.toml", &format!("lock = true\n{extra}"));
    env.var("READBOX_CONFIG", &s(&cfg));
    env
}

/// A sandbox whose READBOX_CONFIG locks the roots to its `root/`.
pub(crate) fn locked_to_root() -> TestEnv {
    let mut env = TestEnv::new();
    let cfg = env.config(
        "lock.toml",
        &format!(
            "lock = true\nallowed_directories = [{}]\n",
            toml_str(&s(&env.root()))
        ),
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    env.write("a.txt", "a\n");
    env.write("sub/x.txt", "x\n");
    env
}

#[test]
fn under_a_lock_roots_may_only_narrow() {
    let wider: [fn(&TestEnv) -> String; 4] = [
        |env| s(&env.base()),
        |_| "/".to_string(),
        |env| format!("{}:{}", s(&env.root()), s(&env.outside())),
        |_| "..".to_string(),
    ];
    for value in wider {
        let mut env = locked_to_root();
        env.both("cat", &["a.txt"]).ok("a\n");
        let v = value(&env);
        env.var("READBOX_ROOTS", &v);
        config_error(&env.both("cat", &["a.txt"]), &["READBOX_ROOTS"]);
    }
    let mut env = locked_to_root();
    env.var("READBOX_ROOTS", &s(&env.root()));
    env.both("cat", &["a.txt"]).ok("a\n");
    let mut env = locked_to_root();
    env.var("READBOX_ROOTS", &s(&env.p("sub")));
    // The current directory is outside the narrowed root: relative paths are denied, and the
    // narrowed root answers for absolute ones.
    let why = "the working directory is outside the roots";
    env.both("cat", &["x.txt"]).fails("denied", why);
    env.both("cat", &[s(&env.p("sub/x.txt"))]).ok("x\n");
    env.both("cat", &[s(&env.p("a.txt"))])
        .denied(&s(&env.p("a.txt")));
    let sub = s(&env.p("sub"));
    env.cd(&sub);
    env.both("cat", &["x.txt"]).ok("x\n");
    env.both("cat", &["../a.txt"]).denied("../a.txt");
}

#[test]
fn a_lock_without_roots_locks_the_working_directory() {
    let mut env = locked("");
    env.write("a.txt", "a\n");
    env.both("cat", &["a.txt"]).ok("a\n");
    env.var("READBOX_ROOTS", &s(&env.base()));
    config_error(&env.both("cat", &["a.txt"]), &["READBOX_ROOTS"]);
}

#[test]
fn under_a_lock_the_working_directory_stays_within_the_locked_roots() {
    // The lock's roots are the working directory it had; a later working directory elsewhere
    // must not carry the default root along with it.
    let mut env = locked("");
    env.var("READBOX_WORKDIR", &s(&env.outside()));
    config_error(&env.both("cat", &["secret.txt"]), &[]);
    config_error(&env.both("pwd", &[] as &[&str]), &[]);

    let mut env = locked_to_root();
    env.var("READBOX_WORKDIR", &s(&env.outside()));
    config_error(&env.both("cat", &["secret.txt"]), &[]);
}

#[test]
fn under_a_lock_redaction_stays_on_unless_the_locked_file_turns_it_off() {
    let mut env = locked("");
    env.write("a.txt", "a\n");
    env.both("cat", &["a.txt"]).ok("a\n");
    for v in ["false", "OFF", "0"] {
        env.var("READBOX_REDACT", v);
        config_error(&env.both("cat", &["a.txt"]), &["READBOX_REDACT"]);
    }
    env.var("READBOX_REDACT", "true");
    env.both("cat", &["a.txt"]).ok("a\n");
    let doc = env.readbox(&["policy"]).json();
    assert_eq!(doc["settings"]["redact"]["value"], true);

    let mut env = locked("redact = false\n");
    let doc = env.readbox(&["policy"]).json();
    assert_eq!(doc["settings"]["redact"]["value"], false);
    env.var("READBOX_REDACT", "on");
    let doc = env.readbox(&["policy"]).json();
    assert_eq!(doc["settings"]["redact"]["value"], true);
    assert_eq!(doc["settings"]["redact"]["source"], "env READBOX_REDACT");
}

#[test]
fn redact_takes_a_boolean_and_policy_shows_where_it_came_from() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.var("READBOX_REDACT", "perhaps");
    config_error(
        &env.both("cat", &["a.txt"]),
        &["READBOX_REDACT", "'perhaps'"],
    );
    env.var("READBOX_REDACT", "no");
    let doc = env.readbox(&["policy"]).json();
    assert_eq!(doc["settings"]["redact"]["value"], false);
    assert_eq!(doc["settings"]["redact"]["source"], "env READBOX_REDACT");
}

#[test]
fn under_a_lock_tools_may_only_narrow() {
    let mut env = locked("allowed_tools = [\"cat\", \"head\"]\n");
    env.write("a.txt", "a\n");
    env.both("grep", &["a", "a.txt"])
        .fails("disabled", "grep is not enabled");
    env.var("READBOX_TOOLS", "cat");
    env.both("head", &["a.txt"])
        .fails("disabled", "head is not enabled");
    env.both("cat", &["a.txt"]).ok("a\n");
    let mut env = locked("allowed_tools = [\"cat\", \"head\"]\n");
    env.var("READBOX_TOOLS", "cat,grep");
    config_error(&env.both("cat", &["a.txt"]), &["READBOX_TOOLS"]);
}

#[test]
fn under_a_lock_limits_may_only_go_down() {
    let lock = "max_output_bytes = 10\ntimeout = 5\nmax_read_bytes = 100\nmax_entries = 50\n";
    for (var, equal, higher) in [
        ("READBOX_MAX_OUTPUT_BYTES", "10", "11"),
        ("READBOX_TIMEOUT", "5", "5.5"),
        ("READBOX_MAX_READ_BYTES", "100", "101"),
        ("READBOX_MAX_ENTRIES", "50", "51"),
    ] {
        let mut env = locked(lock);
        env.write("a.txt", "abcdefghijklmnopqrstuvwxyz\n");
        env.var(var, equal);
        env.both("cat", &["a.txt"]).ok("abcdefghij");
        let mut env = locked(lock);
        env.var(var, higher);
        config_error(&env.both("cat", &["a.txt"]), &[var]);
    }
    let mut env = locked(lock);
    env.write("a.txt", "abcdefghijklmnopqrstuvwxyz\n");
    env.var("READBOX_MAX_OUTPUT_BYTES", "4");
    env.both("cat", &["a.txt"]).ok("abcd");
    let mut env = locked(lock);
    env.write("a.txt", "abcdefghijklmnopqrstuvwxyz\n");
    env.var("READBOX_MAX_READ_BYTES", "26");
    // wc reads every byte (cat would stop at the 10-byte cap first).
    env.both("wc", &["a.txt"]).fails("limit", "max_read_bytes");
}

#[test]
fn under_a_lock_excludes_are_only_added_to() {
    let mut env = locked("exclude_patterns = [\"*.md\"]\n");
    env.write("a.txt", "a\n");
    env.write("b.md", "b\n");
    env.secret("secret.md");
    env.both("cat", &["b.md"]).denied("b.md");
    env.var("READBOX_EXCLUDE", "*.txt");
    env.both("cat", &["a.txt"]).denied("a.txt");
    env.both("cat", &["b.md"]).denied("b.md");
    env.both("head", &["secret.md"]).denied("secret.md");
    let mut env = locked("exclude_patterns = [\"*.md\"]\n");
    env.secret("secret.md");
    env.var("READBOX_EXCLUDE", "");
    // An empty variable may be refused or ignored, but it never uncovers a locked exclude.
    let a = env.both("cat", &["secret.md"]);
    let e = a.error.as_deref().unwrap_or("");
    assert!(e == "denied: secret.md" || e.starts_with("config: "), "{e}");
    assert_eq!((a.status, a.output.as_str()), (2, ""));
}
