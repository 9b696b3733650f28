//! `readbox sh`'s grammar against bash (docs/contract.md#readbox-sh): bash is the referee.
//!
//! The differential: thousands of generated command lines inside the accepted subset (words of
//! every quoting form, `$'…'` escapes, operators with and without blanks, `!`, comments, line
//! continuations) run in one bash script, where each command is `w ID WORDS…`, a function that
//! records its words and returns ID's parity as its status. The same lines go through readbox's
//! parser, whose tree is evaluated by the same rule: the commands that ran and their words after
//! quote removal must be bash's, which checks the words, the pipelines and the lists at once.
//!
//! The refusals: a corpus of lines that each hold one construct outside the subset, run through
//! the binary after a harmless `cat a.txt`: each is a `usage:` error, and nothing of it ran.

use std::collections::BTreeMap;
use std::process::Command;

use proptest::prelude::RngCore;
use proptest::test_runner::{RngAlgorithm, TestRng};
use readbox::sh::parse::{self, Connector, Line, Pipeline};

use crate::support::TestEnv;

/// How many lines the differential compares.
const LINES: usize = 2500;

struct Gen(TestRng);

impl Gen {
    fn below(&mut self, n: u32) -> u32 {
        self.0.next_u32() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u32) as usize]
    }

    /// One piece of a word, in one of the quoting forms.
    fn piece(&mut self) -> String {
        const PLAIN: &[&str] = &[
            "a", "b", "x1", "src", "file.txt", "-", "--", "=", "k=v", "a,b", "1:2", "50%", "+",
            "@", "./d", "/tmp", "é", "#x", "!", "]", "^", "a$", "$", "a$/b", "^x", "x!y",
        ];
        const SINGLE: &[&str] = &[
            "a b", "$HOME", "*", "a|b", ";", "&&", "\\", "\\n", "\"", "`x`", "$(x)", "\n", "\t",
            "~", "{a,b}", "#", "", "a\"b", "<>", "!",
        ];
        const DOUBLE: &[&str] = &[
            "a b", "\\\"", "\\\\", "\\$", "\\`", "\\x", "'", "*", "|", ";", "\n", "", "a$", "$",
            "!", "{}", "#", "<", "\\\n",
        ];
        const ESCAPED: &[&str] = &[
            "\\ ", "\\|", "\\;", "\\&", "\\$", "\\*", "\\?", "\\[", "\\'", "\\\"", "\\\\", "\\#",
            "\\<", "\\>", "\\(", "\\)", "\\{", "\\}", "\\~", "\\a", "\\\n",
        ];
        const ANSI: &[&str] = &[
            "\\n",
            "\\t",
            "\\x41",
            "\\101",
            "\\u00e9",
            "\\U0001F600",
            "\\\\",
            "\\'",
            "\\\"",
            "\\q",
            "\\x",
            "\\e",
            "\\a",
            "\\r",
            "\\v",
            "\\xff",
            "\\7",
            "\\18",
            "\\?",
            "plain",
            " ",
            "$",
            "\\u",
            "\\x4g",
        ];
        match self.below(5) {
            0 => self.pick(PLAIN).to_string(),
            1 => format!("'{}'", self.pick(SINGLE)),
            2 => format!("\"{}\"", self.pick(DOUBLE)),
            3 => self.pick(ESCAPED).to_string(),
            _ => {
                let mut s = String::from("$'");
                for _ in 0..=self.below(3) {
                    s.push_str(self.pick(ANSI));
                }
                s.push('\'');
                s
            }
        }
    }

    fn word(&mut self) -> String {
        let mut w = String::new();
        for _ in 0..=self.below(3) {
            // A `$` before a quote or an escape would be `$"…"` or an expansion's start: bash
            // and readbox read those apart (readbox refuses them), so a plain `$` ends a word.
            if w.ends_with('$') && !w.ends_with("\\$") {
                w.push('/');
            }
            w.push_str(&self.piece());
        }
        // A word that is only `#…` would start a comment, `!` alone a negation: both are
        // grammar of their own, generated apart.
        if w.starts_with('#') || w == "!" || w == "\\\n" {
            w.insert(0, 'z');
        }
        w
    }

    fn blank(&mut self) -> &'static str {
        self.pick(&["", " ", "  ", "\t", " \\\n "])
    }

    /// A command line of `w ID …` commands, numbering them from `*id`.
    fn line(&mut self, id: &mut u32) -> String {
        let mut s = String::new();
        let lists = 1 + self.below(3);
        for l in 0..lists {
            if l > 0 {
                s.push_str(self.pick(&[";", " ; ", "\n", " ;\n"]));
            }
            let pipelines = 1 + self.below(3);
            for p in 0..pipelines {
                if p > 0 {
                    let op = self.pick(&["&&", "||"]);
                    let blank = self.blank();
                    s.push_str(&format!("{blank}{op}{}", self.pick(&["", " ", "\n "])));
                }
                if self.below(4) == 0 {
                    s.push_str("! ");
                }
                let stages = 1 + self.below(3);
                for c in 0..stages {
                    if c > 0 {
                        let (a, b) = (self.blank(), self.blank());
                        s.push_str(&format!("{a}|{b}"));
                    }
                    s.push_str(&format!("w {id}"));
                    *id += 1;
                    for _ in 0..self.below(4) {
                        s.push_str(self.pick(&[" ", "  ", "\t"]));
                        s.push_str(&self.word());
                    }
                }
            }
        }
        // A line continuation at the very end would join the next line of the script.
        if s.ends_with("\\\n") {
            s.push('z');
        }
        if self.below(5) == 0 {
            s.push_str(self.pick(&[" # a comment", " #", "  # x | y && $HOME"]));
        }
        s
    }
}

/// The commands that ran, by ID, with their words after `w ID`, as bash records them.
type Ran = BTreeMap<u32, Vec<Vec<u8>>>;

/// Runs `lines` in one bash script; returns, per line, the commands that ran. `ids[i]` is the
/// range of IDs line `i` numbers its commands with. Each command records its words in a file of
/// its own (the stages of a pipeline run at once, and bash may write a record in pieces).
fn bash_runs(lines: &[String], ids: &[std::ops::Range<u32>]) -> Vec<Ran> {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("lines.sh");
    let record = dir.path().join("record");
    std::fs::create_dir(&record).expect("mkdir");
    let mut text = format!(
        "w() {{ local s=\"\" id=$1; shift; for a; do s+=\"$a\"$'\\x1f'; done; \
         printf '%s' \"$s\" > '{}'/$id; return $((id % 2)); }}\n",
        record.display()
    );
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(&script, text).expect("write the script");
    let status = Command::new("bash")
        .args(["--norc", "--noprofile"])
        .arg(&script)
        // Where a line could leave a file, it is left in the temporary folder.
        .current_dir(dir.path())
        .env("LC_ALL", "C.UTF-8")
        .status()
        .expect("bash runs");
    assert!(
        status.success() || status.code() == Some(1),
        "bash: {status}"
    );
    ids.iter()
        .map(|range| {
            range
                .clone()
                .filter_map(|id| {
                    let bytes = std::fs::read(record.join(id.to_string())).ok()?;
                    let words = bytes
                        .split(|&b| b == 0x1f)
                        .map(<[u8]>::to_vec)
                        .collect::<Vec<_>>();
                    // Each word ends with the separator: the last piece is empty.
                    Some((id, words[..words.len() - 1].to_vec()))
                })
                .collect()
        })
        .collect()
}

/// Evaluates readbox's tree by the rule of `w`: each pipeline runs all its stages, its status
/// is the last stage's ID parity (inverted by `!`), and `&&`/`||` as bash evaluates them.
fn readbox_runs(line: &Line) -> Ran {
    let mut ran = Ran::new();
    let run = |p: &Pipeline, ran: &mut Ran| -> u32 {
        let mut status = 0;
        for c in &p.commands {
            let words: Vec<Vec<u8>> = c.words.iter().map(|w| w.text.clone()).collect();
            assert_eq!(words[0], b"w");
            let id: u32 = std::str::from_utf8(&words[1]).unwrap().parse().unwrap();
            ran.insert(id, words[2..].to_vec());
            status = id % 2;
        }
        if p.negated {
            u32::from(status == 0)
        } else {
            status
        }
    };
    for list in &line.lists {
        let mut status = run(&list.first, &mut ran);
        for (connector, p) in &list.rest {
            let runs = match connector {
                Connector::And => status == 0,
                Connector::Or => status != 0,
            };
            if runs {
                status = run(p, &mut ran);
            }
        }
    }
    ran
}

#[test]
fn words_pipelines_and_lists_are_bashs() {
    let mut g = Gen(TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]));
    let mut id = 0;
    let mut ids = Vec::with_capacity(LINES);
    let lines: Vec<String> = (0..LINES)
        .map(|_| {
            let from = id;
            let line = g.line(&mut id);
            ids.push(from..id);
            line
        })
        .collect();
    let expected = bash_runs(&lines, &ids);
    let mut failures = Vec::new();
    for (line, want) in lines.iter().zip(&expected) {
        let got = match parse::parse(line.as_bytes()) {
            Ok(tree) => readbox_runs(&tree),
            Err(e) => {
                failures.push(format!("{line:?}: readbox refused it: {e:?}"));
                continue;
            }
        };
        if &got != want {
            let show = |r: &Ran| {
                r.iter()
                    .map(|(k, v)| {
                        let words: Vec<String> = v
                            .iter()
                            .map(|w| format!("{:?}", String::from_utf8_lossy(w)))
                            .collect();
                        format!("{k}:[{}]", words.join(" "))
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            failures.push(format!(
                "{line:?}\n  bash:    {}\n  readbox: {}",
                show(want),
                show(&got)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {LINES} lines differ from bash:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// One construct outside the subset per entry.
const OUTSIDE: &[&str] = &[
    "echo $HOME",
    "echo ${HOME}",
    "echo ${HOME:-x}",
    "echo $?",
    "echo $$",
    "echo $1",
    "echo $@",
    "echo $*",
    "echo $#",
    "echo $!",
    "echo $-",
    "echo $_",
    "echo $PATH/x",
    "echo \"$HOME\"",
    "echo \"a${b}c\"",
    "echo \"$(cat a.txt)\"",
    "echo $(cat a.txt)",
    "echo `cat a.txt`",
    "echo \"`cat a.txt`\"",
    "echo $((1+2))",
    "echo $[1+2]",
    "echo $\"translated\"",
    "diff <(cat a.txt) a.txt",
    "cat >(cat)",
    "cat ~/x",
    "cat ~",
    "cat ~root/x",
    "X=1 cat a.txt",
    "X+=1 cat a.txt",
    "A[0]=1 cat a.txt",
    "X=1",
    "(cat a.txt)",
    "( cat a.txt )",
    "{ cat a.txt; }",
    "echo {a,b}",
    "echo {1..3}",
    "cat a.txt &",
    "cat a.txt & cat a.txt",
    "cat a.txt |& cat",
    "f() { cat a.txt; }",
    "function f { cat a.txt; }",
    "if true; then cat a.txt; fi",
    "for f in a; do cat a.txt; done",
    "while false; do cat a.txt; done",
    "until true; do cat a.txt; done",
    "case x in x) cat a.txt;; esac",
    "select x in a; do cat a.txt; done",
    "[[ -f a.txt ]]",
    "time cat a.txt",
    "coproc cat a.txt",
    "exec cat a.txt",
    "eval cat a.txt",
    "source a.txt",
    ". a.txt",
    "cat a.txt > out.txt",
    "cat a.txt >> out.txt",
    "cat a.txt >| out.txt",
    "cat a.txt 1>out.txt",
    "cat a.txt 2>out.txt",
    "cat a.txt &>out.txt",
    "cat a.txt &>>out.txt",
    "cat a.txt > /dev/tty",
    "cat a.txt >&2",
    "cat a.txt 1>&2",
    "cat a.txt 3>/dev/null",
    "cat a.txt <> a.txt",
    "cat <&3",
    "cat 3< a.txt",
    "cat <<EOF\nx\nEOF",
    "cat <<-EOF\nx\nEOF",
    "cat <<< word",
    "cat < *.txt",
    "< a.txt",
    "echo $'\\0'",
    "echo $'a\\x00b'",
    "echo $'\\cA'",
    "echo \"$'x'\"",
    "cat a.txt ;; cat a.txt",
    "! ! cat a.txt",
    "cat a.txt | ! cat",
];

/// Where a construct goes in a line: alone after a harmless command, and inside lists and
/// pipelines.
const PLACES: &[&str] = &[
    "cat a.txt; {}",
    "cat a.txt && {}",
    "cat a.txt || {}",
    "{}\ncat a.txt",
    "cat a.txt | head - 1; {} # comment",
];

#[test]
fn constructs_outside_the_subset_refuse_the_line_before_it_runs() {
    let env = TestEnv::new();
    env.write("a.txt", "hello\n");
    let before = snapshot(&env.root());
    let mut count = 0;
    for construct in OUTSIDE {
        for place in PLACES {
            let line = place.replace("{}", construct);
            let a = env.readbox(&["sh", "-c", &line]);
            count += 1;
            assert_eq!(a.status, 2, "{line:?}: {a:?}");
            let error = a.error.as_deref().unwrap_or("");
            assert!(error.starts_with("usage:"), "{line:?}: {error}");
            assert!(!a.output.contains("hello"), "{line:?} ran a part: {a:?}");
        }
    }
    assert!(count >= 200, "{count} refused lines");
    assert_eq!(
        snapshot(&env.root()),
        before,
        "a refused line changed the sandbox"
    );
}

/// The names and contents beneath `dir`.
fn snapshot(dir: &std::path::Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
                out.insert(rel, Vec::new());
            } else {
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

#[test]
fn names_readbox_prints_paste_back() {
    // Every name that readbox writes in $'…' quoting is read back as the same bytes.
    for name in [&b"a\nb"[..], b"tab\there", b"e\xff", b"c1\xc2\x9b", b"x$'y"] {
        let quoted = readbox::names::quoted(name).into_owned();
        let line = [b"cat ".as_slice(), &quoted].concat();
        let tree = parse::parse(&line).expect("parses");
        let words = &tree.lists[0].first.commands[0].words;
        assert_eq!(words[1].text, name, "{}", String::from_utf8_lossy(&quoted));
    }
}
