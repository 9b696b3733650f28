//! What the process makes sure of before a call runs (docs/security.md#the-process-start): a
//! write to a pipe whose reader is gone stops the call quietly with its own status; SIGPIPE never
//! ends the process.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use crate::support::TestEnv;

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
