//! Landlock holds even when the user-space gate is skipped: a child process applies readbox's
//! own restriction, then reads with plain `std::fs`. Reading beneath the root must work, reading
//! outside it must fail. And `readbox mcp`'s lighter restriction leaves reading and starting
//! programs alone but refuses every write except to the audit log. The child is this test binary
//! started again, so the shipped binary has no test-only entry point. (A test binary of its own,
//! without the libtest harness, because the restriction must happen before any other thread
//! exists.)

use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Command;

use readbox::sandbox::{Enforcement, restrict, restrict_writes};

fn child(root: &Path, inside: &Path, outside: &Path) -> i32 {
    let fd: OwnedFd = std::fs::File::open(root).expect("open the root").into();
    match restrict(&[fd]) {
        Enforcement::None(why) => {
            println!("not enforced: {why}");
            return 3;
        }
        Enforcement::Full | Enforcement::Partial => {}
    }
    if std::fs::read(inside).is_err() {
        println!("could not read beneath the root");
        return 1;
    }
    match std::fs::read(outside) {
        Ok(_) => {
            println!("read a file outside the root");
            1
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            // Writing is refused too, even beneath the root.
            if std::fs::write(root.join("new.txt"), "x").is_ok() {
                println!("wrote beneath the root");
                return 1;
            }
            0
        }
        Err(e) => {
            println!("unexpected error reading outside: {e}");
            1
        }
    }
}

/// `readbox mcp`'s restriction: `log` stays writable, nothing else is; reading and starting a
/// program still work.
fn writes_child(dir: &Path, log: &Path, outside: &Path) -> i32 {
    let open_log = || std::fs::OpenOptions::new().append(true).open(log);
    let fd: OwnedFd = open_log().expect("open the log").into();
    match restrict_writes(&[fd]) {
        Enforcement::None(why) => {
            println!("not enforced: {why}");
            return 3;
        }
        Enforcement::Full | Enforcement::Partial => {}
    }
    use std::io::Write;
    if open_log().and_then(|mut f| f.write_all(b"line\n")).is_err() {
        println!("could not append to the allowed file");
        return 1;
    }
    if std::fs::write(dir.join("new.txt"), "x").is_ok() {
        println!("made a new file");
        return 1;
    }
    if std::fs::read(outside).is_err() {
        println!("could not read a file");
        return 1;
    }
    let me = std::env::current_exe().unwrap();
    match Command::new(me).arg("--list").output() {
        Ok(o) if o.status.success() => 0,
        other => {
            println!("could not start a program: {other:?}");
            1
        }
    }
}

/// Runs one child scenario and prints a libtest-style line; returns whether it passed.
fn scenario(name: &str, out: std::process::Output) -> (u32, u32, u32) {
    let said = String::from_utf8_lossy(&out.stdout);
    match out.status.code() {
        Some(0) => {
            println!("test {name} ... ok");
            (1, 0, 0)
        }
        Some(3) => {
            println!("test {name} ... skipped ({})", said.trim());
            (0, 0, 1)
        }
        _ => {
            println!("test {name} ... FAILED: {}", said.trim());
            (0, 1, 0)
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let p = |i: usize| Path::new(&args[i]).to_path_buf();
    match args.get(1).map(String::as_str) {
        Some("--landlock-child") => std::process::exit(child(&p(2), &p(3), &p(4))),
        Some("--writes-child") => std::process::exit(writes_child(&p(2), &p(3), &p(4))),
        _ => {}
    }
    // libtest-style arguments (filters, --list, ...) are accepted and ignored.
    if args.iter().any(|a| a == "--list") {
        println!("landlock_blocks_reads_outside_the_roots: test");
        println!("mcp_server_writes_only_the_audit_log: test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("inside.txt"), "in\n").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "out\n").unwrap();
    let out = Command::new(&args[0])
        .arg("--landlock-child")
        .arg(&root)
        .arg(root.join("inside.txt"))
        .arg(dir.path().join("outside.txt"))
        .output()
        .expect("start the child");
    let mut totals = scenario("landlock_blocks_reads_outside_the_roots", out);
    let log = dir.path().join("audit.jsonl");
    std::fs::write(&log, "").unwrap();
    let out = Command::new(&args[0])
        .arg("--writes-child")
        .arg(dir.path())
        .arg(&log)
        .arg(dir.path().join("outside.txt"))
        .output()
        .expect("start the child");
    let more = scenario("mcp_server_writes_only_the_audit_log", out);
    totals = (totals.0 + more.0, totals.1 + more.1, totals.2 + more.2);
    println!(
        "\ntest result: {}. {} passed; {} failed; {} skipped",
        if totals.1 == 0 { "ok" } else { "FAILED" },
        totals.0,
        totals.1,
        totals.2
    );
    if totals.1 > 0 {
        std::process::exit(1);
    }
}
