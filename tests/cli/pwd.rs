//! pwd (docs/contract.md#tools): the working directory with a newline, canonical when entered
//! through a link, and denied without being named when it is outside every root.

use crate::support::TestEnv;

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
