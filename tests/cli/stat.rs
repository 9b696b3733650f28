//! stat (docs/contract.md#tools): what it says of a regular file, a directory, FIFOs, sockets
//! and device nodes (without opening them), the path echoed as given, the modification time in
//! RFC 3339 UTC with nine fraction digits, set-id and sticky bits, symlinks followed, and the
//! denial of excluded and outside objects.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Map, Value};

use crate::confinement::{fixture, mknod, names_only_the_argument, prompt};
use crate::support::{Answer, TestEnv};

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

/// The stat output as a JSON object, after checking that it is one line with the keys in order.
#[track_caller]
pub(crate) fn stat_of(a: &Answer) -> Map<String, Value> {
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
