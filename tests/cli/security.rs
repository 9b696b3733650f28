//! The attack suite (docs/security.md#attack-suite): a racing process that swaps files and
//! directories for symlinks to outside while readbox reads, racers that move a directory out of
//! the root (or into an excluded one) while readbox resolves a path through it or walks it,
//! with Landlock on and, through a seccomp filter, off (and openat2 off too), hardlinks, mounts,
//! magic links, devices, hostile globs and descriptor limits, and a property test that no path
//! the resolver accepts ever names an object outside the roots or excluded.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use readbox::resolve::{Excludes, Gate, Options};

use crate::kernel;
use crate::support::{Answer, OUTSIDE_CANARY, Rng, TestEnv};

fn gate(env: &TestEnv, excludes: &[&str], options: Options) -> Gate {
    let ex = Excludes::new(&excludes.iter().map(ToString::to_string).collect::<Vec<_>>()).unwrap();
    Gate::new(&[env.root()], ex, env.root(), options).unwrap()
}

const STRICT: Options = Options {
    deny_hardlinks: true,
    cross_mounts: false,
};

/// Reads `path` through the gate, as cat does; `None` when refused.
fn gate_read(g: &Gate, path: &str) -> Option<Vec<u8>> {
    let node = g.resolve(path.as_bytes()).ok()?;
    let mut f = g.open_read(&node, path).ok()?;
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut f, &mut buf).ok()?;
    Some(buf)
}

/// The weakened resolver that the racer test must catch: check the string, then re-open it.
fn check_then_open(root: &Path, path: &Path) -> Option<Vec<u8>> {
    let real = std::fs::canonicalize(path).ok()?;
    if !real.starts_with(root) {
        return None;
    }
    std::fs::read(path).ok()
}

/// A racer that swaps `race/f` between a regular file and a symlink to the outside secret, and
/// `race/d` between a directory and a symlink to the outside folder, by atomic renames.
struct Racer {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Racer {
    fn start(env: &TestEnv) -> Racer {
        let race = env.mkdir("race");
        std::fs::write(race.join("f"), "inside\n").unwrap();
        std::fs::create_dir_all(race.join("d")).unwrap();
        std::fs::write(race.join("d/secret.txt"), "inside\n").unwrap();
        let outside = env.outside();
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let (s, n) = (stop.clone(), swaps.clone());
        let handle = std::thread::spawn(move || {
            let (f, d) = (race.join("f"), race.join("d"));
            let (f_file, f_link) = (race.join("f.file"), race.join("f.link"));
            let (d_dir, d_link) = (race.join("d.dir"), race.join("d.link"));
            while !s.load(Ordering::Relaxed) {
                // f: regular file -> symlink to outside -> regular file again.
                let _ = std::fs::remove_file(&f_link);
                let _ = std::os::unix::fs::symlink(outside.join("secret.txt"), &f_link);
                let _ = std::fs::rename(&f, &f_file);
                let _ = std::fs::rename(&f_link, &f);
                let _ = std::fs::remove_file(&f);
                let _ = std::fs::rename(&f_file, &f);
                // d: directory -> symlink to the outside folder -> directory again.
                let _ = std::fs::remove_file(&d_link);
                let _ = std::os::unix::fs::symlink(&outside, &d_link);
                let _ = std::fs::rename(&d, &d_dir);
                let _ = std::fs::rename(&d_link, &d);
                let _ = std::fs::remove_file(&d);
                let _ = std::fs::rename(&d_dir, &d);
                n.fetch_add(4, Ordering::Relaxed);
            }
        });
        Racer {
            stop,
            swaps,
            handle: Some(handle),
        }
    }

    fn swaps(&self) -> u64 {
        self.swaps.load(Ordering::Relaxed)
    }

    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.join().unwrap();
        }
        self.swaps()
    }
}

fn leaked(content: &[u8]) -> bool {
    String::from_utf8_lossy(content).contains(OUTSIDE_CANARY)
}

#[test]
fn racing_symlink_swaps_never_leak_through_the_gate_but_do_through_check_then_open() {
    let env = TestEnv::new();
    let g = gate(&env, &[], STRICT);
    let racer = Racer::start(&env);
    let (mut gate_reads, mut gate_leaks) = (0u64, 0u64);
    let t0 = Instant::now();
    while racer.swaps() < 10_000 || gate_reads < 20_000 {
        for p in ["race/f", "race/d/secret.txt"] {
            if let Some(c) = gate_read(&g, p) {
                gate_reads += 1;
                gate_leaks += u64::from(leaked(&c));
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the racer made too few swaps"
        );
    }
    // The same racer against the weakened resolver: it must leak, or this test proves nothing.
    let root = env.root();
    let (mut weak_reads, mut weak_leaks) = (0u64, 0u64);
    let t1 = Instant::now();
    while weak_leaks == 0 && t1.elapsed() < Duration::from_secs(20) {
        for p in ["race/f", "race/d/secret.txt"] {
            if let Some(c) = check_then_open(&root, &root.join(p)) {
                weak_reads += 1;
                weak_leaks += u64::from(leaked(&c));
            }
        }
    }
    let swaps = racer.finish();
    eprintln!(
        "racer: {swaps} swaps; gate: {gate_leaks} leaks in {gate_reads} reads; \
         check-then-open: {weak_leaks} leaks in {weak_reads} reads"
    );
    assert!(swaps >= 10_000);
    assert_eq!(gate_leaks, 0, "the gate leaked the outside canary");
    assert!(
        weak_leaks > 0,
        "the racer never caught the weakened resolver"
    );
}

#[test]
fn racing_symlink_swaps_never_leak_through_the_binary() {
    let env = TestEnv::new();
    let racer = Racer::start(&env);
    // The harness asserts on every call that the canary does not appear.
    let mut calls = 0;
    while calls < 150 || racer.swaps() < 10_000 {
        env.run("cat", &["race/f"]);
        env.run("cat", &["race/d/secret.txt"]);
        env.run("grep", &["CANARY", "race"]);
        env.run("find", &["race"]);
        calls += 4;
        assert!(calls < 20_000, "the racer made too few swaps");
    }
    assert!(racer.finish() >= 10_000);
}

#[test]
fn hardlinks_are_refused_when_denied_and_read_when_allowed() {
    let mut env = TestEnv::new();
    let outside = env.outside().join("secret.txt");
    // A hardlink is a second name for the outside file, inside the root.
    std::fs::hard_link(&outside, env.p("alias.txt")).unwrap();
    env.var("READBOX_HARDLINKS", "deny");
    for tool in ["cat", "head", "wc", "stat"] {
        env.run(tool, &["alias.txt"]).denied("alias.txt");
    }
    env.run("grep", &["CANARY", "."]).no_match();
    let cfg = env.config("lock.toml", "lock = true\n");
    let mut locked = TestEnv::new();
    std::fs::hard_link(locked.outside().join("secret.txt"), locked.p("alias.txt")).unwrap();
    locked.var("READBOX_CONFIG", cfg.to_str().unwrap());
    locked.run("cat", &["alias.txt"]).denied("alias.txt");
    locked.var("READBOX_HARDLINKS", "allow");
    locked
        .run("cat", &["alias.txt"])
        .fails("config", "READBOX_HARDLINKS");
}

/// A bind mount, undone when dropped.
struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Bind-mounts `from` on `onto`; `None`, with the reason printed, where mounting is not
/// permitted (it needs root and a mount namespace).
fn bind_mount(from: &Path, onto: &Path) -> Option<Unmount> {
    let ok = std::process::Command::new("mount")
        .arg("--bind")
        .arg(from)
        .arg(onto)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "skipped: `mount --bind` is not permitted here (needs root and a mount namespace)"
        );
        return None;
    }
    Some(Unmount(onto.to_path_buf()))
}

#[test]
fn a_mount_beneath_the_root_is_not_crossed() {
    let env = TestEnv::new();
    let mnt = env.mkdir("mnt");
    std::fs::write(env.outside().join("mounted.txt"), "on another mount\n").unwrap();
    let Some(_guard) = bind_mount(&env.outside(), &mnt) else {
        return;
    };
    // A bind mount of the same filesystem keeps st_dev; openat2's RESOLVE_NO_XDEV still refuses
    // to cross it, and the denial names the mount point as the caller reaches it.
    let crossing_at = |a: &crate::support::Answer, path: &str, mount: &str| {
        assert_eq!(
            a.error.as_deref(),
            Some(
                format!("denied: {path}: crosses the mount point {mount} (cross_mounts is off)")
                    .as_str()
            )
        );
        assert_eq!(a.output, "");
    };
    crossing_at(
        &env.run("cat", &["mnt/mounted.txt"]),
        "mnt/mounted.txt",
        "mnt",
    );
    // Decided when the mount point is reached, before anything beneath it is looked up.
    crossing_at(
        &env.run("cat", &["./mnt/../mnt/mounted.txt"]),
        "./mnt/../mnt/mounted.txt",
        "./mnt",
    );
    crossing_at(&env.run("ls", &["mnt"]), "mnt", "mnt");
    crossing_at(&env.run("ls", &["./mnt//"]), "./mnt//", "./mnt");
    // Through a link, the mount point is the link, as the caller reaches it.
    env.symlink("via", "mnt");
    crossing_at(
        &env.run("stat", &["via/mounted.txt"]),
        "via/mounted.txt",
        "via",
    );
    let abs = env.p("mnt/mounted.txt");
    let abs = abs.to_str().unwrap();
    crossing_at(&env.run("cat", &[abs]), abs, env.p("mnt").to_str().unwrap());
    // Walks list the mount point but do not enter it, as `find -xdev`, and say so in a note.
    let a = env.run("find", &["."]);
    a.ok("mnt/\nvia\n");
    assert!(
        a.notes.iter().any(|n| n.contains("mount point mnt")),
        "{:?}",
        a.notes
    );
    env.run("grep", &["another", "."]).no_match();
    let mut crossing = TestEnv::new();
    crossing.var("READBOX_CROSS_MOUNTS", "true");
    crossing.cd(env.root().to_str().unwrap());
    crossing
        .run("cat", &["mnt/mounted.txt"])
        .ok("on another mount\n");
}

#[test]
fn magic_links_and_devices_are_refused_at_once() {
    let env = TestEnv::new();
    env.symlink("proc_root", "/proc/self/root");
    env.symlink("proc_cwd", "/proc/self/cwd");
    env.symlink("fd0", "/proc/self/fd/0");
    env.symlink("zero", "/dev/zero");
    for p in ["proc_root/etc/passwd", "proc_cwd", "fd0", "zero"] {
        env.run("cat", &[p]).denied(p);
    }
    // A device node inside the root is described by stat but never opened for reading.
    let dev = env.p("null");
    let made = rustix::fs::mknodat(
        rustix::fs::CWD,
        &dev,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    );
    if made.is_ok() {
        env.run("cat", &["null"]).fails("not a file", "null");
        assert_eq!(env.run("stat", &["null"]).json()["type"], "char_device");
        env.run("ls", &["."])
            .ok("fd0@\nproc_cwd@\nproc_root@\nzero@\n");
    }
}

#[test]
fn hostile_names_come_back_escaped_and_never_as_flags() {
    let env = TestEnv::new();
    env.write("new\nline.txt", "x\n");
    env.write("-rf", "dash\n");
    env.write("bidi\u{202e}gpj.exe", "b\n");
    // One line per record: names with controls come back whole in `$'…'` quoting.
    let a = env.run("find", &["."]);
    assert_eq!(
        a.output,
        "-rf\n$'bidi\\xe2\\x80\\xaegpj.exe'\n$'new\\nline.txt'\n"
    );
    env.run("cat", &["--", "-rf"]).ok("dash\n");
    env.run("cat", &["-rf"]).fails("usage", "-rf");
    env.run("cat", &["missing\nname"])
        .fails("not found", "missing\\nname");
}

#[test]
fn sparse_huge_files_are_bounded_by_the_budgets() {
    let env = TestEnv::new();
    let f = std::fs::File::create(env.p("sparse.bin")).unwrap();
    f.set_len(1 << 40).unwrap();
    env.run("head", &["sparse.bin", "1"])
        .ok(&"\0".repeat(32768))
        .truncated
        .then_some(())
        .unwrap();
    // One line of 1 TiB: tail reads back only what the cap can show, and shows its end (NULs
    // continue no secret).
    let a = env.run("tail", &["sparse.bin", "1"]);
    a.ok(&"\0".repeat(32768));
    assert!(a.truncated);
    env.run("wc", &["sparse.bin"])
        .fails("limit", "max_read_bytes");
    env.run("grep", &["x", "sparse.bin"])
        .fails("limit", "max_read_bytes");
}

/// The fixture of the property test: objects inside, excluded and outside, and links between.
fn fixture(env: &TestEnv) {
    env.write("a.txt", "a\n");
    env.write("sub/b.txt", "b\n");
    env.write("sub/deep/c.txt", "c\n");
    env.secret(".env");
    env.secret(".ssh/id");
    env.secret("sub/k.pem");
    std::fs::create_dir_all(env.outside().join("d")).unwrap();
    std::fs::write(env.outside().join("d/x"), "x\n").unwrap();
    let out = env.outside();
    let root = env.root();
    env.symlink("l_out", "../outside");
    env.symlink("l_out_file", "../outside/secret.txt");
    env.symlink("l_env", ".env");
    env.symlink("l_sub", "sub");
    env.symlink("l_up", "..");
    env.symlink("l_self", ".");
    env.symlink("l_abs_in", root.join("sub"));
    env.symlink("l_abs_out", &out);
    env.symlink("l_loop", "l_loop");
    env.symlink("sub/l_back", "../.ssh");
    env.symlink("sub/deep/l_root", "../..");
}

/// Every object's identity beneath `dir`, without following links.
fn identities(dir: &Path, into: &mut HashSet<(u64, u64)>) {
    let md = std::fs::symlink_metadata(dir).unwrap();
    into.insert((md.dev(), md.ino()));
    if md.is_dir() {
        for e in std::fs::read_dir(dir).unwrap() {
            identities(&e.unwrap().path(), into);
        }
    }
}

#[test]
fn resolved_objects_are_never_outside_or_excluded() {
    use proptest::test_runner::{Config, TestRunner};
    let env = TestEnv::new();
    fixture(&env);
    let g = gate(&env, &[".env", ".ssh", "*.pem"], STRICT);
    let mut outside = HashSet::new();
    identities(&env.outside(), &mut outside);
    let mut excluded = HashSet::new();
    for p in [".env", ".ssh", "sub/k.pem"] {
        identities(&env.p(p), &mut excluded);
    }
    let names = vec![
        ".",
        "..",
        "",
        "a.txt",
        "sub",
        "deep",
        "b.txt",
        "c.txt",
        ".env",
        ".ssh",
        "id",
        "k.pem",
        ".ENV",
        "l_out",
        "l_out_file",
        "l_env",
        "l_sub",
        "l_up",
        "l_self",
        "l_abs_in",
        "l_abs_out",
        "l_loop",
        "l_back",
        "l_root",
        "secret.txt",
        "d",
        "x",
        "root",
        "outside",
    ];
    let strategy = (
        any::<bool>(),
        proptest::collection::vec(proptest::sample::select(names), 0..8),
    );
    let mut runner = TestRunner::new(Config {
        cases: 20_000,
        failure_persistence: None,
        ..Config::default()
    });
    let accepted = std::cell::Cell::new(0u32);
    runner
        .run(&strategy, |(absolute, parts)| {
            let mut path = parts.join("/");
            if absolute {
                path = format!("{}/{path}", env.base().display());
            }
            if let Ok(node) = g.resolve(path.as_bytes()) {
                accepted.set(accepted.get() + 1);
                let id = (node.stat().st_dev, node.stat().st_ino);
                prop_assert!(!outside.contains(&id), "{} resolved outside the root", path);
                prop_assert!(
                    !excluded.contains(&id),
                    "{} resolved to an excluded object",
                    path
                );
            }
            Ok(())
        })
        .unwrap();
    // The generator must reach real objects, or the property says nothing.
    assert!(
        accepted.get() > 200,
        "only {} paths resolved",
        accepted.get()
    );
}

proptest! {
    /// Argument parsing never panics, whatever the words.
    #[test]
    fn argument_parsing_never_panics(
        tool in proptest::sample::select(readbox::registry::NAMES.to_vec()),
        words in proptest::collection::vec(".{0,12}", 0..8),
        piped: bool,
    ) {
        let t = readbox::tools::by_name(tool).unwrap();
        let words: Vec<std::ffi::OsString> = words.into_iter().map(Into::into).collect();
        let world = readbox::args::World {
            exists: &|w: &[u8]| w.len().is_multiple_of(2),
            is_dir: &|w: &[u8]| w.len().is_multiple_of(3),
            piped: &|| piped,
        };
        let _ = readbox::args::parse(t, &words, &world);
    }
}

#[test]
fn narrowing_a_locked_root_into_an_excluded_tree_serves_nothing_excluded() {
    // Excludes stay anchored at the locked root: a root narrowed to `.git` still hides
    // `.git/config`, and a root beneath an excluded name fails closed.
    let mut env = TestEnv::new();
    env.secret(".git/config");
    env.write(".git/HEAD", "ref: main\n");
    env.secret(".ssh/sub/k");
    env.secret("docs/private/p.txt");
    let cfg = env.config(
        "lock.toml",
        &format!(
            "lock = true\nallowed_directories = [{:?}]\nexclude_patterns = [\".ssh\", \".git/config\", \"docs/private\"]\n",
            env.root()
        ),
    );
    env.var("READBOX_CONFIG", cfg.to_str().unwrap());
    let mut git = TestEnv::new();
    git.var("READBOX_CONFIG", cfg.to_str().unwrap());
    git.var("READBOX_ROOTS", env.p(".git").to_str().unwrap());
    git.cd(env.p(".git").to_str().unwrap());
    git.run("cat", &["HEAD"]).ok("ref: main\n");
    git.run("cat", &["config"]).denied("config");
    git.run("grep", &["CANARY", "."]).no_match();
    for narrowed in [".ssh", ".ssh/sub", "docs/private"] {
        let mut e = TestEnv::new();
        e.var("READBOX_CONFIG", cfg.to_str().unwrap());
        e.var("READBOX_ROOTS", env.p(narrowed).to_str().unwrap());
        e.cd(env.p(narrowed).to_str().unwrap());
        e.run("find", &["."]).fails("config", "excluded");
    }
    // Without a lock, a working directory beneath an excluded name is no root either.
    let mut plain = TestEnv::new();
    plain.cd(env.p(".ssh/sub").to_str().unwrap());
    plain.run("cat", &["k"]).fails("config", "excluded name");
}

#[test]
fn a_fifo_or_device_as_config_file_or_audit_log_is_refused_at_once() {
    let env = TestEnv::new();
    let fifo = env.base().join("cfg/fifo.toml");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    for config in [fifo.to_str().unwrap(), "/dev/zero"] {
        let mut e = TestEnv::new();
        e.var("READBOX_CONFIG", config);
        e.run("pwd", &[] as &[&str])
            .fails("config", "not a regular file");
    }
    let cfg = env.config("audit.toml", &format!("audit_log = {fifo:?}\n"));
    let mut e = TestEnv::new();
    e.var("READBOX_CONFIG", cfg.to_str().unwrap());
    // A FIFO with no reader refuses a non-blocking open for writing: an `io:` error at once.
    e.run("pwd", &[] as &[&str]).fails("io", "audit log");
}

#[test]
fn globs_too_large_to_compile_are_usage_errors_not_crashes() {
    let env = TestEnv::new();
    env.write("a", "x\n");
    let nested = format!("{}{}", "{a,".repeat(200), "}".repeat(200));
    let stars = "*".repeat(100_000);
    for p in [nested.as_str(), stars.as_str()] {
        env.run("find", &[".", p])
            .fails("usage", "not a valid glob");
        env.run("grep", &["x", ".", "true", "false", p])
            .fails("usage", "not a valid glob");
    }
}

#[test]
fn a_huge_argument_is_cut_in_the_error() {
    // The answer's size must not grow with a hostile argument.
    let env = TestEnv::new();
    let long = "x/".repeat(3_000);
    let a = env.run("cat", &[long.as_str()]);
    let e = a.error.as_deref().unwrap();
    assert!(
        e.starts_with("not found: x/x/") && e.ends_with('…'),
        "{e:.40}"
    );
    assert!(e.len() < 4200, "error of {} bytes", e.len());
    // Far past any real path, the answer is a denial, and it comes at once.
    let t = std::time::Instant::now();
    env.run("cat", &["x/".repeat(60_000).as_str()])
        .fails("denied", "x/x/");
    assert!(t.elapsed() < Duration::from_secs(5));
}

/// Runs `call` while `mover` runs on another thread once `delay` has passed (a racer that acts
/// once per call, at a random moment of it).
fn racing<T>(delay: Duration, mover: impl FnOnce() + Send, call: impl FnOnce() -> T) -> T {
    std::thread::scope(|s| {
        s.spawn(move || {
            std::thread::sleep(delay);
            mover();
        });
        call()
    })
}

/// The error class of a failed call.
fn class(a: &Answer) -> &str {
    a.error
        .as_deref()
        .and_then(|e| e.split(':').next())
        .unwrap_or("")
}

/// Moves `dir` to `parked` and plants `name` (holding `name` as its content) in it and in its
/// `zz`: a directory that leaves its place and gains an entry while it is away.
fn park(dir: &Path, parked: &Path, name: &str) {
    if std::fs::rename(dir, parked).is_ok() {
        for d in [parked.to_path_buf(), parked.join("zz")] {
            let _ = std::fs::write(d.join(name), format!("{name}\n"));
        }
    }
}

/// Undoes [`park`] after the call.
fn unpark(dir: &Path, parked: &Path, name: &str) {
    if parked.exists() {
        for d in [parked.to_path_buf(), parked.join("zz")] {
            let _ = std::fs::remove_file(d.join(name));
        }
        std::fs::rename(parked, dir).unwrap();
    }
}

/// `ls sub`, `find sub` and `grep CANARY sub` while a racer moves `sub` (2,000 files and `zz/`)
/// to `parked` at a random moment of the call and plants `leak` there: whatever the kernel
/// offers, no call shows anything from the new place (the racer never moves it back during a
/// call: that is the documented window). `parked` is given relative to the sandbox's top.
fn walk_while_a_directory_moves(parked: &str, leak: &str) {
    let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
    for kernel in kernel::variants() {
        let mut env = TestEnv::new();
        kernel.apply(&mut env);
        for i in 0..2000 {
            env.write(&format!("sub/f{i:04}"), "x\n");
        }
        env.write("sub/zz/keep", "x\n");
        let (sub, parked) = (env.p("sub"), env.base().join(parked));
        std::fs::create_dir_all(parked.parent().unwrap()).unwrap();
        let names: HashSet<String> = (0..2000).map(|i| format!("f{i:04}")).collect();
        let calls: [(&str, &[&str]); 3] = [
            ("ls", &["sub"]),
            ("find", &["sub"]),
            ("grep", &["CANARY", "sub"]),
        ];
        let base: Vec<Duration> = calls
            .iter()
            .map(|(tool, args)| {
                let t = Instant::now();
                env.run(tool, args);
                t.elapsed()
            })
            .collect();
        let (mut n, mut refused) = (0, 0);
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_millis(800) || n < 9 {
            let (tool, args) = calls[n % 3];
            let delay = rng.duration_below(base[n % 3] * 6 / 5);
            let a = racing(delay, || park(&sub, &parked, leak), || env.run(tool, args));
            unpark(&sub, &parked, leak);
            n += 1;
            if a.error.is_some() {
                refused += 1;
                assert!(
                    ["denied", "not found"].contains(&class(&a)),
                    "{kernel:?}: {tool}: {:?}",
                    a.error
                );
                continue;
            }
            for line in a.lines() {
                let name = match tool {
                    "ls" => line.trim_end_matches('/'),
                    _ => line.strip_prefix("sub/").unwrap_or(line),
                };
                assert!(
                    names.contains(name) || ["zz", "zz/", "zz/keep"].contains(&name),
                    "{kernel:?}: {tool} showed {line:?}"
                );
            }
        }
        eprintln!("{kernel:?}: {n} calls, {refused} refused while the directory moved; {base:?}");
        // How many racing calls were answered depends on the machine's speed (on a loaded one,
        // every racer may fire mid-call). That the check above looks at real listings does not:
        // unraced, each call shows the whole directory.
        for (tool, args) in calls {
            let a = env.run(tool, args);
            let shown = a
                .lines()
                .iter()
                .filter(|l| names.contains(l.trim_end_matches('/').trim_start_matches("sub/")))
                .count();
            let want = if tool == "grep" { 0 } else { 2000 };
            assert_eq!(shown, want, "{kernel:?}: {tool} unraced: {:?}", a.error);
        }
    }
}

#[test]
fn a_directory_moved_out_mid_walk_yields_nothing_from_its_new_place() {
    let leak = format!("LEAK-{OUTSIDE_CANARY}");
    walk_while_a_directory_moves("outside/parked", &leak);
}

#[test]
fn a_directory_moved_into_an_excluded_one_mid_walk_yields_nothing() {
    // Landlock allows all beneath the root: only the gate's second check holds here.
    walk_while_a_directory_moves("root/.ssh/parked", "LEAK-CANARY-SECRET-moved");
}

#[test]
fn a_path_resolved_through_a_directory_that_leaves_the_root_yields_nothing() {
    // `sub/inner/../` 5,000 times makes the resolution long; `sub` moves out at a random moment
    // of it, and LEAK exists only at its new place.
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let path = format!("sub/{}LEAK", "inner/../".repeat(5_000));
    for kernel in kernel::variants() {
        let mut env = TestEnv::new();
        kernel.apply(&mut env);
        env.mkdir("sub/inner");
        let (sub, parked) = (env.p("sub"), env.outside().join("parked"));
        let leak = format!("{OUTSIDE_CANARY} {}\n", "x".repeat(12_345));
        let t = Instant::now();
        env.run("cat", &[&path]).fails("not found", "sub/inner");
        let base = t.elapsed();
        let (mut n, mut denied) = (0, 0);
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_millis(800) || n < 8 {
            let tool = ["cat", "stat", "head", "wc"][n % 4];
            let mover = || {
                if std::fs::rename(&sub, &parked).is_ok() {
                    std::fs::write(parked.join("LEAK"), &leak).unwrap();
                }
            };
            let a = racing(rng.duration_below(base), mover, || env.run(tool, &[&path]));
            if parked.exists() {
                std::fs::remove_file(parked.join("LEAK")).unwrap();
                std::fs::rename(&parked, &sub).unwrap();
            }
            n += 1;
            // LEAK never exists beneath the root: any answer but a refusal comes from outside.
            assert!(
                ["denied", "not found"].contains(&class(&a)),
                "{kernel:?}: {tool}: {:.60} {:.60}",
                a.error.as_deref().unwrap_or("no error; output:"),
                a.output
            );
            denied += usize::from(class(&a) == "denied");
        }
        eprintln!("{kernel:?}: {n} calls, {denied} denied; {base:?}");
    }
}

/// Braces nested 40,000 deep: an 80 KB word that overflowed globset's recursion.
fn deep_braces() -> String {
    format!("{}a{}", "{".repeat(40_000), "}".repeat(40_000))
}

#[test]
fn nested_braces_are_refused_wherever_a_glob_is_taken() {
    let env = TestEnv::new();
    env.write("a.txt", "x\n");
    // Too long to be a glob, and (within the length bound) too deep.
    let deep = deep_braces();
    let nested = format!("{}a{}", "{".repeat(2_000), "}".repeat(2_000));
    let json =
        |tool: &str, fields: serde_json::Value| env.readbox(&["call", tool, &fields.to_string()]);
    for (p, why) in [
        (&deep, "longer than 4096 bytes"),
        (&nested, "braces nest deeper than 32 levels"),
    ] {
        env.run("find", &[".", p]).fails("usage", why);
        env.run("grep", &["x", ".", "true", "false", p])
            .fails("usage", why);
        json("find", serde_json::json!({ "pattern": p })).fails("usage", why);
        json(
            "grep",
            serde_json::json!({ "pattern": "x", "file_pattern": p }),
        )
        .fails("usage", why);
    }
    // 32 levels is a glob; 33 is not.
    let nest = |n: usize| format!("{}a.txt{}", "{".repeat(n), "}".repeat(n));
    env.run("find", &[".", &nest(32)]).ok("a.txt\n");
    env.run("find", &[".", &nest(33)])
        .fails("usage", "nest deeper");
    env.run("find", &[".", &"a".repeat(4097)])
        .fails("usage", "longer than 4096 bytes");
    // Excludes: from the environment, from a config file, and added under a lock.
    let cfg = env.config("deep.toml", &format!("exclude_patterns = [{deep:?}]\n"));
    let lock = env.config("lock.toml", "lock = true\n");
    let mut e = TestEnv::new();
    e.write("a.txt", "x\n");
    e.var("READBOX_EXCLUDE", &deep);
    e.run("cat", &["a.txt"])
        .fails("config", "READBOX_EXCLUDE: pattern");
    let mut e = TestEnv::new();
    e.var("READBOX_CONFIG", cfg.to_str().unwrap());
    e.run("cat", &["a.txt"]).fails("config", "exclude_patterns");
    let mut e = TestEnv::new();
    e.var("READBOX_CONFIG", lock.to_str().unwrap())
        .var("READBOX_EXCLUDE", &deep);
    e.run("pwd", &[] as &[&str])
        .fails("config", "longer than 4096 bytes");
    e.var("READBOX_EXCLUDE", &nested);
    e.run("pwd", &[] as &[&str])
        .fails("config", "braces nest deeper");
    // A tree's own ignore file is content, not a setting: its deep line is left out and the
    // other lines still apply.
    env.write(".gitignore", format!("{deep}\n*.log\n"));
    env.write("b.log", "x\n");
    env.run("find", &["."]).ok(".gitignore\na.txt\n");
    env.run("grep", &["x"]).ok("a.txt:1:x\n");
}

#[test]
fn running_out_of_file_descriptors_is_an_io_error_not_a_denial() {
    // Each component of a path holds a descriptor while it is resolved: 200 nested folders under
    // a limit of 64 run out, however long the rest of the path (past 4,096 components, a path
    // that cannot be walked further used to be denied unexamined).
    let mut env = TestEnv::new();
    let mut dir = env.root();
    for _ in 0..200 {
        dir.push("d");
    }
    std::fs::create_dir_all(&dir).unwrap();
    env.child_setup(kernel::max_open_files(64));
    let deep = format!("{}f", "d/".repeat(4_500));
    env.run("cat", &[&deep]).fails("io", "too many open files");
    env.run("stat", &[&deep]).fails("io", "too many open files");
    // Real denials stay denials, whether they show as written or only once followed.
    let out = format!(
        "{}{}outside/secret.txt",
        "d/".repeat(4_500),
        "../".repeat(4_501)
    );
    env.run("cat", &[&out]).fails("denied", "d/d/");
    let excluded = format!("{}.env", "d/".repeat(4_500));
    env.run("cat", &[&excluded]).fails("denied", "d/d/");
}

#[test]
fn directories_waiting_for_their_second_check_hold_no_descriptor() {
    // grep finds a directory again before it prints what was read through it; 1,500 directories
    // without a match wait for that under a limit of 128 descriptors, and the match in the last
    // one is still found.
    let mut env = TestEnv::new();
    for i in 0..1500 {
        env.write(&format!("d{i:04}/f"), "nothing here\n");
    }
    env.write("d1499/g", "needle\n");
    env.child_setup(kernel::max_open_files(128));
    env.run("grep", &["needle"]).ok("d1499/g:1:needle\n");
    env.run("grep", &["absent"]).no_match();
}

#[test]
fn grep_that_runs_out_of_descriptors_answers_io_never_fewer_matches() {
    // 200 matching files. Under a limit of 5 descriptors the three standard ones and the root's
    // handle leave one: a file opened from the root's handle once the listing's own handle is
    // closed gets it, one opened while the listing still holds it does not. Under higher limits,
    // how many can be open depends on how many workers search at once. Whatever the limit and
    // the timing, the answer is all 200 matches, or the matches of the files before the one that
    // could not be opened and an `io:` error: never fewer matches with a success and no word.
    let mut env = TestEnv::new();
    let all: String = (0..200).map(|i| format!("f{i:03}:1:needle\n")).collect();
    for i in 0..200 {
        env.write(&format!("f{i:03}"), "needle\n");
    }
    for limit in [5, 6, 7, 8, 10, 12, 16, 19] {
        env.child_setup(kernel::max_open_files(limit));
        let a = env.run("grep", &["needle"]);
        assert!(a.notes.is_empty(), "limit {limit}: {:?}", a.notes);
        if a.error.is_none() {
            a.ok(&all);
        } else {
            a.fails("io", "too many open files");
            assert!(all.starts_with(&a.output), "limit {limit}: {}", a.output);
        }
    }
}

#[test]
fn a_walk_that_runs_out_of_descriptors_answers_io_never_a_skipped_directory() {
    // A walk holds a handle for each directory it is in: 15 nested directories under a limit of
    // 12 descriptors run out part way down. That is the process's shortage, not an unreadable
    // directory: an `io:` error, not a note that one was skipped.
    let mut env = TestEnv::new();
    let deep = "d/".repeat(15);
    env.write(&format!("{deep}f"), "needle\n");
    env.child_setup(kernel::max_open_files(12));
    for (tool, args) in [("find", vec!["."]), ("grep", vec!["needle", "."])] {
        let a = env.run(tool, &args);
        a.fails("io", ".: too many open files");
        assert!(a.notes.is_empty(), "{tool}: {:?}", a.notes);
        // What was listed before is kept: the first directories, in order.
        for (i, line) in a.lines().iter().enumerate() {
            assert_eq!(*line, "d/".repeat(i + 1), "{tool}");
        }
    }
}

#[test]
fn files_and_directories_a_walk_may_not_read_are_counted_in_a_note() {
    use std::os::unix::fs::PermissionsExt;
    let mut env = TestEnv::new();
    for name in ["a.txt", "b.txt", "c.txt", "sub/d.txt", "shut/e.txt"] {
        env.write(name, "needle\n");
    }
    let root = env.root();
    let chmod = |rel: &str, mode: u32| {
        std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(mode)).unwrap();
    };
    chmod("b.txt", 0o000);
    chmod("shut", 0o000);
    env.child_setup(kernel::permissions_bind());
    if env.run("cat", &["b.txt"]).error.is_none() {
        eprintln!("skipped: file permissions do not bind readbox here");
        return;
    }
    let a = env.run("grep", &["needle"]);
    a.ok("a.txt:1:needle\nc.txt:1:needle\nsub/d.txt:1:needle\n");
    assert_eq!(
        a.notes,
        [
            "1 file could not be read and was skipped",
            "1 directory could not be read and was skipped"
        ]
    );
    let a = env.run("find", &[".", "*.txt"]);
    a.ok("a.txt\nb.txt\nc.txt\nsub/d.txt\n");
    assert_eq!(a.notes, ["1 directory could not be read and was skipped"]);
    // Named as PATH, each is an error.
    env.run("grep", &["needle", "b.txt"])
        .fails("io", "b.txt: permission denied");
    env.run("grep", &["needle", "shut"])
        .fails("io", "shut: permission denied");
    // So that the sandbox can be removed by a user other than root.
    chmod("shut", 0o755);
}

#[test]
fn a_call_that_names_a_field_twice_is_refused() {
    let env = TestEnv::new();
    env.write("a", "inside a\n");
    env.write("b", "inside b\n");
    env.readbox(&["call", "cat", r#"{"path":"a","path":"b"}"#])
        .fails("usage", "field 'path' is given twice");
    env.readbox(&["call", "head", r#"{"path":"a","lines":1,"lines":2}"#])
        .fails("usage", "field 'lines' is given twice");
    env.readbox(&["call", "cat", r#"{"path":"a"}"#])
        .ok("inside a\n");
}

#[test]
fn a_file_mounted_over_a_walked_name_is_not_read() {
    // grep opens a walked file once from its directory: the file's mount, not only its device,
    // must be the root's (a bind mount of the same filesystem keeps the device).
    let env = TestEnv::new();
    env.write("d/plain.txt", "needle here\n");
    let target = env.write("d/cover.txt", "nothing\n");
    std::fs::write(env.outside().join("mounted.txt"), "needle outside\n").unwrap();
    let Some(_guard) = bind_mount(&env.outside().join("mounted.txt"), &target) else {
        return;
    };
    let a = env.run("grep", &["needle", "d"]);
    assert!(!a.output.contains("outside"), "{a:?}");
    assert!(a.output.contains("d/plain.txt:1:needle here"), "{a:?}");
}
