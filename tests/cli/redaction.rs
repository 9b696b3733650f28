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

/// A fake AWS secret access key: 40 characters of base64 with capitals, small letters and digits.
fn aws_secret_key(seed: u32) -> String {
    let t = github_token(seed);
    format!("{}{}", &t[4..38], "Ab3/x+")
}

#[test]
fn a_value_on_the_line_after_its_name_goes_in_every_reader() {
    // Kubernetes writes an environment variable as a name line and a value line.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1000000");
    let key = aws_secret_key(6);
    let filler: String = (0..3000)
        .map(|i| format!("# line {i} of filler\n"))
        .collect();
    let manifest = format!(
        "{filler}env:\n  - name: AWS_SECRET_ACCESS_KEY\n    value: \"{key}\"\n  - name: REGION\n    value: eu\n"
    );
    env.write("deploy.yaml", &manifest);
    let n = 3000 + 3;
    let shown = "    value: \"[REDACTED:aws-secret-access-key]\"\n";
    let c = env.both("cat", &["deploy.yaml"]);
    assert_hidden(&c.output, std::slice::from_ref(&key));
    assert!(c.output.contains(shown), "{}", c.output);
    // Readers that start at the value line, past the name line unseen.
    env.both("cat", &["deploy.yaml", &n.to_string()])
        .ok(&format!("{shown}  - name: REGION\n    value: eu\n"));
    env.both("tail", &["deploy.yaml", "3"])
        .ok(&format!("{shown}  - name: REGION\n    value: eu\n"));
    assert!(
        env.both("head", &["deploy.yaml", &n.to_string()])
            .output
            .ends_with(shown)
    );
    // grep neither shows nor confirms any piece of the value, whatever else it matches.
    for k in [4, 10, 40] {
        env.both("grep", &[&key[..k], "deploy.yaml"]).no_match();
    }
    env.both("grep", &["value:", "deploy.yaml"]).ok(&format!(
        "deploy.yaml:{n}:{}deploy.yaml:{}:    value: eu\n",
        shown,
        n + 2
    ));
    // `e` may match a marker, so grep looks at the lines as redacted, one batch at a time.
    let e = env.both("grep", &["e", "deploy.yaml"]);
    assert_hidden(&e.output, std::slice::from_ref(&key));
    assert!(
        e.output.contains(&format!("deploy.yaml:{n}:{shown}")),
        "{}",
        e.output
    );
    let small = manifest.replace(&filler, "");
    // Standard input goes through the same readers.
    for words in [
        &["cat", "-"][..],
        &["tail", "-", "3"],
        &["grep", "value", "-"],
    ] {
        let p = env.piped(words, manifest.as_bytes());
        assert_hidden(&p.output, std::slice::from_ref(&key));
        assert!(
            p.output.contains(shown.trim_start()),
            "{words:?}: {}",
            p.output
        );
    }
    env.write("a.yaml", &small);
    env.write("b.yaml", small.replace(&key, &aws_secret_key(7)));
    // Two files are compared as they are (a changed secret is a difference), shown redacted.
    let both = format!("-{shown}+{shown}");
    env.both("diff", &["a.yaml", "b.yaml", "0"])
        .ok_status(&format!("--- a.yaml\n+++ b.yaml\n@@ -3 +3 @@\n{both}"), 1);
    env.write("c.yaml", small.replace("eu", "us"));
    env.both("diff", &["a.yaml", "c.yaml", "2"]).ok_status(
        &format!(
            "--- a.yaml\n+++ c.yaml\n@@ -3,3 +3,3 @@\n{}   - name: REGION\n-    value: eu\n+    value: us\n",
            shown.replacen("    ", "     ", 1)
        ),
        1,
    );
}

#[test]
fn grep_redacts_a_value_among_clean_lines_that_match() {
    // grep shows clean lines that match as they are read, past a look ahead for keywords; the
    // name line ends that clean stretch, and the value after it is matched as redacted.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1000000");
    let key = aws_secret_key(9);
    let clean: String = (0..400).map(|i| format!("  - value: v{i}\n")).collect();
    for name in [
        "  - name: AWS_SECRET_ACCESS_KEY\n",
        "  - value: x\n  - name: AWS_SECRET_ACCESS_KEY\n",
    ] {
        let text = format!("{clean}{name}    value: {key}\n{clean}");
        env.write("env.yaml", &text);
        let a = env.both("grep", &["value", "env.yaml"]);
        assert_hidden(&a.output, std::slice::from_ref(&key));
        assert!(
            a.output
                .contains("    value: [REDACTED:aws-secret-access-key]\n"),
            "{}",
            a.output
        );
        assert_eq!(a.lines().len(), 801 + usize::from(name.contains("value")));
    }
}

#[test]
fn a_value_goes_when_its_name_line_ends_a_block_of_reading() {
    // The name line is the last whole line of a 64 KiB block, or nearly, and the value line comes
    // with the next block.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1000000");
    let key = aws_secret_key(8);
    let name = "- name: AWS_SECRET_ACCESS_KEY\n";
    for shift in [0, 1, 2, 31, 40, 70] {
        let pad = 64 * 1024 - name.len() - shift;
        let filler = format!("{}\n", "#".repeat(pad - 1));
        let text = format!("{filler}{name}  value: {key}\nend\n");
        env.write("env.yaml", &text);
        for (tool, args) in [
            ("grep", &["value", "env.yaml"][..]),
            ("grep", &["e", "env.yaml"]),
            ("cat", &["env.yaml"]),
            ("head", &["env.yaml", "3"]),
            ("tail", &["env.yaml", "2"]),
        ] {
            let a = env.both(tool, args);
            assert_hidden(&a.output, std::slice::from_ref(&key));
            assert!(
                a.output.contains("value: [REDACTED:aws-secret-access-key]"),
                "{tool} {args:?}, shift {shift}: {}",
                a.output
            );
        }
    }
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
fn grep_follows_a_key_block_across_batches_whatever_it_matches() {
    // grep searches for its PATTERN first and redacts only the lines that match; the key-block
    // state must still follow every line between them, here over more than one 64 KiB batch of
    // clean lines before the block and a block longer than a batch.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1000000");
    let (block, material) = key_block(900);
    let before: String = (0..2000)
        .map(|i| format!("needle {i:05} clean line before the key\n"))
        .collect();
    env.write(
        "keys/big.txt",
        format!("{before}{block}needle after the key\n"),
    );
    env.both("grep", &["MIIE", "keys/big.txt"]).no_match();
    env.both("grep", &["Q", "keys/big.txt"]).no_match();
    // `A` can match the marker (`REDACTED`), so these lines are searched as redacted.
    let a = env.both("grep", &["A", "keys/big.txt"]);
    assert_hidden(&a.output, &material);
    let shown: Vec<&str> = a
        .lines()
        .iter()
        .map(|l| l.rsplit(':').next().unwrap())
        .collect();
    assert_eq!(
        shown,
        [
            "-----BEGIN PRIVATE KEY-----",
            "private-key]",
            "-----END PRIVATE KEY-----"
        ],
        "{}",
        a.output
    );
    let n = env.both("grep", &["needle", "keys/big.txt"]);
    assert_eq!(n.lines().len(), 2001);
    assert!(
        n.output.ends_with(":needle after the key\n"),
        "{}",
        n.output
    );
}

#[test]
fn a_long_line_that_redaction_shortens_is_not_shown_when_it_crosses_the_read_budget() {
    // Under the default cap, a line this long would reach the cap before the budget as read;
    // redacted to a few bytes it does not, and the budget ends it first: it is not shown, and
    // the note does not count the value in it.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_READ_BYTES", "300000");
    let token = format!("{}{}", concat!("gh", "p_"), "A1".repeat(200_000));
    let data = format!("short\nvisible {token} tail\nafter\n");
    env.write("shrink.txt", &data);
    for a in [
        env.both("cat", &["shrink.txt"]),
        env.both("head", &["shrink.txt"]),
        env.piped(&["cat", "-"], data.as_bytes()),
        env.piped(&["head", "-"], data.as_bytes()),
    ] {
        a.fails("limit", "max_read_bytes");
        assert!(
            a.output == "short\n",
            "{}: {} bytes",
            a.shown,
            a.output.len()
        );
        assert!(a.notes.is_empty(), "{}: {:?}", a.shown, a.notes);
    }
    env.var("READBOX_MAX_READ_BYTES", "1000000");
    env.both("cat", &["shrink.txt"])
        .ok("short\nvisible [REDACTED:github-token] tail\nafter\n");
}

#[test]
fn grep_counts_only_the_values_in_lines_it_shows_of_long_lines_too() {
    let mut env = TestEnv::new();
    let token = format!("{}{}", concat!("gh", "p_"), "A1".repeat(100_000));
    let data = format!("short\nvisible {token} tail\nafter\n");
    env.write("long.txt", &data);
    // The long line does not match: nothing of it is shown, and nothing is counted.
    let a = env.both("grep", &["short", "long.txt"]);
    a.ok("long.txt:1:short\n");
    assert!(a.notes.is_empty(), "{:?}", a.notes);
    let p = env.piped(&["grep", "short", "-"], data.as_bytes());
    p.ok("(standard input):1:short\n");
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    // It matches: shown, and counted.
    let m = env.piped(&["grep", "tail", "-"], data.as_bytes());
    m.ok("(standard input):2:visible [REDACTED:github-token] tail\n");
    assert_eq!(m.notes.len(), 1, "{:?}", m.notes);
    // It crosses the budget (from a pipe, known only once read): not shown, not counted.
    env.var("READBOX_MAX_READ_BYTES", "150000");
    env.var("READBOX_MAX_OUTPUT_BYTES", "1000000");
    let b = env.piped(&["grep", "visible", "-"], data.as_bytes());
    b.fails("limit", "max_read_bytes");
    assert!(b.output.is_empty() && b.notes.is_empty(), "{:?}", b.notes);
}

#[test]
fn grep_redacts_a_matching_line_among_many_clean_ones() {
    // grep looks ahead for keywords once per batch and shows the matching lines before the
    // first one as read: the line with the secret, and every later one, must still be redacted.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1000000");
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&format!("needle {i:05} clean\n"));
        if i % 1000 == 999 {
            text.push_str(&format!("needle token: {}\n", github_token(i)));
        }
    }
    env.write("many.txt", &text);
    let a = env.both("grep", &["needle", "many.txt"]);
    let secret_lines: Vec<&str> = a
        .lines()
        .into_iter()
        .filter(|l| l.contains("token"))
        .collect();
    assert_eq!(
        secret_lines,
        [
            "many.txt:1001:needle token: [REDACTED:github-token]",
            "many.txt:2002:needle token: [REDACTED:github-token]",
            "many.txt:3003:needle token: [REDACTED:github-token]",
        ]
    );
    assert_eq!(a.lines().len(), 3003);
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

/// A private-key block whose BEGIN line is padded with `pad` trailing spaces, with `lines` lines
/// of material (65 bytes each, with their newline).
fn padded_key_block(pad: usize, lines: usize) -> String {
    let (block, _) = key_block(lines);
    let begin_end = block.find('\n').unwrap();
    format!(
        "{}{}{}",
        &block[..begin_end],
        " ".repeat(pad),
        &block[begin_end..]
    )
}

/// No piece of `key_block`'s material: every material line starts with the same 32 characters
/// and ends with a run of zeros before its number.
fn assert_no_material(output: &str, what: &str) {
    for piece in ["MIIEvQIBADANBgkq", "AASC0000", "00000000000000000000"] {
        assert!(
            !output.contains(piece),
            "{what} shows key material ({piece}): {}",
            &output[output.len().saturating_sub(300)..]
        );
    }
}

#[test]
fn no_window_shows_key_material_after_a_long_begin_line() {
    // tail reads back from its window to learn whether a block is open there: far enough for
    // 64 KiB of material and the BEGIN line's marker, and a BEGIN line whose padding reaches
    // past that is still taken for one. Every reader sees a BEGIN line of any length.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1048576");
    let marker = "[REDACTED:private-key]";
    for pad in [30 * 1024, 70 * 1024, 200 * 1024] {
        // About 50 KB of material: within the 64 KiB bound, so the block is open to its END.
        let text = format!("# deploy key\n{}# end\n", padded_key_block(pad, 780));
        env.write("k.txt", &text);
        let c = env.both("cat", &["k.txt"]);
        assert_no_material(&c.output, &format!("cat ({pad} bytes of padding)"));
        assert!(c.output.contains(marker));
        for n in [
            "1", "2", "3", "50", "222", "700", "780", "781", "782", "783", "784",
        ] {
            let t = env.both("tail", &["k.txt", n]);
            assert_no_material(&t.output, &format!("tail {n} ({pad} bytes of padding)"));
            if n.parse::<u32>().unwrap() >= 3 {
                assert!(t.output.contains(marker), "tail {n}: the marker");
            }
        }
        for n in ["3", "10", "783"] {
            let h = env.both("head", &["k.txt", n]);
            assert_no_material(&h.output, &format!("head {n} ({pad} bytes of padding)"));
        }
        for k in ["3", "300"] {
            let c = env.both("cat", &["k.txt", k]);
            assert_no_material(&c.output, &format!("cat from {k} ({pad} bytes of padding)"));
        }
        env.both("grep", &["MII", "k.txt"]).no_match();
    }
}

#[test]
fn the_end_of_a_long_last_line_shows_what_the_whole_line_shows() {
    // tail shows the end of a last line that does not fit the cap. Within what the cap can
    // show it reads from the line's start, so the end is redacted as the whole line is; past
    // that it stops reading, and what could continue a token that began before is not shown: a
    // token that began long before the end is still hidden to its last byte.
    let mut env = TestEnv::new();
    let t = github_token(8);
    let long_tail: String = t[4..].chars().cycle().take(200_000).collect();
    env.write("long.txt", format!("t={t}{long_tail};{}\n", "x".repeat(30)));
    env.var("READBOX_MAX_OUTPUT_BYTES", "40");
    let a = env.both("tail", &["long.txt", "1"]);
    a.ok(&format!(";{}\n", "x".repeat(30)));
    assert!(a.truncated);
    let short_tail: String = t[4..].chars().cycle().take(2_000).collect();
    env.write(
        "short.txt",
        format!("t={t}{short_tail};{}\n", "x".repeat(30)),
    );
    let a = env.both("tail", &["short.txt", "1"]);
    a.ok(&format!("b-token];{}\n", "x".repeat(30)));
    assert!(a.truncated);
}

#[test]
fn tail_shows_nothing_of_a_key_line_longer_than_the_read_budget() {
    let mut env = TestEnv::new();
    let (block, _) = key_block(1);
    let begin = &block[..=block.find('\n').unwrap()];
    env.write(
        "k.txt",
        format!("{begin}{}", "MIIEvQIBADANBgkq".repeat(12_500)),
    );
    env.var("READBOX_MAX_READ_BYTES", "50000");
    let a = env.both("tail", &["k.txt", "1"]);
    a.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_no_material(&a.output, "tail past the budget");
    // Past what the cap can show, tail stops reading: the end of a line whose start it did not
    // read may continue a secret, and none of it is shown.
    env.var("READBOX_MAX_READ_BYTES", "1000000");
    let a = env.both("tail", &["k.txt", "1"]);
    assert_no_material(&a.output, "tail within the budget");
    assert!(a.truncated && a.output.is_empty(), "{a:?}");
}

#[test]
fn tail_after_a_long_key_block_charges_its_look_back_once() {
    // The window's lines follow a key block of 1.3 MB: tail looks back through it all to know
    // the block ended before them. It measures and then shows the window from one look back,
    // so the budget pays for the block once, not twice.
    let mut env = TestEnv::new();
    let (block, material) = key_block(20_000);
    let post: String = (0..5).map(|i| format!("post {i}\n")).collect();
    let text = format!("pre\n{block}{post}");
    env.write("k.txt", &text);
    let budget = text.len() + text.len() / 4;
    env.var("READBOX_MAX_READ_BYTES", &budget.to_string());
    let a = env.both("tail", &["k.txt", "6"]);
    let end = block.lines().last().unwrap();
    a.ok(&format!("{end}\n{post}"));
    assert_hidden(&a.output, &material[material.len() - 3..]);
}

#[test]
fn diff_with_standard_input_never_compares_a_binary_side_as_bytes() {
    // A binary file holds what redaction cannot hide (and what it hides in its text parts): its
    // bytes compared with bytes piped in would confirm a guess of the whole file.
    let env = TestEnv::new();
    let t = github_token(9);
    let file = format!("SQLite\0page\0token={t}\0").into_bytes();
    env.write("store.db", &file);
    let mut wrong = file.clone();
    let at = wrong.len() - 3;
    wrong[at] ^= 1;
    let refusal = "store.db is binary (a NUL in its first 8 KiB): with standard input as a side";
    for (words, data) in [
        (&["diff", "store.db", "-"][..], &file),
        (&["diff", "-", "store.db"][..], &wrong),
    ] {
        let a = env.piped(words, data);
        a.fails("usage", refusal);
        assert_eq!(a.output, "");
    }
    // Text piped in against a text file, a binary text piped in: refused alike.
    env.write("a.txt", "plain\n");
    env.piped(&["diff", "a.txt", "-"], &file)
        .fails("usage", "- is binary");
    // Two files are compared as bytes, as before; without redaction, standard input is too.
    env.write("copy.db", &file);
    env.both("diff", &["store.db", "copy.db"]).ok("");
    let mut plain = TestEnv::new();
    plain.write("store.db", &file);
    plain.var("READBOX_REDACT", "false");
    plain.piped(&["diff", "store.db", "-"], &file).ok("");
    plain
        .piped(&["diff", "store.db", "-"], &wrong)
        .ok_status("Binary files store.db and - differ\n", 1);
}

#[test]
fn diff_notes_count_the_redactions_in_the_lines_printed() {
    let env = TestEnv::new();
    let (t, u) = (github_token(6), github_token(7));
    let body: String = (0..40).map(|i| format!("line {i}\n")).collect();
    env.write("a.txt", format!("token: {t}\n{body}old\nkey: {u}\n"));
    env.write("b.txt", format!("token: {t}\n{body}new\nkey: {u}\n"));
    // The change and one line of context: the second secret is printed, the first is not.
    let d = env.both("diff", &["a.txt", "b.txt", "1"]);
    d.ok_status(
        "--- a.txt\n+++ b.txt\n@@ -41,3 +41,3 @@\n line 39\n-old\n+new\n \
         key: [REDACTED:github-token]\n",
        1,
    );
    let redacted: Vec<&String> = d
        .notes
        .iter()
        .filter(|n| n.starts_with("redacted"))
        .collect();
    assert_eq!(redacted.len(), 1, "{:?}", d.notes);
    assert!(
        redacted[0].starts_with("redacted 1 secret value (github-token 1)"),
        "{:?}",
        d.notes
    );
    assert!(d.notes.iter().any(|n| n.contains("patch")), "{:?}", d.notes);
    // No secret in the lines printed: no redaction note, and the diff applies with patch.
    let d = env.both("diff", &["a.txt", "b.txt", "0"]);
    d.ok_status("--- a.txt\n+++ b.txt\n@@ -42 +42 @@\n-old\n+new\n", 1);
    assert_eq!(d.notes, Vec::<String>::new());
}

#[test]
fn diff_of_a_change_inside_a_key_block_shows_the_marker_never_an_empty_hunk() {
    let env = TestEnv::new();
    let (a, material) = key_block(10);
    let b = a.replace(&material[4], &format!("{}changed", material[4]));
    env.write("k1.pem.txt", &a);
    env.write("k2.pem.txt", &b);
    let d = env.both("diff", &["k1.pem.txt", "k2.pem.txt", "0"]);
    d.ok_status(
        "--- k1.pem.txt\n+++ k2.pem.txt\n@@ -6 +6 @@\n-[REDACTED:private-key]\n\
         +[REDACTED:private-key]\n",
        1,
    );
    assert_hidden(&d.output, &material);
    assert!(
        d.notes
            .iter()
            .any(|n| n.starts_with("redacted 2 secret values (private-key 2)")),
        "{:?}",
        d.notes
    );
    // With context, each run of hidden lines a hunk prints is one marker line.
    let d = env.both("diff", &["k1.pem.txt", "k2.pem.txt", "2"]);
    d.ok_status(
        "--- k1.pem.txt\n+++ k2.pem.txt\n@@ -4,5 +4,5 @@\n [REDACTED:private-key]\n\
         -[REDACTED:private-key]\n+[REDACTED:private-key]\n [REDACTED:private-key]\n",
        1,
    );
}

#[test]
fn a_key_in_string_literals_and_a_token_after_an_escape_go_in_every_reader() {
    let env = TestEnv::new();
    let (_, material) = key_block(4);
    let priv_key = concat!("PRIV", "ATE KEY");
    let mut go = format!("const key = \"-----BEGIN RSA {priv_key}-----\\n\" +\n");
    for m in &material {
        go += &format!("\t\"{m}\\n\" +\n");
    }
    go += &format!("\t\"-----END RSA {priv_key}-----\\n\"\n");
    let token = github_token(7);
    go += &format!("var log = \"{{\\\"msg\\\": \\\"token:\\\\n{token}\\\"}}\"\n");
    env.write("key_test.go", &go);
    let mut secrets = material.clone();
    secrets.push(token[4..].to_string());
    assert_hidden(&env.both("cat", &["key_test.go"]).output, &secrets);
    for lines in ["1", "2", "3", "4", "5", "6", "7"] {
        assert_hidden(&env.both("tail", &["key_test.go", lines]).output, &secrets);
        assert_hidden(&env.both("head", &["key_test.go", lines]).output, &secrets);
    }
    for from in 1..=7 {
        let from = from.to_string();
        assert_hidden(&env.both("cat", &["key_test.go", &from]).output, &secrets);
    }
    // A piece of either is found nowhere.
    for probe in [&material[1][8..24], &token[6..20]] {
        env.both("grep", &[probe, "key_test.go"]).no_match();
        env.both("grep", &[probe]).no_match();
    }
    let a = env.both("grep", &["token", "key_test.go"]);
    assert!(a.output.contains("[REDACTED:github-token]"), "{a:?}");
}

#[test]
fn a_marker_constant_in_code_hides_no_code_after_it() {
    let env = TestEnv::new();
    let text = format!(
        "MARKERS = {{\n    \"rsa\": \"-----BEGIN RSA {}-----\",\n}}\n\ndef is_rsa_key(text):\n    return text.startswith(MARKERS[\"rsa\"])\n",
        concat!("PRIV", "ATE KEY")
    );
    env.write("markers.py", &text);
    env.both("cat", &["markers.py"]).ok(&text);
    env.both("grep", &["def", "markers.py"])
        .ok("markers.py:5:def is_rsa_key(text):\n");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    env.both("tail", &["markers.py", "4"])
        .ok(&lines[lines.len() - 4..].concat());
}

/// Appends lines of filler (each its offset) to `text` until it is `to` bytes long.
fn fill_to(text: &mut String, to: usize) {
    while text.len() + 40 < to {
        text.push_str(&format!("{:>38}\n", text.len()));
    }
    text.push_str(&"x".repeat(to - text.len() - 1));
    text.push('\n');
}

#[test]
fn cat_of_a_large_file_redacts_across_the_seams_of_its_chunks() {
    // cat of a large file reads it in chunks of 256 KiB, every other one on a second thread,
    // searched for keywords as they are read: a token cut by a seam, a key block across one, and
    // a value whose name line ends just before one must go as in a small file.
    const CHUNK: usize = 256 * 1024;
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "100000000");
    env.var("READBOX_MAX_READ_BYTES", "100000000");
    let mut text = String::new();
    // What cat shows of `text` up to `done`.
    let (mut shown, mut done) = (String::new(), 0);
    let mut secrets = Vec::new();
    for seam in 1..8 {
        let at = seam * CHUNK;
        match seam % 3 {
            0 => {
                // The seam cuts the token's prefix.
                let t = github_token(seam as u32);
                fill_to(&mut text, at - 7 - (1 + seam / 3));
                shown.push_str(&text[done..]);
                text.push_str(&format!("token: {t}\n"));
                shown.push_str("token: [REDACTED:github-token]\n");
                secrets.push(t);
                done = text.len();
            }
            1 => {
                // The seam cuts the BEGIN marker, or the key material.
                let (block, material) = key_block(40);
                fill_to(&mut text, at - if seam == 4 { 5 } else { block.len() / 2 });
                shown.push_str(&text[done..]);
                text.push_str(&block);
                shown.push_str(&block.replace(&material.join("\n"), "[REDACTED:private-key]"));
                secrets.extend(material);
                done = text.len();
            }
            _ => {
                // The name line ends at the seam.
                let key = aws_secret_key(seam as u32);
                let name = "  - name: AWS_SECRET_ACCESS_KEY\n";
                fill_to(&mut text, at - name.len());
                shown.push_str(&text[done..]);
                text.push_str(&format!("{name}    value: \"{key}\"\n"));
                shown.push_str(&format!(
                    "{name}    value: \"[REDACTED:aws-secret-access-key]\"\n"
                ));
                secrets.push(key);
                done = text.len();
            }
        }
    }
    fill_to(&mut text, 8 * CHUNK + 1000);
    shown.push_str(&text[done..]);
    env.write("big.txt", &text);
    let cat = env.both("cat", &["big.txt"]);
    assert_hidden(&cat.output, &secrets);
    assert_eq!(cat.output.matches("[REDACTED:").count(), 7);
    assert!(
        cat.output == shown,
        "cat shows other text than a small file would"
    );
}

#[test]
fn cat_of_a_large_file_hides_a_long_key_line_whole_whatever_it_holds() {
    // A key-material line of 70 KB that holds a BEGIN or END marker: a line this long is
    // redacted in pieces, which hide it whole. With a second thread reading ahead the line
    // fitted in the reader's buffer and went to the redactor as one line, which took the marker
    // for a block's edge and showed the material (or all that followed an END).
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "100000000");
    env.var("READBOX_MAX_READ_BYTES", "100000000");
    let label = concat!("PRIV", "ATE KEY-----");
    for marker in ["BEGIN", "END"] {
        let mut text = String::new();
        fill_to(&mut text, 512 * 1024);
        let material = format!("QUJD{}", "Zm9vYmFyYmF6cXV4".repeat(4400));
        let block = format!(
            "-----BEGIN {label}\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n\
             {material}-----{marker} {label}{material}\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n\
             -----END {label}\n"
        );
        text.push_str(&block);
        fill_to(&mut text, 3 << 20);
        env.write("big.txt", &text);
        // The yardstick: the block alone, in a file too small for a second thread.
        env.write("block.txt", &block);
        let shown = env.both("cat", &["block.txt"]).output;
        assert!(!shown.contains("QUJD"), "{marker}: key material shown");
        let cat = env.both("cat", &["big.txt"]);
        assert!(!cat.output.contains("QUJD"), "{marker}: key material shown");
        assert!(cat.output == text.replace(&block, &shown), "{marker}");
    }
}
