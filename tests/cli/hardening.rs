//! Defences against what an attack run found (docs/security.md): the audit log out of every
//! tool's reach, writes and records under a lock, the lock's directory chain, and more; each test
//! is named after what it guards.

use std::path::Path;

use crate::support::{Rng, TestEnv};

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A TOML basic string holding `text`.
fn toml_str(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

#[test]
fn the_audit_log_is_never_read_listed_or_matched_beneath_a_root() {
    let mut env = TestEnv::new();
    env.write("a.txt", "hello\n");
    env.mkdir("logs");
    let log = env.p("logs/audit.jsonl");
    let cfg = env.config(
        "audit.toml",
        &format!(
            "audit_log = {}\nexclude_patterns = []\n",
            toml_str(&s(&log))
        ),
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    env.run("cat", &["a.txt"]).ok("hello\n");
    assert!(std::fs::read_to_string(&log).unwrap().contains("a.txt"));
    env.run("cat", &["logs/audit.jsonl"])
        .denied("logs/audit.jsonl");
    env.run("stat", &["logs/audit.jsonl"])
        .denied("logs/audit.jsonl");
    env.run("cat", &[s(&log)]).denied(&s(&log));
    env.run("ls", &["logs"]).ok("");
    env.run("find", &["logs"]).ok("");
    env.run("grep", &["a.txt", "logs"]).no_match();
    env.run("grep", &["a.txt", "."]).no_match();
    // Another name of the same file (a hard link) is the same file.
    std::fs::hard_link(&log, env.p("copy.jsonl")).unwrap();
    env.run("cat", &["copy.jsonl"]).denied("copy.jsonl");
    env.run("ls", &["."]).ok("a.txt\nlogs/\n");
}

#[test]
fn install_makes_no_link_under_a_lock() {
    let env = crate::lock::locked_to_root();
    let dir = env.base().join("links");
    std::fs::create_dir(&dir).unwrap();
    env.readbox(&["install", &s(&dir)]).fails(
        "disabled",
        "install makes links, which a locked policy does not allow",
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "links made");
}

#[test]
fn every_audit_record_names_its_meta_command() {
    let mut env = TestEnv::new();
    let log = env.base().join("audit.jsonl");
    let cfg = env.config(
        "audit.toml",
        &format!("audit_log = {}\n", toml_str(&s(&log))),
    );
    env.var("READBOX_CONFIG", &s(&cfg));
    let links = env.base().join("links");
    std::fs::create_dir(&links).unwrap();
    for words in [
        vec!["list"],
        vec!["schema"],
        vec!["version"],
        vec!["policy"],
        vec!["install", &s(&links)],
    ] {
        let a = env.readbox(&words);
        assert_eq!(a.error, None, "{words:?}");
    }
    let status = env
        .readbox_command()
        .arg("mcp")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let tools: Vec<(String, String)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["tool"].as_str().unwrap().to_string(),
                v["event"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expect: Vec<(String, String)> = ["list", "schema", "version", "policy", "install", "mcp"]
        .iter()
        .flat_map(|t| {
            [
                (t.to_string(), "start".into()),
                (t.to_string(), "end".into()),
            ]
        })
        .collect();
    assert_eq!(tools, expect);
}

#[test]
fn a_lock_in_a_directory_others_can_write_is_refused() {
    use readbox::policy::{Inputs, Policy};
    use std::os::unix::fs::PermissionsExt;
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: the system file and its directories must be owned by root");
        return;
    }
    let env = TestEnv::new();
    let etc = env.base().join("etc/readbox");
    std::fs::create_dir_all(&etc).unwrap();
    let file = etc.join("config.toml");
    let load = || {
        Policy::load_from(&Inputs {
            system_file: file.clone(),
            vars: std::collections::BTreeMap::new(),
            cwd: Some(env.root()),
        })
    };
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    std::fs::write(
        &file,
        format!(
            "lock = true\nallowed_directories = [{}]\n",
            toml_str(&s(&env.root()))
        ),
    )
    .unwrap();
    mode(&file, 0o644);
    mode(&etc, 0o755);
    assert!(load().unwrap().lock, "a sound chain locks");
    let loose = |why: &str| {
        let e = load().expect_err(why).to_string();
        assert_eq!(
            e,
            format!(
                "config: {}: lock: the directories of the system file {} must be owned by root \
                 and not writable by group or others",
                etc.display(),
                file.display()
            ),
            "{why}"
        );
    };
    mode(&etc, 0o777);
    loose("a lock in a directory anyone can write");
    mode(&etc, 0o775);
    loose("a lock in a directory its group can write");
    // Removed by anyone who could: the missing file must not silently end the lock.
    std::fs::remove_file(&file).unwrap();
    loose("a missing system file in a directory anyone can write");
    mode(&etc, 0o755);
    assert!(
        !load().unwrap().lock,
        "no file, a sound chain: no lock, no error"
    );
    // A sticky directory (as /tmp) keeps root's entries from others.
    mode(&etc, 0o1777);
    assert!(load().is_ok(), "a sticky directory");
    mode(&etc, 0o755);
    rustix::fs::chown(&etc, Some(rustix::fs::Uid::from_raw(1)), None).unwrap();
    loose("a directory owned by another user");
}

/// 1,300 lines of 64 base64 characters, different in every line (an armored OpenPGP secret key
/// with a photo ID is this long: 84 KiB, past any bound a reader could buffer).
fn key_lines() -> Vec<String> {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    (0..1300)
        .map(|_| {
            (0..64)
                .map(|_| alphabet[rng.below(alphabet.len())] as char)
                .collect()
        })
        .collect()
}

#[test]
fn a_private_key_block_of_any_length_is_hidden_by_every_reader() {
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1048576");
    let lines = key_lines();
    let begin = format!("-----BEGIN PGP PRIVATE {}-----", "KEY BLOCK");
    let end = format!("-----END PGP PRIVATE {}-----", "KEY BLOCK");
    let body = format!("Version: 2\n\n{}\n=AbCd\n", lines.join("\n"));
    env.write("key.asc", format!("{begin}\n{body}{end}\nafter\n"));
    // No END: the block runs to the end of the file.
    env.write("open.asc", format!("before\n{begin}\n{body}"));
    let marker = "[REDACTED:private-key]";
    env.run("cat", &["key.asc"])
        .ok(&format!("{begin}\n{marker}\n{end}\nafter\n"));
    env.run("cat", &["open.asc"])
        .ok(&format!("before\n{begin}\n{marker}\n"));
    env.run("head", &["key.asc", "2000"])
        .ok(&format!("{begin}\n{marker}\n{end}\nafter\n"));
    // A window that starts 80 KiB inside the block: the block is found by looking back.
    env.run("tail", &["key.asc", "5"])
        .ok(&format!("{marker}\n{end}\nafter\n"));
    env.run("tail", &["open.asc", "3"])
        .ok(&format!("{marker}\n"));
    env.run("grep", &[&lines[1299][..20], "key.asc"]).no_match();
    env.run("grep", &[&lines[1299][..20], "open.asc"])
        .no_match();
}

#[test]
fn url_passwords_and_authorization_values_of_every_shape_are_redacted() {
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1048576");
    let long = "H".repeat(300);
    let passwords = [
        "$uperS3cretPw",
        "(Hunter2xyz)",
        "{Hunter2xyz",
        "%sHunter2xyz",
        "[Hunter2xyz]",
        long.as_str(),
    ];
    let hosts = [
        "db.internal",
        "_db.internal",
        "\u{fc}ber.example",
        "%64b.internal",
    ];
    let mut text = String::new();
    let mut want = String::new();
    for p in passwords {
        for h in hosts {
            text.push_str(&format!("DATABASE_URL=postgres://admin:{p}@{h}:5432/app\n"));
            want.push_str(&format!(
                "DATABASE_URL=postgres://admin:[REDACTED:url-password]@{h}:5432/app\n"
            ));
        }
    }
    let user = "u".repeat(200);
    text.push_str(&format!("x=https://{user}:Hunter2xyz@example.com/\n"));
    want.push_str(&format!(
        "x=https://{user}:[REDACTED:url-password]@example.com/\n"
    ));
    let v = "a1B2c3D4e5F6g7H8i9J0kLmN";
    for (before, after) in [
        ("fetch(u, { headers: { Authorization: `Bearer ", "` } })"),
        ("h.Authorization = \"Bearer \" + \"", "\";"),
        ("const h = { 'Authorization': 'Bearer ' + '", "' };"),
        ("Authorization:\n  Bearer ", ""),
        ("Authorization: Bearer\n ", ""),
    ] {
        text.push_str(&format!("{before}{v}{after}\n"));
        want.push_str(&format!("{before}[REDACTED:authorization]{after}\n"));
    }
    // Not credentials: templates, a constant in code, a signed request's scheme.
    let kept = concat!(
        "url = postgres://app:${DB_PASSWORD}@db/app\n",
        "url = postgres://app:$DB_PASSWORD@db/app\n",
        "url = postgres://app:{password}@db/app\n",
        "    pub Authorization: WINBIO_PRESENCE_0,\n",
        "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=5d672d79\n",
    );
    text.push_str(kept);
    want.push_str(kept);
    env.write("conf.txt", &text);
    env.run("cat", &["conf.txt"]).ok(&want);
    env.run("grep", &["Hunter2", "conf.txt"]).no_match();
}

#[test]
fn text_in_utf16_or_utf32_is_decoded_before_any_tool_looks_at_it() {
    let env = TestEnv::new();
    let token = format!("gh{}", "p_Zq9XkW3mLp7RtY2vNb5cHd8sFg4jKa6eQw1u");
    let text = format!("GITHUB_TOKEN={token}\r\nname = caf\u{e9} \u{1F600}\r\n");
    let utf16: Vec<u16> = text.encode_utf16().collect();
    let files: [(&str, Vec<u8>, &str); 4] = [
        (
            "le.txt",
            [
                &b"\xFF\xFE"[..],
                &utf16
                    .iter()
                    .flat_map(|u| u.to_le_bytes())
                    .collect::<Vec<_>>(),
            ]
            .concat(),
            "UTF-16LE",
        ),
        (
            "be.txt",
            [
                &b"\xFE\xFF"[..],
                &utf16
                    .iter()
                    .flat_map(|u| u.to_be_bytes())
                    .collect::<Vec<_>>(),
            ]
            .concat(),
            "UTF-16BE",
        ),
        (
            "le32.txt",
            [
                &b"\xFF\xFE\0\0"[..],
                &text
                    .chars()
                    .flat_map(|c| (c as u32).to_le_bytes())
                    .collect::<Vec<_>>(),
            ]
            .concat(),
            "UTF-32LE",
        ),
        (
            "be32.txt",
            [
                &b"\0\0\xFE\xFF"[..],
                &text
                    .chars()
                    .flat_map(|c| (c as u32).to_be_bytes())
                    .collect::<Vec<_>>(),
            ]
            .concat(),
            "UTF-32BE",
        ),
    ];
    let shown = "GITHUB_TOKEN=[REDACTED:github-token]\r\nname = caf\u{e9} \u{1F600}\r\n";
    for (name, bytes, encoding) in files {
        env.write(name, bytes);
        let note =
            format!("{name}: decoded from {encoding} (the file starts with its byte order mark)");
        let a = env.run("cat", &[name]);
        a.ok(shown);
        assert!(a.notes.contains(&note), "{name}: {:?}", a.notes);
        env.run("grep", &["caf\u{e9}", name])
            .ok(&format!("{name}:2:name = caf\u{e9} \u{1F600}\r\n"));
        env.run("grep", &["Zq9XkW", name]).no_match();
        env.run("tail", &[name, "1"])
            .ok("name = caf\u{e9} \u{1F600}\r\n");
        env.run("head", &[name, "1"])
            .ok("GITHUB_TOKEN=[REDACTED:github-token]\r\n");
        env.run("wc", &[name]).ok(&format!(
            "{{\"lines\": 2, \"words\": 5, \"bytes\": {}}}\n",
            text.len()
        ));
    }
    // Without a mark, NULs make a file binary, as before.
    env.write("plain.bin", b"G\0I\0T\0\n\0");
    env.run("grep", &["G", "plain.bin"])
        .ok("plain.bin: binary file matches\n");
}

#[test]
fn running_out_of_memory_answers_io_out_of_memory_and_never_aborts() {
    let mut env = TestEnv::new();
    let Some(setup) = crate::kernel::large_allocations_fail(3 << 20) else {
        eprintln!("skipped: no seccomp filter for this architecture");
        return;
    };
    // diff holds its two inputs: past 3 MiB, an allocation fails.
    let a: String = (0..1900)
        .map(|i| format!("{i} {}\n", "x".repeat(2000)))
        .collect();
    env.write("a.txt", &a);
    env.write("b.txt", a.replace("7 x", "seven x"));
    env.var("READBOX_MAX_READ_BYTES", "100000000");
    env.var("RUST_BACKTRACE", "1");
    env.child_setup(setup);
    let r = env.run("diff", &["a.txt", "b.txt"]);
    assert_eq!(r.error.as_deref(), Some("io: out of memory"), "{r:?}");
    assert_eq!(r.status, 2);
    assert_eq!(
        String::from_utf8_lossy(&r.stderr),
        "",
        "nothing on standard error"
    );
}

/// Fills `src` with the excluded files and a plain one, and mounts it at the sandbox's root
/// through [`AliasFs`]; `None` (the test is skipped) where FUSE is not available.
pub(crate) fn alias_root(env: &TestEnv) -> Option<crate::fuse::AliasFs> {
    let src = env.base().join("src");
    std::fs::create_dir_all(src.join(".ssh")).unwrap();
    std::fs::write(src.join(".env"), "CANARY-SECRET-env\n").unwrap();
    std::fs::write(src.join("server.pem"), "CANARY-SECRET-pem\n").unwrap();
    std::fs::write(src.join(".ssh/id_rsa"), "CANARY-SECRET-ssh\n").unwrap();
    std::fs::write(src.join("a.txt"), "hello\n").unwrap();
    std::fs::write(src.join("slow.txt"), "never read\n").unwrap();
    std::fs::create_dir_all(src.join("slowdir")).unwrap();
    crate::fuse::AliasFs::mount(&src, &env.root())
}

#[test]
fn excludes_hold_where_the_filesystem_drops_trailing_dots_and_spaces_and_folds_case() {
    // On any filesystem, a name with trailing dots or spaces is matched as Windows reads it.
    let env = TestEnv::new();
    env.secret(".env");
    env.secret("server.pem");
    env.secret(".ssh/id_rsa");
    for p in [
        ".env ",
        ".env.",
        ".ENV. .",
        "server.pem.",
        ".ssh./id_rsa",
        ".ssh /id_rsa",
    ] {
        env.run("cat", &[p]).denied(p);
    }
    drop(env);
    // On a filesystem that resolves those names (and short names) to the excluded files.
    let env = TestEnv::new();
    let Some(_fs) = alias_root(&env) else { return };
    env.run("cat", &["a.txt"]).ok("hello\n");
    env.run("cat", &["A.TXT."]).ok("hello\n");
    for p in [
        ".env ",
        ".ENV",
        ".Env.",
        "SERVER.PEM.",
        ".ssh./id_rsa",
        ".SSH/id_rsa",
        "SSH~1/id_rsa",
        "SERVER~1.PEM",
    ] {
        env.run("cat", &[p]).denied(p);
        env.run("stat", &[p]).denied(p);
    }
    env.run("ls", &["SSH~1"]).denied("SSH~1");
    env.run("grep", &["CANARY", "SSH~1"]).denied("SSH~1");
    // Every file but the one whose reads block.
    env.run("grep", &["CANARY", ".", "true", "false", "[!s]*"])
        .no_match();
    env.run("ls", &["."]).ok("a.txt\nslow.txt\nslowdir/\n");
}

#[test]
fn the_deadline_holds_from_the_start_through_a_config_file_or_a_root_that_blocks() {
    let mut env = TestEnv::new();
    let Some(_fs) = alias_root(&env) else { return };
    env.var("READBOX_TIMEOUT", "1");
    // The answer must come by the deadline, and standard output end with it, even while a
    // thread of the process waits in the kernel for a read the file system has taken.
    let timed = |words: &[&str], env: &TestEnv| {
        use std::io::Read;
        let mut c = env.readbox_command();
        c.args(words)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut child = c.spawn().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = stdout.read_to_end(&mut out);
            let _ = tx.send(out);
        });
        // The file blocks for an hour: an end of output within a minute is the deadline's.
        let out = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{words:?}: no end of output by the deadline"));
        let _ = child.kill();
        let v: serde_json::Value = serde_json::from_slice(&out)
            .unwrap_or_else(|e| panic!("{words:?}: no envelope ({e}): {out:?}"));
        (v, child)
    };
    let (v, _slow) = timed(&["cat", "slow.txt"], &env);
    assert_eq!(v["error"], "timeout: the call took longer than 1 s");
    // A root whose file system does not answer when its handle is examined, after the config
    // files are read and before the call's own watchdog starts.
    env.var("READBOX_ROOTS", &s(&env.p("slowdir")));
    env.cd(&s(&env.p("slowdir")));
    let (v, _root) = timed(&["pwd"], &env);
    assert_eq!(v["error"], "timeout: the call took longer than 1 s");
    // A config file whose read blocks: the deadline started before it was read.
    env.var("READBOX_CONFIG", &s(&env.p("slow.txt")));
    let (v, _config) = timed(&["cat", "a.txt"], &env);
    assert_eq!(v["error"], "timeout: the call took longer than 1 s");
    // The children end when the file system goes (before the sandbox does).
}

#[test]
fn a_directory_search_decodes_text_that_starts_with_a_byte_order_mark() {
    // The walk finds the mark in the first block it reads, not with a read of its own per file.
    let env = TestEnv::new();
    let utf16: Vec<u8> = "\u{feff}hello\nneedle here\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    env.write("d/le.txt", &utf16);
    env.write("d/p.txt", "needle plain\n");
    let a = env.run("grep", &["needle", "d"]);
    a.ok("d/le.txt:2:needle here\nd/p.txt:1:needle plain\n");
    assert_eq!(
        a.notes,
        ["d/le.txt: decoded from UTF-16LE (the file starts with its byte order mark)"]
    );
}
