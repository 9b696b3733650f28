//! ls, find and grep: their walks and what they print (docs/contract.md#confinement, #tools,
//! #ignore-files and the #decisions-on-details on them).
//!
//! What these tests pin down: printed paths are the caller's PATH joined with the entry below it;
//! walks are depth-first with siblings in byte order of their names; directories end with `/`
//! (and symlinks with `@` in ls); symlinks are listed but never followed; FIFOs and sockets are
//! left out; excluded entries are never listed and excluded (or ignored) directories never
//! entered; `.git`/`.hg`/`.svn` and what `.gitignore`, `.ignore` and `.git/info/exclude` ignore
//! are skipped with git's semantics and ripgrep's precedence; find's name globs, types and
//! depths; grep's literal matching, line numbering, case folding, binary detection, exit
//! statuses, budgets and truncation, including files far larger than the 64 KiB read block
//! whose matches straddle buffer seams and whose lines are longer than the buffer.

use std::fmt::Write as _;

use crate::support::{Answer, Rng, TestEnv, capped, char_prefix};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The size of readbox's read buffer; the big-file tests put seams of this size (and of half of
/// it) inside matches and lines.
const READ_BUFFER: usize = 128 * 1024;

/// Filler text for the big files, from the shared generator, so that they are the same on every
/// run.
struct Filler {
    rng: Rng,
    /// Random filler text, copied from at random offsets (fast even in a debug build).
    pool: Vec<u8>,
}

impl Filler {
    fn new(seed: u64) -> Filler {
        // The alphabet has no `z`, `q`, `#` or capitals, so the needles below can never appear
        // by chance.
        const ALPHABET: &[u8] = b"abcdefghijklmnop rstuvwxy";
        let mut rng = Rng::new(seed);
        let pool = (0..64 * 1024)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect();
        Filler { rng, pool }
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng.below(n)
    }

    /// Appends `len` bytes of filler text (no `\n`).
    fn text(&mut self, out: &mut Vec<u8>, mut len: usize) {
        out.reserve(len);
        while len > 0 {
            let at = self.below(self.pool.len());
            let n = len.min(self.pool.len() - at);
            out.extend_from_slice(&self.pool[at..at + n]);
            len -= n;
        }
    }
}

/// The needle of the big-file tests, in the case a case-sensitive search looks for.
const NEEDLE: &[u8] = b"Zq#NeEdLe";
/// The same needle in another case: only a case-insensitive search finds it.
const NEEDLE_LOWER: &[u8] = b"zq#needle";

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    // std's substring search is optimised even in a debug build; the window scan is the
    // fallback for bytes that are not UTF-8.
    match (std::str::from_utf8(hay), std::str::from_utf8(needle)) {
        (Ok(h), Ok(n)) => h.contains(n),
        _ => needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle),
    }
}

/// What grep must print for `content` searched as `display`, computed line by line with none of
/// readbox's buffering: split on `\n`, number from 1, the empty piece after a final `\n` is no
/// line, a `\r` stays in the line.
fn expected_grep(display: &str, content: &[u8], hit: impl Fn(&[u8]) -> bool) -> String {
    let mut out = String::new();
    if content.is_empty() {
        return out;
    }
    let mut lines: Vec<&[u8]> = content.split(|&b| b == b'\n').collect();
    if content.ends_with(b"\n") {
        lines.pop();
    }
    for (i, line) in lines.iter().enumerate() {
        if hit(line) {
            let text = std::str::from_utf8(line).expect("test content is UTF-8");
            writeln!(out, "{display}:{}:{text}", i + 1).unwrap();
        }
    }
    out
}

/// Compares two long outputs line by line and reports the first difference briefly (a failing
/// assert_eq on megabytes of text would be unreadable).
#[track_caller]
fn assert_same_lines(actual: &str, expected: &str, what: &str) {
    let short = |s: &str| -> String {
        if s.len() <= 160 {
            s.to_string()
        } else {
            format!(
                "{}…({} bytes)…{}",
                char_prefix(s, 80),
                s.len(),
                &s[s.len() - 60..]
            )
        }
    };
    let a: Vec<&str> = actual.split_inclusive('\n').collect();
    let e: Vec<&str> = expected.split_inclusive('\n').collect();
    for (i, (x, y)) in a.iter().zip(e.iter()).enumerate() {
        assert!(
            x == y,
            "{what}: output line {} differs\n  readbox:  {}\n  expected: {}",
            i + 1,
            short(x),
            short(y)
        );
    }
    assert_eq!(
        a.len(),
        e.len(),
        "{what}: readbox printed {} lines, expected {} (first extra: {:?})",
        a.len(),
        e.len(),
        a.get(e.len()).or(e.get(a.len())).map(|s| short(s))
    );
}

/// Asserts a `limit:` error whose partial output is exactly `output`.
#[track_caller]
fn limited(a: &Answer, output: &str) {
    a.fails("limit", "");
    assert_eq!(a.output, output, "partial output of {}", a.shown);
    assert!(
        !a.truncated,
        "a limit error is not a truncation: {}",
        a.shown
    );
}

/// Asserts a truncated success whose output is exactly `full` cut to `cap` bytes.
#[track_caller]
fn truncated_to(a: &Answer, full: &str, cap: usize, status: i32) {
    assert_eq!(a.error, None, "truncation is not an error: {}", a.shown);
    assert!(a.truncated, "expected truncated output for {}", a.shown);
    assert_eq!(a.status, status, "exit status of {}", a.shown);
    assert!(
        full.len() > cap,
        "test setup: the full output must exceed the cap"
    );
    assert!(
        a.output == capped(full, cap),
        "{}: output is not the whole lines of the full output that fit {cap} bytes: got {} bytes \
         ending {:?}",
        a.shown,
        a.output.len(),
        &a.output[a.output.len().saturating_sub(60)..]
    );
    assert!(
        !a.notes.is_empty(),
        "a truncated output has a note: {}",
        a.shown
    );
}

/// A matched line longer than the cap shown as a window around its first match
/// (docs/contract.md#tools): line `line` of `name` is in the output, holds `text` (the file's
/// text of the match) between `…` marks where it was cut, and a note gives its offset; the
/// output keeps within `cap`.
#[track_caller]
fn window_shows(a: &Answer, name: &str, line: u64, text: &str, cap: usize) {
    assert_eq!(a.error, None, "a window is not an error: {}", a.shown);
    assert!(
        a.output.len() <= cap,
        "{}: {} bytes",
        a.shown,
        a.output.len()
    );
    let prefix = format!("{name}:{line}:");
    let shown = a
        .output
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{}: no line {line} in {:?}", a.shown, a.output));
    assert!(
        shown.contains(text) && (shown.starts_with(&format!("{prefix}…")) || shown.ends_with('…')),
        "{}: the window does not hold the match: {shown:?}",
        a.shown
    );
    let note = format!("line {line} of {name} is longer than the room left under the cap");
    assert!(
        a.notes.iter().any(|n| n.starts_with(&note)),
        "{}: {:?}",
        a.shown,
        a.notes
    );
}

// ---------------------------------------------------------------------------------------------
// ls
// ---------------------------------------------------------------------------------------------

#[test]
fn ls_sorts_by_name_bytes_and_marks_directories_and_symlinks() {
    let env = TestEnv::new();
    // Byte order puts capitals, '#', '_' and '-' where ASCII puts them and 'é' last; a locale
    // sort would not.
    for n in ["b", "B", "_x", "a.txt", "a-b", "é", "#c", "with space"] {
        env.write(n, "x\n");
    }
    env.write("a/inner", "x\n");
    env.symlink("z", "b");
    // A link to a directory is a link (@), not a directory (/): ls does not follow it.
    env.symlink("dl", "a");
    env.symlink("dangling", "nowhere");
    let listing = "#c\nB\n_x\na/\na-b\na.txt\nb\ndangling@\ndl@\nwith space\nz@\né\n";
    env.both("ls", &[] as &[&str]).ok(listing);
    env.both("ls", &["."]).ok(listing);
    env.both("ls", &["./"]).ok(listing);
}

#[test]
fn ls_shows_hidden_names_only_with_show_hidden_and_excluded_names_never() {
    let env = TestEnv::new();
    env.write(".h", "x\n");
    env.write(".hdir/x", "x\n");
    env.write("x", "x\n");
    // Default excludes, also in another case: a secret does not become public by its case.
    env.secret(".env");
    env.secret(".ENV.local");
    env.secret(".ssh/id_rsa");
    env.secret("k.pem");
    env.secret("ID.KEY");
    env.both("ls", &[] as &[&str]).ok("x\n");
    env.both("ls", &[".", "false"]).ok("x\n");
    env.both("ls", &[".", "true"]).ok(".h\n.hdir/\nx\n");
}

#[test]
fn ls_of_a_file_prints_the_path_as_given() {
    let env = TestEnv::new();
    env.write("src/a.rs", "x\n");
    env.both("ls", &["src/a.rs"]).ok("src/a.rs\n");
    env.both("ls", &["./src/../src/a.rs"])
        .ok("./src/../src/a.rs\n");
    let abs = env.p("src/a.rs").to_str().unwrap().to_string();
    env.both("ls", &[abs.as_str()]).ok(&format!("{abs}\n"));
}

#[test]
fn ls_of_a_symlink_to_a_directory_lists_the_target() {
    let env = TestEnv::new();
    env.write("real/one", "1\n");
    env.write("real/two/x", "2\n");
    env.symlink("alias", "real");
    env.both("ls", &["alias"]).ok("one\ntwo/\n");
    env.both("ls", &["alias/"]).ok("one\ntwo/\n");
}

#[test]
fn walks_leave_out_fifos_and_sockets_without_blocking() {
    let mut env = TestEnv::new();
    // A walk that opened the FIFO would block until the watchdog fires: keep that short.
    env.var("READBOX_TIMEOUT", "5");
    env.write("f", "x\n");
    env.fifo("pipe");
    let _sock = std::os::unix::net::UnixListener::bind(env.p("sock")).unwrap();
    env.both("ls", &[] as &[&str]).ok("f\n");
    env.both("find", &[] as &[&str]).ok("f\n");
    env.both("grep", &[""]).ok("f:1:x\n");
}

#[test]
fn ls_does_not_apply_ignore_files_or_skip_vcs_folders() {
    let env = TestEnv::new();
    // Ignore files govern recursive find and grep only; ls shows what is there.
    env.write(".git/HEAD", "ref: refs/heads/main\n");
    env.write(".gitignore", "*.log\nbuild/\n");
    env.write("debug.log", "x\n");
    env.write("build/o", "x\n");
    env.both("ls", &[".", "true"])
        .ok(".git/\n.gitignore\nbuild/\ndebug.log\n");
}

#[test]
fn ls_errors_name_the_path_as_given() {
    let env = TestEnv::new();
    env.mkdir("empty");
    env.both("ls", &["empty"]).ok("");
    env.both("ls", &["nope"]).fails("not found", "nope");
    env.both("ls", &["../outside"]).denied("../outside");
}

// ---------------------------------------------------------------------------------------------
// Output paths and walk order (find and grep)
// ---------------------------------------------------------------------------------------------

#[test]
fn find_prints_paths_as_the_caller_would_reach_them() {
    let mut env = TestEnv::new();
    env.write("a.txt", "x\n");
    env.write("src/a.rs", "x\n");
    env.write("src/d/b.rs", "x\n");
    // No PATH and `.`: no `./` prefix, as fd prints.
    let plain = "a.txt\nsrc/\nsrc/a.rs\nsrc/d/\nsrc/d/b.rs\n";
    env.both("find", &[] as &[&str]).ok(plain);
    env.both("find", &["."]).ok(plain);
    // `./` and `./src/`: the PATH as given, joined by one `/`.
    env.both("find", &["./"])
        .ok("./a.txt\n./src/\n./src/a.rs\n./src/d/\n./src/d/b.rs\n");
    env.both("find", &["./src/"])
        .ok("./src/a.rs\n./src/d/\n./src/d/b.rs\n");
    env.both("find", &["src"])
        .ok("src/a.rs\nsrc/d/\nsrc/d/b.rs\n");
    env.both("find", &["src/"])
        .ok("src/a.rs\nsrc/d/\nsrc/d/b.rs\n");
    // `..` stays as written: the path is how the caller reaches the entry, not its resolution.
    env.both("find", &["src/d/.."])
        .ok("src/d/../a.rs\nsrc/d/../d/\nsrc/d/../d/b.rs\n");
    let abs = env.p("src").to_str().unwrap().to_string();
    env.both("find", &[abs.as_str()])
        .ok(&format!("{abs}/a.rs\n{abs}/d/\n{abs}/d/b.rs\n"));
    // From a subdirectory, relative paths start from there. The root stays where it was (by
    // default the root is the working directory, which the cd would move).
    let root = env.root().to_str().unwrap().to_string();
    env.var("READBOX_ROOTS", &root);
    env.cd("src");
    env.both("find", &["../src/d"]).ok("../src/d/b.rs\n");
    env.both("find", &[".."])
        .ok("../a.txt\n../src/\n../src/a.rs\n../src/d/\n../src/d/b.rs\n");
}

#[test]
fn grep_prints_paths_as_the_caller_would_reach_them() {
    let mut env = TestEnv::new();
    env.write("a.txt", "x\n");
    env.write("src/a.rs", "x\n");
    env.both("grep", &["x"]).ok("a.txt:1:x\nsrc/a.rs:1:x\n");
    env.both("grep", &["x", "."])
        .ok("a.txt:1:x\nsrc/a.rs:1:x\n");
    env.both("grep", &["x", "./"])
        .ok("./a.txt:1:x\n./src/a.rs:1:x\n");
    env.both("grep", &["x", "src/"]).ok("src/a.rs:1:x\n");
    env.both("grep", &["x", "./src/"]).ok("./src/a.rs:1:x\n");
    env.both("grep", &["x", "./src/a.rs"])
        .ok("./src/a.rs:1:x\n");
    let abs = env.p("src").to_str().unwrap().to_string();
    env.both("grep", &["x", abs.as_str()])
        .ok(&format!("{abs}/a.rs:1:x\n"));
    let root = env.root().to_str().unwrap().to_string();
    env.var("READBOX_ROOTS", &root);
    env.cd("src");
    env.both("grep", &["x", ".."])
        .ok("../a.txt:1:x\n../src/a.rs:1:x\n");
}

#[test]
fn walks_are_depth_first_with_siblings_in_byte_order_of_names() {
    let env = TestEnv::new();
    // `a/` sorts before `a-b` by name ("a" < "a-b"), although the full path "a-b/q" sorts
    // before "a/z.txt" ('-' < '/'): the order is by names, and a directory's entries follow it.
    for p in [
        "a.txt", "a/z.txt", "a-b/q", "B.txt", "a/A/1", "é/x", "Z/y", "_u",
    ] {
        env.write(p, "n\n");
    }
    let listing = "B.txt\nZ/\nZ/y\n_u\na/\na/A/\na/A/1\na/z.txt\na-b/\na-b/q\na.txt\né/\né/x\n";
    env.both("find", &[] as &[&str]).ok(listing);
    // grep searches files in the order find lists them.
    let files = env.both("find", &[".", "*", "file"]).output.clone();
    let want: String = files.lines().map(|f| format!("{f}:1:n\n")).collect();
    assert_eq!(want.lines().count(), 8, "test setup: eight files");
    env.both("grep", &["n"]).ok(&want);
}

#[test]
fn names_that_are_not_utf8_sort_by_raw_bytes_and_print_quoted() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    // Raw bytes: "\xc3.txt" < "\xc3\xa9.txt" ('.' < 0xa9). Their lossy forms sort the other
    // way ("é.txt" < "\u{fffd}.txt"), so this tells a sort on raw names from one on text.
    for name in [&b"\xc3.txt"[..], "é.txt".as_bytes(), b"n\xffz"] {
        std::fs::write(env.root().join(std::ffi::OsStr::from_bytes(name)), "hit\n").unwrap();
    }
    env.both("find", &[] as &[&str])
        .ok("$'n\\xffz'\n$'\\xc3.txt'\né.txt\n");
    env.both("grep", &["hit"])
        .ok("$'n\\xffz':1:hit\n$'\\xc3.txt':1:hit\né.txt:1:hit\n");
    env.both("ls", &[] as &[&str])
        .ok("$'n\\xffz'\n$'\\xc3.txt'\né.txt\n");
}

#[test]
fn ls_output_is_cut_at_max_output_bytes_and_exits_0() {
    let mut env = TestEnv::new();
    for i in 0..50 {
        env.write(&format!("file{i:02}"), "x\n");
    }
    let full: String = (0..50).map(|i| format!("file{i:02}\n")).collect();
    env.both("ls", &[] as &[&str]).ok(&full);
    env.var("READBOX_MAX_OUTPUT_BYTES", "20");
    truncated_to(&env.both("ls", &[] as &[&str]), &full, 20, 0);
}

// ---------------------------------------------------------------------------------------------
// Symlinks, special files, hidden and excluded entries
// ---------------------------------------------------------------------------------------------

#[test]
fn walks_list_symlinks_but_never_follow_them() {
    let env = TestEnv::new();
    env.write("real/f.txt", "needle\n");
    env.symlink("alias", "real");
    env.symlink("flink.txt", "real/f.txt");
    env.symlink("dangling", "missing");
    env.symlink("loop", "loop");
    env.symlink("up", ".");
    env.both("ls", &[] as &[&str])
        .ok("alias@\ndangling@\nflink.txt@\nloop@\nreal/\nup@\n");
    // find lists links (all types) without a suffix, even a link to a directory, and never
    // descends through `alias` or the `up` loop.
    env.both("find", &[] as &[&str])
        .ok("alias\ndangling\nflink.txt\nloop\nreal/\nreal/f.txt\nup\n");
    env.both("find", &[".", "*", "file"]).ok("real/f.txt\n");
    env.both("find", &[".", "*", "directory"]).ok("real/\n");
    // grep reads the file once, through its real place; the link to it is not followed.
    env.both("grep", &["needle"]).ok("real/f.txt:1:needle\n");
    // Named explicitly, a link is resolved like any path (and stays within the root).
    env.both("grep", &["needle", "flink.txt"])
        .ok("flink.txt:1:needle\n");
    env.both("find", &["alias"]).ok("alias/f.txt\n");
    env.both("grep", &["needle", "alias"])
        .ok("alias/f.txt:1:needle\n");
}

#[test]
fn walks_never_follow_a_link_out_of_the_root() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    env.symlink("outdir", env.outside());
    env.symlink("outfile", env.outside().join("secret.txt"));
    // The support layer fails any answer that carries the outside canary.
    env.both("find", &[] as &[&str])
        .ok("a.txt\noutdir\noutfile\n");
    env.both("grep", &["CANARY"]).no_match();
    env.both("grep", &["", ".", "true", "false", "*", "5"])
        .ok("a.txt:1:x\n");
}

#[test]
fn find_and_grep_include_hidden_entries() {
    let env = TestEnv::new();
    env.write(".github/ci.yml", "hit\n");
    env.write(".hidden", "hit\n");
    env.write("v", "hit\n");
    env.both("find", &[] as &[&str])
        .ok(".github/\n.github/ci.yml\n.hidden\nv\n");
    env.both("grep", &["hit"])
        .ok(".github/ci.yml:1:hit\n.hidden:1:hit\nv:1:hit\n");
}

#[test]
fn walks_never_list_excluded_entries_at_any_depth() {
    let env = TestEnv::new();
    env.write("a/ok.txt", "CANARY-free\n");
    env.secret(".env");
    env.secret("a/.env.prod");
    env.secret("a/b/.ssh/id_ed25519");
    env.secret("a/.aws/credentials");
    env.secret("a/b/c/TLS.KEY");
    env.secret("a/b/c/server.pem");
    env.both("find", &[] as &[&str])
        .ok("a/\na/b/\na/b/c/\na/ok.txt\n");
    // Asking by name, by type, or by FILE_PATTERN does not bring them back.
    env.both("find", &[".", "*.pem"]).ok("");
    env.both("find", &[".", ".ssh", "directory"]).ok("");
    env.both("grep", &["CANARY", ".", "true", "false", "*.pem"])
        .no_match();
    env.both("grep", &["CANARY"]).ok("a/ok.txt:1:CANARY-free\n");
    env.both("ls", &["a", "true"]).ok("b/\nok.txt\n");
}

#[test]
fn excluded_and_ignored_directories_are_not_entered_so_their_entries_do_not_count() {
    let mut env = TestEnv::new();
    env.write("src/main.js", "needle\n");
    // 100 entries each: far more than the 20 entries the calls below may examine.
    for i in 0..100 {
        env.write(&format!("vendor/p{i:03}.js"), "needle\n");
        env.write(&format!("deps/d{i:03}.js"), "needle\n");
        env.write(&format!(".git/objects/o{i:03}"), "needle\n");
    }
    env.write(".gitignore", "deps/\n");
    env.var("READBOX_EXCLUDE", "vendor");
    env.var("READBOX_MAX_ENTRIES", "20");
    // Root: .git .gitignore deps src vendor (5), src: 1. Nothing else may be read.
    env.both("find", &[] as &[&str])
        .ok(".gitignore\nsrc/\nsrc/main.js\n");
    env.both("grep", &["needle"]).ok("src/main.js:1:needle\n");
    env.both("ls", &[".", "true"])
        .ok(".git/\n.gitignore\ndeps/\nsrc/\n");
    // The control: with ignore files off, deps/ and .git/ are walked and the budget runs out.
    env.var("READBOX_RESPECT_IGNORE_FILES", "false");
    env.both("find", &[] as &[&str]).fails("limit", "");
}

// ---------------------------------------------------------------------------------------------
// Version control folders and ignore files
// ---------------------------------------------------------------------------------------------

#[test]
fn recursive_find_and_grep_skip_git_hg_and_svn_folders() {
    let mut env = TestEnv::new();
    env.write(".git/HEAD", "hit\n");
    env.write(".hg/store", "hit\n");
    env.write(".svn/entries", "hit\n");
    env.write("sub/.git/config", "hit\n");
    env.write(".github/w.yml", "hit\n");
    env.write("a.txt", "hit\n");
    env.both("find", &[] as &[&str])
        .ok(".github/\n.github/w.yml\na.txt\nsub/\n");
    env.both("grep", &["hit"])
        .ok(".github/w.yml:1:hit\na.txt:1:hit\n");
    // A file named explicitly is searched.
    env.both("grep", &["hit", ".git/HEAD"])
        .ok(".git/HEAD:1:hit\n");
    // docs/contract.md#decisions-on-details: respect_ignore_files = false also stops skipping .git,
    // .hg and .svn.
    env.var("READBOX_RESPECT_IGNORE_FILES", "false");
    env.both("find", &[".", "*", "file"])
        .ok(".git/HEAD\n.github/w.yml\n.hg/store\n.svn/entries\na.txt\nsub/.git/config\n");
}

/// The tree of the ignore-file tests. Every file that is not an ignore file holds `hit`.
/// Comments say which rule decides each entry.
fn ignore_tree(env: &TestEnv) {
    env.write(
        ".gitignore",
        "# a comment line\n\
         !early.log\n\
         *.log\n\
         !keep.log\n\
         /build\n\
         out/\n\
         !out/keep.txt\n\
         notes.md\n\
         *.tmp\n",
    );
    env.write(".ignore", "!notes.md\nscratch/\n");
    for f in [
        "early.log",        // `!early.log` comes before `*.log`: the later line wins, ignored
        "a.log",            // *.log
        "keep.log",         // !keep.log, a later line than *.log: shown
        "build/x.txt",      // /build: the root's build, ignored
        "build.txt",        // /build is the name build only: shown
        "notes.md",         // ignored by .gitignore, whitelisted by .ignore: shown
        "out/y.txt",        // out/ ignores the directory
        "out/keep.txt",     // a file below an ignored directory cannot be re-included
        "scratch/z.txt",    // .ignore
        "x.tmp",            // *.tmp
        "src/a.rs",         // shown
        "src/b.log",        // the root's *.log applies below
        "src/keep.log",     // src/.gitignore re-ignores it: deeper over shallower
        "src/c.tmp",        // src/.gitignore `!*.tmp`: deeper over shallower, shown
        "src/build/y.rs",   // /build is anchored at the root: shown
        "src/gen/g.rs",     // src/.gitignore `/gen`, anchored at src
        "src/out",          // out/ is for directories; this is a file: shown
        "src/lib/gen/h.rs", // `/gen` of src/.gitignore is not src/lib/gen: shown
        "src/lib/out/o.rs", // out/ matches at any depth
        "src/lib/keep.log", // src/.gitignore `keep.log`
        "src/lib/deep/keep.log", // src/lib/deep/.gitignore `!keep.log`: deepest wins, shown
        "src/lib/deep/other.log", // *.log
        "src/tools/t.log",  // src/tools/.ignore `!*.log` beats the root's .gitignore: shown
    ] {
        env.write(f, "hit\n");
    }
    env.write("src/.gitignore", "!*.tmp\nkeep.log\n/gen\n");
    env.write("src/lib/deep/.gitignore", "!keep.log\n");
    env.write("src/tools/.ignore", "!*.log\n");
}

/// What recursive find prints for [`ignore_tree`] with ignore files honoured.
const IGNORE_TREE_FIND: &str = ".gitignore\n.ignore\nbuild.txt\nkeep.log\nnotes.md\n\
src/\nsrc/.gitignore\nsrc/a.rs\nsrc/build/\nsrc/build/y.rs\nsrc/c.tmp\nsrc/lib/\n\
src/lib/deep/\nsrc/lib/deep/.gitignore\nsrc/lib/deep/keep.log\nsrc/lib/gen/\n\
src/lib/gen/h.rs\nsrc/out\nsrc/tools/\nsrc/tools/.ignore\nsrc/tools/t.log\n";

#[test]
fn nested_gitignore_and_ignore_files_follow_git_semantics_and_ripgrep_precedence() {
    let env = TestEnv::new();
    ignore_tree(&env);
    env.both("find", &[] as &[&str]).ok(IGNORE_TREE_FIND);
    // grep walks the same tree: the files find shows, minus the ignore files (no `hit` there).
    let want: String = IGNORE_TREE_FIND
        .lines()
        .filter(|p| !p.ends_with('/') && !p.ends_with(".gitignore") && !p.ends_with(".ignore"))
        .map(|p| format!("{p}:1:hit\n"))
        .collect();
    env.both("grep", &["hit"]).ok(&want);
    // Ignore rules apply to every directory search, also a non-recursive one.
    env.both("grep", &["hit", ".", "false"])
        .ok("build.txt:1:hit\nkeep.log:1:hit\nnotes.md:1:hit\n");
    // Patterns and types combine with the rules: only the shown .log files.
    env.both("find", &[".", "*.log", "file"])
        .ok("keep.log\nsrc/lib/deep/keep.log\nsrc/tools/t.log\n");
}

#[test]
fn ignore_files_of_ancestors_below_the_root_apply_when_the_walk_starts_deeper() {
    let env = TestEnv::new();
    ignore_tree(&env);
    // Starting in src/ must not lose the root's `*.log`, `out/` and `*.tmp` rules.
    let below_src: String = IGNORE_TREE_FIND
        .lines()
        .filter(|p| p.starts_with("src/") && *p != "src/")
        .map(|p| format!("{p}\n"))
        .collect();
    env.both("find", &["src"]).ok(&below_src);
    env.both("find", &["src/lib"])
        .ok("src/lib/deep/\nsrc/lib/deep/.gitignore\nsrc/lib/deep/keep.log\nsrc/lib/gen/\nsrc/lib/gen/h.rs\n");
    env.both("grep", &["hit", "src/lib/deep"])
        .ok("src/lib/deep/keep.log:1:hit\n");
}

#[test]
fn a_path_named_explicitly_is_searched_even_when_ignored() {
    let env = TestEnv::new();
    ignore_tree(&env);
    env.both("find", &["out"]).ok("out/keep.txt\nout/y.txt\n");
    env.both("find", &["build"]).ok("build/x.txt\n");
    env.both("find", &["src/gen"]).ok("src/gen/g.rs\n");
    env.both("grep", &["hit", "a.log"]).ok("a.log:1:hit\n");
    env.both("grep", &["hit", "src/keep.log"])
        .ok("src/keep.log:1:hit\n");
    env.both("grep", &["hit", "scratch"])
        .ok("scratch/z.txt:1:hit\n");
    env.both("ls", &["out"]).ok("keep.txt\ny.txt\n");
}

#[test]
fn respect_ignore_files_false_turns_every_ignore_rule_off() {
    let mut env = TestEnv::new();
    ignore_tree(&env);
    env.var("READBOX_RESPECT_IGNORE_FILES", "false");
    let all = env.both("find", &[".", "*", "file"]);
    let mut want = vec![
        ".gitignore",
        ".ignore",
        "a.log",
        "build/x.txt",
        "build.txt",
        "early.log",
        "keep.log",
        "notes.md",
        "out/keep.txt",
        "out/y.txt",
        "scratch/z.txt",
        "src/.gitignore",
        "src/a.rs",
        "src/b.log",
        "src/build/y.rs",
        "src/c.tmp",
        "src/gen/g.rs",
        "src/keep.log",
        "src/lib/deep/.gitignore",
        "src/lib/deep/keep.log",
        "src/lib/deep/other.log",
        "src/lib/gen/h.rs",
        "src/lib/keep.log",
        "src/lib/out/o.rs",
        "src/out",
        "src/tools/.ignore",
        "src/tools/t.log",
        "x.tmp",
    ];
    // The walk order is by name bytes per directory; for this tree that equals sorting the
    // paths with '/' ranked first, which `build/x.txt` before `build.txt` needs.
    want.sort_by_key(|p| p.replace('/', "\u{1}"));
    let want: String = want.iter().map(|p| format!("{p}\n")).collect();
    all.ok(&want);
    let grep_want: String = want
        .lines()
        .filter(|p| !p.ends_with(".gitignore") && !p.ends_with(".ignore"))
        .map(|p| format!("{p}:1:hit\n"))
        .collect();
    env.both("grep", &["hit"]).ok(&grep_want);
}

#[test]
fn dotignore_outranks_gitignore_at_any_depth_as_ripgrep() {
    let env = TestEnv::new();
    // ripgrep decides .ignore rules (deepest first) before any .gitignore rule, so a deeper
    // .gitignore whitelist does not undo a shallower .ignore rule.
    env.write(".ignore", "*.dat\n");
    env.write("sub/.gitignore", "!*.dat\n");
    env.write("sub/x.dat", "hit\n");
    env.write("sub/y.txt", "hit\n");
    env.both("find", &["sub"]).ok("sub/.gitignore\nsub/y.txt\n");
    env.both("grep", &["hit"]).ok("sub/y.txt:1:hit\n");
}

#[test]
fn git_info_exclude_ranks_below_gitignore() {
    let env = TestEnv::new();
    env.write(".git/HEAD", "ref: refs/heads/main\n");
    env.write(".git/info/exclude", "*.bak\nlocal/\n");
    env.write(".gitignore", "!keep.bak\n");
    for f in ["a.bak", "keep.bak", "x.txt", "local/l.txt"] {
        env.write(f, "hit\n");
    }
    env.both("find", &[] as &[&str])
        .ok(".gitignore\nkeep.bak\nx.txt\n");
    env.both("grep", &["hit"])
        .ok("keep.bak:1:hit\nx.txt:1:hit\n");
}

#[test]
fn no_ignore_file_above_the_root_is_read() {
    let mut env = TestEnv::new();
    // Ignore files in the sandbox's top folder, the parent of the root.
    let base = env.base();
    std::fs::write(base.join(".gitignore"), "*.txt\nroot/\n").unwrap();
    std::fs::write(base.join(".ignore"), "*.rs\n").unwrap();
    std::fs::create_dir_all(base.join(".git/info")).unwrap();
    std::fs::write(base.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(base.join(".git/info/exclude"), "*.md\n").unwrap();
    env.write("a.txt", "hit\n");
    env.write("b.rs", "hit\n");
    env.write("c.md", "hit\n");
    env.both("find", &[] as &[&str]).ok("a.txt\nb.rs\nc.md\n");
    env.both("grep", &["hit"])
        .ok("a.txt:1:hit\nb.rs:1:hit\nc.md:1:hit\n");
    // A root deeper in a tree: the ignore files of the folders above it (inside root/ but
    // outside the configured root) are not read either.
    env.write(".gitignore", "*.log\ninner/\n");
    env.write("inner/x.log", "hit\n");
    env.write("inner/y.txt", "hit\n");
    let inner = env.p("inner").to_str().unwrap().to_string();
    env.var("READBOX_ROOTS", &inner);
    env.cd("inner");
    env.both("find", &[] as &[&str]).ok("x.log\ny.txt\n");
    env.both("grep", &["hit"]).ok("x.log:1:hit\ny.txt:1:hit\n");
}

#[test]
fn nested_gitignore_patterns_with_a_slash_are_relative_to_their_folder() {
    let env = TestEnv::new();
    // `lib/gen` in src/.gitignore means src/lib/gen only: not lib/gen at the root, not
    // src/x/lib/gen deeper down.
    env.write("src/.gitignore", "lib/gen\n");
    for f in ["lib/gen/c", "src/lib/gen/a", "src/x/lib/gen/b"] {
        env.write(f, "hit\n");
    }
    env.both("find", &[] as &[&str]).ok(
        "lib/\nlib/gen/\nlib/gen/c\nsrc/\nsrc/.gitignore\nsrc/lib/\nsrc/x/\nsrc/x/lib/\n\
         src/x/lib/gen/\nsrc/x/lib/gen/b\n",
    );
    env.both("grep", &["hit"])
        .ok("lib/gen/c:1:hit\nsrc/x/lib/gen/b:1:hit\n");
}

#[test]
fn whitelist_only_gitignore_keeps_re_included_directories_and_files() {
    let env = TestEnv::new();
    // The usual "ignore everything but" file: `*` ignores all (the .gitignore too), `!*/`
    // re-includes directories so that the walk can reach `!*.rs` files below them.
    env.write(".gitignore", "*\n!*/\n!*.rs\n");
    for f in ["a.txt", "b.rs", "d/c.rs", "d/e.txt", "d/f/g.rs"] {
        env.write(f, "hit\n");
    }
    env.both("find", &[] as &[&str])
        .ok("b.rs\nd/\nd/c.rs\nd/f/\nd/f/g.rs\n");
    env.both("grep", &["hit"])
        .ok("b.rs:1:hit\nd/c.rs:1:hit\nd/f/g.rs:1:hit\n");
}

#[test]
fn an_ignore_file_that_links_out_of_the_root_is_not_read() {
    let env = TestEnv::new();
    // The rules live outside the root; following the link would read a file outside the roots.
    std::fs::write(env.outside().join("rules"), "*.txt\n").unwrap();
    env.symlink(".gitignore", env.outside().join("rules"));
    env.symlink("sub/.ignore", "../../outside/rules");
    env.write("a.txt", "hit\n");
    env.write("sub/b.txt", "hit\n");
    env.both("grep", &["hit"])
        .ok("a.txt:1:hit\nsub/b.txt:1:hit\n");
    env.both("find", &[".", "*", "file"])
        .ok("a.txt\nsub/b.txt\n");
}

#[test]
fn path_excludes_prune_only_their_subtree_and_name_excludes_every_depth() {
    let mut env = TestEnv::new();
    // Replaces the default excludes: only the canaries planted here are secret.
    env.var("READBOX_EXCLUDE", "build:docs/private:*.bak");
    env.secret("build/x");
    env.secret("a/build/y");
    env.secret("docs/private/p");
    env.secret("z.bak");
    env.secret("a/w.BAK");
    for f in ["docs/privateer/q", "other/private/r", "a/build.txt"] {
        env.write(f, "hit\n");
    }
    env.both("find", &[] as &[&str]).ok(
        "a/\na/build.txt\ndocs/\ndocs/privateer/\ndocs/privateer/q\nother/\nother/private/\n\
         other/private/r\n",
    );
    env.both("grep", &["", ".", "true", "true"])
        .ok("a/build.txt:1:hit\ndocs/privateer/q:1:hit\nother/private/r:1:hit\n");
    env.both("find", &[".", "private"]).ok("other/private/\n");
    env.both("ls", &["docs"]).ok("privateer/\n");
}

// ---------------------------------------------------------------------------------------------
// find: patterns, types, depth, errors
// ---------------------------------------------------------------------------------------------

#[test]
fn find_pattern_is_a_glob_on_names_at_any_depth() {
    let env = TestEnv::new();
    for p in [
        "p/top.rs",
        "p/sub/a.rs",
        "p/notes.txt",
        "p/rs_notes.md",
        "p/sub/rs",
        "abc",
        "bbc",
        "cbc",
        "Xbc",
        "foo.py",
        "bar.py",
        "baz.py",
        "x.txt",
        "xy.txt",
    ] {
        env.write(p, "x\n");
    }
    env.both("find", &["p", "*.rs"])
        .ok("p/sub/a.rs\np/top.rs\n");
    // No wildcard: the exact name, of a file or a directory.
    env.both("find", &["p", "rs"]).ok("p/sub/rs\n");
    env.both("find", &["p", "sub"]).ok("p/sub/\n");
    env.both("find", &[".", "[!ab]bc"]).ok("Xbc\ncbc\n");
    env.both("find", &[".", "[ab]bc"]).ok("abc\nbbc\n");
    env.both("find", &[".", "{foo,bar}.py"])
        .ok("bar.py\nfoo.py\n");
    env.both("find", &[".", "?.txt"]).ok("x.txt\n");
    // Case matters, and the glob sees the name, never the path.
    env.both("find", &[".", "*.RS"]).ok("");
    env.both("find", &["p", "**/*.rs"])
        .ok("p/sub/a.rs\np/top.rs\n");
}

#[test]
fn a_glob_that_holds_a_slash_is_refused_with_the_call_that_looks_in_the_folder() {
    let env = TestEnv::new();
    env.write("p/sub/a.rs", "fn x\n");
    // A name holds no `/`: the glob could match nothing, and an empty answer would not say why.
    let a = env.both("find", &[".", "sub/*.rs"]);
    a.fails("usage", "PATTERN: 'sub/*.rs' never matches");
    assert!(
        a.error
            .as_deref()
            .unwrap()
            .ends_with("to look in the folder: find sub '*.rs'"),
        "{a:?}"
    );
    env.both("find", &["p/", "sub/*.rs", "f"])
        .fails("usage", "to look in the folder: find p/sub '*.rs' file");
    env.both("grep", &["fn", "p", "true", "false", "sub/*.rs"])
        .fails(
            "usage",
            "to look in the folder: grep fn p/sub true false '*.rs'",
        );
    // The call it gives finds what was meant.
    env.both("grep", &["fn", "p/sub", "true", "false", "*.rs"])
        .ok("p/sub/a.rs:1:fn x\n");
    // A folder that is itself a glob has no such call.
    let a = env.both("find", &[".", "*/a.rs"]);
    a.fails("usage", "never matches");
    assert!(!a.error.as_deref().unwrap().contains("look in"), "{a:?}");
    env.both("find", &[".", "p/"])
        .fails("usage", "never matches");
}

#[test]
fn find_bad_glob_is_a_usage_error_before_the_path_is_looked_at() {
    let env = TestEnv::new();
    env.write("ab", "x\n");
    let a = env.both("find", &[".", "[ab"]);
    a.fails("usage", "");
    assert_eq!(a.output, "", "nothing is listed for a bad glob");
    // Arguments are checked before paths: a missing PATH does not hide the usage error.
    env.both("find", &["missing", "{a,b"]).fails("usage", "");
}

#[test]
fn find_file_type_filters_files_and_directories() {
    let env = TestEnv::new();
    env.write("d/x", "x\n");
    env.write("d/e/y", "y\n");
    env.symlink("l", "d");
    env.both("find", &[".", "*", "file"]).ok("d/e/y\nd/x\n");
    env.both("find", &[".", "*", "f"]).ok("d/e/y\nd/x\n");
    env.both("find", &[".", "*", "directory"]).ok("d/\nd/e/\n");
    env.both("find", &[".", "*", "D"]).ok("d/\nd/e/\n");
    env.both("find", &[".", "*", "all"])
        .ok("d/\nd/e/\nd/e/y\nd/x\nl\n");
}

#[test]
fn find_max_depth_zero_one_and_n() {
    let env = TestEnv::new();
    for p in ["a/b/c/f", "a/g", "h"] {
        env.write(p, "x\n");
    }
    env.both("find", &[".", "*", "all", "0"]).ok("");
    env.both("find", &[".", "*", "all", "1"]).ok("a/\nh\n");
    env.both("find", &[".", "*", "all", "2"])
        .ok("a/\na/b/\na/g\nh\n");
    env.both("find", &[".", "*", "all", "3"])
        .ok("a/\na/b/\na/b/c/\na/g\nh\n");
    env.both("find", &[".", "*", "all", "100"])
        .ok("a/\na/b/\na/b/c/\na/b/c/f\na/g\nh\n");
    // Depth counts from PATH, not from the root.
    env.both("find", &["a", "*", "file", "1"]).ok("a/g\n");
    env.both("find", &["a/b", "*", "all", "1"]).ok("a/b/c/\n");
}

#[test]
fn find_on_a_file_is_not_a_directory() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    env.both("find", &["a.txt"])
        .fails("not a directory", "a.txt");
    env.both("find", &["a.txt/"])
        .fails("not a directory", "a.txt/");
    env.both("find", &["nope"]).fails("not found", "nope");
    // docs/contract.md#decisions-on-details: PATH given as "" is `not found:`, for find and grep
    // alike.
    env.both("find", &[""]).fails("not found", "");
    env.both("grep", &["x", ""]).fails("not found", "");
}

// ---------------------------------------------------------------------------------------------
// grep: matching and format
// ---------------------------------------------------------------------------------------------

#[test]
fn grep_pattern_is_literal_text_not_a_regex() {
    let env = TestEnv::new();
    env.write(
        "f.txt",
        "hello\na.c\nabc\n[x]\n\\d1\n(a|b)\n^start\nend$\nstar*\n",
    );
    env.both("grep", &["h.*o", "f.txt"]).no_match();
    env.both("grep", &["a.c", "f.txt"]).ok("f.txt:2:a.c\n");
    env.both("grep", &["[x]", "f.txt"]).ok("f.txt:4:[x]\n");
    env.both("grep", &["\\d", "f.txt"]).ok("f.txt:5:\\d1\n");
    env.both("grep", &["(a|b)", "f.txt"]).ok("f.txt:6:(a|b)\n");
    env.both("grep", &["^start", "f.txt"])
        .ok("f.txt:7:^start\n");
    env.both("grep", &["end$", "f.txt"]).ok("f.txt:8:end$\n");
    env.both("grep", &["r*", "f.txt"]).ok("f.txt:9:star*\n");
    // Under IGNORE_CASE the pattern is still literal text, only folded.
    let i = |p: &str| env.both("grep", &[p, "f.txt", "true", "true"]);
    i("A.C").ok("f.txt:2:a.c\n");
    i("H.*O").no_match();
    i("(A|B)").ok("f.txt:6:(a|b)\n");
    i("\\D").ok("f.txt:5:\\d1\n");
    i("END$").ok("f.txt:8:end$\n");
}

#[test]
fn grep_prints_path_line_number_and_line_without_its_newline() {
    let env = TestEnv::new();
    env.write("f.txt", "needle one\nnothing\n\nneedle needle\nlast needle");
    // One line per matching line (twice on a line is still one line), numbers from 1, and the
    // unterminated last line is a line.
    env.both("grep", &["needle", "f.txt"])
        .ok("f.txt:1:needle one\nf.txt:4:needle needle\nf.txt:5:last needle\n");
    env.write("g.txt", "one\ntwo");
    env.both("grep", &["two", "g.txt"]).ok("g.txt:2:two\n");
}

#[test]
fn grep_keeps_the_carriage_return_of_crlf_lines() {
    let env = TestEnv::new();
    env.write("w.txt", "first\r\nsecond x\r\nthird\r\nx last\r");
    env.both("grep", &["x", "w.txt"])
        .ok("w.txt:2:second x\r\nw.txt:4:x last\r\n");
}

#[test]
fn grep_empty_pattern_matches_every_line() {
    let env = TestEnv::new();
    env.write("f.txt", "a\n\nb\n\n");
    env.write("g.txt", "x\ny");
    env.both("grep", &["", "f.txt"])
        .ok("f.txt:1:a\nf.txt:2:\nf.txt:3:b\nf.txt:4:\n");
    env.both("grep", &["", "g.txt"])
        .ok("g.txt:1:x\ng.txt:2:y\n");
    // An empty file has no line to match.
    env.write("empty.txt", "");
    env.both("grep", &["", "empty.txt"]).no_match();
}

#[test]
fn grep_pattern_with_a_newline_never_matches() {
    let env = TestEnv::new();
    env.write("f.txt", "a\nb\n");
    env.both("grep", &["a\nb", "f.txt"]).no_match();
    env.both("grep", &["\n", "f.txt"]).no_match();
    env.both("grep", &["a\nb", ".", "true", "true"]).no_match();
}

#[test]
fn grep_exit_status_is_0_found_1_none_2_error() {
    let env = TestEnv::new();
    env.write("d/a.txt", "x\n");
    env.both("grep", &["x", "d/a.txt"])
        .ok_status("d/a.txt:1:x\n", 0);
    env.both("grep", &["x", "d"]).ok_status("d/a.txt:1:x\n", 0);
    env.both("grep", &["zzz", "d/a.txt"]).no_match();
    env.both("grep", &["zzz", "d"]).no_match();
    env.both("grep", &["x", "missing"])
        .fails("not found", "missing");
    env.both("grep", &["x", "../outside"]).denied("../outside");
}

#[test]
fn grep_ignore_case_uses_unicode_simple_case_folding() {
    let env = TestEnv::new();
    env.write(
        "u.txt",
        "temp 300\u{212A}\nkilo\nΟΔΥΣΣΕΥΣ\nλόγος\nSTRASSE\nstraße\nGROẞ\nПРИМЕР\nCafÉ\n",
    );
    let i = |p: &str| env.both("grep", &[p, "u.txt", "true", "true"]);
    // KELVIN SIGN folds to k, both ways.
    i("300k").ok("u.txt:1:temp 300\u{212A}\n");
    i("\u{212A}").ok("u.txt:1:temp 300\u{212A}\nu.txt:2:kilo\n");
    // Σ, σ and final ς are one letter under folding.
    i("σ").ok("u.txt:3:ΟΔΥΣΣΕΥΣ\nu.txt:4:λόγος\n");
    i("ς").ok("u.txt:3:ΟΔΥΣΣΕΥΣ\nu.txt:4:λόγος\n");
    i("ΛΌΓΟΣ").ok("u.txt:4:λόγος\n");
    // Simple folding only: ß is not ss, but capital ẞ is ß.
    i("ss").ok("u.txt:5:STRASSE\n");
    i("straße").ok("u.txt:6:straße\n");
    i("ß").ok("u.txt:6:straße\nu.txt:7:GROẞ\n");
    i("пример").ok("u.txt:8:ПРИМЕР\n");
    i("café").ok("u.txt:9:CafÉ\n");
    // Without IGNORE_CASE, case matters.
    env.both("grep", &["σ", "u.txt"]).no_match();
    env.both("grep", &["café", "u.txt", "true", "false"])
        .no_match();
    env.both("grep", &["k", "u.txt"]).ok("u.txt:2:kilo\n");
}

// ---------------------------------------------------------------------------------------------
// grep: which files a directory search reads
// ---------------------------------------------------------------------------------------------

#[test]
fn grep_recursive_false_searches_direct_files_only_whatever_max_depth_says() {
    let env = TestEnv::new();
    env.write("d/a.txt", "hit\n");
    env.write("d/sub/b.txt", "hit\n");
    env.write("d/sub/deeper/c.txt", "hit\n");
    env.both("grep", &["hit", "d"])
        .ok("d/a.txt:1:hit\nd/sub/b.txt:1:hit\nd/sub/deeper/c.txt:1:hit\n");
    env.both("grep", &["hit", "d", "false"])
        .ok("d/a.txt:1:hit\n");
    env.both("grep", &["hit", "d", "false", "false", "*", "5"])
        .ok("d/a.txt:1:hit\n");
    env.both("grep", &["hit", "d", "false", "false", "*", "0"])
        .ok("d/a.txt:1:hit\n");
    env.both("grep", &["HIT", "d", "false", "true"])
        .ok("d/a.txt:1:hit\n");
}

#[test]
fn grep_max_depth_zero_one_and_n() {
    let env = TestEnv::new();
    for p in ["a.txt", "d/b.txt", "d/e/c.txt"] {
        env.write(p, "hit\n");
    }
    let g = |depth: &str| env.both("grep", &["hit", ".", "true", "false", "*", depth]);
    g("0").no_match();
    g("1").ok("a.txt:1:hit\n");
    g("2").ok("a.txt:1:hit\nd/b.txt:1:hit\n");
    g("3").ok("a.txt:1:hit\nd/b.txt:1:hit\nd/e/c.txt:1:hit\n");
    // A file named as PATH is searched whatever the depth (it is not a walk).
    env.both("grep", &["hit", "a.txt", "true", "false", "*", "0"])
        .ok("a.txt:1:hit\n");
}

#[test]
fn grep_file_pattern_filters_walked_files_but_not_a_named_file() {
    let env = TestEnv::new();
    for p in [
        "a.rs", "b.txt", "s/c.rs", "s/d.rsx", ".e.rs", "x.md", "y.md",
    ] {
        env.write(p, "hit\n");
    }
    let gp = |pat: &str| env.both("grep", &["hit", ".", "true", "false", pat]);
    gp("*.rs").ok(".e.rs:1:hit\na.rs:1:hit\ns/c.rs:1:hit\n");
    gp("{x,y}.md").ok("x.md:1:hit\ny.md:1:hit\n");
    // A leading dot is an ordinary character to the glob.
    gp("[!a-x]*").ok(".e.rs:1:hit\ny.md:1:hit\n");
    gp("*.csv").no_match();
    // A directory name matching FILE_PATTERN does not make its files match.
    gp("s").no_match();
    env.both("grep", &["hit", ".", "false", "false", "*.rs"])
        .ok(".e.rs:1:hit\na.rs:1:hit\n");
    // docs/contract.md#decisions-on-details: FILE_PATTERN never filters a file named as PATH.
    env.both("grep", &["hit", "b.txt", "true", "false", "*.rs"])
        .ok("b.txt:1:hit\n");
}

#[test]
fn grep_bad_file_pattern_is_a_usage_error_before_paths() {
    let env = TestEnv::new();
    env.write("a.txt", "hit\n");
    let a = env.both("grep", &["hit", ".", "true", "false", "[ab"]);
    a.fails("usage", "");
    assert_eq!(a.output, "");
    // Even for a named file, and before a missing path is noticed.
    env.both("grep", &["hit", "a.txt", "true", "false", "{x"])
        .fails("usage", "");
    env.both("grep", &["hit", "missing", "true", "false", "[ab"])
        .fails("usage", "");
}

#[test]
fn grep_walk_skips_fifos_and_sockets_without_blocking() {
    let mut env = TestEnv::new();
    env.var("READBOX_TIMEOUT", "5");
    env.write("notes.txt", "TODO: x\n");
    env.fifo("pipe.txt");
    let _sock = std::os::unix::net::UnixListener::bind(env.p("sock.txt")).unwrap();
    env.both("grep", &["TODO"]).ok("notes.txt:1:TODO: x\n");
    env.both("grep", &["TODO", ".", "true", "false", "*.txt"])
        .ok("notes.txt:1:TODO: x\n");
    // Named, a FIFO is refused at once.
    env.both("grep", &["x", "pipe.txt"])
        .fails("not a file", "pipe.txt");
}

// ---------------------------------------------------------------------------------------------
// grep: binary files
// ---------------------------------------------------------------------------------------------

/// `hit` on line 1, filler up to byte `nul_at`, a NUL there, then `hit again` on line 3.
fn nul_at(nul_at: usize) -> Vec<u8> {
    let mut d = b"hit\n".to_vec();
    d.resize(nul_at, b'x');
    d.extend_from_slice(b"\0\nhit again\n");
    d
}

#[test]
fn grep_skips_binary_files_in_a_directory_search_from_the_first_nul() {
    let env = TestEnv::new();
    // The NUL at offset 8191 is the last byte of the first 8 KiB: binary from the start. At
    // 8192 it is past them: the file is binary from the line that holds it, and its lines
    // before that line are searched.
    env.write("a.txt", nul_at(8191));
    env.write("b.txt", nul_at(8192));
    env.write("c.txt", b"hit\0\n");
    let a = env.both("grep", &["hit"]);
    a.ok("b.txt:1:hit\n");
    assert_eq!(
        a.notes,
        ["3 binary files skipped (a NUL byte); name one as PATH to search it"]
    );
    // No line that holds a NUL is printed.
    env.both("grep", &["xxxx"]).no_match();
}

#[test]
fn grep_on_a_named_binary_file_reports_one_binary_match() {
    let env = TestEnv::new();
    env.write("a.bin", nul_at(8191));
    env.write("nul.ts", b"hello TOKEN here\x00more\n");
    // A match far past the first 8 KiB, at the end of a 2 MiB line: the file is searched whole.
    let mut late = b"\0\n".to_vec();
    late.resize(2 << 20, b'z');
    late.extend_from_slice(b"needle\n");
    env.write("late.bin", &late);
    env.both("grep", &["hit again", "a.bin"])
        .ok("a.bin: binary file matches\n");
    env.both("grep", &["TOKEN", "nul.ts"])
        .ok("nul.ts: binary file matches\n");
    env.both("grep", &["needle", "late.bin"])
        .ok("late.bin: binary file matches\n");
    env.both("grep", &["absent", "late.bin"]).no_match();
    env.both("grep", &["absent", "nul.ts"]).no_match();
}

// ---------------------------------------------------------------------------------------------
// Budgets and truncation
// ---------------------------------------------------------------------------------------------

#[test]
fn grep_read_budget_is_summed_over_files_and_drops_the_crossing_line() {
    let mut env = TestEnv::new();
    env.write("x.txt", "ab\n".repeat(10)); // 30 bytes
    env.write("y.txt", "ab\n".repeat(10)); // 30 bytes
    env.write("z.txt", "ab\n".repeat(4)); // 12 bytes: 72 in all
    let line = |f: &str, n: usize| -> String { (1..=n).map(|i| format!("{f}:{i}:ab\n")).collect() };
    let all = format!(
        "{}{}{}",
        line("x.txt", 10),
        line("y.txt", 10),
        line("z.txt", 4)
    );
    // Exactly the sum fits.
    env.var("READBOX_MAX_READ_BYTES", "72");
    env.both("grep", &["ab"]).ok(&all);
    // One byte less: z.txt's fourth line (bytes 70..72) crosses and is not printed.
    env.var("READBOX_MAX_READ_BYTES", "71");
    let a = env.both("grep", &["ab"]);
    limited(
        &a,
        &format!(
            "{}{}{}",
            line("x.txt", 10),
            line("y.txt", 10),
            line("z.txt", 3)
        ),
    );
}

#[test]
fn grep_prints_nothing_from_files_after_the_one_that_crossed_the_budget() {
    // f01's line crosses the read budget; the files after it are small enough to fit what is
    // left of it. Searched ahead by other threads or not, nothing of them is printed: the answer
    // stops at the file that crossed.
    let mut env = TestEnv::new();
    env.write("f00", "needle\n");
    env.write("f01", format!("needle {}\n", "x".repeat(100)));
    for i in 2..60 {
        env.write(&format!("f{i:02}"), "needle\n");
    }
    env.var("READBOX_MAX_READ_BYTES", "60");
    let a = env.both("grep", &["needle"]);
    limited(&a, "f00:1:needle\n");
    // The note says where the budget ran out, so that a narrower call can go on from there.
    assert_eq!(
        a.notes,
        [
            "the read budget ran out in f01: the files after it were not searched; narrow PATH or \
          FILE_PATTERN to search them"
        ],
        "{a:?}"
    );
}

#[test]
fn grep_skipped_binary_file_costs_only_its_probed_bytes() {
    let mut env = TestEnv::new();
    // 20000 bytes, NUL first: skipped after its first 8192 bytes, which are all it costs.
    let mut bin = b"\0".to_vec();
    bin.resize(20000, b'z');
    env.write("big.bin", &bin);
    // Smaller than 8 KiB: it costs its size.
    env.write("small.bin", b"\0abc\n"); // 5 bytes
    env.write("t.txt", "hit\n"); // 4 bytes
    env.var("READBOX_MAX_READ_BYTES", &(8192 + 5 + 4).to_string());
    env.both("grep", &["hit"]).ok("t.txt:1:hit\n");
    env.var("READBOX_MAX_READ_BYTES", &(8192 + 5 + 3).to_string());
    limited(&env.both("grep", &["hit"]), "");
}

/// A tree of four directories of ten files: 44 entries, 40 files holding one `hit` line.
fn forty_files(env: &TestEnv) {
    for d in ["a", "b", "c", "d"] {
        for i in 0..10 {
            env.write(&format!("t/{d}/f{i}.txt"), "hit\n");
        }
    }
}

#[test]
fn max_entries_counts_every_entry_read_and_exactly_the_limit_is_fine() {
    let mut env = TestEnv::new();
    forty_files(&env);
    // Ignored and hidden entries are read too, so they count: 44 + 2 = 46. An excluded one does
    // not: the budget would tell that it exists.
    env.write("t/.gitignore", "*.log\n");
    env.write("t/x.log", "hit\n");
    env.secret("t/.env");
    let full = env.both("find", &["t"]).output.clone();
    assert!(full.starts_with("t/.gitignore\nt/a/\n") && !full.contains("x.log"));
    env.var("READBOX_MAX_ENTRIES", "46");
    env.both("find", &["t"]).ok(&full);
    env.var("READBOX_MAX_ENTRIES", "45");
    env.both("find", &["t"]).fails("limit", "");
    // ls reads t/ alone: its 6 entries, the hidden one included, the excluded one not.
    env.var("READBOX_MAX_ENTRIES", "6");
    env.both("ls", &["t", "true"])
        .ok(".gitignore\na/\nb/\nc/\nd/\nx.log\n");
    env.var("READBOX_MAX_ENTRIES", "5");
    env.both("ls", &["t", "true"]).fails("limit", "");
}

#[test]
fn max_entries_partial_output_is_a_prefix_of_the_full_listing() {
    let mut env = TestEnv::new();
    forty_files(&env);
    let full_find = env.both("find", &["t"]).output.clone();
    let full_grep = env.both("grep", &["hit", "t"]).output.clone();
    assert_eq!(full_find.lines().count(), 44);
    assert_eq!(full_grep.lines().count(), 40);
    // 25 entries: t (4), t/a (10) and t/b (10) can be read; t/c cannot.
    env.var("READBOX_MAX_ENTRIES", "25");
    for (tool, args, full) in [
        ("find", vec!["t"], &full_find),
        ("grep", vec!["hit", "t"], &full_grep),
    ] {
        let a = env.both(tool, &args[..]);
        a.fails("limit", "");
        assert!(
            full.starts_with(&a.output),
            "{tool}: partial output is not a prefix of the full listing: {:?}",
            a.output
        );
        assert!(
            a.output.contains("t/b/f9.txt"),
            "{tool}: what fits in the budget (all of t/a and t/b) is printed: {:?}",
            a.output
        );
        assert!(
            !a.output.contains("t/c/f"),
            "{tool}: nothing of t/c can be listed within 25 entries: {:?}",
            a.output
        );
    }
}

#[test]
fn find_truncation_stops_the_walk_before_the_entry_limit() {
    let mut env = TestEnv::new();
    // 30 directories of 10 files: 330 entries; "d00/" + ten "d00/fN" lines = 75 bytes each.
    for d in 0..30 {
        for i in 0..10 {
            env.write(&format!("d{d:02}/f{i}"), "x\n");
        }
    }
    let full = env.both("find", &[] as &[&str]).output.clone();
    assert_eq!(full.lines().count(), 330);
    // The cap is reached inside d01 (after 50 entries read); a walk that went on would pass 60
    // entries in d03 and fail with `limit:`.
    env.var("READBOX_MAX_OUTPUT_BYTES", "100");
    env.var("READBOX_MAX_ENTRIES", "60");
    truncated_to(&env.both("find", &[] as &[&str]), &full, 100, 0);
}

#[test]
fn grep_truncation_stops_the_search_before_the_read_limit() {
    let mut env = TestEnv::new();
    env.write("d/a.txt", "match\n".repeat(50));
    // 2.4 MB: more than the read budget below, so reading on after the cut would fail.
    env.write("d/b.txt", "match\n".repeat(400_000));
    env.var("READBOX_MAX_OUTPUT_BYTES", "100");
    env.var("READBOX_MAX_READ_BYTES", "1048576");
    let full: String = (1..=50).map(|i| format!("d/a.txt:{i}:match\n")).collect();
    truncated_to(&env.both("grep", &["match", "d"]), &full, 100, 0);
}

// ---------------------------------------------------------------------------------------------
// grep: files far larger than the read buffer
// ---------------------------------------------------------------------------------------------

/// A file of about `total` bytes built so that matches and line ends fall on and around every
/// 64 KiB block seam, with long lines of 140 KiB to 700 KiB
/// that match near their end, long lines that do not match, and a last line without `\n` that
/// matches at its very end. Ordinary lines match at random places, in either case.
fn haystack(total: usize) -> Vec<u8> {
    const SEAM: usize = READ_BUFFER / 2;
    let mut f = Filler::new(0x9E37_79B9_7F4A_7C15);
    let mut d: Vec<u8> = Vec::with_capacity(total + (1 << 20));
    let mut event = 0usize;
    let pick = |f: &mut Filler| {
        if f.below(3) == 0 {
            NEEDLE_LOWER
        } else {
            NEEDLE
        }
    };
    while d.len() < total {
        // The next seam at least 400 bytes ahead, so that the crafted line can reach it.
        let seam = ((d.len() + 400) / SEAM + 1) * SEAM;
        // Ordinary lines up to a little before the seam.
        while d.len() + 400 < seam {
            let len = f.below(160);
            let start = d.len();
            f.text(&mut d, len);
            if f.below(8) == 0 {
                let at = start + f.below(len + 1);
                let n = pick(&mut f);
                d.splice(at..at, n.iter().copied());
            }
            d.push(b'\n');
        }
        // At the start of a line, within 400 bytes before the seam.
        let n = pick(&mut f);
        match event % 6 {
            0 => {
                // The needle straddles the seam, cut at a different place each time.
                let off = 1 + event % (n.len() - 1);
                let pad = seam - off - d.len();
                f.text(&mut d, pad);
                d.extend_from_slice(n);
                f.text(&mut d, 20);
                d.push(b'\n');
            }
            1 => {
                // A line ends exactly at the seam; the next one starts with the needle.
                let pad = seam - 1 - d.len();
                f.text(&mut d, pad);
                d.push(b'\n');
                d.extend_from_slice(n);
                d.extend_from_slice(b" after\n");
            }
            2 => {
                // The needle ends the line; its `\n` is the first byte after the seam.
                let pad = seam - n.len() - d.len();
                f.text(&mut d, pad);
                d.extend_from_slice(n);
                d.push(b'\n');
            }
            3 => {
                // Empty lines on both sides of the seam, then a match.
                let pad = seam - 1 - d.len();
                f.text(&mut d, pad);
                d.extend_from_slice(b"\n\n\n");
                d.extend_from_slice(n);
                d.push(b'\n');
            }
            4 => {
                // A line longer than the buffer that matches near its end.
                let len = [140 * 1024, 300 * 1024 + 7, 700 * 1024 + 3][(event / 6) % 3];
                f.text(&mut d, len);
                d.extend_from_slice(n);
                f.text(&mut d, event % 5);
                d.push(b'\n');
            }
            _ => {
                // A line longer than the buffer without a match, then a match.
                f.text(&mut d, 200 * 1024 + event);
                d.push(b'\n');
                d.extend_from_slice(n);
                d.push(b'\n');
            }
        }
        event += 1;
    }
    f.text(&mut d, 50);
    d.extend_from_slice(NEEDLE);
    d
}

#[test]
fn grep_large_file_matches_across_buffer_seams_with_exact_line_numbers() {
    // The calls here go through `env.run` only: the link form is compared elsewhere, and each
    // call of the debug binary over megabytes takes a while.
    let mut env = TestEnv::new();
    let data = haystack(4 << 20);
    env.write("big.txt", &data);
    env.var("READBOX_MAX_OUTPUT_BYTES", &(64u64 << 20).to_string());
    env.var("READBOX_MAX_READ_BYTES", &(64u64 << 20).to_string());
    env.var("READBOX_TIMEOUT", "60");

    // Case-sensitive: only the exact needle.
    let exact = expected_grep("big.txt", &data, |l| contains(l, NEEDLE));
    // Sanity of the generator: many matches, and long matching lines among them.
    assert!(exact.lines().count() > 1000, "test setup: too few matches");
    assert!(
        exact.lines().any(|l| l.len() > 700 * 1024),
        "test setup: no 700 KiB matching line"
    );
    let a = env.run("grep", &[std::str::from_utf8(NEEDLE).unwrap(), "big.txt"]);
    assert_eq!(
        (a.error.as_deref(), a.status, a.truncated),
        (None, 0, false),
        "{}",
        a.shown
    );
    assert_same_lines(&a.output, &exact, "case-sensitive search of big.txt");

    // Case-insensitive, with a pattern in a third case: both spellings match.
    let folded = expected_grep("big.txt", &data, |l| {
        contains(&l.to_ascii_lowercase(), NEEDLE_LOWER)
    });
    assert!(folded.lines().count() > exact.lines().count());
    let a = env.run("grep", &["ZQ#nEeDlE", "big.txt", "true", "true"]);
    assert_eq!(
        (a.error.as_deref(), a.status, a.truncated),
        (None, 0, false),
        "{}",
        a.shown
    );
    assert_same_lines(&a.output, &folded, "case-insensitive search of big.txt");

    // The same file found by a directory search gives the same lines under its walked path.
    env.write("dir/big.txt", &data);
    let a = env.run("grep", &[std::str::from_utf8(NEEDLE).unwrap(), "dir"]);
    assert_same_lines(
        &a.output,
        &expected_grep("dir/big.txt", &data, |l| contains(l, NEEDLE)),
        "directory search of dir/big.txt",
    );
}

#[test]
fn grep_long_lines_that_do_not_match_keep_later_line_numbers_under_a_small_cap() {
    let mut env = TestEnv::new();
    // With a 4 KiB output cap no line longer than the cap can be printed whole, so readbox may
    // look at such lines in pieces; the numbering of later lines must not drift.
    let mut data = Vec::new();
    let mut f = Filler::new(7);
    f.text(&mut data, 300 * 1024);
    data.extend_from_slice(b"\na Zq#NeEdLe b\n");
    f.text(&mut data, 200 * 1024);
    data.extend_from_slice(b"zq#needle\n\n");
    f.text(&mut data, READ_BUFFER);
    data.extend_from_slice(b"\nZq#NeEdLe");
    env.write("f.txt", &data);
    env.var("READBOX_MAX_OUTPUT_BYTES", "4096");
    env.both("grep", &["Zq#NeEdLe", "f.txt"])
        .ok("f.txt:2:a Zq#NeEdLe b\nf.txt:6:Zq#NeEdLe\n");
    // Case-insensitive, line 3 matches at its very end: it is shown as a window that ends
    // there.
    let a = env.both("grep", &["zq#needle", "f.txt", "true", "true"]);
    assert!(a.output.starts_with("f.txt:2:a Zq#NeEdLe b\nf.txt:3:…"));
    window_shows(&a, "f.txt", 3, "zq#needle", 4096);
}

#[test]
fn grep_match_straddling_any_piece_of_a_line_longer_than_the_cap_is_found() {
    let mut env = TestEnv::new();
    // One long line per file with the needle crossing offset `at`: around the cap, twice the
    // cap, the read buffer and its multiples, and at the very end of a long line.
    let cap = 4096usize;
    env.var("READBOX_MAX_OUTPUT_BYTES", &cap.to_string());
    let mut f = Filler::new(11);
    let offsets = [
        cap - 4,
        cap,
        cap + 1 - 4,
        2 * (cap + 1) - 5,
        READ_BUFFER - 3,
        2 * READ_BUFFER - 8,
        300_000,
    ];
    for (k, &at) in offsets.iter().enumerate() {
        let mut line = Vec::new();
        f.text(&mut line, at);
        line.extend_from_slice(NEEDLE);
        // The last file's needle ends its line.
        let after = if k + 1 == offsets.len() { 0 } else { 10_000 };
        f.text(&mut line, after);
        let mut data = line.clone();
        data.extend_from_slice(b"\nnext\n");
        let name = format!("f{k}.txt");
        env.write(&name, &data);
        let full = expected_grep(&name, &data, |l| contains(l, NEEDLE));
        assert_eq!(full.lines().count(), 1);
        let needle = std::str::from_utf8(NEEDLE).unwrap();
        window_shows(&env.both("grep", &[needle, &name]), &name, 1, needle, cap);
        // Under case folding (a longer overlap between pieces) the same line is found.
        let a = env.both("grep", &["zQ#nEeDlE", &name, "true", "true"]);
        window_shows(&a, &name, 1, needle, cap);
        // And a needle that is absent is absent: exit 1, nothing printed.
        env.both("grep", &["Zq#NeEdLf", &name]).no_match();
    }
}

#[test]
fn grep_folded_multibyte_match_straddling_pieces_of_a_long_line_is_found() {
    let mut env = TestEnv::new();
    let cap = 4096usize;
    env.var("READBOX_MAX_OUTPUT_BYTES", &cap.to_string());
    let mut f = Filler::new(13);
    // Greek capitals of two bytes each searched in lower case with a final sigma, and KELVIN
    // SIGNs (3 bytes) searched as `k` (1 byte), so that the text of the match is longer than
    // the pattern: matched only under folding, and cut at many byte offsets around the likely
    // piece seams.
    for (pattern, text) in [("οδυσσευς", "ΟΔΥΣΣΕΥΣ"), ("kzkz", "\u{212A}Z\u{212A}Z")]
    {
        for at in [cap - 6, cap - 3, cap - 1, 2 * cap - 2, READ_BUFFER - 5] {
            let mut data = Vec::new();
            f.text(&mut data, at);
            data.extend_from_slice(text.as_bytes());
            f.text(&mut data, 9000);
            data.push(b'\n');
            env.write("g.txt", &data);
            let a = env.both("grep", &[pattern, "g.txt", "true", "true"]);
            window_shows(&a, "g.txt", 1, text, cap);
            env.both("grep", &[pattern, "g.txt"]).no_match();
        }
    }
}

#[test]
fn grep_on_one_core_answers_as_on_several() {
    // On one core the search runs on the walking thread, which once let go of each file's
    // matches without holding them first: the count of held bytes wrapped below zero (a panic in
    // a debug build), and every later file was then handed back to be read again.
    let mut env = TestEnv::new();
    for d in 0..4 {
        for f in 0..30 {
            let body = if f % 7 == 0 {
                "a needle\nhay\n"
            } else {
                "hay\n"
            };
            env.write(&format!("t/d{d}/f{f:02}.txt"), body);
        }
    }
    let several = env.run("grep", &["needle", "t"]);
    assert_eq!(several.lines().len(), 20, "{several:?}");
    env.child_setup(crate::kernel::one_cpu());
    env.run("grep", &["needle", "t"]).ok(&several.output);
}
