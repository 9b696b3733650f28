//! Confinement (docs/contract.md#confinement) as the reading tools `cat`, `head`, `tail`, `wc` and
//! `stat` see it, and what those tools and `pwd` print (docs/contract.md#tools).
//!
//! The confinement tests attack from every side a caller or a planted tree can: `..`, absolute
//! paths, prefix siblings of the root, symlinks (relative, absolute, chained, looping, dangling),
//! excluded names at any depth and in any case, and special files that could block a read. Every
//! denial must be the exact text `denied: PATH`, with PATH as the caller gave it, and must not
//! depend on whether the object exists. The harness also checks on every call that no canary from
//! `outside/` or from an excluded file leaks.
//!
//! The tool tests pin the output formats byte for byte, and check the places where streaming
//! readers go wrong: characters and invalid sequences split by internal buffer edges, reading a
//! huge file from the end within a small read budget, and Unicode word splitting.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::support::{Answer, TestEnv};

/// Every tool that reads one path (the walkers ls, find, grep and diff are tested elsewhere).
const READERS: [&str; 5] = ["cat", "head", "tail", "wc", "stat"];

/// The readers that open the content, and so must refuse anything but a regular file.
const CONTENT_READERS: [&str; 4] = ["cat", "head", "tail", "wc"];

/// A call that could block (a FIFO, a device) must answer well before this.
const PROMPT: Duration = Duration::from_secs(3);

/// A sandbox with an ordinary file, a subfolder, and secrets under the default excludes.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.write("a.txt", "hello\n");
    env.write("sub/x", "S1\n");
    env.secret(".env");
    env.secret(".ssh/id_rsa");
    env.secret("server.pem");
    env
}

/// Every reader denies `path` with exactly `denied: PATH`. cat is also called through a link
/// named cat (confinement does not depend on how the tool was named; one check of that suffices,
/// and halving the calls keeps the module fast).
#[track_caller]
fn deny_all(env: &TestEnv, path: &str) {
    env.both("cat", &[path]).denied(path);
    for tool in &READERS[1..] {
        env.run(tool, &[path]).denied(path);
    }
}

/// The error is `not a file: PATH`, exactly, with no output.
#[track_caller]
fn not_a_file(a: &Answer, path: &str) {
    assert_eq!(
        a.error.as_deref(),
        Some(format!("not a file: {path}").as_str()),
        "for {}",
        a.shown
    );
    assert_eq!(a.output, "", "output of {}", a.shown);
    assert_eq!(a.status, 2, "exit status of {}", a.shown);
}

/// The error names nothing but what the caller gave: none of `hidden` (link targets, resolved
/// names) and no absolute path into the sandbox unless the caller wrote one.
#[track_caller]
fn names_only_the_argument(a: &Answer, env: &TestEnv, given: &str, hidden: &[&str]) {
    let e = a
        .error
        .as_deref()
        .unwrap_or_else(|| panic!("expected an error for {}", a.shown));
    assert!(
        e.contains(given),
        "error of {} should name {given:?}: {e}",
        a.shown
    );
    for h in hidden {
        assert!(!e.contains(h), "error of {} shows {h:?}: {e}", a.shown);
    }
    let base = env.base().display().to_string();
    if !given.contains(&base) {
        assert!(
            !e.contains(&base),
            "error of {} shows an absolute path: {e}",
            a.shown
        );
    }
}

/// Runs the call both ways and asserts that it answered promptly (nothing blocked).
#[track_caller]
fn prompt(env: &TestEnv, tool: &str, args: &[&str]) -> Answer {
    let t0 = Instant::now();
    let a = env.both(tool, args);
    assert!(
        t0.elapsed() < 2 * PROMPT,
        "{tool} {args:?} took {:?}: something blocked",
        t0.elapsed()
    );
    a
}

/// Sets the modification time of `p` (the link itself when `nofollow`).
fn set_mtime(p: &Path, secs: i64, nanos: u32, nofollow: bool) {
    let t = rustix::fs::Timespec {
        tv_sec: secs,
        tv_nsec: nanos.into(),
    };
    let flags = if nofollow {
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW
    } else {
        rustix::fs::AtFlags::empty()
    };
    rustix::fs::utimensat(
        rustix::fs::CWD,
        p,
        &rustix::fs::Timestamps {
            last_access: t,
            last_modification: t,
        },
        flags,
    )
    .unwrap();
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Makes a device node; `false` when this process may not (no CAP_MKNOD), so the caller skips.
fn mknod(p: &Path, kind: rustix::fs::FileType, major: u32, minor: u32) -> bool {
    match rustix::fs::mknodat(
        rustix::fs::CWD,
        p,
        kind,
        rustix::fs::Mode::from_raw_mode(0o600),
        rustix::fs::makedev(major, minor),
    ) {
        Ok(()) => true,
        Err(e) if e == rustix::io::Errno::PERM => {
            eprintln!("skipped: mknod is not permitted here");
            false
        }
        Err(e) => panic!("mknod {}: {e}", p.display()),
    }
}

/// The stat output as a JSON object, after checking that it is one line with the keys in order.
#[track_caller]
fn stat_of(a: &Answer) -> Map<String, Value> {
    assert_eq!(a.error, None, "stat failed for {}", a.shown);
    let body = a.output.strip_suffix('\n').unwrap_or(&a.output);
    assert!(
        !body.contains('\n'),
        "stat output is not one line: {:?}",
        a.output
    );
    let v = a.json();
    let obj = v.as_object().expect("stat prints a JSON object").clone();
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["path", "type", "size_bytes", "permissions", "modified_at"],
        "stat keys in order for {}",
        a.shown
    );
    obj
}

/// `(type, permissions)` of a stat answer.
#[track_caller]
fn type_and_mode(a: &Answer) -> (String, String) {
    let s = stat_of(a);
    (
        s["type"].as_str().unwrap().to_string(),
        s["permissions"].as_str().unwrap().to_string(),
    )
}

/// The wc output as `[lines, words, bytes]`, after checking that it is one line of JSON with
/// exactly those keys, in that order, holding integers.
#[track_caller]
fn wc_of(a: &Answer) -> [u64; 3] {
    assert_eq!(a.error, None, "wc failed for {}", a.shown);
    let body = a.output.strip_suffix('\n').unwrap_or(&a.output);
    assert!(
        !body.contains('\n'),
        "wc output is not one line: {:?}",
        a.output
    );
    let v = a.json();
    let obj = v.as_object().expect("wc prints a JSON object");
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["lines", "words", "bytes"],
        "wc keys in order for {}",
        a.shown
    );
    let n = |k: &str| {
        obj[k]
            .as_u64()
            .unwrap_or_else(|| panic!("wc {k} is not an integer: {}", obj[k]))
    };
    [n("lines"), n("words"), n("bytes")]
}

/// What wc must count, straight from the contract: `\n` bytes, maximal runs of characters that are
/// not White_Space in the lossily decoded text (Rust's `char::is_whitespace` is exactly that
/// property), raw bytes.
fn wc_reference(data: &[u8]) -> [u64; 3] {
    let lines = data.iter().filter(|&&b| b == b'\n').count();
    let words = String::from_utf8_lossy(data)
        .split(char::is_whitespace)
        .filter(|w| !w.is_empty())
        .count();
    [lines as u64, words as u64, data.len() as u64]
}

/// The lines of `data`, each with its own `\n` (the last one may have none).
fn lines_of(data: &[u8]) -> Vec<&[u8]> {
    data.split_inclusive(|&b| b == b'\n').collect()
}

fn head_reference(data: &[u8], n: usize) -> String {
    String::from_utf8_lossy(
        &lines_of(data)[..]
            .iter()
            .take(n)
            .copied()
            .collect::<Vec<_>>()
            .concat(),
    )
    .into_owned()
}

fn tail_reference(data: &[u8], n: usize) -> String {
    let lines = lines_of(data);
    let from = lines.len().saturating_sub(n);
    String::from_utf8_lossy(&lines[from..].concat()).into_owned()
}

/// Internal buffer sizes that readers commonly use; files are built around them.
const EDGES: [usize; 4] = [4096, 8192, 65536, 131_072];

/// `size` bytes of ASCII lines of `line_len` bytes (one line when 0), in which the character `c`
/// straddles every edge of [`EDGES`] counted from the start and from the end, with `before` of
/// its bytes before the edge (where two such places would overlap, the first one wins).
fn straddling(size: usize, line_len: usize, c: char, before: usize) -> Vec<u8> {
    let mut data: Vec<u8> = (0..size)
        .map(|i| {
            if line_len > 0 && i % line_len == line_len - 1 {
                b'\n'
            } else {
                b'a' + (i % 23) as u8
            }
        })
        .collect();
    let mut buf = [0u8; 4];
    let enc = c.encode_utf8(&mut buf).as_bytes();
    let mut taken: Vec<usize> = Vec::new();
    for e in EDGES {
        for edge in [Some(e), size.checked_sub(e)] {
            let Some(at) = edge.and_then(|edge| edge.checked_sub(before)) else {
                continue;
            };
            if at + enc.len() > size || taken.iter().any(|&t| t.abs_diff(at) < 4) {
                continue;
            }
            data[at..at + enc.len()].copy_from_slice(enc);
            taken.push(at);
        }
    }
    data
}

/// Every way a character can be cut: (character, bytes of it before the edge).
const SPLITS: [(char, usize); 6] = [
    ('\u{e9}', 1),
    ('\u{65e5}', 1),
    ('\u{65e5}', 2),
    ('\u{1F600}', 1),
    ('\u{1F600}', 2),
    ('\u{1F600}', 3),
];

/// cat, head, tail and wc of the file `name` holding `data`, against the contract: cat the whole
/// file, head every line but the last, tail every line (so that reading backwards crosses every
/// edge), wc the three counts.
#[track_caller]
fn check_readers(env: &TestEnv, name: &str, data: &[u8]) {
    let lines = lines_of(data).len();
    assert!(
        lines <= 10_000,
        "{name}: more lines than one call may ask for"
    );
    env.run("cat", &[name]).ok(&String::from_utf8_lossy(data));
    let most = lines.saturating_sub(1).max(1);
    env.run("head", &[name, most.to_string().as_str()])
        .ok(&head_reference(data, most));
    env.run("tail", &[name, lines.to_string().as_str()])
        .ok(&tail_reference(data, lines));
    assert_eq!(
        wc_of(&env.run("wc", &[name])),
        wc_reference(data),
        "wc of {name}"
    );
}

/// Files of `size + delta` bytes for each delta, with each kind of split at every edge, plus one
/// file that is a single line, all checked with [`check_readers`].
fn check_edges_near(size: usize, deltas: &[isize]) {
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1048576");
    for &delta in deltas {
        let len = size.checked_add_signed(delta).unwrap();
        for (c, before) in SPLITS {
            let data = straddling(len, 40, c, before);
            let name = format!("f{len}_{}_{before}", c.len_utf8());
            env.write(&name, &data);
            check_readers(&env, &name, &data);
        }
        // One long line: the reader must hold it across its blocks.
        let data = straddling(len, 0, '\u{1F600}', 2);
        // The construction really cuts a character at each edge from the start.
        for e in EDGES.iter().filter(|&&e| e + 2 <= len) {
            assert_eq!(
                data[*e] & 0xC0,
                0x80,
                "no character straddles byte {e} of {len}"
            );
        }
        let name = format!("line{len}");
        env.write(&name, &data);
        check_readers(&env, &name, &data);
    }
}

/// A deterministic mix of `len` bytes drawn from `alphabet` (a small LCG, so that failures repeat).
fn byte_soup(len: usize, seed: u64, alphabet: &[&[u8]]) -> Vec<u8> {
    let mut state = seed;
    let mut out = Vec::with_capacity(len + 4);
    while out.len() < len {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let pick = (state >> 33) as usize % alphabet.len();
        out.extend_from_slice(alphabet[pick]);
    }
    out.truncate(len);
    out
}

// ---------------------------------------------------------------------------------------------
// §6: paths that leave the root
// ---------------------------------------------------------------------------------------------

#[test]
fn dotdot_out_of_the_root_is_denied_by_every_reader() {
    let env = fixture();
    for p in [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "./../outside/secret.txt",
        // Back into the root and out again: still ends outside.
        "../root/../outside/secret.txt",
    ] {
        deny_all(&env, p);
    }
    env.both("head", &["sub/../../outside/secret.txt", "1"])
        .denied("sub/../../outside/secret.txt");
    for p in ["..", "../outside", "../..", "sub/../.."] {
        env.both("stat", &[p]).denied(p);
    }
}

#[test]
fn dotdot_that_comes_back_into_the_root_is_allowed() {
    // The object lies beneath the root; leaving the root on the way is not itself an offence.
    let env = fixture();
    env.both("cat", &["../root/a.txt"]).ok("hello\n");
    env.both("cat", &["sub/../../root/sub/x"]).ok("S1\n");
}

#[test]
fn absolute_paths_outside_the_roots_are_denied_naming_the_path_as_given() {
    let env = fixture();
    let secret = env.outside().join("secret.txt").display().to_string();
    deny_all(&env, &secret);
    // A missing outside object is denied alike: no existence oracle.
    let missing = env.outside().join("missing").display().to_string();
    deny_all(&env, &missing);
    env.both("cat", &["/etc/passwd"]).denied("/etc/passwd");
    for p in ["/", "/etc", "/proc/self/environ"] {
        env.both("stat", &[p]).denied(p);
    }
    let base = env.base().display().to_string();
    env.both("stat", &[base.as_str()]).denied(&base);
}

#[test]
fn prefix_siblings_of_the_root_are_outside() {
    // Roots compare whole components: a string prefix test would let these through.
    let env = fixture();
    let siblings = ["root_evil", "root-old", "root.bak", "root2", "rootx"];
    for d in siblings {
        env.secret(&env.base().join(d).join("s.txt").display().to_string());
    }
    for d in siblings {
        let rel = format!("../{d}/s.txt");
        env.both("cat", &[rel.as_str()]).denied(&rel);
        let abs = env.base().join(d).join("s.txt").display().to_string();
        deny_all(&env, &abs);
        let dir = env.base().join(d).display().to_string();
        env.both("stat", &[dir.as_str()]).denied(&dir);
    }
    let glued = format!("{}_evil/s.txt", env.root().display());
    env.both("cat", &[glued.as_str()]).denied(&glued);
    env.symlink("sib", "../root_evil/s.txt");
    deny_all(&env, "sib");
    env.symlink("sib_abs", env.base().join("root.bak/s.txt"));
    deny_all(&env, "sib_abs");
}

#[test]
fn a_working_directory_below_the_root_can_climb_only_to_the_root() {
    let mut env = fixture();
    let root = env.root().display().to_string();
    env.var("READBOX_ROOTS", &root).cd("sub");
    env.both("cat", &["x"]).ok("S1\n");
    env.both("cat", &["../a.txt"]).ok("hello\n");
    deny_all(&env, "../../outside/secret.txt");
    deny_all(&env, "../../root_evil/s.txt");
    assert_eq!(stat_of(&env.both("stat", &[".."]))["type"], "directory");
    env.both("stat", &["../.."]).denied("../..");
}

#[test]
fn a_symlink_from_one_root_into_another_is_allowed_but_not_between_them() {
    // "beneath a root": any root will do; the folder holding both roots is not one.
    let mut env = TestEnv::new();
    let one = env.mkdir("one").display().to_string();
    let two = env.mkdir("two").display().to_string();
    env.write("two/t.txt", "in two\n");
    env.secret("between.txt");
    env.symlink("one/to_two", "../two/t.txt");
    env.symlink("one/to_between", "../between.txt");
    env.var("READBOX_ROOTS", &format!("{one}:{two}")).cd("one");
    env.both("cat", &["to_two"]).ok("in two\n");
    env.both("cat", &["../two/t.txt"]).ok("in two\n");
    deny_all(&env, "to_between");
    deny_all(&env, "../between.txt");
    env.both("stat", &[".."]).denied("..");
}

#[test]
fn normalised_paths_that_stay_inside_are_read() {
    let env = fixture();
    let root = env.root().display().to_string();
    for p in [
        ".//./a.txt".to_string(),
        "./sub/../a.txt".to_string(),
        "sub/../sub/../a.txt".to_string(),
        "sub//..//a.txt".to_string(),
        format!("{root}//sub/../a.txt"),
        format!("{root}/./a.txt"),
        format!("{root}/a.txt"),
        // `/..` is `/`, as the kernel has it.
        format!("/..{root}/a.txt"),
    ] {
        env.both("cat", &[p.as_str()]).ok("hello\n");
    }
    for p in ["sub/./x", "sub//x", "./sub/x"] {
        env.both("cat", &[p]).ok("S1\n");
    }
}

#[test]
fn dotdot_applies_to_the_object_the_kernel_reaches() {
    // docs/contract.md#confinement: the object is found as the kernel finds it, not by folding the
    // text.
    let env = fixture();
    env.write("x", "ROOT\n");
    env.mkdir("sub/deep");
    env.symlink("dd", "sub/deep");
    // dd/.. is sub (the link's target's parent), not the root.
    env.both("cat", &["dd/../x"]).ok("S1\n");
    // Folded as text this leaves the root; the kernel's walk stays inside and reaches root/x.
    env.both("cat", &["dd/../../x"]).ok("ROOT\n");
    deny_all(&env, "dd/../../../outside/secret.txt");
    // A missing or non-directory component stops the walk before `..` could undo it.
    env.both("cat", &["nodir/../a.txt"])
        .fails("not found", "nodir/../a.txt");
    env.both("cat", &["sub/x/../../a.txt"])
        .fails("not a directory", "sub/x/../../a.txt");
    // ... but a missing component does not turn a way out of the root into `not found`.
    deny_all(&env, "nodir/../../outside/secret.txt");
}

#[test]
fn trailing_slash_on_a_file_is_not_a_directory() {
    // docs/contract.md#decisions-on-details: `file/x` and `file/` are `not a directory:`.
    let env = fixture();
    env.symlink("fl", "a.txt");
    for p in ["a.txt/", "a.txt/.", "a.txt/x", "fl/", "sub/x/"] {
        for tool in READERS {
            let a = env.run(tool, &[p]);
            a.fails("not a directory", p);
            names_only_the_argument(&a, &env, p, &[]);
        }
    }
}

#[test]
fn a_link_whose_target_ends_in_a_slash_must_lead_to_a_directory() {
    // The kernel resolves `fl -> a.txt/` like the path `a.txt/`: ENOTDIR, so `cat fl` fails as
    // coreutils' does (docs/contract.md#confinement, #decisions-on-details).
    let env = fixture();
    env.mkdir("d");
    env.symlink("fl", "a.txt/");
    env.symlink("fl_dot", "a.txt/.");
    env.symlink("dl", "d/");
    for tool in READERS {
        for p in ["fl", "fl_dot"] {
            let a = env.run(tool, &[p]);
            a.fails("not a directory", p);
            names_only_the_argument(&a, &env, p, &["a.txt"]);
        }
    }
    not_a_file(&env.both("cat", &["dl"]), "dl");
    assert_eq!(stat_of(&env.both("stat", &["dl"]))["type"], "directory");
}

#[test]
fn trailing_slash_or_dot_on_an_excluded_name_is_denied() {
    let env = fixture();
    for p in [
        ".env/",
        ".env/.",
        "./.env",
        ".ssh/",
        ".ssh/.",
        ".ssh/./id_rsa",
        "server.pem/",
    ] {
        deny_all(&env, p);
    }
    // The same when the excluded object does not exist: `not found` would be an oracle.
    let bare = TestEnv::new();
    for p in [".env/", ".env/.", ".ssh/", ".ssh/./id_rsa", "server.pem/"] {
        deny_all(&bare, p);
    }
}

// ---------------------------------------------------------------------------------------------
// §6: symlinks
// ---------------------------------------------------------------------------------------------

#[test]
fn symlinks_to_an_outside_file_are_denied_relative_and_absolute() {
    let env = fixture();
    env.symlink("link_rel", "../outside/secret.txt");
    env.symlink("link_abs", env.outside().join("secret.txt"));
    env.symlink("deep/er/link_up", "../../../outside/secret.txt");
    // A procfs magic link is outside the root even when the kernel would come back into it.
    env.symlink("proc_cwd", "/proc/self/cwd/a.txt");
    for p in ["link_rel", "link_abs", "deep/er/link_up", "proc_cwd"] {
        deny_all(&env, p);
        // LINES 0 must not skip the check.
        env.both("head", &[p, "0"]).denied(p);
        env.both("tail", &[p, "0"]).denied(p);
        let a = env.both("cat", &[p]);
        names_only_the_argument(&a, &env, p, &["outside", "secret"]);
    }
}

#[test]
fn symlink_to_an_outside_folder_denies_every_path_through_it() {
    let env = fixture();
    env.symlink("outdir", env.outside());
    env.symlink("outdir_rel", "../outside");
    for link in ["outdir", "outdir_rel"] {
        for rest in [
            "",
            "/",
            "/secret.txt",
            "/nothing-here",
            "/./secret.txt",
            "/../outside/secret.txt",
        ] {
            let p = format!("{link}{rest}");
            deny_all(&env, &p);
        }
    }
}

#[test]
fn symlink_to_the_root_by_absolute_path_stays_inside() {
    let env = fixture();
    env.symlink("me", env.root());
    env.symlink("sub/up", "..");
    env.symlink("messy", format!("{}//sub/./../a.txt", env.root().display()));
    env.both("cat", &["messy"]).ok("hello\n");
    env.both("cat", &["me/a.txt"]).ok("hello\n");
    env.both("cat", &["me/me/sub/x"]).ok("S1\n");
    env.both("cat", &["sub/up/sub/up/a.txt"]).ok("hello\n");
    // From the real root, `..` leaves it.
    deny_all(&env, "me/../outside/secret.txt");
    deny_all(&env, "sub/up/../outside/secret.txt");
    env.both("stat", &["sub/up/.."]).denied("sub/up/..");
}

#[test]
fn symlinks_into_excluded_objects_are_denied() {
    let env = fixture();
    env.write("real.txt", "REAL\n");
    let abs_env = env.root().join(".env").display().to_string();
    let links = [
        ("notes.txt", ".env"),
        ("cfg", ".ssh"),
        ("cert.txt", "server.pem"),
        ("deep/alias", "../.ssh/id_rsa"),
        ("abs_env", abs_env.as_str()),
        // Chains: the excluded name may sit in the middle, and be a link itself.
        ("sub/.env", "../real.txt"),
        ("chain", "sub/.env"),
        ("c2", "c3"),
        ("c3", ".ssh/id_rsa"),
        // A link whose own name is excluded, whatever it points at.
        ("cert.pem", "a.txt"),
    ];
    for (link, target) in links {
        env.symlink(link, target);
    }
    for (link, target) in links {
        deny_all(&env, link);
        let a = env.both("cat", &[link]);
        let hidden: &[&str] = if link.contains(target) {
            &[]
        } else {
            &[target]
        };
        names_only_the_argument(&a, &env, link, hidden);
    }
    for p in ["cfg/", "cfg/id_rsa", "cfg/missing", "chain/"] {
        deny_all(&env, p);
    }
    // The chain's end is readable by its own name: the denial came from the excluded link.
    env.both("cat", &["real.txt"]).ok("REAL\n");
}

#[test]
fn symlinks_into_missing_excluded_objects_are_denied_too() {
    // A dangling link into an excluded name must not answer `not found`: that would tell whether
    // the secret exists.
    let env = TestEnv::new();
    env.symlink("notes.txt", ".env");
    env.symlink("cfg", ".ssh");
    env.symlink("k", "keys/prod.key");
    for p in ["notes.txt", "cfg/id_rsa", "k"] {
        deny_all(&env, p);
    }
}

#[test]
fn dotdot_after_a_symlink_into_an_excluded_folder_is_denied() {
    // in -> .ssh/inner, so in/.. is .ssh and in/../id_rsa is .ssh/id_rsa.
    let env = fixture();
    env.mkdir(".ssh/inner");
    env.symlink("in", ".ssh/inner");
    deny_all(&env, "in/../id_rsa");
    deny_all(&env, "in/..");
    deny_all(&env, "in");
}

#[test]
fn passing_through_an_excluded_folder_tells_nothing_about_it() {
    // `.ssh/../a.txt` walks through .ssh; if its answer changed with .ssh's existence, it would be
    // an existence oracle for an excluded object (docs/contract.md#confinement).
    let with = fixture();
    with.symlink("via", ".ssh/../a.txt");
    let without = TestEnv::new();
    without.write("a.txt", "hello\n");
    without.symlink("via", ".ssh/../a.txt");
    for p in [".ssh/../a.txt", "via", ".env/../a.txt"] {
        for tool in READERS {
            let a = with.run(tool, &[p]);
            let b = without.run(tool, &[p]);
            assert_eq!(
                (a.status, &a.output, &a.error),
                (b.status, &b.output, &b.error),
                "{tool} {p}: the answer depends on whether the excluded object exists"
            );
        }
    }
}

#[test]
fn symlink_loops_are_io_errors_without_hanging_or_naming_the_target() {
    let env = fixture();
    env.symlink("loopA", "loopB");
    env.symlink("loopB", "loopA");
    env.symlink("self", "self");
    env.symlink("d/spin", "../d/spin");
    for (p, target) in [
        ("loopA", "loopB"),
        ("loopA/child", "loopB"),
        ("self", "self/"),
        ("d/spin", "../d"),
    ] {
        for tool in READERS {
            let a = prompt(&env, tool, &[p]);
            a.fails("io", p);
            names_only_the_argument(&a, &env, p, &[target]);
        }
    }
}

#[test]
fn links_to_ancestors_resolve_normally() {
    // Not every link to `..` or `.` is a loop: these paths end at a real file.
    let env = fixture();
    env.write("d/f.txt", "in d\n");
    env.symlink("d/up", "..");
    env.symlink("here", ".");
    env.both("cat", &["d/up/d/up/here/d/f.txt"]).ok("in d\n");
    env.both("cat", &["here/here/here/a.txt"]).ok("hello\n");
}

#[test]
fn symlink_chains_of_forty_hops_resolve_and_longer_ones_fail_with_io() {
    // docs/contract.md#decisions-on-details: a loop is "over 40 hops", as Linux's limit: 40 links
    // are followed, 41 are not.
    let env = fixture();
    for i in 1..=41 {
        let next = if i == 41 {
            "a.txt".to_string()
        } else {
            format!("l{}", i + 1)
        };
        env.symlink(&format!("l{i}"), next);
    }
    // l2 -> ... -> l41 -> a.txt is 40 hops; l1 is 41.
    env.both("cat", &["l2"]).ok("hello\n");
    let a = env.both("cat", &["l1"]);
    a.fails("io", "l1");
    names_only_the_argument(&a, &env, "l1", &["l2", "a.txt"]);
}

#[test]
fn dangling_and_live_outside_links_get_identical_denials() {
    let env = fixture();
    env.symlink("dang", env.outside().join("missing"));
    env.symlink("live", env.outside().join("secret.txt"));
    env.symlink("dang_rel", "../outside/missing");
    env.symlink("live_rel", "../outside/secret.txt");
    env.symlink("dang_dir", "../nowhere/at/all");
    for tool in READERS {
        for (dang, live) in [
            ("dang", "live"),
            ("dang_rel", "live_rel"),
            ("dang_dir", "live"),
        ] {
            for suffix in ["", "/", "/x"] {
                let (d, l) = (format!("{dang}{suffix}"), format!("{live}{suffix}"));
                let a = env.run(tool, &[d.as_str()]);
                let b = env.run(tool, &[l.as_str()]);
                a.denied(&d);
                b.denied(&l);
                assert_eq!(
                    (a.status, a.truncated),
                    (b.status, b.truncated),
                    "{tool} {d} vs {l}"
                );
            }
        }
    }
}

#[test]
fn denials_do_not_depend_on_existence() {
    let env = fixture();
    let out = |n: &str| env.outside().join(n).display().to_string();
    let pairs = [
        (".env".to_string(), ".env.nope".to_string()),
        (".ssh/id_rsa".to_string(), ".ssh/none".to_string()),
        (".ssh".to_string(), ".aws".to_string()),
        ("server.pem".to_string(), "client.pem".to_string()),
        (out("secret.txt"), out("none")),
        (
            "../outside/secret.txt".to_string(),
            "../outside/none".to_string(),
        ),
        ("../outside".to_string(), "../nowhere".to_string()),
        (
            "../outside/secret.txt/x".to_string(),
            "../outside/none/x".to_string(),
        ),
    ];
    for tool in READERS {
        for (have, miss) in &pairs {
            let a = env.run(tool, &[have.as_str()]);
            let b = env.run(tool, &[miss.as_str()]);
            a.denied(have);
            b.denied(miss);
            assert_eq!(
                (a.status, &a.output, a.truncated),
                (b.status, &b.output, b.truncated),
                "{tool}: {have} vs {miss}"
            );
        }
    }
}

#[test]
fn errors_name_the_path_as_given_never_a_link_target() {
    let env = fixture();
    env.mkdir("d");
    env.symlink("to_missing", "missing-target-name.txt");
    env.symlink("to_dir", "d");
    env.symlink("to_file", "a.txt");
    env.symlink("to_home", env.outside().join(".ssh/id_rsa"));
    let a = env.both("cat", &["to_missing"]);
    a.fails("not found", "to_missing");
    names_only_the_argument(&a, &env, "to_missing", &["missing-target-name"]);
    for tool in CONTENT_READERS {
        not_a_file(&env.both(tool, &["to_dir"]), "to_dir");
    }
    let a = env.both("wc", &["to_file/x"]);
    a.fails("not a directory", "to_file/x");
    names_only_the_argument(&a, &env, "to_file/x", &["a.txt"]);
    let a = env.both("cat", &["to_home"]);
    a.denied("to_home");
    names_only_the_argument(&a, &env, "to_home", &[".ssh", "outside"]);
    // The spelling is kept, dots and double slashes included.
    let a = env.both("head", &["./sub//../nope", "3"]);
    a.fails("not found", "./sub//../nope");
    let a = env.both("tail", &["sub/./nope"]);
    a.fails("not found", "sub/./nope");
}

#[test]
fn a_line_break_in_a_path_keeps_the_error_on_one_line() {
    // The harness checks the one-line rule; the error must still say which path it was.
    let env = fixture();
    let a = env.both("cat", &["no\nsuch"]);
    a.fails("not found", "no");
    let a = env.both("cat", &["../outside/\nx"]);
    assert!(
        a.error
            .as_deref()
            .unwrap()
            .starts_with("denied: ../outside/"),
        "{:?}",
        a.error
    );
}

// ---------------------------------------------------------------------------------------------
// §6: excludes
// ---------------------------------------------------------------------------------------------

#[test]
fn default_excludes_apply_at_any_depth_to_the_object_and_its_ancestors() {
    let env = fixture();
    let planted = [
        ".env.local",
        "x/.env.production",
        "w/.env/sub/x",
        "a/b/.ssh/id_ed25519",
        "a/.aws/credentials",
        "a/b/c/tls.key",
        "a/b/c/d.pem",
    ];
    for p in planted {
        env.secret(p);
    }
    for p in planted {
        deny_all(&env, p);
    }
    for p in [
        "w/.env",
        "w/.env/nothing",
        "a/b/.ssh",
        "a/.aws",
        "a/b/.ssh/../../b/.ssh/id_ed25519",
    ] {
        deny_all(&env, p);
    }
    let abs = env.root().join("a/b/c/tls.key").display().to_string();
    deny_all(&env, &abs);
    // Leaving the root and coming back does not shake the excludes off.
    deny_all(&env, "../root/.env");
    deny_all(&env, "sub/../../root/a/.aws/credentials");
}

#[test]
fn default_excludes_ignore_ascii_case() {
    let env = fixture();
    let planted = [
        ".ENV",
        ".Env.Local",
        "ID.KEY",
        "Server.PeM",
        ".SSH/id_rsa",
        "deep/.AWS/credentials",
    ];
    for p in planted {
        env.secret(p);
    }
    for p in planted {
        deny_all(&env, p);
    }
    // A link's target is matched without regard to case too.
    env.symlink("up", "ID.KEY");
    deny_all(&env, "up");
}

#[test]
fn default_excludes_ignore_unicode_case_variants() {
    // KELVIN SIGN (U+212A) is an uppercase K and LONG S (U+017F) a lowercase s under Unicode case
    // folding: on a case-folding filesystem `id.\u{212A}ey` can be the very file `id.key`. Patterns match
    // whatever the case (docs/contract.md#confinement): a secret does not become public by a
    // rename.
    let env = fixture();
    let planted = ["id.\u{212A}ey", ".\u{17F}sh/id_rsa", "\u{17F}erver.pem"];
    for p in planted {
        env.secret(p);
    }
    for p in planted {
        deny_all(&env, p);
    }
}

#[test]
fn default_excludes_match_undecodable_names() {
    // A name that is not UTF-8 must not slip past `*.pem`; the denial shows it lossily decoded.
    let env = fixture();
    let name = OsStr::from_bytes(b"\xff.PEM");
    std::fs::write(env.root().join(name), "CANARY-SECRET-undecodable\n").unwrap();
    for tool in READERS {
        env.both(tool, &[name]).denied("\u{FFFD}.PEM");
    }
}

#[test]
fn near_names_of_default_excludes_stay_readable() {
    let env = fixture();
    for p in [
        ".envrc",
        "env.txt",
        ".env-sample",
        "key.txt",
        "pem.txt",
        "keys/a",
        ".sshd",
        "my.keys",
        "x.pem.txt",
        "aws",
        "ssh/config",
    ] {
        env.write(p, "fine\n");
        env.both("cat", &[p]).ok("fine\n");
    }
}

#[test]
fn exclude_by_name_covers_every_depth_and_by_path_only_that_subtree() {
    let mut env = TestEnv::new();
    env.var("READBOX_EXCLUDE", "sub:docs/private");
    let denied = [
        "sub/x",
        "a/sub/x",
        "a/b/sub",
        "docs/private/y",
        "docs/private/z/w",
    ];
    for p in denied {
        env.secret(p);
    }
    for p in denied {
        deny_all(&env, p);
    }
    for p in ["a/sub", "docs/private", "docs/private/nothing"] {
        env.both("stat", &[p]).denied(p);
    }
    // Symlinks whose resolved path is an excluded subtree.
    env.symlink("pv", "docs/private");
    env.symlink("docs/pv", "private");
    env.symlink("s", "a/sub");
    for p in ["pv/y", "docs/pv/y", "s/x"] {
        deny_all(&env, p);
    }
    for p in [
        "other/private/y",
        "docs/privateer/z",
        "subway/x",
        "a/sub.txt",
        "private/docs/q",
        "docs/docs/private/z",
    ] {
        env.write(p, "ok\n");
        env.both("cat", &[p]).ok("ok\n");
    }
}

#[test]
fn exclude_paths_are_relative_to_the_root_not_the_working_directory() {
    let mut env = TestEnv::new();
    let root = env.root().display().to_string();
    env.secret("docs/private/y");
    env.write("docs/docs/private/z", "ok\n");
    env.var("READBOX_EXCLUDE", "docs/private")
        .var("READBOX_ROOTS", &root)
        .cd("docs");
    // From docs/, `private/y` is root-relative docs/private/y: excluded.
    deny_all(&env, "private/y");
    let abs = env.root().join("docs/private/y").display().to_string();
    deny_all(&env, &abs);
    // And `docs/private/z` here is root-relative docs/docs/private/z: not excluded.
    env.both("cat", &["docs/private/z"]).ok("ok\n");
}

#[test]
fn exclude_globs_follow_globset_semantics() {
    // (pattern, excluded paths, readable paths), each in a fresh root.
    let cases: [(&str, &[&str], &[&str]); 8] = [
        (
            "logs/*.txt",
            &["logs/a.txt"],
            &["logs/old/b.txt", "a.txt", "x/logs/a.txt"],
        ),
        ("?.cfg", &["a.cfg", "d/b.cfg"], &["ab.cfg", ".cfgx"]),
        (
            "cache/**",
            &["cache/x", "cache/d/e"],
            &["cachet/x", "d/cache/x"],
        ),
        (
            "**/secret*",
            &["secret1", "d/e/secret.md"],
            &["notsecret", "d/mysecret"],
        ),
        (
            "src/**/*.rs",
            &["src/a.rs", "src/b/c/d.rs"],
            &["a.rs", "lib/src/a.rs"],
        ),
        (
            "{alpha,beta}.txt",
            &["alpha.txt", "d/beta.txt"],
            &["gamma.txt", "alphabeta.txt"],
        ),
        ("[xy]z.dat", &["xz.dat", "d/yz.dat"], &["zz.dat", "xzz.dat"]),
        ("[!a]1", &["b1", "d/c1"], &["a1", "bb1"]),
    ];
    for (pat, denied, allowed) in cases {
        let mut env = TestEnv::new();
        env.var("READBOX_EXCLUDE", pat);
        for p in denied {
            env.secret(p);
        }
        for p in denied {
            env.both("cat", &[p]).denied(p);
        }
        for p in allowed {
            env.write(p, "ok\n");
            let a = env.both("cat", &[p]);
            assert_eq!(
                (a.error.as_deref(), a.output.as_str()),
                (None, "ok\n"),
                "exclude {pat:?} should leave {p} readable"
            );
        }
    }
}

#[test]
fn custom_excludes_ignore_case_too() {
    let mut env = TestEnv::new();
    env.var("READBOX_EXCLUDE", "Build/*.O:*.SECRET");
    for p in ["build/x.o", "BUILD/Y.o", "a.secret", "d/B.Secret"] {
        env.secret(p);
    }
    for p in ["build/x.o", "BUILD/Y.o", "a.secret", "d/B.Secret"] {
        env.both("cat", &[p]).denied(p);
    }
}

#[test]
fn excludes_never_match_the_roots_own_name() {
    // docs/contract.md#decisions-on-details: the root is named `root` here; excluding `root` must
    // not deny the root itself, but does deny an entry named `root` below it.
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.secret("root/inner.txt");
    env.var("READBOX_EXCLUDE", "root");
    env.both("cat", &["a.txt"]).ok("top\n");
    let abs = env.root().join("a.txt").display().to_string();
    env.both("cat", &[abs.as_str()]).ok("top\n");
    assert_eq!(stat_of(&env.both("stat", &["."]))["type"], "directory");
    deny_all(&env, "root/inner.txt");
    env.both("stat", &["root"]).denied("root");
}

#[test]
fn an_exclude_pattern_that_does_not_compile_is_a_config_error() {
    let mut env = fixture();
    env.var("READBOX_EXCLUDE", "ok:a[");
    for tool in READERS {
        let a = env.both(tool, &["a.txt"]);
        a.fails("config", "READBOX_EXCLUDE");
        assert_eq!(a.output, "", "nothing is read under a bad policy");
    }
}

#[test]
fn tilde_is_not_special() {
    let mut env = fixture();
    let home = env.outside().display().to_string();
    env.var("HOME", &home);
    // With no folder named ~, `~/secret.txt` is simply missing: HOME is never consulted.
    env.both("cat", &["~/secret.txt"])
        .fails("not found", "~/secret.txt");
    env.both("cat", &["~root/x"]).fails("not found", "~root/x");
    env.write("~/t.txt", "tilde folder\n");
    env.both("cat", &["~/t.txt"]).ok("tilde folder\n");
    assert_eq!(stat_of(&env.both("stat", &["~"]))["type"], "directory");
    assert_eq!(stat_of(&env.both("stat", &["~"]))["path"], "~");
}

// ---------------------------------------------------------------------------------------------
// §6: only regular files are read
// ---------------------------------------------------------------------------------------------

#[test]
fn fifos_are_not_files_and_never_block() {
    let mut env = fixture();
    // Should a read block after all, the watchdog answers `timeout:` and the checks below fail.
    env.var("READBOX_TIMEOUT", "4");
    env.fifo("pipe");
    env.fifo("README.md");
    env.symlink("to_pipe", "pipe");
    // Excluded comes before the type: a FIFO under an excluded name is denied like a file.
    env.fifo("x.key");
    for tool in READERS {
        prompt(&env, tool, &["x.key"]).denied("x.key");
    }
    for tool in CONTENT_READERS {
        for p in ["pipe", "README.md", "to_pipe"] {
            not_a_file(&prompt(&env, tool, &[p]), p);
        }
    }
    // Checks come first, so LINES 0 does not skip them.
    not_a_file(&prompt(&env, "head", &["pipe", "0"]), "pipe");
    not_a_file(&prompt(&env, "tail", &["pipe", "0"]), "pipe");
}

#[test]
fn device_nodes_in_the_root_are_not_files_and_are_never_opened() {
    let mut env = fixture();
    env.var("READBOX_TIMEOUT", "4");
    if !mknod(&env.p("zero"), rustix::fs::FileType::CharacterDevice, 1, 5) {
        return;
    }
    env.symlink("to_zero", "zero");
    for tool in CONTENT_READERS {
        not_a_file(&prompt(&env, tool, &["zero"]), "zero");
        not_a_file(&prompt(&env, tool, &["to_zero"]), "to_zero");
    }
}

#[test]
fn dev_zero_through_a_symlink_in_the_root_is_denied_at_once() {
    // /dev/zero is outside the root: denied, not read until a budget runs out.
    let mut env = fixture();
    env.var("READBOX_TIMEOUT", "4");
    env.symlink("zero", "/dev/zero");
    env.symlink("devdir", "/dev");
    for tool in READERS {
        prompt(&env, tool, &["zero"]).denied("zero");
        prompt(&env, tool, &["devdir/zero"]).denied("devdir/zero");
        prompt(&env, tool, &["/dev/zero"]).denied("/dev/zero");
    }
    prompt(&env, "head", &["zero", "0"]).denied("zero");
}

#[test]
fn sockets_are_not_files() {
    let env = fixture();
    let _listener = std::os::unix::net::UnixListener::bind(env.p("sock")).unwrap();
    for tool in CONTENT_READERS {
        not_a_file(&prompt(&env, tool, &["sock"]), "sock");
    }
}

#[test]
fn directories_are_not_files() {
    let env = fixture();
    env.mkdir("d");
    env.symlink("dl", "d");
    for tool in CONTENT_READERS {
        for p in ["d", "d/", "d/.", ".", "./", "sub/..", "dl", "dl/"] {
            not_a_file(&env.run(tool, &[p]), p);
        }
    }
    not_a_file(&env.both("head", &["d", "0"]), "d");
    not_a_file(&env.both("tail", &["d", "0"]), "d");
}

// ---------------------------------------------------------------------------------------------
// §7 cat
// ---------------------------------------------------------------------------------------------

#[test]
fn cat_returns_the_content_unchanged() {
    let env = TestEnv::new();
    let text = "crlf\r\nlone\rcr\n\ttab \t\n\u{e9}t\u{e9} \u{65e5}\u{672c} \u{1F600}\n\n\nno final newline";
    env.write("f.txt", text);
    env.both("cat", &["f.txt"]).ok(text);
    env.write("empty", "");
    env.both("cat", &["empty"]).ok("");
    env.write("nl", "\n");
    env.both("cat", &["nl"]).ok("\n");
    // C1 and bidi controls reach `output` as the same characters (escaped only on the wire).
    let controls = "a\u{85}b\u{9b}c\u{202e}d\u{2066}e\u{7f}\n";
    env.write("ctl", controls);
    env.both("cat", &["ctl"]).ok(controls);
}

#[test]
fn cat_decodes_bytes_that_are_not_utf8_lossily() {
    let env = TestEnv::new();
    let mut data: Vec<u8> = (0..=255u8).collect::<Vec<_>>().repeat(3);
    data.extend_from_slice(
        b"\xe6\x97\xa5\xe6\x97\n\xf0\x9f\x98\x80\xf0\x9f\x98\xed\xa0\x80\x00end\xe3",
    );
    env.write("all.bin", &data);
    env.both("cat", &["all.bin"])
        .ok(&String::from_utf8_lossy(&data));
}

#[test]
fn cat_follows_a_symlink_inside_the_root() {
    let env = fixture();
    env.symlink("to_x", "sub/x");
    env.symlink("sub/to_a", "../a.txt");
    env.symlink("abs_a", env.root().join("a.txt"));
    env.both("cat", &["to_x"]).ok("S1\n");
    env.both("cat", &["sub/to_a"]).ok("hello\n");
    env.both("cat", &["abs_a"]).ok("hello\n");
}

#[test]
fn missing_paths_are_not_found() {
    let env = fixture();
    env.mkdir("d");
    for tool in READERS {
        for p in ["nope", "d/nope", "nodir/x", "sub/nope/.."] {
            let a = env.run(tool, &[p]);
            a.fails("not found", p);
            names_only_the_argument(&a, &env, p, &[]);
        }
    }
    env.both("cat", &[""]).fails("not found", "");
}

// ---------------------------------------------------------------------------------------------
// §7 head and tail
// ---------------------------------------------------------------------------------------------

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn head_prints_the_first_lines_with_their_own_endings() {
    let env = TestEnv::new();
    env.write("f", numbered(20));
    env.both("head", &["f"]).ok(&numbered(10));
    env.both("head", &["f", "3"]).ok(&numbered(3));
    env.both("head", &["f", "1"]).ok("line 1\n");
    env.both("head", &["f", "20"]).ok(&numbered(20));
    env.both("head", &["f", "25"]).ok(&numbered(20));
    env.write("crlf", "a\r\nb\r\nc\r\n");
    env.both("head", &["crlf", "2"]).ok("a\r\nb\r\n");
    // A lone CR does not end a line.
    env.write("cr", "a\rb\rc\nd\n");
    env.both("head", &["cr", "1"]).ok("a\rb\rc\n");
    env.write("blank", "\n\n\nx\n");
    env.both("head", &["blank", "2"]).ok("\n\n");
    env.write("empty", "");
    env.both("head", &["empty", "3"]).ok("");
}

#[test]
fn tail_prints_the_last_lines_with_their_own_endings() {
    let env = TestEnv::new();
    env.write("f", numbered(20));
    let last = |n: usize| -> String { (21 - n..=20).map(|i| format!("line {i}\n")).collect() };
    env.both("tail", &["f"]).ok(&last(10));
    env.both("tail", &["f", "1"]).ok("line 20\n");
    env.both("tail", &["f", "2"]).ok(&last(2));
    env.both("tail", &["f", "20"]).ok(&numbered(20));
    env.both("tail", &["f", "25"]).ok(&numbered(20));
    env.write("crlf", "a\r\nb\r\nc\r\n");
    env.both("tail", &["crlf", "1"]).ok("c\r\n");
    env.write("cr", "x\na\rb\rc\n");
    env.both("tail", &["cr", "1"]).ok("a\rb\rc\n");
    env.write("blank", "\n\n\n");
    env.both("tail", &["blank", "2"]).ok("\n\n");
    env.write("trail", "a\n\n");
    env.both("tail", &["trail", "1"]).ok("\n");
    env.write("empty", "");
    env.both("tail", &["empty", "3"]).ok("");
}

#[test]
fn a_missing_final_newline_stays_missing() {
    let env = TestEnv::new();
    env.write("one", "foo");
    env.write("two", "foo\nbar");
    env.both("head", &["one", "1"]).ok("foo");
    env.both("head", &["two", "1"]).ok("foo\n");
    env.both("head", &["two", "2"]).ok("foo\nbar");
    env.both("head", &["two", "5"]).ok("foo\nbar");
    env.both("tail", &["one", "1"]).ok("foo");
    env.both("tail", &["two", "1"]).ok("bar");
    env.both("tail", &["two", "2"]).ok("foo\nbar");
    env.both("tail", &["two", "5"]).ok("foo\nbar");
    env.both("cat", &["two"]).ok("foo\nbar");
}

#[test]
fn zero_lines_is_empty_only_after_the_checks_pass() {
    let env = fixture();
    env.write("f", numbered(5));
    for tool in ["head", "tail"] {
        env.both(tool, &["f", "0"]).ok("");
        env.both(tool, &["nope", "0"]).fails("not found", "nope");
        env.both(tool, &[".env", "0"]).denied(".env");
        env.both(tool, &["../outside/secret.txt", "0"])
            .denied("../outside/secret.txt");
        env.both(tool, &["a.txt/", "0"])
            .fails("not a directory", "a.txt/");
    }
}

#[test]
fn head_and_tail_take_up_to_ten_thousand_lines() {
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1000000");
    let text = numbered(10_001);
    env.write("f", &text);
    let head = env.both("head", &["f", "10000"]);
    assert_eq!(head.error, None);
    assert_eq!(head.output, numbered(10_000), "head 10000");
    let tail = env.both("tail", &["f", "10000"]);
    assert_eq!(tail.error, None);
    assert_eq!(tail.output, text["line 1\n".len()..], "tail 10000");
}

// A character split by a block edge must come out whole. File sizes sit a few bytes either side
// of common buffer sizes, and each character is cut at each of its bytes at every edge, counted
// from the start (cat, head, wc) and from the end (tail). Three tests, so that they run in
// parallel.

#[test]
fn multibyte_characters_survive_buffer_edges_near_4k_and_8k() {
    check_edges_near(4096, &[-1, 0, 1]);
    check_edges_near(8192, &[0, 2]);
}

#[test]
fn multibyte_characters_survive_buffer_edges_near_64k() {
    check_edges_near(65536, &[0, 1]);
}

#[test]
fn multibyte_characters_survive_buffer_edges_near_128k() {
    check_edges_near(131_072, &[-2, 3]);
}

/// Bytes rich in UTF-8 fragments: valid 2-, 3- and 4-byte characters (some of them White_Space),
/// their loose lead and continuation bytes, surrogates, NUL and line breaks.
const FRAGMENTS: &[&[u8]] = &[
    b"a",
    b"b",
    b" ",
    b"\n",
    b"\r\n",
    b"\t",
    b"\x00",
    b"\xff",
    b"\xc2",
    b"\xc2\xa0",
    b"\xc2\x85",
    b"\xe3",
    b"\xe3\x80",
    b"\xe3\x80\x80",
    b"\xe2\x80\xa8",
    b"\xe2\x80\x8b",
    b"\xe2\x80",
    b"\x80",
    b"\xbf",
    b"\xf0\x9f\x98\x80",
    b"\xf0\x9f",
    b"\xf0\x9f\x98",
    b"\xed\xa0\x80",
    b"\xe1\x9a\x80",
    b"\xef\xbb\xbf",
    b"\xc3\xa9",
    b"\xe6\x97\xa5",
];

#[test]
fn invalid_utf8_across_buffer_edges_decodes_as_from_utf8_lossy() {
    // One U+FFFD per maximal invalid sequence, wherever the reader's blocks happen to end.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "4194304");
    for seed in 1..=3u64 {
        let data = byte_soup(135_000, seed, FRAGMENTS);
        let name = format!("soup{seed}");
        env.write(&name, &data);
        check_readers(&env, &name, &data);
    }
}

/// A sparse file: `head`, then a hole of `hole` zero bytes, then `tail`; it occupies almost no
/// disk, so a file far over the read budget costs nothing to make.
fn sparse(env: &TestEnv, rel: &str, head: &[u8], hole: u64, tail: &[u8]) {
    let f = std::fs::File::create(env.p(rel)).unwrap();
    f.write_all_at(head, 0).unwrap();
    f.write_all_at(tail, head.len() as u64 + hole).unwrap();
}

#[test]
fn tail_of_a_huge_file_reads_from_the_end() {
    // 1 GiB, far over the default 8 MiB read budget: only a tail that reads from the end succeeds.
    let env = TestEnv::new();
    sparse(&env, "huge", b"", 1 << 30, b"\nlast1\nlast2\n");
    env.both("tail", &["huge", "2"]).ok("last1\nlast2\n");
    env.both("tail", &["huge", "1"]).ok("last2\n");
}

/// A call stopped by the read budget: `limit:`, with an output among `allowed` (whole lines only;
/// the line that crossed the budget never appears, not even in part).
#[track_caller]
fn over_budget(a: &Answer, allowed: &[&str]) {
    a.fails("limit", "");
    assert!(
        allowed.contains(&a.output.as_str()),
        "{}: output over the budget should be one of {allowed:?}, got {:?}",
        a.shown,
        &a.output[..a.output.len().min(60)]
    );
}

/// A sandbox whose read budget is `budget` bytes.
fn with_budget(budget: u64) -> TestEnv {
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_READ_BYTES", &budget.to_string());
    env
}

#[test]
fn tail_succeeds_within_a_small_read_budget() {
    // tail is charged for the lines it returns, so a budget of a few bytes covers the last lines
    // of a 64 MiB file; the line of zeros before them would cross the budget and is not emitted.
    let tail = b"\nlast1\nlast2\n";
    for budget in [64, 12] {
        let env = with_budget(budget);
        sparse(&env, "big", b"", 64 << 20, tail);
        env.both("tail", &["big", "2"]).ok("last1\nlast2\n");
        env.both("tail", &["big", "1"]).ok("last2\n");
        over_budget(&env.both("tail", &["big", "4"]), &["", "last1\nlast2\n"]);
    }
    // One byte short of the two lines: only the last one may come out.
    let env = with_budget(11);
    sparse(&env, "big", b"", 64 << 20, tail);
    over_budget(&env.both("tail", &["big", "2"]), &["", "last2\n"]);
}

#[test]
fn head_stops_early_within_a_small_read_budget() {
    // head is charged for the lines it looked at, not for the file or its buffers: 13 bytes are
    // enough for the first two lines of a 64 MiB file.
    for budget in [64, 13] {
        let env = with_budget(budget);
        sparse(&env, "big", b"first\nsecond\n", 64 << 20, b"\nend\n");
        env.both("head", &["big", "2"]).ok("first\nsecond\n");
        // The third line is 64 MiB of zeros: over the budget, it is not emitted.
        over_budget(&env.both("head", &["big", "3"]), &["first\nsecond\n"]);
    }
    let env = with_budget(12);
    sparse(&env, "big", b"first\nsecond\n", 64 << 20, b"\nend\n");
    over_budget(&env.both("head", &["big", "2"]), &["first\n"]);
}

// ---------------------------------------------------------------------------------------------
// §7 wc
// ---------------------------------------------------------------------------------------------

#[test]
fn wc_prints_one_json_line_of_lines_words_bytes() {
    let env = TestEnv::new();
    env.write("notes.txt", "hello world\nsecond line\nlast");
    assert_eq!(wc_of(&env.both("wc", &["notes.txt"])), [2, 5, 28]);
    let cases: [(&str, &[u8], [u64; 3]); 6] = [
        ("empty", b"", [0, 0, 0]),
        ("nl", b"\n", [1, 0, 1]),
        ("only", b"only", [0, 1, 4]),
        ("crlf", b"a\r\nb\r\n", [2, 2, 6]),
        ("spaces", b"  a  b\t\tc \n\n d", [2, 4, 14]),
        ("utf8", "日本 語\n".as_bytes(), [1, 2, 11]),
    ];
    for (name, data, want) in cases {
        env.write(name, data);
        assert_eq!(wc_of(&env.both("wc", &[name])), want, "wc {name}");
    }
}

/// Unicode's White_Space property (PropList.txt), the word separators of docs/contract.md#tools,
/// wc.
const WHITE_SPACE: [char; 25] = [
    '\u{9}', '\u{a}', '\u{b}', '\u{c}', '\u{d}', ' ', '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}',
    '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}',
    '\u{2009}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}',
];

#[test]
fn wc_splits_words_on_every_unicode_white_space_character() {
    // The reference counter relies on char::is_whitespace being White_Space: check that first.
    let from_std: Vec<char> = (0..=0x10_FFFFu32)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .collect();
    assert_eq!(
        from_std, WHITE_SPACE,
        "char::is_whitespace is not White_Space"
    );
    let env = TestEnv::new();
    for (i, c) in WHITE_SPACE.iter().enumerate() {
        let text = format!("a{c}b{c}{c}c");
        env.write(&format!("w{i}"), &text);
        let got = wc_of(&env.run("wc", &[format!("w{i}").as_str()]));
        assert_eq!(got[1], 3, "U+{:04X} must separate words", *c as u32);
        assert_eq!(got[2], text.len() as u64, "bytes for U+{:04X}", *c as u32);
    }
}

#[test]
fn wc_does_not_split_on_characters_that_only_look_blank() {
    let env = TestEnv::new();
    for (i, c) in [
        '\u{200b}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{1f}', '\u{feff}', '\u{180e}', '\u{2060}',
        '\u{ad}', '\u{200c}', '\u{200d}', '\u{3164}', '\u{2800}', '\u{0}',
    ]
    .iter()
    .enumerate()
    {
        let text = format!("a{c}b\n");
        env.write(&format!("n{i}"), &text);
        let got = wc_of(&env.run("wc", &[format!("n{i}").as_str()]));
        assert_eq!(
            got,
            [1, 1, text.len() as u64],
            "U+{:04X} is not White_Space",
            *c as u32
        );
    }
}

#[test]
fn wc_classifies_every_code_point_like_white_space() {
    // Each code point once, after an `x`: any character misread as a separator (or a separator
    // missed) changes the word count. Astral planes are sampled to keep the file small.
    let env = TestEnv::new();
    let mut text = String::new();
    for cp in (0..=0xFFFFu32).chain((0x1_0000..=0x10_FFFF).step_by(7)) {
        if let Some(c) = char::from_u32(cp) {
            text.push('x');
            text.push(c);
        }
    }
    env.write("all", &text);
    assert_eq!(
        wc_of(&env.both("wc", &["all"])),
        wc_reference(text.as_bytes())
    );
}

#[test]
fn wc_white_space_split_by_a_read_block_still_separates_words() {
    // A dense run of multibyte separators, shifted through every alignment, so that each block
    // edge cuts each separator at each of its bytes somewhere.
    let env = TestEnv::new();
    let unit = "a\u{3000}b\u{85}c\u{2028}d\u{a0}e\u{1680}f\u{205f}";
    for phase in 0..unit.len() {
        let mut text = "y".repeat(phase);
        while text.len() < 140_000 {
            text.push_str(unit);
        }
        let name = format!("s{phase}");
        env.write(&name, &text);
        assert_eq!(
            wc_of(&env.run("wc", &[name.as_str()])),
            wc_reference(text.as_bytes()),
            "wc of phase {phase}"
        );
    }
}

#[test]
fn wc_counts_invalid_bytes_as_word_characters() {
    let env = TestEnv::new();
    let cases: [(&[u8], u64); 8] = [
        (b"a\xffb c\n", 2),
        (b"\xff \xfe", 2),
        (b"\xc2\xa0x\xc2", 1),
        (b"\xe3\x80\x80a\xe3\x80", 1),
        (b"\x00\x00 \x00", 2),
        // A truncated U+3000 is not a separator, nor is a lone lead byte before a space's tail.
        (b"a\xe3\x80b", 1),
        (b"a\xe3\xe3\x80\x80b", 2),
        (b"\xe2\xc2\xa0", 1),
    ];
    for (i, (data, words)) in cases.iter().enumerate() {
        let name = format!("b{i}");
        env.write(&name, data);
        let got = wc_of(&env.both("wc", &[name.as_str()]));
        assert_eq!(got, wc_reference(data), "wc of {data:?}");
        assert_eq!(got[1], *words, "words of {data:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// §7 stat
// ---------------------------------------------------------------------------------------------

#[test]
fn stat_describes_a_regular_file() {
    let env = TestEnv::new();
    let p = env.write("a.txt", "hello\n");
    chmod(&p, 0o644);
    set_mtime(&p, 1_700_000_000, 123_456_789, false);
    let s = stat_of(&env.both("stat", &["a.txt"]));
    let want = serde_json::json!({
        "path": "a.txt", "type": "file", "size_bytes": 6, "permissions": "-rw-r--r--",
        "modified_at": "2023-11-14T22:13:20.123456789Z",
    });
    assert_eq!(Value::Object(s), want);
}

#[test]
fn stat_echoes_the_path_as_given() {
    let env = fixture();
    env.mkdir("d");
    let abs = env.root().join("a.txt").display().to_string();
    // Quotes, backslashes and controls must survive stat's own JSON.
    let odd = "we\"ird\\name\t\u{202e}\u{85}.txt";
    env.write(odd, "x");
    for given in [
        "a.txt",
        "./a.txt",
        "sub/../a.txt",
        ".//a.txt",
        abs.as_str(),
        "d/",
        "d/.",
        ".",
        "sub/..",
    ] {
        assert_eq!(
            stat_of(&env.both("stat", &[given]))["path"],
            given,
            "stat {given}"
        );
    }
    // A name with controls comes back whole in `$'…'` quoting (docs/contract.md#names).
    assert_eq!(
        stat_of(&env.both("stat", &[odd]))["path"],
        r#"$'we"ird\\name\t\xe2\x80\xae\xc2\x85.txt'"#
    );
    // A name that is not UTF-8 comes back whole in `$'…'` quoting, like every name in output.
    let raw = OsStr::from_bytes(b"bad\xffname");
    std::fs::write(env.root().join(raw), "x").unwrap();
    assert_eq!(
        stat_of(&env.both("stat", &[raw]))["path"],
        r"$'bad\xffname'"
    );
}

#[test]
fn stat_modified_at_is_rfc3339_utc_with_nine_fraction_digits() {
    let env = TestEnv::new();
    let p = env.write("f", "x");
    for (secs, nanos, want) in [
        (0, 0, "1970-01-01T00:00:00.000000000Z"),
        (0, 1, "1970-01-01T00:00:00.000000001Z"),
        (59, 999_999_999, "1970-01-01T00:00:59.999999999Z"),
        (951_782_400, 500_000_000, "2000-02-29T00:00:00.500000000Z"),
        (1_600_000_000, 42, "2020-09-13T12:26:40.000000042Z"),
        (4_102_444_800, 10, "2100-01-01T00:00:00.000000010Z"),
        (-2, 500_000_000, "1969-12-31T23:59:58.500000000Z"),
    ] {
        set_mtime(&p, secs, nanos, false);
        assert_eq!(
            stat_of(&env.run("stat", &["f"]))["modified_at"],
            want,
            "modified_at for {secs} s {nanos} ns"
        );
    }
}

#[test]
fn stat_permissions_show_set_id_and_sticky_bits() {
    let env = TestEnv::new();
    for (mode, want) in [
        (0o4755, "-rwsr-xr-x"),
        (0o4644, "-rwSr--r--"),
        (0o2750, "-rwxr-s---"),
        (0o2640, "-rw-r-S---"),
        (0o1777, "-rwxrwxrwt"),
        (0o1666, "-rw-rw-rwT"),
        (0o0000, "----------"),
        (0o0421, "-r---w---x"),
        (0o7000, "---S--S--T"),
        (0o7777, "-rwsrwsrwt"),
    ] {
        let name = format!("m{mode:o}");
        let p = env.write(&name, "x");
        chmod(&p, mode);
        assert_eq!(
            type_and_mode(&env.run("stat", &[name.as_str()])).1,
            want,
            "mode {mode:o}"
        );
    }
}

#[test]
fn stat_describes_a_directory() {
    let env = TestEnv::new();
    let d = env.mkdir("d");
    chmod(&d, 0o751);
    set_mtime(&d, 1_000_000_000, 5, false);
    let s = stat_of(&env.both("stat", &["d"]));
    assert_eq!(s["type"], "directory");
    assert_eq!(s["permissions"], "drwxr-x--x");
    assert_eq!(s["size_bytes"], std::fs::metadata(&d).unwrap().len());
    assert_eq!(s["modified_at"], "2001-09-09T01:46:40.000000005Z");
    for (mode, want) in [
        (0o1777, "drwxrwxrwt"),
        (0o3775, "drwxrwsr-t"),
        (0o2700, "drwx--S---"),
    ] {
        chmod(&d, mode);
        assert_eq!(
            type_and_mode(&env.run("stat", &["d"])).1,
            want,
            "mode {mode:o}"
        );
    }
}

#[test]
fn stat_describes_fifos_and_sockets_without_opening_them() {
    let mut env = TestEnv::new();
    env.var("READBOX_TIMEOUT", "4");
    let pipe = env.fifo("pipe");
    chmod(&pipe, 0o644);
    let s = stat_of(&prompt(&env, "stat", &["pipe"]));
    assert_eq!(
        (&s["type"], &s["permissions"], &s["size_bytes"]),
        (
            &Value::from("fifo"),
            &Value::from("prw-r--r--"),
            &Value::from(0)
        )
    );
    let sock = env.p("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    chmod(&sock, 0o755);
    assert_eq!(
        type_and_mode(&prompt(&env, "stat", &["sock"])),
        ("socket".to_string(), "srwxr-xr-x".to_string())
    );
}

#[test]
fn stat_describes_device_nodes() {
    let mut env = TestEnv::new();
    env.var("READBOX_TIMEOUT", "4");
    if !mknod(&env.p("zero"), rustix::fs::FileType::CharacterDevice, 1, 5) {
        return;
    }
    assert!(mknod(
        &env.p("blk"),
        rustix::fs::FileType::BlockDevice,
        7,
        200
    ));
    chmod(&env.p("zero"), 0o666);
    chmod(&env.p("blk"), 0o660);
    assert_eq!(
        type_and_mode(&prompt(&env, "stat", &["zero"])),
        ("char_device".to_string(), "crw-rw-rw-".to_string())
    );
    assert_eq!(
        type_and_mode(&prompt(&env, "stat", &["blk"])),
        ("block_device".to_string(), "brw-rw----".to_string())
    );
}

#[test]
fn stat_follows_symlinks_and_keeps_the_path_as_given() {
    let env = TestEnv::new();
    let real = env.write("real.txt", "hello\n");
    chmod(&real, 0o640);
    set_mtime(&real, 1_600_000_000, 42, false);
    let link = env.symlink("link.txt", "real.txt");
    // The link's own time differs, so describing the link instead of its target shows.
    set_mtime(&link, 1_000_000_000, 7, true);
    env.symlink("chain", "link.txt");
    env.mkdir("d");
    env.symlink("dlink", "d");
    env.fifo("pipe");
    env.symlink("plink", "pipe");
    let want = |path: &str| {
        serde_json::json!({
            "path": path, "type": "file", "size_bytes": 6, "permissions": "-rw-r-----",
            "modified_at": "2020-09-13T12:26:40.000000042Z",
        })
    };
    assert_eq!(
        Value::Object(stat_of(&env.both("stat", &["link.txt"]))),
        want("link.txt")
    );
    assert_eq!(
        Value::Object(stat_of(&env.both("stat", &["chain"]))),
        want("chain")
    );
    assert_eq!(type_and_mode(&env.both("stat", &["dlink"])).0, "directory");
    assert_eq!(stat_of(&env.both("stat", &["dlink/"]))["path"], "dlink/");
    assert_eq!(type_and_mode(&prompt(&env, "stat", &["plink"])).0, "fifo");
}

#[test]
fn stat_of_a_dangling_link_is_not_found() {
    let env = TestEnv::new();
    env.symlink("dangling", "missing-target.txt");
    env.symlink("dangling_dir", "nodir/x");
    for p in ["dangling", "dangling_dir"] {
        let a = env.both("stat", &[p]);
        a.fails("not found", p);
        names_only_the_argument(&a, &env, p, &["missing-target", "nodir"]);
    }
}

#[test]
fn stat_denies_excluded_and_outside_objects() {
    let env = fixture();
    for p in [
        ".env",
        ".ssh",
        ".ssh/id_rsa",
        "server.pem",
        "../outside",
        "../outside/secret.txt",
    ] {
        env.both("stat", &[p]).denied(p);
    }
}

// ---------------------------------------------------------------------------------------------
// §7 pwd
// ---------------------------------------------------------------------------------------------

#[test]
fn pwd_prints_the_working_directory_with_a_newline() {
    let env = TestEnv::new();
    let want = format!("{}\n", env.root().display());
    env.both::<&str>("pwd", &[]).ok(&want);
}

#[test]
fn pwd_in_a_subfolder_of_the_root() {
    let mut env = TestEnv::new();
    env.mkdir("sub/deeper");
    let root = env.root().display().to_string();
    env.var("READBOX_ROOTS", &root).cd("sub/deeper");
    let want = format!("{}\n", env.root().join("sub/deeper").display());
    env.both::<&str>("pwd", &[]).ok(&want);
}

#[test]
fn pwd_prints_the_canonical_directory_when_entered_through_a_link() {
    // The working directory is canonicalised once at start (docs/contract.md#policy).
    let mut env = TestEnv::new();
    env.mkdir("real");
    env.symlink("alias", "real");
    let root = env.root().display().to_string();
    env.var("READBOX_ROOTS", &root).cd("alias");
    let want = format!("{}\n", env.root().join("real").display());
    env.both::<&str>("pwd", &[]).ok(&want);
}

#[test]
fn pwd_outside_every_root_is_denied_without_naming_it() {
    // docs/contract.md#policy: with no working directory set and the current one outside the
    // roots, pwd is denied; it never reports the outside directory.
    let mut env = TestEnv::new();
    let first = env.mkdir("first").display().to_string();
    let second = env.mkdir("second").display().to_string();
    let outside = env.outside().display().to_string();
    env.var("READBOX_ROOTS", &format!("{first}:{second}"))
        .cd(&outside);
    let a = env.both::<&str>("pwd", &[]);
    a.fails("denied", ".: the working directory is outside the roots");
    assert!(!a.error.unwrap().contains(&outside));
    // A working directory set beneath a root is pwd's answer.
    env.var("READBOX_WORKDIR", &second);
    env.both::<&str>("pwd", &[]).ok(&format!("{second}\n"));
}
