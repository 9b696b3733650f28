//! Answers that never mislead: a working directory outside the roots, literal patterns that
//! read as regular expressions, binary bytes after the first 8 KiB, walks that stop at
//! MAX_DEPTH, matches in long lines, tail of a growing file and of one huge line, ignore files
//! as git reads them (docs/contract.md#policy, docs/contract.md#tools).

use crate::support::TestEnv;

#[test]
fn a_working_directory_outside_the_roots_denies_relative_paths() {
    let mut env = TestEnv::new();
    env.write("a.txt", "hello\n");
    std::fs::write(env.outside().join("a.txt"), "elsewhere\n").unwrap();
    std::fs::create_dir_all(env.outside().join("sub")).unwrap();
    let root = env.root().display().to_string();
    let outside = env.outside().display().to_string();
    env.var("READBOX_ROOTS", &root).cd(&outside);
    let why = "the working directory is outside the roots";
    for (tool, args) in [
        ("cat", &["a.txt"][..]),
        ("ls", &[]),
        ("ls", &["sub"]),
        ("find", &[]),
        ("grep", &["hello"]),
        ("pwd", &[]),
        ("wc", &["./a.txt"]),
    ] {
        let a = env.run(tool, args);
        a.fails("denied", why);
        assert_eq!(a.output, "", "{tool} {args:?}");
        assert!(
            !a.error.as_deref().unwrap().contains(&outside),
            "the working directory is not named: {:?}",
            a.error
        );
    }
    // Absolute paths beneath the root still answer.
    env.run("cat", &[env.p("a.txt")]).ok("hello\n");
    // `cd` into a root makes relative paths work again, for the rest of the line only.
    let cmd = format!("cd {root} && cat a.txt");
    env.run("sh", &["-c", &cmd]).ok("hello\n");
    env.run("sh", &["-c", &format!("cd {root}; pwd")])
        .ok(&format!("{root}\n"));
}

#[test]
fn a_pattern_that_reads_as_a_regular_expression_gets_a_note_when_nothing_matched() {
    let env = TestEnv::new();
    env.write(
        "lib.rs",
        "use std::io;\n// TODO: later\n// FIXME: now\nimpl fmt::Display for X {}\n",
    );
    let note = |pattern: &str| {
        let a = env.run("grep", &[pattern, "lib.rs"]);
        a.no_match();
        a.notes.clone()
    };
    let literal = |notes: &[String]| notes.iter().any(|n| n.contains("literal text"));
    let n = note("^use");
    assert!(literal(&n), "{n:?}");
    assert!(n[0].ends_with("grep use lib.rs"), "{n:?}");
    let n = note("TODO\\|FIXME");
    assert!(
        n[0].ends_with("grep TODO lib.rs; grep FIXME lib.rs"),
        "{n:?}"
    );
    let n = note("(TODO|FIXME)");
    assert!(
        n[0].ends_with("grep TODO lib.rs; grep FIXME lib.rs"),
        "{n:?}"
    );
    let n = note("impl.*Display");
    assert!(n[0].ends_with("grep Display lib.rs"), "{n:?}");
    let n = note("\\bfor X\\b$");
    assert!(n[0].ends_with("grep 'for X' lib.rs"), "{n:?}");
    // A class or `\d` has no literal that comes close: the note says so and gives no call.
    for p in ["[Tt]odo", "\\d+"] {
        let n = note(p);
        assert!(literal(&n) && !n[0].contains("grep "), "{p}: {n:?}");
    }
    // Plain words, and a PATTERN whose specials found their literal text, get no such note.
    assert_eq!(note("absent"), Vec::<String>::new());
    assert_eq!(note("a.b"), Vec::<String>::new());
    env.run("grep", &["fmt::Display", "lib.rs"])
        .ok("lib.rs:4:impl fmt::Display for X {}\n");
}

#[test]
fn a_walk_says_how_many_directories_it_left_at_max_depth() {
    let env = TestEnv::new();
    let deep: Vec<String> = (0..25).map(|i| format!("d{i}")).collect();
    let deep = deep.join("/");
    env.write(&format!("{deep}/f.txt"), "needle\n");
    env.write("top.txt", "needle\n");
    let a = env.run("grep", &["needle"]);
    a.ok("top.txt:1:needle\n");
    assert_eq!(
        a.notes,
        [
            "1 directory at MAX_DEPTH 20 was not entered; grep needle . true false '*' 100 goes \
          deeper"
        ]
    );
    env.run("grep", &["needle", ".", "true", "false", "*", "100"])
        .ok(&format!("{deep}/f.txt:1:needle\ntop.txt:1:needle\n"));
    let a = env.run("find", &[".", "f.txt"]);
    a.ok("");
    assert_eq!(
        a.notes,
        ["1 directory at MAX_DEPTH 20 was not entered; find . f.txt all 100 goes deeper"]
    );
    // Not recursive: no subdirectory was meant to be entered.
    assert!(env.run("grep", &["needle", ".", "false"]).notes.is_empty());
    let a = env.run("find", &[".", "*", "all", "100"]);
    assert!(a.notes.is_empty(), "{:?}", a.notes);
}

#[test]
fn gitignore_lines_lose_one_cr_and_unescaped_trailing_spaces_as_in_git() {
    let env = TestEnv::new();
    env.write(".git/HEAD", "ref: refs/heads/main\n");
    // One CR before LF goes; trailing spaces go unless escaped; a trailing tab stays.
    env.write(
        ".gitignore",
        "a.txt\t\nb.txt   \nc\\ \nd.txt\r\ne.txt\r\r\nlast.txt\r",
    );
    for n in [
        "a.txt", "a.txt\t", "b.txt", "c ", "c", "d.txt", "e.txt", "e.txt\r", "last.txt", "keep",
    ] {
        env.write(n, "x\n");
    }
    env.run("find", &[".", "*", "file"])
        .ok(".gitignore\na.txt\nc\ne.txt\nkeep\n");
}

#[test]
fn a_linked_worktree_applies_its_main_repositorys_info_exclude() {
    let env = TestEnv::new();
    let main = env.p("main/.git");
    env.write("main/.git/HEAD", "ref: refs/heads/main\n");
    env.write("main/.git/info/exclude", "ignored.txt\n");
    env.write("main/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
    env.write("main/.git/worktrees/wt/commondir", "../..\n");
    env.write(
        "wt/.git",
        format!("gitdir: {}\n", main.join("worktrees/wt").display()),
    );
    env.write("wt/ignored.txt", "needle\n");
    env.write("wt/kept.txt", "needle\n");
    env.run("grep", &["needle", "wt"])
        .ok("wt/kept.txt:1:needle\n");
    // A relative gitdir (as `git worktree add --relative-paths` writes) works alike.
    env.write("wt2/.git", "gitdir: ../main/.git/worktrees/wt\n");
    env.write("wt2/ignored.txt", "needle\n");
    env.run("grep", &["needle", "wt2"]).no_match();
}

#[test]
fn a_nul_after_the_first_8_kib_makes_the_file_binary_from_there() {
    let mut env = TestEnv::new();
    let mut pdf = b"%PDF-1.7\nneedle before\n".to_vec();
    pdf.extend(b"text line\n".repeat(2000));
    pdf.extend(b"stream\x00\x1b[2Jneedle\x00\n");
    pdf.extend(b"more needle\n".repeat(3));
    env.write("doc.pdf", &pdf);
    env.write("plain.txt", "needle here\n");
    // A directory search: the lines before the NUL's line, then the file is skipped and counted.
    let a = env.run("grep", &["needle"]);
    a.ok("doc.pdf:2:needle before\nplain.txt:1:needle here\n");
    assert_eq!(
        a.notes,
        ["1 binary file skipped (a NUL byte); name one as PATH to search it"]
    );
    // Named as PATH: its text lines, then one line for the rest, as ripgrep and GNU grep.
    env.run("grep", &["needle", "doc.pdf"])
        .ok("doc.pdf:2:needle before\ndoc.pdf: binary file matches\n");
    env.run("grep", &["stream", "doc.pdf"])
        .ok("doc.pdf: binary file matches\n");
    env.run("grep", &["absent", "doc.pdf"]).no_match();
    // A line longer than a block that holds a NUL is binary too.
    let mut long = b"needle ".repeat(20_000);
    long.extend(b"\x00\x1b[2J\n");
    env.write("big.bin", &long);
    let a = env.run("grep", &["needle", "."]);
    assert!(!a.output.contains("big.bin"), "{:?}", &a.output[..80]);
    assert_eq!(
        a.notes,
        ["2 binary files skipped (a NUL byte); name one as PATH to search it"]
    );
    env.run("grep", &["needle", "big.bin"])
        .ok("big.bin: binary file matches\n");
    // No raw NUL or ESC reaches the text format.
    env.var("READBOX_FORMAT", "text");
    let a = env.run("grep", &["needle", "."]);
    assert!(
        !a.stdout.contains(&0) && !a.stdout.contains(&0x1b),
        "{:?}",
        String::from_utf8_lossy(&a.stdout)
    );
}

#[test]
fn a_match_in_a_line_longer_than_the_room_is_shown_in_a_window() {
    let env = TestEnv::new();
    // Longer than a block (read in pieces), and shorter than a block but longer than the cap.
    let long = format!("{}needle{}\n", "x".repeat(41_912), "y".repeat(42_000));
    env.write("app.min.js", &long);
    let mid = format!(
        "{}needle{}\nsecond needle\n",
        "é".repeat(10_000),
        "z".repeat(20_000)
    );
    env.write("mid.txt", &mid);
    let window = |a: &crate::support::Answer, name: &str, at: usize| {
        let line = a
            .output
            .lines()
            .find(|l| l.starts_with(&format!("{name}:1:…")))
            .unwrap_or_else(|| panic!("{name}: no window in {:?}", a.output));
        assert!(line.ends_with('…') && line.contains("needle"), "{line}");
        assert!(line.len() <= 4096 + 20, "{}", line.len());
        assert!(
            a.notes
                .iter()
                .any(|n| n.starts_with(&format!("line 1 of {name} is longer"))
                    && n.ends_with(&format!("around its first match at byte {at}"))),
            "{:?}",
            a.notes
        );
    };
    let a = env.run("grep", &["needle", "app.min.js"]);
    window(&a, "app.min.js", 41_912);
    let a = env.run("grep", &["needle", "mid.txt"]);
    window(&a, "mid.txt", 20_000);
    assert!(
        a.output.ends_with("mid.txt:2:second needle\n"),
        "{}",
        a.output
    );
    // The note's bytes are the window's, on character boundaries.
    let bytes: Vec<usize> = a.notes[0]
        .split(' ')
        .filter_map(|w| w.parse().ok())
        .collect();
    let (from, to) = (bytes[1], bytes[2]);
    let shown = a.output.lines().next().unwrap();
    let inner = shown
        .strip_prefix("mid.txt:1:…")
        .and_then(|s| s.strip_suffix('…'))
        .unwrap();
    assert_eq!(inner, &mid[from..to]);
    // A directory search shows the same windows.
    let a = env.run("grep", &["needle"]);
    window(&a, "app.min.js", 41_912);
    window(&a, "mid.txt", 20_000);
    assert!(a.output.len() <= 32_768);
    // A line that fits is shown whole.
    env.write("short.txt", format!("{}needle\n", "s".repeat(1000)));
    let a = env.run("grep", &["needle", "short.txt"]);
    assert_eq!(a.output.len(), "short.txt:1:".len() + 1006 + 1);
    assert!(a.notes.is_empty());
}

#[test]
fn tail_of_a_growing_file_gives_the_lines_it_asked_for() {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    let env = TestEnv::new();
    let log = env.write("app.log", b"steady line\n".repeat(400_000));
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().append(true).open(log).unwrap();
            while !stop.load(Ordering::Relaxed) {
                f.write_all(&b"grown\n".repeat(50)).unwrap();
            }
        })
    };
    // The calls start once the file grows.
    while std::fs::metadata(env.p("app.log")).unwrap().len() <= 4_800_000 {
        std::thread::yield_now();
    }
    // Whatever the file holds by the time each call reads it, the answer is LINES whole lines
    // of the file as it was when tail found its end.
    for _ in 0..10 {
        let a = env.run("tail", &["app.log", "4"]);
        assert_eq!(a.error, None);
        assert!(!a.truncated);
        let lines = a.lines();
        assert_eq!(lines.len(), 4, "{:?}", &a.output[..a.output.len().min(120)]);
        // A writer may be inside a line at the end tail found: the last line may be its start.
        let whole = |l: &&str| *l == "steady line" || *l == "grown";
        assert!(lines[..3].iter().all(whole), "{lines:?}");
        assert!(
            "grown".starts_with(lines[3]) || "steady line".starts_with(lines[3]),
            "{lines:?}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
}

#[test]
fn tail_of_one_huge_line_answers_its_end_within_the_budget() {
    let env = TestEnv::new();
    let mut big = vec![b'a'; 12_000_000];
    big.extend("é".repeat(30_000).as_bytes());
    big.extend(b"THE END\n");
    env.write("one.js", &big);
    let a = env.run("tail", &["one.js", "1"]);
    assert_eq!(a.error, None);
    assert!(a.truncated);
    assert!(a.output.ends_with("éTHE END\n"));
    assert!(a.output.starts_with('é'), "cut on a character boundary");
    assert!(a.output.len() <= 32_768 && a.output.len() > 32_000);
    // With whole lines after it, those are the answer; the long line is not shown.
    let mut two = vec![b'b'; 12_000_000];
    two.extend(b"\nlast line\n");
    env.write("two.js", &two);
    let a = env.run("tail", &["two.js", "2"]);
    assert!(a.truncated);
    assert_eq!(a.output, "last line\n");
    // A read budget smaller than what the cap can show still stops the scan: `limit:`.
    let mut small = TestEnv::new();
    small.write("one.js", &big);
    small.var("READBOX_MAX_READ_BYTES", "10000");
    small
        .run("tail", &["one.js", "1"])
        .fails("limit", "max_read_bytes");
}
