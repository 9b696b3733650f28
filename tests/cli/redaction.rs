//! Redaction through the binary (docs/contract.md#redaction): each reader shows `[REDACTED:RULE]`
//! for a secret value, a PATTERN never probes one, key blocks never show key material whatever
//! window a call reads, the cap counts the redacted text, text format redacts too, and the lock
//! keeps it on. Every credential here is built at run time, so the repository holds none.

use crate::support::TestEnv;

/// A fake token of the GitHub classic form (`ghp_` and 36 letters and digits).
fn github_token(seed: u32) -> String {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
    let body: String = (0..36)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            alphabet[(x >> 16) as usize % alphabet.len()] as char
        })
        .collect();
    format!("{}{body}", concat!("gh", "p_"))
}

/// A fake PEM private-key block of `lines` lines of base64-like material.
fn key_block(lines: usize) -> (String, Vec<String>) {
    let material: Vec<String> = (0..lines)
        .map(|i| format!("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{i:032}"))
        .collect();
    let text = format!(
        "-----BEGIN {} KEY-----\n{}\n-----END {} KEY-----\n",
        concat!("PRIV", "ATE"),
        material.join("\n"),
        concat!("PRIV", "ATE")
    );
    (text, material)
}

fn assert_hidden(output: &str, secrets: &[String]) {
    for s in secrets {
        assert!(
            !output.contains(s.as_str()),
            "secret material shown: {output}"
        );
    }
}

#[test]
fn every_reader_shows_the_marker_and_keeps_the_rest_of_the_line() {
    let env = TestEnv::new();
    let t = github_token(1);
    env.write(
        "config/settings.yaml",
        format!("name: demo\ngithub_token: {t}\nregion: eu\n"),
    );
    env.write(
        "config/other.yaml",
        format!(
            "name: demo\ngithub_token: {}\nregion: eu\n",
            github_token(2)
        ),
    );
    let shown = "name: demo\ngithub_token: [REDACTED:github-token]\nregion: eu\n";
    let a = env.both("cat", &["config/settings.yaml"]);
    a.ok(shown);
    assert!(
        a.notes
            .iter()
            .any(|n| n.starts_with("redacted 1 secret value (github-token 1)")),
        "{:?}",
        a.notes
    );
    env.both("head", &["config/settings.yaml", "2"])
        .ok("name: demo\ngithub_token: [REDACTED:github-token]\n");
    env.both("tail", &["config/settings.yaml", "2"])
        .ok("github_token: [REDACTED:github-token]\nregion: eu\n");
    env.both("grep", &["github_token", "config/settings.yaml"])
        .ok("config/settings.yaml:2:github_token: [REDACTED:github-token]\n");
    // diff compares the files' own lines and shows them redacted; patch cannot use it.
    let d = env.both("diff", &["config/settings.yaml", "config/other.yaml"]);
    d.ok_status(
        "--- config/settings.yaml\n+++ config/other.yaml\n@@ -1,3 +1,3 @@\n name: demo\n\
         -github_token: [REDACTED:github-token]\n+github_token: [REDACTED:github-token]\n \
         region: eu\n",
        1,
    );
    assert!(d.notes.iter().any(|n| n.contains("patch")), "{:?}", d.notes);
    // wc and stat report the file itself.
    let wc = env.both("wc", &["config/settings.yaml"]);
    assert_eq!(wc.json()["bytes"], 11 + 14 + t.len() + 1 + 11);
}

#[test]
fn diff_with_standard_input_never_confirms_a_guessed_secret() {
    let env = TestEnv::new();
    let t = github_token(4);
    let file = format!("name: demo\ngithub_token: {t}\n");
    env.write("settings.yaml", &file);
    // The right guess and a wrong one answer alike: same exit status, output and notes.
    let right = env.piped(&["diff", "settings.yaml", "-"], file.as_bytes());
    let wrong_text = format!("name: demo\ngithub_token: {}\n", github_token(5));
    let wrong = env.piped(&["diff", "settings.yaml", "-"], wrong_text.as_bytes());
    right.ok("");
    wrong.ok("");
    assert_eq!(right.notes, wrong.notes);
    assert!(
        right
            .notes
            .iter()
            .any(|n| n.contains("compared as redacted")),
        "{:?}",
        right.notes
    );
    // A change elsewhere still shows, redacted, with the files' own line numbers.
    let changed = format!("name: other\ngithub_token: {t}\n");
    env.piped(&["diff", "-", "settings.yaml", "0"], changed.as_bytes())
        .ok_status(
            "--- -\n+++ settings.yaml\n@@ -1 +1 @@\n-name: other\n+name: demo\n",
            1,
        );
    // Two files are compared as they are: a changed secret is a difference.
    env.write("guess.yaml", &wrong_text);
    env.both("diff", &["settings.yaml", "guess.yaml", "0"])
        .ok_status(
            "--- settings.yaml\n+++ guess.yaml\n@@ -2 +2 @@\n\
         -github_token: [REDACTED:github-token]\n+github_token: [REDACTED:github-token]\n",
            1,
        );
}

#[test]
fn a_pattern_never_probes_a_secret_by_output_or_exit_status() {
    let env = TestEnv::new();
    let t = github_token(3);
    env.write("a.txt", format!("token = {t}\n"));
    for k in [6, 8, 12, t.len()] {
        env.both("grep", &[&t[..k], "a.txt"]).no_match();
        env.both("grep", &[&t[..k]]).no_match();
    }
    env.both("grep", &["REDACTED", "a.txt"])
        .ok("a.txt:1:token = [REDACTED:github-token]\n");
}

#[test]
fn no_window_of_a_file_shows_key_material() {
    let env = TestEnv::new();
    let (block, material) = key_block(20);
    let text = format!("# deploy key\n{block}# end\n");
    env.write("keys/deploy.txt", &text);
    let marker = "[REDACTED:private-key]";
    // Every head cut and every tail window.
    for n in 1..=24 {
        let h = env.both("head", &["keys/deploy.txt", &n.to_string()]);
        assert_hidden(&h.output, &material);
        let t = env.both("tail", &["keys/deploy.txt", &n.to_string()]);
        assert_hidden(&t.output, &material);
        if (3..=21).contains(&n) {
            assert!(h.output.contains(marker), "head {n}: {}", h.output);
            assert!(t.output.contains(marker), "tail {n}: {}", t.output);
        }
    }
    // cat from any line inside the block, and any cap.
    for k in 1..=24 {
        let c = env.both("cat", &["keys/deploy.txt", &k.to_string()]);
        assert_hidden(&c.output, &material);
    }
    let mut capped = TestEnv::new();
    capped.write("keys/deploy.txt", &text);
    for cap in [40, 60, 100, 500] {
        capped.var("READBOX_MAX_OUTPUT_BYTES", &cap.to_string());
        let c = capped.both("cat", &["keys/deploy.txt"]);
        assert_hidden(&c.output, &material);
    }
    let mut budget = TestEnv::new();
    budget.write("keys/deploy.txt", &text);
    budget.var("READBOX_MAX_READ_BYTES", "200");
    assert_hidden(&budget.both("cat", &["keys/deploy.txt"]).output, &material);
    // grep of the block's marker line finds it, never what follows.
    let g = env.both("grep", &["KEY", "keys/deploy.txt"]);
    assert_hidden(&g.output, &material);
}

#[test]
fn the_cap_counts_the_redacted_text() {
    let mut env = TestEnv::new();
    let lines: String = (0..20)
        .map(|i| format!("key_{i:02} = {}\n", github_token(i)))
        .collect();
    env.write("tokens.txt", &lines);
    env.var("READBOX_MAX_OUTPUT_BYTES", "100");
    let a = env.both("cat", &["tokens.txt"]);
    // Each redacted line is 33 bytes (each line of the file is 50): three whole ones fit in 100.
    a.ok(&"key_0N = [REDACTED:github-token]\n"
        .repeat(3)
        .replacen('N', "0", 1)
        .replacen('N', "1", 1)
        .replacen('N', "2", 1));
    assert!(a.truncated);
}

#[test]
fn text_format_redacts_and_notes_on_stderr() {
    let mut env = TestEnv::new();
    let t = github_token(4);
    env.write("a.txt", format!("token = {t}\n"));
    env.var("READBOX_FORMAT", "text");
    let a = env.both("cat", &["a.txt"]);
    assert_eq!(a.stdout, b"token = [REDACTED:github-token]\n");
    assert!(String::from_utf8_lossy(&a.stderr).contains("cat: note: redacted 1 secret value"));
}

#[test]
fn the_setting_turns_it_off_and_a_lock_keeps_it_on() {
    let mut env = TestEnv::new();
    let t = github_token(5);
    env.write("a.txt", format!("token = {t}\n"));
    env.var("READBOX_REDACT", "false");
    env.both("cat", &["a.txt"]).ok(&format!("token = {t}\n"));
    let mut locked = TestEnv::new();
    locked.write("a.txt", format!("token = {t}\n"));
    let cfg = locked.config("lock.toml", "lock = true\n");
    locked.var("READBOX_CONFIG", cfg.to_str().unwrap());
    locked.var("READBOX_REDACT", "false");
    locked.both("cat", &["a.txt"]).fails(
        "config",
        "READBOX_REDACT: cannot be turned off under a lock",
    );
    let mut allowed = TestEnv::new();
    allowed.write("a.txt", format!("token = {t}\n"));
    let cfg = allowed.config("lock.toml", "lock = true\nredact = false\n");
    allowed.var("READBOX_CONFIG", cfg.to_str().unwrap());
    allowed
        .both("cat", &["a.txt"])
        .ok(&format!("token = {t}\n"));
}

#[test]
fn a_long_line_that_ends_the_file_keeps_its_end_and_hides_its_secret() {
    let env = TestEnv::new();
    let t = github_token(6);
    // 200 KiB on one line, the secret near its end, and no final newline.
    let line = format!("{} token={t} tail", "x".repeat(200 * 1024));
    env.write("long.txt", &line);
    let mut big = TestEnv::new();
    big.write("long.txt", &line);
    big.var("READBOX_MAX_OUTPUT_BYTES", "1048576");
    let want = line.replace(&t, "[REDACTED:github-token]");
    big.both("cat", &["long.txt"]).ok(&want);
    big.both("tail", &["long.txt", "1"]).ok(&want);
    let g = big.both("grep", &["tail", "long.txt"]);
    assert_eq!(g.output, format!("long.txt:1:{want}\n"));
    big.both("grep", &[&t[..12], "long.txt"]).no_match();
}
