//! Landlock holds even when the user-space gate is skipped: a child process applies readbox's
//! own restriction, then reads with plain `std::fs`. Reading beneath the root must work, reading
//! outside it must fail. The child is this test binary started again, so the shipped binary has
//! no test-only entry point. (A test binary of its own, without the libtest harness, because the
//! restriction must happen before any other thread exists.)

use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Command;

use readbox::sandbox::{Enforcement, restrict};

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--landlock-child") {
        let p = |i: usize| Path::new(&args[i]).to_path_buf();
        std::process::exit(child(&p(2), &p(3), &p(4)));
    }
    // libtest-style arguments (filters, --list, ...) are accepted and ignored: there is one test.
    if args.iter().any(|a| a == "--list") {
        println!("landlock_blocks_reads_outside_the_roots: test");
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
    let said = String::from_utf8_lossy(&out.stdout);
    match out.status.code() {
        Some(0) => println!(
            "test landlock_blocks_reads_outside_the_roots ... ok\n\ntest result: ok. 1 passed; 0 failed"
        ),
        Some(3) => println!(
            "test landlock_blocks_reads_outside_the_roots ... skipped ({})\n\ntest result: ok. 0 passed; 0 failed; 1 skipped",
            said.trim()
        ),
        _ => {
            println!(
                "test landlock_blocks_reads_outside_the_roots ... FAILED: {}",
                said.trim()
            );
            std::process::exit(1);
        }
    }
}
