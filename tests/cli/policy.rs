//! The policy and its layers (docs/contract.md#policy): the built-in defaults, the roots and the
//! working directory, the enabled tools, config files and the environment and which of them
//! wins, errors that name their file and key or their variable, and `readbox policy`, which
//! shows each value with where it came from.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::{Answer, TestEnv};

/// A path as a string, for variables and error texts.
pub(crate) fn s(p: &Path) -> String {
    p.to_str().expect("sandbox paths are UTF-8").to_string()
}

/// A TOML basic string holding `text` (a JSON string literal is one for the paths used here).
pub(crate) fn toml_str(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A `config:` error with no output that mentions every needle (file, key or variable).
#[track_caller]
pub(crate) fn config_error(a: &Answer, needles: &[&str]) {
    a.fails("config", needles.first().copied().unwrap_or(""));
    assert_eq!(
        a.output, "",
        "a config error reads nothing, for {}",
        a.shown
    );
    let e = a.error.as_deref().unwrap();
    for n in needles {
        assert!(
            e.contains(n),
            "config error of {} should name {n:?}: {e}",
            a.shown
        );
    }
}

/// Runs the binary without the harness, for calls whose format comes from a config file (the
/// harness only knows the text format when `READBOX_FORMAT=text` is set).
pub(crate) fn plain(cwd: &Path, vars: &[(&str, &str)], words: &[&str]) -> Output {
    Command::new(crate::support::binary())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .envs(vars.iter().copied())
        .current_dir(cwd)
        .args(words)
        .stdin(Stdio::null())
        .output()
        .expect("run readbox")
}

// ---------------------------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------------------------

#[test]
fn by_default_the_current_directory_is_the_only_root() {
    let mut env = TestEnv::new();
    env.write("x.txt", "x\n");
    env.write("sub/a.txt", "a\n");
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.root())));
    env.both("cat", &["../outside/secret.txt"])
        .denied("../outside/secret.txt");
    env.cd("sub");
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.p("sub"))));
    env.both("cat", &["a.txt"]).ok("a\n");
    // The root follows the current directory: its parent is now outside.
    env.both("cat", &["../x.txt"]).denied("../x.txt");
}

#[test]
fn default_excludes_cover_env_files_ssh_aws_and_keys_in_any_case() {
    let env = TestEnv::new();
    for f in [
        ".env",
        ".env.local",
        ".ssh/id_rsa",
        ".aws/credentials",
        "tls.pem",
        "ID.KEY",
        ".ENV",
    ] {
        env.secret(f);
        env.both("cat", &[f]).denied(f);
    }
    env.write("env.txt", "fine\n");
    env.both("cat", &["env.txt"]).ok("fine\n");
}

#[test]
fn default_output_cap_is_32768_bytes() {
    let env = TestEnv::new();
    env.write("big.txt", "x".repeat(40_000));
    let a = env.run("cat", &["big.txt"]);
    assert_eq!((a.output.len(), a.truncated, a.status), (32_768, true, 0));
    env.write("fit.txt", "x".repeat(32_768));
    let a = env.run("cat", &["fit.txt"]);
    assert_eq!((a.output.len(), a.truncated), (32_768, false));
}

#[test]
fn default_read_budget_is_8_mebibytes() {
    let env = TestEnv::new();
    // 8192 lines of 1024 bytes: exactly 8 MiB, read whole by a grep that finds nothing.
    let line = format!("{}\n", "a".repeat(1023));
    let fit = line.repeat(8192);
    env.write("fit.txt", &fit);
    env.write("over.txt", format!("{fit}b"));
    env.run("grep", &["zzz", "fit.txt"]).no_match();
    env.run("grep", &["zzz", "over.txt"])
        .fails("limit", "max_read_bytes");
}

#[test]
fn policy_reports_the_built_in_defaults() {
    let env = TestEnv::new();
    let doc = env.readbox(&["policy"]).json();
    let settings = &doc["settings"];
    let root = s(&env.root());
    for (key, value) in [
        ("working_directory", serde_json::json!(root)),
        ("allowed_directories", serde_json::json!([root])),
        (
            "allowed_tools",
            serde_json::json!([
                "cat", "pwd", "ls", "find", "grep", "head", "tail", "wc", "stat", "diff", "sh"
            ]),
        ),
        (
            "exclude_patterns",
            serde_json::json!([".env", ".env.*", ".ssh", ".aws", "*.pem", "*.key"]),
        ),
        ("timeout", serde_json::json!(10.0)),
        ("max_output_bytes", serde_json::json!(32768)),
        ("max_read_bytes", serde_json::json!(8_388_608)),
        ("max_entries", serde_json::json!(10000)),
        ("format", serde_json::json!("json")),
        ("respect_ignore_files", serde_json::json!(true)),
        ("audit_log", Value::Null),
        ("lock", serde_json::json!(false)),
        ("redact", serde_json::json!(true)),
    ] {
        assert_eq!(settings[key]["value"], value, "default of {key}");
        assert_eq!(settings[key]["source"], "default", "source of {key}");
    }
}

/// The subtree under the first key named `key`, anywhere in `v`.
fn find_key<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Object(m) => m
            .get(key)
            .or_else(|| m.values().find_map(|c| find_key(c, key))),
        Value::Array(a) => a.iter().find_map(|c| find_key(c, key)),
        _ => None,
    }
}

/// True when `v` is, or holds, the number `n`.
fn has_number(v: &Value, n: f64) -> bool {
    match v {
        Value::Number(x) => x.as_f64() == Some(n),
        Value::Object(m) => m.values().any(|c| has_number(c, n)),
        Value::Array(a) => a.iter().any(|c| has_number(c, n)),
        _ => false,
    }
}

#[test]
fn policy_is_json_with_values_and_their_sources() {
    let mut env = TestEnv::new();
    env.mkdir("sub");
    let cfg = env.config("c.toml", "timeout = 7\n");
    env.var("READBOX_CONFIG", cfg.to_str().unwrap());
    env.var("READBOX_MAX_OUTPUT_BYTES", "1234");
    env.var("READBOX_ROOTS", env.p("sub").to_str().unwrap());
    let a = env.readbox(&["policy"]);
    assert_eq!((a.status, &a.error), (0, &None));
    let doc = a.json();
    let roots = find_key(&doc, "allowed_directories").expect("policy shows allowed_directories");
    let sub = env.p("sub").display().to_string();
    assert!(
        roots.to_string().contains(&sub),
        "roots should be {sub}: {roots}"
    );
    let cap = find_key(&doc, "max_output_bytes")
        .expect("policy shows max_output_bytes")
        .to_string();
    assert!(
        has_number(find_key(&doc, "max_output_bytes").unwrap(), 1234.0),
        "max_output_bytes: {cap}"
    );
    assert!(
        cap.contains("READBOX_MAX_OUTPUT_BYTES") || cap.to_lowercase().contains("env"),
        "max_output_bytes should say it came from the environment: {cap}"
    );
    let timeout = find_key(&doc, "timeout")
        .expect("policy shows timeout")
        .to_string();
    assert!(
        has_number(find_key(&doc, "timeout").unwrap(), 7.0),
        "timeout: {timeout}"
    );
    assert!(
        timeout.contains(cfg.to_str().unwrap()),
        "timeout should say it came from {}: {timeout}",
        cfg.display()
    );
    let entries = find_key(&doc, "max_entries")
        .expect("policy shows max_entries")
        .to_string();
    assert!(
        has_number(find_key(&doc, "max_entries").unwrap(), 10000.0),
        "max_entries default: {entries}"
    );
    assert!(
        !entries.to_lowercase().contains("env"),
        "max_entries was not set in the environment: {entries}"
    );
}

// ---------------------------------------------------------------------------------------------
// Roots and the working directory
// ---------------------------------------------------------------------------------------------

#[test]
fn several_roots_from_the_roots_variable() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    let r2 = env.base().join("root2");
    std::fs::create_dir_all(&r2).unwrap();
    std::fs::write(r2.join("f.txt"), "second\n").unwrap();
    env.var("READBOX_ROOTS", &format!("{}:{}", s(&env.root()), s(&r2)));
    env.both("cat", &[s(&r2.join("f.txt"))]).ok("second\n");
    env.both("cat", &["../root2/f.txt"]).ok("second\n");
    env.both("cat", &["a.txt"]).ok("a\n");
    let secret = s(&env.outside().join("secret.txt"));
    env.both("cat", &[&secret]).denied(&secret);
}

#[test]
fn current_directory_outside_every_root_denies_relative_paths() {
    let mut env = TestEnv::new();
    env.write("a.txt", "in root\n");
    let r2 = env.base().join("root2");
    std::fs::create_dir_all(&r2).unwrap();
    env.var("READBOX_ROOTS", &format!("{}:{}", s(&env.root()), s(&r2)));
    env.cd(&s(&env.outside()));
    let why = "the working directory is outside the roots";
    env.both("pwd", &[] as &[&str]).fails("denied", why);
    env.both("cat", &["a.txt"]).fails("denied", why);
    env.both("cat", &["secret.txt"])
        .fails("denied", &format!("secret.txt: {why}"));
    env.both("cat", &[s(&env.p("a.txt"))]).ok("in root\n");
}

/// A sandbox whose roots are `root/` and whose working directory is set to `outside/`, by the
/// environment or by a config file; returns the config file's path in the second case.
fn workdir_outside(by_file: bool) -> (TestEnv, String) {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    if by_file {
        let cfg = env.config(
            "wd.toml",
            &format!(
                "allowed_directories = [{}]\nworking_directory = {}\n",
                toml_str(&s(&env.root())),
                toml_str(&s(&env.outside()))
            ),
        );
        env.var("READBOX_CONFIG", &s(&cfg));
        (env, s(&cfg))
    } else {
        env.var("READBOX_ROOTS", &s(&env.root()));
        env.var("READBOX_WORKDIR", &s(&env.outside()));
        (env, String::new())
    }
}

#[test]
fn an_explicit_working_directory_outside_every_root_is_a_config_error() {
    for by_file in [false, true] {
        let (env, _) = workdir_outside(by_file);
        config_error(&env.both("pwd", &[] as &[&str]), &[]);
        config_error(&env.both("cat", &["a.txt"]), &[]);
        config_error(&env.both("cat", &["secret.txt"]), &[]);
    }
}

#[test]
fn a_working_directory_outside_every_root_is_blamed_on_its_variable_or_file_and_key() {
    let (env, _) = workdir_outside(false);
    config_error(&env.both("pwd", &[] as &[&str]), &["READBOX_WORKDIR"]);
    let (env, cfg) = workdir_outside(true);
    config_error(
        &env.both("pwd", &[] as &[&str]),
        &[&cfg, "working_directory"],
    );
}

#[test]
fn the_working_directory_variable_sets_where_relative_paths_start() {
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    env.var("READBOX_WORKDIR", &s(&env.p("sub")));
    // Without roots the working directory is the only root.
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.p("sub"))));
    env.both("cat", &["x.txt"]).ok("x\n");
    env.both("cat", &["../a.txt"]).denied("../a.txt");
    env.var("READBOX_ROOTS", &s(&env.root()));
    env.both("cat", &["../a.txt"]).ok("top\n");
}

#[test]
fn a_missing_working_directory_or_root_is_a_config_error_naming_it() {
    let mut env = TestEnv::new();
    env.var("READBOX_WORKDIR", &s(&env.base().join("nope")));
    config_error(&env.both("pwd", &[] as &[&str]), &["READBOX_WORKDIR"]);
    let mut env = TestEnv::new();
    env.var(
        "READBOX_ROOTS",
        &format!("{}:{}", s(&env.root()), s(&env.base().join("nope"))),
    );
    config_error(&env.both("pwd", &[] as &[&str]), &["READBOX_ROOTS"]);
    let mut env = TestEnv::new();
    env.write("file.txt", "f\n");
    env.var("READBOX_ROOTS", &s(&env.p("file.txt")));
    config_error(&env.both("pwd", &[] as &[&str]), &["READBOX_ROOTS"]);
}

#[test]
fn relative_roots_are_taken_from_the_working_directory_not_the_current_one() {
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    env.cd(&s(&env.outside()));
    env.var("READBOX_WORKDIR", &s(&env.p("sub")))
        .var("READBOX_ROOTS", "..");
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.p("sub"))));
    env.both("cat", &["../a.txt"]).ok("top\n");
    env.both("cat", &["../../outside/secret.txt"])
        .denied("../../outside/secret.txt");
}

#[test]
fn relative_roots_in_a_config_file_use_the_working_directory_of_their_layer() {
    // A config file's relative root is taken from the current directory, not the file's folder.
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    let cfg = env.config("rel.toml", "allowed_directories = [\".\"]\n");
    env.cd("sub").var("READBOX_CONFIG", &s(&cfg));
    env.both("cat", &["x.txt"]).ok("x\n");
    env.both("cat", &["../a.txt"]).denied("../a.txt");
    let c = s(&cfg);
    env.both("cat", &[&c]).denied(&c);

    // With the file's own working directory, `..` is taken from there.
    let mut env = TestEnv::new();
    env.write("a.txt", "top\n");
    env.write("sub/x.txt", "x\n");
    let cfg = env.config(
        "wd.toml",
        &format!(
            "working_directory = {}\nallowed_directories = [\"..\"]\n",
            toml_str(&s(&env.p("sub")))
        ),
    );
    env.cd(&s(&env.outside())).var("READBOX_CONFIG", &s(&cfg));
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.p("sub"))));
    env.both("cat", &["../a.txt"]).ok("top\n");

    // A later layer's relative roots start from the working directory the file set.
    env.var("READBOX_ROOTS", ".");
    env.both("cat", &["x.txt"]).ok("x\n");
    env.both("cat", &["../a.txt"]).denied("../a.txt");
}

#[test]
fn roots_and_working_directory_are_canonicalised() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    let link = env.base().join("rootlink");
    std::os::unix::fs::symlink(env.root(), &link).unwrap();
    env.var("READBOX_ROOTS", &s(&link))
        .var("READBOX_WORKDIR", &s(&link));
    env.both("pwd", &[] as &[&str])
        .ok(&format!("{}\n", s(&env.root())));
    env.both("cat", &["a.txt"]).ok("a\n");
    env.both("cat", &[s(&link.join("a.txt"))]).ok("a\n");
    env.both("cat", &["../outside/secret.txt"])
        .denied("../outside/secret.txt");
}

// ---------------------------------------------------------------------------------------------
// Enabled tools
// ---------------------------------------------------------------------------------------------

#[test]
fn a_disabled_tool_answers_before_its_arguments_are_checked() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.var("READBOX_TOOLS", "cat,head");
    let cases: &[(&str, &[&str])] = &[
        ("grep", &[]),
        ("ls", &["-la"]),
        ("tail", &["a.txt", "x"]),
        ("pwd", &["extra"]),
        ("stat", &["a", "b", "c"]),
        ("diff", &["../outside/secret.txt", "a.txt"]),
    ];
    for (tool, args) in cases {
        let a = env.both(tool, args);
        assert_eq!(
            a.error,
            Some(format!("disabled: {tool} is not enabled")),
            "for {}",
            a.shown
        );
        assert_eq!((a.status, a.output.as_str()), (2, ""));
    }
    let a = env.readbox(&["call", "grep", "not json"]);
    assert_eq!(a.error.as_deref(), Some("disabled: grep is not enabled"));
    env.both("cat", &["a.txt"]).ok("a\n");
    env.both("head", &["a.txt", "1"]).ok("a\n");
    env.readbox(&["list"]).ok("cat\nhead\n");
}

#[test]
fn a_config_error_comes_before_the_disabled_check() {
    let mut env = TestEnv::new();
    env.var("READBOX_TOOLS", "cat")
        .var("READBOX_MAX_ENTRIES", "lots");
    config_error(&env.both("grep", &[] as &[&str]), &["READBOX_MAX_ENTRIES"]);
}

#[test]
fn the_tools_variable_rejects_unknown_names() {
    let mut env = TestEnv::new();
    env.var("READBOX_TOOLS", "cat,bash");
    config_error(&env.both("cat", &["x"]), &["READBOX_TOOLS", "bash"]);
}

// ---------------------------------------------------------------------------------------------
// Config files and layers
// ---------------------------------------------------------------------------------------------

#[test]
fn a_config_file_sets_tools_excludes_limits_and_ignore_handling() {
    let mut env = TestEnv::new();
    env.write("a.txt", "abcdefghij\n");
    env.write("x.md", "md\n");
    env.write(".env", "plain\n");
    env.write(".gitignore", "ign.txt\n");
    env.write("ign.txt", "i\n");
    let cfg = env.config(
        "c.toml",
        "allowed_tools = [\"cat\", \"find\"]\nexclude_patterns = [\"*.md\"]\n\
         max_output_bytes = 5\nrespect_ignore_files = false\n",
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    let a = env.both("cat", &["a.txt"]);
    a.ok("abcde");
    assert!(a.truncated);
    env.both("cat", &["x.md"]).denied("x.md");
    // The file's excludes replace the defaults.
    env.both("cat", &[".env"]).ok("plain");
    env.both("wc", &["a.txt"])
        .fails("disabled", "wc is not enabled");
    let f = env.both("find", &[".", "ign.txt"]);
    f.ok("ign.t");
}

#[test]
fn ignore_files_are_honoured_unless_the_setting_turns_them_off() {
    let mut env = TestEnv::new();
    env.write(".gitignore", "ign.txt\n");
    env.write("ign.txt", "i\n");
    env.write("keep.txt", "k\n");
    env.both("find", &[".", "*.txt"]).ok("keep.txt\n");
    env.var("READBOX_RESPECT_IGNORE_FILES", "false");
    env.both("find", &[".", "*.txt"]).ok("ign.txt\nkeep.txt\n");
}

#[test]
fn the_environment_overrides_the_config_file() {
    let mut env = TestEnv::new();
    env.write("a.txt", "abcdefghij\n");
    env.write("x.md", "md\n");
    let cfg = env.config(
        "c.toml",
        "max_output_bytes = 5\nallowed_tools = [\"cat\"]\nexclude_patterns = [\"*.md\"]\n",
    );
    env.var("READBOX_CONFIG", &s(&cfg))
        .var("READBOX_MAX_OUTPUT_BYTES", "100")
        .var("READBOX_TOOLS", "cat,wc")
        .var("READBOX_EXCLUDE", "*.txt");
    let a = env.both("cat", &["x.md"]);
    a.ok("md\n");
    env.both("cat", &["a.txt"]).denied("a.txt");
    env.both("wc", &["x.md"])
        .ok("{\"lines\": 1, \"words\": 1, \"bytes\": 3}\n");
    let mut env = TestEnv::new();
    env.write("a.txt", "abcdefghij\n");
    env.var("READBOX_CONFIG", &s(&cfg))
        .var("READBOX_MAX_OUTPUT_BYTES", "7");
    let a = env.both("cat", &["a.txt"]);
    a.ok("abcdefg");
    assert!(a.truncated);
}

#[test]
fn empty_variables_count_as_unset() {
    let mut env = TestEnv::new();
    env.write("a.txt", "abcdefghij\n");
    let cfg = env.config(
        "c.toml",
        "max_output_bytes = 5\nallowed_tools = [\"cat\", \"pwd\"]\nmax_read_bytes = 100\n\
         exclude_patterns = [\"*.md\"]\n",
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    for v in [
        "READBOX_WORKDIR",
        "READBOX_ROOTS",
        "READBOX_TOOLS",
        "READBOX_TIMEOUT",
        "READBOX_MAX_OUTPUT_BYTES",
        "READBOX_MAX_READ_BYTES",
        "READBOX_MAX_ENTRIES",
        "READBOX_FORMAT",
        "READBOX_RESPECT_IGNORE_FILES",
    ] {
        env.var(v, "");
    }
    let a = env.both("cat", &["a.txt"]);
    a.ok("abcde");
    assert!(
        a.truncated,
        "the file's cap holds when the variable is empty"
    );
    env.both("wc", &["a.txt"])
        .fails("disabled", "wc is not enabled");
    // Empty READBOX_ROOTS and READBOX_WORKDIR leave the current directory as the only root.
    env.both("cat", &["../outside/secret.txt"])
        .denied("../outside/secret.txt");

    // An empty READBOX_CONFIG names no file: the defaults apply.
    let mut env = TestEnv::new();
    env.write("a.txt", "abcdefghij\n");
    env.var("READBOX_CONFIG", "");
    env.both("cat", &["a.txt"]).ok("abcdefghij\n");
    env.both("wc", &["a.txt"])
        .ok("{\"lines\": 1, \"words\": 1, \"bytes\": 11}\n");
}

#[test]
fn an_empty_exclude_variable_means_no_excludes() {
    let mut env = TestEnv::new();
    env.write(".env", "KEY=plain\n");
    env.write("x.md", "md\n");
    env.both("cat", &[".env"]).denied(".env");
    env.var("READBOX_EXCLUDE", "");
    env.both("cat", &[".env"]).ok("KEY=plain\n");
    // It also clears an unlocked config file's excludes.
    let cfg = env.config("c.toml", "exclude_patterns = [\"*.md\"]\n");
    env.var("READBOX_CONFIG", &s(&cfg));
    env.both("cat", &["x.md"]).ok("md\n");
}

#[test]
fn the_exclude_variable_replaces_the_defaults() {
    let mut env = TestEnv::new();
    env.write("a.txt", "a\n");
    env.write(".env", "plain\n");
    env.var("READBOX_EXCLUDE", "*.txt:nothing");
    env.both("cat", &["a.txt"]).denied("a.txt");
    env.both("cat", &[".env"]).ok("plain\n");
}

#[test]
fn config_file_errors_name_the_file_and_the_key() {
    let env = TestEnv::new();
    env.write("a.txt", "a\n");
    let nope = s(&env.base().join("nope"));
    let cases: Vec<(&str, String)> = vec![
        ("bogus_setting", "bogus_setting = 1\n".into()),
        ("max_output_bytes", "max_output_bytes = \"lots\"\n".into()),
        ("max_read_bytes", "max_read_bytes = -1\n".into()),
        ("max_entries", "max_entries = 1.5\n".into()),
        ("timeout", "timeout = -1\n".into()),
        ("timeout", "timeout = 0\n".into()),
        ("timeout", "timeout = nan\n".into()),
        ("timeout", "timeout = inf\n".into()),
        (
            "allowed_tools",
            "allowed_tools = [\"cat\", \"bash\"]\n".into(),
        ),
        ("allowed_tools", "allowed_tools = \"cat\"\n".into()),
        ("format", "format = \"xml\"\n".into()),
        (
            "respect_ignore_files",
            "respect_ignore_files = \"perhaps\"\n".into(),
        ),
        ("exclude_patterns", "exclude_patterns = [\"[ab\"]\n".into()),
        ("lock", "lock = \"yes\"\n".into()),
        ("audit_log", "audit_log = 3\n".into()),
        (
            "allowed_directories",
            format!("allowed_directories = [{}]\n", toml_str(&nope)),
        ),
        (
            "working_directory",
            format!("working_directory = {}\n", toml_str(&nope)),
        ),
    ];
    for (i, (key, text)) in cases.iter().enumerate() {
        let mut e = TestEnv::new();
        let cfg = env.config(&format!("bad{i}.toml"), text);
        e.var("READBOX_CONFIG", &s(&cfg));
        let a = e.both("pwd", &[] as &[&str]);
        config_error(&a, &[&s(&cfg), key]);
    }
}

#[test]
fn an_unreadable_or_invalid_config_file_is_a_config_error_naming_it() {
    let mut env = TestEnv::new();
    let missing = s(&env.base().join("cfg/missing.toml"));
    env.var("READBOX_CONFIG", &missing);
    config_error(&env.both("pwd", &[] as &[&str]), &[&missing]);
    let mut env = TestEnv::new();
    let bad = env.config("bad.toml", "max_entries = = 3\n");
    env.var("READBOX_CONFIG", &s(&bad));
    config_error(&env.both("pwd", &[] as &[&str]), &[&s(&bad)]);
}

#[test]
fn environment_errors_name_the_variable() {
    let cases = [
        ("READBOX_TIMEOUT", "0"),
        ("READBOX_TIMEOUT", "-1"),
        ("READBOX_TIMEOUT", "nan"),
        ("READBOX_TIMEOUT", "inf"),
        ("READBOX_TIMEOUT", "soon"),
        ("READBOX_MAX_OUTPUT_BYTES", "lots"),
        ("READBOX_MAX_READ_BYTES", "-5"),
        ("READBOX_MAX_ENTRIES", "1e3"),
        ("READBOX_FORMAT", "xml"),
        ("READBOX_TOOLS", "cat,bash"),
        ("READBOX_RESPECT_IGNORE_FILES", "perhaps"),
        ("READBOX_EXCLUDE", "[ab"),
    ];
    for (var, value) in cases {
        let mut env = TestEnv::new();
        env.write("a.txt", "a\n");
        env.var(var, value);
        config_error(&env.both("cat", &["a.txt"]), &[var]);
    }
}
