//! The output engine (docs/contract.md#envelope, #notes, #limits): memory that does not grow with
//! the caps, the deadline while output streams (to a file, to nobody, into a blocked stderr),
//! the notes in the text format, cat's FROM_LINE, and the audit log's two lines at the deadline.
//! Where the cap cuts is tested in `output_cap.rs`.

use std::io::Read;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::audit::audit_log;
use crate::output_cap::{cut_to, varied_lines};
use crate::support::TestEnv;

const GIB: &str = "1073741824";

/// A line of 62 bytes that grep's `needle` matches.
const LINE: &str = "the quick brown fox jumps over the lazy dog 0123456789 needle\n";

/// Writes `rel` as LINE repeated to at least `bytes`; returns the number of lines.
fn big_file(env: &TestEnv, rel: &str, bytes: usize) -> usize {
    let n = bytes / LINE.len() + 1;
    env.write(rel, LINE.repeat(n));
    n
}

/// The caps raised far above what any of these calls produces.
fn raised(env: &mut TestEnv) {
    env.var("READBOX_MAX_OUTPUT_BYTES", GIB)
        .var("READBOX_MAX_READ_BYTES", GIB)
        .var("READBOX_TIMEOUT", "120");
}

/// A bound far above readbox's own needs (a few MiB) and below the 24 MiB of output the calls
/// below produce: an engine that held its output would pass it.
const MEMORY_BOUND_KIB: u64 = 16 * 1024;

#[test]
fn memory_does_not_grow_with_the_caps() {
    let mut env = TestEnv::new();
    raised(&mut env);
    let n = big_file(&env, "big.txt", 24 << 20);
    let (cat, kib) = env.run_measured("cat", &["big.txt"]);
    assert_eq!(cat.output.len(), n * LINE.len());
    assert!(!cat.truncated);
    assert!(kib < MEMORY_BOUND_KIB, "cat: peak memory {kib} KiB");
    let (grep, kib) = env.run_measured("grep", &["needle", "big.txt"]);
    assert_eq!(grep.output.lines().count(), n);
    assert!(grep.output.ends_with(&format!("big.txt:{n}:{LINE}")));
    assert!(kib < MEMORY_BOUND_KIB, "grep: peak memory {kib} KiB");
    // A directory search hands a file with many matches back to the printing thread.
    env.write("d/big.txt", LINE.repeat(n));
    let (grep, kib) = env.run_measured("grep", &["needle", "d"]);
    assert_eq!(grep.output.lines().count(), n);
    assert!(
        kib < MEMORY_BOUND_KIB,
        "grep in a directory: peak memory {kib} KiB"
    );
    for tool in ["head", "tail"] {
        let (a, kib) = env.run_measured(tool, &["big.txt", "10000"]);
        assert_eq!(a.output, LINE.repeat(10000), "{tool}");
        assert!(kib < MEMORY_BOUND_KIB, "{tool}: peak memory {kib} KiB");
    }
}

#[test]
fn memory_does_not_grow_with_a_long_line_from_a_pipe() {
    // A pipe cannot be read again or looked ahead in: cat and head hold a long line until they
    // know it ends within the budget, and grep keeps a matching one to print it, each up to
    // 4 MiB and no more.
    let mut env = TestEnv::new();
    raised(&mut env);
    let line = format!("{}needle\n", "x".repeat(40 << 20));
    env.write("line.txt", &line);
    for tool in ["cat", "head"] {
        let (a, kib) = env.run_measured_piped(tool, &["-"], "line.txt");
        assert!(a.error.is_none() && a.output == line, "{tool}: {}", a.shown);
        assert!(kib < MEMORY_BOUND_KIB, "{tool}: peak memory {kib} KiB");
    }
    let (g, kib) = env.run_measured_piped("grep", &["needle", "-"], "line.txt");
    assert!(kib < MEMORY_BOUND_KIB, "grep: peak memory {kib} KiB");
    assert_eq!(g.output.len(), "(standard input):1:".len() + (4 << 20) + 1);
    assert!(
        g.notes
            .iter()
            .any(|n| n.contains("only its start is shown")),
        "{:?}",
        g.notes
    );
}

#[test]
fn the_deadline_holds_while_output_streams() {
    let mut env = TestEnv::new();
    let f = std::fs::File::create(env.p("sparse.bin")).unwrap();
    f.set_len(1 << 40).unwrap();
    env.var("READBOX_TIMEOUT", "0.3")
        .var("READBOX_MAX_OUTPUT_BYTES", GIB)
        .var("READBOX_MAX_READ_BYTES", "4398046511104");
    // A reader that takes everything: the writer pushes without pause, and the end must still
    // get its turn (a few tries, as a lost race shows only now and then). What must hold at any
    // speed is asserted: the call ends, with the timeout, and its envelope is whole (the support
    // code parses it) with what was written so far, all of it the file's bytes. How soon after
    // the deadline the answer comes is measured by `benches/`, not here: a loaded machine may
    // take longer than the contract's 0.5 s without the engine being wrong.
    for _ in 0..4 {
        let a = env.run("cat", &["sparse.bin"]);
        a.fails("timeout", "0.3 s");
        assert!(a.output.bytes().all(|b| b == 0));
    }
}

/// Stdout a regular file, or the null device (which takes whole blocks at once): the answer is
/// the same as through a pipe, and the deadline holds.
#[test]
fn output_to_a_file_or_the_null_device_is_whole_and_in_time() {
    let mut env = TestEnv::new();
    raised(&mut env);
    big_file(&env, "big.txt", 3 << 20);
    let content = std::fs::read(env.p("big.txt")).unwrap();
    let written = env.base().join("out");
    for format in ["text", "json"] {
        let status = env
            .readbox_command()
            .env("READBOX_FORMAT", format)
            .args(["cat", "big.txt"])
            .stdout(std::fs::File::create(&written).unwrap())
            .status()
            .unwrap();
        assert!(status.success(), "{format}");
        let out = std::fs::read(&written).unwrap();
        let output = match format {
            "text" => out,
            _ => {
                let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
                assert_eq!(v["error"], serde_json::Value::Null);
                v["output"].as_str().unwrap().as_bytes().to_vec()
            }
        };
        assert!(output == content, "{format}: the file differs from big.txt");
    }
    // Into the null device without end: the deadline still ends the call.
    std::fs::File::create(env.p("sparse.bin"))
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    env.var("READBOX_TIMEOUT", "0.3")
        .var("READBOX_MAX_READ_BYTES", "4398046511104")
        .var("READBOX_FORMAT", "text");
    let mut child = env
        .readbox_command()
        .args(["cat", "sparse.bin"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = ends_within(&mut child, ENDS_BY);
    assert_eq!(status.and_then(|s| s.code()), Some(2));
    let stderr = stderr_of(&mut child);
    assert!(stderr.contains("cat: timeout"), "{stderr}");
}

/// What `child`, which has ended, wrote to its piped standard error.
fn stderr_of(child: &mut Child) -> String {
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("standard error is piped")
        .read_to_string(&mut stderr)
        .unwrap();
    stderr
}

/// Waits up to `bound` for `child` to end; kills it (and returns `None`) if it has not.
fn ends_within(child: &mut Child, bound: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if start.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Far more than the deadline plus the contract's half second, on a loaded machine too; a call
/// held by its output never ends at all.
const ENDS_BY: Duration = Duration::from_secs(5);

#[test]
fn the_deadline_holds_while_nobody_reads_stdout() {
    let mut env = TestEnv::new();
    big_file(&env, "big.txt", 4 << 20);
    env.var("READBOX_TIMEOUT", "0.3")
        .var("READBOX_MAX_OUTPUT_BYTES", GIB)
        .var("READBOX_MAX_READ_BYTES", GIB);
    for format in ["json", "text"] {
        // The pipe fills long before 4 MiB, so readbox's write blocks with the output held.
        let mut child = env
            .readbox_command()
            .env("READBOX_FORMAT", format)
            .args(["cat", "big.txt"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let status = ends_within(&mut child, ENDS_BY);
        assert!(
            status.is_some(),
            "{format}: still running after {ENDS_BY:?}"
        );
        assert_eq!(status.unwrap().code(), Some(2), "{format}");
        let stderr = stderr_of(&mut child);
        assert!(
            stderr.contains("cat: timeout: the call took longer than 0.3 s"),
            "{format}: {stderr}"
        );
    }
}

#[test]
fn the_deadline_holds_while_the_answer_blocks_on_stderr() {
    let mut env = TestEnv::new();
    env.write("f.txt", "one\ntwo\nthree\n");
    env.var("READBOX_TIMEOUT", "0.5")
        .var("READBOX_FORMAT", "text")
        .var("READBOX_MAX_OUTPUT_BYTES", "4");
    // A pipe already full: the truncation note that ends the answer cannot be written.
    let (reader, writer) = std::io::pipe().unwrap();
    let flags = rustix::fs::fcntl_getfl(&writer).unwrap();
    rustix::fs::fcntl_setfl(&writer, flags | rustix::fs::OFlags::NONBLOCK).unwrap();
    let chunk = [b'x'; 4096];
    while rustix::io::write(&writer, &chunk).is_ok() {}
    rustix::fs::fcntl_setfl(&writer, flags).unwrap();
    let mut child = env
        .readbox_command()
        .args(["cat", "f.txt"])
        .stdout(Stdio::null())
        .stderr(writer)
        .spawn()
        .unwrap();
    let status = ends_within(&mut child, ENDS_BY);
    drop(reader);
    assert!(status.is_some(), "still running after {ENDS_BY:?}");
    assert_eq!(status.unwrap().code(), Some(2));
}

#[test]
fn grep_keeps_the_matches_of_earlier_files_at_the_deadline() {
    let mut env = TestEnv::new();
    env.write("a.txt", "one\nneedle here\nthree\n");
    // Text at the start (so not binary), then a hole of 1 TiB: searching it outlasts the call.
    env.write("b.txt", "text line without the word\n".repeat(400));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(env.p("b.txt"))
        .unwrap();
    f.set_len(1 << 40).unwrap();
    env.var("READBOX_TIMEOUT", "1")
        .var("READBOX_MAX_OUTPUT_BYTES", GIB)
        .var("READBOX_MAX_READ_BYTES", "4398046511104");
    for args in [&["needle", "."][..], &["needle"][..]] {
        let a = env.run("grep", args);
        a.fails("timeout", "1 s");
        assert_eq!(a.output, "a.txt:2:needle here\n");
    }
}

#[test]
fn notes_are_absent_from_ordinary_calls_and_go_to_stderr_in_text_format() {
    let mut env = TestEnv::new();
    env.write("a.txt", "one\ntwo\n");
    for tool in ["cat", "head", "tail", "wc", "stat"] {
        assert!(env.both(tool, &["a.txt"]).notes.is_empty(), "{tool}");
    }
    env.write("f.txt", varied_lines());
    cut_to(&mut env, 300);
    let json = env.both("cat", &["f.txt"]);
    env.var("READBOX_FORMAT", "text");
    let text = env.both("cat", &["f.txt"]);
    let stderr = String::from_utf8(text.stderr.clone()).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    let notes: Vec<String> = json
        .notes
        .iter()
        .map(|n| format!("cat: note: {n}"))
        .collect();
    assert_eq!(lines[..lines.len() - 1], notes);
    assert_eq!(lines.last(), Some(&"cat: output truncated at 300 bytes"));
}

#[test]
fn cat_from_line_starts_at_that_line() {
    let env = TestEnv::new();
    env.write("f.txt", "one\ntwo\r\nthree\nfour");
    env.write("empty", "");
    for (k, want) in [
        ("1", "one\ntwo\r\nthree\nfour"),
        ("2", "two\r\nthree\nfour"),
        ("4", "four"),
        ("5", ""),
        ("99999999999", ""),
    ] {
        env.both("cat", &["f.txt", k]).ok(want);
    }
    env.both("cat", &["empty", "2"]).ok("");
    for bad in ["0", "x", "1.5", "+2"] {
        env.both("cat", &["f.txt", bad]).fails("usage", "FROM_LINE");
    }
    env.both("cat", &["nope", "2"]).fails("not found", "nope");
}

#[test]
fn the_audit_start_line_survives_the_deadline() {
    let mut env = TestEnv::new();
    let f = std::fs::File::create(env.p("sparse.bin")).unwrap();
    f.set_len(1 << 40).unwrap();
    let log = audit_log(&mut env);
    env.var("READBOX_TIMEOUT", "0.5")
        .var("READBOX_MAX_READ_BYTES", "4398046511104");
    env.run("wc", &["sparse.bin"]).fails("timeout", "0.5 s");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["event"], "start");
    assert_eq!(lines[0]["tool"], "wc");
    assert_eq!(lines[1]["id"], lines[0]["id"]);
    assert_eq!(lines[1]["exit_status"], 2);
}

#[test]
fn grep_answers_whole_at_the_deadline_after_its_workers_ended() {
    // grep's scoped workers can leave a wake-up pending on the main thread: the main thread must
    // not take it for the end of the watchdog's answer and exit under it.
    let mut env = TestEnv::new();
    let text = "line of text \x01\x02 with controls\n".repeat(2000);
    for d in 0..10 {
        for f in 0..40 {
            env.write(&format!("d{d}/f{f}.txt"), &text);
        }
    }
    let log = audit_log(&mut env);
    env.var("READBOX_TIMEOUT", "0.1")
        .var("READBOX_MAX_OUTPUT_BYTES", GIB)
        .var("READBOX_MAX_READ_BYTES", "4398046511104");
    let runs = 12;
    for _ in 0..runs {
        // The harness parses the envelope: an unfinished one fails here.
        let a = env.run("grep", &["", "."]);
        if a.error.is_some() {
            a.fails("timeout", "0.1 s");
        }
    }
    let ends = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"event\":\"end\""))
        .count();
    assert_eq!(ends, runs, "every call writes its audit end line");
}

#[test]
fn a_slow_reader_gets_a_whole_envelope_at_the_deadline() {
    // A 64 KiB block of NULs escapes to 384 KiB: a reader that takes 4 KiB every 10 ms needs a
    // second for it, far past the watchdog's grace, and must still get a whole answer in time.
    let mut env = TestEnv::new();
    let f = std::fs::File::create(env.p("sparse.bin")).unwrap();
    f.set_len(1 << 40).unwrap();
    env.var("READBOX_TIMEOUT", "0.5")
        .var("READBOX_MAX_OUTPUT_BYTES", GIB)
        .var("READBOX_MAX_READ_BYTES", "4398046511104");
    let mut child = env
        .readbox_command()
        .args(["cat", "sparse.bin"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let start = Instant::now();
    let mut answer = Vec::new();
    let mut piece = [0u8; 4096];
    loop {
        let n = stdout.read(&mut piece).unwrap();
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&piece[..n]);
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2));
    let reading = start.elapsed();
    assert!(reading < ENDS_BY, "{reading:?}");
    let v: serde_json::Value = serde_json::from_slice(&answer).expect("one whole envelope");
    assert!(
        v["error"].as_str().unwrap().starts_with("timeout:"),
        "{}",
        v["error"]
    );
    assert!(v["output"].as_str().unwrap().bytes().all(|b| b == 0));
}

#[test]
fn a_reader_that_stops_reading_cannot_keep_the_end_line_from_the_audit_log() {
    // At the deadline the main thread waits on standard input and output waits in the buffer;
    // the reader has stopped taking it. The end line is written before any write that could block.
    let mut env = TestEnv::new();
    let log = audit_log(&mut env);
    env.write("in.txt", format!("{}\n", "a".repeat(99)).repeat(1300));
    env.var("READBOX_TIMEOUT", "0.5")
        .var("READBOX_MAX_OUTPUT_BYTES", "100000000");
    // Input comes, then none with the pipe open; the reader takes 10,000 bytes, then nothing.
    let script = format!(
        "( cat in.txt; sleep 2 ) | '{}' cat - 2>/dev/null | ( head -c 10000 >/dev/null; sleep 2 )",
        crate::support::binary().display()
    );
    let status = env.shell(&script).status().unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    let events: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split("\"event\":\"").nth(1))
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    assert_eq!(events, ["start", "end"], "{text}");
}
