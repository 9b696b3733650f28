//! Unit tests of the policy's layers and its lock.

use super::*;
use std::io::Write;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("root/sub")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        Fixture { dir }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.dir.path().canonicalize().unwrap().join(rel)
    }
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.p(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        p
    }
    fn inputs(&self, vars: &[(&str, &str)]) -> Inputs {
        Inputs {
            // Missing, with only `/` above it: the directory check passes for any user.
            system_file: PathBuf::from("/nonexistent/readbox/config.toml"),
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), OsString::from(v)))
                .collect(),
            cwd: Some(self.p("root")),
        }
    }
}

#[test]
fn defaults_root_at_the_current_directory() {
    let f = Fixture::new();
    let p = Policy::load_from(&f.inputs(&[])).unwrap();
    assert_eq!(p.roots, vec![f.p("root")]);
    assert_eq!(p.workdir, f.p("root"));
    assert_eq!(p.excludes.len(), DEFAULT_EXCLUDES.len());
    assert_eq!(p.sources[&Setting::Timeout], "default");
}

#[test]
#[expect(clippy::float_cmp, reason = "a timeout of 3 is read as exactly 3.0")]
fn environment_overrides_the_config_file() {
    let f = Fixture::new();
    let cfg = f.file("c.toml", "max_output_bytes = 5\ntimeout = 3\n");
    let p = Policy::load_from(&f.inputs(&[
        ("READBOX_CONFIG", cfg.to_str().unwrap()),
        ("READBOX_MAX_OUTPUT_BYTES", "7"),
    ]))
    .unwrap();
    assert_eq!(p.max_output_bytes, 7);
    assert_eq!(p.timeout, 3.0);
    assert_eq!(
        p.sources[&Setting::MaxOutputBytes],
        "env READBOX_MAX_OUTPUT_BYTES"
    );
    assert_eq!(p.sources[&Setting::Timeout], cfg.display().to_string());
}

#[test]
fn lock_refuses_wider_roots_and_higher_limits() {
    let f = Fixture::new();
    let cfg = f.file(
        "c.toml",
        &format!(
            "lock = true\nallowed_directories = [{:?}]\nmax_entries = 10\n",
            f.p("root")
        ),
    );
    let c = cfg.to_str().unwrap();
    let wider = f.p("").display().to_string();
    let e = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c), ("READBOX_ROOTS", &wider)]));
    assert!(matches!(e, Err(Error::Config(m)) if m.contains("READBOX_ROOTS")));
    let e = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c), ("READBOX_MAX_ENTRIES", "11")]));
    assert!(matches!(e, Err(Error::Config(_))));
    let sub = f.p("root/sub").display().to_string();
    let p = Policy::load_from(&f.inputs(&[
        ("READBOX_CONFIG", c),
        ("READBOX_ROOTS", &sub),
        ("READBOX_MAX_ENTRIES", "9"),
    ]))
    .unwrap();
    assert_eq!(p.roots, vec![f.p("root/sub")]);
    assert_eq!(p.max_entries, 9);
}

#[test]
fn lock_adds_excludes_instead_of_replacing() {
    let f = Fixture::new();
    let cfg = f.file("c.toml", "lock = true\nexclude_patterns = [\"*.md\"]\n");
    let p = Policy::load_from(&f.inputs(&[
        ("READBOX_CONFIG", cfg.to_str().unwrap()),
        ("READBOX_EXCLUDE", "*.txt"),
    ]))
    .unwrap();
    assert_eq!(p.excludes, vec!["*.md".to_string(), "*.txt".to_string()]);
}

#[test]
fn unlocked_exclude_variable_replaces_and_empty_means_none() {
    let f = Fixture::new();
    let p = Policy::load_from(&f.inputs(&[("READBOX_EXCLUDE", "")])).unwrap();
    assert!(p.excludes.is_empty());
}

#[test]
fn bad_values_name_the_file_and_key() {
    let f = Fixture::new();
    let cfg = f.file("c.toml", "format = \"xml\"\n");
    let e = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", cfg.to_str().unwrap())])).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("config: ") && text.contains("c.toml") && text.contains("format"),
        "{text}"
    );
    let e = Policy::load_from(&f.inputs(&[("READBOX_TIMEOUT", "nan")])).unwrap_err();
    assert!(e.to_string().starts_with("config: READBOX_TIMEOUT"));
}

#[test]
fn workdir_outside_roots_is_a_config_error_and_cwd_outside_stays_outside() {
    let f = Fixture::new();
    let root = f.p("root").display().to_string();
    let out = f.p("outside").display().to_string();
    let e = Policy::load_from(&f.inputs(&[("READBOX_ROOTS", &root), ("READBOX_WORKDIR", &out)]));
    assert!(matches!(e, Err(Error::Config(_))));
    let mut i = f.inputs(&[("READBOX_ROOTS", &root)]);
    i.cwd = Some(f.p("outside"));
    let p = Policy::load_from(&i).unwrap();
    assert_eq!(p.workdir, f.p("outside"));
    // Relative paths are denied with the reason; absolute ones beneath a root still resolve.
    let gate = p.open_gate().unwrap();
    let e = gate.resolve(b"sub").unwrap_err();
    assert_eq!(
        e.to_string(),
        "denied: sub: the working directory is outside the roots"
    );
    assert!(gate.resolve(f.p("root/sub").as_os_str().as_bytes()).is_ok());
}

#[test]
fn hardlinks_default_to_deny_under_a_lock_and_cannot_be_allowed_again() {
    let f = Fixture::new();
    assert!(!Policy::load_from(&f.inputs(&[])).unwrap().deny_hardlinks);
    let cfg = f.file("l.toml", "lock = true\n");
    let c = cfg.to_str().unwrap();
    assert!(
        Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c)]))
            .unwrap()
            .deny_hardlinks
    );
    let e = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c), ("READBOX_HARDLINKS", "allow")]));
    assert!(matches!(e, Err(Error::Config(m)) if m.contains("READBOX_HARDLINKS")));
    let e = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c), ("READBOX_CROSS_MOUNTS", "yes")]));
    assert!(matches!(e, Err(Error::Config(_))));
}

#[test]
fn a_locked_file_may_allow_hardlinks_explicitly() {
    let f = Fixture::new();
    let cfg = f.file("l.toml", "lock = true\nhardlinks = \"allow\"\n");
    let p = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", cfg.to_str().unwrap())])).unwrap();
    assert!(!p.deny_hardlinks);
}

#[test]
fn narrowing_roots_only_narrows_and_moves_the_working_directory() {
    let f = Fixture::new();
    let sub = f.p("root/sub").display().to_string();
    let p = Policy::load_from(&f.inputs(&[(NARROW_ROOTS_VAR, &sub)])).unwrap();
    assert_eq!(p.roots, vec![f.p("root/sub")]);
    assert_eq!(p.workdir, f.p("root/sub"));
    assert_eq!(p.locked_roots, vec![f.p("root")]);
    assert_eq!(
        p.sources[&Setting::AllowedDirectories],
        "env READBOX_NARROW_ROOTS"
    );
    // Outside the roots the layers before allowed: refused, never widened.
    let out = f.p("outside").display().to_string();
    let e = Policy::load_from(&f.inputs(&[(NARROW_ROOTS_VAR, &out)])).unwrap_err();
    assert!(
        e.to_string().starts_with("config: READBOX_NARROW_ROOTS: ")
            && e.to_string().contains("not within the allowed directories"),
        "{e}"
    );
    let e = Policy::load_from(&f.inputs(&[(NARROW_ROOTS_VAR, "root/sub")])).unwrap_err();
    assert!(e.to_string().contains("not an absolute path"), "{e}");
}

#[test]
fn narrowing_to_nothing_leaves_no_root() {
    let f = Fixture::new();
    let p = Policy::load_from(&f.inputs(&[(NARROW_ROOTS_VAR, "")])).unwrap();
    assert!(p.roots.is_empty());
    // The working directory stays, beneath no root: every relative path is denied.
    assert_eq!(p.workdir, f.p("root"));
    let e = Policy::load_from(&f.inputs(&[("READBOX_ROOTS", "")])).unwrap();
    assert_eq!(e.roots, vec![f.p("root")], "READBOX_ROOTS empty is unset");
}

#[test]
fn narrowing_keeps_the_excludes_anchored() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.p("root/docs/private")).unwrap();
    std::fs::create_dir_all(f.p("root/.ssh")).unwrap();
    let i = |v: &str, excl: &str| {
        Policy::load_from(&f.inputs(&[(NARROW_ROOTS_VAR, v), ("READBOX_EXCLUDE", excl)]))
    };
    let private = f.p("root/docs/private").display().to_string();
    let e = i(&private, "docs/private").unwrap_err();
    assert!(e.to_string().contains("is excluded"), "{e}");
    let ssh = f.p("root/.ssh").display().to_string();
    assert!(i(&ssh, ".ssh").is_err());
    let docs = f.p("root/docs").display().to_string();
    let p = i(&docs, "docs/private").unwrap();
    assert_eq!(p.roots, vec![f.p("root/docs")]);
    assert_eq!(p.locked_roots, vec![f.p("root")]);
}

#[test]
fn narrowing_under_a_lock_stays_within_the_locked_roots() {
    let f = Fixture::new();
    let cfg = f.file(
        "l.toml",
        &format!(
            "lock = true\nallowed_directories = [{:?}]\n",
            f.p("root/sub")
        ),
    );
    let root = f.p("root").display().to_string();
    let e = Policy::load_from(&f.inputs(&[
        ("READBOX_CONFIG", cfg.to_str().unwrap()),
        (NARROW_ROOTS_VAR, &root),
    ]));
    assert!(matches!(e, Err(Error::Config(m)) if m.contains("not within")));
}

#[test]
fn a_lock_without_roots_keeps_its_working_directory_as_the_root() {
    let f = Fixture::new();
    let cfg = f.file("l.toml", "lock = true\n");
    let out = f.p("outside").display().to_string();
    let e = Policy::load_from(&f.inputs(&[
        ("READBOX_CONFIG", cfg.to_str().unwrap()),
        ("READBOX_WORKDIR", &out),
    ]));
    assert!(matches!(e, Err(Error::Config(m)) if m.starts_with("READBOX_WORKDIR: ")));
}

#[test]
fn a_root_beneath_an_excluded_name_or_locked_path_fails_closed() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.p("root/.ssh/sub")).unwrap();
    std::fs::create_dir_all(f.p("root/.git")).unwrap();
    let mut i = f.inputs(&[]);
    i.cwd = Some(f.p("root/.ssh/sub"));
    assert!(matches!(Policy::load_from(&i), Err(Error::Config(m)) if m.contains("excluded name")));
    let cfg = f.file(
        "l.toml",
        &format!(
            "lock = true\nallowed_directories = [{:?}]\nexclude_patterns = [\".git/config\"]\n",
            f.p("root")
        ),
    );
    let git = f.p("root/.git").display().to_string();
    let e = Policy::load_from(&f.inputs(&[
        ("READBOX_CONFIG", cfg.to_str().unwrap()),
        ("READBOX_ROOTS", &git),
    ]));
    // Narrowing to .git is allowed, but .git/config stays excluded: the excludes keep their
    // anchor at the locked root.
    assert_eq!(e.unwrap().locked_roots, vec![f.p("root")]);
    let private = f.file(
        "p.toml",
        &format!(
            "lock = true\nallowed_directories = [{:?}]\nexclude_patterns = [\"docs/private\"]\n",
            f.p("root")
        ),
    );
    std::fs::create_dir_all(f.p("root/docs/private")).unwrap();
    let docs = f.p("root/docs/private").display().to_string();
    let e = Policy::load_from(&f.inputs(&[
        ("READBOX_CONFIG", private.to_str().unwrap()),
        ("READBOX_ROOTS", &docs),
    ]));
    assert!(
        matches!(&e, Err(Error::Config(m)) if m.contains("excluded")),
        "{e:?}"
    );
}

#[test]
fn under_a_locked_system_file_readbox_config_is_read_only_beneath_its_roots() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: a locked system file must be owned by root");
        return;
    }
    let f = Fixture::new();
    let mut base = f.inputs(&[]);
    base.system_file = f.file(
        "system.toml",
        &format!("lock = true\nallowed_directories = [{:?}]\n", f.p("root")),
    );
    let with = |config: &str| {
        let mut i = base.clone();
        i.vars
            .insert("READBOX_CONFIG".into(), OsString::from(config));
        Policy::load_from(&i)
    };
    let outside = f.file(
        "outside/c.toml",
        "max_output_bytes = 5\nSECRET_KEY_NAME = 1\n",
    );
    let broken = f.file("outside/broken.toml", "not toml at all [\n");
    f.file("root/.env", "max_output_bytes = 5\n");
    std::os::unix::fs::symlink(&outside, f.p("root/link.toml")).unwrap();
    std::fs::create_dir(f.p("root/dir.toml")).unwrap();
    let missing_outside = f.p("outside/missing.toml");
    for config in [
        outside.to_str().unwrap(),
        broken.to_str().unwrap(),
        missing_outside.to_str().unwrap(),
        "/proc/self/environ",
        f.p("root/.env").to_str().unwrap(),
        ".env",
        "link.toml",
        "../outside/c.toml",
    ] {
        match with(config) {
            Err(Error::Config(m)) => assert_eq!(m, "READBOX_CONFIG: denied", "{config}"),
            other => panic!("READBOX_CONFIG={config}: {other:?}"),
        }
    }
    // Beneath the root it is read, by absolute or relative name, and reported as any file.
    f.file("root/narrow.toml", "max_output_bytes = 5\n");
    assert_eq!(with("narrow.toml").unwrap().max_output_bytes, 5);
    let inside = f.p("root/narrow.toml");
    assert_eq!(with(inside.to_str().unwrap()).unwrap().max_output_bytes, 5);
    let e = with("missing.toml").unwrap_err().to_string();
    assert_eq!(
        e,
        "config: missing.toml: cannot read: no such file or directory"
    );
    let e = with("dir.toml").unwrap_err().to_string();
    assert_eq!(e, "config: dir.toml: cannot read: not a regular file");
    f.file("root/wide.toml", "max_output_bytes = 99999999\n");
    let e = with("wide.toml").unwrap_err().to_string();
    assert!(e.contains("above the locked"), "{e}");
    // Without a lock, READBOX_CONFIG may name any file.
    let mut free = f.inputs(&[("READBOX_CONFIG", outside.to_str().unwrap())]);
    free.cwd = Some(f.p("root"));
    let e = Policy::load_from(&free).unwrap_err().to_string();
    assert!(e.contains("SECRET_KEY_NAME: unknown setting"), "{e}");
}

#[test]
fn redaction_is_on_by_default_and_either_layer_turns_it_off() {
    let f = Fixture::new();
    let p = Policy::load_from(&f.inputs(&[])).unwrap();
    assert!(p.redact);
    assert_eq!(p.sources[&Setting::Redact], "default");
    let p = Policy::load_from(&f.inputs(&[("READBOX_REDACT", "off")])).unwrap();
    assert!(!p.redact);
    assert_eq!(p.sources[&Setting::Redact], "env READBOX_REDACT");
    let cfg = f.file("r.toml", "redact = false\n");
    let p = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", cfg.to_str().unwrap())])).unwrap();
    assert!(!p.redact);
    let e = Policy::load_from(&f.inputs(&[("READBOX_REDACT", "perhaps")])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "config: READBOX_REDACT: 'perhaps': expected a boolean"
    );
    let bad = f.file("b.toml", "redact = \"no\"\n");
    let e = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", bad.to_str().unwrap())])).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("b.toml: redact: expected true or false"),
        "{e}"
    );
}

#[test]
fn a_lock_keeps_redaction_on_unless_the_locked_file_turns_it_off() {
    let f = Fixture::new();
    let locked = f.file("l.toml", "lock = true\n");
    let l = locked.to_str().unwrap();
    assert!(
        Policy::load_from(&f.inputs(&[("READBOX_CONFIG", l)]))
            .unwrap()
            .redact
    );
    for v in ["false", "0", "off", "no"] {
        let e = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", l), ("READBOX_REDACT", v)]));
        assert!(
            matches!(&e, Err(Error::Config(m)) if m == "READBOX_REDACT: cannot be turned off under a lock"),
            "{e:?}"
        );
    }
    let p =
        Policy::load_from(&f.inputs(&[("READBOX_CONFIG", l), ("READBOX_REDACT", "yes")])).unwrap();
    assert!(p.redact);
    // The locked file itself may turn it off; later layers may then choose.
    let off = f.file("o.toml", "lock = true\nredact = false\n");
    let o = off.to_str().unwrap();
    let p = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", o)])).unwrap();
    assert!(!p.redact);
    assert_eq!(p.sources[&Setting::Redact], off.display().to_string());
    let p =
        Policy::load_from(&f.inputs(&[("READBOX_CONFIG", o), ("READBOX_REDACT", "on")])).unwrap();
    assert!(p.redact);
}

#[test]
fn a_lock_turns_on_redaction_that_an_earlier_unlocked_layer_turned_off() {
    let f = Fixture::new();
    let mut i = f.inputs(&[]);
    i.system_file = f.file("system.toml", "redact = false\n");
    assert!(!Policy::load_from(&i).unwrap().redact);
    let locked = f.file("l.toml", "lock = true\n");
    i.vars
        .insert("READBOX_CONFIG".into(), OsString::from(locked.as_os_str()));
    let p = Policy::load_from(&i).unwrap();
    assert!(p.redact);
    assert_eq!(p.sources[&Setting::Redact], locked.display().to_string());
    i.vars
        .insert("READBOX_REDACT".into(), OsString::from("false"));
    assert!(matches!(Policy::load_from(&i), Err(Error::Config(_))));
}

#[test]
fn lock_cannot_be_turned_off_and_tools_only_narrow() {
    let f = Fixture::new();
    let a = f.file(
        "a.toml",
        "lock = true\nallowed_tools = [\"cat\", \"head\"]\n",
    );
    let i = f.inputs(&[
        ("READBOX_CONFIG", a.to_str().unwrap()),
        ("READBOX_TOOLS", "cat,grep"),
    ]);
    assert!(matches!(Policy::load_from(&i), Err(Error::Config(_))));
    let i = f.inputs(&[
        ("READBOX_CONFIG", a.to_str().unwrap()),
        ("READBOX_TOOLS", "cat"),
    ]);
    assert_eq!(Policy::load_from(&i).unwrap().tools, vec!["cat"]);
}

#[test]
fn require_sandbox_refuses_only_a_restriction_that_restricts_nothing() {
    let f = Fixture::new();
    let none = Enforcement::None("not supported by this kernel".into());
    let best = Policy::load_from(&f.inputs(&[])).unwrap();
    assert_eq!(best.check_sandbox(&none), Ok(()));
    let strict = Policy::load_from(&f.inputs(&[("READBOX_SANDBOX", "require")])).unwrap();
    assert_eq!(strict.check_sandbox(&Enforcement::Full), Ok(()));
    assert_eq!(strict.check_sandbox(&Enforcement::Partial), Ok(()));
    assert_eq!(
        strict.check_sandbox(&none).unwrap_err().to_string(),
        "config: sandbox: \"require\" is set, but Landlock is not enforced: not supported by this \
         kernel"
    );
}

#[test]
fn the_gate_opens_the_policys_roots() {
    let f = Fixture::new();
    let p = Policy::load_from(&f.inputs(&[])).unwrap();
    let gate = p.open_gate().unwrap();
    assert_eq!(gate.workdir(), f.p("root"));
    let sub = gate.resolve(b"sub").unwrap();
    assert_eq!(gate.path_of(&sub), f.p("root/sub"));
    let outside = f.p("outside");
    let denied = |arg: &[u8]| matches!(gate.resolve(arg), Err(Error::Denied(_)));
    assert!(denied(outside.as_os_str().as_bytes()));
    // The policy's excludes come along.
    assert!(denied(b"sub/.env"));
}

#[test]
fn the_rows_follow_the_settings_and_name_each_key_and_variable_once() {
    for (i, row) in settings::ROWS.iter().enumerate() {
        assert_eq!(row.setting as usize, i, "{} is out of place", row.key);
        assert_eq!(
            Setting::by_key(row.key).map(|r| r.setting),
            Some(row.setting)
        );
    }
    let keys: std::collections::BTreeSet<_> = Setting::all().map(Setting::key).collect();
    let vars: std::collections::BTreeSet<_> = Setting::all().filter_map(Setting::var).collect();
    assert_eq!(keys.len(), settings::ROWS.len());
    assert_eq!(
        vars.len(),
        Setting::all().filter(|s| s.var().is_some()).count()
    );
}

#[test]
fn every_setting_is_read_from_a_file_and_its_variable_and_shown_with_its_source() {
    use settings::ValueKind;
    let f = Fixture::new();
    for row in settings::ROWS {
        // A value of the setting's kind that every layer accepts, as TOML and as a variable.
        let (toml, var) = match row.kind {
            ValueKind::Dir => ("\"sub\"".to_string(), "sub".to_string()),
            ValueKind::Dirs => ("[\".\"]".into(), ".".into()),
            ValueKind::Tools => ("[\"cat\"]".into(), "cat".into()),
            ValueKind::Globs => ("[\"*.md\"]".into(), "*.md".into()),
            ValueKind::Seconds => ("3".into(), "3".into()),
            ValueKind::Count => ("5".into(), "5".into()),
            ValueKind::Format => ("\"text\"".into(), "text".into()),
            ValueKind::Flag => ("true".into(), "true".into()),
            ValueKind::Choice(_, on) => (format!("\"{on}\""), on.to_string()),
            ValueKind::File => ("\"audit.log\"".into(), "audit.log".into()),
        };
        let cfg = f.file("row.toml", &format!("{} = {toml}\n", row.key));
        let c = cfg.to_str().unwrap();
        let p = Policy::load_from(&f.inputs(&[("READBOX_CONFIG", c)])).unwrap();
        assert_eq!(p.source(row.setting), c, "{}", row.key);
        let shown = p.to_json(serde_json::Value::Null);
        assert_eq!(shown["settings"][row.key]["source"], c, "{}", row.key);
        if let Some(name) = row.var {
            let p = Policy::load_from(&f.inputs(&[(name, &var)])).unwrap();
            assert_eq!(p.source(row.setting), format!("env {name}"));
        }
    }
    let shown = Policy::load_from(&f.inputs(&[]))
        .unwrap()
        .to_json(serde_json::Value::Null);
    let keys: Vec<&str> = shown["settings"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, Setting::all().map(Setting::key).collect::<Vec<_>>());
}
