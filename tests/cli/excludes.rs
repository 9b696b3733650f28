//! Excludes (docs/contract.md#confinement, docs/security.md#excludes-on-every-component): the
//! default patterns at any depth, for the object and its ancestors, in any ASCII or Unicode
//! case and on names that do not decode; custom patterns by name and by path, relative to the
//! root, with globset's semantics; never the root's own name; a pattern that does not compile
//! is a config error.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::confinement::{READERS, deny_all, fixture};
use crate::stat::stat_of;
use crate::support::TestEnv;

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
