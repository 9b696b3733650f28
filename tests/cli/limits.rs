//! The per-call limits (docs/contract.md#limits): the read budget (a file of exactly the budget
//! fits, the line that crosses it is not shown, it is summed over the files of a call and
//! charged only for the lines a tool uses), `max_entries`, and the timeout.

use std::time::{Duration, Instant};

use crate::envelope::five_byte_lines;
use crate::policy::{plain, s};
use crate::support::TestEnv;

// ---------------------------------------------------------------------------------------------
// Read budget
// ---------------------------------------------------------------------------------------------

#[test]
fn a_file_of_exactly_the_read_budget_fits() {
    let mut env = TestEnv::new();
    env.write("f.txt", five_byte_lines(10));
    env.var("READBOX_MAX_READ_BYTES", "50");
    env.both("cat", &["f.txt"]).ok(&five_byte_lines(10));
    env.both("wc", &["f.txt"])
        .ok("{\"lines\": 10, \"words\": 10, \"bytes\": 50}\n");
    env.both("grep", &["lin9", "f.txt"]).ok("f.txt:10:lin9\n");
    env.both("head", &["f.txt", "10"]).ok(&five_byte_lines(10));
    env.both("tail", &["f.txt", "10"]).ok(&five_byte_lines(10));
}

#[test]
fn the_line_that_crosses_the_read_budget_is_not_emitted() {
    for (budget, kept) in [(49, 9), (23, 4), (4, 0)] {
        let mut env = TestEnv::new();
        env.write("f.txt", five_byte_lines(10));
        env.var("READBOX_MAX_READ_BYTES", &budget.to_string());
        let a = env.both("cat", &["f.txt"]);
        a.fails("limit", "max_read_bytes");
        assert_eq!(a.output, five_byte_lines(kept), "budget {budget}");
        assert!(!a.truncated);
        let w = env.both("wc", &["f.txt"]);
        w.fails("limit", "max_read_bytes");
        assert_eq!(w.output, "", "wc counts every byte before it answers");
    }
}

#[test]
fn a_long_line_from_a_pipe_that_crosses_the_read_budget_is_not_emitted() {
    // A file is looked ahead in; from a pipe, the end of a line longer than a block is known
    // only once it is read, so the line is held back until then.
    let data = format!("short\n{}\nafter\n", "x".repeat(200_000));
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_OUTPUT_BYTES", "1000000");
    env.var("READBOX_MAX_READ_BYTES", "150000");
    for words in [["cat", "-"], ["head", "-"]] {
        let a = env.piped(&words, data.as_bytes());
        a.fails("limit", "max_read_bytes");
        assert!(
            a.output == "short\n",
            "{words:?}: {} bytes shown",
            a.output.len()
        );
    }
    env.var("READBOX_MAX_READ_BYTES", "250000");
    let whole = env.piped(&["cat", "-"], data.as_bytes());
    assert!(
        whole.error.is_none() && whole.output == data,
        "{}",
        whole.shown
    );
    // Under a cap that comes first, the line is cut at the cap as from a file.
    env.var("READBOX_MAX_OUTPUT_BYTES", "100000");
    let c = env.piped(&["cat", "-"], data.as_bytes());
    assert!(
        c.truncated && c.output.starts_with("short\nxxx"),
        "{}",
        c.shown
    );
}

#[test]
fn the_read_budget_is_summed_over_all_files_of_a_call() {
    let mut env = TestEnv::new();
    env.write("d/a.txt", "hit 1\nmiss\n"); // 11 bytes
    env.write("d/b.txt", "hit 2\nmiss\n"); // 11 bytes
    env.var("READBOX_MAX_READ_BYTES", "22");
    env.both("grep", &["hit", "d"])
        .ok("d/a.txt:1:hit 1\nd/b.txt:1:hit 2\n");
    let d = env.both("diff", &["d/a.txt", "d/b.txt"]);
    assert_eq!((d.status, d.error.as_deref()), (1, None));

    let mut env = TestEnv::new();
    env.write("d/a.txt", "hit 1\nmiss\n");
    env.write("d/b.txt", "hit 2\nmiss\n");
    env.var("READBOX_MAX_READ_BYTES", "21");
    // b.txt's last line crosses the budget: the first file's lines and b's first line stay.
    let a = env.both("grep", &["hit", "d"]);
    a.fails("limit", "max_read_bytes");
    assert_eq!(a.output, "d/a.txt:1:hit 1\nd/b.txt:1:hit 2\n");
    env.both("diff", &["d/a.txt", "d/b.txt"])
        .fails("limit", "max_read_bytes");
}

#[test]
fn head_and_tail_are_charged_only_for_the_lines_they_use() {
    let mut env = TestEnv::new();
    env.write("f.txt", five_byte_lines(10));
    env.var("READBOX_MAX_READ_BYTES", "10");
    env.both("head", &["f.txt", "2"]).ok("lin0\nlin1\n");
    env.both("tail", &["f.txt", "2"]).ok("lin8\nlin9\n");
    env.both("cat", &["f.txt"]).fails("limit", "max_read_bytes");

    let mut env = TestEnv::new();
    env.write("f.txt", five_byte_lines(10));
    env.var("READBOX_MAX_READ_BYTES", "9");
    let h = env.both("head", &["f.txt", "2"]);
    h.fails("limit", "max_read_bytes");
    assert_eq!(h.output, "lin0\n");
    let t = env.both("tail", &["f.txt", "2"]);
    t.fails("limit", "max_read_bytes");
    assert!(
        !t.output.contains("lin8"),
        "the crossing line was emitted: {:?}",
        t.output
    );
}

#[test]
fn tail_past_the_read_budget_answers_limit_even_when_the_cap_cuts_too() {
    // Once the budget runs out, tail answers `limit:` with the last lines that fit the cap, of a
    // file and of a pipe alike: never a success, which would pass the lines of a pipe read
    // before the budget ran out off as its last ones.
    let text: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    let mut env = TestEnv::new();
    env.write("n.txt", &text);
    env.var("READBOX_MAX_READ_BYTES", "20");
    env.var("READBOX_MAX_OUTPUT_BYTES", "10");
    let f = env.both("tail", &["n.txt", "10"]);
    f.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!((f.output.as_str(), f.truncated), ("100000\n", false));

    let mut env = TestEnv::new();
    env.var("READBOX_MAX_READ_BYTES", "200000");
    env.var("READBOX_MAX_OUTPUT_BYTES", "30");
    let p = env.piped(&["tail", "-", "10"], text.as_bytes());
    p.fails("limit", "READBOX_MAX_READ_BYTES");
    assert!(!p.truncated && p.notes.is_empty(), "{:?}", p.notes);
    let shown: Vec<u32> = p.lines().iter().map(|l| l.parse().unwrap()).collect();
    assert!(!shown.is_empty() && shown.len() <= 5, "{shown:?}");
    assert!(shown.windows(2).all(|w| w[1] == w[0] + 1), "{shown:?}");
    assert!(
        *shown.last().unwrap() < 40_000,
        "only lines read within the budget: {shown:?}"
    );

    // The lines shown are the last ones read within the budget, as cat of the same pipe ends:
    // of a batch that crosses it, the whole lines that fit count.
    let mut env = TestEnv::new();
    env.var("READBOX_MAX_READ_BYTES", "150");
    let small: String = (1..=100).map(|i| format!("{i}\n")).collect();
    let cat = env.piped(&["cat", "-"], small.as_bytes());
    cat.fails("limit", "READBOX_MAX_READ_BYTES");
    assert!(cat.output.ends_with("\n53\n"), "{}", cat.output);
    let tail = env.piped(&["tail", "-", "5"], small.as_bytes());
    tail.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!(tail.output, "49\n50\n51\n52\n53\n");
    // A long line in progress when the budget runs out is not shown.
    let long = format!("1\n2\n{}\n", "y".repeat(100_000));
    let tail = env.piped(&["tail", "-", "5"], long.as_bytes());
    tail.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!(tail.output, "1\n2\n");

    // A last line longer than the budget is not shown, not even its end.
    let mut env = TestEnv::new();
    env.write("one.txt", format!("{}\n", "x".repeat(300)));
    env.var("READBOX_MAX_READ_BYTES", "200");
    env.var("READBOX_MAX_OUTPUT_BYTES", "50");
    let f = env.both("tail", &["one.txt", "1"]);
    f.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!(f.output, "");
    let p = env.piped(&["tail", "-", "1"], "x".repeat(300).as_bytes());
    p.fails("limit", "READBOX_MAX_READ_BYTES");
    assert_eq!(p.output, "");
}

#[test]
fn head_and_tail_of_a_file_far_larger_than_the_budget() {
    let mut env = TestEnv::new();
    let text: String = (1..=200_000).map(|i| format!("line {i}\n")).collect();
    assert!(text.len() > 2 * 1_048_576);
    env.write("big.txt", &text);
    env.var("READBOX_MAX_READ_BYTES", "1048576");
    env.run("head", &["big.txt", "3"])
        .ok("line 1\nline 2\nline 3\n");
    env.run("tail", &["big.txt", "2"])
        .ok("line 199999\nline 200000\n");
}

#[test]
fn grep_is_charged_for_the_lines_it_looked_at() {
    let mut env = TestEnv::new();
    env.write("g.txt", "aaa\nbbb\nccc\n");
    env.var("READBOX_MAX_READ_BYTES", "8");
    let a = env.both("grep", &["bbb", "g.txt"]);
    a.fails("limit", "max_read_bytes");
    assert_eq!(a.output, "g.txt:2:bbb\n");
    let mut env = TestEnv::new();
    env.write("g.txt", "aaa\nbbb\nccc\n");
    env.var("READBOX_MAX_READ_BYTES", "12");
    env.both("grep", &["bbb", "g.txt"]).ok("g.txt:2:bbb\n");
}

// ---------------------------------------------------------------------------------------------
// Directory entries
// ---------------------------------------------------------------------------------------------

#[test]
fn max_entries_exactly_n_is_fine_and_one_more_is_a_limit() {
    // 4 entries at the top that count (.hid hidden counts; .env excluded does not, so that the
    // budget never tells it exists) and 2 in d/.
    let build = |max: &str| {
        let mut env = TestEnv::new();
        for f in ["a", "b", ".hid", ".env", "d/x", "d/y"] {
            env.write(f, "t\n");
        }
        env.var("READBOX_MAX_ENTRIES", max);
        env
    };
    let env = build("4");
    env.both("ls", &["."]).ok("a\nb\nd/\n");
    let env = build("3");
    env.both("ls", &["."]).fails("limit", "max_entries");
    let env = build("2");
    env.both("ls", &["d"]).ok("x\ny\n");
    let env = build("6");
    env.both("find", &["."]).ok(".hid\na\nb\nd/\nd/x\nd/y\n");
    env.both("grep", &["t", "."])
        .ok(".hid:1:t\na:1:t\nb:1:t\nd/x:1:t\nd/y:1:t\n");
    let env = build("5");
    let a = env.both("find", &["."]);
    a.fails("limit", "max_entries");
    assert!(
        ".hid\na\nb\nd/\nd/x\nd/y\n".starts_with(&a.output),
        "{:?}",
        a.output
    );
    assert!(a.output.starts_with(".hid\na\nb\nd/\n"), "{:?}", a.output);
    env.both("grep", &["t", "."]).fails("limit", "max_entries");
}

// ---------------------------------------------------------------------------------------------
// Timeout
// ---------------------------------------------------------------------------------------------

fn sparse_tebibyte(env: &TestEnv) {
    let f = std::fs::File::create(env.p("sparse.bin")).unwrap();
    f.set_len(1 << 40).unwrap();
}

#[test]
fn timeout_answers_at_the_deadline_even_while_reading() {
    let mut env = TestEnv::new();
    sparse_tebibyte(&env);
    env.var("READBOX_TIMEOUT", "0.5")
        .var("READBOX_MAX_READ_BYTES", &(1u64 << 42).to_string());
    let t = Instant::now();
    let a = env.run("wc", &["sparse.bin"]);
    let took = t.elapsed();
    assert_eq!(
        a.error.as_deref(),
        Some("timeout: the call took longer than 0.5 s")
    );
    assert_eq!((a.status, a.output.as_str(), a.truncated), (2, "", false));
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
}

#[test]
fn timeout_from_a_config_file_answers_in_text_format() {
    let env = TestEnv::new();
    sparse_tebibyte(&env);
    let cfg = env.config("t.toml", "timeout = 0.5\nformat = \"text\"\n");
    let t = Instant::now();
    let out = plain(
        &env.root(),
        &[
            ("READBOX_CONFIG", &s(&cfg)),
            ("READBOX_MAX_READ_BYTES", &(1u64 << 42).to_string()),
        ],
        &["wc", "sparse.bin"],
    );
    let took = t.elapsed();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "wc: timeout: the call took longer than 0.5 s\n"
    );
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
}
