//! What the process makes sure of before a call runs (docs/security.md#the-process-start): a
//! closed standard descriptor is taken by `/dev/null`, never by a file readbox opens, even where
//! poll cannot say which are closed; a write to a pipe whose reader is gone stops the call
//! quietly with its own status, SIGPIPE never ends the process; and every thread is under
//! Landlock before the call reads.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Stdio;

use crate::support::TestEnv;

#[test]
fn a_closed_standard_output_is_never_taken_by_the_audit_log() {
    // Under a limit of 2 descriptors, poll refuses to look at 3 of them (EINVAL): each one is
    // asked on its own, `/dev/null` takes the closed descriptor 1, and no file can be opened
    // after it. Were 1 left closed, the audit log would open as standard output and the answer
    // would be appended to it.
    let mut env = TestEnv::new();
    env.write("a.txt", "alpha\n");
    let log = crate::audit::audit_log(&mut env);
    let mut c = env.readbox_command();
    c.args(["cat", "a.txt"]).stderr(Stdio::piped());
    // SAFETY: close(2) and setrlimit(2) are async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            libc::close(1);
            let lim = libc::rlimit {
                rlim_cur: 2,
                rlim_max: 2,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raw const lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !logged.contains("\"output\""),
        "the answer went into the audit log: {logged}"
    );
}

#[test]
fn a_pipe_nobody_reads_ends_the_call_with_a_status_not_sigpipe() {
    let env = TestEnv::new();
    env.write("big.txt", "line of text\n".repeat(100_000));
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = env
        .readbox_command()
        .args(["cat", "big.txt"])
        .env("READBOX_FORMAT", "text")
        .env("READBOX_MAX_OUTPUT_BYTES", "10000000")
        .stdout(writer)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    // The answer cannot be delivered, so the work stops quietly (src/envelope.rs, as coreutils'
    // tools stop on EPIPE) with the call's own status.
    assert_eq!(status.signal(), None, "{status:?}");
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn every_thread_is_under_landlock_before_the_call_reads() {
    // The watchdog's thread starts before Landlock (it watches the config files) and restricts
    // itself when the call begins; the main thread reads only after it has. A thread's
    // `no_new_privs`, set on the way into Landlock and per thread, tells which ones went in.
    let no_new_privs = |status: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("NoNewPrivs:"))
            .map(str::trim)
            .map(str::to_string)
    };
    let own = std::fs::read_to_string("/proc/self/status").unwrap();
    if no_new_privs(&own).as_deref() != Some("0") {
        eprintln!("note: this test runs with no_new_privs already set; nothing to tell apart");
        return;
    }
    let env = TestEnv::new();
    let policy = env.readbox(&["policy"]).json();
    let enforced = policy["sandbox"]["landlock"]
        .as_str()
        .is_some_and(|s| s.starts_with("enforced"));
    let (reader, writer) = std::io::pipe().unwrap();
    let child = env
        .readbox_command()
        .args(["cat", "-"])
        .stdin(reader)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // The call reads standard input, which holds nothing yet: wait until it is in that read.
    let reading = (0..1000).any(|_| {
        let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
        if wchan.contains("pipe_read") {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        false
    });
    let mut seen = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let status = std::fs::read_to_string(task.unwrap().path().join("status")).unwrap();
        let name = status.lines().next().unwrap_or_default().to_string();
        seen.push((name, no_new_privs(&status)));
    }
    drop(writer);
    let out = child.wait_with_output().unwrap();
    assert!(reading, "the call never read standard input: {out:?}");
    assert_eq!(seen.len(), 2, "the main thread and the watchdog: {seen:?}");
    let want = if enforced { "1" } else { "0" };
    for (name, privs) in &seen {
        assert_eq!(
            privs.as_deref(),
            Some(want),
            "{name}: {seen:?} (Landlock enforced: {enforced})"
        );
    }
}
