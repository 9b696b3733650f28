//! The audit log (docs/contract.md#audit-log): a start and an end line per call, the bytes of
//! output written counted, a relative log path taken from the config file's folder, and a log
//! that cannot be written answered as an `io:` error with no output. (Its lines at the
//! deadline are tested with the deadline in `engine.rs`.)

use std::path::Path;

use serde_json::Value;

use crate::envelope::stderr_text;
use crate::policy::{s, toml_str};
use crate::support::TestEnv;

/// Sets `env` to log its calls in an audit log (docs/contract.md#audit-log), whose path it returns.
pub(crate) fn audit_log(env: &mut TestEnv) -> std::path::PathBuf {
    let log = env.base().join("audit.jsonl");
    let cfg = env.config(
        "audit.toml",
        &format!("audit_log = {:?}\n", log.display().to_string()),
    );
    env.var("READBOX_CONFIG", cfg.to_str().unwrap());
    log
}

fn audit_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line is not JSON ({e}): {l}"))
        })
        .collect()
}

#[test]
fn the_audit_log_gets_a_start_and_an_end_line_per_call() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.write("long.txt", "0123456789abcdef\n");
    let log = env.base().join("audit.jsonl");
    // The log is appended to, never truncated.
    std::fs::write(&log, "{\"earlier\":true}\n").unwrap();
    let cfg = env.config(
        "audit.toml",
        &format!("audit_log = {}\nmax_output_bytes = 8\n", toml_str(&s(&log))),
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    env.run("cat", &["a.txt"]).ok("a\n");
    env.run_link("cat", &["nope.txt"])
        .fails("not found", "nope.txt");
    env.run("grep", &["zzz", "a.txt"]).no_match();
    let t = env.run("cat", &["long.txt"]);
    assert!(t.truncated);
    let lines = audit_lines(&log);
    assert_eq!(lines.len(), 9, "{lines:?}");
    assert_eq!(lines[0], serde_json::json!({"earlier": true}));
    let root = s(&env.root());
    let mut ids = std::collections::BTreeSet::new();
    let expect = [
        ("cat", vec!["a.txt"], 0, Value::Null, 2, false),
        (
            "cat",
            vec!["nope.txt"],
            2,
            Value::from("not found: nope.txt"),
            0,
            false,
        ),
        ("grep", vec!["zzz", "a.txt"], 1, Value::Null, 0, false),
        ("cat", vec!["long.txt"], 0, Value::Null, 8, true),
    ];
    for (pair, (tool, args, status, error, bytes, truncated)) in lines[1..].chunks(2).zip(expect) {
        let (start, end) = (&pair[0], &pair[1]);
        // The start line is written before the work: it knows the call, not its outcome.
        assert_eq!(start["event"], "start", "{start}");
        assert_eq!(start["tool"], tool, "{start}");
        assert_eq!(start["arguments"], serde_json::json!(args), "{start}");
        assert_eq!(start["working_directory"], root.as_str(), "{start}");
        assert!(start.get("exit_status").is_none(), "{start}");
        assert_eq!(end["event"], "end", "{end}");
        assert_eq!(end["id"], start["id"], "{end}");
        assert_eq!(end["exit_status"], status, "{end}");
        assert_eq!(end["error"], error, "{end}");
        assert_eq!(end["output_bytes"], bytes, "{end}");
        assert_eq!(end["truncated"], truncated, "{end}");
        assert_eq!(end["redactions"], 0, "{end}");
        assert!(end["duration_ms"].is_u64(), "{end}");
        for rec in pair {
            let time = rec["time"]
                .as_str()
                .unwrap_or_else(|| panic!("no time in {rec}"));
            assert!(time.contains('T') && time.ends_with('Z'), "time {time}");
        }
        assert!(
            ids.insert(start["id"].as_str().unwrap().to_string()),
            "ids differ by call"
        );
    }
}

#[test]
fn the_audit_log_counts_only_the_output_written() {
    // The last line crosses the cap and ends the file: it is held back while it could still turn
    // out a long line (cut inside), then left out whole. Only "one\n" is written.
    for format in ["json", "text"] {
        let mut env = TestEnv::new();
        env.write("f.txt", "one\ntwotwotwo");
        let log = env.base().join("audit.jsonl");
        let cfg = env.config(
            "audit.toml",
            &format!(
                "audit_log = {}\nmax_output_bytes = 10\n",
                toml_str(&s(&log))
            ),
        );
        env.var("READBOX_CONFIG", &s(&cfg))
            .var("READBOX_FORMAT", format);
        let a = env.run("cat", &["f.txt"]);
        assert_eq!(a.status, 0, "{format}");
        match format {
            "json" => {
                a.ok("one\n");
                assert!(a.truncated);
            }
            _ => assert_eq!(a.stdout, b"one\n"),
        }
        let lines = audit_lines(&log);
        assert_eq!(lines.len(), 2, "{format}: {lines:?}");
        assert_eq!(lines[1]["output_bytes"], 4, "{format}: {}", lines[1]);
        assert_eq!(lines[1]["truncated"], true, "{format}: {}", lines[1]);
    }
}

#[test]
fn a_relative_audit_log_is_taken_from_the_config_files_folder() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    let cfg = env.config("audit.toml", "audit_log = \"rel.jsonl\"\n");
    env.var("READBOX_CONFIG", &s(&cfg));
    env.run("cat", &["a.txt"]).ok("a\n");
    assert_eq!(audit_lines(&env.base().join("cfg/rel.jsonl")).len(), 2);
    assert!(
        !env.p("rel.jsonl").exists(),
        "the log was made in the working directory"
    );
}

#[test]
fn an_audit_log_that_cannot_be_written_is_an_io_error_with_no_output() {
    let targets = [
        |env: &TestEnv| s(&env.base().join("cfg")),
        |env: &TestEnv| s(&env.base().join("nodir/a.log")),
        // Opens fine but every write fails: the tool has run, yet its output must not appear.
        |_: &TestEnv| "/dev/full".to_string(),
    ];
    for target in targets {
        let mut env = TestEnv::new();
        env.write("a.txt", "a\n");
        let t = target(&env);
        let cfg = env.config("audit.toml", &format!("audit_log = {}\n", toml_str(&t)));
        env.var("READBOX_CONFIG", &s(&cfg));
        let a = env.both("cat", &["a.txt"]);
        a.fails("io", "audit");
        assert_eq!(a.output, "", "output despite a failed audit log ({t})");
        env.var("READBOX_FORMAT", "text");
        let a = env.both("cat", &["a.txt"]);
        assert_eq!(
            (a.status, a.stdout.as_slice()),
            (2, &b""[..]),
            "text format, log {t}"
        );
        assert!(
            stderr_text(&a).starts_with("cat: io: "),
            "{}",
            stderr_text(&a)
        );
    }
}
